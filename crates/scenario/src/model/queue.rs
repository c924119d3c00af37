//! Queue disciplines: `fifo`, `red`, `mace`, `prio`, `cbt`, `dcbt`, and
//! the parts they share: RED's parameters ([`RedSpec`], one spec for the
//! `red`, `cbt` and `dcbt` queues) and ChIPS ([`ChipsSpec`]).
//!
//! **One RED spec, flattened.** `red`, `cbt` and `dcbt` carry RED's nine
//! keys (`limit`, `min_th`, `max_th`, `max_p`, `w_q`, `gentle`, `ecn`,
//! `mode`, `mean_pkt_size`) at the queue's own level through
//! `#[serde(flatten)] red: RedSpec`; the defaults are the core's
//! ([`qoslab_core::qdisc::red`]). serde cannot deny unknown keys beside a
//! `flatten`, so [`QueueSpec`] denies them in its schema
//! (`schemars(deny_unknown_fields)`): the loader's structural check
//! ([`crate::shape`]) walks the document against that schema and refuses
//! every unknown key, with its path and the allowed keys, before serde runs.

use super::yes;
use crate::units;
use qoslab_core::qdisc::red::{DEFAULT_MAX_P, DEFAULT_MEAN_PKT_SIZE, DEFAULT_W_Q};
use qoslab_core::qdisc::Limit;
use qoslab_core::units::{Bytes, Dur, Rate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

fn red_max_p() -> f64 {
    DEFAULT_MAX_P
}
fn red_w_q() -> f64 {
    DEFAULT_W_Q
}
fn red_mean_pkt() -> Bytes {
    DEFAULT_MEAN_PKT_SIZE
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

/// A queue discipline. `type` picks it.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
// Not serde's `deny_unknown_fields`: it would refuse the flattened RED keys
// themselves. The schema denies unknown keys, and the loader checks every
// document against it first (see the module's doc).
#[schemars(deny_unknown_fields)]
pub enum QueueSpec {
    /// Drop-tail FIFO.
    Fifo {
        /// Queue limit: "60pkts", "64kB", or both as ["60pkts", "64kB"].
        #[serde(with = "units::limit")]
        #[schemars(with = "crate::schema::LimitText")]
        limit: Limit,
    },
    /// RED (Floyd & Jacobson 1993).
    Red {
        #[serde(flatten)]
        red: RedSpec,
        /// ChIPS [Claypool00 §3.2]: `true`, or `{ max_tagged_share = 0.5, keep_flow_order = true }`;
        /// tagged packets cut in at RED's average on transient congestion. Default: off.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        chips: Option<ChipsSpec>,
    },
    /// MACE's two-level strict-priority queue in one shared buffer (CL pushes out BE);
    /// the link's `mace` table holds the rest. Only as a link direction's queue.
    Mace {
        /// The shared buffer, e.g. "50pkts" (paper).
        #[serde(with = "units::limit")]
        #[schemars(with = "crate::schema::LimitText")]
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
    /// CBT, class-based thresholds, "RED for all" (Parris, Jeffay & Smith 1999; [Claypool00 §3]):
    /// static thresholds on the tagged (class 1) and untagged (class 2) UDP averages in front
    /// of RED; TCP (class 0) goes straight to RED.
    Cbt {
        #[serde(flatten)]
        red: RedSpec,
        /// Threshold of the tagged (multimedia UDP, class 1) average, in packets (bytes in byte mode); default 2.9.
        #[serde(default = "cbt_tagged_th")]
        tagged_threshold: f64,
        /// Threshold of the untagged (other UDP, class 2) average, in packets (bytes in byte mode); default 0.6.
        #[serde(default = "cbt_untagged_th")]
        untagged_threshold: f64,
        /// Active-flow interval: a flow is active if it sent within it; swept every interval
        /// ([Claypool00 §3.1]: 300 ms). Used when flows are counted (D-CBT, ChIPS).
        #[serde(default = "flow_interval", with = "units::dur")]
        #[schemars(with = "crate::schema::DurText")]
        flow_interval: Dur,
        /// ChIPS [Claypool00 §3.2]: `true`, or `{ max_tagged_share = 0.5, keep_flow_order = true }`;
        /// tagged packets cut in at RED's average on transient congestion. Default: off.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        chips: Option<ChipsSpec>,
    },
    /// D-CBT, dynamic class-based thresholds (Claypool & Chung 2000, [Claypool00 §3.1]): UDP
    /// thresholds from the active-flow shares, all averages updated together.
    Dcbt {
        #[serde(flatten)]
        red: RedSpec,
        /// Active-flow interval: a flow is active if it sent within it; swept every interval
        /// ([Claypool00 §3.1]: 300 ms). Used when flows are counted (D-CBT, ChIPS).
        #[serde(default = "flow_interval", with = "units::dur")]
        #[schemars(with = "crate::schema::DurText")]
        flow_interval: Dur,
        /// ChIPS [Claypool00 §3.2]: `true`, or `{ max_tagged_share = 0.5, keep_flow_order = true }`;
        /// tagged packets cut in at RED's average on transient congestion. Default: off.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        chips: Option<ChipsSpec>,
    },
    /// Self-clocked fair queueing (Golestani 1994; [Guerin99 §III]) over child queues: each child
    /// has a rate (its weight); the child whose head has the smallest service tag is served.
    Scfq {
        /// The children in order; a packet's class tag (or DSCP) picks its child, as for `prio`.
        queues: Vec<ScfqChild>,
        /// `class` (the class tag; tags beyond the last child go to the last child) or `dscp`.
        #[serde(default)]
        classify_by: ClassifyBy,
    },
    /// A FIFO whose admission gives each stream a rate guarantee by buffer management
    /// (Guérin, Kamat, Peris & Rajan 1998; [Guerin99 §III.A]): a stream owns
    /// buffers × buff_size × its rate / `rate` bytes, excess goes to the shared buffers under
    /// the "holes" rule, best-effort streams use shared buffers only. A link stage of type
    /// `classifier` gives packets their stream.
    BufferManaged {
        /// The pool, in packet buffers (> 0).
        buffers: u32,
        /// Bytes one buffer counts for; smaller packets count as this size (> 0), e.g. "512B".
        #[serde(with = "units::bytes")]
        #[schemars(with = "crate::schema::BytesText")]
        buff_size: Bytes,
        /// The rate the queue is served at, R in b_i = B r_i / R (default: the link rate).
        #[serde(default, skip_serializing_if = "Option::is_none", with = "units::rate::opt")]
        #[schemars(with = "Option<crate::schema::RateText>")]
        rate: Option<Rate>,
        /// The streams: `{ name = "A1", rate = "200kbps" }`; without `rate`, best effort.
        streams: Vec<StreamSpec>,
    },
    /// The edge egress of [Guerin99] (§III): an EF queue and an AF/BE queue served by SCFQ at
    /// rates r_EF and link − r_EF, each buffer-managed from its share of one pool. Streams of
    /// service `ef` go to the EF queue, `af` and `be` to the AF/BE queue; a link stage of type
    /// `classifier` maps packets to streams.
    Edge {
        /// The egress pool, in packet buffers (> 0), split between the EF and AF/BE queues.
        buffers: u32,
        /// Buffers of the EF queue (default: buffers × r_EF / link rate, rounded, at least 1
        /// when there are EF streams; 0 without EF streams).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ef_buffers: Option<u32>,
        /// Bytes one buffer counts for (BUFF_SIZE); smaller packets count as this size, e.g. "512B".
        #[serde(with = "units::bytes")]
        #[schemars(with = "crate::schema::BytesText")]
        buff_size: Bytes,
        /// The EF queue's SCFQ rate r_EF (default: the sum of the EF streams' rates).
        #[serde(default, skip_serializing_if = "Option::is_none", with = "units::rate::opt")]
        #[schemars(with = "Option<crate::schema::RateText>")]
        ef_rate: Option<Rate>,
        /// The streams: `{ name = "E1", service = "ef", rate = "100kbps" }`.
        streams: Vec<EdgeStreamSpec>,
    },
}

/// One child of an `scfq` queue.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ScfqChild {
    /// The child's service rate (its SCFQ weight), > 0, e.g. "300kbps".
    #[serde(with = "units::rate")]
    #[schemars(with = "crate::schema::RateText")]
    pub rate: Rate,
    /// The child's queue discipline.
    pub queue: QueueSpec,
}

/// A stream of a `buffer_managed` queue.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StreamSpec {
    /// Its name, which a `classifier` rule's `stream` gives.
    pub name: String,
    /// Its guaranteed rate; without it, a best-effort stream (shared buffers only).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "units::rate::opt")]
    #[schemars(with = "Option<crate::schema::RateText>")]
    pub rate: Option<Rate>,
}

/// The service of an edge stream [Guerin99 §III].
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EdgeService {
    /// Expedited forwarding: the EF queue, a rate, no excess.
    Ef,
    /// Assured forwarding: the AF/BE queue, a floor rate, excess in shared buffers.
    Af,
    /// Best effort: the AF/BE queue, shared buffers only, no rate.
    Be,
}

/// A stream of an `edge` queue.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EdgeStreamSpec {
    /// Its name, which a `classifier` rule's `stream` gives.
    pub name: String,
    /// `ef`, `af` or `be`.
    pub service: EdgeService,
    /// Its reserved rate (required for `ef` and `af`, refused for `be`).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "units::rate::opt")]
    #[schemars(with = "Option<crate::schema::RateText>")]
    pub rate: Option<Rate>,
}

