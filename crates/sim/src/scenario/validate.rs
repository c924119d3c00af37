//! Semantic checks of a typed scenario: every rule that the types alone do
//! not enforce. All problems are reported at once, each as a [`Diagnostic`]
//! with the dotted path of the offending field, its line in the text when
//! it can be found, and what is allowed.
//!
//! | where | rule |
//! |---|---|
//! | `name` | non-empty; letters, digits, `_`, `-`, `.`; not starting with `.` (it names the result folder) |
//! | `duration` | > 0 |
//! | every link | `rate` > 0; `delay` ≥ 0; each queue builds ([`crate::qbuild::build_queue`] at the link's rate) |
//! | `default_queue` | builds |
//! | dumbbell | `sources` ≥ 1, `sinks` ≥ 1, `routers` 1 or 2; with one router exactly one sink and no `egress` |
//! | parking lot | `bottlenecks` ≥ 1 |
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
//! | `arrivals` | rates > 0; `batch_mean` ≥ 1; `lifetime` > 0; `alive` ≥ 1; `max_flows` ≥ 1; replay file exists |
//! | `reserve` | > 0 |
//! | `metrics` | `bin`, `series_interval`, `interarrival_bin` > 0; `interarrival_bin` < `interarrival_max`; at most [`MAX_SAMPLES`] bins/samples; traced flows and groups exist |
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
//!   ([`qoslab_core::classful::TagClassifier::identity`]): not an error.
//! - Caps on counts ([`MAX_NODES`], [`MAX_FLOWS`], [`MAX_SAMPLES`]) turn a
//!   typo (`sources = 4000000000`) into an error instead of an
//!   out-of-memory crash.

use super::expand::{expand, Expanded};
use super::load::Lines;
use super::model::*;
use crate::error::Diagnostic;
use crate::qbuild::build_queue;
use qoslab_core::units::{Dur, Rate};
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

/// Checks `s`; `text` is the scenario's TOML source (for line numbers; may
/// be empty), `base_dir` the folder relative file names are resolved
/// against (`None`: the current directory).
pub fn validate(s: &Scenario, origin: &str, text: &str, base_dir: Option<&Path>) -> Result<(), Vec<Diagnostic>> {
    let lines = Lines::parse(text).unwrap_or_default();
    validate_with_lines(s, origin, &lines, base_dir)
}

/// [`validate`] with the text already indexed.
pub(crate) fn validate_with_lines(
    s: &Scenario,
    origin: &str,
    lines: &Lines,
    base_dir: Option<&Path>,
) -> Result<(), Vec<Diagnostic>> {
    let mut c = Checker { origin, lines, out: Vec::new() };
    c.scenario(s, base_dir);
    if c.out.is_empty() {
        Ok(())
    } else {
        Err(c.out)
    }
}

struct Checker<'a> {
    origin: &'a str,
    lines: &'a Lines,
    out: Vec<Diagnostic>,
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

