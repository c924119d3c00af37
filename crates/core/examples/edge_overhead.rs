//! Prints the relative cost of the edge QoS path [Guerin99 §V] as a
//! markdown table: ns per packet without and with QoS, and the QoS share
//! = (with − without) / with, for the fast path (flow-cache hit), the slow
//! path (rule-database lookup) and the slow path against the rule count.
//!
//! Both paths run on the same pre-built IPv4/UDP packets
//! (`benches/common/mod.rs`); base and QoS runs are interleaved, 31 rounds
//! of 8 batches of 4096 packets each (about 1e6 packets per path and row),
//! and each column is the fastest round: on a shared machine the other
//! rounds measure the neighbours too (medians moved by 2× between runs).
//! The criterion version is `benches/edge_path.rs`.
//!
//! Run: `cargo run --release -p qoslab-core --example edge_overhead`.
//!
//! `--shares N` (1..=1000) prints, for N repetitions, one JSON line per
//! path (fast, slow; 100 rules) with the ns per packet of the base path
//! (`base`), the base path with the QoS path's classifier (`classified`)
//! and the QoS path (`qos`): each the fastest of `SHARE_ROUNDS`
//! interleaved rounds of 4096 packets, timed by the thread's
//! CPU clock (`CLOCK_THREAD_CPUTIME_ID`): on a loaded machine the wall
//! clock also counts the time the process waits for a core, which hit
//! every round of one path now and then (a slow-path QoS round at 3-6×). `qoslab reproduce
//! edge` reads them for [Guerin99 §V.A]'s shares (docs/decisions.md, "§V.A's
//! QoS share"); `make bins` builds this example for it.

#[path = "../benches/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::Instant;

const ROUNDS: usize = 31;
const BATCHES: usize = 8;

fn time(pkts: &[Vec<u8>], f: impl FnMut(u64, &[u8]) -> u64) -> f64 {
    time_batches(pkts, BATCHES, f)
}

/// The fastest round.
fn best(v: Vec<f64>) -> f64 {
    v.into_iter().fold(f64::INFINITY, f64::min)
}

/// (ns/packet base, ns/packet qos), the fastest of interleaved rounds.
fn measure(pkts: &[Vec<u8>], qos: &mut common::Qos) -> (f64, f64) {
    let mut base = common::Base::new();
    // Warm-up: fills the flow cache, the queues' buffers and the CPU caches.
    time(pkts, |i, p| base.forward(i, p));
    time(pkts, |i, p| qos.forward(i, p));
    let (mut b, mut q) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        b.push(time(pkts, |i, p| base.forward(i, p)));
        q.push(time(pkts, |i, p| qos.forward(i, p)));
    }
    (best(b), best(q))
}

/// Enqueue + dequeue of the parsed packets alone.
fn queue_only(pkts: &[Vec<u8>], q: &mut qoslab_core::Queue, with_class: bool) -> f64 {
    let parsed: Vec<_> = pkts.iter().map(|p| common::parse(p).unwrap()).collect();
    let mut rng = qoslab_core::rng::stream(1, 0);
    let mut f = |i: u64, _: &[u8]| {
        let (_, dscp, size) = parsed[i as usize % parsed.len()];
        let mut p = qoslab_core::Packet::new(i, qoslab_core::FlowId(0), size, qoslab_core::Time(i));
        p.dscp = dscp;
        if with_class {
            p.stream = (i % common::STREAMS as u64) as u16;
            p.class = qoslab_core::ClassTag((p.stream % 2) as u8);
        }
        let _ = q.enqueue_inlined(qoslab_core::Time(i), p, &mut rng);
        match q.dequeue_inlined(qoslab_core::Time(i)) {
            qoslab_core::Dequeue::Packet(p) => p.id,
            _ => 0,
        }
    };
    time(pkts, &mut f);
    best((0..ROUNDS).map(|_| time(pkts, &mut f)).collect())
}