impl QueueSpec {
    /// The queue's `type`, one of [`crate::registry::QUEUE_TYPES`].
    pub fn type_name(&self) -> &'static str {
        crate::registry::tag_of(self, "type", crate::registry::QUEUE_TYPES)
    }
    /// RED's parameters of a `red`, `cbt` or `dcbt` queue.
    pub fn red(&self) -> Option<&RedSpec> {
        match self {
            QueueSpec::Red { red, .. } | QueueSpec::Cbt { red, .. } | QueueSpec::Dcbt { red, .. } => Some(red),
            QueueSpec::Fifo { .. }
            | QueueSpec::Mace { .. }
            | QueueSpec::Prio { .. }
            | QueueSpec::Scfq { .. }
            | QueueSpec::BufferManaged { .. }
            | QueueSpec::Edge { .. } => None,
        }
    }
}

/// RED's parameters (Floyd & Jacobson 1993), one spec for the `red`, `cbt`
/// and `dcbt` queues (CBT and D-CBT put RED behind their class stages);
/// its keys sit at the queue's own level. Defaults: the core's
/// ([`qoslab_core::qdisc::red`]).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct RedSpec {
    /// Hard queue limit: "60pkts", "64kB", or both; arrivals beyond it are dropped (overlimit).
    #[serde(with = "units::limit")]
    #[schemars(with = "crate::schema::LimitText")]
    pub limit: Limit,
    /// RED's lower threshold, in packets (or bytes in byte mode).
    pub min_th: f64,
    /// RED's upper threshold, in packets (or bytes in byte mode).
    pub max_th: f64,
    /// RED's early-drop probability at `max_th`, in (0, 1]; default 0.1 (Floyd & Jacobson 1993).
    #[serde(default = "red_max_p")]
    pub max_p: f64,
    /// Weight of RED's average (EWMA; CBT and D-CBT: also of the class averages), in (0, 1];
    /// default 0.002 (Floyd & Jacobson 1993).
    #[serde(default = "red_w_q")]
    pub w_q: f64,
    /// Gentle RED (Floyd 2000): drop probability rises from `max_p` to 1 between `max_th` and 2 `max_th`.
    #[serde(default)]
    pub gentle: bool,
    /// Mark ECN-capable packets instead of dropping them early (RED's verdict only).
    #[serde(default)]
    pub ecn: bool,
    /// Measure the queue, averages and thresholds in `packets` (default) or `bytes`.
    #[serde(default)]
    pub mode: QueueMode,
    /// Typical packet size, for the idle-time decay of the averages; default 1000B.
    #[serde(default = "red_mean_pkt", with = "units::bytes")]
    #[schemars(with = "crate::schema::BytesText")]
    pub mean_pkt_size: Bytes,
    /// RED's algorithm: `floyd93` (default), the 1993 paper's, or `ns2`, RED as ns-2's
    /// `queue/red.cc` runs it (no drop at <= 1 queued packet, the `old` flag, `wait_`
    /// spacing, one EWMA step after an idle period; see docs/mechanisms/red.md).
    #[serde(default)]
    pub variant: RedVariantSpec,
}

