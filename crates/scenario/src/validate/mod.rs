//! Semantic checks of a typed scenario: every rule that the types alone do
//! not enforce. All problems are reported at once, each as a [`Diagnostic`]
//! with the dotted path of the offending field, its line in the text when
//! it can be found, and what is allowed.
//!
//! | where | rule |
//! |---|---|
//! | `name` | non-empty; letters, digits, `_`, `-`, `.`; not starting with `.` (it names the result folder) |
//! | `duration` | > 0 |
//! | every link | `rate` > 0; `delay` ≥ 0; each queue builds ([`crate::registry::build_queue`] at the link's rate) |
//! | `default_queue` | builds |
//! | dumbbell | `sources` ≥ 1, `sinks` ≥ 1, `routers` 1 or 2; with one router exactly one sink and no `egress` |
//! | parking lot | `bottlenecks` ≥ 1; `hop_queues` empty or one per bottleneck, each builds |
//! | star | `ingresses` ≥ 1; `ingress_delays` empty or one per ingress |
//! | explicit | node names non-empty, unique, letters/digits/`_`/`-`/`.`; links join two different existing nodes |
//! | any preset | at most [`MAX_NODES`] nodes |
//! | traffic group | `name` non-empty, unique, letters/digits/`_`/`-` (flows are `name.i`) |
//! | `src`, `dst` | a node name or `prefix*`, matching at least one node, hosts only; no flow from a node to itself; a route through routers only (hosts do not forward) |
//! | `flows` | 1 to [`MAX_FLOWS`] (without `arrivals`) |
//! | CBR | exactly one of `rate`, `interval`; that one > 0 |
//! | Poisson | `rate` > 0 |
//! | ON/OFF | exactly one of `peak`, `interval`; > 0; `on`, `off` > 0; Pareto `shape` > 1 (finite mean) |
//! | `size` | payload ≥ 1 B (`base` ≥ 1 B for random sizes); payload + `header` ≤ 65535 B (an IP packet) |
//! | `dscp` | 0 to 63 |
//! | `start`, `stop` | `start` < `duration`; `stop` > `start` |
//! | `arrivals` | rates > 0; `batch_mean` ≥ 1; `lifetime` > 0; `alive` ≥ 1; `max_flows` ≥ 1; the replay file exists and reads ([`crate::files`], each problem at its own `file:line`) |
//! | `reserve` | > 0 |
//! | `shaper` | `rate` > 0, required unless `admission` is `shaping_cac`; `depth` one value ≥ 1, in bytes for random sizes, not below the wire size for fixed sizes; `buffer` ≥ 1 |
//! | `admission` (`shaping_cac`) | `scheme` 1, 2 or 3; `capacity`, `r_req` > 0; `buffer` ≥ 1; 0 < `iplr` < 1; `k` > 1, finite |
//! | TCP, MM_APP, `loss` | see [`tcp`] |
//! | `metrics` | `bin`, `series_interval`, `interarrival_bin` > 0; `interarrival_bin` < `interarrival_max`; at most [`MAX_SAMPLES`] bins/samples; traced flows and groups exist |
//!
//! | the whole run | estimated peak memory and events within [`Limits`] (see [`estimate`]) |
//!
//! Decisions:
//! - A dumbbell with one router has its bottleneck on `r0 -> sink0`; a
//!   second sink would hang off `r0` on a link of its own, outside the
//!   bottleneck, which is never what a dumbbell means. So one router
//!   requires `sinks = 1` and no `egress` (both refused, not ignored); use
//!   `routers = 2` for several sinks behind one bottleneck.
//! - Flows take the matches of `src` and `dst` in turn: flow `i` goes from
//!   the `i mod n_src`-th match to the `i mod n_dst`-th. Groups with
//!   `arrivals` are checked over one full cycle of pairs.
//! - A class tag beyond a priority queue's bands goes to the last band
//!   ([`qoslab_core::qdisc::classful::TagClassifier::identity`]): not an error.
//! - Caps on counts ([`MAX_NODES`], [`MAX_FLOWS`], [`MAX_SAMPLES`]) turn a
//!   typo (`sources = 4000000000`) into an error instead of an
//!   out-of-memory crash.

