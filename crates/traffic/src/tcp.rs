//! Kernel TCP flows: a sender thread per flow and a receiver per listening
//! port. What the kernel does is the experiment; this module only sets the
//! socket's congestion control (`TCP_CONGESTION`) and segment payload
//! (`TCP_MAXSEG`) before connecting, writes the flow id (4 bytes) and then
//! as much as the socket takes until the flow's stop time (greedy, `ftp`)
//! or its `bytes` are written (`transfer`), and reads `TCP_INFO` at the end
//! (data segments sent, retransmissions, bytes acknowledged). At the stop
//! time a greedy flow is closed with a reset (`SO_LINGER` 0) so that its
//! unsent buffer is discarded, as the simulator's sender stops sending.
//! The namespace's other TCP settings (SACK, timestamps, ECN, RACK, the
//! initial window, delayed ACKs) are set by the testbed with sysctls and
//! route options, the largest window by the receiver's window ([`Window`],
//! docs/testbed.md, "TCP").
//!
//! A flow with `admission` asks the router first ([`crate::admission`], the
//! shaping CAC of [Tarasiuk05]): at its start, before `connect`, it binds a
//! UDP socket to the connection's port (`src_port`, or one the kernel
//! picks, which the connection then uses: the router knows the flow by
//! its addresses and ports) on 0.0.0.0, sends the request with the tcp bit
//! and the TCP destination port, and waits for the answer as a UDP flow
//! does. Refused or unanswered: no connection at all. Admitted: it
//! connects at once (its start shifted by the wait, its stop time not).
//! It reads nothing after the answer (the CAC never terminates). With
//! `cac`, when the transfer's last byte is acknowledged, or the flow
//! stops at its stop time or the run's stop (or its connection fails),
//! the connection is reset and then one FlowEnd leaves the same UDP
//! socket.
//!
//! The receiver accepts connections, reads the id, counts payload bytes
//! and their first and last arrival (CLOCK_MONOTONIC).
//!
//! **The receiver's window.** `TCP_WINDOW_CLAMP` alone does not hold on
//! Linux 6.11 and later (commit a2cbb1603943, "tcp: Update window clamping
//! condition", and its stable backports): when the first segment longer
//! than the receiver's initial MSS estimate (536 B) arrives, the kernel
//! measures payload / truesize (`tcp_measure_rcv_mss`, `scaling_ratio`) and
//! sets the clamp to the window the receive buffer holds at that ratio
//! (`tcp_win_from_space(sk_rcvbuf)`), replacing the user's. Measured on the
//! testbed (kernel 6.18, 1000 B segments): a 20,000 B clamp became 33,000 B
//! with the 80 kB buffer, and the four flows' flight reached 132 segments.
//! So the window is set in two steps ([`bind`], then each receiver): until
//! the kernel has measured the segment size the receive buffer is the
//! window (`SO_RCVBUF` of half of it, which the kernel doubles), so
//! whatever ratio it measures (payload < truesize) the clamp it sets stays
//! below the window; once `tcpi_rcv_mss` has reached the
//! segment payload (no later measurement can change the clamp: no segment
//! is longer) the receiver raises the buffer and sets the clamp to the
//! window, which then holds for the rest of the connection.

use crate::admission::{Admission, Step};
use crate::clock::{now_ns, sleep_until};
use crate::error::TrafficError;
use crate::gen::{FlowReport, TcpReport};
use crate::spec::{FlowSpec, Model};
use qoslab_core::traffic::jitter;
use qoslab_core::units::Dur;
use serde::Serialize;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

