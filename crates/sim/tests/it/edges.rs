//! Domain edge behaviours driven by the simulator: a scripted ingress and
//! egress pair checks where packets meet them, that messages arrive after
//! the path's propagation delay to the nanosecond, timers, and drops.

use crate::common::*;
use qoslab_core::edge::{AggregateId, EdgeActions, EdgeBehaviour, EdgeMessage, EdgeNode, EdgeRole, Signal};
use qoslab_core::packet::FlowKey;
use qoslab_core::pipeline::{EventKind, MechEvent, Value};
use qoslab_core::qdisc::DropReason;
use qoslab_core::stage::StageVerdict;
use qoslab_core::units::{Dur, Time};
use qoslab_core::Packet;
use qoslab_sim::engine::NodeId;
use qoslab_sim::run::Sim;
use qoslab_sim::RunOptions;

/// The ingress drops the first packet it sees and records messages; the
/// egress sends one probe back at its first packet; both fire one timer.
#[derive(Debug)]
struct Script {
    me: EdgeNode,
    peer: EdgeNode,
    packets: u64,
    timer: Option<Time>,
    /// What `on_aggregate` announced: (aggregate, ingress, egress).
    ends: Vec<(AggregateId, EdgeNode, EdgeNode)>,
}

fn event(at: Time, rule: &'static str, estimate: f64, fields: Vec<(&'static str, Value)>) -> MechEvent {
    MechEvent { at, kind: EventKind::Message, flow: None, rule, estimate, threshold: f64::NAN, fields }
}

impl EdgeBehaviour for Script {
    fn kind(&self) -> &'static str {
        "script"
    }
    fn on_aggregate(&mut self, aggregate: AggregateId, ingress: EdgeNode, egress: EdgeNode) {
        self.ends.push((aggregate, ingress, egress));
    }
    fn on_packet(
        &mut self,
        now: Time,
        role: EdgeRole,
        aggregate: AggregateId,
        _pkt: &mut Packet,
        _key: &FlowKey,
        out: &mut EdgeActions,
    ) -> StageVerdict {
        self.packets += 1;
        match role {
            EdgeRole::Ingress if self.packets == 1 => StageVerdict::Drop(DropReason::Terminated),
            EdgeRole::Egress if self.packets == 1 => {
                out.messages.push(EdgeMessage {
                    from: self.me,
                    to: self.peer,
                    aggregate,
                    signal: Signal::Probe { seq: 7 },
                });
                out.events.push(event(now, "sent", 7.0, vec![("aggregate", Value::U64(aggregate.0 as u64))]));
                StageVerdict::Pass
            }
            _ => StageVerdict::Pass,
        }
    }
    fn on_message(&mut self, now: Time, msg: &EdgeMessage, out: &mut EdgeActions) {
        let Signal::Probe { seq } = msg.signal else { panic!("unexpected signal {msg:?}") };
        out.events.push(event(
            now,
            "received",
            seq as f64,
            vec![("from", Value::U64(msg.from.0 as u64)), ("aggregate", Value::U64(msg.aggregate.0 as u64))],
        ));
    }
    fn next_deadline(&self) -> Option<Time> {
        self.timer
    }
    fn on_tick(&mut self, now: Time, out: &mut EdgeActions) {
        self.timer = None;
        out.events.push(event(now, "timer", self.packets as f64, vec![]));
        for &(a, i, e) in &self.ends {
            let fields = vec![("aggregate", Value::U64(a.0 as u64)), ("ingress", Value::U64(i.0 as u64))];
            out.events.push(event(now, "ends", e.0 as f64, fields));
        }
    }
}

const DELAY_R0_R1_NS: u64 = 2_000_007;
const DELAY_R1_R2_NS: u64 = 3_000_011;

