//! The scenario data model: what a TOML scenario file says, typed.
//!
//! Deserialized with serde (unknown keys are errors), then checked by
//! [`super::validate`] before anything runs. Every field has a default
//! taken from the paper or tool that introduced it; `summary.json` echoes
//! the whole scenario with the defaults filled in. The JSON Schema
//! (`qoslab schema`) is derived from these types.
//!
//! Node names made by the presets:
//! - `dumbbell`: `src0..`, routers `r0` (and `r1`), `sink0..`.
//! - `parking_lot`: routers `r0..rk`; the long path `src_long -> r0 -> ... -> rk -> sink_long`;
//!   for bottleneck `i` (link `r{i} -> r{i+1}`) cross traffic `src_x{i} -> r{i}` and
//!   `r{i+1} -> sink_x{i}`.
//! - `star`: ingresses `in0..` -> `r0` -> (bottleneck) -> `r1` -> `sink0`.
//! - `explicit`: the names given.

use super::units;
use qoslab_core::qdisc::Limit;
use qoslab_core::units::{Bytes, Dur, Rate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

fn default_seed() -> u64 {
    1
}

/// A whole scenario file.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short name, used in result folders.
    pub name: String,
    /// Free text, echoed in the results.
    #[serde(default)]
    pub description: String,
    /// Simulated time, e.g. "60s".
    #[serde(with = "units::dur")]
    #[schemars(with = "super::schema::DurText")]
    pub duration: Dur,
    /// Default seed; `--seed` overrides it.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// The network: a preset (`dumbbell`, `parking_lot`, `star`) or `explicit` nodes and links.
    pub topology: Topology,
    /// Traffic groups (`[[traffic]]`), each one or more flows of one model.
    #[serde(default)]
    pub traffic: Vec<TrafficGroup>,
    /// Admission control asked when each flow starts (default: admit all).
    #[serde(default)]
    pub admission: AdmissionSpec,
    /// What to measure beyond the defaults (bins, sampling, traces).
    #[serde(default)]
    pub metrics: MetricsSpec,
}

/// A link's rate, propagation delay and output queues.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// Link rate (bit/s), e.g. "25Mbps"; > 0.
    #[serde(with = "units::rate")]
    #[schemars(with = "super::schema::RateText")]
    pub rate: Rate,
    /// One-way propagation delay, e.g. "20ms"; may be "0s".
    #[serde(with = "units::dur")]
    #[schemars(with = "super::schema::DurText")]
    pub delay: Dur,
    /// Queue at the output towards the far end; default: `topology.default_queue`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueSpec>,
    /// Queue of the reverse direction; default: `topology.default_queue`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse_queue: Option<QueueSpec>,
    /// Stages before `queue` (a -> b), in order (see [`super::stages`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<super::stages::StageSpec>,
    /// Stages before `reverse_queue` (b -> a), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reverse_stages: Vec<super::stages::StageSpec>,
    /// MACE settings for this link's directions whose queue is `{ type = "mace" }`
    /// (required by such a queue, refused without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mace: Option<MaceSpec>,
    /// Bernoulli loss of the direction `queue` feeds (a -> b): each packet
    /// is lost on the wire with this probability, in [0, 1); default 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub loss: f64,
    /// Bernoulli loss of the reverse direction (b -> a); default 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reverse_loss: f64,
}

fn default_stale_timeout() -> Dur {
    Dur::from_secs(30)
}
fn default_mace_table() -> u32 {
    1024
}

/// MACE (seed 000) at a link: recognition, admission, measurement and the
/// device transmit queue. The shared CL/BE buffer is the direction's queue
/// (`queue = { type = "mace", buffer = "50pkts" }`); one MACE instance runs
/// per such direction, each with these settings.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MaceSpec {
    /// The application ports whose flows may receive CL service (the descriptor file, inline);
    /// exactly one of `ports` and `descriptors`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ports: Option<Vec<MacePortSpec>>,
    /// A flow-setup descriptor file (`[[port]]` tables, docs/mechanisms/mace_descriptors.md),
    /// relative to the scenario file like replay files; exactly one of `ports` and `descriptors`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub descriptors: Option<String>,
    /// `{ type = "mbac", v, sample, window }` or `{ type = "ssac" }`.
    pub admission: MaceAdmissionSpec,
    /// CL allocation μ (bit/s on the wire), e.g. "3.9Mbps"; > 0.
    #[serde(with = "units::rate")]
    #[schemars(with = "super::schema::RateText")]
    pub allocation: Rate,
    /// An admitted flow (or a candidate) silent this long leaves its table; default "30s".
    #[serde(default = "default_stale_timeout", with = "units::dur")]
    #[schemars(with = "super::schema::DurText")]
    pub stale_timeout: Dur,
    /// Device transmit queue size in packets, the one being sent included; default 1 (the paper's fix).
    #[serde(default = "one")]
    pub device_queue: u32,
    /// When BE may enter the device queue: `when_room` (default; the paper's first version
    /// when `device_queue` > 1) or `when_idle` (the revised version).
    #[serde(default)]
    pub be_dispatch: MaceBeDispatch,
    /// Capacity of the classifier and of the recognition table (flows); default 1024.
    #[serde(default = "default_mace_table")]
    pub table_capacity: u32,
}

