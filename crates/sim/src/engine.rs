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
//! an id and a tag, 8 bytes. The queue is an implicit 4-ary min-heap (half
//! the depth of a binary heap) for the current ~0.26 ms window, beside the
//! window's bucket sorted once and the single earliest event, in front of a
//! ring of unsorted per-window buckets for later events (see
//! [`EventQueue`]). A heap entry is 16 bytes, so a node's four children
//! fill one cache line: since every event in the heap lies in the current
//! window, `(time, seq)` packs into one `u64` key, the time's offset in the
//! window above the sequence number (a bucket entry keeps both whole, 24
//! bytes). Sequence numbers therefore have [`SEQ_BITS`] bits: a run stops
//! with an error before it schedules [`SEQ_LIMIT`] events (at 10 million
//! events a second, after 80 days).

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
    /// A flow's entry shaper may release its head packet (it answered `NotBefore`).
    ShaperRelease(FlowId),
    /// A flow's sending agent (TCP sender) has a timer due (RTO).
    SenderTimer(FlowId),
    /// A flow's receiving agent (TCP sink, MM_APP receiver) has a timer due.
    ReceiverTimer(FlowId),
    /// A message between domain edge nodes arrives (its slot in the run's message table).
    EdgeMessage(u32),
    /// A domain edge behaviour's `next_deadline` is due.
    EdgeTimer(NodeId),
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: u64,
    seq: u64,
    event: Event,
}

/// Bits of a heap key's sequence-number part (the rest hold the time's
/// offset in its window).
pub const SEQ_BITS: u32 = 64 - WINDOW_SHIFT;
/// Sequence numbers a run may take: [`Sim`](crate::run::Sim) checks
/// [`EventQueue::seq_exhausted`] every 2^16 events, and 2^40 numbers of
/// margin is far more than 2^16 events can take.
pub const SEQ_LIMIT: u64 = (1 << SEQ_BITS) - (1 << 40);
const SEQ_MASK: u64 = (1 << SEQ_BITS) - 1;
const OFFSET_MASK: u64 = (1 << WINDOW_SHIFT) - 1;

/// An entry of the heap: `(time offset in the current window, seq)` as one
/// number, so that ordering is a single `u64` comparison.
#[derive(Clone, Copy, Debug)]
struct Slot {
    key: u64,
    event: Event,
}

impl Slot {
    #[inline(always)]
    fn of(e: Entry) -> Slot {
        debug_assert!(e.seq < 1 << SEQ_BITS, "sequence number {} beyond the heap key", e.seq);
        Slot { key: ((e.time & OFFSET_MASK) << SEQ_BITS) | (e.seq & SEQ_MASK), event: e.event }
    }
}

/// Pending events, popped in `(time, seq)` order.
///
/// Two tiers: the current time window (`2^WINDOW_SHIFT` ns, about
/// 0.26 ms) holds its events sorted; later events wait unsorted in a ring
/// of per-window buckets (`RING` windows, about 1 s ahead) or, beyond it,
/// in an overflow list. When the window runs dry the next non-empty
/// window's bucket is sorted once into `run` (the overflow is re-bucketed
/// each time the ring turns); events scheduled into the window after that
/// go into a 4-ary min-heap, or, if earlier than everything the window
/// holds, into `front`, the next to pop. Every event earlier than the
/// window's end is in `front`, `run` or the heap, and a pop takes the
/// least of the three, so pops are exactly in `(time, seq)` order; the
/// heap stays as small as the events scheduled within one window
/// (thousands of sources that each send once a second no longer make it
/// deep).
#[derive(Debug)]
pub struct EventQueue {
    /// The earliest event of the current window when it was scheduled as
    /// such, kept out of the heap (key [`EMPTY`]: none). Every event in the
    /// heap is later: an event scheduled to run next (a packet's arrival
    /// over a fast link, a dequeue a few hundred nanoseconds ahead) costs
    /// no sift up to the root and down again.
    front: Slot,
    /// The current window's events that were in its bucket when it
    /// opened, sorted latest first (the next one is the last).
    run: Vec<Slot>,
    /// The current window's events scheduled since it opened (but the
    /// front). Every event of the window is in `front`, `run` or `heap`.
    heap: Vec<Slot>,
    next_seq: u64,
    /// Absolute index of the current window (`time >> WINDOW_SHIFT`).
    cur: u64,
    /// `ring[b % RING]` holds the events of window `b`, for `cur < b < cur + RING`
    /// (so a window never shares its slot with the current one; the overflow
    /// is re-bucketed when `cur` is a multiple of `RING`, before its slot is
    /// drained, which brings in time every event of the next `RING` windows).
    ring: Vec<Vec<Entry>>,
    ring_len: usize,
    /// Emptied bucket vectors, kept with their capacity for the next
    /// bucket that fills: only the windows that hold events at the same
    /// time own memory (with events a few tens of ms ahead, a few dozen),
    /// not every slot of the ring at the most it ever held (a 1,800-link
    /// network kept 9.7 MB that way).
    spare: Vec<Vec<Entry>>,
    /// Events of windows beyond `cur + RING`.
    overflow: Vec<Entry>,
    /// The time of the last event popped: nothing may be scheduled before it.
    now: u64,
    /// The time of the first event scheduled before [`Self::now`], if any (a bug: see [`Self::check`]).
    past: Option<u64>,
}

