//! Errors of a scenario: every problem found, each with file, line, field
//! and what is allowed; or a scenario file that cannot be read. The
//! simulator wraps these in its own error (`qoslab_sim::SimError`), whose
//! Python mapping turns them into `qoslab.ConfigError` and `OSError`.

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

/// Why a scenario could not be loaded.
#[derive(Debug)]
pub enum ScenarioError {
    /// The scenario is invalid: every problem found.
    Config(Vec<Diagnostic>),
    /// The scenario file could not be read.
    Io { path: String, message: String },
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScenarioError::Config(ds) => {
                for (i, d) in ds.iter().enumerate() {
                    if i > 0 {
                        writeln!(f)?;
                    }
                    write!(f, "{d}")?;
                }
                Ok(())
            }
            ScenarioError::Io { path, message } => write!(f, "{path}: {message}"),
        }
    }
}

impl std::error::Error for ScenarioError {}
