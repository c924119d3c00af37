//! UDP traffic: per-flow sources as small state machines ([`cbr`],
//! [`poisson`], [`on_off`], [`vtr`]), packet sizes, and flow arrival processes
//! ([`arrivals`]).
//!
//! A traffic group (`[[traffic]]`) becomes a [`GroupPlan`]: its endpoints
//! (patterns resolved to node lists; flow `i` takes `srcs[i % n]` and
//! `dsts[i % m]`, or with `src_choice = "random"` a source drawn per flow:
//! [`pick_src`]), its model with every rate turned into an exact period,
//! its size law, marks, and its mean wire rate. Each flow ([`Flow`]) has
//! its own source state and RNG stream `rng::stream(seed, flow_stream(g, i))`
//! (group index `g`, flow index `i` within the group), so adding a group
//! or a flow does not change the draws of the others.
//!
//! **Sources.** Round robin (the default) hands a group's flows to the
//! sources in turn: several groups at the same call rate then step through
//! the sources together, and each source gets its calls in bursts of one a
//! group ([Zhang07]'s MIX: six codec groups over 1,000 ingresses). `random`
//! draws each flow's source uniformly from the group's source stream
//! `rng::stream(seed, src_stream(g))`, in the order the flows are created,
//! so the arrival process and each flow's own draws are those of round
//! robin: only the sources change. A Poisson group's calls at one source
//! are then a Poisson process of the group's rate / n.
//!
//! **Sizes.** Fixed payload, or `base + round(Exp(exp_mean))`; the wire
//! size adds `header`. Rates count payload bits: a model's period is
//! `mean payload * 8 / rate` with mean payload `base + exp_mean` (the
//! rounding biases the true mean by less than `1/(24 exp_mean)` byte).
//! Wire sizes above 2^32 - 1 bytes are cut to that.
//!
//! **Fixed flows** start at `start + U(0, start_jitter)` (the jitter drawn
//! first from the flow's stream) and end at `stop` (default: the run's
//! end). A flow whose start is not before its end never starts (it is
//! listed with `admitted = refused = false`). `start_jitter` does not
//! apply to flows of an arrival process (the process sets their starts).
//!
//! **Mean wire rate** (what a flow asks admission control to reserve
//! unless `reserve` is set): `mean wire size * 8 / period` for CBR and
//! Poisson; for ON/OFF `E[packets per ON] * mean wire size * 8 / (on + off)`
//! (see the packetization rule in [`on_off`]); for VTR the trace's mean
//! wire rate over its whole length (frames cut into `size` packets).
//!
//! **VTR** flows take their packet sizes from the trace, not from the size
//! law: a frame is cut into packets of the group's `size`. The trace is
//! read (or generated) once per group and shared by its flows
//! ([`GroupPlan::frames`]).

pub mod arrivals;

/// The sources themselves (clock-free, in core): the simulator runs them over its groups.
pub use qoslab_core::traffic::*;

use crate::engine::{DirId, GroupId, NodeId};
use crate::error::SimError;
use arrivals::{Arrival, Lifetime};
use cbr::Period;
use on_off::PeriodLaw;
use qoslab_core::packet::{ClassTag, Ecn};
use qoslab_core::rng::Rng;
use qoslab_core::units::{Dur, Rate, Time};
use qoslab_scenario::expand::Expanded;
use qoslab_scenario::{
    Arrivals as ArrivalSpec, SendJitter, SizeSpec, SrcChoice, TcpSpec, TrafficGroup, TrafficModel, ValidScenario,
    VtrTrace,
};
use rand::Rng as _;
use std::path::Path;
use std::sync::Arc;
use vtr::VtrPlan;

