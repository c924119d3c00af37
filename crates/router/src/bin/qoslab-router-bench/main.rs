//! `qoslab-router-bench` (`make bench-router`): the router's forwarding
//! rate and per-packet cost against plain kernel forwarding, on one
//! testbed (`qoslab_router::testbed`: h1 ── r ── h2 over veth, offloads off).
//!
//! ```text
//! qoslab-router-bench [--seconds S] [--only ROW,...] [--router PATH]   the table below
//! qoslab-router-bench soak [MINUTES]       overload soak, RSS slope (make soak)
//! qoslab-router-bench attacks              the flood, bypass and kernel-drop runs (attacks.rs)
//! qoslab-router-bench gaps [--seconds S] [--rt]   time through the router while control commands are served (gaps.rs)
//! qoslab-router-bench rxcost [ROUNDS]      CPU cost of one received frame, per AF_PACKET receive path (rxcost.rs)
//! ```
//!
//! `--router PATH` runs another qoslab-router binary (an older build, for
//! before/after figures on one machine). SIGINT, SIGTERM or SIGHUP tear
//! the testbed down, router included (cleanup.rs), and exit 128 + signal.
//!
//! ```text
//! h1: AF_PACKET sendmmsg of prebuilt IPv4/UDP frames, 64 flows, as fast as it can
//! r:  the kernel's bridge (br0 over r-a, r-b)      — "kernel"
//!     or qoslab-router (pacer at 100 Gb/s: not the bottleneck) with
//!     FIFO, RED, MACE, edge QoS (classifier fast path), edge QoS (slow path: cache of 1),
//!     then FIFO and the two edge QoS paths again with `io = "af_xdp"`
//! h2: AF_PACKET count of the frames that arrive
//! ```
//!
//! Each row runs `--seconds` (default 3) for 64-byte frames and for
//! 1500-byte IP packets (1514-byte frames). pps is what h2 received per
//! second. The router rows also give, from its own per-packet timestamps
//! (`router.profile`): `path ns/pkt` (the loop's receive, parse, port,
//! pacer and send work per forwarded packet) and `qos ns/pkt` (time inside
//! the port: stages, queue discipline, device queue), each in the fastest
//! one-second interval of the 64-byte run (see [`stop_router`]). The QoS
//! share is the edge-QoS issue's formula on the router's path: (path with
//! QoS − path with FIFO) / path with QoS, and the same on the port's time
//! alone.
//!
//! The frames' destination MAC is no host's, so h2's kernel drops them
//! right after its AF_PACKET tap (no UDP or ICMP work in h2), and the
//! kernel bridge floods them to its other port as it would a frame it has
//! not learnt. The bridge is the kernel baseline because the router
//! forwards at layer 2 too (docs/decisions.md, "Router").

mod attacks;
mod bed;
mod cleanup;
mod gaps;
mod rxcost;
mod traffic;

use bed::Bed;
use qoslab_router::testbed::{sh, skip_reason};
use std::io::Write;
use std::process::Child;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use traffic::{blast_frames, frames, measure, Blast};

/// The `[router]` lines of the benchmark's and the soak's routers.
const BENCH_ROUTER: &str = "pool = 16384\nbatch = 64\nprofile = true\nburst = \"1MB\"\n";

/// Packets an interval of the stats must have forwarded to count (the
/// warm-up's and the drain's are not at full load).
const MIN_INTERVAL_PKTS: f64 = 10_000.0;

/// (loop ns, in-port ns, packets sent) so far, from one stats object.
fn profile_point(v: &serde_json::Value) -> (f64, f64, f64) {
    let p = &v["profile"];
    let f = |k: &str| p[k].as_f64().unwrap_or(0.0);
    let tx: f64 = (0..2).map(|d| v["dirs"][d]["tx_pkts"].as_f64().unwrap_or(0.0)).sum();
    (f("loop_ns"), f("enqueue_ns") + f("dequeue_ns"), tx)
}

