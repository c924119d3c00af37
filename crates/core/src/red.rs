//! RED: Random Early Detection (Floyd & Jacobson 1993, "Random Early
//! Detection Gateways for Congestion Avoidance", IEEE/ACM ToN 1(4)).
//! Seed 001 uses it as the baseline and as the core of CBT, D-CBT and
//! ChIPS (it describes RED in §1, builds CBT/D-CBT on its average in §3 and
//! §3.1, gives min_th 5 / max_th 15 in §3.2 and §6.3 and the 60-packet
//! queue in §5; its §2 omits queue management); those reuse the pure
//! functions in [`algo`], as Linux's `red.h` serves red, choke and gred.
//! See `docs/mechanisms/red.md`.
//!
//! On every arrival (FJ93 §4, Fig. 2):
//!
//! ```text
//! if the queue is non-empty (or the link is still busy):
//!     avg <- (1 - w_q) * avg + w_q * q                        (q: packets, or bytes in byte mode)
//! else (idle since q_time):
//!     m   <- (now - q_time) / s                              (s: transmission time of mean_pkt_size)
//!     avg <- (1 - w_q)^m * avg
//! if min_th <= avg < max_th:
//!     count <- count + 1
//!     p_b   <- max_p * (avg - min_th) / (max_th - min_th)
//!     p_b   <- p_b * size / mean_pkt_size                    (byte mode only, FJ93 §4)
//!     p_a   <- p_b / (1 - count * p_b)                       (1 when count * p_b >= 1)
//!     with probability p_a: drop (or ECN-mark), count <- 0
//! else if avg >= max_th:                                     (gentle: if avg >= 2 max_th)
//!     drop, count <- 0
//! else: count <- -1
//! gentle, max_th <= avg < 2 max_th:
//!     p_b <- max_p + (1 - max_p) * (avg - max_th) / max_th, then spaced as above
//! ```
//!
//! A packet that would take the backlog over `limit` is dropped
//! (`Overlimit`) after the average is updated, and resets `count` to 0.
//!
//! | parameter | unit | allowed | default (source) |
//! |---|---|---|---|
//! | `limit` | packets and/or bytes | ≥ 1 | none: required |
//! | `min_th` | packets (bytes in byte mode) | ≥ 0, < `max_th` | none: required |
//! | `max_th` | packets (bytes) | > `min_th` | none: required |
//! | `max_p` | probability | (0, 1] | 0.1 (FJ93 simulations, ns-2) |
//! | `w_q` | weight | (0, 1] | 0.002 (FJ93 §5, ns-2) |
//! | `gentle` | flag | | false (FJ93; gentle is Floyd 2000) |
//! | `ecn` | flag | | false: ECT packets are marked instead of early-dropped |
//! | `mode` | packets or bytes | | packets |
//! | `mean_pkt_size` | bytes | ≥ 1 | 1000 B (ns-2 `mean_pktsize_`) |
//! | link rate | bit/s | > 0 | given by the link the queue feeds |
//!
//! Interpretations (also in `docs/decisions.md`):
//! - `q` counts packets waiting in this queue, not the one on the wire
//!   (Linux semantics). The idle period starts when `dequeue` finds the
//!   queue empty, which the simulator does when the link finishes sending.
//! - In the forced region ECN-capable packets are dropped, not marked
//!   (FJ93 "mark" = drop; RFC 3168 §7 leaves forced marking optional).
//! - Gentle mode applies the count spacing in the gentle region too (ns-2).
//! - Inside strict priority the scheduler polls empty bands too, so a RED
//!   band still sees its queue found empty and decays (see classful.rs).

use crate::error::ConfigError;
use crate::packet::Packet;
use crate::qdisc::{Backlog, Dequeue, DropReason, Dropped, Limit, MarkReason, ProbeSink, Qdisc, Verdict};
use crate::rng::Rng;
use crate::units::{Bytes, Dur, Rate, Time};
use rand::Rng as _;
use std::collections::VecDeque;

/// How the queue is measured for thresholds and the average.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RedMode {
    #[default]
    Packets,
    Bytes,
}

/// Default `max_p` (FJ93 simulations, ns-2).
pub const DEFAULT_MAX_P: f64 = 0.1;
/// Default `w_q` (FJ93 §5, ns-2).
pub const DEFAULT_W_Q: f64 = 0.002;
/// Default `mean_pkt_size` (ns-2 `mean_pktsize_`).
pub const DEFAULT_MEAN_PKT_SIZE: Bytes = Bytes(1000);

