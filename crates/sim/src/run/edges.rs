//! Domain edge behaviours in the simulator (see `qoslab_core::edge`):
//! where packets meet them, how their messages travel, their timers.
//! Part of [`super::Sim`].
//!
//! - **Placement.** [`Sim::set_edge`] puts a behaviour at a router node
//!   (before the run starts). A forward packet forwarded by that node meets
//!   it as `Ingress` when it arrived from a host, and as `Egress` when its
//!   next hop is a host (both, in that order, at a one-router domain
//!   edge). Packets sent back by receivers (ACKs, feedback) do not.
//! - **Aggregates.** A flow's aggregate is the pair (first, last) of the
//!   edge nodes on its route; ids are given in order of first sight, so
//!   they are deterministic. A new aggregate is announced to the behaviours
//!   at both ends (`on_aggregate`) before the call that revealed it.
//! - **Messages** go from node to node after the path's delay: the sum of
//!   the propagation delays of the links on the route (signalling is not
//!   queued or serialized). A message to a node without a route is a
//!   runtime error of the run.
//! - **Actions.** Events become events-table rows (`detail` starts with
//!   `node=<name>`); terminated flows end at once (`FlowEnd` now).
//! - **Admission.** A flow whose route crosses an edge router asks the first
//!   one (its ingress) when it starts (`on_flow_request`), after the
//!   scenario's own admission control admitted it. An answer given at once
//!   starts or refuses it then; a pending one (PCN asks the egress first)
//!   arrives later as a decision action, and the flow waits in `Pending`.
//! - **PCN.** [`Sim::set_pcn_edges`] puts a `PcnEdge` at every router the
//!   `[pcn]` table names, each with its own RNG stream
//!   (`EDGE_STREAM_BASE + node`).

use super::Sim;
use crate::engine::{Event, FlowId, NodeId};
use crate::error::{Diagnostic, SimError};
use crate::mechanisms::event_row;
use crate::net::EDGE_STREAM_BASE;
use crate::traffic::FlowState;
use qoslab_core::admission::{Decision, DecisionReason, FlowRequest};
use qoslab_core::edge::pcn::PcnEdge;
use qoslab_core::edge::{AggregateId, EdgeActions, EdgeBehaviour, EdgeMessage, EdgeNode, EdgeRole};
use qoslab_core::rng;
use qoslab_core::stage::StageVerdict;
use qoslab_core::units::{Dur, Time};
use qoslab_core::Packet;
use qoslab_scenario::expand::Expanded;
use qoslab_scenario::registry;
use qoslab_scenario::PcnSpec;
use std::collections::HashMap;

const UNKNOWN: u32 = u32::MAX;

/// The edge behaviours of a run and their bookkeeping.
#[derive(Default)]
pub struct Edges {
    /// Per node: its behaviour, if it is a domain edge.
    behaviours: Vec<Option<Box<dyn EdgeBehaviour>>>,
    /// Per node: the pending `EdgeTimer` event's time.
    timer_at: Vec<Option<Time>>,
    /// Messages in flight (slots), and free slots.
    msgs: Vec<Option<EdgeMessage>>,
    free: Vec<u32>,
    /// Per flow: its aggregate id (`UNKNOWN` until first needed).
    flow_agg: Vec<u32>,
    aggs: HashMap<(u32, u32), u32>,
    /// Per aggregate: the propagation delay between its two ends along the
    /// route of the flow that revealed it (links are duplex with one delay,
    /// so it is the same both ways).
    agg_delay: Vec<Dur>,
    /// Per aggregate: its (first, last) edge nodes.
    agg_ends: Vec<(u32, u32)>,
    /// Scratch actions handed to each call.
    actions: EdgeActions,
}

impl Edges {
    /// Is any node an edge (the packet path skips everything otherwise)?
    #[inline]
    pub fn any(&self) -> bool {
        !self.behaviours.is_empty()
    }
    #[inline]
    pub fn at(&self, node: NodeId) -> bool {
        self.behaviours.get(node.index()).is_some_and(|b| b.is_some())
    }
}

impl Sim {
    /// Makes router `node` a domain edge with `behaviour`; call before the run.
    pub fn set_edge(&mut self, node: NodeId, behaviour: Box<dyn EdgeBehaviour>) {
        self.set_edges(vec![(node, behaviour)]);
    }