/// The index, among `n` matches of its group's `src`, of the source of the
/// group's flow `i`: `i mod n` in turn, or a uniform draw from `rng` (the
/// group's source stream, [`src_stream`]) at random. `n` > 0.
#[inline]
pub fn pick_src(choice: SrcChoice, i: u32, n: usize, rng: &mut Rng) -> usize {
    match choice {
        SrcChoice::RoundRobin => i as usize % n,
        // Drawn as u32 (validation caps the matches far below 2^32), so the
        // draw is the same on every platform.
        SrcChoice::Random => rng.random_range(0..n.min(u32::MAX as usize) as u32) as usize,
    }
}

/// What a flow's [`Source`] does with its group's plan: a VTR source plays
/// its group's frames; every other one runs alone ([`Source::first_alone`]).
pub trait GroupSource {
    /// The first send time of a flow of group `gp` starting at `start` (always `start`).
    fn first(&mut self, start: Time, rng: &mut Rng, gp: &GroupPlan) -> Time;
    /// Wire size of the packet sent now: the group's size law, or the
    /// trace's for VTR.
    fn wire_size(&self, rng: &mut Rng, gp: &GroupPlan) -> u32;
    /// The send time after the one at `now`, for a flow of group `gp`.
    fn next(&mut self, now: Time, rng: &mut Rng, gp: &GroupPlan) -> Time;
}

impl GroupSource for Source {
    fn first(&mut self, start: Time, rng: &mut Rng, gp: &GroupPlan) -> Time {
        match self {
            Source::Vtr(s) => s.first(start, &gp.frames, rng),
            _ => self.first_alone(start, rng).unwrap_or(start),
        }
    }
    #[inline]
    fn wire_size(&self, rng: &mut Rng, gp: &GroupPlan) -> u32 {
        match (self, &gp.model) {
            (Source::Vtr(s), ModelPlan::Vtr(p)) => s.wire_size(p),
            _ => gp.size.sample(rng),
        }
    }
    #[inline]
    fn next(&mut self, now: Time, rng: &mut Rng, gp: &GroupPlan) -> Time {
        match self {
            Source::Vtr(s) => match &gp.model {
                ModelPlan::Vtr(p) => s.next_send(p, &gp.frames),
                _ => Time::MAX,
            },
            _ => self.next_alone(now, rng).unwrap_or(Time::MAX),
        }
    }
}

/// The size model of a group's `size` with `header` bytes added on the wire.
pub fn size_model(spec: &SizeSpec, header: u64) -> SizeModel {
    match spec {
        SizeSpec::Fixed(b) => SizeModel::Fixed { wire: b.0.saturating_add(header).min(u32::MAX as u64) as u32 },
        SizeSpec::Random(r) => SizeModel::Random { base: r.base.0, exp_mean: r.exp_mean.0 as f64, header },
    }
}

/// Mean payload of a group's `size` in thousandths of a bit, for exact periods.
fn mean_payload_millibits(spec: &SizeSpec) -> u128 {
    match spec {
        SizeSpec::Fixed(b) => b.0 as u128 * 8000,
        SizeSpec::Random(r) => (r.base.0 as u128 + r.exp_mean.0 as u128) * 8000,
    }
}

