//! What a generator sends: a JSON file with the shared start instant and
//! one entry per flow. The testbed writes it from the scenario's traffic
//! groups (python/qoslab/testbed); times are ns relative to `t0_ns`, an
//! instant of CLOCK_MONOTONIC.
//!
//! ```json
//! {"t0_ns": 123456789000, "seed": 1, "flows": [
//!   {"id": 0, "dst": "10.77.1.2:9000", "src_port": 20000, "dscp": 0, "ecn": false,
//!    "start_ns": 0, "jitter_ns": 8000000, "stop_ns": 10000000000, "stream": 2305843009213693952,
//!    "payload": {"base": 958, "exp_mean": 0.0},
//!    "model": {"cbr": {"period": {"num": 8000000000000, "den": 1000000}}}}]}
//! ```
//!
//! | field | meaning |
//! |---|---|
//! | `payload` | UDP payload bytes: `base + round(Exp(exp_mean))`, at least 24 (the header) |
//! | `model` | `cbr {period}`, `poisson {mean_gap_ns}`, `on_off {period, on_ns, off_ns, dist, shape, packetization}`, `vtr {trace, frame_ns, spacing_ns, payload, header}`, `mm_app {periods, feedback_size}`, `replay {file}`, `tcp {bytes, mss, congestion}` |
//! | `vtr_traces` | `{name: [frame bytes, ...]}`: the frame sizes of each VTR group's trace, as the simulator loaded it (`GroupPlan::frames`), shared by the flows whose `vtr.trace` names it; at most [`MAX_VTR_FRAMES`] frames each |
//! | `model.mm_app` | core's `MmSource` over the `periods` of its scales (`num / den` ns, lowest rate first; at most 32), starting at scale 0; the sink runs `MmReceiver` and sends the scale back to the flow's socket, which the generator reads before each send ([`crate::gen`]); `feedback_size` is the sink's (wire bytes of a feedback packet) |
//! | `model.vtr` | core's [`qoslab_core::traffic::vtr::VtrPlan`]: frames `frame_ns` apart, cut into packets of `payload` frame bytes `spacing_ns` apart, each `header` bytes more on the wire; the UDP payload is the wire size less 42, at least 24 (the sequence header) |
//! | `period` | `num / den` ns between packets (the simulator's exact period) |
//! | `stream` | the flow's RNG stream (the simulator's `flow_stream(group, index)`), drawn with `seed` |
//! | `jitter_ns` | the flow starts at `start_ns + U(0, jitter_ns)`, drawn first from its stream |
//! | `randomize` | the group's `randomize`: each send after the first leaves `U[0, randomize × spacing)` after its grid time (models with a grid: CBR, ON/OFF) |
//! | `send_jitter_max_ns` | the group's `send_jitter.max`: each send after the first leaves up to `U[0, max]` later |
//! | `lifetime_drawn` | the flow is one of an arrival process's with exponential lifetimes: its lifetime was the first draw of its stream in the simulator, so the generator takes (and discards) that draw first; its `start_ns`/`stop_ns` are its arrival and end |
//! | `admission` | `{port, rate_bps, timeout_ns, cac}`: ask the router at the destination's address, UDP `port`, before the first send (a TCP flow: before it connects) ([`crate::admission`]); IPv4 only |
//! | `admission.cac` | `false` (default): the router is a PCN ingress (the answer's value is the CLE; UDP flows only, which read its termination notices); `true`: the shaping CAC [Tarasiuk05] (the value is the assigned shaping rate, `assigned_bps` in the report; an admitted flow sends one FlowEnd when it ends; UDP or TCP flows) |
//!
//! A replay file has one `t_s,payload_bytes` line per packet (time since
//! the flow's start), `#` comments allowed.

