//! qoslab-core: router QoS mechanisms as clock-free state machines.
//!
//! No I/O, no clock, no global state. Every call takes `now`; randomness
//! comes only through an [`rng::Rng`] passed in; a mechanism that needs
//! periodic work reports `next_deadline()` and does it in `on_tick(now)`.
//! The simulator (virtual clock) and the router (wall clock) drive the same
//! code.
//!
//! Filed by kind, as Linux `net/sched` is; each kind's folder opens with
//! its interface:
//!
//! - [`units`]: `Time`, `Dur`, `Rate`, `Bytes`, parsing of `"25Mbps"` etc.
//! - [`packet`]: packet metadata, flow interning.
//! - [`token_bucket`]: the one token bucket (shapers, meters, PCN, sources).
//! - [`qdisc`]: queue disciplines. The interface and the counting wrapper;
//!   [`qdisc::fifo`]; [`qdisc::classful`] (classifier + scheduler over child
//!   queues, strict priority); [`qdisc::red`] (RED's algorithm and its
//!   arrival stage); [`qdisc::cbt`] (CBT, Dynamic-CBT and ChIPS [Claypool00]
//!   over RED); [`qdisc::scfq`] and [`qdisc::buffer`] (SCFQ and buffer
//!   management for rate guarantees [Guerin99]); [`qdisc::mace`] (MACE's
//!   shared-buffer priority queue [MACE98]); [`qdisc::shaper`] (the
//!   per-connection shaper and shaper bank [Tarasiuk05]).
//! - [`stage`]: port stages before the queue. The interface and the device
//!   policy; [`stage::policer`]; [`stage::pcn`] (PCN [Zhang07] admission and
//!   termination meters, the marking rules); [`stage::mace`] (MACE's
//!   classifier, recognition, measurement, device dispatch);
//!   [`stage::edge_classifier`] (rule database and fast-path flow cache [Guerin99]).
//! - [`admission`]: admission control. The interface and `AdmitAll`;
//!   [`admission::mace`] (MBAC, SSAC, the estimator [MACE98]);
//!   [`admission::cac`] (CAC for shaped TCP: ρ, N_max, Erlang-B, rate schemes #1–#3 [Tarasiuk05]).
//! - [`edge`]: domain edge behaviours. The interface; [`edge::pcn`] (PCN
//!   ingress and egress: CLE, sustainable rate, termination [Zhang07]).
//! - [`pipeline`]: a port (stages + qdisc + device queue) and the typed events.
//! - [`traffic`]: traffic models' emission rules, for the simulator and the real generator.
//! - [`tcp`]: TCP Reno / NewReno sender and sink ([Claypool00 §5], RFC 5681 / 6298 / 6582).
//! - [`stats`]: Jain's index, streaming moments, percentiles, histograms.

pub mod admission;
pub mod edge;
pub mod error;
pub mod packet;
pub mod pipeline;
pub mod qdisc;
pub mod rng;
pub mod stage;
pub mod stats;
pub mod tcp;
pub mod token_bucket;
pub mod traffic;
pub mod units;
pub mod vecmap;

pub use error::ConfigError;
pub use packet::{ClassTag, Ecn, FlowId, FlowKey, FlowTable, Packet, PcnMark};
pub use qdisc::{Backlog, Dequeue, DropReason, Dropped, Limit, MarkReason, Qdisc, Queue, QueueStats, Verdict};
pub use rng::Rng;
pub use units::{Bytes, Dur, Rate, Time};
