//! Property tests of the edge-router mechanisms ([Guerin99]; proptest).
//!
//! - SCFQ (Golestani 1994, Theorem 1): over any interval in which two
//!   children are both backlogged, `|W_i/r_i − W_j/r_j| ≤ Lmax_i/r_i + Lmax_j/r_j`
//!   (plus 1 ps per packet served, the rounding of integer tags), on random
//!   rates and random packet sizes; so the throughput shares converge to
//!   the weights.
//! - Buffer management (Guérin et al. 1998): after every step the
//!   accounting equals a recount of the queued packets; no stream holds
//!   more than its allocation plus half the shared buffers (what the holes
//!   rule allows a stream alone); an accepted excess packet leaves its
//!   stream's shared use within the free shared buffers; a refusal is one
//!   the rule or the buffer count demands; never more than `buffers`
//!   packets; after draining every count is back to 0 (no buffer leaked).
//! - Classifier: on random rule sets the bit-vector database either refuses
//!   the set (and then two overlapping rules share a priority) or agrees
//!   with a linear scan on random packets; the cached stage agrees with the
//!   database whatever the cache capacity, and counts hits + misses.

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use qoslab_core::packet::proto;
use qoslab_core::pipeline::{Discard, Port};
use qoslab_core::qdisc::buffer::{BufferConfig, BufferManaged, StreamShare};
use qoslab_core::qdisc::classful::{Classful, TagClassifier};
use qoslab_core::qdisc::fifo::{Fifo, FifoConfig};
use qoslab_core::qdisc::scfq::Scfq;
use qoslab_core::stage::edge_classifier::{
    ClassifierConfig, ClassifierStage, PortRange, Rule, RuleAction, RuleDatabase,
};
use qoslab_core::{ClassTag, Dequeue, FlowId, FlowKey, Limit, Packet, Qdisc, Queue, Rate, Time, Verdict};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------
// SCFQ fairness

const PS_PER_S_BITS: i128 = 8 * 1_000_000_000_000; // bytes → ps·(bit/s)

fn fifo() -> Queue {
    Queue::new(Box::new(Fifo::new(FifoConfig { limit: Limit::packets(1_000_000) }).unwrap()))
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn scfq_backlogged_children_stay_within_golestanis_bound(
        rates in prop::collection::vec(1_000u64..10_000_000, 2..5),
        sizes in prop::collection::vec(prop::collection::vec(40u32..1500, 1..300), 4),
        v0 in prop::option::of((1u64 << 63) - 50_000_000_000_000..(1u64 << 63)),
    ) {
        let n = rates.len();
        let rates: Vec<Rate> = rates.into_iter().map(Rate).collect();
        let s = match v0 {
            Some(v) => Scfq::with_virtual_time(rates.clone(), v).unwrap(),
            None => Scfq::new(rates.clone()).unwrap(),
        };
        let mut c = Classful::new(TagClassifier::identity(n), s, (0..n).map(|_| fifo()).collect());
        let mut rng = qoslab_core::rng::stream(1, 0);
        let mut lmax = vec![0i128; n];
        let mut id = 0;
        // Every child gets its whole sequence at once: all are backlogged
        // from the start until the first one empties.
        for i in 0..n {
            for &size in &sizes[i] {
                let mut p = Packet::new(id, FlowId(i as u32), size, Time(0));
                p.class = ClassTag(i as u8);
                id += 1;
                prop_assert_eq!(c.enqueue(Time(0), p, &mut rng), Verdict::Queued);
                lmax[i] = lmax[i].max(size as i128);
            }
        }
        let r: Vec<i128> = rates.iter().map(|r| r.0 as i128).collect();
        let mut w = vec![0i128; n];
        let mut served = vec![0i128; n];
        // D_ij(k) · r_i · r_j = W_i r_j − W_j r_i (scaled to ps); track its range.
        let mut lo = vec![vec![0i128; n]; n];
        let mut hi = vec![vec![0i128; n]; n];
        while c.children().iter().all(|q| q.backlog().packets > 0) {
            let Dequeue::Packet(p) = c.dequeue(Time(1)) else { panic!("backlogged children but nothing served") };
            let i = p.class.0 as usize;
            w[i] += p.size as i128;
            served[i] += 1;
            for a in 0..n {
                for b in 0..n {
                    let d = (w[a] * r[b] - w[b] * r[a]) * PS_PER_S_BITS;
                    lo[a][b] = lo[a][b].min(d);
                    hi[a][b] = hi[a][b].max(d);
                }
            }
        }
        for a in 0..n {
            for b in a + 1..n {
                let bound = (lmax[a] * r[b] + lmax[b] * r[a]) * PS_PER_S_BITS + (served[a] + served[b]) * r[a] * r[b];
                prop_assert!(
                    hi[a][b] - lo[a][b] <= bound,
                    "children {} and {}: spread {} > bound {} (scaled ps)", a, b, hi[a][b] - lo[a][b], bound
                );
            }
        }
    }
}

