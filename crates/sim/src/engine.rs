//! The event engine: typed entity ids, the event type, and a priority queue
//! ordered by `(time, insertion sequence)`.
//!
//! Events at the same instant run in the order they were scheduled (SimPy,
//! nexosim): every [`EventQueue::schedule`] takes the next sequence number,
//! and the queue pops the smallest `(time, seq)`. A caller may reserve a
//! sequence number now and insert the event later with
//! [`EventQueue::schedule_with_seq`]; the order is then exactly as if the
//! event had been inserted at reservation time. Links use this to keep
//! only the head of their propagation pipe in the queue (see `net`), which
//! keeps the heap small without changing the order of anything.
//!
//! Entities live in arenas (`Vec`s) and are named by typed ids; an event is
//! an id and a tag, 8 bytes, and a queue entry 24 bytes. The queue is an
//! implicit 4-ary min-heap (half the depth of a binary heap, and the four
//! children of a node share a cache line or two), pre-allocated.

use qoslab_core::units::Time;

macro_rules! id_type {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub u32);
        impl $name {
            #[inline]
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id_type!(
    /// A node (host or router): index into the network's node arena.
    NodeId
);
id_type!(
    /// A duplex link: index into the expanded topology's links.
    LinkId
);
id_type!(
    /// One direction of a link (`2 * link` is a -> b, `2 * link + 1` is b -> a).
    DirId
);
id_type!(
    /// A traffic group (`[[traffic]]` entry), in scenario order.
    GroupId
);
pub use qoslab_core::packet::FlowId;

impl DirId {
    pub fn of(link: LinkId, reverse: bool) -> DirId {
        DirId(link.0 * 2 + reverse as u32)
    }
    pub fn link(self) -> LinkId {
        LinkId(self.0 / 2)
    }
}

/// Something that happens at an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A flow's source emits its next packet.
    Emit(FlowId),
    /// A flow asks for admission and, if admitted, starts sending.
    FlowStart(FlowId),
    /// A flow's end (stop time or lifetime).
    FlowEnd(FlowId),
    /// A group's arrival process starts its next flow(s).
    GroupNext(GroupId),
    /// A keep-alive slot whose flow was refused becomes free again.
    SlotFree(GroupId),
    /// A link direction's transmission ends with packets waiting: dequeue the next.
    TxDone(DirId),
    /// The packet at the head of a link direction's pipe reaches the far node.
    Arrive(DirId),
    /// A link direction whose queue answered `NotBefore` tries again.
    Retry(DirId),
    /// A queue discipline's `next_deadline` is due.
    QdiscTick(DirId),
    /// The admission controller's `next_deadline` is due.
    AdmissionTick,
    /// Queues and links are sampled for the time series.
    Sample,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: u64,
    seq: u64,
    event: Event,
}

impl Entry {
    /// `(time, seq)` as one number: a single, branch-free comparison.
    #[inline(always)]
    fn key(&self) -> u128 {
        ((self.time as u128) << 64) | self.seq as u128
    }
    #[inline(always)]
    fn before(&self, o: &Entry) -> bool {
        self.key() < o.key()
    }
}

/// Pending events, popped in `(time, seq)` order.
#[derive(Debug)]
pub struct EventQueue {
    heap: Vec<Entry>,
    next_seq: u64,
}

const ARITY: usize = 4;

impl EventQueue {
    pub fn with_capacity(n: usize) -> EventQueue {
        EventQueue { heap: Vec::with_capacity(n.max(16)), next_seq: 0 }
    }
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Takes the next sequence number, for an event to be inserted later
    /// with [`Self::schedule_with_seq`].
    #[inline]
    pub fn reserve_seq(&mut self) -> u64 {
        let s = self.next_seq;
        self.next_seq += 1;
        s
    }

    /// Schedules `event` at `time`, after everything already scheduled for that time.
    #[inline]
    pub fn schedule(&mut self, time: Time, event: Event) {
        let seq = self.reserve_seq();
        self.schedule_with_seq(time, seq, event);
    }

