//! PCN invariants [Zhang07]: the admission meter's marking probability
//! never falls as its virtual queue grows, a termination meter downstream
//! of another sees only the traffic still not excess-marked, and an ingress
//! never terminates more than its measured excess in one round (beyond the
//! one flow that rounding up allows).

use proptest::prelude::*;
use qoslab_core::edge::pcn::{FlowChoice, IngressConfig, PcnIngress, Rounding};
use qoslab_core::edge::{AggregateId, EdgeActions, EdgeNode};
use qoslab_core::packet::{proto, FlowKey};
use qoslab_core::pipeline::{Discard, EventKind, Value};
use qoslab_core::stage::pcn::{
    ExcessMeter, ExcessMeterConfig, MarkingCurve, VirtualQueue, VirtualQueueConfig, VirtualQueueMeter,
};
use qoslab_core::stage::{Stage, StageVerdict};
use qoslab_core::{Bytes, Dur, FlowId, Packet, PcnMark, Rate, Time};
use std::net::{IpAddr, Ipv4Addr};

fn key() -> FlowKey {
    let a = IpAddr::V4(Ipv4Addr::LOCALHOST);
    FlowKey { src: a, dst: a, src_port: 1, dst_port: 2, proto: proto::UDP }
}

fn curve() -> impl Strategy<Value = MarkingCurve> {
    prop_oneof![
        (1u64..20_000_000, 1u64..20_000_000).prop_map(|(a, d)| MarkingCurve::Ramp { min: Dur(a), max: Dur(a + d) }),
        (1u64..40_000_000).prop_map(|at| MarkingCurve::Step { at: Dur(at) }),
    ]
}