use super::expand::{expand, Expanded};
use super::load::Lines;
use super::model::*;
use crate::error::Diagnostic;
use crate::registry::build_queue;
use qoslab_core::units::{Dur, Rate};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Most nodes a topology may have.
pub const MAX_NODES: u64 = 1_000_000;
/// Most fixed flows a traffic group may have.
pub const MAX_FLOWS: u32 = 1_000_000;
/// Most time bins or samples per entity (`duration / bin`, `duration /
/// series_interval`, `interarrival_max / interarrival_bin`).
pub const MAX_SAMPLES: u64 = 10_000_000;
/// Largest packet on the wire, payload plus header (an IP packet).
pub const MAX_PACKET: u64 = 65_535;
/// Longest scenario or traffic group name, in characters (ASCII): it names
/// result folders (`NAME-testbed`, `sweep_NAME`) and files
/// (`arrivals_NAME.csv`), which must fit the 255 bytes a file name may have.
pub const MAX_NAME: usize = 240;
/// Longest node name: two of them name a trace file (`A_to_B.pcapng`).
pub const MAX_NODE_NAME: usize = 120;

/// A scenario that passed [`validate`], the only way to make one (its
/// field is private). The simulator and the router take this type, so they
/// never see an unchecked scenario and never check one again: every
/// problem has one message, this module's. Reading goes through `Deref`;
/// to change a scenario, take it out ([`ValidScenario::into_scenario`]),
/// change it and validate it again. Serializes as the scenario (the echo).
///
/// A valid scenario may still carry **warnings**: input that is legal but
/// almost surely a mistake (a RED threshold above the queue's limit, flows
/// whose start jitter outlasts the run, ...), each a [`Diagnostic`] like an
/// error's. They are not part of the echo; every front prints them
/// (`qoslab validate` and `qoslab run` on stderr, `Scenario.warnings` in
/// Python).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(transparent)]
pub struct ValidScenario {
    scenario: Scenario,
    #[serde(skip)]
    warnings: Vec<Diagnostic>,
}

impl ValidScenario {
    /// The scenario, for reading.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }
    /// The scenario, to change it (and validate it again).
    pub fn into_scenario(self) -> Scenario {
        self.scenario
    }
    /// What validation found legal but almost surely a mistake.
    pub fn warnings(&self) -> &[Diagnostic] {
        &self.warnings
    }
    pub(crate) fn warnings_mut(&mut self) -> &mut Vec<Diagnostic> {
        &mut self.warnings
    }
    /// A validated scenario's echo as this build wrote it (`serde_json`),
    /// read back without validating again: for handing a scenario to another
    /// process of the same build (a sweep worker). The echo holds every
    /// field, so the scenario read back equals the one written (a test
    /// checks it for every scenario file). An echo from anywhere else must
    /// be loaded and validated instead.
    pub fn restore(echo: &str) -> Result<ValidScenario, serde_json::Error> {
        serde_json::from_str(echo).map(|scenario| ValidScenario { scenario, warnings: Vec::new() })
    }
}

impl std::ops::Deref for ValidScenario {
    type Target = Scenario;
    fn deref(&self) -> &Scenario {
        &self.scenario
    }
}

/// Checks `s`; `text` is the scenario's TOML source (for line numbers; may
/// be empty), `base_dir` the folder relative file names are resolved
/// against (`None`: the current directory).
pub fn validate(
    s: Scenario,
    origin: &str,
    text: &str,
    base_dir: Option<&Path>,
) -> Result<ValidScenario, Vec<Diagnostic>> {
    let lines = Lines::parse(text).unwrap_or_default();
    validate_with_lines(s, origin, &lines, base_dir, Limits::default())
}

/// [`validate`] with the text already indexed.
pub(crate) fn validate_with_lines(
    s: Scenario,
    origin: &str,
    lines: &Lines,
    base_dir: Option<&Path>,
    limits: Limits,
) -> Result<ValidScenario, Vec<Diagnostic>> {
    let mut c = Checker {
        origin,
        lines,
        base_dir,
        out: Vec::new(),
        warnings: Vec::new(),
        replay_rows: BTreeMap::new(),
        limits,
    };
    c.scenario(&s, base_dir);
    if c.out.is_empty() {
        Ok(ValidScenario { scenario: s, warnings: c.warnings })
    } else {
        Err(c.out)
    }
}

