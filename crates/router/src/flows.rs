//! The router's flow table: 5-tuples to dense [`FlowId`]s, bounded.
//!
//! At most `capacity` flows are known at once; a new flow arriving at a
//! full table evicts the least recently seen one (an LRU list, the edge
//! classifier's cache rule) and takes over its id, so ids stay below
//! `capacity` and memory stays fixed under a spoofed-address flood. An id
//! is therefore not a flow's identity: nothing that decides admission may
//! key by it. The core's per-flow tables key by the 5-tuple or expire by
//! time (MACE's classifier and recognition, and its admission control,
//! which MACE asks under ids of its own tied to the descriptor; the edge
//! classifier's cache; the CBT flow counter, swept every `flow_interval`),
//! so none passes an evicted flow's state to the newcomer that inherits its
//! id (tested: `hostile_tests.rs`, a flood that recycles an admitted flow's id).
//!
//! Memory: each flow costs about 115 bytes when the table is full (an LRU
//! node of 64 bytes with the allocator's overhead, and the hash index's
//! 17-byte buckets at up to 7/8 load, allocated for the whole capacity at
//! start): 7.5 MB at the default 65,536 flows, about 1.9 GB at the largest
//! allowed, 16,777,216 (measured: `flows_memory_per_flow`, below).

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
    /// The id of `key` if it is known (without refreshing it).
    pub fn get(&self, key: &FlowKey) -> Option<FlowId> {
        self.map.peek(key).copied()
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

    fn rss_kb() -> u64 {
        let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        s.lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    }

    /// The figure in the module doc: `cargo test --release -p qoslab-router flows_memory -- --ignored --nocapture`
    /// (alone: other tests' allocations would count).
    #[test]
    #[ignore]
    fn flows_memory_per_flow() {
        let n: u32 = 1 << 22;
        let before = rss_kb();
        let mut f = Flows::new(n);
        for i in 0..n {
            let a = IpAddr::V4(Ipv4Addr::from(i));
            f.intern(FlowKey { src: a, dst: a, src_port: 1, dst_port: 2, proto: 17 });
        }
        let per_flow = (rss_kb() - before) as f64 * 1024.0 / n as f64;
        println!("flows: {n} flows, {per_flow:.1} B per flow; at 16,777,216: {:.2} GB", per_flow * 16_777_216.0 / 1e9);
        assert!((60.0..200.0).contains(&per_flow), "{per_flow}");
    }
}
