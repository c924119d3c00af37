//! What a run measures, recorded as it happens; [`tables`] turns it into
//! the result tables and the summary.
//!
//! **Per flow** ([`FlowStats`]): sent / delivered / dropped packets and
//! bytes (so `sent = delivered + dropped + in flight` exactly), one-way
//! delay (creation at the source to arrival at the destination: queueing,
//! serialization and propagation of every hop) as Welford moments and a
//! log-bucket histogram for p50/p99 (within 0.79 %), RFC 3550 jitter,
//! the receiver's inter-arrival histogram (`metrics.interarrival_bin` up
//! to `interarrival_max`, then an overflow bin), first and last times,
//! counters binned in time (`metrics.bin`: sent, delivered, dropped
//! packets and delivered bytes, each counted in the bin of the instant it
//! happened), and, for traced flows, every packet's delay.
//!
//! **Per queue and link**, sampled every `metrics.series_interval` (and at
//! the run's end): backlog in packets and bytes and every probe variable
//! (`red_avg`) of each queue, classful children as their own entities
//! (`r0->sink0/band1`), and the queue's cumulative counters since the
//! run's start: `arrivals`, `departures`, and `drops_<reason>` /
//! `marks_<reason>` for every reason whose count is non-zero at the run's
//! end (zeros included from the queue's first sample on); link utilization over the interval (busy time /
//! interval length, stamped with the interval's start). Which output
//! queues of routers are sampled ([`SeriesSel`], chosen per direction
//! before the run): with `metrics.series` those it names; by default the
//! preset's bottleneck(s) and every queue with its own rule to drop or mark
//! (any discipline but `fifo`, or any port stage), from the first sample
//! after their first packet; and any other router queue from the first
//! sample after it first drops or marks a packet. Host (NIC) queues and
//! quiet router ports are summarized in the queues table only, so that
//! thousands of access and ACK-return ports do not flood the series
//! (10,000 flows made 15.2 M rows).
//! Totals (drops and marks by reason, time-average and peak backlog,
//! sojourn) come from the queue's own counting wrapper.

pub mod tables;

use crate::engine::FlowId;
use crate::net::Network;
use qoslab_core::admission::Decision;
use qoslab_core::pipeline::StageStats;
use qoslab_core::qdisc::{DropReason, MarkReason};
use qoslab_core::stats::{FixedHistogram, LogHistogram, Rfc3550Jitter, Welford};
use qoslab_core::units::Time;
use qoslab_core::{Packet, PcnMark, Queue};
use qoslab_scenario::MetricsSpec;

/// Indices into a bin's counters.
pub const BIN_SENT: usize = 0;
pub const BIN_DELIVERED: usize = 1;
pub const BIN_DROPPED: usize = 2;
pub const BIN_DELIVERED_BYTES: usize = 3;

/// Counters of one flow in consecutive time bins, from its first bin on:
/// the current bin inline (touched per packet), earlier ones in `bins`.
#[derive(Clone, Debug, Default)]
pub struct FlowBins {
    pub first: u64,
    pub bins: Vec<[u64; 4]>,
}

impl FlowBins {
    /// Stores the counters `c` of bin `bin`.
    fn store(&mut self, bin: u64, c: [u64; 4]) {
        if self.bins.is_empty() {
            self.first = bin;
        }
        let k = bin.saturating_sub(self.first) as usize;
        if k >= self.bins.len() {
            self.bins.resize(k + 1, [0; 4]);
        }
        for (a, b) in self.bins[k].iter_mut().zip(c) {
            *a += b;
        }
    }
}

const NONE: u64 = u64::MAX;

