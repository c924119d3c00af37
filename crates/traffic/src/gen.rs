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
//! how late packets left is reported (`late_mean_ns`, `late_max_ns`,
//! `late_p99_ns`, and of `sends` the `late_over_1ms`).
//!
//! `randomize` and `send_jitter` move each send after a flow's first as the
//! simulator's `emit` does: the source's next time, then `U[0, randomize_ns)`
//! (randomize × the model's spacing), then `U[0, send_jitter_max_ns]`, drawn
//! from the flow's stream after that packet's size ([`shifted`]); the source
//! is then asked for the following time from the shifted one.
//!
//! A flow with `admission` asks the router first ([`crate::admission`]: a
//! PCN ingress, or the shaping CAC with `cac`): its first send time is the
//! request's; it sends only once admitted, its schedule shifted by the
//! wait, and stops when refused or terminated. With `cac` an admitted flow
//! sends one FlowEnd when it stops: at its stop time, at the run's stop,
//! or on a Terminate. A TCP flow asks from its own thread ([`crate::tcp`]).

use crate::clock::{now_ns, sleep_until};
use crate::error::TrafficError;
use crate::spec::{read_replay, FlowSpec, GenSpec, Model};
use crate::wire;
use qoslab_core::rng::Rng;
use qoslab_core::traffic::cbr::Period;
use qoslab_core::traffic::on_off::PeriodLaw;
use qoslab_core::traffic::vtr::{Vtr, VtrPlan};
use qoslab_core::traffic::{jitter, ModelPlan, SizeModel, Source};
use qoslab_core::units::{Dur, Time};
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// What an MM_APP flow's source read back from its receiver.
#[derive(Clone, Debug, Default, Serialize)]
pub struct MmReport {
    /// Feedback datagrams read (each a decision of the receiver).
    pub feedback_pkts: u64,
    /// Each change of scale: CLOCK_MONOTONIC ns when it was applied, the new scale index (at
    /// most [`MAX_SCALE_CHANGES`]; those beyond are counted in `changes_dropped`).
    pub changes: Vec<(u64, u32)>,
    pub changes_dropped: u64,
}

/// The most scale changes a flow's report lists (one per feedback at most: one an RTT).
pub const MAX_SCALE_CHANGES: usize = 100_000;

/// Feedback datagrams read at most before one send (the rest wait for the next).
const FEEDBACK_READS: usize = 16;

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
    /// An MM_APP flow: the feedback it read and the scales it took.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mm: Option<MmReport>,
    /// A flow that asked the router first (PCN or the shaping CAC): what became of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub admission: Option<crate::admission::AdmissionReport>,
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
    /// The 99th percentile of the lateness (nearest rank, ns).
    pub late_p99_ns: u64,
    /// Schedule points (the lateness's population: each UDP send, and each 1 ms tick of the
    /// main thread while only TCP senders run) and those more than 1 ms late.
    pub sends: u64,
    pub late_over_1ms: u64,
    /// True if a signal stopped it before the end.
    pub stopped: bool,
}

enum Pattern {
    Model(Source),
    /// A video trace: core's `Vtr` over its group's frames (shared by the group's flows).
    Vtr {
        src: Vtr,
        plan: VtrPlan,
        frames: Arc<[u32]>,
    },
    Replay {
        rows: Vec<(u64, u32)>,
        next: usize,
    },
}

/// Each VTR trace of a spec, shared by its flows.
pub type Traces = std::collections::BTreeMap<String, Arc<[u32]>>;

/// The spec's VTR traces, each shared by its flows.
pub fn traces(spec: &GenSpec) -> Traces {
    spec.vtr_traces.iter().map(|(k, v)| (k.clone(), Arc::from(v.as_slice()))).collect()
}

/// A flow's send times and payload sizes, drawn as the simulator draws them (no socket).
pub struct Times {
    pattern: Pattern,
    size: SizeModel,
    rng: Rng,
    /// `randomize` in ns (× the model's spacing; 0 for a model without a grid).
    randomize_ns: u64,
    send_jitter_max_ns: u64,
    stop_ns: u64,
    /// The first send time (ns after `t0`), if before the stop.
    pub first: Option<u64>,
}

