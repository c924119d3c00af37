//! A PCN domain at the router's link ([Zhang07],
//! draft-briscoe-tsvwg-cl-architecture): the ingress where frames arrive
//! on side a, the egress where they leave on side b, as two core
//! [`PcnEdge`]s (the simulator's own state machines: `qoslab_core::pcn`),
//! the link's interior meters (`pcn_admission`, `pcn_termination` stages)
//! between them. A `[pcn]` table in the configuration turns it on.
//!
//! - [`wire`]: the 32-byte UDP messages (flow request, answer, terminate,
//!   and the three messages between ingress and egress).
//!
//! ```text
//! side a, UDP to router.edge_port:  a flow request (wire) → consumed (counted: rx = edge_consumed + …);
//!                                   not a valid request → dropped (malformed)
//!                                   → ingress.on_flow_request → AdmissionRequest (wire bytes) to the egress
//! side a, a PCN DSCP (pcn_dscps):   an admitted flow (by 5-tuple) → ingress.on_packet: pass (ECN set to
//!                                   ECT(0), RFC 6660's not-marked) or dropped (terminated);
//!                                   a flow not admitted → dropped (policed)
//! side b, a PCN packet leaving:     egress.on_packet (its mark as the interior meters left it)
//! ingress ↔ egress:                 the encoded message waits out the link's delay, then is decoded and
//!                                   delivered (not queued: as the simulator, signalling is not serialized)
//! decisions, terminations:          a FlowAnswer / Terminate frame out of side a to the requesting socket
//! ```
//!
//! **No recyclable id decides admission.** The ingress's flows are keyed
//! by their 5-tuple in a table of its own (at most `router.edge_flows`,
//! admitted or pending; a request beyond it is refused, rule
//! `edge_table_full`); the core sees flow ids from a counter that is never
//! reused (a request after 2³² − 1 ids is refused the same way), not the
//! router's LRU flow ids. A flow silent for [`IDLE`] leaves the table (its
//! later packets are policed). Refused flows leave no state.
//!
//! **Marks** are RFC 6660's (ECN field of a PCN DSCP: 10 not-marked, 01
//! threshold-marked, 11 excess-traffic-marked). The egress reads them and
//! leaves them in the frame, so a capture behind the router shows what the
//! interior meters did (a real PCN-egress-node would clear them; the next
//! hop here is the scenario's receiver).

pub mod wire;

use crate::datapath::EventLog;
use qoslab_core::admission::{Decision, FlowRequest};
use qoslab_core::edge::pcn::{PcnEdge, PcnEdgeConfig};
use qoslab_core::edge::{AggregateId, EdgeActions, EdgeBehaviour, EdgeMessage, EdgeNode, EdgeRole, Signal};
use qoslab_core::packet::{proto, ClassTag, FlowId, FlowKey, Packet};
use qoslab_core::pipeline::{EventKind, EventSink, MechEvent};
use qoslab_core::qdisc::DropReason;
use qoslab_core::stage::StageVerdict;
use qoslab_core::units::{Bytes, Dur, Rate, Time};
use serde::Serialize;
use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use wire::{Kind, Msg, Reply};

/// A flow that sent nothing for this long leaves the ingress's table.
pub const IDLE: Dur = Dur::from_secs(10);
/// The most messages between ingress and egress waiting out the link's delay.
pub const MAX_IN_FLIGHT: usize = 65_536;
/// The most answer and notice frames waiting to leave side a.
pub const MAX_OUT: usize = 4096;

const INGRESS: EdgeNode = EdgeNode(0);
const EGRESS: EdgeNode = EdgeNode(1);
const AGG: AggregateId = AggregateId(0);

/// What the domain counted (monotone).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct EdgeStats {
    /// Valid flow requests read (each consumed: it does not cross the link).
    pub requests: u64,
    /// Requests for a flow the table already holds (answered again, not asked again).
    pub repeated_requests: u64,
    pub admitted: u64,
    pub refused: u64,
    /// Refused because the table was full (or the ids ran out).
    pub refused_table_full: u64,
    pub terminated: u64,
    /// Messages between ingress and egress, by kind.
    pub admission_requests: u64,
    pub congestion_levels: u64,
    pub sustainable_rates: u64,
    /// Messages dropped because [`MAX_IN_FLIGHT`] were waiting (or their value was not finite).
    pub messages_dropped: u64,
    /// Answer and termination frames handed to the kernel, refused by it, or
    /// dropped for want of a pool slot or room ([`MAX_OUT`]).
    pub replies_sent: u64,
    pub reply_errors: u64,
    pub replies_dropped: u64,
    /// PCN packets of flows not admitted (dropped as policed).
    pub policed: u64,
    /// Flows that left the table silent ([`IDLE`]).
    pub expired: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Pending,
    Admitted,
    Terminated,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    id: FlowId,
    /// The source's own number for the flow (echoed in replies).
    token: u32,
    reply: Reply,
    state: State,
    last: Time,
}

