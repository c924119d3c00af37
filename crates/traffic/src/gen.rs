//! The generator: every flow of a [`GenSpec`] from its own UDP socket, at
//! the times the simulator's source state machines give, on
//! CLOCK_MONOTONIC from the spec's `t0_ns`.
//!
//! A flow's RNG is the simulator's stream for it (`rng::stream(seed,
//! stream)`); its start jitter is drawn first, then the source draws as in
//! the simulator (sizes after each send time). One thread sends every
//! flow in time order (a binary heap of next send times) and sleeps until
//! the next one with `clock_nanosleep(TIMER_ABSTIME)` and 1 ns timer
//! slack. A packet sent late (the host was busy) keeps its schedule: the
//! next one is due at its own time, not one period after the late one;
//! how late packets left is reported (`late_mean_ns`, `late_max_ns`).

use crate::clock::{now_ns, sleep_until};
use crate::spec::{read_replay, FlowSpec, GenSpec, Model};
use crate::wire;
use qoslab_core::rng::Rng;
use qoslab_core::units::{Dur, Time};
use qoslab_sim::traffic::cbr::Period;
use qoslab_sim::traffic::on_off::PeriodLaw;
use qoslab_sim::traffic::{jitter, ModelPlan, SizeModel, Source};
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};

/// What one flow sent.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FlowReport {
    pub id: u32,
    pub sent_pkts: u64,
    /// Wire bytes (payload + 42).
    pub sent_bytes: u64,
    /// CLOCK_MONOTONIC ns of the first and last send (0 if none).
    pub first_tx_ns: u64,
    pub last_tx_ns: u64,
    pub send_errors: u64,
    /// TCP only (from TCP_INFO at the end): data segments sent, retransmitted segments,
    /// payload bytes acknowledged, and when the last byte of a `bytes` transfer was
    /// acknowledged (0: not finished or greedy).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp: Option<TcpReport>,
}

/// What the kernel counted for one TCP flow.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TcpReport {
    pub data_segs_out: u64,
    pub total_retrans: u64,
    pub bytes_acked: u64,
    pub completed_ns: u64,
    pub snd_mss: u64,
}

/// What the generator did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct GenReport {
    pub flows: Vec<FlowReport>,
    /// How late packets left after their scheduled time (ns).
    pub late_mean_ns: f64,
    pub late_max_ns: u64,
    /// True if a signal stopped it before the end.
    pub stopped: bool,
}

enum Pattern {
    Model(Source),
    Replay { rows: Vec<(u64, u32)>, next: usize },
}

struct FlowState {
    spec: FlowSpec,
    pattern: Pattern,
    size: SizeModel,
    rng: Rng,
    seq: u64,
    sock: UdpSocket,
    report: FlowReport,
}

fn period(p: &crate::spec::PeriodSpec) -> Period {
    Period { num: p.num as u128, den: p.den as u128 }
}

/// The simulator's source of a flow model (replay excepted).
fn model_plan(m: &Model) -> Option<ModelPlan> {
    Some(match m {
        Model::Cbr { period: p } => ModelPlan::Cbr(period(p)),
        Model::Poisson { mean_gap_ns } => ModelPlan::Poisson(*mean_gap_ns),
        Model::OnOff { period: p, on_ns, off_ns, dist, shape, packetization } => ModelPlan::OnOff {
            period: period(p),
            on: PeriodLaw::new(*dist, *on_ns, *shape),
            off: PeriodLaw::new(*dist, *off_ns, *shape),
            packetization: *packetization,
        },
        Model::Replay { .. } | Model::Tcp { .. } => return None,
    })
}

