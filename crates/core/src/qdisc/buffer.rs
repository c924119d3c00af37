//! Rate guarantees by buffer management: a FIFO whose admission gives each
//! stream a buffer allocation in proportion to its rate, and lets excess
//! traffic into the shared remainder only under the "holes" rule.
//!
//! Source: [Guerin99 §III.A], which follows Guérin,
//! Kamat, Peris & Rajan, "Scalable QoS provision through buffer
//! management", SIGCOMM 1998 (the "holes" rule after its reference [14]).
//!
//! ```text
//! B   = buffers · buff_size                      the pool, bytes (B_q)
//! b_i = floor(B · r_i / R)                       stream i's allocation (eq. 1), R = the queue's rate
//! S   = B − Σ b_i                                the shared buffers
//! a   = max(L, buff_size)                        what a packet of L bytes counts
//! q_i                                            stream i's occupancy (counted bytes)
//! s_i = max(0, q_i − b_i)                        its use of shared buffers
//! accept a packet of stream i if fewer than `buffers` packets are queued and
//!     q_i + a ≤ b_i                              (within the allocation), or else
//!     s_i' ≤ S − Σ_j s_j'                        (holes: its shared use after acceptance
//!                                                 ≤ the free shared buffers after acceptance)
//! a departure: q_i −= a, so s_i falls first      (shared buffers are released first)
//! ```
//!
//! | parameter | unit | allowed | default |
//! |---|---|---|---|
//! | `buffers` | packets | ≥ 1 | none: required |
//! | `buff_size` | bytes | ≥ 1 | none: required (the paper's BUFF_SIZE) |
//! | `rate` | bit/s | ≥ 1 | none: required (the queue's rate R_q) |
//! | `streams[].stream` | stream id | distinct | none |
//! | `streams[].rate` | bit/s | ≥ 1, or none for best effort; Σ ≤ `rate` | none: best effort |
//!
//! Best-effort streams (rate none) and packets of streams not configured
//! have no allocation (b = 0): they use shared buffers only, each stream id
//! under the holes rule. Refusals are [`DropReason::Overlimit`].
//! Interpretations are in `docs/decisions.md`, "Edge QoS: Buffer management".

use crate::error::ConfigError;
use crate::packet::{FlowId, Packet};
use crate::qdisc::{Backlog, Dequeue, DropReason, Dropped, ProbeSink, Qdisc, Verdict};
use crate::rng::Rng;
use crate::units::{Rate, Time};

/// A stream's reservation in one queue: `None` is best effort (shared buffers only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamShare {
    pub stream: u16,
    pub rate: Option<Rate>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferConfig {
    /// Packet buffers of the queue (its physical limit in packets).
    pub buffers: u32,
    /// Bytes one buffer counts for (BUFF_SIZE); also the least a packet counts.
    pub buff_size: u32,
    /// The queue's rate R_q, which the reservations share.
    pub rate: Rate,
    pub streams: Vec<StreamShare>,
}

impl BufferConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        let err = |field, msg: String| Err(ConfigError::new("buffer_management", field, msg));
        if self.buffers == 0 {
            return err("buffers", "(0) must be at least 1 packet buffer".into());
        }
        if self.buff_size == 0 {
            return err("buff_size", "(0 bytes) must be at least 1 byte".into());
        }
        if self.rate.0 == 0 {
            return err("rate", "(0 bit/s) must be at least 1 bit/s".into());
        }
        let mut ids: Vec<u16> = self.streams.iter().map(|s| s.stream).collect();
        ids.sort_unstable();
        if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
            return err("streams", format!("name stream {} twice; each stream id may appear once", w[0]));
        }
        if let Some(s) = self.streams.iter().find(|s| s.rate == Some(Rate(0))) {
            return err(
                "streams",
                format!("stream {} reserves 0 bit/s; reserve at least 1 bit/s, or none for best effort", s.stream),
            );
        }
        let sum: u128 = self.streams.iter().filter_map(|s| s.rate).map(|r| r.0 as u128).sum();
        if sum > self.rate.0 as u128 {
            return err(
                "streams",
                format!("reservations sum to {} bit/s, above the queue rate {} bit/s", sum, self.rate.0),
            );
        }
        Ok(())
    }
}

