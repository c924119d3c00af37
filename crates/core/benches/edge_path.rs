//! The forwarding path with and without the edge QoS component ([Guerin99]
//! §V's relative overhead), on the same pre-built IPv4/UDP packets.
//!
//! Groups: `fast` (cache hit) and `slow` (cache miss, rule-database lookup
//! with 100 rules), each `base` vs `qos`; `fast256`: the fast path on 256 of
//! the packets (a control whose packets stay in the L2); `rules`: the slow QoS path with
//! 10, 100, 1000 and 10000 random rules. Throughput is per packet, so
//! criterion prints ns per packet (time / 4096 elements).
//! QoS share = (qos − base) / qos; `examples/edge_overhead.rs` prints it.
//!
//! Run: `cargo bench -p qoslab-core --features bench --bench edge_path`
//! (criterion is an optional dependency of the `bench` feature: Cargo.toml).

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;

fn run(c: &mut Criterion) {
    for (name, (pkts, mut qos)) in [("fast", common::fast(100)), ("slow", common::slow(100))] {
        paths(c, name, &pkts, &mut qos);
    }
    // Control (not the standard case): the fast path on the first 256 of
    // the same packets (about 190 kB, within the L2), so the packets' bytes
    // stay cached; the standard `fast` group's 4096 (about 3 MB) miss the L2
    // on every packet (docs/performance.md, "fourth pass").
    let (pkts, mut qos) = common::fast(100);
    paths(c, "fast256", &pkts[..256], &mut qos);
    let mut g = c.benchmark_group("rules");
    for n in [10usize, 100, 1000, 10_000] {
        let (pkts, mut qos) = common::slow(n);
        g.throughput(Throughput::Elements(pkts.len() as u64));
        g.bench_with_input(BenchmarkId::new("slow_qos", n), &n, |b, _| {
            b.iter(|| pkts.iter().enumerate().fold(0u64, |acc, (i, p)| acc ^ qos.forward(i as u64, black_box(p))))
        });
    }
    g.finish();
}

/// One group: the base path and the QoS path over the same packets.
fn paths(c: &mut Criterion, name: &str, pkts: &[Vec<u8>], qos: &mut common::Qos) {
    let mut base = common::Base::new();
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Elements(pkts.len() as u64));
    g.bench_function("base", |b| {
        b.iter(|| pkts.iter().enumerate().fold(0u64, |acc, (i, p)| acc ^ base.forward(i as u64, black_box(p))))
    });
    g.bench_function("qos", |b| {
        b.iter(|| pkts.iter().enumerate().fold(0u64, |acc, (i, p)| acc ^ qos.forward(i as u64, black_box(p))))
    });
    g.finish();
}

criterion_group!(benches, run);
criterion_main!(benches);
