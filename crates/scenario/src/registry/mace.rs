//! MACE at a link direction ([MACE98 §3], Fig. 3): the scenario's
//! `queue = { type = "mace" }` plus the link's `mace` table become a port
//! with a core [`MaceStage`] in front of the MACE queue and a
//! [`DeviceQueue`] as its device policy (see `qoslab_core::pipeline::Port`):
//!
//! ```text
//! packet enters the direction:  MaceStage: (class, decision) = classify_and_learn(now, key, flow, wire bytes)
//!                               pkt.class = class.tag()  → MaceQueue (the port's queue discipline)
//! device pull (the port's refill/dequeue):
//!     while the queue's head class c has device.admits(c): dequeue → device FIFO, device.on_pull(c)
//!     wire free and device FIFO not empty → transmit its head
//! end of transmission:          port.on_sent → device.on_sent(class of the packet sent)
//! at port.next_deadline():      port.on_tick(now) → MaceStage.on_tick → events
//! ```
//!
//! The device transmit queue ([`DeviceQueue`]) holds `device_queue`
//! packets, the one on the wire included. With 1 (the default) the link
//! asks the queue only when the wire is free, as every other link does;
//! with more, it pulls ahead while the wire is busy; under the default
//! `when_idle` BE rule (the paper's revised version, §3.1) a BE packet
//! enters only an idle device, and under `when_room` BE packets pile up
//! ahead of later CL arrivals (the paper's failed first version).
//!
//! This is MACE's registry entry: the link's `mace` table to the core
//! parts. The validation builds them to check a scenario (so it is refused
//! for exactly the reasons the core would refuse it); the simulator builds
//! them into the direction's port. The stage's events and their typed
//! fields are listed in `qoslab_core::stage::mace::MaceStage`; the simulator
//! writes them as events-table rows (`qoslab_sim::mechanisms::event_row`).
//!
//! Parameters (scenario `mace` table of a link, see [`MaceSpec`]):
//!
//! | field | unit | allowed | default |
//! |---|---|---|---|
//! | `ports` | descriptors, inline | ≥ 1, each port once per side, rate > 0, depth ≥ 1 B, threshold ≥ 1 | — |
//! | `descriptors` | descriptor file, relative to the scenario file | a readable `[[port]]` file with ≥ 1 port | — |
//! | `admission` | `mbac { v, sample, window, restart_window }` or `ssac` | v in (0, 1], sample > 0, window ≥ 1 | v 0.95, 5 s, 20, true |
//! | `allocation` | bit/s | > 0 | — |
//! | `stale_timeout` | time | > 0 | 30 s |
//! | `device_queue` | packets | ≥ 1 | 1 |
//! | `be_dispatch` | `when_room`, `when_idle` | | `when_idle` |
//! | `table_capacity` | flows | ≥ 1 | 1024 |
//!
//! Exactly one of `ports` and `descriptors` gives the descriptors. The
//! file is the core's flow-setup format ([`Descriptors::parse`],
//! `docs/mechanisms/mace_descriptors.md`); its problems are reported at
//! the file's own `file:line`, the field path inside it (`port[1].rate`).
//!
//! Interpretations: a descriptor file that lists no port is refused like
//! an empty inline `ports` (a MACE link without CL ports is a mistake in a
//! scenario, though the core accepts it); the measurement of an SSAC link still samples (its
//! rows show the CL load), though SSAC ignores the samples; the stale
//! timeout applies to the classifier and to the recognition table alike;
//! the classifier matches on addresses and ports (the paper's descriptor).

use super::BuildError;
use crate::model::{MaceAdmissionSpec, MaceBeDispatch, MacePortSide, MacePortSpec, MaceSpec};
use qoslab_core::admission::mace::{EstimatorConfig, Mbac, MbacConfig, Ssac, SsacConfig, WindowOnAdmit};
use qoslab_core::stage::mace::{
    BeDispatch, ClassifierConfig, Descriptors, DeviceQueue, DeviceQueueConfig, KeyFields, Mace, MaceConfig, MaceStage,
    MeasurementConfig, PortDescriptor, PortSide, RecognizerConfig,
};
use qoslab_core::stage::Stage;
use qoslab_core::units::Time;
use std::path::{Path, PathBuf};

const ONE_OF: &str = "exactly one of ports (inline descriptors) and descriptors (a descriptor file)";

/// The descriptors of a link's `mace` table: its inline `ports`, or the
/// file `descriptors` names, looked up in `base_dir` (the scenario file's
/// folder; the working directory when `None`).
pub fn spec_descriptors(spec: &MaceSpec, base_dir: Option<&Path>) -> Result<Descriptors, Vec<BuildError>> {
    match (&spec.ports, &spec.descriptors) {
        (Some(_), Some(_)) => {
            Err(vec![BuildError::new("descriptors", format!("is set together with ports; allowed: {ONE_OF}"))])
        }
        (None, None) => Err(vec![BuildError::new("ports", format!("is missing; allowed: {ONE_OF}"))]),
        (Some(ports), None) => inline_descriptors(ports).map_err(|e| vec![e]),
        (None, Some(file)) => file_descriptors(file, base_dir),
    }
}

