//! The simulator's adapters between the scenario and the core mechanisms,
//! one file per mechanism: what a link direction's port is made of.
//!
//! - this file: [`build_port`] (a direction's scenario description to a
//!   core [`Port`]: its stages, its queue discipline, its device queue) and
//!   the events-table rows of mechanism events ([`event_row`], [`RowSink`]);
//! - [`mace`]: the link `mace` table to a [`qoslab_core::mace::MaceStage`]
//!   and its device policy.
//!
//! Queue disciplines are built by `crate::qbuild::build_queue` (the one
//! place a `QueueSpec` becomes a core `Queue`, also used by validation).

pub mod mace;

use crate::error::Diagnostic;
use crate::metrics::EventRow;
use crate::qbuild::build_queue;
use crate::scenario::{LinkSpec, QueueSpec};
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

/// Builds the port of one link direction: queue discipline `qspec` (at
/// scenario path `qpath`) on link `link` (at `link_path`), with MACE's
/// stage and device queue when the queue is a mace queue. Descriptor files
/// are looked up in `base_dir`; `origin` names the scenario in messages.
pub fn build_port(
    qspec: &QueueSpec,
    qpath: &str,
    link: &LinkSpec,
    link_path: &str,
    base_dir: &Path,
    origin: &str,
) -> Result<Port, Vec<Diagnostic>> {
    let queue = build_queue(qspec, link.rate)
        .map_err(|e| vec![diag(origin, format!("{qpath}.{}", e.field_path), e.error.to_string())])?;
    let mut port = Port::new(queue);
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
