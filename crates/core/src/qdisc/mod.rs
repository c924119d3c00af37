//! The queue-discipline interface (Linux qdisc shape) and the common
//! wrapper that keeps every discipline's statistics.
//!
//! A discipline implements [`Qdisc`]: `enqueue` returns a [`Verdict`]
//! (queued, marked, dropped with a [`DropReason`], or queued after pushing
//! others out), `dequeue` returns a [`Dequeue`] (a packet, empty, or
//! `NotBefore(t)` for a shaper whose head is not yet conformant).
//!
//! Drivers never call a discipline directly: they hold a [`Queue`], whose
//! public `enqueue`/`dequeue` call the discipline's inner step and then
//! update [`QueueStats`] from what it returned, so no discipline can get its
//! counters wrong (ns-3 traffic-control's QueueDisc does the same).
//!
//! A driver that must also read the discipline's own state between steps
//! gives the [`Queue`] a [`shared::Shared`] and keeps a clone of it.

pub mod buffer;
pub mod cbt;
pub mod classful;
pub mod fifo;
pub mod mace;
pub mod red;
pub mod scfq;
pub mod shaper;
pub mod shared;

use crate::packet::Packet;
use crate::qdisc::buffer::BufferManaged;
use crate::qdisc::classful::{Classful, TagClassifier};
use crate::qdisc::scfq::Scfq;
use crate::rng::Rng;
use crate::units::Time;
use std::any::Any;

/// Why a packet was dropped. Counted separately in [`QueueStats`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum DropReason {
    /// The queue's packet or byte limit was reached (tail drop).
    Overlimit = 0,
    /// RED probabilistic early drop (min_th <= avg < max_th, or < 2*max_th
    /// when gentle); also the CBT family's RED step.
    EarlyRandom,
    /// RED forced drop (avg >= max_th, or above 2*max_th when gentle).
    Forced,
    /// A class exceeded its threshold (CBT, D-CBT).
    ClassThreshold,
    /// Pushed out of a shared buffer to make room for a higher class.
    PushedOut,
    /// A shaper's own buffer was full.
    ShaperBuffer,
    /// No class matched and the discipline has no default.
    Unclassified,
    /// A meter or policer found the packet non-conformant. Today a shaper
    /// produces it, for a packet larger than its bucket depth (which could
    /// never conform); policers will too.
    Policed,
    /// Dropped by a flow-termination mechanism (PCN). Nothing produces it
    /// yet: the PCN ingress termination ([Zhang07]
    /// §4) will; the result column `drops_terminated` is kept for it.
    Terminated,
    /// A frame whose IP header does not parse (a length beyond the frame, a
    /// bad version or header length): qoslab-router drops it before the
    /// stages. The simulator builds its packets and never produces it.
    Malformed,
    /// A frame larger than the router can hold or send (a pool slot, the
    /// pacer's burst): qoslab-router drops it on arrival. Not in the simulator.
    Oversize,
    /// Frames the kernel dropped before qoslab-router read them (a full
    /// socket buffer or ring: `PACKET_STATISTICS`, `XDP_STATISTICS`),
    /// counted on the direction of the interface they arrived on. Not in the
    /// simulator.
    Kernel,
    /// A frame that found its direction's share of the router's buffer pool
    /// full while it would wait out the link's delay (qoslab-router's delay
    /// line). Not in the simulator.
    DelayLine,
}

impl DropReason {
    pub const COUNT: usize = 13;
    pub const ALL: [DropReason; DropReason::COUNT] = [
        DropReason::Overlimit,
        DropReason::EarlyRandom,
        DropReason::Forced,
        DropReason::ClassThreshold,
        DropReason::PushedOut,
        DropReason::ShaperBuffer,
        DropReason::Unclassified,
        DropReason::Policed,
        DropReason::Terminated,
        DropReason::Malformed,
        DropReason::Oversize,
        DropReason::Kernel,
        DropReason::DelayLine,
    ];
    /// Snake-case name, used in result columns (`drops_early_random`).
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::Overlimit => "overlimit",
            DropReason::EarlyRandom => "early_random",
            DropReason::Forced => "forced",
            DropReason::ClassThreshold => "class_threshold",
            DropReason::PushedOut => "pushed_out",
            DropReason::ShaperBuffer => "shaper_buffer",
            DropReason::Unclassified => "unclassified",
            DropReason::Policed => "policed",
            DropReason::Terminated => "terminated",
            DropReason::Malformed => "malformed",
            DropReason::Oversize => "oversize",
            DropReason::Kernel => "kernel",
            DropReason::DelayLine => "delay_line",
        }
    }
}

/// Why a packet was marked instead of dropped.
///
/// RED (and the CBT family, through RED's verdict) marks an ECN-capable
/// packet only in the early region; where a drop is forced it drops, ECN or
/// not (FJ93; RFC 3168 §7 leaves forced marking optional and qoslab has no
/// such option), so there is no "forced mark" reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum MarkReason {
    /// RED probabilistic ECN mark, in the early (or gentle) region instead
    /// of an early drop.
    EcnEarly = 0,
    /// PCN threshold (admission) marking: the virtual-queue meter
    /// (`pcn::VirtualQueueMeter`, [Zhang07 §3]).
    PcnThreshold,
    /// PCN excess-traffic (termination) marking: the excess meter
    /// (`pcn::ExcessMeter`, [Zhang07 §4]) and the
    /// policer's `mark` action.
    PcnExcess,
}

