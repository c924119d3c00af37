//! A port pipeline: the stages, the queue discipline and, optionally, a
//! device transmit queue, as one output port of a router.
//!
//! ```text
//! enqueue(now, pkt, key):  stage 1 → stage 2 → … → queue discipline
//!     a stage's Drop ends the walk (earlier stages hear on_drop);
//!     the qdisc's drops and push-outs are told to every stage (on_drop)
//! dequeue(now):            no device: the qdisc's dequeue
//!                          device:    refill, then the device FIFO's head (now on the wire)
//! refill(now):             while the qdisc's head is admitted by the device policy:
//!                          dequeue it into the device FIFO
//! on_sent(now):            the packet on the wire left: the device policy hears it
//! next_deadline():         earliest of the stages' and the qdisc's
//! on_tick(now):           every due stage's on_tick, then the qdisc's on_tick
//! ```
//!
//! A port with a device needs to hear of every end of transmission
//! ([`Port::wants_tx_done`]); one without may let the driver skip them.
//! The port counts what its stages drop and mark ([`StageStats`]); the
//! qdisc's own counters stay in its [`Queue`] wrapper, so a port's totals
//! are the two added (arrivals at the port = stage drops + queue arrivals).

use super::event::EventSink;
use crate::packet::{FlowKey, Packet};
use crate::qdisc::{Backlog, Dequeue, DropReason, Dropped, MarkReason, Queue, Verdict};
use crate::rng::Rng;
use crate::stage::{DevicePolicy, Stage, StageVerdict};
use crate::units::Time;
use std::collections::VecDeque;

/// The key [`Port::enqueue_queue`] would hand stages it should not have had.
const NO_KEY: FlowKey = FlowKey {
    src: std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED),
    dst: std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED),
    src_port: 0,
    dst_port: 0,
    proto: 0,
};

/// Drops and marks made by a port's stages (before its queue discipline).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StageStats {
    pub drops: [u64; DropReason::COUNT],
    pub drop_bytes: [u64; DropReason::COUNT],
    pub marks: [u64; MarkReason::COUNT],
}

impl StageStats {
    pub fn total_drops(&self) -> u64 {
        self.drops.iter().sum()
    }
    pub fn drops_for(&self, r: DropReason) -> u64 {
        self.drops[r as usize]
    }
    pub fn marks_for(&self, r: MarkReason) -> u64 {
        self.marks[r as usize]
    }
}

/// The device transmit queue: its policy and the packets it holds.
#[derive(Debug)]
struct Device {
    policy: Box<dyn DevicePolicy>,
    fifo: VecDeque<Packet>,
    on_wire: Option<Packet>,
}

/// One output port: stages, a queue discipline, an optional device queue.
#[derive(Debug)]
pub struct Port {
    queue: Queue,
    stages: Vec<Box<dyn Stage>>,
    // Boxed: a port without them stays small (the simulator keeps ports in
    // its hot per-direction records).
    device: Option<Box<Device>>,
    // Only a port with stages has stage counts: a network of many plain
    // links ([Zhang07]'s 1,800 ingresses) keeps none.
    stats: Option<Box<StageStats>>,
}

/// The counts of a port without stages.
static NO_STAGE_STATS: StageStats =
    StageStats { drops: [0; DropReason::COUNT], drop_bytes: [0; DropReason::COUNT], marks: [0; MarkReason::COUNT] };

impl Port {
    /// A port that is just its queue discipline.
    pub fn new(queue: Queue) -> Port {
        Port { queue, stages: Vec::new(), device: None, stats: None }
    }
    /// Adds a stage after the existing ones.
    pub fn with_stage(mut self, stage: Box<dyn Stage>) -> Port {
        self.stages.push(stage);
        self.stats.get_or_insert_with(Box::default);
        self
    }
    /// Puts a device transmit queue with `policy` below the queue discipline.
    pub fn with_device(mut self, policy: Box<dyn DevicePolicy>) -> Port {
        self.device = Some(Box::new(Device { policy, fifo: VecDeque::new(), on_wire: None }));
        self
    }