    /// Schedules `event` at `time` with a sequence number taken earlier.
    #[inline]
    pub fn schedule_with_seq(&mut self, time: Time, seq: u64, event: Event) {
        let e = Entry { time: time.0, seq, event };
        let mut i = self.heap.len();
        self.heap.push(e);
        // Sift up.
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if e.before(&self.heap[parent]) {
                self.heap[i] = self.heap[parent];
                i = parent;
            } else {
                break;
            }
        }
        self.heap[i] = e;
    }

    /// The time of the next event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.first().map(|e| Time(e.time))
    }

    /// The next event, if any (to prefetch what it will touch).
    #[inline]
    pub fn peek(&self) -> Option<Event> {
        self.heap.first().map(|e| e.event)
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let last = self.heap.pop()?;
        let n = self.heap.len();
        if n == 0 {
            return Some((Time(last.time), last.event));
        }
        let top = self.heap[0];
        if n > 0 {
            // Sift the last entry down from the root.
            let mut i = 0;
            loop {
                let first = i * ARITY + 1;
                if first >= n {
                    break;
                }
                let end = (first + ARITY).min(n);
                let mut best = first;
                let mut best_key = self.heap[first].key();
                for c in first + 1..end {
                    let k = self.heap[c].key();
                    if k < best_key {
                        best = c;
                        best_key = k;
                    }
                }
                if best_key < last.key() {
                    self.heap[i] = self.heap[best];
                    i = best;
                } else {
                    break;
                }
            }
            self.heap[i] = last;
        }
        Some((Time(top.time), top.event))
    }
}

/// Asks the CPU to bring the cache lines of `*p` (the first `lines`
/// 64-byte lines) closer, without waiting: the simulator calls it for the
/// entities of the next event while it runs the current one, so that with
/// thousands of flows the memory latency overlaps useful work. No effect
/// on results; a no-op where the instruction is not available.
#[inline(always)]
pub fn prefetch<T>(p: &T, lines: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let base = p as *const T as *const i8;
        for k in 0..lines {
            // SAFETY: a prefetch is a hint; it never faults and does not
            // read memory architecturally, and SSE is part of x86-64.
            unsafe { _mm_prefetch(base.wrapping_add(64 * k), _MM_HINT_T0) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (p, lines);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng as _, SeedableRng};

    #[test]
    fn events_at_the_same_time_pop_in_insertion_order() {
        let mut q = EventQueue::with_capacity(4);
        for i in 0..10 {
            q.schedule(Time(5), Event::Emit(FlowId(i)));
        }
        q.schedule(Time(1), Event::Sample);
        q.schedule(Time(5), Event::AdmissionTick);
        assert_eq!(q.pop(), Some((Time(1), Event::Sample)));
        for i in 0..10 {
            assert_eq!(q.pop(), Some((Time(5), Event::Emit(FlowId(i)))));
        }
        assert_eq!(q.pop(), Some((Time(5), Event::AdmissionTick)));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn reserved_sequence_orders_as_if_inserted_at_reservation() {
        let mut q = EventQueue::with_capacity(4);
        let early = q.reserve_seq();
        q.schedule(Time(7), Event::Sample);
        q.schedule_with_seq(Time(7), early, Event::AdmissionTick);
        assert_eq!(q.pop(), Some((Time(7), Event::AdmissionTick)));
        assert_eq!(q.pop(), Some((Time(7), Event::Sample)));
    }

    #[test]
    fn heap_matches_a_sorted_reference_under_random_operations() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
        let mut q = EventQueue::with_capacity(1);
        let mut reference: Vec<(u64, u64, u32)> = Vec::new();
        let mut seq = 0u64;
        let mut now = 0u64;
        for _ in 0..20_000 {
            if rng.random_bool(0.55) || reference.is_empty() {
                let t = now + rng.random_range(0..50u64);
                let id = rng.random::<u32>();
                q.schedule(Time(t), Event::Emit(FlowId(id)));
                reference.push((t, seq, id));
                seq += 1;
            } else {
                reference.sort();
                let (t, _, id) = reference.remove(0);
                assert_eq!(q.pop(), Some((Time(t), Event::Emit(FlowId(id)))));
                now = t;
            }
            assert_eq!(q.len(), reference.len());
        }
    }

    #[test]
    fn event_and_entry_stay_small() {
        assert!(std::mem::size_of::<Event>() <= 8);
        assert!(std::mem::size_of::<Entry>() <= 24);
    }

    #[test]
    fn dir_ids_pair_up_with_links() {
        assert_eq!(DirId::of(LinkId(3), false), DirId(6));
        assert_eq!(DirId::of(LinkId(3), true), DirId(7));
        assert_eq!(DirId(7).link(), LinkId(3));
    }
}
