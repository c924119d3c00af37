//! Builds the result tables and the summary from a finished run.
//!
//! Column order and units are fixed here and documented in
//! `docs/results.md`. Rows are in a deterministic order: flows by id
//! (creation order), queues by link direction with each classful queue's
//! children after it, series as queue/link samples in time order then, flow
//! by flow, binned counters, delay traces and inter-arrival histograms,
//! events in the order they happened. Summary keys are sorted (serde_json
//! maps are BTreeMaps).
//!
//! Definitions:
//! - `throughput_bps` of a flow: delivered bits / (end_s - start_s), NaN
//!   when the flow never ran; of a class or group: delivered bits / run
//!   duration.
//! - `utilization` of a root queue: its link direction's busy time /
//!   duration; of a classful child: its departed bits / (rate x duration),
//!   its share of the link.
//! - Delay columns are NaN when no packet was delivered; `delay_var_s2` is
//!   the population variance; `jitter_rfc3550_s` is the RFC 3550 estimate
//!   after the last packet.

use crate::metrics::{
    EntityKind, QueueCounts, BIN_DELIVERED, BIN_DELIVERED_BYTES, BIN_DROPPED, BIN_SENT, DROP_METRICS, MARK_METRICS,
};
use crate::output::{Column, RunOutput, Strings, Table};
use crate::run::Sim;
use crate::traffic::FlowState;
use qoslab_core::qdisc::{DropReason, MarkReason};
use qoslab_core::stats::{jain_index, LogHistogram, Rfc3550Jitter, Welford};
use qoslab_core::Queue;
use qoslab_scenario::Scenario;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

const NS: f64 = 1e9;

fn s(t: u64) -> f64 {
    t as f64 / NS
}

/// The flows table's delay columns, in order.
pub const DELAY_COLUMNS: [&str; 6] =
    ["delay_mean_s", "delay_p50_s", "delay_p99_s", "delay_max_s", "delay_var_s2", "jitter_rfc3550_s"];

/// A flow's [`DELAY_COLUMNS`] from its delay moments, log-bucket histogram
/// and RFC 3550 jitter (ns): seconds (s² for the variance), NaN when no
/// packet was delivered. The percentiles are the histogram's (within 0.79 %).
pub fn delay_columns(delay: &Welford, hist: &LogHistogram, jitter: &Rfc3550Jitter) -> [f64; 6] {
    if delay.count() == 0 {
        return [f64::NAN; 6];
    }
    let q = |p: f64| hist.quantile(p).map_or(f64::NAN, |v| v / NS);
    [delay.mean() / NS, q(0.5), q(0.99), delay.max() / NS, delay.variance() / (NS * NS), jitter.value() / NS]
}

/// [`delay_columns`] of the one-way delays (ns) of a flow's delivered
/// packets in arrival order, recorded as the simulator records them (the
/// testbed's flows, `qoslab._core.delay_columns`).
pub fn delay_columns_of(delays_ns: &[u64]) -> [f64; 6] {
    let (mut delay, mut hist, mut jitter) = (Welford::new(), LogHistogram::new(), Rfc3550Jitter::new());
    for &d in delays_ns {
        delay.push(d as f64);
        hist.record(d);
        jitter.push(d as i64);
    }
    delay_columns(&delay, &hist, &jitter)
}

