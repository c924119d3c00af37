//! Flows admitted, refused and terminated on real packets (issue 35): the
//! generator's flows ask a `qoslab-router` with a PCN domain (`[pcn]`)
//! across three network namespaces (`qoslab_router::testbed::Netns`);
//! requests, answers and termination notices are UDP packets, and the
//! generator never decides admission itself. Root only (skipped with the
//! reason otherwise). Needs the `qoslab-router` binary beside this test's
//! `qoslab-traffic` (`make bins`, or any workspace build of both).

use qoslab_router::testbed::{in_ns, skip_reason, Netns};
use qoslab_traffic::gen::GenReport;
use qoslab_traffic::spec::GenSpec;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::AtomicBool;

fn router_bin() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_BIN_EXE_qoslab-traffic"));
    let bin =
        std::env::var_os("QOSLAB_TEST_ROUTER").map_or_else(|| here.with_file_name("qoslab-router"), PathBuf::from);
    assert!(bin.exists(), "{} is missing: cargo build --release -p qoslab-router", bin.display());
    bin
}

/// Kills the router and removes the folder if the test fails before it stops them.
struct Router(Option<Child>, PathBuf);
impl Drop for Router {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_dir_all(&self.1);
    }
}

static STOP: AtomicBool = AtomicBool::new(false);