/// RED's settings. Validated by [`RedConfig::validate`], called by [`Red::new`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedConfig {
    pub limit: Limit,
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub w_q: f64,
    pub gentle: bool,
    pub ecn: bool,
    pub mode: RedMode,
    pub mean_pkt_size: Bytes,
}

impl RedConfig {
    /// The FJ93 defaults around the given thresholds and limit.
    pub fn new(limit: Limit, min_th: f64, max_th: f64) -> RedConfig {
        RedConfig {
            limit,
            min_th,
            max_th,
            max_p: 0.1,
            w_q: 0.002,
            gentle: false,
            ecn: false,
            mode: RedMode::Packets,
            mean_pkt_size: Bytes(1000),
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let e = |f, m: String| Err(ConfigError::new("red", f, m));
        if self.limit.packets.is_none() && self.limit.bytes.is_none() {
            return e("limit", "is missing; set a packet and/or byte limit".into());
        }
        if self.limit.packets == Some(0) || self.limit.bytes == Some(0) {
            return e("limit", "must be at least 1".into());
        }
        if !(self.min_th.is_finite() && self.min_th >= 0.0) {
            return e("min_th", format!("({}) must be a number >= 0", self.min_th));
        }
        if !(self.max_th.is_finite() && self.max_th > self.min_th) {
            return e("max_th", format!("({}) must exceed min_th ({})", self.max_th, self.min_th));
        }
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            return e("max_p", format!("({}) must be in (0, 1]", self.max_p));
        }
        if !(self.w_q > 0.0 && self.w_q <= 1.0) {
            return e("w_q", format!("({}) must be in (0, 1]", self.w_q));
        }
        if self.mean_pkt_size.0 == 0 {
            return e("mean_pkt_size", "(0 B) must be at least 1 byte".into());
        }
        Ok(())
    }

    pub fn params(&self) -> algo::RedParams {
        algo::RedParams {
            min_th: self.min_th,
            max_th: self.max_th,
            max_p: self.max_p,
            w_q: self.w_q,
            gentle: self.gentle,
        }
    }
}

/// The RED algorithm as pure functions over explicit state, for RED and
/// for the disciplines built on it (CBT, D-CBT, ChIPS).
pub mod algo {
    use crate::units::Dur;

    /// The algorithm's inputs (thresholds in the unit of the average).
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct RedParams {
        pub min_th: f64,
        pub max_th: f64,
        pub max_p: f64,
        pub w_q: f64,
        pub gentle: bool,
    }

    /// RED's variables: the average, the count since the last drop, and the
    /// start of the current idle period.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct RedVars {
        pub avg: f64,
        /// Packets since the last early drop; -1 outside the early region (FJ93).
        pub count: i64,
    }

    impl Default for RedVars {
        fn default() -> Self {
            RedVars { avg: 0.0, count: -1 }
        }
    }

    /// EWMA step on an arrival that finds `q` queued: `(1 - w_q) avg + w_q q`.
    #[inline]
    pub fn update_avg(p: &RedParams, avg: f64, q: f64) -> f64 {
        avg + p.w_q * (q - avg)
    }

    /// Decay over an idle period: `(1 - w_q)^m avg`, `m = idle / pkt_time`.
    #[inline]
    pub fn decay_idle(p: &RedParams, avg: f64, idle: Dur, pkt_time: Dur) -> f64 {
        if pkt_time.0 == 0 {
            return 0.0;
        }
        let m = idle.0 as f64 / pkt_time.0 as f64;
        avg * (1.0 - p.w_q).powf(m)
    }

    /// Where the average stands.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub enum Zone {
        /// avg < min_th: never drop.
        Below,
        /// Early region with base probability `p_b`.
        Early(f64),
        /// Drop every packet.
        Forced,
    }

    /// The zone of `avg` and, in the early region, `p_b`.
    #[inline]
    pub fn zone(p: &RedParams, avg: f64) -> Zone {
        if avg < p.min_th {
            Zone::Below
        } else if avg < p.max_th {
            Zone::Early(p.max_p * (avg - p.min_th) / (p.max_th - p.min_th))
        } else if p.gentle && avg < 2.0 * p.max_th {
            Zone::Early(p.max_p + (1.0 - p.max_p) * (avg - p.max_th) / p.max_th)
        } else {
            Zone::Forced
        }
    }

    /// `p_a = p_b / (1 - count p_b)`, 1 when `count p_b >= 1` (FJ93 Fig. 2
    /// and its section "Calculating the packet-marking probability").
    #[inline]
    pub fn spaced(p_b: f64, count: i64) -> f64 {
        let c = count as f64 * p_b;
        if c >= 1.0 {
            1.0
        } else {
            (p_b / (1.0 - c)).min(1.0)
        }
    }

    /// RED's decision for one arrival.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub enum Action {
        Pass,
        /// Early (probabilistic) drop or mark.
        Early,
        /// Forced drop.
        Forced,
    }

    /// Decides for one arrival with the average already updated, drawing a
    /// uniform number from `draw` only in the early region. `scale`
    /// multiplies `p_b` (byte mode: size / mean size; 1 otherwise).
    #[inline]
    pub fn decide(p: &RedParams, v: &mut RedVars, scale: f64, draw: impl FnOnce() -> f64) -> Action {
        match zone(p, v.avg) {
            Zone::Below => {
                v.count = -1;
                Action::Pass
            }
            Zone::Forced => {
                v.count = 0;
                Action::Forced
            }
            Zone::Early(p_b) => {
                v.count += 1;
                let p_a = spaced((p_b * scale).min(1.0), v.count);
                if draw() < p_a {
                    v.count = 0;
                    Action::Early
                } else {
                    Action::Pass
                }
            }
        }
    }
}

