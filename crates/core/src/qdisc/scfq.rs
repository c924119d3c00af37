//! Self-clocked fair queueing (SCFQ) between child queues, as a
//! [`Scheduler`] any [`crate::qdisc::classful::Classful`] queue can use.
//!
//! Source: [Guerin99 §III] (the EF and AF/BE queues of
//! the edge router), which defers to Golestani, "A self-clocked fair
//! queueing scheme for broadband applications", INFOCOM 1994. The seed
//! serves two queues; here any number N ≥ 1.
//!
//! ```text
//! each child i has a rate (weight) r_i and, while it holds a packet, a tag t_i
//! a packet of L bytes reaches the head of child i:   t_i = v + L / r_i
//!     (an arrival to an empty child: on_enqueue; the next head after a dequeue)
//! dequeue (start of a transmission):  serve i = argmin t_i (ties: lower i);  v = t_i
//!     if the MSB of v (the smallest tag) is 1: clear the MSB of v and of every tag
//! every child empty after a dequeue:  v = 0, no tags
//! ```
//!
//! | parameter | unit | allowed | default |
//! |---|---|---|---|
//! | `rates[i]` | bit/s | ≥ 1, one per child | none: required |
//!
//! Tags and `v` are integers: picoseconds of transmission at the child's
//! rate, `L / r_i = ceil(8 L · 10^12 / r_i)` ps. Nanoseconds would round a
//! 64-byte packet at a 10 Gb/s weight (51.2 ns) by 0.4 %; picoseconds keep
//! that under 0.002 %, and 2^63 ps (107 days of virtual time) leaves room.
//! One increment is capped at 2^62 ps (a packet of more than about 5·10^14
//! bytes at 1 bit/s), so that a tag never exceeds 2^63 + 2^62 and u64
//! arithmetic never overflows.
//!
//! Interpretations (see `docs/decisions.md`, "Edge QoS: SCFQ"):
//! - the MSB rule is applied when `v` takes the served tag: that tag is the
//!   smallest, so every tag and `v` then have the MSB set, and clearing it
//!   subtracts 2^63 from each, keeping their order. Tags set between two
//!   transmissions may pass 2^63 while `v` does not; they stay below
//!   2^63 + 2^62 and compare correctly until the next transmission.
//! - ties between equal tags go to the lower child index (EF before AF/BE
//!   when EF is child 0).
//! - a child chosen by its tag that answers `NotBefore` (a shaper) or has
//!   been emptied behind the scheduler's back (a reset) is skipped: the
//!   next smallest tag is tried, so the scheduler stays work-conserving.

use crate::error::ConfigError;
use crate::qdisc::classful::Scheduler;
use crate::qdisc::{Dequeue, Queue};
use crate::units::{Rate, Time};

/// The most significant bit of a tag ([Guerin99 §III]'s wrap-around rule).
pub const MSB: u64 = 1 << 63;
/// The largest tag increment `L / r` (see the module doc).
const MAX_STEP_PS: u64 = 1 << 62;
/// Picoseconds in a second, times 8 bits a byte.
const PS_PER_BIT_BYTE: u64 = 8 * 1_000_000_000_000;
/// The largest packet whose `8 L · 10^12` fits in a u64.
const MAX_U64_SIZE: u32 = (u64::MAX / PS_PER_BIT_BYTE) as u32;

/// SCFQ state: rates, the system virtual time, one tag per child.
#[derive(Clone, Debug)]
pub struct Scfq {
    rates: Vec<Rate>,
    v: u64,
    tags: Vec<Option<u64>>,
}

impl Scfq {
    /// One rate (weight) per child, each at least 1 bit/s.
    pub fn new(rates: Vec<Rate>) -> Result<Scfq, ConfigError> {
        if rates.is_empty() {
            return Err(ConfigError::new("scfq", "rates", "is empty; give one rate (weight) per child queue"));
        }
        if let Some(i) = rates.iter().position(|r| r.0 == 0) {
            return Err(ConfigError::new(
                "scfq",
                "rates",
                format!("[{i}] is 0 bit/s; every rate must be at least 1 bit/s"),
            ));
        }
        let n = rates.len();
        Ok(Scfq { rates, v: 0, tags: vec![None; n] })
    }

    /// An SCFQ whose virtual time starts at `v`, for tests of the wrap-around
    /// near 2^63 (`v` must be below 2^63, as after any transmission).
    #[doc(hidden)]
    pub fn with_virtual_time(rates: Vec<Rate>, v: u64) -> Result<Scfq, ConfigError> {
        let mut s = Scfq::new(rates)?;
        assert!(v < MSB, "a virtual time at or above 2^63 is never reached");
        s.v = v;
        Ok(s)
    }