impl Times {
    /// Flow `f` (index `i` in the spec, for errors) of a run with `seed`: its stream, the start
    /// jitter drawn first, its source's first send time (a VTR flow's frames from `traces`).
    pub fn new(f: &FlowSpec, i: usize, seed: u64, traces: &Traces) -> Result<Times, TrafficError> {
        let mut rng = qoslab_core::rng::stream(seed, f.stream);
        if f.lifetime_drawn {
            qoslab_core::traffic::exp_ns(&mut rng, 1.0);
        }
        let start = Time(f.start_ns) + jitter(&mut rng, Dur(f.jitter_ns));
        // The simulator's size law with no header: base + round(Exp(exp_mean rounded to whole bytes)).
        let size = if f.payload.exp_mean > 0.0 {
            SizeModel::Random {
                base: f.payload.base as u64,
                exp_mean: f.payload.exp_mean.round() as u64 as f64,
                header: 0,
            }
        } else {
            SizeModel::Fixed { wire: f.payload.base }
        };
        let mut randomize_ns = 0;
        let (pattern, first) = match (model_plan(&f.model), &f.model) {
            (Some(plan), _) => {
                let scales: Vec<Period> = match &f.model {
                    Model::MmApp { periods, .. } => periods.iter().map(period).collect(),
                    _ => Vec::new(),
                };
                let mut src = Source::new(&plan, &scales);
                // As the simulator's group plan: randomize × the spacing, truncated.
                randomize_ns = src.spacing_ns().map_or(0, |sp| (f.randomize * sp as f64) as u64);
                let first = src.first_alone(start, &mut rng).ok_or_else(|| {
                    TrafficError::field(format!("flows[{i}].model"), "the generator has no source for this model")
                })?;
                (Pattern::Model(src), Some(first.0))
            }
            (None, Model::Vtr { trace, frame_ns, spacing_ns, payload, header }) => {
                let frames = traces.get(trace).cloned().ok_or_else(|| {
                    TrafficError::field(
                        format!("flows[{i}].model.vtr.trace"),
                        format!("{trace:?} is not in vtr_traces"),
                    )
                })?;
                let plan = VtrPlan { frame: *frame_ns, spacing: *spacing_ns, payload: *payload, header: *header };
                // As the simulator's group plan and its `GroupSource::first`: randomize × the
                // spacing, the start frame drawn from the flow's stream after its start jitter.
                randomize_ns = (f.randomize * plan.spacing as f64) as u64;
                let mut src = Vtr::new();
                let first = src.first(start, &frames, &mut rng);
                (Pattern::Vtr { src, plan, frames }, Some(first.0))
            }
            (None, Model::Replay { file }) => {
                let rows = read_replay(file)
                    .map_err(|e| TrafficError::field(format!("flows[{i}].model.replay.file"), e.to_string()))?;
                let first = rows.first().map(|r| start.0 + r.0);
                (Pattern::Replay { rows, next: 0 }, first)
            }
            (None, _) => {
                return Err(TrafficError::field(format!("flows[{i}].model"), "a TCP flow has no send schedule"));
            }
        };
        Ok(Times {
            pattern,
            size,
            rng,
            randomize_ns,
            send_jitter_max_ns: f.send_jitter_max_ns,
            stop_ns: f.stop_ns,
            first: first.filter(|t| *t < f.stop_ns),
        })
    }

    /// The payload of the packet sent now (drawn at its send, as the simulator's size).
    pub fn payload(&mut self) -> u32 {
        match &mut self.pattern {
            Pattern::Model(_) => self.size.sample(&mut self.rng).clamp(wire::HEADER as u32, crate::spec::MAX_PAYLOAD),
            // The trace's wire size less the UDP/IPv4/Ethernet headers; a frame's short last
            // packet is padded to the sequence header (docs/testbed.md, "Traffic").
            Pattern::Vtr { src, plan, .. } => {
                src.wire_size(plan).saturating_sub(wire::OVERHEAD).clamp(wire::HEADER as u32, crate::spec::MAX_PAYLOAD)
            }
            Pattern::Replay { rows, next } => rows[*next].1,
        }
    }

    /// An MM_APP flow's current scale index.
    pub fn scale(&self) -> Option<usize> {
        match &self.pattern {
            Pattern::Model(Source::Mm(s)) => Some(s.scale()),
            _ => None,
        }
    }

    /// MM_APP feedback says: send at `scale` from the next gap (core's `MmSource::set_scale`);
    /// true if the scale changed.
    pub fn set_scale(&mut self, scale: usize) -> bool {
        match &mut self.pattern {
            Pattern::Model(Source::Mm(s)) => s.set_scale(scale),
            _ => false,
        }
    }

