//! Errors of the simulator: configuration (with file and line), input
//! files, and run-time failures. The Python front maps each kind to its
//! own exception (`qoslab.ConfigError`, `OSError`, `qoslab.SimulationError`).

use std::fmt;

/// One problem found in a scenario: where, which field, what is wrong,
/// what is allowed. Displays as `file:line: field.path: problem; allowed: ...`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file (or `<string>`), as given.
    pub origin: String,
    /// 1-based line, if known.
    pub line: Option<usize>,
    /// Dotted field path, e.g. `topology.bottleneck.queue.max_th`.
    pub path: String,
    /// What is wrong, including what is allowed.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{}: ", self.origin, l)?,
            None => write!(f, "{}: ", self.origin)?,
        }
        if !self.path.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        write!(f, "{}", self.message)
    }
}

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