/// Counters specific to RED (the wrapper counts drops by reason).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RedStats {
    pub early: u64,
    pub forced: u64,
    pub overlimit: u64,
    pub marked: u64,
}

/// RED over a FIFO.
#[derive(Debug)]
pub struct Red {
    config: RedConfig,
    params: algo::RedParams,
    vars: algo::RedVars,
    /// Transmission time of `mean_pkt_size` at the link rate (`s` in FJ93).
    pkt_time: Dur,
    idle_since: Option<Time>,
    q: VecDeque<Packet>,
    backlog: Backlog,
    stats: RedStats,
    /// The uniform number drawn for the last arrival, if one was drawn.
    last_uniform: Option<f64>,
}

impl Red {
    /// RED feeding a link of `link_rate` (needed for the idle decay).
    pub fn new(config: RedConfig, link_rate: Rate) -> Result<Red, ConfigError> {
        config.validate()?;
        if link_rate.0 == 0 {
            return Err(ConfigError::new("red", "link_rate", "(0 bit/s) must be positive"));
        }
        Ok(Red {
            params: config.params(),
            config,
            vars: algo::RedVars::default(),
            pkt_time: link_rate.tx_time(config.mean_pkt_size),
            idle_since: Some(Time::ZERO),
            q: VecDeque::new(), // grown on demand
            backlog: Backlog::default(),
            stats: RedStats::default(),
            last_uniform: None,
        })
    }
    pub fn config(&self) -> &RedConfig {
        &self.config
    }
    /// The current average queue (packets, or bytes in byte mode).
    pub fn avg(&self) -> f64 {
        self.vars.avg
    }
    pub fn count(&self) -> i64 {
        self.vars.count
    }
    pub fn red_stats(&self) -> &RedStats {
        &self.stats
    }
    /// The uniform number drawn at the last arrival (early region only).
    pub fn last_uniform(&self) -> Option<f64> {
        self.last_uniform
    }

    #[inline]
    fn measure(&self) -> f64 {
        match self.config.mode {
            RedMode::Packets => self.backlog.packets as f64,
            RedMode::Bytes => self.backlog.bytes as f64,
        }
    }
}