fn setsockopt<T>(fd: RawFd, level: libc::c_int, name: libc::c_int, v: &T) -> std::io::Result<()> {
    // SAFETY: setsockopt reads size_of::<T>() bytes from a live reference.
    let r = unsafe {
        libc::setsockopt(fd, level, name, v as *const T as *const libc::c_void, std::mem::size_of::<T>() as u32)
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn sockaddr_v4(a: &SocketAddr) -> Option<libc::sockaddr_in> {
    let SocketAddr::V4(a) = a else { return None };
    Some(libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: a.port().to_be(),
        sin_addr: libc::in_addr { s_addr: u32::from(*a.ip()).to_be() },
        sin_zero: [0; 8],
    })
}

/// A connected socket with the flow's congestion control and segment size.
fn connect(f: &FlowSpec, src_port: u16, mss: u32, cc: &str) -> Result<TcpStream, TrafficError> {
    let dst = sockaddr_v4(&f.dst)
        .ok_or_else(|| TrafficError::field(format!("flow {}: dst {}", f.id, f.dst), "allowed: IPv4"))?;
    // SAFETY: a new socket; its fd is owned by the TcpStream below (or closed on error).
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(TrafficError::io(format!("flow {}: socket", f.id), std::io::Error::last_os_error()));
    }
    // SAFETY: fd is a fresh socket we own.
    let stream = unsafe { TcpStream::from_raw_fd(fd) };
    let err = |what: &str, e: std::io::Error| TrafficError::io(format!("flow {}: {what}", f.id), e);
    setsockopt(fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, &1i32).map_err(|e| err("SO_REUSEADDR", e))?;
    let mut name = [0u8; 16];
    name[..cc.len()].copy_from_slice(cc.as_bytes());
    // SAFETY: TCP_CONGESTION reads a name of at most 16 bytes.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            name.as_ptr() as *const libc::c_void,
            cc.len() as u32,
        )
    };
    if r != 0 {
        return Err(err(
            &format!("congestion control {cc:?} (is its module loaded?)"),
            std::io::Error::last_os_error(),
        ));
    }
    setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_MAXSEG, &(mss as libc::c_int)).map_err(|e| err("TCP_MAXSEG", e))?;
    let tos: libc::c_int = (f.dscp as libc::c_int) << 2;
    setsockopt(fd, libc::IPPROTO_IP, libc::IP_TOS, &tos).map_err(|e| err("IP_TOS", e))?;
    if src_port != 0 {
        let src = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: src_port.to_be(),
            sin_addr: libc::in_addr { s_addr: 0 },
            sin_zero: [0; 8],
        };
        // SAFETY: bind with a sockaddr_in of the given size.
        let r = unsafe {
            libc::bind(
                fd,
                &src as *const libc::sockaddr_in as *const libc::sockaddr,
                std::mem::size_of_val(&src) as u32,
            )
        };
        if r != 0 {
            return Err(err(&format!("bind port {src_port}"), std::io::Error::last_os_error()));
        }
    }
    // SAFETY: connect with a sockaddr_in of the given size.
    let r = unsafe {
        libc::connect(fd, &dst as *const libc::sockaddr_in as *const libc::sockaddr, std::mem::size_of_val(&dst) as u32)
    };
    if r != 0 {
        return Err(err(&format!("connect {}", f.dst), std::io::Error::last_os_error()));
    }
    Ok(stream)
}

fn tcp_info(fd: RawFd) -> Option<libc::tcp_info> {
    // SAFETY: an all-zero tcp_info is valid; getsockopt fills at most `len` bytes of it.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: as above.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            &mut info as *mut libc::tcp_info as *mut libc::c_void,
            &mut len,
        )
    };
    (r == 0).then_some(info)
}

/// Starts the sender thread of one TCP flow; it returns the flow's report.
pub fn spawn_sender(
    f: FlowSpec,
    t0: u64,
    seed: u64,
    stop: &'static AtomicBool,
) -> JoinHandle<Result<FlowReport, TrafficError>> {
    std::thread::spawn(move || send(&f, t0, seed, stop))
}

fn send(f: &FlowSpec, t0: u64, seed: u64, stop: &AtomicBool) -> Result<FlowReport, TrafficError> {
    let mut rng = qoslab_core::rng::stream(seed, f.stream);
    let start = t0 + f.start_ns + jitter(&mut rng, Dur(f.jitter_ns)).0;
    sleep_until(start);
    let mut report = FlowReport { id: f.id, ..FlowReport::default() };
    let mut adm = f.admission.map(|a| Admission::new(a, f.id, f.dst, true));
    if stop.load(Ordering::SeqCst) {
        report.admission = adm.map(|a| a.report);
        return Ok(report);
    }
    let Some(a) = adm.as_mut() else {
        transfer(f, f.src_port, t0, stop, &mut report)?;
        return Ok(report);
    };
    let (sock, port, admitted) = ask(f, a, t0, start - t0, stop)?;
    let sent = if admitted {
        // The connection uses the request's port: the router knows the flow by it.
        let sent = transfer(f, port, t0, stop, &mut report);
        // Completed, stopped or failed: the connection has departed.
        a.end(now_ns(), &sock);
        sent
    } else {
        Ok(())
    };
    report.admission = Some(a.report.clone());
    sent.map(|()| report)
}