/// Everything measured about one flow. Laid out in declaration order
/// (`repr(C)`): the send path's fields share the first cache line, the
/// delivery path's the next ones.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct FlowStats {
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    first_sent: u64,
    last_sent: u64,
    /// The current bin and its counters (sent, delivered, dropped, delivered bytes).
    bin: u64,
    cur: [u64; 4],
    pub delivered_pkts: u64,
    pub delivered_bytes: u64,
    first_arrival: u64,
    last_arrival: u64,
    pub jitter: Rfc3550Jitter,
    pub delay: Welford,
    pub dropped_pkts: u64,
    pub dropped_bytes: u64,
    /// Delivered packets that carry a CE mark (RFC 3168).
    pub ce_pkts: u64,
    /// Delivered packets that carry a PCN excess (termination) mark, and a
    /// PCN threshold (admission) mark ([Zhang07 §4.3.2]'s per-flow marked
    /// fractions). u32: a flow sends fewer than 2^32 packets in any run this
    /// simulator can hold, and the pair costs 8 bytes.
    pub pcn_excess_pkts: u32,
    pub pcn_threshold_pkts: u32,
    pub delay_hist: LogHistogram,
    /// Boxed: most runs have none, and a flow's state is kept small
    /// (docs/performance.md, the 1,000,000-flow case).
    pub interarrival: Option<Box<FixedHistogram>>,
    /// Bins before the current one.
    pub past: FlowBins,
    /// `(arrival ns, delay ns)` of every delivered packet, when traced.
    pub trace: Option<Box<Vec<(u64, u64)>>>,
}

fn opt(t: u64) -> Option<Time> {
    (t != NONE).then_some(Time(t))
}

impl FlowStats {
    pub fn new(traced: bool, spec: &MetricsSpec) -> FlowStats {
        FlowStats {
            sent_pkts: 0,
            sent_bytes: 0,
            first_sent: NONE,
            last_sent: NONE,
            bin: NONE,
            cur: [0; 4],
            delivered_pkts: 0,
            delivered_bytes: 0,
            first_arrival: NONE,
            last_arrival: NONE,
            jitter: Rfc3550Jitter::new(),
            delay: Welford::new(),
            dropped_pkts: 0,
            dropped_bytes: 0,
            ce_pkts: 0,
            pcn_excess_pkts: 0,
            pcn_threshold_pkts: 0,
            delay_hist: LogHistogram::new(),
            interarrival: spec
                .flow_histograms
                .then(|| FixedHistogram::new(spec.interarrival_bin.0, spec.interarrival_max.0).map(Box::new))
                .flatten(),
            past: FlowBins::default(),
            trace: traced.then(Box::default),
        }
    }

    /// Makes `bin` the current bin (bins only move forward).
    #[inline]
    fn at_bin(&mut self, bin: u64) {
        if self.bin != bin {
            self.roll(bin);
        }
    }
    #[cold]
    fn roll(&mut self, bin: u64) {
        if self.bin != NONE {
            self.past.store(self.bin, self.cur);
        }
        self.bin = bin;
        self.cur = [0; 4];
    }

    /// Every bin from the first to the last, zeros included (`(first bin,
    /// counters)`), taken out: the flow keeps none (the series table frees
    /// each flow's bins once its rows are written).
    pub fn take_bins(&mut self) -> FlowBins {
        let mut b = std::mem::take(&mut self.past);
        if self.bin != NONE {
            b.store(self.bin, self.cur);
            self.bin = NONE;
        }
        b
    }

    pub fn first_sent(&self) -> Option<Time> {
        opt(self.first_sent)
    }
    pub fn last_sent(&self) -> Option<Time> {
        opt(self.last_sent)
    }
    pub fn first_arrival(&self) -> Option<Time> {
        opt(self.first_arrival)
    }
    pub fn last_arrival(&self) -> Option<Time> {
        opt(self.last_arrival)
    }

    #[inline]
    pub fn on_send(&mut self, now: Time, size: u32, bin: u64) {
        self.sent_pkts += 1;
        self.sent_bytes += size as u64;
        if self.first_sent == NONE {
            self.first_sent = now.0;
        }
        self.last_sent = now.0;
        self.at_bin(bin);
        self.cur[BIN_SENT] += 1;
    }

