//! The datapath without I/O: frames in (a pool slot each), the two
//! directions' ports and pacers, frames out. The daemon feeds it from its
//! sockets and the monotonic clock; tests feed it directly.
//!
//! ```text
//! frame from side s in slot k:  parse → flow id (bounded LRU table) → Packet { handle: k, created: now }
//!                               → ports[s].enqueue(now, pkt, key)      (stages, then the qdisc)
//!                               drops and push-outs free their slots
//! poll(now), per direction:     held = the packet "on the wire" (taken from the port, waiting for its tokens)
//!     no held packet:           port.on_sent(now); held = port.dequeue(now)
//!     pacer.consume(now, size): the wire finished sending it → the frame joins the direction's batch
//!     otherwise:                wake at now + time to conformance
//!     then (or when `router.batch` frames wait): one `sendmmsg` of the batch, free the slots
//! timers:                       port.next_deadline() / port.on_timer(now)
//! ```
//!
//! The pacer is the device: a core [`TokenBucket`] at `link.rate` with
//! depth `router.burst`, against the monotonic clock. A packet is taken
//! from the port only when the wire is free (nothing held), and is handed
//! to the kernel when its tokens are earned, i.e. at the end of its
//! transmission at `link.rate`: nothing queues below the pacer, so MACE's
//! device policy ("BE only when the device is idle") sees the device as it
//! is, and a CL packet waits behind at most the one packet being sent.
//! Frames that are not IP (ARP) bypass the ports and the pacer.

use crate::config::{ClassTagRule, ValidConfig};
use crate::flows::Flows;
use crate::parse::{self, Frame};
use crate::pool::Pool;
use qoslab_core::cbt::Class;
use qoslab_core::packet::ClassTag;
use qoslab_core::packet::{Ecn, FlowKey, Packet};
use qoslab_core::pipeline::{EventKind, EventSink, MechEvent, Port};
use qoslab_core::qdisc::{Dequeue, DropReason, Verdict};
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
    pub rx_pkts: u64,
    pub rx_bytes: u64,
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    /// Frames that were not IP, forwarded without queueing.
    pub not_ip_pkts: u64,
    /// Frames larger than the pacer's burst (or a pool slot): dropped.
    pub oversize_drops: u64,
    /// Frames the kernel refused to send.
    pub tx_errors: u64,
    /// Packets whose ECN field was rewritten (a mark).
    pub ecn_rewrites: u64,
    pub classes: [ClassCounters; CLASSES],
}

/// One direction: its port, its pacer and the packet on the wire.
#[derive(Debug)]
pub struct Direction {
    pub port: Port,
    pacer: TokenBucket,
    /// The most tokens an idle pacer keeps (`router.burst`).
    burst: Bytes,
    held: Option<Packet>,
    pub counters: Counters,
}

/// The pacer's bucket: depth `burst` plus what `catch_up` earns at the
/// rate, so a loop woken late while packets wait keeps the tokens it
/// earned meanwhile (the long-run rate stays exact); an idle pacer is
/// trimmed back to `burst` (see [`Datapath::poll`]).
fn pacer_of(cfg: &ValidConfig, now: Time) -> Result<(TokenBucket, Bytes), qoslab_core::ConfigError> {
    let (rate, r) = (cfg.config.link.rate, &cfg.config.router);
    let depth = Bytes(r.burst.0 + rate.bytes_in(r.catch_up).0);
    // Built full, then trimmed to `burst` by the caller: a fresh pacer may send one burst.
    Ok((TokenBucket::new(TokenBucketConfig { rate, depth }, now, true)?, r.burst))
}