/// No slot for this stream id.
const NONE: u32 = u32::MAX;

fn set_index(index: &mut Vec<u32>, stream: u16, slot: usize) {
    let k = stream as usize;
    if index.len() <= k {
        index.resize(k + 1, NONE);
    }
    index[k] = slot as u32;
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    stream: u16,
    alloc: u64,
    /// Counted bytes queued (q_i): what the rules use.
    occ: u64,
    /// Real bytes queued: what the link will spend time on.
    bytes: u64,
}

/// Per-stream probes, by slot (the k-th stream of `streams`, then streams
/// not configured in the order they first arrive): real bytes queued and
/// counted bytes (q_i). Probe names are static, so only the first
/// `PROBED_SLOTS` slots are probed.
const PROBED_SLOTS: usize = 16;
const SLOT_BYTES: [&str; PROBED_SLOTS] = [
    "slot0_bytes",
    "slot1_bytes",
    "slot2_bytes",
    "slot3_bytes",
    "slot4_bytes",
    "slot5_bytes",
    "slot6_bytes",
    "slot7_bytes",
    "slot8_bytes",
    "slot9_bytes",
    "slot10_bytes",
    "slot11_bytes",
    "slot12_bytes",
    "slot13_bytes",
    "slot14_bytes",
    "slot15_bytes",
];
const SLOT_COUNTED: [&str; PROBED_SLOTS] = [
    "slot0_counted",
    "slot1_counted",
    "slot2_counted",
    "slot3_counted",
    "slot4_counted",
    "slot5_counted",
    "slot6_counted",
    "slot7_counted",
    "slot8_counted",
    "slot9_counted",
    "slot10_counted",
    "slot11_counted",
    "slot12_counted",
    "slot13_counted",
    "slot14_counted",
    "slot15_counted",
];

impl Slot {
    #[inline(always)]
    fn shared(&self) -> u64 {
        self.occ.saturating_sub(self.alloc)
    }
}

/// A FIFO with Guérin et al.'s buffer management (Qdisc kind `"buffer_managed"`).
#[derive(Debug)]
pub struct BufferManaged {
    config: BufferConfig,
    /// The configured streams, then any other stream id seen (added with
    /// no allocation).
    slots: Vec<Slot>,
    /// Stream id → index into `slots` (`NONE`: no slot yet), as long as the
    /// largest stream id seen: O(1) on every packet, no search.
    index: Vec<u32>,
    shared_pool: u64,
    shared_used: u64,
    allocated_used: u64,
    q: Ring,
    backlog: Backlog,
}

/// The queue's packets, first in first out: `VecDeque`'s behaviour (it grows
/// by doubling when full), with `push_back` and `take_front` always inlined.
/// Inlined into the edge router's wrapper steps, `VecDeque::push_back` was
/// left a call that took the packet through memory (docs/performance.md,
/// "The edge QoS fast path, fourth pass").
#[derive(Clone, Debug, Default)]
struct Ring {
    /// Slots; the `len` packets from `head` on (wrapping) are queued.
    buf: Vec<Packet>,
    head: usize,
    len: usize,
}