    /// Checks that there is one rate per child queue, for a driver to call
    /// before building the classful queue (`dequeue` asserts it).
    pub fn check_children(&self, children: usize) -> Result<(), ConfigError> {
        if self.rates.len() != children {
            return Err(ConfigError::new(
                "scfq",
                "rates",
                format!("has {} rates for {} child queues; give one rate per child", self.rates.len(), children),
            ));
        }
        Ok(())
    }

    /// The system virtual time (ps).
    pub fn virtual_time(&self) -> u64 {
        self.v
    }

    /// The service tag of `child` (ps), `None` while it holds no packet.
    pub fn tag(&self, child: usize) -> Option<u64> {
        self.tags.get(child).copied().flatten()
    }

    pub fn rates(&self) -> &[Rate] {
        &self.rates
    }

    /// `L / r` in picoseconds, rounded up, capped at 2^62.
    #[inline(always)]
    pub fn step_ps(size: u32, rate: Rate) -> u64 {
        // 8 L · 10^12 fits in 64 bits for L up to 2.3 MB: one 64-bit
        // division instead of a call to the 128-bit one (same quotient).
        if size <= MAX_U64_SIZE {
            return (size as u64 * PS_PER_BIT_BYTE).div_ceil(rate.0).min(MAX_STEP_PS);
        }
        let num = size as u128 * PS_PER_BIT_BYTE as u128;
        num.div_ceil(rate.0 as u128).min(MAX_STEP_PS as u128) as u64
    }

    #[inline(always)]
    fn head_tag(&self, child: usize, size: u32) -> u64 {
        self.v + Scfq::step_ps(size, self.rates[child])
    }

    /// The child with the smallest tag among those not in `skip` (bit i set = skip i).
    #[inline(always)]
    fn smallest(&self, skip: u64) -> Option<(usize, u64)> {
        let mut best: Option<(usize, u64)> = None;
        for (i, t) in self.tags.iter().enumerate() {
            if let Some(t) = *t {
                if (i >= 64 || skip & (1 << i) == 0) && best.is_none_or(|(_, b)| t < b) {
                    best = Some((i, t));
                }
            }
        }
        best
    }

    /// Child `i`, whose head had tag `t`, has just sent a packet.
    #[inline(always)]
    fn served(&mut self, i: usize, t: u64, children: &[Queue]) {
        // Start of a transmission: v takes the served (smallest) tag.
        self.v = t;
        if self.v & MSB != 0 {
            // [Guerin99 §III]: the MSB of the smallest tag is 1, so it is 1 in
            // every tag and in v: clear it everywhere.
            self.v &= !MSB;
            for tag in self.tags.iter_mut().flatten() {
                debug_assert!(*tag & MSB != 0, "a tag below the smallest one");
                *tag &= !MSB;
            }
        }
        // The next packet of child i reaches the head.
        self.tags[i] =
            if children[i].held().is_empty() { None } else { children[i].peek().map(|h| self.head_tag(i, h.size)) };
        if self.tags.iter().all(Option::is_none) {
            // Every queue is empty: reset the virtual time.
            self.v = 0;
        }
    }
}

