//! The edge classifier: a rule database searched on the slow path, an
//! exact-match flow cache on the fast path, and the port stage that gives
//! each packet its stream id, class and (optionally) a new DSCP.
//!
//! Source: seed `003_851ac3ee0c1b5dac.txt` §II (Fig. 3): "for every packet
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
//! The rule database (slow path) is the Lakshman–Stiliadis bit-vector
//! scheme (SIGCOMM 1998): rules are numbered in priority order; each field
//! maps a packet's value to the bitset of rules that field admits, found
//! by a longest-prefix match (addresses, [`prefix_trie::PrefixMap`]), a
//! binary search over elementary intervals (ports) or over exact values
//! (protocol, ingress, DSCP); the first bit set in the AND of the seven
//! bitsets is the winning rule. Memory is O(distinct values × rules) bits
//! per field, lookup O(log values + rules / 64) word operations.
//!
//! | parameter | unit | allowed | default |
//! |---|---|---|---|
//! | `rules[].priority` | | any u32; lower wins; equal only for rules no packet can match both | none |
//! | `rules[].src`, `dst` | IPv4/IPv6 prefix | any (host bits are ignored) | wildcard |
//! | `rules[].src_port`, `dst_port` | inclusive range | lo ≤ hi | wildcard |
//! | `rules[].proto`, `ingress`, `dscp` | exact | dscp ≤ 63 | wildcard |
//! | `rules[].action.set_dscp` | | ≤ 63 | none: keep |
//! | `cache_capacity` | flows | ≥ 1 | none: required |
//! | `default` | action | | none: drop unmatched (`Unclassified`) |
//!
//! Interpretations are in `docs/decisions-edgecore.md`, "Classifier".

use crate::error::ConfigError;
use crate::packet::{ClassTag, FlowKey, Packet};
use crate::pipeline::{EventSink, Stage, StageVerdict};
use crate::qdisc::{DropReason, ProbeSink};
use crate::rng::Rng;
use crate::units::Time;
use fixedbitset::FixedBitSet;
use ipnet::{IpNet, Ipv4Net, Ipv6Net};
use lru::LruCache;
use prefix_trie::PrefixMap;
use std::collections::HashMap;
use std::net::IpAddr;
use std::num::NonZeroUsize;

/// An inclusive port range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PortRange {
    pub lo: u16,
    pub hi: u16,
}

impl PortRange {
    pub const ANY: PortRange = PortRange { lo: 0, hi: u16::MAX };
    pub fn exact(port: u16) -> PortRange {
        PortRange { lo: port, hi: port }
    }
    #[inline]
    pub fn contains(&self, port: u16) -> bool {
        self.lo <= port && port <= self.hi
    }
}

/// What a matching rule does to a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RuleAction {
    pub stream: u16,
    pub class: u8,
    /// Re-mark the packet's DSCP (6 bits) when set.
    pub set_dscp: Option<u8>,
}

/// One rule of the database. `None` fields are wildcards.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// Lower value wins.
    pub priority: u32,
    pub src: Option<IpNet>,
    pub dst: Option<IpNet>,
    pub src_port: Option<PortRange>,
    pub dst_port: Option<PortRange>,
    pub proto: Option<u8>,
    pub ingress: Option<u16>,
    pub dscp: Option<u8>,
    pub action: RuleAction,
}

impl Rule {
    /// A rule matching everything, with `action`.
    pub fn any(priority: u32, action: RuleAction) -> Rule {
        Rule {
            priority,
            src: None,
            dst: None,
            src_port: None,
            dst_port: None,
            proto: None,
            ingress: None,
            dscp: None,
            action,
        }
    }

    /// Does this rule match? The definition the database implements (and
    /// the linear-scan reference of the tests).
    pub fn matches(&self, key: &FlowKey, ingress: u16, dscp: u8) -> bool {
        self.src.is_none_or(|p| p.contains(&key.src))
            && self.dst.is_none_or(|p| p.contains(&key.dst))
            && self.src_port.is_none_or(|r| r.contains(key.src_port))
            && self.dst_port.is_none_or(|r| r.contains(key.dst_port))
            && self.proto.is_none_or(|p| p == key.proto)
            && self.ingress.is_none_or(|i| i == ingress)
            && self.dscp.is_none_or(|d| d == dscp)
    }

