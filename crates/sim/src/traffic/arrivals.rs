//! Flow arrival processes: how the flows of a group come and go when the
//! group has `arrivals` instead of a fixed number of `flows`.
//!
//! | process | parameters | flows start | lifetime |
//! |---|---|---|---|
//! | `poisson` | `rate` (flows/s) | gaps `Exp(1/rate)` from the group's `start` | `lifetime` |
//! | `batch_poisson` | `rate` (batches/s), `batch_mean` | batches at Poisson instants; batch size geometric on {1, 2, ...} with mean `batch_mean` (p = 1/batch_mean) | `lifetime` |
//! | `keep_alive` | `alive` | `alive` flows at `start`; when one ends the next starts at once | `lifetime` |
//! | `replay` | `file` | `start + start_s` of each CSV row | `lifetime_s` of the row |
//!
//! Lifetimes are `fixed` or `exponential` (mean `lifetime`), drawn from the
//! flow's own RNG stream, rounded to whole ns, at least 1 ns. A flow ends at
//! `min(start + lifetime, stop, duration)`. `max_flows` caps the flows a
//! group starts (refused ones included). No flow starts at or after the
//! group's `stop` (default: the end of the run).
//!
//! Interpretations:
//! - A refused flow of a keep-alive group holds its slot for its lifetime
//!   (as if it had run), then the next flow asks; otherwise a controller
//!   that refuses would be asked again and again at the same instant.
//! - Replay start times are offsets from the group's `start` (0 by
//!   default, so absolute run times); rows are used in start order (stable).
//!   The CSV has the header `start_s,lifetime_s`; blank lines and lines
//!   starting with `#` are skipped.

use crate::error::SimError;
use qoslab_core::rng::Rng;
use qoslab_core::units::{Dur, Time};
use qoslab_scenario::{files, LifetimeDist};
use rand::Rng as _;
use std::path::Path;

/// A flow lifetime law.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lifetime {
    pub mean: Dur,
    pub dist: LifetimeDist,
}

impl Lifetime {
    pub fn sample(&self, rng: &mut Rng) -> Dur {
        match self.dist {
            LifetimeDist::Fixed => Dur(self.mean.0.max(1)),
            LifetimeDist::Exponential => Dur(qoslab_core::traffic::exp_ns(rng, self.mean.0 as f64)),
        }
    }
}

/// An arrival process's settings and state.
#[derive(Clone, Debug)]
pub enum Arrival {
    Poisson { mean_gap_ns: f64, lifetime: Lifetime },
    Batch { mean_gap_ns: f64, batch_mean: f64, lifetime: Lifetime },
    KeepAlive { alive: u32, lifetime: Lifetime },
    Replay { rows: Vec<(Dur, Dur)>, cursor: usize },
}

/// Exponential gap of mean `mean_ns` (at least 1 ns).
pub fn exp_gap(rng: &mut Rng, mean_ns: f64) -> u64 {
    qoslab_core::traffic::exp_ns(rng, mean_ns)
}

/// Geometric batch size on {1, 2, ...} with mean `mean` (>= 1).
pub fn batch_size(rng: &mut Rng, mean: f64) -> u64 {
    if mean.is_nan() || mean <= 1.0 || !mean.is_finite() {
        return 1;
    }
    let p = 1.0 / mean;
    let u: f64 = 1.0 - rng.random::<f64>(); // (0, 1]
    let k = (u.ln() / (1.0 - p).ln()).floor();
    1 + k.min(1e12) as u64
}

/// `t + d`, saturating.
pub fn later(t: Time, d: Dur) -> Time {
    Time(t.0.saturating_add(d.0))
}

/// One flow an arrival process starts: its index in the group, when it
/// arrives (asks admission) and when it ends by its lifetime (or the
/// group's stop), as the simulator draws them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Planned {
    pub index: u32,
    pub start: Time,
    pub end: Time,
}