impl Ring {
    #[inline(always)]
    fn push_back(&mut self, p: Packet) {
        if self.len == self.buf.len() {
            self.grow();
        }
        let mut i = self.head + self.len;
        if i >= self.buf.len() {
            i -= self.buf.len();
        }
        self.buf[i] = p;
        self.len += 1;
    }
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let n = (2 * self.buf.len()).max(8);
        let mut buf = Vec::with_capacity(n);
        buf.extend(self.iter().copied());
        buf.resize(n, Packet::new(0, FlowId(0), 0, Time::ZERO));
        self.buf = buf;
        self.head = 0;
    }
    /// Removes the front packet; the ring must not be empty.
    #[inline(always)]
    fn take_front(&mut self) -> Packet {
        debug_assert!(self.len > 0);
        let p = self.buf[self.head];
        self.head += 1;
        if self.head == self.buf.len() {
            self.head = 0;
        }
        self.len -= 1;
        p
    }
    #[inline(always)]
    fn front(&self) -> Option<&Packet> {
        (self.len > 0).then(|| &self.buf[self.head])
    }
    /// Front to back.
    fn iter(&self) -> impl Iterator<Item = &Packet> {
        let (a, b) = self.buf.split_at(self.head);
        b.iter().chain(a).take(self.len)
    }
    /// Empties the ring, returning its packets front to back.
    fn drain(&mut self) -> Vec<Packet> {
        let v = self.iter().copied().collect();
        self.head = 0;
        self.len = 0;
        v
    }
}

impl BufferManaged {
    pub fn new(config: BufferConfig) -> Result<BufferManaged, ConfigError> {
        config.validate()?;
        let pool = config.buffers as u128 * config.buff_size as u128;
        let slots: Vec<Slot> = config
            .streams
            .iter()
            .map(|s| Slot {
                stream: s.stream,
                alloc: s.rate.map_or(0, |r| (pool * r.0 as u128 / config.rate.0 as u128) as u64),
                occ: 0,
                bytes: 0,
            })
            .collect();
        let mut index = Vec::new();
        for (i, s) in slots.iter().enumerate() {
            set_index(&mut index, s.stream, i);
        }
        let allocated: u64 = slots.iter().map(|s| s.alloc).sum();
        let shared_pool = pool as u64 - allocated;
        Ok(BufferManaged {
            config,
            slots,
            index,
            shared_pool,
            shared_used: 0,
            allocated_used: 0,
            q: Ring::default(),
            backlog: Backlog::default(),
        })
    }
    pub fn config(&self) -> &BufferConfig {
        &self.config
    }
    /// The pool B in bytes (`buffers · buff_size`).
    pub fn pool(&self) -> u64 {
        self.config.buffers as u64 * self.config.buff_size as u64
    }
    /// Stream `stream`'s allocation b_i in bytes (0 for best effort or unknown).
    pub fn allocation(&self, stream: u16) -> u64 {
        self.find(stream).map_or(0, |i| self.slots[i].alloc)
    }
    /// Stream `stream`'s occupancy q_i in counted bytes.
    pub fn occupancy(&self, stream: u16) -> u64 {
        self.find(stream).map_or(0, |i| self.slots[i].occ)
    }
    /// Stream `stream`'s real bytes queued (its packets' sizes, not counted).
    pub fn queued_bytes(&self, stream: u16) -> u64 {
        self.find(stream).map_or(0, |i| self.slots[i].bytes)
    }
    /// Stream `stream`'s use of shared buffers, max(0, q_i − b_i).
    pub fn shared_occupancy(&self, stream: u16) -> u64 {
        self.find(stream).map_or(0, |i| self.slots[i].shared())
    }
    /// Shared buffers free now (bytes): S − Σ s_j.
    pub fn shared_free(&self) -> u64 {
        self.shared_pool - self.shared_used
    }
    /// The shared buffers S in bytes.
    pub fn shared_pool(&self) -> u64 {
        self.shared_pool
    }
    /// Σ s_j, bytes.
    pub fn shared_used(&self) -> u64 {
        self.shared_used
    }
    /// Σ min(q_j, b_j), bytes.
    pub fn allocated_used(&self) -> u64 {
        self.allocated_used
    }

    /// What a packet counts: never less than BUFF_SIZE.
    #[inline(always)]
    pub fn counted(&self, size: u32) -> u64 {
        size.max(self.config.buff_size) as u64
    }

    #[inline(always)]
    fn find(&self, stream: u16) -> Option<usize> {
        match self.index.get(stream as usize) {
            Some(&i) if i != NONE => Some(i as usize),
            _ => None,
        }
    }

