//! The sender's answer to ECN-Echo (RFC 3168 §6.1.2; ns-2.35's
//! `TcpAgent::ecn()`, `recv_newack_helper()`, `newtimer()` and `timeout()`
//! in `tcp.cc`, with `old_ecn_` 0 and `SetCWRonRetransmit_` true).
//!
//! - **No increase on ECN-Echo**: no ACK carrying ECN-Echo opens the
//!   window, the one that cuts it or any after it (RFC: "SHOULD NOT
//!   increase the congestion window in response to the receipt of an
//!   ECN-Echo ACK packet"; ns-2 skips `opencwnd()` on every such ACK).
//! - **At most one cut per window of data**: an ECN-Echo ACK beyond
//!   `recover`, outside loss recovery, sets `ssthresh` as a loss would and
//!   halves `cwnd`: RFC rules `cwnd = min(ssthresh, max(cwnd / 2, 1))`
//!   (halved, at least one segment, never above the new `ssthresh`); ns-2
//!   `cwnd = min(cwnd, max_window) / 2`, fraction kept (`slowdown()`).
//!   Then `recover = snd_max`. With `stack = ns2` the first ECN-Echo after
//!   a timeout cuts even below `recover` (`last_cwnd_action_ ==
//!   CWND_ACTION_TIMEOUT`).
//! - **A window of one**: ECN-Echo with `cwnd <= 1` restarts the
//!   retransmission timer and nothing new is sent until it expires (RFC:
//!   "MUST reset the retransmit timer"; ns-2: `cwnd` 0.5 sends nothing and
//!   `newtimer()` keeps the timer). If nothing is outstanding when it
//!   expires, the window reopens at one segment without a back-off or a
//!   timeout counted (ns-2's `timeout()` with `highest_ack_ == maxseq_`).
//!   ns-2 also ends the wait when an ACK without ECN-Echo brings `cwnd`
//!   back to 1, and backs the RTO off on each further ECN cut at `cwnd <=
//!   1` with no ACK without ECN-Echo between (`ecn_backoff_`), a valid RTT
//!   sample not resetting that back-off while ECN-Echo keeps coming.
//! - **CWR after any reduction** (fast retransmit, timeout, ECN): on the
//!   first new segment; with `stack = ns2` on the first segment sent,
//!   a retransmission included.
//! - **A loss in the window already cut by ECN** is retransmitted without
//!   a second cut: the third duplicate ACK enters recovery at the current
//!   `ssthresh` (ns-2's `dupack_action()`), and a timeout closes the window
//!   to one without cutting `ssthresh` again (RFC: "should not decrease the
//!   slow-start threshold ... if it has been decreased within the last
//!   round trip time"; ns-2's `timeout()`).

use super::{Cut, TcpSender};
use crate::tcp::TcpStack;
use crate::units::Time;

impl TcpSender {
    /// An ACK `ack` carries ECN-Echo (the config's `ecn` is on): cut the
    /// window if this is the first ECN-Echo of a window of data.
    pub(super) fn on_ece(&mut self, now: Time, ack: u64) {
        let ns2 = self.cfg.stack == TcpStack::Ns2;
        // Strictly beyond `recover` (ns-2's `highest_ack_ > recover_`): the
        // ACK of the last segment sent before the cut still echoes the
        // old CE, the CWR segment (seq = recover) has not reached the sink.
        let new_window = ack > self.recover || self.recover == 0 || (ns2 && self.last_cut == Cut::Timeout);
        if self.in_recovery || !new_window {
            return;
        }
        let before = self.cwnd;
        self.halve();
        self.cwnd = if ns2 {
            before.min(self.cfg.window_cap() as f64) / 2.0
        } else {
            (before / 2.0).max(1.0).min(self.ssthresh)
        };
        if before <= 1.0 {
            self.ecn_hold = true;
            self.restart_timer(now);
            if ns2 {
                if self.ecn_backoff {
                    self.back_off();
                } else {
                    self.ecn_backoff = true;
                }
            }
        } else {
            self.ecn_backoff = false;
        }
        self.recover = self.snd_max;
        self.last_cut = Cut::Ecn;
        self.cwr_pending = true;
        self.stats.ecn_reductions += 1;
    }

    /// A new ACK without ECN-Echo arrived (after the window grew on it).
    pub(super) fn on_ack_without_ece(&mut self) {
        self.ecn_backoff = false;
        if self.cfg.stack == TcpStack::Ns2 && self.cwnd >= 1.0 {
            self.ecn_hold = false;
        }
    }

