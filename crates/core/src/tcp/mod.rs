//! TCP congestion control as clock-free state machines: a Reno / NewReno
//! sender ([`TcpSender`]) and a cumulative-ACK sink ([`TcpSink`]), in the
//! spirit of ns-2's one-way agents (`Agent/TCP/Reno`, `Agent/TCPSink`).
//!
//! Source: [Claypool00 §5] (the D-CBT/ChIPS paper's ns-2 of 2000: Reno, initial
//! window 1, no delayed ACK, 1000 B segments + 40 B headers, max window 20),
//! RFC 5681 (slow start, congestion avoidance, fast retransmit / recovery,
//! delayed ACK), RFC 6298 (RTO), RFC 6582 (NewReno), Karn & Partridge 1987.
//!
//! The machines never read a clock: every call takes `now`, and each
//! reports when it next needs attention ([`TcpSender::timer_deadline`],
//! [`TcpSink::ack_deadline`]). The driver (simulator or a router test)
//! carries segments and ACKs and calls `on_timer` when a deadline is due.
//! They live in `qoslab-core` (not the simulator) so that the real
//! router's tests can drive the same TCP.
//!
//! **Sequence numbers count segments** (as in ns-2), from 0. A segment
//! carries `seq`; an ACK carries the cumulative acknowledgement `ack` =
//! the next segment the sink expects (every segment below `ack` arrived).
//! A finite transfer of `B` bytes is `ceil(B / mss)` segments, the last
//! one possibly short ([`TcpSender::payload`]).
//!
//! **Sender** (per ACK, RFC 5681, windows in segments, `cwnd` fractional):
//! - window `W = min(floor(cwnd), max_window, rwnd)`; send while
//!   `snd_nxt < snd_una + W` and data remains.
//! - new ACK, not in recovery: slow start `cwnd += 1` while
//!   `cwnd < ssthresh`, else congestion avoidance `cwnd += 1/cwnd` (per
//!   ACK, as ns-2). `cwnd` is capped at `min(max_window, rwnd)`: ns-2's
//!   `cwnd_` grows past `wnd_` but never sends more, so only the reported
//!   value differs.
//! - third duplicate ACK (and the ACK covers everything sent when the last
//!   recovery or timeout began, `ack >= recover`: ns-2's `bugfix_`,
//!   RFC 6582 §3.2 — no second fast retransmit for losses of one window):
//!   `ssthresh = max(FlightSize / 2, 2)`, retransmit `snd_una`,
//!   `cwnd = ssthresh + 3`, enter fast recovery, `recover = snd_max`.
//!   Each further duplicate ACK inflates `cwnd += 1`.
//! - Reno leaves recovery on the first new ACK with `cwnd = ssthresh`.
//!   NewReno (RFC 6582) leaves it on a full ACK (`ack >= recover`); a
//!   partial ACK retransmits the next hole, deflates
//!   `cwnd = cwnd - acked + 1` and restarts the timer (the "slow but
//!   steady" variant, as ns-2's `newreno_changes_ = 0`).
//! - RTO expiry: `ssthresh = max(FlightSize / 2, 2)`, `cwnd = 1`, back-off
//!   doubles (at most 64 x), go-back-N from `snd_una` (`snd_nxt = snd_una`),
//!   `recover = snd_max`, recovery ends.
//!
//! `FlightSize = snd_nxt - snd_una` (segments sent and not acknowledged
//! since the last go-back-N), so a second consecutive timeout sets
//! `ssthresh = 2` as in ns-2.
//!
//! **`stack = ns2`** ([`TcpStack::Ns2`]) runs the same machine with the
//! rules where ns-2.35's `Agent/TCP/Reno` (`tcp.cc`, `tcp-reno.cc`, with
//! its defaults `precisionReduce_` true, `exitFastRetrans_` true) departs
//! from the RFCs above, for scenarios that reproduce an ns-2 paper:
//! - *window cut from the window, not the flight*: on a fast retransmit or
//!   a timeout `W = min(cwnd, max_window)`, with `cwnd` the window before
//!   any fast-recovery inflation (`slowdown()`: `halfwin = windowd() / 2`,
//!   `dupwnd_` is 0 there); `ssthresh = max(floor(W / 2), 2)`; a fast
//!   retransmit sets `cwnd = W / 2` (fractional, at least 1), inflates it by
//!   the duplicate ACKs, and recovery ends back at `W / 2` plus the new
//!   ACK's own increase (`+ 1` below `ssthresh`, else `+ 1 / cwnd`: Reno's
//!   `recv()` clears `dupwnd_`, then `recv_newack_helper()` calls
//!   `opencwnd()` on every new ACK without ECN-Echo);
//! - *fast retransmit only when recovered*: the third duplicate ACK
//!   retransmits only when `ack > recover` (`dupack_action()`:
//!   `highest_ack_ > recover_`; ns-2 numbers ACKs one lower), or when only
//!   segment 0 was acknowledged (`bugfix_ss_`);
//! - *RTT in ticks of `granularity`* (`rtt_update()`, `rtt_timeout()`): a
//!   sample `R` counts `max(1, floor((R + (t_send mod G)) / G))` ticks;
//!   SRTT and RTTVAR are fixed-point tick counts (3 and 2 fraction bits,
//!   gains 1/8 and 1/4); `RTO = floor(SRTT + 4 RTTVAR)` ticks × `G`, then
//!   at least `min_rto` and 2 ticks, at most `max_rto`; a back-off past 8
//!   clears SRTT (`rtt_backoff()`), so the next sample starts afresh.
//!   ns-2 offsets each agent's tick grid by a random `boot_time_`; here the
//!   grid starts at time 0.
//!
//! With a 100 ms tick and RTTs under 100 ms every sample is one tick, and
//! the RTO settles at 3 ticks (300 ms) where the RFC rule gives 200 ms.
//! `stack = ns2` goes with `variant = reno` only: ns-2's NewReno adds rules
//! of its own (partial-window deflation, `exit_recovery_fix_`) not modelled.
//!
//! **RTO** (RFC 6298, ns precision): one segment at a time is timed
//! (BSD / ns-2). First sample `R`: `SRTT = R`, `RTTVAR = R/2`; then
//! `RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|`, `SRTT = 7/8 SRTT + 1/8 R`.
//! `RTO = SRTT + max(G, 4 RTTVAR)`, rounded up to a multiple of the timer
//! granularity `G` (ns-2's `tcpTick_`), then clamped to
//! `[min_rto, max_rto]`; before any sample `RTO = initial_rto`. Karn's
//! rule: any retransmission cancels the running measurement, and a
//! backed-off RTO stays backed off until a valid sample (RFC 6298 §5.7 /
//! ns-2: the back-off resets only with a new sample). The armed timer
//! lasts `min(RTO x backoff, max_rto)`; it is restarted on every new ACK
//! (§5.3) and stopped when nothing is outstanding.
//!
//! **Limited transmit** (RFC 3042 §2, option `limited_transmit`): on the
//! first and second duplicate ACK, outside recovery, one new (never sent)
//! segment goes out if the receiver window allows it and
//! `snd_nxt - snd_una <= cwnd + 2` after sending; `cwnd` is unchanged, and
//! these segments are left out of `FlightSize` when the third duplicate ACK
//! halves the window (RFC 5681 §3.2 step 2), not when a timeout does (§3.1).
//!
//! **ECN** (RFC 3168 §6.1, option `ecn`; `sender/ecn.rs` has the rules
//! and where ns-2.35 differs): no ACK carrying ECN-Echo opens the window;
//! the first one beyond `recover`, outside recovery, cuts it once per
//! window of data (`ssthresh = max(FlightSize / 2, 2)`, `cwnd = min(ssthresh,
//! max(cwnd / 2, 1))`, `recover = snd_max`); at `cwnd <= 1` nothing new
//! goes out until the retransmission timer, restarted, expires. Every
//! window reduction (ECN, fast retransmit, timeout) makes the next new
//! segment carry CWR ([`TcpSender::cwr_seq`]). A loss in the window
//! already cut by ECN is retransmitted without a second cut of `ssthresh`
//! (ns-2's `last_cwnd_action_ == CWND_ACTION_ECN` in `dupack_action` and
//! `timeout`). The sink echoes ECE on every ACK from a CE segment until a
//! CWR segment arrives (RFC 3168 §6.1.3; [`TcpSink::on_ecn`]).
//!
//! **Sink**: one ACK per segment, or with `delayed_ack` (RFC 1122 §4.2.3.2,
//! RFC 5681 §4.2) an ACK for every second in-order segment or when the
//! delayed-ACK timer (default 100 ms, ns-2's `interval_`) runs out;
//! out-of-order segments, duplicates and segments that fill a hole are
//! acknowledged at once.
//!
//! | parameter | unit | range | default |
//! |---|---|---|---|
//! | `variant` | | reno, newreno | reno |
//! | `mss` | bytes of payload | >= 1 | 1000 |
//! | `max_window` | segments | >= 1 | 20 |
//! | `init_window` | segments | >= 1 | 1 |
//! | `rwnd` | segments | >= 1 or none | none |
//! | `min_rto` | ns | >= 0 | 200 ms |
//! | `initial_rto` | ns | > 0 | 3 s |
//! | `max_rto` | ns | >= min_rto | 60 s |
//! | `granularity` | ns | >= 0 (> 0 with `stack = ns2`) | 100 ms |
//! | `stack` | | rfc, ns2 | rfc |
//! | `delayed_ack` | bool / timeout | | off / 100 ms |
//! | `limited_transmit` | bool | | off |
//! | `ecn` | bool | | off |

