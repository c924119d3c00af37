//! The sink: one UDP socket per port, a record per packet of ours (see
//! [`crate::wire`]), taken on CLOCK_MONOTONIC right after `recv`. Each
//! socket has its own thread; at the end the records are merged in
//! receive order and written at once (under a temporary name, renamed).
//!
//! An MM_APP flow (`--mm`) also has its receiver here: core's `MmReceiver`
//! takes each of its packets (sequence number, send time from the header,
//! receive time) and, at each decision it asks for, the sink sends the
//! scale index back from the flow's socket to the address the flow's
//! packets come from (the generator's flow socket), in a datagram of
//! `feedback_size - 42` bytes, at least its 12-byte header
//! ([`wire::stamp_feedback`]). A socket's thread waits for packets at most
//! until its flows' next decision is due.

use crate::clock::now_ns;
use crate::error::TrafficError;
use crate::wire::{self, Record};
use qoslab_core::traffic::mm_app::MmReceiver;
use qoslab_core::units::Time;
use serde::Serialize;
use std::collections::HashMap;
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

/// An MM_APP flow the sink runs the receiver of (`--mm FLOW:SCALES:FEEDBACK_SIZE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MmFlow {
    pub flow: u32,
    pub scales: usize,
    /// Wire bytes of a feedback packet.
    pub feedback_size: u32,
}

impl std::str::FromStr for MmFlow {
    type Err = String;
    fn from_str(s: &str) -> Result<MmFlow, String> {
        let bad = || format!("{s:?}; allowed: FLOW:SCALES:FEEDBACK_SIZE, e.g. 3:5:40");
        let mut it = s.split(':').map(|x| x.parse::<u64>().map_err(|_| bad()));
        let (Some(flow), Some(scales), Some(size), None) = (it.next(), it.next(), it.next(), it.next()) else {
            return Err(bad());
        };
        let (flow, scales, size) = (flow?, scales?, size?);
        let max = qoslab_core::traffic::mm_app::MAX_SCALES as u64;
        if flow > u32::MAX as u64 || !(1..=max).contains(&scales) || !(1..=65535).contains(&size) {
            return Err(format!("{s:?}; allowed: a flow id, 1 to {max} scales, a feedback size of 1 to 65535 B"));
        }
        Ok(MmFlow { flow: flow as u32, scales: scales as usize, feedback_size: size as u32 })
    }
}

/// What an MM_APP flow's receiver did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct MmCounts {
    pub id: u32,
    /// Feedback datagrams sent (one per decision), and those the socket refused.
    pub feedback_pkts: u64,
    pub feedback_bytes: u64,
    pub feedback_errors: u64,
    /// Packets the receiver found lost (sequence gaps).
    pub lost: u64,
    /// CLOCK_MONOTONIC ns of each feedback sent (the sink does not know the flow's end, which
    /// stops the simulator's receiver: the testbed counts those before it), at most
    /// [`MAX_FEEDBACK_TIMES`].
    pub sent_ns: Vec<u64>,
}

/// The most feedback send times a flow's counts list (one an RTT: hours of a flow).
pub const MAX_FEEDBACK_TIMES: usize = 1_000_000;

/// An MM_APP flow's receiver and where its packets come from.
struct MmState {
    spec: MmFlow,
    rx: MmReceiver,
    from: Option<SocketAddr>,
    counts: MmCounts,
}

/// The longest wait for a packet (the stop flag is read between waits).
const WAIT_NS: u64 = 50_000_000;

