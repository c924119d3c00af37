//! Per-connection entry shapers and the shaping CAC at the router's side a
//! ([Tarasiuk05 §2, §4]): the network entry of a link whose sources ask
//! before they send. The shapers are core's [`ShaperBank`] (one core
//! [`qoslab_core::qdisc::shaper::Shaper`] per connection), the admission
//! decisions and rates core's [`ShapingCac`]: the simulator's own state
//! machines (`crates/sim/src/run/shaping.rs` drives the same ones).
//!
//! ```text
//! side a, UDP to router.edge_port (with [admission]):
//!     flow request (wire kind 1)  → consumed; the connection (its 5-tuple: the request's source
//!                                   address and port, destination address, `port`, TCP when the
//!                                   TCP bit is set) asks the CAC with R_req (`admission.r_req`,
//!                                   else the request's rate); admitted: a shaper at the rate the
//!                                   CAC assigns, the answer carries it; refused: no state, answer 0
//!     flow end (wire kind 7)      → consumed; the CAC releases the connection (scheme #2 re-shapes
//!                                   the rest); its shaper still sends what it holds, at its last rate
//!     anything else to the port   → dropped (malformed)
//! side a, a TCP or UDP packet:    a connection with a shaper → into its shaper (after the link's
//!                                   delay line: a constant delay commutes with the shaper), released
//!                                   into the a→b port when it conforms; with [admission], a
//!                                   connection without one → dropped (policed): it did not ask
//! other frames (ARP, ICMP, ...):  not shaped
//! ```
//!
//! `[shaping]` alone shapes the connections it lists at fixed rates (a
//! scenario group's `shaper = { rate = ... }`), no CAC, nothing policed.
//!
//! **No recyclable id decides admission.** Connections are keyed by their
//! 5-tuple in a table of at most `router.edge_flows` (a request beyond it is
//! refused, rule `entry_table_full`); the CAC sees ids from a counter never
//! reused. A flow end counts only from the connection's own address and
//! port. A connection silent for [`IDLE`] is released (the CAC's departure)
//! and leaves the table once its shaper is empty.
//!
//! Interpretations (docs/decisions/testbed.md): the shaper releases a
//! conformant packet into the port when the router runs (its wake-ups:
//! tens of µs late on a quiet host, where the simulator releases at the
//! exact instant); packets of several connections conformant at one wake-up
//! enter round-robin (the bank's order).

use crate::config::{ShapedProto, ShapingSection};
use crate::datapath::EventLog;
use crate::edge::wire::{self, Kind, Msg, Reply};
use crate::edge::{table_full, AtIngress};
use qoslab_core::admission::cac::{ShapingCac, ShapingCacConfig};
use qoslab_core::admission::AdmissionControl;
use qoslab_core::admission::{Decision, FlowRequest};
use qoslab_core::packet::{proto, ClassTag, FlowId, FlowKey, Packet};
use qoslab_core::pipeline::{EventKind, EventSink, MechEvent, Value};
use qoslab_core::qdisc::shaper::{ShaperBank, ShaperConfig};
use qoslab_core::qdisc::{Dequeue, DropReason, Limit, Qdisc, Verdict};
use qoslab_core::units::{Dur, Rate, Time};
use qoslab_core::Rng;
use serde::Serialize;
use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;

/// A connection that sent nothing for this long is released and forgotten.
pub const IDLE: Dur = Dur::from_secs(10);
/// The most answer frames waiting to leave side a.
pub const MAX_OUT: usize = 4096;

/// What the entry counted (monotone).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct EntryStats {
    /// Valid flow requests read (each consumed).
    pub requests: u64,
    /// Requests of a connection the table holds (answered again, not asked again).
    pub repeated_requests: u64,
    pub admitted: u64,
    pub refused: u64,
    /// Refused because the table was full (or the ids ran out), or because the
    /// connection's earlier shaper still held packets.
    pub refused_table_full: u64,
    /// Flow ends of running connections (the CAC's departures).
    pub ends: u64,
    /// Flow ends of connections not running (unknown, ended, or shaped at a fixed rate).
    pub ends_unknown: u64,
    /// Connections released because they were silent for [`IDLE`].
    pub expired: u64,
    /// Shaper rates the CAC changed after admission (scheme #2).
    pub rate_changes: u64,
    /// Packets that entered a shaper, and those a shaper dropped (its buffer, or larger than its depth).
    pub shaped_pkts: u64,
    pub shaper_drops: u64,
    /// TCP and UDP packets of connections that did not ask (with `[admission]`), dropped.
    pub policed: u64,
    /// Answer frames handed to the kernel, refused by it, or dropped for want of a slot or room.
    pub replies_sent: u64,
    pub reply_errors: u64,
    pub replies_dropped: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Admitted by the CAC, not ended.
    Running,
    /// Ended (or silent): its shaper drains at its last rate.
    Ended,
    /// Listed in `[shaping].flows`: a fixed rate, never asked.
    Fixed,
}

