//! The testbed's generator (`qoslab-traffic`) against the simulator: the
//! same scenario's flows leave at the same times in both (the sources are
//! core's, and both shift the sends by the same draws).

use qoslab_core::traffic::flow_stream;
use qoslab_sim::Column;
use qoslab_traffic::gen::send_times;
use qoslab_traffic::spec::GenSpec;

/// Three groups whose send times move: CBR with `randomize`, ON/OFF and CBR with random
/// sizes (drawn before each shift) with `send_jitter`; a fast path, so every packet arrives.
const SCENARIO: &str = r#"
name = "shifts"
duration = "2s"
seed = 11
[topology]
preset = "dumbbell"
sources = 3
[topology.access]
rate = "100Mbps"
delay = "1ms"
[topology.bottleneck]
rate = "100Mbps"
delay = "2ms"
[[traffic]]
name = "rnd"
model = "cbr"
src = "src0"
dst = "sink0"
rate = "1Mbps"
size = "1000B"
start_jitter = "8ms"
randomize = 0.5
[[traffic]]
name = "jit"
model = "on_off"
src = "src1"
dst = "sink0"
peak = "2Mbps"
on = "100ms"
off = "100ms"
size = "1000B"
send_jitter = { dist = "uniform", max = "3ms" }
[[traffic]]
name = "sjit"
model = "cbr"
src = "src2"
dst = "sink0"
rate = "1Mbps"
size = { base = "500B", exp_mean = "200B" }
send_jitter = { dist = "uniform", max = "1ms" }
[metrics]
trace_groups = ["rnd", "jit", "sjit"]
"#;

/// The simulator's send times of flow `name` (arrival − delay of each traced packet), in ns.
fn simulated(out: &qoslab_sim::RunOutput, name: &str) -> Vec<u64> {
    let s = &out.series;
    let (Some(Column::F64(t)), Some(Column::Str(id)), Some(Column::Str(metric)), Some(Column::F64(v))) =
        (s.get("t_s"), s.get("entity_id"), s.get("metric"), s.get("value"))
    else {
        panic!("series columns")
    };
    let mut sent: Vec<u64> = (0..t.len())
        .filter(|&r| id.get(r) == Some(name) && metric.get(r) == Some("delay_s"))
        .map(|r| ((t[r] * 1e9).round() - (v[r] * 1e9).round()) as u64)
        .collect();
    sent.sort_unstable();
    sent
}

fn flow(g: u32, model: &str, payload: &str, shift: &str) -> String {
    format!(
        r#"{{"id": {g}, "dst": "127.0.0.1:9", "src_port": 0, "start_ns": 0, "jitter_ns": {j},
           "stop_ns": 2000000000, "stream": {s}, "payload": {payload}, "model": {model}{shift}}}"#,
        j = if g == 0 { 8_000_000 } else { 0 },
        s = flow_stream(g, 0),
    )
}