impl Scheduler for Scfq {
    fn kind(&self) -> &'static str {
        "scfq"
    }

    #[inline(always)]
    fn on_enqueue(&mut self, _now: Time, child: usize, size: u32) {
        if child < self.tags.len() && self.tags[child].is_none() {
            // An arrival to an empty queue: it is the new head.
            self.tags[child] = Some(self.head_tag(child, size));
        }
    }

    // `inline`: lets `Classful::dequeue` (generic, so compiled where it is
    // used) take this in, with the buffer-managed children's steps now
    // direct calls (docs/performance.md, "The edge QoS fast path, third pass").
    #[inline(always)]
    fn dequeue(&mut self, now: Time, children: &mut [Queue]) -> Dequeue {
        assert_eq!(children.len(), self.rates.len(), "scfq: one rate per child queue");
        // A child holding packets without a tag (emptied and refilled behind
        // the scheduler's back) gets one now. (`held` first: an empty child,
        // the usual case, costs no call into its discipline.)
        for (i, c) in children.iter().enumerate() {
            if self.tags[i].is_none() && !c.held().is_empty() {
                if let Some(p) = c.peek() {
                    self.tags[i] = Some(self.head_tag(i, p.size));
                }
            }
        }
        let mut skip = 0u64;
        let mut earliest: Option<Time> = None;
        while let Some((i, t)) = self.smallest(skip) {
            let d = children[i].dequeue(now);
            match &d {
                Dequeue::Packet(_) => {
                    self.served(i, t, children);
                    // The child's answer is returned as it is: re-wrapping
                    // the packet copied it (docs/performance.md, "The edge
                    // QoS fast path after the profile").
                    return d;
                }
                Dequeue::Empty => self.tags[i] = None,
                Dequeue::NotBefore(nb) => {
                    earliest = Some(earliest.map_or(*nb, |e| e.min(*nb)));
                    if i < 64 {
                        skip |= 1 << i;
                    } else {
                        // More than 64 children: cannot skip by bit; give up on this round.
                        break;
                    }
                }
            }
        }
        if self.tags.iter().all(Option::is_none) {
            self.v = 0;
        }
        earliest.map_or(Dequeue::Empty, Dequeue::NotBefore)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{ClassTag, FlowId, Packet};
    use crate::qdisc::classful::{Classful, TagClassifier};
    use crate::qdisc::fifo::{Fifo, FifoConfig};
    use crate::qdisc::{Limit, Qdisc};

    fn child() -> Queue {
        Queue::new(Box::new(Fifo::new(FifoConfig { limit: Limit::packets(100_000) }).unwrap()))
    }
    fn pkt(id: u64, class: u8, size: u32) -> Packet {
        let mut p = Packet::new(id, FlowId(0), size, Time(0));
        p.class = ClassTag(class);
        p
    }
    fn two(s: Scfq) -> Classful<TagClassifier, Scfq> {
        Classful::new(TagClassifier::identity(2), s, vec![child(), child()])
    }
    fn drain(c: &mut Classful<TagClassifier, Scfq>) -> Vec<u64> {
        std::iter::from_fn(|| match c.dequeue(Time(1)) {
            Dequeue::Packet(p) => Some(p.id),
            _ => None,
        })
        .collect()
    }

    #[test]
    fn scfq_tag_is_virtual_time_plus_size_over_rate_in_picoseconds() {
        // 1000 B at 1 Mb/s = 8 ms = 8e9 ps; at 3 Mb/s 2.666.. ms, rounded up.
        assert_eq!(Scfq::step_ps(1000, Rate::mbps(1)), 8_000_000_000);
        assert_eq!(Scfq::step_ps(1000, Rate::mbps(3)), 2_666_666_667);
        assert_eq!(Scfq::step_ps(u32::MAX, Rate(1)), MAX_STEP_PS, "capped");
        let mut rng = crate::rng::stream(1, 0);
        let mut c = two(Scfq::new(vec![Rate::mbps(1), Rate::mbps(3)]).unwrap());
        c.enqueue(Time(0), pkt(1, 0, 1000), &mut rng);
        c.enqueue(Time(0), pkt(2, 1, 1500), &mut rng);
        c.enqueue(Time(0), pkt(3, 1, 500), &mut rng);
        let s = |c: &Classful<TagClassifier, Scfq>| {
            (c.scheduler().virtual_time(), c.scheduler().tag(0), c.scheduler().tag(1))
        };
        // Arrivals to empty queues at v = 0: 8e9 and 1500 B / 3 Mb/s = 4e9.
        assert_eq!(s(&c), (0, Some(8_000_000_000), Some(4_000_000_000)));
        // Child 1 served: v = 4e9, its next head (500 B) gets 4e9 + 1.333e9.
        assert!(matches!(c.dequeue(Time(1)), Dequeue::Packet(p) if p.id == 2));
        assert_eq!(s(&c), (4_000_000_000, Some(8_000_000_000), Some(4_000_000_000 + 1_333_333_334)));
        assert!(matches!(c.dequeue(Time(1)), Dequeue::Packet(p) if p.id == 3));
        assert_eq!(s(&c), (5_333_333_334, Some(8_000_000_000), None));
        // An arrival to the now empty child 1 is stamped from the current v.
        c.enqueue(Time(1), pkt(4, 1, 1500), &mut rng);
        assert_eq!(c.scheduler().tag(1), Some(5_333_333_334 + 4_000_000_000));
        assert!(matches!(c.dequeue(Time(1)), Dequeue::Packet(p) if p.id == 1));
        assert_eq!(c.scheduler().virtual_time(), 8_000_000_000);
        assert!(matches!(c.dequeue(Time(1)), Dequeue::Packet(p) if p.id == 4));
        // Both queues empty: v and the tags are reset.
        assert_eq!(s(&c), (0, None, None));
    }

    #[test]
    fn scfq_equal_tags_serve_the_lower_child_first() {
        let mut rng = crate::rng::stream(1, 0);
        let mut c = two(Scfq::new(vec![Rate::mbps(1), Rate::mbps(1)]).unwrap());
        c.enqueue(Time(0), pkt(1, 1, 100), &mut rng);
        c.enqueue(Time(0), pkt(2, 0, 100), &mut rng);
        assert_eq!(drain(&mut c), vec![2, 1]);
    }

    /// The same arrivals served from v = 0 and from v just below 2^63 give
    /// the same order; the second run crosses the MSB and clears it.
    #[test]
    fn scfq_wraps_at_the_msb_and_keeps_the_order() {
        let rates = vec![Rate::kbps(64), Rate::kbps(192)];
        let sizes: Vec<(u8, u32)> = (0..400).map(|i| ((i % 3 == 0) as u8, 40 + (i * 37 % 1460) as u32)).collect();
        let run = |v0: u64| {
            let mut rng = crate::rng::stream(1, 0);
            let mut c = two(Scfq::with_virtual_time(rates.clone(), v0).unwrap());
            for (id, (class, size)) in sizes.iter().enumerate() {
                c.enqueue(Time(0), pkt(id as u64, *class, *size), &mut rng);
            }
            let mut order = Vec::new();
            let mut wrapped = false;
            let mut last_v = c.scheduler().virtual_time();
            while let Dequeue::Packet(p) = c.dequeue(Time(1)) {
                order.push(p.id);
                let v = c.scheduler().virtual_time();
                assert!(v < MSB, "v keeps its MSB clear");
                for i in 0..2 {
                    if let Some(t) = c.scheduler().tag(i) {
                        assert!(t >= v, "a tag below v");
                    }
                }
                if v < last_v && !c.children().iter().all(|q| q.backlog().is_empty()) {
                    wrapped = true;
                }
                last_v = v;
            }
            (order, wrapped)
        };
        let (plain, plain_wrapped) = run(0);
        // 400 packets of up to 1500 B at 64 kb/s: ~1e14 ps of virtual time in all.
        let (near, near_wrapped) = run(MSB - 20_000_000_000_000);
        assert!(!plain_wrapped);
        assert!(near_wrapped, "the run from 2^63 - 2e13 ps must cross the MSB");
        assert_eq!(plain, near);
    }

    #[test]
    fn scfq_msb_rule_clears_the_bit_of_v_and_every_tag() {
        let mut rng = crate::rng::stream(1, 0);
        // v = 2^63 - 1: both first tags land above 2^63.
        let mut c = two(Scfq::with_virtual_time(vec![Rate::mbps(1), Rate::mbps(2)], MSB - 1).unwrap());
        c.enqueue(Time(0), pkt(1, 0, 1000), &mut rng); // tag 2^63 - 1 + 8e9
        c.enqueue(Time(0), pkt(2, 1, 1000), &mut rng); // tag 2^63 - 1 + 4e9
        c.enqueue(Time(0), pkt(3, 1, 1000), &mut rng);
        assert_eq!(c.scheduler().tag(0), Some(MSB - 1 + 8_000_000_000));
        assert!(matches!(c.dequeue(Time(1)), Dequeue::Packet(p) if p.id == 2));
        // v = tag of child 1 with its MSB cleared; child 0's tag cleared too.
        assert_eq!(c.scheduler().virtual_time(), 4_000_000_000 - 1);
        assert_eq!(c.scheduler().tag(0), Some(8_000_000_000 - 1));
        assert_eq!(c.scheduler().tag(1), Some(8_000_000_000 - 1));
        assert_eq!(drain(&mut c), vec![1, 3], "tie at 8e9 - 1: child 0 first");
    }

    #[test]
    fn scfq_rates_are_checked() {
        assert_eq!(Scfq::new(vec![]).unwrap_err().field, "rates");
        let s = Scfq::new(vec![Rate::mbps(1), Rate::mbps(2)]).unwrap();
        assert!(s.check_children(2).is_ok());
        assert_eq!(
            s.check_children(3).unwrap_err().to_string(),
            "scfq.rates has 2 rates for 3 child queues; give one rate per child"
        );
        let e = Scfq::new(vec![Rate::mbps(1), Rate(0)]).unwrap_err();
        assert_eq!((e.mechanism, e.field), ("scfq", "rates"));
        assert!(e.message.contains("[1]"), "{e}");
    }

    #[test]
    fn scfq_survives_a_reset_of_its_classful_queue() {
        let mut rng = crate::rng::stream(1, 0);
        let mut c = two(Scfq::new(vec![Rate::mbps(1), Rate::mbps(1)]).unwrap());
        c.enqueue(Time(0), pkt(1, 0, 100), &mut rng);
        assert_eq!(c.reset().len(), 1);
        assert_eq!(c.dequeue(Time(1)), Dequeue::Empty);
        assert_eq!(c.scheduler().virtual_time(), 0);
        c.enqueue(Time(2), pkt(2, 1, 100), &mut rng);
        assert_eq!(drain(&mut c), vec![2]);
    }
}
