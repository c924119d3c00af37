//! The registry of mechanisms: each scenario spec to its core type, and
//! the names of every kind of mechanism a scenario may choose.
//!
//! - [`queue`]: a [`QueueSpec`](crate::QueueSpec) to a core
//!   [`Queue`](qoslab_core::Queue) ([`build_queue`]);
//! - [`mace`]: a link's `mace` table to MACE's core parts (its port stage
//!   and device queue);
//! - [`stage`]: a link's `stages` entry to a core port stage ([`build_stage`]);
//! - [`port`]: a link direction to its core [`Port`](qoslab_core::pipeline::Port)
//!   ([`build_port`]: stages, queue, MACE's parts), for the simulator and the router;
//! - [`pcn`]: the `[pcn]` table to the core's PCN edge configuration;
//! - [`edge`]: the `scfq`, `buffer_managed` and `edge` queues of [Guerin99] and their streams;
//! - [`error`]: [`BuildError`], what every builder here returns when it
//!   refuses a spec (the field below the mechanism's table and the message);
//! - [`names`]: the `type` / `preset` / `model` / `process` names, derived
//!   from the model's serde enums ([`QUEUE_TYPES`], ...).
//!
//! The validation builds every mechanism through this registry to check
//! it (a scenario is refused for exactly the reasons the core would
//! refuse it, with the scenario's field names), and the simulator builds
//! through it to run.

pub mod cac;
pub mod edge;
pub mod error;
pub mod mace;
pub mod names;
pub mod pcn;
pub mod port;
pub mod queue;
pub mod stage;

pub use edge::{streams_of, StreamRef};
pub use error::BuildError;
pub use names::*;
pub use port::{build_port, PortSpec};
pub use queue::build_queue;
pub use stage::{build_stage, StageContext};
