//! Property tests of the core mechanisms' invariants (proptest).
//!
//! - Packet conservation: for FIFO, RED (packet and byte mode, gentle on and
//!   off, ECN on and off, random thresholds) and strict priority over child
//!   queues, at every step `arrivals = departures + drops + backlog` in the
//!   wrapper's statistics and in the driver's own ledger (packets and
//!   bytes), and at the end every packet offered is accounted for exactly
//!   once (sent, dropped or still queued).
//! - No queue exceeds its configured limit.
//! - Strict priority never serves a lower class while a higher one can send
//!   (with plain FIFO children: while a higher one is backlogged).
//! - Token bucket: tokens never exceed the depth; bytes consumed over
//!   `[t0, t]` never exceed the initial tokens plus `rate * (t - t0) / 8`;
//!   `time_to_conformance` is exact.
//! - RED: the average follows `algo` exactly, stays within
//!   `[0, largest queue seen]`, and with `w_q = 1` equals the queue found by
//!   each non-idle arrival.
//!
//! Case counts are kept modest so that this file runs in a few seconds.

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use qoslab_core::qdisc::classful::{Classful, StrictPriority, TagClassifier};
use qoslab_core::qdisc::fifo::{Fifo, FifoConfig};
use qoslab_core::qdisc::red::{algo, Red, RedConfig, RedMode, RedVariant};
use qoslab_core::qdisc::ProbeSink;
use qoslab_core::token_bucket::{TokenBucket, TokenBucketConfig};
use qoslab_core::{
    Backlog, Bytes, ClassTag, Dequeue, Dropped, Ecn, FlowId, Limit, Packet, Qdisc, Queue, Rate, Rng, Time, Verdict,
};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

const CASES: u32 = 192;

