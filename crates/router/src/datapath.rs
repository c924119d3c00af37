//! The datapath without I/O: frames in (a pool slot each), the link's
//! delay line, the two directions' ports and pacers, frames out. The daemon
//! feeds it from its sockets and the monotonic clock; tests and the
//! `datapath` fuzz target feed it directly.
//!
//! ```text
//! frame from side s in slot k:  receive: rx counted; longer than a slot → dropped (oversize)
//!                               delay > 0: held in the delay line until now + delay (at most the
//!                               direction's share of the pool, else dropped: delay_line)
//! arrive (after the delay):     parse → malformed: dropped · longer than the burst: dropped (oversize)
//!                               → flow id (bounded LRU table; not IP: one all-zero key)
//!                               → Packet { handle: k, created: now } → ports[s].enqueue (stages, qdisc)
//!                               drops and push-outs free their slots
//! poll(now), per direction:     due frames leave the delay line (arrive)
//!                               held = the packet "on the wire" (taken from the port, waiting for its tokens)
//!     no held packet:           port.on_sent(now); held = port.dequeue(now)
//!     pacer.consume(now, size): the wire finished sending it → the frame joins the direction's batch
//!                               (a lossy link, `link.loss`: lost with that probability instead, link_lost)
//!     otherwise:                wake at now + time to conformance
//!     then (or when `router.batch` frames wait): one `sendmmsg` of the batch, free the slots
//! timers:                       port.next_deadline() / port.on_tick(now)
//! ```
//!
//! Every frame goes through a port: a frame that is not IP (ARP, any other
//! EtherType) is queued and paced as best effort like any packet, under the
//! all-zero flow key; nothing is sent around the link. Every frame read is
//! accounted for, per direction (the `datapath` fuzz target checks it after
//! any sequence of frames, time steps and reloads):
//!
//! ```text
//! rx_pkts = tx_pkts + tx_errors + edge_consumed + link_lost + Σ drops[reason] − drops[kernel] + in the delay line + held by the port + on the wire
//! ```
//!
//! With a PCN domain (`[pcn]`, [`crate::edge`]) a frame read on side a
//! meets the ingress first (before the delay line): a flow request is
//! consumed (`edge_consumed`), a PCN packet of a flow not admitted or
//! terminated is dropped (`policed`, `terminated`), an admitted one leaves
//! the ingress not-marked; a PCN packet leaving on side b meets the
//! egress. The ingress's answers and termination notices leave side a
//! (counted by the domain, `edge` in the stats).
//!
//! With entry shapers (`[shaping]`, `[admission]`, [`crate::entry`]) a
//! frame read on side a meets the entry before the delay line: a flow
//! request or end is consumed (`edge_consumed`), a TCP/UDP packet of a
//! connection that did not ask is dropped (`policed`, with the CAC); after
//! the delay line a packet of a shaped connection waits in its shaper and
//! enters the a→b port when it conforms (`poll`). Shaper drops count as the
//! direction's drops (`shaper_buffer`, `policed`), what the shapers hold
//! as in flight.
//!
//! (`drops[kernel]` are frames the kernel dropped before the router read
//! them: counted as drops of their direction, never read.)
//!
//! The pacer is the device: a core [`TokenBucket`] at `link.rate` with
//! depth `router.burst`, against the monotonic clock. A packet is taken
//! from the port only when the wire is free (nothing held), and is handed
//! to the kernel when its tokens are earned, i.e. at the end of its
//! transmission at `link.rate`: nothing queues below the pacer, so MACE's
//! device policy ("BE only when the device is idle") sees the device as it
//! is, and a CL packet waits behind at most the one packet being sent.

use crate::config::{ClassTagRule, ValidConfig};
use crate::delay::DelayLine;
use crate::edge::{AtIngress, Domain};
use crate::entry::Entry;
use crate::flows::Flows;
use crate::lateness::Lateness;
use crate::parse::{self, Frame, NOT_IP_KEY};
use crate::pool::{Pool, SLOT};
use qoslab_core::packet::ClassTag;
use qoslab_core::packet::{Ecn, FlowKey, Packet};
use qoslab_core::pipeline::{EventKind, EventSink, MechEvent, Port};
use qoslab_core::qdisc::cbt::Class;
use qoslab_core::qdisc::{Dequeue, DropReason, MarkReason, Verdict};
use qoslab_core::token_bucket::{TokenBucket, TokenBucketConfig};
use qoslab_core::units::{Bytes, Time};
use qoslab_core::Rng;
use qoslab_scenario::Diagnostic;
use serde::Serialize;
use std::collections::VecDeque;

