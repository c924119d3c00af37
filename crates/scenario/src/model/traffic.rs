//! Traffic groups (`[[traffic]]`): the source model, endpoints, sizes,
//! marks, times, flow arrival processes and per-flow entry shapers.

use super::one;
use crate::units;
use qoslab_core::qdisc::Limit;
pub use qoslab_core::traffic::{Packetization, PeriodDist};
use qoslab_core::units::{Bytes, Dur, Rate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

fn is_false(v: &bool) -> bool {
    !*v
}

fn default_pareto_shape() -> f64 {
    1.5
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
        #[schemars(with = "Option<crate::schema::RateText>")]
        rate: Option<Rate>,
        /// Packet spacing, e.g. "8ms".
        #[serde(default, skip_serializing_if = "Option::is_none", with = "units::dur::opt")]
        #[schemars(with = "Option<crate::schema::DurText>")]
        interval: Option<Dur>,
    },
    /// Poisson packet arrivals at a mean payload rate.
    Poisson {
        /// Mean payload rate; exponential gaps between packets.
        #[serde(with = "units::rate")]
        #[schemars(with = "crate::schema::RateText")]
        rate: Rate,
    },
    /// ON/OFF: CBR at `peak` (payload rate) during ON periods, silent during
    /// OFF periods. `interval` may replace `peak` (packet spacing when ON).
    OnOff {
        /// Payload rate while ON (packets every payload*8/peak).
        #[serde(default, skip_serializing_if = "Option::is_none", with = "units::rate::opt")]
        #[schemars(with = "Option<crate::schema::RateText>")]
        peak: Option<Rate>,
        /// Packet spacing while ON (instead of `peak`).
        #[serde(default, skip_serializing_if = "Option::is_none", with = "units::dur::opt")]
        #[schemars(with = "Option<crate::schema::DurText>")]
        interval: Option<Dur>,
        /// Mean ON period.
        #[serde(with = "units::dur")]
        #[schemars(with = "crate::schema::DurText")]
        on: Dur,
        /// Mean OFF period.
        #[serde(with = "units::dur")]
        #[schemars(with = "crate::schema::DurText")]
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
        tcp: crate::tcp_model::TcpSpec,
    },
    /// A finite TCP transfer of `bytes`; the flow ends when the last byte
    /// is acknowledged and its completion time is recorded.
    Transfer {
        /// Bytes to transfer (application payload), e.g. "1250000B"; >= 1 B.
        #[serde(with = "units::bytes")]
        #[schemars(with = "crate::schema::BytesText")]
        bytes: Bytes,
        /// TCP settings (every key optional; ns-2-of-2000 defaults).
        #[serde(default)]
        tcp: crate::tcp_model::TcpSpec,
    },
    /// Video trace (VTR, [Zhang07 §2.3.3]): a flow plays a frame trace from a
    /// random frame on, one frame every frame interval of the trace, each
    /// frame cut into packets of the group's `size` (the last one the
    /// remainder) sent `interval` apart. See `docs/mechanisms/vtr.md`.
    Vtr {
        /// The frames: a trace file (`"traces/a.txt"`, relative to the
        /// scenario's folder; rows `time_s size_bytes`) or
        /// `{ synthetic = { seed = 1 } }` (the built-in MPEG-4-like generator).
        trace: VtrTrace,
        /// Spacing of a frame's packets (default "1ms", the paper's).
        #[serde(default = "one_ms", with = "units::dur")]
        #[schemars(with = "crate::schema::DurText")]
        interval: Dur,
    },
    /// MM_APP media-scaling UDP source with receiver feedback ([Claypool00 §2], §5).
    MmApp {
        /// Scales and feedback packet size (optional; the paper's defaults).
        #[serde(default)]
        mm_app: crate::tcp_model::MmAppSpec,
    },
}

fn one_ms() -> Dur {
    Dur::from_ms(1)
}

/// Where a `vtr` group's frames come from.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(untagged)]
pub enum VtrTrace {
    /// A frame-trace file, relative to the scenario's folder.
    File(String),
    /// The built-in synthetic MPEG-4-like trace.
    Synthetic {
        /// The generator's settings (every key optional).
        synthetic: SyntheticTrace,
    },
}

fn synthetic_seed() -> u64 {
    1
}
fn synthetic_frames() -> u32 {
    180_000
}
fn synthetic_frame_interval() -> Dur {
    Dur::from_ms(40)
}
fn synthetic_mean_rate() -> Rate {
    Rate(769_000)
}

/// The synthetic trace generator's settings (`crate::vtr::synthetic`).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SyntheticTrace {
    /// Generator seed (the trace is the same for every run seed; default 1).
    #[serde(default = "synthetic_seed")]
    pub seed: u64,
    /// Frames in the trace (default 180000: two hours at 25 frames/s, the
    /// length of the paper's two concatenated 60-minute traces).
    #[serde(default = "synthetic_frames")]
    pub frames: u32,
    /// Time between frames (default "40ms": 25 frames/s).
    #[serde(default = "synthetic_frame_interval", with = "units::dur")]
    #[schemars(with = "crate::schema::DurText")]
    pub frame_interval: Dur,
    /// Mean rate of the frame bytes over the whole trace (default "769kbps", [Zhang07 §2.3.3]).
    #[serde(default = "synthetic_mean_rate", with = "units::rate")]
    #[schemars(with = "crate::schema::RateText")]
    pub mean_rate: Rate,
}

impl Default for SyntheticTrace {
    fn default() -> Self {
        SyntheticTrace {
            seed: synthetic_seed(),
            frames: synthetic_frames(),
            frame_interval: synthetic_frame_interval(),
            mean_rate: synthetic_mean_rate(),
        }
    }
}