#[test]
fn randomize_and_send_jitter_give_the_simulators_send_times() {
    let sc = qoslab_scenario::load::load_str(SCENARIO, "<test>", &[], None).expect("scenario");
    let out = qoslab_sim::run::run(&sc, qoslab_sim::RunOptions { seed: 11, base_dir: ".".into(), progress: None })
        .expect("run");
    let flows = [
        flow(
            0,
            r#"{"cbr": {"period": {"num": 8000000000000, "den": 1000000}}}"#,
            r#"{"base": 958}"#,
            r#", "randomize": 0.5"#,
        ),
        flow(
            1,
            r#"{"on_off": {"period": {"num": 8000000000000, "den": 2000000}, "on_ns": 1e8, "off_ns": 1e8}}"#,
            r#"{"base": 958}"#,
            r#", "send_jitter_max_ns": 3000000"#,
        ),
        flow(
            2,
            r#"{"cbr": {"period": {"num": 5600000000000, "den": 1000000}}}"#,
            r#"{"base": 458, "exp_mean": 200.0}"#,
            r#", "send_jitter_max_ns": 1000000"#,
        ),
    ];
    let spec: GenSpec =
        serde_json::from_str(&format!(r#"{{"t0_ns": 1, "seed": 11, "flows": [{}]}}"#, flows.join(","))).unwrap();
    assert!(spec.check().is_empty(), "{:?}", spec.check());
    let Some(Column::U64(sent)) = out.flows.get("sent_pkts") else { panic!("flows.sent_pkts") };
    for (i, name) in ["rnd.0", "jit.0", "sjit.0"].iter().enumerate() {
        // Delivered packets' send times; a packet sent in the last few ms is still in flight.
        let sim = simulated(&out, name);
        let gen: Vec<u64> = send_times(&spec, i).unwrap().into_iter().map(|(t, _)| t).collect();
        assert!(sim.len() > 100, "{name}: {} packets", sim.len());
        assert_eq!(gen.len() as u64, sent[i], "{name}: as many sends as the simulator's");
        assert!(gen.len() - sim.len() <= 1, "{name}: {} sent, {} delivered", gen.len(), sim.len());
        assert_eq!(gen[..sim.len()], sim[..], "{name}");
    }
    // The shifts moved the sends off the grid: without them the schedule differs.
    let mut plain = spec.clone();
    plain.flows[0].randomize = 0.0;
    plain.flows[2].send_jitter_max_ns = 0;
    for (i, name) in [(0, "rnd.0"), (2, "sjit.0")] {
        let grid: Vec<u64> = send_times(&plain, i).unwrap().into_iter().map(|(t, _)| t).collect();
        assert!(grid.iter().zip(simulated(&out, name)).filter(|(a, b)| **a != *b).count() > 100, "{name}");
    }
}

/// Two VTR flows of the synthetic trace (one with `randomize`), 1458 B of frame a packet and
/// 42 B of headers: the generator plays core's `Vtr` from the start frame the simulator draws.
const VTR: &str = r#"
name = "vtr_gen"
duration = "3s"
seed = 5
[topology]
preset = "dumbbell"
sources = 2
[topology.access]
rate = "100Mbps"
delay = "1ms"
[topology.bottleneck]
rate = "100Mbps"
delay = "2ms"
[[traffic]]
name = "video"
model = "vtr"
trace = { synthetic = { seed = 1 } }
flows = 2
src = "src*"
dst = "sink0"
size = "1458B"
header = "42B"
start_jitter = "40ms"
randomize = 0.3
[metrics]
trace_groups = ["video"]
"#;

#[test]
fn vtr_flows_send_the_simulators_packets() {
    let sc = qoslab_scenario::load::load_str(VTR, "<test>", &[], None).expect("scenario");
    let opts = || qoslab_sim::RunOptions { seed: 5, base_dir: ".".into(), progress: None };
    let out = qoslab_sim::run::run(&sc, opts()).expect("run");
    let frames = qoslab_scenario::vtr::synthetic(&Default::default()).sizes;
    let traces = serde_json::to_string(&frames).unwrap();
    let flows: Vec<String> = (0..2)
        .map(|i| {
            format!(
                r#"{{"id": {i}, "dst": "127.0.0.1:9", "src_port": 0, "start_ns": 0, "jitter_ns": 40000000,
                   "stop_ns": 3000000000, "stream": {s}, "randomize": 0.3, "payload": {{"base": 1458}},
                   "model": {{"vtr": {{"trace": "video", "frame_ns": 40000000, "spacing_ns": 1000000,
                   "payload": 1458, "header": 42}}}}}}"#,
                s = flow_stream(0, i),
            )
        })
        .collect();
    let spec: GenSpec = serde_json::from_str(&format!(
        r#"{{"t0_ns": 1, "seed": 5, "flows": [{}], "vtr_traces": {{"video": {traces}}}}}"#,
        flows.join(",")
    ))
    .unwrap();
    assert!(spec.check().is_empty(), "{:?}", spec.check());
    let (Some(Column::U64(pkts)), Some(Column::U64(bytes))) = (out.flows.get("sent_pkts"), out.flows.get("sent_bytes"))
    else {
        panic!("flows.sent_pkts, sent_bytes")
    };
    for (i, name) in ["video.0", "video.1"].iter().enumerate() {
        let sim = simulated(&out, name);
        let gen = send_times(&spec, i).unwrap();
        assert!(sim.len() > 100, "{name}: {} packets", sim.len());
        assert_eq!(gen.len() as u64, pkts[i], "{name}: as many sends as the simulator's");
        let times: Vec<u64> = gen.iter().map(|g| g.0).collect();
        assert_eq!(times[..sim.len()], sim[..], "{name}");
        // Wire bytes: the simulator's, but a frame's last packet below 66 B on the wire is padded
        // to the 24-byte sequence header (at most 23 B more, one packet a frame at most).
        let wire: u64 = gen.iter().map(|g| g.1 as u64 + 42).sum();
        let padded = gen.iter().filter(|g| g.1 == 24).count() as u64;
        assert!(wire >= bytes[i] && wire - bytes[i] <= 23 * padded, "{name}: {wire} vs {} B", bytes[i]);
    }
}