    #[inline]
    pub fn on_drop(&mut self, size: u32, bin: u64) {
        self.dropped_pkts += 1;
        self.dropped_bytes += size as u64;
        self.at_bin(bin);
        self.cur[BIN_DROPPED] += 1;
    }

    /// A packet of the flow arrives at its receiver; `hist`: record its delay
    /// in the flow's histogram (`metrics.flow_histograms`; the inter-arrival
    /// histogram is absent when it is off).
    #[inline]
    pub fn on_deliver(&mut self, now: Time, pkt: &Packet, bin: u64, hist: bool) {
        self.delivered_pkts += 1;
        self.delivered_bytes += pkt.size as u64;
        self.ce_pkts += u64::from(pkt.ecn == qoslab_core::Ecn::Ce);
        match pkt.pcn {
            PcnMark::ExcessMarked => self.pcn_excess_pkts = self.pcn_excess_pkts.saturating_add(1),
            PcnMark::ThresholdMarked => self.pcn_threshold_pkts = self.pcn_threshold_pkts.saturating_add(1),
            PcnMark::NotPcn | PcnMark::NotMarked => {}
        }
        let delay = now.0.saturating_sub(pkt.created.0);
        self.delay.push(delay as f64);
        if hist {
            self.delay_hist.record(delay);
        }
        self.jitter.push(delay as i64);
        if self.last_arrival != NONE {
            if let Some(h) = &mut self.interarrival {
                h.record(now.0 - self.last_arrival);
            }
        } else {
            self.first_arrival = now.0;
        }
        self.last_arrival = now.0;
        self.at_bin(bin);
        self.cur[BIN_DELIVERED] += 1;
        self.cur[BIN_DELIVERED_BYTES] += pkt.size as u64;
        if let Some(t) = &mut self.trace {
            t.push((now.0, delay));
        }
    }
}

/// Packets a flow's receiver sent back to its source (TCP ACKs, MM_APP
/// feedback), counted apart from the flow's data: `sent = delivered +
/// dropped + in flight` holds for them too, with the packets in flight
/// counted where they are held (`crate::run::Held`).
#[derive(Clone, Copy, Debug, Default)]
pub struct ReverseStats {
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    pub delivered_pkts: u64,
    pub dropped_pkts: u64,
}

/// Series metrics of TCP senders (`metrics.tcp_series`).
pub const TCP_SERIES: [&str; 4] = ["cwnd_pkts", "ssthresh_pkts", "srtt_s", "rto_s"];

/// One TCP series sample: time (ns), flow, index into [`TCP_SERIES`], value.
#[derive(Clone, Copy, Debug)]
pub struct TcpSample {
    pub t: u64,
    pub flow: u32,
    pub metric: u8,
    pub value: f64,
}

/// Series metric names of the cumulative drop counters, in [`DropReason::ALL`]
/// order (`drops_<reason>`, like the queues table's columns).
pub const DROP_METRICS: [&str; DropReason::COUNT] = [
    "drops_overlimit",
    "drops_early_random",
    "drops_forced",
    "drops_class_threshold",
    "drops_pushed_out",
    "drops_shaper_buffer",
    "drops_unclassified",
    "drops_policed",
    "drops_terminated",
    "drops_malformed",
    "drops_oversize",
    "drops_kernel",
    "drops_delay_line",
];
/// Series metric names of the cumulative mark counters, in [`MarkReason::ALL`] order.
/// The events table's `kind` of a flow's own events (those of the
/// mechanisms are `qoslab_core::pipeline::EventKind`'s).
pub const FLOW_START: &str = "flow_start";
pub const FLOW_END: &str = "flow_end";
pub const MM_SCALE: &str = "mm_scale";
pub const TRANSFER_COMPLETE: &str = "transfer_complete";
pub const FLOW_EVENT_KINDS: [&str; 4] = [FLOW_START, FLOW_END, MM_SCALE, TRANSFER_COMPLETE];