/// Backlogged 1:3 weights on random sizes: the byte shares approach 1:3 as
/// the busy period grows (the bound above divided by the period).
#[test]
fn scfq_throughput_share_converges_to_the_weights() {
    use rand::{Rng as _, SeedableRng};
    let mut gen = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
    let rates = vec![Rate::kbps(500), Rate::kbps(1500)];
    let mut c = Classful::new(TagClassifier::identity(2), Scfq::new(rates).unwrap(), vec![fifo(), fifo()]);
    let mut rng = qoslab_core::rng::stream(1, 0);
    for id in 0..40_000u64 {
        let mut p = Packet::new(id, FlowId(0), gen.random_range(40..1500), Time(0));
        p.class = ClassTag((id % 2) as u8);
        c.enqueue(Time(0), p, &mut rng);
    }
    let mut w = [0u64; 2];
    let mut checkpoints = Vec::new();
    for k in 1..=16_000 {
        let Dequeue::Packet(p) = c.dequeue(Time(1)) else { panic!() };
        w[p.class.0 as usize] += p.size as u64;
        if k % 4_000 == 0 {
            checkpoints.push(w[1] as f64 / (w[0] + w[1]) as f64);
        }
    }
    for share in &checkpoints {
        assert!((share - 0.75).abs() < 0.01, "child 1's share {share} vs its weight 0.75");
    }
    let last = checkpoints.last().unwrap();
    assert!((last - 0.75).abs() < 0.002, "after 16000 packets: {last}");
}

// ---------------------------------------------------------------------------
// Buffer management

#[derive(Clone, Copy, Debug)]
enum Op {
    Enqueue { stream: u16, size: u32 },
    Dequeue,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u16..6, 1u32..2000).prop_map(|(stream, size)| Op::Enqueue { stream, size }),
        2 => Just(Op::Dequeue),
    ]
}

