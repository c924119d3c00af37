//! Fluid (ideal-rate) mode for the TCP-CAC schemes: Poisson file
//! transfers through a [`ShapingCac`], each admitted transfer served at
//! exactly its shaping rate, no packets and no TCP.
//!
//! Source: [Tarasiuk05 §4] and Table 4 (schemes #1, #2,
//! #3 at C = 100 Mb/s, B = 10, IPLR = 1e-3, R_req = 1 Mb/s, 10 Mbit files,
//! λ = 5.98/s, k = 3). This mode isolates the admission and rate-assignment
//! logic from TCP dynamics and is the cross-check for the TCP runs.
//!
//! Model: requests arrive as a Poisson process of rate λ (stream
//! [`ARRIVAL_STREAM`] of the run seed). Each asks the controller with
//! R_req; a refused request is blocked and lost; an admitted one starts at
//! once and sends `file_size_bits` at its assigned rate. Under #2 every
//! arrival and departure changes the rates of all running transfers: the
//! remaining work is integrated piecewise (processor sharing). The
//! remaining work is kept exactly, in bit·ns (bits × 10⁹), decremented by
//! rate × elapsed ns, so a transfer ends at the first nanosecond at which
//! it has sent its whole file (rounded up). Its own event loop: a binary
//! heap ordered by (time, insertion sequence); stale completions (a rate
//! changed since they were scheduled) are skipped by a version number.
//!
//! ```text
//! transfer time   T = end − arrival               (no set-up delay)
//! blocking        P_b = blocked / requests         (arrivals in [warmup, duration))
//! 95 % intervals  batch means: M equal time batches by arrival, t_{0.975, M−1} · s / √M
//! checks          #1: P_b ≈ ErlangB(N_max, λ·file/R_req)          (M/G/n/n, exact)
//!                 #2 (S = C): E[T] ≈ (file/C) / (1 − λ·file/C)      (M/G/1-PS; N_max
//!                 truncation negligible at the paper's load)
//! ```
//!
//! | parameter            | unit  | range               | default (`paper_table4`) |
//! |----------------------|-------|---------------------|--------------------------|
//! | `capacity`           | bit/s | > 0                 | 100 Mb/s                 |
//! | `utilization`        | —     | ρ or (B, IPLR)      | B = 10, IPLR = 1e-3      |
//! | `r_req`              | bit/s | > 0                 | 1 Mb/s                   |
//! | `scheme`             | —     | #1, #2 (C or ρC), #3 (k > 1) | —               |
//! | `file_size_bits`     | bit   | > 0                 | 10⁷                      |
//! | `arrival_rate_per_s` | 1/s   | > 0, finite         | 5.98                     |
//! | `duration`           | ns    | > warmup; ≤ 10⁹ expected arrivals | 20 000 s   |
//! | `warmup`             | ns    | < duration          | 200 s                    |
//! | `batches`            | count | 2 ..= 1000          | 20                       |
//! | `record_transfers`   | bool  |                     | true                     |
//!
//! Interpretations:
//! - Arrivals stop at `duration`; the run then drains, so every admitted
//!   transfer of the window completes and enters the mean (no bias towards
//!   short transfers). The time-average of running connections covers
//!   [warmup, duration] only.
//! - "Mean system state when call blocking" (Table 4) is the number of
//!   running connections seen by the blocked request, averaged over blocked
//!   requests.
//! - All schemes of one seed see the same arrival times (common random
//!   numbers), so their differences are not sampling noise of the arrivals.

use qoslab_core::admission::cac::{erlang_b, RateChange, Scheme, ShapingCac, ShapingCacConfig, Utilization};
use qoslab_core::admission::{AdmissionControl, FlowRequest};
use qoslab_core::rng::stream;
use qoslab_core::{Bytes, ClassTag, ConfigError, Dur, FlowId, Rate, Time};
use rand_distr::{Distribution, Exp};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

const MECH: &str = "fluid";
const NS: u128 = 1_000_000_000;

/// The RNG stream (of the run seed) that draws the inter-arrival times.
pub const ARRIVAL_STREAM: u64 = 0;

/// Upper bound on the expected number of arrivals of one run.
pub const MAX_EXPECTED_ARRIVALS: f64 = 1e9;

