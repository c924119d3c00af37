//! Traffic sources as clock-free state machines: what a flow sends and
//! when, given its start and its RNG stream. The simulator (virtual
//! clock) and the testbed's generator (`crates/traffic`, CLOCK_MONOTONIC)
//! run the same sources, so both send the same pattern.
//!
//! - [`cbr`]: constant bit rate on an exact grid ([`cbr::Period`]).
//! - [`poisson`]: exponential gaps.
//! - [`on_off`]: CBR during exponential or Pareto ON periods.
//! - [`mm_app`]: MM_APP's media-scaling source and its receiver.
//! - [`vtr`]: a video frame trace played from a random frame.
//! - [`Source`], [`ModelPlan`], [`SizeModel`]: a flow's source state, its
//!   model with rates as periods, its packet size law; the per-flow RNG
//!   streams ([`flow_stream`]) and the send-time shifts ([`emission_time`]).

pub mod cbr;
pub mod mm_app;
pub mod on_off;
pub mod poisson;
mod source;
pub mod vtr;

pub use on_off::{Packetization, PeriodDist};
pub use source::*;