/// What a group says, resolved against the network.
#[derive(Clone, Debug)]
pub struct GroupPlan {
    pub id: GroupId,
    pub name: String,
    pub srcs: Vec<NodeId>,
    pub dsts: Vec<NodeId>,
    /// How flows take their sources among `srcs` ([`pick_src`]).
    pub src_choice: SrcChoice,
    /// The source draws of `src_choice = "random"` ([`src_stream`]).
    pub src_rng: Rng,
    pub model: ModelPlan,
    pub size: SizeModel,
    pub class: ClassTag,
    pub dscp: u8,
    pub ecn: Ecn,
    pub start: Time,
    /// `min(stop, duration)`.
    pub stop: Time,
    pub jitter: Dur,
    /// Packet-time randomization as a fraction of the packet spacing [Zhang07 §2.3.4].
    pub randomize: f64,
    /// The same in ns: each packet leaves a uniform delay in [0, randomize_ns)
    /// after its ideal time (0: none). Per group, not per flow: a flow's
    /// state is kept small (docs/performance.md).
    pub randomize_ns: u64,
    /// Host send-time jitter: the largest lateness of a packet, in ns (0: none).
    pub send_jitter_max_ns: u64,
    /// Fixed flows (`None` when an arrival process drives the group).
    pub fixed_flows: Option<u32>,
    pub arrival: Option<Arrival>,
    pub max_flows: Option<u32>,
    /// Rate each flow asks admission control for.
    pub request_rate: Rate,
    /// `admitted = true`: flows start without asking their domain's ingress
    /// (already admitted elsewhere: [Zhang07 §4]'s rerouted flows).
    pub admitted: bool,
    pub mean_wire_bps: f64,
    pub traced: bool,
    /// MM_APP: the period of each scale, lowest rate first (empty otherwise).
    pub mm_periods: Vec<Period>,
    /// VTR: the trace's frame sizes in bytes, shared by the group's flows
    /// (empty otherwise).
    pub frames: Arc<[u32]>,
    /// cwnd / RTT series for this group's flows (`metrics.tcp_series`).
    pub tcp_series: bool,
    /// Flows created so far.
    pub created: u32,
    pub rng: Rng,
}

impl GroupPlan {
    /// Endpoints of the group's flow `i`, created now (a random source is
    /// drawn here, so call it once per flow, in the order of creation).
    pub fn endpoints(&mut self, i: u32) -> (NodeId, NodeId) {
        let s = pick_src(self.src_choice, i, self.srcs.len(), &mut self.src_rng);
        (self.srcs[s], self.dsts[i as usize % self.dsts.len()])
    }
    /// Every (source, destination) pair a flow of the group may take, the
    /// first `limit` of them: flow `i`'s in turn, or with random sources
    /// every source with every destination.
    pub fn possible_pairs(&self, limit: usize) -> Vec<(NodeId, NodeId)> {
        let (n, m) = (self.srcs.len(), self.dsts.len());
        match self.src_choice {
            SrcChoice::RoundRobin => {
                let cycle = n / gcd(n, m) * m;
                (0..cycle.min(limit)).map(|i| (self.srcs[i % n], self.dsts[i % m])).collect()
            }
            SrcChoice::Random => {
                self.dsts.iter().flat_map(|d| self.srcs.iter().map(move |s| (*s, *d))).take(limit).collect()
            }
        }
    }
    /// May another flow start at `now`?
    pub fn may_start(&self, now: Time) -> bool {
        now < self.stop && self.max_flows.is_none_or(|m| self.created < m)
    }
}

/// Where a flow stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowState {
    /// Waiting for its start.
    Pending,
    /// Admitted and sending.
    Active,
    /// Refused by admission control.
    Refused,
    /// Ended after being admitted.
    Ended,
    /// Its start fell at or after its end: never asked.
    NeverStarted,
}

/// One flow: identity, timing, source state. Laid out in declaration
/// order (`repr(C)`): what every emission touches comes first.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct Flow {
    pub source: Source,
    pub end: Time,
    pub first_dir: DirId,
    pub class: ClassTag,
    pub dscp: u8,
    pub ecn: Ecn,
    pub rng: Rng,
    /// Its group: the packet size model, send-time randomization and host
    /// jitter are the group's (`GroupPlan`), not copied into every flow.
    pub group: GroupId,
    /// Index within the group: the flow is called `<group>.<index>`
    /// ([`Flow::name`]; not stored, a flow's state is kept small).
    pub index: u32,
    pub src: NodeId,
    pub dst: NodeId,
    pub start: Time,
    pub state: FlowState,
    pub end_reason: &'static str,
}

impl Flow {
    /// `<group>.<index>`, e.g. `cbr.3`, given the run's group names.
    pub fn name<S: AsRef<str>>(&self, group_names: &[S]) -> String {
        format!("{}.{}", group_names[self.group.index()].as_ref(), self.index)
    }
}

