//! A link direction's port, assembled in one place for the simulator (each
//! link direction of a scenario) and the router (each direction of its
//! `[link]`): the direction's stages in order, MACE's stage when its queue
//! is a `mace` queue, the queue discipline, and MACE's device queue ("BE
//! only when the device is idle"), each part from this registry.
//!
//! A `mace` queue needs the link's `mace` table: without one the port is
//! refused (validation refuses such a scenario, and the router such a
//! configuration, with this message).

use super::{build_queue, build_stage, mace, StageContext};
use crate::error::Diagnostic;
use crate::{LinkSpec, NodeKind, QueueSpec, StageSpec};
use qoslab_core::pipeline::Port;
use qoslab_core::units::Time;
use std::path::Path;

/// One direction of a link, as [`build_port`] builds it.
#[derive(Clone, Copy, Debug)]
pub struct PortSpec<'a> {
    pub link: &'a LinkSpec,
    /// `false`: a -> b (`queue`, `stages`); `true`: b -> a (`reverse_queue`, `reverse_stages`).
    pub reverse: bool,
    /// Where the link's table is (`topology.links.0`, `topology.access[src0]`, the router's `link`).
    pub path: &'a str,
    /// The queue of a direction that names none, and where it is given
    /// (`None`: reported at the direction's own `queue` field).
    pub default_queue: &'a QueueSpec,
    pub default_queue_path: Option<&'a str>,
    /// The network's nodes in index order (classifier rules name them; the router has none).
    pub nodes: &'a [(String, NodeKind)],
}

impl<'a> PortSpec<'a> {
    /// The direction's queue discipline and the path of its table.
    pub fn queue(&self) -> (&'a QueueSpec, String) {
        let (q, field) =
            if self.reverse { (&self.link.reverse_queue, "reverse_queue") } else { (&self.link.queue, "queue") };
        match (q, self.default_queue_path) {
            (Some(q), _) => (q, format!("{}.{field}", self.path)),
            (None, Some(p)) => (self.default_queue, p.to_string()),
            (None, None) => (self.default_queue, format!("{}.{field}", self.path)),
        }
    }
    /// The direction's stages and the path of their list.
    pub fn stages(&self) -> (&'a [StageSpec], String) {
        if self.reverse {
            (&self.link.reverse_stages, format!("{}.reverse_stages", self.path))
        } else {
            (&self.link.stages, format!("{}.stages", self.path))
        }
    }
}

/// Builds the port of one link direction at `now`. MACE descriptor files
/// are looked up in `base_dir`; `origin` names the scenario (or the router's
/// configuration) in the diagnostics, which carry no line: the caller knows
/// its text.
pub fn build_port(
    spec: &PortSpec<'_>,
    now: Time,
    base_dir: Option<&Path>,
    origin: &str,
) -> Result<Port, Vec<Diagnostic>> {
    let diag = |path: String, message: String| Diagnostic { origin: origin.to_string(), line: None, path, message };
    let (qspec, qpath) = spec.queue();
    let rate = spec.link.rate;
    let queue = build_queue(qspec, rate).map_err(|e| vec![diag(format!("{qpath}.{}", e.field_path), e.message)])?;
    let mut port = Port::new(queue);
    let (stages, spath) = spec.stages();
    let ctx = StageContext { nodes: spec.nodes, queue: Some(qspec), link_rate: rate };
    for (i, s) in stages.iter().enumerate() {
        let stage =
            build_stage(s, now, &ctx).map_err(|e| vec![diag(format!("{spath}.{i}.{}", e.field_path), e.message)])?;
        port = port.with_stage(stage);
    }
    if let QueueSpec::Mace { .. } = qspec {
        let Some(m) = &spec.link.mace else {
            return Err(vec![diag(
                format!("{qpath}.type"),
                format!(
                    "is mace but the link has no mace table; allowed: a mace table ({}.mace) with the CL port \
                     descriptors and the admission settings",
                    spec.path
                ),
            )]);
        };
        let parts = mace::from_spec(m, now, base_dir).map_err(|es| {
            es.into_iter()
                .map(|e| match e.file {
                    Some(file) => Diagnostic { origin: file, line: e.line, path: e.field_path, message: e.message },
                    None => diag(format!("{}.mace.{}", spec.path, e.field_path), e.message),
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

    fn link(extra: &str) -> LinkSpec {
        toml::from_str(&format!("rate = \"10Mbps\"\ndelay = \"1ms\"\n{extra}")).expect("a link spec")
    }
    fn fifo() -> QueueSpec {
        QueueSpec::Fifo { limit: qoslab_core::Limit::packets(10) }
    }
    fn spec<'a>(l: &'a LinkSpec, reverse: bool, dq: &'a QueueSpec) -> PortSpec<'a> {
        PortSpec {
            link: l,
            reverse,
            path: "topology.links.0",
            default_queue: dq,
            default_queue_path: Some("topology.default_queue"),
            nodes: &[],
        }
    }

    #[test]
    fn port_takes_the_directions_queue_or_the_default() {
        let l = link("queue = { type = \"red\", limit = \"60pkts\", min_th = 5, max_th = 15 }");
        let dq = fifo();
        let fwd = build_port(&spec(&l, false, &dq), Time::ZERO, None, "s.toml").unwrap();
        let rev = build_port(&spec(&l, true, &dq), Time::ZERO, None, "s.toml").unwrap();
        assert_eq!((fwd.queue().kind(), rev.queue().kind()), ("red", "fifo"));
        assert_eq!(spec(&l, true, &dq).queue().1, "topology.default_queue");
        let router = PortSpec { path: "link", default_queue_path: None, ..spec(&l, true, &dq) };
        assert_eq!(router.queue().1, "link.reverse_queue");
    }

    #[test]
    fn port_mace_queue_without_a_mace_table_is_refused_at_the_queues_type() {
        let l = link("queue = { type = \"mace\", buffer = \"60pkts\" }");
        let dq = fifo();
        let Err(e) = build_port(&spec(&l, false, &dq), Time::ZERO, None, "s.toml") else { panic!("refused") };
        assert_eq!(e[0].path, "topology.links.0.queue.type");
        assert!(e[0].message.starts_with("is mace but the link has no mace table"), "{}", e[0].message);
    }

    #[test]
    fn port_mace_queue_gets_the_mace_stage_and_the_device_queue() {
        let l = link(
            "queue = { type = \"mace\", buffer = \"60pkts\" }\n[mace]\nallocation = \"1Mbps\"\n\
             admission = { type = \"ssac\" }\nports = [{ port = 5004, rate = \"77.2kbps\", depth = \"386B\", threshold = 100 }]\n",
        );
        let dq = fifo();
        let port = build_port(&spec(&l, false, &dq), Time::ZERO, None, "s.toml").unwrap();
        assert!(port.wants_tx_done(), "MACE's device queue is there");
    }

    #[test]
    fn port_stage_error_names_the_stage_field() {
        let l = link("stages = [{ type = \"policer\", rate = \"0bps\", depth = \"1500B\" }]");
        let dq = fifo();
        let Err(e) = build_port(&spec(&l, false, &dq), Time::ZERO, None, "s.toml") else { panic!("refused") };
        assert!(e[0].path.starts_with("topology.links.0.stages.0."), "{}", e[0].path);
    }
}