/// Class tags counted separately (higher tags are counted as the last one).
pub const CLASSES: usize = 8;

/// Per-class departures and the time they spent in the router.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct ClassCounters {
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    /// Sum and maximum of arrival-to-send time (ns).
    pub delay_sum_ns: u64,
    pub delay_max_ns: u64,
    /// The most packets the direction sent between one of this class's
    /// arrivals and its own departure: how many it waited behind.
    pub ahead_max: u64,
}

/// What a direction counted (monotone since start).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Counters {
    /// Frames read from the receiving interface (before the delay line).
    pub rx_pkts: u64,
    pub rx_bytes: u64,
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    /// Frames that were not IP (queued and paced as best effort).
    pub not_ip_pkts: u64,
    /// Frames the kernel refused to send.
    pub tx_errors: u64,
    /// Packets whose ECN field was rewritten (a mark).
    pub ecn_rewrites: u64,
    /// Receive passes on this direction's interface that found no free pool
    /// slot (the kernel then holds the frames, or drops them: `drops.kernel`).
    pub pool_exhausted: u64,
    /// Frames consumed by the PCN domain's ingress (flow requests: they do
    /// not cross the link; [`crate::edge`]).
    pub edge_consumed: u64,
    /// Frames the emulated link lost (`link.loss`, `link.reverse_loss`): each
    /// took its transmission time and was then sent on no wire, as the
    /// simulator's link loses a packet at its far end. Not a queue's drop (the
    /// simulator's queues table does not count them either).
    pub link_lost: u64,
    /// Link time lost (ns): how long a frame held for its tokens waited while
    /// the pacer's bucket was already full, i.e. the loop woke more than
    /// `catch_up` after the frame could have left. The simulator's link never
    /// idles with a frame waiting; a run with any is off its scenario
    /// (docs/testbed.md, "Run health").
    pub service_lost_ns: u64,
    pub classes: [ClassCounters; CLASSES],
}

/// Totals of the ports a reload replaced, so a direction's counts stay
/// monotone across reloads.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Carried {
    pub arrivals: u64,
    pub arrival_bytes: u64,
    pub departures: u64,
    pub departure_bytes: u64,
    pub drops: [u64; DropReason::COUNT],
    pub marks: [u64; MarkReason::COUNT],
}

/// The RNG streams of the link's loss draws, direction a→b then b→a (beside the stream numbers
/// the router's ports take from the same seed).
pub const LOSS_STREAM: u64 = 1 << 41;

/// One direction: its port, its pacer and the packet on the wire.
#[derive(Debug)]
pub struct Direction {
    pub port: Port,
    pub(crate) pacer: TokenBucket,
    /// The most tokens an idle pacer keeps (`router.burst`).
    pub(crate) burst: Bytes,
    pub(crate) held: Option<Packet>,
    /// The link's loss probability in this direction and its stream (None: lossless).
    pub(crate) loss: Option<(f64, Rng)>,
    /// The port was found empty and nothing has been taken since: the wire is idle.
    pub(crate) idle: bool,
    pub counters: Counters,
    /// Drops outside the port (`malformed`, `oversize`, `delay_line`, and
    /// `kernel` as the daemon reads it from the socket), by reason.
    pub router_drops: [u64; DropReason::COUNT],
    pub router_drop_bytes: u64,
    pub carried: Carried,
}

/// The pacer's bucket of `cfg`: depth `burst` plus what `catch_up` earns at
/// the rate, so a loop woken late while packets wait keeps the tokens it
/// earned meanwhile (the long-run rate stays exact); an idle pacer is
/// trimmed back to `burst` (see [`Datapath::poll`]). Built full.
pub(crate) fn pacer_of(cfg: &ValidConfig, now: Time) -> Result<TokenBucket, qoslab_core::ConfigError> {
    let (rate, r) = (cfg.config.link.rate, &cfg.config.router);
    let depth = Bytes(r.burst.0 + rate.bytes_in(r.catch_up).0);
    TokenBucket::new(TokenBucketConfig { rate, depth }, now, true)
}

