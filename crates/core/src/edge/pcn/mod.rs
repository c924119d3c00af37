//! A PCN edge node: the ingress and egress parts of one node as one
//! [`EdgeBehaviour`] (kind `pcn`).
//!
//! One type for both roles because one node can be both: in the parking
//! lot of [Zhang07 §2.1] (Fig. 2.3) node E is the
//! egress of the aggregate D→E and the ingress of E→F. Packets go to the
//! part named by their [`EdgeRole`]; messages by their [`Signal`]
//! (admission requests to the egress part; CLE answers and sustainable
//! rates to the ingress part); the driver's `on_aggregate` tells each part
//! where its peer is.
//!
//! ```text
//! on_packet(Ingress) → PcnIngress::on_packet      on_packet(Egress) → PcnEgress::on_packet
//! AdmissionRequest   → PcnEgress::on_request      CongestionLevel   → PcnIngress::on_congestion_level
//! SustainableRate    → PcnIngress::on_sustainable_rate
//! next_deadline      = the earlier of the two parts' deadlines; on_tick settles both
//! ```
//!
//! Signals PCN does not use (`AdmissionAnswer`, `Probe`) are ignored.

pub mod egress;
pub mod ingress;
pub mod wire;

pub use egress::{CleMode, EgressConfig, PcnEgress, TerminationStart};
pub use ingress::{FlowChoice, IngressConfig, PcnIngress, Rounding};

use crate::admission::{Decision, FlowRequest};
use crate::edge::{AggregateId, EdgeActions, EdgeBehaviour, EdgeMessage, EdgeNode, EdgeRole, Signal};
use crate::error::ConfigError;
use crate::packet::{FlowId, FlowKey, Packet};
use crate::rng::Rng;
use crate::stage::StageVerdict;
use crate::units::Time;

/// Settings of a PCN edge node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PcnEdgeConfig {
    pub ingress: IngressConfig,
    pub egress: EgressConfig,
}

impl PcnEdgeConfig {
    /// [Zhang07 §3.1.2] as used in §3.2-3.3: per-packet CLE (weight 0.01) against
    /// a CLE threshold of 0.5; 100 ms termination intervals at both ends.
    pub fn per_packet_default() -> PcnEdgeConfig {
        PcnEdgeConfig { ingress: IngressConfig::seed_default(0.5), egress: EgressConfig::per_packet_default() }
    }

    /// [Zhang07 §3.6] on: 100 ms CLE intervals with `weight`, against `cle_threshold`.
    pub fn per_interval(weight: f64, cle_threshold: f64) -> PcnEdgeConfig {
        PcnEdgeConfig {
            ingress: IngressConfig::seed_default(cle_threshold),
            egress: EgressConfig::per_interval(weight),
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        self.ingress.validate()?;
        self.egress.validate()
    }
}

/// One PCN edge node.
#[derive(Debug)]
pub struct PcnEdge {
    me: EdgeNode,
    ingress: PcnIngress,
    /// Made when the node first acts as an egress (most edge nodes of the
    /// RTT topology are only ingresses: 1,800 of them saved 128 bytes each).
    egress: Option<Box<PcnEgress>>,
    egress_config: EgressConfig,
}

impl PcnEdge {
    /// The edge node `me`; `rng` is its own stream (the ingress's random flow choice).
    pub fn new(me: EdgeNode, config: PcnEdgeConfig, rng: Rng) -> Result<PcnEdge, ConfigError> {
        config.validate()?;
        PcnEgress::new(config.egress, me)?;
        Ok(PcnEdge {
            me,
            ingress: PcnIngress::new(config.ingress, me, rng)?,
            egress: None,
            egress_config: config.egress,
        })
    }
    pub fn node(&self) -> EdgeNode {
        self.me
    }
    pub fn ingress(&self) -> &PcnIngress {
        &self.ingress
    }
    /// The egress part, once the node has acted as an egress.
    pub fn egress(&self) -> Option<&PcnEgress> {
        self.egress.as_deref()
    }
    /// The egress part, made now if the node has not acted as one yet.
    pub fn egress_mut(&mut self) -> &mut PcnEgress {
        let (config, me) = (self.egress_config, self.me);
        self.egress.get_or_insert_with(|| Box::new(PcnEgress::new(config, me).expect("config checked in new")))
    }
}

impl EdgeBehaviour for PcnEdge {
    fn kind(&self) -> &'static str {
        "pcn"
    }
    fn on_aggregate(&mut self, aggregate: AggregateId, ingress: EdgeNode, egress: EdgeNode) {
        if ingress == self.me {
            self.ingress.set_egress(aggregate, egress);
        }
        if egress == self.me {
            self.egress_mut().set_ingress(aggregate, ingress);
        }
    }
    fn on_packet(
        &mut self,
        now: Time,
        role: EdgeRole,
        aggregate: AggregateId,
        pkt: &mut Packet,
        _key: &FlowKey,
        out: &mut EdgeActions,
    ) -> StageVerdict {
        match role {
            EdgeRole::Ingress => self.ingress.on_packet(now, aggregate, pkt, out),
            EdgeRole::Egress => {
                self.egress_mut().on_packet(now, aggregate, pkt, out);
                StageVerdict::Pass
            }
        }
    }
    fn admits_flows(&self) -> bool {
        true
    }
    fn on_flow_request(
        &mut self,
        now: Time,
        aggregate: AggregateId,
        req: &FlowRequest,
        out: &mut EdgeActions,
    ) -> Option<Decision> {
        self.ingress.on_flow_request(now, aggregate, req, out)
    }
    fn forget_flow(&mut self, flow: FlowId) {
        self.ingress.forget(flow);
    }