/// A rule the scenario's validation guarantees does not hold: a bug (the
/// run stops with [`SimError::Runtime`]), never a message about the
/// scenario, which validation alone gives.
fn unvalidated(g: &TrafficGroup, what: &str) -> SimError {
    SimError::Runtime(format!("traffic group {:?}: {what}, which validation refuses (a bug)", g.name))
}

/// Resolves every traffic group of a validated scenario. Validation has
/// checked every rule (endpoints are hosts, rates, periods and sizes are
/// positive, TCP settings are sound); what can still fail is reading a
/// replay file (its problems are reported at the file's own lines).
pub fn plan_groups(sc: &ValidScenario, ex: &Expanded, seed: u64, base_dir: &Path) -> Result<Vec<GroupPlan>, SimError> {
    let mut plans = Vec::with_capacity(sc.traffic.len());
    let mut errors = Vec::new();
    for (gi, g) in sc.traffic.iter().enumerate() {
        match plan_group(sc, ex, gi, g, seed, base_dir) {
            Ok(p) => plans.push(p),
            Err(SimError::Config(ds)) => errors.extend(ds),
            Err(e) => return Err(e),
        }
    }
    if errors.is_empty() {
        Ok(plans)
    } else {
        Err(SimError::Config(errors))
    }
}

/// The plan of group `gi`.
fn plan_group(
    sc: &ValidScenario,
    ex: &Expanded,
    gi: usize,
    g: &TrafficGroup,
    seed: u64,
    base_dir: &Path,
) -> Result<GroupPlan, SimError> {
    let nodes = |pattern: &str| ex.resolve(pattern).into_iter().map(|n| NodeId(n as u32)).collect::<Vec<_>>();
    let (srcs, dsts) = (nodes(&g.src), nodes(&g.dst));
    if srcs.is_empty() || dsts.is_empty() {
        return Err(unvalidated(g, "an endpoint pattern matches no node"));
    }
    let header = g.header.0;
    let size = size_model(&g.size, header);
    let (mut model, mm_periods) = model_plan(g)?;
    let (arrival, max_flows) = arrival_plan(g, gi, base_dir)?;
    let wire_mean = size.mean_payload(header) + header as f64;
    let mut mean_wire_bps = mean_wire_bps(&model, &mm_periods, wire_mean);
    let mut frames: Arc<[u32]> = Arc::from(Vec::new());
    if let TrafficModel::Vtr { trace, interval } = &g.model {
        let SizeSpec::Fixed(payload) = g.size else { return Err(unvalidated(g, "a vtr group with random sizes")) };
        let t = vtr_trace(trace, gi, base_dir)?;
        mean_wire_bps = t.mean_wire_bps(payload.0, header);
        model = ModelPlan::Vtr(VtrPlan {
            frame: t.interval.0,
            spacing: interval.0,
            payload: payload.0.min(u32::MAX as u64) as u32,
            header: header.min(u32::MAX as u64) as u32,
        });
        frames = Arc::from(t.sizes);
    }
    let end = Time(sc.duration.0);
    Ok(GroupPlan {
        id: GroupId(gi as u32),
        name: g.name.clone(),
        srcs,
        dsts,
        src_choice: g.src_choice,
        src_rng: qoslab_core::rng::stream(seed, src_stream(gi as u32)),
        model,
        size,
        class: ClassTag(g.class),
        dscp: g.dscp & 0x3f,
        ecn: if g.ecn { Ecn::Ect0 } else { Ecn::NotEct },
        start: Time(g.start.0),
        stop: g.stop.map_or(end, |s| Time(s.0).min(end)),
        jitter: g.start_jitter,
        randomize: g.randomize,
        randomize_ns: model.spacing_ns(&mm_periods).map_or(0, |sp| (g.randomize * sp as f64) as u64),
        send_jitter_max_ns: match &g.send_jitter {
            Some(SendJitter::Uniform { max }) => max.0,
            None => 0,
        },
        fixed_flows: g.arrivals.is_none().then_some(g.flows),
        arrival,
        max_flows,
        request_rate: g.reserve.unwrap_or(Rate(mean_wire_bps.round().min(u64::MAX as f64) as u64)),
        admitted: g.admitted,
        mean_wire_bps,
        traced: sc.metrics.trace_groups.contains(&g.name),
        mm_periods,
        frames,
        tcp_series: sc.metrics.tcp_series.contains(&g.name),
        created: 0,
        rng: qoslab_core::rng::stream(seed, group_stream(gi as u32)),
    })
}