impl Direction {
    fn new(port: Port, cfg: &ValidConfig, now: Time, side: usize) -> Direction {
        let pacer = pacer_of(cfg, now).expect("validated: rate > 0 and burst >= one frame");
        let link = &cfg.config.link;
        let p = if side == 0 { link.loss } else { link.reverse_loss };
        let mut d = Direction {
            port,
            pacer,
            burst: cfg.config.router.burst,
            held: None,
            loss: (p > 0.0).then(|| (p, qoslab_core::rng::stream(cfg.config.router.seed, LOSS_STREAM + side as u64))),
            idle: true,
            counters: Counters::default(),
            router_drops: [0; DropReason::COUNT],
            router_drop_bytes: 0,
            carried: Carried::default(),
        };
        d.trim_to(now, d.burst);
        d
    }
    /// Leaves the pacer at most `keep` tokens.
    pub(crate) fn trim_to(&mut self, now: Time, keep: Bytes) {
        let have = self.pacer.tokens(now);
        if have > keep {
            self.pacer.consume(now, Bytes(have.0 - keep.0));
        }
    }
    /// Packets held: in the port and on the wire.
    pub fn held_pkts(&self) -> u64 {
        self.port.backlog().packets as u64 + self.held.is_some() as u64
    }
    /// The largest frame held by the port or on the wire (0: none).
    pub fn largest_held(&self) -> u32 {
        let mut m = self.held.map_or(0, |p| p.size);
        self.port.for_each_packet(&mut |p| m = m.max(p.size));
        m
    }
    pub(crate) fn count_drop(&mut self, reason: DropReason, bytes: usize) {
        self.router_drops[reason as usize] += 1;
        self.router_drop_bytes += bytes as u64;
    }
}

/// Counts mechanism events by kind and keeps the latest few.
#[derive(Debug, Default)]
pub struct EventLog {
    pub counts: [u64; EventKind::ALL.len()],
    pub recent: VecDeque<MechEvent>,
}

/// Every kind, counted in this order (the core's list).
const KINDS: [EventKind; EventKind::ALL.len()] = EventKind::ALL;
/// Events kept for the control socket and the summary.
pub const RECENT_EVENTS: usize = 256;

impl EventSink for EventLog {
    fn emit(&mut self, ev: MechEvent) {
        if let Some(i) = KINDS.iter().position(|k| *k == ev.kind) {
            self.counts[i] += 1;
        }
        if self.recent.len() == RECENT_EVENTS {
            self.recent.pop_front();
        }
        self.recent.push_back(ev);
    }
}

impl EventLog {
    pub fn count(&self, kind: EventKind) -> u64 {
        KINDS.iter().position(|k| *k == kind).map_or(0, |i| self.counts[i])
    }
    pub fn counts_json(&self) -> serde_json::Value {
        KINDS.iter().zip(self.counts).map(|(k, n)| (k.as_str().to_string(), serde_json::Value::from(n))).collect()
    }
}

/// What became of a frame handed to the datapath.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// Accepted by the port (queued or marked).
    Queued,
    /// Waiting out the link's delay in the delay line.
    Delayed,
    /// Dropped (oversize, malformed, the delay line's bound, a stage or the
    /// qdisc, the PCN ingress); its slot is free again.
    Dropped,
    /// A flow request, consumed by the PCN domain's ingress; its slot is free again.
    Consumed,
}

/// Per-packet time spent in the QoS path (stages + qdisc + device), when
/// `router.profile` is on: enqueue and dequeue, timed separately.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Profile {
    /// The loop's receive-and-forward work (receive batches, parse, ports,
    /// pacers, send), in ns of the loop thread's CPU time.
    pub loop_ns: u64,
    pub enqueue_ns: u64,
    pub enqueues: u64,
    pub dequeue_ns: u64,
    pub dequeues: u64,
}

/// Both directions, the delay line, the packet buffers and the flow table.
#[derive(Debug)]
pub struct Datapath {
    pub cfg: ValidConfig,
    pub dirs: [Direction; 2],
    pub pool: Pool,
    pub flows: Flows,
    pub line: DelayLine,
    pub events: EventLog,
    pub profile: Option<Profile>,
    /// How late the real-time loop woke for this datapath's timers (`daemon` records it).
    pub wake: Lateness,
    /// The PCN domain at the link's ends, with a `[pcn]` table.
    pub domain: Option<Domain>,
    /// Entry shapers and the shaping CAC at side a, with `[shaping]` or a `shaping_cac` `[admission]`.
    pub entry: Option<Entry>,
    /// ECN bits of each slot's frame as it arrived, to spot marks at departure.
    arrived_ecn: Vec<Ecn>,
    /// The direction's departures so far when each slot's packet arrived.
    arrived_tx: Vec<u64>,
    /// Frames the pacer released in the current `poll`, not yet handed to the kernel.
    pending: Pending,
    pub(crate) rng: Rng,
    next_id: u64,
}

