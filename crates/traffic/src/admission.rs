//! A flow that asks before it sends: its request leaves as a packet to the
//! admitting router (a `qoslab-router` with `[pcn]`, the PCN domain's
//! ingress, or with `[cac]`, the shaping CAC of [Tarasiuk05]), its answer
//! comes back as a packet, and the generator never decides admission
//! itself. The messages are core's format
//! ([`qoslab_core::edge::pcn::wire`], the one the router reads), sent from
//! the flow's own socket (a TCP flow's: a UDP socket bound to the TCP
//! connection's port, [`crate::tcp`]).
//!
//! ```text
//! at the first send time (TCP:    FlowRequest to dst's address at `port` (flow = the flow's id,
//! at its start, before connect):  port = dst's port, value = `rate_bps`, tcp bit if TCP); wait
//! every 1 ms while waiting:       read the socket: FlowAnswer for this flow → admitted: the flow's
//!                                 schedule starts now (every later send shifted by the wait; TCP:
//!                                 it connects now); refused: it sends nothing (TCP: no connection)
//!                                 · no answer for `timeout_ns`: unanswered
//! while admitted, every ≥ 10 ms:  read the socket: Terminate for this flow → it stops now
//!                                 (UDP flows; a TCP flow reads nothing after its answer)
//! `cac` only, once, when an       FlowEnd to the same address (flow = id, port = dst's port, tcp
//! admitted flow stops:            bit if TCP, value 0). UDP: at its stop time, the run's stop or
//!                                 a Terminate; TCP: when its last byte is acknowledged, at its
//!                                 stop time or the run's stop
//! ```
//!
//! With `cac` the answer's value is the rate the flow's entry shaper was
//! given (`assigned_bps`); without it, the CLE (`cle`), and no FlowEnd is
//! ever sent (a PCN ingress would count it as malformed).
//!
//! Reads are non-blocking and bounded: at most [`MAX_READS`] datagrams of at
//! most 64 bytes per look; anything that is not the router's answer or
//! notice for this flow from `port` is counted (`foreign`) and ignored.

use qoslab_core::edge::pcn::wire::{self, Kind, Msg};
use serde::{Deserialize, Serialize};
use std::net::{SocketAddr, UdpSocket};

/// Datagrams read per look at a socket.
pub const MAX_READS: usize = 16;
/// How often an admitted flow looks for a termination notice (ns of its schedule).
pub const TERMINATE_CHECK_NS: u64 = 10_000_000;
/// How often a waiting flow looks for its answer (ns).
pub const ANSWER_CHECK_NS: u64 = 1_000_000;

/// `admission` of a flow in the generator's spec.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdmissionSpec {
    /// The ingress's `router.edge_port`.
    pub port: u16,
    /// The flow's rate as the request states it (bit/s).
    #[serde(default)]
    pub rate_bps: f64,
    /// How long to wait for the answer (default 1 s).
    #[serde(default = "one_second")]
    pub timeout_ns: u64,
    /// The router is the shaping CAC ([Tarasiuk05]): the answer's value is the assigned
    /// shaping rate, and an admitted flow tells the router when it ends (FlowEnd).
    #[serde(default)]
    pub cac: bool,
}

fn one_second() -> u64 {
    1_000_000_000
}

/// What became of the request.
#[derive(Clone, Debug, Default, Serialize)]
pub struct AdmissionReport {
    /// `admitted`, `refused`, `unanswered`, or `not_asked` (the run stopped first).
    pub decision: &'static str,
    /// CLOCK_MONOTONIC ns of the request and the answer (0: none).
    pub asked_ns: u64,
    pub answered_ns: u64,
    /// The CLE the answer carried (PCN; 0 with `cac`).
    pub cle: f64,
    /// When a termination notice arrived (0: never).
    pub terminated_ns: u64,
    /// Datagrams read that were not this flow's answer or notice.
    pub foreign: u64,
    /// With `cac` only (absent from a PCN flow's report, which stays as it was).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub cac: Option<CacReport>,
}

