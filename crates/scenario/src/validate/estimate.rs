//! The resources a run will need, estimated from the scenario before it
//! runs: events (work) and peak memory. A scenario whose estimate exceeds
//! the limits ([`Limits`]: 8 GiB and 10¹⁰ events by default; `--max-memory`
//! and `--max-events` raise them) is refused with a diagnostic at the field
//! that drives the estimate, so that no input reaches an allocation failure
//! (an abort, exit 134) or a run of days.
//!
//! The estimate is a sum of parts, each tied to the field that sizes it:
//!
//! | part | size | field named |
//! |---|---|---|
//! | flows | `N` flows × [`FLOW_BYTES`] (state and result row); 4 events each (start, end, timers) | `flows`, `arrivals.rate`, `arrivals.batch_mean`, `arrivals.alive`, `arrivals.file` |
//! | open-loop packets (CBR, Poisson, ON/OFF) | concurrent flows × packets/s × active time; events: 2 per packet made, 2 per hop for those the source's links can carry | `rate`, `interval`, `peak`, or the flows' field if flows outnumber a flow's packets/s |
//! | closed-loop packets (TCP, MM_APP) | 2 × the rate the source's and destination's links carry (retransmissions), and for TCP at most the windows' rate `C × window / RTT`; ACKs double the events | `tcp.max_window`, else `flows` |
//! | TCP burst | a flow's first window, `min(init_window, max_window, rwnd)` segments, handed over at once ([`SEQ_BYTES`] each) | `tcp.init_window` |
//! | packets held | `min(queue limits + packets on the wires, packets of the run)` × [`PACKET_BYTES`]; a queue without a limit holds up to all the run's packets | the queue |
//! | series | `duration / series_interval` × link directions × 3 metrics × [`ROW_BYTES`] | `metrics.series_interval` |
//! | per-flow bins | `N` × the bins of a flow's life (`lifetime` with arrivals, else the active time; +1 for a straddled boundary) × 4 metrics × [`ROW_BYTES`] | `metrics.bin` |
//! | network | link directions × [`DIR_BYTES`] | `topology` |
//!
//! `N` (flows over the run) and `C` (flows at once): fixed flows `N = C =
//! flows`; Poisson arrivals `N = max(1, rate × T)`, `C = min(N, rate ×
//! lifetime + 1)`; batches `N = max(batch_mean, rate × batch_mean × T)`;
//! keep-alive `N = alive × (1 + T / lifetime)`, `C = alive`; replay `N = C
//! = rows`; each capped by `max_flows`. `T` is the group's active time
//! (`start` to `stop` or the end of the run). Hops, RTT (2 × the delays)
//! and link capacities come from the first pair's route.
//!
//! The byte costs are calibrated on this build (`qoslab-simbench`, peak
//! RSS): 100,000 CBR flows for 1 s peaked at 344 MB (estimate 311 MB,
//! 1.34e6 events counted, 6.4e6 estimated); 1,000 Reno flows for 60 s at
//! 76 MB (estimate 121 MB; 4.6e5 events, 1.8e6 estimated). The estimate
//! aims at the right order of magnitude, above rather than below; it
//! guards against absurd inputs, it is not a prediction.

use super::*;

/// Estimated bytes per flow: its state and its result row.
pub const FLOW_BYTES: f64 = 2048.0;
/// Estimated bytes per row of a series or per-flow bin table.
pub const ROW_BYTES: f64 = 256.0;
/// Estimated bytes per packet held in a queue or on a wire (packet record
/// and its event).
pub const PACKET_BYTES: f64 = 128.0;
/// Bytes per segment of a TCP burst (its sequence number, handed over at once).
pub const SEQ_BYTES: f64 = 8.0;
/// Estimated bytes per link direction (queue, statistics, routes).
pub const DIR_BYTES: f64 = 1024.0;

/// Default limit on the estimated peak memory: 8 GiB.
pub const DEFAULT_MAX_MEMORY: u64 = 8 << 30;
/// Default limit on the estimated events: 10¹⁰.
pub const DEFAULT_MAX_EVENTS: u64 = 10_000_000_000;

/// The most a run may be estimated to need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of peak memory.
    pub max_memory: u64,
    /// Events.
    pub max_events: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { max_memory: DEFAULT_MAX_MEMORY, max_events: DEFAULT_MAX_EVENTS }
    }
}