/// A fluid run: link, CAC, scheme, traffic and run length.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct FluidConfig {
    pub capacity: Rate,
    pub utilization: Utilization,
    pub r_req: Rate,
    pub scheme: Scheme,
    pub file_size_bits: u64,
    pub arrival_rate_per_s: f64,
    pub duration: Dur,
    pub warmup: Dur,
    pub seed: u64,
    /// Batches for the 95 % intervals (batch means over arrival time).
    pub batches: u32,
    /// Keep one [`Transfer`] record per request (memory: ~80 B each).
    pub record_transfers: bool,
}

impl FluidConfig {
    /// The paper's Table 4 set-up for `scheme`, 20 000 s after 200 s of warm-up.
    pub fn paper_table4(scheme: Scheme) -> FluidConfig {
        FluidConfig {
            capacity: Rate::mbps(100),
            utilization: Utilization::PAPER,
            r_req: Rate::mbps(1),
            scheme,
            file_size_bits: 10_000_000,
            arrival_rate_per_s: 5.98,
            duration: Dur::from_secs(20_000),
            warmup: Dur::from_secs(200),
            seed: 1,
            batches: 20,
            record_transfers: true,
        }
    }

    /// Checks every field; the controller's own fields are checked by it.
    pub fn validate(&self) -> Result<(), ConfigError> {
        ShapingCacConfig { capacity: self.capacity, utilization: self.utilization, scheme: self.scheme }.validate()?;
        if self.r_req.0 == 0 {
            return Err(ConfigError::new(MECH, "r_req", "(0bps) must be a positive rate, e.g. \"1Mbps\""));
        }
        if self.file_size_bits == 0 {
            return Err(ConfigError::new(MECH, "file_size_bits", "(0) must be at least 1 bit"));
        }
        let lambda = self.arrival_rate_per_s;
        if !(lambda.is_finite() && lambda > 0.0) {
            return Err(ConfigError::new(MECH, "arrival_rate_per_s", format!("({lambda}) must be finite and > 0")));
        }
        if self.warmup >= self.duration {
            return Err(ConfigError::new(
                MECH,
                "warmup",
                format!("({}) must be shorter than duration ({})", self.warmup, self.duration),
            ));
        }
        let expected = lambda * self.duration.as_secs_f64();
        if expected > MAX_EXPECTED_ARRIVALS {
            return Err(ConfigError::new(
                MECH,
                "duration",
                format!(
                    "({}) at {lambda}/s means {expected:.3e} arrivals; at most {MAX_EXPECTED_ARRIVALS:e}",
                    self.duration
                ),
            ));
        }
        if !(2..=1000).contains(&self.batches) {
            return Err(ConfigError::new(MECH, "batches", format!("({}) must be in 2..=1000", self.batches)));
        }
        Ok(())
    }

    /// The holding time of scheme #1, file / R_req, in seconds.
    pub fn holding_time_s(&self) -> f64 {
        self.file_size_bits as f64 / self.r_req.as_f64()
    }
}

/// One request: when it came, whether it ran, when it ended, at what rates.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Transfer {
    pub arrival: Time,
    pub admitted: bool,
    /// Inside the measurement window (arrival in [warmup, duration)).
    pub measured: bool,
    /// Running connections the request found (excluding itself).
    pub running_at_arrival: u32,
    /// Start of service (= arrival when admitted: no set-up delay).
    pub start: Option<Time>,
    pub end: Option<Time>,
    /// First assigned shaping rate, and the extremes over its life (0 if blocked).
    pub rate_first: Rate,
    pub rate_min: Rate,
    pub rate_max: Rate,
    /// Re-assignments after the first (#2 only).
    pub rate_changes: u32,
}

impl Transfer {
    pub fn transfer_time(&self) -> Option<Dur> {
        Some(self.end? - self.start?)
    }
}

/// A 95 % interval: `mean ± half_width`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub mean: f64,
    /// Half-width of the 95 % batch-means interval (NaN if fewer than 2 batches had data).
    pub ci95: f64,
}

/// What a fluid run measured (over arrivals in [warmup, duration)).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FluidResult {
    pub rho: f64,
    pub n_max: u64,
    pub requests: u64,
    pub admitted: u64,
    pub blocked: u64,
    /// blocked / requests (0 when there were no requests).
    pub blocking_probability: Estimate,
    /// Mean transfer time of admitted transfers, in seconds (NaN if none).
    pub mean_transfer_time_s: Estimate,
    /// Mean running connections seen by blocked requests (`None` if nothing was blocked).
    pub mean_running_at_blocking: Option<f64>,
    /// Time-average of running connections over [warmup, duration].
    pub time_avg_running: f64,
    pub max_running: u64,
    /// Mean over admitted transfers of their first assigned rate, bit/s.
    pub mean_first_rate_bps: f64,
    /// Events handled (arrivals, completions, stale completions skipped).
    pub events: u64,
    /// When the last transfer ended.
    pub end: Time,
    /// Every request, in arrival order (empty unless `record_transfers`).
    pub transfers: Vec<Transfer>,
}