    #[inline(always)]
    fn slot_of(&mut self, stream: u16) -> usize {
        match self.find(stream) {
            Some(i) => i,
            None => {
                self.slots.push(Slot { stream, alloc: 0, occ: 0, bytes: 0 });
                let i = self.slots.len() - 1;
                set_index(&mut self.index, stream, i);
                i
            }
        }
    }

    /// Would a packet of `a` counted bytes from slot `i` be accepted?
    #[inline(always)]
    fn admits(&self, i: usize, a: u64) -> bool {
        let s = self.slots[i];
        let occ = s.occ + a;
        if occ <= s.alloc {
            return true;
        }
        // The part beyond the allocation goes into shared buffers.
        let shared_after = occ - s.alloc;
        let increase = shared_after - s.shared();
        let Some(free_after) = self.shared_free().checked_sub(increase) else {
            return false;
        };
        shared_after <= free_after
    }

    #[inline(always)]
    fn add(&mut self, i: usize, a: u64, size: u32) {
        let s = &mut self.slots[i];
        let (sh0, al0) = (s.shared(), s.occ.min(s.alloc));
        s.occ += a;
        s.bytes += size as u64;
        let (sh1, al1) = (s.shared(), s.occ.min(s.alloc));
        self.shared_used += sh1 - sh0;
        self.allocated_used += al1 - al0;
    }

    #[inline(always)]
    fn release(&mut self, stream: u16, a: u64, size: u32) {
        let i = self.find(stream).expect("a departing packet's stream has a slot");
        let s = &mut self.slots[i];
        let (sh0, al0) = (s.shared(), s.occ.min(s.alloc));
        s.occ -= a;
        s.bytes -= size as u64;
        let (sh1, al1) = (s.shared(), s.occ.min(s.alloc));
        self.shared_used -= sh0 - sh1;
        self.allocated_used -= al0 - al1;
    }
}

