//! Property tests of the MACE components [MACE98 §3]: invariants that
//! must hold for every sequence of arrivals, departures, samples and
//! admissions, not only for the hand-picked cases of the unit tests.

use proptest::prelude::*;
use qoslab_core::admission::mace::{Estimator, EstimatorConfig, Ssac, SsacConfig, WindowOnAdmit};
use qoslab_core::admission::{AdmissionControl, FlowRequest, LoadSample};
use qoslab_core::packet::{proto, ClassTag, FlowId, FlowKey, Packet};
use qoslab_core::qdisc::mace::{MaceQueue, MaceQueueConfig};
use qoslab_core::qdisc::{Backlog, Dequeue, DropReason, Limit, Queue, Verdict};
use qoslab_core::stage::mace::{
    Class, ClassifierConfig, Descriptors, FlowClassifier, PortDescriptor, PortSide, Recognition, Recognizer,
    RecognizerConfig,
};
use qoslab_core::units::{Bytes, Dur, Rate, Time};
use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr};

/// One step against the MACE queue.
#[derive(Clone, Debug)]
enum Op {
    Arrive { cl: bool, size: u32 },
    Depart,
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        prop_oneof![
            3 => (any::<bool>(), 40u32..1500).prop_map(|(cl, size)| Op::Arrive { cl, size }),
            1 => Just(Op::Depart),
        ],
        1..400,
    )
}