/// Asks the router from a UDP socket bound to the flow's port (`src_port`, or one the kernel
/// picks) at schedule time `t` (ns after `t0`), and waits for the answer as a UDP flow does
/// ([`Admission::on_due`]); returns the socket, its port and whether the flow was admitted (not:
/// refused, unanswered, or the run stopped meanwhile).
fn ask(
    f: &FlowSpec,
    a: &mut Admission,
    t0: u64,
    mut t: u64,
    stop: &AtomicBool,
) -> Result<(UdpSocket, u16, bool), TrafficError> {
    let err = |what: String, e: std::io::Error| TrafficError::io(format!("flow {}: admission: {what}", f.id), e);
    // UDP and TCP ports are apart: this binds beside the TCP connection's port, not against it.
    let sock = UdpSocket::bind(("0.0.0.0", f.src_port))
        .map_err(|e| err(format!("cannot bind UDP 0.0.0.0:{}", f.src_port), e))?;
    crate::gen::set_tos(&sock, f.dscp, false).map_err(|e| err("cannot set the TOS byte".into(), e))?;
    sock.set_nonblocking(true).map_err(|e| err("non-blocking".into(), e))?;
    let port = sock.local_addr().map_err(|e| err("its port".into(), e))?.port();
    loop {
        match a.on_due(t, now_ns(), &sock) {
            Step::Send => return Ok((sock, port, true)),
            Step::Stop => return Ok((sock, port, false)),
            Step::Later(n) => {
                sleep_until(t0 + n);
                if stop.load(Ordering::SeqCst) {
                    return Ok((sock, port, false));
                }
                t = n;
            }
        }
    }
}