impl Qdisc for BufferManaged {
    fn kind(&self) -> &'static str {
        "buffer_managed"
    }
    // `inline(always)`: see `Classful::enqueue_step`.
    #[inline(always)]
    fn enqueue(&mut self, _now: Time, pkt: Packet, _rng: &mut Rng) -> Verdict {
        let a = self.counted(pkt.size);
        let i = self.slot_of(pkt.stream);
        if self.backlog.packets >= self.config.buffers || !self.admits(i, a) {
            return Verdict::Dropped(Dropped { packet: pkt, reason: DropReason::Overlimit });
        }
        self.add(i, a, pkt.size);
        self.backlog.add(&pkt);
        self.q.push_back(pkt);
        Verdict::Queued
    }
    #[inline(always)]
    fn dequeue(&mut self, _now: Time) -> Dequeue {
        // The head's size and stream are read where it lies, and the packet
        // is then moved out whole: taken apart first, it was written back
        // field by field and reloaded 16 bytes at a time by the layers
        // above, a failed store-to-load forwarding (docs/performance.md,
        // "The edge QoS fast path, fourth pass").
        let Some(h) = self.q.front() else { return Dequeue::Empty };
        let (size, stream) = (h.size, h.stream);
        self.backlog.sub(h);
        self.release(stream, self.counted(size), size);
        Dequeue::Packet(self.q.take_front())
    }
    fn peek(&self) -> Option<&Packet> {
        self.q.front()
    }
    fn backlog(&self) -> Backlog {
        self.backlog
    }
    fn for_each_packet(&self, f: &mut dyn FnMut(&Packet)) {
        self.q.iter().for_each(f)
    }
    fn reset(&mut self) -> Vec<Packet> {
        self.backlog = Backlog::default();
        for s in &mut self.slots {
            s.occ = 0;
            s.bytes = 0;
        }
        self.shared_used = 0;
        self.allocated_used = 0;
        self.q.drain()
    }
    fn probe(&self, sink: ProbeSink<'_>) {
        sink("shared_used", self.shared_used as f64);
        sink("allocated_used", self.allocated_used as f64);
        for (k, s) in self.slots.iter().take(PROBED_SLOTS).enumerate() {
            sink(SLOT_BYTES[k], s.bytes as f64);
            sink(SLOT_COUNTED[k], s.occ as f64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::Queue;
    use std::collections::VecDeque;

    #[test]
    fn ring_is_a_fifo_like_vecdeque_across_growth_and_wrap_around() {
        // Pushes and pops in runs of varying lengths (the ring grows from 8
        // while its head is mid-buffer, and wraps), against `VecDeque`.
        let (mut ring, mut model) = (Ring::default(), VecDeque::new());
        let mut id = 0u64;
        for round in 0..200u64 {
            for _ in 0..(round * 7) % 13 {
                let p = Packet::new(id, FlowId(0), 60 + id as u32 % 1400, Time(id));
                id += 1;
                ring.push_back(p);
                model.push_back(p);
            }
            for _ in 0..(round * 5) % 11 {
                match model.pop_front() {
                    Some(p) => {
                        assert_eq!(ring.front(), Some(&p));
                        assert_eq!(ring.take_front(), p);
                    }
                    None => assert_eq!(ring.front(), None),
                }
            }
            assert!(ring.iter().eq(model.iter()), "round {round}");
        }
        assert_eq!(ring.drain(), Vec::from(model));
        assert_eq!((ring.front(), ring.iter().count()), (None, 0));
    }

    fn pkt(id: u64, stream: u16, size: u32) -> Packet {
        let mut p = Packet::new(id, FlowId(0), size, Time(0));
        p.stream = stream;
        p
    }
    fn share(stream: u16, kbps: Option<u64>) -> StreamShare {
        StreamShare { stream, rate: kbps.map(Rate::kbps) }
    }
    fn offer(b: &mut BufferManaged, stream: u16, size: u32) -> bool {
        let mut rng = crate::rng::stream(1, 0);
        b.enqueue(Time(0), pkt(0, stream, size), &mut rng) == Verdict::Queued
    }

    /// [Guerin99 §III.A]'s example: streams of 20 % and 50 % of the rate get
    /// b = 0.2 B and 0.5 B; S = 0.3 B. Alone, a stream takes at most half of
    /// S (0.15 B) beyond its allocation; with both using 0.1 B of shared
    /// buffers, neither can take more although 0.1 B stay free.
    #[test]
    fn holes_rule_two_streams_twenty_and_fifty_percent() {
        let cfg = BufferConfig {
            buffers: 100,
            buff_size: 100,
            rate: Rate::kbps(1000),
            streams: vec![share(1, Some(200)), share(2, Some(500))],
        };
        let mut b = BufferManaged::new(cfg.clone()).unwrap();
        assert_eq!((b.pool(), b.allocation(1), b.allocation(2), b.shared_pool()), (10_000, 2_000, 5_000, 3_000));
        let mut n = 0;
        while offer(&mut b, 1, 100) {
            n += 1;
        }
        assert_eq!(n, 20 + 15, "its allocation, then 0.15 B of shared buffers");
        assert_eq!(b.shared_occupancy(1), 1_500);
        assert_eq!(b.shared_free(), 1_500);

        let mut b = BufferManaged::new(cfg).unwrap();
        for _ in 0..30 {
            assert!(offer(&mut b, 1, 100));
        }
        for _ in 0..60 {
            assert!(offer(&mut b, 2, 100));
        }
        assert_eq!((b.shared_occupancy(1), b.shared_occupancy(2), b.shared_free()), (1_000, 1_000, 1_000));
        assert!(!offer(&mut b, 1, 100), "1100 shared after > 900 free after");
        assert!(!offer(&mut b, 2, 100));
        assert_eq!(b.shared_free(), 1_000, "the holes: 0.1 B free, unused");
        // A best-effort stream has no allocation; 1000 free: it takes up to 500.
        let mut be = 0;
        while offer(&mut b, 9, 100) {
            be += 1;
        }
        assert_eq!(be, 5);
    }

    #[test]
    fn buff_size_rounds_small_packets_up() {
        let mut b = BufferManaged::new(BufferConfig {
            buffers: 10,
            buff_size: 512,
            rate: Rate::kbps(100),
            streams: vec![share(1, Some(50))],
        })
        .unwrap();
        assert_eq!(b.allocation(1), 2_560, "B = 5120, half of it");
        assert_eq!(b.counted(64), 512);
        assert_eq!(b.counted(1500), 1500);
        assert!(offer(&mut b, 1, 64));
        assert_eq!(b.occupancy(1), 512);
        assert!(offer(&mut b, 1, 1500));
        assert_eq!(b.occupancy(1), 2_012);
        assert_eq!((b.allocated_used(), b.shared_used()), (2_012, 0));
        // 2012 + 1000 = 3012: 452 beyond b, within the holes limit (S = 2560).
        assert!(offer(&mut b, 1, 1000));
        assert_eq!((b.allocated_used(), b.shared_used()), (2_560, 452));
        // A departure releases shared buffers first.
        assert!(matches!(b.dequeue(Time(1)), Dequeue::Packet(p) if p.size == 64));
        assert_eq!((b.occupancy(1), b.allocated_used(), b.shared_used()), (2_500, 2_500, 0));
    }

    #[test]
    fn slot_probes_report_real_and_counted_bytes_per_stream() {
        let mut b = BufferManaged::new(BufferConfig {
            buffers: 10,
            buff_size: 512,
            rate: Rate::kbps(100),
            streams: vec![share(4, Some(50)), share(2, None)],
        })
        .unwrap();
        assert!(offer(&mut b, 2, 156) && offer(&mut b, 4, 1052) && offer(&mut b, 4, 156));
        assert!(offer(&mut b, 7, 100), "a stream not configured takes the next slot");
        let probes = |b: &BufferManaged| {
            let mut v: Vec<(&'static str, f64)> = Vec::new();
            b.probe(&mut |n, x| v.push((n, x)));
            v
        };
        let v = probes(&b);
        let get = |n: &str| v.iter().find(|(m, _)| *m == n).map(|(_, x)| *x);
        // Slot 0 is stream 4 (the first configured), slot 1 stream 2, slot 2 stream 7.
        assert_eq!((get("slot0_bytes"), get("slot0_counted")), (Some(1208.0), Some(1564.0)));
        assert_eq!((get("slot1_bytes"), get("slot1_counted")), (Some(156.0), Some(512.0)));
        assert_eq!((get("slot2_bytes"), get("slot2_counted")), (Some(100.0), Some(512.0)));
        assert_eq!(get("slot3_bytes"), None);
        assert_eq!((b.queued_bytes(4), b.queued_bytes(2)), (1208, 156));
        while let Dequeue::Packet(_) = b.dequeue(Time(1)) {}
        assert!(probes(&b).iter().all(|&(_, x)| x == 0.0), "a drained queue reports nothing queued");
    }

    #[test]
    fn unknown_stream_ids_get_shared_buffers_only() {
        let mut b = BufferManaged::new(BufferConfig {
            buffers: 10,
            buff_size: 100,
            rate: Rate::kbps(100),
            streams: vec![share(3, Some(50))],
        })
        .unwrap();
        // B = 1000, b_3 = 500, S = 500: an unknown stream alone reaches S/2.
        assert_eq!((b.allocation(u16::MAX), b.shared_pool()), (0, 500));
        assert!(offer(&mut b, u16::MAX, 100) && offer(&mut b, u16::MAX, 100));
        assert!(!offer(&mut b, u16::MAX, 100), "300 shared after > 200 free after");
        assert_eq!((b.occupancy(u16::MAX), b.shared_occupancy(u16::MAX), b.shared_used()), (200, 200, 200));
        assert!(offer(&mut b, 3, 100), "the configured stream keeps its allocation");
        while let Dequeue::Packet(_) = b.dequeue(Time(1)) {}
        assert_eq!((b.occupancy(u16::MAX), b.occupancy(3), b.shared_free()), (0, 0, 500));
    }

    /// [Guerin99 §III.A]'s BUFF_SIZE example (digits reconstructed): an AF/BE
    /// queue of 100 packet buffers holds 100 × BUFF_SIZE bytes; a stream
    /// reserving 10 % of its rate gets 10 × BUFF_SIZE, so at most 10 packet
    /// buffers within its allocation however small its packets.
    #[test]
    fn seed_example_ten_percent_of_a_hundred_buffers_is_ten_packets() {
        let mut b = BufferManaged::new(BufferConfig {
            buffers: 100,
            buff_size: 512,
            rate: Rate::kbps(2000),
            streams: vec![share(1, Some(200))],
        })
        .unwrap();
        assert_eq!((b.pool(), b.allocation(1)), (100 * 512, 10 * 512));
        for _ in 0..10 {
            assert!(offer(&mut b, 1, 64));
        }
        assert_eq!((b.allocated_used(), b.shared_used()), (10 * 512, 0), "ten 64-byte packets fill 5120 bytes");
        assert!(offer(&mut b, 1, 64));
        assert_eq!(b.shared_used(), 512, "the eleventh is excess, in shared buffers");
    }

    #[test]
    fn physical_buffer_count_limits_packets() {
        let mut b = BufferManaged::new(BufferConfig {
            buffers: 3,
            buff_size: 10,
            rate: Rate::kbps(100),
            streams: vec![share(1, Some(100))],
        })
        .unwrap();
        // b = 30 bytes: three 10-byte packets fit; a fourth finds no buffer.
        assert!(offer(&mut b, 1, 10) && offer(&mut b, 1, 10) && offer(&mut b, 1, 10));
        assert!(!offer(&mut b, 1, 1));
        assert_eq!(b.backlog().packets, 3);
    }

    #[test]
    fn buffer_config_errors_name_the_field() {
        let ok = BufferConfig { buffers: 10, buff_size: 100, rate: Rate::kbps(100), streams: vec![share(1, Some(60))] };
        let field = |c: BufferConfig| BufferManaged::new(c).unwrap_err().field;
        assert_eq!(field(BufferConfig { buffers: 0, ..ok.clone() }), "buffers");
        assert_eq!(field(BufferConfig { buff_size: 0, ..ok.clone() }), "buff_size");
        assert_eq!(field(BufferConfig { rate: Rate(0), ..ok.clone() }), "rate");
        let over = BufferConfig { streams: vec![share(1, Some(60)), share(2, Some(50))], ..ok.clone() };
        let e = BufferManaged::new(over).unwrap_err();
        assert_eq!(e.field, "streams");
        assert_eq!(e.message, "reservations sum to 110000 bit/s, above the queue rate 100000 bit/s");
        let dup = BufferConfig { streams: vec![share(1, Some(10)), share(1, None)], ..ok.clone() };
        assert!(BufferManaged::new(dup).unwrap_err().message.contains("stream 1 twice"));
        assert!(BufferManaged::new(ok).is_ok());
    }

    #[test]
    fn buffer_managed_in_a_queue_is_fifo_and_counts_overlimit() {
        let mut rng = crate::rng::stream(1, 0);
        let cfg = BufferConfig { buffers: 4, buff_size: 100, rate: Rate::kbps(100), streams: vec![share(1, Some(50))] };
        let mut q = Queue::new(Box::new(BufferManaged::new(cfg).unwrap()));
        for i in 0..6 {
            q.enqueue(Time(0), pkt(i, (i % 2) as u16, 100), &mut rng);
        }
        let ids: Vec<u64> = std::iter::from_fn(|| match q.dequeue(Time(1)) {
            Dequeue::Packet(p) => Some(p.id),
            _ => None,
        })
        .collect();
        // b_1 = 200, S = 200. Stream 0 (not configured: shared only) takes
        // 100 (100 shared after <= 100 free after), then 200 > 0 is refused;
        // stream 1 takes its 200, then 100 shared after > 0 free after.
        assert_eq!(ids, vec![0, 1, 3]);
        assert_eq!(q.stats().drops_for(DropReason::Overlimit), 3);
        assert_eq!(q.kind(), "buffer_managed");
    }
}