    /// The send time after the packet sent at `t` (after its [`Times::payload`]), if before the
    /// stop: the source's, shifted by `randomize` / `send_jitter` ([`shifted`]).
    pub fn next(&mut self, t: u64) -> Option<u64> {
        let next = match &mut self.pattern {
            Pattern::Model(src) => src
                .next_alone(Time(t), &mut self.rng)
                .map(|n| shifted(n.0, t, self.randomize_ns, self.send_jitter_max_ns, &mut self.rng)),
            Pattern::Vtr { src, plan, frames } => {
                let n = src.next_send(plan, frames);
                Some(shifted(n.0, t, self.randomize_ns, self.send_jitter_max_ns, &mut self.rng))
            }
            Pattern::Replay { rows, next } => {
                *next += 1;
                rows.get(*next).map(|r| t - rows[*next - 1].0 + r.0)
            }
        };
        next.filter(|n| *n < self.stop_ns)
    }
}

/// Every `(send time, payload)` of flow `i` of `spec`, as [`run`] sends them (no socket).
pub fn send_times(spec: &GenSpec, i: usize) -> Result<Vec<(u64, u32)>, TrafficError> {
    let mut times = Times::new(&spec.flows[i], i, spec.seed, &traces(spec))?;
    let mut out = Vec::new();
    let mut t = times.first;
    while let Some(now) = t {
        out.push((now, times.payload()));
        t = times.next(now);
    }
    Ok(out)
}

struct FlowState {
    spec: FlowSpec,
    times: Times,
    seq: u64,
    sock: UdpSocket,
    report: FlowReport,
    /// Asks before it sends (then its socket is not connected: the answer comes from another port).
    adm: Option<crate::admission::Admission>,
}

/// The send time the simulator's `emit` gives a packet whose source said `next`,
/// the flow's previous packet having gone at `prev`
/// (`qoslab_core::traffic::emission_time`, the same draws from the flow's stream).
pub fn shifted(next: u64, prev: u64, randomize_ns: u64, send_jitter_max_ns: u64, rng: &mut Rng) -> u64 {
    qoslab_core::traffic::emission_time(Time(next), Time(prev), randomize_ns, send_jitter_max_ns, rng).0
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
        Model::MmApp { feedback_size, .. } => ModelPlan::MmApp { feedback_size: *feedback_size },
        Model::Vtr { .. } | Model::Replay { .. } | Model::Tcp { .. } => return None,
    })
}

/// Sets the socket's TOS byte: DSCP in the top six bits, ECT(0) if `ecn`.
pub(crate) fn set_tos(sock: &UdpSocket, dscp: u8, ecn: bool) -> std::io::Result<()> {
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

/// File descriptors the generator keeps beside its flows' sockets (standard streams, the report,
/// TCP threads' files).
const SPARE_FDS: u64 = 64;

/// Raises the open-file limit to what `sockets` sockets need (up to the hard limit), or says
/// plainly why the flows cannot all be opened: a PCN run at 5x overload holds thousands of calls.
fn ensure_fds(sockets: u64) -> Result<(), TrafficError> {
    let need = sockets + SPARE_FDS;
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit/setrlimit read and write the one struct passed, which lives on this frame.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 || lim.rlim_cur >= need {
        return Ok(());
    }
    if lim.rlim_max < need {
        return Err(TrafficError::field(
            "flows",
            format!(
                "{sockets} sockets (one per UDP flow, one or two per TCP flow) need {need} open files and the \
                 hard limit is {} (ulimit -Hn); allowed: at most {} sockets per generator here",
                lim.rlim_max,
                lim.rlim_max.saturating_sub(SPARE_FDS)
            ),
        ));
    }
    let raised = libc::rlimit { rlim_cur: need, rlim_max: lim.rlim_max };
    // SAFETY: as above.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } != 0 {
        return Err(TrafficError::io("flows: raising the open-file limit", std::io::Error::last_os_error()));
    }
    Ok(())
}