#[derive(Clone, Copy, Debug)]
struct Conn {
    id: FlowId,
    state: State,
    last: Time,
}

/// The entry shapers and the CAC of side a.
#[derive(Debug)]
pub struct Entry {
    port: u16,
    capacity: usize,
    shaper: ShaperConfig,
    cac: Option<ShapingCac>,
    r_req: Option<Rate>,
    bank: ShaperBank,
    conns: HashMap<FlowKey, Conn>,
    next_id: u32,
    rng: Rng,
    /// Answer frames to send out of side a.
    pub out: VecDeque<Vec<u8>>,
    next_sweep: Time,
    pub stats: EntryStats,
}

fn key_of(src: IpAddr, dst: IpAddr, p: ShapedProto, src_port: u16, dst_port: u16) -> FlowKey {
    let proto = match p {
        ShapedProto::Tcp => proto::TCP,
        ShapedProto::Udp => proto::UDP,
    };
    FlowKey { src, dst, src_port, dst_port, proto }
}

impl Entry {
    /// The entry of a checked configuration: `shaping` (its depth, buffer and
    /// fixed connections; default: one 1500-byte packet deep, no buffer), the
    /// CAC of `[admission]` with its `r_req`, `port` = `router.edge_port`,
    /// `capacity` = `router.edge_flows`.
    pub fn new(
        shaping: Option<&ShapingSection>,
        cac: Option<(ShapingCacConfig, Option<Rate>)>,
        port: u16,
        capacity: u32,
        seed: u64,
        now: Time,
    ) -> Result<Entry, qoslab_core::ConfigError> {
        let default = ShapingSection::default();
        let s = shaping.unwrap_or(&default);
        let shaper = ShaperConfig {
            rate: Rate(1),
            depth: s.depth,
            limit: s.buffer.unwrap_or(Limit::UNLIMITED),
            start_full: true,
        };
        let (cac, r_req) = match cac {
            Some((cfg, r)) => (Some(ShapingCac::new(cfg)?), r),
            None => (None, None),
        };
        let mut e = Entry {
            port,
            capacity: capacity as usize,
            shaper,
            cac,
            r_req,
            bank: ShaperBank::new(),
            conns: HashMap::new(),
            next_id: 0,
            rng: qoslab_core::rng::stream(seed, (1 << 40) + 2),
            out: VecDeque::new(),
            next_sweep: now + IDLE,
            stats: EntryStats::default(),
        };
        for f in &s.flows {
            let key = key_of(f.src, f.dst, f.proto, f.src_port, f.dst_port);
            let id = FlowId(e.next_id);
            e.next_id += 1;
            e.bank.add(now, id, ShaperConfig { rate: f.rate, ..shaper })?;
            e.conns.insert(key, Conn { id, state: State::Fixed, last: now });
        }
        Ok(e)
    }

    /// Connections in the table (running, ended or fixed).
    pub fn connections(&self) -> usize {
        self.conns.len()
    }

    /// Connections the CAC holds as running.
    pub fn running(&self) -> usize {
        self.cac.as_ref().map_or(0, |c| c.running())
    }

    /// Packets held in the shapers.
    pub fn backlog_packets(&self) -> u64 {
        self.bank.backlog().packets as u64
    }

    /// The shaper rate of a connection (`None`: it has no shaper).
    pub fn rate_of(&self, key: &FlowKey) -> Option<Rate> {
        let c = self.conns.get(key)?;
        self.bank.connection(c.id).map(|(s, _)| s.rate())
    }

