//! Configuration errors of the mechanisms: which mechanism, which field,
//! the value given and what is allowed.

use std::fmt;

/// A mechanism's parameter that failed validation.
///
/// Displays as `red.max_th (3) must exceed min_th (5)`: the mechanism and
/// field first, so the driver can prefix the file and line it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub mechanism: &'static str,
    pub field: &'static str,
    pub message: String,
}

impl ConfigError {
    pub fn new(mechanism: &'static str, field: &'static str, message: impl Into<String>) -> ConfigError {
        ConfigError { mechanism, field, message: message.into() }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{} {}", self.mechanism, self.field, self.message)
    }
}

impl std::error::Error for ConfigError {}