impl Qdisc for Red {
    fn kind(&self) -> &'static str {
        "red"
    }

    fn enqueue(&mut self, now: Time, mut pkt: Packet, rng: &mut Rng) -> Verdict {
        // 1. Average (FJ93 Fig. 2): decay over an idle period, else EWMA.
        self.vars.avg = match self.idle_since.take() {
            Some(t0) if self.backlog.is_empty() => {
                algo::decay_idle(&self.params, self.vars.avg, now.since(t0), self.pkt_time)
            }
            _ => algo::update_avg(&self.params, self.vars.avg, self.measure()),
        };
        // 2. Decision.
        let scale = match self.config.mode {
            RedMode::Packets => 1.0,
            RedMode::Bytes => pkt.size as f64 / self.config.mean_pkt_size.0 as f64,
        };
        let mut drawn = None;
        let action = algo::decide(&self.params, &mut self.vars, scale, || {
            let u: f64 = rng.random();
            drawn = Some(u);
            u
        });
        self.last_uniform = drawn;
        let mut verdict = Verdict::Queued;
        match action {
            algo::Action::Pass => {}
            algo::Action::Early if self.config.ecn && pkt.ecn.is_ect() => {
                pkt.ecn = crate::packet::Ecn::Ce;
                self.stats.marked += 1;
                verdict = Verdict::Marked(MarkReason::EcnEarly);
            }
            algo::Action::Early => {
                self.stats.early += 1;
                return Verdict::Dropped(Dropped { packet: pkt, reason: DropReason::EarlyRandom });
            }
            algo::Action::Forced => {
                self.stats.forced += 1;
                return Verdict::Dropped(Dropped { packet: pkt, reason: DropReason::Forced });
            }
        }
        // 3. Physical limit.
        if self.config.limit.would_exceed(self.backlog, pkt.size) {
            self.vars.count = 0;
            self.stats.overlimit += 1;
            if matches!(verdict, Verdict::Marked(_)) {
                self.stats.marked -= 1;
            }
            return Verdict::Dropped(Dropped { packet: pkt, reason: DropReason::Overlimit });
        }
        self.backlog.add(&pkt);
        self.q.push_back(pkt);
        verdict
    }

    fn dequeue(&mut self, now: Time) -> Dequeue {
        match self.q.pop_front() {
            Some(p) => {
                self.backlog.sub(&p);
                Dequeue::Packet(p)
            }
            None => {
                if self.idle_since.is_none() {
                    self.idle_since = Some(now);
                }
                Dequeue::Empty
            }
        }
    }
    fn peek(&self) -> Option<&Packet> {
        self.q.front()
    }
    fn backlog(&self) -> Backlog {
        self.backlog
    }
    fn for_each_packet(&self, f: &mut dyn FnMut(&Packet)) {
        self.q.iter().for_each(f)
    }
    fn reset(&mut self) -> Vec<Packet> {
        self.backlog = Backlog::default();
        self.vars = algo::RedVars::default();
        self.q.drain(..).collect()
    }
    fn probe(&self, sink: ProbeSink<'_>) {
        sink("red_avg", self.vars.avg);
    }
}

#[cfg(test)]
mod tests {
    use super::algo::*;
    use super::*;
    use crate::packet::FlowId;
    use crate::qdisc::Queue;

    fn p() -> RedParams {
        RedParams { min_th: 5.0, max_th: 15.0, max_p: 0.1, w_q: 0.002, gentle: false }
    }
    fn pkt(id: u64) -> Packet {
        Packet::new(id, FlowId(0), 1000, Time(0))
    }

    #[test]
    fn avg_is_an_ewma_of_the_queue() {
        let mut a = 0.0;
        for _ in 0..3 {
            a = update_avg(&p(), a, 10.0);
        }
        // 10 * (1 - 0.998^3)
        assert!((a - 10.0 * (1.0 - 0.998f64.powi(3))).abs() < 1e-12);
    }

    #[test]
    fn idle_decay_is_per_packet_time() {
        let a = decay_idle(&p(), 8.0, Dur(3_200_000), Dur(320_000)); // m = 10
        assert!((a - 8.0 * 0.998f64.powi(10)).abs() < 1e-12);
    }

    #[test]
    fn zones_and_base_probability() {
        assert_eq!(zone(&p(), 4.99), Zone::Below);
        assert_eq!(zone(&p(), 10.0), Zone::Early(0.05));
        assert_eq!(zone(&p(), 15.0), Zone::Forced);
        let g = RedParams { gentle: true, ..p() };
        match zone(&g, 22.5) {
            Zone::Early(pb) => assert!((pb - (0.1 + 0.9 * 0.5)).abs() < 1e-12),
            z => panic!("{z:?}"),
        }
        assert_eq!(zone(&g, 30.0), Zone::Forced);
    }

    #[test]
    fn count_spacing_raises_probability_until_certain() {
        assert_eq!(spaced(0.05, 0), 0.05);
        assert!((spaced(0.05, 10) - 0.05 / 0.5).abs() < 1e-12);
        assert_eq!(spaced(0.05, 20), 1.0);
        assert_eq!(spaced(0.05, 25), 1.0);
    }