fn prepare(spec: &GenSpec) -> Result<(Vec<FlowState>, Schedule), TrafficError> {
    // A UDP flow holds its socket for the whole run; a TCP flow its connection, and with
    // `admission` the UDP socket it asks from, while it runs (at most all of them at once).
    let sockets = spec
        .flows
        .iter()
        .map(|f| if matches!(f.model, Model::Tcp { .. }) { 1 + f.admission.is_some() as u64 } else { 1 })
        .sum();
    ensure_fds(sockets)?;
    let mut flows = Vec::with_capacity(spec.flows.len());
    let mut heap = BinaryHeap::new();
    let traces = traces(spec);
    for (i, f) in spec.flows.iter().enumerate() {
        if matches!(f.model, Model::Tcp { .. }) {
            continue; // sent by its own thread (crate::tcp)
        }
        let bind = if f.dst.is_ipv4() { "0.0.0.0" } else { "::" };
        let sock = UdpSocket::bind((bind, f.src_port))
            .map_err(|e| TrafficError::io(format!("flows[{i}].src_port: cannot bind {bind}:{}", f.src_port), e))?;
        set_tos(&sock, f.dscp, f.ecn)
            .map_err(|e| TrafficError::io(format!("flows[{i}].dscp: cannot set the TOS byte"), e))?;
        let adm = f.admission.map(|a| crate::admission::Admission::new(a, f.id, f.dst, false));
        if adm.is_some() {
            sock.set_nonblocking(true).map_err(|e| TrafficError::io(format!("flows[{i}].admission"), e))?;
        } else {
            // An MM_APP flow reads its feedback without waiting ([`read_feedback`]), from the
            // sink's address only (the socket is connected).
            if matches!(f.model, Model::MmApp { .. }) {
                sock.set_nonblocking(true).map_err(|e| TrafficError::io(format!("flows[{i}].model.mm_app"), e))?;
            }
            sock.connect(f.dst).map_err(|e| TrafficError::io(format!("flows[{i}].dst: cannot reach {}", f.dst), e))?;
        }
        let times = Times::new(f, i, spec.seed, &traces)?;
        if let Some(t) = times.first {
            heap.push(Reverse((t, flows.len())));
        }
        let mm = matches!(f.model, Model::MmApp { .. }).then(MmReport::default);
        let report = FlowReport { id: f.id, mm, ..FlowReport::default() };
        flows.push(FlowState { spec: f.clone(), times, seq: 0, sock, report, adm });
    }
    Ok((flows, heap))
}

/// An MM_APP flow's feedback waiting on its socket (at most [`FEEDBACK_READS`] datagrams), each
/// scale applied in turn before the send now due: as in the simulator, a scale read before a
/// send changes the gap after it (`MmSource::set_scale` restarts the grid at the send already
/// scheduled).
fn read_feedback(f: &mut FlowState) {
    let mut buf = [0u8; 64];
    for _ in 0..FEEDBACK_READS {
        let Ok(n) = f.sock.recv(&mut buf) else { return };
        let Some((id, scale)) = wire::read_feedback(&buf[..n]) else { continue };
        if id != f.spec.id {
            continue;
        }
        let changed = f.times.set_scale(scale as usize);
        let Some(mm) = f.report.mm.as_mut() else { return };
        mm.feedback_pkts += 1;
        if changed {
            let s = f.times.scale().unwrap_or(0) as u32;
            if mm.changes.len() < MAX_SCALE_CHANGES {
                mm.changes.push((now_ns(), s));
            } else {
                mm.changes_dropped += 1;
            }
        }
    }
}

/// The schedule tick of the main thread while only TCP senders run (ns).
const TICK_NS: u64 = 1_000_000;