/// Every `kind` of the events table: the mechanisms' and the flows' own.
pub fn event_kinds() -> Vec<&'static str> {
    qoslab_core::pipeline::EventKind::ALL.iter().map(|k| k.as_str()).chain(FLOW_EVENT_KINDS).collect()
}

pub const MARK_METRICS: [&str; MarkReason::COUNT] = ["marks_ecn_early", "marks_pcn_threshold", "marks_pcn_excess"];

/// A queue's cumulative counters as the results report them. A root
/// queue's are its port's: what the port's stages dropped arrived there
/// too, and the stages' drops and marks count with the discipline's
/// (`arrivals = stage drops + queue arrivals`, [`qoslab_core::pipeline::port`]).
/// The queues table, the summary and the series all read them from here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueCounts {
    pub arrivals: u64,
    pub arrival_bytes: u64,
    pub departures: u64,
    pub drops: [u64; DropReason::COUNT],
    pub drop_bytes: [u64; DropReason::COUNT],
    pub marks: [u64; MarkReason::COUNT],
}

impl QueueCounts {
    /// The counters of `q`, with its port's stage counts when `q` is a
    /// port's root queue (`None` for a classful child).
    pub fn of(q: &Queue, stages: Option<&StageStats>) -> QueueCounts {
        let st = q.stats();
        let mut c = QueueCounts {
            arrivals: st.arrivals,
            arrival_bytes: st.arrival_bytes,
            departures: st.departures,
            drops: *st.drops(),
            drop_bytes: *st.drop_bytes(),
            marks: *st.marks(),
        };
        if let Some(s) = stages {
            c.arrivals += s.total_drops();
            c.arrival_bytes += s.drop_bytes.iter().sum::<u64>();
            for (a, b) in c.drops.iter_mut().zip(s.drops) {
                *a += b;
            }
            for (a, b) in c.drop_bytes.iter_mut().zip(s.drop_bytes) {
                *a += b;
            }
            for (a, b) in c.marks.iter_mut().zip(s.marks) {
                *a += b;
            }
        }
        c
    }
    pub fn total_drops(&self) -> u64 {
        self.drops.iter().sum()
    }
    pub fn total_drop_bytes(&self) -> u64 {
        self.drop_bytes.iter().sum()
    }
    pub fn total_marks(&self) -> u64 {
        self.marks.iter().sum()
    }
    /// The drop and mark counter metrics (`drops_<reason>`, `marks_<reason>`)
    /// with a non-zero count, in reason order, with their counts.
    pub fn nonzero_reasons(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        let drops = self.drops.iter().zip(DROP_METRICS).filter(|(n, _)| **n > 0).map(|(n, m)| (m, *n));
        let marks = self.marks.iter().zip(MARK_METRICS).filter(|(n, _)| **n > 0).map(|(n, m)| (m, *n));
        drops.chain(marks)
    }
}

/// Kinds of series entities.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntityKind {
    Queue,
    Link,
}

/// One sampled value (strings are interned until the tables are built).
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    pub t: u64,
    pub kind: EntityKind,
    pub entity: u32,
    pub metric: u16,
    pub value: f64,
}

/// A row of the events table, as the simulator writes it ([`Events::push`]).
#[derive(Clone, Debug)]
pub struct EventRow {
    pub t: Time,
    pub kind: &'static str,
    pub flow: Option<FlowId>,
    pub rule: String,
    pub estimate: f64,
    pub threshold: f64,
    pub detail: String,
}

/// A stored row: `kind`, `rule` and `detail` are codes into [`Events`]'
/// dictionary, `flow` is `u32::MAX` for none (a run writes three rows a
/// flow whose texts repeat: 40 bytes a row instead of 96 plus two
/// strings; the 1,000,000-flow case of docs/performance.md).
#[derive(Clone, Debug)]
struct StoredEvent {
    t: Time,
    estimate: f64,
    threshold: f64,
    kind: u32,
    flow: u32,
    rule: u32,
    detail: u32,
}

const NO_FLOW: u32 = u32::MAX;

