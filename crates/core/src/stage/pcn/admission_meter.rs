//! PCN admission marking at an interior node: a virtual queue drained at the
//! configured-admissible-rate, with "ramp" or "step" marking.
//!
//! Sources: [Zhang07 §3.1.1] (virtual-queue settings:
//! min-marking-threshold 5 ms, max-marking-threshold 15 ms,
//! virtual-queue-upper-limit 20 ms "at virtual queue rate"; the virtual
//! queue "is drained at a configured rate smaller than the link speed"),
//! §3.4.1 ("ramp": linear probability between the thresholds; "step": the
//! thresholds collapsed at the max-marking-threshold, probability 1 above
//! it), and draft-briscoe-tsvwg-cl-architecture, which the paper follows.
//!
//! ```text
//! len(t)        = max(0, len(t0) - rate·(t - t0))          the virtual queue drains at rate
//! on a PCN packet of s bytes at t:
//!   found       = len(t)                                  the backlog the packet finds
//!   p           = curve(found)
//!   len        <- min(limit, found + s)                   grown by the packet, capped
//!   mark (ThresholdMarked) with probability p
//! ramp(x)       = 0 if x <= min;  (x - min)/(max - min) if min < x < max;  1 if x >= max
//! step(x)       = 0 if x < at;    1 if x >= at
//! ```
//!
//! Lengths and thresholds are kept in bit·ns/s (the token bucket's unit):
//! a threshold of `d` at the virtual-queue rate `r` is exactly `r·d` units,
//! and draining is exact in integers, so the probability is exact at both
//! thresholds (0 at min, 1 at max).
//!
//! | parameter | unit | allowed | default [Zhang07 §3.1.1] |
//! |---|---|---|---|
//! | `admissible_rate` | bit/s | ≥ 1 | none: required (seed: ½ the link rate) |
//! | `curve` | `Ramp{min, max}` or `Step{at}` | 0 < min < max ≤ limit; 0 < at ≤ limit | `Ramp{5 ms, 15 ms}` |
//! | `upper_limit` | time at `admissible_rate` | > 0 | 20 ms |
//!
//! Interpretations (see `docs/decisions.md`, "PCN"):
//! - the probability is taken from the backlog the packet *finds* (before
//!   it joins), as RED does for a real queue;
//! - every PCN packet is metered, including packets already excess-marked
//!   upstream: they still occupy the link the virtual queue stands for (the
//!   paper is silent). Non-PCN packets are neither metered nor marked;
//! - a packet already marked (threshold or excess) keeps its mark; the
//!   stage counts a mark only when it sets one;
//! - a random number is drawn only when 0 < p < 1, so a run without ramp
//!   marking draws none.

use super::{is_pcn, mark_threshold, UNITS_PER_BYTE};
use crate::error::ConfigError;
use crate::packet::{FlowKey, Packet};
use crate::pipeline::EventSink;
use crate::qdisc::{MarkReason, ProbeSink};
use crate::rng::Rng;
use crate::stage::{Stage, StageVerdict};
use crate::units::{Bytes, Dur, Rate, Time};
use rand::Rng as _;

const MECH: &str = "pcn_admission";

/// How the marking probability grows with the virtual-queue length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkingCurve {
    /// 0 up to `min`, linear to 1 at `max`.
    Ramp { min: Dur, max: Dur },
    /// 0 below `at`, 1 from `at` on.
    Step { at: Dur },
}

/// Settings of a virtual queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VirtualQueueConfig {
    /// The configured-admissible-rate: the virtual queue's drain rate (bit/s).
    pub admissible_rate: Rate,
    pub curve: MarkingCurve,
    /// The virtual-queue-upper-limit, as time at `admissible_rate`.
    pub upper_limit: Dur,
}

impl VirtualQueueConfig {
    /// The paper's defaults (§3.1.1): ramp from 5 ms to 15 ms, limit 20 ms.
    pub fn seed_default(admissible_rate: Rate) -> VirtualQueueConfig {
        VirtualQueueConfig {
            admissible_rate,
            curve: MarkingCurve::Ramp { min: Dur::from_ms(5), max: Dur::from_ms(15) },
            upper_limit: Dur::from_ms(20),
        }
    }

