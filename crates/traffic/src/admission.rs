//! A flow that asks before it sends: its request leaves as a packet to the
//! domain's ingress (a `qoslab-router` with `[pcn]`), its answer comes back
//! as a packet, and the generator never decides admission itself. The
//! messages are core's format ([`qoslab_core::edge::pcn::wire`], the one
//! the router reads), sent from the flow's own socket.
//!
//! ```text
//! at the flow's first send time:  FlowRequest to dst's address at `port` (flow = the flow's id,
//!                                 port = dst's port, value = `rate_bps`); wait
//! every 1 ms while waiting:       read the socket: FlowAnswer for this flow → admitted: the flow's
//!                                 schedule starts now (every later send shifted by the wait);
//!                                 refused: it sends nothing · no answer for `timeout_ns`: unanswered
//! while admitted, every ≥ 10 ms:  read the socket: Terminate for this flow → it stops now
//! ```
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
    /// The CLE the answer carried.
    pub cle: f64,
    /// When a termination notice arrived (0: never).
    pub terminated_ns: u64,
    /// Datagrams read that were not this flow's answer or notice.
    pub foreign: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Ask,
    Waiting { since: u64 },
    Admitted { checked: u64 },
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
    state: State,
    /// How far the schedule moved: the wait for the answer (ns).
    pub shift: u64,
    pub report: AdmissionReport,
}

impl Admission {
    pub fn new(spec: AdmissionSpec, id: u32, dst: SocketAddr) -> Admission {
        Admission {
            spec,
            id,
            dst,
            state: State::Ask,
            shift: 0,
            report: AdmissionReport { decision: "not_asked", ..AdmissionReport::default() },
        }
    }

    /// The flow is due at schedule time `t` (ns after t0; `now` = CLOCK_MONOTONIC).
    pub fn on_due(&mut self, t: u64, now: u64, sock: &UdpSocket) -> Step {
        match self.state {
            State::Ask => {
                let m = Msg { port: self.dst.port(), ..Msg::new(Kind::FlowRequest, self.id, self.spec.rate_bps) };
                let to = SocketAddr::new(self.dst.ip(), self.spec.port);
                // A request the kernel refuses is a request never answered.
                let _ = sock.send_to(&wire::encode(&m), to);
                self.report.asked_ns = now;
                self.report.decision = "unanswered";
                self.state = State::Waiting { since: t };
                Step::Later(t + ANSWER_CHECK_NS)
            }
            State::Waiting { since } => match self.read(sock, Kind::FlowAnswer) {
                Some(m) => {
                    self.report.answered_ns = now;
                    self.report.cle = m.value;
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
                    self.state = State::Done;
                    return Step::Stop;
                }
                Step::Send
            }
            State::Done => Step::Stop,
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
        AdmissionSpec { port: ingress.local_addr().unwrap().port(), rate_bps: 64_000.0, timeout_ns: 5_000_000 }
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
        let mut a = Admission::new(spec(&ingress), 7, dst);
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
        let mut a = Admission::new(spec(&ingress), 1, dst);
        a.on_due(0, 0, &flow);
        answer(&ingress, Kind::FlowAnswer, false);
        assert_eq!(until_not_later(&mut a, &flow, ANSWER_CHECK_NS).0, Step::Stop);
        assert_eq!(a.report.decision, "refused");
        assert_eq!(a.on_due(u64::MAX / 2, 0, &flow), Step::Stop);
        let mut b = Admission::new(spec(&ingress), 2, dst);
        b.on_due(0, 0, &flow);
        assert_eq!(b.on_due(5_000_000, 0, &flow), Step::Stop, "timeout 5 ms");
        assert_eq!(b.report.decision, "unanswered");
    }
}
