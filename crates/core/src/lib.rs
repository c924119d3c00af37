//! qoslab-core: router QoS mechanisms as clock-free state machines.
//!
//! No I/O, no clock, no global state. Every call takes `now`; randomness
//! comes only through an [`rng::Rng`] passed in; a mechanism that needs
//! periodic work reports `next_deadline()` and does it in `on_tick(now)`.
//! The simulator (virtual clock) and the router (wall clock) drive the same
//! code.
//!
//! - [`units`]: `Time`, `Dur`, `Rate`, `Bytes`, parsing of `"25Mbps"` etc.
//! - [`packet`]: packet metadata, flow interning.
//! - [`qdisc`]: the queue-discipline interface and the counting wrapper.
//! - [`classful`]: classifier + scheduler over child queues (strict priority).
//! - [`fifo`], [`red`]: drop-tail FIFO; RED (algorithm in [`red::algo`]).
//! - [`policer`]: a token-bucket policer stage (drop or PCN-mark what exceeds).
//! - [`token_bucket`]: the one token bucket (shapers, meters, PCN, sources).
//! - [`shaper`]: per-connection token-bucket shaper and the shaper bank (seed 002).
//! - [`pipeline`]: port pipelines (stages + qdisc + device queue) and domain edge behaviours.
//! - [`admission`]: the admission-control interface and `AdmitAll`.
//! - [`pcn`]: PCN (seed 004): virtual-queue admission meter, token-bucket
//!   termination meter, and the ingress/egress edge behaviours (CLE, sustainable rate).
//! - [`mace`]: MACE (seed 000): classifier, recognition, shared-buffer
//!   priority queue, device dispatch, measurement, estimator, MBAC/SSAC.
//! - [`cbt`]: CBT, Dynamic-CBT and ChIPS (seed 001) over RED's algorithm.
//! - [`cac`]: CAC for shaped TCP (ρ, N_max, Erlang-B, rate schemes #1–#3; seed 002).
//! - [`edge`]: edge-router QoS (seed 003): rule-database classifier with a
//!   fast-path flow cache, SCFQ scheduler, buffer management for rate guarantees.
//! - [`tcp`]: TCP Reno / NewReno sender and sink (seed 001 §5, RFC 5681 / 6298 / 6582).
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
pub mod units;
pub mod vecmap;

pub use error::ConfigError;
pub use packet::{ClassTag, Ecn, FlowId, FlowKey, FlowTable, Packet, PcnMark};
pub use qdisc::{Backlog, Dequeue, DropReason, Dropped, Limit, MarkReason, Qdisc, Queue, QueueStats, Verdict};
pub use rng::Rng;
pub use units::{Bytes, Dur, Rate, Time};