impl Datapath {
    /// The datapath of a checked configuration, started at `now`.
    pub fn new(cfg: ValidConfig, now: Time) -> Result<Datapath, Vec<Diagnostic>> {
        let p0 = cfg.port(0, now)?;
        let p1 = cfg.port(1, now)?;
        let r = &cfg.config.router;
        let bad =
            |path: String, message: String| vec![Diagnostic { origin: cfg.origin.clone(), line: None, path, message }];
        let domain = match &cfg.config.pcn {
            None => None,
            Some(spec) => {
                let pc = qoslab_scenario::registry::pcn::edge_config(spec)
                    .map_err(|e| bad(format!("pcn.{}", e.field_path), e.message))?;
                let d = cfg.config.link.delay;
                Some(
                    Domain::new(pc, r.edge_port, r.edge_flows, d, &r.pcn_dscps, r.seed, now)
                        .map_err(|e| bad("pcn".into(), e.to_string()))?,
                )
            }
        };
        let cac = match &cfg.config.admission {
            Some(a) => qoslab_scenario::registry::cac::shaping_cac(a)
                .map_err(|e| bad(format!("admission.{}", e.field_path), e.message))?,
            None => None,
        };
        let entry = if cac.is_some() || cfg.config.shaping.is_some() {
            Some(
                Entry::new(cfg.config.shaping.as_ref(), cac, r.edge_port, r.edge_flows, r.seed, now)
                    .map_err(|e| bad("shaping".into(), e.to_string()))?,
            )
        } else {
            None
        };
        Ok(Datapath {
            domain,
            entry,
            dirs: [Direction::new(p0, &cfg, now, 0), Direction::new(p1, &cfg, now, 1)],
            pool: Pool::new(r.pool),
            flows: Flows::new(r.flows),
            line: DelayLine::default(),
            events: EventLog::default(),
            profile: r.profile.then(Profile::default),
            wake: Lateness::default(),
            arrived_ecn: vec![Ecn::NotEct; r.pool as usize],
            arrived_tx: vec![0; r.pool as usize],
            pending: Pending::new(r.batch as usize),
            rng: qoslab_core::rng::stream(r.seed, 0),
            next_id: 0,
            cfg,
        })
    }

    /// The most frames one direction may hold while the link's delay runs
    /// (in the delay line, its port and on the wire): half the pool, so a
    /// direction overloaded behind a long delay cannot take the slots the
    /// other direction's frames need.
    pub fn delay_share(&self) -> usize {
        self.pool.capacity() / 2
    }

    /// A frame of `len` bytes (its full length on the wire) was read on
    /// side `side` (0 = a, 1 = b) into pool slot `slot` (taken from the
    /// pool) at `now`. Longer than a slot: dropped as oversize (the slot
    /// holds only its start). With a link delay it waits in the delay line,
    /// which [`Datapath::poll`] empties into the port when it is due.
    pub fn receive(&mut self, now: Time, side: usize, slot: u32, len: usize) -> Arrival {
        let delay = self.cfg.config.link.delay;
        let share = self.delay_share();
        let dir = &mut self.dirs[side];
        dir.counters.rx_pkts += 1;
        dir.counters.rx_bytes += len as u64;
        if len > SLOT {
            dir.count_drop(DropReason::Oversize, len);
            self.pool.free(slot);
            return Arrival::Dropped;
        }
        self.pool.set_len(slot, len);
        if side == 0 && (self.domain.is_some() || self.entry.is_some()) {
            let info = match parse::parse(self.pool.frame(slot)) {
                Frame::Ip(i) => Some(i),
                Frame::NotIp | Frame::Malformed => None,
            };
            // The PCN domain's ingress first, then the entry (shapers, the shaping CAC).
            let mut at = AtIngress::Pass;
            if let Some(dm) = self.domain.as_mut() {
                at = dm.on_arrival(now, self.pool.frame(slot), info.as_ref(), &mut self.events);
            }
            if let (AtIngress::Pass, Some(en)) = (at, self.entry.as_mut()) {
                at = en.on_arrival(now, self.pool.frame(slot), info.as_ref(), &mut self.events);
            }
            match at {
                AtIngress::Pass => {}
                AtIngress::Enter => {
                    let i = info.expect("only IP packets enter");
                    if i.ecn != Ecn::Ect0 {
                        parse::set_ecn(self.pool.frame_mut(slot), &i, Ecn::Ect0);
                    }
                }
                AtIngress::Consumed => {
                    dir.counters.edge_consumed += 1;
                    self.pool.free(slot);
                    return Arrival::Consumed;
                }
                AtIngress::Drop(reason) => {
                    dir.count_drop(reason, len);
                    self.pool.free(slot);
                    return Arrival::Dropped;
                }
            }
        }
        if delay.0 == 0 {
            return self.arrive(now, side, slot, len);
        }
        if self.line.held(side) + dir.held_pkts() as usize >= share {
            dir.count_drop(DropReason::DelayLine, len);
            self.pool.free(slot);
            return Arrival::Dropped;
        }
        self.line.hold(now, delay, side, slot, len);
        Arrival::Delayed
    }