/// Stops the router; returns (path ns/pkt, qos ns/pkt) from its profile:
/// each the lowest over the one-second stats intervals that forwarded at
/// least [`MIN_INTERVAL_PKTS`] (the whole run's mean if none did). The
/// in-port time is wall clock, so an interval in which the loop was
/// preempted inside a port (two cores shared with other jobs) reads high;
/// the fastest interval is the least disturbed one, as the core's
/// `edge_overhead` example takes its fastest round.
fn stop_router(c: Child, bed: &Bed) -> (f64, f64) {
    let s = bed.stop(c);
    let (loop_ns, qos_ns, tx) = profile_point(&s["router"]);
    let whole = (loop_ns / tx.max(1.0), qos_ns / tx.max(1.0));
    let lines = std::fs::read_to_string(bed.dir.join("stats.jsonl")).unwrap_or_default();
    let pts: Vec<(f64, f64, f64)> =
        lines.lines().filter_map(|l| serde_json::from_str(l).ok()).map(|v| profile_point(&v)).collect();
    let mut best = (f64::INFINITY, f64::INFINITY);
    for w in pts.windows(2) {
        let n = w[1].2 - w[0].2;
        if n >= MIN_INTERVAL_PKTS {
            best.0 = best.0.min((w[1].0 - w[0].0) / n);
            best.1 = best.1.min((w[1].1 - w[0].1) / n);
        }
    }
    if best.0.is_finite() {
        best
    } else {
        whole
    }
}

const RULES: usize = 100;

/// The edge queue and a classifier with `RULES` rules (one matching the
/// benchmark's frames, the rest on other ports) and a cache of `cache`.
fn edge_link(cache: u32) -> String {
    let mut rules = String::from(
        "{ src = \"10.99.0.1/32\", dst = \"10.99.0.2/32\", dst_port = 9000, proto = \"udp\", stream = \"A1\" },\n",
    );
    for i in 1..RULES {
        rules += &format!(
            "{{ src = \"10.{}.{}.0/24\", dst_port = {}, proto = \"udp\", stream = \"{}\" }},\n",
            i % 200,
            i / 200,
            20_000 + i,
            if i % 2 == 0 { "A1" } else { "B1" }
        );
    }
    format!(
        "queue = {{ type = \"edge\", buffers = 4000, buff_size = \"2048B\", streams = [\n\
         {{ name = \"A1\", service = \"af\", rate = \"10Gbps\" }}, {{ name = \"B1\", service = \"be\" }} ] }}\n\
         stages = [{{ type = \"classifier\", cache = {cache}, default_stream = \"B1\", rules = [\n{rules}] }}]\n"
    )
}

/// The router's resident set size (kB), from /proc.
fn rss_kb(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let l = s.lines().find(|l| l.starts_with("VmRSS:"))?;
    l.split_whitespace().nth(1)?.parse().ok()
}

/// Least-squares slope of `(t_s, kB)` in MB per minute.
fn slope_mb_per_min(pts: &[(f64, f64)]) -> f64 {
    let n = pts.len() as f64;
    let (mx, my) = (pts.iter().map(|p| p.0).sum::<f64>() / n, pts.iter().map(|p| p.1).sum::<f64>() / n);
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    if sxx == 0.0 {
        0.0
    } else {
        sxy / sxx * 60.0 / 1024.0
    }
}

