//! A token-bucket policer as a port stage: packets that find enough tokens
//! pass and take them; the others are dropped (`DropReason::Policed`) or,
//! with `action = Mark`, passed with the packet's PCN excess-traffic mark
//! set (`MarkReason::PcnExcess`) by the one PCN marking rule,
//! [`crate::stage::pcn::mark_excess`]: a non-PCN packet is never PCN-marked
//! (RFC 5670 §3: only PCN-packets are metered and marked) and passes
//! unchanged, as does a packet already excess-marked.
//!
//! Sources: RFC 2697/2698's single-rate meter reduced to one bucket (the
//! "conform / exceed" split of RFC 2475 §2.3.3.3 "Policing"); [Zhang07 §4]
//! meters PCN termination the same way ("marking all packets which find
//! no token in the token bucket"). The bucket is the one core
//! [`TokenBucket`] (exact integer refill, no debt), full at the start.
//!
//! ```text
//! on_arrival(now, pkt):  bucket.consume(now, pkt.size) → Pass
//!                        else Drop  → Drop(Policed)
//!                             Mark  → mark_excess(pkt) ? Mark(PcnExcess) : Pass
//! ```
//!
//! | parameter | unit | allowed | default |
//! |---|---|---|---|
//! | `rate` | bit/s | ≥ 1 | none: required |
//! | `depth` | bytes | ≥ 1 | none: required |
//! | `action` | `drop`, `mark` | | `drop` |
//!
//! Interpretations: a packet larger than the depth never conforms (as the
//! token bucket says), so it is always policed. The bucket meters every
//! packet, PCN or not (it is a policer of the port's traffic); with
//! `action = Mark` a non-conformant non-PCN packet is counted `exceeded`
//! and passes unmarked (see `docs/decisions.md`, "PCN: one excess-marking
//! rule").

use crate::error::ConfigError;
use crate::packet::{FlowKey, Packet};
use crate::pipeline::EventSink;
use crate::qdisc::{DropReason, MarkReason, ProbeSink};
use crate::rng::Rng;
use crate::stage::pcn::mark_excess;
use crate::stage::{Stage, StageVerdict};
use crate::token_bucket::{TokenBucket, TokenBucketConfig};
use crate::units::{Bytes, Rate, Time};

/// What happens to a non-conformant packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PolicerAction {
    #[default]
    Drop,
    /// Pass it with its PCN excess-traffic mark set.
    Mark,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PolicerConfig {
    pub rate: Rate,
    pub depth: Bytes,
    pub action: PolicerAction,
}

impl PolicerConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        TokenBucketConfig { rate: self.rate, depth: self.depth }
            .validate()
            .map_err(|e| ConfigError { mechanism: "policer", ..e })
    }
}

/// Counters of a policer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PolicerStats {
    pub conformed: u64,
    pub exceeded: u64,
}

#[derive(Debug)]
pub struct Policer {
    config: PolicerConfig,
    bucket: TokenBucket,
    stats: PolicerStats,
}

impl Policer {
    /// A policer whose bucket is full at `now`.
    pub fn new(config: PolicerConfig, now: Time) -> Result<Policer, ConfigError> {
        config.validate()?;
        let bucket = TokenBucket::new(TokenBucketConfig { rate: config.rate, depth: config.depth }, now, true)?;
        Ok(Policer { config, bucket, stats: PolicerStats::default() })
    }
    pub fn config(&self) -> &PolicerConfig {
        &self.config
    }
    pub fn stats(&self) -> &PolicerStats {
        &self.stats
    }
}

