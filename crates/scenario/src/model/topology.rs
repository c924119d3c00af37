//! The network: a preset (`dumbbell`, `parking_lot`, `star`) or explicit
//! nodes and links, and each link's rate, delay, queues, MACE table and loss.
//!
//! Node names made by the presets:
//! - `dumbbell`: `src0..`, routers `r0` (and `r1`), `sink0..`.
//! - `parking_lot`: routers `r0..rk`; the long path `src_long -> r0 -> ... -> rk -> sink_long`;
//!   for bottleneck `i` (link `r{i} -> r{i+1}`) cross traffic `src_x{i} -> r{i}` and
//!   `r{i+1} -> sink_x{i}`; `hop_queues` gives each bottleneck its own queue.
//! - `star`: ingresses `in0..` -> `r0` -> (bottleneck) -> `r1` -> `sink0`.
//! - `explicit`: the names given.

use super::{one, MaceSpec, QueueSpec};
use crate::units;
use qoslab_core::qdisc::Limit;
use qoslab_core::units::{Dur, Rate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A link's rate, propagation delay and output queues.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// Link rate (bit/s), e.g. "25Mbps"; > 0.
    #[serde(with = "units::rate")]
    #[schemars(with = "crate::schema::RateText")]
    pub rate: Rate,
    /// One-way propagation delay, e.g. "20ms"; may be "0s".
    #[serde(with = "units::dur")]
    #[schemars(with = "crate::schema::DurText")]
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

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

fn default_queue() -> QueueSpec {
    QueueSpec::Fifo { limit: Limit::packets(1000) }
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
        /// Per-hop queues: the queue of bottleneck `r{i} -> r{i+1}` is entry `i`
        /// (instead of `bottleneck.queue`); none, or exactly one per bottleneck.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        hop_queues: Vec<QueueSpec>,
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
        #[schemars(with = "Vec<crate::schema::DurText>")]
        #[serde(with = "dur_list")]
        ingress_delays: Vec<Dur>,
        /// Make every ingress `in{i}` a router with its own host `src{i}` behind it (a
        /// 10 Gb/s link without delay): [Zhang07]'s RTT topology, whose ingresses are
        /// domain edge routers. Traffic then starts at `src{i}`. Default false.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        ingress_routers: bool,
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
        crate::units::write_list(v, s)
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