pub mod sender;
pub mod sink;

pub use sender::{TcpSender, TcpStats};
pub use sink::{SinkOutput, TcpSink};

use crate::error::ConfigError;
use crate::units::Dur;

/// Which loss recovery the sender runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TcpVariant {
    #[default]
    Reno,
    NewReno,
}

/// Whose rules the sender follows where implementations differ (see the
/// module doc): the RFCs (RFC 5681 / 6298 / 6582) or ns-2.35's agents.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TcpStack {
    #[default]
    Rfc,
    Ns2,
}

/// Sender settings (see the module doc for units and defaults).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpConfig {
    pub variant: TcpVariant,
    /// Payload bytes per full segment.
    pub mss: u32,
    pub max_window: u32,
    pub init_window: u32,
    /// Receiver window in segments (`None`: no limit).
    pub rwnd: Option<u32>,
    pub min_rto: Dur,
    pub initial_rto: Dur,
    pub max_rto: Dur,
    pub granularity: Dur,
    pub stack: TcpStack,
    /// Limited transmit (RFC 3042): a new segment on each of the first two
    /// duplicate ACKs. Default off (ns-2's `singledup_` was 0 in the papers' era).
    pub limited_transmit: bool,
    /// React to ECN-Echo (RFC 3168 §6.1.2): the flow's packets are ECN-capable.
    /// Default off.
    pub ecn: bool,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            variant: TcpVariant::Reno,
            mss: 1000,
            max_window: 20,
            init_window: 1,
            rwnd: None,
            min_rto: Dur::from_ms(200),
            initial_rto: Dur::from_secs(3),
            max_rto: Dur::from_secs(60),
            granularity: Dur::from_ms(100),
            stack: TcpStack::Rfc,
            limited_transmit: false,
            ecn: false,
        }
    }
}

