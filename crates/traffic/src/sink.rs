//! The sink: one UDP socket per port, a record per packet of ours (see
//! [`crate::wire`]), taken on CLOCK_MONOTONIC right after `recv`. Each
//! socket has its own thread; at the end the records are merged in
//! receive order and written at once (under a temporary name, renamed).

use crate::clock::now_ns;
use crate::error::TrafficError;
use crate::wire::{self, Record};
use std::io::Write;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Socket receive buffer asked for (the kernel caps it at `rmem_max`
/// unless the caller is root, which the testbed is).
const RCVBUF: libc::c_int = 8 << 20;

/// Binds every address; fails naming the one that cannot be bound.
pub fn bind(addrs: &[SocketAddr]) -> Result<Vec<UdpSocket>, TrafficError> {
    addrs
        .iter()
        .map(|a| {
            let s = UdpSocket::bind(a).map_err(|e| TrafficError::io(format!("--listen {a}: cannot bind"), e))?;
            s.set_read_timeout(Some(Duration::from_millis(50)))
                .map_err(|e| TrafficError::io(format!("--listen {a}"), e))?;
            // SAFETY: setsockopt with a pointer to a live c_int of the given size.
            unsafe {
                libc::setsockopt(
                    s.as_raw_fd(),
                    libc::SOL_SOCKET,
                    libc::SO_RCVBUFFORCE,
                    &RCVBUF as *const libc::c_int as *const libc::c_void,
                    std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                );
            }
            Ok(s)
        })
        .collect()
}

/// Receives on every socket until `stop` is set; returns the records in receive order.
pub fn run(socks: Vec<UdpSocket>, stop: Arc<AtomicBool>) -> Vec<Record> {
    let threads: Vec<_> = socks
        .into_iter()
        .map(|s| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 65536];
                let mut out = Vec::new();
                while !stop.load(Ordering::SeqCst) {
                    let Ok(n) = s.recv(&mut buf) else { continue };
                    let recv_ns = now_ns();
                    if let Some((flow, seq, send_ns)) = wire::read(&buf[..n]) {
                        out.push(Record { flow, wire: n as u32 + wire::OVERHEAD, seq, send_ns, recv_ns });
                    }
                }
                out
            })
        })
        .collect();
    let mut all: Vec<Record> = threads.into_iter().flat_map(|t| t.join().unwrap_or_default()).collect();
    all.sort_by_key(|r| (r.recv_ns, r.flow, r.seq));
    all
}

/// Writes the records to `path` (a temporary name beside it, then renamed).
pub fn write(path: &Path, records: &[Record]) -> std::io::Result<()> {
    let tmp = path.with_extension("partial");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        for r in records {
            f.write_all(&r.to_bytes())?;
        }
        f.flush()?;
    }
    std::fs::rename(&tmp, path)
}