fn mark() -> impl Strategy<Value = PcnMark> {
    prop_oneof![
        Just(PcnMark::NotPcn),
        Just(PcnMark::NotMarked),
        Just(PcnMark::ThresholdMarked),
        Just(PcnMark::ExcessMarked)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn marking_probability_is_monotone_in_virtual_queue_length(
        rate in 1_000u64..10_000_000_000,
        c in curve(),
        mut backlogs in prop::collection::vec(0u64..60_000_000, 2..40),
    ) {
        let cfg = VirtualQueueConfig { admissible_rate: Rate(rate), curve: c, upper_limit: Dur(60_000_000) };
        let q = VirtualQueue::new(cfg, Time::ZERO).unwrap();
        backlogs.sort_unstable();
        let ps: Vec<f64> = backlogs.iter().map(|&b| q.probability_at(Dur(b))).collect();
        for w in ps.windows(2) {
            prop_assert!(w[0] <= w[1], "{ps:?} over {backlogs:?}");
        }
        prop_assert!(ps.iter().all(|p| (0.0..=1.0).contains(p)));
        let (lo, hi) = match c { MarkingCurve::Ramp { min, max } => (min, max), MarkingCurve::Step { at } => (at, at) };
        prop_assert_eq!(q.probability_at(hi), 1.0);
        if lo < hi {
            prop_assert_eq!(q.probability_at(lo), 0.0);
        } else {
            prop_assert_eq!(q.probability_at(Dur(lo.0 - 1)), 0.0);
        }
    }

    #[test]
    fn a_virtual_queue_never_exceeds_its_limit_and_a_longer_queue_never_marks_less(
        rate in 1_000_000u64..1_000_000_000,
        c in curve(),
        arrivals in prop::collection::vec((0u64..2_000_000, 40u32..1500), 1..300),
    ) {
        let cfg = VirtualQueueConfig { admissible_rate: Rate(rate), curve: c, upper_limit: Dur(60_000_000) };
        let mut q = VirtualQueue::new(cfg, Time::ZERO).unwrap();
        let limit = Rate(rate).bytes_in(Dur(60_000_000));
        let mut t = Time::ZERO;
        for (gap, size) in arrivals {
            t = Time(t.0 + gap);
            let (len, p_now) = (q.len_time(t), q.probability(t));
            let p = q.arrive(t, Bytes(size as u64));
            prop_assert_eq!(p, p_now, "the packet finds the queue as it was");
            prop_assert!(q.len_bytes(t) <= limit);
            // The length as a time is rounded down to the ns: p lies between its neighbours.
            prop_assert!(q.probability_at(len) <= p && p <= q.probability_at(Dur(len.0 + 1)), "{len} {p}");
        }
    }

    #[test]
    fn only_traffic_still_not_excess_marked_is_metered_downstream(
        rate1 in 100_000u64..10_000_000,
        rate2 in 100_000u64..10_000_000,
        depth in 1_500u64..60_000,
        pkts in prop::collection::vec((0u64..400_000, 40u32..1500, mark()), 1..400),
        seed in any::<u64>(),
    ) {
        // Two bottlenecks in series, each an admission meter then a termination meter.
        let mut vq1 = VirtualQueueMeter::new(VirtualQueueConfig::seed_default(Rate(rate1)), Time::ZERO).unwrap();
        let mut ex1 = ExcessMeter::new(ExcessMeterConfig { termination_rate: Rate(rate1), depth: Bytes(depth) }, Time::ZERO).unwrap();
        let mut ex2 = ExcessMeter::new(ExcessMeterConfig { termination_rate: Rate(rate2), depth: Bytes(depth) }, Time::ZERO).unwrap();
        // A twin of the second meter that is shown only what arrives there not excess-marked.
        let mut twin = ExcessMeter::new(*ex2.config(), Time::ZERO).unwrap();
        let mut rng = qoslab_core::rng::stream(seed, 0);
        let mut t = Time::ZERO;
        let (mut reach_unmarked, mut reach_marked) = (0u64, 0u64);
        for (gap, size, m) in pkts {
            t = Time(t.0 + gap);
            let mut p = Packet::new(0, FlowId(0), size, t);
            p.pcn = m;
            vq1.on_arrival(t, &mut p, &key(), &mut rng, &mut Discard);
            let was_excess = p.pcn == PcnMark::ExcessMarked;
            ex1.on_arrival(t, &mut p, &key(), &mut rng, &mut Discard);
            prop_assert!(!was_excess || p.pcn == PcnMark::ExcessMarked, "a mark is never removed");
            prop_assert_eq!(p.pcn == PcnMark::NotPcn, m == PcnMark::NotPcn, "non-PCN stays non-PCN");
            let arrives = p;
            let v = ex2.on_arrival(t, &mut p, &key(), &mut rng, &mut Discard);
            if arrives.pcn == PcnMark::ExcessMarked {
                reach_marked += 1;
                prop_assert_eq!(v, StageVerdict::Pass);
                prop_assert_eq!(p, arrives, "an excess-marked packet passes untouched");
            } else if arrives.pcn != PcnMark::NotPcn {
                reach_unmarked += 1;
                let mut q = arrives;
                let tv = twin.on_arrival(t, &mut q, &key(), &mut rng, &mut Discard);
                prop_assert_eq!((v, p.pcn), (tv, q.pcn), "the meter acts as if marked packets were absent");
            }
        }
        prop_assert_eq!(ex2.stats().metered, reach_unmarked);
        prop_assert_eq!(ex2.stats().already_marked, reach_marked);
        prop_assert_eq!(ex2.bucket().tokens(t), twin.bucket().tokens(t));
    }

    #[test]
    fn an_ingress_never_terminates_more_than_its_measured_excess_in_one_round(
        flows in prop::collection::vec((40u32..1500, 1u64..50), 1..60),
        sar in 0.0f64..50_000_000.0,
        rounding in 0u8..3,
        choice in 0u8..3,
        batch in prop::option::of(1u32..20),
        seed in any::<u64>(),
    ) {
        let rounding = [Rounding::Up, Rounding::Down, Rounding::Nearest][rounding as usize];
        let flow_choice = [FlowChoice::Random, FlowChoice::Newest, FlowChoice::Largest][choice as usize];
        let cfg = IngressConfig { rounding, flow_choice, max_flows_per_round: batch, ..IngressConfig::seed_default(0.5) };
        let mut ing = PcnIngress::new(cfg, EdgeNode(0), qoslab_core::rng::stream(seed, 0)).unwrap();
        let a = AggregateId(0);
        let mut out = EdgeActions::default();
        ing.on_sustainable_rate(Time::ZERO, a, sar, &mut out);
        // Flow f sends `size` bytes every `gap` ms over the 100 ms interval.
        let mut sent = vec![0u64; flows.len()];
        for ms in 0..100u64 {
            for (f, &(size, gap)) in flows.iter().enumerate() {
                if ms % gap == 0 {
                    let t = Time(ms * 1_000_000 + f as u64);
                    let mut p = Packet::new(0, FlowId(f as u32), size, t);
                    prop_assert_eq!(ing.on_packet(t, a, &mut p, &mut out), StageVerdict::Pass);
                    sent[f] += size as u64;
                }
            }
        }
        ing.settle(Time(100_000_000), &mut out);
        let total: u64 = sent.iter().sum();
        let excess = total as f64 - sar * 0.1 / 8.0;
        let cut: u64 = out.terminate.iter().map(|f| sent[f.index()]).sum();
        let round = out.events.iter().find(|e| e.kind == EventKind::Sample).unwrap();
        let field = |n: &str| round.fields.iter().find(|f| f.0 == n).map(|f| f.1.clone()).unwrap();
        prop_assert_eq!(field("terminated_bytes"), Value::U64(cut));
        prop_assert_eq!(field("sent_bytes"), Value::U64(total));
        if excess <= 0.0 {
            prop_assert!(out.terminate.is_empty());
        }
        let last = out.terminate.last().map_or(0, |f| sent[f.index()]);
        match rounding {
            Rounding::Down => prop_assert!(cut as f64 <= excess.max(0.0), "cut {cut} > excess {excess}"),
            // Rounding up may overshoot, but by less than the last flow chosen.
            Rounding::Up => prop_assert!(out.terminate.is_empty() || ((cut - last) as f64) < excess),
            // Rounding to the nearest flow: the last flow taken was at least half uncovered.
            Rounding::Nearest => prop_assert!(out.terminate.is_empty() || ((2 * cut - last) as f64) <= 2.0 * excess),
        }
        if let Some(b) = batch {
            prop_assert!(out.terminate.len() <= b as usize);
        }
        let mut ids: Vec<FlowId> = out.terminate.clone();
        ids.sort();
        ids.dedup();
        prop_assert_eq!(ids.len(), out.terminate.len(), "a flow is terminated once");
    }
}