    /// A frame read on side a at `now`, parsed as `info` (`None`: not IP): `Pass` (shaped
    /// later if its connection has a shaper), `Consumed` (a request or end), or `Drop`.
    pub fn on_arrival(
        &mut self,
        now: Time,
        frame: &[u8],
        info: Option<&crate::parse::IpInfo>,
        ev: &mut EventLog,
    ) -> AtIngress {
        let Some(info) = info else { return AtIngress::Pass };
        let k = info.key;
        if self.cac.is_some() && k.proto == proto::UDP && k.dst_port == self.port {
            return self.on_message(now, frame, ev);
        }
        if let Some(c) = self.conns.get_mut(&k) {
            c.last = now;
            return AtIngress::Pass;
        }
        if self.cac.is_some() && (k.proto == proto::TCP || k.proto == proto::UDP) {
            self.stats.policed += 1;
            return AtIngress::Drop(DropReason::Policed);
        }
        AtIngress::Pass
    }

    /// The shaper a packet of `key` goes through (after the delay line), if any.
    pub fn shaper_of(&self, key: &FlowKey) -> Option<FlowId> {
        self.conns.get(key).map(|c| c.id)
    }

    /// `pkt` (its `flow` set to [`Entry::shaper_of`]'s id) enters its shaper.
    pub fn enqueue(&mut self, now: Time, pkt: Packet) -> Verdict {
        self.stats.shaped_pkts += 1;
        let v = self.bank.enqueue(now, pkt, &mut self.rng);
        if matches!(v, Verdict::Dropped(_)) {
            self.stats.shaper_drops += 1;
        }
        v
    }

    /// The next packet a shaper releases at `now` (its `flow` is the shaper's id).
    pub fn dequeue(&mut self, now: Time) -> Dequeue {
        self.bank.dequeue(now)
    }

    /// When [`Entry::on_tick`] is next due.
    pub fn next_deadline(&self) -> Time {
        self.next_sweep
    }

    /// Releases connections silent for [`IDLE`] and forgets those whose shapers are empty.
    pub fn on_tick(&mut self, now: Time) {
        if now < self.next_sweep {
            return;
        }
        self.next_sweep = now + IDLE;
        let mut silent = Vec::new();
        for (k, c) in &self.conns {
            if c.state != State::Fixed && now.0.saturating_sub(c.last.0) >= IDLE.0 {
                silent.push((*k, *c));
            }
        }
        silent.sort_by_key(|(_, c)| c.id);
        for (k, c) in silent {
            if c.state == State::Running {
                self.stats.expired += 1;
                self.depart(now, c.id);
            }
            if self.bank.connection(c.id).is_some_and(|(s, _)| s.backlog().packets == 0) {
                self.bank.remove(c.id);
                self.conns.remove(&k);
            } else if let Some(c) = self.conns.get_mut(&k) {
                c.state = State::Ended;
            }
        }
    }

    fn on_message(&mut self, now: Time, frame: &[u8], ev: &mut EventLog) -> AtIngress {
        let Some((ends, payload)) = wire::udp4(frame) else { return AtIngress::Drop(DropReason::Malformed) };
        let m = match wire::decode(payload) {
            Ok(m) if matches!(m.kind, Kind::FlowRequest | Kind::FlowEnd) => m,
            _ => return AtIngress::Drop(DropReason::Malformed),
        };
        let p = if m.tcp { ShapedProto::Tcp } else { ShapedProto::Udp };
        let key = key_of(IpAddr::V4(ends.ip_src), IpAddr::V4(ends.ip_dst), p, ends.src_port, m.port);
        let reply = Reply::to_request(&ends);
        match m.kind {
            Kind::FlowEnd => self.on_end(now, &key),
            _ => self.on_request(now, key, &m, &reply, ev),
        }
        AtIngress::Consumed
    }

    fn on_end(&mut self, now: Time, key: &FlowKey) {
        match self.conns.get_mut(key) {
            Some(c) if c.state == State::Running => {
                c.state = State::Ended;
                c.last = now;
                let id = c.id;
                self.stats.ends += 1;
                self.depart(now, id);
            }
            _ => self.stats.ends_unknown += 1,
        }
    }

