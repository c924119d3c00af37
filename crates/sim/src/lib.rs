//! qoslab-sim: a deterministic discrete-event simulator driving the
//! qoslab-core mechanisms with a virtual clock.
//!
//! Entry points: [`scenario::load`] (TOML text or file to a validated
//! [`scenario::Scenario`]), [`run::run`] (a scenario and a seed to a
//! [`output::RunOutput`]), [`scenario::schema::json_schema`].

pub mod error;
pub mod output;
pub mod qbuild;
pub mod scenario;

pub use error::{Diagnostic, SimError};
pub use output::{Column, RunOutput, Table};