use crate::error::TrafficError;
use qoslab_scenario::{Packetization, PeriodDist};
use serde::Deserialize;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GenSpec {
    pub t0_ns: u64,
    #[serde(default)]
    pub seed: u64,
    pub flows: Vec<FlowSpec>,
    /// VTR groups' frame sizes, by name (`model.vtr.trace`).
    #[serde(default)]
    pub vtr_traces: std::collections::BTreeMap<String, Vec<u32>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    pub id: u32,
    pub dst: std::net::SocketAddr,
    pub src_port: u16,
    #[serde(default)]
    pub dscp: u8,
    #[serde(default)]
    pub ecn: bool,
    pub start_ns: u64,
    #[serde(default)]
    pub jitter_ns: u64,
    pub stop_ns: u64,
    #[serde(default)]
    pub stream: u64,
    /// The simulator's `randomize` (a fraction of the model's spacing), 0 for none.
    #[serde(default)]
    pub randomize: f64,
    /// The simulator's `send_jitter` (uniform, at most this many ns), 0 for none.
    #[serde(default)]
    pub send_jitter_max_ns: u64,
    pub payload: Payload,
    pub model: Model,
    /// The flow came from an arrival process with exponential lifetimes: the simulator drew its
    /// lifetime first from its stream, so the generator takes that draw before the source's.
    #[serde(default)]
    pub lifetime_drawn: bool,
    /// Ask a PCN ingress before sending ([`crate::admission`]); none: send at once.
    #[serde(default)]
    pub admission: Option<crate::admission::AdmissionSpec>,
}

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Payload {
    pub base: u32,
    #[serde(default)]
    pub exp_mean: f64,
}

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeriodSpec {
    pub num: u64,
    pub den: u64,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Model {
    Cbr {
        period: PeriodSpec,
    },
    Poisson {
        mean_gap_ns: f64,
    },
    OnOff {
        period: PeriodSpec,
        on_ns: f64,
        off_ns: f64,
        #[serde(default)]
        dist: PeriodDist,
        #[serde(default = "default_shape")]
        shape: f64,
        #[serde(default)]
        packetization: Packetization,
    },
    /// A video trace played with core's `Vtr` from a random frame ([`GenSpec::vtr_traces`]).
    Vtr {
        /// The name of its frames in `vtr_traces`.
        trace: String,
        frame_ns: u64,
        spacing_ns: u64,
        /// Frame bytes in a full packet.
        payload: u32,
        /// Bytes each packet adds on the wire (the scenario's `header`).
        #[serde(default)]
        header: u32,
    },
    /// MM_APP's media-scaling source (core's `MmSource`), its scale fed back by the sink.
    MmApp {
        periods: Vec<PeriodSpec>,
        #[serde(default)]
        feedback_size: u32,
    },
    Replay {
        file: std::path::PathBuf,
    },
    /// Kernel TCP (see [`crate::tcp`]): greedy until `stop_ns`, or `bytes` of payload.
    Tcp {
        #[serde(default)]
        bytes: Option<u64>,
        /// The segment payload (TCP_MAXSEG).
        mss: u32,
        /// The congestion control (TCP_CONGESTION), e.g. `reno`.
        #[serde(default = "default_cc")]
        congestion: String,
    },
}

fn default_cc() -> String {
    "reno".into()
}

fn default_shape() -> f64 {
    1.5
}

/// The largest UDP payload sent (a 1500-byte MTU less IPv4 and UDP headers).
pub const MAX_PAYLOAD: u32 = 1472;

/// The most frames a VTR trace may hold in a spec (over 11 hours at 25 frames/s): the spec
/// stays a few MB.
pub const MAX_VTR_FRAMES: usize = 1_000_000;

impl GenSpec {
    /// Every problem of the spec, each naming its field and what is allowed.
    pub fn check(&self) -> Vec<String> {
        let mut bad = Vec::new();
        for (name, frames) in &self.vtr_traces {
            if frames.len() > MAX_VTR_FRAMES || !frames.iter().any(|&s| s > 0) {
                bad.push(format!(
                    "vtr_traces.{name}: {} frames{}; allowed: 1 to {MAX_VTR_FRAMES} frames, one above 0 bytes",
                    frames.len(),
                    if frames.iter().any(|&s| s > 0) { "" } else { ", none above 0 bytes" }
                ));
            }
        }
        let mut ids = std::collections::HashSet::new();
        for (i, f) in self.flows.iter().enumerate() {
            let at = |field: &str| format!("flows[{i}].{field}");
            if !ids.insert(f.id) {
                bad.push(format!("{}: flow id {} repeated; allowed: distinct ids", at("id"), f.id));
            }
            if f.dscp > 63 {
                bad.push(format!("{}: {}; allowed: 0 to 63", at("dscp"), f.dscp));
            }
            if !(0.0..1.0).contains(&f.randomize) {
                bad.push(format!(
                    "{}: {}; allowed: 0 to below 1 (a fraction of the spacing)",
                    at("randomize"),
                    f.randomize
                ));
            }
            if f.randomize > 0.0 && f.send_jitter_max_ns > 0 {
                bad.push(format!(
                    "{}: both randomize and send_jitter_max_ns; allowed: one of them (as in the simulator)",
                    at("randomize")
                ));
            }
            let hdr = crate::wire::HEADER as u32;
            if matches!(f.model, Model::Tcp { .. }) {
                // A TCP flow's payload is its byte stream; `payload` is not used.
            } else if f.payload.base < hdr || f.payload.base > MAX_PAYLOAD {
                bad.push(format!(
                    "{}: {} B; allowed: {hdr} to {MAX_PAYLOAD} B (the sequence header, one unfragmented frame)",
                    at("payload.base"),
                    f.payload.base
                ));
            }
            if !f.payload.exp_mean.is_finite() || f.payload.exp_mean < 0.0 {
                bad.push(format!("{}: {}; allowed: a finite mean >= 0", at("payload.exp_mean"), f.payload.exp_mean));
            }
            if f.admission.is_some() && matches!(f.model, Model::MmApp { .. }) {
                bad.push(format!(
                    "{}: on an mm_app flow; allowed: none (its socket reads its feedback, not the router's answers)",
                    at("admission")
                ));
            }
            if let Some(a) = &f.admission {
                let tcp = matches!(f.model, Model::Tcp { .. });
                if a.port == 0 || !f.dst.is_ipv4() {
                    bad.push(format!(
                        "{}: port {} on a flow to {}; allowed: a port 1 to 65535, flows to IPv4",
                        at("admission"),
                        a.port,
                        f.dst
                    ));
                }
                if tcp && !a.cac {
                    // A PCN ingress may terminate a flow, and a TCP flow reads no notice.
                    bad.push(format!(
                        "{}: false on a TCP flow; allowed: true (a TCP flow asks only the shaping CAC, which \
                         never terminates; a PCN ingress admits UDP flows)",
                        at("admission.cac")
                    ));
                }
            }
            if f.stop_ns <= f.start_ns {
                bad.push(format!("{}: {} ns; allowed: after start_ns", at("stop_ns"), f.stop_ns));
            }
            match &f.model {
                Model::Cbr { period } | Model::OnOff { period, .. } if period.num == 0 || period.den == 0 => bad.push(
                    format!("{}: {}/{}; allowed: positive num and den", at("model.period"), period.num, period.den),
                ),
                Model::Poisson { mean_gap_ns } if !mean_gap_ns.is_finite() || *mean_gap_ns <= 0.0 => {
                    bad.push(format!("{}: {mean_gap_ns}; allowed: a positive gap", at("model.poisson.mean_gap_ns")))
                }
                Model::OnOff { on_ns, off_ns, shape, dist, .. } => {
                    if on_ns.is_nan() || off_ns.is_nan() || *on_ns <= 0.0 || *off_ns <= 0.0 {
                        bad.push(format!("{}: on {on_ns}, off {off_ns}; allowed: positive", at("model.on_off")));
                    }
                    if *dist == PeriodDist::Pareto && (shape.is_nan() || *shape <= 1.0) {
                        bad.push(format!("{}: {shape}; allowed: > 1 (finite mean)", at("model.on_off.shape")));
                    }
                }
                Model::MmApp { periods, .. } => {
                    let max = qoslab_core::traffic::mm_app::MAX_SCALES;
                    if periods.is_empty() || periods.len() > max || periods.iter().any(|p| p.num == 0 || p.den == 0) {
                        bad.push(format!(
                            "{}: {} periods; allowed: 1 to {max}, each a positive num and den",
                            at("model.mm_app.periods"),
                            periods.len()
                        ));
                    }
                }
                Model::Vtr { trace, frame_ns, spacing_ns, payload, .. } => {
                    if !self.vtr_traces.contains_key(trace) {
                        bad.push(format!("{}: {trace:?}; allowed: a name of vtr_traces", at("model.vtr.trace")));
                    }
                    if *frame_ns == 0 || *spacing_ns == 0 || *payload == 0 {
                        bad.push(format!(
                            "{}: frame_ns {frame_ns}, spacing_ns {spacing_ns}, payload {payload}; allowed: positive",
                            at("model.vtr")
                        ));
                    }
                }
                Model::Tcp { mss, congestion, .. } => {
                    if !(88..=1460).contains(mss) {
                        bad.push(format!("{}: {mss}; allowed: 88 to 1460 bytes", at("model.tcp.mss")));
                    }
                    if congestion.is_empty() || congestion.len() > 15 {
                        bad.push(format!(
                            "{}: {congestion:?}; allowed: a kernel congestion control name",
                            at("model.tcp.congestion")
                        ));
                    }
                }
                _ => {}
            }
        }
        bad
    }
}

/// A replay file's packets: `(t_ns since the flow's start, payload bytes)`, in time order.
pub fn read_replay(path: &std::path::Path) -> Result<Vec<(u64, u32)>, TrafficError> {
    use qoslab_scenario::bounded;
    let mut rows = Vec::new();
    let mut last = 0u64;
    // Streamed through the bounded reader: a regular file, lines of at most 4 KiB, at most
    // as many lines as a scenario's replay file may hold.
    let lines = qoslab_scenario::files::MAX_REPLAY_LINES;
    let read = bounded::for_each_line(path, bounded::MAX_LINE, lines, |n, line| {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with("t_s") {
            return Ok(());
        }
        let bad = |message: String| TrafficError::Replay { at: format!("{}:{n}", path.display()), message };
        let (t, s) = line.split_once(',').ok_or_else(|| bad(format!("{line:?}; allowed: t_s,payload_bytes")))?;
        let t: f64 = t.trim().parse().map_err(|_| bad(format!("t_s {t:?}; allowed: seconds >= 0")))?;
        let s: u32 = s.trim().parse().map_err(|_| bad(format!("payload_bytes {s:?}; allowed: an integer")))?;
        if !t.is_finite() || t < 0.0 {
            return Err(bad(format!("t_s {t}; allowed: seconds >= 0")));
        }
        let t_ns = (t * 1e9).round() as u64;
        if t_ns < last {
            return Err(bad(format!("t_s {t} goes back in time; allowed: non-decreasing times")));
        }
        if !(crate::wire::HEADER as u32..=MAX_PAYLOAD).contains(&s) {
            return Err(bad(format!("payload_bytes {s}; allowed: 24 to {MAX_PAYLOAD}")));
        }
        last = t_ns;
        rows.push((t_ns, s));
        Ok(())
    });
    match read {
        Ok(Ok(())) => Ok(rows),
        Ok(Err(e)) => Err(e),
        Err(e) => Err(TrafficError::Replay { at: path.display().to_string(), message: e.to_string() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(model: &str, base: u32) -> GenSpec {
        let j = format!(
            r#"{{"t0_ns": 1, "flows": [{{"id": 0, "dst": "127.0.0.1:9", "src_port": 0, "start_ns": 0,
               "stop_ns": 100, "payload": {{"base": {base}}}, "model": {model}}}]}}"#
        );
        serde_json::from_str(&j).unwrap()
    }

    #[test]
    fn spec_checks_name_the_field_and_what_is_allowed() {
        assert!(spec(r#"{"cbr": {"period": {"num": 10, "den": 1}}}"#, 100).check().is_empty());
        let m = spec(r#"{"cbr": {"period": {"num": 0, "den": 1}}}"#, 10).check().join("\n");
        assert!(m.contains("flows[0].payload.base: 10 B; allowed: 24 to 1472"), "{m}");
        assert!(m.contains("flows[0].model.period: 0/1; allowed: positive"), "{m}");
        let m = spec(
            r#"{"on_off": {"period": {"num": 1, "den": 1}, "on_ns": 5, "off_ns": 5, "dist": "pareto", "shape": 1.0}}"#,
            100,
        )
        .check()
        .join("\n");
        assert!(m.contains("model.on_off.shape: 1; allowed: > 1"), "{m}");
        let mut both = spec(r#"{"cbr": {"period": {"num": 10, "den": 1}}}"#, 100);
        (both.flows[0].randomize, both.flows[0].send_jitter_max_ns) = (0.5, 3);
        let m = both.check().join("\n");
        assert!(m.contains("flows[0].randomize: both randomize and send_jitter_max_ns; allowed: one"), "{m}");
        both.flows[0].randomize = 1.0;
        let m = both.check().join("\n");
        assert!(m.contains("flows[0].randomize: 1; allowed: 0 to below 1"), "{m}");
    }

    #[test]
    fn a_vtr_flow_names_a_bounded_trace_of_the_spec() {
        let vtr = r#"{"vtr": {"trace": "video", "frame_ns": 40000000, "spacing_ns": 1000000, "payload": 1458}}"#;
        let mut s = spec(vtr, 1458);
        let m = s.check().join("\n");
        assert!(m.contains(r#"flows[0].model.vtr.trace: "video"; allowed: a name of vtr_traces"#), "{m}");
        s.vtr_traces.insert("video".into(), vec![0, 700]);
        assert!(s.check().is_empty(), "{:?}", s.check());
        s.vtr_traces.insert("video".into(), vec![0; 3]);
        let m = s.check().join("\n");
        assert!(m.contains("vtr_traces.video: 3 frames, none above 0 bytes; allowed: 1 to 1000000 frames"), "{m}");
        s.vtr_traces.insert("video".into(), vec![1; MAX_VTR_FRAMES + 1]);
        let m = s.check().join("\n");
        assert!(m.contains("vtr_traces.video: 1000001 frames; allowed: 1 to 1000000 frames"), "{m}");
        let e = serde_json::from_str::<GenSpec>(r#"{"t0_ns": 1, "flows": [], "vtr_traces": {"v": [-1]}}"#);
        assert!(e.is_err());
    }

    #[test]
    fn admission_on_a_tcp_flow_needs_cac_and_cac_defaults_to_false() {
        let with = |model: &str, admission: &str| {
            let j = format!(
                r#"{{"t0_ns": 1, "flows": [{{"id": 0, "dst": "127.0.0.1:9", "src_port": 0, "start_ns": 0,
                   "stop_ns": 100, "payload": {{"base": 100}}, "model": {model}, "admission": {admission}}}]}}"#
            );
            serde_json::from_str::<GenSpec>(&j)
        };
        let tcp = r#"{"tcp": {"bytes": 1000, "mss": 1000}}"#;
        let cbr = r#"{"cbr": {"period": {"num": 10, "den": 1}}}"#;
        let pcn = with(cbr, r#"{"port": 7400}"#).unwrap();
        assert!(!pcn.flows[0].admission.unwrap().cac);
        assert!(pcn.check().is_empty());
        assert!(with(cbr, r#"{"port": 7400, "cac": true}"#).unwrap().check().is_empty());
        assert!(with(tcp, r#"{"port": 7400, "cac": true}"#).unwrap().check().is_empty());
        let m = with(tcp, r#"{"port": 7400}"#).unwrap().check().join("\n");
        assert!(m.contains("flows[0].admission.cac: false on a TCP flow; allowed: true"), "{m}");
        let m = with(tcp, r#"{"port": 0, "cac": true}"#).unwrap().check().join("\n");
        assert!(m.contains("flows[0].admission: port 0 on a flow to 127.0.0.1:9; allowed: a port 1 to 65535"), "{m}");
        let e = with(cbr, r#"{"port": 7400, "cac": 1}"#).unwrap_err().to_string();
        assert!(e.contains("expected a boolean"), "{e}");
        let e = with(cbr, r#"{"port": 7400, "shaping": true}"#).unwrap_err().to_string();
        assert!(e.contains("unknown field `shaping`"), "{e}");
    }

    #[test]
    fn replay_file_reads_rows_and_refuses_time_going_back() {
        let dir = std::env::temp_dir().join(format!("qoslab-replay-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("r.csv");
        std::fs::write(&f, "t_s,payload_bytes\n# comment\n0,100\n0.5,200\n").unwrap();
        assert_eq!(read_replay(&f).unwrap(), vec![(0, 100), (500_000_000, 200)]);
        std::fs::write(&f, "0.5,100\n0.1,100\n").unwrap();
        let e = read_replay(&f).unwrap_err();
        assert!(matches!(e, TrafficError::Replay { ref at, .. } if at.ends_with(":2")), "{e:?}");
        assert!(e.to_string().contains(":2: t_s 0.1 goes back in time"), "{e}");
        // Bounded: a device is refused before it is read, a too-long line at its number.
        let e = read_replay(std::path::Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(e.contains("is a device, not a regular file"), "{e}");
        std::fs::write(&f, format!("0,100\n{}\n", "1".repeat(5000))).unwrap();
        let e = read_replay(&f).unwrap_err().to_string();
        assert!(e.contains("line 2 is longer than 4096 bytes"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