    fn on_message(&mut self, now: Time, msg: &EdgeMessage, out: &mut EdgeActions) {
        let a = msg.aggregate;
        match msg.signal {
            Signal::AdmissionRequest { flow } => self.egress_mut().on_request(now, a, flow, msg.from, out),
            Signal::CongestionLevel { flow, cle } => self.ingress.on_congestion_level(now, a, flow, cle, out),
            Signal::SustainableRate { bps } => self.ingress.on_sustainable_rate(now, a, bps, out),
            Signal::AdmissionAnswer { .. } | Signal::Probe { .. } => {}
        }
    }
    fn next_deadline(&self) -> Option<Time> {
        match (self.ingress.next_deadline(), self.egress.as_ref().and_then(|e| e.next_deadline())) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
    fn on_tick(&mut self, now: Time, out: &mut EdgeActions) {
        if let Some(e) = self.egress.as_mut() {
            e.settle(now, out);
        }
        self.ingress.settle(now, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{proto, ClassTag, FlowId, PcnMark};
    use crate::units::{Bytes, Dur, Rate};
    use std::net::{IpAddr, Ipv4Addr};

    fn key() -> FlowKey {
        let a = IpAddr::V4(Ipv4Addr::LOCALHOST);
        FlowKey { src: a, dst: a, src_port: 1, dst_port: 2, proto: proto::UDP }
    }

    /// Delivers every message of `out` to `to` at `at` (a zero-delay path).
    fn deliver(to: &mut PcnEdge, at: Time, out: &mut EdgeActions) -> EdgeActions {
        let mut next = EdgeActions::default();
        for m in out.messages.drain(..) {
            assert_eq!(m.to, to.node());
            to.on_message(at, &m, &mut next);
        }
        next
    }

    #[test]
    fn ingress_and_egress_nodes_admit_through_the_cle_and_terminate_through_the_rate() {
        let (ni, ne, a) = (EdgeNode(0), EdgeNode(1), AggregateId(0));
        let mut cfg = PcnEdgeConfig::per_packet_default();
        cfg.ingress.flow_choice = crate::edge::pcn::FlowChoice::Newest;
        let mut ing = PcnEdge::new(ni, cfg, crate::rng::stream(1, 0)).unwrap();
        let mut egr = PcnEdge::new(ne, PcnEdgeConfig::per_packet_default(), crate::rng::stream(1, 1)).unwrap();
        ing.on_aggregate(a, ni, ne);
        egr.on_aggregate(a, ni, ne);
        let mut out = EdgeActions::default();
        // Admission: a fresh aggregate has CLE 0 < 0.5.
        let req = FlowRequest { flow: FlowId(0), class: ClassTag(0), rate: Rate::kbps(64), depth: Bytes(0) };
        assert_eq!(ing.on_flow_request(Time(0), a, &req, &mut out), None);
        let mut back = deliver(&mut egr, Time(1), &mut out);
        let decided = deliver(&mut ing, Time(2), &mut back);
        assert!(decided.decisions[0].1.admitted());
        // Four flows of 1000 B every 10 ms cross the domain; an interior meter
        // excess-marks flow 3's packets (a quarter) from 100 ms on.
        let mut out = EdgeActions::default();
        for t in (0..400u64).step_by(10) {
            for f in 0..4u32 {
                let now = Time(Dur::from_ms(t).0 + f as u64);
                ing.on_tick(now, &mut out);
                egr.on_tick(now, &mut out);
                let mut p = Packet::new(0, FlowId(f), 1000, now);
                if ing.on_packet(now, EdgeRole::Ingress, a, &mut p, &key(), &mut out) != StageVerdict::Pass {
                    continue;
                }
                assert_eq!(p.pcn, PcnMark::NotMarked);
                if f == 3 && t >= 100 {
                    p.pcn = PcnMark::ExcessMarked;
                }
                egr.on_packet(now, EdgeRole::Egress, a, &mut p, &key(), &mut out);
                // Messages arrive at once (zero-delay path).
                let mut msgs = std::mem::take(&mut out.messages);
                for m in msgs.drain(..) {
                    let target = if m.to == ni { &mut ing } else { &mut egr };
                    target.on_message(now, &m, &mut out);
                }
            }
        }
        // The egress measured [100, 200) ms: 3 flows unmarked = 2.4 Mb/s; the ingress
        // measured about 3.2 Mb/s over the next 100 ms and cut one flow, the
        // newest: flow 3.
        assert_eq!(out.terminate, vec![FlowId(3)]);
        assert_eq!(ing.ingress().terminated(), 1);
        assert!(egr.egress().expect("egr acted as an egress").rates_sent() >= 1);
        assert!(egr.egress_mut().cle(Time(Dur::from_ms(400).0), a) > 0.0);
    }

    #[test]
    fn a_bad_config_names_its_part_and_field() {
        let mut cfg = PcnEdgeConfig::per_interval(0.3, 0.05);
        cfg.egress.cle_weight = 2.0;
        let e = PcnEdge::new(EdgeNode(0), cfg, crate::rng::stream(1, 0)).unwrap_err();
        assert_eq!((e.mechanism, e.field), ("pcn_egress", "cle_weight"));
    }
}