/// Connects from `src_port` (0: any) and sends until the flow's `bytes` are acknowledged, its
/// stop time or the run's stop; then resets the connection. Fills `report`.
fn transfer(
    f: &FlowSpec,
    src_port: u16,
    t0: u64,
    stop: &AtomicBool,
    report: &mut FlowReport,
) -> Result<(), TrafficError> {
    let Model::Tcp { bytes, mss, congestion } = &f.model else { unreachable!("only TCP flows come here") };
    let end = t0 + f.stop_ns;
    let mut s = connect(f, src_port, *mss, congestion)?;
    report.first_tx_ns = now_ns();
    s.write_all(&f.id.to_le_bytes()).map_err(|e| TrafficError::io(format!("flow {}", f.id), e))?;
    s.set_write_timeout(Some(Duration::from_millis(20))).map_err(|e| TrafficError::io(format!("flow {}", f.id), e))?;
    let buf = vec![0x5au8; 65536];
    let mut written: u64 = 0;
    let goal = bytes.unwrap_or(u64::MAX);
    while written < goal && now_ns() < end && !stop.load(Ordering::SeqCst) {
        let n = (goal - written).min(buf.len() as u64) as usize;
        match s.write(&buf[..n]) {
            Ok(k) => written += k as u64,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {}
            Err(e) => return Err(TrafficError::io(format!("flow {}: write", f.id), e)),
        }
    }
    let fd = s.as_raw_fd();
    let mut completed = 0;
    if bytes.is_some() && written >= goal {
        // A transfer ends when its last byte is acknowledged (or at its stop time).
        while now_ns() < end && !stop.load(Ordering::SeqCst) {
            if tcp_info(fd).is_some_and(|i| i.tcpi_bytes_acked >= goal + 5) {
                completed = now_ns();
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    let info = tcp_info(fd);
    report.last_tx_ns = now_ns();
    if let Some(i) = info {
        report.sent_pkts = i.tcpi_data_segs_out as u64;
        report.sent_bytes = i.tcpi_bytes_acked.saturating_sub(5);
        report.tcp = Some(TcpReport {
            data_segs_out: i.tcpi_data_segs_out as u64,
            total_retrans: i.tcpi_total_retrans as u64,
            bytes_acked: i.tcpi_bytes_acked.saturating_sub(5),
            completed_ns: completed,
            snd_mss: i.tcpi_snd_mss as u64,
        });
    }
    // Stop now: a reset discards what is still buffered (the simulator's sender stops sending).
    let linger = libc::linger { l_onoff: 1, l_linger: 0 };
    let _ = setsockopt(fd, libc::SOL_SOCKET, libc::SO_LINGER, &linger);
    drop(s);
    Ok(())
}

/// What a receiver counted for one flow.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Received {
    pub id: u32,
    pub bytes: u64,
    pub first_ns: u64,
    pub last_ns: u64,
}

/// The receiver's window for the scenario's `tcp.max_window`: `bytes` = max_window × `mss`,
/// `mss` the flows' segment payload (docs/testbed.md, "TCP").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub bytes: u32,
    pub mss: u32,
}

impl Window {
    /// The receive buffer (`SO_RCVBUF`, which the kernel doubles) once the segment size is
    /// measured: room for the window at any payload / truesize ratio down to 1/16 (a 88 B
    /// segment in a 1.4 kB buffer), so that the clamp, not the free space, bounds the window.
    fn rcvbuf(self) -> libc::c_int {
        (8 * self.bytes as u64).min(libc::c_int::MAX as u64) as libc::c_int
    }
}

/// Binds every TCP listening address. With a `window`, each accepted connection starts from
/// the listener's settings: segment size `mss` (`TCP_MAXSEG`: windows in whole segments),
/// clamp `bytes`, and a locked receive buffer of half the window (`SO_RCVBUF` of `bytes / 2`,
/// doubled by the kernel to `bytes`) — so the clamp the kernel sets when it measures the
/// segment size stays below the window (module doc); each receiver then sets the window.
pub fn bind(addrs: &[SocketAddr], window: Option<Window>) -> Result<Vec<TcpListener>, TrafficError> {
    addrs
        .iter()
        .map(|a| {
            let l = TcpListener::bind(a).map_err(|e| TrafficError::io(format!("--listen-tcp {a}: cannot bind"), e))?;
            l.set_nonblocking(true).map_err(|e| TrafficError::io(format!("--listen-tcp {a}"), e))?;
            if let Some(w) = window {
                let fd = l.as_raw_fd();
                let err = |what: &str, e: std::io::Error| {
                    TrafficError::io(format!("--tcp-window-clamp {}: {what}", w.bytes), e)
                };
                setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_MAXSEG, &(w.mss as libc::c_int))
                    .map_err(|e| err("TCP_MAXSEG", e))?;
                setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, &((w.bytes / 2).max(1) as libc::c_int))
                    .map_err(|e| err("SO_RCVBUF", e))?;
                setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_WINDOW_CLAMP, &(w.bytes as libc::c_int))
                    .map_err(|e| err("TCP_WINDOW_CLAMP", e))?;
            }
            Ok(l)
        })
        .collect()
}

/// Sets the connection's window once no measurement of the segment size is due: the kernel's
/// estimate `tcpi_rcv_mss` has reached the payload the peer sends, `tcpi_snd_mss` (the MSS both
/// ends agreed less the options, 12 B with timestamps). A payload above the initial estimate
/// (536 B) is measured at its first full segment; one at or below it never is, and the window is
/// set at once. Then a receive buffer with room for the window, and the clamp. Returns whether it
/// is set (false: not measured yet, try after the next read).
fn set_window(fd: RawFd, w: Window) -> bool {
    if !tcp_info(fd).is_some_and(|i| i.tcpi_snd_mss > 0 && i.tcpi_rcv_mss >= i.tcpi_snd_mss) {
        return false;
    }
    // The buffer first: raising it cannot move the clamp (it is locked, no measurement is due).
    // A failure (the connection reset under us) leaves it pending: the read loop then ends.
    setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, &w.rcvbuf()).is_ok()
        && setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_WINDOW_CLAMP, &(w.bytes as libc::c_int)).is_ok()
}