/// The classifier stage's `classify` alone.
fn classify_only(pkts: &[Vec<u8>], qos: &mut common::Qos) -> f64 {
    let parsed: Vec<_> = pkts.iter().map(|p| common::parse(p).unwrap()).collect();
    let stage = qos.stage_mut();
    let mut f = |i: u64, _: &[u8]| {
        let (key, dscp, _) = &parsed[i as usize % parsed.len()];
        stage.classify(key, 0, *dscp).map_or(0, |a| a.stream as u64)
    };
    time(pkts, &mut f);
    best((0..ROUNDS).map(|_| time(pkts, &mut f)).collect())
}

/// Parse + route alone.
fn parse_route_only(pkts: &[Vec<u8>]) -> f64 {
    let routes = common::routes();
    let mut f = |_: u64, p: &[u8]| {
        let Some((key, _, size)) = common::parse(p) else { return 0 };
        common::route(&routes, &key) as u64 + size as u64
    };
    time(pkts, &mut f);
    best((0..ROUNDS).map(|_| time(pkts, &mut f)).collect())
}

/// One path alone for `packets` packets (after one warm-up pass of the
/// 4096 packets), for profilers: `callgrind` counts the instructions of
/// two runs of different lengths, whose difference is the per-packet
/// cost without the set-up (docs/performance.md).
fn one_path(path: &str, packets: usize) {
    let (pkts, mut qos) = match path {
        "fast-base" | "fast-qos" => common::fast(100),
        "slow-base" | "slow-qos" => common::slow(100),
        _ => {
            eprintln!("edge_overhead: --path {path:?}: allowed fast-base, fast-qos, slow-base, slow-qos");
            std::process::exit(2);
        }
    };
    let mut base = common::Base::new();
    let mut f = |i: u64, p: &[u8]| if path.ends_with("base") { base.forward(i, p) } else { qos.forward(i, p) };
    let mut acc = 0u64;
    for (i, p) in pkts.iter().enumerate() {
        acc ^= f(i as u64, black_box(p));
    }
    for k in 0..packets {
        acc ^= f((pkts.len() + k) as u64, black_box(&pkts[k % pkts.len()]));
    }
    black_box(acc);
}

/// Rounds per repetition of `--shares`, and batches of the 4096 packets per round.
const SHARE_ROUNDS: usize = 15;
const SHARE_BATCHES: usize = 1;

/// ns a packet of `batches` passes over `pkts`, by the wall clock.
fn time_batches(pkts: &[Vec<u8>], batches: usize, f: impl FnMut(u64, &[u8]) -> u64) -> f64 {
    let t = Instant::now();
    run_batches(pkts, batches, f);
    t.elapsed().as_nanos() as f64 / (batches * pkts.len()) as f64
}

/// ns a packet of `batches` passes over `pkts`, by this thread's CPU clock.
fn cpu_batches(pkts: &[Vec<u8>], batches: usize, f: impl FnMut(u64, &[u8]) -> u64) -> f64 {
    let t = thread_cpu_ns();
    run_batches(pkts, batches, f);
    (thread_cpu_ns() - t) as f64 / (batches * pkts.len()) as f64
}

fn run_batches(pkts: &[Vec<u8>], batches: usize, mut f: impl FnMut(u64, &[u8]) -> u64) {
    let mut acc = 0u64;
    for b in 0..batches {
        for (i, p) in pkts.iter().enumerate() {
            acc ^= f((b * pkts.len() + i) as u64, black_box(p));
        }
    }
    black_box(acc);
}