    pub fn queue(&self) -> &Queue {
        &self.queue
    }
    pub fn stages(&self) -> &[Box<dyn Stage>] {
        &self.stages
    }
    pub fn stage_stats(&self) -> &StageStats {
        self.stats.as_deref().unwrap_or(&NO_STAGE_STATS)
    }
    /// Does the driver have to call [`Port::on_sent`] at every end of transmission?
    #[inline]
    pub fn wants_tx_done(&self) -> bool {
        self.device.is_some()
    }
    /// Packets held by the device queue and not yet on the wire.
    pub fn device_backlog(&self) -> Backlog {
        let mut b = Backlog::default();
        for p in self.device.iter().flat_map(|d| d.fifo.iter()) {
            b.add(p);
        }
        b
    }
    /// Packets the queue discipline holds (not the device queue).
    #[inline]
    pub fn queue_backlog(&self) -> Backlog {
        self.queue.backlog()
    }
    /// Every packet the port holds: in the queue discipline and the device queue.
    pub fn backlog(&self) -> Backlog {
        let mut b = self.queue.backlog();
        let d = self.device_backlog();
        b.packets += d.packets;
        b.bytes += d.bytes;
        b
    }

    /// Visits every packet the port holds: the queue discipline's, then the
    /// device queue's (not the one on the wire: the driver holds that).
    pub fn for_each_packet(&self, f: &mut dyn FnMut(&Packet)) {
        self.queue.for_each_packet(f);
        for p in self.device.iter().flat_map(|d| d.fifo.iter()) {
            f(p);
        }
    }

    /// Offers `pkt` (of flow header `key`) to the port at `now`. The
    /// edge's SCFQ root is called out of line (see [`Port::enqueue_inlined`]).
    #[inline]
    pub fn enqueue(
        &mut self,
        now: Time,
        pkt: Packet,
        key: &FlowKey,
        rng: &mut Rng,
        events: &mut dyn EventSink,
    ) -> Verdict {
        self.enqueue_with::<false>(now, pkt, key, rng, events)
    }

    /// [`Port::enqueue`] with the edge's SCFQ root's step inlined
    /// ([`Queue::enqueue_inlined`]): for the router's datapath, whose edge
    /// port it roots. The simulator calls [`Port::enqueue`].
    #[inline]
    pub fn enqueue_inlined(
        &mut self,
        now: Time,
        pkt: Packet,
        key: &FlowKey,
        rng: &mut Rng,
        events: &mut dyn EventSink,
    ) -> Verdict {
        self.enqueue_with::<true>(now, pkt, key, rng, events)
    }

    #[inline(always)]
    fn enqueue_with<const INLINE_SCFQ: bool>(
        &mut self,
        now: Time,
        mut pkt: Packet,
        key: &FlowKey,
        rng: &mut Rng,
        events: &mut dyn EventSink,
    ) -> Verdict {
        if let Some(reason) = self.through_stages(now, &mut pkt, key, rng, events) {
            return Verdict::Dropped(Dropped { packet: pkt, reason });
        }
        let verdict =
            if INLINE_SCFQ { self.queue.enqueue_inlined(now, pkt, rng) } else { self.queue.enqueue(now, pkt, rng) };
        self.tell_drops(now, &verdict);
        verdict
    }

    /// The stages see `pkt` in order, each counted by its verdict; the
    /// first that drops it ends the walk, and the stages before it hear
    /// of the drop: its reason, if one did.
    #[inline(always)]
    fn through_stages(
        &mut self,
        now: Time,
        pkt: &mut Packet,
        key: &FlowKey,
        rng: &mut Rng,
        events: &mut dyn EventSink,
    ) -> Option<DropReason> {
        for i in 0..self.stages.len() {
            match self.stages[i].on_arrival(now, pkt, key, rng, events) {
                StageVerdict::Pass => {}
                StageVerdict::Mark(r) => self.stats.get_or_insert_with(Box::default).marks[r as usize] += 1,
                StageVerdict::Drop(r) => {
                    let st = self.stats.get_or_insert_with(Box::default);
                    st.drops[r as usize] += 1;
                    st.drop_bytes[r as usize] += pkt.size as u64;
                    for s in &mut self.stages[..i] {
                        s.on_drop(now, pkt, r);
                    }
                    return Some(r);
                }
            }
        }
        None
    }

