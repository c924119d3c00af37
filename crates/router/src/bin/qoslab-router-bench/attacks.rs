//! `qoslab-router-bench attacks [--router PATH]`: the three hostile-traffic runs on
//! real packets, with the figures docs/router.md gives before and after.
//!
//! ```text
//! flood:        MACE with SSAC room for one 64 kb/s flow on port 5004 (100 kb/s allocated).
//!               Flow A (h1:7000 -> h2:5004) is admitted; then as many frames from spoofed
//!               sources (20 kpps) as fill the flow table, so A is the least recent flow;
//!               then flow B (h1:7001 -> h2:5004), the next new flow: it inherits A's id.
//!               Reported: each admission decision and its rule.
//! bypass:       a 1 Mb/s link with a 100-packet FIFO; 5,000 frames of 1,000 B offered at
//!               16 Mb/s: IPv4/UDP, EtherType 0x88b5, IPv4 whose total length (1,200) runs
//!               past the frame. Reported: frames that reached h2, the router's drops.
//! kernel drops: 1 M frames of 64 B at 150 kpps into a FIFO at 100 Gb/s (af_packet, then
//!               af_xdp). Reported: frames that reached the router's interface (its kernel
//!               counter), frames the router read, the drops it reported, and the difference.
//! ```
//!
//! The testbed sends nothing else: IPv6 is off in the three namespaces and
//! the hosts' neighbours are static (no ND, MLD or ARP frames), and h2
//! listens on port 5004 (no ICMP back).

use crate::bed::Bed;
use crate::traffic::{blast_frames, count, frames, Blast, DST_MAC};
use qoslab_router::testbed::{in_ns, sh};
use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// IPv6 off and static neighbours in the three namespaces.
fn quiet(bed: &Bed) {
    for ns in ["h1", "r", "h2"] {
        bed.exec(ns, &["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"]);
    }
    let mac = |ns: &str, dev: &str| {
        let o = std::process::Command::new("ip").args(["-n", &bed.ns(ns), "-j", "link", "show", "dev", dev]).output();
        let v: serde_json::Value = o.ok().and_then(|o| serde_json::from_slice(&o.stdout).ok()).unwrap_or_default();
        v[0]["address"].as_str().unwrap_or_default().to_string()
    };
    let (m1, m2) = (mac("h1", &bed.dev("1")), mac("h2", &bed.dev("2")));
    for (ns, dev, ip, m) in [("h1", bed.dev("1"), "10.99.0.2", &m2), ("h2", bed.dev("2"), "10.99.0.1", &m1)] {
        sh(&["ip", "-n", &bed.ns(ns), "neigh", "replace", ip, "lladdr", m, "dev", &dev, "nud", "permanent"])
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

/// `n` datagrams of 200 B from `src` to 10.99.0.2:5004, 20 ms apart, from h1.
fn udp_flow(bed: &Bed, src: &str, n: usize) {
    let src = src.to_string();
    in_ns(&bed.ns("h1"), move || {
        let s = UdpSocket::bind(src).unwrap();
        for _ in 0..n {
            let _ = s.send_to(&[0u8; 200], "10.99.0.2:5004");
            std::thread::sleep(Duration::from_millis(20));
        }
    })
    .join()
    .unwrap();
}

/// The admission decisions in a summary's mechanism events: (kind, rule).
fn decisions(s: &serde_json::Value) -> Vec<(String, String)> {
    s["mechanism_events"]
        .as_array()
        .map(|v| {
            v.iter()
                .filter(|e| e["kind"] == "admit" || e["kind"] == "reject")
                .map(|e| (e["kind"].as_str().unwrap_or("").into(), e["rule"].as_str().unwrap_or("").into()))
                .collect()
        })
        .unwrap_or_default()
}

fn flood() -> String {
    let bed = Bed::new("qa");
    quiet(&bed);
    let stop = Arc::new(AtomicBool::new(false));
    // h2 listens on 5004 (drains it), so no ICMP comes back.
    let sink = {
        let stop = stop.clone();
        in_ns(&bed.ns("h2"), move || {
            let s = UdpSocket::bind("10.99.0.2:5004").unwrap();
            s.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
            let mut buf = [0u8; 2048];
            while !stop.load(Ordering::Relaxed) {
                let _ = s.recv(&mut buf);
            }
        })
    };
    let link = "rate = \"100Mbps\"\nqueue = { type = \"mace\", buffer = \"1000pkts\" }\n[link.mace]\n\
                allocation = \"100kbps\"\nadmission = { type = \"ssac\" }\n[[link.mace.ports]]\nport = 5004\n\
                side = \"dst\"\nrate = \"64kbps\"\ndepth = \"1500B\"\nthreshold = 3\n";
    let c = bed.start("", link);
    udp_flow(&bed, "10.99.0.1:7000", 10);
    std::thread::sleep(Duration::from_millis(200));
    let s = bed.ctl("stats");
    let (before, cap) = (s["flows"].as_u64().unwrap_or(0), s["flow_capacity"].as_u64().unwrap_or(0));
    let n = cap.saturating_sub(before);
    let how = Blast { spoof: true, pps: Some(20_000.0), limit: Some(n) };
    let mut fr = frames(64);
    for f in &mut fr {
        f[36..38].copy_from_slice(&9u16.to_be_bytes()); // to port 9, not a CL port
    }
    let sent = blast_frames(bed.ns("h1"), bed.dev("1"), fr, Arc::new(AtomicBool::new(false)), how).join().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let mid = bed.ctl("stats");
    udp_flow(&bed, "10.99.0.1:7001", 10);
    std::thread::sleep(Duration::from_millis(300));
    let s = bed.stop(c);
    stop.store(true, Ordering::SeqCst);
    let _ = sink.join();
    let d = decisions(&s);
    let admitted = d.iter().filter(|(k, _)| k == "admit").count();
    format!(
        "flood: A admitted, then {sent} frames from spoofed sources at 20 kpps (flow table: {before} flows of \
         {cap} before, {} after, {} evictions), then B: decisions {d:?}; {admitted} flows of 64 kb/s admitted \
         against 100 kb/s",
        mid["flows"], mid["flow_evictions"]
    )
}

fn bypass() -> String {
    let bed = Bed::new("qy");
    quiet(&bed);
    let mut out = String::new();
    for kind in ["IPv4/UDP", "EtherType 0x88b5", "IPv4, total length 1200 in a 1000 B frame"] {
        let mut f = Vec::new();
        etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], DST_MAC)
            .ipv4([10, 99, 0, 1], [10, 99, 0, 2], 64)
            .udp(10_000, 9000)
            .write(&mut f, &[0u8; 1000 - 42])
            .unwrap();
        if kind.starts_with("EtherType") {
            f[12..14].copy_from_slice(&[0x88, 0xb5]);
        } else if kind.contains("total length") {
            f[16..18].copy_from_slice(&1200u16.to_be_bytes());
        }
        let c = bed.start("", "rate = \"1Mbps\"\nqueue = { type = \"fifo\", limit = \"100pkts\" }\n");
        let (start, stop) = (Arc::new(AtomicBool::new(true)), Arc::new(AtomicBool::new(false)));
        let rx = count(bed.ns("h2"), bed.dev("2"), start, stop.clone());
        std::thread::sleep(Duration::from_millis(200));
        let how = Blast { spoof: false, pps: Some(2000.0), limit: Some(5000) };
        let sent =
            blast_frames(bed.ns("h1"), bed.dev("1"), vec![f], Arc::new(AtomicBool::new(false)), how).join().unwrap();
        // The 100 queued frames leave in 0.8 s at 1 Mb/s.
        std::thread::sleep(Duration::from_millis(1500));
        stop.store(true, Ordering::SeqCst);
        let got = rx.join().unwrap();
        let s = bed.stop(c);
        let drops: serde_json::Map<String, serde_json::Value> = s["router"]["dirs"][0]["drops"]
            .as_object()
            .map(|m| {
                m.iter().filter(|(_, v)| v.as_u64().unwrap_or(0) > 0).map(|(k, v)| (k.clone(), v.clone())).collect()
            })
            .unwrap_or_default();
        out += &format!("bypass: {kind}: {sent} offered at 16 Mb/s, {got} reached h2; router drops {drops:?}\n");
    }
    out
}