/// The shaping CAC's part of an [`AdmissionReport`] (serialized inline: `assigned_bps`, `ended_ns`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct CacReport {
    /// The answer's value: the shaping rate assigned to an admitted flow (bit/s; 0: unanswered).
    pub assigned_bps: f64,
    /// CLOCK_MONOTONIC ns the FlowEnd left (0: none sent).
    pub ended_ns: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Ask,
    Waiting {
        since: u64,
    },
    Admitted {
        checked: u64,
    },
    /// Admitted, its schedule over: the FlowEnd is due (`cac` only).
    Ending,
    Done,
}

/// What the generator does at a flow's due time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Send the data packet due now.
    Send,
    /// Nothing now; come back at this schedule time.
    Later(u64),
    /// The flow sends nothing more.
    Stop,
}

/// One flow's admission.
#[derive(Debug)]
pub struct Admission {
    spec: AdmissionSpec,
    id: u32,
    dst: SocketAddr,
    /// A TCP flow (the tcp bit of its request and end).
    tcp: bool,
    state: State,
    /// How far the schedule moved: the wait for the answer (ns).
    pub shift: u64,
    pub report: AdmissionReport,
}

impl Admission {
    /// Flow `id` to `dst` (a TCP flow if `tcp`) asks the router at `dst`'s address, `spec.port`.
    pub fn new(spec: AdmissionSpec, id: u32, dst: SocketAddr, tcp: bool) -> Admission {
        let cac = spec.cac.then(CacReport::default);
        Admission {
            spec,
            id,
            dst,
            tcp,
            state: State::Ask,
            shift: 0,
            report: AdmissionReport { decision: "not_asked", cac, ..AdmissionReport::default() },
        }
    }

    fn router(&self) -> SocketAddr {
        SocketAddr::new(self.dst.ip(), self.spec.port)
    }

    /// The flow is due at schedule time `t` (ns after t0; `now` = CLOCK_MONOTONIC).
    pub fn on_due(&mut self, t: u64, now: u64, sock: &UdpSocket) -> Step {
        match self.state {
            State::Ask => {
                let m = Msg {
                    port: self.dst.port(),
                    tcp: self.tcp,
                    ..Msg::new(Kind::FlowRequest, self.id, self.spec.rate_bps)
                };
                // A request the kernel refuses is a request never answered.
                let _ = sock.send_to(&wire::encode(&m), self.router());
                self.report.asked_ns = now;
                self.report.decision = "unanswered";
                self.state = State::Waiting { since: t };
                Step::Later(t + ANSWER_CHECK_NS)
            }
            State::Waiting { since } => match self.read(sock, Kind::FlowAnswer) {
                Some(m) => {
                    self.report.answered_ns = now;
                    match self.report.cac.as_mut() {
                        Some(c) => c.assigned_bps = m.value,
                        None => self.report.cle = m.value,
                    }
                    if m.flag {
                        self.report.decision = "admitted";
                        self.shift = t - since;
                        self.state = State::Admitted { checked: t };
                        Step::Send
                    } else {
                        self.report.decision = "refused";
                        self.state = State::Done;
                        Step::Stop
                    }
                }
                None if t - since >= self.spec.timeout_ns => {
                    self.state = State::Done;
                    Step::Stop
                }
                None => Step::Later(t + ANSWER_CHECK_NS),
            },
            State::Admitted { checked } => {
                if t < checked + TERMINATE_CHECK_NS {
                    return Step::Send;
                }
                self.state = State::Admitted { checked: t };
                if self.read(sock, Kind::Terminate).is_some() {
                    self.report.terminated_ns = now;
                    self.end(now, sock);
                    self.state = State::Done;
                    return Step::Stop;
                }
                Step::Send
            }
            State::Ending => {
                self.end(now, sock);
                Step::Stop
            }
            State::Done => Step::Stop,
        }
    }