/// `soak`: MACE at 20 Mb/s under a spoofed-flow flood of about 40,000
/// frames a second (≈ 3× overload, almost every frame a new flow) for
/// `minutes`; the router's RSS sampled every second. Exit 1 if the slope
/// after the first minute is 1 MB/min or more.
fn soak(minutes: f64) -> i32 {
    let bed = Bed::new("qs");
    let link = "rate = \"20Mbps\"\nqueue = { type = \"mace\", buffer = \"1000pkts\" }\n[link.mace]\n\
                allocation = \"10Mbps\"\nadmission = { type = \"mbac\" }\ntable_capacity = 4096\n\
                [[link.mace.ports]]\nport = 9000\nside = \"dst\"\nrate = \"64kbps\"\ndepth = \"1500B\"\nthreshold = 5\n";
    let c = bed.start(BENCH_ROUTER, link);
    let pid = c.id();
    let stop = Arc::new(AtomicBool::new(false));
    let how = Blast { spoof: true, pps: Some(40_000.0), limit: None };
    let tx = blast_frames(bed.ns("h1"), bed.dev("1"), frames(64), stop.clone(), how);
    let total = (minutes * 60.0).round() as u64;
    let mut pts = Vec::new();
    let t0 = Instant::now();
    for s in 1..=total {
        let due = t0 + Duration::from_secs(s);
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
        if let Some(kb) = rss_kb(pid) {
            pts.push((t0.elapsed().as_secs_f64(), kb as f64));
        }
        if s % 60 == 0 {
            eprintln!("soak: {} min, RSS {} kB", s / 60, pts.last().map_or(0.0, |p| p.1));
        }
    }
    stop.store(true, Ordering::SeqCst);
    let sent = tx.join().unwrap();
    let v = bed.ctl("stats");
    stop_router(c, &bed);
    let skip = if minutes > 2.0 { 60.0 } else { minutes * 60.0 / 2.0 };
    let after: Vec<(f64, f64)> = pts.iter().copied().filter(|p| p.0 >= skip).collect();
    let slope = slope_mb_per_min(&after);
    let first = pts.first().map_or(0.0, |p| p.1);
    let max = pts.iter().map(|p| p.1).fold(0.0, f64::max);
    let last = pts.last().map_or(0.0, |p| p.1);
    println!(
        "soak: {minutes} min, {sent} frames offered (random sources), {} forwarded a->b, flows {} (capacity {}, \
         {} evictions)",
        v["dirs"][0]["tx_pkts"], v["flows"], v["flow_capacity"], v["flow_evictions"]
    );
    println!("soak: RSS first {first:.0} kB, last {last:.0} kB, max {max:.0} kB; {} samples", pts.len());
    println!("soak: slope after {skip:.0} s: {slope:+.3} MB/min (limit: < 1 MB/min)");
    if slope.abs() < 1.0 {
        0
    } else {
        1
    }
}

/// The value after `--name` on the command line.
fn opt(args: &[String], name: &str) -> Option<String> {
    args.iter().skip_while(|a| *a != name).nth(1).cloned()
}