    /// The frame in `slot` enters the port of direction `side` at `now`.
    fn arrive(&mut self, now: Time, side: usize, slot: u32, len: usize) -> Arrival {
        let dir = &mut self.dirs[side];
        let (key, dscp, ecn) = match parse::parse(self.pool.frame(slot)) {
            Frame::Ip(i) => (i.key, i.dscp, i.ecn),
            Frame::NotIp => {
                dir.counters.not_ip_pkts += 1;
                (NOT_IP_KEY, 0, Ecn::NotEct)
            }
            Frame::Malformed => {
                dir.count_drop(DropReason::Malformed, len);
                self.pool.free(slot);
                return Arrival::Dropped;
            }
        };
        if len as u64 > self.cfg.config.router.burst.0 {
            dir.count_drop(DropReason::Oversize, len);
            self.pool.free(slot);
            return Arrival::Dropped;
        }
        let flow = self.flows.intern(key);
        let mut pkt = Packet::new(self.next_id, flow, len as u32, now);
        self.next_id += 1;
        let r = &self.cfg.config.router;
        pkt.dscp = dscp;
        pkt.class = match r.class_tag {
            ClassTagRule::Cbt => ClassTag(Class::from_header(key.proto, dscp, r.tagged_dscp_mask) as u8),
            ClassTagRule::Precedence => ClassTag(dscp >> 3),
            ClassTagRule::Zero => ClassTag(0),
        };
        pkt.ecn = ecn;
        if r.pcn_dscps.contains(&dscp) {
            pkt.pcn = parse::pcn_of(ecn);
        }
        pkt.ingress = side as u16;
        pkt.handle = slot as u64;
        self.arrived_ecn[slot as usize] = ecn;
        self.arrived_tx[slot as usize] = dir.counters.tx_pkts;
        if side == 0 {
            if let Some(en) = self.entry.as_mut() {
                if let Some(id) = en.shaper_of(&key) {
                    // Into its shaper, as the shaper's connection; poll gives it to the port.
                    pkt.flow = id;
                    return match en.enqueue(now, pkt) {
                        Verdict::Dropped(d) => {
                            dir.count_drop(d.reason, len);
                            self.pool.free(slot);
                            Arrival::Dropped
                        }
                        _ => Arrival::Queued,
                    };
                }
            }
        }
        let t0 = self.profile.is_some().then(std::time::Instant::now);
        let verdict = enqueue(&mut dir.port, now, pkt, &key, &mut self.rng, &mut self.events);
        if let (Some(p), Some(t0)) = (self.profile.as_mut(), t0) {
            p.enqueue_ns += t0.elapsed().as_nanos() as u64;
            p.enqueues += 1;
        }
        match verdict {
            Verdict::Queued | Verdict::Marked(_) => Arrival::Queued,
            Verdict::Dropped(d) => {
                self.pool.free(d.packet.handle as u32);
                Arrival::Dropped
            }
            Verdict::QueuedPushingOut(victims) => {
                for v in victims {
                    self.pool.free(v.packet.handle as u32);
                }
                Arrival::Queued
            }
        }
    }