    /// Checks every field; called by the only constructors.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.admissible_rate.0 == 0 {
            return Err(ConfigError::new(MECH, "admissible_rate", "(0 bit/s) must be at least 1 bit/s"));
        }
        if self.upper_limit.0 == 0 {
            return Err(ConfigError::new(MECH, "upper_limit", "(0 s) must be above 0"));
        }
        let top = match self.curve {
            MarkingCurve::Ramp { min, max } => {
                if min.0 == 0 {
                    return Err(ConfigError::new(
                        MECH,
                        "min_threshold",
                        "(0 s) must be above 0 (use a step curve to mark from the first byte)",
                    ));
                }
                if max <= min {
                    return Err(ConfigError::new(
                        MECH,
                        "max_threshold",
                        format!("({max}) must exceed min_threshold ({min})"),
                    ));
                }
                ("max_threshold", max)
            }
            MarkingCurve::Step { at } => {
                if at.0 == 0 {
                    return Err(ConfigError::new(MECH, "threshold", "(0 s) must be above 0"));
                }
                ("threshold", at)
            }
        };
        if top.1 > self.upper_limit {
            return Err(ConfigError::new(
                MECH,
                "upper_limit",
                format!("({}) must be at least {} ({})", self.upper_limit, top.0, top.1),
            ));
        }
        Ok(())
    }
}

/// The virtual queue and its marking curve, without the stage plumbing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VirtualQueue {
    config: VirtualQueueConfig,
    /// Thresholds and limit in scaled units (bit·ns/s).
    lo: u128,
    hi: u128,
    limit: u128,
    /// Length at `last`, in scaled units.
    len: u128,
    last: Time,
}

impl VirtualQueue {
    /// An empty virtual queue at `now`.
    pub fn new(config: VirtualQueueConfig, now: Time) -> Result<VirtualQueue, ConfigError> {
        config.validate()?;
        let at_rate = |d: Dur| config.admissible_rate.0 as u128 * d.0 as u128;
        let (lo, hi) = match config.curve {
            MarkingCurve::Ramp { min, max } => (at_rate(min), at_rate(max)),
            MarkingCurve::Step { at } => (at_rate(at), at_rate(at)),
        };
        Ok(VirtualQueue { config, lo, hi, limit: at_rate(config.upper_limit), len: 0, last: now })
    }

    pub fn config(&self) -> &VirtualQueueConfig {
        &self.config
    }

    #[inline]
    fn settled(&self, now: Time) -> u128 {
        let dt = now.0.saturating_sub(self.last.0) as u128;
        self.len.saturating_sub(self.config.admissible_rate.0 as u128 * dt)
    }

    /// Whole bytes in the virtual queue at `now` (rounded down).
    pub fn len_bytes(&self, now: Time) -> Bytes {
        Bytes((self.settled(now) / UNITS_PER_BYTE) as u64)
    }

    /// The virtual queue's length at `now` as time at the admissible rate
    /// (rounded down to the nanosecond).
    pub fn len_time(&self, now: Time) -> Dur {
        Dur((self.settled(now) / self.config.admissible_rate.0 as u128) as u64)
    }

    /// The marking probability of a backlog of `units` (bit·ns/s).
    #[inline]
    fn curve(&self, units: u128) -> f64 {
        if units >= self.hi {
            1.0
        } else if units <= self.lo {
            // Only a ramp reaches here with units == lo; a step has lo == hi.
            0.0
        } else {
            (units - self.lo) as f64 / (self.hi - self.lo) as f64
        }
    }

    /// The marking probability a packet arriving at `now` would find.
    pub fn probability(&self, now: Time) -> f64 {
        self.curve(self.settled(now))
    }

    /// The marking probability for a backlog of `backlog` (time at the
    /// admissible rate), whatever the queue holds now.
    pub fn probability_at(&self, backlog: Dur) -> f64 {
        self.curve(self.config.admissible_rate.0 as u128 * backlog.0 as u128)
    }

    /// A packet of `size` bytes joins at `now`: returns the probability it
    /// found, then grows the queue by its size, capped at the upper limit.
    /// A `now` before the last arrival counts as the last arrival.
    #[inline]
    pub fn arrive(&mut self, now: Time, size: Bytes) -> f64 {
        let found = self.settled(now);
        if now > self.last {
            self.last = now;
        }
        let p = self.curve(found);
        self.len = (found + size.0 as u128 * UNITS_PER_BYTE).min(self.limit);
        p
    }
}

/// Counters of a virtual-queue meter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VirtualQueueStats {
    /// PCN packets metered.
    pub metered: u64,
    /// Packets this meter threshold-marked.
    pub marked: u64,
}

/// The admission-marking stage (kind `pcn_admission`).
#[derive(Debug)]
pub struct VirtualQueueMeter {
    vq: VirtualQueue,
    stats: VirtualQueueStats,
}

impl VirtualQueueMeter {
    /// A meter whose virtual queue is empty at `now`.
    pub fn new(config: VirtualQueueConfig, now: Time) -> Result<VirtualQueueMeter, ConfigError> {
        Ok(VirtualQueueMeter { vq: VirtualQueue::new(config, now)?, stats: VirtualQueueStats::default() })
    }
    pub fn queue(&self) -> &VirtualQueue {
        &self.vq
    }
    pub fn stats(&self) -> &VirtualQueueStats {
        &self.stats
    }
}

