//! MM_APP: a media-scaling UDP source with receiver feedback ([Claypool00 §2]
//! and §5; the authors' ref. [11]): "cut scale by half at frame loss, up
//! scale by one at RTT", after TCP Reno's fast retransmission.
//!
//! **Source.** CBR at the payload rate of its current scale (default 300,
//! 500, 700, 900, 1100 kb/s of 1000 B packets), starting at scale 0. Every
//! data packet carries its per-flow sequence number (0, 1, 2, ...). A new
//! scale applies from the next gap between packets: the packet already due
//! leaves at its time, the one after it `payload * 8 / rate(new scale)`
//! later (exact periods, as [`super::cbr`]).
//!
//! **Receiver** (the controller). Loss is detected by sequence gaps: a
//! packet whose number is above the next one expected marks the missing
//! ones lost (the simulator's links and queues keep a flow's packets in
//! order, so a gap is a loss, not a reordering). The RTT estimate is
//! smoothed from twice the one-way delay of each packet:
//! `rtt = 2 d` for the first, then `rtt = 0.9 rtt + 0.1 (2 d)`. The
//! receiver decides when the first packet arrives, then once per RTT
//! estimate: if a loss was detected since the last decision the scale
//! index is halved (4 -> 2 -> 1 -> 0, integer division), otherwise it
//! rises by one (at most the top scale); so the first decision, on the
//! first packet alone, is scale 1. These rules are those of the MmApp the
//! MM_APP's author published for ns-2 ("NS by Example", "Add New
//! Application and Agent"; checked in `crosscheck/mm_app.py`). A period
//! in which no packet arrived carries no evidence and leaves the scale as
//! it is. Each decision, changed or not, is sent to the source as a
//! feedback packet (`feedback_size` bytes on the wire, a real packet on
//! the reverse path: queued, serialized, droppable) carrying the absolute
//! scale index, which the source applies on arrival; a lost feedback packet
//! is repaired by the next one, an RTT later.
//!
//! | parameter | unit | allowed | default |
//! |---|---|---|---|
//! | `mm_app.scales` | bit/s of payload | 1 to 32 rates, each > 0 | 300, 500, 700, 900, 1100 kb/s |
//! | `mm_app.feedback_size` | bytes on the wire | >= 1 | 40 B |
//! | `size` | payload bytes | >= 1 | (the paper: 1000 B) |

use super::cbr::{Grid, Period};
use crate::units::{Dur, Time};

/// Most scales an MM_APP source may have (`mm_app.scales`; checked by the scenario's validation).
pub const MAX_SCALES: usize = 32;

/// The sending side: the CBR grid of the current scale.
#[derive(Clone, Debug)]
pub struct MmSource {
    periods: Vec<Period>,
    scale: usize,
    grid: Grid,
    /// The last send time handed out (the emission already scheduled).
    last: Time,
}

impl MmSource {
    /// A source over the periods of its scales (lowest rate first), at scale 0.
    pub fn new(periods: Vec<Period>) -> MmSource {
        let grid = Grid::new(periods[0]);
        MmSource { periods, scale: 0, grid, last: Time::ZERO }
    }
    pub fn scale(&self) -> usize {
        self.scale
    }
    pub fn first(&mut self, start: Time) -> Time {
        self.last = start;
        self.grid.restart(start)
    }
    /// The send time after the one at `now` (the last one returned).
    #[inline]
    pub fn next_send(&mut self) -> Time {
        self.last = self.grid.step();
        self.last
    }
    /// Feedback says: send at `scale` (clamped to the top scale). True if the scale changed.
    pub fn set_scale(&mut self, scale: usize) -> bool {
        let scale = scale.min(self.periods.len() - 1);
        if scale == self.scale {
            return false;
        }
        self.scale = scale;
        self.grid = Grid::new(self.periods[scale]);
        self.grid.restart(self.last);
        true
    }
}

/// The receiving side: loss detection, RTT estimate, decisions.
#[derive(Clone, Debug)]
pub struct MmReceiver {
    top: usize,
    scale: usize,
    expected: u64,
    /// Smoothed RTT estimate (ns), from twice the one-way delay (gain 1/10).
    rtt: Option<u64>,
    loss_seen: bool,
    arrivals_seen: bool,
    next_decision: Option<Time>,
    /// Packets detected lost (sequence gaps).
    pub lost: u64,
    /// Decisions taken (= feedback packets sent).
    pub decisions: u64,
}