fn sim() -> Sim {
    let topo = explicit(
        &[("h0", "host"), ("r0", "router"), ("r1", "router"), ("r2", "router"), ("h1", "host")],
        &[
            ("h0", "r0", "10Mbps", "1ms"),
            ("r0", "r1", "10Mbps", &format!("{DELAY_R0_R1_NS}ns")),
            ("r1", "r2", "10Mbps", &format!("{DELAY_R1_R2_NS}ns")),
            ("r2", "h1", "10Mbps", "1ms"),
        ],
    );
    let sc = scenario(&format!(
        r#"name = "edges"
duration = "1s"
{topo}
[[traffic]]
name = "voice"
model = "cbr"
interval = "20ms"
src = "h0"
dst = "h1"
size = "200B"
start = "100ms"
"#
    ));
    let opts = RunOptions { seed: 1, base_dir: std::env::temp_dir(), progress: None };
    let mut sim = Sim::build(&sc, &opts).unwrap_or_else(|e| panic!("build: {e}"));
    let node = |n: &str| sim.net.node_id(n).unwrap();
    let (r0, r2) = (node("r0"), node("r2"));
    let script = |me: NodeId, peer: NodeId, t: u64| {
        Box::new(Script { me: EdgeNode(me.0), peer: EdgeNode(peer.0), packets: 0, timer: Some(Time(t)), ends: vec![] })
    };
    sim.set_edge(r0, script(r0, r2, 500_000_000));
    sim.set_edge(r2, script(r2, r0, 600_000_000));
    sim.run_loop(&mut None).unwrap_or_else(|e| panic!("run: {e}"));
    sim
}

fn rows<'a>(sim: &'a Sim, rule: &str) -> Vec<qoslab_sim::metrics::EventRef<'a>> {
    sim.metrics.events.iter().filter(|e| e.kind == "message" && e.rule == rule).collect()
}

#[test]
fn edge_message_arrives_after_the_paths_propagation_delay_to_the_nanosecond() {
    let sim = sim();
    let sent = rows(&sim, "sent");
    let received = rows(&sim, "received");
    assert_eq!((sent.len(), received.len()), (1, 1), "{:?}", sim.metrics.events);
    assert!(sent[0].detail.starts_with("node=r2 "), "{}", sent[0].detail);
    assert!(received[0].detail.starts_with("node=r0 "), "{}", received[0].detail);
    let r2 = sim.net.node_id("r2").unwrap().0;
    assert!(received[0].detail.contains(&format!("from={r2} ")), "{}", received[0].detail);
    assert_eq!(received[0].estimate, 7.0);
    assert_eq!(received[0].t.0 - sent[0].t.0, DELAY_R0_R1_NS + DELAY_R1_R2_NS);
    assert_eq!(
        sim.path_delay(sim.net.node_id("r2").unwrap(), sim.net.node_id("r0").unwrap()),
        Some(Dur(DELAY_R0_R1_NS + DELAY_R1_R2_NS))
    );
    // Both ends name the one aggregate (r0, r2).
    assert!(sent[0].detail.ends_with("aggregate=0") && received[0].detail.ends_with("aggregate=0"));
}

#[test]
fn edge_ingress_drop_counts_for_the_flow_and_timers_fire_at_their_deadline() {
    let sim = sim();
    let m = &sim.metrics.flows[0];
    assert_eq!(m.dropped_pkts, 1, "the ingress dropped the first packet");
    // 100 ms .. 1 s every 20 ms: 45 sent; the first dropped; the rest delivered
    // or still in flight at the end.
    assert_eq!(m.sent_pkts, 45);
    let timers = rows(&sim, "timer");
    let at: Vec<(u64, &str)> = timers.iter().map(|r| (r.t.0, &r.detail[..7])).collect();
    assert_eq!(at, vec![(500_000_000, "node=r0"), (600_000_000, "node=r2")]);
    // The egress saw every packet the ingress passed that reached it by 600 ms.
    assert!(timers[1].estimate >= 24.0, "egress packets by 600 ms: {}", timers[1].estimate);
}

#[test]
fn both_ends_of_a_new_aggregate_learn_its_ingress_and_egress_once() {
    let sim = sim();
    let (r0, r2) = (sim.net.node_id("r0").unwrap().0, sim.net.node_id("r2").unwrap().0);
    let ends = rows(&sim, "ends");
    let seen: Vec<(&str, f64)> = ends.iter().map(|r| (&r.detail[..7], r.estimate)).collect();
    assert_eq!(seen, vec![("node=r0", r2 as f64), ("node=r2", r2 as f64)], "one announcement per end");
    for r in &ends {
        assert!(r.detail.ends_with(&format!("aggregate=0 ingress={r0}")), "{}", r.detail);
    }
}
