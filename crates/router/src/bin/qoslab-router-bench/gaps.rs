//! `qoslab-router-bench gaps [--seconds S] [--rt] [--router PATH]`: how long
//! frames wait in the router while control commands are served.
//!
//! ```text
//! h1: 10 frames every 1 ms (10 kpps, 100 B, a sequence number each) for S seconds, twice:
//!     quiet, then while clients keep the control socket busy: one sends, back to back,
//!       stats · check CONFIG · reload CONFIG · check a named pipe (written 300 ms later);
//!     another keeps 10 connections open that say nothing (closed and reopened every 1.5 s)
//! r:  qoslab-router, FIFO at 100 Mb/s (not the bottleneck); an AF_PACKET tap on its side-a
//!     interface stamps each frame's arrival (kernel time, SO_TIMESTAMPNS)
//! h2: a tap stamps each frame's arrival from the router
//! ```
//!
//! Per phase: each frame's time through the router (h2's stamp − r's), its
//! median, p99 and maximum, and the frames that never came out. A loop
//! stalled by a control command shows as frames delayed by the stall. On a
//! host loaded by other work the router also waits for a CPU; `--rt` runs
//! it under SCHED_FIFO (`chrt -f 50`) so that what remains is the router's own.

use crate::bed::{self, Bed};
use crate::traffic::{raw_socket, DST_MAC};
use qoslab_router::testbed::{in_ns, recv_with_cmsgs, set_int_opt, set_recv_timeout};
use std::collections::HashMap;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Every frame to DST_MAC seen on `dev` until `stop`: (sequence number, kernel time ns).
fn tap(ns: String, dev: String, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<Vec<(u64, u64)>> {
    let ready = Arc::new(std::sync::Barrier::new(2));
    let r2 = ready.clone();
    let h = in_ns(&ns, move || {
        let fd = raw_socket(&dev);
        set_int_opt(&fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1);
        set_recv_timeout(&fd, Duration::from_millis(100));
        r2.wait();
        let mut out = Vec::new();
        let mut buf = [0u8; 128];
        while !stop.load(Ordering::Relaxed) {
            let mut stamp = None;
            let n = recv_with_cmsgs(&fd, &mut buf, |level, kind, data| {
                if level == libc::SOL_SOCKET
                    && kind == libc::SCM_TIMESTAMPNS
                    && data.len() >= std::mem::size_of::<libc::timespec>()
                {
                    // SAFETY: the kernel wrote a timespec as this message's data (its length checked).
                    let ts: libc::timespec =
                        unsafe { std::ptr::read_unaligned(data.as_ptr() as *const libc::timespec) };
                    stamp = Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
                }
            });
            if n < 50 || buf[..6] != DST_MAC {
                continue;
            }
            let seq = u64::from_be_bytes(buf[42..50].try_into().unwrap());
            if let Some(t) = stamp {
                out.push((seq, t));
            }
        }
        out
    });
    ready.wait();
    h
}

/// 10 frames every ms from h1 for `secs`, sequence numbers from `first`; returns the last + 1.
fn send(bed: &Bed, first: u64, secs: f64) -> u64 {
    let dev = bed.dev("1");
    in_ns(&bed.ns("h1"), move || {
        let fd = raw_socket(&dev);
        let mut f = Vec::new();
        etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], DST_MAC)
            .ipv4([10, 99, 0, 1], [10, 99, 0, 2], 64)
            .udp(10_000, 9000)
            .write(&mut f, &[0u8; 100 - 42])
            .unwrap();
        let t0 = Instant::now();
        let mut seq = first;
        let mut tick = 0u64;
        while t0.elapsed().as_secs_f64() < secs {
            for _ in 0..10 {
                f[42..50].copy_from_slice(&seq.to_be_bytes());
                // SAFETY: sends a live frame.
                unsafe { libc::send(fd.as_raw_fd(), f.as_ptr() as *const libc::c_void, f.len(), 0) };
                seq += 1;
            }
            tick += 1;
            let due = t0 + Duration::from_millis(tick);
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
        }
        seq
    })
    .join()
    .unwrap()
}