    /// The admitted flow's schedule has no send left: with `cac`, the FlowEnd becomes due at
    /// schedule time `at` (its stop), and this returns `at` for the caller to come back then
    /// ([`Admission::on_due`] sends it); otherwise `None` (nothing more to do).
    pub fn on_schedule_end(&mut self, at: u64) -> Option<u64> {
        if self.spec.cac && matches!(self.state, State::Admitted { .. }) {
            self.state = State::Ending;
            return Some(at);
        }
        None
    }

    /// The flow stops now (`now` = CLOCK_MONOTONIC): with `cac`, an admitted flow sends its one
    /// FlowEnd from `sock`; anything else sends nothing. Later calls send nothing.
    pub fn end(&mut self, now: u64, sock: &UdpSocket) {
        if !matches!(self.state, State::Admitted { .. } | State::Ending) {
            return;
        }
        self.state = State::Done;
        let (m, to) =
            (Msg { port: self.dst.port(), tcp: self.tcp, ..Msg::new(Kind::FlowEnd, self.id, 0.0) }, self.router());
        let Some(c) = self.report.cac.as_mut() else { return };
        // An end the kernel refuses did not leave: `ended_ns` stays 0.
        if sock.send_to(&wire::encode(&m), to).is_ok() {
            c.ended_ns = now;
        }
    }