/// M/G/1-PS mean sojourn of a file: (file/C) / (1 − λ·file/C), in seconds;
/// `None` if the load λ·file/C is 1 or more (no steady state).
pub fn ps_mean_transfer_time_s(capacity: Rate, file_size_bits: u64, arrival_rate_per_s: f64) -> Option<f64> {
    let service = file_size_bits as f64 / capacity.as_f64();
    let load = arrival_rate_per_s * service;
    (load < 1.0).then(|| service / (1.0 - load))
}

/// Erlang-B blocking that scheme #1 of `cfg` should show: B(N_max, λ·file/R_req).
pub fn erlang_b_for_scheme1(cfg: &FluidConfig) -> Result<f64, ConfigError> {
    let lim = qoslab_core::admission::cac::CacLimit::new(cfg.capacity, cfg.utilization)?;
    erlang_b(lim.n_max(cfg.r_req)?, cfg.arrival_rate_per_s * cfg.holding_time_s())
}

/// Runs `cfg` with Poisson arrivals drawn from the run seed.
pub fn run(cfg: &FluidConfig) -> Result<FluidResult, ConfigError> {
    cfg.validate()?;
    let mut rng = stream(cfg.seed, ARRIVAL_STREAM);
    let exp = Exp::new(cfg.arrival_rate_per_s)
        .map_err(|e| ConfigError::new(MECH, "arrival_rate_per_s", format!("({}) {e}", cfg.arrival_rate_per_s)))?;
    let mut t = Time::ZERO;
    let mut next = move || {
        t = Time(t.0.saturating_add(Dur::from_secs_f64(exp.sample(&mut rng)).0));
        t
    };
    Engine::new(cfg)?.run(&mut next)
}

/// Runs `cfg` with the given arrival times (sorted, non-decreasing); those
/// at or after `duration` are ignored. The seed is unused.
pub fn run_trace(cfg: &FluidConfig, arrivals: &[Time]) -> Result<FluidResult, ConfigError> {
    cfg.validate()?;
    if let Some(i) = arrivals.windows(2).position(|w| w[1] < w[0]) {
        return Err(ConfigError::new(
            MECH,
            "arrivals",
            format!("must be sorted: {} follows {} at index {}", arrivals[i + 1], arrivals[i], i + 1),
        ));
    }
    let mut it = arrivals.iter().copied();
    let mut next = move || it.next().unwrap_or(Time::MAX);
    Engine::new(cfg)?.run(&mut next)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Arrival,
    Done { flow: u32, version: u32 },
}

#[derive(Clone, Copy, Debug)]
struct Running {
    rate: Rate,
    /// Remaining work in bit·ns (bits × 10⁹).
    rem: u128,
    since: Time,
    version: u32,
    arrival: Time,
    measured: bool,
    rate_first: Rate,
    rate_min: Rate,
    rate_max: Rate,
    changes: u32,
}

#[derive(Clone, Copy, Debug, Default)]
struct Batch {
    requests: u64,
    blocked: u64,
    done: u64,
    time_sum: f64,
}

struct Engine<'a> {
    cfg: &'a FluidConfig,
    cac: ShapingCac,
    n_max: u64,
    heap: BinaryHeap<Reverse<(Time, u64, Kind)>>,
    seq: u64,
    running: BTreeMap<u32, Running>,
    /// Reused buffer for the controller's rate changes.
    scratch: Vec<RateChange>,
    transfers: Vec<Transfer>,
    batches: Vec<Batch>,
    win_start: Time,
    win_end: Time,
    area: u128,
    last_t: Time,
    blocked_state_sum: u64,
    first_rate_sum: f64,
    max_running: u64,
    events: u64,
    next_id: u32,
}

