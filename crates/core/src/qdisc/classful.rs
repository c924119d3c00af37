//! Classful queueing: a classifier picks a child queue for each packet, a
//! scheduler picks which child to serve (Linux `prio`/`htb` shape).
//!
//! Each child is a full [`Queue`], so per-class statistics come from the
//! same counting wrapper as everything else, and the classful discipline is
//! itself a [`Qdisc`] that can be wrapped again. Schedulers here:
//! [`StrictPriority`] (child 0 highest). Later mechanisms add their own
//! (SCFQ, shaper banks) by implementing [`Scheduler`].
//!
//! Strict priority is work-conserving across children: a child that holds
//! packets but answers `NotBefore(t)` (a shaper) lets lower children be
//! served, as Linux `prio` does; if no child can send, the earliest
//! `NotBefore` is returned. Children are polled in order, empty ones
//! included (Linux `prio` does the same), so a RED child sees its queue
//! found empty and starts its idle period; see `docs/mechanisms/strict_priority.md`.

use crate::packet::{ClassTag, Packet};
use crate::qdisc::{Backlog, Dequeue, DropReason, Dropped, ProbeSink, Qdisc, Queue, Verdict};
use crate::rng::Rng;
use crate::units::Time;

/// Chooses the child for a packet; `None` drops it as `Unclassified`.
pub trait Classifier: 'static {
    fn classify(&mut self, pkt: &Packet) -> Option<usize>;
}

/// Chooses which child to dequeue from.
pub trait Scheduler: 'static {
    fn kind(&self) -> &'static str;
    /// Dequeues from one of `children` at `now`.
    fn dequeue(&mut self, now: Time, children: &mut [Queue]) -> Dequeue;
    /// Told after a packet of `size` bytes was accepted by child `child`
    /// (for schedulers that stamp service tags). Default: nothing. (The
    /// size, not the packet: the packet has moved into the child, and
    /// keeping it for this call cost a copy on every enqueue.)
    fn on_enqueue(&mut self, _now: Time, _child: usize, _size: u32) {}
}

/// Maps a packet's [`ClassTag`] to a child through a table; tags beyond
/// the table go to `default` (or are dropped if there is none).
#[derive(Clone, Debug)]
pub struct TagClassifier {
    pub map: Vec<usize>,
    pub default: Option<usize>,
}

impl TagClassifier {
    /// Tag `i` goes to child `i`, unknown tags to the last child.
    pub fn identity(children: usize) -> TagClassifier {
        TagClassifier { map: (0..children).collect(), default: children.checked_sub(1) }
    }
}

impl Classifier for TagClassifier {
    #[inline]
    fn classify(&mut self, pkt: &Packet) -> Option<usize> {
        let ClassTag(t) = pkt.class;
        self.map.get(t as usize).copied().or(self.default)
    }
}

/// Serve the lowest-numbered child that can send.
#[derive(Clone, Debug, Default)]
pub struct StrictPriority;

impl Scheduler for StrictPriority {
    fn kind(&self) -> &'static str {
        "strict_priority"
    }
    #[inline]
    fn dequeue(&mut self, now: Time, children: &mut [Queue]) -> Dequeue {
        let mut earliest: Option<Time> = None;
        // Every child is asked in order, the empty ones too, as Linux `prio`
        // does: a child that tracks idle periods (RED's idle-time decay)
        // must see its queue found empty, or its average never decays.
        for c in children.iter_mut() {
            match c.dequeue(now) {
                Dequeue::Packet(p) => return Dequeue::Packet(p),
                Dequeue::NotBefore(t) => earliest = Some(earliest.map_or(t, |e| e.min(t))),
                Dequeue::Empty => {}
            }
        }
        earliest.map_or(Dequeue::Empty, Dequeue::NotBefore)
    }
}

/// A classifier, a scheduler and child queues.
pub struct Classful<C: Classifier, S: Scheduler> {
    classifier: C,
    scheduler: S,
    children: Vec<Queue>,
    backlog: Backlog,
}