/// A group's model with its rates turned into periods, and the periods of
/// its MM_APP scales (empty for the other models).
fn model_plan(g: &TrafficGroup) -> Result<(ModelPlan, Vec<Period>), SimError> {
    let payload_mb = mean_payload_millibits(&g.size);
    let period = |r: Rate| match Period::from_rate(payload_mb, r) {
        Some(p) if payload_mb > 0 => Ok(p),
        _ => Err(unvalidated(g, "a rate of 0 or an empty payload")),
    };
    let either = |r: Option<Rate>, i: Option<Dur>| match (r, i) {
        (Some(r), None) => period(r),
        (None, Some(i)) if i.0 > 0 => Ok(Period::from_interval(i)),
        _ => Err(unvalidated(g, "not exactly one positive rate or interval")),
    };
    let model = match &g.model {
        TrafficModel::Cbr { rate, interval } => ModelPlan::Cbr(either(*rate, *interval)?),
        TrafficModel::Poisson { rate } => ModelPlan::Poisson(period(*rate)?.as_ns_f64()),
        TrafficModel::OnOff { peak, interval, on, off, dist, shape } => ModelPlan::OnOff {
            period: either(*peak, *interval)?,
            on: PeriodLaw::new(*dist, on.0 as f64, *shape),
            off: PeriodLaw::new(*dist, off.0 as f64, *shape),
            packetization: g.packetization.unwrap_or_default(),
        },
        TrafficModel::Ftp { tcp } => tcp_plan(tcp, None, g)?,
        TrafficModel::Transfer { bytes, tcp } => tcp_plan(tcp, Some(bytes.0), g)?,
        TrafficModel::MmApp { mm_app } => {
            let periods = mm_app.scales.iter().map(|r| period(*r)).collect::<Result<Vec<_>, _>>()?;
            let feedback_size = mm_app.feedback_size.0.min(u32::MAX as u64) as u32;
            return Ok((ModelPlan::MmApp { feedback_size }, periods));
        }
        // Completed by `plan_group`, which reads the trace.
        TrafficModel::Vtr { interval, .. } => {
            ModelPlan::Vtr(VtrPlan { frame: 1, spacing: interval.0, payload: 1, header: 0 })
        }
    };
    Ok((model, Vec::new()))
}

/// The plan of a TCP group: the segment payload (MSS) is the fixed `size`.
fn tcp_plan(tcp: &TcpSpec, bytes: Option<u64>, g: &TrafficGroup) -> Result<ModelPlan, SimError> {
    let SizeSpec::Fixed(b) = &g.size else { return Err(unvalidated(g, "a TCP group with random sizes")) };
    let mss = u32::try_from(b.0).map_err(|_| unvalidated(g, "a segment payload above 4 GB"))?;
    let mut cfg = tcp.config(mss);
    // RFC 3168: an ECN-capable flow's sender reacts to ECN-Echo.
    cfg.ecn = g.ecn;
    cfg.validate().map_err(|e| unvalidated(g, &format!("tcp.{}: {}", e.field, e.message)))?;
    let header = g.header.0.min(u32::MAX as u64) as u32;
    Ok(ModelPlan::Tcp { cfg, bytes, sink_delay: tcp.sink_delay(), header })
}