/// The columns of a result table (`flows`, `queues`, `series`, `events`) as
/// `(name, type)` in order, the type one of `u64`, `i64`, `f64`, `bool`,
/// `str`: what the simulator writes (a test runs one and compares) and what
/// the testbed's tables follow. `None` for another name.
pub fn columns(table: &str) -> Option<Vec<(String, &'static str)>> {
    let own = |cols: &[(&str, &'static str)]| cols.iter().map(|(n, t)| (n.to_string(), *t)).collect::<Vec<_>>();
    Some(match table {
        "flows" => own(FLOW_COLUMNS),
        "queues" => {
            let mut c = own(&QUEUE_COLUMNS[..11]);
            c.extend(DropReason::ALL.iter().map(|r| (format!("drops_{}", r.as_str()), "u64")));
            c.extend(MarkReason::ALL.iter().map(|r| (format!("marks_{}", r.as_str()), "u64")));
            c.extend(own(&QUEUE_COLUMNS[11..]));
            c
        }
        "series" => {
            own(&[("t_s", "f64"), ("entity_kind", "str"), ("entity_id", "str"), ("metric", "str"), ("value", "f64")])
        }
        "events" => own(&[
            ("t_s", "f64"),
            ("kind", "str"),
            ("flow_id", "i64"),
            ("entity", "str"),
            ("rule", "str"),
            ("estimate", "f64"),
            ("threshold", "f64"),
            ("detail", "str"),
        ]),
        _ => return None,
    })
}

/// The flows table's columns (see [`columns`]).
const FLOW_COLUMNS: &[(&str, &str)] = &[
    ("flow_id", "u64"),
    ("name", "str"),
    ("group", "str"),
    ("class", "i64"),
    ("src", "str"),
    ("dst", "str"),
    ("proto", "str"),
    ("start_s", "f64"),
    ("end_s", "f64"),
    ("first_tx_s", "f64"),
    ("last_rx_s", "f64"),
    ("admitted", "bool"),
    ("refused", "bool"),
    ("terminated", "bool"),
    ("sent_pkts", "u64"),
    ("sent_bytes", "u64"),
    ("delivered_pkts", "u64"),
    ("delivered_bytes", "u64"),
    ("dropped_pkts", "u64"),
    ("dropped_bytes", "u64"),
    ("in_flight_pkts", "u64"),
    ("throughput_bps", "f64"),
    ("delay_mean_s", "f64"),
    ("delay_p50_s", "f64"),
    ("delay_p99_s", "f64"),
    ("delay_max_s", "f64"),
    ("delay_var_s2", "f64"),
    ("jitter_rfc3550_s", "f64"),
    ("goodput_bps", "f64"),
    ("goodput_bytes", "u64"),
    ("retransmits", "u64"),
    ("timeouts", "u64"),
    ("fast_retransmits", "u64"),
    ("completion_s", "f64"),
    ("reverse_sent_pkts", "u64"),
    ("reverse_sent_bytes", "u64"),
    ("reverse_delivered_pkts", "u64"),
    ("reverse_dropped_pkts", "u64"),
    ("reverse_in_flight_pkts", "u64"),
    ("ce_marked_pkts", "u64"),
    ("ecn_reductions", "u64"),
    ("limited_transmits", "u64"),
    ("pcn_excess_marked_pkts", "u64"),
    ("pcn_threshold_marked_pkts", "u64"),
];

/// The queues table's columns around the drops and marks by reason (see [`columns`]).
const QUEUE_COLUMNS: &[(&str, &str)] = &[
    ("queue_id", "u64"),
    ("name", "str"),
    ("link", "str"),
    ("kind", "str"),
    ("parent", "str"),
    ("arrivals", "u64"),
    ("arrival_bytes", "u64"),
    ("departures", "u64"),
    ("departure_bytes", "u64"),
    ("drops", "u64"),
    ("drop_bytes", "u64"),
    ("backlog_mean_pkts", "f64"),
    ("backlog_mean_bytes", "f64"),
    ("backlog_max_pkts", "u64"),
    ("backlog_max_bytes", "u64"),
    ("backlog_end_pkts", "u64"),
    ("sojourn_mean_s", "f64"),
    ("sojourn_max_s", "f64"),
    ("link_rate_bps", "u64"),
    ("utilization", "f64"),
];

/// Builds everything a run writes.
pub fn build(sim: Sim, sc: &Scenario, seed: u64, loop_wall_s: f64) -> RunOutput {
    let flows = flows_table(&sim);
    let queues = queues_table(&sim);
    let events = events_table(&sim);
    let summary = summary(&sim, sc, seed, loop_wall_s);
    let traces = traces(&sim);
    let reasons = final_reasons(&sim);
    // The series rows (a million for 4,000 flows × 600 s) are built once
    // the network and the event set are freed (docs/performance.md).
    let (metrics, flow_list, group_names) = sim.into_measurements();
    let mut metrics = metrics;
    let series = series_table(&mut metrics, &flow_list, &group_names, &reasons);
    // The measurements go too: only the output is left for the caller to
    // copy out (to Python, column by column).
    drop((metrics, flow_list));
    crate::run::release_freed_memory();
    RunOutput { summary, flows, queues, series, events, traces }
}

/// Every traced direction's records with what writing them needs (see [`crate::trace`]).
fn traces(sim: &Sim) -> Vec<crate::trace::PcapTrace> {
    use crate::run::agents::{REVERSE, SEQ_MASK};
    use crate::trace::{FlowWire, PcapTrace};
    use crate::traffic::ModelPlan;
    let wire = |f: qoslab_core::FlowId| {
        let key = *sim.table.key(f);
        let group = &sim.groups[sim.flows[f.index()].group.index()];
        let tcp_mss = match &group.model {
            // The trace's segments carry wire size - 40 bytes of payload (IPv4 + TCP
            // headers synthesized inside the wire size), so sequence numbers step by that.
            ModelPlan::Tcp { cfg, header, .. } => Some(cfg.mss.saturating_add(*header).saturating_sub(40).max(1)),
            _ => None,
        };
        FlowWire { key, tcp_mss }
    };
    sim.tracer
        .traces
        .iter()
        .map(|t| {
            let d = &sim.net.dirs[t.dir.index()];
            let mut flows: Vec<Option<FlowWire>> = vec![None; sim.flows.len()];
            for r in &t.records {
                if flows[r.flow.index()].is_none() {
                    flows[r.flow.index()] = Some(wire(r.flow));
                }
            }
            PcapTrace {
                name: t.name.clone(),
                records: t.records.clone(),
                ends: (d.from.0, d.to.0),
                flows,
                reverse_bit: REVERSE,
                seq_mask: SEQ_MASK,
            }
        })
        .collect()
}

/// `(start_s, end_s, ran)` of a flow.
fn span(sim: &Sim, i: usize) -> (f64, f64, bool) {
    let fl = &sim.flows[i];
    match fl.state {
        FlowState::Active | FlowState::Ended => (s(fl.start.0), s(fl.end.0.min(sim.end.0)), true),
        _ => (s(fl.start.0), s(fl.start.0), false),
    }
}

fn flows_table(sim: &Sim) -> Table {
    let n = sim.flows.len();
    let mut t = Table::new();
    let u = |f: &dyn Fn(usize) -> u64| Column::U64((0..n).map(f).collect());
    let fl = |f: &dyn Fn(usize) -> f64| Column::F64((0..n).map(f).collect());
    let st = |f: &dyn Fn(usize) -> String| Column::Str(Strings::from_owned((0..n).map(f)));
    let m = &sim.metrics.flows;
    let node = |id: crate::engine::NodeId| sim.net.nodes[id.index()].name.clone();
    t.push("flow_id", u(&|i| i as u64));
    t.push("name", st(&|i| sim.flow_name(i)));
    t.push("group", st(&|i| sim.groups[sim.flows[i].group.index()].name.clone()));
    t.push("class", Column::I64((0..n).map(|i| sim.flows[i].class.0 as i64).collect()));
    t.push("src", st(&|i| node(sim.flows[i].src)));
    t.push("dst", st(&|i| node(sim.flows[i].dst)));
    t.push("proto", st(&|i| if sim.agents[i].tcp().is_some() { "tcp" } else { "udp" }.to_string()));
    t.push("start_s", fl(&|i| span(sim, i).0));
    t.push("end_s", fl(&|i| span(sim, i).1));
    let opt_s = |t: Option<qoslab_core::units::Time>| t.map_or(f64::NAN, |t| s(t.0));
    t.push("first_tx_s", fl(&|i| opt_s(m[i].first_sent())));
    t.push("last_rx_s", fl(&|i| opt_s(m[i].last_arrival())));
    let state = |i: usize| sim.flows[i].state;
    t.push(
        "admitted",
        Column::Bool((0..n).map(|i| matches!(state(i), FlowState::Active | FlowState::Ended)).collect()),
    );
    t.push("refused", Column::Bool((0..n).map(|i| state(i) == FlowState::Refused).collect()));
    // Ended by a flow-termination mechanism (PCN ingress, [Zhang07 §4]).
    t.push("terminated", Column::Bool((0..n).map(|i| sim.flows[i].end_reason == "terminated").collect()));
    t.push("sent_pkts", u(&|i| m[i].sent_pkts));
    t.push("sent_bytes", u(&|i| m[i].sent_bytes));
    t.push("delivered_pkts", u(&|i| m[i].delivered_pkts));
    t.push("delivered_bytes", u(&|i| m[i].delivered_bytes));
    t.push("dropped_pkts", u(&|i| m[i].dropped_pkts));
    t.push("dropped_bytes", u(&|i| m[i].dropped_bytes));
    // Counted from the packets held at the end, not derived (see `run::held`).
    let held = sim.held_per_flow();
    t.push("in_flight_pkts", u(&|i| held.forward[i]));
    t.push(
        "throughput_bps",
        fl(&|i| {
            let (a, b, ran) = span(sim, i);
            if ran && b > a {
                m[i].delivered_bytes as f64 * 8.0 / (b - a)
            } else {
                f64::NAN
            }
        }),
    );
    let delays: Vec<[f64; 6]> = m.iter().map(|f| delay_columns(&f.delay, &f.delay_hist, &f.jitter)).collect();
    for (k, name) in DELAY_COLUMNS.iter().enumerate() {
        t.push(name, Column::F64(delays.iter().map(|d| d[k]).collect()));
    }
    tcp_columns(sim, &held, &mut t);
    t
}

/// TCP and reverse-path columns of the flows table (NaN / 0 for UDP flows).
fn tcp_columns(sim: &Sim, held: &crate::run::Held, t: &mut Table) {
    let n = sim.flows.len();
    let tcp = |i: usize| sim.agents[i].tcp();
    let u = |f: &dyn Fn(usize) -> u64| Column::U64((0..n).map(f).collect());
    let fl = |f: &dyn Fn(usize) -> f64| Column::F64((0..n).map(f).collect());
    t.push(
        "goodput_bps",
        fl(&|i| match tcp(i) {
            Some(a) => {
                let (a0, b, ran) = span(sim, i);
                if ran && b > a0 {
                    a.goodput_bytes as f64 * 8.0 / (b - a0)
                } else {
                    f64::NAN
                }
            }
            None => f64::NAN,
        }),
    );
    t.push("goodput_bytes", u(&|i| tcp(i).map_or(0, |a| a.goodput_bytes)));
    t.push("retransmits", u(&|i| tcp(i).map_or(0, |a| a.sender.stats().retransmits)));
    t.push("timeouts", u(&|i| tcp(i).map_or(0, |a| a.sender.stats().timeouts)));
    t.push("fast_retransmits", u(&|i| tcp(i).map_or(0, |a| a.sender.stats().fast_retransmits)));
    t.push(
        "completion_s",
        fl(&|i| tcp(i).and_then(|a| a.completed).map_or(f64::NAN, |c| s(c.0.saturating_sub(sim.flows[i].start.0)))),
    );
    let r = &sim.metrics.reverse;
    t.push("reverse_sent_pkts", u(&|i| r[i].sent_pkts));
    t.push("reverse_sent_bytes", u(&|i| r[i].sent_bytes));
    t.push("reverse_delivered_pkts", u(&|i| r[i].delivered_pkts));
    t.push("reverse_dropped_pkts", u(&|i| r[i].dropped_pkts));
    t.push("reverse_in_flight_pkts", u(&|i| held.reverse[i]));
    t.push("ce_marked_pkts", u(&|i| sim.metrics.flows[i].ce_pkts));
    t.push("ecn_reductions", u(&|i| tcp(i).map_or(0, |a| a.sender.stats().ecn_reductions)));
    t.push("limited_transmits", u(&|i| tcp(i).map_or(0, |a| a.sender.stats().limited_transmits)));
    // PCN marks on delivered packets [Zhang07 §4.3.2]: after the TCP
    // columns so the existing column order stays as it was.
    let m = &sim.metrics.flows;
    t.push("pcn_excess_marked_pkts", u(&|i| u64::from(m[i].pcn_excess_pkts)));
    t.push("pcn_threshold_marked_pkts", u(&|i| u64::from(m[i].pcn_threshold_pkts)));
}

/// A queue row: the queue, its name, parent name, link direction index.
struct QueueRow<'a> {
    q: &'a Queue,
    name: String,
    parent: String,
    dir: usize,
    root: bool,
}

impl QueueRow<'_> {
    /// The row's counters: a root queue's with its port's stages.
    fn counts(&self, sim: &Sim) -> QueueCounts {
        QueueCounts::of(self.q, self.root.then(|| sim.net.dirs[self.dir].port.stage_stats()))
    }
}