/// One part of an estimate: the field that sizes it, what it is, how much.
#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    pub path: String,
    pub what: String,
    pub amount: f64,
}

/// A run's estimated peak memory (bytes) and events, as parts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Estimate {
    pub memory: Vec<Part>,
    pub events: Vec<Part>,
    /// Flows over the run, per traffic group.
    pub flows: Vec<f64>,
}

impl Estimate {
    /// Estimated peak memory in bytes.
    pub fn memory_bytes(&self) -> f64 {
        self.memory.iter().map(|p| p.amount).sum()
    }
    /// Estimated events.
    pub fn event_count(&self) -> f64 {
        self.events.iter().map(|p| p.amount).sum()
    }
    fn mem(&mut self, path: String, what: String, amount: f64) {
        self.memory.push(Part { path, what, amount: finite(amount) });
    }
    fn ev(&mut self, path: String, what: String, amount: f64) {
        self.events.push(Part { path, what, amount: finite(amount) });
    }
}

/// Infinity and NaN (from absurd inputs) as the largest finite value.
fn finite(x: f64) -> f64 {
    if x.is_nan() || x.is_infinite() {
        f64::MAX
    } else {
        x.max(0.0)
    }
}

/// `12.3 GiB`, `640 MiB`, `900 kiB`, `512 B`.
pub fn show_bytes(b: f64) -> String {
    const UNITS: [(&str, f64); 4] =
        [("TiB", 1_099_511_627_776.0), ("GiB", 1_073_741_824.0), ("MiB", 1_048_576.0), ("kiB", 1024.0)];
    for (u, f) in UNITS {
        if b >= f {
            let v = b / f;
            return if v >= 1e4 { format!("{v:.2e} {u}") } else { format!("{v:.1} {u}") };
        }
    }
    format!("{b:.0} B")
}

/// `3.2e10` for large counts, plain below a million.
pub fn show_count(n: f64) -> String {
    if n >= 1e6 {
        format!("{n:.2e}")
    } else {
        format!("{n:.0}")
    }
}

/// The route of a group's first pair: hops, delay sum (s), and whether found.
fn route(net: &Expanded, adj: &[Vec<(usize, usize)>], from: usize, to: usize) -> Option<(f64, f64)> {
    let n = net.nodes.len();
    let mut prev: Vec<Option<(usize, usize)>> = vec![None; n];
    let mut seen = vec![false; n];
    let mut queue = std::collections::VecDeque::from([from]);
    seen[from] = true;
    while let Some(x) = queue.pop_front() {
        if x == to {
            break;
        }
        if x != from && net.nodes[x].1 != NodeKind::Router {
            continue; // hosts do not forward
        }
        for &(y, li) in &adj[x] {
            if !seen[y] {
                seen[y] = true;
                prev[y] = Some((x, li));
                queue.push_back(y);
            }
        }
    }
    if !seen[to] {
        return None;
    }
    let (mut hops, mut delay, mut at) = (0.0, 0.0, to);
    while let Some((p, li)) = prev[at] {
        hops += 1.0;
        delay += net.links[li].spec.delay.as_secs_f64();
        at = p;
    }
    Some((hops, delay))
}

/// Packets a queue spec holds at most (its `limit`s and `buffer`s, sizes
/// in packets of `wire` bytes); `None` if it sets no limit.
fn queue_capacity(q: &QueueSpec, wire: f64) -> Option<f64> {
    fn walk(v: &toml::Value, wire: f64, total: &mut Option<f64>) {
        let one = |s: &str| -> Option<f64> {
            if let Ok(n) = qoslab_core::units::parse_packets(s) {
                return Some(n as f64);
            }
            qoslab_core::units::Bytes::parse(s).ok().map(|b| (b.0 as f64 / wire).ceil())
        };
        match v {
            toml::Value::Table(t) => {
                for (k, v) in t {
                    if k == "limit" || k == "buffer" {
                        let cap = match v {
                            toml::Value::String(s) => one(s),
                            // Both a packet and a byte limit: whichever is reached first.
                            toml::Value::Array(a) => a.iter().filter_map(|x| x.as_str().and_then(one)).reduce(f64::min),
                            _ => None,
                        };
                        if let Some(c) = cap {
                            *total = Some(total.unwrap_or(0.0) + c);
                        }
                    } else {
                        walk(v, wire, total);
                    }
                }
            }
            toml::Value::Array(a) => a.iter().for_each(|x| walk(x, wire, total)),
            _ => {}
        }
    }
    let v = toml::Value::try_from(q).ok()?;
    let mut total = None;
    walk(&v, wire, &mut total);
    total
}