fn file_descriptors(file: &str, base_dir: Option<&Path>) -> Result<Descriptors, Vec<BuildError>> {
    let full = match base_dir {
        Some(d) => d.join(file),
        None => PathBuf::from(file),
    };
    let shown = full.display().to_string();
    let text = match crate::files::text(&full) {
        Ok(t) if !file.is_empty() => t,
        Err(crate::files::TextError::NotText { line, message }) if !file.is_empty() => {
            return Err(vec![BuildError {
                field_path: "descriptors".to_string(),
                message: format!("{message}; allowed: a MACE descriptor file ([[port]] tables, TOML text)"),
                file: Some(shown),
                line: Some(line),
            }])
        }
        _ => {
            return Err(vec![BuildError::new(
                "descriptors",
                format!(
                    "no readable file {file:?} (looked for {shown}); allowed: a MACE descriptor file \
                     ([[port]] tables), relative to the scenario file"
                ),
            )])
        }
    };
    let d = Descriptors::parse(&shown, &text).map_err(|es| {
        es.0.into_iter()
            .map(|e| BuildError {
                field_path: e.path,
                message: format!("{}; allowed: {}", e.problem, e.allowed),
                file: Some(shown.clone()),
                line: e.line,
            })
            .collect::<Vec<_>>()
    })?;
    if d.is_empty() {
        return Err(vec![BuildError::new(
            "descriptors",
            format!("{file:?} lists no port; allowed: a descriptor file with at least one [[port]] table"),
        )]);
    }
    Ok(d)
}

fn inline_descriptors(ports: &[MacePortSpec]) -> Result<Descriptors, BuildError> {
    if ports.is_empty() {
        return Err(BuildError::new("ports", "is empty; allowed: at least one port descriptor"));
    }
    let ports = ports
        .iter()
        .map(|p| PortDescriptor {
            port: p.port,
            side: match p.side {
                MacePortSide::Dst => PortSide::Dst,
                MacePortSide::Src => PortSide::Src,
                MacePortSide::Any => PortSide::Any,
            },
            rate: p.rate,
            depth: p.depth,
            threshold: p.threshold,
        })
        .collect();
    Descriptors::new(ports).map_err(|e| {
        // "of entry i (port p): ..." names the entry; the path gets it too.
        let entry = e.message.strip_prefix("of entry ").and_then(|m| m.split(' ').next()).unwrap_or("");
        let path = if entry.chars().all(|c| c.is_ascii_digit()) && !entry.is_empty() {
            format!("ports.{entry}.{}", e.field)
        } else {
            format!("ports.{}", e.field)
        };
        BuildError::core(path, &e)
    })
}

/// MACE's parts at a port: the stage and the device policy.
#[derive(Debug)]
pub struct MaceParts {
    pub stage: Box<dyn Stage>,
    pub device: DeviceQueue,
}

/// Builds MACE's parts from a link's `mace` table, measurement starting
/// at `start`; a descriptor file is looked up in `base_dir` (see
/// [`spec_descriptors`]). Every problem found is returned.
pub fn from_spec(spec: &MaceSpec, start: Time, base_dir: Option<&Path>) -> Result<MaceParts, Vec<BuildError>> {
    let descriptors = spec_descriptors(spec, base_dir)?;
    with_descriptors(spec, descriptors, start).map_err(|e| vec![e])
}

/// Builds MACE's parts from a link's `mace` table with its descriptors resolved.
pub fn with_descriptors(spec: &MaceSpec, descriptors: Descriptors, start: Time) -> Result<MaceParts, BuildError> {
    if spec.stale_timeout.0 == 0 {
        return Err(BuildError::new("stale_timeout", "(0s) must be positive; allowed: a time such as \"30s\""));
    }
    if spec.table_capacity == 0 {
        return Err(BuildError::new("table_capacity", "(0) must be at least 1 flow"));
    }
    let capacity = spec.table_capacity as usize;
    let (interval, estimator) = match &spec.admission {
        MaceAdmissionSpec::Mbac { sample, window, restart_window, .. } => (
            *sample,
            EstimatorConfig {
                window: *window,
                on_admit: if *restart_window { WindowOnAdmit::Restart } else { WindowOnAdmit::Continue },
            },
        ),
        MaceAdmissionSpec::Ssac => (MeasurementConfig::default().interval, EstimatorConfig::default()),
    };
    let config = MaceConfig {
        classifier: ClassifierConfig { capacity, timeout: spec.stale_timeout, key: KeyFields::Ports4 },
        recognizer: RecognizerConfig { capacity, timeout: spec.stale_timeout, key: KeyFields::Ports4 },
        measurement: MeasurementConfig { interval },
    };
    let core = |e: qoslab_core::error::ConfigError, path: &str| BuildError::core(path, &e);
    let stage: Box<dyn Stage> = match &spec.admission {
        MaceAdmissionSpec::Mbac { v, .. } => {
            let a = Mbac::new(MbacConfig { mu: spec.allocation, v: *v, estimator }).map_err(|e| {
                let path = match e.field {
                    "mu" => "allocation".to_string(),
                    "v" => "admission.v".to_string(),
                    "window" => "admission.window".to_string(),
                    f => format!("admission.{f}"),
                };
                core(e, &path)
            })?;
            let mace = Mace::new(config, descriptors, a, start).map_err(|e| {
                let path = if e.field == "interval" { "admission.sample".to_string() } else { e.field.to_string() };
                core(e, &path)
            })?;
            Box::new(MaceStage::new(mace, spec.allocation))
        }
        MaceAdmissionSpec::Ssac => {
            let a = Ssac::new(SsacConfig { mu: spec.allocation }).map_err(|e| core(e, "allocation"))?;
            let mace = Mace::new(config, descriptors, a, start).map_err(|e| {
                let f = e.field;
                core(e, f)
            })?;
            Box::new(MaceStage::new(mace, spec.allocation))
        }
    };
    let device = DeviceQueue::new(DeviceQueueConfig {
        size: spec.device_queue,
        be: match spec.be_dispatch {
            MaceBeDispatch::WhenRoom => BeDispatch::WhenRoom,
            MaceBeDispatch::WhenIdle => BeDispatch::WhenIdle,
        },
    })
    .map_err(|e| core(e, "device_queue"))?;
    Ok(MaceParts { stage, device })
}

