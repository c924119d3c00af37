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