proptest! {
    #![proptest_config(config(128))]

    #[test]
    fn buffer_management_keeps_its_accounting_and_the_holes_rule(
        buffers in 1u32..80,
        buff_size in 1u32..1600,
        shares in prop::collection::vec(prop::option::of(1u64..400), 1..5),
        ops in prop::collection::vec(op(), 1..600),
    ) {
        // Streams 0..k (k = shares.len()) are configured; 4 and 5 may not be.
        let rate = Rate(1000);
        let mut total = 0;
        let streams: Vec<StreamShare> = shares
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let r = r.filter(|r| total + r <= 1000);
                total += r.unwrap_or(0);
                StreamShare { stream: i as u16, rate: r.map(Rate) }
            })
            .collect();
        let mut b = BufferManaged::new(BufferConfig { buffers, buff_size, rate, streams }).unwrap();
        let pool = buffers as u64 * buff_size as u64;
        let s_pool = b.shared_pool();
        prop_assert_eq!(s_pool, pool - (0..6).map(|s| b.allocation(s)).sum::<u64>());
        let mut rng = qoslab_core::rng::stream(1, 0);
        for (k, op) in ops.iter().enumerate() {
            match *op {
                Op::Enqueue { stream, size } => {
                    let a = b.counted(size);
                    let (occ, alloc) = (b.occupancy(stream), b.allocation(stream));
                    let (packets, free) = (b.backlog().packets, b.shared_free());
                    let mut p = Packet::new(k as u64, FlowId(0), size, Time(0));
                    p.stream = stream;
                    let v = b.enqueue(Time(0), p, &mut rng);
                    // The reference rule, from the paper's text.
                    let shared_after = (occ + a).saturating_sub(alloc);
                    let increase = shared_after - occ.saturating_sub(alloc);
                    let fits = occ + a <= alloc || (increase <= free && shared_after <= free - increase);
                    prop_assert_eq!(v == Verdict::Queued, packets < buffers && fits, "step {}: {:?}", k, op);
                    if v == Verdict::Queued && b.occupancy(stream) > alloc {
                        prop_assert!(b.shared_occupancy(stream) <= b.shared_free(), "holes rule after acceptance");
                    }
                }
                Op::Dequeue => {
                    let _ = b.dequeue(Time(0));
                }
            }
            // The counts equal a recount of what is queued.
            let mut occ = [0u64; 6];
            let mut real = [0u64; 6];
            b.for_each_packet(&mut |p| {
                occ[p.stream as usize] += b.counted(p.size);
                real[p.stream as usize] += p.size as u64;
            });
            let mut shared = 0;
            let mut allocated = 0;
            for s in 0..6u16 {
                prop_assert_eq!(b.occupancy(s), occ[s as usize]);
                prop_assert_eq!(b.queued_bytes(s), real[s as usize]);
                let alloc = b.allocation(s);
                shared += occ[s as usize].saturating_sub(alloc);
                allocated += occ[s as usize].min(alloc);
                prop_assert!(occ[s as usize] <= alloc + s_pool / 2, "stream {} holds {} > {} + {}/2", s, occ[s as usize], alloc, s_pool);
            }
            prop_assert_eq!((b.shared_used(), b.allocated_used()), (shared, allocated));
            prop_assert!(shared <= s_pool);
            prop_assert!(b.backlog().packets <= buffers);
        }
        while let Dequeue::Packet(_) = b.dequeue(Time(1)) {}
        for s in 0..6 {
            prop_assert_eq!(b.occupancy(s), 0);
        }
        prop_assert_eq!((b.shared_used(), b.allocated_used(), b.shared_free()), (0, 0, s_pool));
    }
}

// ---------------------------------------------------------------------------
// Classifier: bit vectors against a linear scan

fn v4(a: u32) -> IpAddr {
    IpAddr::V4(Ipv4Addr::from(a))
}

/// Addresses in 10.0.0.0/28 and 2001:db8::/124, so random prefixes meet.
fn addr() -> impl Strategy<Value = IpAddr> {
    prop_oneof![
        4 => (0u32..16).prop_map(|x| v4(0x0a00_0000 | x)),
        1 => (0u16..16).prop_map(|x| IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, x))),
    ]
}

fn prefix() -> impl Strategy<Value = Option<ipnet::IpNet>> {
    prop::option::weighted(0.6, (addr(), 0u8..=32)).prop_map(|o| {
        o.map(|(a, len)| match a {
            IpAddr::V4(_) => ipnet::IpNet::new(a, 24 + len % 9).unwrap(),
            IpAddr::V6(_) => ipnet::IpNet::new(a, 120 + len % 9).unwrap(),
        })
    })
}

fn range() -> impl Strategy<Value = Option<PortRange>> {
    prop::option::weighted(0.5, (0u16..24, 0u16..8)).prop_map(|o| o.map(|(lo, w)| PortRange { lo, hi: lo + w }))
}

