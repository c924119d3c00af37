//! Traffic for the benchmark: raw AF_PACKET senders and counters in the
//! testbed's host namespaces.

use qoslab_router::testbed::{in_ns, packet_socket, set_int_opt, set_recv_timeout, Netns};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub const DST_MAC: [u8; 6] = [0x02, 0x99, 0x99, 0x99, 0x99, 0x99];

/// A raw AF_PACKET socket bound to `dev` (in the calling thread's namespace), 16 MB of receive buffer.
pub fn raw_socket(dev: &str) -> OwnedFd {
    let fd = packet_socket(dev);
    set_int_opt(&fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, 16 << 20);
    fd
}

/// 64 prebuilt frames of `frame_len` bytes (64 flows: source ports 10000..10063).
pub fn frames(frame_len: usize) -> Vec<Vec<u8>> {
    (0..64u16)
        .map(|i| {
            let b = etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], DST_MAC)
                .ipv4([10, 99, 0, 1], [10, 99, 0, 2], 64)
                .udp(10_000 + i, 9000);
            let mut f = Vec::new();
            b.write(&mut f, &vec![0u8; frame_len - 42]).unwrap();
            f
        })
        .collect()
}

/// Sends the frames round-robin in batches of 64 until `stop`.
pub fn blast(ns: String, dev: String, frame_len: usize, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<u64> {
    blast_frames(ns, dev, frames(frame_len), stop, Blast::default())
}

/// How [`blast_frames`] sends.
#[derive(Clone, Copy, Debug, Default)]
pub struct Blast {
    /// Each frame a new flow: a random IPv4 source address and port (the
    /// IPv4 checksum is left stale: nothing on the path checks it).
    pub spoof: bool,
    /// Batches spaced to about this many frames a second (none: as fast as it can).
    pub pps: Option<f64>,
    /// Stop after this many frames.
    pub limit: Option<u64>,
}

/// Sends `fr` round-robin in batches until `stop` (or `how.limit`); returns the frames sent.
pub fn blast_frames(
    ns: String,
    dev: String,
    mut fr: Vec<Vec<u8>>,
    stop: Arc<AtomicBool>,
    how: Blast,
) -> std::thread::JoinHandle<u64> {
    in_ns(&ns, move || {
        let fd = raw_socket(&dev);
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let t0 = Instant::now();
        let mut sent = 0u64;
        let limit = how.limit.unwrap_or(u64::MAX);
        // The frames' buffers never move: the headers point at them once.
        let mut iov: Vec<libc::iovec> = fr
            .iter_mut()
            .map(|f| libc::iovec { iov_base: f.as_mut_ptr() as *mut libc::c_void, iov_len: f.len() })
            .collect();
        // SAFETY: mmsghdr is plain data; each points at one live iovec above.
        let mut msgs: Vec<libc::mmsghdr> = (0..iov.len()).map(|_| unsafe { std::mem::zeroed() }).collect();
        for (m, v) in msgs.iter_mut().zip(iov.iter_mut()) {
            m.msg_hdr.msg_iov = v;
            m.msg_hdr.msg_iovlen = 1;
        }
        while !stop.load(Ordering::Relaxed) && sent < limit {
            if how.spoof {
                for v in &iov {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    // SAFETY: each iovec points at a live frame of at least 42 bytes (IPv4/UDP).
                    let f = unsafe { std::slice::from_raw_parts_mut(v.iov_base as *mut u8, v.iov_len) };
                    f[26..30].copy_from_slice(&(x as u32).to_be_bytes());
                    f[34..36].copy_from_slice(&((x >> 32) as u16).to_be_bytes());
                }
            }
            if let Some(pps) = how.pps {
                let due = t0 + Duration::from_secs_f64(sent as f64 / pps);
                if let Some(d) = due.checked_duration_since(Instant::now()) {
                    std::thread::sleep(d);
                }
            }
            let n = (msgs.len() as u64).min(limit - sent) as usize;
            // SAFETY: `msgs` are initialised headers over live buffers.
            let r = unsafe { libc::sendmmsg(fd.as_raw_fd(), msgs.as_mut_ptr(), n as u32, 0) };
            if r > 0 {
                sent += r as u64;
            }
        }
        sent
    })
}

/// Counts frames to DST_MAC arriving on `dev` between `start` and `stop`.
pub fn count(ns: String, dev: String, start: Arc<AtomicBool>, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<u64> {
    in_ns(&ns, move || {
        let fd = raw_socket(&dev);
        set_recv_timeout(&fd, Duration::from_millis(100));
        let mut bufs = vec![[0u8; 64]; 64];
        let mut iov: Vec<libc::iovec> = bufs
            .iter_mut()
            .map(|b| libc::iovec { iov_base: b.as_mut_ptr() as *mut libc::c_void, iov_len: 64 })
            .collect();
        // SAFETY: as in `blast`.
        let mut msgs: Vec<libc::mmsghdr> = (0..64).map(|_| unsafe { std::mem::zeroed() }).collect();
        for (m, v) in msgs.iter_mut().zip(iov.iter_mut()) {
            m.msg_hdr.msg_iov = v;
            m.msg_hdr.msg_iovlen = 1;
        }
        let mut n = 0u64;
        while !stop.load(Ordering::Relaxed) {
            // SAFETY: as above; MSG_TRUNC only reports the full length.
            let r =
                unsafe { libc::recvmmsg(fd.as_raw_fd(), msgs.as_mut_ptr(), 64, libc::MSG_TRUNC, std::ptr::null_mut()) };
            if r > 0 && start.load(Ordering::Relaxed) {
                n += bufs[..r as usize].iter().filter(|b| b[..6] == DST_MAC).count() as u64;
            }
        }
        n
    })
}

/// Offered and received frames per second over `secs` (after 0.5 s of warm-up).
pub fn measure(net: &Netns, frame_len: usize, secs: f64) -> (f64, f64) {
    let (start, stop) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
    let rx = count(net.ns("h2"), net.dev("2"), start.clone(), stop.clone());
    let tx = blast(net.ns("h1"), net.dev("1"), frame_len, stop.clone());
    std::thread::sleep(Duration::from_millis(500));
    start.store(true, Ordering::SeqCst);
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_secs_f64(secs));
    start.store(false, Ordering::SeqCst);
    let dt = t0.elapsed().as_secs_f64();
    stop.store(true, Ordering::SeqCst);
    let sent = tx.join().unwrap();
    let got = rx.join().unwrap();
    (sent as f64 / (dt + 0.5), got as f64 / dt)
}