/// The frames of a `vtr` group: its trace file read (problems at the
/// file's lines, as validation reports them) or the synthetic trace made.
fn vtr_trace(trace: &VtrTrace, gi: usize, base_dir: &Path) -> Result<qoslab_scenario::vtr::FrameTrace, SimError> {
    match trace {
        VtrTrace::Synthetic { synthetic } => Ok(qoslab_scenario::vtr::synthetic(synthetic)),
        VtrTrace::File(file) => {
            let field = format!("traffic.{gi}.trace");
            qoslab_scenario::vtr::read_frame_trace(&base_dir.join(file), &field, None, &field)
                .map_err(|d| SimError::Config(vec![d]))
        }
    }
}

/// A group's arrival process and its cap on flows (`None` for fixed flows).
fn arrival_plan(g: &TrafficGroup, gi: usize, base_dir: &Path) -> Result<(Option<Arrival>, Option<u32>), SimError> {
    let lt = |lifetime: &Dur, dist| Lifetime { mean: *lifetime, dist };
    Ok(match &g.arrivals {
        None => (None, None),
        Some(ArrivalSpec::Poisson { rate, lifetime, lifetime_dist, max_flows }) => {
            (Some(Arrival::Poisson { mean_gap_ns: 1e9 / rate, lifetime: lt(lifetime, *lifetime_dist) }), *max_flows)
        }
        Some(ArrivalSpec::BatchPoisson { rate, batch_mean, lifetime, lifetime_dist, max_flows }) => {
            let a = Arrival::Batch {
                mean_gap_ns: 1e9 / rate,
                batch_mean: *batch_mean,
                lifetime: lt(lifetime, *lifetime_dist),
            };
            (Some(a), *max_flows)
        }
        Some(ArrivalSpec::KeepAlive { alive, lifetime, lifetime_dist, max_flows }) => {
            (Some(Arrival::KeepAlive { alive: *alive, lifetime: lt(lifetime, *lifetime_dist) }), *max_flows)
        }
        Some(ArrivalSpec::Replay { file }) => {
            let rows = arrivals::read_replay(&base_dir.join(file), &format!("traffic.{gi}.arrivals.file"))?;
            (Some(Arrival::Replay { rows, cursor: 0 }), None)
        }
    })
}