/// Runs flows `starts_ms` (CBR 0.4 Mb/s: 1000-byte frames every 20 ms, DSCP 46, until 3 s, each
/// asking first) through a router whose 10 Mb/s, 5 ms link has `stages` and a PCN domain;
/// returns the generator's report and the router's summary.
fn run_domain(stages: &str, starts_ms: &[u64]) -> Option<(GenReport, serde_json::Value)> {
    if let Some(why) = skip_reason() {
        eprintln!("skipped: {why}");
        return None;
    }
    let p = format!("qtp{}x{}", std::process::id() % 100_000, starts_ms.len());
    let dir = std::env::temp_dir().join(format!("{p}.d"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let net = Netns::new(&p).unwrap();
    let cfg = dir.join("router.toml");
    std::fs::write(
        &cfg,
        format!(
            "[router]\na = \"{p}-a\"\nb = \"{p}-b\"\nstats = \"{d}/stats.jsonl\"\nout = \"{d}/out\"\n\
             pcn_dscps = [46]\n[link]\nrate = \"10Mbps\"\ndelay = \"5ms\"\nstages = [{stages}]\n\
             [pcn]\nedges = [\"a\", \"b\"]\n",
            d = dir.display()
        ),
    )
    .unwrap();
    let err = std::fs::File::create(dir.join("router.err")).unwrap();
    let mut router = Router(
        Some(
            Command::new("ip")
                .args(["netns", "exec", &net.ns("r")])
                .arg(router_bin())
                .arg("run")
                .arg(&cfg)
                .stdout(Stdio::null())
                .stderr(err)
                .spawn()
                .unwrap(),
        ),
        dir.clone(),
    );
    std::thread::sleep(std::time::Duration::from_millis(300));
    let t0 = qoslab_traffic::clock::now_ns() + 200_000_000;
    let flows: Vec<String> = starts_ms
        .iter()
        .enumerate()
        .map(|(i, start)| {
            format!(
                r#"{{"id": {i}, "dst": "10.99.0.2:9000", "src_port": {}, "dscp": 46, "start_ns": {},
                    "stop_ns": 3000000000, "payload": {{"base": 958}},
                    "model": {{"cbr": {{"period": {{"num": 20000000, "den": 1}}}}}},
                    "admission": {{"port": 7400, "rate_bps": 400000}}}}"#,
                20_000 + i,
                start * 1_000_000
            )
        })
        .collect();
    let spec: GenSpec =
        serde_json::from_str(&format!(r#"{{"t0_ns": {t0}, "seed": 1, "flows": [{}]}}"#, flows.join(","))).unwrap();
    assert!(spec.check().is_empty(), "{:?}", spec.check());
    let report: GenReport =
        in_ns(&net.ns("h1"), move || qoslab_traffic::gen::run(&spec, &STOP)).join().unwrap().unwrap();
    let mut c = router.0.take().unwrap();
    // SAFETY: kill(2) on our own child (`ip netns exec` execs the router).
    unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
    assert!(c.wait().unwrap().success());
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/summary.json")).unwrap()).unwrap();
    eprintln!("edge {}\nmarks {}", s["router"]["edge"], s["router"]["dirs"][0]["marks"]);
    for f in &report.flows {
        let a = f.admission.as_ref().unwrap();
        eprintln!(
            "flow {}: {} cle {:.3} sent {} terminated {}",
            f.id,
            a.decision,
            a.cle,
            f.sent_pkts,
            a.terminated_ns > 0
        );
    }
    drop(router);
    drop(net);
    Some((report, s))
}

#[test]
fn pcn_flows_are_admitted_then_refused_by_the_router_on_real_packets() {
    // Three flows (1.2 Mb/s) start at 0 against an admissible rate of 0.3 Mb/s: the CLE is 0, all
    // are admitted. The virtual queue (at most 100 ms at 0.3 Mb/s, 3750 B) fills in about 35 ms
    // and stays above the ramp's end (15 ms, 562 B): every packet is threshold-marked and the
    // per-packet CLE (weight 0.01, 150 packets/s) passes 0.5 within 0.5 s; three more ask at
    // 1.5 s and are refused.
    let Some((report, s)) = run_domain(
        "{ type = \"pcn_admission\", admissible_rate = \"300kbps\", upper_limit = \"100ms\" }",
        &[0, 7, 14, 1500, 1507, 1514],
    ) else {
        return;
    };
    let edge = &s["router"]["edge"];
    let decisions: Vec<_> = report.flows.iter().map(|f| f.admission.as_ref().unwrap()).collect();
    for (i, a) in decisions.iter().enumerate() {
        assert_eq!(a.decision, if i < 3 { "admitted" } else { "refused" }, "flow {i}");
    }
    assert!(decisions[3..].iter().all(|a| a.cle > 0.5), "refused on a CLE above the threshold");
    assert!(report.flows[3..].iter().all(|f| f.sent_pkts == 0), "refused flows send nothing");
    assert!(report.flows[..3].iter().all(|f| f.sent_pkts >= 140), "admitted flows send to the end");
    assert_eq!((edge["admitted"].as_u64(), edge["refused"].as_u64()), (Some(3), Some(3)));
    assert_eq!(edge["requests"].as_u64(), Some(6));
    assert_eq!(s["router"]["dirs"][0]["edge_consumed"].as_u64(), Some(6));
    assert_eq!(edge["policed"].as_u64(), Some(0), "no PCN packet of a flow not admitted");
    let sent: u64 = report.flows.iter().map(|f| f.sent_pkts).sum();
    let marked = s["router"]["dirs"][0]["marks"]["pcn_threshold"].as_u64().unwrap();
    assert!(marked * 10 >= sent * 9, "{marked} of {sent} packets threshold-marked");
}

#[test]
fn pcn_flows_are_terminated_down_to_the_sustainable_rate_on_real_packets() {
    // Four flows (1.6 Mb/s) through a termination meter at 1 Mb/s: the egress measures about
    // 1 Mb/s not excess-marked, the excess is 0.6 Mb/s, and rounding up terminates two flows
    // (0.8 Mb/s); the other two (0.8 Mb/s, below the meter's rate) send to the end.
    let Some((report, s)) = run_domain(
        "{ type = \"pcn_termination\", termination_rate = \"1Mbps\", packet_size = \"1000B\", depth_packets = 16 }",
        &[0, 5, 10, 15],
    ) else {
        return;
    };
    let edge = &s["router"]["edge"];
    let terminated: Vec<_> =
        report.flows.iter().filter(|f| f.admission.as_ref().unwrap().terminated_ns > 0).map(|f| f.id).collect();
    assert_eq!(terminated.len(), 2, "terminated {terminated:?}");
    assert_eq!(edge["terminated"].as_u64(), Some(2));
    for f in &report.flows {
        if terminated.contains(&f.id) {
            assert!(f.sent_pkts < 100, "flow {} stopped early ({} packets)", f.id, f.sent_pkts);
        } else {
            assert!(f.sent_pkts >= 140, "flow {} sent to the end ({} packets)", f.id, f.sent_pkts);
        }
    }
    assert!(edge["sustainable_rates"].as_u64().unwrap() >= 1);
}
