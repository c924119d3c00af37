//! `Qdisc::for_each_packet` visits exactly what a discipline holds, for
//! every discipline in the core: FIFO, RED, strict priority over mixed
//! children, RED/CBT/D-CBT over a FIFO or ChIPS, the MACE queue, a shaper
//! and a shaper bank. After every random enqueue, dequeue or timer tick the
//! packets visited (through the [`Queue`] wrapper) add up to `backlog()` in
//! packets and in bytes, no packet is visited twice, and the ids visited are
//! exactly the packets a driver's ledger says are still held (offered, not
//! dequeued, not dropped or pushed out).
//!
//! Drivers rely on this to count per flow what is still queued at the end
//! of a run; a discipline that forgot a sub-queue would fail here.

use proptest::prelude::*;
use qoslab_core::qdisc::cbt::{self, AqmConfig, CbtConfig, ChipsConfig, ClassQueueConfig, DcbtConfig, PlacementConfig};
use qoslab_core::qdisc::classful::{Classful, StrictPriority, TagClassifier};
use qoslab_core::qdisc::fifo::{Fifo, FifoConfig};
use qoslab_core::qdisc::mace::{MaceQueue, MaceQueueConfig};
use qoslab_core::qdisc::red::{Red, RedConfig};
use qoslab_core::qdisc::shaper::{Shaper, ShaperBank, ShaperConfig};
use qoslab_core::{
    Backlog, Bytes, ClassTag, Dequeue, Dur, Ecn, FlowId, Limit, Packet, Qdisc, Queue, Rate, Time, Verdict,
};
use std::collections::BTreeSet;

const RATE: Rate = Rate::mbps(10);
const FLOWS: u32 = 6;

/// A discipline to build (each variant a kind the core implements).
#[derive(Clone, Debug)]
enum Kind {
    Fifo(Limit),
    Red {
        limit: u32,
        min_th: f64,
        w_q: f64,
        ecn: bool,
        gentle: bool,
    },
    /// RED (0), CBT (1) or D-CBT (2), over a FIFO or ChIPS.
    ClassQueue {
        aqm: u8,
        chips: bool,
        limit: u32,
    },
    Mace(Limit),
    Shaper {
        rate: u64,
        depth: u64,
        limit: Option<u32>,
    },
    /// One shaper for each of the flows `0..flows` (others are unclassified).
    Bank {
        flows: u32,
        rate: u64,
    },
    /// Strict priority over children, each a leaf kind above.
    Prio(Vec<Kind>, bool),
}

fn limit() -> impl Strategy<Value = Limit> {
    prop_oneof![
        (1u32..50).prop_map(Limit::packets),
        (1500u64..40_000).prop_map(Limit::bytes),
        (1u32..50, 1500u64..40_000).prop_map(|(p, b)| Limit { packets: Some(p), bytes: Some(b) }),
    ]
}

fn leaf() -> impl Strategy<Value = Kind> {
    prop_oneof![
        limit().prop_map(Kind::Fifo),
        (20u32..60, 1.0f64..8.0, 0.002f64..1.0, any::<bool>(), any::<bool>())
            .prop_map(|(limit, min_th, w_q, ecn, gentle)| Kind::Red { limit, min_th, w_q, ecn, gentle }),
        (0u8..3, any::<bool>(), 20u32..60).prop_map(|(aqm, chips, limit)| Kind::ClassQueue { aqm, chips, limit }),
        limit().prop_map(Kind::Mace),
        (8_000u64..20_000_000, 1500u64..6_000, prop::option::of(1u32..30))
            .prop_map(|(rate, depth, limit)| Kind::Shaper { rate, depth, limit }),
        (1u32..=FLOWS, 8_000u64..20_000_000).prop_map(|(flows, rate)| Kind::Bank { flows, rate }),
    ]
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        6 => leaf(),
        2 => (prop::collection::vec(leaf(), 1..4), any::<bool>()).prop_map(|(c, d)| Kind::Prio(c, d)),
    ]
}