impl MarkReason {
    pub const COUNT: usize = 3;
    pub const ALL: [MarkReason; MarkReason::COUNT] =
        [MarkReason::EcnEarly, MarkReason::PcnThreshold, MarkReason::PcnExcess];
    pub fn as_str(self) -> &'static str {
        match self {
            MarkReason::EcnEarly => "ecn_early",
            MarkReason::PcnThreshold => "pcn_threshold",
            MarkReason::PcnExcess => "pcn_excess",
        }
    }
}

/// A packet a discipline gave up, and why.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dropped {
    pub packet: Packet,
    pub reason: DropReason,
}

/// What `enqueue` did with a packet.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Accepted as it was.
    Queued,
    /// Accepted with a congestion mark set on it.
    Marked(MarkReason),
    /// Refused; the packet comes back so the driver can free its bytes.
    Dropped(Dropped),
    /// Accepted after dropping already-queued packets to make room.
    QueuedPushingOut(Vec<Dropped>),
}

/// What `dequeue` produced.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dequeue {
    Packet(Packet),
    /// Nothing queued.
    Empty,
    /// Packets are queued but none may leave before this time (shapers).
    NotBefore(Time),
}

/// Packets and bytes held by a queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Backlog {
    pub packets: u32,
    pub bytes: u64,
}

impl Backlog {
    #[inline]
    pub fn add(&mut self, p: &Packet) {
        self.packets += 1;
        self.bytes += p.size as u64;
    }
    #[inline]
    fn add_backlog(&mut self, b: Backlog) {
        self.packets += b.packets;
        self.bytes += b.bytes;
    }
    #[inline]
    pub fn sub(&mut self, p: &Packet) {
        debug_assert!(self.packets > 0 && self.bytes >= p.size as u64);
        self.packets -= 1;
        self.bytes -= p.size as u64;
    }
    pub fn is_empty(&self) -> bool {
        self.packets == 0
    }
}

/// A queue limit in packets, bytes, or both (whichever is reached first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    pub packets: Option<u32>,
    pub bytes: Option<u64>,
}

impl Limit {
    pub const fn packets(n: u32) -> Limit {
        Limit { packets: Some(n), bytes: None }
    }
    pub const fn bytes(n: u64) -> Limit {
        Limit { packets: None, bytes: Some(n) }
    }
    pub const UNLIMITED: Limit = Limit { packets: None, bytes: None };
    /// Would `backlog` plus a packet of `size` bytes exceed the limit?
    #[inline]
    pub fn would_exceed(&self, backlog: Backlog, size: u32) -> bool {
        self.packets.is_some_and(|n| backlog.packets + 1 > n)
            || self.bytes.is_some_and(|n| backlog.bytes + size as u64 > n)
    }
    /// Is `backlog` within the limit?
    pub fn holds(&self, backlog: Backlog) -> bool {
        self.packets.is_none_or(|n| backlog.packets <= n) && self.bytes.is_none_or(|n| backlog.bytes <= n)
    }
}

/// Counters kept by [`Queue`] from the verdicts of its discipline.
///
/// The drop and mark counts by reason are kept apart, allocated at the
/// queue's first drop or mark: most link directions of a large network
/// never drop (a network of 1,800 access links saves 160 bytes a
/// direction), and the counters every packet updates stay together.
#[derive(Clone, Debug, Default)]
pub struct QueueStats {
    pub arrivals: u64,
    pub arrival_bytes: u64,
    pub departures: u64,
    pub departure_bytes: u64,
    /// Largest backlog seen, in packets and in bytes.
    pub peak_packets: u32,
    pub peak_bytes: u64,
    /// Integral of the backlog over time (packet-nanoseconds, byte-nanoseconds),
    /// for exact time averages.
    pub area_packets_ns: u128,
    pub area_bytes_ns: u128,
    /// Integral of the sojourn time of departed packets (ns), for the mean.
    pub sojourn_sum_ns: u128,
    pub sojourn_max_ns: u64,
    losses: Option<Box<Losses>>,
}

/// Drops and marks by reason (see [`QueueStats`]).
#[derive(Clone, Debug, Default, PartialEq)]
struct Losses {
    drops: [u64; DropReason::COUNT],
    drop_bytes: [u64; DropReason::COUNT],
    marks: [u64; MarkReason::COUNT],
}

static NO_LOSSES: Losses =
    Losses { drops: [0; DropReason::COUNT], drop_bytes: [0; DropReason::COUNT], marks: [0; MarkReason::COUNT] };