struct Checker<'a> {
    origin: &'a str,
    lines: &'a Lines,
    /// Where relative file names (MACE descriptor files) are looked up.
    base_dir: Option<&'a Path>,
    out: Vec<Diagnostic>,
    /// Legal input that is almost surely a mistake (see [`ValidScenario`]).
    warnings: Vec<Diagnostic>,
    /// Rows of each replay file read, by the path of its `file` field.
    replay_rows: BTreeMap<String, u64>,
    /// The most the run may be estimated to need.
    limits: Limits,
}

/// `a, b, c, ... (N more)`: at most 12 names.
fn names_list<S: AsRef<str>>(names: &[S]) -> String {
    const SHOWN: usize = 12;
    let mut s = names.iter().take(SHOWN).map(|n| n.as_ref()).collect::<Vec<_>>().join(", ");
    if names.len() > SHOWN {
        s.push_str(&format!(", ... ({} more)", names.len() - SHOWN));
    }
    if s.is_empty() {
        s.push_str("(none)");
    }
    s
}

/// Edit distance (optimal string alignment: insertions, deletions,
/// substitutions and swaps of neighbours each cost 1), on characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

/// The (at most 3) names closest to `name`, nearest first; only names
/// within a third of its length (at least 1 edit; case is ignored) are
/// offered.
fn closest<'n, S: AsRef<str>>(name: &str, names: &'n [S]) -> Vec<&'n str> {
    let limit = (name.chars().count() / 3).max(1);
    let lower = name.to_lowercase();
    let mut scored: Vec<(usize, &str)> = names
        .iter()
        .map(|n| n.as_ref())
        .map(|n| (edit_distance(&lower, &n.to_lowercase()), n))
        .filter(|(d, _)| *d <= limit)
        .collect();
    scored.sort();
    scored.into_iter().take(3).map(|(_, n)| n).collect()
}

/// `no node named "x"; did you mean "y"? allowed: ...` with the closest
/// names first, so that the one meant is not hidden behind "(29 more)".
fn unknown_name<S: AsRef<str>>(what: &str, name: &str, names: &[S]) -> String {
    let near = closest(name, names);
    let hint = if near.is_empty() {
        String::new()
    } else {
        format!(" did you mean {}?", near.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(" or "))
    };
    format!("no {what} named {name:?};{hint} allowed: {}", names_list(names))
}

fn is_name(s: &str, extra: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || extra.contains(c))
}

pub mod estimate;
mod shaping;
mod tcp;

pub use estimate::{estimate, Estimate, Limits};
mod topology;
mod traffic;

