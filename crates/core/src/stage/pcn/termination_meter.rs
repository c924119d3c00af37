//! PCN termination marking at an interior node: a token bucket at the
//! configured-termination-rate; PCN packets that find no token are
//! excess-marked.
//!
//! Sources: [Zhang07 §4.1] ("marking all packets
//! which find no token in the token bucket. In the case of multiple
//! bottlenecks, only previously unmarked traffic is metered against the
//! token bucket. [...] Token bucket depth was set to 256 packets"), after
//! draft-briscoe-tsvwg-cl-architecture. The bucket is the one core
//! [`TokenBucket`] (exact integer refill, no debt), full at the start.
//!
//! ```text
//! on a PCN packet not yet excess-marked:  bucket.consume(now, size) → Pass
//!                                          else → ExcessMarked, Mark(PcnExcess)
//! on an excess-marked or non-PCN packet:  Pass, not metered
//! ```
//!
//! | parameter | unit | allowed | default [Zhang07 §4.1] |
//! |---|---|---|---|
//! | `termination_rate` | bit/s | ≥ 1 | none: required (seed: ½ the link rate) |
//! | `depth` | bytes | ≥ 1 | 256 packets: [`ExcessMeterConfig::with_packets`] |
//!
//! Interpretations (see `docs/decisions.md`, "PCN"):
//! - "256 packets" is kept in bytes, 256 × the PCN packet size (the
//!   scenario's PCN packet size; the largest one when sizes are mixed), so
//!   that the exact-multiple effect of §4.3.2 (tokens per CBR inter-packet
//!   time an integer multiple of the packet size) is reproduced exactly;
//! - a threshold-marked packet is still "unmarked" for this meter: it is
//!   metered and may be excess-marked (the excess mark wins);
//! - a marked packet takes no tokens (no debt), as the token bucket says.

use super::{is_pcn, mark_excess};
use crate::error::ConfigError;
use crate::packet::{FlowKey, Packet, PcnMark};
use crate::pipeline::EventSink;
use crate::qdisc::{MarkReason, ProbeSink};
use crate::rng::Rng;
use crate::stage::{Stage, StageVerdict};
use crate::token_bucket::{TokenBucket, TokenBucketConfig};
use crate::units::{Bytes, Rate, Time};

const MECH: &str = "pcn_termination";

/// Settings of an excess meter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExcessMeterConfig {
    /// The configured-termination-rate (bit/s).
    pub termination_rate: Rate,
    /// Bucket depth (bytes).
    pub depth: Bytes,
}

impl ExcessMeterConfig {
    /// The paper's depth of 256 packets: `256 · packet_size` bytes.
    pub const SEED_DEPTH_PACKETS: u64 = 256;

    /// A bucket `packets` deep for packets of `packet_size` bytes.
    pub fn with_packets(termination_rate: Rate, packets: u64, packet_size: Bytes) -> ExcessMeterConfig {
        ExcessMeterConfig { termination_rate, depth: Bytes(packets.saturating_mul(packet_size.0)) }
    }

    /// Checks every field; called by the only constructor.
    pub fn validate(&self) -> Result<(), ConfigError> {
        TokenBucketConfig { rate: self.termination_rate, depth: self.depth }.validate().map_err(|e| ConfigError {
            mechanism: MECH,
            field: if e.field == "rate" { "termination_rate" } else { e.field },
            ..e
        })
    }
}

/// Counters of an excess meter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExcessMeterStats {
    /// PCN packets metered (not excess-marked on arrival).
    pub metered: u64,
    /// Packets this meter excess-marked.
    pub marked: u64,
    /// PCN packets passed unmetered because they arrived excess-marked.
    pub already_marked: u64,
}

/// The termination-marking stage (kind `pcn_termination`).
#[derive(Debug)]
pub struct ExcessMeter {
    config: ExcessMeterConfig,
    bucket: TokenBucket,
    stats: ExcessMeterStats,
}

impl ExcessMeter {
    /// A meter whose bucket is full at `now`.
    pub fn new(config: ExcessMeterConfig, now: Time) -> Result<ExcessMeter, ConfigError> {
        config.validate()?;
        let bucket =
            TokenBucket::new(TokenBucketConfig { rate: config.termination_rate, depth: config.depth }, now, true)?;
        Ok(ExcessMeter { config, bucket, stats: ExcessMeterStats::default() })
    }
    pub fn config(&self) -> &ExcessMeterConfig {
        &self.config
    }
    pub fn bucket(&self) -> &TokenBucket {
        &self.bucket
    }
    pub fn stats(&self) -> &ExcessMeterStats {
        &self.stats
    }
}