/// Sets the socket's TOS byte: DSCP in the top six bits, ECT(0) if `ecn`.
fn set_tos(sock: &UdpSocket, dscp: u8, ecn: bool) -> std::io::Result<()> {
    let tos: libc::c_int = ((dscp as libc::c_int) << 2) | if ecn { 2 } else { 0 };
    // SAFETY: setsockopt with a pointer to a live c_int of the given size.
    let r = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::IPPROTO_IP,
            libc::IP_TOS,
            &tos as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Opens every flow's socket and computes its first send time (relative
/// to `t0`); the heap holds `(time, flow index)`.
/// Send times (ns after `t0`) and flow indices, earliest first.
type Schedule = BinaryHeap<Reverse<(u64, usize)>>;

fn prepare(spec: &GenSpec) -> Result<(Vec<FlowState>, Schedule), String> {
    let mut flows = Vec::with_capacity(spec.flows.len());
    let mut heap = BinaryHeap::new();
    for (i, f) in spec.flows.iter().enumerate() {
        if matches!(f.model, Model::Tcp { .. }) {
            continue; // sent by its own thread (crate::tcp)
        }
        let bind = if f.dst.is_ipv4() { "0.0.0.0" } else { "::" };
        let sock = UdpSocket::bind((bind, f.src_port))
            .map_err(|e| format!("flows[{i}].src_port: cannot bind {bind}:{}: {e}", f.src_port))?;
        set_tos(&sock, f.dscp, f.ecn).map_err(|e| format!("flows[{i}].dscp: cannot set the TOS byte: {e}"))?;
        sock.connect(f.dst).map_err(|e| format!("flows[{i}].dst: cannot reach {}: {e}", f.dst))?;
        let mut rng = qoslab_core::rng::stream(spec.seed, f.stream);
        let start = Time(f.start_ns) + jitter(&mut rng, Dur(f.jitter_ns));
        let size = SizeModel::new(
            &if f.payload.exp_mean > 0.0 {
                qoslab_scenario::SizeSpec::Random(qoslab_scenario::RandomSize {
                    base: qoslab_core::Bytes(f.payload.base as u64),
                    exp_mean: qoslab_core::Bytes(f.payload.exp_mean.round() as u64),
                })
            } else {
                qoslab_scenario::SizeSpec::Fixed(qoslab_core::Bytes(f.payload.base as u64))
            },
            0,
        );
        let (pattern, first) = match model_plan(&f.model) {
            Some(plan) => {
                let mut src = Source::new(&plan, &[]);
                let first = src
                    .first_alone(start, &mut rng)
                    .ok_or_else(|| format!("flows[{i}].model: the generator has no source for this model"))?;
                (Pattern::Model(src), Some(first.0))
            }
            None => {
                let Model::Replay { file } = &f.model else { unreachable!("TCP flows are skipped above") };
                let rows = read_replay(file).map_err(|e| format!("flows[{i}].model.replay.file: {e}"))?;
                let first = rows.first().map(|r| start.0 + r.0);
                (Pattern::Replay { rows, next: 0 }, first)
            }
        };
        if let Some(t) = first.filter(|t| *t < f.stop_ns) {
            heap.push(Reverse((t, i)));
        }
        let report = FlowReport { id: f.id, ..FlowReport::default() };
        flows.push(FlowState { spec: f.clone(), pattern, size, rng, seq: 0, sock, report });
    }
    Ok((flows, heap))
}

/// Sends every flow until its stop time (or until `stop` is set); returns what was sent.
pub fn run(spec: &GenSpec, stop: &'static AtomicBool) -> Result<GenReport, String> {
    let tcp: Vec<_> = spec
        .flows
        .iter()
        .filter(|f| matches!(f.model, Model::Tcp { .. }))
        .map(|f| crate::tcp::spawn_sender(f.clone(), spec.t0_ns, spec.seed, stop))
        .collect();
    let (mut flows, mut heap) = prepare(spec)?;
    let mut buf = vec![0u8; crate::spec::MAX_PAYLOAD as usize];
    let (mut late_sum, mut late_max, mut sends) = (0f64, 0u64, 0u64);
    let mut stopped = false;
    while let Some(Reverse((t, i))) = heap.pop() {
        let due = spec.t0_ns + t;
        // Sleep in steps of at most 100 ms so that a signal stops it promptly.
        loop {
            if stop.load(Ordering::SeqCst) {
                stopped = true;
                break;
            }
            let now = now_ns();
            if now >= due {
                break;
            }
            sleep_until(due.min(now + 100_000_000));
        }
        if stopped {
            break;
        }
        let f = &mut flows[i];
        let payload = match &mut f.pattern {
            Pattern::Model(_) => f.size.sample(&mut f.rng).clamp(wire::HEADER as u32, crate::spec::MAX_PAYLOAD),
            Pattern::Replay { rows, next } => rows[*next].1,
        } as usize;
        let sent_at = now_ns();
        wire::stamp(&mut buf[..payload], f.spec.id, f.seq, sent_at);
        let late = sent_at.saturating_sub(due);
        late_sum += late as f64;
        late_max = late_max.max(late);
        sends += 1;
        match f.sock.send(&buf[..payload]) {
            Ok(_) => {
                let r = &mut f.report;
                if r.sent_pkts == 0 {
                    r.first_tx_ns = sent_at;
                }
                r.sent_pkts += 1;
                r.sent_bytes += payload as u64 + wire::OVERHEAD as u64;
                r.last_tx_ns = sent_at;
            }
            Err(_) => f.report.send_errors += 1,
        }
        f.seq += 1;
        let next = match &mut f.pattern {
            Pattern::Model(src) => src.next_alone(Time(t), &mut f.rng).map(|t| t.0),
            Pattern::Replay { rows, next } => {
                *next += 1;
                rows.get(*next).map(|r| t - rows[*next - 1].0 + r.0)
            }
        };
        if let Some(n) = next.filter(|n| *n < f.spec.stop_ns) {
            heap.push(Reverse((n, i)));
        }
    }
    let mut tcp_reports = Vec::new();
    for t in tcp {
        tcp_reports.push(t.join().map_err(|_| "a TCP sender thread panicked".to_string())??);
    }
    Ok(GenReport {
        flows: flows.into_iter().map(|f| f.report).chain(tcp_reports).collect(),
        late_mean_ns: if sends > 0 { late_sum / sends as f64 } else { 0.0 },
        late_max_ns: late_max,
        stopped,
    })
}