impl Checker<'_> {
    fn err(&mut self, path: impl Into<String>, message: impl Into<String>) {
        let path = path.into();
        self.out.push(Diagnostic {
            origin: self.origin.to_string(),
            line: self.lines.line_of(&path),
            path,
            message: message.into(),
        });
    }

    /// A warning: legal, but almost surely a mistake (see [`ValidScenario`]).
    fn warn(&mut self, path: impl Into<String>, message: impl Into<String>) {
        let path = path.into();
        self.warnings.push(Diagnostic {
            origin: self.origin.to_string(),
            line: self.lines.line_of(&path),
            path,
            message: message.into(),
        });
    }

    /// Did the scenario's text set `path` (a default the user never wrote is not in it)?
    fn written(&self, path: &str) -> bool {
        self.lines.has(path)
    }

    fn positive_dur(&mut self, path: &str, d: Dur) {
        if d.0 == 0 {
            self.err(path, "must be greater than 0; allowed: a positive duration such as \"10ms\"");
        }
    }

    fn positive_rate(&mut self, path: &str, r: Rate) {
        if r.0 == 0 {
            self.err(path, "must be greater than 0; allowed: a positive rate such as \"25Mbps\"");
        }
    }

    fn scenario(&mut self, s: &Scenario, base_dir: Option<&Path>) {
        if !is_name(&s.name, ".") || s.name.starts_with('.') {
            self.err(
                "name",
                format!(
                    "{:?} cannot name a result folder; allowed: letters, digits, \"_\", \"-\", \".\" (not first)",
                    s.name
                ),
            );
        } else if s.name.len() > MAX_NAME {
            self.err(
                "name",
                format!(
                    "is {} characters long; allowed: at most {MAX_NAME} (it names the result folder, whose name \
                     must fit in 255 bytes with \"sweep_\" or \"-testbed\" added)",
                    s.name.len()
                ),
            );
        }
        self.positive_dur("duration", s.duration);
        let topology_ok = self.topology(&s.topology);
        // Node names are only meaningful once the topology's counts are sane.
        let net = topology_ok.then(|| expand(&s.topology));
        self.traffic(s, net.as_ref(), base_dir);
        self.shaping(s);
        self.metrics(s);
        self.tcp_series(s);
        if let Some(net) = &net {
            self.stages(net);
            self.trace(s, net);
            self.pcn(s, net);
            self.series(s, net);
            // The estimate needs a scenario that is otherwise valid.
            if self.out.is_empty() {
                self.resources(s, net);
            }
        }
    }

    /// `[trace] pcap`: each entry names a link direction (`from->to`), once.
    fn trace(&mut self, s: &Scenario, net: &Expanded) {
        let dirs = direction_names(net);
        for (i, d) in s.trace.pcap.iter().enumerate() {
            if s.trace.pcap[..i].contains(d) {
                self.err(format!("trace.pcap.{i}"), format!("{d:?} is listed twice; allowed: each direction once"));
            } else if !dirs.contains(d) {
                let shown: Vec<&str> = dirs.iter().take(20).map(String::as_str).collect();
                let more = if dirs.len() > 20 { format!(" ({} more)", dirs.len() - 20) } else { String::new() };
                self.err(
                    format!("trace.pcap.{i}"),
                    format!("{d:?} names no link direction; allowed: \"from->to\": {}{more}", shown.join(", ")),
                );
            }
        }
    }

    /// `metrics.series`: each pattern names at least one link direction.
    fn series(&mut self, s: &Scenario, net: &Expanded) {
        let dirs = direction_names(net);
        for (i, pat) in s.metrics.series.iter().enumerate() {
            if !dirs.iter().any(|d| crate::model::glob_match(pat, d)) {
                let shown: Vec<&str> = dirs.iter().take(12).map(String::as_str).collect();
                self.err(
                    format!("metrics.series.{i}"),
                    format!(
                        "{pat:?} matches no link direction; allowed: \"from->to\" names, * for any text, e.g. {}",
                        shown.join(", ")
                    ),
                );
            }
        }
    }

    /// `[pcn]`: its settings as the core checks them, and its edge routers.
    fn pcn(&mut self, s: &Scenario, net: &Expanded) {
        let Some(p) = &s.pcn else { return };
        if let Err(e) = crate::registry::pcn::edge_config(p) {
            self.err(format!("pcn.{}", e.field_path), e.message);
        }
        if let Err(es) = crate::registry::pcn::edge_nodes(p, &net.nodes) {
            for e in es {
                self.err(format!("pcn.{}", e.field_path), e.message);
            }
        }
    }

    fn metrics(&mut self, s: &Scenario) {
        let m = &s.metrics;
        // Too many bins: blamed on the step if the user wrote it, else on the span
        // (`duration = "1000000h"` with the default bin is the duration's problem).
        let samples = |c: &mut Self, path: &str, span_path: &str, span: Dur, step: Dur, what: &str| {
            if step.0 == 0 {
                c.positive_dur(path, step);
            } else if span.0 / step.0 > MAX_SAMPLES {
                let n = span.0 / step.0;
                if c.written(path) || !c.written(span_path) {
                    c.err(
                        path,
                        format!(
                            "{step} gives {n} {what} ({span_path} = {span}); allowed: at most {MAX_SAMPLES} (a \
                             larger step, or a shorter {span_path})"
                        ),
                    );
                } else {
                    c.err(
                        span_path,
                        format!(
                            "{span} gives {n} {what} of {path} = {step} (its default); allowed: at most \
                             {MAX_SAMPLES}: a shorter {span_path}, or a larger {path}"
                        ),
                    );
                }
            }
        };
        samples(self, "metrics.bin", "duration", s.duration, m.bin, "bins over the run");
        samples(self, "metrics.series_interval", "duration", s.duration, m.series_interval, "samples over the run");
        samples(
            self,
            "metrics.interarrival_bin",
            "metrics.interarrival_max",
            m.interarrival_max,
            m.interarrival_bin,
            "histogram bins",
        );
        if m.interarrival_bin.0 > 0 && m.interarrival_bin >= m.interarrival_max {
            self.err(
                "metrics.interarrival_bin",
                format!(
                    "{} is not below interarrival_max ({}); allowed: a bin narrower than interarrival_max",
                    m.interarrival_bin, m.interarrival_max
                ),
            );
        }
        let groups: BTreeMap<&str, &TrafficGroup> = s.traffic.iter().map(|g| (g.name.as_str(), g)).collect();
        let group_names: Vec<&str> = s.traffic.iter().map(|g| g.name.as_str()).collect();
        let flow_names: Vec<String> = s
            .traffic
            .iter()
            .map(|g| match (&g.arrivals, g.flows) {
                (Some(_), _) => format!("{}.<n>", g.name),
                (None, 0) => format!("{} (no flows)", g.name),
                (None, 1) => format!("{}.0", g.name),
                (None, n) => format!("{}.0..{}.{}", g.name, g.name, n - 1),
            })
            .collect();
        for (i, f) in m.trace_flows.iter().enumerate() {
            let ok = f.rsplit_once('.').is_some_and(|(g, idx)| {
                groups.get(g).is_some_and(|g| match idx.parse::<u32>() {
                    Ok(k) => g.arrivals.is_some() || k < g.flows,
                    Err(_) => false,
                })
            });
            if !ok {
                self.err(
                    format!("metrics.trace_flows.{i}"),
                    format!("no flow named {f:?}; allowed: {}", names_list(&flow_names)),
                );
            }
        }
        for (i, g) in m.trace_groups.iter().enumerate() {
            if !groups.contains_key(g.as_str()) {
                self.err(
                    format!("metrics.trace_groups.{i}"),
                    format!("no traffic group named {g:?}; allowed: {}", names_list(&group_names)),
                );
            }
        }
    }
}

