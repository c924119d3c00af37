//! The registry's one error: a mechanism it could not build.

use qoslab_core::error::ConfigError;
use std::fmt;

/// A mechanism the registry could not build: the path of the offending
/// field below the mechanism's table (a queue's `max_th` or
/// `bands.1.limit`, a stage's `rules.0.dst`, the `mace` table's
/// `admission.v`, `[pcn]`'s `edges.1`) and the message shown there.
///
/// When `file` is set the problem is inside that file (a MACE descriptor
/// file, as looked up): `field_path` is then the path inside the file
/// (`port[1].rate`) and `line` its 1-based line there, if known.
///
/// A refusal by the core keeps the core's text ([`BuildError::core`]:
/// `red.max_th (3) must be above min_th (5)`); the caller puts the path of
/// the mechanism's table in front of `field_path`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildError {
    pub field_path: String,
    pub message: String,
    /// The file the problem is in, if not the scenario (or router configuration).
    pub file: Option<String>,
    /// 1-based line in `file`, if known.
    pub line: Option<usize>,
}

impl BuildError {
    /// A problem at `field_path` of the scenario, with `message`.
    pub fn new(field_path: impl Into<String>, message: impl Into<String>) -> BuildError {
        BuildError { field_path: field_path.into(), message: message.into(), file: None, line: None }
    }

    /// The core refused a setting: at `field_path`, with the core's text.
    pub fn core(field_path: impl Into<String>, error: &ConfigError) -> BuildError {
        BuildError::new(field_path, error.to_string())
    }

    /// The same problem seen from the table that holds this one: `prefix.field_path`.
    pub fn under(mut self, prefix: impl fmt::Display) -> BuildError {
        self.field_path = format!("{prefix}.{}", self.field_path);
        self
    }
}

/// The core's field name is the path below the mechanism's table.
impl From<ConfigError> for BuildError {
    fn from(e: ConfigError) -> BuildError {
        BuildError::core(e.field, &e)
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, self.line) {
            (Some(file), Some(line)) => write!(f, "{file}:{line}: {} {}", self.field_path, self.message),
            (Some(file), None) => write!(f, "{file}: {} {}", self.field_path, self.message),
            (None, _) => write!(f, "{} {}", self.field_path, self.message),
        }
    }
}

impl std::error::Error for BuildError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_core_refusal_keeps_the_cores_text_at_its_field_and_nests_under_its_table() {
        let e = BuildError::from(ConfigError::new("red", "max_th", "(3) must be above min_th (5)"));
        assert_eq!((e.field_path.as_str(), e.message.as_str()), ("max_th", "red.max_th (3) must be above min_th (5)"));
        let e = e.under("bands.1");
        assert_eq!(e.field_path, "bands.1.max_th");
        assert_eq!(e.to_string(), "bands.1.max_th red.max_th (3) must be above min_th (5)");
    }
}