const ARITY: usize = 4;
/// The key of an empty [`EventQueue::front`]: above every event's key (a
/// sequence number stays below [`SEQ_LIMIT`]).
const EMPTY: u64 = u64::MAX;
const NO_FRONT: Slot = Slot { key: EMPTY, event: Event::Sample };
const WINDOW_SHIFT: u32 = 18;
const RING: u64 = 4096;

impl EventQueue {
    pub fn with_capacity(n: usize) -> EventQueue {
        EventQueue {
            front: NO_FRONT,
            run: Vec::new(),
            heap: Vec::with_capacity(n.max(16)),
            next_seq: 0,
            cur: 0,
            ring: (0..RING).map(|_| Vec::new()).collect(),
            ring_len: 0,
            spare: Vec::new(),
            overflow: Vec::new(),
            now: 0,
            past: None,
        }
    }
    pub fn len(&self) -> usize {
        usize::from(self.front.key != EMPTY) + self.run.len() + self.heap.len() + self.ring_len + self.overflow.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
        let mut time = time.0;
        if time < self.now {
            // Before the current event's time, which the simulator never
            // asks for (a bug): run it now, so the clock never goes back,
            // and say so (see `check`).
            self.past.get_or_insert(time);
            time = self.now;
        }
        let w = time >> WINDOW_SHIFT;
        // `now` lies in the current window, so `w < cur` cannot happen.
        if w <= self.cur {
            let e = Slot::of(Entry { time, seq, event });
            if e.key < self.front.key {
                // The new earliest event: the one it displaces joins the heap.
                let was = std::mem::replace(&mut self.front, e);
                if was.key != EMPTY {
                    heap_push(&mut self.heap, was);
                } else if e.key > self.first_key() {
                    // No front, but the window holds an earlier event.
                    self.front = NO_FRONT;
                    heap_push(&mut self.heap, e);
                }
            } else {
                heap_push(&mut self.heap, e);
            }
        } else if w < self.cur + RING {
            bucket_push(&mut self.ring, &mut self.spare, w, Entry { time, seq, event });
            self.ring_len += 1;
        } else {
            self.overflow.push(Entry { time, seq, event });
        }
    }

    /// True once the run has taken so many sequence numbers that the heap's
    /// keys could soon not order them (see [`SEQ_LIMIT`]).
    pub fn seq_exhausted(&self) -> bool {
        self.next_seq >= SEQ_LIMIT
    }

    /// Whether the queue still orders every event exactly: an error once a
    /// run has nearly used up the sequence numbers or has scheduled an
    /// event before the current event's time (the loop calls it every 2^16
    /// events and at the end).
    pub fn check(&self) -> Result<(), String> {
        if self.seq_exhausted() {
            return Err(format!(
                "the run scheduled {SEQ_LIMIT} events, the most one run can order (engine::SEQ_LIMIT); \
                 shorten the duration or split the run"
            ));
        }
        if let Some(t) = self.past {
            return Err(format!("an event was scheduled at {t} ns, before the current event's time (a bug)"));
        }
        Ok(())
    }

    /// The next event, if any is in the current window (to prefetch what it will touch).
    #[inline]
    pub fn peek(&self) -> Option<Event> {
        if self.front.key != EMPTY {
            return Some(self.front.event);
        }
        match (self.run.last(), self.heap.first()) {
            (Some(r), Some(h)) => Some(if r.key < h.key { r.event } else { h.event }),
            (r, h) => r.or(h).map(|e| e.event),
        }
    }