fn build(k: &Kind) -> Box<dyn Qdisc + Send> {
    match k {
        Kind::Fifo(limit) => Box::new(Fifo::new(FifoConfig { limit: *limit }).unwrap()),
        Kind::Red { limit, min_th, w_q, ecn, gentle } => {
            let cfg = RedConfig {
                w_q: *w_q,
                ecn: *ecn,
                gentle: *gentle,
                ..RedConfig::new(Limit::packets(*limit), *min_th, min_th * 3.0)
            };
            Box::new(Red::new(cfg, RATE).unwrap())
        }
        Kind::ClassQueue { aqm, chips, limit } => {
            let red = RedConfig::new(Limit::packets(*limit), 5.0, 15.0);
            let aqm = match aqm {
                0 => AqmConfig::Red(red),
                1 => AqmConfig::Cbt(CbtConfig::paper(red)),
                _ => AqmConfig::Dcbt(DcbtConfig { red }),
            };
            let mut cfg = ClassQueueConfig::new(aqm);
            cfg.flows.interval = Dur::from_ms(1);
            if *chips {
                cfg.placement = PlacementConfig::Chips(ChipsConfig::default());
            }
            cbt::build(&cfg, RATE).unwrap()
        }
        Kind::Mace(limit) => Box::new(MaceQueue::new(MaceQueueConfig { limit: *limit }).unwrap()),
        Kind::Shaper { rate, depth, limit } => {
            let cfg = ShaperConfig {
                depth: Bytes(*depth),
                limit: limit.map_or(Limit::UNLIMITED, Limit::packets),
                ..ShaperConfig::new(Rate(*rate))
            };
            Box::new(Shaper::new(cfg, Time::ZERO).unwrap())
        }
        Kind::Bank { flows, rate } => {
            let mut bank = ShaperBank::new();
            for f in 0..*flows {
                bank.add(Time::ZERO, FlowId(f), ShaperConfig::new(Rate(*rate))).unwrap();
            }
            Box::new(bank)
        }
        Kind::Prio(children, with_default) => {
            let n = children.len();
            let classifier =
                TagClassifier { map: (0..n).collect(), default: if *with_default { Some(n - 1) } else { None } };
            let kids = children.iter().map(|c| Queue::new(build(c))).collect();
            Box::new(Classful::new(classifier, StrictPriority, kids))
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Enqueue { dt: u64, size: u32, flow: u32, class: u8, ect: bool },
    Dequeue { dt: u64 },
    Tick { dt: u64 },
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let gap = prop_oneof![2 => Just(0u64), 5 => 0u64..400_000, 1 => 0u64..20_000_000];
    (1u32..8).prop_flat_map(move |arrive| {
        let op = prop_oneof![
            arrive => (gap.clone(), 40u32..=1500, 0..FLOWS, 0u8..4, any::<bool>())
                .prop_map(|(dt, size, flow, class, ect)| Op::Enqueue { dt, size, flow, class, ect }),
            3 => gap.clone().prop_map(|dt| Op::Dequeue { dt }),
            1 => gap.clone().prop_map(|dt| Op::Tick { dt }),
        ];
        prop::collection::vec(op, 1..300)
    })
}

/// What `for_each_packet` shows: the total and the ids (failing on a repeat).
fn visit(q: &Queue) -> Result<(Backlog, BTreeSet<u64>), TestCaseError> {
    let mut total = Backlog::default();
    let mut ids = BTreeSet::new();
    let mut repeated = None;
    q.for_each_packet(&mut |p| {
        total.add(p);
        if !ids.insert(p.id) {
            repeated = Some(p.id);
        }
    });
    prop_assert_eq!(repeated, None, "a packet visited twice");
    Ok((total, ids))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn every_discipline_visits_exactly_the_packets_it_holds(k in kind(), ops in ops(), seed in any::<u64>()) {
        let mut q = Queue::new(build(&k));
        let mut rng = qoslab_core::rng::stream(seed, 0);
        let mut now = Time::ZERO;
        let mut held = BTreeSet::new(); // the driver's ledger
        for (i, op) in ops.iter().enumerate() {
            match *op {
                Op::Enqueue { dt, size, flow, class, ect } => {
                    now += Dur(dt);
                    let mut p = Packet::new(i as u64, FlowId(flow), size, now);
                    p.class = ClassTag(class);
                    p.ecn = if ect { Ecn::Ect0 } else { Ecn::NotEct };
                    match q.enqueue(now, p, &mut rng) {
                        Verdict::Queued | Verdict::Marked(_) => {
                            held.insert(p.id);
                        }
                        Verdict::Dropped(_) => {}
                        Verdict::QueuedPushingOut(victims) => {
                            for v in victims {
                                prop_assert!(held.remove(&v.packet.id), "pushed out a packet not held");
                            }
                            held.insert(p.id);
                        }
                    }
                }
                Op::Dequeue { dt } => {
                    now += Dur(dt);
                    if let Dequeue::Packet(p) = q.dequeue(now) {
                        prop_assert!(held.remove(&p.id), "dequeued a packet not held");
                    }
                }
                Op::Tick { dt } => {
                    now += Dur(dt);
                    if q.next_deadline().is_some_and(|t| t <= now) {
                        q.on_tick(now);
                    }
                }
            }
            let (total, ids) = visit(&q)?;
            prop_assert_eq!(total, q.backlog(), "visited vs backlog, step {} ({:?})", i, k);
            prop_assert_eq!(&ids, &held, "visited vs the ledger, step {}", i);
        }
        // Every child of a classful queue visits its own backlog too.
        for c in q.children() {
            prop_assert_eq!(visit(c)?.0, c.backlog());
        }
    }
}
