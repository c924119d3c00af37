//! The criterion `fast` group's two paths (benches/edge_path.rs: the same
//! packets, `common::fast(100)` and `common::Base::new()`, each pass over
//! the packets numbered from 0 as in one criterion iteration), timed by the
//! thread's CPU clock instead of the wall clock: on a machine whose cores
//! other processes share, the wall clock also counts the time this process
//! waits for a core (docs/performance.md, "The edge QoS fast path, fourth
//! pass"). Base and QoS passes alternate; prints, per path, the fastest
//! and the median pass in ns a packet, and the QoS cost (qos − base) of each.
//!
//! Run: `cargo run --release -p qoslab-core --example edge_fast_cpu -- [PASSES [PACKETS]]`
//! (default 2000 passes of each path over the 4096 packets; PACKETS 256
//! takes the first 256, the `fast256` control).

#[path = "../benches/common/mod.rs"]
mod common;

use std::hint::black_box;

#[repr(C)]
struct Timespec {
    sec: i64,
    nsec: i64,
}

extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
}

/// Linux's `CLOCK_THREAD_CPUTIME_ID`.
const CLOCK_THREAD_CPUTIME_ID: i32 = 3;

/// This thread's CPU time in ns. (Declared here rather than through
/// `libc` so that the same file builds in a tree without that dependency,
/// such as the baseline commit.)
fn thread_cpu_ns() -> u64 {
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec (Linux x86-64/aarch64 layout:
    // two 64-bit fields); the clock id is a constant Linux defines.
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    ts.sec as u64 * 1_000_000_000 + ts.nsec as u64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().expect("PASSES [PACKETS]")).collect();
    let passes = args.first().copied().unwrap_or(2000);
    let (pkts, mut qos) = common::fast(100);
    let pkts = &pkts[..args.get(1).copied().unwrap_or(pkts.len()).min(pkts.len())];
    // Each timed window holds at least 4096 packets (passes of fewer are
    // repeated): the thread CPU clock's steps are microseconds on some VMs.
    let reps = 4096usize.div_ceil(pkts.len());
    let mut base = common::Base::new();
    let (mut tb, mut tq) = (Vec::with_capacity(passes), Vec::with_capacity(passes));
    let mut acc = 0u64;
    for k in 0..=passes {
        let t = thread_cpu_ns();
        for _ in 0..reps {
            acc ^= pkts.iter().enumerate().fold(0u64, |a, (i, p)| a ^ base.forward(i as u64, black_box(p)));
        }
        let b = (thread_cpu_ns() - t) as f64 / (reps * pkts.len()) as f64;
        let t = thread_cpu_ns();
        for _ in 0..reps {
            acc ^= pkts.iter().enumerate().fold(0u64, |a, (i, p)| a ^ qos.forward(i as u64, black_box(p)));
        }
        let q = (thread_cpu_ns() - t) as f64 / (reps * pkts.len()) as f64;
        if k > 0 {
            // (pass 0 warms the caches and the flow cache)
            tb.push(b);
            tq.push(q);
        }
    }
    black_box(acc);
    let fastest = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let (bf, qf, bm, qm) = (fastest(&tb), fastest(&tq), median(tb), median(tq));
    println!(
        "packets {} passes {passes} base fastest {bf:.1} median {bm:.1} qos fastest {qf:.1} median {qm:.1} cost fastest {:.1} median {:.1}",
        pkts.len(),
        qf - bf,
        qm - bm
    );
}