    /// Moves the frames whose delay is over into their ports, runs due
    /// timers, sends what the pacers allow at `now`, and returns when it
    /// next needs to run (`None`: only on an arrival).
    ///
    /// The frames a direction's pacer releases in one call leave together:
    /// `send(side_out, frames, sent)` hands up to `router.batch` of them to
    /// the kernel at once (`sendmmsg`) and sets `sent[i]` for each frame it
    /// took whole. Only frames whose tokens are earned at `now` join a
    /// batch, so batching changes no departure time the pacer decides.
    pub fn poll(&mut self, now: Time, send: &mut SendBatch<'_>) -> Option<Time> {
        while let Some(h) = self.line.pop_due(now) {
            self.arrive(now, h.side, h.slot, h.len);
        }
        if let Some(dm) = self.domain.as_mut() {
            if dm.next_deadline().is_some_and(|t| t <= now) {
                dm.on_tick(now, &mut self.events);
            }
        }
        let mut wake: Option<Time> = self.line.next_due();
        if let Some(en) = self.entry.as_mut() {
            en.on_tick(now);
            let t = self.release_shaped(now);
            let en = self.entry.as_ref().expect("checked");
            let t = [t, Some(en.next_deadline().max(now))].into_iter().flatten().min();
            wake = [wake, t].into_iter().flatten().min();
        }
        let mut at = |t: Time| wake = Some(wake.map_or(t, |w: Time| w.min(t)));
        let batch = self.cfg.config.router.batch as usize;
        for d in 0..2 {
            let dir = &mut self.dirs[d];
            if dir.port.next_deadline().is_some_and(|t| t <= now) {
                dir.port.on_tick(now, &mut self.events);
            }
            if dir.held.is_some() {
                dir.counters.service_lost_ns += dir.pacer.full_for(now).0;
            }
            loop {
                if dir.held.is_none() {
                    dir.port.on_sent(now);
                    let t0 = self.profile.is_some().then(std::time::Instant::now);
                    let out = dir.port.dequeue_inlined(now);
                    if let (Some(p), Some(t0)) = (self.profile.as_mut(), t0) {
                        p.dequeue_ns += t0.elapsed().as_nanos() as u64;
                        p.dequeues += 1;
                    }
                    match out {
                        Dequeue::Packet(p) => {
                            // Store-and-forward: a frame taken onto an idle wire waits its own
                            // transmission (no tokens); in a busy period the tokens a late wake-up
                            // earned are kept (catch_up).
                            if dir.idle && self.cfg.config.router.store_and_forward {
                                dir.trim_to(now, Bytes(0));
                            }
                            dir.idle = false;
                            dir.held = Some(p);
                        }
                        Dequeue::Empty => {
                            let keep = dir.burst;
                            dir.trim_to(now, keep);
                            dir.idle = true;
                            break;
                        }
                        Dequeue::NotBefore(t) => {
                            at(t);
                            break;
                        }
                    }
                }
                let p = dir.held.expect("set above");
                if !dir.pacer.consume(now, Bytes(p.size as u64)) {
                    match dir.pacer.time_to_conformance(now, Bytes(p.size as u64)) {
                        Some(wait) => {
                            at(now + wait);
                            break;
                        }
                        None => {
                            // Larger than the bucket: it could never be sent. Unreachable (arrivals
                            // above the burst are dropped, a reload below a held frame is refused),
                            // and dropped as oversize rather than trusted.
                            dir.held = None;
                            dir.count_drop(DropReason::Oversize, p.size as usize);
                            self.pool.free(p.handle as u32);
                            dir.port.on_sent(now);
                            continue;
                        }
                    }
                }
                // The wire has sent it: the frame joins the batch, the device is free.
                dir.held = None;
                let slot = p.handle as u32;
                // A lossy link loses it at its far end, after its transmission.
                if let Some((prob, rng)) = dir.loss.as_mut() {
                    if qoslab_core::rng::bernoulli(rng, *prob) {
                        dir.counters.link_lost += 1;
                        self.pool.free(slot);
                        dir.port.on_sent(now);
                        continue;
                    }
                }
                let wire = parse::wire_ecn(p.ecn, p.pcn);
                if wire != self.arrived_ecn[slot as usize] {
                    if let Frame::Ip(info) = parse::parse(self.pool.frame(slot)) {
                        if parse::set_ecn(self.pool.frame_mut(slot), &info, wire) {
                            dir.counters.ecn_rewrites += 1;
                        }
                    }
                }
                if d == 0 {
                    if let Some(dm) = self.domain.as_mut() {
                        dm.on_departure(now, &p, &mut self.events);
                    }
                }
                self.pending.push(p);
                if self.pending.len() >= batch {
                    self.pending.flush(&mut self.pool, &mut dir.counters, &self.arrived_tx, now, 1 - d, send);
                }
                dir.port.on_sent(now);
            }
            self.pending.flush(&mut self.pool, &mut dir.counters, &self.arrived_tx, now, 1 - d, send);
            if let Some(t) = dir.port.next_deadline() {
                at(t.max(now));
            }
        }
        if let Some(dm) = self.domain.as_mut() {
            let (sent, errors, dropped) = send_replies(&mut dm.out, &mut self.pool, send);
            dm.stats.replies_sent += sent;
            dm.stats.reply_errors += errors;
            dm.stats.replies_dropped += dropped;
            if let Some(t) = dm.next_deadline() {
                at(t.max(now));
            }
        }
        if let Some(en) = self.entry.as_mut() {
            let (sent, errors, dropped) = send_replies(&mut en.out, &mut self.pool, send);
            en.stats.replies_sent += sent;
            en.stats.reply_errors += errors;
            en.stats.replies_dropped += dropped;
        }
        wake
    }