/// Keeps the control socket busy until `stop`; returns the commands answered.
fn control_load(bed: &Bed, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<u64> {
    let (sock, cfg, fifo) = (bed.socket(), bed.dir.join("bench.toml"), bed.dir.join("fifo"));
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo on a path in our own folder.
    unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
    let idle = {
        let (sock, stop) = (sock.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let held: Vec<_> =
                    (0..10).filter_map(|_| std::os::unix::net::UnixStream::connect(&sock).ok()).collect();
                std::thread::sleep(Duration::from_millis(1500));
                drop(held);
            }
        })
    };
    std::thread::spawn(move || {
        let mut n = 0u64;
        while !stop.load(Ordering::Relaxed) {
            for cmd in [
                "stats".to_string(),
                format!("check {}", cfg.display()),
                format!("reload {}", cfg.display()),
                format!("check {}", fifo.display()),
            ] {
                // A router that opens the pipe blocks until a writer comes: one comes 300 ms later.
                let writer = cmd.ends_with("fifo").then(|| {
                    let f = fifo.clone();
                    std::thread::spawn(move || {
                        std::thread::sleep(Duration::from_millis(300));
                        let _ = std::fs::OpenOptions::new().write(true).custom_flags(libc::O_NONBLOCK).open(f);
                    })
                });
                if qoslab_router::control::request(&sock, &cmd).is_ok() {
                    n += 1;
                }
                if let Some(w) = writer {
                    let _ = w.join();
                }
            }
        }
        let _ = idle.join();
        n
    })
}

fn pct(v: &[u64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v[((v.len() - 1) as f64 * p).round() as usize] as f64 / 1e3
}

/// One phase's figures from the two taps' records of sequence numbers `from..to`.
fn figures(name: &str, inn: &HashMap<u64, u64>, out: &HashMap<u64, u64>, from: u64, to: u64) -> String {
    let mut d: Vec<u64> = (from..to).filter_map(|s| Some(out.get(&s)?.saturating_sub(*inn.get(&s)?))).collect();
    d.sort_unstable();
    let seen_in = (from..to).filter(|s| inn.contains_key(s)).count();
    let lost = (from..to).filter(|s| inn.contains_key(s) && !out.contains_key(s)).count();
    format!(
        "| {name} | {} | {seen_in} | {lost} | {:.0} | {:.0} | {:.0} |\n",
        to - from,
        pct(&d, 0.5),
        pct(&d, 0.99),
        pct(&d, 1.0)
    )
}

pub fn run(secs: f64) -> i32 {
    let bed = Bed::new("qg");
    let c = bed.start("", "rate = \"100Mbps\"\n");
    let stop = Arc::new(AtomicBool::new(false));
    let tin = tap(bed.ns("r"), bed.dev("a"), stop.clone());
    let tout = tap(bed.ns("h2"), bed.dev("2"), stop.clone());
    let quiet_end = send(&bed, 0, secs);
    let busy = Arc::new(AtomicBool::new(false));
    let load = control_load(&bed, busy.clone());
    let busy_end = send(&bed, quiet_end, secs);
    busy.store(true, Ordering::SeqCst);
    let commands = load.join().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::SeqCst);
    let inn: HashMap<u64, u64> = tin.join().unwrap().into_iter().collect();
    let out: HashMap<u64, u64> = tout.join().unwrap().into_iter().collect();
    bed.stop(c);
    let rt = if bed::REALTIME.get() == Some(&true) { ", router under SCHED_FIFO" } else { "" };
    let mut s = format!(
        "qoslab-router-bench gaps: {secs} s per phase, 10 kpps of 100 B through a FIFO at 100 Mb/s{rt}; time \
         through the router (kernel stamps at its input and at h2), µs\n\n\
         | phase | sent | seen at r | not out | p50 µs | p99 µs | max µs |\n|---|---:|---:|---:|---:|---:|---:|\n"
    );
    s += &figures("quiet", &inn, &out, 0, quiet_end);
    s += &figures(&format!("control busy ({commands} commands)"), &inn, &out, quiet_end, busy_end);
    print!("{s}");
    0
}
