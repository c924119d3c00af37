//! The router's flow table: 5-tuples to dense [`FlowId`]s, bounded.
//!
//! At most `capacity` flows are known at once; a new flow arriving at a
//! full table evicts the least recently seen one (an LRU list, the edge
//! classifier's cache rule) and takes over its id, so ids stay below
//! `capacity` and memory stays fixed under a spoofed-address flood. A
//! mechanism that keys state by flow id may then see an evicted flow's
//! state passed to the newcomer: the core's per-flow tables (MACE's
//! classifier and recognition, the CBT flow counter, the edge classifier's
//! cache) key by the 5-tuple or expire by time, so none relies on it.

use lru::LruCache;
use qoslab_core::packet::{FlowId, FlowKey};
use std::num::NonZeroUsize;

#[derive(Debug)]
pub struct Flows {
    map: LruCache<FlowKey, FlowId>,
    next: u32,
    pub evictions: u64,
}

impl Flows {
    /// A table of at most `capacity` (≥ 1) flows.
    pub fn new(capacity: u32) -> Flows {
        let cap = NonZeroUsize::new(capacity.max(1) as usize).expect("at least 1");
        Flows { map: LruCache::new(cap), next: 0, evictions: 0 }
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
    /// The id of `key`, interning it (and evicting the least recent flow if full).
    #[inline]
    pub fn intern(&mut self, key: FlowKey) -> FlowId {
        if let Some(id) = self.map.get(&key) {
            return *id;
        }
        let id = if self.map.len() < self.capacity() {
            let id = FlowId(self.next);
            self.next += 1;
            id
        } else {
            self.evictions += 1;
            self.map.pop_lru().map(|(_, id)| id).expect("a full table has a least recent entry")
        };
        self.map.put(key, id);
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{IpAddr, Ipv4Addr};

    fn key(p: u16) -> FlowKey {
        let a = IpAddr::V4(Ipv4Addr::LOCALHOST);
        FlowKey { src: a, dst: a, src_port: p, dst_port: 1, proto: 17 }
    }

    #[test]
    fn flows_full_table_evicts_least_recent_and_reuses_its_id() {
        let mut f = Flows::new(2);
        assert_eq!(f.intern(key(1)), FlowId(0));
        assert_eq!(f.intern(key(2)), FlowId(1));
        assert_eq!(f.intern(key(1)), FlowId(0)); // 1 is now the most recent
        assert_eq!(f.intern(key(3)), FlowId(1), "2 evicted, its id reused");
        assert_eq!((f.len(), f.evictions), (2, 1));
        for p in 10..10_000 {
            assert!(f.intern(key(p)).0 < 2);
        }
        assert_eq!(f.len(), 2);
    }
}
