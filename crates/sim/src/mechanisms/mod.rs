//! The simulator's adapters between the scenario and the core mechanisms,
//! one file per mechanism: what a link direction's port is made of.
//!
//! - this file: [`build_port`] (a direction's scenario description to a
//!   core [`Port`]: its stages, its queue discipline, its device queue) and
//!   the events-table rows of mechanism events ([`event_row`], [`RowSink`]);
//! - [`mace`]: the link `mace` table to a [`qoslab_core::mace::MaceStage`]
//!   and its device policy;
//! - [`policer`]: a `stages` entry `{ type = "policer" }` to a core
//!   [`qoslab_core::policer::Policer`].
//!
//! Stages are built by [`build_stage`] (one arm per `StageSpec` variant),
//! used by the simulator and by validation alike.
//!
//! Queue disciplines are built by `crate::qbuild::build_queue` (the one
//! place a `QueueSpec` becomes a core `Queue`, also used by validation).

pub mod mace;
pub mod policer;

use crate::error::Diagnostic;
use crate::metrics::EventRow;
use crate::qbuild::build_queue;
use crate::scenario::{LinkSpec, QueueSpec, StageSpec};
use qoslab_core::error::ConfigError;
use qoslab_core::pipeline::Stage;
use qoslab_core::pipeline::{EventSink, MechEvent, Port};
use qoslab_core::units::Time;
use std::fmt::Write as _;
use std::path::Path;

/// The events-table row of a mechanism event at port `link`: the shared
/// columns as they are, the mechanism's fields as `link=<port> name=value ...`
/// in `detail`.
pub fn event_row(link: &str, ev: &MechEvent) -> EventRow {
    let mut detail = format!("link={link}");
    for (name, value) in &ev.fields {
        let _ = write!(detail, " {name}={value}");
    }
    EventRow {
        t: ev.at,
        kind: ev.kind.as_str(),
        flow: ev.flow,
        rule: ev.rule.to_string(),
        estimate: ev.estimate,
        threshold: ev.threshold,
        detail,
    }
}

/// An [`EventSink`] that writes events-table rows for port `link`.
pub struct RowSink<'a> {
    pub link: &'a str,
    pub rows: &'a mut Vec<EventRow>,
}

impl EventSink for RowSink<'_> {
    fn emit(&mut self, ev: MechEvent) {
        self.rows.push(event_row(self.link, &ev));
    }
}

fn diag(origin: &str, path: String, message: String) -> Diagnostic {
    Diagnostic { origin: origin.to_string(), line: None, path, message }
}

/// A stage the core refused: the field below the stage's table and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageBuildError {
    pub field_path: String,
    pub error: ConfigError,
}

/// Builds one stage from its scenario description, starting at `now`.
pub fn build_stage(spec: &StageSpec, now: Time) -> Result<Box<dyn Stage>, StageBuildError> {
    match spec {
        StageSpec::Policer { .. } => policer::build(spec, now),
    }
}

/// One direction of a link, as [`build_port`] builds it.
pub struct DirSpec<'a> {
    /// The queue discipline and its scenario path (`topology.links.0.queue`).
    pub queue: &'a QueueSpec,
    pub queue_path: &'a str,
    /// The stages before it (`stages` or `reverse_stages`) and their scenario path.
    pub stages: &'a [StageSpec],
    pub stages_path: String,
}

/// Builds the port of one link direction of `link` (at `link_path`): its
/// stages in order, MACE's stage when its queue is a mace queue, the queue
/// discipline, and MACE's device queue. Descriptor files are looked up in
/// `base_dir`; `origin` names the scenario in messages.
pub fn build_port(
    dir: &DirSpec<'_>,
    link: &LinkSpec,
    link_path: &str,
    base_dir: &Path,
    origin: &str,
) -> Result<Port, Vec<Diagnostic>> {
    let (qspec, qpath) = (dir.queue, dir.queue_path);
    let queue = build_queue(qspec, link.rate)
        .map_err(|e| vec![diag(origin, format!("{qpath}.{}", e.field_path), e.error.to_string())])?;
    let mut port = Port::new(queue);
    for (i, spec) in dir.stages.iter().enumerate() {
        let stage = build_stage(spec, Time::ZERO).map_err(|e| {
            vec![diag(origin, format!("{}.{i}.{}", dir.stages_path, e.field_path), e.error.to_string())]
        })?;
        port = port.with_stage(stage);
    }
    if let (QueueSpec::Mace { .. }, Some(m)) = (qspec, &link.mace) {
        let parts = mace::from_spec(m, Time::ZERO, Some(base_dir)).map_err(|es| {
            es.into_iter()
                .map(|e| match e.file {
                    Some(file) => Diagnostic { origin: file, line: e.line, path: e.field_path, message: e.message },
                    None => diag(origin, format!("{link_path}.mace.{}", e.field_path), e.message),
                })
                .collect::<Vec<_>>()
        })?;
        port = port.with_stage(parts.stage).with_device(Box::new(parts.device));
    }
    Ok(port)
}