    /// The key of the earliest event in `run` and `heap` ([`EMPTY`]: none).
    #[inline]
    fn first_key(&self) -> u64 {
        let r = self.run.last().map_or(EMPTY, |e| e.key);
        let h = self.heap.first().map_or(EMPTY, |e| e.key);
        r.min(h)
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        if self.front.key != EMPTY {
            let e = std::mem::replace(&mut self.front, NO_FRONT);
            self.now = (self.cur << WINDOW_SHIFT) | (e.key >> SEQ_BITS);
            return Some((Time(self.now), e.event));
        }
        loop {
            let r = self.run.last().map_or(EMPTY, |e| e.key);
            let h = self.heap.first().map_or(EMPTY, |e| e.key);
            let next = if r < h { self.run.pop() } else { heap_pop(&mut self.heap) };
            if let Some(e) = next {
                self.now = (self.cur << WINDOW_SHIFT) | (e.key >> SEQ_BITS);
                return Some((Time(self.now), e.event));
            }
            if !self.advance() {
                return None;
            }
        }
    }

    /// Opens the next window that holds events; false if none is left.
    #[cold]
    fn advance(&mut self) -> bool {
        if self.ring_len == 0 {
            // Jump straight to the window before the earliest overflow event.
            let Some(first) = self.overflow.iter().map(|e| e.time >> WINDOW_SHIFT).min() else {
                return false;
            };
            self.cur = first - 1;
            self.rebucket();
        }
        loop {
            self.cur += 1;
            if self.cur.is_multiple_of(RING) {
                self.rebucket();
            }
            let slot = (self.cur % RING) as usize;
            if !self.ring[slot].is_empty() {
                let mut bucket = std::mem::take(&mut self.ring[slot]);
                self.ring_len -= bucket.len();
                // Sorted once (keys are distinct: each has its sequence
                // number) rather than pushed into the heap one by one.
                self.run.extend(bucket.drain(..).map(Slot::of));
                self.run.sort_unstable_by_key(|e| std::cmp::Reverse(e.key));
                self.spare.push(bucket);
                return true;
            }
        }
    }

    /// Moves overflow events that now fall within the ring into it.
    fn rebucket(&mut self) {
        let (cur, ring, spare) = (self.cur, &mut self.ring, &mut self.spare);
        let mut moved = 0;
        self.overflow.retain(|e| {
            let w = e.time >> WINDOW_SHIFT;
            if w < cur + RING {
                bucket_push(ring, spare, w, *e);
                moved += 1;
                false
            } else {
                true
            }
        });
        self.ring_len += moved;
    }

    /// Entries the queue has room for without allocating (heap, ring
    /// buckets, spare buckets and overflow): its memory, in entries.
    pub fn capacity(&self) -> usize {
        let vecs = |v: &[Vec<Entry>]| v.iter().map(Vec::capacity).sum::<usize>();
        // A heap slot is two thirds of an entry.
        (self.heap.capacity() + self.run.capacity()) * 2 / 3
            + vecs(&self.ring)
            + vecs(&self.spare)
            + self.overflow.capacity()
    }
}

/// Appends `e` to window `w`'s bucket, giving an empty bucket a spare
/// vector first (so its capacity is reused, not grown anew).
#[inline]
fn bucket_push(ring: &mut [Vec<Entry>], spare: &mut Vec<Vec<Entry>>, w: u64, e: Entry) {
    let b = &mut ring[(w % RING) as usize];
    if b.capacity() == 0 {
        if let Some(v) = spare.pop() {
            *b = v;
        }
    }
    b.push(e);
}

#[inline]
fn heap_push(heap: &mut Vec<Slot>, e: Slot) {
    let mut i = heap.len();
    heap.push(e);
    let key = e.key;
    while i > 0 {
        let parent = (i - 1) / ARITY;
        if key < heap[parent].key {
            heap[i] = heap[parent];
            i = parent;
        } else {
            break;
        }
    }
    heap[i] = e;
}