fn queue_rows(sim: &Sim) -> Vec<QueueRow<'_>> {
    fn walk<'a>(out: &mut Vec<QueueRow<'a>>, q: &'a Queue, name: String, parent: String, dir: usize, root: bool) {
        let children = q.children();
        out.push(QueueRow { q, name: name.clone(), parent, dir, root });
        for (c, child) in children.iter().enumerate() {
            walk(out, child, format!("{name}/band{c}"), name.clone(), dir, false);
        }
    }
    let mut out = Vec::new();
    for (i, d) in sim.net.dirs.iter().enumerate() {
        walk(&mut out, d.port.queue(), d.name.clone(), String::new(), i, true);
    }
    out
}

fn utilization(sim: &Sim, r: &QueueRow<'_>) -> f64 {
    let d = &sim.net.dirs[r.dir];
    let end = sim.end.0;
    if end == 0 {
        return f64::NAN;
    }
    if r.root {
        d.busy_ns_until(sim.end) as f64 / end as f64
    } else {
        r.q.stats().departure_bytes as f64 * 8.0 / (d.rate().0 as f64 * end as f64 / NS)
    }
}

fn queues_table(sim: &Sim) -> Table {
    let rows = queue_rows(sim);
    let n = rows.len();
    let end = sim.end;
    let mut t = Table::new();
    let u = |f: &dyn Fn(&QueueRow) -> u64| Column::U64(rows.iter().map(f).collect());
    let fl = |f: &dyn Fn(&QueueRow) -> f64| Column::F64(rows.iter().map(f).collect());
    let st = |f: &dyn Fn(&QueueRow) -> String| Column::Str(Strings::from_owned(rows.iter().map(f)));
    t.push("queue_id", Column::U64((0..n as u64).collect()));
    t.push("name", st(&|r| r.name.clone()));
    t.push("link", st(&|r| sim.net.links[sim.net.dirs[r.dir].link.index()].name.clone()));
    t.push("kind", st(&|r| r.q.kind().to_string()));
    t.push("parent", st(&|r| r.parent.clone()));
    // A root queue's row is its port's ([`QueueCounts`]).
    let counts: Vec<QueueCounts> = rows.iter().map(|r| r.counts(sim)).collect();
    let c = |f: &dyn Fn(&QueueCounts) -> u64| Column::U64(counts.iter().map(f).collect());
    t.push("arrivals", c(&|c| c.arrivals));
    t.push("arrival_bytes", c(&|c| c.arrival_bytes));
    t.push("departures", c(&|c| c.departures));
    t.push("departure_bytes", u(&|r| r.q.stats().departure_bytes));
    t.push("drops", c(&|c| c.total_drops()));
    t.push("drop_bytes", c(&|c| c.total_drop_bytes()));
    for reason in DropReason::ALL {
        t.push(&format!("drops_{}", reason.as_str()), c(&|c| c.drops[reason as usize]));
    }
    for reason in MarkReason::ALL {
        t.push(&format!("marks_{}", reason.as_str()), c(&|c| c.marks[reason as usize]));
    }
    t.push("backlog_mean_pkts", fl(&|r| r.q.mean_backlog_packets(end)));
    t.push("backlog_mean_bytes", fl(&|r| r.q.mean_backlog_bytes(end)));
    t.push("backlog_max_pkts", u(&|r| r.q.stats().peak_packets as u64));
    t.push("backlog_max_bytes", u(&|r| r.q.stats().peak_bytes));
    t.push("backlog_end_pkts", u(&|r| r.q.backlog().packets as u64));
    t.push(
        "sojourn_mean_s",
        fl(&|r| {
            let st = r.q.stats();
            if st.departures == 0 {
                f64::NAN
            } else {
                st.sojourn_sum_ns as f64 / st.departures as f64 / NS
            }
        }),
    );
    t.push(
        "sojourn_max_s",
        fl(&|r| if r.q.stats().departures == 0 { f64::NAN } else { s(r.q.stats().sojourn_max_ns) }),
    );
    t.push("link_rate_bps", u(&|r| sim.net.dirs[r.dir].rate().0));
    t.push("utilization", fl(&|r| utilization(sim, r)));
    t
}