/// Packet payload size: fixed (`"1000B"`) or fixed plus an exponential offset.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(untagged)]
pub enum SizeSpec {
    Fixed(
        #[serde(with = "units::bytes")]
        #[schemars(with = "crate::schema::BytesText")]
        Bytes,
    ),
    Random(RandomSize),
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RandomSize {
    /// Fixed part of the payload, >= 1 byte.
    #[serde(with = "units::bytes")]
    #[schemars(with = "crate::schema::BytesText")]
    pub base: Bytes,
    /// Mean of the exponential offset added to `base` (rounded to whole bytes).
    #[serde(with = "units::bytes")]
    #[schemars(with = "crate::schema::BytesText")]
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

/// How a group's flows take their sources among the matches of `src` (`src_choice =
/// "round_robin"` or `"random"`).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SrcChoice {
    /// Flow `i` comes from the `(i mod n)`-th match: the sources in turn.
    #[default]
    RoundRobin,
    /// Each flow's source is a uniform draw over the matches, from the group's own
    /// source stream (deterministic per seed): several groups with the same call rate
    /// do not step through the sources together ([Zhang07]'s calls spread over the
    /// ingresses, a codec per call).
    Random,
}

impl SrcChoice {
    pub fn is_round_robin(&self) -> bool {
        *self == SrcChoice::RoundRobin
    }
}

/// Host send-time jitter (`send_jitter = { dist = "uniform", max = "10ms" }`): each packet
/// after a flow's first leaves later than its ideal time by an independent draw.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "dist", rename_all = "snake_case", deny_unknown_fields)]
pub enum SendJitter {
    /// Uniform lateness in [0, `max`]: a sender whose timer fires on the next tick of a clock
    /// of period `max` (FreeBSD 2.2.2: HZ = 100, a 10 ms tick), the phase of its schedule
    /// against the tick being independent from packet to packet.
    Uniform {
        /// Largest lateness, > 0 and at most the flow's packet spacing (so packets keep their order).
        #[serde(with = "units::dur")]
        #[schemars(with = "crate::schema::DurText")]
        max: Dur,
    },
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
        #[schemars(with = "crate::schema::DurText")]
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
        #[schemars(with = "crate::schema::DurText")]
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
        #[schemars(with = "crate::schema::DurText")]
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
    /// Source node, or a pattern `"src*"` whose matches the flows take in turn
    /// (or at random: `src_choice`).
    pub src: String,
    /// How flows take their sources among the matches of `src`: `round_robin` (default,
    /// flow `i` from the `(i mod n)`-th) or `random` (a uniform draw per flow).
    #[serde(default, skip_serializing_if = "SrcChoice::is_round_robin")]
    pub src_choice: SrcChoice,
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
    #[schemars(with = "crate::schema::BytesText")]
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
    #[schemars(with = "crate::schema::DurText")]
    pub start: Dur,
    /// End of the group's flows (default: the end of the run).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "units::dur::opt")]
    #[schemars(with = "Option<crate::schema::DurText>")]
    pub stop: Option<Dur>,
    /// Each flow's start is delayed by a uniform random amount in [0, start_jitter].
    #[serde(default, with = "units::dur")]
    #[schemars(with = "crate::schema::DurText")]
    pub start_jitter: Dur,
    /// The group's flows are already admitted ([Zhang07 §4]: flows rerouted onto this path
    /// by a failure were admitted on another): each starts at once, without asking its
    /// domain's ingress (PCN). The scenario's own admission control still decides.
    #[serde(default, skip_serializing_if = "is_false")]
    pub admitted: bool,
    /// Packet-time randomization [Zhang07 §2.3.4]: each packet of a `cbr` or `on_off`
    /// flow leaves later than its ideal time by a uniform random amount in
    /// [0, randomize × the packet spacing); 0 (default) to below 1 (the seed: 0.0001-0.1).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub randomize: f64,
    /// How an `on_off` flow packetizes its ON periods: `ceil` (default; a packet at each ON
    /// start and every interval while before its end, ⌈L / interval⌉ packets) or `nominal`
    /// (the packet clock runs only while ON and keeps its phase across OFF periods, so the
    /// mean rate is exactly peak × on / (on + off)). See `docs/scenarios.md`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packetization: Option<Packetization>,
    /// Host timing jitter of a `cbr` or `on_off` flow's send times ([MACE98]'s FreeBSD
    /// senders: a timer fires on the next 10 ms clock tick): each packet after the first
    /// leaves later than its ideal time by a draw from this distribution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_jitter: Option<SendJitter>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<Arrivals>,
    /// Rate each flow asks admission control to reserve (default: the model's mean wire rate).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "units::rate::opt")]
    #[schemars(with = "Option<crate::schema::RateText>")]
    pub reserve: Option<Rate>,
    /// Per-flow token-bucket shaper at the network entry, between the source
    /// and its first link [Tarasiuk05 §2]; see `docs/mechanisms/shaper.md`.
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
    #[schemars(with = "Option<crate::schema::RateText>")]
    pub rate: Option<Rate>,
    /// Bucket depth: packets of the group's wire size ("1pkt", the default; fixed sizes only) or bytes ("1500B").
    #[serde(default = "one_packet", with = "units::limit")]
    #[schemars(with = "crate::schema::LimitText")]
    pub depth: Limit,
    /// The shaper's own buffer ("100pkts", "64kB" or both); absent: it only delays, never drops.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "units::limit::opt")]
    #[schemars(with = "Option<crate::schema::LimitText>")]
    pub buffer: Option<Limit>,
}