/// This thread's CPU time in ns (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`).
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant Linux defines.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// `--shares N`: the three paths interleaved, N repetitions, JSON lines on stdout.
fn shares(repetitions: usize) {
    let (pkts, _) = common::fast(100);
    let mut paths = [
        ("fast", common::Base::new(), common::fast_classified(100), common::fast(100).1),
        ("slow", common::Base::new(), common::slow_classified(100), common::slow(100).1),
    ];
    for (_, base, cls, qos) in &mut paths {
        // Warm-up: fills the flow caches, the queues' buffers and the CPU caches.
        time_batches(&pkts, 1, |i, p| base.forward(i, p));
        time_batches(&pkts, 1, |i, p| cls.forward(i, p));
        time_batches(&pkts, 1, |i, p| qos.forward(i, p));
    }
    for r in 0..repetitions {
        for (name, base, cls, qos) in &mut paths {
            let (mut b, mut c, mut q) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..SHARE_ROUNDS {
                b.push(cpu_batches(&pkts, SHARE_BATCHES, |i, p| base.forward(i, p)));
                c.push(cpu_batches(&pkts, SHARE_BATCHES, |i, p| cls.forward(i, p)));
                q.push(cpu_batches(&pkts, SHARE_BATCHES, |i, p| qos.forward(i, p)));
            }
            println!(
                "{{\"repetition\": {}, \"path\": \"{name}\", \"base\": {:.3}, \"classified\": {:.3}, \"qos\": {:.3}}}",
                r + 1,
                best(b),
                best(c),
                best(q)
            );
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(k) = args.iter().position(|a| a == "--shares") {
        let n = args.get(k + 1).map(|v| v.parse::<usize>());
        match n {
            Some(Ok(n)) if (1..=1000).contains(&n) => shares(n),
            _ => {
                eprintln!(
                    "edge_overhead: --shares {:?}: give the number of repetitions, a whole number in 1..=1000",
                    args.get(k + 1).map_or("", String::as_str)
                );
                std::process::exit(2);
            }
        }
        return;
    }
    if let Some(k) = args.iter().position(|a| a == "--path") {
        let packets = args
            .iter()
            .position(|a| a == "--packets")
            .and_then(|j| args.get(j + 1))
            .map_or(Ok(100_000), |n| n.parse::<usize>())
            .unwrap_or_else(|e| {
                eprintln!("edge_overhead: --packets: {e}; give a whole number of packets");
                std::process::exit(2)
            });
        one_path(args.get(k + 1).map_or("", String::as_str), packets);
        return;
    }
    println!("| path | rules | ns/packet base | ns/packet qos | QoS share % | cache hits / misses |");
    println!("|---|---:|---:|---:|---:|---:|");
    let mut rows = vec![("fast (cache hit)", 100, common::fast(100))];
    for n in [10, 100, 1000, 10_000] {
        rows.push(("slow (rule database)", n, common::slow(n)));
    }
    for (name, n, (pkts, mut qos)) in rows {
        let (b, q) = measure(&pkts, &mut qos);
        let (hits, misses) = qos.hits_misses();
        println!("| {name} | {n} | {b:.1} | {q:.1} | {:.1} | {hits} / {misses} |", 100.0 * (q - b) / q);
        if name.starts_with("fast") {
            assert!(misses <= 64, "the fast path must hit the cache: {misses} misses");
        } else {
            assert_eq!(hits, 0, "the slow path must miss every time");
        }
    }

    println!();
    println!("Where the time goes (each part alone, same packets):");
    println!();
    println!("| part | ns/packet |");
    println!("|---|---:|");
    let (pkts, mut fast) = common::fast(100);
    println!("| parse IPv4/UDP + route lookup (both paths) | {:.1} |", parse_route_only(&pkts));
    println!("| FIFO `Queue` enqueue + dequeue (base) | {:.1} |", queue_only(&pkts, &mut common::fifo_queue(), false));
    println!(
        "| SCFQ over 2 `BufferManaged` enqueue + dequeue (QoS) | {:.1} |",
        queue_only(&pkts, &mut common::qos_queue(), true)
    );
    println!("| classifier, cache hit (QoS fast path) | {:.1} |", classify_only(&pkts, &mut fast));
    for n in [10, 100, 1000, 10_000] {
        let (pkts, mut slow) = common::slow(n);
        println!(
            "| classifier, cache miss + rule database, {n} rules (QoS slow path) | {:.1} |",
            classify_only(&pkts, &mut slow)
        );
    }
}
