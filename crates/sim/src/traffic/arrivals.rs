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

use crate::error::{Diagnostic, SimError};
use qoslab_core::rng::Rng;
use qoslab_core::units::{Dur, Time};
use qoslab_scenario::LifetimeDist;
use rand::Rng as _;
use rand_distr::Exp1;
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
            LifetimeDist::Exponential => {
                let e: f64 = rng.sample(Exp1);
                Dur((e * self.mean.0 as f64).round().clamp(1.0, u64::MAX as f64 / 4.0) as u64)
            }
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
    let e: f64 = rng.sample(Exp1);
    (e * mean_ns).round().clamp(1.0, u64::MAX as f64 / 4.0) as u64
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

/// Reads a replay file: `(start offset, lifetime)` per row, sorted by start.
/// `field` is the scenario path of the `file` setting, for messages.
pub fn read_replay(path: &Path, field: &str) -> Result<Vec<(Dur, Dur)>, SimError> {
    let text = std::fs::read_to_string(path).map_err(|e| SimError::Io {
        path: path.display().to_string(),
        message: format!("cannot read replay file: {e}"),
    })?;
    parse_replay(&text, &path.display().to_string(), field)
}

fn parse_replay(text: &str, origin: &str, field: &str) -> Result<Vec<(Dur, Dur)>, SimError> {
    let err = |line: usize, message: String| {
        SimError::Config(vec![Diagnostic {
            origin: origin.to_string(),
            line: Some(line),
            path: field.to_string(),
            message,
        }])
    };
    let mut rows = Vec::new();
    let mut header = false;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        if !header {
            if cells != ["start_s", "lifetime_s"] {
                return Err(err(i + 1, format!("header {line:?}; allowed: the header \"start_s,lifetime_s\"")));
            }
            header = true;
            continue;
        }
        if cells.len() != 2 {
            return Err(err(
                i + 1,
                format!("{line:?} has {} fields; allowed: two numbers \"start_s,lifetime_s\"", cells.len()),
            ));
        }
        let num = |s: &str, what: &str, positive: bool| -> Result<Dur, SimError> {
            let v: f64 = s
                .parse()
                .map_err(|_| err(i + 1, format!("{what} {s:?} is not a number; allowed: seconds such as 1.25")))?;
            let ok = v.is_finite() && if positive { v > 0.0 } else { v >= 0.0 } && v < 1.8e10;
            if !ok {
                let allowed = if positive { "a number of seconds > 0" } else { "a number of seconds >= 0" };
                return Err(err(i + 1, format!("{what} {s} is out of range; allowed: {allowed}")));
            }
            Ok(Dur::from_secs_f64(v))
        };
        let start = num(cells[0], "start_s", false)?;
        let life = num(cells[1], "lifetime_s", true)?;
        rows.push((start, Dur(life.0.max(1))));
    }
    if !header {
        return Err(err(1, "the file is empty; allowed: a header \"start_s,lifetime_s\" and one row per flow".into()));
    }
    rows.sort_by_key(|r| r.0);
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_reads_rows_sorted_and_names_bad_lines() {
        let rows =
            parse_replay("# rec\nstart_s,lifetime_s\n2.5, 1\n0,0.5\n\n", "f.csv", "traffic.0.arrivals.file").unwrap();
        assert_eq!(rows, vec![(Dur::ZERO, Dur::from_ms(500)), (Dur::from_ms(2500), Dur::from_secs(1))]);
        let e = parse_replay("start_s,lifetime_s\n1,2\n3,x\n", "f.csv", "traffic.0.arrivals.file").unwrap_err();
        assert_eq!(
            e.to_string(),
            "f.csv:3: traffic.0.arrivals.file: lifetime_s \"x\" is not a number; allowed: seconds such as 1.25"
        );
        let e = parse_replay("start,life\n", "f.csv", "p").unwrap_err();
        assert!(e.to_string().starts_with("f.csv:1: p: header"), "{e}");
        let e = parse_replay("start_s,lifetime_s\n-1,2\n", "f.csv", "p").unwrap_err();
        assert!(e.to_string().contains("allowed: a number of seconds >= 0"), "{e}");
        let e = parse_replay("start_s,lifetime_s\n1,0\n", "f.csv", "p").unwrap_err();
        assert!(e.to_string().contains("> 0"), "{e}");
        assert!(parse_replay("", "f.csv", "p").is_err());
    }

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