    /// Makes each router a domain edge with its behaviour, then computes the
    /// routes towards every edge node once (messages travel between them;
    /// the existing destinations keep their slots).
    pub fn set_edges(&mut self, edges: Vec<(NodeId, Box<dyn EdgeBehaviour>)>) {
        self.place_edges(edges, true);
    }

    /// Places the behaviours; with `route`, computes routes towards every
    /// edge node too (what messages between arbitrary edge nodes need).
    /// Without, messages travel only between an aggregate's ends, with the
    /// delay measured along the aggregate's route: no all-pairs routes (at
    /// 1,800 ingresses they were 52 MB).
    fn place_edges(&mut self, edges: Vec<(NodeId, Box<dyn EdgeBehaviour>)>, route: bool) {
        let n = self.net.nodes.len();
        if self.edges.behaviours.len() < n {
            self.edges.behaviours.resize_with(n, || None);
            self.edges.timer_at.resize(n, None);
        }
        let nodes: Vec<NodeId> = edges.iter().map(|(n, _)| *n).collect();
        for (node, behaviour) in edges {
            self.edges.behaviours[node.index()] = Some(behaviour);
        }
        if route {
            let mut dsts = self.route_dsts.clone();
            dsts.extend(
                self.edges.behaviours.iter().enumerate().filter(|(_, b)| b.is_some()).map(|(i, _)| NodeId(i as u32)),
            );
            self.net.route_to(&dsts);
        }
        for node in nodes {
            self.schedule_edge_timer(node);
        }
    }

    /// The behaviour at `node`, if it is an edge.
    pub fn edge(&self, node: NodeId) -> Option<&dyn EdgeBehaviour> {
        self.edges.behaviours.get(node.index()).and_then(|b| b.as_deref())
    }

    /// The aggregate of flow `f`: (first, last) edge node on its route.
    fn aggregate_of(&mut self, f: FlowId) -> AggregateId {
        if self.edges.flow_agg.len() <= f.index() {
            self.edges.flow_agg.resize(self.flows.len().max(f.index() + 1), UNKNOWN);
        }
        let known = self.edges.flow_agg[f.index()];
        if known != UNKNOWN {
            return AggregateId(known);
        }
        let (mut at, dst, slot) = (self.flows[f.index()].src, self.flow_dst[f.index()], self.flow_slot[f.index()]);
        let (mut first, mut last) = (UNKNOWN, UNKNOWN);
        // Delay from the start of the walk to each edge met; the ends' difference is the aggregate's.
        let (mut walked, mut at_first, mut at_last) = (0u64, 0u64, 0u64);
        for _ in 0..self.net.nodes.len() {
            if self.edges.at(at) {
                if first == UNKNOWN {
                    first = at.0;
                    at_first = walked;
                }
                last = at.0;
                at_last = walked;
            }
            if at == dst {
                break;
            }
            let Some(d) = self.net.routes.next(slot, at) else { break };
            let dir = &self.net.dirs[d.index()];
            walked = walked.saturating_add(dir.delay.0);
            at = dir.to;
        }
        let next_id = self.edges.aggs.len() as u32;
        let id = *self.edges.aggs.entry((first, last)).or_insert(next_id);
        if id == next_id {
            self.edges.agg_delay.push(Dur(at_last - at_first));
            self.edges.agg_ends.push((first, last));
        }
        if id == next_id && first != UNKNOWN {
            // A new aggregate: both ends learn where the other is.
            let ends = if first == last { vec![first] } else { vec![first, last] };
            for n in ends {
                if let Some(b) = self.edges.behaviours[n as usize].as_mut() {
                    b.on_aggregate(AggregateId(id), EdgeNode(first), EdgeNode(last));
                }
            }
        }
        self.edges.flow_agg[f.index()] = id;
        AggregateId(id)
    }

