//! The generator and the sink as processes on the loopback interface (no
//! root needed): a CBR and a Pareto ON/OFF flow arrive whole, in sequence,
//! with their send times; the TCP receiver's window holds at its clamp;
//! bad specs exit 2 naming the field.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_qoslab-traffic");

fn now_ns() -> u64 {
    qoslab_traffic::clock::now_ns()
}

/// Starts `qoslab-traffic sink` with `args` and waits for its "ready" line.
fn spawn_sink(args: &[&str]) -> std::process::Child {
    let mut sink = Command::new(BIN).arg("sink").args(args).stdout(Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(sink.stdout.take().unwrap()).read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "ready");
    sink
}

#[test]
fn generator_to_sink_on_loopback_delivers_every_packet_in_sequence() {
    let dir = std::env::temp_dir().join(format!("qoslab-traffic-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A port unlikely to be taken, distinct per test process.
    let port = 40000 + (std::process::id() % 20000) as u16;
    let out = dir.join("rec.bin");
    let mut sink = spawn_sink(&["--listen", &format!("127.0.0.1:{port}"), "--out", out.to_str().unwrap()]);
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

/// The sender's view of the window its peer advertises (`tcpi_snd_wnd`, Linux 6.2 and later).
fn snd_wnd(fd: i32) -> Option<u32> {
    // SAFETY: an all-zero tcp_info is valid; getsockopt fills at most `len` bytes of it.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: as above.
    let r = unsafe {
        libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_INFO, &mut info as *mut libc::tcp_info as *mut _, &mut len)
    };
    let end = std::mem::offset_of!(libc::tcp_info, tcpi_snd_wnd) + 4;
    (r == 0 && len as usize >= end).then_some(info.tcpi_snd_wnd)
}

#[test]
fn tcp_receiver_advertises_the_window_clamp_and_never_more() {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    let dir = std::env::temp_dir().join(format!("qoslab-traffic-tcp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let port = 20000 + (std::process::id() % 20000) as u16;
    let rec = dir.join("rec.bin");
    let listen = format!("127.0.0.1:{port}");
    let args = ["--listen-tcp", &listen, "--tcp-window-clamp", "20000", "--tcp-mss", "1000", "--out"];
    let mut sink = spawn_sink(&[&args[..], &[rec.to_str().unwrap()]].concat());
    // The sender as the generator sets it: 1000 B segments (TCP_MAXSEG before connecting).
    // SAFETY: a fresh socket, owned by the TcpStream below.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) };
    let mss: libc::c_int = 1000;
    // SAFETY: setsockopt reads one c_int.
    let r =
        unsafe { libc::setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_MAXSEG, &mss as *const libc::c_int as *const _, 4) };
    assert_eq!(r, 0);
    let dst = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr { s_addr: u32::from(std::net::Ipv4Addr::LOCALHOST).to_be() },
        sin_zero: [0; 8],
    };
    // SAFETY: connect with a sockaddr_in of its size.
    let r = unsafe { libc::connect(fd, &dst as *const libc::sockaddr_in as *const _, 16) };
    assert_eq!(r, 0, "{}", std::io::Error::last_os_error());
    // SAFETY: fd is ours and connected.
    let mut s = unsafe { <std::net::TcpStream as std::os::fd::FromRawFd>::from_raw_fd(fd) };
    s.write_all(&7u32.to_le_bytes()).unwrap();
    // Before this fix the kernel's first measurement of the segment size replaced the clamp
    // (43,000 B on loopback with the old 80 kB buffer); the receiver must hold it at 20,000 B.
    let mut windows = Vec::new();
    let end = now_ns() + 300_000_000;
    while now_ns() < end {
        s.write_all(&[0x5a; 1000]).unwrap();
        if let Some(w) = snd_wnd(s.as_raw_fd()) {
            windows.push(w);
        }
    }
    drop(s);
    std::thread::sleep(std::time::Duration::from_millis(100));
    // SAFETY: SIGTERM to the child we started, by its pid.
    unsafe { libc::kill(sink.id() as i32, libc::SIGTERM) };
    assert!(sink.wait().unwrap().success());
    assert!(!windows.is_empty(), "tcpi_snd_wnd needs Linux 6.2 or later");
    // Whole segments: 20 of 1000 B, or of 988 B where loopback's TCP carries timestamps.
    let max = *windows.iter().max().unwrap();
    assert!((19_000..=20_000).contains(&max), "the largest advertised window {max} over {} samples", windows.len());
    let got: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("rec.tcp.json")).unwrap()).unwrap();
    assert_eq!(got[0]["id"], 7);
    std::fs::remove_dir_all(&dir).unwrap();
}
