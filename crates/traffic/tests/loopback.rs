//! The generator and the sink as processes on the loopback interface (no
//! root needed): a CBR and a Pareto ON/OFF flow arrive whole, in sequence,
//! with their send times; bad specs exit 2 naming the field.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_qoslab-traffic");

fn now_ns() -> u64 {
    qoslab_traffic::clock::now_ns()
}

#[test]
fn generator_to_sink_on_loopback_delivers_every_packet_in_sequence() {
    let dir = std::env::temp_dir().join(format!("qoslab-traffic-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A port unlikely to be taken, distinct per test process.
    let port = 40000 + (std::process::id() % 20000) as u16;
    let out = dir.join("rec.bin");
    let mut sink = Command::new(BIN)
        .args(["sink", "--listen", &format!("127.0.0.1:{port}"), "--out"])
        .arg(&out)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(sink.stdout.take().unwrap()).read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "ready");
    let t0 = now_ns() + 100_000_000;
    let spec = format!(
        r#"{{"t0_ns": {t0}, "seed": 3, "flows": [
        {{"id": 0, "dst": "127.0.0.1:{port}", "src_port": 0, "start_ns": 0, "stop_ns": 400000000,
          "payload": {{"base": 458}}, "model": {{"cbr": {{"period": {{"num": 4000000, "den": 1}}}}}}}},
        {{"id": 1, "dst": "127.0.0.1:{port}", "src_port": 0, "start_ns": 0, "stop_ns": 400000000, "stream": 9,
          "payload": {{"base": 100, "exp_mean": 50}},
          "model": {{"on_off": {{"period": {{"num": 2000000, "den": 1}}, "on_ns": 2e7, "off_ns": 2e7, "dist": "pareto"}}}}}}]}}"#
    );
    let spec_path = dir.join("spec.json");
    std::fs::write(&spec_path, spec).unwrap();
    let report = dir.join("report.json");
    let st = Command::new(BIN).arg("gen").arg(&spec_path).arg("--report").arg(&report).status().unwrap();
    assert!(st.success());
    std::thread::sleep(std::time::Duration::from_millis(200));
    // SAFETY: SIGTERM to the child we started, by its pid.
    unsafe { libc::kill(sink.id() as i32, libc::SIGTERM) };
    assert!(sink.wait().unwrap().success());
    let rep: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let sent: Vec<u64> = (0..2).map(|i| rep["flows"][i]["sent_pkts"].as_u64().unwrap()).collect();
    // CBR: one packet every 4 ms for 400 ms; each 500 B on the wire.
    assert_eq!(sent[0], 100);
    assert_eq!(rep["flows"][0]["sent_bytes"], 100 * 500);
    assert!(sent[1] > 10, "{rep}");
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(bytes.len() % qoslab_traffic::wire::RECORD, 0);
    let recs: Vec<(u32, u32, u64, u64, u64)> = bytes
        .chunks(32)
        .map(|c| {
            let u32_at = |i: usize| u32::from_le_bytes(c[i..i + 4].try_into().unwrap());
            let u64_at = |i: usize| u64::from_le_bytes(c[i..i + 8].try_into().unwrap());
            (u32_at(0), u32_at(4), u64_at(8), u64_at(16), u64_at(24))
        })
        .collect();
    for (f, n) in [(0u32, sent[0]), (1, sent[1])] {
        let seqs: Vec<u64> = recs.iter().filter(|r| r.0 == f).map(|r| r.2).collect();
        assert_eq!(seqs, (0..n).collect::<Vec<_>>(), "flow {f}: every packet, in order");
    }
    for r in &recs {
        assert!(r.3 >= t0 && r.4 >= r.3, "send and receive times on the monotonic clock: {r:?}");
        if r.0 == 0 {
            assert_eq!(r.1, 500);
        } else {
            assert!(r.1 >= 142, "{r:?}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_spec_and_command_line_exit_2_naming_the_problem() {
    let dir = std::env::temp_dir().join(format!("qoslab-traffic-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let spec = dir.join("bad.json");
    std::fs::write(
        &spec,
        r#"{"t0_ns": 1, "flows": [{"id": 0, "dst": "127.0.0.1:9", "src_port": 0, "start_ns": 5, "stop_ns": 5,
            "payload": {"base": 8}, "model": {"poisson": {"mean_gap_ns": 0}}}]}"#,
    )
    .unwrap();
    let o = Command::new(BIN).arg("gen").arg(&spec).args(["--report", "/dev/null"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    for f in ["flows[0].payload.base: 8 B", "flows[0].stop_ns", "flows[0].model.poisson.mean_gap_ns"] {
        assert!(err.contains(f), "{f} missing in {err}");
    }
    let o = Command::new(BIN).args(["sink", "--out", "x"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--listen"));
    std::fs::remove_dir_all(&dir).unwrap();
}