/// The estimate of a valid scenario's run (`replay_rows`: what validation
/// read from the files a scenario names, by field path: the rows of each
/// replay file, a `vtr` trace file's mean rate in bit/s).
/// The link directions the simulator can sample into the series (an upper
/// bound): those leaving a router, named by `metrics.series` if it is given,
/// towards a router, a traffic destination, or the source of a group whose
/// receivers send packets back (TCP ACKs, MM_APP feedback). A direction
/// towards a host that only sends never carries a packet, so it is never
/// sampled.
fn sampled_dirs(s: &Scenario, net: &Expanded) -> f64 {
    let mut receives = vec![false; net.nodes.len()];
    for g in &s.traffic {
        for d in net.resolve(&g.dst) {
            receives[d] = true;
        }
        if matches!(g.model, TrafficModel::Ftp { .. } | TrafficModel::Transfer { .. } | TrafficModel::MmApp { .. }) {
            for src in net.resolve(&g.src) {
                receives[src] = true;
            }
        }
    }
    let name = |i: usize| net.nodes[i].0.as_str();
    let mut n = 0.0;
    for l in &net.links {
        for (a, b) in [(l.a, l.b), (l.b, l.a)] {
            let (ka, kb) = (net.nodes[a].1, net.nodes[b].1);
            let named = s.metrics.series.is_empty()
                || s.metrics.series.iter().any(|p| crate::model::glob_match(p, &format!("{}->{}", name(a), name(b))));
            if ka == NodeKind::Router && named && (kb == NodeKind::Router || receives[b]) {
                n += 1.0;
            }
        }
    }
    n
}