/// One descriptor: a port and the token bucket of its flows.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MacePortSpec {
    /// The application port, 1..=65535.
    pub port: u16,
    /// Which port of a packet it matches: `dst` (default), `src` or `any`.
    #[serde(default)]
    pub side: MacePortSide,
    /// Reserved rate r per flow (wire bit/s), e.g. "77.2kbps".
    #[serde(with = "units::rate")]
    #[schemars(with = "super::schema::RateText")]
    pub rate: Rate,
    /// Token-bucket depth, e.g. "386B".
    #[serde(with = "units::bytes")]
    #[schemars(with = "super::schema::BytesText")]
    pub depth: Bytes,
    /// Packets a candidate sends before admission is asked (paper: 100 at 64 kb/s, 10 at 256 kb/s).
    pub threshold: u32,
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MacePortSide {
    #[default]
    Dst,
    Src,
    Any,
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MaceBeDispatch {
    #[default]
    WhenRoom,
    WhenIdle,
}

fn default_mbac_v() -> f64 {
    0.95
}
fn default_mbac_sample() -> Dur {
    Dur::from_secs(5)
}
fn default_mbac_window() -> u32 {
    20
}

/// MACE admission control.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum MaceAdmissionSpec {
    /// Measurement-based: admit if v·μ > r + ν̂ (Jamin et al. 1997 measured sum).
    Mbac {
        /// Target utilization v in (0, 1]; default 0.95.
        #[serde(default = "default_mbac_v")]
        v: f64,
        /// Measurement sampling period S; default "5s" (paper).
        #[serde(default = "default_mbac_sample", with = "units::dur")]
        #[schemars(with = "super::schema::DurText")]
        sample: Dur,
        /// Estimator window T in samples; default 20 (paper).
        #[serde(default = "default_mbac_window")]
        window: u32,
        /// Restart the estimator window on each admission (default true, JSD97).
        #[serde(default = "yes")]
        restart_window: bool,
    },
    /// Simple sum: admit if Σr + r ≤ μ.
    Ssac,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

fn default_queue() -> QueueSpec {
    QueueSpec::Fifo { limit: Limit::packets(1000) }
}
fn one() -> u32 {
    1
}

/// The network. `preset` picks the shape.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "preset", rename_all = "snake_case", deny_unknown_fields)]
pub enum Topology {
    /// N sources -> r0 [-> r1] -> sinks. With one router the bottleneck is
    /// `r0 -> sink0` (one sink); with two it is `r0 -> r1`.
    Dumbbell {
        /// Number of source hosts `src0..`; >= 1.
        sources: u32,
        /// Number of sink hosts `sink0..`; >= 1, exactly 1 with one router.
        #[serde(default = "one")]
        sinks: u32,
        /// 1 (bottleneck `r0 -> sink0`) or 2 (bottleneck `r0 -> r1`).
        #[serde(default = "one")]
        routers: u32,
        /// Links source -> r0.
        access: LinkSpec,
        /// The bottleneck link: `r0 -> sink0` (one router) or `r0 -> r1` (two).
        bottleneck: LinkSpec,
        /// Links r1 -> sinks (two routers); default: same as `access`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        egress: Option<LinkSpec>,
        /// Queue of every link direction that names none (default: a 1000-packet FIFO).
        #[serde(default = "default_queue")]
        default_queue: QueueSpec,
    },
    /// A chain of `bottlenecks` router-to-router links with cross traffic.
    ParkingLot {
        /// Number of router-to-router bottleneck links (routers `r0..r{k}`); >= 1.
        bottlenecks: u32,
        /// Links from sources (`src_long`, `src_x{i}`) to their first router.
        access: LinkSpec,
        /// Every bottleneck link `r{i} -> r{i+1}`.
        bottleneck: LinkSpec,
        /// Links from routers to sinks (`sink_long`, `sink_x{i}`); default: same as `access`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        egress: Option<LinkSpec>,
        /// Queue of every link direction that names none (default: a 1000-packet FIFO).
        #[serde(default = "default_queue")]
        default_queue: QueueSpec,
    },
    /// N ingresses with their own delays into one bottleneck.
    Star {
        /// Number of ingress hosts `in0..`; >= 1.
        ingresses: u32,
        /// Links `in{i} -> r0` (their delay replaced by `ingress_delays` when given).
        access: LinkSpec,
        /// Per-ingress access delays (overrides `access.delay`); length must be `ingresses`.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[schemars(with = "Vec<super::schema::DurText>")]
        #[serde(with = "dur_list")]
        ingress_delays: Vec<Dur>,
        /// The bottleneck link `r0 -> r1`.
        bottleneck: LinkSpec,
        /// The link `r1 -> sink0`; default: same as `access`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        egress: Option<LinkSpec>,
        /// Queue of every link direction that names none (default: a 1000-packet FIFO).
        #[serde(default = "default_queue")]
        default_queue: QueueSpec,
    },
    /// Nodes and links as listed.
    Explicit {
        /// Every node: a unique name and its kind (hosts send and receive, routers forward).
        nodes: Vec<NodeSpec>,
        /// Duplex links (`[[topology.links]]`), each between two different listed nodes.
        links: Vec<ExplicitLink>,
        /// Queue of every link direction that names none (default: a 1000-packet FIFO).
        #[serde(default = "default_queue")]
        default_queue: QueueSpec,
    },
}

mod dur_list {
    use qoslab_core::units::Dur;
    use serde::{de::Error as _, Deserialize, Deserializer, Serializer};
    pub fn serialize<S: Serializer>(v: &[Dur], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter().map(|d| d.to_string()))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Dur>, D::Error> {
        let v = Vec::<String>::deserialize(d)?;
        v.iter().map(|s| Dur::parse(s).map_err(D::Error::custom)).collect()
    }
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    Host,
    Router,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    /// Unique node name: letters, digits, `_`, `-`, `.`.
    pub name: String,
    /// `host` (originates and sinks traffic) or `router` (forwards it).
    pub kind: NodeKind,
}

/// A duplex point-to-point link between nodes `a` and `b`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
// serde cannot deny unknown fields beside a `flatten` (it then refuses the
// flattened fields themselves); the flattened part denies its own, the
// schema (and the structural check in `shape::check`) denies the rest.
#[schemars(deny_unknown_fields)]
pub struct ExplicitLink {
    /// One end: a node name. `queue` feeds the direction a -> b.
    pub a: String,
    /// The other end: a different node name. `reverse_queue` feeds b -> a.
    pub b: String,
    #[serde(flatten)]
    pub link: LinkSpec,
}

fn red_max_p() -> f64 {
    0.1
}
fn red_w_q() -> f64 {
    0.002
}
fn red_mean_pkt() -> Bytes {
    Bytes(1000)
}
fn cbt_tagged_th() -> f64 {
    2.9
}
fn cbt_untagged_th() -> f64 {
    0.6
}
fn flow_interval() -> Dur {
    Dur::from_ms(300)
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum QueueMode {
    /// Thresholds and averages in packets.
    #[default]
    Packets,
    /// Thresholds and averages in bytes.
    Bytes,
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ClassifyBy {
    /// The packet's class tag (set by its traffic group's `class`).
    #[default]
    Class,
    /// The DSCP's precedence (DSCP >> 3), spread evenly over the bands,
    /// highest first: band = (7 - precedence) * bands / 8.
    Dscp,
}

/// A queue discipline. `type` picks it.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum QueueSpec {
    /// Drop-tail FIFO.
    Fifo {
        /// Queue limit: "60pkts", "64kB", or both as ["60pkts", "64kB"].
        #[serde(with = "units::limit")]
        #[schemars(with = "super::schema::LimitText")]
        limit: Limit,
    },
    /// RED (Floyd & Jacobson 1993).
    Red {
        /// Hard queue limit: "60pkts", "64kB", or both; arrivals beyond it are dropped (overlimit).
        #[serde(with = "units::limit")]
        #[schemars(with = "super::schema::LimitText")]
        limit: Limit,
        /// Lower threshold, in packets (or bytes in byte mode).
        min_th: f64,
        /// Upper threshold, in packets (or bytes in byte mode).
        max_th: f64,
        /// Early-drop probability at `max_th`, in (0, 1]; default 0.1 (Floyd & Jacobson 1993).
        #[serde(default = "red_max_p")]
        max_p: f64,
        /// Weight of the queue-length average (EWMA), in (0, 1]; default 0.002 (Floyd & Jacobson 1993).
        #[serde(default = "red_w_q")]
        w_q: f64,
        /// Gentle RED (Floyd 2000): drop probability rises from `max_p` to 1 between `max_th` and 2 `max_th`.
        #[serde(default)]
        gentle: bool,
        /// Mark ECN-capable packets instead of dropping them early.
        #[serde(default)]
        ecn: bool,
        /// Measure the queue and thresholds in `packets` (default) or `bytes`.
        #[serde(default)]
        mode: QueueMode,
        /// Typical packet size, for the idle-time decay of the average.
        #[serde(default = "red_mean_pkt", with = "units::bytes")]
        #[schemars(with = "super::schema::BytesText")]
        mean_pkt_size: Bytes,
        /// ChIPS (seed 001 §3.2): `true`, or `{ max_tagged_share = 0.5, keep_flow_order = true }`;
        /// tagged packets cut in at RED's average on transient congestion. Default: off.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        chips: Option<ChipsSpec>,
    },
    /// MACE's two-level strict-priority queue in one shared buffer (CL pushes out BE);
    /// the link's `mace` table holds the rest. Only as a link direction's queue.
    Mace {
        /// The shared buffer, e.g. "50pkts" (paper).
        #[serde(with = "units::limit")]
        #[schemars(with = "super::schema::LimitText")]
        buffer: Limit,
    },
    /// Strict priority over bands (band 0 served first).
    Prio {
        /// The band queues, highest priority first; a packet's class tag (or DSCP) picks its band.
        bands: Vec<QueueSpec>,
        /// `class` (the class tag; tags beyond the last band go to the last band) or `dscp`.
        #[serde(default)]
        classify_by: ClassifyBy,
    },
    /// CBT, class-based thresholds, "RED for all" (Parris, Jeffay & Smith 1999; seed 001 §3):
    /// static thresholds on the tagged (class 1) and untagged (class 2) UDP averages in front
    /// of RED; TCP (class 0) goes straight to RED.
    Cbt {
        /// Hard queue limit: "60pkts", "64kB", or both; arrivals beyond it are dropped (overlimit).
        #[serde(with = "units::limit")]
        #[schemars(with = "super::schema::LimitText")]
        limit: Limit,
        /// RED's lower threshold, in packets (or bytes in byte mode).
        min_th: f64,
        /// RED's upper threshold, in packets (or bytes in byte mode).
        max_th: f64,
        /// RED's early-drop probability at `max_th`, in (0, 1]; default 0.1.
        #[serde(default = "red_max_p")]
        max_p: f64,
        /// Weight of RED's average and of the class averages, in (0, 1]; default 0.002.
        #[serde(default = "red_w_q")]
        w_q: f64,
        /// Gentle RED (Floyd 2000) for RED's verdict.
        #[serde(default)]
        gentle: bool,
        /// Mark ECN-capable packets instead of dropping them early (RED's verdict only).
        #[serde(default)]
        ecn: bool,
        /// Measure the queue, averages and thresholds in `packets` (default) or `bytes`.
        #[serde(default)]
        mode: QueueMode,
        /// Typical packet size, for the idle-time decay of the averages.
        #[serde(default = "red_mean_pkt", with = "units::bytes")]
        #[schemars(with = "super::schema::BytesText")]
        mean_pkt_size: Bytes,
        /// Threshold of the tagged (multimedia UDP, class 1) average, in packets (bytes in byte mode); default 2.9.
        #[serde(default = "cbt_tagged_th")]
        tagged_threshold: f64,
        /// Threshold of the untagged (other UDP, class 2) average, in packets (bytes in byte mode); default 0.6.
        #[serde(default = "cbt_untagged_th")]
        untagged_threshold: f64,
        /// Active-flow interval: a flow is active if it sent within it; swept every interval
        /// (seed 001 §3.1: 300 ms). Used when flows are counted (D-CBT, ChIPS).
        #[serde(default = "flow_interval", with = "units::dur")]
        #[schemars(with = "super::schema::DurText")]
        flow_interval: Dur,
        /// ChIPS (seed 001 §3.2): `true`, or `{ max_tagged_share = 0.5, keep_flow_order = true }`;
        /// tagged packets cut in at RED's average on transient congestion. Default: off.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        chips: Option<ChipsSpec>,
    },
    /// D-CBT, dynamic class-based thresholds (Claypool & Chung 2000, seed 001 §3.1): UDP
    /// thresholds from the active-flow shares, all averages updated together.
    Dcbt {
        /// Hard queue limit: "60pkts", "64kB", or both; arrivals beyond it are dropped (overlimit).
        #[serde(with = "units::limit")]
        #[schemars(with = "super::schema::LimitText")]
        limit: Limit,
        /// RED's lower threshold, in packets (or bytes in byte mode).
        min_th: f64,
        /// RED's upper threshold, in packets (or bytes in byte mode).
        max_th: f64,
        /// RED's early-drop probability at `max_th`, in (0, 1]; default 0.1.
        #[serde(default = "red_max_p")]
        max_p: f64,
        /// Weight of RED's average and of the class averages, in (0, 1]; default 0.002.
        #[serde(default = "red_w_q")]
        w_q: f64,
        /// Gentle RED (Floyd 2000) for RED's verdict.
        #[serde(default)]
        gentle: bool,
        /// Mark ECN-capable packets instead of dropping them early (RED's verdict only).
        #[serde(default)]
        ecn: bool,
        /// Measure the queue, averages and thresholds in `packets` (default) or `bytes`.
        #[serde(default)]
        mode: QueueMode,
        /// Typical packet size, for the idle-time decay of the averages.
        #[serde(default = "red_mean_pkt", with = "units::bytes")]
        #[schemars(with = "super::schema::BytesText")]
        mean_pkt_size: Bytes,
        /// Active-flow interval: a flow is active if it sent within it; swept every interval
        /// (seed 001 §3.1: 300 ms). Used when flows are counted (D-CBT, ChIPS).
        #[serde(default = "flow_interval", with = "units::dur")]
        #[schemars(with = "super::schema::DurText")]
        flow_interval: Dur,
        /// ChIPS (seed 001 §3.2): `true`, or `{ max_tagged_share = 0.5, keep_flow_order = true }`;
        /// tagged packets cut in at RED's average on transient congestion. Default: off.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        chips: Option<ChipsSpec>,
    },
}

impl QueueSpec {
    pub fn type_name(&self) -> &'static str {
        match self {
            QueueSpec::Fifo { .. } => "fifo",
            QueueSpec::Red { .. } => "red",
            QueueSpec::Prio { .. } => "prio",
            QueueSpec::Mace { .. } => "mace",
            QueueSpec::Cbt { .. } => "cbt",
            QueueSpec::Dcbt { .. } => "dcbt",
        }
    }
}

fn default_pareto_shape() -> f64 {
    1.5
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PeriodDist {
    #[default]
    Exponential,
    Pareto,
}

/// How a source emits packets. `model` picks it. Rates count payload bits
/// (what the application emits); `header` bytes are added on the wire.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum TrafficModel {
    /// Constant bit rate: one packet every `interval`, or every
    /// payload*8/`rate` (give exactly one of the two).
    Cbr {
        /// Payload rate: one packet every payload*8/rate.
        #[serde(default, skip_serializing_if = "Option::is_none", with = "units::rate::opt")]
        #[schemars(with = "Option<super::schema::RateText>")]
        rate: Option<Rate>,
        /// Packet spacing, e.g. "8ms".
        #[serde(default, skip_serializing_if = "Option::is_none", with = "units::dur::opt")]
        #[schemars(with = "Option<super::schema::DurText>")]
        interval: Option<Dur>,
    },
    /// Poisson packet arrivals at a mean payload rate.
    Poisson {
        /// Mean payload rate; exponential gaps between packets.
        #[serde(with = "units::rate")]
        #[schemars(with = "super::schema::RateText")]
        rate: Rate,
    },
    /// ON/OFF: CBR at `peak` (payload rate) during ON periods, silent during
    /// OFF periods. `interval` may replace `peak` (packet spacing when ON).
    OnOff {
        /// Payload rate while ON (packets every payload*8/peak).
        #[serde(default, skip_serializing_if = "Option::is_none", with = "units::rate::opt")]
        #[schemars(with = "Option<super::schema::RateText>")]
        peak: Option<Rate>,
        /// Packet spacing while ON (instead of `peak`).
        #[serde(default, skip_serializing_if = "Option::is_none", with = "units::dur::opt")]
        #[schemars(with = "Option<super::schema::DurText>")]
        interval: Option<Dur>,
        /// Mean ON period.
        #[serde(with = "units::dur")]
        #[schemars(with = "super::schema::DurText")]
        on: Dur,
        /// Mean OFF period.
        #[serde(with = "units::dur")]
        #[schemars(with = "super::schema::DurText")]
        off: Dur,
        /// Distribution of ON and OFF periods: `exponential` (default) or `pareto`.
        #[serde(default)]
        dist: PeriodDist,
        /// Pareto shape (alpha); location = mean*(shape-1)/shape.
        #[serde(default = "default_pareto_shape")]
        shape: f64,
    },
    /// Greedy bulk TCP sender (infinite data; `size` is the segment
    /// payload, the MSS). Implies `transport = "tcp"`.
    Ftp {
        /// TCP settings (every key optional; ns-2-of-2000 defaults).
        #[serde(default)]
        tcp: super::tcp_model::TcpSpec,
    },
    /// A finite TCP transfer of `bytes`; the flow ends when the last byte
    /// is acknowledged and its completion time is recorded.
    Transfer {
        /// Bytes to transfer (application payload), e.g. "1250000B"; >= 1 B.
        #[serde(with = "units::bytes")]
        #[schemars(with = "super::schema::BytesText")]
        bytes: Bytes,
        /// TCP settings (every key optional; ns-2-of-2000 defaults).
        #[serde(default)]
        tcp: super::tcp_model::TcpSpec,
    },
    /// MM_APP media-scaling UDP source with receiver feedback (seed 001 §2, §5).
    MmApp {
        /// Scales and feedback packet size (optional; the paper's defaults).
        #[serde(default)]
        mm_app: super::tcp_model::MmAppSpec,
    },
}

/// Packet payload size: fixed (`"1000B"`) or fixed plus an exponential offset.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(untagged)]
pub enum SizeSpec {
    Fixed(
        #[serde(with = "units::bytes")]
        #[schemars(with = "super::schema::BytesText")]
        Bytes,
    ),
    Random(RandomSize),
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RandomSize {
    /// Fixed part of the payload, >= 1 byte.
    #[serde(with = "units::bytes")]
    #[schemars(with = "super::schema::BytesText")]
    pub base: Bytes,
    /// Mean of the exponential offset added to `base` (rounded to whole bytes).
    #[serde(with = "units::bytes")]
    #[schemars(with = "super::schema::BytesText")]
    pub exp_mean: Bytes,
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LifetimeDist {
    #[default]
    Exponential,
    Fixed,
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    #[default]
    Udp,
    /// TCP (implied by the `ftp` and `transfer` models).
    Tcp,
}

/// How flows of a group come and go, instead of `flows` fixed flows.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "process", rename_all = "snake_case", deny_unknown_fields)]
pub enum Arrivals {
    /// New flows as a Poisson process of `rate` per second.
    Poisson {
        /// Mean arrivals per second (> 0).
        rate: f64,
        /// Mean (exponential) or exact (fixed) flow lifetime; > 0.
        #[serde(with = "units::dur")]
        #[schemars(with = "super::schema::DurText")]
        lifetime: Dur,
        /// `exponential` (default) or `fixed` lifetimes.
        #[serde(default)]
        lifetime_dist: LifetimeDist,
        /// Stop starting flows after this many (default: no cap).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_flows: Option<u32>,
    },
    /// Batches as a Poisson process of `rate` per second, each of a
    /// geometric number of flows with mean `batch_mean`.
    BatchPoisson {
        /// Mean batches per second (> 0).
        rate: f64,
        /// Mean number of flows per batch (geometric), >= 1.
        batch_mean: f64,
        /// Mean (exponential) or exact (fixed) flow lifetime; > 0.
        #[serde(with = "units::dur")]
        #[schemars(with = "super::schema::DurText")]
        lifetime: Dur,
        /// `exponential` (default) or `fixed` lifetimes.
        #[serde(default)]
        lifetime_dist: LifetimeDist,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_flows: Option<u32>,
    },
    /// Keep `alive` flows running: when one ends another starts.
    KeepAlive {
        /// Number of flows kept running, >= 1.
        alive: u32,
        /// Mean (exponential) or exact (fixed) flow lifetime; > 0.
        #[serde(with = "units::dur")]
        #[schemars(with = "super::schema::DurText")]
        lifetime: Dur,
        /// `exponential` (default) or `fixed` lifetimes.
        #[serde(default)]
        lifetime_dist: LifetimeDist,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_flows: Option<u32>,
    },
    /// Replay recorded start times and lifetimes from a CSV file with
    /// columns `start_s,lifetime_s` (path relative to the scenario file).
    Replay { file: String },
}

/// One or more flows of the same model between the same endpoints.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
// serde cannot deny unknown fields beside a `flatten` (it then refuses the
// flattened fields themselves); the flattened part denies its own, the
// schema (and the structural check in `shape::check`) denies the rest.
#[schemars(deny_unknown_fields)]
pub struct TrafficGroup {
    /// Group name; its flows are `name.0`, `name.1`, ...
    pub name: String,
    #[serde(flatten)]
    pub model: TrafficModel,
    /// Number of flows (ignored when `arrivals` is set).
    #[serde(default = "one")]
    pub flows: u32,
    /// Source node, or a pattern `"src*"` whose matches the flows take in turn.
    pub src: String,
    /// Destination node, or a pattern.
    pub dst: String,
    /// Transport protocol: `udp` or `tcp`; default: `tcp` for the `ftp` and
    /// `transfer` models (and only `tcp` there), `udp` for the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<Transport>,
    /// Payload size.
    pub size: SizeSpec,
    /// Header bytes added to each payload on the wire.
    #[serde(default, with = "units::bytes")]
    #[schemars(with = "super::schema::BytesText")]
    pub header: Bytes,
    /// Class tag set on every packet (classful queues map it to a band).
    #[serde(default)]
    pub class: u8,
    /// DSCP set on every packet, 0..63 (46 = EF).
    #[serde(default)]
    pub dscp: u8,
    /// Set ECT(0) on packets.
    #[serde(default)]
    pub ecn: bool,
    /// Fixed destination port of every flow (an application port MACE may list); default: a port
    /// derived from the flow number. The source port still tells the flows apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dst_port: Option<u16>,
    /// When the group's flows start (default "0s"); before `duration`.
    #[serde(default, with = "units::dur")]
    #[schemars(with = "super::schema::DurText")]
    pub start: Dur,
    /// End of the group's flows (default: the end of the run).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "units::dur::opt")]
    #[schemars(with = "Option<super::schema::DurText>")]
    pub stop: Option<Dur>,
    /// Each flow's start is delayed by a uniform random amount in [0, start_jitter].
    #[serde(default, with = "units::dur")]
    #[schemars(with = "super::schema::DurText")]
    pub start_jitter: Dur,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<Arrivals>,
    /// Rate each flow asks admission control to reserve (default: the model's mean wire rate).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "units::rate::opt")]
    #[schemars(with = "Option<super::schema::RateText>")]
    pub reserve: Option<Rate>,
    /// Per-flow token-bucket shaper at the network entry, between the source
    /// and its first link (seed 002 §2); see `docs/mechanisms/shaper.md`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shaper: Option<ShaperSpec>,
}

fn one_packet() -> Limit {
    Limit::packets(1)
}

/// A per-flow shaper (`shaper = { rate = "1Mbps", depth = "1pkt", buffer = "100pkts" }`):
/// each flow of the group gets its own token bucket of rate `rate` and
/// depth `depth`; a packet waits until it conforms and is dropped only if
/// `buffer` is set and full. The wait counts in the flow's delay.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ShaperSpec {
    /// Shaping rate R (wire bits/s, > 0); required unless `admission` is `shaping_cac`, which assigns it.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "units::rate::opt")]
    #[schemars(with = "Option<super::schema::RateText>")]
    pub rate: Option<Rate>,
    /// Bucket depth: packets of the group's wire size ("1pkt", the default; fixed sizes only) or bytes ("1500B").
    #[serde(default = "one_packet", with = "units::limit")]
    #[schemars(with = "super::schema::LimitText")]
    pub depth: Limit,
    /// The shaper's own buffer ("100pkts", "64kB" or both); absent: it only delays, never drops.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "units::limit::opt")]
    #[schemars(with = "Option<super::schema::LimitText>")]
    pub buffer: Option<Limit>,
}

/// The admission controller asked when a flow starts.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum AdmissionSpec {
    #[default]
    AdmitAll,
    /// Shaping CAC for TCP (seed 002 §4): admit iff the shaping rates fit
    /// ρC, ρ = 2B / (2B − ln IPLR); each admitted flow's shaper gets the
    /// rate of scheme #1 (R_req), #2 (share of C or ρC, re-assigned at every
    /// arrival and departure) or #3 (max{R_req, (ρC − ΣR)/k}, fixed).
    ShapingCac {
        /// 1, 2 or 3.
        scheme: u8,
        /// Link capacity C (default 100 Mb/s, the paper's).
        #[serde(default = "cac_capacity", with = "units::rate")]
        #[schemars(with = "super::schema::RateText")]
        capacity: Rate,
        /// Core buffer B in packets for the M/D/1 ρ (default 10, Table 4).
        #[serde(default = "cac_buffer")]
        buffer: u64,
        /// Target packet loss IPLR in (0, 1) (default 1e-3).
        #[serde(default = "cac_iplr")]
        iplr: f64,
        /// Rate every flow requests; default: its group's `reserve` (or the model's mean wire rate).
        #[serde(default, skip_serializing_if = "Option::is_none", with = "units::rate::opt")]
        #[schemars(with = "Option<super::schema::RateText>")]
        r_req: Option<Rate>,
        /// Scheme #3's divisor k > 1 (default 3, Table 4).
        #[serde(default = "cac_k")]
        k: f64,
        /// Scheme #2 shares `c` (C/n, the paper's example; default) or `rho_c` (ρC/n).
        #[serde(default)]
        scheme2_rate: Scheme2Rate,
    },
}

/// What scheme #2 divides among the running flows.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Scheme2Rate {
    /// The capacity C: each of n flows gets C/n.
    #[default]
    C,
    /// The admissible aggregate ρC: each gets ρC/n.
    RhoC,
}