impl Stage for Policer {
    fn kind(&self) -> &'static str {
        "policer"
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
        if self.bucket.consume(now, Bytes(pkt.size as u64)) {
            self.stats.conformed += 1;
            return StageVerdict::Pass;
        }
        self.stats.exceeded += 1;
        match self.config.action {
            PolicerAction::Drop => StageVerdict::Drop(DropReason::Policed),
            PolicerAction::Mark if mark_excess(pkt) => StageVerdict::Mark(MarkReason::PcnExcess),
            PolicerAction::Mark => StageVerdict::Pass,
        }
    }
    /// `tokens_bytes` can only be read at a time; the counters are cumulative.
    fn probe(&self, sink: ProbeSink<'_>) {
        sink("conformed", self.stats.conformed as f64);
        sink("exceeded", self.stats.exceeded as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{proto, FlowId, PcnMark};
    use crate::pipeline::{Discard, Port};
    use crate::qdisc::fifo::{Fifo, FifoConfig};
    use crate::qdisc::{Limit, Queue, Verdict};
    use crate::units::Dur;
    use std::net::{IpAddr, Ipv4Addr};

    fn key() -> FlowKey {
        let a = IpAddr::V4(Ipv4Addr::LOCALHOST);
        FlowKey { src: a, dst: a, src_port: 1, dst_port: 2, proto: proto::UDP }
    }

    fn policer(action: PolicerAction) -> Policer {
        Policer::new(PolicerConfig { rate: Rate(8_000), depth: Bytes(2_000), action }, Time::ZERO).unwrap()
    }

    #[test]
    fn policer_passes_the_depth_then_one_packet_per_refill() {
        // 1 kB/s, 2 kB deep: two 1000 B packets at t=0 pass, the third is
        // policed; after 1 s one more passes.
        let mut p = policer(PolicerAction::Drop);
        let mut rng = crate::rng::stream(1, 0);
        let mut verdicts = Vec::new();
        for t in [0, 0, 0, 999_999_999, 1_000_000_000] {
            let mut pkt = Packet::new(0, FlowId(0), 1000, Time(t));
            verdicts.push(p.on_arrival(Time(t), &mut pkt, &key(), &mut rng, &mut Discard));
        }
        use StageVerdict::*;
        assert_eq!(verdicts, vec![Pass, Pass, Drop(DropReason::Policed), Drop(DropReason::Policed), Pass]);
        assert_eq!(*p.stats(), PolicerStats { conformed: 3, exceeded: 2 });
    }

    #[test]
    fn policer_mark_action_sets_the_excess_mark_and_passes() {
        let mut p = policer(PolicerAction::Mark);
        let mut rng = crate::rng::stream(1, 0);
        let mut pkt = Packet::new(0, FlowId(0), 3000, Time(0));
        pkt.pcn = PcnMark::NotMarked;
        assert_eq!(
            p.on_arrival(Time(0), &mut pkt, &key(), &mut rng, &mut Discard),
            StageVerdict::Mark(MarkReason::PcnExcess)
        );
        assert_eq!(pkt.pcn, PcnMark::ExcessMarked, "larger than the depth: never conformant");
    }

    #[test]
    fn policer_mark_action_never_pcn_marks_a_non_pcn_packet() {
        // RFC 5670: only PCN-packets are marked; the same rule as the PCN
        // termination meter (`mark_excess`). The packet still exceeded.
        let mut p = policer(PolicerAction::Mark);
        let mut rng = crate::rng::stream(1, 0);
        let mut pkt = Packet::new(0, FlowId(0), 3000, Time(0));
        assert_eq!(pkt.pcn, PcnMark::NotPcn);
        assert_eq!(p.on_arrival(Time(0), &mut pkt, &key(), &mut rng, &mut Discard), StageVerdict::Pass);
        assert_eq!(pkt.pcn, PcnMark::NotPcn);
        assert_eq!(*p.stats(), PolicerStats { conformed: 0, exceeded: 1 });
        // A threshold-marked PCN packet is excess-marked (excess wins); an
        // excess-marked one passes as it is.
        let mut pkt = Packet::new(1, FlowId(0), 3000, Time(0));
        pkt.pcn = PcnMark::ThresholdMarked;
        assert_eq!(
            p.on_arrival(Time(0), &mut pkt, &key(), &mut rng, &mut Discard),
            StageVerdict::Mark(MarkReason::PcnExcess)
        );
        assert_eq!(pkt.pcn, PcnMark::ExcessMarked);
        assert_eq!(p.on_arrival(Time(0), &mut pkt, &key(), &mut rng, &mut Discard), StageVerdict::Pass);
    }

    #[test]
    fn policer_in_a_port_holds_the_output_to_rate_times_time_plus_depth() {
        let q = Queue::new(Box::new(Fifo::new(FifoConfig { limit: Limit::packets(100_000) }).unwrap()));
        let mut port = Port::new(q).with_stage(Box::new(policer(PolicerAction::Drop)));
        let mut rng = crate::rng::stream(1, 0);
        // 10 kB/s offered (100 B every 10 ms) for 10 s into 1 kB/s + 2 kB.
        let mut passed = 0u64;
        for i in 0..1000u64 {
            let t = Time(Dur::from_ms(10 * i).0);
            if port.enqueue(t, Packet::new(i, FlowId(0), 100, t), &key(), &mut rng, &mut Discard) == Verdict::Queued {
                passed += 100;
            }
            assert!(passed <= 2_000 + t.0 / 1_000_000, "at {t}: {passed} B passed");
        }
        assert_eq!(passed, 2_000 + 9_900, "depth + 9.99 s of tokens, whole packets");
        assert_eq!(port.stage_stats().drops_for(DropReason::Policed), 1000 - 119);
    }

    #[test]
    fn policer_config_errors_name_the_policer_and_the_field() {
        let e = Policer::new(PolicerConfig { rate: Rate(0), depth: Bytes(1), action: PolicerAction::Drop }, Time::ZERO)
            .unwrap_err();
        assert_eq!((e.mechanism, e.field), ("policer", "rate"));
    }
}
