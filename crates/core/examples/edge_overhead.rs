//! Prints the relative cost of the edge QoS path (seed 003 §V) as a
//! markdown table: ns per packet without and with QoS, and the QoS share
//! = (with − without) / with, for the fast path (flow-cache hit), the slow
//! path (rule-database lookup) and the slow path against the rule count.
//!
//! Both paths run on the same pre-built IPv4/UDP packets
//! (`benches/common/mod.rs`); base and QoS runs are interleaved, 15 rounds
//! of 4096-packet batches × 16 each (about 1e6 packets per path and row), and
//! each column is the median over the rounds, so a slow moment of the
//! machine hits both alike. The criterion version is `benches/edge_path.rs`.
//!
//! Run: `cargo run --release -p qoslab-core --example edge_overhead`.

#[path = "../benches/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::Instant;

const ROUNDS: usize = 15;
const BATCHES: usize = 16;

fn time(pkts: &[Vec<u8>], mut f: impl FnMut(u64, &[u8]) -> u64) -> f64 {
    let t = Instant::now();
    let mut acc = 0u64;
    for b in 0..BATCHES {
        for (i, p) in pkts.iter().enumerate() {
            acc ^= f((b * pkts.len() + i) as u64, black_box(p));
        }
    }
    black_box(acc);
    t.elapsed().as_nanos() as f64 / (BATCHES * pkts.len()) as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// (ns/packet base, ns/packet qos), medians of interleaved rounds.
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
    (median(b), median(q))
}

fn main() {
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
}
