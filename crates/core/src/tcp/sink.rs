//! The TCP sink: cumulative ACKs, one per segment or delayed (see the
//! module doc of [`super`]).

use crate::units::{Dur, Time};
use std::collections::BTreeSet;
use std::ops::Range;

/// What the sink does with one arriving segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SinkOutput {
    /// An ACK to send now: the next segment expected.
    pub ack: Option<u64>,
    /// Segments newly delivered in order to the application.
    pub delivered: Range<u64>,
}

/// Receives segments and acknowledges them cumulatively.
#[derive(Clone, Debug)]
pub struct TcpSink {
    next: u64,
    /// Segments received above a hole.
    above: BTreeSet<u64>,
    /// Delayed-ACK timeout (`None`: one ACK per segment).
    delay: Option<Dur>,
    /// In-order segments not acknowledged yet (delayed ACK).
    pending: u32,
    ack_at: Option<Time>,
    /// ACKs sent.
    pub acks: u64,
    /// ACKs carry ECN-Echo (a CE segment arrived, no CWR since).
    ece: bool,
    /// Segments that arrived with CE.
    pub ce_segments: u64,
}

impl TcpSink {
    /// A sink; `delayed_ack` is the delayed-ACK timeout, `None` for an ACK per segment.
    pub fn new(delayed_ack: Option<Dur>) -> TcpSink {
        TcpSink {
            next: 0,
            above: BTreeSet::new(),
            delay: delayed_ack,
            pending: 0,
            ack_at: None,
            acks: 0,
            ece: false,
            ce_segments: 0,
        }
    }
    /// The next segment expected (the cumulative ACK).
    pub fn next_expected(&self) -> u64 {
        self.next
    }
    /// RFC 3168 §6.1.3: the ECN bits of an arriving segment, before
    /// [`TcpSink::on_segment`]. CWR stops the echo; CE (re)starts it.
    pub fn on_ecn(&mut self, ce: bool, cwr: bool) {
        if cwr {
            self.ece = false;
        }
        if ce {
            self.ece = true;
            self.ce_segments += 1;
        }
    }
    /// Whether the ACKs sent now carry ECN-Echo.
    pub fn ece(&self) -> bool {
        self.ece
    }
    /// When a delayed ACK is due.
    pub fn ack_deadline(&self) -> Option<Time> {
        self.ack_at
    }

    fn ack_now(&mut self) -> Option<u64> {
        self.pending = 0;
        self.ack_at = None;
        self.acks += 1;
        Some(self.next)
    }

    /// Segment `seq` arrives at `now`.
    pub fn on_segment(&mut self, now: Time, seq: u64) -> SinkOutput {
        let from = self.next;
        if seq < self.next || (seq > self.next && !self.above.insert(seq)) {
            // A duplicate: acknowledge at once (RFC 5681 §4.2).
            return SinkOutput { ack: self.ack_now(), delivered: from..from };
        }
        if seq > self.next {
            // Out of order: an immediate duplicate ACK.
            return SinkOutput { ack: self.ack_now(), delivered: from..from };
        }
        self.next += 1;
        let filled_hole = !self.above.is_empty();
        while self.above.first() == Some(&self.next) {
            self.above.pop_first();
            self.next += 1;
        }
        let delivered = from..self.next;
        let ack = match self.delay {
            None => self.ack_now(),
            Some(_) if filled_hole => self.ack_now(),
            Some(d) => {
                self.pending += 1;
                if self.pending >= 2 {
                    self.ack_now()
                } else {
                    if self.ack_at.is_none() {
                        self.ack_at = Some(Time(now.0.saturating_add(d.0)));
                    }
                    None
                }
            }
        };
        SinkOutput { ack, delivered }
    }

    /// The delayed-ACK timer fires: the ACK to send, if one is owed.
    pub fn on_timer(&mut self, now: Time) -> Option<u64> {
        match self.ack_at {
            Some(t) if t <= now => self.ack_now(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sink_acks_every_segment_cumulatively() {
        let mut k = TcpSink::new(None);
        assert_eq!(k.on_segment(Time(0), 0), SinkOutput { ack: Some(1), delivered: 0..1 });
        // 1 lost: 2 and 3 bring duplicate ACKs and deliver nothing.
        assert_eq!(k.on_segment(Time(1), 2), SinkOutput { ack: Some(1), delivered: 1..1 });
        assert_eq!(k.on_segment(Time(2), 3).ack, Some(1));
        // The retransmission fills the hole: 1, 2, 3 delivered, ACK 4.
        assert_eq!(k.on_segment(Time(3), 1), SinkOutput { ack: Some(4), delivered: 1..4 });
        // An old duplicate is acknowledged again.
        assert_eq!(k.on_segment(Time(4), 2), SinkOutput { ack: Some(4), delivered: 4..4 });
        assert_eq!(k.acks, 5);
    }

    #[test]
    fn delayed_ack_every_second_segment_or_at_the_timeout() {
        let d = Dur::from_ms(100);
        let mut k = TcpSink::new(Some(d));
        assert_eq!(k.on_segment(Time(0), 0).ack, None);
        assert_eq!(k.ack_deadline(), Some(Time(100_000_000)));
        assert_eq!(k.on_segment(Time(10), 1).ack, Some(2));
        assert_eq!(k.ack_deadline(), None);
        assert_eq!(k.on_segment(Time(20), 2).ack, None);
        assert_eq!(k.on_timer(Time(50)), None, "not due yet");
        assert_eq!(k.on_timer(Time(100_000_020)), Some(3));
        // Out of order: at once; filling the hole: at once.
        assert_eq!(k.on_segment(Time(200), 4).ack, Some(3));
        assert_eq!(k.on_segment(Time(201), 3).ack, Some(5));
    }

    #[test]
    fn ce_starts_the_echo_and_cwr_stops_it() {
        let mut k = TcpSink::new(None);
        k.on_ecn(false, false);
        assert!(!k.ece());
        k.on_ecn(true, false);
        assert!(k.ece() && k.ce_segments == 1);
        // Echoed on every ACK until CWR...
        k.on_ecn(false, false);
        assert!(k.ece());
        k.on_ecn(false, true);
        assert!(!k.ece());
        // ...and a CWR segment that is itself CE starts a new echo.
        k.on_ecn(true, true);
        assert!(k.ece() && k.ce_segments == 2);
    }
}