#[inline]
fn heap_pop(heap: &mut Vec<Slot>) -> Option<Slot> {
    let last = heap.pop()?;
    let n = heap.len();
    if n == 0 {
        return Some(last);
    }
    let top = heap[0];
    let last_key = last.key;
    let mut i = 0;
    loop {
        let first = i * ARITY + 1;
        if first >= n {
            break;
        }
        let end = (first + ARITY).min(n);
        let mut best = first;
        let mut best_key = heap[first].key;
        for (c, e) in heap[first + 1..end].iter().enumerate() {
            let k = e.key;
            if k < best_key {
                best = first + 1 + c;
                best_key = k;
            }
        }
        if best_key < last_key {
            heap[i] = heap[best];
            i = best;
        } else {
            break;
        }
    }
    heap[i] = last;
    Some(top)
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
    fn queue_matches_a_sorted_reference_under_random_operations() {
        // Delays from nanoseconds (all in one window) to hours (overflow),
        // many ties, and long idle gaps.
        for (case, spread) in [50u64, 3_000_000, 2_000_000_000, 5_000_000_000_000].into_iter().enumerate() {
            random_ops(case as u64, spread);
        }
    }

    fn random_ops(case: u64, spread: u64) {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5 + case);
        let mut q = EventQueue::with_capacity(1);
        let mut reference: Vec<(u64, u64, u32)> = Vec::new();
        let mut seq = 0u64;
        let mut now = 0u64;
        for _ in 0..20_000 {
            if rng.random_bool(0.55) || reference.is_empty() {
                let d = match rng.random_range(0..5) {
                    0 => 0,
                    1 => rng.random_range(0..50u64),
                    // Near whole turns of the ring and window edges.
                    2 => (rng.random_range(0..3u64) * RING + rng.random_range(0..3u64)) << WINDOW_SHIFT,
                    _ => rng.random_range(0..spread),
                };
                let t = now + d;
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
        reference.sort();
        for (t, _, id) in reference {
            assert_eq!(q.pop(), Some((Time(t), Event::Emit(FlowId(id)))));
        }
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn memory_follows_the_windows_in_use_not_the_whole_ring() {
        // 200 events a window, each scheduled 20 windows ahead (a CBR
        // period), for three turns of the ring: about 21 windows hold
        // events at once, so the queue needs room for about 21 x 200
        // entries (times the vectors' growth factor), not 4,096 x 200.
        let mut q = EventQueue::with_capacity(16);
        let window = 1u64 << WINDOW_SHIFT;
        let mut popped = 0u64;
        for k in 0..200 {
            q.schedule(Time(k * window / 200), Event::Emit(FlowId(k as u32)));
        }
        while let Some((t, e)) = q.pop() {
            popped += 1;
            if t.0 < 3 * RING * window {
                q.schedule(Time(t.0 + 20 * window), e);
            }
        }
        assert!(popped > 3 * RING / 20 * 200);
        let cap = q.capacity();
        assert!(cap <= 64 * 256, "the queue kept room for {cap} entries");
    }

    #[test]
    fn sequence_numbers_order_up_to_the_limit_and_then_say_so() {
        // The heap key holds SEQ_BITS of the sequence number: ties still
        // pop in insertion order just below the limit, with the largest
        // time offset a window has.
        let mut q = EventQueue::with_capacity(4);
        q.next_seq = SEQ_LIMIT - 4;
        let last = (1u64 << WINDOW_SHIFT) - 1;
        q.schedule(Time(last), Event::Emit(FlowId(1)));
        q.schedule(Time(last), Event::Emit(FlowId(2)));
        q.schedule(Time(0), Event::Emit(FlowId(3)));
        assert!(!q.seq_exhausted());
        q.schedule(Time(last), Event::Emit(FlowId(4)));
        assert!(q.seq_exhausted());
        assert_eq!(q.pop(), Some((Time(0), Event::Emit(FlowId(3)))));
        for f in [1, 2, 4] {
            assert_eq!(q.pop(), Some((Time(last), Event::Emit(FlowId(f)))));
        }
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn an_event_before_the_current_one_is_an_error_and_runs_now() {
        // Before the current window and, the case the window check missed,
        // inside it: both run at the current time and are reported.
        for (now, early) in [(5u64 << WINDOW_SHIFT, 3u64), ((5 << WINDOW_SHIFT) + 1000, (5 << WINDOW_SHIFT) + 10)] {
            let mut q = EventQueue::with_capacity(4);
            q.schedule(Time(now), Event::Sample);
            q.schedule(Time(now + 1), Event::Sample);
            assert_eq!(q.pop(), Some((Time(now), Event::Sample)));
            assert!(q.check().is_ok());
            q.schedule(Time(early), Event::AdmissionTick);
            let err = q.check().unwrap_err();
            assert!(err.contains(&format!("at {early} ns, before the current event's time")), "{err}");
            assert_eq!(q.pop(), Some((Time(now), Event::AdmissionTick)), "the clock does not go back");
            assert_eq!(q.pop(), Some((Time(now + 1), Event::Sample)));
        }
    }

    #[test]
    fn event_and_entry_stay_small() {
        assert!(std::mem::size_of::<Event>() <= 8);
        assert!(std::mem::size_of::<Entry>() <= 24);
        assert!(std::mem::size_of::<Slot>() <= 16);
    }

    #[test]
    fn dir_ids_pair_up_with_links() {
        assert_eq!(DirId::of(LinkId(3), false), DirId(6));
        assert_eq!(DirId::of(LinkId(3), true), DirId(7));
        assert_eq!(DirId(7).link(), LinkId(3));
    }
}
