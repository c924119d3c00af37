//! The classifier's exact-match flow cache ([Guerin99 §II]'s fast path):
//! flow → the rule database's answer, least-recently-used eviction.
//!
//! ```text
//! get(k):        k cached → hit: k becomes the most recent entry, its answer
//!                otherwise → miss
//! insert(k, a):  k cached → its answer is replaced, k becomes the most recent
//!                cache full → the least recent entry is evicted first
//! ```
//!
//! The layout is the fast path's, measured (docs/performance.md, "The edge
//! QoS fast path, third pass", issue 31):
//! - entries live in one `Vec` (a slot each, 64 bytes: the key, the
//!   answer and the list links as `u32` slot numbers); the hash table
//!   holds slot numbers only, so a lookup is one table probe and one slot
//!   (the `lru` crate used before boxed each entry and chased two pointers);
//! - the key is kept as the words it is hashed and compared by
//!   ([`PackedKey`]): a compare is three word compares, not a walk over the
//!   fields and the address enums;
//! - the hasher is hashbrown's default, `foldhash` with a random per-table
//!   seed (as before, through `lru`): the keys are chosen by whoever sends
//!   packets, so an unkeyed hash would let them pick colliding flows.
//!
//! Entries are never removed but by eviction, so the `Vec` only grows, to
//! at most the capacity; it is allocated as it fills, not up front.

use crate::error::ConfigError;
use crate::packet::FlowKey;
use hashbrown::hash_table::HashTable;
use hashbrown::DefaultHashBuilder;
use std::hash::BuildHasher;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::RuleAction;

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

/// A [`CacheKey`] as whole words: each address as 128 bits, the ports,
/// ingress, protocol and DSCP in one 64-bit word, and the two address
/// families in a byte (bit 0: source is IPv6, bit 1: destination is IPv6),
/// so that an IPv4 address and the IPv6 address with the same bits stay
/// different keys. Lossless: [`PackedKey::unpack`] gives the key back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PackedKey {
    src: u128,
    dst: u128,
    rest: u64,
    v6: u8,
}

impl PackedKey {
    #[inline]
    fn of(k: &CacheKey) -> PackedKey {
        PackedKey::new(&k.flow, k.ingress, k.dscp)
    }

    #[inline]
    fn new(f: &FlowKey, ingress: u16, dscp: u8) -> PackedKey {
        #[inline]
        fn bits(a: IpAddr) -> (u128, u8) {
            match a {
                IpAddr::V4(a) => (u32::from(a) as u128, 0),
                IpAddr::V6(a) => (u128::from(a), 1),
            }
        }
        let (src, src6) = bits(f.src);
        let (dst, dst6) = bits(f.dst);
        PackedKey {
            src,
            dst,
            rest: (f.src_port as u64) << 48
                | (f.dst_port as u64) << 32
                | (ingress as u64) << 16
                | (f.proto as u64) << 8
                | dscp as u64,
            v6: src6 | dst6 << 1,
        }
    }

    fn unpack(&self) -> CacheKey {
        let addr = |bits: u128, v6: bool| {
            if v6 {
                IpAddr::V6(Ipv6Addr::from(bits))
            } else {
                IpAddr::V4(Ipv4Addr::from(bits as u32))
            }
        };
        let r = self.rest;
        CacheKey {
            flow: FlowKey {
                src: addr(self.src, self.v6 & 1 != 0),
                dst: addr(self.dst, self.v6 & 2 != 0),
                src_port: (r >> 48) as u16,
                dst_port: (r >> 32) as u16,
                proto: (r >> 8) as u8,
            },
            ingress: (r >> 16) as u16,
            dscp: r as u8,
        }
    }
}

/// Three words for the hasher (the families are left out: equal keys
/// still give equal hashes, and an IPv4 key and an IPv6 key with the same
/// bits only share a hash, as before this type existed).
impl std::hash::Hash for PackedKey {
    #[inline]
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write_u128(self.src);
        h.write_u128(self.dst);
        h.write_u64(self.rest);
    }
}

/// No slot: the end of the recency list.
const NIL: u32 = u32::MAX;

/// One cached flow and its place in the recency list.
#[derive(Clone, Copy, Debug)]
struct Slot {
    key: PackedKey,
    value: Option<RuleAction>,
    /// The next more recent slot (`NIL` for the most recent).
    newer: u32,
    /// The next less recent slot (`NIL` for the least recent).
    older: u32,
}