fn rule() -> impl Strategy<Value = Rule> {
    (
        (0u32..40, prefix(), prefix(), range(), range()),
        (
            prop::option::weighted(0.3, prop::sample::select(vec![proto::TCP, proto::UDP])),
            prop::option::weighted(0.3, 0u16..3),
            prop::option::weighted(0.3, 0u8..3),
            (0u16..100, 0u8..3, prop::option::of(0u8..64)),
        ),
    )
        .prop_map(
            |((priority, src, dst, src_port, dst_port), (proto, ingress, dscp, (stream, class, set_dscp)))| Rule {
                priority,
                src,
                dst,
                src_port,
                dst_port,
                proto,
                ingress,
                dscp,
                action: RuleAction { stream, class, set_dscp },
            },
        )
}

fn packet() -> impl Strategy<Value = (FlowKey, u16, u8)> {
    (addr(), addr(), 0u16..34, 0u16..34, prop::sample::select(vec![proto::TCP, proto::UDP, 1]), 0u16..3, 0u8..3)
        .prop_map(|(src, dst, src_port, dst_port, proto, ingress, dscp)| {
            (FlowKey { src, dst, src_port, dst_port, proto }, ingress, dscp)
        })
}

fn linear_scan<'a>(rules: &'a [Rule], key: &FlowKey, ingress: u16, dscp: u8) -> Option<&'a Rule> {
    rules.iter().filter(|r| r.matches(key, ingress, dscp)).min_by_key(|r| r.priority)
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn rule_database_agrees_with_a_linear_scan(
        rules in prop::collection::vec(rule(), 0..60),
        packets in prop::collection::vec(packet(), 1..200),
        capacity in 1usize..8,
    ) {
        let clash = (0..rules.len()).flat_map(|a| (a + 1..rules.len()).map(move |b| (a, b))).find(|&(a, b)| {
            rules[a].priority == rules[b].priority && rules[a].overlaps(&rules[b])
        });
        let db = match RuleDatabase::new(rules.clone()) {
            Err(e) => {
                prop_assert!(clash.is_some(), "refused without two overlapping rules of one priority: {}", e);
                prop_assert_eq!(e.field, "rules");
                prop_assert!(e.message.contains("overlap"), "{}", e);
                return Ok(());
            }
            Ok(db) => db,
        };
        prop_assert!(clash.is_none(), "accepted rules {:?} that overlap with one priority", clash);
        prop_assert_eq!(db.len(), rules.len());
        let default = Some(RuleAction { stream: 999, class: 2, set_dscp: None });
        let mut stage = ClassifierStage::new(ClassifierConfig { rules: rules.clone(), cache_capacity: capacity, default }).unwrap();
        for (key, ingress, dscp) in &packets {
            let want = linear_scan(&rules, key, *ingress, *dscp);
            let got = db.lookup_rule(key, *ingress, *dscp);
            // Host bits are dropped from prefixes; compare what decides.
            prop_assert_eq!(got.map(|r| (r.priority, r.action)), want.map(|r| (r.priority, r.action)), "{:?} {} {}", key, ingress, dscp);
            prop_assert_eq!(stage.classify(key, *ingress, *dscp), want.map(|r| r.action).or(default));
        }
        prop_assert_eq!(stage.hits() + stage.misses(), packets.len() as u64);
        prop_assert!(stage.cache().len() <= capacity);
    }
}

