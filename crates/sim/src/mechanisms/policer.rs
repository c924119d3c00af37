//! A `stages` entry `{ type = "policer", rate, depth, action }` to a core
//! [`Policer`] (see `qoslab_core::policer` and `docs/mechanisms/policer.md`).

use super::StageBuildError;
use crate::scenario::{PolicerActionSpec, StageSpec};
use qoslab_core::pipeline::Stage;
use qoslab_core::policer::{Policer, PolicerAction, PolicerConfig};
use qoslab_core::units::Time;

/// Builds the policer of `spec` (a `StageSpec::Policer`) with a full bucket at `now`.
pub fn build(spec: &StageSpec, now: Time) -> Result<Box<dyn Stage>, StageBuildError> {
    let StageSpec::Policer { rate, depth, action } = spec;
    let action = match action {
        PolicerActionSpec::Drop => PolicerAction::Drop,
        PolicerActionSpec::Mark => PolicerAction::Mark,
    };
    let p = Policer::new(PolicerConfig { rate: *rate, depth: *depth, action }, now)
        .map_err(|error| StageBuildError { field_path: error.field.to_string(), error })?;
    Ok(Box::new(p))
}
