//! The bounded exact-match flow table shared by the MACE classifier and
//! the flow-recognition unit ([MACE98 §3]: "a single hash table for flow
//! descriptor lookups"; the recognition table "is similar to the classifier
//! flow table, with an additional packet counter field").
//!
//! Entries live in a slab (`Vec` of slots with a free list) addressed
//! through a hash index, so a lookup is one hash probe and per-entry state
//! costs no allocation. The index is never iterated: the stale sweep walks
//! the slab and orders its output by `(last_seen, descriptor)`, so results
//! never depend on hash order.
//!
//! Eviction ("least recently seen, ties to the smaller descriptor") reads a
//! lazy min-heap of `(last_seen, descriptor, slot, generation)` records,
//! one per entry, pushed on insertion. A touch does not update the heap, so
//! a record's time is never later than its entry's `last_seen`. The
//! search pops the top record: gone (its slot's generation moved on) →
//! dropped; older than its entry → pushed again with the entry's time;
//! equal → that entry is the answer, since every other entry's time is at
//! least its own record's, which is not below the top's (ties ordered by
//! descriptor the same way). Each touch costs at most one later re-push,
//! so the search is O(log n) amortised, and a touch stays O(1). Records
//! of removed entries are dropped as they surface, and the heap is rebuilt
//! from the slab when it holds more than twice the entries (O(1)
//! amortised per insertion), so its size stays bounded.
//!
//! Staleness: an entry whose last packet is `timeout` or more in the past
//! (`now - last_seen >= timeout`) is stale. The table keeps a lower bound
//! on the earliest expiry (`min(last_seen) + timeout`): inserting can only
//! lower it, touching and removing only raise the true minimum, so the
//! bound stays valid without per-packet work, and [`FlowSlab::sweep`]
//! recomputes it exactly. A driver that sweeps at `next_expiry()` removes
//! every entry at the exact instant it becomes stale; a wake-up where the
//! earliest entry was touched in between finds nothing stale and moves the
//! bound to the new exact minimum. Live flows that send more often than
//! every `timeout` therefore cost about one O(n) sweep per `timeout`.

use crate::units::{Dur, Time};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::fmt;

pub use crate::packet::FlowDescriptor;

/// An insertion refused because the table holds `capacity` entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableFull {
    pub capacity: usize,
}

impl fmt::Display for TableFull {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "flow table full ({} entries)", self.capacity)
    }
}
impl std::error::Error for TableFull {}

/// One entry: the descriptor, when it last saw a packet, and the owner's data.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Entry<V> {
    pub key: FlowDescriptor,
    pub last_seen: Time,
    pub value: V,
}

/// A recency record: `(last_seen when recorded, key, slot, the slot's
/// generation then)`, in a min-heap.
type Mark = Reverse<(Time, FlowDescriptor, u32, u32)>;

/// A capacity-bounded exact-match table with stale expiry.
#[derive(Clone, Debug)]
pub(crate) struct FlowSlab<V> {
    index: HashMap<FlowDescriptor, u32>,
    slots: Vec<Option<Entry<V>>>,
    /// Each slot's generation: bumped whenever an entry is put in it.
    gens: Vec<u32>,
    /// The recency heap (see the module's doc): at least one record per entry.
    recency: BinaryHeap<Mark>,
    free: Vec<u32>,
    capacity: usize,
    timeout: Dur,
    /// A lower bound on the earliest `last_seen + timeout`; `None` when empty.
    expiry_bound: Option<Time>,
}