/// Every link direction's name, `"from->to"`, both directions of each link in order.
fn direction_names(net: &Expanded) -> Vec<String> {
    let name = |i: usize| net.nodes.get(i).map_or("?", |(n, _)| n.as_str());
    net.links
        .iter()
        .flat_map(|l| [format!("{}->{}", name(l.a), name(l.b)), format!("{}->{}", name(l.b), name(l.a))])
        .collect()
}

/// Scenarios and helpers shared by the tests of the validation modules.
#[cfg(test)]
mod testkit {
    use super::*;

    pub(super) const BASE: &str = r#"
name = "t"
duration = "10s"

[topology]
preset = "dumbbell"
sources = 2
access = { rate = "100Mbps", delay = "1ms" }
bottleneck = { rate = "10Mbps", delay = "10ms", queue = { type = "red", limit = "60pkts", min_th = 5, max_th = 15 } }

[[traffic]]
name = "cbr"
model = "cbr"
flows = 2
src = "src*"
dst = "sink0"
rate = "1Mbps"
size = "1000B"
"#;

    pub(super) const EXPLICIT: &str = r#"
name = "t"
duration = "10s"

[topology]
preset = "explicit"
nodes = [{ name = "h0", kind = "host" }, { name = "r0", kind = "router" }, { name = "h1", kind = "host" }]
links = [
  { a = "h0", b = "r0", rate = "10Mbps", delay = "1ms" },
  { a = "r0", b = "h1", rate = "10Mbps", delay = "1ms" },
]

[[traffic]]
name = "g"
model = "cbr"
src = "h0"
dst = "h1"
rate = "1Mbps"
size = "100B"
"#;

    /// (path, message) of every problem in `text`, replay files looked up in `dir`.
    pub(super) fn problems_in(text: &str, dir: Option<&Path>) -> Vec<(String, String)> {
        let s: Scenario = toml::from_str(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        match validate(s, "t.toml", text, dir) {
            Ok(_) => Vec::new(),
            Err(ds) => ds.into_iter().map(|d| (d.path, d.message)).collect(),
        }
    }
    pub(super) fn problems(text: &str) -> Vec<(String, String)> {
        problems_in(text, None)
    }
    /// `BASE` with `from` replaced by `to`; the paths of its problems.
    pub(super) fn paths_with(base: &str, from: &str, to: &str) -> Vec<String> {
        assert!(base.contains(from), "{from:?}");
        problems(&base.replace(from, to)).into_iter().map(|(p, _)| p).collect()
    }
    /// The one problem at `path`, its message.
    pub(super) fn message(text: &str, path: &str) -> String {
        let ps = problems(text);
        let hits: Vec<&String> = ps.iter().filter(|(p, _)| p == path).map(|(_, m)| m).collect();
        assert_eq!(hits.len(), 1, "{path}: {ps:?}");
        hits[0].clone()
    }
    pub(super) fn with_group(extra: &str) -> String {
        format!("{BASE}{extra}\n")
    }
}

#[cfg(test)]
mod tests {
    use super::testkit::*;
    use super::*;