    #[test]
    fn decide_resets_count_on_drop_and_below_min() {
        let mut v = RedVars { avg: 10.0, count: -1 };
        assert_eq!(decide(&p(), &mut v, 1.0, || 0.99), Action::Pass);
        assert_eq!(v.count, 0);
        assert_eq!(decide(&p(), &mut v, 1.0, || 0.0), Action::Early);
        assert_eq!(v.count, 0);
        v.avg = 1.0;
        assert_eq!(decide(&p(), &mut v, 1.0, || panic!("no draw below min_th")), Action::Pass);
        assert_eq!(v.count, -1);
        v.avg = 20.0;
        assert_eq!(decide(&p(), &mut v, 1.0, || panic!("no draw when forced")), Action::Forced);
    }

    #[test]
    fn red_forced_drop_above_max_th_and_limit() {
        let mut rng = crate::rng::stream(1, 0);
        let cfg = RedConfig { w_q: 1.0, max_p: 1e-12, ..RedConfig::new(Limit::packets(20), 5.0, 15.0) };
        let mut q = Queue::new(Box::new(Red::new(cfg, Rate::mbps(25)).unwrap()));
        // With w_q = 1 the average is the instantaneous queue: the 16th
        // arrival finds 15 queued and is forced out.
        let mut verdicts = Vec::new();
        for i in 0..17 {
            verdicts.push(q.enqueue(Time(i), pkt(i), &mut rng));
        }
        assert!(verdicts[..5].iter().all(|v| *v == Verdict::Queued));
        assert!(matches!(verdicts[15], Verdict::Dropped(Dropped { reason: DropReason::Forced, .. })));
        assert!(q.stats().drops_for(DropReason::Forced) >= 1);
        assert!(q.backlog().packets <= 15);
    }

    #[test]
    fn red_overlimit_when_the_buffer_is_full() {
        let mut rng = crate::rng::stream(1, 0);
        let mut q =
            Queue::new(Box::new(Red::new(RedConfig::new(Limit::packets(3), 5.0, 15.0), Rate::mbps(25)).unwrap()));
        for i in 0..4 {
            q.enqueue(Time(i), pkt(i), &mut rng);
        }
        assert_eq!(q.stats().drops_for(DropReason::Overlimit), 1);
        assert_eq!(q.backlog().packets, 3);
    }

    #[test]
    fn red_decays_average_over_idle_time() {
        let mut rng = crate::rng::stream(1, 0);
        let cfg = RedConfig { w_q: 0.5, ..RedConfig::new(Limit::packets(100), 50.0, 60.0) };
        let mut red = Red::new(cfg, Rate::mbps(25)).unwrap(); // s = 320 us
        for i in 0..4 {
            red.enqueue(Time(0), pkt(i), &mut rng);
        }
        let before = red.avg();
        for _ in 0..4 {
            red.dequeue(Time(1_000));
        }
        assert_eq!(red.dequeue(Time(2_000)), Dequeue::Empty); // idle from t = 2 us
        red.enqueue(Time(2_000 + 640_000), pkt(9), &mut rng); // m = 2
        assert!((red.avg() - before * 0.25).abs() < 1e-12, "{} vs {}", red.avg(), before * 0.25);
    }

    #[test]
    fn red_marks_ect_packets_instead_of_early_drop() {
        let mut rng = crate::rng::stream(7, 0);
        let cfg = RedConfig { ecn: true, max_p: 1.0, w_q: 1.0, ..RedConfig::new(Limit::packets(100), 1.0, 50.0) };
        let mut q = Queue::new(Box::new(Red::new(cfg, Rate::mbps(25)).unwrap()));
        let mut marked = 0;
        for i in 0..40 {
            let mut p = pkt(i);
            p.ecn = crate::packet::Ecn::Ect0;
            if let Verdict::Marked(MarkReason::EcnEarly) = q.enqueue(Time(i), p, &mut rng) {
                marked += 1;
            }
        }
        assert!(marked > 0);
        assert_eq!(q.stats().drops_for(DropReason::EarlyRandom), 0);
        assert_eq!(q.stats().marks_for(MarkReason::EcnEarly), marked);
    }

    #[test]
    fn red_config_errors_name_the_field() {
        let bad = RedConfig::new(Limit::packets(60), 15.0, 5.0);
        let e = Red::new(bad, Rate::mbps(25)).unwrap_err();
        assert_eq!(e.to_string(), "red.max_th (5) must exceed min_th (15)");
        let bad = RedConfig { w_q: 0.0, ..RedConfig::new(Limit::packets(60), 5.0, 15.0) };
        assert_eq!(Red::new(bad, Rate::mbps(25)).unwrap_err().field, "w_q");
    }
}
