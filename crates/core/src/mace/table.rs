//! The bounded exact-match flow table shared by the MACE classifier and
//! the flow-recognition unit (seed 000 §3: "a single hash table for flow
//! descriptor lookups"; the recognition table "is similar to the classifier
//! flow table, with an additional packet counter field").
//!
//! Entries live in a slab (`Vec` of slots with a free list) addressed
//! through a hash index, so a lookup is one hash probe and per-entry state
//! costs no allocation. The index is never iterated: every scan (stale
//! sweep, least-recently-seen search) walks the slab and orders its output
//! by `(last_seen, descriptor)`, so results never depend on hash order.
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
use std::collections::HashMap;
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

/// A capacity-bounded exact-match table with stale expiry.
#[derive(Clone, Debug)]
pub(crate) struct FlowSlab<V> {
    index: HashMap<FlowDescriptor, u32>,
    slots: Vec<Option<Entry<V>>>,
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
    pub fn get_mut(&mut self, key: &FlowDescriptor) -> Option<&mut Entry<V>> {
        let i = *self.index.get(key)?;
        self.slots[i as usize].as_mut()
    }
    /// Marks `key` as seen at `now`; false if absent. Never moves `last_seen` back.
    pub fn touch(&mut self, now: Time, key: &FlowDescriptor) -> bool {
        match self.get_mut(key) {
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
        if let Some(e) = self.get_mut(&key) {
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
                i
            }
            None => {
                self.slots.push(Some(entry));
                (self.slots.len() - 1) as u32
            }
        };
        self.index.insert(key, i);
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
    /// The least recently seen entry (ties: the smaller descriptor).
    pub fn least_recent(&self) -> Option<&Entry<V>> {
        self.slots.iter().flatten().min_by_key(|e| (e.last_seen, e.key))
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
