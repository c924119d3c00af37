//! MACE as a port stage ([MACE98 §3], Fig. 3): what a driver puts in front
//! of a [`super::MaceQueue`], and the device policy below it.
//!
//! ```text
//! on_arrival(now, pkt, key):  (class, decision) = mace.classify_and_learn(now, key, pkt.flow, pkt.size)
//!                             pkt.class = class.tag(); arrived[class] += 1; decision → event
//! on_drop(pkt):               dropped[class of pkt] += 1   (queue drops and push-outs)
//! on_tick(now):              mace.on_tick(now) → events (samples carry the counters)
//! device (DevicePolicy):      DeviceQueue::admits(class of the queue's head), on_pull, on_sent
//! ```
//!
//! The events, with their typed fields in this order (the simulator writes
//! them as `link=<port> name=value ...` in the events table's `detail`):
//!
//! | event | kind | rule | estimate | threshold | fields |
//! |---|---|---|---|---|---|
//! | decision | `admit` / `reject` | the admission rule | its left side | its right side | `rate_bps`, `attempt` |
//! | admitted flow stale | `stale` | `stale_timeout` | silent time (s) | NaN | `admitted_at_s`, `last_seen_s` |
//! | candidate expired | `recognition` | `candidate_expired` | packets counted | refusals | `key`, `last_seen_s` |
//! | sample | `sample` | `measured_load` | rate (bit/s) | allocation μ (bit/s) | `bits`, `cl_arrived`, `cl_dropped`, `be_arrived`, `be_dropped`, then MBAC `nu_hat_bps`, `v_mu_bps` or SSAC `reserved_bps` |
//!
//! The per-class counters are cumulative packets since the start: arrivals
//! as classified on entry, drops by the queue (push-outs included), so the
//! class loss rates after a warm-up come from two sample rows.

use super::compose::{Mace, MaceEvent};
use super::dispatch::DeviceQueue;
use super::Class;
use crate::admission::mace::{Mbac, Ssac};
use crate::admission::{AdmissionControl, LoadSample};
use crate::packet::{FlowKey, Packet};
use crate::pipeline::{EventKind, EventSink, Field, MechEvent, Value};
use crate::qdisc::{DropReason, ProbeSink};
use crate::rng::Rng;
use crate::stage::{DevicePolicy, Stage, StageVerdict};
use crate::units::{Rate, Time};

/// An admission controller's state as event fields (after a sample).
pub trait AdmissionFields {
    fn state_fields(&self) -> Vec<Field>;
}

impl AdmissionFields for Mbac {
    fn state_fields(&self) -> Vec<Field> {
        vec![
            ("nu_hat_bps", Value::F64(self.estimate())),
            ("v_mu_bps", Value::F64(self.config().v * self.config().mu.0 as f64)),
        ]
    }
}

impl AdmissionFields for Ssac {
    fn state_fields(&self) -> Vec<Field> {
        vec![("reserved_bps", Value::U64(self.reserved().0))]
    }
}

fn ix(c: Class) -> usize {
    match c {
        Class::Cl => 0,
        Class::Be => 1,
    }
}

fn secs(t: Time) -> f64 {
    t.0 as f64 / 1e9
}

/// MACE (classifier, recognition, admission, measurement) as a port stage,
/// with per-class packet counters.
#[derive(Debug)]
pub struct MaceStage<A: AdmissionControl> {
    mace: Mace<A>,
    allocation: Rate,
    /// Packets that reached the stage, per class (`[CL, BE]`).
    arrived: [u64; 2],
    /// Packets dropped after the stage (queue drops, push-outs), per class.
    dropped: [u64; 2],
}

impl<A: AdmissionControl + AdmissionFields + std::fmt::Debug + Send> MaceStage<A> {
    /// Wraps `mace`, whose admission controller's allocation is `allocation`.
    pub fn new(mace: Mace<A>, allocation: Rate) -> MaceStage<A> {
        MaceStage { mace, allocation, arrived: [0; 2], dropped: [0; 2] }
    }
    pub fn mace(&self) -> &Mace<A> {
        &self.mace
    }
    /// Packets that arrived in class `c`.
    pub fn arrived(&self, c: Class) -> u64 {
        self.arrived[ix(c)]
    }
    /// Packets of class `c` dropped after the stage.
    pub fn dropped(&self, c: Class) -> u64 {
        self.dropped[ix(c)]
    }

