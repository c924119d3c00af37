//! Property tests of the CBT family (RED, CBT, D-CBT, each over a FIFO or
//! ChIPS) on random arrival/departure sequences: packets are conserved, the
//! limit holds, the class accounting is right, ChIPS changes order but not
//! decisions and never reorders a flow, RED-as-a-stage is `Red` exactly,
//! and the flow counter matches a reference model.

use proptest::prelude::*;
use qoslab_core::qdisc::cbt::{
    build, Aqm, AqmConfig, Cbt, CbtConfig, Chips, ChipsConfig, Class, ClassMap, ClassQueue, ClassQueueConfig, Dcbt,
    DcbtConfig, FlowCounter, FlowCounterConfig, Placement, PlacementConfig, Tail,
};
use qoslab_core::qdisc::red::RedStage;
use qoslab_core::qdisc::red::{Red, RedConfig, RedMode, RedVariant};
use qoslab_core::{
    ClassTag, Dequeue, DropReason, Dropped, Dur, Ecn, FlowId, Limit, Packet, Qdisc, Queue, Rate, Time, Verdict,
};
use std::collections::BTreeMap;

const FLOWS: u32 = 12;
const LIMIT: u32 = 30;
const RATE: Rate = Rate::mbps(25);

#[derive(Clone, Copy, Debug)]
enum Op {
    /// A packet of flow `flow` (class `flow % 3`) and `size` bytes, `gap` ns after the last event.
    Arrive {
        flow: u32,
        size: u32,
        gap: u64,
    },
    Depart {
        gap: u64,
    },
    /// The driver's timer fires.
    Tick {
        gap: u64,
    },
}

fn class_of(flow: u32) -> Class {
    Class::ALL[(flow % 3) as usize]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..FLOWS, 40u32..1500, 0u64..400_000).prop_map(|(flow, size, gap)| Op::Arrive { flow, size, gap }),
        3 => (0u64..600_000).prop_map(|gap| Op::Depart { gap }),
        1 => (0u64..3_000_000).prop_map(|gap| Op::Tick { gap }),
    ]
}

fn red_config(w_q: f64) -> RedConfig {
    RedConfig { w_q, ..RedConfig::new(Limit::packets(LIMIT), 5.0, 15.0) }
}

fn flow_config() -> FlowCounterConfig {
    FlowCounterConfig { interval: Dur::from_ms(1) }
}

fn packet(id: u64, flow: u32, size: u32, now: Time) -> Packet {
    let mut p = Packet::new(id, FlowId(flow), size, now);
    p.class = ClassTag(class_of(flow) as u8);
    p
}

/// Drives `q` through `ops`, calling `check` after each step with the
/// verdict of an arrival (if any) and the packet dequeued (if any).
fn drive<Q: Qdisc>(
    q: &mut Q,
    ops: &[Op],
    seed: u64,
    mut check: impl FnMut(&Q, Time, Option<&Verdict>, Option<&Packet>),
) {
    let mut rng = qoslab_core::rng::stream(seed, 0);
    let mut now = Time(0);
    for (i, op) in ops.iter().enumerate() {
        match *op {
            Op::Arrive { flow, size, gap } => {
                now += Dur(gap);
                let v = q.enqueue(now, packet(i as u64, flow, size, now), &mut rng);
                check(q, now, Some(&v), None);
            }
            Op::Depart { gap } => {
                now += Dur(gap);
                let d = q.dequeue(now);
                let p = if let Dequeue::Packet(p) = d { Some(p) } else { None };
                check(q, now, None, p.as_ref());
            }
            Op::Tick { gap } => {
                now += Dur(gap);
                if q.next_deadline().is_some_and(|t| t <= now) {
                    q.on_tick(now);
                }
                check(q, now, None, None);
            }
        }
    }
}

fn aqm_configs(w_q: f64) -> [AqmConfig; 3] {
    let red = red_config(w_q);
    [AqmConfig::Red(red), AqmConfig::Cbt(CbtConfig::paper(red)), AqmConfig::Dcbt(DcbtConfig { red })]
}

