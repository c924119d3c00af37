//! What to measure beyond the defaults: bins, sampling, traces.

use crate::units;
use qoslab_core::units::Dur;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

fn default_bin() -> Dur {
    Dur::from_secs(10)
}

/// Runs shorter than this get a default bin of a tenth of their duration
/// ([`bin_for`]); longer ones 10 s.
pub const SHORT_RUN: Dur = Dur(30_000_000_000);

/// The default `metrics.bin` for a run of `duration`: 10 s, or for runs
/// shorter than [`SHORT_RUN`] a tenth of the duration rounded down to 1, 2
/// or 5 × 10^k (at least 1 ms), so that a short run has about ten bins
/// instead of one. (Runs of 30 s and more keep 10 s: their results are
/// those of earlier versions.)
pub fn bin_for(duration: Dur) -> Dur {
    if duration >= SHORT_RUN {
        return default_bin();
    }
    let tenth = (duration.0 / 10).max(1_000_000);
    let mut step = 1_000_000u64;
    while step * 10 <= tenth {
        step *= 10;
    }
    let nice = [5, 2, 1].into_iter().map(|m| m * step).find(|&s| s <= tenth).unwrap_or(step);
    Dur(nice)
}
fn default_series_interval() -> Dur {
    Dur::from_ms(100)
}
fn default_hist_bin() -> Dur {
    Dur::from_ms(1)
}
fn default_hist_max() -> Dur {
    Dur::from_ms(200)
}

/// What to measure beyond the defaults.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MetricsSpec {
    /// Width of the per-flow counter bins (sent/delivered/dropped per period). Default
    /// 10 s; for runs shorter than 30 s a tenth of the duration (1, 2 or 5 × 10^k).
    #[serde(default = "default_bin", with = "units::dur")]
    #[schemars(with = "crate::schema::DurText")]
    pub bin: Dur,
    /// Interval at which queues (backlog, averages) and links are sampled.
    #[serde(default = "default_series_interval", with = "units::dur")]
    #[schemars(with = "crate::schema::DurText")]
    pub series_interval: Dur,
    /// Per-packet delay traces for these flows (names such as "cbr.3")...
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trace_flows: Vec<String>,
    /// ...and for every flow of these groups.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trace_groups: Vec<String>,
    /// Inter-arrival histogram bin width at the receiver.
    #[serde(default = "default_hist_bin", with = "units::dur")]
    #[schemars(with = "crate::schema::DurText")]
    pub interarrival_bin: Dur,
    /// Inter-arrivals at or above this go to the overflow bin.
    #[serde(default = "default_hist_max", with = "units::dur")]
    #[schemars(with = "crate::schema::DurText")]
    pub interarrival_max: Dur,
    /// cwnd / ssthresh / SRTT / RTO series, every `series_interval`, for
    /// every flow of these TCP groups.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tcp_series: Vec<String>,
    /// The link directions whose queues are sampled into the series table:
    /// names `"from->to"` with `*` matching any text (`"r0->*"`). Default:
    /// every direction leaving a router that carries packets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<String>,
    /// Per-flow histograms: each flow's delay percentiles (`delay_p50_s`,
    /// `delay_p99_s` of the flows table) and inter-arrival histogram. `false`
    /// leaves both out (the percentiles NaN, no inter-arrival rows): a run of
    /// thousands of flows that reads neither spends about a fifth less CPU
    /// (docs/performance.md). Default `true`; echoed only when `false`.
    #[serde(default = "super::yes", skip_serializing_if = "super::is_true")]
    pub flow_histograms: bool,
}

/// Does `name` match `pattern`, where `*` matches any text (also none)?
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for p in &parts[1..parts.len() - 1] {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    true
}

impl Default for MetricsSpec {
    fn default() -> Self {
        MetricsSpec {
            bin: default_bin(),
            series_interval: default_series_interval(),
            trace_flows: Vec::new(),
            trace_groups: Vec::new(),
            interarrival_bin: default_hist_bin(),
            interarrival_max: default_hist_max(),
            tcp_series: Vec::new(),
            series: Vec::new(),
            flow_histograms: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn globs_match_any_text_at_their_stars() {
        assert!(glob_match("r0->r1", "r0->r1"));
        assert!(!glob_match("r0->r1", "r0->r10"));
        assert!(glob_match("r0->*", "r0->sink0"));
        assert!(glob_match("*->r1", "in12->r1"));
        assert!(glob_match("in*->r*", "in3->r0"));
        assert!(!glob_match("in*->r*", "src3->in3"));
        assert!(glob_match("*", "a->b"));
        assert!(!glob_match("a*a", "a"));
    }
}