impl Stage for VirtualQueueMeter {
    fn kind(&self) -> &'static str {
        MECH
    }
    #[inline]
    fn on_arrival(
        &mut self,
        now: Time,
        pkt: &mut Packet,
        _key: &FlowKey,
        rng: &mut Rng,
        _events: &mut dyn EventSink,
    ) -> StageVerdict {
        if !is_pcn(pkt) {
            return StageVerdict::Pass;
        }
        self.stats.metered += 1;
        let p = self.vq.arrive(now, pkt.bytes());
        let hit = p >= 1.0 || (p > 0.0 && rng.random::<f64>() < p);
        if hit && mark_threshold(pkt) {
            self.stats.marked += 1;
            return StageVerdict::Mark(MarkReason::PcnThreshold);
        }
        StageVerdict::Pass
    }
    /// Counters only: the queue's length is a function of time.
    fn probe(&self, sink: ProbeSink<'_>) {
        sink("admission_metered", self.stats.metered as f64);
        sink("threshold_marked", self.stats.marked as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{proto, FlowId, PcnMark};
    use crate::pipeline::Discard;
    use std::net::{IpAddr, Ipv4Addr};

    const RATE: Rate = Rate::mbps(8); // 1 byte per µs: 1 ms = 1000 B

    fn key() -> FlowKey {
        let a = IpAddr::V4(Ipv4Addr::LOCALHOST);
        FlowKey { src: a, dst: a, src_port: 1, dst_port: 2, proto: proto::UDP }
    }

    fn vq(curve: MarkingCurve) -> VirtualQueue {
        VirtualQueue::new(
            VirtualQueueConfig { admissible_rate: RATE, curve, upper_limit: Dur::from_ms(20) },
            Time::ZERO,
        )
        .unwrap()
    }

    fn ramp() -> MarkingCurve {
        MarkingCurve::Ramp { min: Dur::from_ms(5), max: Dur::from_ms(15) }
    }

    fn pcn_pkt(size: u32, t: Time) -> Packet {
        let mut p = Packet::new(0, FlowId(0), size, t);
        p.pcn = PcnMark::NotMarked;
        p
    }

    #[test]
    fn ramp_probability_is_exact_at_both_thresholds_and_linear_between() {
        let q = vq(ramp());
        let ns = |n: u64| Dur(n);
        assert_eq!(q.probability_at(Dur::ZERO), 0.0);
        assert_eq!(q.probability_at(Dur::from_ms(5)), 0.0, "exactly at min");
        assert!(q.probability_at(Dur::from_ms(5) + ns(1)) > 0.0, "just above min");
        assert_eq!(q.probability_at(Dur::from_ms(10)), 0.5);
        assert!(q.probability_at(Dur(15_000_000 - 1)) < 1.0, "just below max");
        assert_eq!(q.probability_at(Dur::from_ms(15)), 1.0, "exactly at max");
        assert_eq!(q.probability_at(Dur::from_ms(20)), 1.0);
    }

    #[test]
    fn step_probability_jumps_from_0_to_1_at_its_threshold() {
        let q = vq(MarkingCurve::Step { at: Dur::from_ms(15) });
        assert_eq!(q.probability_at(Dur(15_000_000 - 1)), 0.0);
        assert_eq!(q.probability_at(Dur::from_ms(15)), 1.0);
    }

    #[test]
    fn virtual_queue_grows_by_packet_sizes_drains_at_the_rate_and_is_capped() {
        let mut q = vq(ramp());
        // 25 packets of 1000 B at t = 0: 25 ms of work, capped at 20 ms = 20,000 B.
        let mut found = Vec::new();
        for _ in 0..25 {
            found.push(q.arrive(Time::ZERO, Bytes(1000)));
        }
        assert_eq!(q.len_bytes(Time::ZERO), Bytes(20_000), "capped at the upper limit");
        assert_eq!(q.len_time(Time::ZERO), Dur::from_ms(20));
        // The 6th packet found 5 ms (p = 0), the 11th 10 ms (p = 0.5), the 16th 15 ms (p = 1).
        assert_eq!((found[5], found[10], found[15]), (0.0, 0.5, 1.0));
        // Drains at 1 B/µs: 7 ms later 13,000 B remain; it empties at 20 ms and stays at 0.
        assert_eq!(q.len_bytes(Time(7_000_000)), Bytes(13_000));
        assert_eq!(q.probability(Time(7_000_000)), 0.8);
        assert_eq!(q.len_bytes(Time(20_000_000)), Bytes(0));
        assert_eq!(q.len_bytes(Time(50_000_000)), Bytes(0));
        // The next packet starts from empty, not from a negative length.
        assert_eq!(q.arrive(Time(50_000_000), Bytes(1000)), 0.0);
        assert_eq!(q.len_bytes(Time(50_000_000)), Bytes(1000));
    }

    #[test]
    fn meter_marks_by_the_curve_and_leaves_non_pcn_and_marked_packets_alone() {
        let cfg = VirtualQueueConfig {
            admissible_rate: RATE,
            curve: MarkingCurve::Step { at: Dur::from_ms(2) },
            upper_limit: Dur::from_ms(20),
        };
        let mut m = VirtualQueueMeter::new(cfg, Time::ZERO).unwrap();
        let mut rng = crate::rng::stream(1, 0);
        let mut verdicts = Vec::new();
        for _ in 0..3 {
            let mut p = pcn_pkt(1000, Time::ZERO);
            verdicts.push((m.on_arrival(Time::ZERO, &mut p, &key(), &mut rng, &mut Discard), p.pcn));
        }
        use StageVerdict::*;
        assert_eq!(
            verdicts,
            vec![
                (Pass, PcnMark::NotMarked),
                (Pass, PcnMark::NotMarked),
                (Mark(MarkReason::PcnThreshold), PcnMark::ThresholdMarked)
            ]
        );
        // An excess-marked packet is metered (it grows the queue) but keeps its mark.
        let mut p = pcn_pkt(1000, Time::ZERO);
        p.pcn = PcnMark::ExcessMarked;
        assert_eq!(m.on_arrival(Time::ZERO, &mut p, &key(), &mut rng, &mut Discard), Pass);
        assert_eq!(p.pcn, PcnMark::ExcessMarked);
        assert_eq!(m.queue().len_bytes(Time::ZERO), Bytes(4000));
        // A non-PCN packet is not metered.
        let mut p = Packet::new(0, FlowId(0), 1000, Time::ZERO);
        assert_eq!(m.on_arrival(Time::ZERO, &mut p, &key(), &mut rng, &mut Discard), Pass);
        assert_eq!(p.pcn, PcnMark::NotPcn);
        assert_eq!(*m.stats(), VirtualQueueStats { metered: 4, marked: 1 });
    }

    #[test]
    fn ramp_marks_about_the_probability_it_finds() {
        // Hold the queue at 10 ms found (p = 0.5): 11 ms of work at t = 0, then
        // one 1 ms packet every 1 ms, so each finds 10 ms.
        let mut m = VirtualQueueMeter::new(VirtualQueueConfig::seed_default(RATE), Time::ZERO).unwrap();
        let mut rng = crate::rng::stream(7, 0);
        for _ in 0..11 {
            m.on_arrival(Time::ZERO, &mut pcn_pkt(1000, Time::ZERO), &key(), &mut rng, &mut Discard);
        }
        assert_eq!(m.queue().probability(Time(1_000_000)), 0.5);
        let before = m.stats().marked;
        let n = 20_000u64;
        for i in 1..=n {
            let t = Time(i * 1_000_000);
            m.on_arrival(t, &mut pcn_pkt(1000, t), &key(), &mut rng, &mut Discard);
        }
        let frac = (m.stats().marked - before) as f64 / n as f64;
        assert!((frac - 0.5).abs() < 0.02, "{frac}");
    }

    #[test]
    fn config_errors_name_the_field() {
        let base = VirtualQueueConfig::seed_default(RATE);
        let err = |c: VirtualQueueConfig| VirtualQueue::new(c, Time::ZERO).unwrap_err();
        let e = err(VirtualQueueConfig {
            curve: MarkingCurve::Ramp { min: Dur::from_ms(15), max: Dur::from_ms(5) },
            ..base
        });
        assert_eq!((e.mechanism, e.field), ("pcn_admission", "max_threshold"));
        assert_eq!(e.to_string(), "pcn_admission.max_threshold (5ms) must exceed min_threshold (15ms)");
        assert_eq!(err(VirtualQueueConfig { admissible_rate: Rate(0), ..base }).field, "admissible_rate");
        assert_eq!(err(VirtualQueueConfig { upper_limit: Dur::from_ms(10), ..base }).field, "upper_limit");
        assert_eq!(err(VirtualQueueConfig { curve: MarkingCurve::Step { at: Dur::ZERO }, ..base }).field, "threshold");
        assert_eq!(
            err(VirtualQueueConfig { curve: MarkingCurve::Ramp { min: Dur::ZERO, max: Dur::from_ms(5) }, ..base })
                .field,
            "min_threshold"
        );
    }
}