impl Direction {
    fn new(port: Port, cfg: &ValidConfig, now: Time) -> Direction {
        let (pacer, burst) = pacer_of(cfg, now).expect("validated: rate > 0 and burst >= one frame");
        let mut d = Direction { port, pacer, burst, held: None, counters: Counters::default() };
        d.trim(now);
        d
    }
    /// An idle pacer keeps at most `burst` tokens.
    fn trim(&mut self, now: Time) {
        let have = self.pacer.tokens(now);
        if have > self.burst {
            self.pacer.consume(now, Bytes(have.0 - self.burst.0));
        }
    }
    /// Packets held: in the port and on the wire.
    pub fn held_pkts(&self) -> u64 {
        self.port.backlog().packets as u64 + self.held.is_some() as u64
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

/// What became of an arriving frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// Accepted by the port (queued or marked).
    Queued,
    /// Dropped (by a stage, the qdisc, or as oversize); its slot is free again.
    Dropped,
    /// Not IP: send the slot's frame out of the other side now, then free it.
    Bypass,
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

/// Both directions, the packet buffers and the flow table.
#[derive(Debug)]
pub struct Datapath {
    pub cfg: ValidConfig,
    pub dirs: [Direction; 2],
    pub pool: Pool,
    pub flows: Flows,
    pub events: EventLog,
    pub profile: Option<Profile>,
    /// ECN bits of each slot's frame as it arrived, to spot marks at departure.
    arrived_ecn: Vec<Ecn>,
    /// The direction's departures so far when each slot's packet arrived.
    arrived_tx: Vec<u64>,
    /// Frames the pacer released in the current `poll`, not yet handed to the kernel.
    pending: Pending,
    rng: Rng,
    next_id: u64,
}

impl Datapath {
    /// The datapath of a checked configuration, started at `now`.
    pub fn new(cfg: ValidConfig, now: Time) -> Result<Datapath, Vec<Diagnostic>> {
        let p0 = cfg.port(0, now)?;
        let p1 = cfg.port(1, now)?;
        let r = &cfg.config.router;
        Ok(Datapath {
            dirs: [Direction::new(p0, &cfg, now), Direction::new(p1, &cfg, now)],
            pool: Pool::new(r.pool),
            flows: Flows::new(r.flows),
            events: EventLog::default(),
            profile: r.profile.then(Profile::default),
            arrived_ecn: vec![Ecn::NotEct; r.pool as usize],
            arrived_tx: vec![0; r.pool as usize],
            pending: Pending::new(r.batch as usize),
            rng: qoslab_core::rng::stream(r.seed, 0),
            next_id: 0,
            cfg,
        })
    }

    /// A frame of `len` bytes arrived on side `side` (0 = a, 1 = b) into
    /// pool slot `slot` (already taken from the pool) at `now`.
    pub fn on_frame(&mut self, now: Time, side: usize, slot: u32, len: usize) -> Arrival {
        self.pool.set_len(slot, len);
        let dir = &mut self.dirs[side];
        dir.counters.rx_pkts += 1;
        dir.counters.rx_bytes += len as u64;
        let info = match parse::parse(self.pool.frame(slot)) {
            Frame::NotIp => {
                dir.counters.not_ip_pkts += 1;
                return Arrival::Bypass;
            }
            Frame::Ip(i) => i,
        };
        if len as u64 > self.cfg.config.router.burst.0 || len >= crate::pool::SLOT {
            dir.counters.oversize_drops += 1;
            self.pool.free(slot);
            return Arrival::Dropped;
        }
        let flow = self.flows.intern(info.key);
        let mut pkt = Packet::new(self.next_id, flow, len as u32, now);
        self.next_id += 1;
        pkt.dscp = info.dscp;
        pkt.class = match self.cfg.config.router.class_tag {
            ClassTagRule::Cbt => {
                ClassTag(Class::from_header(info.key.proto, info.dscp, self.cfg.config.router.tagged_dscp_mask) as u8)
            }
            ClassTagRule::Precedence => ClassTag(info.dscp >> 3),
            ClassTagRule::Zero => ClassTag(0),
        };
        pkt.ecn = info.ecn;
        if self.cfg.config.router.pcn_dscps.contains(&info.dscp) {
            pkt.pcn = parse::pcn_of(info.ecn);
        }
        pkt.ingress = side as u16;
        pkt.handle = slot as u64;
        self.arrived_ecn[slot as usize] = info.ecn;
        self.arrived_tx[slot as usize] = dir.counters.tx_pkts;
        let t0 = self.profile.is_some().then(std::time::Instant::now);
        let verdict = enqueue(&mut dir.port, now, pkt, &info.key, &mut self.rng, &mut self.events);
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

    /// Sends what the pacers allow at `now`, runs due timers, and returns
    /// when it next needs to run (`None`: only on an arrival).
    ///
    /// The frames a direction's pacer releases in one call leave together:
    /// `send(side_out, frames, sent)` hands up to `router.batch` of them to
    /// the kernel at once (`sendmmsg`) and sets `sent[i]` for each frame it
    /// took whole. Only frames whose tokens are earned at `now` join a
    /// batch, so batching changes no departure time the pacer decides.
    pub fn poll(&mut self, now: Time, send: &mut SendBatch<'_>) -> Option<Time> {
        let mut wake: Option<Time> = None;
        let mut at = |t: Time| wake = Some(wake.map_or(t, |w: Time| w.min(t)));
        let batch = self.cfg.config.router.batch as usize;
        for d in 0..2 {
            let dir = &mut self.dirs[d];
            if dir.port.next_deadline().is_some_and(|t| t <= now) {
                dir.port.on_timer(now, &mut self.events);
            }
            loop {
                if dir.held.is_none() {
                    dir.port.on_sent(now);
                    let t0 = self.profile.is_some().then(std::time::Instant::now);
                    let out = dir.port.dequeue(now);
                    if let (Some(p), Some(t0)) = (self.profile.as_mut(), t0) {
                        p.dequeue_ns += t0.elapsed().as_nanos() as u64;
                        p.dequeues += 1;
                    }
                    match out {
                        Dequeue::Packet(p) => dir.held = Some(p),
                        Dequeue::Empty => {
                            dir.trim(now);
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
                    let wait = dir.pacer.time_to_conformance(now, Bytes(p.size as u64));
                    at(now + wait.expect("frames above the burst are dropped on arrival"));
                    break;
                }
                // The wire has sent it: the frame joins the batch, the device is free.
                dir.held = None;
                let slot = p.handle as u32;
                let wire = parse::wire_ecn(p.ecn, p.pcn);
                if wire != self.arrived_ecn[slot as usize] {
                    if let Frame::Ip(info) = parse::parse(self.pool.frame(slot)) {
                        if parse::set_ecn(self.pool.frame_mut(slot), &info, wire) {
                            dir.counters.ecn_rewrites += 1;
                        }
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
        wake
    }

    /// Does any direction hold a packet?
    pub fn is_idle(&self) -> bool {
        self.dirs.iter().all(|d| d.held_pkts() == 0)
    }

    /// Replaces the ports (and the pacers' rate and burst) with those of
    /// `new`, keeping the queued packets: each is offered to the new port
    /// in the order the old one gives them up (those it refuses are
    /// dropped). Fields of `[router]` that size the datapath (interfaces,
    /// pool, flows, batch, sockets, files, seed) cannot change while
    /// running. Every check and every build happens before anything
    /// changes: on an error nothing did.
    pub fn reconfigure(&mut self, new: ValidConfig, now: Time) -> Result<(), Vec<Diagnostic>> {
        let (o, n) = (&self.cfg.config.router, &new.config.router);
        let fixed: [(&str, bool); 10] = [
            ("a", o.a == n.a),
            ("b", o.b == n.b),
            ("pool", o.pool == n.pool),
            ("flows", o.flows == n.flows),
            ("batch", o.batch == n.batch),
            ("io", o.io == n.io),
            ("stats", o.stats == n.stats),
            ("out", o.out == n.out),
            ("control_socket", o.control_socket == n.control_socket),
            ("seed", o.seed == n.seed),
        ];
        let changed: Vec<Diagnostic> = fixed
            .iter()
            .filter(|(_, same)| !same)
            .map(|(f, _)| Diagnostic {
                origin: new.origin.clone(),
                line: None,
                path: format!("router.{f}"),
                message: "cannot change while the router runs; allowed: the [link] table, burst, catch_up, \
                          stats_interval, drain_timeout, profile, class_tag, tagged_dscp_mask (restart \
                          the router for the rest)"
                    .into(),
            })
            .collect();
        if !changed.is_empty() {
            return Err(changed);
        }
        let ports = [new.port(0, now)?, new.port(1, now)?];
        let tb = TokenBucketConfig { rate: new.config.link.rate, depth: new.config.router.burst };
        let pacer = TokenBucket::new(tb, now, true).map_err(|e| {
            vec![Diagnostic {
                origin: new.origin.clone(),
                line: None,
                path: "link.rate".into(),
                message: e.to_string(),
            }]
        })?;
        for (d, port) in ports.into_iter().enumerate() {
            let old = std::mem::replace(&mut self.dirs[d].port, port);
            self.dirs[d].pacer = pacer.clone();
            self.requeue(d, old, now);
        }
        self.profile = new.config.router.profile.then(|| self.profile.unwrap_or_default());
        self.cfg = new;
        Ok(())
    }

    fn requeue(&mut self, d: usize, mut old: Port, now: Time) {
        loop {
            match old.dequeue(now) {
                Dequeue::Packet(p) => {
                    let key = match parse::parse(self.pool.frame(p.handle as u32)) {
                        Frame::Ip(i) => i.key,
                        Frame::NotIp => unreachable_key(),
                    };
                    match enqueue(&mut self.dirs[d].port, now, p, &key, &mut self.rng, &mut self.events) {
                        Verdict::Dropped(x) => self.pool.free(x.packet.handle as u32),
                        Verdict::QueuedPushingOut(v) => v.iter().for_each(|x| self.pool.free(x.packet.handle as u32)),
                        _ => {}
                    }
                    old.on_sent(now);
                }
                Dequeue::Empty => break,
                Dequeue::NotBefore(_) => {
                    // A shaper holds the rest back: their bytes go; they are not re-offered.
                    let mut rest = Vec::new();
                    old.for_each_packet(&mut |p| rest.push(p.handle as u32));
                    rest.into_iter().for_each(|s| self.pool.free(s));
                    break;
                }
            }
        }
    }

    /// Drops and marks so far in direction `d`, stages and qdisc added, by reason.
    pub fn drops(&self, d: usize) -> [u64; DropReason::COUNT] {
        let p = &self.dirs[d].port;
        let mut out = *p.queue().stats().drops();
        for (o, s) in out.iter_mut().zip(p.stage_stats().drops) {
            *o += s;
        }
        out
    }
}

/// Only IP frames reach a port, so a queued frame always parses as IP;
/// should it not, the all-zero key is used (it changes no verdict that matters).
fn unreachable_key() -> FlowKey {
    let z = std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED);
    FlowKey { src: z, dst: z, src_port: 0, dst_port: 0, proto: 0 }
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

#[inline]
fn enqueue(port: &mut Port, now: Time, pkt: Packet, key: &FlowKey, rng: &mut Rng, ev: &mut EventLog) -> Verdict {
    if port.stages().is_empty() {
        port.enqueue_queue(now, pkt, rng)
    } else {
        port.enqueue(now, pkt, key, rng, ev)
    }
}

#[cfg(test)]
#[path = "datapath_tests.rs"]
mod tests;