/// Sends every flow until its stop time (or until `stop` is set); returns what was sent.
pub fn run(spec: &GenSpec, stop: &'static AtomicBool) -> Result<GenReport, TrafficError> {
    let tcp: Vec<_> = spec
        .flows
        .iter()
        .filter(|f| matches!(f.model, Model::Tcp { .. }))
        .map(|f| crate::tcp::spawn_sender(f.clone(), spec.t0_ns, spec.seed, stop))
        .collect();
    let (mut flows, mut heap) = prepare(spec)?;
    let mut buf = vec![0u8; crate::spec::MAX_PAYLOAD as usize];
    let (mut late_sum, mut late_max, mut sends) = (0f64, 0u64, 0u64);
    // Every send's lateness, for its percentile (one u64 per packet sent: bounded by the run).
    let mut lates: Vec<u64> = Vec::new();
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
        if let Some(a) = f.adm.as_mut() {
            match a.on_due(t, now_ns(), &f.sock) {
                crate::admission::Step::Send => {}
                crate::admission::Step::Later(n) => {
                    heap.push(Reverse((n, i)));
                    continue;
                }
                crate::admission::Step::Stop => continue,
            }
        }
        if f.report.mm.is_some() {
            read_feedback(f);
        }
        // The wait for the answer moved the schedule (0 without admission).
        let shift = f.adm.as_ref().map_or(0, |a| a.shift);
        let payload = f.times.payload() as usize;
        let sent_at = now_ns();
        wire::stamp(&mut buf[..payload], f.spec.id, f.seq, sent_at);
        let late = sent_at.saturating_sub(due);
        late_sum += late as f64;
        late_max = late_max.max(late);
        lates.push(late);
        sends += 1;
        let sent = match &f.adm {
            Some(_) => f.sock.send_to(&buf[..payload], f.spec.dst),
            None => f.sock.send(&buf[..payload]),
        };
        match sent {
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
        // The stop is the flow's end in run time (its lifetime's), not moved by the wait.
        match f.times.next(t - shift).filter(|n| n + shift < f.spec.stop_ns) {
            Some(n) => heap.push(Reverse((n + shift, i))),
            // With `cac` the flow's end is due at its stop (a packet sent late by the wait: now).
            None => {
                if let Some(e) = f.adm.as_mut().and_then(|a| a.on_schedule_end(f.spec.stop_ns.max(t))) {
                    heap.push(Reverse((e, i)));
                }
            }
        }
    }
    // The run's stop ends every admitted flow still sending (with `cac`: its FlowEnd).
    for f in &mut flows {
        if let Some(a) = f.adm.as_mut() {
            a.end(now_ns(), &f.sock);
        }
    }
    // While only TCP senders (kernel-paced, no schedule of ours) run, the main thread keeps a 1 ms
    // tick and counts its lateness with the sends': the process's scheduling, measured either way.
    let mut due = now_ns();
    while !stopped && tcp.iter().any(|t| !t.is_finished()) {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        due += TICK_NS;
        sleep_until(due);
        let late = now_ns().saturating_sub(due);
        late_sum += late as f64;
        late_max = late_max.max(late);
        lates.push(late);
        sends += 1;
    }
    let mut tcp_reports = Vec::new();
    for t in tcp {
        tcp_reports.push(t.join().map_err(|_| TrafficError::Panicked("TCP sender"))??);
    }
    let late_over_1ms = lates.iter().filter(|&&l| l > 1_000_000).count() as u64;
    Ok(GenReport {
        flows: flows
            .into_iter()
            .map(|f| FlowReport { admission: f.adm.map(|a| a.report), ..f.report })
            .chain(tcp_reports)
            .collect(),
        late_mean_ns: if sends > 0 { late_sum / sends as f64 } else { 0.0 },
        late_max_ns: late_max,
        late_p99_ns: percentile(&mut lates, 0.99),
        sends,
        late_over_1ms,
        stopped,
    })
}