pub fn estimate(s: &Scenario, net: &Expanded, replay_rows: &BTreeMap<String, u64>) -> Estimate {
    let mut e = Estimate::default();
    let run_s = s.duration.as_secs_f64();
    let mut adj: Vec<Vec<(usize, usize)>> = vec![Vec::new(); net.nodes.len()];
    let mut node_rate = vec![0.0f64; net.nodes.len()];
    for (li, l) in net.links.iter().enumerate() {
        adj[l.a].push((l.b, li));
        adj[l.b].push((l.a, li));
        node_rate[l.a] += l.spec.rate.0 as f64;
        node_rate[l.b] += l.spec.rate.0 as f64;
    }
    let mut run_packets = 0.0;
    let mut min_wire = f64::MAX;
    let mut bin_rows = 0.0;
    let mut burst: Option<(String, f64, u32)> = None;
    for (gi, g) in s.traffic.iter().enumerate() {
        let p = |f: &str| format!("traffic.{gi}.{f}");
        let stop = g.stop.map_or(s.duration, |x| x.min(s.duration));
        let t = stop.0.saturating_sub(g.start.0) as f64 / 1e9;
        let payload = match &g.size {
            SizeSpec::Fixed(b) => b.0 as f64,
            SizeSpec::Random(r) => (r.base.0 + r.exp_mean.0) as f64,
        }
        .max(1.0);
        let wire = payload + g.header.0 as f64;
        min_wire = min_wire.min(wire);
        let cap_flows = |n: f64, m: Option<u32>| m.map_or(n, |m| n.min(f64::from(m)));
        let (n, c, flows_path, flows_what) = match &g.arrivals {
            None => (f64::from(g.flows), f64::from(g.flows), p("flows"), format!("{} flows", g.flows)),
            Some(Arrivals::Poisson { rate, lifetime, max_flows, .. }) => {
                let n = cap_flows((rate * t).max(1.0), *max_flows);
                let c = n.min(rate * lifetime.as_secs_f64() + 1.0);
                (n, c, p("arrivals.rate"), format!("{} flows arriving at {rate}/s", show_count(n)))
            }
            Some(Arrivals::BatchPoisson { rate, batch_mean, lifetime, max_flows, .. }) => {
                let n = cap_flows(batch_mean.max(rate * batch_mean * t), *max_flows);
                let c = n.min(rate * batch_mean * lifetime.as_secs_f64() + batch_mean);
                let path = if *batch_mean > rate * t { p("arrivals.batch_mean") } else { p("arrivals.rate") };
                (n, c, path, format!("{} flows in batches of mean {batch_mean}", show_count(n)))
            }
            Some(Arrivals::KeepAlive { alive, lifetime, max_flows, .. }) => {
                let a = f64::from(*alive);
                let n = cap_flows(a * (1.0 + t / lifetime.as_secs_f64().max(1e-9)), *max_flows);
                (n, a.min(n), p("arrivals.alive"), format!("{} flows, {alive} at once", show_count(n)))
            }
            Some(Arrivals::Replay { .. }) => {
                let n = replay_rows.get(&p("arrivals.file")).copied().unwrap_or(0) as f64;
                (n, n, p("arrivals.file"), format!("{} replayed flows", show_count(n)))
            }
        };
        e.flows.push(n);
        e.mem(flows_path.clone(), flows_what.clone(), n * FLOW_BYTES);
        e.ev(flows_path.clone(), flows_what.clone(), n * 4.0);
        if s.metrics.bin.0 > 0 {
            // A flow has rows for the bins of its life (one more where it straddles a boundary).
            let life = match &g.arrivals {
                Some(
                    Arrivals::Poisson { lifetime, .. }
                    | Arrivals::BatchPoisson { lifetime, .. }
                    | Arrivals::KeepAlive { lifetime, .. },
                ) => lifetime.as_secs_f64().min(t),
                _ => t,
            };
            let bin = s.metrics.bin.as_secs_f64();
            let bins = ((life / bin).ceil() + 1.0).min((t / bin).ceil()).max(1.0);
            bin_rows += n * bins * 4.0;
        }

        let (src, dst) = (net.resolve(&g.src), net.resolve(&g.dst));
        let (Some(&a), Some(&b)) = (src.first(), dst.first()) else { continue };
        let (hops, delay) = route(net, &adj, a, b).unwrap_or((1.0, 0.0));
        let side = |ends: &[usize]| ends.iter().map(|&i| node_rate[i]).sum::<f64>() / (8.0 * wire);
        let (src_pps, dst_pps) = (side(&src), side(&dst));
        let per_flow = |rate: Option<Rate>, interval: Option<Dur>| match (rate, interval) {
            (Some(r), _) => r.0 as f64 / (8.0 * payload),
            (None, Some(i)) => 1e9 / (i.0 as f64).max(1.0),
            _ => 0.0,
        };
        let open = |pps: f64, rate_path: String, e: &mut Estimate| -> f64 {
            let made = c * pps;
            // Blame the larger factor: many flows, or fast ones.
            let path = if c >= pps { flows_path.clone() } else { rate_path };
            let carried = made.min(src_pps);
            e.ev(
                path,
                format!("{} packets/s from {} flows over {hops} hops", show_count(made), show_count(c)),
                t * (2.0 * made + 2.0 * hops * carried),
            );
            made * t
        };
        let closed = |window: Option<f64>, e: &mut Estimate| -> f64 {
            let mut pps = src_pps.min(dst_pps);
            let mut path = p("flows");
            if let Some(cap) = window {
                let rtt = 2.0 * delay;
                if rtt > 0.0 && c * cap / rtt < pps {
                    pps = c * cap / rtt;
                    path = p("tcp.max_window");
                }
            }
            let made = 2.0 * pps;
            e.ev(
                path,
                format!("{} packets/s and their ACKs over {hops} hops", show_count(made)),
                t * made * (2.0 + 2.0 * hops) * 2.0,
            );
            made * t
        };
        run_packets += match &g.model {
            TrafficModel::Cbr { rate, interval } => {
                open(per_flow(*rate, *interval), if rate.is_some() { p("rate") } else { p("interval") }, &mut e)
            }
            TrafficModel::Poisson { rate } => open(per_flow(Some(*rate), None), p("rate"), &mut e),
            TrafficModel::OnOff { peak, interval, on, off, .. } => {
                let duty = on.as_secs_f64() / (on.as_secs_f64() + off.as_secs_f64()).max(1e-12);
                open(per_flow(*peak, *interval) * duty, if peak.is_some() { p("peak") } else { p("interval") }, &mut e)
            }
            TrafficModel::Ftp { tcp } | TrafficModel::Transfer { tcp, .. } => {
                let cfg = tcp.config(payload as u32);
                let cap = f64::from(cfg.window_cap());
                let first = cfg.init_window.min(cfg.window_cap());
                if burst.as_ref().is_none_or(|(_, _, b)| first > *b) {
                    burst = Some((p("tcp.init_window"), wire, first));
                }
                closed(Some(cap), &mut e)
            }
            TrafficModel::MmApp { .. } => closed(None, &mut e),
            // Packets of `size` at the trace's mean rate (validation read a file trace's).
            TrafficModel::Vtr { trace, .. } => {
                let mean = match trace {
                    VtrTrace::Synthetic { synthetic } => synthetic.mean_rate,
                    VtrTrace::File(_) => Rate(replay_rows.get(&p("trace")).copied().unwrap_or(0)),
                };
                open(per_flow(Some(mean), None), p("trace"), &mut e)
            }
        };
    }
    if let Some((path, _, segs)) = burst {
        e.mem(path, format!("a first TCP window of {segs} segments sent at once"), f64::from(segs) * SEQ_BYTES);
    }

    // Packets held: queue limits plus packets on the wires, at most all the run's packets.
    let wire = if min_wire == f64::MAX { 1500.0 } else { min_wire };
    let (mut held, mut biggest, mut unlimited) = (0.0, (String::from("topology.default_queue"), -1.0), false);
    for l in &net.links {
        held += 2.0 * l.spec.rate.0 as f64 * l.spec.delay.as_secs_f64() / (8.0 * wire);
        for (field, q) in [("queue", &l.spec.queue), ("reverse_queue", &l.spec.reverse_queue)] {
            let (path, q) = match q {
                Some(q) => (format!("{}.{field}", l.path), q),
                None => ("topology.default_queue".to_string(), &net.default_queue),
            };
            match queue_capacity(q, wire) {
                Some(c) => {
                    held += c;
                    if c > biggest.1 {
                        biggest = (path, c);
                    }
                }
                None => {
                    unlimited = true;
                    biggest = (path, f64::INFINITY);
                }
            }
        }
    }
    let held = if unlimited { run_packets } else { held.min(run_packets) };
    e.mem(biggest.0, format!("{} packets held in queues and on links", show_count(held)), held * PACKET_BYTES);

    let dirs = 2.0 * net.links.len() as f64;
    e.mem("topology".into(), format!("{dirs} link directions"), dirs * DIR_BYTES);
    if s.metrics.series_interval.0 > 0 {
        let samples = (run_s / s.metrics.series_interval.as_secs_f64()).ceil();
        let sampled = sampled_dirs(s, net);
        let rows = samples * sampled * 3.0;
        e.mem(
            "metrics.series_interval".into(),
            format!(
                "{} series rows ({} samples of {sampled} sampled link directions)",
                show_count(rows),
                show_count(samples)
            ),
            rows * ROW_BYTES,
        );
    }
    e.mem("metrics.bin".into(), format!("{} per-flow bin rows", show_count(bin_rows)), bin_rows * ROW_BYTES);
    e
}