impl PartialEq for QueueStats {
    fn eq(&self, o: &QueueStats) -> bool {
        (self.arrivals, self.arrival_bytes, self.departures, self.departure_bytes)
            == (o.arrivals, o.arrival_bytes, o.departures, o.departure_bytes)
            && (self.peak_packets, self.peak_bytes, self.sojourn_max_ns)
                == (o.peak_packets, o.peak_bytes, o.sojourn_max_ns)
            && (self.area_packets_ns, self.area_bytes_ns, self.sojourn_sum_ns)
                == (o.area_packets_ns, o.area_bytes_ns, o.sojourn_sum_ns)
            && self.losses() == o.losses()
    }
}

impl QueueStats {
    fn losses(&self) -> &Losses {
        self.losses.as_deref().unwrap_or(&NO_LOSSES)
    }
    /// Packets dropped, by [`DropReason`] (index `reason as usize`).
    pub fn drops(&self) -> &[u64; DropReason::COUNT] {
        &self.losses().drops
    }
    /// Bytes dropped, by [`DropReason`].
    pub fn drop_bytes(&self) -> &[u64; DropReason::COUNT] {
        &self.losses().drop_bytes
    }
    /// Packets marked, by [`MarkReason`].
    pub fn marks(&self) -> &[u64; MarkReason::COUNT] {
        &self.losses().marks
    }
    /// Counts a drop of `bytes` for `reason`.
    pub fn count_drop(&mut self, reason: DropReason, bytes: u64) {
        let l = self.losses.get_or_insert_with(Box::default);
        l.drops[reason as usize] += 1;
        l.drop_bytes[reason as usize] += bytes;
    }
    /// Counts a mark for `reason`.
    pub fn count_mark(&mut self, reason: MarkReason) {
        self.losses.get_or_insert_with(Box::default).marks[reason as usize] += 1;
    }
    pub fn total_drops(&self) -> u64 {
        self.drops().iter().sum()
    }
    pub fn total_marks(&self) -> u64 {
        self.marks().iter().sum()
    }
    pub fn drops_for(&self, r: DropReason) -> u64 {
        self.drops()[r as usize]
    }
    pub fn marks_for(&self, r: MarkReason) -> u64 {
        self.marks()[r as usize]
    }
}