/// The `q` quantile of `v` by nearest rank (0 when empty); sorts `v`.
fn percentile(v: &mut [u64], q: f64) -> u64 {
    if v.is_empty() {
        return 0;
    }
    v.sort_unstable();
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::fake_router::{FakeRouter, Seen};
    use qoslab_core::edge::pcn::wire::Kind;
    use std::net::UdpSocket;
    use std::time::Duration;

    #[test]
    fn percentile_is_the_nearest_rank() {
        assert_eq!(percentile(&mut [], 0.99), 0);
        let mut v: Vec<u64> = (1..=200).rev().collect();
        assert_eq!(percentile(&mut v, 0.99), 198);
        assert_eq!(percentile(&mut v, 1.0), 200);
        assert_eq!(percentile(&mut [7], 0.99), 7);
    }

    /// A CBR flow (one packet every 10 ms) from an unbound port to `dst`, asking the router at `port`.
    fn cbr_flow(id: u32, dst: std::net::SocketAddr, stop_ms: u64, port: u16, cac: bool) -> String {
        format!(
            r#"{{"id": {id}, "dst": "{dst}", "src_port": 0, "start_ns": 0, "stop_ns": {},
                 "payload": {{"base": 100}}, "model": {{"cbr": {{"period": {{"num": 10000000, "den": 1}}}}}},
                 "admission": {{"port": {port}, "rate_bps": 80000, "cac": {cac}}}}}"#,
            stop_ms * 1_000_000
        )
    }

    fn gen_spec(t0: u64, flows: &[String]) -> GenSpec {
        let spec: GenSpec =
            serde_json::from_str(&format!(r#"{{"t0_ns": {t0}, "seed": 1, "flows": [{}]}}"#, flows.join(","))).unwrap();
        assert!(spec.check().is_empty(), "{:?}", spec.check());
        spec
    }

    fn of(seen: &[Seen], kind: Kind, flow: u32) -> Vec<Seen> {
        seen.iter().filter(|s| s.msg.kind == kind && s.msg.flow == flow).copied().collect()
    }

    #[test]
    fn cac_udp_flows_report_the_assigned_rate_and_send_one_flow_end_however_they_stop() {
        static STOP: AtomicBool = AtomicBool::new(false);
        // Flow 3 is refused; flow 1 is terminated 60 ms after its answer; every other is admitted at 1 Mb/s.
        let router = FakeRouter::start(
            |m| Some(if m.flow == 3 { (false, 0.0) } else { (true, 1e6) }),
            Duration::ZERO,
            vec![(1, Duration::from_millis(60))],
        );
        let data = UdpSocket::bind("127.0.0.1:0").unwrap();
        let dst = data.local_addr().unwrap();
        let t0 = now_ns() + 20_000_000;
        // Flow 0 ends at its stop time (150 ms), flow 1 on the Terminate, flow 2 at the run's stop (400 ms).
        let flows: Vec<String> = [(0, 150), (1, 2_000), (2, 5_000), (3, 150)]
            .map(|(id, stop)| cbr_flow(id, dst, stop, router.port, true))
            .into();
        let spec = gen_spec(t0, &flows);
        let stopper = std::thread::spawn(|| {
            std::thread::sleep(Duration::from_millis(420));
            STOP.store(true, Ordering::SeqCst);
        });
        let stop_at = t0 + 400_000_000;
        let report = run(&spec, &STOP).unwrap();
        stopper.join().unwrap();
        let seen = router.stop();
        assert!(report.stopped);
        for f in &report.flows {
            let a = f.admission.as_ref().unwrap();
            let cac = a.cac.unwrap();
            let req = of(&seen, Kind::FlowRequest, f.id);
            let ends = of(&seen, Kind::FlowEnd, f.id);
            assert_eq!(req.len(), 1, "flow {}: {seen:?}", f.id);
            assert!(!req[0].msg.tcp && req[0].msg.port == dst.port());
            if f.id == 3 {
                assert_eq!((a.decision, cac.assigned_bps, cac.ended_ns, f.sent_pkts), ("refused", 0.0, 0, 0));
                assert!(ends.is_empty(), "a refused flow never ends: {ends:?}");
                continue;
            }
            assert_eq!((a.decision, cac.assigned_bps, a.cle), ("admitted", 1e6, 0.0), "flow {}", f.id);
            assert_eq!(ends.len(), 1, "flow {}: exactly one FlowEnd: {seen:?}", f.id);
            let e = ends[0];
            assert_eq!((e.msg.port, e.msg.tcp, e.msg.value, e.from), (dst.port(), false, 0.0, req[0].from));
            assert!(cac.ended_ns >= f.last_tx_ns && e.at_ns >= cac.ended_ns, "flow {}: {cac:?}", f.id);
        }
        let end = |i: usize| report.flows[i].admission.as_ref().unwrap().cac.unwrap().ended_ns;
        assert!(end(0) >= t0 + 150_000_000 && end(0) < t0 + 300_000_000, "at its stop time");
        let term = report.flows[1].admission.as_ref().unwrap().terminated_ns;
        assert!(term > 0 && end(1) >= term && end(1) < stop_at, "on the Terminate");
        assert!(end(2) >= stop_at, "at the run's stop");
    }

    #[test]
    fn pcn_udp_flows_send_no_flow_end_and_report_as_before() {
        static STOP: AtomicBool = AtomicBool::new(false);
        let router = FakeRouter::start(|_| Some((true, 0.125)), Duration::ZERO, Vec::new());
        let data = UdpSocket::bind("127.0.0.1:0").unwrap();
        let dst = data.local_addr().unwrap();
        let spec = gen_spec(now_ns() + 20_000_000, &[cbr_flow(0, dst, 100, router.port, false)]);
        let report = run(&spec, &STOP).unwrap();
        let seen = router.stop();
        assert_eq!(seen.iter().map(|s| s.msg.kind).collect::<Vec<_>>(), vec![Kind::FlowRequest], "{seen:?}");
        let a = report.flows[0].admission.as_ref().unwrap();
        assert_eq!((a.decision, a.cle, a.cac), ("admitted", 0.125, None));
        // The report's bytes are those of a PCN flow before `cac` existed.
        let json = serde_json::to_string(a).unwrap();
        let before = format!(
            r#"{{"decision":"admitted","asked_ns":{},"answered_ns":{},"cle":0.125,"terminated_ns":0,"foreign":0}}"#,
            a.asked_ns, a.answered_ns
        );
        assert_eq!(json, before);
    }
}