    fn event(&self, ev: MaceEvent) -> MechEvent {
        match ev {
            MaceEvent::Decision { at, request, attempt, decision, .. } => {
                let r = decision.reason();
                MechEvent {
                    at,
                    kind: if decision.admitted() { EventKind::Admit } else { EventKind::Reject },
                    flow: Some(request.flow),
                    rule: r.rule,
                    estimate: r.estimate,
                    threshold: r.threshold,
                    fields: vec![("rate_bps", Value::U64(request.rate.0)), ("attempt", Value::U64(attempt as u64))],
                }
            }
            MaceEvent::Stale { at, flow } => MechEvent {
                at,
                kind: EventKind::Stale,
                flow: Some(flow.flow),
                rule: "stale_timeout",
                estimate: secs(at) - secs(flow.last_seen),
                threshold: f64::NAN,
                fields: vec![
                    ("admitted_at_s", Value::F64(secs(flow.admitted_at))),
                    ("last_seen_s", Value::F64(secs(flow.last_seen))),
                ],
            },
            MaceEvent::CandidateExpired { at, candidate } => MechEvent {
                at,
                kind: EventKind::Recognition,
                flow: None,
                rule: "candidate_expired",
                estimate: candidate.count as f64,
                threshold: candidate.refusals as f64,
                fields: vec![
                    ("key", Value::Flow(candidate.key)),
                    ("last_seen_s", Value::F64(secs(candidate.last_seen))),
                ],
            },
            MaceEvent::Sample(s) => self.sample_event(&s),
        }
    }

    fn sample_event(&self, s: &LoadSample) -> MechEvent {
        let mut fields = vec![
            ("bits", Value::U64(s.bits)),
            ("cl_arrived", Value::U64(self.arrived[0])),
            ("cl_dropped", Value::U64(self.dropped[0])),
            ("be_arrived", Value::U64(self.arrived[1])),
            ("be_dropped", Value::U64(self.dropped[1])),
        ];
        fields.extend(self.mace.admission().state_fields());
        MechEvent {
            at: s.at,
            kind: EventKind::Sample,
            flow: None,
            rule: "measured_load",
            estimate: s.rate_bps(),
            threshold: self.allocation.0 as f64,
            fields,
        }
    }
}

impl<A: AdmissionControl + AdmissionFields + std::fmt::Debug + Send> Stage for MaceStage<A> {
    fn kind(&self) -> &'static str {
        "mace"
    }

    #[inline]
    fn on_arrival(
        &mut self,
        now: Time,
        pkt: &mut Packet,
        key: &FlowKey,
        _rng: &mut Rng,
        events: &mut dyn EventSink,
    ) -> StageVerdict {
        let (class, ev) = self.mace.classify_and_learn(now, key, pkt.flow, pkt.size);
        pkt.class = class.tag();
        self.arrived[ix(class)] += 1;
        if let Some(ev) = ev {
            events.emit(self.event(ev));
        }
        StageVerdict::Pass
    }

    fn on_drop(&mut self, _now: Time, pkt: &Packet, _reason: DropReason) {
        self.dropped[ix(Class::of_tag(pkt.class))] += 1;
    }

    fn next_deadline(&self) -> Option<Time> {
        self.mace.next_deadline()
    }

    fn on_tick(&mut self, now: Time, events: &mut dyn EventSink) {
        let mut due = Vec::new();
        self.mace.on_tick(now, &mut due);
        for ev in due {
            events.emit(self.event(ev));
        }
    }

    /// `admitted_flows` (in the classifier now) and the per-class counters.
    fn probe(&self, sink: ProbeSink<'_>) {
        sink("admitted_flows", self.mace.classifier().len() as f64);
        sink("cl_arrived", self.arrived[0] as f64);
        sink("cl_dropped", self.dropped[0] as f64);
        sink("be_arrived", self.arrived[1] as f64);
        sink("be_dropped", self.dropped[1] as f64);
    }
}

