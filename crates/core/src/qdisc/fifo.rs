//! Drop-tail FIFO with a packet and/or byte limit (Linux `pfifo`/`bfifo`).
//!
//! A packet is queued if the backlog plus the packet stays within every
//! configured limit; otherwise it is dropped with [`DropReason::Overlimit`].
//!
//! | parameter | unit | allowed | default |
//! |---|---|---|---|
//! | `limit.packets` | packets | ≥ 1, or absent | 1000 (Linux `txqueuelen`) |
//! | `limit.bytes` | bytes | ≥ 1, or absent | absent |
//!
//! At least one limit must be set: an unbounded queue is not a router queue.

use crate::error::ConfigError;
use crate::packet::Packet;
use crate::qdisc::{Backlog, Dequeue, DropReason, Dropped, Limit, Qdisc, Verdict};
use crate::rng::Rng;
use crate::units::Time;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FifoConfig {
    pub limit: Limit,
}

impl Default for FifoConfig {
    fn default() -> Self {
        FifoConfig { limit: Limit::packets(1000) }
    }
}

impl FifoConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        match (self.limit.packets, self.limit.bytes) {
            (None, None) => Err(ConfigError::new("fifo", "limit", "is missing; set a packet and/or byte limit")),
            (Some(0), _) => Err(ConfigError::new("fifo", "limit", "(0 packets) must be at least 1 packet")),
            (_, Some(0)) => Err(ConfigError::new("fifo", "limit", "(0 bytes) must be at least 1 byte")),
            _ => Ok(()),
        }
    }
}

/// Appends `x`, giving a queue that has never held anything room for
/// exactly one (then the usual doubling: 1, 4, 8, ...). A link that
/// carries one flow's packets rarely holds two at once, and a large
/// network has thousands of them: 4 slots a queue by default would be
/// most of its memory.
#[inline]
pub fn push_back_lean<T>(q: &mut VecDeque<T>, x: T) {
    if q.capacity() == 0 {
        q.reserve_exact(1);
    }
    q.push_back(x);
}

/// Drop-tail FIFO.
#[derive(Debug)]
pub struct Fifo {
    config: FifoConfig,
    q: VecDeque<Packet>,
    backlog: Backlog,
}

impl Fifo {
    pub fn new(config: FifoConfig) -> Result<Fifo, ConfigError> {
        config.validate()?;
        // Grown on demand: a simulation may hold thousands of idle queues.
        Ok(Fifo { config, q: VecDeque::new(), backlog: Backlog::default() })
    }
    pub fn config(&self) -> &FifoConfig {
        &self.config
    }
}

impl Qdisc for Fifo {
    fn kind(&self) -> &'static str {
        "fifo"
    }
    #[inline]
    fn enqueue(&mut self, _now: Time, pkt: Packet, _rng: &mut Rng) -> Verdict {
        if self.config.limit.would_exceed(self.backlog, pkt.size) {
            return Verdict::Dropped(Dropped { packet: pkt, reason: DropReason::Overlimit });
        }
        self.backlog.add(&pkt);
        push_back_lean(&mut self.q, pkt);
        Verdict::Queued
    }
    #[inline]
    fn dequeue(&mut self, _now: Time) -> Dequeue {
        match self.q.pop_front() {
            Some(p) => {
                self.backlog.sub(&p);
                Dequeue::Packet(p)
            }
            None => Dequeue::Empty,
        }
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
        self.q.drain(..).collect()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_first_push_reserves_one_slot_then_the_queue_grows_as_usual() {
        let mut q = VecDeque::new();
        push_back_lean(&mut q, 1u64);
        assert_eq!(q.capacity(), 1);
        q.pop_front();
        push_back_lean(&mut q, 2);
        assert_eq!(q.capacity(), 1);
        for i in 0..9 {
            push_back_lean(&mut q, i);
        }
        assert_eq!(q.len(), 10);
        assert!(q.capacity() >= 10);
        assert_eq!(q.iter().copied().collect::<Vec<_>>(), [2, 0, 1, 2, 3, 4, 5, 6, 7, 8]);
    }

    use super::*;
    use crate::packet::FlowId;
    use crate::qdisc::Queue;

    fn pkt(id: u64, size: u32) -> Packet {
        Packet::new(id, FlowId(0), size, Time(0))
    }

    #[test]
    fn fifo_full_packet_limit_drops_tail_and_keeps_order() {
        let mut rng = crate::rng::stream(1, 0);
        let mut q = Queue::new(Box::new(Fifo::new(FifoConfig { limit: Limit::packets(2) }).unwrap()));
        assert_eq!(q.enqueue(Time(0), pkt(1, 100), &mut rng), Verdict::Queued);
        assert_eq!(q.enqueue(Time(1), pkt(2, 100), &mut rng), Verdict::Queued);
        match q.enqueue(Time(2), pkt(3, 100), &mut rng) {
            Verdict::Dropped(d) => {
                assert_eq!(d.packet.id, 3);
                assert_eq!(d.reason, DropReason::Overlimit);
            }
            v => panic!("expected a drop, got {v:?}"),
        }
        assert_eq!(q.stats().drops_for(DropReason::Overlimit), 1);
        let ids: Vec<u64> = (0..3)
            .map(|_| match q.dequeue(Time(10)) {
                Dequeue::Packet(p) => p.id,
                _ => 0,
            })
            .collect();
        assert_eq!(ids, vec![1, 2, 0]);
        assert_eq!(q.stats().departures, 2);
        assert_eq!(q.stats().arrivals, 3);
    }

    #[test]
    fn fifo_byte_limit_admits_what_fits() {
        let mut rng = crate::rng::stream(1, 0);
        let mut q = Queue::new(Box::new(Fifo::new(FifoConfig { limit: Limit::bytes(1500) }).unwrap()));
        assert_eq!(q.enqueue(Time(0), pkt(1, 1000), &mut rng), Verdict::Queued);
        assert!(matches!(q.enqueue(Time(0), pkt(2, 1000), &mut rng), Verdict::Dropped(_)));
        assert_eq!(q.enqueue(Time(0), pkt(3, 500), &mut rng), Verdict::Queued);
        assert_eq!(q.backlog(), Backlog { packets: 2, bytes: 1500 });
    }

    #[test]
    fn fifo_config_without_limit_is_refused() {
        let e = Fifo::new(FifoConfig { limit: Limit::UNLIMITED }).unwrap_err();
        assert_eq!(e.field, "limit");
        assert!(Fifo::new(FifoConfig { limit: Limit::packets(0) }).is_err());
    }

    #[test]
    fn queue_wrapper_time_average_backlog_is_exact() {
        let mut rng = crate::rng::stream(1, 0);
        let mut q = Queue::new(Box::new(Fifo::new(FifoConfig::default()).unwrap()));
        q.enqueue(Time(0), pkt(1, 100), &mut rng);
        q.enqueue(Time(10), pkt(2, 100), &mut rng); // 1 pkt for 10 ns
        q.dequeue(Time(30)); // 2 pkts for 20 ns
                             // 1 pkt for 10 ns more, up to t = 40: area = 10 + 40 + 10 = 60
        assert!((q.mean_backlog_packets(Time(40)) - 60.0 / 40.0).abs() < 1e-12);
        assert_eq!(q.stats().peak_packets, 2);
        assert_eq!(q.stats().sojourn_max_ns, 30);
    }
}