/// A row of [`Events`], read back.
#[derive(Clone, Copy, Debug)]
pub struct EventRef<'a> {
    pub t: Time,
    pub kind: &'a str,
    pub flow: Option<FlowId>,
    pub rule: &'a str,
    pub estimate: f64,
    pub threshold: f64,
    pub detail: &'a str,
}

/// The events table's rows, their texts dictionary-encoded.
#[derive(Clone, Debug, Default)]
pub struct Events {
    rows: Vec<StoredEvent>,
    texts: crate::output::Strings,
}

impl Events {
    pub fn push(&mut self, row: EventRow) {
        let kind = self.texts.code(row.kind);
        let rule = self.texts.code(&row.rule);
        let detail = self.texts.code(&row.detail);
        let flow = row.flow.map_or(NO_FLOW, |f| f.0);
        debug_assert!(flow != NO_FLOW || row.flow.is_none(), "flow id {NO_FLOW} is reserved");
        self.rows.push(StoredEvent {
            t: row.t,
            estimate: row.estimate,
            threshold: row.threshold,
            kind,
            flow,
            rule,
            detail,
        });
    }
    pub fn len(&self) -> usize {
        self.rows.len()
    }
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
    pub fn iter(&self) -> impl Iterator<Item = EventRef<'_>> + '_ {
        let text = |c: u32| self.texts.value(c);
        self.rows.iter().map(move |r| EventRef {
            t: r.t,
            kind: text(r.kind),
            flow: (r.flow != NO_FLOW).then_some(FlowId(r.flow)),
            rule: text(r.rule),
            estimate: r.estimate,
            threshold: r.threshold,
            detail: text(r.detail),
        })
    }
}

/// Whether a link direction's queue is sampled into the series table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeriesSel {
    /// Never (host queues; directions `metrics.series` does not name).
    Never,
    /// From the first sample after its first packet.
    Always,
    /// From the first sample after it first drops or marks a packet.
    OnDropOrMark,
}

/// Per-direction sampling state.
#[derive(Clone, Debug, Default)]
struct DirSampling {
    /// Entity id of the root queue (and link); the children of its tree follow it.
    entity: Option<u32>,
    busy_at_last: u64,
    /// Sampled from now on but not before: its first utilization has no
    /// interval start to measure from, and is skipped.
    fresh: bool,
}

/// Appends `q` and, depth first, its classful children (`<name>/band<i>`).
pub fn walk<'a>(out: &mut Vec<(String, &'a Queue)>, name: String, q: &'a Queue) {
    let children = q.children();
    out.push((name.clone(), q));
    for (c, child) in children.iter().enumerate() {
        walk(out, format!("{name}/band{c}"), child);
    }
}

/// The run's measurements.
pub struct Metrics {
    pub bin_ns: u64,
    /// The bin of the run's last instant (events at exactly `duration`
    /// count in the last bin, not in one that starts at the end).
    pub max_bin: u64,
    pub cur_bin: u64,
    pub next_bin_edge: u64,
    pub flows: Vec<FlowStats>,
    pub samples: Vec<Sample>,
    pub entities: Vec<String>,
    pub metric_names: Vec<&'static str>,
    pub events: Events,
    /// Per flow: the receiver's packets towards the source.
    pub reverse: Vec<ReverseStats>,
    pub tcp_samples: Vec<TcpSample>,
    pub last_sample: Time,
    pub spec: MetricsSpec,
    dirs: Vec<DirSampling>,
    /// Per direction: which are sampled, and those that have seen a packet.
    sel: Vec<SeriesSel>,
    seen: Vec<bool>,
    /// Directions that have seen a packet and are sampled once they drop
    /// or mark ([`SeriesSel::OnDropOrMark`]), not yet sampled.
    pending: Vec<u32>,
    /// Router output directions that have seen a packet, in direction order.
    sampled: Vec<u32>,
    sampled_dirty: bool,
}