impl DevicePolicy for DeviceQueue {
    fn admits(&self, head: &Packet) -> bool {
        DeviceQueue::admits(self, Class::of_tag(head.class))
    }
    fn on_pull(&mut self, pkt: &Packet) {
        DeviceQueue::on_pull(self, Class::of_tag(pkt.class));
    }
    fn on_sent(&mut self, pkt: &Packet) -> bool {
        DeviceQueue::on_sent(self, Class::of_tag(pkt.class))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::mace::{MbacConfig, SsacConfig};
    use crate::packet::{proto, FlowId};
    use crate::pipeline::Port;
    use crate::qdisc::mace::{MaceQueue, MaceQueueConfig};
    use crate::qdisc::{Dequeue, Limit, Queue};
    use crate::stage::mace::{Descriptors, DeviceQueueConfig, MaceConfig, PortDescriptor, PortSide};
    use crate::units::{Bytes, Dur};
    use std::net::{IpAddr, Ipv4Addr};

    fn key(src_port: u16, dst_port: u16) -> FlowKey {
        FlowKey {
            src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
            dst: IpAddr::V4(Ipv4Addr::new(10, 0, 1, 1)),
            src_port,
            dst_port,
            proto: proto::UDP,
        }
    }
    fn descriptors(threshold: u32) -> Descriptors {
        let port = PortDescriptor { port: 5004, side: PortSide::Dst, rate: Rate(77_200), depth: Bytes(386), threshold };
        Descriptors::new(vec![port]).unwrap()
    }
    fn port(mu: u64, buffer: u32) -> Port {
        let a = Ssac::new(SsacConfig { mu: Rate(mu) }).unwrap();
        let mace = Mace::new(MaceConfig::default(), descriptors(1), a, Time::ZERO).unwrap();
        let q = MaceQueue::new(MaceQueueConfig { limit: Limit::packets(buffer) }).unwrap();
        Port::new(Queue::new(Box::new(q)))
            .with_stage(Box::new(MaceStage::new(mace, Rate(mu))))
            .with_device(Box::new(DeviceQueue::new(DeviceQueueConfig::default()).unwrap()))
    }

    #[test]
    fn mace_stage_tags_classes_and_reports_the_decision_with_typed_fields() {
        let mut p = port(100_000, 10);
        let mut rng = crate::rng::stream(1, 0);
        let mut evs: Vec<MechEvent> = Vec::new();
        // Threshold 1: the first packet asks (and is BE), the second is CL.
        for i in 0..2 {
            let pkt = Packet::new(i, FlowId(1), 386, Time(i));
            p.enqueue(Time(i), pkt, &key(1, 5004), &mut rng, &mut evs);
        }
        assert_eq!(evs.len(), 1);
        let ev = &evs[0];
        assert_eq!((ev.kind, ev.flow, ev.rule), (EventKind::Admit, Some(FlowId(1)), crate::admission::mace::SSAC_RULE));
        assert_eq!(ev.fields, vec![("rate_bps", Value::U64(77_200)), ("attempt", Value::U64(1))]);
        // CL leaves first (strict priority), then the BE packet.
        let Dequeue::Packet(a) = p.dequeue(Time(5)) else { panic!() };
        assert_eq!((a.id, Class::of_tag(a.class)), (1, Class::Cl));
        assert!(p.on_sent(Time(6)));
        let Dequeue::Packet(b) = p.dequeue(Time(6)) else { panic!() };
        assert_eq!((b.id, Class::of_tag(b.class)), (0, Class::Be));
    }

    #[test]
    fn mace_stage_counts_queue_drops_per_class_and_reports_them_in_samples() {
        let mut p = port(100_000, 1);
        let mut rng = crate::rng::stream(1, 0);
        let mut evs: Vec<MechEvent> = Vec::new();
        // Two BE packets (not on a listed port) into a 1-packet buffer: one is dropped.
        for i in 0..2 {
            p.enqueue(Time(i), Packet::new(i, FlowId(2), 500, Time(i)), &key(1, 80), &mut rng, &mut evs);
        }
        let at = p.next_deadline().unwrap();
        assert_eq!(at, Time(Dur::from_secs(5).0));
        p.on_tick(at, &mut evs);
        let s = evs.iter().find(|e| e.kind == EventKind::Sample).expect("a sample");
        let get = |n: &str| s.fields.iter().find(|(k, _)| *k == n).map(|(_, v)| v.clone());
        assert_eq!(get("be_arrived"), Some(Value::U64(2)));
        assert_eq!(get("be_dropped"), Some(Value::U64(1)));
        assert_eq!(get("reserved_bps"), Some(Value::U64(0)));
        assert_eq!(s.threshold, 100_000.0);
    }

    #[test]
    fn mbac_sample_fields_carry_the_estimate_and_v_mu() {
        let a = Mbac::new(MbacConfig::new(Rate(1_000_000))).unwrap();
        let f = a.state_fields();
        assert_eq!(f[0], ("nu_hat_bps", Value::F64(0.0)));
        assert_eq!(f[1].0, "v_mu_bps");
    }
}
