//! Domain edge behaviours: what happens at the ingress and egress nodes of
//! a QoS domain, per ingress-egress aggregate (IEA), and the signalling
//! between them.
//!
//! The first user is PCN ([Zhang07], draft-briscoe-tsvwg-cl-architecture):
//! the egress keeps a congestion-level estimate per aggregate from the
//! marks of the packets leaving the domain and, in termination mode, the
//! rate that arrived unmarked; it reports them to the ingress, which
//! admits new flows against the estimate and terminates flows down to the
//! sustainable rate. An edge router's classifier [Guerin99] is an ingress
//! behaviour without signalling.
//!
//! ```text
//! a new aggregate A from I to E:        behaviour(I and E).on_aggregate(A, I, E), once, first
//! packet enters the domain at node I:   behaviour(I).on_packet(now, Ingress, aggregate, pkt, key, out)
//! packet leaves the domain at node E:   behaviour(E).on_packet(now, Egress, aggregate, pkt, key, out)
//! a flow asks to start at ingress I:    behaviour(I).on_flow_request(now, aggregate, request, out)
//!                                       → Some(decision) now, or None (answer later through out.decisions)
//! out.messages (to another edge node):  the driver delivers each one after the path's delay:
//!                                       behaviour(to).on_message(now, message, out)
//! at next_deadline():                   behaviour.on_tick(now, out)
//! ```
//!
//! Nodes and aggregates are the driver's dense ids ([`EdgeNode`],
//! [`AggregateId`]): the simulator numbers nodes as its arena does, and
//! gives every (ingress, egress) pair that carries traffic one aggregate
//! id. Nothing here knows of a clock or a simulator; the driver decides
//! what "the path's delay" is (the simulator: the sum of the propagation
//! delays along the route; the router: the real network).

pub mod pcn;

use crate::admission::{Decision, FlowRequest};
use crate::packet::{FlowId, FlowKey, Packet};
use crate::pipeline::MechEvent;
use crate::stage::StageVerdict;
use crate::units::Time;

/// A node of the driver, as edge behaviours address each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EdgeNode(pub u32);

/// An ingress-egress aggregate (IEA): the traffic from one ingress to one egress.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AggregateId(pub u32);

/// Where a packet meets an edge behaviour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeRole {
    /// Entering the domain.
    Ingress,
    /// Leaving the domain.
    Egress,
}

/// What edge behaviours tell each other.
#[derive(Clone, Debug, PartialEq)]
pub enum Signal {
    /// Egress → ingress: the congestion-level estimate of the aggregate (a
    /// fraction), in answer to the admission request of `flow` if there is one.
    CongestionLevel { flow: Option<FlowId>, cle: f64 },
    /// Egress → ingress: the rate of the aggregate that arrived not
    /// termination-marked over the last interval (bit/s).
    SustainableRate { bps: f64 },
    /// Ingress → egress: a flow asks to join the aggregate.
    AdmissionRequest { flow: FlowId },
    /// Egress → ingress: the answer to a request.
    AdmissionAnswer { flow: FlowId, admit: bool },
    /// A numbered message without meaning to the driver (tests, probes).
    Probe { seq: u64 },
}

/// A message from one edge node to another, about one aggregate.
#[derive(Clone, Debug, PartialEq)]
pub struct EdgeMessage {
    pub from: EdgeNode,
    pub to: EdgeNode,
    pub aggregate: AggregateId,
    pub signal: Signal,
}

/// What an edge behaviour asks the driver to do. The driver passes one in
/// to every call, empty, and carries out what it finds there afterwards.
#[derive(Debug, Default)]
pub struct EdgeActions {
    /// Messages to deliver, each after its path's delay.
    pub messages: Vec<EdgeMessage>,
    /// Events for the results.
    pub events: Vec<MechEvent>,
    /// Flows to stop (flow termination).
    pub terminate: Vec<FlowId>,
    /// Decisions on flow requests that were left pending.
    pub decisions: Vec<(FlowId, Decision)>,
}

impl EdgeActions {
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty() && self.events.is_empty() && self.terminate.is_empty() && self.decisions.is_empty()
    }
}

/// The behaviour of one edge node of a domain.
pub trait EdgeBehaviour: std::fmt::Debug + Send {
    /// Short name (`"pcn_ingress"`), used in results.
    fn kind(&self) -> &'static str;
    /// The driver names the end nodes of `aggregate` before its first call
    /// about it (packet, request or message), at both ends: a behaviour
    /// learns here where to send its messages for the aggregate.
    fn on_aggregate(&mut self, _aggregate: AggregateId, _ingress: EdgeNode, _egress: EdgeNode) {}
    /// A packet of `aggregate` enters (`Ingress`) or leaves (`Egress`) the
    /// domain at this node. It may be marked or dropped like at a stage.
    fn on_packet(
        &mut self,
        now: Time,
        role: EdgeRole,
        aggregate: AggregateId,
        pkt: &mut Packet,
        key: &FlowKey,
        out: &mut EdgeActions,
    ) -> StageVerdict;
    /// Does this behaviour decide on flows starting at it (admission
    /// control)? Only then does the driver call
    /// [`EdgeBehaviour::on_flow_request`]; otherwise flows start unasked.
    fn admits_flows(&self) -> bool {
        false
    }
    /// A flow of `aggregate` asks to start at this ingress. `None`: the
    /// answer comes later, through [`EdgeActions::decisions`].
    fn on_flow_request(
        &mut self,
        _now: Time,
        _aggregate: AggregateId,
        _req: &FlowRequest,
        _out: &mut EdgeActions,
    ) -> Option<Decision> {
        None
    }
    /// A message from another edge node arrives.
    fn on_message(&mut self, now: Time, msg: &EdgeMessage, out: &mut EdgeActions);
    /// The driver will never mention `flow` again (it ended, or a router
    /// dropped it from its bounded flow table): forget whatever is kept
    /// about it, so that the state held stays bounded by the driver's.
    /// A later answer or message about it is ignored.
    fn forget_flow(&mut self, _flow: FlowId) {}
    /// When [`EdgeBehaviour::on_tick`] is next needed.
    fn next_deadline(&self) -> Option<Time> {
        None
    }
    /// Periodic work due at `now`.
    fn on_tick(&mut self, _now: Time, _out: &mut EdgeActions) {}
}