impl MmReceiver {
    pub fn new(scales: usize) -> MmReceiver {
        MmReceiver {
            top: scales.saturating_sub(1),
            scale: 0,
            expected: 0,
            rtt: None,
            loss_seen: false,
            arrivals_seen: false,
            next_decision: None,
            lost: 0,
            decisions: 0,
        }
    }
    /// The scale the receiver last decided.
    pub fn scale(&self) -> usize {
        self.scale
    }
    pub fn rtt(&self) -> Option<Dur> {
        self.rtt.map(Dur)
    }
    /// When the next decision is due.
    pub fn deadline(&self) -> Option<Time> {
        self.next_decision
    }
    /// Data packet `seq`, sent at `created`, arrives at `now`.
    pub fn on_packet(&mut self, now: Time, seq: u64, created: Time) {
        if seq > self.expected {
            self.lost += seq - self.expected;
            self.loss_seen = true;
        }
        self.expected = self.expected.max(seq + 1);
        self.arrivals_seen = true;
        let sample = now.0.saturating_sub(created.0).saturating_mul(2);
        let rtt = match self.rtt {
            None => sample,
            Some(r) => (9 * r as u128 + sample as u128).div_ceil(10) as u64,
        };
        self.rtt = Some(rtt);
        if self.next_decision.is_none() {
            // The first packet's arrival is the first decision (the published MmApp's).
            self.next_decision = Some(now);
        }
    }
    /// The decision timer fires: the scale to feed back, if a decision is due.
    pub fn on_timer(&mut self, now: Time) -> Option<usize> {
        self.next_decision.filter(|t| *t <= now)?;
        if self.loss_seen {
            self.scale /= 2;
        } else if self.arrivals_seen {
            self.scale = (self.scale + 1).min(self.top);
        }
        self.loss_seen = false;
        self.arrivals_seen = false;
        self.decisions += 1;
        self.next_decision = Some(Time(now.0.saturating_add(self.rtt.unwrap_or(1).max(1))));
        Some(self.scale)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Rate;

    const MS: u64 = 1_000_000;

    #[test]
    fn receiver_climbs_one_scale_per_rtt_without_loss_and_halves_on_loss() {
        let mut r = MmReceiver::new(5);
        // One-way delay 30 ms: RTT estimate 60 ms; the first packet is the first decision.
        r.on_packet(Time(30 * MS), 0, Time(0));
        assert_eq!(r.rtt(), Some(Dur(60 * MS)));
        assert_eq!(r.deadline(), Some(Time(30 * MS)));
        let mut scales = vec![r.on_timer(Time(30 * MS)).unwrap()];
        assert_eq!(r.deadline(), Some(Time(90 * MS)));
        let mut seq = 1;
        let mut t = 30 * MS;
        for _ in 0..5 {
            // A packet every 10 ms until the decision.
            while t + 10 * MS < r.deadline().unwrap().0 {
                t += 10 * MS;
                r.on_packet(Time(t), seq, Time(t - 30 * MS));
                seq += 1;
            }
            scales.push(r.on_timer(r.deadline().unwrap()).unwrap());
        }
        assert_eq!(scales, vec![1, 2, 3, 4, 4, 4]);
        // Two packets lost (a gap of 2): halve 4 -> 2, then 2 -> 1 on a further loss.
        r.on_packet(Time(t + MS), seq + 2, Time(t + MS - 30 * MS));
        assert_eq!(r.lost, 2);
        assert_eq!(r.on_timer(r.deadline().unwrap()), Some(2));
        r.on_packet(Time(t + 200 * MS), seq + 4, Time(t + 170 * MS));
        assert_eq!(r.on_timer(r.deadline().unwrap()), Some(1));
        r.on_packet(Time(t + 300 * MS), seq + 6, Time(t + 270 * MS));
        assert_eq!(r.on_timer(r.deadline().unwrap()), Some(0));
    }

    #[test]
    fn a_period_without_packets_keeps_the_scale() {
        let mut r = MmReceiver::new(5);
        r.on_packet(Time(10 * MS), 0, Time(0));
        assert_eq!(r.on_timer(Time(10 * MS)), Some(1));
        assert_eq!(r.on_timer(Time(30 * MS)), Some(1));
        assert_eq!(r.on_timer(Time(31 * MS)), None, "not due");
    }

    #[test]
    fn rtt_estimate_smooths_twice_the_one_way_delay_with_gain_one_tenth() {
        let mut r = MmReceiver::new(5);
        r.on_packet(Time(30 * MS), 0, Time(0));
        // A sample of 2 x 40 ms: 0.9 x 60 + 0.1 x 80 = 62 ms.
        r.on_packet(Time(50 * MS), 1, Time(10 * MS));
        assert_eq!(r.rtt(), Some(Dur(62 * MS)));
    }

    #[test]
    fn source_changes_its_rate_from_the_next_gap() {
        let per = |k: u64| Period::from_rate(1000 * 8000, Rate::kbps(k)).unwrap();
        let mut s = MmSource::new(vec![per(400), per(800)]);
        assert_eq!(s.first(Time(0)), Time(0));
        assert_eq!(s.next_send(), Time(20 * MS));
        assert!(s.set_scale(1));
        assert!(!s.set_scale(1));
        assert_eq!(s.scale(), 1);
        // The send at 20 ms was already scheduled: the new grid starts there.
        assert_eq!(s.next_send(), Time(30 * MS));
        assert_eq!(s.next_send(), Time(40 * MS));
        s.set_scale(9);
        assert_eq!(s.scale(), 1);
    }
}