fn kernel_drops() -> String {
    let bed = Bed::new("qk");
    quiet(&bed);
    let mut out = String::new();
    for io in ["af_packet", "af_xdp"] {
        let c = bed.start(
            &format!("io = \"{io}\"\n"),
            "rate = \"100Gbps\"\nqueue = { type = \"fifo\", limit = \"10000pkts\" }\n",
        );
        let reached0 = bed.rx_packets(&bed.dev("a"));
        let how = Blast { spoof: false, pps: Some(150_000.0), limit: Some(1_000_000) };
        let sent =
            blast_frames(bed.ns("h1"), bed.dev("1"), frames(64), Arc::new(AtomicBool::new(false)), how).join().unwrap();
        std::thread::sleep(Duration::from_millis(1000));
        let reached = bed.rx_packets(&bed.dev("a")) - reached0;
        let s = bed.stop(c);
        let d = &s["router"]["dirs"][0];
        let read = d["rx_pkts"].as_u64().unwrap_or(0);
        let kernel = d["drops"]["kernel"].as_u64().unwrap_or(0);
        let all: u64 = d["drops"].as_object().map_or(0, |m| m.values().filter_map(|v| v.as_u64()).sum());
        out += &format!(
            "kernel drops ({io}): {sent} sent at 150 kpps, {reached} reached the interface, {read} read by the \
             router, {kernel} reported dropped by the kernel (all drops {all}, pool_exhausted {}); unaccounted: {}\n",
            d["pool_exhausted"],
            reached as i64 - read as i64 - kernel as i64
        );
    }
    out
}

/// Runs the three; prints their figures.
pub fn run() -> i32 {
    println!("{}", flood());
    print!("{}", bypass());
    print!("{}", kernel_drops());
    0
}