/// A larger rule set (1000 random rules, distinct priorities) on 20 000
/// random packets: one fixed case the proptest sizes do not reach.
#[test]
fn rule_database_of_a_thousand_rules_agrees_with_a_linear_scan() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut rules: Vec<Rule> = (0..1000).map(|_| rule().new_tree(&mut runner).unwrap().current()).collect();
    for (i, r) in rules.iter_mut().enumerate() {
        r.priority = (i as u32 * 7919) % 1000; // a permutation of 0..1000
    }
    let db = RuleDatabase::new(rules.clone()).unwrap();
    let mut hits = 0;
    for _ in 0..20_000 {
        let (k, ing, d) = packet().new_tree(&mut runner).unwrap().current();
        let want = linear_scan(&rules, &k, ing, d).map(|r| (r.priority, r.action));
        assert_eq!(db.lookup_rule(&k, ing, d).map(|r| (r.priority, r.action)), want);
        hits += want.is_some() as u32;
    }
    assert!(hits > 1_000, "the random rules must match often enough to test something: {hits}");
}

// ---------------------------------------------------------------------------
// The paper's port: classifier stage → SCFQ over EF and AF/BE buffer-managed queues

#[test]
fn edge_port_classifies_admits_and_serves_ef_at_its_weight() {
    let ef = RuleAction { stream: 1, class: 0, set_dscp: Some(46) };
    let af = RuleAction { stream: 2, class: 1, set_dscp: Some(10) };
    let rules = vec![
        Rule { dst_port: Some(PortRange::exact(5000)), proto: Some(proto::UDP), ..Rule::any(1, ef) },
        Rule { dst_port: Some(PortRange { lo: 6000, hi: 6999 }), ..Rule::any(2, af) },
    ];
    let be = Some(RuleAction { stream: 3, class: 1, set_dscp: Some(0) });
    let stage = ClassifierStage::new(ClassifierConfig { rules, cache_capacity: 64, default: be }).unwrap();
    let bm = |streams| {
        Queue::new(Box::new(
            BufferManaged::new(BufferConfig { buffers: 50, buff_size: 500, rate: Rate::kbps(1000), streams }).unwrap(),
        ))
    };
    let ef_q = bm(vec![StreamShare { stream: 1, rate: Some(Rate::kbps(1000)) }]);
    let af_q = bm(vec![StreamShare { stream: 2, rate: Some(Rate::kbps(400)) }, StreamShare { stream: 3, rate: None }]);
    let scfq = Scfq::new(vec![Rate::kbps(500), Rate::kbps(1500)]).unwrap();
    let q = Queue::new(Box::new(Classful::new(TagClassifier::identity(2), scfq, vec![ef_q, af_q])));
    let mut port = Port::new(q).with_stage(Box::new(stage));
    let mut rng = qoslab_core::rng::stream(1, 0);
    let k = |dport: u16| FlowKey { src: v4(1), dst: v4(2), src_port: 999, dst_port: dport, proto: proto::UDP };
    let mut id = 0;
    for _ in 0..20 {
        for dport in [5000, 6001, 7000] {
            let p = Packet::new(id, FlowId(0), 500, Time(0));
            id += 1;
            let _ = port.enqueue(Time(0), p, &k(dport), &mut rng, &mut Discard);
        }
    }
    let q = port.queue();
    let (ef_n, af_n) = (q.children()[0].backlog().packets, q.children()[1].backlog().packets);
    // EF: b_1 = 50·500 = 25000 bytes, all 20 packets fit.
    assert_eq!(ef_n, 20);
    // AF/BE: b_2 = 10000 (its 20 packets fit), S = 15000; best-effort
    // stream 3 has shared buffers only, at most half of S alone: 15 packets.
    assert_eq!(af_n, 20 + 15);
    let mut order = Vec::new();
    while let Dequeue::Packet(p) = port.dequeue(Time(1)) {
        order.push((p.stream, p.dscp));
    }
    // SCFQ 1:3 (EF is child 0): in the first 16 packets, 4 EF and 12 AF/BE.
    assert_eq!(order[..16].iter().filter(|(s, _)| *s == 1).count(), 4);
    assert!(order.iter().all(|&(s, d)| d == [0, 46, 10, 0][s as usize]), "re-marked DSCPs: {order:?}");
}