/// What the ingress did with a frame arriving on side a.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtIngress {
    /// Not the domain's business.
    Pass,
    /// A PCN packet of an admitted flow enters the domain: its ECN field
    /// must read not-marked (ECT(0)) from here on.
    Enter,
    /// A flow request, consumed.
    Consumed,
    Drop(DropReason),
}

/// The refusal of a request because a flow table (`rule`) holds `held` of its `capacity`.
pub(crate) fn table_full(now: Time, rule: &'static str, held: usize, capacity: usize) -> MechEvent {
    MechEvent {
        at: now,
        kind: EventKind::Reject,
        flow: None,
        rule,
        estimate: held as f64,
        threshold: capacity as f64,
        fields: Vec::new(),
    }
}

/// The ingress and egress of the router's PCN domain.
#[derive(Debug)]
pub struct Domain {
    port: u16,
    capacity: usize,
    delay: Dur,
    pcn_dscps: Vec<u8>,
    ingress: PcnEdge,
    egress: PcnEdge,
    flows: HashMap<FlowKey, Entry>,
    by_id: HashMap<FlowId, FlowKey>,
    next_id: u32,
    /// Encoded messages between the edges and when each arrives.
    line: VecDeque<(Time, [u8; wire::LEN])>,
    /// Answer and termination frames to send out of side a.
    pub out: VecDeque<Vec<u8>>,
    next_sweep: Time,
    pub stats: EdgeStats,
}

impl Domain {
    /// The domain of a checked `[pcn]` table: `port` = `router.edge_port`,
    /// `capacity` = `router.edge_flows`, `delay` = the link's; `seed` gives
    /// the two edges their streams (the ingress's random flow choice).
    pub fn new(
        cfg: PcnEdgeConfig,
        port: u16,
        capacity: u32,
        delay: Dur,
        pcn_dscps: &[u8],
        seed: u64,
        now: Time,
    ) -> Result<Domain, qoslab_core::ConfigError> {
        let mut ingress = PcnEdge::new(INGRESS, cfg, qoslab_core::rng::stream(seed, 1 << 40))?;
        let mut egress = PcnEdge::new(EGRESS, cfg, qoslab_core::rng::stream(seed, (1 << 40) + 1))?;
        ingress.on_aggregate(AGG, INGRESS, EGRESS);
        egress.on_aggregate(AGG, INGRESS, EGRESS);
        Ok(Domain {
            port,
            capacity: capacity as usize,
            delay,
            pcn_dscps: pcn_dscps.to_vec(),
            ingress,
            egress,
            flows: HashMap::new(),
            by_id: HashMap::new(),
            next_id: 0,
            line: VecDeque::new(),
            out: VecDeque::new(),
            next_sweep: now + IDLE,
            stats: EdgeStats::default(),
        })
    }

    /// Flows in the ingress's table (admitted, pending or terminated).
    /// Flows the core ingress keeps state for: never more than the table holds.
    pub fn core_flows(&self) -> usize {
        self.ingress.ingress().flows_held()
    }

    pub fn flows(&self) -> usize {
        self.flows.len()
    }

    pub fn ingress(&self) -> &PcnEdge {
        &self.ingress
    }

    /// The egress's CLE of the aggregate now.
    pub fn cle(&mut self, now: Time) -> f64 {
        self.egress.egress_mut().cle(now, AGG)
    }