impl Metrics {
    pub fn new(spec: &MetricsSpec, sel: Vec<SeriesSel>, end: Time) -> Metrics {
        let n_dirs = sel.len();
        let bin_ns = spec.bin.0.max(1);
        Metrics {
            bin_ns,
            max_bin: end.0.saturating_sub(1) / bin_ns,
            cur_bin: 0,
            next_bin_edge: bin_ns,
            flows: Vec::new(),
            samples: Vec::new(),
            entities: Vec::new(),
            metric_names: Vec::new(),
            events: Events::default(),
            reverse: Vec::new(),
            tcp_samples: Vec::new(),
            last_sample: Time::ZERO,
            spec: spec.clone(),
            dirs: vec![DirSampling::default(); n_dirs],
            sel,
            seen: vec![false; n_dirs],
            pending: Vec::new(),
            sampled: Vec::new(),
            sampled_dirty: false,
        }
    }

    /// Notes that direction `d` received a packet (it is sampled from then on
    /// if it leaves a router).
    #[inline(always)]
    pub fn on_dir_arrival(&mut self, d: usize) {
        if !self.seen[d] {
            self.first_dir_arrival(d);
        }
    }

    /// The first packet a direction receives (once a run per direction).
    #[cold]
    fn first_dir_arrival(&mut self, d: usize) {
        self.seen[d] = true;
        match self.sel[d] {
            SeriesSel::Always => {
                self.sampled.push(d as u32);
                self.sampled_dirty = true;
            }
            SeriesSel::OnDropOrMark => self.pending.push(d as u32),
            SeriesSel::Never => {}
        }
    }

    /// Moves the current bin to the one holding `now`.
    #[inline]
    pub fn advance_bin(&mut self, now: Time) {
        if now.0 >= self.next_bin_edge {
            self.cur_bin = (now.0 / self.bin_ns).min(self.max_bin);
            self.next_bin_edge =
                if self.cur_bin == self.max_bin { u64::MAX } else { (self.cur_bin + 1).saturating_mul(self.bin_ns) };
        }
    }

    fn metric_id(&mut self, name: &'static str) -> u16 {
        match self.metric_names.iter().position(|m| *m == name) {
            Some(i) => i as u16,
            None => {
                self.metric_names.push(name);
                (self.metric_names.len() - 1) as u16
            }
        }
    }

    fn push(&mut self, t: Time, kind: EntityKind, entity: u32, metric: &'static str, value: f64) {
        let metric = self.metric_id(metric);
        self.samples.push(Sample { t: t.0, kind, entity, metric, value });
    }