    /// The stages hear of the packets the queue discipline's `verdict` dropped.
    #[inline(always)]
    fn tell_drops(&mut self, now: Time, verdict: &Verdict) {
        if !self.stages.is_empty() {
            match verdict {
                Verdict::Queued | Verdict::Marked(_) => {}
                Verdict::Dropped(d) => self.tell_drop(now, d),
                Verdict::QueuedPushingOut(victims) => {
                    for d in victims {
                        self.tell_drop(now, d);
                    }
                }
            }
        }
    }

    /// [`Port::enqueue`] for a port without stages (the driver checked
    /// `stages().is_empty()`): straight to the queue discipline, with no
    /// flow key or event sink to find. With stages, this is `enqueue`.
    #[inline]
    pub fn enqueue_queue(&mut self, now: Time, pkt: Packet, rng: &mut Rng) -> Verdict {
        if !self.stages.is_empty() {
            return self.enqueue(now, pkt, &NO_KEY, rng, &mut super::event::Discard);
        }
        self.queue.enqueue(now, pkt, rng)
    }

    /// Is the discipline a drop-tail FIFO with no device queue below it?
    /// Then a driver whose transmitter is free may offer packets with
    /// [`Port::try_pass`] or [`Port::offer_free`].
    #[inline]
    pub fn passes(&self) -> bool {
        self.device.is_none() && self.queue.is_fifo()
    }

    /// A port that is just an empty drop-tail FIFO (no stages, no device
    /// queue) passes `pkt` straight through at `now`, for a driver whose
    /// transmitter is free: see [`Queue::try_pass`]. `false` (nothing
    /// changed) otherwise.
    #[inline]
    pub fn try_pass(&mut self, now: Time, pkt: &mut Packet) -> bool {
        self.stages.is_empty() && self.device.is_none() && self.queue.try_pass(now, pkt)
    }

    /// [`Port::enqueue`] for a driver whose transmitter is free, on a port
    /// that [`Port::passes`]: the stages see `pkt` as they would, and a
    /// packet they let through an empty FIFO comes back (`Ok`) to go on the
    /// wire now, counted as enqueued then dequeued at `now`
    /// ([`Queue::try_pass`]). Otherwise the verdict of [`Port::enqueue`]
    /// (`Err`), with the same counts and calls.
    #[inline]
    pub fn offer_free(
        &mut self,
        now: Time,
        mut pkt: Packet,
        key: &FlowKey,
        rng: &mut Rng,
        events: &mut dyn EventSink,
    ) -> Result<Packet, Verdict> {
        if let Some(reason) = self.through_stages(now, &mut pkt, key, rng, events) {
            return Err(Verdict::Dropped(Dropped { packet: pkt, reason }));
        }
        if self.device.is_none() && self.queue.try_pass(now, &mut pkt) {
            return Ok(pkt);
        }
        let verdict = self.queue.enqueue(now, pkt, rng);
        self.tell_drops(now, &verdict);
        Err(verdict)
    }

    /// [`Port::enqueue_queue`] with the edge's SCFQ root's step inlined
    /// (see [`Port::enqueue_inlined`]).
    #[inline]
    pub fn enqueue_queue_inlined(&mut self, now: Time, pkt: Packet, rng: &mut Rng) -> Verdict {
        if !self.stages.is_empty() {
            return self.enqueue_inlined(now, pkt, &NO_KEY, rng, &mut super::event::Discard);
        }
        self.queue.enqueue_inlined(now, pkt, rng)
    }

    fn tell_drop(&mut self, now: Time, d: &Dropped) {
        for s in &mut self.stages {
            s.on_drop(now, &d.packet, d.reason);
        }
    }

    /// Moves packets from the queue discipline into the device queue while
    /// the device admits the head. Returns the time the qdisc asked to be
    /// tried again at, if it answered `NotBefore`. No-op without a device.
    #[inline]
    pub fn refill(&mut self, now: Time) -> Option<Time> {
        self.refill_with::<false>(now)
    }