impl<C: Classifier, S: Scheduler> Classful<C, S> {
    pub fn new(classifier: C, scheduler: S, children: Vec<Queue>) -> Self {
        assert!(!children.is_empty(), "a classful queue needs at least one child");
        Classful { classifier, scheduler, children, backlog: Backlog::default() }
    }
    pub fn children(&self) -> &[Queue] {
        &self.children
    }
    /// The scheduler, for inspection (SCFQ's virtual time and tags).
    pub fn scheduler(&self) -> &S {
        &self.scheduler
    }
    /// [`Qdisc::enqueue`]'s step, always inlined: the edge router's root
    /// (`Classful<TagClassifier, Scfq>`) is held by its [`Queue`] as itself
    /// and its step inlined into the wrapper's edge entry points
    /// ([`Queue::enqueue_inlined`]; docs/performance.md, "The edge QoS fast
    /// path, fourth pass"). A parent calls its children through
    /// [`Queue::enqueue`], where an SCFQ child is one out-of-line call.
    #[inline(always)]
    pub(crate) fn enqueue_step(&mut self, now: Time, pkt: Packet, rng: &mut Rng) -> Verdict {
        let Some(i) = self.classifier.classify(&pkt).filter(|i| *i < self.children.len()) else {
            return Verdict::Dropped(Dropped { packet: pkt, reason: DropReason::Unclassified });
        };
        // Only child i changes: its backlog before and after gives the
        // total's change (no walk over every child on every packet).
        let size = pkt.size;
        let child = &mut self.children[i];
        let before = child.held();
        let v = child.enqueue(now, pkt, rng);
        let after = child.held();
        self.backlog.packets = self.backlog.packets - before.packets + after.packets;
        self.backlog.bytes = self.backlog.bytes - before.bytes + after.bytes;
        debug_assert_eq!(self.backlog, self.total());
        // The common verdict is answered anew, not copied out of the
        // child's (a move of the whole 56-byte enum otherwise).
        match v {
            Verdict::Queued => {
                self.scheduler.on_enqueue(now, i, size);
                Verdict::Queued
            }
            Verdict::Dropped(_) => v,
            _ => {
                self.scheduler.on_enqueue(now, i, size);
                v
            }
        }
    }
    /// [`Qdisc::dequeue`]'s step, always inlined (see [`Classful::enqueue_step`]).
    #[inline(always)]
    pub(crate) fn dequeue_step(&mut self, now: Time) -> Dequeue {
        let d = self.scheduler.dequeue(now, &mut self.children);
        if let Dequeue::Packet(p) = &d {
            // The packet left one child, whose backlog fell by it.
            self.backlog.sub(p);
            debug_assert_eq!(self.backlog, self.total());
        }
        d
    }
    /// The children's backlogs added up.
    fn total(&self) -> Backlog {
        let mut b = Backlog::default();
        for c in &self.children {
            let cb = c.held();
            b.packets += cb.packets;
            b.bytes += cb.bytes;
        }
        b
    }
    fn recount(&mut self) {
        self.backlog = self.total();
    }
}