impl<V> FlowSlab<V> {
    /// `capacity >= 1` and `timeout > 0` are the owner's to validate.
    pub fn new(capacity: usize, timeout: Dur) -> FlowSlab<V> {
        debug_assert!(capacity >= 1 && timeout.0 > 0);
        let hint = capacity.min(1024);
        FlowSlab {
            index: HashMap::with_capacity(hint),
            slots: Vec::with_capacity(hint),
            gens: Vec::with_capacity(hint),
            recency: BinaryHeap::with_capacity(hint),
            free: Vec::new(),
            capacity,
            timeout,
            expiry_bound: None,
        }
    }
    pub fn len(&self) -> usize {
        self.index.len()
    }
    pub fn capacity(&self) -> usize {
        self.capacity
    }
    pub fn is_full(&self) -> bool {
        self.len() >= self.capacity
    }
    pub fn get(&self, key: &FlowDescriptor) -> Option<&Entry<V>> {
        let i = *self.index.get(key)?;
        self.slots[i as usize].as_ref()
    }
    /// The owner's data of `key` (its `last_seen` moves only by `touch`
    /// and `insert`, which the recency heap relies on).
    pub fn value_mut(&mut self, key: &FlowDescriptor) -> Option<&mut V> {
        self.entry_mut(key).map(|e| &mut e.value)
    }
    fn entry_mut(&mut self, key: &FlowDescriptor) -> Option<&mut Entry<V>> {
        let i = *self.index.get(key)?;
        self.slots[i as usize].as_mut()
    }
    /// Marks `key` as seen at `now`; false if absent. Never moves `last_seen` back.
    pub fn touch(&mut self, now: Time, key: &FlowDescriptor) -> bool {
        match self.entry_mut(key) {
            Some(e) => {
                e.last_seen = e.last_seen.max(now);
                true
            }
            None => false,
        }
    }
    /// Adds (or replaces) `key`, seen at `now`. Refused when a new key
    /// would take the table past its capacity.
    pub fn insert(&mut self, now: Time, key: FlowDescriptor, value: V) -> Result<(), TableFull> {
        if let Some(e) = self.entry_mut(&key) {
            e.last_seen = e.last_seen.max(now);
            e.value = value;
            return Ok(());
        }
        if self.is_full() {
            return Err(TableFull { capacity: self.capacity });
        }
        let entry = Entry { key, last_seen: now, value };
        let i = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(entry);
                self.gens[i as usize] = self.gens[i as usize].wrapping_add(1);
                i
            }
            None => {
                self.slots.push(Some(entry));
                self.gens.push(0);
                (self.slots.len() - 1) as u32
            }
        };
        self.index.insert(key, i);
        if self.recency.len() >= 2 * self.index.len() + 16 {
            self.rebuild_recency();
        }
        self.recency.push(Reverse((now, key, i, self.gens[i as usize])));
        let exp = now + self.timeout;
        self.expiry_bound = Some(self.expiry_bound.map_or(exp, |b| b.min(exp)));
        Ok(())
    }
    pub fn remove(&mut self, key: &FlowDescriptor) -> Option<Entry<V>> {
        let i = self.index.remove(key)?;
        self.free.push(i);
        let e = self.slots[i as usize].take();
        if self.index.is_empty() {
            self.expiry_bound = None;
        }
        e
    }
    /// Removes every entry silent for `timeout` or more at `now`, ordered by
    /// `(last_seen, key)`, and makes the expiry bound exact.
    pub fn sweep(&mut self, now: Time) -> Vec<Entry<V>> {
        let mut gone = Vec::new();
        let mut earliest: Option<Time> = None;
        for (i, slot) in self.slots.iter_mut().enumerate() {
            let Some(e) = slot else { continue };
            if now.since(e.last_seen) >= self.timeout {
                let e = slot.take().expect("slot checked above");
                self.index.remove(&e.key);
                self.free.push(i as u32);
                gone.push(e);
            } else {
                let exp = e.last_seen + self.timeout;
                earliest = Some(earliest.map_or(exp, |t| t.min(exp)));
            }
        }
        self.expiry_bound = earliest;
        gone.sort_by_key(|e| (e.last_seen, e.key));
        gone
    }
    /// When the next entry may become stale (a lower bound, exact after a sweep).
    pub fn next_expiry(&self) -> Option<Time> {
        self.expiry_bound
    }
    /// The least recently seen entry (ties: the smaller descriptor), in
    /// O(log n) amortised (see the module's doc).
    pub fn least_recent(&mut self) -> Option<&Entry<V>> {
        let slot = loop {
            let Reverse((t, key, slot, gen)) = *self.recency.peek()?;
            let live = self.slots[slot as usize].as_ref().filter(|_| self.gens[slot as usize] == gen);
            match live.map(|e| e.last_seen) {
                Some(seen) if seen == t => break slot,
                Some(seen) => {
                    // Touched since recorded: record its time now.
                    self.recency.pop();
                    self.recency.push(Reverse((seen, key, slot, gen)));
                }
                None => {
                    self.recency.pop();
                }
            }
        };
        self.slots[slot as usize].as_ref()
    }
    /// One record per entry, at its current `last_seen`: drops the records
    /// of removed entries.
    fn rebuild_recency(&mut self) {
        let gens = &self.gens;
        let marks: Vec<Mark> = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|e| Reverse((e.last_seen, e.key, i as u32, gens[i]))))
            .collect();
        self.recency = BinaryHeap::from(marks);
    }
    /// All entries, ordered by descriptor (for inspection and reports).
    pub fn entries_sorted(&self) -> Vec<&Entry<V>> {
        let mut v: Vec<&Entry<V>> = self.slots.iter().flatten().collect();
        v.sort_by_key(|e| e.key);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{proto, FlowKey};
    use std::net::{IpAddr, Ipv4Addr};

    fn d(port: u16) -> FlowDescriptor {
        FlowDescriptor::of(
            &FlowKey {
                src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
                dst: IpAddr::V4(Ipv4Addr::new(10, 0, 1, 1)),
                src_port: port,
                dst_port: 5004,
                proto: proto::UDP,
            },
            false,
        )
    }

    #[test]
    fn slab_refuses_past_capacity_and_reuses_freed_slots() {
        let mut t: FlowSlab<u8> = FlowSlab::new(2, Dur::from_secs(1));
        t.insert(Time(0), d(1), 1).unwrap();
        t.insert(Time(0), d(2), 2).unwrap();
        assert_eq!(t.insert(Time(0), d(3), 3), Err(TableFull { capacity: 2 }));
        t.insert(Time(5), d(2), 20).unwrap(); // replacing is not growing
        assert_eq!(t.get(&d(2)).unwrap().value, 20);
        assert!(t.remove(&d(1)).is_some());
        t.insert(Time(6), d(3), 3).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t.slots.len(), 2, "the freed slot was reused");
    }

    #[test]
    fn slab_sweep_removes_exactly_the_entries_silent_for_the_timeout() {
        let s = Dur::from_secs(1).0;
        let mut t: FlowSlab<()> = FlowSlab::new(8, Dur::from_secs(1));
        t.insert(Time(0), d(1), ()).unwrap();
        t.insert(Time(s / 2), d(2), ()).unwrap();
        assert_eq!(t.next_expiry(), Some(Time(s)));
        t.touch(Time(s / 4), &d(1));
        assert_eq!(t.next_expiry(), Some(Time(s)), "a touch leaves the bound low: it is a lower bound");
        assert!(t.sweep(Time(s)).is_empty(), "d(1) was touched at s/4");
        assert_eq!(t.next_expiry(), Some(Time(s + s / 4)), "the sweep made the bound exact");
        assert!(t.sweep(Time(s + s / 4 - 1)).is_empty());
        let gone = t.sweep(Time(s + s / 2));
        let keys: Vec<u16> = gone.iter().map(|e| e.key.src_port).collect();
        assert_eq!(keys, vec![1, 2], "both stale, ordered by last_seen");
        assert_eq!(t.next_expiry(), None);
    }

    #[test]
    fn slab_least_recent_breaks_ties_by_descriptor() {
        let mut t: FlowSlab<()> = FlowSlab::new(8, Dur::from_secs(1));
        t.insert(Time(3), d(9), ()).unwrap();
        t.insert(Time(1), d(7), ()).unwrap();
        t.insert(Time(1), d(5), ()).unwrap();
        assert_eq!(t.least_recent().unwrap().key, d(5));
        t.touch(Time(4), &d(5));
        assert_eq!(t.least_recent().unwrap().key, d(7));
    }

    /// The rule by a scan of the slab (the implementation before the heap).
    fn least_recent_by_scan<V>(t: &FlowSlab<V>) -> Option<(Time, FlowDescriptor)> {
        t.slots.iter().flatten().map(|e| (e.last_seen, e.key)).min()
    }

    proptest::proptest! {
        /// Random inserts, touches, removals, sweeps and evictions on a
        /// coarse clock (many equal `last_seen`, so ties are common) and few
        /// keys (so removed keys come back, often into their old slot): the
        /// heap's answer is the scan's after every step, and the heap stays
        /// bounded.
        #[test]
        fn least_recent_by_heap_matches_the_scan_on_random_workloads(
            ops in proptest::collection::vec((0u8..6, 0u16..48, 0u64..3), 1..600),
            capacity in 1usize..40,
        ) {
            let mut t: FlowSlab<()> = FlowSlab::new(capacity, Dur(50));
            let mut now = 0u64;
            for (op, port, dt) in ops {
                now += dt;
                let k = d(port);
                match op {
                    0 | 1 => {
                        if t.get(&k).is_none() && t.is_full() {
                            let victim = t.least_recent().map(|e| e.key).unwrap();
                            t.remove(&victim);
                        }
                        t.insert(Time(now), k, ()).unwrap();
                    }
                    2 | 3 => {
                        t.touch(Time(now), &k);
                    }
                    4 => {
                        t.remove(&k);
                    }
                    _ => {
                        t.sweep(Time(now));
                    }
                }
                let want = least_recent_by_scan(&t);
                let got = t.least_recent().map(|e| (e.last_seen, e.key));
                proptest::prop_assert_eq!(got, want);
                proptest::prop_assert!(t.recency.len() <= 2 * t.len() + 17, "heap {} for {}", t.recency.len(), t.len());
            }
        }
    }

    #[test]
    fn least_recent_by_heap_matches_the_scan_under_a_flood_with_ties() {
        // Full table of 256, 100,000 arrivals from 2,000 keys, ten arrivals per
        // clock tick: every eviction picks among equal times by descriptor.
        let mut t: FlowSlab<()> = FlowSlab::new(256, Dur::from_secs(3600));
        let mut x: u32 = 0x9e37_79b9;
        for i in 0..100_000u64 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let (now, k) = (Time(i / 10), d((x % 2000) as u16));
            if t.get(&k).is_some() {
                t.touch(now, &k);
                continue;
            }
            if t.is_full() {
                let want = least_recent_by_scan(&t).unwrap();
                let victim = t.least_recent().map(|e| (e.last_seen, e.key)).unwrap();
                assert_eq!(victim, want, "arrival {i}");
                t.remove(&victim.1);
            }
            t.insert(now, k, ()).unwrap();
        }
        assert!(t.recency.len() <= 2 * t.len() + 17);
    }

    #[test]
    fn descriptor_matches_protocol_only_when_asked() {
        let k = FlowKey {
            src: IpAddr::V4(Ipv4Addr::LOCALHOST),
            dst: IpAddr::V4(Ipv4Addr::LOCALHOST),
            src_port: 1,
            dst_port: 2,
            proto: proto::TCP,
        };
        let mut k2 = k;
        k2.proto = proto::UDP;
        assert_eq!(FlowDescriptor::of(&k, false), FlowDescriptor::of(&k2, false));
        assert_ne!(FlowDescriptor::of(&k, true), FlowDescriptor::of(&k2, true));
        assert_eq!(FlowDescriptor::of(&k, true).to_string(), "127.0.0.1:1 -> 127.0.0.1:2 proto 6");
    }
}