    #[inline(always)]
    fn refill_with<const INLINE_SCFQ: bool>(&mut self, now: Time) -> Option<Time> {
        let dev = self.device.as_mut()?;
        while let Some(head) = self.queue.peek() {
            if !dev.policy.admits(head) {
                break;
            }
            let d = if INLINE_SCFQ { self.queue.dequeue_inlined(now) } else { self.queue.dequeue(now) };
            match d {
                Dequeue::Packet(p) => {
                    dev.policy.on_pull(&p);
                    dev.fifo.push_back(p);
                }
                Dequeue::Empty => break,
                Dequeue::NotBefore(t) => return Some(t),
            }
        }
        None
    }

    /// The next packet to put on the wire at `now`, if any (the wire must
    /// be free). The edge's SCFQ root is called out of line (see
    /// [`Port::dequeue_inlined`]).
    #[inline]
    pub fn dequeue(&mut self, now: Time) -> Dequeue {
        self.dequeue_with::<false>(now)
    }

    /// [`Port::dequeue`] with the edge's SCFQ root's step inlined (see
    /// [`Port::enqueue_inlined`]).
    #[inline]
    pub fn dequeue_inlined(&mut self, now: Time) -> Dequeue {
        self.dequeue_with::<true>(now)
    }

    #[inline(always)]
    fn dequeue_with<const INLINE_SCFQ: bool>(&mut self, now: Time) -> Dequeue {
        if self.device.is_none() {
            return if INLINE_SCFQ { self.queue.dequeue_inlined(now) } else { self.queue.dequeue(now) };
        }
        let retry = self.refill_with::<INLINE_SCFQ>(now);
        let dev = self.device.as_mut().expect("checked above");
        match dev.fifo.pop_front() {
            Some(p) => {
                dev.on_wire = Some(p);
                Dequeue::Packet(p)
            }
            None => retry.map_or(Dequeue::Empty, Dequeue::NotBefore),
        }
    }

    /// The packet on the wire finished transmission. `false` if the device
    /// policy did not hold it (a driver bug). Always `true` without a device.
    pub fn on_sent(&mut self, _now: Time) -> bool {
        match self.device.as_mut() {
            Some(dev) => match dev.on_wire.take() {
                Some(p) => dev.policy.on_sent(&p),
                None => true,
            },
            None => true,
        }
    }

    /// When [`Port::on_tick`] is next needed.
    #[inline]
    pub fn next_deadline(&self) -> Option<Time> {
        self.stages.iter().filter_map(|s| s.next_deadline()).chain(self.queue.next_deadline()).min()
    }