/// A flow's mean wire rate in bit/s (see the module's doc).
fn mean_wire_bps(model: &ModelPlan, mm_periods: &[Period], wire_mean: f64) -> f64 {
    match model {
        ModelPlan::Cbr(per) => wire_mean * 8e9 / per.as_ns_f64(),
        ModelPlan::Poisson(gap) => wire_mean * 8e9 / gap,
        ModelPlan::OnOff { period, on, off, packetization: Packetization::Ceil } => {
            on_off::mean_packets_per_on(on, period.as_ns_f64()) * wire_mean * 8e9 / (on.mean_ns() + off.mean_ns())
        }
        // One packet per interval of ON time: the nominal rate.
        ModelPlan::OnOff { period, on, off, packetization: Packetization::Nominal } => {
            wire_mean * 8e9 / period.as_ns_f64() * on.mean_ns() / (on.mean_ns() + off.mean_ns())
        }
        // A TCP flow has no nominal rate: it asks for `reserve` (default 0).
        ModelPlan::Tcp { .. } => 0.0,
        // Set from the trace by `plan_group`.
        ModelPlan::Vtr(_) => 0.0,
        // MM_APP at its top scale.
        ModelPlan::MmApp { .. } => mm_periods.last().map_or(0.0, |per| wire_mean * 8e9 / per.as_ns_f64()),
    }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qoslab_core::Bytes;
    use qoslab_scenario::RandomSize;

    #[test]
    fn random_sizes_are_base_plus_rounded_exponential_plus_header() {
        let m = size_model(&SizeSpec::Random(RandomSize { base: Bytes(100), exp_mean: Bytes(400) }), 28);
        let mut rng = qoslab_core::rng::stream(1, 1);
        let n = 200_000;
        let xs: Vec<u32> = (0..n).map(|_| m.sample(&mut rng)).collect();
        assert!(xs.iter().all(|x| *x >= 128));
        let mean = xs.iter().map(|x| *x as f64).sum::<f64>() / n as f64;
        assert!((mean - 528.0).abs() < 3.0, "{mean}");
        assert_eq!(m.mean_payload(28), 500.0);
        let f = size_model(&SizeSpec::Fixed(Bytes(1000)), 40);
        assert_eq!(f.sample(&mut rng), 1040);
        assert_eq!(f.mean_payload(40), 1000.0);
    }

    #[test]
    fn streams_of_flows_and_groups_do_not_collide() {
        assert_ne!(flow_stream(0, 1), flow_stream(1, 0));
        assert_ne!(flow_stream(0, 0), group_stream(0));
        assert_ne!(group_stream(3), crate::net::LINK_STREAM_BASE + 3);
        assert_ne!(src_stream(0), group_stream(0));
        assert_ne!(src_stream(7), flow_stream(0, 7));
        assert_ne!(src_stream(3), crate::net::EDGE_STREAM_BASE + 3);
    }

    /// Six groups at the same call rate over `n` sources ([Zhang07]'s MIX over
    /// the ingresses): the sources of the six groups' `j`-th flows, for every `j`.
    fn six_groups(choice: SrcChoice, n: usize, flows: u32, seed: u64) -> Vec<[usize; 6]> {
        let mut rngs: Vec<Rng> = (0..6).map(|g| qoslab_core::rng::stream(seed, src_stream(g))).collect();
        (0..flows).map(|j| std::array::from_fn(|g| pick_src(choice, j, n, &mut rngs[g]))).collect()
    }

    #[test]
    fn round_robin_groups_step_through_the_sources_together_and_random_ones_do_not() {
        let (n, flows) = (1000, 2000);
        // Round robin: the six groups' j-th flows all come from source j mod n.
        let rr = six_groups(SrcChoice::RoundRobin, n, flows, 1);
        assert!(rr.iter().enumerate().all(|(j, s)| s.iter().all(|&x| x == j % n)));
        // Random: six sources drawn from 1000 coincide for a pair of groups with
        // probability 15/1000 per j (about 30 of 2000); all six never.
        let rnd = six_groups(SrcChoice::Random, n, flows, 1);
        let together = rnd.iter().filter(|s| s.iter().all(|&x| x == s[0])).count();
        assert_eq!(together, 0);
        let some_pair = rnd.iter().filter(|s| (0..6).any(|a| (a + 1..6).any(|b| s[a] == s[b]))).count();
        assert!((10..=60).contains(&some_pair), "{some_pair}");
        // ... and every source gets its share: 12,000 calls over 1000 sources,
        // 12 each on average (Poisson sd 3.5): none without a call, none above 40.
        let mut per = vec![0u32; n];
        rnd.iter().flatten().for_each(|&s| per[s] += 1);
        let (lo, hi) = (per.iter().min().unwrap(), per.iter().max().unwrap());
        assert!(*lo >= 1 && *hi <= 40, "{lo} .. {hi}");
    }

    #[test]
    fn random_sources_are_the_same_for_the_same_seed_and_differ_between_seeds() {
        let a = six_groups(SrcChoice::Random, 100, 500, 7);
        assert_eq!(a, six_groups(SrcChoice::Random, 100, 500, 7));
        assert_ne!(a, six_groups(SrcChoice::Random, 100, 500, 8));
        // One source: every draw is that source.
        assert!(six_groups(SrcChoice::Random, 1, 50, 7).iter().flatten().all(|&s| s == 0));
    }
}