    /// Moves every packet the entry shapers release at `now` into the a→b
    /// port (as its own flow again, through the port's stages); returns when
    /// the next one conforms.
    fn release_shaped(&mut self, now: Time) -> Option<Time> {
        let en = self.entry.as_mut()?;
        loop {
            match en.dequeue(now) {
                Dequeue::Packet(mut p) => {
                    let key = key_of(self.pool.frame(p.handle as u32));
                    p.flow = self.flows.intern(key);
                    let dir = &mut self.dirs[0];
                    match enqueue(&mut dir.port, now, p, &key, &mut self.rng, &mut self.events) {
                        Verdict::Queued | Verdict::Marked(_) => {}
                        Verdict::Dropped(d) => self.pool.free(d.packet.handle as u32),
                        Verdict::QueuedPushingOut(victims) => {
                            for v in victims {
                                self.pool.free(v.packet.handle as u32);
                            }
                        }
                    }
                }
                Dequeue::NotBefore(t) => return Some(t.max(now)),
                Dequeue::Empty => return None,
            }
        }
    }

    /// Does the datapath hold no frame (in the delay line, a port or on the wire)?
    pub fn is_idle(&self) -> bool {
        self.line.is_empty()
            && self.dirs.iter().all(|d| d.held_pkts() == 0)
            && self.entry.as_ref().is_none_or(|e| e.backlog_packets() == 0)
    }

    /// Drops so far in direction `d` by reason: the port's stages and
    /// qdisc, the router's own (oversize, malformed, delay line, kernel),
    /// and those of ports a reload replaced.
    pub fn drops(&self, d: usize) -> [u64; DropReason::COUNT] {
        let dir = &self.dirs[d];
        let p = &dir.port;
        let mut out = *p.queue().stats().drops();
        for (i, o) in out.iter_mut().enumerate() {
            *o += p.stage_stats().drops[i] + dir.router_drops[i] + dir.carried.drops[i];
        }
        out
    }

    /// Marks so far in direction `d` by reason (stages, qdisc, replaced ports).
    pub fn marks(&self, d: usize) -> [u64; MarkReason::COUNT] {
        let dir = &self.dirs[d];
        let mut out = *dir.port.queue().stats().marks();
        for (i, o) in out.iter_mut().enumerate() {
            *o += dir.port.stage_stats().marks[i] + dir.carried.marks[i];
        }
        out
    }

    /// Frames direction `d` was offered and sent, as a queue counts them:
    /// `(arrivals, arrival_bytes, departures, departure_bytes)`. Arrivals
    /// include what the stages and the router dropped before the queue
    /// (the kernel's drops too, whose bytes are unknown), as a simulated
    /// port's do.
    pub fn totals(&self, d: usize) -> (u64, u64, u64, u64) {
        let dir = &self.dirs[d];
        let (q, st) = (dir.port.queue().stats(), dir.port.stage_stats());
        let c = &dir.carried;
        (
            c.arrivals + q.arrivals + st.total_drops() + dir.router_drops.iter().sum::<u64>(),
            c.arrival_bytes + q.arrival_bytes + st.drop_bytes.iter().sum::<u64>() + dir.router_drop_bytes,
            c.departures + q.departures,
            c.departure_bytes + q.departure_bytes,
        )
    }

    /// Frames the router read in direction `d` and has not yet accounted
    /// for as sent, refused or dropped: in the delay line, the port, on the wire.
    pub fn in_flight(&self, d: usize) -> u64 {
        let shaped = if d == 0 { self.entry.as_ref().map_or(0, |e| e.backlog_packets()) } else { 0 };
        self.line.held(d) as u64 + self.dirs[d].held_pkts() + shaped
    }
}

