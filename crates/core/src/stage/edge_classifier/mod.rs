//! The edge classifier: a rule database searched on the slow path, an
//! exact-match flow cache on the fast path, and the port stage that gives
//! each packet its stream id, class and (optionally) a new DSCP.
//!
//! Source: [Guerin99 §II] (Fig. 3): "for every packet
//! sent on the slow path, a full lookup is performed into a complete rule
//! database and used to create an entry specific to this packet (flow) in
//! the fast path cache. Entries in the fast path are accessed based on an
//! exact match on packet attributes". A stream is the unit of resource
//! allocation; many flows may map to one stream.
//!
//! ```text
//! on_arrival(pkt, key):  c = (key, pkt.ingress, pkt.dscp)
//!     cache hit  → the cached answer (an action, or "no rule")
//!     cache miss → the rule database's answer, inserted into the cache (LRU eviction)
//!     answer (or the default action): pkt.stream, pkt.class, pkt.dscp if set_dscp → Pass
//!     none and no default                                                    → Drop(Unclassified)
//! ```
//!
//! The flow cache (fast path) is in [`cache`]; the rule database (slow path) is in [`rules`]: per-field
//! bitsets (Lakshman–Stiliadis), not a linear scan.
//!
//! | parameter | unit | allowed | default |
//! |---|---|---|---|
//! | `rules` | see [`super::rules`] | no two overlapping rules of one priority | none |
//! | `cache_capacity` | flows | 1 ..= 2^32 − 2 | none: required |
//! | `default` | action | | none: drop unmatched (`Unclassified`) |
//!
//! Interpretations are in `docs/decisions.md`, "Edge QoS: Classifier".

use crate::error::ConfigError;
use crate::packet::{ClassTag, FlowKey, Packet};
use crate::pipeline::EventSink;
use crate::qdisc::{DropReason, ProbeSink};
use crate::rng::Rng;
use crate::stage::{Stage, StageVerdict};
use crate::units::Time;

pub mod cache;
pub mod rules;

pub use cache::{CacheKey, Eviction, FlowCache};
pub use rules::{PortRange, Rule, RuleAction, RuleDatabase};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassifierConfig {
    pub rules: Vec<Rule>,
    /// Flows the fast-path cache holds (≥ 1).
    pub cache_capacity: usize,
    /// The action for packets no rule matches; `None` drops them.
    pub default: Option<RuleAction>,
}

/// The classifier as a port stage (kind `"classifier"`).
#[derive(Debug)]
pub struct ClassifierStage {
    db: RuleDatabase,
    cache: FlowCache,
    default: Option<RuleAction>,
}

impl ClassifierStage {
    pub fn new(cfg: ClassifierConfig) -> Result<ClassifierStage, ConfigError> {
        if let Some(d) = cfg.default.and_then(|d| d.set_dscp).filter(|d| *d > 63) {
            return Err(ConfigError::new(
                "classifier",
                "default",
                format!("set_dscp ({d}) is not a DSCP; allowed 0..=63"),
            ));
        }
        let cache = FlowCache::new(cfg.cache_capacity, Eviction::Lru)?;
        let db = RuleDatabase::new(cfg.rules)?;
        Ok(ClassifierStage { db, cache, default: cfg.default })
    }
    /// Cache hits so far.
    pub fn hits(&self) -> u64 {
        self.cache.hits()
    }
    /// Cache misses (slow-path lookups) so far.
    pub fn misses(&self) -> u64 {
        self.cache.misses()
    }
    pub fn cache(&self) -> &FlowCache {
        &self.cache
    }
    pub fn database(&self) -> &RuleDatabase {
        &self.db
    }
    /// The action for a packet: the cache, or on a miss the rule database
    /// (whose answer is then cached); the default if no rule matches.
    #[inline]
    pub fn classify(&mut self, key: &FlowKey, ingress: u16, dscp: u8) -> Option<RuleAction> {
        let db = &self.db;
        self.cache.get_or_insert_with(key, ingress, dscp, || db.lookup(key, ingress, dscp).copied()).or(self.default)
    }
    /// [`ClassifierStage::classify`] out of line, for `on_arrival`: the
    /// lookup stays one call while the three stores into the packet are
    /// inlined into the caller (see `on_arrival`).
    #[inline(never)]
    fn action(&mut self, key: &FlowKey, ingress: u16, dscp: u8) -> Option<RuleAction> {
        self.classify(key, ingress, dscp)
    }
}

