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
    #[serde(default)]
    pub description: String,
    /// Simulated time, e.g. "60s".
    #[serde(with = "units::dur")]
    #[schemars(with = "String")]
    pub duration: Dur,
    /// Default seed; `--seed` overrides it.
    #[serde(default = "default_seed")]
    pub seed: u64,
    pub topology: Topology,
    /// Traffic groups (`[[traffic]]`), each one or more flows of one model.
    #[serde(default)]
    pub traffic: Vec<TrafficGroup>,
    #[serde(default)]
    pub admission: AdmissionSpec,
    #[serde(default)]
    pub metrics: MetricsSpec,
}

/// A link's rate, propagation delay and output queues.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    #[serde(with = "units::rate")]
    #[schemars(with = "String")]
    pub rate: Rate,
    #[serde(with = "units::dur")]
    #[schemars(with = "String")]
    pub delay: Dur,
    /// Queue at the output towards the far end; default: `topology.default_queue`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueSpec>,
    /// Queue of the reverse direction; default: `topology.default_queue`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse_queue: Option<QueueSpec>,
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
        sources: u32,
        #[serde(default = "one")]
        sinks: u32,
        #[serde(default = "one")]
        routers: u32,
        /// Links source -> r0.
        access: LinkSpec,
        bottleneck: LinkSpec,
        /// Links r1 -> sinks (two routers); default: same as `access`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        egress: Option<LinkSpec>,
        #[serde(default = "default_queue")]
        default_queue: QueueSpec,
    },
    /// A chain of `bottlenecks` router-to-router links with cross traffic.
    ParkingLot {
        bottlenecks: u32,
        access: LinkSpec,
        bottleneck: LinkSpec,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        egress: Option<LinkSpec>,
        #[serde(default = "default_queue")]
        default_queue: QueueSpec,
    },
    /// N ingresses with their own delays into one bottleneck.
    Star {
        ingresses: u32,
        access: LinkSpec,
        /// Per-ingress access delays (overrides `access.delay`); length must be `ingresses`.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[schemars(with = "Vec<String>")]
        #[serde(with = "dur_list")]
        ingress_delays: Vec<Dur>,
        bottleneck: LinkSpec,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        egress: Option<LinkSpec>,
        #[serde(default = "default_queue")]
        default_queue: QueueSpec,
    },
    /// Nodes and links as listed.
    Explicit {
        nodes: Vec<NodeSpec>,
        links: Vec<ExplicitLink>,
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
    pub name: String,
    pub kind: NodeKind,
}

/// A duplex point-to-point link between nodes `a` and `b`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
// serde cannot deny unknown fields beside a `flatten` (it then refuses the
// flattened fields themselves); the flattened part denies its own, the
// schema (and the structural check in `schema::check`) denies the rest.
#[schemars(deny_unknown_fields)]
pub struct ExplicitLink {
    pub a: String,
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
    /// The DSCP, highest first: bands are matched by `dscp` lists.
    Dscp,
}

/// A queue discipline. `type` picks it.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum QueueSpec {
    /// Drop-tail FIFO.
    Fifo {
        #[serde(with = "units::limit")]
        #[schemars(with = "String")]
        limit: Limit,
    },
    /// RED (Floyd & Jacobson 1993).
    Red {
        #[serde(with = "units::limit")]
        #[schemars(with = "String")]
        limit: Limit,
        /// Lower threshold, in packets (or bytes in byte mode).
        min_th: f64,
        /// Upper threshold, in packets (or bytes in byte mode).
        max_th: f64,
        #[serde(default = "red_max_p")]
        max_p: f64,
        #[serde(default = "red_w_q")]
        w_q: f64,
        #[serde(default)]
        gentle: bool,
        /// Mark ECN-capable packets instead of dropping them early.
        #[serde(default)]
        ecn: bool,
        #[serde(default)]
        mode: QueueMode,
        /// Typical packet size, for the idle-time decay of the average.
        #[serde(default = "red_mean_pkt", with = "units::bytes")]
        #[schemars(with = "String")]
        mean_pkt_size: Bytes,
    },
    /// Strict priority over bands (band 0 served first).
    Prio {
        bands: Vec<QueueSpec>,
        #[serde(default)]
        classify_by: ClassifyBy,
    },
}

