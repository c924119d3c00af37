//! Errors of the simulator: configuration (with file and line), input
//! files, and run-time failures. The Python front maps each kind to its
//! own exception (`qoslab.ConfigError`, `OSError`, `qoslab.SimulationError`).

use std::fmt;

pub use qoslab_scenario::Diagnostic;
use qoslab_scenario::ScenarioError;

#[derive(Debug)]
pub enum SimError {
    /// The scenario is invalid: every problem found.
    Config(Vec<Diagnostic>),
    /// A file the scenario refers to could not be read.
    Io { path: String, message: String },
    /// The run itself failed (a bug: reported, never a panic across the boundary).
    Runtime(String),
    /// The progress callback asked to stop (Ctrl-C).
    Interrupted,
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Config(ds) => {
                for (i, d) in ds.iter().enumerate() {
                    if i > 0 {
                        writeln!(f)?;
                    }
                    write!(f, "{d}")?;
                }
                Ok(())
            }
            SimError::Io { path, message } => write!(f, "{path}: {message}"),
            SimError::Runtime(m) => write!(f, "simulation failed: {m}"),
            SimError::Interrupted => write!(f, "interrupted"),
        }
    }
}

impl std::error::Error for SimError {}

/// A scenario that failed to load is a configuration or an input-file error.
impl From<ScenarioError> for SimError {
    fn from(e: ScenarioError) -> SimError {
        match e {
            ScenarioError::Config(ds) => SimError::Config(ds),
            ScenarioError::Io { path, message } => SimError::Io { path, message },
        }
    }
}