impl Stage for ClassifierStage {
    fn kind(&self) -> &'static str {
        "classifier"
    }
    // `inline(always)`, the lookup out of line (`action`): a caller that
    // holds the stage as itself keeps the packet in registers, and its next
    // step (the queue's `enqueue`, which copies the packet) does not reload
    // 16 bytes just written by this function's narrow stores (a failed
    // store-to-load forwarding: docs/performance.md, "The edge QoS fast
    // path, fourth pass").
    #[inline(always)]
    fn on_arrival(
        &mut self,
        _now: Time,
        pkt: &mut Packet,
        key: &FlowKey,
        _rng: &mut Rng,
        _events: &mut dyn EventSink,
    ) -> StageVerdict {
        match self.action(key, pkt.ingress, pkt.dscp) {
            Some(a) => {
                pkt.stream = a.stream;
                pkt.class = ClassTag(a.class);
                if let Some(d) = a.set_dscp {
                    pkt.dscp = d;
                }
                StageVerdict::Pass
            }
            None => StageVerdict::Drop(DropReason::Unclassified),
        }
    }
    fn probe(&self, sink: ProbeSink<'_>) {
        sink("cache_hits", self.cache.hits() as f64);
        sink("cache_misses", self.cache.misses() as f64);
        sink("cache_entries", self.cache.len() as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::rules::fixtures::*;
    use super::*;
    use crate::packet::{proto, FlowId};
    use crate::pipeline::Discard;

    #[test]
    fn cache_capacity_zero_is_refused() {
        let e = ClassifierStage::new(ClassifierConfig { rules: example_rules(), cache_capacity: 0, default: None })
            .unwrap_err();
        assert_eq!((e.mechanism, e.field), ("classifier", "cache_capacity"));
    }

    #[test]
    fn classifier_stage_sets_stream_class_dscp_and_counts_hits() {
        let cfg = ClassifierConfig { rules: example_rules(), cache_capacity: 16, default: None };
        let mut s = ClassifierStage::new(cfg).unwrap();
        let mut rng = crate::rng::stream(1, 0);
        let voice = key([10, 1, 2, 3], 40000, [1, 1, 1, 1], 5005, proto::UDP);
        for i in 0..3 {
            let mut p = Packet::new(i, FlowId(0), 200, Time(0));
            p.dscp = 0;
            assert_eq!(s.on_arrival(Time(0), &mut p, &voice, &mut rng, &mut Discard), StageVerdict::Pass);
            assert_eq!((p.stream, p.class, p.dscp), (1, ClassTag(0), 46));
        }
        assert_eq!((s.hits(), s.misses()), (2, 1));
        // No rule (DSCP 12, no catch-all for it) and no default: dropped; the
        // "no rule" answer is cached too.
        let other = key([11, 0, 0, 1], 1, [8, 8, 8, 8], 53, proto::UDP);
        for _ in 0..2 {
            let mut p = Packet::new(9, FlowId(1), 100, Time(0));
            p.dscp = 12;
            assert_eq!(
                s.on_arrival(Time(0), &mut p, &other, &mut rng, &mut Discard),
                StageVerdict::Drop(DropReason::Unclassified)
            );
        }
        assert_eq!((s.hits(), s.misses(), s.cache().len()), (3, 2, 2));
        let mut probed = Vec::new();
        s.probe(&mut |n, v| probed.push((n, v)));
        assert_eq!(probed, vec![("cache_hits", 3.0), ("cache_misses", 2.0), ("cache_entries", 2.0)]);
    }

    #[test]
    fn classifier_default_action_catches_unmatched_packets() {
        let default = Some(RuleAction { stream: 7, class: 1, set_dscp: Some(0) });
        let mut s = ClassifierStage::new(ClassifierConfig { rules: vec![], cache_capacity: 1, default }).unwrap();
        let k = key([1, 2, 3, 4], 1, [5, 6, 7, 8], 2, proto::TCP);
        assert_eq!(s.classify(&k, 0, 10), default);
    }
}