impl TcpConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        let err = |field: &'static str, value: String, allowed: &str| {
            Err(ConfigError::new("tcp", field, format!("({value}) {allowed}")))
        };
        if self.mss == 0 {
            return err("mss", "0B".into(), "must be at least 1 byte");
        }
        if self.max_window == 0 {
            return err("max_window", "0".into(), "must be at least 1 segment");
        }
        if self.init_window == 0 {
            return err("init_window", "0".into(), "must be at least 1 segment");
        }
        if self.rwnd == Some(0) {
            return err("rwnd", "0".into(), "must be at least 1 segment");
        }
        if self.initial_rto.0 == 0 {
            return err("initial_rto", self.initial_rto.to_string(), "must be positive");
        }
        if self.max_rto < self.min_rto || self.max_rto.0 == 0 {
            return err("max_rto", self.max_rto.to_string(), "must be positive and at least min_rto");
        }
        if self.stack == TcpStack::Ns2 && self.variant != TcpVariant::Reno {
            return err("stack", "ns2".into(), "models ns-2.35's Agent/TCP/Reno only: allowed with variant = \"reno\"");
        }
        if self.stack == TcpStack::Ns2 && self.granularity.0 == 0 {
            return err(
                "granularity",
                self.granularity.to_string(),
                "must be positive with stack = \"ns2\" (ns-2 counts RTTs in ticks)",
            );
        }
        Ok(())
    }
    /// The window limit other than `cwnd`: `min(max_window, rwnd)`.
    pub fn window_cap(&self) -> u32 {
        self.rwnd.map_or(self.max_window, |r| r.min(self.max_window))
    }
}