/// A named internal variable of a discipline, for time series (e.g. `red_avg`).
pub type ProbeSink<'a> = &'a mut dyn FnMut(&'static str, f64);

/// The inner step every queue discipline implements. Called only through
/// [`Queue`], which does the counting. (`Any`: [`Queue::new`] recognises
/// the disciplines it calls without a dynamic call, see [`Queue`].)
pub trait Qdisc: Any {
    /// Short name of the discipline (`"fifo"`, `"red"`, ...).
    fn kind(&self) -> &'static str;
    /// Offers a packet. `pkt.enqueued` is already set to `now`.
    fn enqueue(&mut self, now: Time, pkt: Packet, rng: &mut Rng) -> Verdict;
    /// Takes the next packet to send, if one may leave at `now`.
    fn dequeue(&mut self, now: Time) -> Dequeue;
    /// The packet `dequeue` would return next, ignoring shaping.
    fn peek(&self) -> Option<&Packet>;
    /// What is held now.
    fn backlog(&self) -> Backlog;
    /// Shows `f` every packet held, each once, in no promised order (a
    /// classful discipline visits its children's packets). What it visits
    /// adds up to [`Qdisc::backlog`], in packets and in bytes; drivers use
    /// it to count per flow what is still queued at the end of a run.
    fn for_each_packet(&self, f: &mut dyn FnMut(&Packet));
    /// Drops everything held, returning it (the driver frees the bytes).
    fn reset(&mut self) -> Vec<Packet>;
    /// Reports internal variables worth sampling (`red_avg`, class averages...).
    fn probe(&self, _sink: ProbeSink<'_>) {}
    /// When the discipline next needs `on_tick` (timers are the driver's job).
    fn next_deadline(&self) -> Option<Time> {
        None
    }
    /// Periodic work (flow-table sweeps, measurement intervals).
    fn on_tick(&mut self, _now: Time) {}
    /// Child queues of a classful discipline, in band order (none for a leaf),
    /// so that drivers can report each child's statistics.
    fn children(&self) -> &[Queue] {
        &[]
    }
}

/// The edge router's root discipline: SCFQ between child queues chosen by
/// the packet's class tag ([Guerin99 §III]; `scenario`'s edge registry and
/// the QoS benchmark build it).
pub type ScfqRoot = Classful<TagClassifier, Scfq>;

/// The discipline a [`Queue`] wraps. Two disciplines are held as
/// themselves, so their steps are direct calls: the buffer-managed FIFO,
/// the leaf the edge router's SCFQ parent calls twice a packet, whose step
/// the compiler inlines into the wrapper's, and that SCFQ parent itself,
/// the edge router's root, whose step is inlined only into the edge's own
/// entry points ([`Queue::enqueue_inlined`], [`Queue::dequeue_inlined`])
/// and is an out-of-line call from every other. The packet, the verdict
/// and the dequeued packet then pass in registers instead of through
/// memory at each layer. Every other discipline is called through `dyn
/// Qdisc` (docs/performance.md, "The edge QoS fast path, third pass",
/// "fourth pass" and "The simulator's share of the fourth pass, fixed").
// `repr(u8)`: an explicit tag. The niche the compiler chose otherwise (in
// `BufferManaged`) took 8 instructions to decode into three variants on
// every call, the `dyn` ones included (docs/performance.md, "The
// simulator's share of the fourth pass, fixed").
#[repr(u8)]
enum Inner {
    Managed(BufferManaged),
    Scfq(ScfqRoot),
    Dyn(Box<dyn Qdisc + Send>),
}

/// An SCFQ parent's step called out of line: from [`Queue::enqueue`],
/// so that a caller running any discipline (the simulator's port, a
/// classful parent's child) does not carry the root's inlined code beside
/// its `dyn` call (14 more instructions a `Port::dequeue` in the
/// simulator: docs/performance.md, "The simulator's share of the fourth
/// pass, fixed"), and a parent's step, inlined into the wrapper's, does not
/// recurse into itself (the compiler then inlined none of them:
/// docs/performance.md, "The edge QoS fast path, third pass", the third
/// variant).
#[inline(never)]
fn scfq_enqueue(q: &mut ScfqRoot, now: Time, pkt: Packet, rng: &mut Rng) -> Verdict {
    q.enqueue_step(now, pkt, rng)
}

/// See [`scfq_enqueue`].
#[inline(never)]
fn scfq_dequeue(q: &mut ScfqRoot, now: Time) -> Dequeue {
    q.dequeue_step(now)
}

impl Inner {
    fn new(q: Box<dyn Qdisc + Send>) -> Inner {
        let any = &*q as &dyn Any;
        if any.is::<BufferManaged>() {
            let any: Box<dyn Any + Send> = q;
            Inner::Managed(*any.downcast::<BufferManaged>().expect("checked just above"))
        } else if any.is::<ScfqRoot>() {
            let any: Box<dyn Any + Send> = q;
            Inner::Scfq(*any.downcast::<ScfqRoot>().expect("checked just above"))
        } else {
            Inner::Dyn(q)
        }
    }
    #[inline]
    fn get(&self) -> &dyn Qdisc {
        match self {
            Inner::Managed(q) => q,
            Inner::Scfq(q) => q,
            Inner::Dyn(q) => &**q,
        }
    }
    #[inline]
    fn get_mut(&mut self) -> &mut dyn Qdisc {
        match self {
            Inner::Managed(q) => q,
            Inner::Scfq(q) => q,
            Inner::Dyn(q) => &mut **q,
        }
    }
    /// The discipline's step. `INLINE_SCFQ`: an SCFQ discipline's step is
    /// inlined here (the edge's entry points); otherwise it is an
    /// out-of-line call (see [`scfq_enqueue`]).
    #[inline(always)]
    fn enqueue<const INLINE_SCFQ: bool>(&mut self, now: Time, pkt: Packet, rng: &mut Rng) -> Verdict {
        match self {
            Inner::Managed(q) => q.enqueue(now, pkt, rng),
            Inner::Scfq(q) if INLINE_SCFQ => q.enqueue_step(now, pkt, rng),
            Inner::Scfq(q) => scfq_enqueue(q, now, pkt, rng),
            Inner::Dyn(q) => q.enqueue(now, pkt, rng),
        }
    }
    /// See [`Inner::enqueue`].
    #[inline(always)]
    fn dequeue<const INLINE_SCFQ: bool>(&mut self, now: Time) -> Dequeue {
        match self {
            Inner::Managed(q) => q.dequeue(now),
            Inner::Scfq(q) if INLINE_SCFQ => q.dequeue_step(now),
            Inner::Scfq(q) => scfq_dequeue(q, now),
            Inner::Dyn(q) => q.dequeue(now),
        }
    }
    #[inline]
    fn peek(&self) -> Option<&Packet> {
        match self {
            Inner::Managed(q) => q.peek(),
            Inner::Scfq(q) => q.peek(),
            Inner::Dyn(q) => q.peek(),
        }
    }
    #[inline]
    fn backlog(&self) -> Backlog {
        match self {
            Inner::Managed(q) => q.backlog(),
            Inner::Scfq(q) => q.backlog(),
            Inner::Dyn(q) => q.backlog(),
        }
    }
}

/// A discipline with its statistics: the only way drivers use a [`Qdisc`].
pub struct Queue {
    inner: Inner,
    stats: QueueStats,
    last_change: Time,
    held: Backlog,
    /// For a drop-tail FIFO, the largest packet an empty one admits (its
    /// byte limit, else `u64::MAX`); 0 for every other discipline. See
    /// [`Queue::try_pass`].
    pass_bytes: u64,
}

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queue").field("kind", &self.kind()).field("stats", &self.stats).finish()
    }
}