    /// A forward packet at edge `node`, arrived over `from_host` (from a
    /// host?) and leaving towards a host (`to_host`?). `false`: dropped.
    pub(super) fn edge_packet(&mut self, node: NodeId, from_host: bool, to_host: bool, pkt: &mut Packet) -> bool {
        let agg = self.aggregate_of(pkt.flow);
        for (role, applies) in [(EdgeRole::Ingress, from_host), (EdgeRole::Egress, to_host)] {
            if !applies {
                continue;
            }
            let now = self.now;
            let edges = &mut self.edges;
            let Some(b) = edges.behaviours[node.index()].as_mut() else { return true };
            // The behaviour writes into the run's action buffers in place: most packets
            // leave them empty, and then only the edge's timer is due (no buffers moved).
            let verdict = b.on_packet(now, role, agg, pkt, self.table.key(pkt.flow), &mut edges.actions);
            if self.edges.actions.is_empty() {
                self.schedule_edge_timer(node);
            } else {
                let actions = std::mem::take(&mut self.edges.actions);
                self.carry_out(node, actions);
            }
            if let StageVerdict::Drop(_) = verdict {
                self.count_drop(pkt);
                return false;
            }
        }
        true
    }

    /// An `EdgeMessage` event: delivers the message in `slot`.
    pub(super) fn edge_deliver(&mut self, slot: u32) {
        let Some(msg) = self.edges.msgs.get_mut(slot as usize).and_then(Option::take) else {
            self.fault = Some(format!("edge message {slot} delivered twice"));
            return;
        };
        self.edges.free.push(slot);
        let to = NodeId(msg.to.0);
        let mut actions = std::mem::take(&mut self.edges.actions);
        let Some(b) = self.edges.behaviours.get_mut(to.index()).and_then(|b| b.as_mut()) else {
            self.fault = Some(format!("edge message to {}, which is no domain edge", self.net.nodes[to.index()].name));
            return;
        };
        b.on_message(self.now, &msg, &mut actions);
        self.carry_out(to, actions);
    }

    /// An `EdgeTimer` event at `node`.
    pub(super) fn edge_timer(&mut self, node: NodeId) {
        if self.edges.timer_at.get(node.index()).copied().flatten() != Some(self.now) {
            return;
        }
        self.edges.timer_at[node.index()] = None;
        let mut actions = std::mem::take(&mut self.edges.actions);
        if let Some(b) = self.edges.behaviours[node.index()].as_mut() {
            b.on_tick(self.now, &mut actions);
        }
        self.carry_out(node, actions);
    }

    /// Does what a behaviour at `node` asked, then reschedules its timer.
    fn carry_out(&mut self, node: NodeId, mut actions: EdgeActions) {
        if actions.is_empty() {
            // Most packets: nothing to carry out but the behaviour's next deadline.
            self.edges.actions = actions;
            self.schedule_edge_timer(node);
            return;
        }
        let name = &self.net.nodes[node.index()].name;
        for ev in actions.events.drain(..) {
            let mut row = event_row(name, &ev);
            row.detail = row.detail.replacen("link=", "node=", 1);
            self.metrics.events.push(row);
        }
        for msg in actions.messages.drain(..) {
            self.send_edge_message(msg);
        }
        for f in actions.terminate.drain(..) {
            if let Some(fl) = self.flows.get_mut(f.index()) {
                if fl.state == FlowState::Active {
                    // Its end reason and end time in the flows table (`end_s`
                    // is when it stopped: the termination, not its planned end).
                    fl.end_reason = "terminated";
                    fl.end = self.now;
                    self.events.schedule(self.now, Event::FlowEnd(f));
                }
            }
        }
        let decided: Vec<_> = actions.decisions.drain(..).collect();
        self.edges.actions = actions;
        self.schedule_edge_timer(node);
        for (f, d) in decided {
            // Only a flow still waiting for its answer starts (or is refused).
            if self.flows.get(f.index()).is_some_and(|fl| fl.state == FlowState::Pending) {
                self.finish_start(f, d, String::new());
            }
        }
    }

    /// Asks the ingress edge of `f`'s route (the first edge router on it) to
    /// admit `f`: `Some` is its answer now, `None` a pending request whose
    /// answer comes as an action later. A flow that crosses no edge router is
    /// admitted.
    pub(super) fn edge_flow_request(&mut self, f: FlowId, req: &FlowRequest) -> Option<Decision> {
        let agg = self.aggregate_of(f);
        let Some(&(first, _)) = self.edges.agg_ends.get(agg.0 as usize) else {
            return Some(Decision::Admit(DecisionReason {
                rule: "no_domain",
                estimate: f64::NAN,
                threshold: f64::NAN,
            }));
        };
        if first == UNKNOWN {
            return Some(Decision::Admit(DecisionReason {
                rule: "no_domain",
                estimate: f64::NAN,
                threshold: f64::NAN,
            }));
        }
        let node = NodeId(first);
        let mut actions = std::mem::take(&mut self.edges.actions);
        let answer = match self.edges.behaviours[node.index()].as_mut() {
            Some(b) if b.admits_flows() => b.on_flow_request(self.now, agg, req, &mut actions),
            _ => Some(Decision::Admit(DecisionReason {
                rule: "edge_admits_all",
                estimate: f64::NAN,
                threshold: f64::NAN,
            })),
        };
        self.carry_out(node, actions);
        answer
    }