    /// Can one packet match both rules?
    pub fn overlaps(&self, other: &Rule) -> bool {
        fn net(a: Option<IpNet>, b: Option<IpNet>) -> bool {
            match (a, b) {
                (Some(a), Some(b)) => a.contains(&b) || b.contains(&a),
                _ => true,
            }
        }
        fn range(a: Option<PortRange>, b: Option<PortRange>) -> bool {
            let (a, b) = (a.unwrap_or(PortRange::ANY), b.unwrap_or(PortRange::ANY));
            a.lo <= b.hi && b.lo <= a.hi
        }
        fn exact<T: PartialEq>(a: Option<T>, b: Option<T>) -> bool {
            match (a, b) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            }
        }
        net(self.src, other.src)
            && net(self.dst, other.dst)
            && range(self.src_port, other.src_port)
            && range(self.dst_port, other.dst_port)
            && exact(self.proto, other.proto)
            && exact(self.ingress, other.ingress)
            && exact(self.dscp, other.dscp)
    }

    fn validate(&self, i: usize) -> Result<(), ConfigError> {
        for (name, r) in [("src_port", self.src_port), ("dst_port", self.dst_port)] {
            if let Some(r) = r {
                if r.lo > r.hi {
                    return Err(ConfigError::new(
                        "classifier",
                        "rules",
                        format!("[{i}].{name}: lo {} is above hi {}; a range needs lo <= hi", r.lo, r.hi),
                    ));
                }
            }
        }
        for (name, d) in [("dscp", self.dscp), ("action.set_dscp", self.action.set_dscp)] {
            if let Some(d) = d {
                if d > 63 {
                    return Err(ConfigError::new(
                        "classifier",
                        "rules",
                        format!("[{i}].{name} ({d}) is not a DSCP; allowed 0..=63"),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Bits of one block of a [`FixedBitSet`].
const BLOCK_BITS: usize = usize::BITS as usize;

/// One address field: longest-prefix match on the rules' prefixes.
#[derive(Debug)]
struct PrefixField {
    v4: PrefixMap<Ipv4Net, u32>,
    v6: PrefixMap<Ipv6Net, u32>,
    /// `sets[i]`: the rules admitting every address under distinct prefix i.
    sets: Vec<FixedBitSet>,
    /// The rules with no prefix (they admit every address).
    wild: FixedBitSet,
}

impl PrefixField {
    fn build(n: usize, field: impl Fn(usize) -> Option<IpNet>) -> PrefixField {
        let mut wild = FixedBitSet::with_capacity(n);
        let mut groups: HashMap<IpNet, Vec<usize>> = HashMap::new();
        let mut distinct: Vec<IpNet> = Vec::new();
        for r in 0..n {
            match field(r) {
                None => wild.insert(r),
                Some(p) => {
                    let g = groups.entry(p).or_default();
                    if g.is_empty() {
                        distinct.push(p);
                    }
                    g.push(r);
                }
            }
        }
        let mut f = PrefixField { v4: PrefixMap::new(), v6: PrefixMap::new(), sets: Vec::new(), wild };
        for p in distinct {
            // Rules whose prefix contains p: those of p's ancestors (and p).
            let mut set = f.wild.clone();
            for len in 0..=p.prefix_len() {
                let a = IpNet::new(p.addr(), len).expect("a shorter length is valid").trunc();
                if let Some(g) = groups.get(&a) {
                    for &r in g {
                        set.insert(r);
                    }
                }
            }
            let id = f.sets.len() as u32;
            f.sets.push(set);
            match p {
                IpNet::V4(p4) => f.v4.insert(p4, id),
                IpNet::V6(p6) => f.v6.insert(p6, id),
            };
        }
        f
    }

    #[inline]
    fn lookup(&self, a: IpAddr) -> &FixedBitSet {
        let id = match a {
            IpAddr::V4(a) => self.v4.get_lpm(&Ipv4Net::from(a)).map(|(_, id)| *id),
            IpAddr::V6(a) => self.v6.get_lpm(&Ipv6Net::from(a)).map(|(_, id)| *id),
        };
        id.map_or(&self.wild, |i| &self.sets[i as usize])
    }
}

/// One port field: elementary intervals, binary search.
#[derive(Debug)]
struct RangeField {
    /// Sorted starts of the elementary intervals; `starts[0] == 0`.
    starts: Vec<u16>,
    sets: Vec<FixedBitSet>,
}

impl RangeField {
    fn build(n: usize, field: impl Fn(usize) -> Option<PortRange>) -> RangeField {
        let ranges: Vec<PortRange> = (0..n).map(|r| field(r).unwrap_or(PortRange::ANY)).collect();
        let mut starts = vec![0u16];
        for r in &ranges {
            starts.push(r.lo);
            if r.hi < u16::MAX {
                starts.push(r.hi + 1);
            }
        }
        starts.sort_unstable();
        starts.dedup();
        let mut sets = vec![FixedBitSet::with_capacity(n); starts.len()];
        for (r, range) in ranges.iter().enumerate() {
            // The intervals inside [lo, hi]: from the one starting at lo to
            // the last one starting at or before hi.
            let first = starts.partition_point(|s| *s < range.lo);
            let end = starts.partition_point(|s| *s <= range.hi);
            for set in &mut sets[first..end] {
                set.insert(r);
            }
        }
        RangeField { starts, sets }
    }

    #[inline]
    fn lookup(&self, port: u16) -> &FixedBitSet {
        &self.sets[self.starts.partition_point(|s| *s <= port) - 1]
    }
}

/// One exact-or-wildcard field.
#[derive(Debug)]
struct ExactField<T> {
    values: Vec<T>,
    sets: Vec<FixedBitSet>,
    wild: FixedBitSet,
}

impl<T: Ord + Copy> ExactField<T> {
    fn build(n: usize, field: impl Fn(usize) -> Option<T>) -> ExactField<T> {
        let mut wild = FixedBitSet::with_capacity(n);
        let mut values: Vec<T> = Vec::new();
        for r in 0..n {
            match field(r) {
                None => wild.insert(r),
                Some(v) => values.push(v),
            }
        }
        values.sort_unstable();
        values.dedup();
        let mut sets = vec![wild.clone(); values.len()];
        for r in 0..n {
            if let Some(v) = field(r) {
                sets[values.binary_search(&v).expect("collected above")].insert(r);
            }
        }
        ExactField { values, sets, wild }
    }

    #[inline]
    fn lookup(&self, v: T) -> &FixedBitSet {
        match self.values.binary_search(&v) {
            Ok(i) => &self.sets[i],
            Err(_) => &self.wild,
        }
    }
}

/// The rule database of the slow path.
#[derive(Debug)]
pub struct RuleDatabase {
    /// Rules in priority order (bit i of every bitset is `rules[i]`).
    rules: Vec<Rule>,
    src: PrefixField,
    dst: PrefixField,
    src_port: RangeField,
    dst_port: RangeField,
    proto: ExactField<u8>,
    ingress: ExactField<u16>,
    dscp: ExactField<u8>,
}

impl RuleDatabase {
    /// Checks the rules (ranges, DSCP values, no two overlapping rules of
    /// equal priority) and builds the per-field bitsets.
    pub fn new(rules: Vec<Rule>) -> Result<RuleDatabase, ConfigError> {
        for (i, r) in rules.iter().enumerate() {
            r.validate(i)?;
        }
        let mut rules: Vec<(usize, Rule)> = rules
            .into_iter()
            .map(|mut r| {
                r.src = r.src.map(|p| p.trunc());
                r.dst = r.dst.map(|p| p.trunc());
                r
            })
            .enumerate()
            .collect();
        // Stable: equal priorities keep their order (they cannot both match).
        rules.sort_by_key(|(_, r)| r.priority);
        let mut start = 0;
        while start < rules.len() {
            let end = start + rules[start..].partition_point(|(_, r)| r.priority == rules[start].1.priority);
            for a in start..end {
                for b in a + 1..end {
                    if rules[a].1.overlaps(&rules[b].1) {
                        let (i, j) = (rules[a].0.min(rules[b].0), rules[a].0.max(rules[b].0));
                        return Err(ConfigError::new(
                            "classifier",
                            "rules",
                            format!(
                                "rules {i} and {j} overlap and have the same priority {}; give them different priorities",
                                rules[a].1.priority
                            ),
                        ));
                    }
                }
            }
            start = end;
        }
        let rules: Vec<Rule> = rules.into_iter().map(|(_, r)| r).collect();
        let n = rules.len();
        Ok(RuleDatabase {
            src: PrefixField::build(n, |i| rules[i].src),
            dst: PrefixField::build(n, |i| rules[i].dst),
            src_port: RangeField::build(n, |i| rules[i].src_port),
            dst_port: RangeField::build(n, |i| rules[i].dst_port),
            proto: ExactField::build(n, |i| rules[i].proto),
            ingress: ExactField::build(n, |i| rules[i].ingress),
            dscp: ExactField::build(n, |i| rules[i].dscp),
            rules,
        })
    }

    /// The action of the highest-priority rule matching the packet.
    #[inline]
    pub fn lookup(&self, key: &FlowKey, ingress: u16, dscp: u8) -> Option<&RuleAction> {
        self.lookup_rule(key, ingress, dscp).map(|r| &r.action)
    }

    /// The highest-priority rule matching the packet.
    pub fn lookup_rule(&self, key: &FlowKey, ingress: u16, dscp: u8) -> Option<&Rule> {
        let sets = [
            self.src.lookup(key.src).as_slice(),
            self.dst.lookup(key.dst).as_slice(),
            self.src_port.lookup(key.src_port).as_slice(),
            self.dst_port.lookup(key.dst_port).as_slice(),
            self.proto.lookup(key.proto).as_slice(),
            self.ingress.lookup(ingress).as_slice(),
            self.dscp.lookup(dscp).as_slice(),
        ];
        let words = sets[0].len();
        for w in 0..words {
            let x = sets.iter().fold(usize::MAX, |acc, s| acc & s[w]);
            if x != 0 {
                return Some(&self.rules[w * BLOCK_BITS + x.trailing_zeros() as usize]);
            }
        }
        None
    }

    /// The rules in priority order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }
    pub fn len(&self) -> usize {
        self.rules.len()
    }
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }
}

/// The flow cache's eviction rule.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Eviction {
    /// A full cache evicts the entry least recently looked up or inserted.
    #[default]
    Lru,
}

/// What the fast path matches exactly: the flow's 5-tuple, the ingress
/// interface and the DSCP it arrived with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CacheKey {
    pub flow: FlowKey,
    pub ingress: u16,
    pub dscp: u8,
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
    use super::*;
    use crate::packet::{proto, FlowId};
    use crate::pipeline::Discard;
    use std::net::Ipv4Addr;

    fn key(src: [u8; 4], sport: u16, dst: [u8; 4], dport: u16, p: u8) -> FlowKey {
        FlowKey {
            src: IpAddr::V4(Ipv4Addr::from(src)),
            dst: IpAddr::V4(Ipv4Addr::from(dst)),
            src_port: sport,
            dst_port: dport,
            proto: p,
        }
    }
    fn act(stream: u16) -> RuleAction {
        RuleAction { stream, class: (stream % 2) as u8, set_dscp: None }
    }
    fn net(s: &str) -> Option<IpNet> {
        Some(s.parse().unwrap())
    }

    fn rules() -> Vec<Rule> {
        vec![
            // EF: voice from 10.1/16 to UDP 5000-5010, re-marked EF (46).
            Rule {
                src: net("10.1.0.0/16"),
                dst_port: Some(PortRange { lo: 5000, hi: 5010 }),
                proto: Some(proto::UDP),
                action: RuleAction { stream: 1, class: 0, set_dscp: Some(46) },
                ..Rule::any(10, act(0))
            },
            // AF: anything from 10/8 on ingress 2.
            Rule { src: net("10.0.0.0/8"), ingress: Some(2), ..Rule::any(20, act(2)) },
            // AF: to 192.168.7/24, TCP.
            Rule { dst: net("192.168.7.0/24"), proto: Some(proto::TCP), ..Rule::any(30, act(3)) },
            // Catch-all BE for DSCP 0 traffic.
            Rule { dscp: Some(0), ..Rule::any(100, act(9)) },
        ]
    }

    #[test]
    fn rule_database_picks_the_highest_priority_match() {
        let db = RuleDatabase::new(rules()).unwrap();
        let l = |k: FlowKey, ing: u16, d: u8| db.lookup(&k, ing, d).map(|a| a.stream);
        assert_eq!(l(key([10, 1, 2, 3], 40000, [1, 1, 1, 1], 5005, proto::UDP), 2, 0), Some(1));
        assert_eq!(l(key([10, 1, 2, 3], 40000, [1, 1, 1, 1], 5011, proto::UDP), 2, 0), Some(2));
        assert_eq!(l(key([10, 1, 2, 3], 40000, [1, 1, 1, 1], 5011, proto::UDP), 1, 0), Some(9));
        assert_eq!(l(key([11, 1, 2, 3], 1, [192, 168, 7, 200], 80, proto::TCP), 1, 12), Some(3));
        assert_eq!(l(key([11, 1, 2, 3], 1, [192, 168, 8, 200], 80, proto::TCP), 1, 12), None);
        assert_eq!(db.len(), 4);
    }

    #[test]
    fn overlapping_rules_of_equal_priority_are_refused() {
        let mut r = rules();
        // Same priority as rule 1 (20), and 10.0.0.0/8 ∩ 10.2.0.0/16 on any port.
        r.push(Rule { src: net("10.2.0.0/16"), ..Rule::any(20, act(5)) });
        let e = RuleDatabase::new(r).unwrap_err();
        assert_eq!((e.mechanism, e.field), ("classifier", "rules"));
        assert_eq!(e.message, "rules 1 and 4 overlap and have the same priority 20; give them different priorities");
        // Disjoint rules may share a priority: 11/8 never meets 10/8.
        let mut r = rules();
        r.push(Rule { src: net("11.0.0.0/8"), ..Rule::any(20, act(5)) });
        assert!(RuleDatabase::new(r).is_ok());
        // Nor 10/8 on ingress 2 and 10/8 on ingress 3.
        let mut r = rules();
        r.push(Rule { src: net("10.9.0.0/16"), ingress: Some(3), ..Rule::any(20, act(5)) });
        assert!(RuleDatabase::new(r).is_ok());
    }

    #[test]
    fn bad_ranges_and_dscp_values_are_refused() {
        let r = vec![Rule { src_port: Some(PortRange { lo: 90, hi: 80 }), ..Rule::any(1, act(1)) }];
        let e = RuleDatabase::new(r).unwrap_err();
        assert_eq!(e.to_string(), "classifier.rules [0].src_port: lo 90 is above hi 80; a range needs lo <= hi");
        let r = vec![Rule::any(1, RuleAction { stream: 1, class: 0, set_dscp: Some(64) })];
        assert!(RuleDatabase::new(r).unwrap_err().message.contains("set_dscp (64)"));
        let e =
            ClassifierStage::new(ClassifierConfig { rules: rules(), cache_capacity: 0, default: None }).unwrap_err();
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
        let cfg = ClassifierConfig { rules: rules(), cache_capacity: 16, default: None };
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

    #[test]
    fn ipv6_prefixes_match_only_ipv6_addresses() {
        let r = vec![
            Rule { src: net("2001:db8::/32"), ..Rule::any(1, act(1)) },
            Rule { src: net("0.0.0.0/0"), ..Rule::any(2, act(2)) },
        ];
        let db = RuleDatabase::new(r).unwrap();
        let mut k = key([1, 2, 3, 4], 1, [5, 6, 7, 8], 2, proto::TCP);
        assert_eq!(db.lookup(&k, 0, 0).map(|a| a.stream), Some(2));
        k.src = "2001:db8::1".parse().unwrap();
        assert_eq!(db.lookup(&k, 0, 0).map(|a| a.stream), Some(1));
        k.src = "2001:db9::1".parse().unwrap();
        assert_eq!(db.lookup(&k, 0, 0).map(|a| a.stream), None, "0.0.0.0/0 is IPv4 only");
    }
}