impl<C: Classifier + Send, S: Scheduler + Send> Qdisc for Classful<C, S> {
    fn kind(&self) -> &'static str {
        self.scheduler.kind()
    }
    fn enqueue(&mut self, now: Time, pkt: Packet, rng: &mut Rng) -> Verdict {
        self.enqueue_step(now, pkt, rng)
    }
    fn dequeue(&mut self, now: Time) -> Dequeue {
        self.dequeue_step(now)
    }
    fn peek(&self) -> Option<&Packet> {
        self.children.iter().find_map(|c| c.peek())
    }
    fn backlog(&self) -> Backlog {
        self.backlog
    }
    fn for_each_packet(&self, f: &mut dyn FnMut(&Packet)) {
        for c in &self.children {
            c.for_each_packet(f);
        }
    }
    fn reset(&mut self) -> Vec<Packet> {
        let mut out = Vec::new();
        for c in &mut self.children {
            out.extend(c.reset(Time::ZERO));
        }
        self.recount();
        out
    }
    fn probe(&self, sink: ProbeSink<'_>) {
        for c in &self.children {
            c.probe(sink);
        }
    }
    fn next_deadline(&self) -> Option<Time> {
        self.children.iter().filter_map(|c| c.next_deadline()).min()
    }
    fn children(&self) -> &[Queue] {
        &self.children
    }
    fn on_tick(&mut self, now: Time) {
        for c in &mut self.children {
            if c.next_deadline().is_some_and(|t| t <= now) {
                c.on_tick(now);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::FlowId;
    use crate::qdisc::fifo::{Fifo, FifoConfig};
    use crate::qdisc::Limit;

    fn child(n: u32) -> Queue {
        Queue::new(Box::new(Fifo::new(FifoConfig { limit: Limit::packets(n) }).unwrap()))
    }
    fn pkt(id: u64, class: u8) -> Packet {
        let mut p = Packet::new(id, FlowId(0), 100, Time(0));
        p.class = ClassTag(class);
        p
    }

    #[test]
    fn strict_priority_serves_high_class_first() {
        let mut rng = crate::rng::stream(1, 0);
        let mut q =
            Queue::new(Box::new(Classful::new(TagClassifier::identity(2), StrictPriority, vec![child(10), child(10)])));
        q.enqueue(Time(0), pkt(1, 1), &mut rng);
        q.enqueue(Time(0), pkt(2, 0), &mut rng);
        q.enqueue(Time(0), pkt(3, 1), &mut rng);
        q.enqueue(Time(0), pkt(4, 0), &mut rng);
        let order: Vec<u64> = std::iter::from_fn(|| match q.dequeue(Time(1)) {
            Dequeue::Packet(p) => Some(p.id),
            _ => None,
        })
        .collect();
        assert_eq!(order, vec![2, 4, 1, 3]);
        assert_eq!(q.stats().departures, 4);
    }

    #[test]
    fn strict_priority_lets_a_red_child_decay_over_idle_time() {
        use crate::qdisc::red::{Red, RedConfig};
        use crate::units::Rate;
        let mut rng = crate::rng::stream(1, 0);
        let cfg = RedConfig { w_q: 0.5, ..RedConfig::new(Limit::packets(100), 50.0, 60.0) };
        let red = Queue::new(Box::new(Red::new(cfg, Rate::mbps(25)).unwrap())); // s = 320 us
        let mut c = Classful::new(TagClassifier::identity(2), StrictPriority, vec![child(10), red]);
        let red_avg = |c: &Classful<TagClassifier, StrictPriority>| {
            let mut avg = f64::NAN;
            c.probe(&mut |name, v| {
                if name == "red_avg" {
                    avg = v
                }
            });
            avg
        };
        for i in 0..4 {
            c.enqueue(Time(0), pkt(i, 1), &mut rng);
        }
        let before = red_avg(&c);
        assert!(before > 0.0);
        for _ in 0..4 {
            assert!(matches!(c.dequeue(Time(1_000)), Dequeue::Packet(_)));
        }
        assert_eq!(c.dequeue(Time(2_000)), Dequeue::Empty); // the link goes idle at 2 us
        c.enqueue(Time(2_000 + 640_000), pkt(9, 1), &mut rng); // idle for m = 2 packet times
        let after = red_avg(&c);
        assert!((after - before * 0.25).abs() < 1e-12, "idle decay (1 - w_q)^2: {after} vs {}", before * 0.25);
    }

    #[test]
    fn unknown_tag_goes_to_default_or_is_dropped() {
        let mut rng = crate::rng::stream(1, 0);
        let mut c = Classful::new(TagClassifier { map: vec![0], default: None }, StrictPriority, vec![child(4)]);
        assert!(matches!(
            c.enqueue(Time(0), pkt(1, 7), &mut rng),
            Verdict::Dropped(Dropped { reason: DropReason::Unclassified, .. })
        ));
        assert_eq!(c.enqueue(Time(0), pkt(2, 0), &mut rng), Verdict::Queued);
        assert_eq!(c.backlog().packets, 1);
    }
}