fn limits() -> impl Strategy<Value = Limit> {
    prop_oneof![
        (1u32..60).prop_map(Limit::packets),
        (1500u64..40_000).prop_map(Limit::bytes),
        ((1u32..60), (1500u64..40_000)).prop_map(|(p, b)| Limit { packets: Some(p), bytes: Some(b) }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The shared buffer never holds more than its limit; every packet is
    /// accounted for exactly once (queued, sent, dropped or pushed out);
    /// a CL arrival is never dropped while BE packets are queued; a dequeue
    /// never returns BE while CL waits.
    #[test]
    fn mace_queue_bounded_conserving_and_cl_protected(limit in limits(), ops in ops()) {
        let mut rng = qoslab_core::rng::stream(7, 0);
        let mut q = Queue::new(Box::new(MaceQueue::new(MaceQueueConfig { limit }).unwrap()));
        let (mut offered, mut sent, mut dropped) = (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
        let mut queued: Vec<(u64, Class)> = Vec::new(); // the model: ids and classes held
        let mut sizes = std::collections::BTreeMap::new();
        for (i, op) in ops.iter().enumerate() {
            let now = Time(i as u64);
            match *op {
                Op::Arrive { cl, size } => {
                    let class = if cl { Class::Cl } else { Class::Be };
                    let mut p = Packet::new(i as u64, FlowId(0), size, now);
                    p.class = class.tag();
                    offered.insert(p.id);
                    sizes.insert(p.id, size);
                    let be_before = queued.iter().filter(|(_, c)| *c == Class::Be).count();
                    let cl_before = queued_backlog(&queued, &sizes, Class::Cl);
                    match q.enqueue(now, p, &mut rng) {
                        Verdict::Queued => queued.push((p.id, class)),
                        Verdict::QueuedPushingOut(victims) => {
                            prop_assert_eq!(class, Class::Cl, "only CL pushes out");
                            for v in &victims {
                                prop_assert_eq!(v.reason, DropReason::PushedOut);
                                // The victims are the newest BE packets, newest first.
                                let newest_be = queued.iter().rposition(|(_, c)| *c == Class::Be).unwrap();
                                prop_assert_eq!(queued.remove(newest_be).0, v.packet.id);
                                prop_assert!(dropped.insert(v.packet.id));
                            }
                            queued.push((p.id, class));
                        }
                        Verdict::Dropped(d) => {
                            if class == Class::Cl {
                                // Only when CL alone leaves no room: with the paper's packet limit,
                                // that means no BE packet was queued.
                                prop_assert!(limit.would_exceed(cl_before, size), "CL dropped with room");
                                if limit.bytes.is_none() {
                                    prop_assert_eq!(be_before, 0, "CL dropped while {} BE were queued", be_before);
                                }
                            }
                            prop_assert!(dropped.insert(d.packet.id));
                        }
                        Verdict::Marked(_) => prop_assert!(false, "MACE never marks"),
                    }
                }
                Op::Depart => match q.dequeue(now) {
                    Dequeue::Packet(p) => {
                        let class = Class::of_tag(p.class);
                        if class == Class::Be {
                            prop_assert!(queued.iter().all(|(_, c)| *c == Class::Be), "BE served while CL waited");
                        }
                        let first_of_class = queued.iter().position(|(_, c)| *c == class).unwrap();
                        prop_assert_eq!(queued.remove(first_of_class).0, p.id, "FIFO within a class");
                        prop_assert!(sent.insert(p.id));
                    }
                    Dequeue::Empty => prop_assert!(queued.is_empty()),
                    Dequeue::NotBefore(_) => prop_assert!(false, "MACE never shapes"),
                },
            }
            let b = q.backlog();
            prop_assert!(limit.holds(b), "backlog {:?} over {:?}", b, limit);
            prop_assert_eq!(b.packets as usize, queued.len());
        }
        let held: BTreeSet<u64> = queued.iter().map(|(id, _)| *id).collect();
        prop_assert_eq!(sent.len() + dropped.len() + held.len(), offered.len());
        let all: BTreeSet<u64> = sent.union(&dropped).chain(held.iter()).copied().collect();
        prop_assert_eq!(all, offered);
        let s = q.stats();
        prop_assert_eq!(s.arrivals, s.departures + s.total_drops() + q.backlog().packets as u64);
    }

    /// The estimate is at least every sample of the current window, and at
    /// the end of each window it equals that window's maximum.
    #[test]
    fn estimator_estimate_covers_every_sample_of_the_current_window(
        window in 1u32..25,
        restart in any::<bool>(),
        steps in prop::collection::vec(prop_oneof![
            4 => (0u64..5_000_000).prop_map(Some),
            1 => Just(None),
        ], 1..300),
    ) {
        let on_admit = if restart { WindowOnAdmit::Restart } else { WindowOnAdmit::Continue };
        let mut e = Estimator::new(EstimatorConfig { window, on_admit }).unwrap();
        let mut current: Vec<f64> = Vec::new();
        for step in steps {
            match step {
                Some(bps) => {
                    let before = e.windows_completed();
                    let s = LoadSample { at: Time(0), interval: Dur::from_secs(1), bits: bps };
                    e.on_sample(&s);
                    current.push(bps as f64);
                    if e.windows_completed() > before {
                        let max = current.iter().cloned().fold(0.0, f64::max);
                        prop_assert_eq!(e.estimate(), max, "end of window: the window's maximum");
                        current.clear();
                    }
                }
                None => {
                    let before = e.estimate();
                    e.on_admit(Rate(77_200));
                    prop_assert_eq!(e.estimate(), before + 77_200.0);
                    if restart {
                        current.clear();
                    }
                }
            }
            prop_assert_eq!(e.window_samples() as usize, current.len());
            for s in &current {
                prop_assert!(e.estimate() >= *s, "estimate {} below a window sample {}", e.estimate(), s);
            }
        }
    }

    /// The classifier never holds more than its capacity, whatever arrives.
    #[test]
    fn classifier_never_exceeds_capacity(
        capacity in 1usize..16,
        steps in prop::collection::vec((0u16..40, 0u64..100, any::<bool>()), 1..300),
    ) {
        let cfg = ClassifierConfig { capacity, timeout: Dur::from_secs(30), ..ClassifierConfig::default() };
        let mut c = FlowClassifier::new(cfg).unwrap();
        for (i, (port, dt, insert)) in steps.into_iter().enumerate() {
            let now = Time(Dur::from_secs(i as u64).0 + dt);
            let k = key(port, 5004);
            let was_present = c.lookup(&k).is_some();
            if insert {
                let full = c.is_full();
                let r = c.insert(now, &k, FlowId(port as u32));
                prop_assert_eq!(r.is_err(), full && !was_present, "refused exactly when full and new");
            } else {
                prop_assert_eq!(c.classify(now, &k) == Class::Cl, was_present);
            }
            prop_assert!(c.len() <= capacity);
            if i % 17 == 0 {
                for s in c.sweep(now) {
                    prop_assert!(now.since(s.last_seen) >= Dur::from_secs(30));
                }
            }
        }
    }

    /// The recognition table stays within its capacity; a flow that is
    /// always refused asks exactly every `threshold` packets, as long as it
    /// is not evicted.
    #[test]
    fn recognition_bounded_and_asks_every_threshold_packets(
        capacity in 1usize..12,
        threshold in 1u32..20,
        ports in prop::collection::vec(0u16..30, 1..400),
    ) {
        let d = Descriptors::new(vec![PortDescriptor {
            port: 5004, side: PortSide::Dst, rate: Rate(77_200), depth: Bytes(386), threshold,
        }]).unwrap();
        let mut r = Recognizer::new(RecognizerConfig { capacity, ..RecognizerConfig::default() }, d).unwrap();
        for (i, port) in ports.into_iter().enumerate() {
            let k = key(port, 5004);
            let before = r.count(&k).unwrap_or(0);
            match r.on_packet(Time(i as u64), &k) {
                Recognition::Ask { .. } => {
                    prop_assert_eq!(before + 1, threshold);
                    r.on_decision(Time(i as u64), &k, false);
                    prop_assert_eq!(r.count(&k), Some(0));
                }
                Recognition::Counting { count, .. } => {
                    prop_assert_eq!(count, before + 1);
                    prop_assert!(count < threshold);
                }
                other => prop_assert!(false, "unexpected {:?}", other),
            }
            prop_assert!(r.len() <= capacity);
        }
    }

    /// SSAC's reservation is always the sum of its admitted flows' rates
    /// and never exceeds μ.
    #[test]
    fn ssac_reservation_is_the_sum_and_stays_within_mu(
        mu in 1u64..2_000_000,
        steps in prop::collection::vec((0u32..30, 1u64..400_000, any::<bool>()), 1..300),
    ) {
        let mut s = Ssac::new(SsacConfig { mu: Rate(mu) }).unwrap();
        let mut model: std::collections::BTreeMap<u32, u64> = Default::default();
        for (flow, rate, depart) in steps {
            if depart {
                s.on_departure(Time(0), FlowId(flow));
                model.remove(&flow);
            } else {
                let req = FlowRequest { flow: FlowId(flow), class: ClassTag(0), rate: Rate(rate), depth: Bytes(0) };
                let fits = model.contains_key(&flow) || model.values().sum::<u64>() + rate <= mu;
                prop_assert_eq!(s.request(Time(0), &req).admitted(), fits);
                if fits {
                    model.entry(flow).or_insert(rate);
                }
            }
            prop_assert_eq!(s.reserved(), Rate(model.values().sum()));
            prop_assert!(s.reserved().0 <= mu);
        }
    }
}

fn queued_backlog(queued: &[(u64, Class)], sizes: &std::collections::BTreeMap<u64, u32>, class: Class) -> Backlog {
    let mut b = Backlog::default();
    for (id, c) in queued {
        if *c == class {
            b.packets += 1;
            b.bytes += sizes[id] as u64;
        }
    }
    b
}

fn key(src_port: u16, dst_port: u16) -> FlowKey {
    FlowKey {
        src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
        dst: IpAddr::V4(Ipv4Addr::new(10, 0, 1, 1)),
        src_port,
        dst_port,
        proto: proto::UDP,
    }
}