    /// The periodic work due at `now`: the due stages', then the qdisc's.
    pub fn on_tick(&mut self, now: Time, events: &mut dyn EventSink) {
        for s in &mut self.stages {
            if s.next_deadline().is_some_and(|t| t <= now) {
                s.on_tick(now, events);
            }
        }
        self.queue.on_tick(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{proto, ClassTag, FlowId};
    use crate::pipeline::event::{Discard, EventKind, MechEvent};
    use crate::qdisc::fifo::{Fifo, FifoConfig};
    use crate::qdisc::Limit;
    use std::net::{IpAddr, Ipv4Addr};

    fn key() -> FlowKey {
        let a = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
        FlowKey { src: a, dst: a, src_port: 1, dst_port: 2, proto: proto::UDP }
    }
    fn fifo(n: u32) -> Queue {
        Queue::new(Box::new(Fifo::new(FifoConfig { limit: Limit::packets(n) }).unwrap()))
    }
    fn pkt(id: u64, class: u8) -> Packet {
        let mut p = Packet::new(id, FlowId(0), 100, Time(0));
        p.class = ClassTag(class);
        p
    }

    /// Drops every packet of class 9, tags the rest with class 1, emits an
    /// event every 10 ns, counts the drops it hears of.
    #[derive(Debug, Default)]
    struct Toy {
        heard: Vec<(u64, DropReason)>,
        next: u64,
    }
    impl Stage for Toy {
        fn kind(&self) -> &'static str {
            "toy"
        }
        fn on_arrival(
            &mut self,
            _now: Time,
            pkt: &mut Packet,
            _key: &FlowKey,
            _rng: &mut Rng,
            _ev: &mut dyn EventSink,
        ) -> StageVerdict {
            if pkt.class == ClassTag(9) {
                return StageVerdict::Drop(DropReason::Policed);
            }
            pkt.class = ClassTag(1);
            StageVerdict::Pass
        }
        fn on_drop(&mut self, _now: Time, pkt: &Packet, reason: DropReason) {
            self.heard.push((pkt.id, reason));
        }
        fn next_deadline(&self) -> Option<Time> {
            Some(Time(self.next + 10))
        }
        fn on_tick(&mut self, now: Time, ev: &mut dyn EventSink) {
            self.next = now.0;
            ev.emit(MechEvent {
                at: now,
                kind: EventKind::Sample,
                flow: None,
                rule: "toy",
                estimate: 0.0,
                threshold: f64::NAN,
                fields: vec![],
            });
        }
    }

    /// Admits class 0 always, class 1 only when it holds nothing.
    #[derive(Debug, Default)]
    struct IdleForOne {
        held: u32,
    }
    impl DevicePolicy for IdleForOne {
        fn admits(&self, head: &Packet) -> bool {
            self.held < 2 && (head.class == ClassTag(0) || self.held == 0)
        }
        fn on_pull(&mut self, _p: &Packet) {
            self.held += 1;
        }
        fn on_sent(&mut self, _p: &Packet) -> bool {
            let ok = self.held > 0;
            self.held = self.held.saturating_sub(1);
            ok
        }
    }

    #[test]
    fn offering_to_a_free_port_counts_as_enqueue_then_dequeue() {
        // One transmitter, two drivers: one offers with `offer_free` when
        // its wire is free, the other enqueues then dequeues. A stage that
        // drops class 9 and tags the rest, a FIFO of 3: the same packets
        // leave, with the same tags, counts and stage counts.
        let port = || Port::new(fifo(3)).with_stage(Box::new(Toy::default()));
        let (mut a, mut b) = (port(), port());
        assert!(a.passes() && !Port::new(fifo(3)).with_device(Box::new(IdleForOne::default())).passes());
        let (mut r1, mut r2) = (crate::rng::stream(1, 0), crate::rng::stream(1, 0));
        let mut draw = crate::rng::stream(9, 0);
        let (mut t, mut free_at, mut offered) = (0u64, 0u64, 0);
        for i in 0..4_000u64 {
            t += rand::Rng::random_range(&mut draw, 0..250);
            let p = pkt(i, if rand::Rng::random_range(&mut draw, 0..5) == 0 { 9 } else { 0 });
            while free_at <= t {
                let (x, y) = (a.dequeue(Time(free_at)), b.dequeue(Time(free_at)));
                assert_eq!(x, y);
                match x {
                    Dequeue::Packet(_) => free_at += 100,
                    _ => break,
                }
            }
            let free = free_at <= t;
            let (mut out1, mut out2) = (None, None);
            if free {
                offered += 1;
                match a.offer_free(Time(t), p, &key(), &mut r1, &mut Discard) {
                    Ok(x) => out1 = Some(x),
                    Err(v) => assert!(matches!(v, Verdict::Dropped(_) | Verdict::Queued), "{v:?}"),
                }
            } else {
                a.enqueue(Time(t), p, &key(), &mut r1, &mut Discard);
            }
            if b.enqueue(Time(t), p, &key(), &mut r2, &mut Discard) == Verdict::Queued && free {
                match b.dequeue(Time(t)) {
                    Dequeue::Packet(x) => out2 = Some(x),
                    d => panic!("{d:?}"),
                }
            }
            if out1.is_some() {
                free_at = t + 100;
            }
            assert_eq!(out1, out2, "packet {i} at {t}");
            assert_eq!(a.queue().stats(), b.queue().stats(), "packet {i} at {t}");
            assert_eq!(a.stage_stats(), b.stage_stats());
        }
        assert!(offered > 500 && a.queue().stats().arrivals > offered + 500, "{offered} offered");
        assert!(a.stage_stats().drops_for(DropReason::Policed) > 0);
    }

    #[test]
    fn port_stage_drop_stops_the_walk_and_is_counted_by_reason() {
        let mut port = Port::new(fifo(10)).with_stage(Box::new(Toy::default()));
        let mut rng = crate::rng::stream(1, 0);
        let v = port.enqueue(Time(0), pkt(1, 9), &key(), &mut rng, &mut Discard);
        assert!(matches!(v, Verdict::Dropped(Dropped { reason: DropReason::Policed, .. })));
        assert_eq!(port.stage_stats().drops_for(DropReason::Policed), 1);
        assert_eq!(port.stage_stats().drop_bytes[DropReason::Policed as usize], 100);
        assert_eq!(port.queue().stats().arrivals, 0, "the qdisc never saw it");
        let v = port.enqueue(Time(0), pkt(2, 0), &key(), &mut rng, &mut Discard);
        assert_eq!(v, Verdict::Queued);
        let Dequeue::Packet(p) = port.dequeue(Time(1)) else { panic!("expected a packet") };
        assert_eq!((p.id, p.class), (2, ClassTag(1)), "the stage tagged it");
    }

    #[test]
    fn port_stages_hear_of_the_qdiscs_drops() {
        let mut port = Port::new(fifo(1)).with_stage(Box::new(Toy::default()));
        let mut rng = crate::rng::stream(1, 0);
        port.enqueue(Time(0), pkt(1, 0), &key(), &mut rng, &mut Discard);
        let v = port.enqueue(Time(0), pkt(2, 0), &key(), &mut rng, &mut Discard);
        assert!(matches!(v, Verdict::Dropped(Dropped { reason: DropReason::Overlimit, .. })));
        let toy = format!("{:?}", port.stages()[0]);
        assert!(toy.contains("heard: [(2, Overlimit)]"), "{toy}");
    }

    #[test]
    fn port_timer_runs_due_stages_and_reports_the_earliest_deadline() {
        let mut port = Port::new(fifo(1)).with_stage(Box::new(Toy::default()));
        assert_eq!(port.next_deadline(), Some(Time(10)));
        let mut evs: Vec<MechEvent> = Vec::new();
        port.on_tick(Time(5), &mut evs);
        assert!(evs.is_empty(), "not due yet");
        port.on_tick(Time(12), &mut evs);
        assert_eq!(evs.len(), 1);
        assert_eq!(port.next_deadline(), Some(Time(22)));
    }

    #[test]
    fn port_device_takes_a_be_packet_only_when_idle() {
        let mut port = Port::new(fifo(10)).with_device(Box::new(IdleForOne::default()));
        assert!(port.wants_tx_done());
        let mut rng = crate::rng::stream(1, 0);
        for (id, class) in [(1, 1), (2, 1), (3, 0)] {
            port.enqueue(Time(0), pkt(id, class), &key(), &mut rng, &mut Discard);
        }
        // Wire free: the BE head goes to the device, the second BE waits (device busy).
        let Dequeue::Packet(p) = port.dequeue(Time(0)) else { panic!() };
        assert_eq!(p.id, 1);
        assert_eq!(port.refill(Time(0)), None);
        assert_eq!(port.device_backlog().packets, 0, "BE only when the device is idle");
        assert_eq!(port.backlog().packets, 2);
        assert!(port.on_sent(Time(1)));
        let Dequeue::Packet(p) = port.dequeue(Time(1)) else { panic!() };
        assert_eq!(p.id, 2);
        // The CL packet behind it may join the busy device.
        port.refill(Time(1));
        assert_eq!(port.device_backlog().packets, 1);
        assert!(port.on_sent(Time(2)));
        let Dequeue::Packet(p) = port.dequeue(Time(2)) else { panic!() };
        assert_eq!(p.id, 3);
        assert!(port.on_sent(Time(3)));
        assert_eq!(port.dequeue(Time(3)), Dequeue::Empty);
        assert!(port.on_sent(Time(3)), "nothing on the wire: nothing to report");
    }
}
