//! `qoslab-router-bench rxcost [ROUNDS]`: what receiving one 64-byte
//! frame costs with each AF_PACKET receive path the router has had
//! (the one-knob run for the 64 B gap, docs/performance.md).
//!
//! ```text
//! per round, per path (paths interleaved round by round):
//!     r: a fresh socket on r-a           h1: 4,000 frames of 64 B (sendmmsg, 64 a call) on h1-1
//!     nothing reads while they arrive: the kernel queues them (or fills the ring)
//!     r: drain them all, in batches of 64: the reading thread's CPU time / frame   → recv ns
//!     h1: the sending thread's CPU time / frame (veth delivers in its softirq)      → send ns
//! paths:
//!     recvmmsg           93f95b4's: recvmmsg into buffers, no control data
//!     recvmmsg+auxdata   the first fix: PACKET_AUXDATA, a control buffer per message, cmsg read
//!     ring               the router's now: PacketSocket (TPACKET_V2 ring) into pool slots
//! ```
//!
//! CPU time, not wall time: a preemption by another job is not counted.
//! A full ring or receive buffer would drop frames: 4,000 fit both.

use crate::bed::Bed;
use crate::traffic::frames;
use qoslab_router::afpacket::PacketSocket;
use qoslab_router::pool::Pool;
use qoslab_router::testbed::{in_ns, packet_socket, set_int_opt};
use std::os::fd::{AsRawFd, OwnedFd};

const FRAMES: usize = 4000;
const BATCH: usize = 64;
const PATHS: [&str; 3] = ["recvmmsg", "recvmmsg+auxdata", "ring"];

/// This thread's CPU time (ns).
fn cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A receiving socket the way `path` opens it.
enum Rx {
    Msg { fd: OwnedFd, aux: bool },
    Ring(Box<(PacketSocket, Pool)>),
}

impl Rx {
    fn open(dev: &str, path: &str) -> Rx {
        if path == "ring" {
            let s = PacketSocket::open(dev).unwrap_or_else(|e| panic!("{e}"));
            return Rx::Ring(Box::new((s, Pool::new(BATCH as u32))));
        }
        let fd = packet_socket(dev);
        set_int_opt(&fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, 64 << 20);
        let aux = path.ends_with("auxdata");
        if aux {
            set_int_opt(&fd, libc::SOL_PACKET, libc::PACKET_AUXDATA, 1);
        }
        Rx::Msg { fd, aux }
    }

    /// Reads every queued frame (none waiting: done); returns how many. The
    /// auxdata path reads each frame's VLAN status as the router did (the
    /// ring path's `recv_batch` does it in the ring header).
    fn drain(&mut self) -> usize {
        let (mut got, mut tagged) = (0, 0);
        match self {
            Rx::Ring(b) => {
                let (s, pool) = &mut **b;
                let mut out = Vec::with_capacity(BATCH);
                loop {
                    out.clear();
                    let n = s.recv_batch(pool, BATCH, &mut out).unwrap_or(0);
                    for &(slot, _) in &out {
                        pool.free(slot);
                    }
                    got += n;
                    if n == 0 {
                        return got;
                    }
                }
            }
            Rx::Msg { fd, aux } => {
                let mut bufs = vec![[0u8; 2048]; BATCH];
                let mut control = vec![[0u64; 6]; BATCH];
                // SAFETY: iovec and mmsghdr are plain data; all-zero is valid.
                let mut iov: Vec<libc::iovec> = vec![unsafe { std::mem::zeroed() }; BATCH];
                let mut msgs: Vec<libc::mmsghdr> = vec![unsafe { std::mem::zeroed() }; BATCH];
                loop {
                    for i in 0..BATCH {
                        iov[i] = libc::iovec { iov_base: bufs[i].as_mut_ptr() as *mut libc::c_void, iov_len: 2044 };
                        let h = &mut msgs[i].msg_hdr;
                        h.msg_iov = &mut iov[i];
                        h.msg_iovlen = 1;
                        (h.msg_control, h.msg_controllen) = if *aux {
                            (control[i].as_mut_ptr() as *mut libc::c_void, std::mem::size_of::<[u64; 6]>() as _)
                        } else {
                            (std::ptr::null_mut(), 0)
                        };
                    }
                    // SAFETY: BATCH initialised headers over live buffers.
                    let r = unsafe {
                        libc::recvmmsg(
                            fd.as_raw_fd(),
                            msgs.as_mut_ptr(),
                            BATCH as u32,
                            libc::MSG_DONTWAIT | libc::MSG_TRUNC,
                            std::ptr::null_mut(),
                        )
                    };
                    if r <= 0 {
                        std::hint::black_box(tagged);
                        return got;
                    }
                    got += r as usize;
                    if *aux {
                        for m in &msgs[..r as usize] {
                            tagged += vlan_valid(&m.msg_hdr) as usize;
                        }
                    }
                }
            }
        }
    }
}