/// The series table's columns; the strings are dictionary codes, looked
/// up once per entity and metric rather than once per row.
#[derive(Default)]
struct SeriesCols {
    t: Vec<f64>,
    kind: Strings,
    id: Strings,
    metric: Strings,
    value: Vec<f64>,
}

/// The codes of one row's entity kind and entity id.
#[derive(Clone, Copy)]
struct Entity {
    kind: u32,
    id: u32,
}

impl SeriesCols {
    /// Room for `rows` rows: the columns are built at their final size,
    /// never doubled and copied (a million rows for 4,000 flows × 600 s).
    fn with_capacity(rows: usize) -> SeriesCols {
        let mut c = SeriesCols { t: Vec::with_capacity(rows), value: Vec::with_capacity(rows), ..Default::default() };
        c.kind.reserve(rows);
        c.id.reserve(rows);
        c.metric.reserve(rows);
        c
    }
    fn entity(&mut self, kind: &str, id: &str) -> Entity {
        Entity { kind: self.kind.code(kind), id: self.id.code(id) }
    }
    fn push(&mut self, t: f64, e: Entity, metric: u32, value: f64) {
        self.t.push(t);
        self.kind.push_code(e.kind);
        self.id.push_code(e.id);
        self.metric.push_code(metric);
        self.value.push(value);
    }
}