fn main() {
    cleanup::install();
    if let Some(why) = skip_reason() {
        eprintln!("qoslab-router-bench: skipped: {why}");
        std::process::exit(0);
    }
    let args: Vec<String> = std::env::args().collect();
    if let Some(p) = opt(&args, "--router") {
        let _ = bed::ROUTER.set(std::path::PathBuf::from(p));
    }
    let _ = bed::REALTIME.set(args.iter().any(|a| a == "--rt"));
    let secs: f64 = opt(&args, "--seconds").map(|s| s.parse().expect("--seconds takes a number")).unwrap_or(3.0);
    match args.get(1).map(String::as_str) {
        Some("soak") => {
            let minutes: f64 = args.get(2).map_or(10.0, |m| m.parse().expect("soak MINUTES"));
            std::process::exit(soak(minutes));
        }
        Some("attacks") => std::process::exit(attacks::run()),
        Some("gaps") => std::process::exit(gaps::run(secs)),
        Some("rxcost") => {
            let rounds: usize = args.get(2).map_or(20, |r| r.parse().expect("rxcost ROUNDS"));
            std::process::exit(rxcost::run(rounds));
        }
        _ => {}
    }
    let only: Option<Vec<String>> = opt(&args, "--only").map(|s| s.split(',').map(str::to_string).collect());
    let bed = Bed::new("qb");
    let mace = "queue = { type = \"mace\", buffer = \"10000pkts\" }\n[link.mace]\nallocation = \"1Gbps\"\n\
                admission = { type = \"mbac\" }\nbe_dispatch = \"when_idle\"\n[[link.mace.ports]]\nport = 9000\n\
                side = \"dst\"\nrate = \"1Mbps\"\ndepth = \"1500B\"\nthreshold = 5\n";
    let rows: Vec<(&str, Option<String>)> = vec![
        ("kernel (bridge)", None),
        ("router fifo", Some("queue = { type = \"fifo\", limit = \"10000pkts\" }\n".into())),
        (
            "router red",
            Some("queue = { type = \"red\", limit = \"10000pkts\", min_th = 2000, max_th = 6000 }\n".into()),
        ),
        ("router mace", Some(mace.into())),
        ("router edge (fast path)", Some(edge_link(1024))),
        ("router edge (slow path)", Some(edge_link(1))),
        ("router fifo, af_xdp", Some("queue = { type = \"fifo\", limit = \"10000pkts\" }\n".into())),
        ("router edge (fast path), af_xdp", Some(edge_link(1024))),
        ("router edge (slow path), af_xdp", Some(edge_link(1))),
    ];
    let wanted = |name: &str| only.as_ref().is_none_or(|o| o.iter().any(|w| name.contains(w.as_str())));
    let mut out = String::new();
    out += &format!(
        "qoslab-router-bench: {secs} s per cell, veth h1 -> r -> h2, offloads off, {} cores, router {}\n\n",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        bed::ROUTER.get().map_or("beside this binary".into(), |p| p.display().to_string())
    );
    out +=
        "| forwarder | pps 64 B (offered) | pps 1500 B (offered) | path ns/pkt (64 B) | qos ns/pkt (64 B) |\n|---|---:|---:|---:|---:|\n";
    let mut fifo: Option<(f64, f64)> = None;
    let mut shares = Vec::new();
    let mut kernel: Option<[f64; 2]> = None;
    let mut ratios = Vec::new();
    for (name, link) in rows.iter().filter(|(n, _)| wanted(n)) {
        let mut pps = [0.0; 2];
        let mut offered = [0.0; 2];
        let mut prof = (f64::NAN, f64::NAN);
        for (i, len) in [64usize, 1514].iter().enumerate() {
            match link {
                None => {
                    let br = format!("{}-br", bed.net.p);
                    let r = bed.ns("r");
                    sh(&["ip", "-n", &r, "link", "add", &br, "type", "bridge"]).unwrap();
                    for d in [bed.dev("a"), bed.dev("b")] {
                        sh(&["ip", "-n", &r, "link", "set", &d, "master", &br]).unwrap();
                    }
                    sh(&["ip", "-n", &r, "link", "set", &br, "up"]).unwrap();
                    (offered[i], pps[i]) = measure(&bed.net, *len, secs);
                    sh(&["ip", "-n", &r, "link", "del", &br]).unwrap();
                }
                Some(l) => {
                    // The pacer at 100 Gb/s is not the bottleneck: the router's loop is.
                    let io = if name.ends_with("af_xdp") { "af_xdp" } else { "af_packet" };
                    let c = bed.start(&format!("{BENCH_ROUTER}io = \"{io}\"\n"), &format!("rate = \"100Gbps\"\n{l}"));
                    (offered[i], pps[i]) = measure(&bed.net, *len, secs);
                    let p = stop_router(c, &bed);
                    if i == 0 {
                        prof = p;
                    }
                }
            }
        }
        match (link, kernel) {
            (None, _) => kernel = Some(pps),
            (Some(_), Some(k)) => ratios.push((name.to_string(), pps[0] / k[0], pps[1] / k[1])),
            _ => {}
        }
        if name.ends_with("fifo") || name.ends_with("fifo, af_xdp") {
            fifo = Some(prof);
        } else if let (Some(f), true) = (fifo, link.is_some()) {
            shares.push((name.to_string(), (prof.0 - f.0) / prof.0 * 100.0, (prof.1 - f.1) / prof.0 * 100.0));
        }
        let cell = |v: f64| if v.is_nan() { "–".to_string() } else { format!("{v:.0}") };
        out += &format!(
            "| {name} | {:.0} ({:.0}) | {:.0} ({:.0}) | {} | {} |\n",
            pps[0],
            offered[0],
            pps[1],
            offered[1],
            cell(prof.0),
            cell(prof.1)
        );
        eprint!(".");
    }
    if !ratios.is_empty() {
        out += "\nRatio to kernel forwarding (router pps / bridge pps):\n\n| forwarder | 64 B | 1500 B |\n|---|---:|---:|\n";
        for (n, a, b) in ratios {
            out += &format!("| {n} | {a:.3} | {b:.3} |\n");
        }
    }
    if !shares.is_empty() {
        out += "\nQoS share (the edge-QoS formula on the router's per-packet path, 64 B):\n\n\
                | mechanism | (path − path_fifo) / path % | (qos − qos_fifo) / path % |\n|---|---:|---:|\n";
        for (n, a, b) in shares {
            out += &format!("| {n} | {a:.1} | {b:.1} |\n");
        }
    }
    eprintln!();
    print!("{out}");
    let _ = std::io::stdout().flush();
}