/// The exact-match fast-path cache: flow → the rule database's answer
/// (an action, or `None` for "no rule matched", cached too).
pub struct FlowCache {
    /// Slot numbers, hashed by their slot's key.
    table: HashTable<u32>,
    hasher: DefaultHashBuilder,
    slots: Vec<Slot>,
    /// The most and the least recently used slot (`NIL` while empty).
    newest: u32,
    oldest: u32,
    capacity: usize,
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
        if capacity == 0 {
            return Err(ConfigError::new("classifier", "cache_capacity", "(0) must be at least 1 flow"));
        }
        if capacity >= NIL as usize {
            return Err(ConfigError::new(
                "classifier",
                "cache_capacity",
                format!("({capacity}) must be below {NIL} flows"),
            ));
        }
        Ok(FlowCache {
            table: HashTable::with_capacity(capacity),
            hasher: DefaultHashBuilder::default(),
            slots: Vec::new(),
            newest: NIL,
            oldest: NIL,
            capacity,
            eviction,
            hits: 0,
            misses: 0,
            evictions: 0,
        })
    }

    /// The slot holding `key`, if any.
    #[inline]
    fn find(&self, key: &PackedKey, hash: u64) -> Option<u32> {
        let slots = &self.slots;
        self.table.find(hash, |&i| slots[i as usize].key == *key).copied()
    }

    /// Takes slot `i` out of the recency list.
    #[inline]
    fn unlink(&mut self, i: u32) {
        let Slot { newer, older, .. } = self.slots[i as usize];
        match newer {
            NIL => self.newest = older,
            n => self.slots[n as usize].older = older,
        }
        match older {
            NIL => self.oldest = newer,
            o => self.slots[o as usize].newer = newer,
        }
    }

    /// Puts slot `i` (not in the list) at the most recent end.
    #[inline]
    fn push_newest(&mut self, i: u32) {
        let s = &mut self.slots[i as usize];
        s.newer = NIL;
        s.older = self.newest;
        match self.newest {
            NIL => self.oldest = i,
            n => self.slots[n as usize].newer = i,
        }
        self.newest = i;
    }

    /// Makes slot `i` the most recent (nothing to do if it already is).
    #[inline]
    fn touch(&mut self, i: u32) {
        if self.newest != i {
            self.unlink(i);
            self.push_newest(i);
        }
    }

    /// Looks `key` up, counting a hit or a miss; a hit becomes the most recent entry.
    #[inline]
    pub fn get(&mut self, key: &CacheKey) -> Option<Option<RuleAction>> {
        let k = PackedKey::of(key);
        let hash = self.hasher.hash_one(k);
        match self.find(&k, hash) {
            Some(i) => {
                self.hits += 1;
                self.touch(i);
                Some(self.slots[i as usize].value)
            }
            None => {
                self.misses += 1;
                None
            }
        }
    }

    /// The cached answer for the flow (a hit), or on a miss `lookup`'s,
    /// which is then inserted: [`FlowCache::get`] and then
    /// [`FlowCache::insert`] of the [`CacheKey`] `(flow, ingress, dscp)`,
    /// with the key packed and hashed once. The classifier's fast path.
    #[inline(always)]
    pub fn get_or_insert_with(
        &mut self,
        flow: &FlowKey,
        ingress: u16,
        dscp: u8,
        lookup: impl FnOnce() -> Option<RuleAction>,
    ) -> Option<RuleAction> {
        let k = PackedKey::new(flow, ingress, dscp);
        let hash = self.hasher.hash_one(k);
        match self.find(&k, hash) {
            Some(i) => {
                self.hits += 1;
                self.touch(i);
                self.slots[i as usize].value
            }
            None => self.miss(k, hash, lookup()),
        }
    }

    /// A miss of [`FlowCache::get_or_insert_with`]: counted, and `value`
    /// inserted. Kept out of line, so that the hit path stays short.
    #[cold]
    #[inline(never)]
    fn miss(&mut self, k: PackedKey, hash: u64, value: Option<RuleAction>) -> Option<RuleAction> {
        self.misses += 1;
        self.insert_new(k, hash, value);
        value
    }

    /// Inserts (or refreshes) `key`; a full cache first evicts by its rule.
    /// Returns the evicted key, if any.
    #[inline]
    pub fn insert(&mut self, key: CacheKey, value: Option<RuleAction>) -> Option<CacheKey> {
        let k = PackedKey::of(&key);
        let hash = self.hasher.hash_one(k);
        if let Some(i) = self.find(&k, hash) {
            self.slots[i as usize].value = value;
            self.touch(i);
            return None;
        }
        self.insert_new(k, hash, value).map(|old| old.unpack())
    }

    /// Inserts `k` (not cached) as the most recent entry; returns the key
    /// it evicted, if the cache was full.
    fn insert_new(&mut self, k: PackedKey, hash: u64, value: Option<RuleAction>) -> Option<PackedKey> {
        let Eviction::Lru = self.eviction;
        let mut evicted = None;
        let i = if self.slots.len() < self.capacity {
            self.slots.push(Slot { key: k, value, newer: NIL, older: NIL });
            (self.slots.len() - 1) as u32
        } else {
            // Full: the least recent slot takes the new key.
            let i = self.oldest;
            let old = self.slots[i as usize].key;
            let old_hash = self.hasher.hash_one(old);
            self.table.find_entry(old_hash, |&j| j == i).expect("every slot is in the table").remove();
            self.unlink(i);
            self.slots[i as usize] = Slot { key: k, value, newer: NIL, older: NIL };
            self.evictions += 1;
            evicted = Some(old);
            i
        };
        self.push_newest(i);
        let (slots, hasher) = (&self.slots, &self.hasher);
        self.table.insert_unique(hash, i, |&j| hasher.hash_one(slots[j as usize].key));
        evicted
    }

    /// Is `key` cached? Does not count or refresh.
    pub fn contains(&self, key: &CacheKey) -> bool {
        let k = PackedKey::of(key);
        self.find(&k, self.hasher.hash_one(k)).is_some()
    }
    pub fn len(&self) -> usize {
        self.slots.len()
    }
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
    pub fn capacity(&self) -> usize {
        self.capacity
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::proto;
    use proptest::prelude::*;
    use std::net::Ipv4Addr;

    fn act(stream: u16) -> RuleAction {
        RuleAction { stream, class: 0, set_dscp: None }
    }
    fn k(port: u16) -> CacheKey {
        let a = |x| IpAddr::V4(Ipv4Addr::new(x, x, x, x));
        let flow = FlowKey { src: a(1), dst: a(2), src_port: port, dst_port: 80, proto: proto::TCP };
        CacheKey { flow, ingress: 0, dscp: 0 }
    }

    #[test]
    fn flow_cache_evicts_the_least_recently_used_flow() {
        let mut c = FlowCache::new(2, Eviction::Lru).unwrap();
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
    fn flow_cache_insert_of_a_cached_key_replaces_its_answer_and_refreshes_it() {
        let mut c = FlowCache::new(2, Eviction::Lru).unwrap();
        c.insert(k(1), None);
        c.insert(k(2), None);
        assert_eq!(c.insert(k(1), Some(act(7))), None, "no eviction");
        assert_eq!(c.insert(k(3), None), Some(k(2)), "k1 was refreshed");
        assert_eq!(c.get(&k(1)), Some(Some(act(7))));
        assert_eq!(c.evictions(), 1);
    }

    #[test]
    fn flow_cache_capacity_beyond_its_slot_numbers_is_refused() {
        assert_eq!(FlowCache::new(0, Eviction::Lru).unwrap_err().field, "cache_capacity");
        assert_eq!(FlowCache::new(u32::MAX as usize, Eviction::Lru).unwrap_err().field, "cache_capacity");
    }

    #[test]
    fn packed_key_keeps_ipv4_and_ipv6_apart_and_unpacks_losslessly() {
        let v4 = k(1);
        let mut v6 = v4;
        v6.flow.src = IpAddr::V6(Ipv6Addr::from(u32::from(Ipv4Addr::new(1, 1, 1, 1)) as u128));
        assert_ne!(PackedKey::of(&v4), PackedKey::of(&v6));
        for key in [v4, v6, CacheKey { ingress: 0xbeef, dscp: 63, ..v6 }] {
            assert_eq!(PackedKey::of(&key).unpack(), key);
        }
        let mut c = FlowCache::new(4, Eviction::Lru).unwrap();
        c.insert(v4, Some(act(4)));
        assert_eq!(c.get(&v6), None);
        assert_eq!(c.get(&v4), Some(Some(act(4))));
    }

    /// The cache against a plain list kept in recency order (most recent
    /// last): same answers, same evictions, same counters.
    #[derive(Default)]
    struct Model {
        list: Vec<(CacheKey, Option<RuleAction>)>,
        hits: u64,
        misses: u64,
        evictions: u64,
    }

    impl Model {
        fn get(&mut self, key: &CacheKey) -> Option<Option<RuleAction>> {
            match self.list.iter().position(|(k, _)| k == key) {
                Some(p) => {
                    self.hits += 1;
                    let e = self.list.remove(p);
                    self.list.push(e);
                    Some(e.1)
                }
                None => {
                    self.misses += 1;
                    None
                }
            }
        }
        fn insert(&mut self, cap: usize, key: CacheKey, v: Option<RuleAction>) -> Option<CacheKey> {
            if let Some(p) = self.list.iter().position(|(k, _)| *k == key) {
                self.list.remove(p);
                self.list.push((key, v));
                return None;
            }
            let evicted = (self.list.len() == cap).then(|| {
                self.evictions += 1;
                self.list.remove(0).0
            });
            self.list.push((key, v));
            evicted
        }
    }

    proptest! {
        #[test]
        fn flow_cache_matches_a_recency_list(
            cap in 1usize..6,
            ops in prop::collection::vec((0u8..3, 0u16..10, prop::option::of(0u16..4)), 0..200),
        ) {
            let mut c = FlowCache::new(cap, Eviction::Lru).unwrap();
            let mut m = Model::default();
            for (op, port, stream) in ops {
                let key = k(port);
                let v = stream.map(act);
                match op {
                    0 => prop_assert_eq!(c.get(&key), m.get(&key)),
                    1 => prop_assert_eq!(c.insert(key, v), m.insert(cap, key, v)),
                    _ => {
                        let expect = match m.get(&key) {
                            Some(hit) => hit,
                            None => {
                                m.insert(cap, key, v);
                                v
                            }
                        };
                        prop_assert_eq!(c.get_or_insert_with(&key.flow, key.ingress, key.dscp, || v), expect);
                    }
                }
                prop_assert_eq!((c.hits(), c.misses(), c.evictions(), c.len()), (m.hits, m.misses, m.evictions, m.list.len()));
                for (key, _) in &m.list {
                    prop_assert!(c.contains(key));
                }
            }
        }
    }
}