/// Every flow group `g`'s arrival process starts in a run with `seed`, in
/// creation order, with the simulator's own draws: the process's gaps and
/// batch sizes from the group's stream, each flow's lifetime drawn first
/// from its own stream (`flow_stream(group, index)`). Admission decisions
/// do not move them: a refused flow keeps its arrival and lifetime (a
/// keep-alive slot is held until its end). The one thing it cannot know is
/// a flow ended early by termination: a keep-alive slot the simulator
/// refills at a termination is planned at the flow's lifetime instead (the
/// testbed refuses keep-alive groups on links that terminate flows).
/// Empty for a group of fixed flows. The testbed starts real flows at
/// these instants (`Scenario.model()`, `groups[].flows`); a test runs the
/// simulator and compares (`crates/sim/tests/it/arrivals.rs`).
pub fn schedule(g: &super::GroupPlan, seed: u64) -> Vec<Planned> {
    let mut rng = g.rng.clone();
    let mut created = g.created;
    let may = |t: Time, created: u32| t < g.stop && g.max_flows.is_none_or(|m| created < m);
    let mut out: Vec<Planned> = Vec::new();
    let mut create = |t: Time, life: Option<Dur>, law: Option<Lifetime>, created: &mut u32| {
        let i = *created;
        *created += 1;
        let mut frng = qoslab_core::rng::stream(seed, qoslab_core::traffic::flow_stream(g.id.0, i));
        let l = match (life, law) {
            (Some(l), _) => l,
            (None, Some(law)) => law.sample(&mut frng),
            (None, None) => Dur(0),
        };
        let p = Planned { index: i, start: t, end: later(t, l).min(g.stop) };
        out.push(p);
        p
    };
    match &g.arrival {
        None => {}
        Some(Arrival::Poisson { mean_gap_ns, lifetime }) => {
            let mut t = g.start;
            while may(t, created) {
                let gap = exp_gap(&mut rng, *mean_gap_ns);
                create(t, None, Some(*lifetime), &mut created);
                t = Time(t.0.saturating_add(gap));
            }
        }
        Some(Arrival::Batch { mean_gap_ns, batch_mean, lifetime }) => {
            let mut t = g.start;
            while may(t, created) {
                let k = batch_size(&mut rng, *batch_mean);
                let gap = exp_gap(&mut rng, *mean_gap_ns);
                for _ in 0..k {
                    if !may(t, created) {
                        break;
                    }
                    create(t, None, Some(*lifetime), &mut created);
                }
                t = Time(t.0.saturating_add(gap));
            }
        }
        Some(Arrival::KeepAlive { alive, lifetime }) => {
            // Slots end in (time, creation) order, as the simulator's events fire.
            let mut ends = std::collections::BinaryHeap::new();
            for _ in 0..*alive {
                if !may(g.start, created) {
                    break;
                }
                let p = create(g.start, None, Some(*lifetime), &mut created);
                ends.push(std::cmp::Reverse((p.end, p.index)));
            }
            while let Some(std::cmp::Reverse((t, _))) = ends.pop() {
                if may(t, created) {
                    let p = create(t, None, Some(*lifetime), &mut created);
                    ends.push(std::cmp::Reverse((p.end, p.index)));
                }
            }
        }
        Some(Arrival::Replay { rows, cursor }) => {
            let mut now = rows.get(*cursor).map(|r| later(g.start, r.0));
            for (k, row) in rows.iter().enumerate().skip(*cursor) {
                let Some(t) = now.filter(|t| *t < g.stop) else { break };
                if may(t, created) {
                    create(t, Some(row.1), None, &mut created);
                }
                now = rows.get(k + 1).map(|r| later(g.start, r.0).max(t));
            }
        }
    }
    out
}

/// Reads a replay file: `(start offset, lifetime)` per row, sorted by start.
/// `field` is the scenario path of the `file` setting, for messages. The
/// parsing is the scenario crate's ([`qoslab_scenario::files`]), the one
/// validation also runs, so `validate` and `run` agree on every file.
pub fn read_replay(path: &Path, field: &str) -> Result<Vec<(Dur, Dur)>, SimError> {
    files::replay_rows(path, field).map_err(|e| match e {
        files::DataError::Unreadable(e) => {
            SimError::Io { path: path.display().to_string(), message: format!("cannot read replay file: {e}") }
        }
        files::DataError::Bad(d) => SimError::Config(vec![d]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_replay_file_is_an_io_error_naming_it() {
        match read_replay(Path::new("/nonexistent/x.csv"), "p") {
            Err(SimError::Io { path, .. }) => assert_eq!(path, "/nonexistent/x.csv"),
            r => panic!("{r:?}"),
        }
    }

    #[test]
    fn geometric_batches_have_the_requested_mean() {
        let mut rng = qoslab_core::rng::stream(2, 3);
        let n = 200_000;
        let m = (0..n).map(|_| batch_size(&mut rng, 4.0) as f64).sum::<f64>() / n as f64;
        assert!((m - 4.0).abs() < 0.05, "{m}");
        assert_eq!(batch_size(&mut rng, 1.0), 1);
    }

    #[test]
    fn exponential_lifetimes_have_the_requested_mean() {
        let mut rng = qoslab_core::rng::stream(2, 4);
        let l = Lifetime { mean: Dur::from_secs(3), dist: LifetimeDist::Exponential };
        let n = 100_000;
        let m = (0..n).map(|_| l.sample(&mut rng).as_secs_f64()).sum::<f64>() / n as f64;
        assert!((m - 3.0).abs() < 0.05, "{m}");
        let f = Lifetime { mean: Dur::from_secs(3), dist: LifetimeDist::Fixed };
        assert_eq!(f.sample(&mut rng), Dur::from_secs(3));
    }
}