fn receive(mut s: TcpStream, window: Option<Window>, stop: Arc<AtomicBool>) -> Option<Received> {
    s.set_nonblocking(false).ok()?;
    let fd = s.as_raw_fd();
    // The window is set after the read that follows the kernel's measurement of the segment size.
    let mut pending = window;
    let settle = |pending: &mut Option<Window>| {
        if pending.is_some_and(|w| set_window(fd, w)) {
            *pending = None;
        }
    };
    s.set_read_timeout(Some(Duration::from_millis(50))).ok()?;
    let mut id = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match s.read(&mut id[got..]) {
            Ok(0) => return None,
            Ok(k) => {
                got += k;
                settle(&mut pending);
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {
                if stop.load(Ordering::SeqCst) {
                    return None;
                }
            }
            Err(_) => return None,
        }
    }
    let mut r = Received { id: u32::from_le_bytes(id), ..Received::default() };
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => {
                let t = now_ns();
                settle(&mut pending);
                if r.bytes == 0 {
                    r.first_ns = t;
                }
                r.bytes += k as u64;
                r.last_ns = t;
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
            }
            Err(_) => break, // a reset: the sender stopped
        }
    }
    Some(r)
}

/// Waits up to `ms` for a connection request on a listening socket.
fn wait_readable(fd: RawFd, ms: libc::c_int) {
    let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    // SAFETY: one pollfd, owned by this frame.
    unsafe { libc::poll(&mut p, 1, ms) };
}