impl Queue {
    pub fn new(inner: Box<dyn Qdisc + Send>) -> Queue {
        // A FIFO's limit is at least one packet (`FifoConfig::validate`), so
        // an empty one admits any packet within its byte limit.
        let pass_bytes = (&*inner as &dyn Any)
            .downcast_ref::<fifo::Fifo>()
            .map_or(0, |f| f.config().limit.bytes.unwrap_or(u64::MAX));
        Queue {
            inner: Inner::new(inner),
            stats: QueueStats::default(),
            last_change: Time::ZERO,
            held: Backlog::default(),
            pass_bytes,
        }
    }
    pub fn kind(&self) -> &'static str {
        self.inner.get().kind()
    }
    #[inline]
    pub fn stats(&self) -> &QueueStats {
        &self.stats
    }
    #[inline]
    pub fn backlog(&self) -> Backlog {
        // A FIFO's backlog changes only through this wrapper's enqueue,
        // dequeue and reset, so `held` is the FIFO's own (no dynamic call).
        if self.pass_bytes != 0 {
            return self.held();
        }
        self.inner.backlog()
    }
    /// [`Queue::backlog`] without asking the discipline: what it held after
    /// its last change. A discipline's backlog changes only in `enqueue`,
    /// in a `dequeue` that returns a packet and in `reset`, and the wrapper
    /// reads it after each (the time-average statistics rest on the same
    /// rule). For classful parents, which check their children on every
    /// packet (docs/performance.md, "The edge QoS fast path after the profile").
    #[inline]
    pub fn held(&self) -> Backlog {
        debug_assert_eq!(self.held, self.inner.backlog(), "{}: backlog changed outside the wrapper", self.kind());
        self.held
    }
    #[inline]
    pub fn peek(&self) -> Option<&Packet> {
        self.inner.peek()
    }
    /// Shows `f` every packet the discipline holds (see [`Qdisc::for_each_packet`]).
    pub fn for_each_packet(&self, f: &mut dyn FnMut(&Packet)) {
        self.inner.get().for_each_packet(f)
    }
    pub fn probe(&self, sink: ProbeSink<'_>) {
        self.inner.get().probe(sink)
    }
    #[inline]
    pub fn next_deadline(&self) -> Option<Time> {
        // A FIFO has no timer.
        if self.pass_bytes != 0 {
            return None;
        }
        self.inner.get().next_deadline()
    }
    pub fn on_tick(&mut self, now: Time) {
        self.inner.get_mut().on_tick(now)
    }
    /// Child queues of a classful discipline (empty for a leaf).
    pub fn children(&self) -> &[Queue] {
        self.inner.get().children()
    }
    /// The discipline itself, for inspection in tests and probes.
    pub fn inner(&self) -> &dyn Qdisc {
        self.inner.get()
    }

    #[inline]
    fn advance(&mut self, now: Time) {
        let dt = now.0.saturating_sub(self.last_change.0) as u128;
        if dt > 0 {
            // An empty queue adds nothing (no 128-bit products to form).
            if self.held.packets > 0 {
                self.stats.area_packets_ns += self.held.packets as u128 * dt;
                self.stats.area_bytes_ns += self.held.bytes as u128 * dt;
            }
            self.last_change = now;
        }
    }

    #[inline]
    fn count_drop(&mut self, d: &Dropped) {
        self.stats.count_drop(d.reason, d.packet.size as u64);
    }

    /// Records `held`, the discipline's backlog after a change, and its peak.
    /// The verdict says what changed (a packet queued or marked adds it, a
    /// refusal changes nothing, a departure removes it), so the common
    /// cases need no call into the discipline; debug builds check that
    /// the discipline agrees.
    #[inline]
    fn after_change(&mut self, held: Backlog) {
        debug_assert_eq!(held, self.inner.backlog(), "{}: backlog differs from what its verdict says", self.kind());
        self.held = held;
        if self.held.packets > self.stats.peak_packets {
            self.stats.peak_packets = self.held.packets;
        }
        if self.held.bytes > self.stats.peak_bytes {
            self.stats.peak_bytes = self.held.bytes;
        }
    }

    /// Offers `pkt` at `now`; counts the arrival and whatever the verdict says.
    /// (`inline(always)`: with a buffer-managed discipline's step inlined
    /// here the compiler stopped inlining the wrapper into its callers,
    /// which cost the FIFO base path 45 instructions a packet.) The edge's
    /// SCFQ root is called out of line: see [`Queue::enqueue_inlined`].
    #[inline(always)]
    pub fn enqueue(&mut self, now: Time, pkt: Packet, rng: &mut Rng) -> Verdict {
        self.enqueue_at::<false>(now, pkt, rng)
    }

    /// [`Queue::enqueue`] with the edge's SCFQ root's step
    /// ([`ScfqRoot`]) inlined into the caller: the same counting and
    /// verdicts, for the edge router's path, whose port it roots (the
    /// router's datapath, the QoS benchmarks). A caller that mostly runs
    /// other disciplines (the simulator) calls [`Queue::enqueue`] and does
    /// not carry the root's code (docs/performance.md, "The simulator's
    /// share of the fourth pass, fixed").
    #[inline(always)]
    pub fn enqueue_inlined(&mut self, now: Time, pkt: Packet, rng: &mut Rng) -> Verdict {
        self.enqueue_at::<true>(now, pkt, rng)
    }

    #[inline(always)]
    fn enqueue_at<const INLINE_SCFQ: bool>(&mut self, now: Time, mut pkt: Packet, rng: &mut Rng) -> Verdict {
        self.advance(now);
        self.stats.arrivals += 1;
        self.stats.arrival_bytes += pkt.size as u64;
        pkt.enqueued = now;
        // `pkt` is not read after the call, so it moves into the discipline
        // without a copy, and the common verdicts are built anew rather than
        // copied out of the discipline's answer: a 56-byte copy of a value
        // just written by narrower stores stalls on store-to-load forwarding
        // (docs/performance.md, "The edge QoS fast path after the profile").
        let queued = Backlog { packets: 1, bytes: pkt.size as u64 };
        let mut held = self.held;
        match self.inner.enqueue::<INLINE_SCFQ>(now, pkt, rng) {
            Verdict::Queued => {
                held.add_backlog(queued);
                self.after_change(held);
                Verdict::Queued
            }
            Verdict::Marked(r) => {
                self.stats.count_mark(r);
                held.add_backlog(queued);
                self.after_change(held);
                Verdict::Marked(r)
            }
            v => {
                match &v {
                    Verdict::Dropped(d) => self.count_drop(d),
                    Verdict::QueuedPushingOut(victims) => {
                        for d in victims {
                            self.count_drop(d);
                        }
                        held = self.inner.backlog();
                    }
                    Verdict::Queued | Verdict::Marked(_) => unreachable!("handled above"),
                }
                self.after_change(held);
                v
            }
        }
    }

    /// Is the discipline a drop-tail FIFO (whose packets may pass, see
    /// [`Queue::try_pass`])?
    #[inline]
    pub fn is_fifo(&self) -> bool {
        self.pass_bytes != 0
    }

    /// Passes `pkt` through an empty drop-tail FIFO at `now`, as a driver
    /// whose transmitter is free would with [`Queue::enqueue`] then
    /// [`Queue::dequeue`] at the same instant: the same counts (an arrival
    /// and a departure, a peak of at least this one packet, a sojourn of
    /// 0), the same `pkt.enqueued`, and the discipline left as it was,
    /// empty. `false` (and nothing changed) when the discipline is not a
    /// FIFO, holds packets, or would refuse `pkt` (its byte limit): the
    /// driver then takes the usual path. A simulator's idle access link
    /// costs no call into its FIFO this way (docs/performance.md).
    #[inline]
    pub fn try_pass(&mut self, now: Time, pkt: &mut Packet) -> bool {
        let size = pkt.size as u64;
        if self.pass_bytes == 0 || self.held.packets != 0 || size > self.pass_bytes {
            return false;
        }
        debug_assert_eq!(self.inner.backlog(), Backlog::default(), "fifo: backlog differs from what the wrapper holds");
        self.advance(now);
        pkt.enqueued = now;
        let s = &mut self.stats;
        s.arrivals += 1;
        s.arrival_bytes += size;
        s.departures += 1;
        s.departure_bytes += size;
        s.peak_packets = s.peak_packets.max(1);
        s.peak_bytes = s.peak_bytes.max(size);
        true
    }

    /// Takes the next packet at `now`; counts the departure and its sojourn.
    /// (`inline(always)`: see [`Queue::enqueue`].)
    #[inline(always)]
    pub fn dequeue(&mut self, now: Time) -> Dequeue {
        self.dequeue_at::<false>(now)
    }

    /// [`Queue::dequeue`] with the edge's SCFQ root's step inlined (see
    /// [`Queue::enqueue_inlined`]).
    #[inline(always)]
    pub fn dequeue_inlined(&mut self, now: Time) -> Dequeue {
        self.dequeue_at::<true>(now)
    }

    #[inline(always)]
    fn dequeue_at<const INLINE_SCFQ: bool>(&mut self, now: Time) -> Dequeue {
        self.advance(now);
        let d = self.inner.dequeue::<INLINE_SCFQ>(now);
        if let Dequeue::Packet(p) = &d {
            self.stats.departures += 1;
            self.stats.departure_bytes += p.size as u64;
            let soj = now.0.saturating_sub(p.enqueued.0);
            self.stats.sojourn_sum_ns += soj as u128;
            if soj > self.stats.sojourn_max_ns {
                self.stats.sojourn_max_ns = soj;
            }
            let mut held = self.held;
            held.sub(p);
            self.after_change(held);
        }
        d
    }

    /// Empties the queue at `now`, returning what it held. A reset is not a
    /// drop: the driver decides how to account for the packets.
    pub fn reset(&mut self, now: Time) -> Vec<Packet> {
        self.advance(now);
        let v = self.inner.get_mut().reset();
        self.after_change(self.inner.backlog());
        v
    }

    /// Time-average backlog in packets over `[0, now]`.
    pub fn mean_backlog_packets(&self, now: Time) -> f64 {
        if now.0 == 0 {
            return 0.0;
        }
        let tail = self.held.packets as u128 * now.0.saturating_sub(self.last_change.0) as u128;
        (self.stats.area_packets_ns + tail) as f64 / now.0 as f64
    }
    /// Time-average backlog in bytes over `[0, now]`.
    pub fn mean_backlog_bytes(&self, now: Time) -> f64 {
        if now.0 == 0 {
            return 0.0;
        }
        let tail = self.held.bytes as u128 * now.0.saturating_sub(self.last_change.0) as u128;
        (self.stats.area_bytes_ns + tail) as f64 / now.0 as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::FlowId;
    use crate::qdisc::buffer::{BufferConfig, StreamShare};
    use crate::qdisc::fifo::{Fifo, FifoConfig};
    use crate::units::Rate;

    fn managed() -> BufferManaged {
        let streams = vec![StreamShare { stream: 1, rate: Some(Rate::kbps(100)) }];
        BufferManaged::new(BufferConfig { buffers: 4, buff_size: 100, rate: Rate::mbps(1), streams }).unwrap()
    }

    #[test]
    fn queue_size_is_its_statistics_and_a_buffer_managed_discipline() {
        // Held in place (see `Inner`), so every `Queue` has room for one.
        let (q, b) = (std::mem::size_of::<Queue>(), std::mem::size_of::<BufferManaged>());
        assert!(q <= b + std::mem::size_of::<QueueStats>() + 48, "{q}");
        // The SCFQ root, held in place too, needs no more room than the leaf.
        assert!(std::mem::size_of::<ScfqRoot>() <= b);
    }

    #[test]
    fn queue_holds_a_buffer_managed_discipline_as_itself_and_others_behind_dyn() {
        let q = Queue::new(Box::new(managed()));
        assert!(matches!(q.inner, Inner::Managed(_)));
        assert_eq!(q.kind(), "buffer_managed");
        let q = Queue::new(Box::new(Fifo::new(FifoConfig { limit: Limit::packets(4) }).unwrap()));
        assert!(matches!(q.inner, Inner::Dyn(_)));
        assert_eq!(q.kind(), "fifo");
    }

    #[test]
    fn passing_through_an_empty_fifo_counts_as_enqueue_then_dequeue() {
        // A driver with one transmitter, twice: one passes a packet through
        // when the wire is free and the FIFO empty, the other always
        // enqueues then dequeues. Same packets, answers and statistics,
        // with a byte limit that refuses the largest packets.
        let fifo = || {
            Queue::new(Box::new(
                Fifo::new(FifoConfig { limit: Limit { packets: Some(3), bytes: Some(1200) } }).unwrap(),
            ))
        };
        let (mut pass, mut plain) = (fifo(), fifo());
        let (mut r1, mut r2) = (crate::rng::stream(1, 0), crate::rng::stream(1, 0));
        let mut draw = crate::rng::stream(7, 0);
        let (mut t, mut free_at, mut passed) = (0u64, 0u64, 0);
        for i in 0..5_000u64 {
            t += rand::Rng::random_range(&mut draw, 0..2_000);
            let size = rand::Rng::random_range(&mut draw, 40..1500);
            let mut p = Packet::new(i, FlowId(0), size, Time(t));
            let (mut out1, mut out2) = (None, None);
            // The wire frees at `free_at`: each queue sends its head then.
            while free_at <= t {
                let (a, b) = (pass.dequeue(Time(free_at)), plain.dequeue(Time(free_at)));
                assert_eq!(a, b);
                match a {
                    Dequeue::Packet(x) => free_at += x.size as u64,
                    _ => break,
                }
            }
            let free = free_at <= t;
            if free && pass.try_pass(Time(t), &mut p) {
                passed += 1;
                out1 = Some(p);
            } else {
                pass.enqueue(Time(t), p, &mut r1);
            }
            let v = plain.enqueue(Time(t), p, &mut r2);
            if free && v == Verdict::Queued {
                match plain.dequeue(Time(t)) {
                    Dequeue::Packet(x) => out2 = Some(x),
                    d => panic!("{d:?}"),
                }
            }
            if let Some(x) = out1.or(out2) {
                free_at = t + x.size as u64;
            }
            assert_eq!(out1.is_some(), out2.is_some(), "packet {i} at {t}");
            assert_eq!(out1.map(|x| (x.id, x.enqueued)), out2.map(|x| (x.id, x.enqueued)));
            assert_eq!(pass.stats(), plain.stats(), "packet {i} at {t}");
            assert_eq!(pass.held(), plain.held());
        }
        assert!(passed > 500 && plain.stats().arrivals > passed + 500, "both paths ran: {passed} passed");
        assert!(plain.stats().drops_for(DropReason::Overlimit) > 0);
        assert_eq!(pass.mean_backlog_packets(Time(t)), plain.mean_backlog_packets(Time(t)));
    }

    #[test]
    fn only_an_empty_fifo_lets_a_packet_pass() {
        let mut rng = crate::rng::stream(1, 0);
        let mut p = Packet::new(0, FlowId(0), 100, Time(0));
        let mut q = Queue::new(Box::new(managed()));
        assert!(!q.try_pass(Time(0), &mut p));
        let mut q = Queue::new(Box::new(Fifo::new(FifoConfig { limit: Limit::bytes(99) }).unwrap()));
        assert!(!q.try_pass(Time(0), &mut p), "beyond the byte limit");
        let mut q = Queue::new(Box::new(Fifo::new(FifoConfig::default()).unwrap()));
        q.enqueue(Time(0), p, &mut rng);
        assert!(!q.try_pass(Time(1), &mut p), "the FIFO holds a packet");
        assert_eq!(q.stats().arrivals, 1);
    }

    #[test]
    fn queue_counts_a_held_buffer_managed_discipline_as_one_behind_dyn() {
        // The same packets through the concrete variant and through `dyn`:
        // same verdicts, answers and statistics.
        let mut direct = Queue::new(Box::new(managed()));
        let mut boxed = Queue { inner: Inner::Dyn(Box::new(managed())), ..Queue::new(Box::new(managed())) };
        let (mut r1, mut r2) = (crate::rng::stream(1, 0), crate::rng::stream(1, 0));
        for i in 0..40u64 {
            let mut p = Packet::new(i, FlowId(0), 60 + (i as u32 * 37) % 200, Time(i));
            p.stream = (i % 3) as u16;
            assert_eq!(direct.enqueue(Time(10 * i), p, &mut r1), boxed.enqueue(Time(10 * i), p, &mut r2));
            if i % 3 == 0 {
                assert_eq!(direct.dequeue(Time(10 * i + 5)), boxed.dequeue(Time(10 * i + 5)));
            }
        }
        assert_eq!(direct.stats(), boxed.stats());
        assert_eq!(direct.held(), boxed.held());
        assert_eq!(direct.reset(Time(500)), boxed.reset(Time(500)));
    }

    /// SCFQ over a nested SCFQ parent (two buffer-managed leaves) and a
    /// buffer-managed leaf; `held`: every discipline as itself, or else
    /// every one behind `dyn`.
    fn scfq_tree(held: bool) -> Queue {
        let q = |d: Box<dyn Qdisc + Send>| {
            if held {
                Queue::new(d)
            } else {
                Queue { inner: Inner::Dyn(d), ..Queue::new(Box::new(Fifo::new(FifoConfig::default()).unwrap())) }
            }
        };
        let scfq = |kids: Vec<Queue>| -> Box<dyn Qdisc + Send> {
            let rates = vec![Rate::kbps(500), Rate::kbps(1500)];
            Box::new(ScfqRoot::new(TagClassifier::identity(2), Scfq::new(rates).unwrap(), kids))
        };
        let nested = q(scfq(vec![q(Box::new(managed())), q(Box::new(managed()))]));
        q(scfq(vec![nested, q(Box::new(managed()))]))
    }

    #[test]
    fn queue_counts_a_held_scfq_root_as_one_behind_dyn() {
        // The root and its nested SCFQ child held as themselves (the nested
        // one called out of line), the root's step inlined (the edge's
        // entries) or called out of line (`enqueue` / `dequeue`), against
        // every discipline behind `dyn`: same verdicts, answers and
        // statistics at every level.
        let (mut inlined, mut direct, mut boxed) = (scfq_tree(true), scfq_tree(true), scfq_tree(false));
        assert!(matches!(direct.inner, Inner::Scfq(_)));
        assert!(matches!(direct.children()[0].inner, Inner::Scfq(_)));
        assert!(matches!(boxed.inner, Inner::Dyn(_)));
        let mut r = [crate::rng::stream(1, 0), crate::rng::stream(1, 0), crate::rng::stream(1, 0)];
        for i in 0..200u64 {
            let mut p = Packet::new(i, FlowId(0), 60 + (i as u32 * 37) % 400, Time(i));
            p.stream = (i % 3) as u16;
            p.class = crate::packet::ClassTag((i % 3) as u8);
            let v = boxed.enqueue(Time(10 * i), p, &mut r[0]);
            assert_eq!(inlined.enqueue_inlined(Time(10 * i), p, &mut r[1]), v);
            assert_eq!(direct.enqueue(Time(10 * i), p, &mut r[2]), v);
            if i % 3 != 1 {
                let d = boxed.dequeue(Time(10 * i + 5));
                assert_eq!(inlined.dequeue_inlined(Time(10 * i + 5)), d);
                assert_eq!(direct.dequeue(Time(10 * i + 5)), d);
            }
        }
        let all = |q: &Queue| {
            let mut v = vec![(q.stats().clone(), q.held())];
            for c in q.children() {
                v.push((c.stats().clone(), c.held()));
                v.extend(c.children().iter().map(|g| (g.stats().clone(), g.held())));
            }
            v
        };
        assert_eq!(all(&inlined), all(&boxed));
        assert_eq!(all(&direct), all(&boxed));
        let rest = boxed.reset(Time(5_000));
        assert_eq!(inlined.reset(Time(5_000)), rest);
        assert_eq!(direct.reset(Time(5_000)), rest);
    }
}