impl Stage for ExcessMeter {
    fn kind(&self) -> &'static str {
        MECH
    }
    #[inline]
    fn on_arrival(
        &mut self,
        now: Time,
        pkt: &mut Packet,
        _key: &FlowKey,
        _rng: &mut Rng,
        _events: &mut dyn EventSink,
    ) -> StageVerdict {
        if !is_pcn(pkt) {
            return StageVerdict::Pass;
        }
        if pkt.pcn == PcnMark::ExcessMarked {
            self.stats.already_marked += 1;
            return StageVerdict::Pass;
        }
        self.stats.metered += 1;
        if self.bucket.consume(now, pkt.bytes()) {
            return StageVerdict::Pass;
        }
        mark_excess(pkt);
        self.stats.marked += 1;
        StageVerdict::Mark(MarkReason::PcnExcess)
    }
    fn probe(&self, sink: ProbeSink<'_>) {
        sink("termination_metered", self.stats.metered as f64);
        sink("excess_marked", self.stats.marked as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{proto, FlowId};
    use crate::pipeline::Discard;
    use crate::units::Dur;
    use std::net::{IpAddr, Ipv4Addr};

    fn key() -> FlowKey {
        let a = IpAddr::V4(Ipv4Addr::LOCALHOST);
        FlowKey { src: a, dst: a, src_port: 1, dst_port: 2, proto: proto::UDP }
    }

    fn pcn_pkt(size: u32, t: Time) -> Packet {
        let mut p = Packet::new(0, FlowId(0), size, t);
        p.pcn = PcnMark::NotMarked;
        p
    }

    #[test]
    fn bucket_of_256_packets_passes_a_burst_of_256_then_marks() {
        // 160 B voice packets: 256 packets = 40,960 B of tokens.
        let cfg = ExcessMeterConfig::with_packets(Rate::mbps(1), ExcessMeterConfig::SEED_DEPTH_PACKETS, Bytes(160));
        assert_eq!(cfg.depth, Bytes(40_960));
        let mut m = ExcessMeter::new(cfg, Time::ZERO).unwrap();
        let mut rng = crate::rng::stream(1, 0);
        let mut marked_at = None;
        for i in 0..300u32 {
            let mut p = pcn_pkt(160, Time::ZERO);
            if m.on_arrival(Time::ZERO, &mut p, &key(), &mut rng, &mut Discard) != StageVerdict::Pass {
                assert_eq!(p.pcn, PcnMark::ExcessMarked);
                marked_at.get_or_insert(i);
            }
        }
        assert_eq!(marked_at, Some(256), "the 257th packet of a burst finds no token");
        assert_eq!(*m.stats(), ExcessMeterStats { metered: 300, marked: 44, already_marked: 0 });
        // 1 Mb/s refills one 160 B packet in 1.28 ms: one more passes then, not before.
        let t = Time(Dur::from_us(1280).0);
        let mut p = pcn_pkt(160, Time(t.0 - 1));
        assert_eq!(
            m.on_arrival(Time(t.0 - 1), &mut p, &key(), &mut rng, &mut Discard),
            StageVerdict::Mark(MarkReason::PcnExcess)
        );
        let mut p = pcn_pkt(160, t);
        assert_eq!(m.on_arrival(t, &mut p, &key(), &mut rng, &mut Discard), StageVerdict::Pass);
    }

    #[test]
    fn excess_marked_packets_are_not_metered_and_threshold_marked_ones_are() {
        let mut m =
            ExcessMeter::new(ExcessMeterConfig { termination_rate: Rate(8), depth: Bytes(1000) }, Time::ZERO).unwrap();
        let mut rng = crate::rng::stream(1, 0);
        // An excess-marked 1000 B packet takes no tokens...
        let mut p = pcn_pkt(1000, Time::ZERO);
        p.pcn = PcnMark::ExcessMarked;
        assert_eq!(m.on_arrival(Time::ZERO, &mut p, &key(), &mut rng, &mut Discard), StageVerdict::Pass);
        assert_eq!(m.bucket().tokens(Time::ZERO), Bytes(1000));
        // ...nor does a non-PCN one; a threshold-marked one does, and the next is excess-marked over it.
        let mut p = Packet::new(0, FlowId(0), 1000, Time::ZERO);
        assert_eq!(m.on_arrival(Time::ZERO, &mut p, &key(), &mut rng, &mut Discard), StageVerdict::Pass);
        let mut p = pcn_pkt(1000, Time::ZERO);
        p.pcn = PcnMark::ThresholdMarked;
        assert_eq!(m.on_arrival(Time::ZERO, &mut p, &key(), &mut rng, &mut Discard), StageVerdict::Pass);
        assert_eq!((p.pcn, m.bucket().tokens(Time::ZERO)), (PcnMark::ThresholdMarked, Bytes(0)));
        let mut p = pcn_pkt(1000, Time::ZERO);
        p.pcn = PcnMark::ThresholdMarked;
        assert_eq!(
            m.on_arrival(Time::ZERO, &mut p, &key(), &mut rng, &mut Discard),
            StageVerdict::Mark(MarkReason::PcnExcess)
        );
        assert_eq!(p.pcn, PcnMark::ExcessMarked);
        assert_eq!(*m.stats(), ExcessMeterStats { metered: 2, marked: 1, already_marked: 1 });
    }

    /// Per-flow marked fractions over `secs` s after a 5 s warm-up: `flows`
    /// CBR flows of 160 B every 20 ms at fixed offsets, each packet shifted
    /// by up to `jitter` of the 20 ms [Zhang07 §2.3.4], into a 256-packet bucket
    /// refilled with exactly 6 packets' worth per 20 ms.
    fn marked_fractions(flows: u64, jitter: f64, secs: u64) -> Vec<f64> {
        use rand::Rng as _;
        let rate = Rate(6 * 160 * 8 * 50); // 384 kb/s: 6 × 160 B per 20 ms, exactly
        let cfg = ExcessMeterConfig::with_packets(rate, 256, Bytes(160));
        let mut m = ExcessMeter::new(cfg, Time::ZERO).unwrap();
        let mut rng = crate::rng::stream(11, 0);
        let period = 20_000_000u64;
        let (mut marked, mut seen) = (vec![0u64; flows as usize], vec![0u64; flows as usize]);
        let mut arrivals: Vec<(u64, usize)> = Vec::new();
        for k in 0..(5 + secs) * 50 {
            for f in 0..flows {
                let shift = (rng.random::<f64>() * jitter * period as f64) as u64;
                arrivals.push((k * period + f * (period / flows) + shift, f as usize));
            }
        }
        arrivals.sort_unstable();
        for (t, f) in arrivals {
            let mut p = pcn_pkt(160, Time(t));
            let v = m.on_arrival(Time(t), &mut p, &key(), &mut rng, &mut Discard);
            if t >= 5_000_000_000 {
                seen[f] += 1;
                marked[f] += (v != StageVerdict::Pass) as u64;
            }
        }
        marked.iter().zip(&seen).map(|(&m, &n)| m as f64 / n as f64).collect()
    }

    #[test]
    fn cbr_flows_synchronize_when_tokens_per_period_are_whole_packets() {
        // [Zhang07 §4.3.2]: with an exact multiple of the packet size arriving per
        // CBR period, a flow marked once is marked always: 4 of 10 flows are
        // fully marked, 6 never.
        let fr = marked_fractions(10, 0.0, 10);
        assert!(fr.iter().all(|&x| x == 0.0 || x == 1.0), "{fr:?}");
        assert_eq!(fr.iter().filter(|&&x| x == 1.0).count(), 4, "{fr:?}");
        // Randomized packet times (f = 0.1) break it: marks spread over flows.
        let fr = marked_fractions(10, 0.1, 10);
        assert!(fr.iter().filter(|&&x| x > 0.0 && x < 1.0).count() >= 5, "{fr:?}");
        let total: f64 = fr.iter().sum::<f64>() / 10.0;
        assert!((total - 0.4).abs() < 0.01, "the marked share stays 4/10: {total}");
    }

    #[test]
    fn config_errors_name_the_meter_and_the_field() {
        let e =
            ExcessMeter::new(ExcessMeterConfig { termination_rate: Rate(0), depth: Bytes(1) }, Time::ZERO).unwrap_err();
        assert_eq!((e.mechanism, e.field), ("pcn_termination", "termination_rate"));
        let e =
            ExcessMeter::new(ExcessMeterConfig { termination_rate: Rate(1), depth: Bytes(0) }, Time::ZERO).unwrap_err();
        assert_eq!((e.mechanism, e.field), ("pcn_termination", "depth"));
    }
}