fn is_name(s: &str, extra: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || extra.contains(c))
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

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
        }
        self.positive_dur("duration", s.duration);
        let topology_ok = self.topology(&s.topology);
        // Node names are only meaningful once the topology's counts are sane.
        let net = topology_ok.then(|| expand(&s.topology));
        self.traffic(s, net.as_ref(), base_dir);
        self.metrics(s);
    }

    fn link(&mut self, path: &str, l: &LinkSpec) {
        self.positive_rate(&format!("{path}.rate"), l.rate);
        if l.rate.0 == 0 {
            return; // the queues need a rate; the rate's problem is reported
        }
        for (field, q) in [("queue", &l.queue), ("reverse_queue", &l.reverse_queue)] {
            if let Some(q) = q {
                self.queue(&format!("{path}.{field}"), q, l.rate);
            }
        }
    }

    fn queue(&mut self, path: &str, q: &QueueSpec, rate: Rate) {
        if let Err(e) = build_queue(q, rate) {
            self.err(format!("{path}.{}", e.field_path), e.error.to_string());
        }
    }

    fn count(&mut self, path: &str, n: u32, min: u32) {
        if n < min {
            self.err(path, format!("{n} is too few; allowed: at least {min}"));
        }
    }

    /// Checks the topology; `false` if its counts are unusable (so node
    /// names cannot be checked).
    fn topology(&mut self, t: &Topology) -> bool {
        let before = self.out.len();
        let (links, default_queue): (Vec<(String, &LinkSpec)>, &QueueSpec) = match t {
            Topology::Dumbbell { sources, sinks, routers, access, bottleneck, egress, default_queue } => {
                self.count("topology.sources", *sources, 1);
                self.count("topology.sinks", *sinks, 1);
                if !(1..=2).contains(routers) {
                    self.err("topology.routers", format!("{routers} routers; allowed: 1 or 2"));
                }
                if *routers == 1 && *sinks > 1 {
                    self.err(
                        "topology.sinks",
                        format!(
                            "{sinks} sinks with one router; allowed: 1 (the bottleneck is r0 -> sink0), \
                             or set routers = 2 for several sinks behind one bottleneck"
                        ),
                    );
                }
                if *routers == 1 && egress.is_some() {
                    self.err(
                        "topology.egress",
                        "is unused with one router (the bottleneck r0 -> sink0 is the only link to a sink); \
                         allowed: remove it, or set routers = 2",
                    );
                }
                let n = *sources as u64 + *sinks as u64 + 2;
                self.max_nodes(n);
                let mut l =
                    vec![("topology.access".to_string(), access), ("topology.bottleneck".to_string(), bottleneck)];
                if let Some(e) = egress {
                    l.push(("topology.egress".to_string(), e));
                }
                (l, default_queue)
            }
            Topology::ParkingLot { bottlenecks, access, bottleneck, egress, default_queue } => {
                self.count("topology.bottlenecks", *bottlenecks, 1);
                self.max_nodes(3 * *bottlenecks as u64 + 3);
                let mut l =
                    vec![("topology.access".to_string(), access), ("topology.bottleneck".to_string(), bottleneck)];
                if let Some(e) = egress {
                    l.push(("topology.egress".to_string(), e));
                }
                (l, default_queue)
            }
            Topology::Star { ingresses, access, ingress_delays, bottleneck, egress, default_queue } => {
                self.count("topology.ingresses", *ingresses, 1);
                if !ingress_delays.is_empty() && ingress_delays.len() != *ingresses as usize {
                    self.err(
                        "topology.ingress_delays",
                        format!(
                            "has {} entries for {ingresses} ingresses; allowed: none (every ingress uses \
                             access.delay) or exactly {ingresses}",
                            ingress_delays.len()
                        ),
                    );
                }
                self.max_nodes(*ingresses as u64 + 3);
                let mut l =
                    vec![("topology.access".to_string(), access), ("topology.bottleneck".to_string(), bottleneck)];
                if let Some(e) = egress {
                    l.push(("topology.egress".to_string(), e));
                }
                (l, default_queue)
            }
            Topology::Explicit { nodes, links, default_queue } => {
                self.explicit(nodes, links);
                let l = links.iter().enumerate().map(|(i, l)| (format!("topology.links.{i}"), &l.link)).collect();
                (l, default_queue)
            }
        };
        for (path, l) in &links {
            self.link(path, l);
        }
        let rate = links.iter().map(|(_, l)| l.rate).find(|r| r.0 > 0).unwrap_or(Rate(1));
        self.queue("topology.default_queue", default_queue, rate);
        self.out.len() == before
    }

    fn max_nodes(&mut self, n: u64) {
        if n > MAX_NODES {
            self.err("topology", format!("has {n} nodes; allowed: at most {MAX_NODES}"));
        }
    }

    fn explicit(&mut self, nodes: &[NodeSpec], links: &[ExplicitLink]) {
        if nodes.is_empty() {
            self.err("topology.nodes", "is empty; allowed: a list of nodes ({name = \"h0\", kind = \"host\"}, ...)");
        }
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, n) in nodes.iter().enumerate() {
            let path = format!("topology.nodes.{i}.name");
            if !is_name(&n.name, ".") {
                self.err(
                    path,
                    format!("{:?} is not a node name; allowed: letters, digits, \"_\", \"-\", \".\"", n.name),
                );
            } else if let Some(j) = seen.insert(&n.name, i) {
                self.err(
                    path,
                    format!("{:?} is already the name of topology.nodes.{j}; allowed: unique names", n.name),
                );
            }
        }
        let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
        for (i, l) in links.iter().enumerate() {
            for (end, name) in [("a", &l.a), ("b", &l.b)] {
                if !seen.contains_key(name.as_str()) {
                    self.err(
                        format!("topology.links.{i}.{end}"),
                        format!("no node named {name:?}; nodes: {}", names_list(&names)),
                    );
                }
            }
            if l.a == l.b {
                self.err(
                    format!("topology.links.{i}.b"),
                    format!("links node {:?} to itself; allowed: two different nodes", l.a),
                );
            }
        }
    }

    /// The nodes `pattern` matches, if it is well formed and matches hosts only.
    fn endpoints(&mut self, path: &str, pattern: &str, net: &Expanded) -> Option<Vec<usize>> {
        let allowed = "a node name, or a prefix followed by \"*\" (\"src*\")";
        let star = pattern.find('*');
        if pattern.is_empty() || star.is_some_and(|i| i + 1 != pattern.len()) {
            self.err(path, format!("{pattern:?} is not a node pattern; allowed: {allowed}"));
            return None;
        }
        let hosts: Vec<&str> =
            net.nodes.iter().filter(|(_, k)| *k == NodeKind::Host).map(|(n, _)| n.as_str()).collect();
        let m = net.resolve(pattern);
        if m.is_empty() {
            self.err(path, format!("{pattern:?} matches no node; allowed: hosts {}", names_list(&hosts)));
            return None;
        }
        if let Some(&r) = m.iter().find(|&&i| net.nodes[i].1 == NodeKind::Router) {
            self.err(
                path,
                format!(
                    "{pattern:?} matches router {:?}; allowed: hosts only ({})",
                    net.nodes[r].0,
                    names_list(&hosts)
                ),
            );
            return None;
        }
        Some(m)
    }

    fn traffic(&mut self, s: &Scenario, net: Option<&Expanded>, base_dir: Option<&Path>) {
        let mut names: BTreeMap<&str, usize> = BTreeMap::new();
        let mut reach = net.map(Reach::new);
        for (gi, g) in s.traffic.iter().enumerate() {
            let p = |f: &str| format!("traffic.{gi}.{f}");
            if !is_name(&g.name, "") {
                self.err(
                    p("name"),
                    format!("{:?} is not a group name; allowed: letters, digits, \"_\", \"-\"", g.name),
                );
            } else if let Some(j) = names.insert(&g.name, gi) {
                self.err(p("name"), format!("{:?} is already the name of traffic.{j}; allowed: unique names", g.name));
            }
            if g.arrivals.is_none() && !(1..=MAX_FLOWS).contains(&g.flows) {
                self.err(p("flows"), format!("{} flows; allowed: 1 to {MAX_FLOWS}", g.flows));
            }
            if let Some(net) = net {
                let src = self.endpoints(&p("src"), &g.src, net);
                let dst = self.endpoints(&p("dst"), &g.dst, net);
                if let (Some(src), Some(dst), Some(reach)) = (src, dst, reach.as_mut()) {
                    self.pairs(gi, g, &src, &dst, net, reach);
                }
            }
            self.model(gi, &g.model);
            self.size(gi, g);
            if g.dscp > 63 {
                self.err(p("dscp"), format!("{} does not fit in six bits; allowed: 0 to 63", g.dscp));
            }
            if s.duration.0 > 0 && g.start >= s.duration {
                self.err(
                    p("start"),
                    format!(
                        "{} is not before the end of the run ({}); allowed: less than duration",
                        g.start, s.duration
                    ),
                );
            }
            if let Some(stop) = g.stop {
                if stop <= g.start {
                    self.err(p("stop"), format!("{stop} is not after start ({}); allowed: later than start", g.start));
                }
            }
            if let Some(r) = g.reserve {
                self.positive_rate(&p("reserve"), r);
            }
            if let Some(a) = &g.arrivals {
                self.arrivals(&p("arrivals"), a, base_dir);
            }
        }
    }

    /// Flow `i` goes from `src[i % n_src]` to `dst[i % n_dst]`: no flow to
    /// itself, and a route through routers for every pair.
    fn pairs(&mut self, gi: usize, g: &TrafficGroup, src: &[usize], dst: &[usize], net: &Expanded, reach: &mut Reach) {
        let cycle = src.len() / gcd(src.len(), dst.len()) * dst.len();
        let n = if g.arrivals.is_some() { cycle } else { (g.flows as usize).min(cycle) };
        let n = n.min(MAX_FLOWS as usize);
        let mut seen = BTreeSet::new();
        for i in 0..n {
            let (a, b) = (src[i % src.len()], dst[i % dst.len()]);
            if !seen.insert((a, b)) {
                continue;
            }
            let (an, bn) = (&net.nodes[a].0, &net.nodes[b].0);
            if a == b {
                self.err(
                    format!("traffic.{gi}.dst"),
                    format!(
                        "flow {}.{i} would go from {an:?} to itself; allowed: a destination other than each \
                         flow's source (flows take the matches of src and dst in turn)",
                        g.name
                    ),
                );
                return;
            }
            if !reach.connects(net, a, b) {
                self.err(
                    format!("traffic.{gi}.dst"),
                    format!(
                        "no route from {an:?} to {bn:?}; allowed: endpoints joined by links through routers \
                         (hosts do not forward packets)"
                    ),
                );
                return;
            }
        }
    }

    fn model(&mut self, gi: usize, m: &TrafficModel) {
        let p = |f: &str| format!("traffic.{gi}.{f}");
        match m {
            TrafficModel::Cbr { rate, interval } => self.rate_or_interval(gi, "rate", *rate, *interval),
            TrafficModel::Poisson { rate } => self.positive_rate(&p("rate"), *rate),
            TrafficModel::OnOff { peak, interval, on, off, dist, shape } => {
                self.rate_or_interval(gi, "peak", *peak, *interval);
                self.positive_dur(&p("on"), *on);
                self.positive_dur(&p("off"), *off);
                if *dist == PeriodDist::Pareto && !(*shape > 1.0 && shape.is_finite()) {
                    self.err(
                        p("shape"),
                        format!("{shape} is not above 1; allowed: a Pareto shape > 1 (the mean period is infinite otherwise)"),
                    );
                }
            }
        }
    }

    /// Exactly one of a rate field and `interval`, and it positive.
    fn rate_or_interval(&mut self, gi: usize, rate_field: &str, rate: Option<Rate>, interval: Option<Dur>) {
        let p = |f: &str| format!("traffic.{gi}.{f}");
        match (rate, interval) {
            (Some(_), Some(_)) => {
                self.err(p("interval"), format!("{rate_field} and interval are both set; allowed: exactly one of them"))
            }
            (None, None) => self.err(
                p(rate_field),
                format!(
                    "missing; allowed: {rate_field} (a payload rate such as \"1Mbps\") or interval (a packet \
                     spacing such as \"8ms\"), exactly one"
                ),
            ),
            (Some(r), None) => self.positive_rate(&p(rate_field), r),
            (None, Some(i)) => self.positive_dur(&p("interval"), i),
        }
    }

    fn size(&mut self, gi: usize, g: &TrafficGroup) {
        let (path, payload) = match &g.size {
            SizeSpec::Fixed(b) => (format!("traffic.{gi}.size"), b.0),
            SizeSpec::Random(r) => {
                if r.exp_mean.0 > MAX_PACKET {
                    self.err(
                        format!("traffic.{gi}.size.exp_mean"),
                        format!("{} is too large; allowed: at most {MAX_PACKET}B", r.exp_mean),
                    );
                }
                (format!("traffic.{gi}.size.base"), r.base.0)
            }
        };
        if payload == 0 {
            self.err(&path, "0B is empty; allowed: a payload of at least 1 byte");
        } else if payload.saturating_add(g.header.0) > MAX_PACKET {
            self.err(
                &path,
                format!(
                    "{payload}B plus header {} exceeds {MAX_PACKET}B; allowed: payload + header at most \
                     {MAX_PACKET}B (an IP packet)",
                    g.header
                ),
            );
        }
    }

    fn arrivals(&mut self, path: &str, a: &Arrivals, base_dir: Option<&Path>) {
        let p = |f: &str| format!("{path}.{f}");
        let rate = |c: &mut Self, r: f64| {
            if !(r > 0.0 && r.is_finite()) {
                c.err(
                    p("rate"),
                    format!("{r} is not positive; allowed: a positive number of flows (or batches) per second"),
                );
            }
        };
        let max_flows = |c: &mut Self, m: Option<u32>| {
            if m == Some(0) {
                c.err(p("max_flows"), "0 flows; allowed: at least 1 (leave it out for no cap)");
            }
        };
        match a {
            Arrivals::Poisson { rate: r, lifetime, max_flows: m, .. } => {
                rate(self, *r);
                self.positive_dur(&p("lifetime"), *lifetime);
                max_flows(self, *m);
            }
            Arrivals::BatchPoisson { rate: r, batch_mean, lifetime, max_flows: m, .. } => {
                rate(self, *r);
                if !(*batch_mean >= 1.0 && batch_mean.is_finite()) {
                    self.err(p("batch_mean"), format!("{batch_mean} is below 1; allowed: a mean batch size >= 1"));
                }
                self.positive_dur(&p("lifetime"), *lifetime);
                max_flows(self, *m);
            }
            Arrivals::KeepAlive { alive, lifetime, max_flows: m, .. } => {
                if !(1..=MAX_FLOWS).contains(alive) {
                    self.err(p("alive"), format!("{alive} flows; allowed: 1 to {MAX_FLOWS}"));
                }
                self.positive_dur(&p("lifetime"), *lifetime);
                max_flows(self, *m);
            }
            Arrivals::Replay { file } => {
                let full = match base_dir {
                    Some(d) => d.join(file),
                    None => Path::new(file).to_path_buf(),
                };
                if file.is_empty() || !full.is_file() {
                    self.err(
                        p("file"),
                        format!(
                            "no file {file:?} (looked for {}); allowed: a CSV file with columns start_s,lifetime_s, \
                             relative to the scenario's folder",
                            full.display()
                        ),
                    );
                }
            }
        }
    }

    fn metrics(&mut self, s: &Scenario) {
        let m = &s.metrics;
        let samples = |c: &mut Self, path: &str, span: Dur, step: Dur, what: &str| {
            if step.0 == 0 {
                c.positive_dur(path, step);
            } else if span.0 / step.0 > MAX_SAMPLES {
                c.err(
                    path,
                    format!("{step} gives {} {what}; allowed: at most {MAX_SAMPLES} (a larger step)", span.0 / step.0),
                );
            }
        };
        samples(self, "metrics.bin", s.duration, m.bin, "bins over the run");
        samples(self, "metrics.series_interval", s.duration, m.series_interval, "samples over the run");
        samples(self, "metrics.interarrival_bin", m.interarrival_max, m.interarrival_bin, "histogram bins");
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

/// Which hosts can reach which: hosts joined by a link, or attached to
/// routers of one component of the router-to-router graph (a host sinks
/// what it receives; it never forwards).
struct Reach {
    /// Union-find parents; only router-to-router links are united.
    parent: Vec<usize>,
    /// Per node, the nodes it is linked to.
    adj: Vec<Vec<usize>>,
}

impl Reach {
    fn new(net: &Expanded) -> Reach {
        let n = net.nodes.len();
        let mut r = Reach { parent: (0..n).collect(), adj: vec![Vec::new(); n] };
        for l in &net.links {
            r.adj[l.a].push(l.b);
            r.adj[l.b].push(l.a);
            if net.nodes[l.a].1 == NodeKind::Router && net.nodes[l.b].1 == NodeKind::Router {
                let (x, y) = (r.find(l.a), r.find(l.b));
                r.parent[x.max(y)] = x.min(y);
            }
        }
        r
    }
    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }
    /// Router components a node is attached to.
    fn components(&mut self, net: &Expanded, x: usize) -> BTreeSet<usize> {
        let routers: Vec<usize> = self.adj[x].iter().copied().filter(|&m| net.nodes[m].1 == NodeKind::Router).collect();
        routers.into_iter().map(|m| self.find(m)).collect()
    }
    fn connects(&mut self, net: &Expanded, a: usize, b: usize) -> bool {
        self.adj[a].contains(&b) || !self.components(net, a).is_disjoint(&self.components(net, b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = r#"
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

    const EXPLICIT: &str = r#"
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
    fn problems_in(text: &str, dir: Option<&Path>) -> Vec<(String, String)> {
        let s: Scenario = toml::from_str(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        match validate(&s, "t.toml", text, dir) {
            Ok(()) => Vec::new(),
            Err(ds) => ds.into_iter().map(|d| (d.path, d.message)).collect(),
        }
    }
    fn problems(text: &str) -> Vec<(String, String)> {
        problems_in(text, None)
    }
    /// `BASE` with `from` replaced by `to`; the paths of its problems.
    fn paths_with(base: &str, from: &str, to: &str) -> Vec<String> {
        assert!(base.contains(from), "{from:?}");
        problems(&base.replace(from, to)).into_iter().map(|(p, _)| p).collect()
    }
    /// The one problem at `path`, its message.
    fn message(text: &str, path: &str) -> String {
        let ps = problems(text);
        let hits: Vec<&String> = ps.iter().filter(|(p, _)| p == path).map(|(_, m)| m).collect();
        assert_eq!(hits.len(), 1, "{path}: {ps:?}");
        hits[0].clone()
    }
    fn with_group(extra: &str) -> String {
        format!("{BASE}{extra}\n")
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
    fn link_rates_must_be_positive_but_delays_may_be_zero() {
        assert_eq!(paths_with(BASE, "rate = \"100Mbps\"", "rate = \"0bps\""), ["topology.access.rate"]);
        assert_eq!(paths_with(BASE, "delay = \"1ms\"", "delay = \"0s\""), Vec::<String>::new());
    }

    #[test]
    fn queues_are_built_and_their_errors_carry_the_field_path() {
        let t = BASE.replace("min_th = 5, max_th = 15", "min_th = 15, max_th = 5");
        assert_eq!(message(&t, "topology.bottleneck.queue.max_th"), "red.max_th (5) must exceed min_th (15)");
        let t = BASE.replace(
            "access = { rate = \"100Mbps\", delay = \"1ms\" }",
            "access = { rate = \"100Mbps\", delay = \"1ms\", reverse_queue = { type = \"fifo\", limit = \"0pkts\" } }",
        );
        assert!(message(&t, "topology.access.reverse_queue.limit").starts_with("fifo.limit"));
        let t = BASE.replace(
            "sources = 2",
            "sources = 2\ndefault_queue = { type = \"red\", limit = \"9pkts\", min_th = 1, max_th = 2, w_q = 0 }",
        );
        assert_eq!(message(&t, "topology.default_queue.w_q"), "red.w_q (0) must be in (0, 1]");
        let t = BASE.replace(
            "queue = { type = \"red\", limit = \"60pkts\", min_th = 5, max_th = 15 }",
            "queue = { type = \"prio\", bands = [{ type = \"fifo\", limit = \"5pkts\" }, { type = \"prio\", bands = [] }] }",
        );
        assert!(message(&t, "topology.bottleneck.queue.bands.1.bands").contains("is empty"));
    }

    #[test]
    fn a_class_beyond_the_bands_is_not_an_error() {
        let t = BASE
            .replace(
                "queue = { type = \"red\", limit = \"60pkts\", min_th = 5, max_th = 15 }",
                "queue = { type = \"prio\", bands = [{ type = \"fifo\", limit = \"5pkts\" }] }",
            )
            .replace("size = \"1000B\"", "size = \"1000B\"\nclass = 7");
        assert_eq!(problems(&t), vec![]);
    }

    #[test]
    fn dumbbell_counts_and_the_one_router_rule() {
        assert_eq!(paths_with(BASE, "sources = 2", "sources = 0"), ["topology.sources"]);
        assert_eq!(paths_with(BASE, "sources = 2", "sources = 2\nsinks = 0"), ["topology.sinks"]);
        assert_eq!(paths_with(BASE, "sources = 2", "sources = 2\nrouters = 3"), ["topology.routers"]);
        assert_eq!(paths_with(BASE, "sources = 2", "sources = 2\nsinks = 2"), ["topology.sinks"]);
        let egress = "sources = 2\negress = { rate = \"1Gbps\", delay = \"1ms\" }";
        assert_eq!(paths_with(BASE, "sources = 2", egress), ["topology.egress"]);
        let two = format!("{egress}\nrouters = 2\nsinks = 2");
        assert_eq!(
            paths_with(&BASE.replace("dst = \"sink0\"", "dst = \"sink*\""), "sources = 2", &two),
            Vec::<String>::new()
        );
    }

    #[test]
    fn parking_lots_need_a_bottleneck_and_stars_an_ingress_and_matching_delays() {
        let pl = BASE
            .replace("preset = \"dumbbell\"\nsources = 2", "preset = \"parking_lot\"\nbottlenecks = 0")
            .replace("src = \"src*\"\ndst = \"sink0\"", "src = \"src_long\"\ndst = \"sink_long\"");
        assert_eq!(paths_with(&pl, "", ""), ["topology.bottlenecks"]);
        assert_eq!(paths_with(&pl, "bottlenecks = 0", "bottlenecks = 2"), Vec::<String>::new());
        let star = BASE
            .replace("preset = \"dumbbell\"\nsources = 2", "preset = \"star\"\ningresses = 2")
            .replace("src = \"src*\"", "src = \"in*\"");
        assert_eq!(paths_with(&star, "", ""), Vec::<String>::new());
        assert_eq!(paths_with(&star, "ingresses = 2", "ingresses = 0"), ["topology.ingresses"]);
        assert_eq!(
            paths_with(&star, "ingresses = 2", "ingresses = 2\ningress_delays = [\"1ms\"]"),
            ["topology.ingress_delays"]
        );
        assert_eq!(
            paths_with(&star, "ingresses = 2", "ingresses = 2\ningress_delays = [\"1ms\", \"0s\"]"),
            Vec::<String>::new()
        );
    }

    // A broken topology stops the checks of traffic endpoints (no cascade).
    #[test]
    fn explicit_nodes_must_be_named_uniquely_and_links_must_join_two_existing_nodes() {
        assert_eq!(
            paths_with(EXPLICIT, "{ name = \"h1\", kind = \"host\" }", "{ name = \"\", kind = \"host\" }"),
            ["topology.nodes.2.name", "topology.links.1.b"]
        );
        assert_eq!(
            paths_with(EXPLICIT, "{ name = \"h1\", kind = \"host\" }", "{ name = \"h0\", kind = \"host\" }"),
            ["topology.nodes.2.name", "topology.links.1.b"]
        );
        let m = message(&EXPLICIT.replace("a = \"r0\", b = \"h1\"", "a = \"r0\", b = \"r9\""), "topology.links.1.b");
        assert_eq!(m, "no node named \"r9\"; nodes: h0, r0, h1");
        assert_eq!(paths_with(EXPLICIT, "a = \"r0\", b = \"h1\"", "a = \"r0\", b = \"r0\""), ["topology.links.1.b"]);
        let empty = EXPLICIT.replace(
            "nodes = [{ name = \"h0\", kind = \"host\" }, { name = \"r0\", kind = \"router\" }, { name = \"h1\", kind = \"host\" }]",
            "nodes = []",
        );
        assert!(paths_with(&empty, "", "").contains(&"topology.nodes".to_string()));
    }

    #[test]
    fn topologies_are_capped_in_size() {
        assert_eq!(paths_with(BASE, "sources = 2", "sources = 4000000"), ["topology"]);
    }

    #[test]
    fn endpoints_need_a_route_through_routers_only() {
        // h0 - hx - h1 with hx a host: hosts do not forward.
        let t = EXPLICIT.replace("{ name = \"r0\", kind = \"router\" }", "{ name = \"r0\", kind = \"host\" }");
        assert_eq!(message(&t, "traffic.0.dst"), "no route from \"h0\" to \"h1\"; allowed: endpoints joined by links through routers (hosts do not forward packets)");
        // A direct host-to-host link is a route.
        let t = EXPLICIT
            .replace("links = [", "links = [\n  { a = \"h0\", b = \"h1\", rate = \"1Mbps\", delay = \"1ms\" },")
            .replace("{ a = \"h0\", b = \"r0\", rate = \"10Mbps\", delay = \"1ms\" },", "");
        assert_eq!(problems(&t), vec![]);
        // Two router islands.
        let t = EXPLICIT
            .replace(
                "{ name = \"h1\", kind = \"host\" }",
                "{ name = \"h1\", kind = \"host\" }, { name = \"r1\", kind = \"router\" }",
            )
            .replace("a = \"r0\", b = \"h1\"", "a = \"r1\", b = \"h1\"");
        assert_eq!(paths_with(&t, "", ""), ["traffic.0.dst"]);
    }

    #[test]
    fn group_names_are_unique_and_usable_in_flow_names() {
        let dup = with_group("[[traffic]]\nname = \"cbr\"\nmodel = \"poisson\"\nsrc = \"src0\"\ndst = \"sink0\"\nrate = \"1Mbps\"\nsize = \"1B\"");
        assert_eq!(message(&dup, "traffic.1.name"), "\"cbr\" is already the name of traffic.0; allowed: unique names");
        assert_eq!(paths_with(BASE, "name = \"cbr\"", "name = \"a.b\""), ["traffic.0.name"]);
        assert_eq!(paths_with(BASE, "name = \"cbr\"", "name = \"\""), ["traffic.0.name"]);
    }

    #[test]
    fn patterns_match_at_least_one_node_and_hosts_only() {
        assert!(message(&BASE.replace("src = \"src*\"", "src = \"s*c\""), "traffic.0.src")
            .contains("is not a node pattern"));
        assert!(
            message(&BASE.replace("src = \"src*\"", "src = \"\""), "traffic.0.src").contains("is not a node pattern")
        );
        assert!(message(&BASE.replace("src = \"src*\"", "src = \"x*\""), "traffic.0.src").contains("matches no node"));
        assert!(
            message(&BASE.replace("src = \"src*\"", "src = \"*\""), "traffic.0.src").contains("matches router \"r0\"")
        );
    }

    #[test]
    fn no_flow_goes_from_a_node_to_itself() {
        let t = BASE.replace("dst = \"sink0\"", "dst = \"src*\"");
        assert!(message(&t, "traffic.0.dst").starts_with("flow cbr.0 would go from \"src0\" to itself"));
        // src0 -> src1, src1 -> src0: fine.
        let t = BASE.replace("dst = \"sink0\"", "dst = \"src*\"").replace("src = \"src*\"", "src = \"src1\"");
        assert!(message(&t, "traffic.0.dst").starts_with("flow cbr.1 would go from \"src1\" to itself"));
        let one = BASE.replace("flows = 2\n", "flows = 1\n").replace("dst = \"sink0\"", "dst = \"src1\"");
        assert_eq!(problems(&one), vec![]);
        // With arrivals, a whole cycle of pairs is checked.
        let arr = one.replace("flows = 1\n", "arrivals = { process = \"poisson\", rate = 1.0, lifetime = \"1s\" }\n");
        assert_eq!(paths_with(&arr, "", ""), ["traffic.0.dst"]);
    }

    #[test]
    fn flow_counts_are_bounded() {
        assert_eq!(paths_with(BASE, "flows = 2", "flows = 0"), ["traffic.0.flows"]);
        assert_eq!(paths_with(BASE, "flows = 2", "flows = 2000000"), ["traffic.0.flows"]);
    }

    #[test]
    fn cbr_and_on_off_take_exactly_one_positive_rate_or_interval() {
        assert_eq!(paths_with(BASE, "rate = \"1Mbps\"", "interval = \"8ms\""), Vec::<String>::new());
        assert_eq!(
            paths_with(BASE, "rate = \"1Mbps\"", "rate = \"1Mbps\"\ninterval = \"8ms\""),
            ["traffic.0.interval"]
        );
        assert_eq!(paths_with(BASE, "rate = \"1Mbps\"\n", ""), ["traffic.0.rate"]);
        assert_eq!(paths_with(BASE, "rate = \"1Mbps\"", "rate = \"0bps\""), ["traffic.0.rate"]);
        assert_eq!(paths_with(BASE, "rate = \"1Mbps\"", "interval = \"0s\""), ["traffic.0.interval"]);
        let on_off = BASE
            .replace("model = \"cbr\"", "model = \"on_off\"\non = \"1s\"\noff = \"1s\"")
            .replace("rate = \"1Mbps\"", "peak = \"1Mbps\"");
        assert_eq!(problems(&on_off), vec![]);
        assert_eq!(
            paths_with(&on_off, "peak = \"1Mbps\"", "peak = \"1Mbps\"\ninterval = \"1ms\""),
            ["traffic.0.interval"]
        );
        assert_eq!(paths_with(&on_off, "peak = \"1Mbps\"\n", ""), ["traffic.0.peak"]);
        assert_eq!(
            paths_with(&on_off, "on = \"1s\"\noff = \"1s\"", "on = \"0s\"\noff = \"0s\""),
            ["traffic.0.on", "traffic.0.off"]
        );
    }

    #[test]
    fn poisson_rates_must_be_positive_and_pareto_shapes_above_one() {
        let p = BASE.replace("model = \"cbr\"", "model = \"poisson\"");
        assert_eq!(problems(&p), vec![]);
        assert_eq!(paths_with(&p, "rate = \"1Mbps\"", "rate = \"0bps\""), ["traffic.0.rate"]);
        let pareto = BASE
            .replace("model = \"cbr\"", "model = \"on_off\"\non = \"1s\"\noff = \"1s\"\ndist = \"pareto\"")
            .replace("rate = \"1Mbps\"", "peak = \"1Mbps\"");
        assert_eq!(problems(&pareto), vec![], "the default shape is 1.5");
        assert_eq!(paths_with(&pareto, "dist = \"pareto\"", "dist = \"pareto\"\nshape = 0.9"), ["traffic.0.shape"]);
        assert_eq!(paths_with(&pareto, "dist = \"pareto\"", "dist = \"pareto\"\nshape = inf"), ["traffic.0.shape"]);
        // The shape is unused with exponential periods.
        assert_eq!(
            paths_with(&pareto, "dist = \"pareto\"", "dist = \"exponential\"\nshape = 0.5"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn payloads_are_at_least_a_byte_and_packets_fit_an_ip_packet() {
        assert_eq!(paths_with(BASE, "size = \"1000B\"", "size = \"0B\""), ["traffic.0.size"]);
        assert_eq!(paths_with(BASE, "size = \"1000B\"", "size = \"65000B\"\nheader = \"536B\""), ["traffic.0.size"]);
        assert_eq!(paths_with(BASE, "size = \"1000B\"", "size = \"65000B\"\nheader = \"535B\""), Vec::<String>::new());
        assert_eq!(
            paths_with(BASE, "size = \"1000B\"", "size = { base = \"0B\", exp_mean = \"100B\" }"),
            ["traffic.0.size.base"]
        );
        assert_eq!(
            paths_with(BASE, "size = \"1000B\"", "size = { base = \"1B\", exp_mean = \"1MB\" }"),
            ["traffic.0.size.exp_mean"]
        );
    }

    #[test]
    fn dscp_start_stop_and_reserve_are_checked() {
        assert_eq!(paths_with(BASE, "size = \"1000B\"", "size = \"1000B\"\ndscp = 64"), ["traffic.0.dscp"]);
        assert_eq!(paths_with(BASE, "size = \"1000B\"", "size = \"1000B\"\nstart = \"10s\""), ["traffic.0.start"]);
        assert_eq!(
            paths_with(BASE, "size = \"1000B\"", "size = \"1000B\"\nstart = \"2s\"\nstop = \"2s\""),
            ["traffic.0.stop"]
        );
        assert_eq!(paths_with(BASE, "size = \"1000B\"", "size = \"1000B\"\nstop = \"20s\""), Vec::<String>::new());
        assert_eq!(paths_with(BASE, "size = \"1000B\"", "size = \"1000B\"\nreserve = \"0bps\""), ["traffic.0.reserve"]);
    }

    #[test]
    fn arrival_processes_are_checked() {
        let a = |arr: &str| paths_with(BASE, "size = \"1000B\"", &format!("size = \"1000B\"\narrivals = {arr}"));
        let none = Vec::<String>::new();
        assert_eq!(a("{ process = \"poisson\", rate = 2.0, lifetime = \"1s\" }"), none);
        assert_eq!(a("{ process = \"poisson\", rate = 0.0, lifetime = \"1s\" }"), ["traffic.0.arrivals.rate"]);
        assert_eq!(a("{ process = \"poisson\", rate = nan, lifetime = \"1s\" }"), ["traffic.0.arrivals.rate"]);
        assert_eq!(a("{ process = \"poisson\", rate = 1.0, lifetime = \"0s\" }"), ["traffic.0.arrivals.lifetime"]);
        assert_eq!(
            a("{ process = \"poisson\", rate = 1.0, lifetime = \"1s\", max_flows = 0 }"),
            ["traffic.0.arrivals.max_flows"]
        );
        assert_eq!(
            a("{ process = \"batch_poisson\", rate = 1.0, batch_mean = 0.5, lifetime = \"1s\" }"),
            ["traffic.0.arrivals.batch_mean"]
        );
        assert_eq!(a("{ process = \"batch_poisson\", rate = 1.0, batch_mean = 1.0, lifetime = \"1s\" }"), none);
        assert_eq!(a("{ process = \"keep_alive\", alive = 0, lifetime = \"1s\" }"), ["traffic.0.arrivals.alive"]);
        assert_eq!(a("{ process = \"keep_alive\", alive = 3, lifetime = \"1s\" }"), none);
        assert_eq!(a("{ process = \"replay\", file = \"\" }"), ["traffic.0.arrivals.file"]);
    }

    #[test]
    fn replay_files_are_looked_up_in_the_base_dir() {
        let dir = std::env::temp_dir().join(format!("qoslab-validate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("f.csv"), "start_s,lifetime_s\n").unwrap();
        let t =
            BASE.replace("size = \"1000B\"", "size = \"1000B\"\narrivals = { process = \"replay\", file = \"f.csv\" }");
        let found = problems_in(&t, Some(&dir));
        let missing = problems_in(&t, Some(&dir.join("elsewhere")));
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(found, vec![]);
        assert_eq!(missing.len(), 1);
        assert!(missing[0].1.contains("elsewhere/f.csv"), "{missing:?}");
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
        let ds = validate(&s, "t.toml", &text, None).unwrap_err();
        let line = text.lines().position(|l| l == "sources = 0").unwrap() + 1;
        assert_eq!(ds[0].to_string(), format!("t.toml:{line}: topology.sources: 0 is too few; allowed: at least 1"));
        // Without text, no line.
        let ds = validate(&s, "<built>", "", None).unwrap_err();
        assert_eq!(ds[0].line, None);
    }
}