/// Sends answer and notice frames (the PCN domain's, the entry's) out of
/// side a, each in a pool slot of its own (none free: the rest dropped).
/// Returns how many were sent, refused by the kernel, and dropped.
fn send_replies(out: &mut VecDeque<Vec<u8>>, pool: &mut Pool, send: &mut SendBatch<'_>) -> (u64, u64, u64) {
    let (mut sent_n, mut errors) = (0, 0);
    while let Some(f) = out.pop_front() {
        let Some(slot) = pool.alloc() else {
            let dropped = 1 + out.len() as u64;
            out.clear();
            return (sent_n, errors, dropped);
        };
        let n = f.len().min(SLOT);
        pool.slot_mut(slot)[..n].copy_from_slice(&f[..n]);
        pool.set_len(slot, n);
        let mut sent = [false];
        send(0, pool, &[slot], &mut sent);
        if sent[0] {
            sent_n += 1;
        } else {
            errors += 1;
        }
        pool.free(slot);
    }
    (sent_n, errors, 0)
}

/// Hands a batch of frames to the kernel: `send(side_out, pool, slots,
/// sent)` sends the frames held in `slots` (in order) and sets `sent[i]`
/// for each one the kernel took whole.
pub type SendBatch<'a> = dyn FnMut(usize, &Pool, &[u32], &mut [bool]) + 'a;

/// Frames released by one direction's pacer and not yet handed to the
/// kernel, in departure order (preallocated to `router.batch`).
#[derive(Debug)]
struct Pending {
    pkts: Vec<Packet>,
    slots: Vec<u32>,
    sent: Vec<bool>,
}

impl Pending {
    fn new(batch: usize) -> Pending {
        Pending { pkts: Vec::with_capacity(batch), slots: Vec::with_capacity(batch), sent: vec![false; batch] }
    }
    fn push(&mut self, p: Packet) {
        self.slots.push(p.handle as u32);
        self.pkts.push(p);
    }
    fn len(&self) -> usize {
        self.pkts.len()
    }

    /// Sends the batch out of `side_out`, counts each frame as sent or
    /// refused in `c`, and frees the slots.
    fn flush(
        &mut self,
        pool: &mut Pool,
        c: &mut Counters,
        arrived_tx: &[u64],
        now: Time,
        side_out: usize,
        send: &mut SendBatch<'_>,
    ) {
        let n = self.pkts.len();
        if n == 0 {
            return;
        }
        if self.sent.len() < n {
            self.sent.resize(n, false);
        }
        let sent = &mut self.sent[..n];
        sent.fill(false);
        send(side_out, pool, &self.slots, sent);
        for (p, &ok) in self.pkts.iter().zip(sent.iter()) {
            let slot = p.handle as u32;
            if ok {
                c.tx_pkts += 1;
                c.tx_bytes += p.size as u64;
                let k = &mut c.classes[(p.class.0 as usize).min(CLASSES - 1)];
                let delay = now.0.saturating_sub(p.created.0);
                k.tx_pkts += 1;
                k.tx_bytes += p.size as u64;
                k.delay_sum_ns += delay;
                k.delay_max_ns = k.delay_max_ns.max(delay);
                k.ahead_max = k.ahead_max.max(c.tx_pkts - 1 - arrived_tx[slot as usize]);
            } else {
                c.tx_errors += 1;
            }
            pool.free(slot);
        }
        self.pkts.clear();
        self.slots.clear();
    }
}

/// The flow key a queued frame arrived with (parsed again: the port keeps
/// packets, not keys). Only IP and non-IP frames are queued.
pub(crate) fn key_of(frame: &[u8]) -> FlowKey {
    match parse::parse(frame) {
        Frame::Ip(i) => i.key,
        Frame::NotIp | Frame::Malformed => NOT_IP_KEY,
    }
}

/// A frame into `port`. The `_inlined` entries: an edge port's SCFQ root
/// is inlined into the datapath (docs/performance.md, "The simulator's
/// share of the fourth pass, fixed").
#[inline]
pub(crate) fn enqueue(
    port: &mut Port,
    now: Time,
    pkt: Packet,
    key: &FlowKey,
    rng: &mut Rng,
    ev: &mut EventLog,
) -> Verdict {
    if port.stages().is_empty() {
        port.enqueue_queue_inlined(now, pkt, rng)
    } else {
        port.enqueue_inlined(now, pkt, key, rng, ev)
    }
}

#[cfg(test)]
#[path = "datapath_tests.rs"]
pub(crate) mod tests;

#[cfg(test)]
#[path = "hostile_tests.rs"]
mod hostile_tests;