impl Checker<'_> {
    /// Refuses a scenario whose estimated memory or events exceed the limits.
    pub(super) fn resources(&mut self, s: &Scenario, net: &Expanded) {
        let est = estimate(s, net, &self.replay_rows);
        // The part to blame: the largest, but not a default the user never wrote (the
        // bins of a default metrics.bin grow with the flows, which are then blamed).
        let bin_written = self.written("metrics.bin");
        let largest = |parts: &[Part]| {
            parts
                .iter()
                .filter(|p| bin_written || p.path != "metrics.bin")
                .max_by(|a, b| a.amount.total_cmp(&b.amount))
                .or_else(|| parts.iter().max_by(|a, b| a.amount.total_cmp(&b.amount)))
                .cloned()
                .expect("an estimate has parts")
        };
        let mem = est.memory_bytes();
        if mem > self.limits.max_memory as f64 {
            let p = largest(&est.memory);
            self.err(
                p.path,
                format!(
                    "the run would need about {} of memory at its peak (estimated), {} of it for {}; allowed: \
                     at most {} (raise the limit with --max-memory, or max_memory= in Python)",
                    show_bytes(mem),
                    show_bytes(p.amount),
                    p.what,
                    show_bytes(self.limits.max_memory as f64)
                ),
            );
        }
        let ev = est.event_count();
        if ev > self.limits.max_events as f64 {
            let p = largest(&est.events);
            self.err(
                p.path,
                format!(
                    "the run would take about {} events (estimated), {} of them for {}; allowed: at most {} \
                     (raise the limit with --max-events, or max_events= in Python)",
                    show_count(ev),
                    show_count(p.amount),
                    p.what,
                    show_count(self.limits.max_events as f64)
                ),
            );
        }
        if self.out.is_empty() {
            self.dst_ports(s, net, &est.flows);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;
    use super::*;
    use crate::load::load_str_limited;
    use crate::ScenarioError;

    fn paths(text: &str, limits: Limits) -> Vec<String> {
        match load_str_limited(text, "t.toml", &[], None, limits) {
            Ok(_) => Vec::new(),
            Err(ScenarioError::Config(ds)) => ds.into_iter().map(|d| d.path).collect(),
            Err(e) => panic!("{e}"),
        }
    }

    fn huge() -> [String; 3] {
        let arr = |a: &str| {
            BASE.replace("flows = 2\n", "").replace("size = \"1000B\"", &format!("size = \"1000B\"\narrivals = {a}"))
        };
        [
            BASE.replace("model = \"cbr\"", "model = \"ftp\"")
                .replace("rate = \"1Mbps\"\n", "tcp = { max_window = 4294967295, init_window = 4294967295 }\n"),
            arr("{ process = \"poisson\", rate = 1e12, lifetime = \"1s\" }"),
            arr("{ process = \"batch_poisson\", rate = 1.0, batch_mean = 1e15, lifetime = \"1s\" }"),
        ]
    }

    #[test]
    fn absurd_sizes_are_refused_at_the_field_that_drives_them() {
        let [tcp, poisson, batch] = huge();
        assert_eq!(paths(&tcp, Limits::default()), ["traffic.0.tcp.init_window"]);
        assert_eq!(paths(&poisson, Limits::default()), ["traffic.0.arrivals.rate", "traffic.0.arrivals.rate"]);
        assert_eq!(
            paths(&batch, Limits::default()),
            ["traffic.0.arrivals.batch_mean", "traffic.0.arrivals.batch_mean"]
        );
    }

    #[test]
    fn raised_limits_let_a_large_run_through() {
        let [tcp, ..] = huge();
        let all = Limits { max_memory: u64::MAX, max_events: u64::MAX };
        assert_eq!(paths(&tcp, all), Vec::<String>::new());
        // 32 GiB estimated: refused at 31 GiB, accepted at 33 GiB.
        assert_eq!(paths(&tcp, Limits { max_memory: 31 << 30, ..Limits::default() }).len(), 1);
        assert_eq!(paths(&tcp, Limits { max_memory: 33 << 30, ..Limits::default() }), Vec::<String>::new());
        // The events limit alone.
        assert_eq!(paths(BASE, Limits { max_events: 10, ..Limits::default() }), ["traffic.0.rate"]);
    }

    #[test]
    fn the_estimate_counts_flows_packets_and_series() {
        let s: Scenario = toml::from_str(BASE).unwrap();
        let e = estimate(&s, &expand(&s.topology), &BTreeMap::new());
        // 2 CBR flows of 1 Mb/s in 1000 B payloads: 125 packets/s each for 10 s.
        let pkts = e.events.iter().find(|p| p.path == "traffic.0.rate").unwrap();
        assert_eq!(pkts.amount, 10.0 * (2.0 * 250.0 + 2.0 * 2.0 * 250.0));
        let flows = e.memory.iter().find(|p| p.path == "traffic.0.flows").unwrap();
        assert_eq!(flows.amount, 2.0 * FLOW_BYTES);
        // 100 samples of the one direction that can be sampled (r0 -> sink0: it leaves a
        // router towards the destination; r0 -> src0/src1 lead to CBR sources, which
        // receive nothing), 3 metrics each.
        let series = e.memory.iter().find(|p| p.path == "metrics.series_interval").unwrap();
        assert_eq!(series.amount, 100.0 * 1.0 * 3.0 * ROW_BYTES);
        assert!(e.memory_bytes() < 1e7 && e.event_count() < 1e5, "{e:?}");
    }

    #[test]
    fn queue_capacity_reads_limits_and_buffers() {
        let fifo = QueueSpec::Fifo { limit: qoslab_core::qdisc::Limit::packets(60) };
        assert_eq!(queue_capacity(&fifo, 1000.0), Some(60.0));
        assert_eq!(show_bytes(8.0 * 1073741824.0), "8.0 GiB");
        assert_eq!(show_bytes(512.0), "512 B");
        assert_eq!(show_count(1e10), "1.00e10");
    }
}