impl RedSpec {
    /// RED's spec with the core's defaults around the given limit and thresholds.
    pub fn new(limit: Limit, min_th: f64, max_th: f64) -> RedSpec {
        RedSpec {
            limit,
            min_th,
            max_th,
            max_p: red_max_p(),
            w_q: red_w_q(),
            gentle: false,
            ecn: false,
            mode: QueueMode::default(),
            mean_pkt_size: red_mean_pkt(),
            variant: RedVariantSpec::default(),
        }
    }
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

/// Which RED algorithm a `red`, `cbt` or `dcbt` queue runs.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RedVariantSpec {
    /// Floyd & Jacobson 1993, Fig. 2.
    #[default]
    Floyd93,
    /// ns-2.35 `queue/red.cc` (and ns-3 `RedQueueDisc`) with `wait_`.
    Ns2,
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

fn chips_share() -> f64 {
    0.5
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
    /// in (0, 1]; default 0.5 [Claypool00 §5]; 1 keeps it always on.
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
#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::load_str;
    use crate::ScenarioError;

    /// A dumbbell whose bottleneck queue is `{ queue }` (on line 8).
    fn with_queue(queue: &str) -> String {
        format!(
            "name = \"t\"\nduration = \"10s\"\n\n[topology]\npreset = \"dumbbell\"\nsources = 2\n\
             access = {{ rate = \"100Mbps\", delay = \"1ms\" }}\n\
             bottleneck = {{ rate = \"10Mbps\", delay = \"10ms\", queue = {{ {queue} }} }}\n\n\
             [[traffic]]\nname = \"cbr\"\nmodel = \"cbr\"\nsrc = \"src*\"\ndst = \"sink0\"\nrate = \"1Mbps\"\nsize = \"1000B\"\n"
        )
    }

    fn refused(queue: &str) -> Vec<String> {
        match load_str(&with_queue(queue), "s.toml", &[], None) {
            Err(ScenarioError::Config(ds)) => ds.iter().map(|d| d.to_string()).collect(),
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("{queue} loaded"),
        }
    }

    fn bottleneck(queue: &str) -> QueueSpec {
        let s = load_str(&with_queue(queue), "s.toml", &[], None).unwrap_or_else(|e| panic!("{e}"));
        let crate::Topology::Dumbbell { bottleneck, .. } = &s.topology else { panic!() };
        bottleneck.queue.clone().unwrap()
    }

    #[test]
    fn an_unknown_key_of_a_red_or_cbt_queue_is_named_with_every_allowed_key() {
        // The same messages as when each queue declared RED's keys itself.
        assert_eq!(
            refused("type = \"red\", limit = \"60pkts\", min_th = 5, max_th = 15, max_pp = 0.2"),
            ["s.toml:8: topology.bottleneck.queue.max_pp: unknown field \"max_pp\"; allowed: chips, ecn, gentle, \
              limit, max_p, max_th, mean_pkt_size, min_th, mode, type, variant, w_q"]
        );
        assert_eq!(
            refused("type = \"cbt\", limit = \"60pkts\", min_th = 5, max_th = 15, tagged_treshold = 2"),
            ["s.toml:8: topology.bottleneck.queue.tagged_treshold: unknown field \"tagged_treshold\"; allowed: \
              chips, ecn, flow_interval, gentle, limit, max_p, max_th, mean_pkt_size, min_th, mode, \
              tagged_threshold, type, untagged_threshold, variant, w_q"]
        );
        // A key of another queue type is unknown too.
        assert_eq!(
            refused("type = \"red\", limit = \"60pkts\", min_th = 5, max_th = 15, flow_interval = \"1s\"").len(),
            1
        );
    }

    #[test]
    fn red_cbt_and_dcbt_read_one_red_spec_with_the_cores_defaults() {
        let red = RedSpec::new(Limit::packets(60), 5.0, 15.0);
        assert_eq!((red.max_p, red.w_q, red.mean_pkt_size), (DEFAULT_MAX_P, DEFAULT_W_Q, DEFAULT_MEAN_PKT_SIZE));
        for t in ["red", "cbt", "dcbt"] {
            let q = bottleneck(&format!("type = \"{t}\", limit = \"60pkts\", min_th = 5, max_th = 15"));
            assert_eq!(q.type_name(), t);
            assert_eq!(q.red(), Some(&red), "{t}");
        }
        let q = bottleneck("type = \"cbt\", limit = \"60pkts\", min_th = 5, max_th = 15, w_q = 0.01, mode = \"bytes\"");
        assert_eq!(q.red().map(|r| (r.w_q, r.mode)), Some((0.01, QueueMode::Bytes)));
        // The echo writes RED's keys at the queue's level, as they are read.
        let echo = serde_json::to_value(&q).unwrap();
        assert_eq!(
            (echo["type"].as_str(), echo["w_q"].as_f64(), echo["tagged_threshold"].as_f64()),
            (Some("cbt"), Some(0.01), Some(2.9))
        );
    }

    #[test]
    fn red_variant_is_floyd93_unless_ns2_is_asked_for_in_red_cbt_and_dcbt() {
        for t in ["red", "cbt", "dcbt"] {
            let base = format!("type = \"{t}\", limit = \"60pkts\", min_th = 5, max_th = 15");
            let q = bottleneck(&base);
            assert_eq!(q.red().map(|r| r.variant), Some(RedVariantSpec::Floyd93), "{t}");
            // The echo fills the default in.
            assert_eq!(serde_json::to_value(&q).unwrap()["variant"].as_str(), Some("floyd93"));
            let q = bottleneck(&format!("{base}, variant = \"ns2\""));
            assert_eq!(q.red().map(|r| r.variant), Some(RedVariantSpec::Ns2), "{t}");
            assert_eq!(serde_json::to_value(&q).unwrap()["variant"].as_str(), Some("ns2"));
        }
        let e = refused("type = \"red\", limit = \"60pkts\", min_th = 5, max_th = 15, variant = \"ns3\"");
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].starts_with("s.toml:8: topology.bottleneck.queue.variant: "), "{e:?}");
        assert!(e[0].contains("floyd93") && e[0].contains("ns2"), "{e:?}");
    }
}