    /// A frame read on side a at `now`, parsed as `info` (`None`: not IP).
    pub fn on_arrival(
        &mut self,
        now: Time,
        frame: &[u8],
        info: Option<&crate::parse::IpInfo>,
        ev: &mut EventLog,
    ) -> AtIngress {
        let Some(info) = info else { return AtIngress::Pass };
        let k = info.key;
        if k.proto == proto::UDP && k.dst_port == self.port {
            return self.on_request(now, frame, ev);
        }
        if !self.pcn_dscps.contains(&info.dscp) {
            return AtIngress::Pass;
        }
        let Some(e) = self.flows.get_mut(&k) else {
            self.stats.policed += 1;
            return AtIngress::Drop(DropReason::Policed);
        };
        if e.state == State::Pending {
            self.stats.policed += 1;
            return AtIngress::Drop(DropReason::Policed);
        }
        e.last = now;
        let mut pkt = Packet::new(0, e.id, frame.len() as u32, now);
        pkt.dscp = info.dscp;
        let mut out = EdgeActions::default();
        let v = self.ingress.on_packet(now, EdgeRole::Ingress, AGG, &mut pkt, &k, &mut out);
        self.carry_out(now, out, ev);
        match v {
            StageVerdict::Drop(r) => AtIngress::Drop(r),
            _ => AtIngress::Enter,
        }
    }

    /// A PCN packet leaves on side b at `now` with the marks the interior left.
    pub fn on_departure(&mut self, now: Time, pkt: &Packet, ev: &mut EventLog) {
        if pkt.pcn == qoslab_core::packet::PcnMark::NotPcn {
            return;
        }
        let mut out = EdgeActions::default();
        let mut p = *pkt;
        let key = crate::parse::NOT_IP_KEY;
        self.egress.on_packet(now, EdgeRole::Egress, AGG, &mut p, &key, &mut out);
        self.carry_out(now, out, ev);
    }

