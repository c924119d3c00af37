//! MACE queue manager: a two-level strict-priority queue in one shared
//! buffer ([MACE98 §3], "Queue Manager" and "Packet Scheduler").
//!
//! "The total size of the priority queue is 50 packets. [...] When CL
//! traffic is present and the MACE queue is filled, incoming BE packets are
//! dropped unconditionally. CL packets are not dropped until the number of
//! CL packets in the MACE queue reaches 50." Dequeue serves CL first.
//!
//! Built from two parts: two FIFOs (one per [`Class`]) and a pure
//! shared-buffer policy, [`shared_buffer_admit`]:
//!
//! ```text
//! arrival of class c, size s; B = CL backlog + BE backlog:
//!   B + s within limit                  → accept
//!   c = BE                              → drop (Overlimit)
//!   c = CL, CL backlog + s over limit   → drop (Overlimit): CL alone fills the buffer
//!   c = CL otherwise                    → push out the most recently queued BE packets,
//!                                         newest first, until s fits (PushedOut); accept
//! dequeue: head of CL if any, else head of BE
//! ```
//!
//! | parameter | unit | allowed | default |
//! |---|---|---|---|
//! | `limit` | packets and/or bytes, shared by both classes | ≥ 1 | 50 packets (FreeBSD 2.2.2 `ifq`, §3) |
//!
//! Relation to [`crate::qdisc::classful`]: the scheduling is that of
//! `Classful<TagClassifier, StrictPriority>` with CL as child 0 (same tags,
//! same order), but `Classful`'s children each own their limit, and a
//! shared buffer with push-out needs the parent to take a packet back out
//! of a child's tail, which the `Qdisc` interface has no operation for.
//! Rather than widen that interface for one user, this discipline holds
//! its two FIFOs itself; push-out victims are returned in
//! `Verdict::QueuedPushingOut`, so the [`crate::qdisc::Queue`] wrapper
//! counts them (reason `PushedOut`) like any other drop, and per-class
//! counters are kept here ([`ClassCounters`]).
//!
//! Interpretations (see `docs/mechanisms/mace_queue.md`):
//! - **Push-out victim: the most recently queued BE packet** (the tail of
//!   the BE FIFO): it has waited least, so dropping it wastes the least
//!   queueing already done, and it is the packet a drop-tail queue would
//!   have refused had the CL packet arrived first. The paper states only
//!   that BE arrivals are dropped and CL is dropped when CL alone fills the
//!   buffer; pushing out is what makes the second rule hold with a full
//!   buffer of BE.
//! - A CL packet that cannot fit even after every BE packet left is dropped
//!   without pushing anything out (no BE packet is sacrificed for nothing).
//! - Which CL packets enter the queue is decided before it, by the
//!   classifier: this discipline trusts the tag ([`Class::of_tag`]).

use crate::error::ConfigError;
use crate::packet::Packet;
use crate::qdisc::{Backlog, Dequeue, DropReason, Dropped, Limit, ProbeSink, Qdisc, Verdict};
use crate::rng::Rng;
use crate::stage::mace::Class;
use crate::units::Time;
use std::collections::VecDeque;

/// What the shared buffer does with an arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferAdmit {
    Accept,
    /// Accept after pushing out this many of the newest BE packets.
    PushOut(usize),
    /// Refuse the arrival.
    Drop(DropReason),
}

/// The shared-buffer rule, as a pure function of the two backlogs, the BE
/// packet sizes newest first, and the arrival.
pub fn shared_buffer_admit(
    limit: &Limit,
    cl: Backlog,
    be: Backlog,
    be_newest_first: impl Iterator<Item = u32>,
    class: Class,
    size: u32,
) -> BufferAdmit {
    let total = Backlog { packets: cl.packets + be.packets, bytes: cl.bytes + be.bytes };
    if !limit.would_exceed(total, size) {
        return BufferAdmit::Accept;
    }
    if class == Class::Be || limit.would_exceed(cl, size) {
        return BufferAdmit::Drop(DropReason::Overlimit);
    }
    // Pushing out every BE packet makes room (checked above): find how few suffice.
    let mut left = total;
    let mut n = 0;
    for s in be_newest_first {
        left.packets -= 1;
        left.bytes -= s as u64;
        n += 1;
        if !limit.would_exceed(left, size) {
            break;
        }
    }
    BufferAdmit::PushOut(n)
}