impl<'a> Engine<'a> {
    fn new(cfg: &'a FluidConfig) -> Result<Engine<'a>, ConfigError> {
        let cac = ShapingCac::new(ShapingCacConfig {
            capacity: cfg.capacity,
            utilization: cfg.utilization,
            scheme: cfg.scheme,
        })?;
        let n_max = cac.limit().n_max(cfg.r_req)?;
        Ok(Engine {
            cfg,
            cac,
            n_max,
            heap: BinaryHeap::new(),
            seq: 0,
            running: BTreeMap::new(),
            scratch: Vec::new(),
            transfers: Vec::new(),
            batches: vec![Batch::default(); cfg.batches as usize],
            win_start: Time::ZERO + cfg.warmup,
            win_end: Time::ZERO + cfg.duration,
            area: 0,
            last_t: Time::ZERO,
            blocked_state_sum: 0,
            first_rate_sum: 0.0,
            max_running: 0,
            events: 0,
            next_id: 0,
        })
    }

    fn push(&mut self, t: Time, kind: Kind) {
        self.heap.push(Reverse((t, self.seq, kind)));
        self.seq += 1;
    }

    fn batch_of(&self, arrival: Time) -> usize {
        let span = (self.win_end - self.win_start).0 as u128;
        let off = (arrival - self.win_start).0 as u128;
        ((off * self.batches.len() as u128 / span) as usize).min(self.batches.len() - 1)
    }

    /// Accumulates running-count × time inside the window up to `t`.
    fn advance(&mut self, t: Time) {
        let a = self.last_t.max(self.win_start);
        let b = t.min(self.win_end);
        if b > a {
            self.area += self.running.len() as u128 * (b - a).0 as u128;
        }
        self.last_t = t;
    }

    fn run(mut self, next_arrival: &mut dyn FnMut() -> Time) -> Result<FluidResult, ConfigError> {
        let first = next_arrival();
        if first < self.win_end {
            self.push(first, Kind::Arrival);
        }
        let mut end = Time::ZERO;
        while let Some(Reverse((t, _, kind))) = self.heap.pop() {
            self.events += 1;
            match kind {
                Kind::Arrival => {
                    self.advance(t);
                    self.on_arrival(t)?;
                    let n = next_arrival();
                    if n < self.win_end {
                        self.push(n.max(t), Kind::Arrival);
                    }
                }
                Kind::Done { flow, version } => {
                    if self.running.get(&flow).is_none_or(|r| r.version != version) {
                        continue; // stale: the rate changed after this was scheduled
                    }
                    self.advance(t);
                    end = t;
                    self.on_done(t, flow);
                }
            }
        }
        Ok(self.finish(end))
    }

    fn on_arrival(&mut self, t: Time) -> Result<(), ConfigError> {
        let id = self.next_id;
        self.next_id = id
            .checked_add(1)
            .ok_or_else(|| ConfigError::new(MECH, "duration", format!("more than {} requests in one run", u32::MAX)))?;
        let measured = t >= self.win_start && t < self.win_end;
        let n = self.running.len();
        let req = FlowRequest { flow: FlowId(id), class: ClassTag(0), rate: self.cfg.r_req, depth: Bytes(0) };
        let admitted = self.cac.request(t, &req).admitted();
        if measured {
            let b = self.batch_of(t);
            self.batches[b].requests += 1;
            if !admitted {
                self.batches[b].blocked += 1;
                self.blocked_state_sum += n as u64;
            }
        }
        if self.cfg.record_transfers {
            self.transfers.push(Transfer {
                arrival: t,
                admitted,
                measured,
                running_at_arrival: n as u32,
                start: admitted.then_some(t),
                end: None,
                rate_first: Rate(0),
                rate_min: Rate(0),
                rate_max: Rate(0),
                rate_changes: 0,
            });
        }
        if admitted {
            self.running.insert(
                id,
                Running {
                    rate: Rate(0),
                    rem: self.cfg.file_size_bits as u128 * NS,
                    since: t,
                    version: 0,
                    arrival: t,
                    measured,
                    rate_first: Rate(0),
                    rate_min: Rate(u64::MAX),
                    rate_max: Rate(0),
                    changes: 0,
                },
            );
            self.max_running = self.max_running.max(self.running.len() as u64);
            self.apply_rate_changes(t, Some(id));
            if measured {
                self.first_rate_sum += self.running[&id].rate_first.as_f64();
            }
        }
        Ok(())
    }

    fn on_done(&mut self, t: Time, flow: u32) {
        let Some(r) = self.running.remove(&flow) else { return };
        if r.measured {
            let b = self.batch_of(r.arrival);
            self.batches[b].done += 1;
            self.batches[b].time_sum += (t - r.arrival).as_secs_f64();
        }
        if let Some(rec) = self.transfers.get_mut(flow as usize) {
            rec.end = Some(t);
            rec.rate_first = r.rate_first;
            rec.rate_min = r.rate_min;
            rec.rate_max = r.rate_max;
            rec.rate_changes = r.changes;
        }
        self.cac.on_departure(t, FlowId(flow));
        self.apply_rate_changes(t, None);
    }

    /// Applies the controller's new rates: settle each flow's work at the
    /// old rate up to `t`, then reschedule its completion at the new rate.
    fn apply_rate_changes(&mut self, t: Time, new_flow: Option<u32>) {
        let mut changes = std::mem::take(&mut self.scratch);
        changes.extend(self.cac.drain_rate_changes());
        for ch in changes.drain(..) {
            let flow = ch.flow.0;
            let Some(r) = self.running.get_mut(&flow) else { continue };
            let sent = r.rate.0 as u128 * (t - r.since).0 as u128;
            r.rem = r.rem.saturating_sub(sent);
            r.since = t;
            r.rate = ch.rate;
            r.version += 1;
            if Some(flow) == new_flow && r.rate_first.0 == 0 {
                r.rate_first = ch.rate;
            } else {
                r.changes += 1;
            }
            r.rate_min = r.rate_min.min(ch.rate);
            r.rate_max = r.rate_max.max(ch.rate);
            if ch.rate.0 > 0 {
                let dt = r.rem.div_ceil(ch.rate.0 as u128).min(u64::MAX as u128) as u64;
                let version = r.version;
                self.push(Time(t.0.saturating_add(dt)), Kind::Done { flow, version });
            }
        }
        self.scratch = changes;
    }

    fn finish(self, end: Time) -> FluidResult {
        let requests: u64 = self.batches.iter().map(|b| b.requests).sum();
        let blocked: u64 = self.batches.iter().map(|b| b.blocked).sum();
        let done: u64 = self.batches.iter().map(|b| b.done).sum();
        let time_sum: f64 = self.batches.iter().map(|b| b.time_sum).sum();
        let p_b = if requests == 0 { 0.0 } else { blocked as f64 / requests as f64 };
        let per_batch_pb: Vec<f64> =
            self.batches.iter().filter(|b| b.requests > 0).map(|b| b.blocked as f64 / b.requests as f64).collect();
        let per_batch_t: Vec<f64> =
            self.batches.iter().filter(|b| b.done > 0).map(|b| b.time_sum / b.done as f64).collect();
        let window = (self.win_end - self.win_start).0 as f64;
        let admitted = requests - blocked;
        FluidResult {
            rho: self.cac.limit().rho(),
            n_max: self.n_max,
            requests,
            admitted,
            blocked,
            blocking_probability: Estimate { mean: p_b, ci95: ci95_half_width(&per_batch_pb) },
            mean_transfer_time_s: Estimate {
                mean: if done == 0 { f64::NAN } else { time_sum / done as f64 },
                ci95: ci95_half_width(&per_batch_t),
            },
            mean_running_at_blocking: (blocked > 0).then(|| self.blocked_state_sum as f64 / blocked as f64),
            time_avg_running: self.area as f64 / window,
            max_running: self.max_running,
            mean_first_rate_bps: if admitted == 0 { f64::NAN } else { self.first_rate_sum / admitted as f64 },
            events: self.events,
            end,
            transfers: self.transfers,
        }
    }
}

/// Half-width of the 95 % Student-t interval of the mean of `xs` (NaN if fewer than 2).
pub fn ci95_half_width(xs: &[f64]) -> f64 {
    let m = xs.len();
    if m < 2 {
        return f64::NAN;
    }
    let mean = xs.iter().sum::<f64>() / m as f64;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (m - 1) as f64;
    t975(m - 1) * (var / m as f64).sqrt()
}

/// The 0.975 quantile of Student's t with `df` degrees of freedom: a table
/// to 30, then the Cornish-Fisher expansion (error below 1e-4 there).
fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    if (1..=30).contains(&df) {
        return T[df - 1];
    }
    let z = 1.959_963_984_540_054_f64;
    let v = df as f64;
    z + (z.powi(3) + z) / (4.0 * v)
        + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * v * v)
        + (3.0 * z.powi(7) + 19.0 * z.powi(5) + 17.0 * z.powi(3) - 15.0 * z) / (384.0 * v.powi(3))
}

#[cfg(test)]
mod tests;
