//! qoslab-sim: a deterministic discrete-event simulator driving the
//! qoslab-core mechanisms with a virtual clock.
//!
//! Entry points: [`run::run`] (a [`qoslab_scenario::ValidScenario`] and a
//! seed to a [`output::RunOutput`]). Scenarios are loaded, validated and
//! described (JSON Schema) by the `qoslab-scenario` crate
//! ([`qoslab_scenario::load`], [`qoslab_scenario::schema::json_schema`]);
//! mechanisms are built from their specs by its registry.

pub mod engine;
pub mod error;
pub mod fluid;
pub mod mechanisms;
pub mod metrics;
pub mod net;
pub mod output;
pub mod run;
pub mod trace;
pub mod traffic;

pub use error::{Diagnostic, SimError};
pub use output::{Column, RunOutput, Strings, Table};

/// How to run a scenario.
pub struct RunOptions<'a> {
    /// The run's seed: every random choice derives from it.
    pub seed: u64,
    /// Directory that relative paths in the scenario (replay files) are resolved against.
    pub base_dir: std::path::PathBuf,
    /// Called now and then with the fraction of simulated time done; return
    /// `false` to stop the run (it then fails with `SimError::Interrupted`).
    pub progress: Option<&'a mut dyn FnMut(f64) -> bool>,
}