impl QueueSpec {
    pub fn type_name(&self) -> &'static str {
        match self {
            QueueSpec::Fifo { .. } => "fifo",
            QueueSpec::Red { .. } => "red",
            QueueSpec::Prio { .. } => "prio",
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
        #[serde(default, skip_serializing_if = "Option::is_none", with = "units::rate::opt")]
        #[schemars(with = "Option<String>")]
        rate: Option<Rate>,
        #[serde(default, skip_serializing_if = "Option::is_none", with = "units::dur::opt")]
        #[schemars(with = "Option<String>")]
        interval: Option<Dur>,
    },
    /// Poisson packet arrivals at a mean payload rate.
    Poisson {
        #[serde(with = "units::rate")]
        #[schemars(with = "String")]
        rate: Rate,
    },
    /// ON/OFF: CBR at `peak` (payload rate) during ON periods, silent during
    /// OFF periods. `interval` may replace `peak` (packet spacing when ON).
    OnOff {
        #[serde(default, skip_serializing_if = "Option::is_none", with = "units::rate::opt")]
        #[schemars(with = "Option<String>")]
        peak: Option<Rate>,
        #[serde(default, skip_serializing_if = "Option::is_none", with = "units::dur::opt")]
        #[schemars(with = "Option<String>")]
        interval: Option<Dur>,
        #[serde(with = "units::dur")]
        #[schemars(with = "String")]
        on: Dur,
        #[serde(with = "units::dur")]
        #[schemars(with = "String")]
        off: Dur,
        #[serde(default)]
        dist: PeriodDist,
        /// Pareto shape (alpha); location = mean*(shape-1)/shape.
        #[serde(default = "default_pareto_shape")]
        shape: f64,
    },
}

/// Packet payload size: fixed (`"1000B"`) or fixed plus an exponential offset.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(untagged)]
pub enum SizeSpec {
    Fixed(
        #[serde(with = "units::bytes")]
        #[schemars(with = "String")]
        Bytes,
    ),
    Random(RandomSize),
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RandomSize {
    #[serde(with = "units::bytes")]
    #[schemars(with = "String")]
    pub base: Bytes,
    /// Mean of the exponential offset added to `base` (rounded to whole bytes).
    #[serde(with = "units::bytes")]
    #[schemars(with = "String")]
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
}

/// How flows of a group come and go, instead of `flows` fixed flows.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "process", rename_all = "snake_case", deny_unknown_fields)]
pub enum Arrivals {
    /// New flows as a Poisson process of `rate` per second.
    Poisson {
        rate: f64,
        #[serde(with = "units::dur")]
        #[schemars(with = "String")]
        lifetime: Dur,
        #[serde(default)]
        lifetime_dist: LifetimeDist,
        /// Stop starting flows after this many (default: no cap).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_flows: Option<u32>,
    },
    /// Batches as a Poisson process of `rate` per second, each of a
    /// geometric number of flows with mean `batch_mean`.
    BatchPoisson {
        rate: f64,
        batch_mean: f64,
        #[serde(with = "units::dur")]
        #[schemars(with = "String")]
        lifetime: Dur,
        #[serde(default)]
        lifetime_dist: LifetimeDist,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_flows: Option<u32>,
    },
    /// Keep `alive` flows running: when one ends another starts.
    KeepAlive {
        alive: u32,
        #[serde(with = "units::dur")]
        #[schemars(with = "String")]
        lifetime: Dur,
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
// schema (and the structural check in `schema::check`) denies the rest.
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
    #[serde(default)]
    pub transport: Transport,
    /// Payload size.
    pub size: SizeSpec,
    /// Header bytes added to each payload on the wire.
    #[serde(default, with = "units::bytes")]
    #[schemars(with = "String")]
    pub header: Bytes,
    /// Class tag set on every packet (classful queues map it to a band).
    #[serde(default)]
    pub class: u8,
    #[serde(default)]
    pub dscp: u8,
    /// Set ECT(0) on packets.
    #[serde(default)]
    pub ecn: bool,
    #[serde(default, with = "units::dur")]
    #[schemars(with = "String")]
    pub start: Dur,
    /// End of the group's flows (default: the end of the run).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "units::dur::opt")]
    #[schemars(with = "Option<String>")]
    pub stop: Option<Dur>,
    /// Each flow's start is delayed by a uniform random amount in [0, start_jitter].
    #[serde(default, with = "units::dur")]
    #[schemars(with = "String")]
    pub start_jitter: Dur,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<Arrivals>,
    /// Rate each flow asks admission control to reserve (default: the model's mean wire rate).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "units::rate::opt")]
    #[schemars(with = "Option<String>")]
    pub reserve: Option<Rate>,
}

/// The admission controller asked when a flow starts.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum AdmissionSpec {
    #[default]
    AdmitAll,
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
    #[schemars(with = "String")]
    pub bin: Dur,
    /// Interval at which queues (backlog, averages) and links are sampled.
    #[serde(default = "default_series_interval", with = "units::dur")]
    #[schemars(with = "String")]
    pub series_interval: Dur,
    /// Per-packet delay traces for these flows (names such as "cbr.3")...
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trace_flows: Vec<String>,
    /// ...and for every flow of these groups.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trace_groups: Vec<String>,
    /// Inter-arrival histogram bin width at the receiver.
    #[serde(default = "default_hist_bin", with = "units::dur")]
    #[schemars(with = "String")]
    pub interarrival_bin: Dur,
    /// Inter-arrivals at or above this go to the overflow bin.
    #[serde(default = "default_hist_max", with = "units::dur")]
    #[schemars(with = "String")]
    pub interarrival_max: Dur,
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
        }
    }
}