fn cac_capacity() -> Rate {
    Rate::mbps(100)
}
fn cac_buffer() -> u64 {
    10
}
fn cac_iplr() -> f64 {
    1e-3
}
fn cac_k() -> f64 {
    3.0
}

fn default_bin() -> Dur {
    Dur::from_secs(10)
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
    /// Width of the per-flow counter bins (sent/delivered/dropped per period).
    #[serde(default = "default_bin", with = "units::dur")]
    #[schemars(with = "super::schema::DurText")]
    pub bin: Dur,
    /// Interval at which queues (backlog, averages) and links are sampled.
    #[serde(default = "default_series_interval", with = "units::dur")]
    #[schemars(with = "super::schema::DurText")]
    pub series_interval: Dur,
    /// Per-packet delay traces for these flows (names such as "cbr.3")...
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trace_flows: Vec<String>,
    /// ...and for every flow of these groups.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trace_groups: Vec<String>,
    /// Inter-arrival histogram bin width at the receiver.
    #[serde(default = "default_hist_bin", with = "units::dur")]
    #[schemars(with = "super::schema::DurText")]
    pub interarrival_bin: Dur,
    /// Inter-arrivals at or above this go to the overflow bin.
    #[serde(default = "default_hist_max", with = "units::dur")]
    #[schemars(with = "super::schema::DurText")]
    pub interarrival_max: Dur,
    /// cwnd / ssthresh / SRTT / RTO series, every `series_interval`, for
    /// every flow of these TCP groups.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tcp_series: Vec<String>,
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
        }
    }
}

