//! Port stages in the registry: a link's `stages` entry to a core
//! [`Stage`], one arm per [`StageSpec`] variant, used by the simulator and
//! by validation alike.
//!
//! - `{ type = "policer", rate, depth, action }`: a core [`Policer`] (see
//!   `qoslab_core::policer` and `docs/mechanisms/policer.md`).

use crate::model::{PolicerActionSpec, StageSpec};
use qoslab_core::error::ConfigError;
use qoslab_core::pipeline::Stage;
use qoslab_core::policer::{Policer, PolicerAction, PolicerConfig};
use qoslab_core::units::Time;

/// A stage the core refused: the field below the stage's table and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageBuildError {
    pub field_path: String,
    pub error: ConfigError,
}

/// Builds one stage from its scenario description, starting at `now`.
pub fn build_stage(spec: &StageSpec, now: Time) -> Result<Box<dyn Stage>, StageBuildError> {
    match spec {
        StageSpec::Policer { .. } => policer(spec, now),
    }
}

/// Builds the policer of `spec` (a `StageSpec::Policer`) with a full bucket at `now`.
fn policer(spec: &StageSpec, now: Time) -> Result<Box<dyn Stage>, StageBuildError> {
    let StageSpec::Policer { rate, depth, action } = spec;
    let action = match action {
        PolicerActionSpec::Drop => PolicerAction::Drop,
        PolicerActionSpec::Mark => PolicerAction::Mark,
    };
    let p = Policer::new(PolicerConfig { rate: *rate, depth: *depth, action }, now)
        .map_err(|error| StageBuildError { field_path: error.field.to_string(), error })?;
    Ok(Box::new(p))
}