    /// Puts a PCN edge behaviour [Zhang07] at every router `spec.edges` names.
    pub(super) fn set_pcn_edges(&mut self, spec: &PcnSpec, ex: &Expanded) -> Result<(), SimError> {
        let origin = self.origin.clone();
        let fail = |path: String, message: String| {
            SimError::Config(vec![Diagnostic { origin: origin.clone(), line: None, path, message }])
        };
        let cfg = registry::pcn::edge_config(spec).map_err(|e| fail(format!("pcn.{}", e.field_path), e.message))?;
        let nodes = registry::pcn::edge_nodes(spec, &ex.nodes).map_err(|es| {
            let e = &es[0];
            fail(format!("pcn.{}", e.field_path), e.message.clone())
        })?;
        let mut edges: Vec<(NodeId, Box<dyn EdgeBehaviour>)> = Vec::with_capacity(nodes.len());
        for n in nodes {
            let rng = rng::stream(self.seed, EDGE_STREAM_BASE + n as u64);
            let edge = PcnEdge::new(EdgeNode(n as u32), cfg, rng).map_err(|e| fail("pcn".into(), e.to_string()))?;
            edges.push((NodeId(n as u32), Box::new(edge)));
        }
        self.place_edges(edges, false);
        Ok(())
    }

    /// The propagation delay from `from` to `to` along the route, if there is one.
    pub fn path_delay(&self, from: NodeId, to: NodeId) -> Option<Dur> {
        let slot = self.net.routes.slot(to)?;
        let mut at = from;
        let mut total = 0u64;
        for _ in 0..self.net.nodes.len() {
            if at == to {
                return Some(Dur(total));
            }
            let d = self.net.routes.next(slot, at)?;
            let dir = &self.net.dirs[d.index()];
            total = total.saturating_add(dir.delay.0);
            at = dir.to;
        }
        None
    }

    fn send_edge_message(&mut self, msg: EdgeMessage) {
        let (from, to) = (NodeId(msg.from.0), NodeId(msg.to.0));
        // Between an aggregate's two ends: its delay, known from its route;
        // otherwise along the routes towards `to` (see `set_edge`).
        let ends = self.edges.agg_ends.get(msg.aggregate.0 as usize).copied();
        let known = match (ends, self.edges.agg_delay.get(msg.aggregate.0 as usize)) {
            (Some((a, b)), Some(d)) if (a, b) == (from.0, to.0) || (a, b) == (to.0, from.0) => Some(*d),
            _ => None,
        };
        let Some(delay) = known.or_else(|| self.path_delay(from, to)) else {
            let name = |n: NodeId| self.net.nodes.get(n.index()).map_or("?", |x| x.name.as_str()).to_string();
            self.fault = Some(format!("edge message from {} to {}: no route", name(from), name(to)));
            return;
        };
        let slot = match self.edges.free.pop() {
            Some(s) => {
                self.edges.msgs[s as usize] = Some(msg);
                s
            }
            None => {
                self.edges.msgs.push(Some(msg));
                (self.edges.msgs.len() - 1) as u32
            }
        };
        self.events.schedule(Time(self.now.0.saturating_add(delay.0)), Event::EdgeMessage(slot));
    }

    fn schedule_edge_timer(&mut self, node: NodeId) {
        let Some(t) = self.edges.behaviours[node.index()].as_ref().and_then(|b| b.next_deadline()) else { return };
        let t = t.max(self.now);
        let pending = &mut self.edges.timer_at[node.index()];
        if pending.is_none_or(|x| t < x) {
            *pending = Some(t);
            self.events.schedule(t, Event::EdgeTimer(node));
        }
    }
}