    /// When the domain next needs [`Domain::on_tick`].
    pub fn next_deadline(&self) -> Option<Time> {
        [
            self.line.front().map(|m| m.0),
            self.ingress.next_deadline(),
            self.egress.next_deadline(),
            Some(self.next_sweep),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Delivers the messages due at `now`, settles both edges' timers, and
    /// forgets flows silent for [`IDLE`].
    pub fn on_tick(&mut self, now: Time, ev: &mut EventLog) {
        while self.line.front().is_some_and(|m| m.0 <= now) {
            let (_, bytes) = self.line.pop_front().expect("checked");
            // Encoded here; a value that is not finite (none the core gives) is refused, not trusted.
            let Ok(m) = wire::decode(&bytes) else {
                self.stats.messages_dropped += 1;
                continue;
            };
            let (to, signal) = match m.kind {
                Kind::AdmissionRequest => (EGRESS, Signal::AdmissionRequest { flow: FlowId(m.flow) }),
                Kind::CongestionLevel => {
                    (INGRESS, Signal::CongestionLevel { flow: m.flag.then_some(FlowId(m.flow)), cle: m.value })
                }
                Kind::SustainableRate => (INGRESS, Signal::SustainableRate { bps: m.value }),
                Kind::FlowRequest | Kind::FlowAnswer | Kind::Terminate | Kind::FlowEnd => continue,
            };
            let from = if to == INGRESS { EGRESS } else { INGRESS };
            let msg = EdgeMessage { from, to, aggregate: AggregateId(m.aggregate), signal };
            let mut out = EdgeActions::default();
            if to == INGRESS {
                self.ingress.on_message(now, &msg, &mut out);
            } else {
                self.egress.on_message(now, &msg, &mut out);
            }
            self.carry_out(now, out, ev);
        }
        let mut out = EdgeActions::default();
        self.egress.on_tick(now, &mut out);
        self.ingress.on_tick(now, &mut out);
        self.carry_out(now, out, ev);
        if now >= self.next_sweep {
            self.next_sweep = now + IDLE;
            let before = self.flows.len();
            let (by_id, ingress) = (&mut self.by_id, &mut self.ingress);
            self.flows.retain(|_, e| {
                let keep = now.0.saturating_sub(e.last.0) < IDLE.0;
                if !keep {
                    by_id.remove(&e.id);
                    // The core ingress forgets it too: what it holds stays bounded by the table.
                    ingress.forget_flow(e.id);
                }
                keep
            });
            self.stats.expired += (before - self.flows.len()) as u64;
        }
    }

    fn on_request(&mut self, now: Time, frame: &[u8], ev: &mut EventLog) -> AtIngress {
        let Some((ends, payload)) = wire::udp4(frame) else { return AtIngress::Drop(DropReason::Malformed) };
        let m = match wire::decode(payload) {
            Ok(m) if m.kind == Kind::FlowRequest => m,
            _ => return AtIngress::Drop(DropReason::Malformed),
        };
        self.stats.requests += 1;
        let key = FlowKey {
            src: IpAddr::V4(ends.ip_src),
            dst: IpAddr::V4(ends.ip_dst),
            src_port: ends.src_port,
            dst_port: m.port,
            proto: proto::UDP,
        };
        let reply = Reply::to_request(&ends);
        if let Some(e) = self.flows.get_mut(&key) {
            self.stats.repeated_requests += 1;
            e.token = m.flow;
            e.reply = reply;
            if e.state != State::Pending {
                let admitted = e.state == State::Admitted;
                self.reply(&reply, Msg { flag: admitted, ..Msg::new(Kind::FlowAnswer, m.flow, 0.0) });
            }
            return AtIngress::Consumed;
        }
        if self.flows.len() >= self.capacity || self.next_id == u32::MAX {
            self.stats.refused += 1;
            self.stats.refused_table_full += 1;
            ev.emit(table_full(now, "edge_table_full", self.flows.len(), self.capacity));
            self.reply(&reply, Msg::new(Kind::FlowAnswer, m.flow, 0.0));
            return AtIngress::Consumed;
        }
        let id = FlowId(self.next_id);
        self.next_id += 1;
        self.flows.insert(key, Entry { id, token: m.flow, reply, state: State::Pending, last: now });
        self.by_id.insert(id, key);
        let rate = if m.value >= 0.0 && m.value < u64::MAX as f64 { Rate(m.value as u64) } else { Rate(0) };
        let req = FlowRequest { flow: id, class: ClassTag(0), rate, depth: Bytes(0) };
        let mut out = EdgeActions::default();
        let now_answer = self.ingress.on_flow_request(now, AGG, &req, &mut out);
        if let Some(d) = now_answer {
            out.decisions.push((id, d));
        }
        self.carry_out(now, out, ev);
        AtIngress::Consumed
    }

    fn reply(&mut self, r: &Reply, m: Msg) {
        if self.out.len() >= MAX_OUT {
            self.stats.replies_dropped += 1;
            return;
        }
        self.out.push_back(wire::frame(r, &m));
    }

    /// Does what an edge asked: messages onto the line, events into the
    /// log, decisions and terminations as frames to the sources.
    fn carry_out(&mut self, now: Time, mut out: EdgeActions, ev: &mut EventLog) {
        for e in out.events.drain(..) {
            ev.emit(e);
        }
        for msg in out.messages.drain(..) {
            let m = match msg.signal {
                Signal::AdmissionRequest { flow } => {
                    self.stats.admission_requests += 1;
                    Msg::new(Kind::AdmissionRequest, flow.0, 0.0)
                }
                Signal::CongestionLevel { flow, cle } => {
                    self.stats.congestion_levels += 1;
                    Msg { flag: flow.is_some(), ..Msg::new(Kind::CongestionLevel, flow.map_or(0, |f| f.0), cle) }
                }
                Signal::SustainableRate { bps } => {
                    self.stats.sustainable_rates += 1;
                    Msg::new(Kind::SustainableRate, 0, bps)
                }
                Signal::AdmissionAnswer { .. } | Signal::Probe { .. } => continue,
            };
            if self.line.len() >= MAX_IN_FLIGHT {
                self.stats.messages_dropped += 1;
                continue;
            }
            let m = Msg { aggregate: msg.aggregate.0, ..m };
            self.line.push_back((now + self.delay, wire::encode(&m)));
        }
        for (f, d) in out.decisions.drain(..) {
            let Some(key) = self.by_id.get(&f).copied() else { continue };
            let Some(e) = self.flows.get_mut(&key) else { continue };
            if e.state != State::Pending {
                continue;
            }
            let (admit, cle) = match &d {
                Decision::Admit(r) => (true, r.estimate),
                Decision::Reject(r) => (false, r.estimate),
            };
            let (reply, token) = (e.reply, e.token);
            if admit {
                e.state = State::Admitted;
                e.last = now;
                self.stats.admitted += 1;
            } else {
                self.flows.remove(&key);
                self.by_id.remove(&f);
                self.stats.refused += 1;
            }
            let value = if cle.is_finite() { cle } else { 0.0 };
            self.reply(&reply, Msg { flag: admit, ..Msg::new(Kind::FlowAnswer, token, value) });
        }
        for f in out.terminate.drain(..) {
            let Some(key) = self.by_id.get(&f).copied() else { continue };
            let Some(e) = self.flows.get_mut(&key) else { continue };
            if e.state == State::Admitted {
                e.state = State::Terminated;
                self.stats.terminated += 1;
                let (reply, token) = (e.reply, e.token);
                self.reply(&reply, Msg::new(Kind::Terminate, token, 0.0));
            }
        }
    }
}

#[cfg(test)]
mod tests;
