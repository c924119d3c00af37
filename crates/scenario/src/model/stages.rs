//! Port stages in scenarios: the `stages` (and `reverse_stages`) list of a
//! link, each a table with a `type`. A stage runs on every packet entering
//! the link direction, before its queue discipline, in list order (see
//! `qoslab_core::pipeline`). Built by [`crate::registry::build_stage`].

use crate::units;
use qoslab_core::units::{Bytes, Dur, Rate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a policer does with a packet that finds too few tokens.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PolicerActionSpec {
    /// Drop it (`drops_policed`).
    #[default]
    Drop,
    /// Pass it with its PCN excess-traffic mark set (`marks_pcn_excess`).
    Mark,
}

/// One stage of a link direction's port.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum StageSpec {
    /// A token-bucket policer (`qoslab_core::stage::policer`): packets that find
    /// `size` bytes of tokens pass; the others are dropped or marked.
    Policer {
        /// Token rate (bit/s), e.g. "2Mbps"; > 0.
        #[serde(with = "units::rate")]
        #[schemars(with = "crate::schema::RateText")]
        rate: Rate,
        /// Bucket depth (bytes), e.g. "3000B"; > 0. The bucket starts full.
        #[serde(with = "units::bytes")]
        #[schemars(with = "crate::schema::BytesText")]
        depth: Bytes,
        /// `drop` (default) or `mark`.
        #[serde(default)]
        action: PolicerActionSpec,
    },
    /// A rule-database classifier with an exact-match fast-path cache [Guerin99 §II]:
    /// the first packet of a flow is looked up in `rules` (slow path) and its answer cached;
    /// later packets of the flow hit the cache. A rule gives the packet its `stream` (of the
    /// link direction's `edge` or `buffer_managed` queue) or its `class` tag, and may re-mark
    /// its DSCP. See `docs/mechanisms/classifier.md`.
    Classifier {
        /// Fast-path cache entries (flows), > 0; the least recently used entry is evicted.
        #[serde(default = "default_cache")]
        cache: u32,
        /// The rule database; a packet takes the matching rule of lowest `priority`.
        rules: Vec<RuleSpec>,
        /// The stream of packets no rule matches (default: they are dropped as unclassified).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        default_stream: Option<String>,
    },
    /// PCN admission marking [Zhang07 §3.1.1]: a virtual queue drained at the
    /// configured-admissible-rate, grown by each PCN packet, capped at `upper_limit`;
    /// packets are threshold-marked with a probability that ramps from 0 at
    /// `min_threshold` to 1 at `max_threshold` (or steps at `threshold`).
    /// Thresholds are times at the admissible rate. See `docs/mechanisms/pcn.md`.
    PcnAdmission {
        /// The configured-admissible-rate (default: half the link rate, the paper's §3).
        #[serde(default, skip_serializing_if = "Option::is_none", with = "units::rate::opt")]
        #[schemars(with = "Option<crate::schema::RateText>")]
        admissible_rate: Option<Rate>,
        /// `ramp` (default) or `step`.
        #[serde(default)]
        marking: MarkingSpec,
        /// Ramp start (default 5 ms).
        #[serde(default = "ms5", with = "units::dur")]
        #[schemars(with = "crate::schema::DurText")]
        min_threshold: Dur,
        /// Ramp end, where every packet is marked (default 15 ms).
        #[serde(default = "ms15", with = "units::dur")]
        #[schemars(with = "crate::schema::DurText")]
        max_threshold: Dur,
        /// The step's threshold (`marking = "step"`; default 15 ms).
        #[serde(default = "ms15", with = "units::dur")]
        #[schemars(with = "crate::schema::DurText")]
        threshold: Dur,
        /// The virtual-queue upper limit (default 20 ms).
        #[serde(default = "ms20", with = "units::dur")]
        #[schemars(with = "crate::schema::DurText")]
        upper_limit: Dur,
    },
    /// PCN termination marking [Zhang07 §4.1]: a token bucket at the
    /// configured-termination-rate, `depth_packets` packets of `packet_size` deep;
    /// packets that find no token are excess-marked; excess-marked packets are not metered.
    PcnTermination {
        /// The configured-termination-rate (default: half the link rate, the paper's §4).
        #[serde(default, skip_serializing_if = "Option::is_none", with = "units::rate::opt")]
        #[schemars(with = "Option<crate::schema::RateText>")]
        termination_rate: Option<Rate>,
        /// Bucket depth in packets (default 256, the paper's §4.1).
        #[serde(default = "pkts256")]
        depth_packets: u64,
        /// The packet size the depth counts (default 1500B; give the PCN traffic's largest).
        #[serde(default = "b1500", with = "units::bytes")]
        #[schemars(with = "crate::schema::BytesText")]
        packet_size: Bytes,
    },
}

/// The marking curve of a `pcn_admission` stage.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MarkingSpec {
    /// 0 up to `min_threshold`, linear to 1 at `max_threshold`.
    #[default]
    Ramp,
    /// 0 below `threshold`, 1 from it on.
    Step,
}

fn ms5() -> Dur {
    Dur::from_ms(5)
}
fn ms15() -> Dur {
    Dur::from_ms(15)
}
fn ms20() -> Dur {
    Dur::from_ms(20)
}
fn pkts256() -> u64 {
    256
}
fn b1500() -> Bytes {
    Bytes(1500)
}

fn default_cache() -> u32 {
    1024
}

/// A port match: one port (`5001`) or an inclusive range (`"5000-5099"`).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(untagged)]
pub enum PortMatch {
    One(u16),
    Range(String),
}

/// A protocol match: `"udp"`, `"tcp"` or a protocol number.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(untagged)]
pub enum ProtoMatch {
    Number(u8),
    Name(String),
}

/// One rule of a `classifier` stage; every match field left out is a wildcard.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    /// Lower wins among matching rules. Rules that can match the same packet need
    /// different priorities; without one a rule has the lowest priority.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<u32>,
    /// Source: a node name, an address or a prefix ("10.0.0.0/8").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src: Option<String>,
    /// Destination: a node name, an address or a prefix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dst: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src_port: Option<PortMatch>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dst_port: Option<PortMatch>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proto: Option<ProtoMatch>,
    /// The node the packet arrived from (the ingress interface).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ingress: Option<String>,
    /// The DSCP the packet arrives with, 0..63.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dscp: Option<u8>,
    /// The stream the packet joins (a stream of the link direction's queue).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
    /// The class tag the packet gets (for `prio` and `scfq` queues), when no `stream` is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<u8>,
    /// Re-mark the DSCP to this value, 0..63.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set_dscp: Option<u8>,
}