/// Accepts and reads on every listener until `stop`; returns what each flow delivered. A
/// connection is accepted as soon as it is established (poll), so that its receiver sets the
/// window within a segment time of the kernel's measurement (module doc).
pub fn run_receivers(listeners: Vec<TcpListener>, window: Option<Window>, stop: Arc<AtomicBool>) -> Vec<Received> {
    let out = Arc::new(Mutex::new(Vec::new()));
    let threads: Vec<_> = listeners
        .into_iter()
        .map(|l| {
            let (stop, out) = (stop.clone(), out.clone());
            std::thread::spawn(move || {
                let mut conns = Vec::new();
                while !stop.load(Ordering::SeqCst) {
                    match l.accept() {
                        Ok((s, _)) => {
                            let (stop, out) = (stop.clone(), out.clone());
                            conns.push(std::thread::spawn(move || {
                                if let Some(r) = receive(s, window, stop) {
                                    out.lock().unwrap_or_else(|p| p.into_inner()).push(r);
                                }
                            }));
                        }
                        Err(_) => wait_readable(l.as_raw_fd(), 20),
                    }
                }
                conns.into_iter().for_each(|c| {
                    let _ = c.join();
                });
            })
        })
        .collect();
    threads.into_iter().for_each(|t| {
        let _ = t.join();
    });
    let mut v = std::mem::take(&mut *out.lock().unwrap_or_else(|p| p.into_inner()));
    v.sort_by_key(|r| r.id);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::fake_router::{FakeRouter, Seen};
    use qoslab_core::edge::pcn::wire::Kind;

    /// A transfer of `bytes` to `dst` asking the CAC at `port`, starting 20 ms from now.
    fn transfer_flow(dst: SocketAddr, port: u16, bytes: u64) -> (FlowSpec, u64) {
        let f: FlowSpec = serde_json::from_str(&format!(
            r#"{{"id": 5, "dst": "{dst}", "src_port": 0, "start_ns": 0, "stop_ns": 3000000000,
                 "payload": {{"base": 100}}, "model": {{"tcp": {{"bytes": {bytes}, "mss": 1000}}}},
                 "admission": {{"port": {port}, "rate_bps": 2e6, "timeout_ns": 500000000, "cac": true}}}}"#
        ))
        .unwrap();
        (f, now_ns() + 20_000_000)
    }

    /// Accepts one connection within `wait`, reads it to its end: (accepted at, peer, bytes).
    fn accept_one(l: TcpListener, wait: Duration) -> std::thread::JoinHandle<Option<(u64, SocketAddr, u64)>> {
        l.set_nonblocking(true).unwrap();
        std::thread::spawn(move || {
            let until = now_ns() + wait.as_nanos() as u64;
            while now_ns() < until {
                if let Ok((mut s, peer)) = l.accept() {
                    let at = now_ns();
                    s.set_nonblocking(false).unwrap();
                    let (mut buf, mut n) = (vec![0u8; 65536], 0u64);
                    while let Ok(k @ 1..) = s.read(&mut buf) {
                        n += k as u64;
                    }
                    return Some((at, peer, n));
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            None
        })
    }

    #[test]
    fn a_refused_tcp_flow_never_connects() {
        static STOP: AtomicBool = AtomicBool::new(false);
        let router = FakeRouter::start(|_| Some((false, 0.0)), Duration::ZERO, Vec::new());
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let dst = l.local_addr().unwrap();
        let (f, t0) = transfer_flow(dst, router.port, 100_000);
        let listener = accept_one(l, Duration::from_millis(400));
        let r = spawn_sender(f, t0, 1, &STOP).join().unwrap().unwrap();
        assert!(listener.join().unwrap().is_none(), "no connection at all");
        let seen = router.stop();
        let a = r.admission.unwrap();
        assert_eq!((a.decision, r.first_tx_ns, r.tcp.is_some()), ("refused", 0, false));
        assert_eq!(a.cac.unwrap().ended_ns, 0);
        assert_eq!(seen.len(), 1, "the request only: {seen:?}");
        let m = seen[0].msg;
        assert_eq!((m.kind, m.flow, m.tcp, m.port, m.value), (Kind::FlowRequest, 5, true, dst.port(), 2e6));
    }

    #[test]
    fn an_admitted_tcp_flow_connects_after_its_answer_and_ends_once_its_bytes_are_acknowledged() {
        static STOP: AtomicBool = AtomicBool::new(false);
        // The answer leaves 30 ms after the request.
        let router = FakeRouter::start(|_| Some((true, 2.5e6)), Duration::from_millis(30), Vec::new());
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let dst = l.local_addr().unwrap();
        let (f, t0) = transfer_flow(dst, router.port, 200_000);
        let listener = accept_one(l, Duration::from_secs(3));
        let r = spawn_sender(f, t0, 1, &STOP).join().unwrap().unwrap();
        let (accepted, peer, got) = listener.join().unwrap().expect("a connection");
        let seen = router.stop();
        let (req, ends): (Vec<Seen>, Vec<Seen>) = seen.iter().partition(|s| s.msg.kind == Kind::FlowRequest);
        assert_eq!((req.len(), ends.len()), (1, 1), "{seen:?}");
        let (req, end) = (req[0], ends[0]);
        assert!(req.msg.tcp && req.msg.port == dst.port());
        assert_eq!(req.from.port(), peer.port(), "the request's UDP port is the connection's");
        assert!(r.first_tx_ns >= req.answered_ns && accepted >= req.answered_ns, "connects after the answer");
        let (a, tcp) = (r.admission.unwrap(), r.tcp.unwrap());
        assert_eq!((a.decision, a.cac.unwrap().assigned_bps), ("admitted", 2.5e6));
        assert_eq!((tcp.bytes_acked, got), (200_000, 4 + 200_000), "every byte transferred");
        assert!(tcp.completed_ns > 0);
        let m = end.msg;
        assert_eq!(
            (m.kind, m.flow, m.tcp, m.port, m.value, end.from),
            (Kind::FlowEnd, 5, true, dst.port(), 0.0, req.from)
        );
        let ended = a.cac.unwrap().ended_ns;
        assert!(ended >= tcp.completed_ns && end.at_ns >= ended, "ends after completion");
        assert!(ended - tcp.completed_ns < 100_000_000, "at completion, not at the stop time");
    }

    #[test]
    fn an_admitted_greedy_tcp_flow_ends_at_its_stop_time() {
        static STOP: AtomicBool = AtomicBool::new(false);
        let router = FakeRouter::start(|_| Some((true, 1e6)), Duration::ZERO, Vec::new());
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let dst = l.local_addr().unwrap();
        let (mut f, t0) = transfer_flow(dst, router.port, 0);
        (f.model, f.stop_ns) = (Model::Tcp { bytes: None, mss: 1000, congestion: "reno".into() }, 200_000_000);
        let listener = accept_one(l, Duration::from_secs(2));
        let r = spawn_sender(f, t0, 1, &STOP).join().unwrap().unwrap();
        assert!(listener.join().unwrap().is_some_and(|(_, _, n)| n > 0));
        let seen = router.stop();
        let ends: Vec<_> = seen.iter().filter(|s| s.msg.kind == Kind::FlowEnd).collect();
        assert_eq!(ends.len(), 1, "{seen:?}");
        let ended = r.admission.unwrap().cac.unwrap().ended_ns;
        assert!(ended >= t0 + 200_000_000 && ended < t0 + 400_000_000, "at its stop time");
        assert_eq!(r.tcp.unwrap().completed_ns, 0, "greedy: never completed");
    }
}
