//! [`Shared`]: a discipline that a [`Queue`](super::Queue) drives while its
//! owner still reads it.
//!
//! A [`Queue`](super::Queue) owns its discipline (`Box<dyn Qdisc>`), so a
//! driver that must read the discipline's own state between steps (RED's
//! average and count after each arrival, in the bindings' `red_replay`)
//! hands the queue a [`Shared`] and keeps a clone: both reach the same
//! discipline through a lock. Every [`Qdisc`] method goes through to it,
//! except two that would return a reference out of the lock: `peek` answers
//! `None` and `children` is empty. A driver that peeks (the simulator's
//! links, the router's ports) holds the discipline itself, not a
//! [`Shared`].

use super::{Backlog, Dequeue, ProbeSink, Qdisc, Verdict};
use crate::packet::Packet;
use crate::rng::Rng;
use crate::units::Time;
use std::sync::{Arc, Mutex, MutexGuard};

/// A discipline behind a lock, shared by every clone.
pub struct Shared<Q>(Arc<Mutex<Q>>);

impl<Q> Shared<Q> {
    pub fn new(q: Q) -> Shared<Q> {
        Shared(Arc::new(Mutex::new(q)))
    }
    /// The discipline, to read (or change) between the queue's steps. A
    /// panic while it was held does not make it unreadable.
    pub fn lock(&self) -> MutexGuard<'_, Q> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl<Q> Clone for Shared<Q> {
    fn clone(&self) -> Shared<Q> {
        Shared(Arc::clone(&self.0))
    }
}

impl<Q: Qdisc + Send> Qdisc for Shared<Q> {
    fn kind(&self) -> &'static str {
        self.lock().kind()
    }
    fn enqueue(&mut self, now: Time, pkt: Packet, rng: &mut Rng) -> Verdict {
        self.lock().enqueue(now, pkt, rng)
    }
    fn dequeue(&mut self, now: Time) -> Dequeue {
        self.lock().dequeue(now)
    }
    fn peek(&self) -> Option<&Packet> {
        // A reference cannot escape the lock (see the module doc).
        None
    }
    fn backlog(&self) -> Backlog {
        self.lock().backlog()
    }
    fn for_each_packet(&self, f: &mut dyn FnMut(&Packet)) {
        self.lock().for_each_packet(f)
    }
    fn reset(&mut self) -> Vec<Packet> {
        self.lock().reset()
    }
    fn probe(&self, sink: ProbeSink<'_>) {
        self.lock().probe(sink)
    }
    fn next_deadline(&self) -> Option<Time> {
        self.lock().next_deadline()
    }
    fn on_tick(&mut self, now: Time) {
        self.lock().on_tick(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::FlowId;
    use crate::qdisc::fifo::{Fifo, FifoConfig};
    use crate::qdisc::{DropReason, Limit, Queue};

    #[test]
    fn the_queue_and_the_owner_see_the_same_discipline() {
        let fifo = Shared::new(Fifo::new(FifoConfig { limit: Limit::packets(1) }).unwrap());
        let mut q = Queue::new(Box::new(fifo.clone()));
        let mut rng = crate::rng::stream(1, 0);
        q.enqueue(Time(0), Packet::new(1, FlowId(1), 100, Time(0)), &mut rng);
        assert_eq!(fifo.lock().backlog().packets, 1, "the owner reads what the queue did");
        assert!(matches!(q.enqueue(Time(0), Packet::new(2, FlowId(1), 100, Time(0)), &mut rng), Verdict::Dropped(_)));
        assert_eq!((q.kind(), q.stats().drops_for(DropReason::Overlimit)), ("fifo", 1));
        assert!(matches!(q.dequeue(Time(1)), Dequeue::Packet(p) if p.id == 1));
        assert_eq!(fifo.lock().backlog().packets, 0);
    }
}