/// The queue's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MaceQueueConfig {
    /// The buffer both classes share.
    pub limit: Limit,
}

impl Default for MaceQueueConfig {
    fn default() -> Self {
        MaceQueueConfig { limit: Limit::packets(50) }
    }
}

impl MaceQueueConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        match (self.limit.packets, self.limit.bytes) {
            (None, None) => Err(ConfigError::new("mace_queue", "limit", "is missing; set a packet and/or byte limit")),
            (Some(0), _) => Err(ConfigError::new("mace_queue", "limit", "(0 packets) must be at least 1 packet")),
            (_, Some(0)) => Err(ConfigError::new("mace_queue", "limit", "(0 bytes) must be at least 1 byte")),
            _ => Ok(()),
        }
    }
}

/// Per-class counters of the MACE queue (the [`crate::qdisc::Queue`]
/// wrapper counts the totals).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClassCounters {
    pub arrivals: u64,
    pub departures: u64,
    /// Arrivals refused because the buffer was full.
    pub dropped: u64,
    /// Queued packets pushed out by a CL arrival (BE only).
    pub pushed_out: u64,
}

/// Two-level strict priority over one shared buffer.
#[derive(Debug)]
pub struct MaceQueue {
    config: MaceQueueConfig,
    cl: VecDeque<Packet>,
    be: VecDeque<Packet>,
    cl_backlog: Backlog,
    be_backlog: Backlog,
    counters: [ClassCounters; 2],
}

fn ix(c: Class) -> usize {
    match c {
        Class::Cl => 0,
        Class::Be => 1,
    }
}

impl MaceQueue {
    pub fn new(config: MaceQueueConfig) -> Result<MaceQueue, ConfigError> {
        config.validate()?;
        let cap = config.limit.packets.unwrap_or(64).min(4096) as usize;
        Ok(MaceQueue {
            config,
            cl: VecDeque::with_capacity(cap),
            be: VecDeque::with_capacity(cap),
            cl_backlog: Backlog::default(),
            be_backlog: Backlog::default(),
            counters: [ClassCounters::default(); 2],
        })
    }
    pub fn config(&self) -> &MaceQueueConfig {
        &self.config
    }
    /// What one class holds.
    pub fn class_backlog(&self, c: Class) -> Backlog {
        match c {
            Class::Cl => self.cl_backlog,
            Class::Be => self.be_backlog,
        }
    }
    pub fn counters(&self, c: Class) -> &ClassCounters {
        &self.counters[ix(c)]
    }
    /// The class of the packet `dequeue` would return next.
    pub fn head_class(&self) -> Option<Class> {
        if !self.cl.is_empty() {
            Some(Class::Cl)
        } else if !self.be.is_empty() {
            Some(Class::Be)
        } else {
            None
        }
    }
}