/// Did the kernel report a VLAN tag in this message's `PACKET_AUXDATA` (as 93f95b4's successor read it)?
fn vlan_valid(h: &libc::msghdr) -> bool {
    // SAFETY: the kernel wrote `msg_controllen` bytes of well-formed cmsgs; CMSG_* stay inside them.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(h);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_PACKET && (*c).cmsg_type == libc::PACKET_AUXDATA {
                let a: libc::tpacket_auxdata = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const _);
                return a.tp_status & libc::TP_STATUS_VLAN_VALID != 0;
            }
            c = libc::CMSG_NXTHDR(h, c);
        }
    }
    false
}

/// Sends [`FRAMES`] 64-byte frames from `dev` in `ns`; the sending thread's CPU ns per frame.
fn send(ns: String, dev: String) -> f64 {
    in_ns(&ns, move || {
        let fd = packet_socket(&dev);
        let fr = frames(64);
        // SAFETY: iovec and mmsghdr are plain data; all-zero is valid.
        let mut iov: Vec<libc::iovec> = vec![unsafe { std::mem::zeroed() }; BATCH];
        let mut msgs: Vec<libc::mmsghdr> = vec![unsafe { std::mem::zeroed() }; BATCH];
        for i in 0..BATCH {
            iov[i] = libc::iovec { iov_base: fr[i].as_ptr() as *mut libc::c_void, iov_len: fr[i].len() };
            msgs[i].msg_hdr.msg_iov = &mut iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
        }
        let t0 = cpu_ns();
        let mut sent = 0;
        while sent < FRAMES {
            let n = (FRAMES - sent).min(BATCH);
            // SAFETY: `n` initialised headers over live frames.
            let r = unsafe { libc::sendmmsg(fd.as_raw_fd(), msgs.as_mut_ptr(), n as u32, 0) };
            sent += r.max(0) as usize;
        }
        (cpu_ns() - t0) as f64 / FRAMES as f64
    })
    .join()
    .unwrap()
}

/// One round of `path`: (recv ns/frame, send ns/frame, frames read).
fn round(bed: &Bed, path: &'static str) -> (f64, f64, usize) {
    let (tx_ready, rx_ready) = std::sync::mpsc::channel();
    let (tx_sent, rx_sent) = std::sync::mpsc::channel::<()>();
    let dev = bed.dev("a");
    let reader = in_ns(&bed.ns("r"), move || {
        let mut rx = Rx::open(&dev, path);
        rx.drain(); // anything from before
        tx_ready.send(()).unwrap();
        rx_sent.recv().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        let t0 = cpu_ns();
        let got = rx.drain();
        ((cpu_ns() - t0) as f64 / got.max(1) as f64, got)
    });
    rx_ready.recv().unwrap();
    let send_ns = send(bed.ns("h1"), bed.dev("1"));
    tx_sent.send(()).unwrap();
    let (recv_ns, got) = reader.join().unwrap();
    (recv_ns, send_ns, got)
}

fn median_range(v: &mut [f64]) -> String {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let med = if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 };
    format!("{med:.0} ({:.0}-{:.0})", v[0], v[n - 1])
}

/// Runs `rounds` rounds of every path, interleaved; prints the table.
pub fn run(rounds: usize) -> i32 {
    let bed = Bed::new("qx");
    let mut recv = vec![Vec::new(); PATHS.len()];
    let mut sendv = vec![Vec::new(); PATHS.len()];
    let mut sum = vec![Vec::new(); PATHS.len()];
    let mut short = 0;
    for _ in 0..rounds {
        for (i, p) in PATHS.iter().enumerate() {
            let (r, s, got) = round(&bed, p);
            short += (got < FRAMES) as usize;
            recv[i].push(r);
            sendv[i].push(s);
            sum[i].push(r + s);
        }
        eprint!(".");
    }
    eprintln!();
    println!(
        "rxcost: {rounds} rounds of {FRAMES} frames of 64 B per path, interleaved; CPU ns per frame, median (min-max); \
         load {}",
        loadavg()
    );
    println!("\n| path | recv (reading thread) | send + softirq (h1's thread) | sum |\n|---|---:|---:|---:|");
    for (i, p) in PATHS.iter().enumerate() {
        println!(
            "| {p} | {} | {} | {} |",
            median_range(&mut recv[i]),
            median_range(&mut sendv[i]),
            median_range(&mut sum[i])
        );
    }
    if short > 0 {
        println!(
            "\n{short} rounds read fewer than {FRAMES} frames (a drop on the way): their figures are per frame read"
        );
    }
    0
}

/// The first line of /proc/loadavg (read with a bound: at most 256 bytes), empty when unreadable.
fn loadavg() -> String {
    use std::io::Read;
    let mut s = String::new();
    if let Ok(f) = std::fs::File::open("/proc/loadavg") {
        let _ = f.take(256).read_to_string(&mut s);
    }
    s.lines().next().unwrap_or_default().to_string()
}