/// The drop / mark counter metrics of each sampled queue entity that are
/// non-zero at the run's end, in reason order (a root queue's with its
/// port's stages, as in the queues table).
fn final_reasons(sim: &Sim) -> Vec<Vec<&'static str>> {
    let counts: BTreeMap<String, QueueCounts> =
        queue_rows(sim).iter().map(|r| (r.name.clone(), r.counts(sim))).collect();
    sim.metrics
        .entities
        .iter()
        .map(|name| counts.get(name).map_or_else(Vec::new, |c| c.nonzero_reasons().map(|(m, _)| m).collect()))
        .collect()
}

/// An upper bound of the series table's rows (exact but for at most four
/// rows a flow: a flow's current bin may already be stored).
fn series_rows(m: &crate::metrics::Metrics, reasons: &[Vec<&'static str>]) -> usize {
    let departures = m.metric_names.iter().position(|n| *n == "departures");
    let queue_rows: usize = m
        .samples
        .iter()
        .map(|smp| match (smp.kind, departures) {
            (EntityKind::Queue, Some(d)) if smp.metric as usize == d => 1 + reasons[smp.entity as usize].len(),
            _ => 1,
        })
        .sum();
    let flow_rows: usize = m
        .flows
        .iter()
        .map(|f| {
            4 * (f.past.bins.len() + 1)
                + f.trace.as_ref().map_or(0, |t| t.len())
                + f.interarrival.as_ref().map_or(0, |h| h.nonzero().count() + 1)
        })
        .sum();
    queue_rows + flow_rows + m.tcp_samples.len()
}

fn series_table(
    m: &mut crate::metrics::Metrics,
    flows: &[crate::traffic::Flow],
    group_names: &[String],
    reasons: &[Vec<&'static str>],
) -> Table {
    let mut c = SeriesCols::with_capacity(series_rows(m, reasons));
    let is_reason: Vec<bool> =
        m.metric_names.iter().map(|n| DROP_METRICS.contains(n) || MARK_METRICS.contains(n)).collect();
    // Codes of every (kind, entity) and metric name, in first-use order
    // (the dictionaries' order follows the rows, as before).
    let mut queue_ent: Vec<Option<Entity>> = vec![None; m.entities.len()];
    let mut link_ent: Vec<Option<Entity>> = vec![None; m.entities.len()];
    let mut metric_code: Vec<Option<u32>> = vec![None; m.metric_names.len()];
    for (k, smp) in m.samples.iter().enumerate() {
        let metric = m.metric_names[smp.metric as usize];
        if smp.kind == EntityKind::Queue && is_reason[smp.metric as usize] {
            continue; // emitted after `departures`, below
        }
        let entity = &m.entities[smp.entity as usize];
        let slot = match smp.kind {
            EntityKind::Queue => &mut queue_ent[smp.entity as usize],
            EntityKind::Link => &mut link_ent[smp.entity as usize],
        };
        let e = match *slot {
            Some(e) => e,
            None => {
                let kind = match smp.kind {
                    EntityKind::Queue => "queue",
                    EntityKind::Link => "link",
                };
                let e = c.entity(kind, entity);
                *slot = Some(e);
                e
            }
        };
        let mc = *metric_code[smp.metric as usize].get_or_insert_with(|| c.metric.code(metric));
        c.push(s(smp.t), e, mc, smp.value);
        if smp.kind == EntityKind::Queue && metric == "departures" {
            // The reason counters stored at this instant follow `departures`;
            // a reason not stored yet was still zero.
            let same = |o: &crate::metrics::Sample| {
                o.t == smp.t && o.kind == smp.kind && o.entity == smp.entity && is_reason[o.metric as usize]
            };
            let stored: Vec<_> = m.samples[k + 1..].iter().take_while(|o| same(o)).collect();
            for name in &reasons[smp.entity as usize] {
                let v = stored.iter().find(|o| m.metric_names[o.metric as usize] == *name).map_or(0.0, |o| o.value);
                let mc = c.metric.code(name);
                c.push(s(smp.t), e, mc, v);
            }
        }
    }
    let bin_s = m.bin_ns as f64 / NS;
    let names = [
        (BIN_SENT, "sent_pkts"),
        (BIN_DELIVERED, "delivered_pkts"),
        (BIN_DROPPED, "dropped_pkts"),
        (BIN_DELIVERED_BYTES, "delivered_bytes"),
    ];
    let mut bin_codes: Option<[(usize, u32); 4]> = None;
    let mut flow_ent: Vec<Option<Entity>> = vec![None; m.flows.len()];
    let mut ent_of = |c: &mut SeriesCols, i: usize| {
        *flow_ent[i].get_or_insert_with(|| c.entity("flow", &flows[i].name(group_names)))
    };
    // Each flow's bins and trace are freed once its rows are written, and
    // the freed pages handed back every so often, so that the measurements
    // and their rows never coexist whole (docs/performance.md).
    for (i, f) in m.flows.iter_mut().enumerate() {
        if i % 1024 == 1023 {
            crate::run::release_freed_memory();
        }
        let bins = f.take_bins();
        // The flows table is built: its delay distribution is not needed again.
        drop(std::mem::take(&mut f.delay_hist));
        if !bins.bins.is_empty() {
            let e = ent_of(&mut c, i);
            let codes = *bin_codes.get_or_insert_with(|| names.map(|(idx, metric)| (idx, c.metric.code(metric))));
            for (k, b) in bins.bins.iter().enumerate() {
                let t = (bins.first + k as u64) as f64 * bin_s;
                for (idx, mc) in codes {
                    c.push(t, e, mc, b[idx] as f64);
                }
            }
        }
        if let Some(tr) = f.trace.take() {
            if !tr.is_empty() {
                let e = ent_of(&mut c, i);
                let mc = c.metric.code("delay_s");
                for (t, d) in tr.iter() {
                    c.push(s(*t), e, mc, s(*d));
                }
            }
        }
        if let Some(h) = f.interarrival.take() {
            let mut rows = h.nonzero().peekable();
            if rows.peek().is_some() || h.overflow() > 0 {
                let e = ent_of(&mut c, i);
                let mc = c.metric.code("interarrival_count");
                for (lo, n) in rows {
                    c.push(s(lo), e, mc, n as f64);
                }
                if h.overflow() > 0 {
                    c.push(s(h.max()), e, mc, h.overflow() as f64);
                }
            }
        }
    }
    for smp in &m.tcp_samples {
        let e = ent_of(&mut c, smp.flow as usize);
        let mc = c.metric.code(crate::metrics::TCP_SERIES[smp.metric as usize]);
        c.push(s(smp.t), e, mc, smp.value);
    }
    let mut t = Table::new();
    t.push("t_s", Column::F64(c.t));
    t.push("entity_kind", Column::Str(c.kind));
    t.push("entity_id", Column::Str(c.id));
    t.push("metric", Column::Str(c.metric));
    t.push("value", Column::F64(c.value));
    t
}

fn events_table(sim: &Sim) -> Table {
    let ev = &sim.metrics.events;
    let mut t = Table::new();
    t.push("t_s", Column::F64(ev.iter().map(|e| s(e.t.0)).collect()));
    t.push("kind", Column::Str(ev.iter().map(|e| e.kind).collect()));
    t.push("flow_id", Column::I64(ev.iter().map(|e| e.flow.map_or(-1, |f| f.0 as i64)).collect()));
    // A flow's name is made once, not once per row.
    let mut entity = Strings::new();
    let mut flow_code: Vec<u32> = vec![u32::MAX; sim.flows.len()];
    for e in ev.iter() {
        let c = match e.flow {
            Some(f) if flow_code[f.index()] != u32::MAX => flow_code[f.index()],
            Some(f) => {
                let c = entity.code(&sim.flow_name(f.index()));
                flow_code[f.index()] = c;
                c
            }
            None => entity.code(""),
        };
        entity.push_code(c);
    }
    t.push("entity", Column::Str(entity));
    t.push("rule", Column::Str(ev.iter().map(|e| e.rule).collect()));
    t.push("estimate", Column::F64(ev.iter().map(|e| e.estimate).collect()));
    t.push("threshold", Column::F64(ev.iter().map(|e| e.threshold).collect()));
    t.push("detail", Column::Str(ev.iter().map(|e| e.detail).collect()));
    t
}

/// Totals over a set of flows (a class or a group): the summary's
/// `classes` and `groups` entries, for the simulator's flows and (through
/// `qoslab._core.totals`) the testbed's.
#[derive(Default)]
pub struct Totals {
    flows: u64,
    sent_pkts: u64,
    sent_bytes: u64,
    delivered_pkts: u64,
    delivered_bytes: u64,
    dropped_pkts: u64,
    dropped_bytes: u64,
    throughputs: Vec<f64>,
}

/// One flow's counters as [`Totals`] adds them.
#[derive(Clone, Copy, Debug, Default)]
pub struct FlowCounts {
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    pub delivered_pkts: u64,
    pub delivered_bytes: u64,
    pub dropped_pkts: u64,
    pub dropped_bytes: u64,
    /// Its throughput, `None` when it never ran (it counts for no fairness).
    pub throughput_bps: Option<f64>,
}

impl Totals {
    fn add(&mut self, sim: &Sim, i: usize) {
        let f = &sim.metrics.flows[i];
        let (a, b, ran) = span(sim, i);
        self.add_flow(&FlowCounts {
            sent_pkts: f.sent_pkts,
            sent_bytes: f.sent_bytes,
            delivered_pkts: f.delivered_pkts,
            delivered_bytes: f.delivered_bytes,
            dropped_pkts: f.dropped_pkts,
            dropped_bytes: f.dropped_bytes,
            throughput_bps: (ran && b > a).then(|| f.delivered_bytes as f64 * 8.0 / (b - a)),
        });
    }
    /// Adds one flow.
    pub fn add_flow(&mut self, f: &FlowCounts) {
        self.flows += 1;
        self.sent_pkts += f.sent_pkts;
        self.sent_bytes += f.sent_bytes;
        self.delivered_pkts += f.delivered_pkts;
        self.delivered_bytes += f.delivered_bytes;
        self.dropped_pkts += f.dropped_pkts;
        self.dropped_bytes += f.dropped_bytes;
        if let Some(t) = f.throughput_bps {
            self.throughputs.push(t);
        }
    }
    /// The summary entry over a run of `duration_s` (keys sorted; Jain's
    /// index of the flows' throughputs, null when none ran).
    pub fn json(&self, duration_s: f64) -> Value {
        json!({
            "flows": self.flows,
            "sent_pkts": self.sent_pkts,
            "sent_bytes": self.sent_bytes,
            "delivered_pkts": self.delivered_pkts,
            "delivered_bytes": self.delivered_bytes,
            "dropped_pkts": self.dropped_pkts,
            "dropped_bytes": self.dropped_bytes,
            "throughput_bps": self.delivered_bytes as f64 * 8.0 / duration_s,
            "fairness_jain": finite(jain_index(&self.throughputs)),
        })
    }
}

/// JSON has no NaN: null instead.
fn finite(v: f64) -> Value {
    if v.is_finite() {
        json!(v)
    } else {
        Value::Null
    }
}

fn summary(sim: &Sim, sc: &Scenario, seed: u64, loop_wall_s: f64) -> Value {
    let duration_s = s(sim.end.0);
    let mut classes: BTreeMap<u8, Totals> = BTreeMap::new();
    let mut groups: BTreeMap<String, Totals> = BTreeMap::new();
    let (mut admitted, mut refused) = (0u64, 0u64);
    for (i, f) in sim.flows.iter().enumerate() {
        classes.entry(f.class.0).or_default().add(sim, i);
        groups.entry(sim.groups[f.group.index()].name.clone()).or_default().add(sim, i);
        match f.state {
            FlowState::Active | FlowState::Ended => admitted += 1,
            FlowState::Refused => refused += 1,
            _ => {}
        }
    }
    let classes: Map<String, Value> = classes.iter().map(|(k, v)| (k.to_string(), v.json(duration_s))).collect();
    let groups: Map<String, Value> = groups.iter().map(|(k, v)| (k.clone(), v.json(duration_s))).collect();
    // Router queues that saw a packet, and any other queue that dropped or
    // marked: idle ports and hosts' own queues are in the queues table only
    // (4,000 sources made this map 14 MB of JSON values; docs/performance.md).
    let mut queues = Map::new();
    for r in queue_rows(sim) {
        let c = r.counts(sim);
        let from_router = sim.net.nodes[sim.net.dirs[r.dir].from.index()].kind == qoslab_scenario::NodeKind::Router;
        let touched = c.total_drops() + c.total_marks() > 0;
        let busy = c.arrivals > 0;
        if !(touched || from_router && busy) {
            continue;
        }
        queues.insert(
            r.name.clone(),
            json!({
                "arrivals": c.arrivals,
                "drops": c.total_drops(),
                "marks": c.total_marks(),
                "backlog_mean_pkts": finite(r.q.mean_backlog_packets(sim.end)),
            }),
        );
    }
    let bottleneck = match sim.net.bottleneck {
        Some(b) => {
            let d = &sim.net.dirs[b.index()];
            let c = QueueCounts::of(d.port.queue(), Some(d.port.stage_stats()));
            let drops: Map<String, Value> =
                DropReason::ALL.iter().map(|r| (r.as_str().to_string(), json!(c.drops[*r as usize]))).collect();
            json!({
                "name": d.name,
                "arrivals": c.arrivals,
                "drops": drops,
                "utilization": finite(d.busy_ns_until(sim.end) as f64 / sim.end.0 as f64),
            })
        }
        None => Value::Null,
    };
    let m = &sim.metrics.flows;
    let (queued, on_wire, propagating) = sim.packets_in_network();
    json!({
        "scenario": serde_json::to_value(sc).unwrap_or(Value::Null),
        "seed": seed,
        "qoslab_version": env!("CARGO_PKG_VERSION"),
        "sim_time_s": duration_s,
        "loop_wall_s": loop_wall_s,
        "events": sim.event_count,
        "flows": {"count": sim.flows.len(), "admitted": admitted, "refused": refused},
        "classes": classes,
        "groups": groups,
        "queues": queues,
        "bottleneck": bottleneck,
        "packets": {
            "sent": m.iter().map(|f| f.sent_pkts).sum::<u64>(),
            "delivered": m.iter().map(|f| f.delivered_pkts).sum::<u64>(),
            "dropped": m.iter().map(|f| f.dropped_pkts).sum::<u64>(),
            "queued_end": queued,
            "on_wire_end": on_wire,
            "propagating_end": propagating,
            "reverse_sent": sim.metrics.reverse.iter().map(|r| r.sent_pkts).sum::<u64>(),
            "reverse_delivered": sim.metrics.reverse.iter().map(|r| r.delivered_pkts).sum::<u64>(),
            "reverse_dropped": sim.metrics.reverse.iter().map(|r| r.dropped_pkts).sum::<u64>(),
        },
    })
}