    /// Samples queues and links at `now` (see the module doc for which).
    pub fn sample(&mut self, net: &Network, now: Time) {
        let since = self.last_sample;
        let span = now.0.saturating_sub(since.0);
        // Quiet router queues join once they have dropped or marked.
        let mut k = 0;
        while k < self.pending.len() {
            let d = &net.dirs[self.pending[k] as usize];
            let c = QueueCounts::of(d.port.queue(), Some(d.port.stage_stats()));
            if c.total_drops() + c.total_marks() > 0 {
                let i = self.pending.swap_remove(k);
                self.dirs[i as usize].fresh = true;
                self.sampled.push(i);
                self.sampled_dirty = true;
            } else {
                k += 1;
            }
        }
        if self.sampled_dirty {
            self.sampled.sort_unstable();
            self.sampled_dirty = false;
        }
        for k in 0..self.sampled.len() {
            let i = self.sampled[k] as usize;
            let d = &net.dirs[i];
            // The queue tree in a fixed order: the root, then each child
            // before its own children (`r0->sink0/band1/band0`).
            let mut tree: Vec<(String, &Queue)> = Vec::new();
            walk(&mut tree, d.name.clone(), d.port.queue());
            if self.dirs[i].entity.is_none() {
                let first = self.entities.len() as u32;
                self.entities.extend(tree.iter().map(|(n, _)| n.clone()));
                self.dirs[i].entity = Some(first);
            }
            let entity = self.dirs[i].entity.unwrap_or(0);
            let mut values: Vec<(u32, &'static str, f64)> = Vec::new();
            for (k, (_, q)) in tree.iter().enumerate() {
                let e = entity + k as u32;
                let b = q.backlog();
                values.push((e, "backlog_pkts", b.packets as f64));
                values.push((e, "backlog_bytes", b.bytes as f64));
                // A classful queue's probe repeats its children's: leaves only.
                if q.children().is_empty() {
                    q.probe(&mut |name, v| values.push((e, name, v)));
                }
                // Cumulative counters, the root's with its port's stages (as
                // in the queues table). A reason's counter is stored only once
                // non-zero; the series table fills the zeros before it for
                // every reason non-zero at the end (see `tables`).
                let c = QueueCounts::of(q, (k == 0).then(|| d.port.stage_stats()));
                values.push((e, "arrivals", c.arrivals as f64));
                values.push((e, "departures", c.departures as f64));
                for (name, n) in c.nonzero_reasons() {
                    values.push((e, name, n as f64));
                }
            }
            // The port's stages report under the direction's root queue
            // (`cache_hits` of a classifier, `conformed` of a policer, ...).
            for st in d.port.stages() {
                st.probe(&mut |name, v| values.push((entity, name, v)));
            }
            for (e, name, v) in values {
                self.push(now, EntityKind::Queue, e, name, v);
            }
            let busy = d.busy_ns_until(now);
            if std::mem::take(&mut self.dirs[i].fresh) {
                // Sampled from this instant on: no utilization before it.
            } else if span > 0 {
                let u = busy.saturating_sub(self.dirs[i].busy_at_last) as f64 / span as f64;
                self.push(since, EntityKind::Link, entity, "utilization", u);
            }
            self.dirs[i].busy_at_last = busy;
        }
        self.last_sample = now;
    }

    /// A flow's event: `kind` one of [`FLOW_EVENT_KINDS`].
    pub fn event(&mut self, t: Time, kind: &'static str, flow: Option<FlowId>, detail: String) {
        debug_assert!(FLOW_EVENT_KINDS.contains(&kind), "{kind}");
        self.events.push(EventRow {
            t,
            kind,
            flow,
            rule: String::new(),
            estimate: f64::NAN,
            threshold: f64::NAN,
            detail,
        });
    }

    pub fn decision(&mut self, t: Time, flow: FlowId, d: &Decision, detail: String) {
        let r = d.reason();
        self.events.push(EventRow {
            t,
            kind: if d.admitted() { "admit" } else { "reject" },
            flow: Some(flow),
            rule: r.rule.to_string(),
            estimate: r.estimate,
            threshold: r.threshold,
            detail,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flows_fixed_state_fits_its_share_of_one_kilobyte() {
        // A million flows at most 1 KB each, plus the output.
        // The fixed-size part: the flow, its measurements, its agent, its
        // reverse counters and its three events (start, admit, end), 624
        // bytes (616 before the two PCN mark counters); the rest of the kilobyte is the flow table's hash entry and
        // small heap blocks (the bin and delay histogram). It was 912 bytes.
        use std::mem::size_of;
        let fixed = size_of::<crate::traffic::Flow>()
            + size_of::<FlowStats>()
            + size_of::<crate::run::agents::Agent>()
            + size_of::<ReverseStats>()
            + 3 * size_of::<StoredEvent>();
        assert!(fixed <= 700, "{fixed} bytes of fixed state a flow");
        assert_eq!(size_of::<StoredEvent>(), 40);
    }
    use qoslab_core::units::Dur;

    #[test]
    fn flow_stats_count_pcn_marks_of_delivered_packets_by_kind() {
        let mut f = FlowStats::new(false, &MetricsSpec::default());
        for mark in [PcnMark::NotPcn, PcnMark::NotMarked, PcnMark::ExcessMarked, PcnMark::ThresholdMarked] {
            let mut p = Packet::new(0, FlowId(0), 100, Time(0));
            p.pcn = mark;
            f.on_deliver(Time(1), &p, 0, true);
        }
        let mut p = Packet::new(0, FlowId(0), 100, Time(0));
        p.pcn = PcnMark::ExcessMarked;
        f.on_deliver(Time(2), &p, 0, true);
        assert_eq!((f.delivered_pkts, f.pcn_excess_pkts, f.pcn_threshold_pkts), (5, 2, 1));
    }

    #[test]
    fn without_flow_histograms_a_flow_keeps_its_counts_and_delays_but_no_histogram() {
        let spec = MetricsSpec { flow_histograms: false, ..Default::default() };
        let mut f = FlowStats::new(false, &spec);
        let p = |t: u64| Packet::new(0, FlowId(0), 100, Time(t));
        f.on_deliver(Time(3_000_000), &p(0), 0, false);
        f.on_deliver(Time(5_500_000), &p(1_000_000), 0, false);
        assert!(f.interarrival.is_none());
        assert_eq!((f.delay_hist.count(), f.delay_hist.quantile(0.5)), (0, None));
        assert_eq!((f.delivered_pkts, f.delay.mean()), (2, 3_750_000.0));
    }

    #[test]
    fn flow_stats_count_bins_delay_and_interarrivals() {
        let spec =
            MetricsSpec { interarrival_bin: Dur::from_ms(1), interarrival_max: Dur::from_ms(5), ..Default::default() };
        let mut f = FlowStats::new(true, &spec);
        let p = |t: u64| Packet::new(0, FlowId(0), 100, Time(t));
        f.on_send(Time(0), 100, 0);
        f.on_send(Time(1_000_000), 100, 0);
        f.on_send(Time(12_000_000), 100, 1);
        f.on_drop(100, 1);
        f.on_deliver(Time(3_000_000), &p(0), 0, true);
        f.on_deliver(Time(5_500_000), &p(1_000_000), 0, true);
        assert_eq!((f.sent_pkts, f.delivered_pkts, f.dropped_pkts), (3, 2, 1));
        let bins = f.clone().take_bins();
        assert_eq!(bins.bins, vec![[2, 2, 0, 200], [1, 0, 1, 0]]);
        assert_eq!(bins.first, 0);
        assert_eq!((f.first_sent(), f.last_arrival()), (Some(Time(0)), Some(Time(5_500_000))));
        assert_eq!(f.delay.mean(), 3_750_000.0);
        assert_eq!(f.delay_hist.max(), Some(4_500_000));
        let ia: Vec<(u64, u64)> = f.interarrival.as_ref().unwrap().nonzero().collect();
        assert_eq!(ia, vec![(2_000_000, 1)]);
        // |D| = 1.5 ms -> J = 1.5 ms / 16.
        assert!((f.jitter.value() - 1_500_000.0 / 16.0).abs() < 1e-6);
        assert_eq!(**f.trace.as_ref().unwrap(), vec![(3_000_000, 3_000_000), (5_500_000, 4_500_000)]);
    }

    #[test]
    fn counter_metric_names_match_the_reason_names() {
        for (r, m) in DropReason::ALL.iter().zip(DROP_METRICS) {
            assert_eq!(format!("drops_{}", r.as_str()), m);
        }
        for (r, m) in MarkReason::ALL.iter().zip(MARK_METRICS) {
            assert_eq!(format!("marks_{}", r.as_str()), m);
        }
    }

    #[test]
    fn bins_advance_with_time() {
        let spec = MetricsSpec { bin: Dur::from_secs(10), ..Default::default() };
        let mut m = Metrics::new(&spec, Vec::new(), Time(60_000_000_000));
        m.advance_bin(Time(9_999_999_999));
        assert_eq!(m.cur_bin, 0);
        m.advance_bin(Time(25_000_000_000));
        assert_eq!((m.cur_bin, m.next_bin_edge), (2, 30_000_000_000));
        // The run's last instant belongs to the last bin.
        m.advance_bin(Time(60_000_000_000));
        assert_eq!(m.cur_bin, 5);
    }
}