    #[test]
    fn closest_names_are_offered_nearest_first() {
        let names = ["sink0", "sink1", "src0", "r0"];
        assert_eq!(closest("snik0", &names), ["sink0"]);
        assert_eq!(closest("SINK1", &names), ["sink1", "sink0"]);
        assert_eq!(closest("r9", &names), ["r0"]);
        assert_eq!(closest("zzzzzzzz", &names), Vec::<&str>::new());
        assert_eq!(edit_distance("宛先", "宛先"), 0);
        assert_eq!(edit_distance("ab", "ba"), 1);
        assert_eq!(
            unknown_name("node", "snik0", &names),
            "no node named \"snik0\"; did you mean \"sink0\"? allowed: sink0, sink1, src0, r0"
        );
    }

    #[test]
    fn the_base_scenarios_are_valid() {
        assert_eq!(problems(BASE), vec![]);
        assert_eq!(problems(EXPLICIT), vec![]);
    }

    #[test]
    fn duration_must_be_positive_and_the_name_must_name_a_folder() {
        assert_eq!(paths_with(BASE, "duration = \"10s\"", "duration = \"0s\""), ["duration"]);
        assert_eq!(paths_with(BASE, "name = \"t\"", "name = \"\""), ["name"]);
        assert_eq!(paths_with(BASE, "name = \"t\"", "name = \"../up\""), ["name"]);
        assert_eq!(paths_with(BASE, "name = \"t\"", "name = \"a b\""), ["name"]);
        assert_eq!(paths_with(BASE, "name = \"t\"", "name = \"run-1.v2_x\""), Vec::<String>::new());
    }

    #[test]
    fn metrics_steps_are_positive_and_bounded() {
        let m = |s: &str| paths_with(BASE, "name = \"t\"", &format!("name = \"t\"\nmetrics = {{ {s} }}"));
        assert_eq!(m("bin = \"0s\""), ["metrics.bin"]);
        assert_eq!(m("series_interval = \"0s\""), ["metrics.series_interval"]);
        assert_eq!(m("series_interval = \"100ns\""), ["metrics.series_interval"], "10^8 samples");
        assert_eq!(m("interarrival_bin = \"0s\""), ["metrics.interarrival_bin"]);
        assert_eq!(m("interarrival_bin = \"5ms\", interarrival_max = \"5ms\""), ["metrics.interarrival_bin"]);
        assert_eq!(m("interarrival_bin = \"1ms\", interarrival_max = \"5ms\""), Vec::<String>::new());
    }

    #[test]
    fn traced_flows_and_groups_must_exist() {
        let m = |s: &str| paths_with(BASE, "name = \"t\"", &format!("name = \"t\"\nmetrics = {{ {s} }}"));
        assert_eq!(m("trace_flows = [\"cbr.1\"], trace_groups = [\"cbr\"]"), Vec::<String>::new());
        assert_eq!(
            m("trace_flows = [\"cbr.0\", \"cbr.2\", \"cbr\", \"x.0\"]"),
            ["metrics.trace_flows.1", "metrics.trace_flows.2", "metrics.trace_flows.3"]
        );
        assert_eq!(m("trace_groups = [\"x\"]"), ["metrics.trace_groups.0"]);
        // Groups with arrivals number their flows as they come: any index.
        let arr = BASE
            .replace(
                "size = \"1000B\"",
                "size = \"1000B\"\narrivals = { process = \"keep_alive\", alive = 1, lifetime = \"1s\" }",
            )
            .replace("name = \"t\"", "name = \"t\"\nmetrics = { trace_flows = [\"cbr.57\"] }");
        assert_eq!(problems(&arr), vec![]);
    }

    #[test]
    fn problems_carry_the_line_of_their_field() {
        let text = BASE.replace("sources = 2", "sources = 0");
        let s: Scenario = toml::from_str(&text).unwrap();
        let ds = validate(s.clone(), "t.toml", &text, None).unwrap_err();
        let line = text.lines().position(|l| l == "sources = 0").unwrap() + 1;
        assert_eq!(ds[0].to_string(), format!("t.toml:{line}: topology.sources: 0 is too few; allowed: at least 1"));
        // Without text, no line.
        let ds = validate(s, "<built>", "", None).unwrap_err();
        assert_eq!(ds[0].line, None);
    }
}
