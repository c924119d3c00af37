//! The simulator's adapters between the scenario and the core mechanisms,
//! one file per mechanism: what a link direction's port is made of.
//!
//! - this file: [`build_port`] (a direction's scenario description to a
//!   core [`Port`]: its stages, its queue discipline, its device queue) and
//!   the events-table rows of mechanism events ([`event_row`], [`RowSink`]);
//!
//! Each part comes from the registry of `qoslab-scenario`, the one place a
//! spec becomes a core mechanism (also used by validation): queue
//! disciplines ([`build_queue`]), stages ([`build_stage`]: one arm per
//! `StageSpec` variant) and MACE's stage and device policy
//! ([`mace::from_spec`]).

use crate::error::Diagnostic;
use crate::metrics::{EventRow, Events};
use qoslab_core::pipeline::{EventSink, MechEvent, Port};
use qoslab_core::units::Time;
use qoslab_scenario::registry::{build_queue, build_stage, mace, StageContext};
use qoslab_scenario::{LinkSpec, QueueSpec, StageSpec};
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
    pub rows: &'a mut Events,
}

impl EventSink for RowSink<'_> {
    fn emit(&mut self, ev: MechEvent) {
        self.rows.push(event_row(self.link, &ev));
    }
}

fn diag(origin: &str, path: String, message: String) -> Diagnostic {
    Diagnostic { origin: origin.to_string(), line: None, path, message }
}

/// One direction of a link, as [`build_port`] builds it.
pub struct DirSpec<'a> {
    /// The queue discipline and its scenario path (`topology.links.0.queue`).
    pub queue: &'a QueueSpec,
    pub queue_path: &'a str,
    /// The stages before it (`stages` or `reverse_stages`) and their scenario path.
    pub stages: &'a [StageSpec],
    pub stages_path: String,
    /// The network's nodes, in index order (classifier rules name them).
    pub nodes: &'a [(String, qoslab_scenario::NodeKind)],
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
        let ctx = StageContext { nodes: dir.nodes, queue: Some(qspec), link_rate: link.rate };
        let stage = build_stage(spec, Time::ZERO, &ctx).map_err(|e| {
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

#[cfg(test)]
mod tests {
    use super::*;
    use qoslab_core::units::{Bytes, Dur, Rate};
    use qoslab_scenario::{MaceAdmissionSpec, MaceBeDispatch, MacePortSide, MacePortSpec, MaceSpec};

    fn spec(admission: MaceAdmissionSpec) -> MaceSpec {
        MaceSpec {
            ports: Some(vec![MacePortSpec {
                port: 5004,
                side: MacePortSide::Dst,
                rate: Rate(77_200),
                depth: Bytes(386),
                threshold: 100,
            }]),
            descriptors: None,
            admission,
            allocation: Rate(3_900_000),
            stale_timeout: Dur::from_secs(30),
            device_queue: 1,
            be_dispatch: MaceBeDispatch::WhenIdle,
            table_capacity: 1024,
        }
    }
    fn mbac(v: f64, window: u32) -> MaceAdmissionSpec {
        MaceAdmissionSpec::Mbac { v, sample: Dur::from_secs(5), window, restart_window: true }
    }

    #[test]
    fn mace_sample_rows_carry_the_rate_and_the_allocation() {
        let mut m = mace::from_spec(&spec(mbac(0.95, 20)), Time::ZERO, None).unwrap();
        assert_eq!(m.stage.next_deadline(), Some(Time(Dur::from_secs(5).0)));
        let mut evs = Vec::new();
        m.stage.on_timer(Time(Dur::from_secs(5).0), &mut evs);
        let row = event_row("r1->sink0", &evs[0]);
        assert_eq!((row.kind, row.estimate, row.threshold), ("sample", 0.0, 3_900_000.0));
        assert_eq!(
            row.detail,
            "link=r1->sink0 bits=0 cl_arrived=0 cl_dropped=0 be_arrived=0 be_dropped=0 nu_hat_bps=0 v_mu_bps=3705000"
        );
        let mut m = mace::from_spec(&spec(MaceAdmissionSpec::Ssac), Time::ZERO, None).unwrap();
        let mut evs = Vec::new();
        m.stage.on_timer(Time(Dur::from_secs(5).0), &mut evs);
        assert!(event_row("l", &evs[0]).detail.ends_with("be_dropped=0 reserved_bps=0"));
    }
}