fn placements() -> [PlacementConfig; 3] {
    [
        PlacementConfig::Tail,
        PlacementConfig::Chips(ChipsConfig::default()),
        PlacementConfig::Chips(ChipsConfig { keep_flow_order: false, max_tagged_share: 1.0 }),
    ]
}

/// Departure order checks: no flow is reordered (unless the literal rule is
/// allowed), and packets other than tagged ones keep their FIFO order.
fn check_order(departed: &[Packet], placement: PlacementConfig) {
    let mut last_per_flow: BTreeMap<u32, u64> = BTreeMap::new();
    let mut last_untouched = None;
    for p in departed {
        if class_of(p.flow.0) != Class::Tagged {
            assert!(last_untouched < Some(p.id), "non-tagged order changed at packet {}", p.id);
            last_untouched = Some(p.id);
        }
        let keeps_flows = match placement {
            PlacementConfig::Tail => true,
            PlacementConfig::Chips(c) => c.keep_flow_order,
        };
        if keeps_flows {
            if let Some(prev) = last_per_flow.insert(p.flow.0, p.id) {
                assert!(prev < p.id, "flow {} reordered: {} after {}", p.flow.0, p.id, prev);
            }
        }
    }
    if placement == PlacementConfig::Tail {
        assert!(departed.windows(2).all(|w| w[0].id < w[1].id), "a FIFO placement must serve in arrival order");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Every combination, through the counting wrapper: arrivals = departures
    /// + drops + backlog at every step, and the backlog never exceeds the limit.
    #[test]
    fn packets_are_conserved_and_the_limit_holds(
        ops in prop::collection::vec(op(), 1..400), w_q in prop::sample::select(vec![0.002, 0.05, 0.5]), seed in 0u64..1000,
    ) {
        for aqm in aqm_configs(w_q) {
            for placement in placements() {
                let cfg = ClassQueueConfig { placement, flows: flow_config(), ..ClassQueueConfig::new(aqm) };
                let Ok(inner) = build(&cfg, RATE) else { panic!("valid config refused") };
                let mut q = Queue::new(inner);
                let mut rng = qoslab_core::rng::stream(seed, 0);
                let mut now = Time(0);
                let mut departed = Vec::new();
                for (i, op) in ops.iter().enumerate() {
                    match *op {
                        Op::Arrive { flow, size, gap } => {
                            now += Dur(gap);
                            q.enqueue(now, packet(i as u64, flow, size, now), &mut rng);
                        }
                        Op::Depart { gap } => {
                            now += Dur(gap);
                            if let Dequeue::Packet(p) = q.dequeue(now) {
                                departed.push(p);
                            }
                        }
                        Op::Tick { gap } => {
                            now += Dur(gap);
                            if q.next_deadline().is_some_and(|t| t <= now) {
                                q.on_tick(now);
                            }
                        }
                    }
                    let s = q.stats();
                    prop_assert_eq!(s.arrivals, s.departures + s.total_drops() + q.backlog().packets as u64);
                    prop_assert!(q.backlog().packets <= LIMIT);
                }
                check_order(&departed, placement);
            }
        }
    }

    /// The class accounting always totals the physical backlog; under the FIFO
    /// placement it is exactly the per-class content of the queue. Class
    /// drops hit only UDP, and D-CBT's only while RED's average exceeds min_th.
    #[test]
    fn class_accounting_matches_the_queue_and_class_drops_obey_their_rules(
        ops in prop::collection::vec(op(), 1..400), w_q in prop::sample::select(vec![0.05, 0.5]), seed in 0u64..1000,
    ) {
        let red = red_config(w_q);
        let map = ClassMap::default();
        let mut cbt = ClassQueue::new(Cbt::new(CbtConfig::paper(red), RATE).unwrap(), Tail::new(), map, flow_config()).unwrap();
        drive(&mut cbt, &ops, seed, |q, _, v, _| {
            accounting_is_exact(q);
            if let Some(Verdict::Dropped(Dropped { reason: DropReason::ClassThreshold, packet })) = v {
                assert_ne!(class_of(packet.flow.0), Class::Tcp, "CBT tests only UDP classes");
            }
        });
        let mut dcbt = ClassQueue::new(Dcbt::new(DcbtConfig { red }, RATE).unwrap(), Tail::new(), map, flow_config()).unwrap();
        drive(&mut dcbt, &ops, seed, |q, _, v, _| {
            accounting_is_exact(q);
            if let Some(Verdict::Dropped(Dropped { reason: DropReason::ClassThreshold, packet })) = v {
                assert_ne!(class_of(packet.flow.0), Class::Tcp, "D-CBT tests only UDP classes");
                assert!(q.aqm().red_avg() > red.min_th, "D-CBT's test must be off at red_avg <= min_th");
            }
        });
        let mut chips = ClassQueue::new(Dcbt::new(DcbtConfig { red }, RATE).unwrap(), Chips::new(ChipsConfig::default()).unwrap(), map, flow_config()).unwrap();
        drive(&mut chips, &ops, seed, |q, _, _, _| {
            assert_eq!(q.class_backlog().total().packets, q.backlog().packets);
        });
    }

    /// In packet mode ChIPS changes only the order: every verdict and the
    /// class accounting are those of the same stage over a FIFO.
    #[test]
    fn chips_changes_order_but_no_decision(
        ops in prop::collection::vec(op(), 1..400), w_q in prop::sample::select(vec![0.002, 0.05, 0.5]), seed in 0u64..1000,
    ) {
        let red = red_config(w_q);
        same_decisions(|| RedStage::new(red, RATE).unwrap(), &ops, seed);
        same_decisions(|| Cbt::new(CbtConfig::paper(red), RATE).unwrap(), &ops, seed);
        same_decisions(|| Dcbt::new(DcbtConfig { red }, RATE).unwrap(), &ops, seed);
    }

    /// RED as a stage over the FIFO placement is `red::Red`, in both
    /// variants: verdict for verdict, packet for packet, average, count and
    /// `old` flag, RED's counters and the wrapper's statistics, idle periods
    /// included.
    #[test]
    fn red_stage_over_fifo_is_red(
        ops in prop::collection::vec(op(), 1..400), w_q in prop::sample::select(vec![0.002, 0.05, 0.5]),
        bytes in any::<bool>(), ns2 in any::<bool>(), ecn in any::<bool>(), seed in 0u64..1000,
    ) {
        let red = if bytes {
            RedConfig { mode: RedMode::Bytes, ..RedConfig::new(Limit::bytes(30_000), 5_000.0, 15_000.0) }
        } else {
            red_config(w_q)
        };
        let variant = if ns2 { RedVariant::Ns2 } else { RedVariant::Floyd93 };
        let red = RedConfig { variant, ecn, ..red };
        let fifo = || ClassQueue::new(RedStage::new(red, RATE).unwrap(), Tail::new(), ClassMap::default(), flow_config()).unwrap();
        let mut a = Red::new(red, RATE).unwrap();
        let mut b = fifo();
        let mut qa = Queue::new(Box::new(Red::new(red, RATE).unwrap()));
        let mut qb = Queue::new(Box::new(fifo()));
        let mut rngs: Vec<_> = (0..4).map(|_| qoslab_core::rng::stream(seed, 0)).collect();
        let mut now = Time(0);
        for (i, op) in ops.iter().enumerate() {
            match *op {
                Op::Arrive { flow, size, gap } => {
                    now += Dur(gap);
                    let mut p = packet(i as u64, flow, size, now);
                    if ecn && flow % 2 == 0 {
                        p.ecn = Ecn::Ect0;
                    }
                    let va = a.enqueue(now, p, &mut rngs[0]);
                    prop_assert_eq!(&va, &b.enqueue(now, p, &mut rngs[1]));
                    prop_assert_eq!(&va, &qa.enqueue(now, p, &mut rngs[2]));
                    prop_assert_eq!(&va, &qb.enqueue(now, p, &mut rngs[3]));
                    prop_assert_eq!(a.last_uniform(), b.aqm().last_uniform());
                }
                Op::Depart { gap } => {
                    now += Dur(gap);
                    let da = a.dequeue(now);
                    prop_assert_eq!(&da, &b.dequeue(now));
                    prop_assert_eq!(&da, &qa.dequeue(now));
                    prop_assert_eq!(&da, &qb.dequeue(now));
                }
                Op::Tick { gap } => now += Dur(gap),
            }
            prop_assert_eq!(a.avg(), b.aqm().red_avg());
            prop_assert_eq!(a.count(), b.aqm().count());
            prop_assert_eq!(a.stage().vars(), b.aqm().vars());
            prop_assert_eq!(a.red_stats(), b.aqm().stats());
            prop_assert_eq!(qa.stats(), qb.stats());
            prop_assert_eq!(a.backlog(), qa.backlog());
        }
    }

    /// The flow counter agrees with a reference model: with a tick at every
    /// event, a flow is active iff its last packet came no more than one
    /// interval before the last sweep (or after it), in its last class.
    #[test]
    fn flow_counter_matches_a_reference_model(ops in prop::collection::vec(op(), 1..400)) {
        let interval = flow_config().interval.0;
        let mut f = FlowCounter::new(flow_config()).unwrap();
        let mut last: BTreeMap<u32, u64> = BTreeMap::new();
        let mut now = 0u64;
        for op in &ops {
            let gap = match *op { Op::Arrive { gap, .. } | Op::Depart { gap } | Op::Tick { gap } => gap };
            now += gap;
            f.on_tick(Time(now));
            if let Op::Arrive { flow, .. } = *op {
                f.on_packet(Time(now), FlowId(flow), class_of(flow));
                last.insert(flow, now);
            }
            let swept = now / interval * interval;
            let active: Vec<u32> = last.iter().filter(|(_, t)| swept < interval || **t + interval >= swept).map(|(k, _)| *k).collect();
            for c in Class::ALL {
                let expect = active.iter().filter(|k| class_of(**k) == c).count() as u32;
                prop_assert_eq!(f.counts().of(c), expect, "class {:?} at {}", c, now);
            }
            for k in 0..FLOWS {
                prop_assert_eq!(f.is_active(FlowId(k)), active.contains(&k));
            }
        }
    }
}

fn accounting_is_exact<A: Aqm + Send>(q: &ClassQueue<A, Tail>) {
    let mut per_class = [0u32; 3];
    for p in q.packets() {
        per_class[class_of(p.flow.0) as usize] += 1;
    }
    for c in Class::ALL {
        assert_eq!(q.class_backlog()[c].packets, per_class[c as usize], "{c:?}");
    }
    assert_eq!(q.class_backlog().total(), q.backlog());
}

fn same_decisions<A: Aqm + Send>(stage: impl Fn() -> A, ops: &[Op], seed: u64) {
    let map = ClassMap::default();
    let mut fifo = ClassQueue::new(stage(), Tail::new(), map, flow_config()).unwrap();
    let mut fifo_log = Vec::new();
    drive(&mut fifo, ops, seed, |q, _, v, _| fifo_log.push((v.cloned(), *q.class_backlog())));
    let chips = Chips::new(ChipsConfig::default()).unwrap();
    let mut cut = ClassQueue::new(stage(), chips, map, flow_config()).unwrap();
    let mut i = 0;
    drive(&mut cut, ops, seed, |q, _, v, _| {
        assert_eq!((v.cloned(), *q.class_backlog()), fifo_log[i], "step {i}");
        assert_eq!(q.placement().class_backlog(), q.class_backlog());
        i += 1;
    });
}