    fn on_request(&mut self, now: Time, key: FlowKey, m: &Msg, reply: &Reply, ev: &mut EventLog) {
        self.stats.requests += 1;
        if let Some(c) = self.conns.get(&key).copied() {
            let drained = self.bank.connection(c.id).is_none_or(|(s, _)| s.backlog().packets == 0);
            if c.state != State::Ended {
                // Running or fixed: told its rate again.
                self.stats.repeated_requests += 1;
                let rate = self.bank.connection(c.id).map_or(0, |(s, _)| s.rate().0);
                self.answer(reply, m.flow, Some(rate));
                return;
            }
            if !drained {
                // The same 5-tuple again while its last shaper still sends: refused, not mixed.
                self.refuse_full(now, reply, m.flow, ev);
                return;
            }
            self.bank.remove(c.id);
            self.conns.remove(&key);
        }
        if self.conns.len() >= self.capacity || self.next_id == u32::MAX {
            self.refuse_full(now, reply, m.flow, ev);
            return;
        }
        let id = FlowId(self.next_id);
        self.next_id += 1;
        let asked = if m.value >= 1.0 && m.value < u64::MAX as f64 { Rate(m.value as u64) } else { Rate(0) };
        let rate = self.r_req.unwrap_or(asked);
        let Some(cac) = self.cac.as_mut() else { return };
        let running = cac.running();
        let req = FlowRequest { flow: id, class: ClassTag(0), rate, depth: self.shaper.depth };
        let d = if rate.0 == 0 {
            // A request without a rate cannot be shaped: refused (the core's rules assume R > 0).
            Decision::Reject(qoslab_core::admission::DecisionReason {
                rule: "r_req > 0",
                estimate: 0.0,
                threshold: 0.0,
            })
        } else {
            cac.request(now, &req)
        };
        let assigned = cac.rate_of(id).filter(|_| d.admitted());
        let r = d.reason();
        ev.emit(MechEvent {
            at: now,
            kind: if d.admitted() { EventKind::Admit } else { EventKind::Reject },
            flow: Some(id),
            rule: r.rule,
            estimate: r.estimate,
            threshold: r.threshold,
            fields: vec![("running", Value::U64(running as u64)), ("rate_bps", Value::U64(rate.0))],
        });
        match assigned {
            Some(a) => {
                if self.bank.add(now, id, ShaperConfig { rate: a, ..self.shaper }).is_err() {
                    // Unreachable (a fresh id, a positive rate): undone, refused rather than trusted.
                    cac.on_departure(now, id);
                    self.stats.refused += 1;
                    self.answer(reply, m.flow, None);
                    return;
                }
                self.conns.insert(key, Conn { id, state: State::Running, last: now });
                self.stats.admitted += 1;
                self.apply_rate_changes(now);
                self.answer(reply, m.flow, Some(a.0));
            }
            None => {
                self.stats.refused += 1;
                self.answer(reply, m.flow, None);
            }
        }
    }

    fn refuse_full(&mut self, now: Time, reply: &Reply, token: u32, ev: &mut EventLog) {
        self.stats.refused += 1;
        self.stats.refused_table_full += 1;
        ev.emit(table_full(now, "entry_table_full", self.conns.len(), self.capacity));
        self.answer(reply, token, None);
    }

    /// The CAC releases `id`; its rate changes reach the shapers.
    fn depart(&mut self, now: Time, id: FlowId) {
        if let Some(cac) = self.cac.as_mut() {
            cac.on_departure(now, id);
        }
        self.apply_rate_changes(now);
    }

    fn apply_rate_changes(&mut self, now: Time) {
        let Some(cac) = self.cac.as_mut() else { return };
        for ch in cac.drain_rate_changes() {
            let same = self.bank.connection(ch.flow).map(|(s, _)| s.rate() == ch.rate);
            if same == Some(false) && self.bank.set_rate(now, ch.flow, ch.rate).is_ok() {
                self.stats.rate_changes += 1;
            }
        }
    }

    /// An answer frame: admitted with the assigned rate (bit/s), or refused.
    fn answer(&mut self, r: &Reply, token: u32, rate: Option<u64>) {
        if self.out.len() >= MAX_OUT {
            self.stats.replies_dropped += 1;
            return;
        }
        let m = Msg { flag: rate.is_some(), ..Msg::new(Kind::FlowAnswer, token, rate.unwrap_or(0) as f64) };
        self.out.push_back(wire::frame(r, &m));
    }
}

#[cfg(test)]
mod tests;