/// Receives on every socket until `stop` is set, running the receivers of the `mm` flows; returns
/// the records in receive order and each MM_APP flow's counts.
pub fn run(socks: Vec<UdpSocket>, stop: Arc<AtomicBool>, mm: &[MmFlow]) -> (Vec<Record>, Vec<MmCounts>) {
    let threads: Vec<_> = socks
        .into_iter()
        .map(|s| {
            let stop = stop.clone();
            let mut flows: HashMap<u32, MmState> = mm
                .iter()
                .map(|m| {
                    let counts = MmCounts { id: m.flow, ..MmCounts::default() };
                    (m.flow, MmState { spec: *m, rx: MmReceiver::new(m.scales), from: None, counts })
                })
                .collect();
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 65536];
                let mut out = Vec::new();
                let mut waiting = WAIT_NS;
                while !stop.load(Ordering::SeqCst) {
                    if !flows.is_empty() {
                        let _ = s.set_read_timeout(Some(Duration::from_nanos(waiting.max(20_000))));
                    }
                    if let Ok((n, from)) = s.recv_from(&mut buf) {
                        let recv_ns = now_ns();
                        if let Some((flow, seq, send_ns)) = wire::read(&buf[..n]) {
                            out.push(Record { flow, wire: n as u32 + wire::OVERHEAD, seq, send_ns, recv_ns });
                            if let Some(m) = flows.get_mut(&flow) {
                                m.rx.on_packet(Time(recv_ns), seq, Time(send_ns));
                                m.from = Some(from);
                            }
                        }
                    }
                    if !flows.is_empty() {
                        waiting = decide(&s, &mut flows, now_ns());
                    }
                }
                (out, flows.into_values().filter(|m| m.from.is_some()).map(|m| m.counts).collect::<Vec<_>>())
            })
        })
        .collect();
    let mut all = Vec::new();
    let mut counts = Vec::new();
    for t in threads {
        let (r, c) = t.join().unwrap_or_default();
        all.extend(r);
        counts.extend(c);
    }
    all.sort_by_key(|r| (r.recv_ns, r.flow, r.seq));
    counts.sort_by_key(|c| c.id);
    (all, counts)
}

/// Takes every MM_APP decision due at `now` and sends its feedback; returns how long until the
/// next one is due (at most [`WAIT_NS`]).
fn decide(s: &UdpSocket, flows: &mut HashMap<u32, MmState>, now: u64) -> u64 {
    let mut fb = [0u8; crate::spec::MAX_PAYLOAD as usize];
    let mut next = now + WAIT_NS;
    for m in flows.values_mut() {
        let Some(from) = m.from else { continue };
        if let Some(scale) = m.rx.on_timer(Time(now)) {
            let n = wire::feedback_payload(m.spec.feedback_size);
            wire::stamp_feedback(&mut fb[..n], m.spec.flow, scale as u32);
            match s.send_to(&fb[..n], from) {
                Ok(_) => {
                    m.counts.feedback_pkts += 1;
                    m.counts.feedback_bytes += n as u64 + wire::OVERHEAD as u64;
                    if m.counts.sent_ns.len() < MAX_FEEDBACK_TIMES {
                        m.counts.sent_ns.push(now);
                    }
                }
                Err(_) => m.counts.feedback_errors += 1,
            }
        }
        m.counts.lost = m.rx.lost;
        if let Some(t) = m.rx.deadline() {
            next = next.min(t.0);
        }
    }
    next.saturating_sub(now)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_mm_flow_is_named_flow_scales_feedback_size() {
        assert_eq!("3:5:40".parse::<MmFlow>(), Ok(MmFlow { flow: 3, scales: 5, feedback_size: 40 }));
        for bad in ["3:5", "3:0:40", "3:33:40", "3:5:0", "x:5:40", "3:5:40:1"] {
            let e = bad.parse::<MmFlow>().unwrap_err();
            assert!(e.contains("allowed:"), "{bad}: {e}");
        }
    }

    #[test]
    fn an_mm_flows_receiver_sends_its_scale_back_to_the_flows_socket() {
        let sink = bind(&["127.0.0.1:0".parse().unwrap()]).unwrap().pop().unwrap();
        let at = sink.local_addr().unwrap();
        let src = UdpSocket::bind("127.0.0.1:0").unwrap();
        src.connect(at).unwrap();
        src.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let mm = [MmFlow { flow: 7, scales: 5, feedback_size: 40 }];
        let th = {
            let stop = stop.clone();
            std::thread::spawn(move || run(vec![sink], stop, &mm))
        };
        let mut buf = [0u8; 100];
        wire::stamp(&mut buf, 7, 0, now_ns());
        src.send(&buf).unwrap();
        // The first packet is the first decision: scale 1, in a 12-byte datagram (40 B < 54 B).
        let mut fb = [0u8; 64];
        let n = src.recv(&mut fb).unwrap();
        assert_eq!((n, wire::read_feedback(&fb[..n])), (wire::FEEDBACK_HEADER, Some((7, 1))));
        stop.store(true, Ordering::SeqCst);
        let (records, counts) = th.join().unwrap();
        assert_eq!(records.len(), 1);
        assert_eq!(counts.len(), 1);
        assert!(counts[0].feedback_pkts >= 1 && counts[0].sent_ns.len() as u64 == counts[0].feedback_pkts);
        assert_eq!(counts[0].feedback_bytes, counts[0].feedback_pkts * 54);
    }
}