    /// The timer expired while the window of one waited with nothing
    /// outstanding: one new segment may go.
    pub(super) fn end_ecn_hold(&mut self, now: Time, out: &mut Vec<u64>) {
        self.ecn_hold = false;
        self.cwnd = self.cwnd.max(1.0);
        if self.cfg.stack == TcpStack::Ns2 {
            self.last_cut = Cut::Timeout;
        }
        self.send_new(now, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::TcpConfig;

    const MS: u64 = 1_000_000;
    const STACKS: [TcpStack; 2] = [TcpStack::Rfc, TcpStack::Ns2];

    /// An ECN-capable sender with 10 segments in flight (cwnd 10, seqs 0..10 sent).
    fn ten_in_flight(stack: TcpStack, max_window: u32) -> TcpSender {
        let c = TcpConfig { max_window, ecn: true, stack, ..TcpConfig::default() };
        let mut s = TcpSender::new(c, None).unwrap();
        s.cwnd = 10.0;
        s.ssthresh = 10.0;
        let mut out = Vec::new();
        s.start(Time(0), &mut out);
        assert_eq!(out, (0..10).collect::<Vec<_>>());
        s
    }

    /// A sender whose window is one segment, segment 0 in flight, an RTT sample taken.
    fn one_in_flight(stack: TcpStack) -> TcpSender {
        let c = TcpConfig { ecn: true, stack, ..TcpConfig::default() };
        let mut s = TcpSender::new(c, None).unwrap();
        s.ssthresh = 2.0;
        s.rtt_sample(Time(0), 50 * MS);
        let mut out = Vec::new();
        s.start(Time(0), &mut out);
        assert_eq!((out, s.cwnd()), (vec![0], 1.0));
        s
    }

    #[test]
    fn ecn_echo_acks_never_open_the_window_until_one_comes_without_it() {
        for stack in STACKS {
            let mut s = ten_in_flight(stack, 40);
            let mut out = Vec::new();
            s.on_ack_ecn(Time(50 * MS), 1, true, &mut out);
            assert_eq!((s.ssthresh(), s.cwnd()), (5.0, 5.0), "{stack:?}");
            // The sink echoes CE until the CWR segment reaches it: every ACK of
            // this window carries ECN-Echo, and none may open the window
            // (before the fix each added 1/cwnd: 5.2, 5.39, ...).
            for a in 2..=9 {
                s.on_ack_ecn(Time((50 + a) * MS), a, true, &mut out);
                assert_eq!(s.cwnd(), 5.0, "{stack:?}: ECN-Echo ACK of {a}");
            }
            assert_eq!(s.stats().ecn_reductions, 1);
            // The first ACK without ECN-Echo opens it again (congestion avoidance).
            s.on_ack_ecn(Time(70 * MS), 10, false, &mut out);
            assert!((s.cwnd() - 5.2).abs() < 1e-9, "{stack:?}: {}", s.cwnd());
        }
    }

    #[test]
    fn ecn_echo_halves_the_window_once_per_window_and_marks_cwr() {
        let mut s = ten_in_flight(TcpStack::Rfc, 40);
        let mut out = Vec::new();
        s.on_ack_ecn(Time(50 * MS), 1, true, &mut out);
        assert_eq!(s.stats().ecn_reductions, 1);
        // FlightSize 10 -> ssthresh 5, cwnd 5; 1..10 are out already, so nothing is sent.
        assert_eq!((s.ssthresh(), s.cwnd()), (5.0, 5.0));
        assert!(out.is_empty());
        // More ECE in the same window: no second cut. The first new segment
        // after the cut (10, on the ACK of 5) carries CWR, in its batch only.
        for a in 2..=9 {
            out.clear();
            s.on_ack_ecn(Time((50 + a) * MS), a, true, &mut out);
            assert_eq!(s.cwr_seq(), if a == 6 { Some(10) } else { None }, "ACK {a}");
        }
        assert_eq!(s.stats().ecn_reductions, 1);
        // ECE on the ACK of the last segment before the cut (9) still echoes the old CE:
        // the CWR segment (10) has not reached the sink yet. No cut.
        s.on_ack_ecn(Time(80 * MS), 10, true, &mut out);
        assert_eq!(s.stats().ecn_reductions, 1);
        // ECE beyond it is new congestion: cut again.
        s.on_ack_ecn(Time(81 * MS), 11, true, &mut out);
        assert_eq!(s.stats().ecn_reductions, 2);
        assert_eq!(s.stats().retransmits, 0, "ECN cuts the window without a loss");
    }

    #[test]
    fn ecn_echo_is_ignored_without_the_ecn_option() {
        let mut s = ten_in_flight(TcpStack::Rfc, 10);
        s.cfg.ecn = false;
        let mut out = Vec::new();
        s.on_ack_ecn(Time(50 * MS), 1, true, &mut out);
        assert_eq!(s.stats().ecn_reductions, 0);
        assert_eq!(s.cwnd(), 10.0);
        assert_eq!(s.cwr_seq(), None);
    }

    #[test]
    fn an_ecn_cut_halves_small_windows_and_never_raises_one() {
        // cwnd 2 with 2 in flight: ssthresh max(1, 2) = 2; the RFC halves cwnd to 1,
        // ns-2 too (before the fix the RFC rules set cwnd = ssthresh = 2).
        for (stack, after) in [(TcpStack::Rfc, 1.0), (TcpStack::Ns2, 1.0)] {
            let c = TcpConfig { ecn: true, stack, ..TcpConfig::default() };
            let mut s = TcpSender::new(c, None).unwrap();
            s.cwnd = 2.0;
            s.ssthresh = 2.0;
            let mut out = Vec::new();
            s.start(Time(0), &mut out);
            s.on_ack_ecn(Time(50 * MS), 1, true, &mut out);
            assert_eq!((s.cwnd(), s.ssthresh()), (after, 2.0), "{stack:?}");
        }
    }

    #[test]
    fn ecn_echo_at_a_window_of_one_waits_for_the_timer_then_sends_one_segment() {
        for (stack, cwnd) in [(TcpStack::Rfc, 1.0), (TcpStack::Ns2, 0.5)] {
            let mut s = one_in_flight(stack);
            let rto = s.rto().0;
            let mut out = Vec::new();
            s.on_ack_ecn(Time(50 * MS), 1, true, &mut out);
            // Before the fix the RFC rules raised cwnd to ssthresh (2) and sent 1 and 2 at once.
            assert!(out.is_empty(), "{stack:?}: nothing new until the timer expires, sent {out:?}");
            assert_eq!(s.cwnd(), cwnd, "{stack:?}");
            assert_eq!(s.timer_deadline(), Some(Time(50 * MS + rto)), "{stack:?}: the timer restarts");
            s.on_timer(Time(50 * MS + rto), &mut out);
            assert_eq!(out, vec![1], "{stack:?}");
            assert_eq!(s.cwnd(), 1.0);
            assert_eq!((s.stats().timeouts, s.backoff(), s.stats().retransmits), (0, 1, 0), "{stack:?}");
            // The segment after the wait carries CWR.
            assert_eq!(s.cwr_seq(), Some(1), "{stack:?}");
        }
    }

    #[test]
    fn ns2_stack_backs_off_on_each_further_ecn_echo_at_a_window_of_one() {
        for (stack, backoff) in [(TcpStack::Rfc, 1), (TcpStack::Ns2, 2)] {
            let mut s = one_in_flight(stack);
            let mut out = Vec::new();
            s.on_ack_ecn(Time(50 * MS), 1, true, &mut out);
            let due = s.timer_deadline().unwrap();
            s.on_timer(due, &mut out);
            assert_eq!(out, vec![1]);
            // Segment 1 is marked too: ns-2 backs off (its `ecn_backoff_`), and the
            // sample of segment 1 does not end that back-off.
            s.on_ack_ecn(Time(due.0 + 50 * MS), 2, true, &mut out);
            assert_eq!(s.stats().ecn_reductions, 2, "{stack:?}: a new window, a new cut");
            assert_eq!(s.backoff(), backoff, "{stack:?}");
            assert_eq!(s.timer_deadline(), Some(Time(due.0 + 50 * MS + s.armed_rto().0)));
        }
    }

    #[test]
    fn ns2_stack_reopens_a_window_of_one_on_an_ack_without_ecn_echo() {
        let c = TcpConfig { ecn: true, stack: TcpStack::Ns2, ..TcpConfig::default() };
        let mut s = TcpSender::new(c, None).unwrap();
        s.cwnd = 3.0;
        s.ssthresh = 3.0;
        let mut out = Vec::new();
        s.start(Time(0), &mut out);
        // A spurious timeout: cwnd 1, segment 0 resent.
        let due = s.timer_deadline().unwrap();
        s.on_timer(due, &mut out);
        // The original segment 0's ACK carries ECN-Echo: the first after a timeout
        // cuts (ns-2), from a window of one to 0.5: nothing is sent.
        out.clear();
        s.on_ack_ecn(Time(due.0 + 10 * MS), 1, true, &mut out);
        assert_eq!((s.cwnd(), s.stats().ecn_reductions), (0.5, 1));
        assert!(out.is_empty());
        // An ACK without ECN-Echo: slow start adds one (1.5), the window is 1 again.
        s.on_ack_ecn(Time(due.0 + 20 * MS), 2, false, &mut out);
        assert_eq!(s.cwnd(), 1.5);
        assert_eq!(out, vec![2]);
    }

    #[test]
    fn cwr_follows_a_fast_retransmit_on_the_first_new_segment_or_with_ns2_the_retransmission() {
        for (stack, cwr) in [(TcpStack::Rfc, None), (TcpStack::Ns2, Some(1))] {
            let mut s = ten_in_flight(stack, 10);
            let mut out = Vec::new();
            // Segment 0 arrives (10 goes out), segment 1 is lost.
            s.on_ack_ecn(Time(40 * MS), 1, false, &mut out);
            out.clear();
            for k in 0..3 {
                s.on_ack_ecn(Time((50 + k) * MS), 1, false, &mut out);
            }
            assert_eq!(out, vec![1]);
            assert_eq!(s.cwr_seq(), cwr, "{stack:?}");
            out.clear();
            s.on_ack_ecn(Time(100 * MS), 11, false, &mut out);
            let first_new = if stack == TcpStack::Rfc { Some(11) } else { None };
            assert_eq!(s.cwr_seq(), first_new, "{stack:?}");
        }
        // Not ECN-capable: no CWR.
        let mut s = ten_in_flight(TcpStack::Rfc, 10);
        s.cfg.ecn = false;
        let mut out = Vec::new();
        for k in 0..3 {
            s.on_ack_ecn(Time((50 + k) * MS), 0, false, &mut out);
        }
        s.on_ack_ecn(Time(100 * MS), 10, false, &mut out);
        assert_eq!(s.cwr_seq(), None);
    }

    #[test]
    fn a_loss_in_a_window_already_cut_by_ecn_is_retransmitted_without_a_second_cut() {
        for stack in STACKS {
            let mut s = ten_in_flight(stack, 10);
            let mut out = Vec::new();
            s.on_ack_ecn(Time(50 * MS), 1, true, &mut out);
            assert_eq!(s.ssthresh(), 5.0);
            // Segment 1 lost: three duplicate ACKs of 1.
            for k in 0..3 {
                s.on_ack(Time((51 + k) * MS), 1, &mut out);
            }
            assert_eq!(out.last(), Some(&1), "segment 1 is retransmitted");
            assert!(s.in_recovery());
            assert_eq!(s.ssthresh(), 5.0, "{stack:?}: no second halving");
            assert_eq!(s.cwnd(), 8.0);
            assert_eq!(s.stats().fast_retransmits, 1);
        }
    }

    #[test]
    fn a_timeout_in_a_window_already_cut_by_ecn_keeps_ssthresh() {
        for stack in STACKS {
            let mut s = ten_in_flight(stack, 10);
            let mut out = Vec::new();
            s.on_ack_ecn(Time(50 * MS), 1, true, &mut out);
            assert_eq!(s.ssthresh(), 5.0);
            let due = s.timer_deadline().unwrap();
            s.on_timer(due, &mut out);
            assert_eq!((s.cwnd(), s.ssthresh(), s.stats().timeouts), (1.0, 5.0, 1), "{stack:?}");
            // A second timeout, the window no longer ECN's: ssthresh 2.
            let due = s.timer_deadline().unwrap();
            s.on_timer(due, &mut out);
            assert_eq!(s.ssthresh(), 2.0, "{stack:?}");
        }
    }

    #[test]
    fn ns2_stack_cuts_on_the_first_ecn_echo_after_a_timeout_even_below_recover() {
        for (stack, cuts) in [(TcpStack::Rfc, 0), (TcpStack::Ns2, 1)] {
            let mut s = ten_in_flight(stack, 10);
            let mut out = Vec::new();
            let due = s.timer_deadline().unwrap();
            s.on_timer(due, &mut out);
            assert_eq!(out, vec![0]);
            // recover = 10; the go-back-N's first ACK carries ECN-Echo.
            s.on_ack_ecn(Time(due.0 + 50 * MS), 1, true, &mut out);
            assert_eq!(s.stats().ecn_reductions, cuts, "{stack:?}");
        }
    }
}
