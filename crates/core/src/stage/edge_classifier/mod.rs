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
//! The rule database (slow path) is in [`super::rules`]: per-field
//! bitsets (Lakshman–Stiliadis), not a linear scan.
//!
//! | parameter | unit | allowed | default |
//! |---|---|---|---|
//! | `rules` | see [`super::rules`] | no two overlapping rules of one priority | none |
//! | `cache_capacity` | flows | ≥ 1 | none: required |
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
use lru::LruCache;
use std::num::NonZeroUsize;

pub mod rules;

pub use rules::{PortRange, Rule, RuleAction, RuleDatabase};

/// The flow cache's eviction rule.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Eviction {
    /// A full cache evicts the entry least recently looked up or inserted.
    #[default]
    Lru,
}

/// What the fast path matches exactly: the flow's 5-tuple, the ingress
/// interface and the DSCP it arrived with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheKey {
    pub flow: FlowKey,
    pub ingress: u16,
    pub dscp: u8,
}

/// Three words for the hasher instead of the derived field-by-field walk
/// (enum tags, length-prefixed octet slices: a dozen writes), which was
/// 10 % of the slow path's time (perf, docs/performance.md). Equal keys
/// give equal words; an IPv4 address and the IPv6 address with the same
/// low 32 bits only share a hash (`Eq` still tells them apart).
impl std::hash::Hash for CacheKey {
    #[inline]
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        fn bits(a: std::net::IpAddr) -> u128 {
            match a {
                std::net::IpAddr::V4(a) => u32::from(a) as u128,
                std::net::IpAddr::V6(a) => u128::from(a),
            }
        }
        let f = &self.flow;
        h.write_u128(bits(f.src));
        h.write_u128(bits(f.dst));
        h.write_u64(
            (f.src_port as u64) << 48
                | (f.dst_port as u64) << 32
                | (self.ingress as u64) << 16
                | (f.proto as u64) << 8
                | self.dscp as u64,
        );
    }
}

/// The exact-match fast-path cache: flow → the rule database's answer
/// (an action, or `None` for "no rule matched", cached too).
pub struct FlowCache {
    map: LruCache<CacheKey, Option<RuleAction>>,
    eviction: Eviction,
    hits: u64,
    misses: u64,
    evictions: u64,
}

impl std::fmt::Debug for FlowCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlowCache")
            .field("capacity", &self.capacity())
            .field("entries", &self.len())
            .field("eviction", &self.eviction)
            .field("hits", &self.hits)
            .field("misses", &self.misses)
            .field("evictions", &self.evictions)
            .finish()
    }
}

impl FlowCache {
    pub fn new(capacity: usize, eviction: Eviction) -> Result<FlowCache, ConfigError> {
        let cap = NonZeroUsize::new(capacity)
            .ok_or_else(|| ConfigError::new("classifier", "cache_capacity", "(0) must be at least 1 flow"))?;
        Ok(FlowCache { map: LruCache::new(cap), eviction, hits: 0, misses: 0, evictions: 0 })
    }
    /// Looks `key` up, counting a hit or a miss; a hit becomes the most recent entry.
    #[inline]
    pub fn get(&mut self, key: &CacheKey) -> Option<Option<RuleAction>> {
        match self.map.get(key) {
            Some(v) => {
                self.hits += 1;
                Some(*v)
            }
            None => {
                self.misses += 1;
                None
            }
        }
    }
    /// Inserts (or refreshes) `key`; a full cache first evicts by its rule.
    /// Returns the evicted key, if any.
    #[inline]
    pub fn insert(&mut self, key: CacheKey, value: Option<RuleAction>) -> Option<CacheKey> {
        match self.eviction {
            Eviction::Lru => match self.map.push(key, value) {
                Some((old, _)) if old != key => {
                    self.evictions += 1;
                    Some(old)
                }
                _ => None,
            },
        }
    }
    /// Is `key` cached? Does not count or refresh.
    pub fn contains(&self, key: &CacheKey) -> bool {
        self.map.contains(key)
    }
    pub fn len(&self) -> usize {
        self.map.len()
    }
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
    pub fn capacity(&self) -> usize {
        self.map.cap().get()
    }
    pub fn hits(&self) -> u64 {
        self.hits
    }
    pub fn misses(&self) -> u64 {
        self.misses
    }
    pub fn evictions(&self) -> u64 {
        self.evictions
    }
}

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
        let ck = CacheKey { flow: *key, ingress, dscp };
        let found = match self.cache.get(&ck) {
            Some(v) => v,
            None => {
                let v = self.db.lookup(key, ingress, dscp).copied();
                self.cache.insert(ck, v);
                v
            }
        };
        found.or(self.default)
    }
}

impl Stage for ClassifierStage {
    fn kind(&self) -> &'static str {
        "classifier"
    }
    #[inline]
    fn on_arrival(
        &mut self,
        _now: Time,
        pkt: &mut Packet,
        key: &FlowKey,
        _rng: &mut Rng,
        _events: &mut dyn EventSink,
    ) -> StageVerdict {
        match self.classify(key, pkt.ingress, pkt.dscp) {
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
    fn flow_cache_evicts_the_least_recently_used_flow() {
        let mut c = FlowCache::new(2, Eviction::Lru).unwrap();
        let k = |p: u16| CacheKey { flow: key([1, 1, 1, 1], p, [2, 2, 2, 2], 80, proto::TCP), ingress: 0, dscp: 0 };
        assert_eq!(c.insert(k(1), Some(act(1))), None);
        assert_eq!(c.insert(k(2), None), None);
        assert_eq!(c.get(&k(1)), Some(Some(act(1))), "k1 is now the most recent");
        assert_eq!(c.insert(k(3), Some(act(3))), Some(k(2)), "k2 was the least recent");
        assert!(c.contains(&k(1)) && c.contains(&k(3)) && !c.contains(&k(2)));
        assert_eq!(c.get(&k(2)), None);
        assert_eq!(c.insert(k(4), None), Some(k(1)));
        assert_eq!((c.hits(), c.misses(), c.evictions(), c.len()), (1, 1, 2, 2));
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