    /// Reads up to [`MAX_READS`] datagrams; the first of `kind` for this flow from the ingress.
    fn read(&mut self, sock: &UdpSocket, kind: Kind) -> Option<Msg> {
        let mut buf = [0u8; 64];
        for _ in 0..MAX_READS {
            let Ok((n, from)) = sock.recv_from(&mut buf) else { return None };
            match wire::decode(&buf[..n]) {
                Ok(m) if from.port() == self.spec.port && m.kind == kind && m.flow == self.id => return Some(m),
                _ => self.report.foreign += 1,
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> (UdpSocket, UdpSocket) {
        let flow = UdpSocket::bind("127.0.0.1:0").unwrap();
        flow.set_nonblocking(true).unwrap();
        let ingress = UdpSocket::bind("127.0.0.1:0").unwrap();
        (flow, ingress)
    }

    fn spec(ingress: &UdpSocket) -> AdmissionSpec {
        AdmissionSpec {
            port: ingress.local_addr().unwrap().port(),
            rate_bps: 64_000.0,
            timeout_ns: 5_000_000,
            cac: false,
        }
    }

    /// The ingress reads the request and answers it (or sends `reply` for its flow).
    fn answer(ingress: &UdpSocket, kind: Kind, flag: bool) -> Msg {
        let mut buf = [0u8; 64];
        let (n, from) = ingress.recv_from(&mut buf).unwrap();
        let req = wire::decode(&buf[..n]).unwrap();
        ingress.send_to(&wire::encode(&Msg { flag, ..Msg::new(kind, req.flow, 0.25) }), from).unwrap();
        req
    }

    fn until_not_later(a: &mut Admission, sock: &UdpSocket, mut t: u64) -> (Step, u64) {
        for _ in 0..1000 {
            match a.on_due(t, t, sock) {
                Step::Later(n) => {
                    std::thread::sleep(std::time::Duration::from_micros(200));
                    t = n
                }
                s => return (s, t),
            }
        }
        panic!("no answer")
    }

    #[test]
    fn an_admitted_flow_starts_when_its_answer_arrives_and_stops_on_a_notice() {
        let (flow, ingress) = pair();
        let dst: SocketAddr = "127.0.0.1:9000".parse().unwrap();
        let mut a = Admission::new(spec(&ingress), 7, dst, false);
        assert_eq!(a.on_due(100, 100, &flow), Step::Later(100 + ANSWER_CHECK_NS));
        let req = answer(&ingress, Kind::FlowAnswer, true);
        assert_eq!((req.kind, req.flow, req.port, req.value), (Kind::FlowRequest, 7, 9000, 64_000.0));
        let (step, t) = until_not_later(&mut a, &flow, 100 + ANSWER_CHECK_NS);
        assert_eq!(step, Step::Send);
        assert_eq!(a.shift, t - 100);
        assert_eq!((a.report.decision, a.report.cle), ("admitted", 0.25));
        // A notice for another flow and garbage are ignored; this flow's stops it.
        let to = flow.local_addr().unwrap();
        ingress.send_to(&wire::encode(&Msg::new(Kind::Terminate, 8, 0.0)), to).unwrap();
        ingress.send_to(b"junk", to).unwrap();
        ingress.send_to(&wire::encode(&Msg::new(Kind::Terminate, 7, 0.0)), to).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert_eq!(a.on_due(t + 1, t + 1, &flow), Step::Send, "not yet time to look");
        assert_eq!(a.on_due(t + TERMINATE_CHECK_NS, 0, &flow), Step::Stop);
        assert_eq!(a.report.foreign, 2);
        assert_eq!(a.on_due(t + 2 * TERMINATE_CHECK_NS, 0, &flow), Step::Stop, "stopped for good");
    }

    #[test]
    fn a_refused_flow_sends_nothing_and_an_unanswered_one_gives_up() {
        let (flow, ingress) = pair();
        let dst: SocketAddr = "127.0.0.1:9000".parse().unwrap();
        let mut a = Admission::new(spec(&ingress), 1, dst, false);
        a.on_due(0, 0, &flow);
        answer(&ingress, Kind::FlowAnswer, false);
        assert_eq!(until_not_later(&mut a, &flow, ANSWER_CHECK_NS).0, Step::Stop);
        assert_eq!(a.report.decision, "refused");
        assert_eq!(a.on_due(u64::MAX / 2, 0, &flow), Step::Stop);
        let mut b = Admission::new(spec(&ingress), 2, dst, false);
        b.on_due(0, 0, &flow);
        assert_eq!(b.on_due(5_000_000, 0, &flow), Step::Stop, "timeout 5 ms");
        assert_eq!(b.report.decision, "unanswered");
    }

    #[test]
    fn a_cac_flow_reports_its_rate_and_ends_once_and_a_pcn_flow_never_ends() {
        let (flow, ingress) = pair();
        ingress.set_read_timeout(Some(std::time::Duration::from_millis(50))).unwrap();
        let dst: SocketAddr = "127.0.0.1:9000".parse().unwrap();
        let mut a = Admission::new(AdmissionSpec { cac: true, ..spec(&ingress) }, 3, dst, true);
        a.on_due(0, 0, &flow);
        let req = answer(&ingress, Kind::FlowAnswer, true);
        assert!(req.tcp, "a TCP flow's request carries the tcp bit");
        assert_eq!(until_not_later(&mut a, &flow, ANSWER_CHECK_NS).0, Step::Send);
        assert_eq!(a.report.cac, Some(CacReport { assigned_bps: 0.25, ended_ns: 0 }));
        assert_eq!(a.report.cle, 0.0, "the value is a rate, not a CLE");
        assert_eq!(a.on_schedule_end(77), Some(77));
        assert_eq!(a.on_due(77, 1234, &flow), Step::Stop);
        a.end(5678, &flow);
        let mut buf = [0u8; 64];
        let (n, _) = ingress.recv_from(&mut buf).unwrap();
        let end = wire::decode(&buf[..n]).unwrap();
        assert_eq!((end.kind, end.flow, end.port, end.tcp, end.value), (Kind::FlowEnd, 3, 9000, true, 0.0));
        assert!(ingress.recv_from(&mut buf).is_err(), "exactly one FlowEnd");
        assert_eq!(a.report.cac.unwrap().ended_ns, 1234);
        // PCN: admitted, stopped, nothing sent; the report has no CAC part.
        let mut p = Admission::new(spec(&ingress), 4, dst, false);
        p.on_due(0, 0, &flow);
        answer(&ingress, Kind::FlowAnswer, true);
        until_not_later(&mut p, &flow, ANSWER_CHECK_NS);
        assert_eq!(p.on_schedule_end(10), None);
        p.end(10, &flow);
        assert!(ingress.recv_from(&mut buf).is_err(), "no FlowEnd from a PCN flow");
        let json = serde_json::to_string(&p.report).unwrap();
        assert!(!json.contains("assigned_bps") && !json.contains("ended_ns"), "{json}");
        let json = serde_json::to_string(&a.report).unwrap();
        assert!(json.contains(r#""assigned_bps":0.25,"ended_ns":1234"#), "{json}");
    }
}

/// A router on 127.0.0.1 for the generator's tests: it answers every flow request as told,
/// sends termination notices when told, and records every message it reads.
#[cfg(test)]
pub(crate) mod fake_router {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    /// A message the router read, who sent it and when (CLOCK_MONOTONIC ns).
    #[derive(Clone, Copy, Debug)]
    pub struct Seen {
        pub msg: Msg,
        pub from: SocketAddr,
        pub at_ns: u64,
        /// For a request: when its answer left (0: not answered).
        pub answered_ns: u64,
    }

    pub struct FakeRouter {
        pub port: u16,
        stop: Arc<AtomicBool>,
        thread: Option<std::thread::JoinHandle<Vec<Seen>>>,
    }

    /// How the router answers a request: `Some((admitted, value))` after `delay`, or `None`.
    pub type Policy = fn(&Msg) -> Option<(bool, f64)>;

    impl FakeRouter {
        /// Starts the router; `terminate` lists flows to terminate that long after their answer.
        pub fn start(policy: Policy, delay: Duration, terminate: Vec<(u32, Duration)>) -> FakeRouter {
            let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
            sock.set_read_timeout(Some(Duration::from_millis(2))).unwrap();
            let port = sock.local_addr().unwrap().port();
            let stop = Arc::new(AtomicBool::new(false));
            let halt = stop.clone();
            let thread = std::thread::spawn(move || {
                let mut seen: Vec<Seen> = Vec::new();
                // (due, message, to, index in `seen` of the request answered, or none)
                let mut due: Vec<(Instant, Msg, SocketAddr, Option<usize>)> = Vec::new();
                let mut buf = [0u8; 64];
                while !halt.load(Ordering::SeqCst) {
                    if let Ok((n, from)) = sock.recv_from(&mut buf) {
                        let msg = wire::decode(&buf[..n]).expect("a message");
                        seen.push(Seen { msg, from, at_ns: crate::clock::now_ns(), answered_ns: 0 });
                        if msg.kind == Kind::FlowRequest {
                            if let Some((flag, value)) = policy(&msg) {
                                let a = Msg { flag, ..Msg::new(Kind::FlowAnswer, msg.flow, value) };
                                due.push((Instant::now() + delay, a, from, Some(seen.len() - 1)));
                            }
                        }
                    }
                    let now = Instant::now();
                    for (_, m, to, req) in due.iter().filter(|d| d.0 <= now) {
                        sock.send_to(&wire::encode(m), to).unwrap();
                        if let Some(r) = req {
                            seen[*r].answered_ns = crate::clock::now_ns();
                        }
                    }
                    let sent: Vec<_> = due.iter().filter(|d| d.0 <= now).copied().collect();
                    due.retain(|d| d.0 > now);
                    for (_, m, to, _) in sent {
                        if let Some((_, after)) = terminate.iter().find(|t| m.flag && t.0 == m.flow) {
                            due.push((now + *after, Msg::new(Kind::Terminate, m.flow, 0.0), to, None));
                        }
                    }
                }
                seen
            });
            FakeRouter { port, stop, thread: Some(thread) }
        }

        /// Stops the router (after reading what arrives within 50 ms); every message it read.
        pub fn stop(mut self) -> Vec<Seen> {
            std::thread::sleep(Duration::from_millis(50));
            self.stop.store(true, Ordering::SeqCst);
            self.thread.take().unwrap().join().unwrap()
        }
    }
}