fn chips_share() -> f64 {
    0.5
}
fn yes() -> bool {
    true
}

/// ChIPS settings of a `red`, `cbt` or `dcbt` queue: `chips = true` (the
/// defaults), `chips = false` (off), or a table.
#[derive(Clone, Debug, Serialize, JsonSchema, PartialEq)]
#[serde(untagged)]
pub enum ChipsSpec {
    /// `true`: ChIPS with the defaults; `false`: no ChIPS.
    Flag(bool),
    Table(ChipsTable),
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ChipsTable {
    /// ChIPS switches itself off while tagged flows exceed this share of all active flows,
    /// in (0, 1]; default 0.5 (seed 001 §5); 1 keeps it always on.
    #[serde(default = "chips_share")]
    pub max_tagged_share: f64,
    /// Never cut a packet in ahead of an earlier packet of its own flow; default true.
    #[serde(default = "yes")]
    pub keep_flow_order: bool,
}

impl Default for ChipsTable {
    fn default() -> Self {
        ChipsTable { max_tagged_share: chips_share(), keep_flow_order: true }
    }
}

impl ChipsSpec {
    /// The settings, if ChIPS is on.
    pub fn settings(&self) -> Option<ChipsTable> {
        match self {
            ChipsSpec::Flag(false) => None,
            ChipsSpec::Flag(true) => Some(ChipsTable::default()),
            ChipsSpec::Table(t) => Some(t.clone()),
        }
    }
}

// By hand rather than `untagged`, so that a bad key inside the table is
// reported as such (serde's untagged enums only say "no variant matched").
impl<'de> Deserialize<'de> for ChipsSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = ChipsSpec;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("true, false or a table such as { max_tagged_share = 0.5 }")
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<ChipsSpec, E> {
                Ok(ChipsSpec::Flag(v))
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(self, m: M) -> Result<ChipsSpec, M::Error> {
                ChipsTable::deserialize(serde::de::value::MapAccessDeserializer::new(m)).map(ChipsSpec::Table)
            }
        }
        d.deserialize_any(V)
    }
}