/// Modest case counts; failures are saved beside this file
/// (`properties.proptest-regressions`) and replayed first on the next run.
fn config() -> ProptestConfig {
    ProptestConfig {
        cases: CASES,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------
// Random traffic: enqueues and dequeues at non-decreasing times.

#[derive(Clone, Copy, Debug)]
enum Op {
    Enqueue { dt: u64, size: u32, class: u8, ect: bool },
    Dequeue { dt: u64 },
}

impl Op {
    fn dt(&self) -> u64 {
        match *self {
            Op::Enqueue { dt, .. } | Op::Dequeue { dt } => dt,
        }
    }
}

fn gap() -> impl Strategy<Value = u64> {
    prop_oneof![2 => Just(0u64), 5 => 0u64..400_000, 1 => 0u64..50_000_000]
}

/// Up to 300 operations; the arrival weight varies per case so that some
/// runs fill the queue (drops) and others keep draining it (idle periods).
fn ops() -> impl Strategy<Value = Vec<Op>> {
    (1u32..8).prop_flat_map(|arrive| {
        let op = prop_oneof![
            arrive => (gap(), 40u32..=1500, 0u8..5, any::<bool>())
                .prop_map(|(dt, size, class, ect)| Op::Enqueue { dt, size, class, ect }),
            3 => gap().prop_map(|dt| Op::Dequeue { dt }),
        ];
        prop::collection::vec(op, 1..300)
    })
}

fn limit() -> impl Strategy<Value = Limit> {
    prop_oneof![
        (1u32..80).prop_map(Limit::packets),
        (1u64..60_000).prop_map(Limit::bytes),
        (1u32..80, 1u64..60_000).prop_map(|(p, b)| Limit { packets: Some(p), bytes: Some(b) }),
    ]
}

/// What one operation produced.
#[derive(Debug)]
enum Outcome {
    Enqueued(Verdict),
    Dequeued(Dequeue),
}

/// The queue as it was just before an operation.
struct Before {
    now: Time,
    backlog: Backlog,
    probes: BTreeMap<&'static str, f64>,
}

fn probes(q: &Queue) -> BTreeMap<&'static str, f64> {
    let mut m = BTreeMap::new();
    q.probe(&mut |name, v| {
        m.insert(name, v);
    });
    m
}

/// Drives `q` through `ops`, checking conservation and the limit after every
/// step and the fate of every packet at the end; `check` sees each step.
fn exercise(
    q: &mut Queue,
    ops: &[Op],
    limit: Option<Limit>,
    seed: u64,
    mut check: impl FnMut(&Queue, &Op, &Before, &Outcome) -> Result<(), TestCaseError>,
) -> Result<Vec<u64>, TestCaseError> {
    let mut rng: Rng = qoslab_core::rng::stream(seed, 0);
    let mut now = Time::ZERO;
    let (mut offered, mut offered_bytes) = (0u64, 0u64);
    let (mut sent, mut sent_bytes) = (Vec::new(), 0u64);
    let (mut dropped, mut dropped_bytes) = (Vec::new(), 0u64);
    for (i, op) in ops.iter().enumerate() {
        now += qoslab_core::Dur(op.dt());
        let before = Before { now, backlog: q.backlog(), probes: probes(q) };
        let outcome = match *op {
            Op::Enqueue { size, class, ect, .. } => {
                let mut p = Packet::new(i as u64, FlowId(class as u32), size, now);
                p.class = ClassTag(class);
                p.ecn = if ect { Ecn::Ect0 } else { Ecn::NotEct };
                offered += 1;
                offered_bytes += size as u64;
                let v = q.enqueue(now, p, &mut rng);
                let mut lost = |d: &Dropped| {
                    dropped.push(d.packet.id);
                    dropped_bytes += d.packet.size as u64;
                };
                match &v {
                    Verdict::Dropped(d) => {
                        prop_assert_eq!(d.packet.id, i as u64, "a drop verdict returns the offered packet");
                        lost(d)
                    }
                    Verdict::QueuedPushingOut(victims) => victims.iter().for_each(lost),
                    Verdict::Queued | Verdict::Marked(_) => {}
                }
                Outcome::Enqueued(v)
            }
            Op::Dequeue { .. } => {
                let d = q.dequeue(now);
                if let Dequeue::Packet(p) = d {
                    sent.push(p.id);
                    sent_bytes += p.size as u64;
                }
                Outcome::Dequeued(d)
            }
        };
        let s = q.stats();
        let b = q.backlog();
        prop_assert_eq!(s.arrivals, s.departures + s.total_drops() + b.packets as u64, "packets, step {}", i);
        prop_assert_eq!(
            s.arrival_bytes,
            s.departure_bytes + s.drop_bytes().iter().sum::<u64>() + b.bytes,
            "bytes, step {}",
            i
        );
        prop_assert_eq!(offered, sent.len() as u64 + dropped.len() as u64 + b.packets as u64, "ledger, step {}", i);
        prop_assert_eq!(offered_bytes, sent_bytes + dropped_bytes + b.bytes, "byte ledger, step {}", i);
        prop_assert_eq!((s.departures, s.total_drops()), (sent.len() as u64, dropped.len() as u64));
        if let Some(l) = limit {
            prop_assert!(l.holds(b), "backlog {:?} over limit {:?} at step {}", b, l, i);
        }
        check(q, op, &before, &outcome)?;
    }
    if let Some(l) = limit {
        let peak = Backlog { packets: q.stats().peak_packets, bytes: q.stats().peak_bytes };
        prop_assert!(l.holds(peak), "peak {:?} over limit {:?}", peak, l);
    }
    // Every packet offered ends exactly once: sent, dropped, or still held.
    let held: Vec<u64> = q.reset(now).iter().map(|p| p.id).collect();
    let mut fate: BTreeMap<u64, u32> = BTreeMap::new();
    for id in sent.iter().chain(&dropped).chain(&held) {
        *fate.entry(*id).or_default() += 1;
    }
    let enqueued: Vec<u64> =
        ops.iter().enumerate().filter(|(_, o)| matches!(o, Op::Enqueue { .. })).map(|(i, _)| i as u64).collect();
    prop_assert_eq!(fate.keys().copied().collect::<Vec<_>>(), enqueued);
    prop_assert!(fate.values().all(|n| *n == 1), "a packet left twice");
    Ok(sent)
}

fn strictly_increasing(ids: &[u64]) -> bool {
    ids.windows(2).all(|w| w[0] < w[1])
}

// ---------------------------------------------------------------------------
// FIFO and RED.

fn red_config() -> impl Strategy<Value = (RedConfig, Rate)> {
    (
        limit(),
        any::<bool>(),
        0.0f64..30.0,
        0.5f64..40.0,
        prop_oneof![Just(1.0f64), 0.0001f64..1.0],
        prop_oneof![Just(1.0f64), 0.001f64..1.0],
        (any::<bool>(), any::<bool>(), any::<bool>()),
        40u64..=1500,
        prop_oneof![Just(25_000_000u64), 100_000u64..10_000_000_000],
    )
        .prop_map(|(limit, bytes, min_th, span, w_q, max_p, (gentle, ecn, ns2), mean, rate)| {
            // In byte mode the thresholds are bytes: scale by the mean size.
            let unit = if bytes { mean as f64 } else { 1.0 };
            let cfg = RedConfig {
                limit,
                min_th: min_th * unit,
                max_th: (min_th + span) * unit,
                max_p,
                w_q,
                gentle,
                ecn,
                mode: if bytes { RedMode::Bytes } else { RedMode::Packets },
                mean_pkt_size: Bytes(mean),
                variant: if ns2 { RedVariant::Ns2 } else { RedVariant::Floyd93 },
            };
            (cfg, Rate(rate))
        })
}

/// The model of RED's idle period, as documented in red.rs: it starts when a
/// dequeue finds the queue empty and ends at the next arrival.
struct IdleModel {
    since: Option<Time>,
}

impl IdleModel {
    fn observe(&mut self, before: &Before, outcome: &Outcome) -> Option<Time> {
        match outcome {
            Outcome::Dequeued(Dequeue::Empty) => {
                self.since.get_or_insert(before.now);
                None
            }
            Outcome::Dequeued(_) => None,
            Outcome::Enqueued(_) => self.since.take(),
        }
    }
}

fn measured(mode: RedMode, b: Backlog) -> f64 {
    match mode {
        RedMode::Packets => b.packets as f64,
        RedMode::Bytes => b.bytes as f64,
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn fifo_conserves_packets_and_respects_its_limit(limit in limit(), ops in ops(), seed in any::<u64>()) {
        let mut q = Queue::new(Box::new(Fifo::new(FifoConfig { limit }).unwrap()));
        let sent = exercise(&mut q, &ops, Some(limit), seed, |_, _, _, _| Ok(()))?;
        prop_assert!(strictly_increasing(&sent), "FIFO order");
    }

    #[test]
    fn red_conserves_packets_and_its_average_follows_algo(
        (cfg, rate) in red_config(), ops in ops(), seed in any::<u64>()
    ) {
        let params = cfg.params();
        let pkt_time = rate.tx_time(cfg.mean_pkt_size);
        let mut q = Queue::new(Box::new(Red::new(cfg, rate).unwrap()));
        let mut idle = IdleModel { since: Some(Time::ZERO) };
        let mut largest = 0.0f64;
        let sent = exercise(&mut q, &ops, Some(cfg.limit), seed, |q, _, before, outcome| {
            let idle_start = idle.observe(before, outcome);
            let avg = probes(q)["red_avg"];
            let old = before.probes["red_avg"];
            if let Outcome::Enqueued(v) = outcome {
                let found = measured(cfg.mode, before.backlog);
                largest = largest.max(found);
                let expected = match idle_start {
                    Some(t0) if before.backlog.is_empty() => {
                        algo::after_idle(&params, old, before.now.since(t0), pkt_time, found)
                    }
                    _ => algo::update_avg(&params, old, found),
                };
                prop_assert_eq!(avg.to_bits(), expected.to_bits(), "avg {} expected {}", avg, expected);
                if let Verdict::Marked(_) = v {
                    prop_assert!(cfg.ecn, "marks only with ECN on");
                }
            } else {
                prop_assert_eq!(avg.to_bits(), old.to_bits(), "dequeue leaves the average alone");
            }
            prop_assert!(avg.is_finite() && avg >= 0.0 && avg <= largest, "avg {} outside [0, {}]", avg, largest);
            Ok(())
        })?;
        prop_assert!(strictly_increasing(&sent), "FIFO order");
    }

    #[test]
    fn red_with_unit_weight_averages_to_the_queue_found_by_each_busy_arrival(
        limit in limit(), min_th in 0.0f64..20.0, span in 0.5f64..30.0, gentle in any::<bool>(),
        ops in ops(), seed in any::<u64>()
    ) {
        let cfg = RedConfig { w_q: 1.0, gentle, ..RedConfig::new(limit, min_th, min_th + span) };
        let mut q = Queue::new(Box::new(Red::new(cfg, Rate::mbps(25)).unwrap()));
        let mut idle = IdleModel { since: Some(Time::ZERO) };
        exercise(&mut q, &ops, Some(limit), seed, |q, _, before, outcome| {
            let idle_start = idle.observe(before, outcome);
            if matches!(outcome, Outcome::Enqueued(_)) && idle_start.is_none() {
                prop_assert_eq!(probes(q)["red_avg"], before.backlog.packets as f64);
            }
            Ok(())
        })?;
    }
}

// ---------------------------------------------------------------------------
// Strict priority over FIFO and shaped children.

/// A minimal shaper child for the tests: a FIFO whose head leaves only when
/// the token bucket (shared with the test, which inspects it) has the tokens.
struct TestShaper {
    bucket: Arc<Mutex<TokenBucket>>,
    fifo: Fifo,
}

impl Qdisc for TestShaper {
    fn kind(&self) -> &'static str {
        "test_shaper"
    }
    fn enqueue(&mut self, now: Time, pkt: Packet, rng: &mut Rng) -> Verdict {
        self.fifo.enqueue(now, pkt, rng)
    }
    fn dequeue(&mut self, now: Time) -> Dequeue {
        let Some(size) = self.fifo.peek().map(|p| p.bytes()) else {
            return Dequeue::Empty;
        };
        let mut b = self.bucket.lock().unwrap();
        if b.consume(now, size) {
            self.fifo.dequeue(now)
        } else {
            let wait = b.time_to_conformance(now, size).expect("packets fit the depth");
            Dequeue::NotBefore(now + wait)
        }
    }
    fn peek(&self) -> Option<&Packet> {
        self.fifo.peek()
    }
    fn backlog(&self) -> Backlog {
        self.fifo.backlog()
    }
    fn for_each_packet(&self, f: &mut dyn FnMut(&Packet)) {
        self.fifo.for_each_packet(f)
    }
    fn reset(&mut self) -> Vec<Packet> {
        self.fifo.reset()
    }
    fn probe(&self, _sink: ProbeSink<'_>) {}
}

#[derive(Clone, Debug)]
struct ChildSpec {
    limit: Limit,
    /// Some((rate, depth)) for a shaped child.
    shaper: Option<(u64, u64)>,
}

fn child_spec(shaped: bool) -> impl Strategy<Value = ChildSpec> {
    let shaper = if shaped {
        // Slow, shallow buckets, so that several shaped children are often
        // held back at once and the earliest `NotBefore` must be chosen.
        prop_oneof![1 => Just(None), 2 => (8_000u64..4_000_000, 1500u64..6_000).prop_map(Some)].boxed()
    } else {
        Just(None).boxed()
    };
    (limit(), shaper).prop_map(|(limit, shaper)| ChildSpec { limit, shaper })
}

type Prio = Classful<TagClassifier, StrictPriority>;

fn build_prio(specs: &[ChildSpec], with_default: bool) -> (Prio, Vec<Option<Arc<Mutex<TokenBucket>>>>) {
    let mut buckets = Vec::new();
    let children = specs
        .iter()
        .map(|s| {
            let fifo = Fifo::new(FifoConfig { limit: s.limit }).unwrap();
            match s.shaper {
                None => {
                    buckets.push(None);
                    Queue::new(Box::new(fifo))
                }
                Some((rate, depth)) => {
                    let cfg = TokenBucketConfig { rate: Rate(rate), depth: Bytes(depth) };
                    let bucket = Arc::new(Mutex::new(TokenBucket::new(cfg, Time::ZERO, true).unwrap()));
                    buckets.push(Some(bucket.clone()));
                    Queue::new(Box::new(TestShaper { bucket, fifo }))
                }
            }
        })
        .collect();
    let n = specs.len();
    let classifier = TagClassifier { map: (0..n).collect(), default: if with_default { Some(n - 1) } else { None } };
    (Classful::new(classifier, StrictPriority, children), buckets)
}

fn child_of(class: u8, n: usize, with_default: bool) -> Option<usize> {
    if (class as usize) < n {
        Some(class as usize)
    } else if with_default {
        Some(n - 1)
    } else {
        None
    }
}

/// Strict priority checked before and after every dequeue, with child-level
/// conservation and limits.
fn check_strict_priority(specs: &[ChildSpec], with_default: bool, ops: &[Op], seed: u64) -> Result<(), TestCaseError> {
    let n = specs.len();
    let (mut prio, buckets) = build_prio(specs, with_default);
    let mut rng: Rng = qoslab_core::rng::stream(seed, 1);
    let mut now = Time::ZERO;
    let (mut offered, mut sent, mut dropped) = (0u64, 0u64, 0u64);
    for (i, op) in ops.iter().enumerate() {
        now += qoslab_core::Dur(op.dt());
        match *op {
            Op::Enqueue { size, class, .. } => {
                let mut p = Packet::new(i as u64, FlowId(0), size, now);
                p.class = ClassTag(class);
                offered += 1;
                match prio.enqueue(now, p, &mut rng) {
                    Verdict::Dropped(_) => dropped += 1,
                    Verdict::QueuedPushingOut(v) => dropped += v.len() as u64,
                    _ => {}
                }
            }
            Op::Dequeue { .. } => {
                // Which children could send now, before the dequeue?
                let can_send: Vec<bool> = prio
                    .children()
                    .iter()
                    .zip(&buckets)
                    .map(|(c, b)| match (c.peek(), b) {
                        (None, _) => false,
                        (Some(_), None) => true,
                        (Some(p), Some(b)) => b.lock().unwrap().conforms(now, p.bytes()),
                    })
                    .collect();
                let waits: Vec<Time> = prio
                    .children()
                    .iter()
                    .zip(&buckets)
                    .filter_map(|(c, b)| {
                        let (p, b) = (c.peek()?, b.as_ref()?);
                        let d = b.lock().unwrap().time_to_conformance(now, p.bytes())?;
                        (d.0 > 0).then_some(now + d)
                    })
                    .collect();
                match prio.dequeue(now) {
                    Dequeue::Packet(p) => {
                        sent += 1;
                        let served = child_of(p.class.0, n, with_default).expect("only classified packets queue");
                        prop_assert!(can_send[served], "served child {} could not send", served);
                        prop_assert!(
                            !can_send[..served].iter().any(|c| *c),
                            "served child {} while a higher one could send: {:?}",
                            served,
                            can_send
                        );
                    }
                    Dequeue::NotBefore(t) => {
                        prop_assert!(!can_send.iter().any(|c| *c), "held back while {:?} could send", can_send);
                        prop_assert!(t > now);
                        prop_assert_eq!(Some(t), waits.iter().copied().min());
                    }
                    Dequeue::Empty => {
                        prop_assert!(prio.backlog().is_empty(), "empty answer with {:?} held", prio.backlog());
                    }
                }
            }
        }
        let mut total = Backlog::default();
        for (c, s) in prio.children().iter().zip(specs) {
            let (st, b) = (c.stats(), c.backlog());
            prop_assert_eq!(st.arrivals, st.departures + st.total_drops() + b.packets as u64);
            prop_assert_eq!(st.arrival_bytes, st.departure_bytes + st.drop_bytes().iter().sum::<u64>() + b.bytes);
            prop_assert!(s.limit.holds(b), "child backlog {:?} over {:?}", b, s.limit);
            total.packets += b.packets;
            total.bytes += b.bytes;
        }
        prop_assert_eq!(prio.backlog(), total);
        prop_assert_eq!(offered, sent + dropped + total.packets as u64);
    }
    Ok(())
}

fn prio_specs(shaped: bool) -> impl Strategy<Value = (Vec<ChildSpec>, bool)> {
    (prop::collection::vec(child_spec(shaped), 1..5), any::<bool>())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn prio_of_fifos_conserves_packets_in_its_wrapper(
        (specs, with_default) in prio_specs(false), ops in ops(), seed in any::<u64>()
    ) {
        let (prio, _) = build_prio(&specs, with_default);
        let mut q = Queue::new(Box::new(prio));
        exercise(&mut q, &ops, None, seed, |_, _, _, _| Ok(()))?;
    }

    #[test]
    fn strict_priority_never_serves_a_lower_class_while_a_higher_one_is_backlogged(
        (specs, with_default) in prio_specs(false), ops in ops(), seed in any::<u64>()
    ) {
        check_strict_priority(&specs, with_default, &ops, seed)?;
    }

    #[test]
    fn strict_priority_over_shapers_serves_the_highest_child_that_can_send(
        (specs, with_default) in prio_specs(true), ops in ops(), seed in any::<u64>()
    ) {
        check_strict_priority(&specs, with_default, &ops, seed)?;
    }
}

// ---------------------------------------------------------------------------
// Token bucket.

const UNITS_PER_BYTE: u128 = 8_000_000_000;

#[derive(Clone, Copy, Debug)]
enum TbOp {
    Consume {
        dt: u64,
        size: u64,
    },
    SetRate {
        dt: u64,
        rate: u64,
    },
    Ask {
        dt: u64,
        size: u64,
    },
    /// Asks at an instant before the last update.
    AskEarlier {
        back: u64,
        size: u64,
    },
    /// Consumes at an instant before the last update (counts as the last update).
    ConsumeEarlier {
        back: u64,
        size: u64,
    },
}

fn tb_rate() -> impl Strategy<Value = u64> {
    prop_oneof![1u64..10_000, 10_000u64..100_000_000, 100_000_000u64..100_000_000_000]
}

fn tb_ops(depth: u64) -> impl Strategy<Value = Vec<TbOp>> {
    let size = prop_oneof![8 => 0u64..=depth, 1 => depth..depth.saturating_mul(2).max(depth + 1)];
    let dt = prop_oneof![Just(0u64), 0u64..10_000, 0u64..10_000_000_000];
    let op = prop_oneof![
        6 => (dt.clone(), size.clone()).prop_map(|(dt, size)| TbOp::Consume { dt, size }),
        1 => (dt.clone(), tb_rate()).prop_map(|(dt, rate)| TbOp::SetRate { dt, rate }),
        3 => (dt, size.clone()).prop_map(|(dt, size)| TbOp::Ask { dt, size }),
        1 => (1u64..1_000_000_000, size.clone()).prop_map(|(back, size)| TbOp::AskEarlier { back, size }),
        1 => (1u64..1_000_000_000, size).prop_map(|(back, size)| TbOp::ConsumeEarlier { back, size }),
    ];
    prop::collection::vec(op, 1..200)
}

fn tb_case() -> impl Strategy<Value = (u64, u64, bool, u64, Vec<TbOp>)> {
    (tb_rate(), prop_oneof![1u64..100, 100u64..1_000_000], any::<bool>(), 0u64..1_000_000_000_000)
        .prop_flat_map(|(rate, depth, full, t0)| (Just(rate), Just(depth), Just(full), Just(t0), tb_ops(depth)))
}

/// `time_to_conformance` is the exact earliest instant, checked on a copy.
fn check_wait(b: &TokenBucket, now: Time, size: u64, depth: u64) -> Result<(), TestCaseError> {
    let d = b.time_to_conformance(now, Bytes(size));
    if size > depth {
        prop_assert_eq!(d, None);
        prop_assert!(!b.conforms(Time(u64::MAX), Bytes(size)));
        return Ok(());
    }
    let d = d.expect("the waits in these cases stay far below Time::MAX");
    prop_assert_eq!(d.0 == 0, b.conforms(now, Bytes(size)));
    prop_assert!(b.conforms(now + d, Bytes(size)), "not conformant at now + {}", d);
    if d.0 > 0 {
        prop_assert!(!b.conforms(Time(now.0 + d.0 - 1), Bytes(size)), "already conformant 1 ns before now + {}", d);
    }
    let mut copy = b.clone();
    prop_assert!(copy.consume(now + d, Bytes(size)));
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn token_bucket_stays_within_depth_and_earned_tokens_and_answers_waits_exactly(
        (rate, depth, full, t0, ops) in tb_case()
    ) {
        let cfg = TokenBucketConfig { rate: Rate(rate), depth: Bytes(depth) };
        let mut b = TokenBucket::new(cfg, Time(t0), full).unwrap();
        let mut now = Time(t0);
        let mut rate = rate;
        // What the bucket may have handed out so far: the initial tokens plus
        // rate * time, integrated across rate changes, in scaled units.
        let mut budget: u128 = if full { depth as u128 * UNITS_PER_BYTE } else { 0 };
        let mut consumed: u128 = 0;
        for op in ops {
            match op {
                TbOp::Consume { dt, size } => {
                    budget += rate as u128 * dt as u128;
                    now += qoslab_core::Dur(dt);
                    let conformed = b.conforms(now, Bytes(size));
                    let before = b.tokens(now);
                    let took = b.consume(now, Bytes(size));
                    prop_assert_eq!(took, conformed);
                    if took {
                        consumed += size as u128 * UNITS_PER_BYTE;
                        prop_assert_eq!(b.tokens(now).0, before.0 - size);
                    } else {
                        prop_assert_eq!(b.tokens(now), before, "a refused packet takes nothing");
                        prop_assert!(size > before.0);
                    }
                }
                TbOp::SetRate { dt, rate: r } => {
                    budget += rate as u128 * dt as u128;
                    now += qoslab_core::Dur(dt);
                    let before = b.tokens(now);
                    b.set_rate(now, Rate(r)).unwrap();
                    prop_assert_eq!(b.tokens(now), before, "set_rate keeps the tokens earned");
                    rate = r;
                }
                TbOp::Ask { dt, size } => {
                    budget += rate as u128 * dt as u128;
                    now += qoslab_core::Dur(dt);
                    check_wait(&b, now, size, depth)?;
                }
                TbOp::ConsumeEarlier { back, size } => {
                    let last = b.last_update();
                    let earlier = Time(last.0.saturating_sub(back));
                    let conformed = b.conforms(last, Bytes(size));
                    let before = b.tokens(last);
                    prop_assert_eq!(b.consume(earlier, Bytes(size)), conformed);
                    if conformed {
                        consumed += size as u128 * UNITS_PER_BYTE;
                        prop_assert_eq!(b.tokens(last).0, before.0 - size);
                    }
                    prop_assert_eq!(b.last_update(), last, "the clock does not run backwards");
                }
                TbOp::AskEarlier { back, size } => {
                    let earlier = Time(b.last_update().0.saturating_sub(back));
                    let last = b.last_update();
                    prop_assert_eq!(b.tokens(earlier), b.tokens(last), "no rewind before the last update");
                    prop_assert_eq!(b.conforms(earlier, Bytes(size)), b.conforms(last, Bytes(size)));
                    if let (Some(e), Some(l)) =
                        (b.time_to_conformance(earlier, Bytes(size)), b.time_to_conformance(last, Bytes(size)))
                    {
                        if l.0 > 0 {
                            prop_assert_eq!(e.0, l.0 + (last.0 - earlier.0), "same instant, measured from earlier");
                        } else {
                            prop_assert_eq!(e.0, 0);
                        }
                    }
                }
            }
            prop_assert!(b.tokens(now).0 <= depth, "{} tokens above depth {}", b.tokens(now).0, depth);
            prop_assert!(consumed <= budget, "consumed {} > earned {} (scaled)", consumed, budget);
            prop_assert!(
                consumed + b.tokens(now).0 as u128 * UNITS_PER_BYTE <= budget,
                "held plus consumed exceeds what was earned"
            );
        }
    }
}