#[cfg(test)]
mod tests {
    use super::*;
    use qoslab_core::units::{Bytes, Dur, Rate};

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
    fn mace_spec_errors_name_the_field_below_the_mace_table() {
        let path = |s: &MaceSpec| from_spec(s, Time::ZERO, None).unwrap_err()[0].field_path.clone();
        assert_eq!(path(&spec(mbac(1.5, 20))), "admission.v");
        assert_eq!(path(&spec(mbac(0.95, 0))), "admission.window");
        let mut s = spec(MaceAdmissionSpec::Ssac);
        s.allocation = Rate(0);
        assert_eq!(path(&s), "allocation");
        let mut s = spec(MaceAdmissionSpec::Ssac);
        s.ports.as_mut().unwrap()[0].threshold = 0;
        assert_eq!(path(&s), "ports.0.threshold");
        let mut s = spec(MaceAdmissionSpec::Ssac);
        s.device_queue = 0;
        assert_eq!(path(&s), "device_queue");
        let mut s = spec(MaceAdmissionSpec::Ssac);
        s.ports.as_mut().unwrap().clear();
        assert_eq!(path(&s), "ports");
        let mut s = spec(MaceAdmissionSpec::Ssac);
        s.ports = None;
        assert_eq!(path(&s), "ports");
        let mut s = spec(MaceAdmissionSpec::Ssac);
        s.descriptors = Some("d.descriptors".into());
        assert_eq!(path(&s), "descriptors");
        let mut s = spec(MaceAdmissionSpec::Ssac);
        s.stale_timeout = Dur(0);
        assert_eq!(path(&s), "stale_timeout");
    }

    fn descriptor_dir(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("qoslab_mace_link_{}_{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("d.descriptors"), text).unwrap();
        dir
    }

    #[test]
    fn mace_reads_a_descriptor_file_next_to_the_scenario() {
        let dir =
            descriptor_dir("good", "[[port]]\nport = 5004\nrate = \"77.2kbps\"\ndepth = \"386B\"\nthreshold = 100\n");
        let mut s = spec(MaceAdmissionSpec::Ssac);
        s.ports = None;
        s.descriptors = Some("d.descriptors".into());
        let d = spec_descriptors(&s, Some(&dir)).unwrap();
        assert_eq!(d.ports().len(), 1);
        assert_eq!((d.ports()[0].port, d.ports()[0].rate, d.ports()[0].threshold), (5004, Rate(77_200), 100));
        assert!(from_spec(&s, Time::ZERO, Some(&dir)).is_ok());
        // Not found without the scenario's folder.
        let e = from_spec(&s, Time::ZERO, Some(&dir.join("elsewhere"))).unwrap_err();
        assert_eq!((e[0].field_path.as_str(), e[0].file.as_deref()), ("descriptors", None));
        assert!(e[0].message.contains("allowed"), "{}", e[0].message);
    }

    #[test]
    fn mace_descriptor_file_errors_keep_the_files_own_line() {
        let dir = descriptor_dir(
            "bad",
            "# voice\n[[port]]\nport = 5004\nrate = \"0kbps\"\ndepth = \"386B\"\nthreshold = 100\n",
        );
        let mut s = spec(MaceAdmissionSpec::Ssac);
        s.ports = None;
        s.descriptors = Some("d.descriptors".into());
        let e = from_spec(&s, Time::ZERO, Some(&dir)).unwrap_err();
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(e[0].file.as_deref(), Some(dir.join("d.descriptors").display().to_string().as_str()));
        assert_eq!(e[0].line, Some(4));
        assert!(e[0].field_path.ends_with("rate"), "{}", e[0].field_path);
        let dir = descriptor_dir("empty", "# nothing yet\n");
        let e = from_spec(&s, Time::ZERO, Some(&dir)).unwrap_err();
        assert_eq!((e[0].field_path.as_str(), e[0].file.as_deref()), ("descriptors", None));
    }
}