impl Qdisc for MaceQueue {
    fn kind(&self) -> &'static str {
        "mace"
    }
    fn enqueue(&mut self, _now: Time, pkt: Packet, _rng: &mut Rng) -> Verdict {
        let class = Class::of_tag(pkt.class);
        self.counters[ix(class)].arrivals += 1;
        let sizes = self.be.iter().rev().map(|p| p.size);
        match shared_buffer_admit(&self.config.limit, self.cl_backlog, self.be_backlog, sizes, class, pkt.size) {
            BufferAdmit::Drop(reason) => {
                self.counters[ix(class)].dropped += 1;
                Verdict::Dropped(Dropped { packet: pkt, reason })
            }
            admit => {
                let mut victims = Vec::new();
                if let BufferAdmit::PushOut(n) = admit {
                    for _ in 0..n {
                        let v = self.be.pop_back().expect("the policy counted queued BE packets");
                        self.be_backlog.sub(&v);
                        self.counters[ix(Class::Be)].pushed_out += 1;
                        victims.push(Dropped { packet: v, reason: DropReason::PushedOut });
                    }
                }
                match class {
                    Class::Cl => {
                        self.cl_backlog.add(&pkt);
                        self.cl.push_back(pkt);
                    }
                    Class::Be => {
                        self.be_backlog.add(&pkt);
                        self.be.push_back(pkt);
                    }
                }
                if victims.is_empty() {
                    Verdict::Queued
                } else {
                    Verdict::QueuedPushingOut(victims)
                }
            }
        }
    }
    fn dequeue(&mut self, _now: Time) -> Dequeue {
        if let Some(p) = self.cl.pop_front() {
            self.cl_backlog.sub(&p);
            self.counters[ix(Class::Cl)].departures += 1;
            return Dequeue::Packet(p);
        }
        if let Some(p) = self.be.pop_front() {
            self.be_backlog.sub(&p);
            self.counters[ix(Class::Be)].departures += 1;
            return Dequeue::Packet(p);
        }
        Dequeue::Empty
    }
    fn peek(&self) -> Option<&Packet> {
        self.cl.front().or_else(|| self.be.front())
    }
    fn backlog(&self) -> Backlog {
        Backlog {
            packets: self.cl_backlog.packets + self.be_backlog.packets,
            bytes: self.cl_backlog.bytes + self.be_backlog.bytes,
        }
    }
    fn for_each_packet(&self, f: &mut dyn FnMut(&Packet)) {
        self.cl.iter().chain(&self.be).for_each(f)
    }
    fn reset(&mut self) -> Vec<Packet> {
        self.cl_backlog = Backlog::default();
        self.be_backlog = Backlog::default();
        self.cl.drain(..).chain(self.be.drain(..)).collect()
    }
    fn probe(&self, sink: ProbeSink<'_>) {
        sink("mace_cl_packets", self.cl_backlog.packets as f64);
        sink("mace_be_packets", self.be_backlog.packets as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::FlowId;
    use crate::qdisc::Queue;

    fn pkt(id: u64, class: Class) -> Packet {
        let mut p = Packet::new(id, FlowId(0), 386, Time(0));
        p.class = class.tag();
        p
    }
    fn queue(n: u32) -> Queue {
        Queue::new(Box::new(MaceQueue::new(MaceQueueConfig { limit: Limit::packets(n) }).unwrap()))
    }
    fn drain(q: &mut Queue) -> Vec<u64> {
        std::iter::from_fn(|| match q.dequeue(Time(1)) {
            Dequeue::Packet(p) => Some(p.id),
            _ => None,
        })
        .collect()
    }

    #[test]
    fn mace_queue_serves_cl_before_be() {
        let mut rng = crate::rng::stream(1, 0);
        let mut q = queue(50);
        for (id, c) in [(1, Class::Be), (2, Class::Cl), (3, Class::Be), (4, Class::Cl)] {
            assert_eq!(q.enqueue(Time(0), pkt(id, c), &mut rng), Verdict::Queued);
        }
        assert_eq!(drain(&mut q), vec![2, 4, 1, 3]);
    }

    #[test]
    fn mace_queue_full_drops_be_arrivals() {
        let mut rng = crate::rng::stream(1, 0);
        let mut q = queue(3);
        q.enqueue(Time(0), pkt(1, Class::Cl), &mut rng);
        q.enqueue(Time(0), pkt(2, Class::Be), &mut rng);
        q.enqueue(Time(0), pkt(3, Class::Be), &mut rng);
        match q.enqueue(Time(0), pkt(4, Class::Be), &mut rng) {
            Verdict::Dropped(d) => assert_eq!((d.packet.id, d.reason), (4, DropReason::Overlimit)),
            v => panic!("expected the BE arrival dropped, got {v:?}"),
        }
        assert_eq!(q.backlog().packets, 3);
    }

    #[test]
    fn mace_queue_cl_arrival_pushes_out_the_most_recently_queued_be_packet() {
        let mut rng = crate::rng::stream(1, 0);
        let mut q = queue(3);
        q.enqueue(Time(0), pkt(1, Class::Be), &mut rng);
        q.enqueue(Time(1), pkt(2, Class::Be), &mut rng);
        q.enqueue(Time(2), pkt(3, Class::Be), &mut rng);
        match q.enqueue(Time(3), pkt(4, Class::Cl), &mut rng) {
            Verdict::QueuedPushingOut(v) => {
                assert_eq!(v.len(), 1);
                assert_eq!((v[0].packet.id, v[0].reason), (3, DropReason::PushedOut), "the newest BE packet goes");
            }
            v => panic!("expected a push-out, got {v:?}"),
        }
        assert_eq!(q.stats().drops_for(DropReason::PushedOut), 1);
        assert_eq!(drain(&mut q), vec![4, 1, 2]);
    }

    #[test]
    fn mace_queue_drops_cl_only_when_cl_alone_fills_the_buffer() {
        let mut rng = crate::rng::stream(1, 0);
        let mut q = queue(3);
        q.enqueue(Time(0), pkt(1, Class::Be), &mut rng);
        for id in 2..=4 {
            assert!(!matches!(q.enqueue(Time(0), pkt(id, Class::Cl), &mut rng), Verdict::Dropped(_)));
        }
        match q.enqueue(Time(0), pkt(5, Class::Cl), &mut rng) {
            Verdict::Dropped(d) => assert_eq!((d.packet.id, d.reason), (5, DropReason::Overlimit)),
            v => panic!("CL alone fills the buffer: expected a drop, got {v:?}"),
        }
        assert_eq!(drain(&mut q), vec![2, 3, 4], "the BE packet was pushed out by CL 4");
    }

    #[test]
    fn mace_queue_byte_limit_pushes_out_as_few_be_packets_as_fit() {
        let mut rng = crate::rng::stream(1, 0);
        let mut q = Queue::new(Box::new(MaceQueue::new(MaceQueueConfig { limit: Limit::bytes(1000) }).unwrap()));
        let sized = |id, c: Class, size| {
            let mut p = pkt(id, c);
            p.size = size;
            p
        };
        q.enqueue(Time(0), sized(1, Class::Be, 500), &mut rng);
        q.enqueue(Time(0), sized(2, Class::Be, 300), &mut rng);
        q.enqueue(Time(0), sized(3, Class::Be, 100), &mut rng);
        // 900 B held; a 450 B CL packet needs 350 B freed: BE 3 (100) then BE 2 (300).
        match q.enqueue(Time(0), sized(4, Class::Cl, 450), &mut rng) {
            Verdict::QueuedPushingOut(v) => assert_eq!(v.iter().map(|d| d.packet.id).collect::<Vec<_>>(), vec![3, 2]),
            v => panic!("expected a push-out, got {v:?}"),
        }
        assert_eq!(q.backlog(), Backlog { packets: 2, bytes: 950 });
        // A CL packet larger than the whole buffer pushes nothing out.
        assert!(matches!(q.enqueue(Time(0), sized(5, Class::Cl, 1001), &mut rng), Verdict::Dropped(_)));
        assert_eq!(q.backlog().packets, 2);
    }

    #[test]
    fn mace_queue_keeps_per_class_counters_and_probes_backlogs() {
        let mut rng = crate::rng::stream(1, 0);
        let mut m = MaceQueue::new(MaceQueueConfig { limit: Limit::packets(2) }).unwrap();
        m.enqueue(Time(0), pkt(1, Class::Be), &mut rng);
        m.enqueue(Time(0), pkt(2, Class::Be), &mut rng);
        m.enqueue(Time(0), pkt(3, Class::Cl), &mut rng);
        m.enqueue(Time(0), pkt(4, Class::Be), &mut rng);
        assert_eq!(m.head_class(), Some(Class::Cl));
        m.dequeue(Time(1));
        let be = *m.counters(Class::Be);
        assert_eq!(be, ClassCounters { arrivals: 3, departures: 0, dropped: 1, pushed_out: 1 });
        assert_eq!(*m.counters(Class::Cl), ClassCounters { arrivals: 1, departures: 1, dropped: 0, pushed_out: 0 });
        let mut seen = Vec::new();
        m.probe(&mut |name, v| seen.push((name, v)));
        assert_eq!(seen, vec![("mace_cl_packets", 0.0), ("mace_be_packets", 1.0)]);
        assert_eq!(m.reset().len(), 1);
        assert_eq!(m.head_class(), None);
        assert!(MaceQueue::new(MaceQueueConfig { limit: Limit::UNLIMITED }).is_err());
    }
}
