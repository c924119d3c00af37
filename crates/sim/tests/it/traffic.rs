//! Traffic models and flow arrivals over long runs (fixed seeds,
//! statistical tolerances stated per test).

use crate::common::*;
use qoslab_sim::output::RunOutput;
use std::collections::BTreeMap;

/// A fat network: one source host, a router, a sink; 1 Gb/s, 1 ms.
fn fat(traffic: &str, duration: &str) -> qoslab_scenario::ValidScenario {
    let topo = explicit(
        &[("src0", "host"), ("src1", "host"), ("r0", "router"), ("sink0", "host")],
        &[("src0", "r0", "1Gbps", "1ms"), ("src1", "r0", "1Gbps", "1ms"), ("r0", "sink0", "1Gbps", "1ms")],
    );
    scenario(&format!("name = \"t\"\nduration = \"{duration}\"\n{topo}\n{traffic}"))
}

#[test]
fn cbr_sends_exactly_its_rate_of_payload() {
    // 1 Mb/s of 1000 B payload: one packet per 8 ms; header 40 B on the wire.
    let sc = fat(
        r#"[[traffic]]
name = "c"
model = "cbr"
rate = "1Mbps"
src = "src0"
dst = "sink0"
size = "1000B"
header = "40B"
"#,
        "10s",
    );
    let out = run(&sc, 1);
    assert_eq!(u64s(&out.flows, "sent_pkts"), vec![1250]);
    assert_eq!(u64s(&out.flows, "sent_bytes"), vec![1250 * 1040]);
    // The admission request carries the mean wire rate: 1.04 Mb/s.
    let est = f64s(&out.events, "estimate");
    let kinds = strs(&out.events, "kind");
    let admit = kinds.iter().position(|k| k == "admit").unwrap();
    assert!((est[admit] - 1_040_000.0).abs() < 1e-6, "{}", est[admit]);
    // Throughput over the flow's 10 s: all but the packets still in flight.
    let thr = f64s(&out.flows, "throughput_bps")[0];
    assert!((thr - 1_040_000.0).abs() / 1_040_000.0 < 0.001, "{thr}");
}

#[test]
fn poisson_packet_count_matches_its_rate() {
    // 125 packets/s for 200 s: 25,000, standard deviation 158; 4 sigma.
    let sc = fat(
        r#"[[traffic]]
name = "p"
model = "poisson"
rate = "1Mbps"
src = "src0"
dst = "sink0"
size = "1000B"
"#,
        "200s",
    );
    for seed in [1, 2] {
        let n = u64s(&run(&sc, seed).flows, "sent_pkts")[0] as f64;
        assert!((n - 25_000.0).abs() < 632.0, "seed {seed}: {n}");
    }
}

#[test]
fn on_off_exponential_follows_the_packetization_rule() {
    // EXP2 of [MACE98]: ON 20 ms, OFF 180 ms, 320 B every 10 ms. Per ON
    // period ceil(L / 10 ms) packets: mean 1 / (1 - e^-0.5) = 2.5415,
    // i.e. 12.707 packets/s (not the nominal 10). 20 flows x 500 s:
    // 127,074 expected; cycles are independent, so a 2 % tolerance is
    // over 10 standard deviations.
    let sc = fat(
        r#"[[traffic]]
name = "exp2"
model = "on_off"
interval = "10ms"
on = "20ms"
off = "180ms"
flows = 20
src = "src*"
dst = "sink0"
size = "320B"
header = "20B"
"#,
        "500s",
    );
    let out = run(&sc, 3);
    let n: u64 = u64s(&out.flows, "sent_pkts").iter().sum();
    let expected = 20.0 * 500.0 * 2.541494 / 0.2;
    assert!((n as f64 / expected - 1.0).abs() < 0.02, "{n} vs {expected}");
    // The admission request is the packetization-corrected mean wire rate.
    let est = f64s(&out.events, "estimate");
    let kinds = strs(&out.events, "kind");
    let admit = kinds.iter().position(|k| k == "admit").unwrap();
    let rate = 2.541494 * 340.0 * 8.0 / 0.2;
    assert!((est[admit] / rate - 1.0).abs() < 1e-5, "{} vs {rate}", est[admit]);
}

#[test]
fn on_off_pareto_mean_rate_matches_the_model() {
    // Pareto ON/OFF (shape 2.5: finite variance, the mean converges), peak
    // 64 kb/s of 320 B = one packet per 40 ms; ON 400 ms, OFF 400 ms.
    let sc = fat(
        r#"[[traffic]]
name = "poo"
model = "on_off"
peak = "64kbps"
on = "400ms"
off = "400ms"
dist = "pareto"
shape = 2.5
flows = 40
src = "src*"
dst = "sink0"
size = "320B"
"#,
        "400s",
    );
    let out = run(&sc, 5);
    let n: u64 = u64s(&out.flows, "sent_pkts").iter().sum();
    let est = f64s(&out.events, "estimate");
    let kinds = strs(&out.events, "kind");
    let admit = kinds.iter().position(|k| k == "admit").unwrap();
    // Mean wire rate (bit/s) -> packets over 40 flows x 400 s.
    let expected = est[admit] / (320.0 * 8.0) * 40.0 * 400.0;
    assert!((n as f64 / expected - 1.0).abs() < 0.05, "{n} vs {expected}");
    // Sanity: between the nominal rate and one extra packet per ON period.
    let nominal = 64_000.0 / 2.0;
    assert!(est[admit] > nominal && est[admit] < nominal + 320.0 * 8.0 / 0.8, "{}", est[admit]);
}

#[test]
fn random_sizes_and_marks_reach_the_wire() {
    let sc = fat(
        r#"[[traffic]]
name = "r"
model = "cbr"
interval = "1ms"
src = "src0"
dst = "sink0"
size = { base = "100B", exp_mean = "400B" }
header = "28B"
class = 2
dscp = 46
ecn = true
"#,
        "20s",
    );
    let out = run(&sc, 1);
    let (pk, by) = (u64s(&out.flows, "sent_pkts")[0], u64s(&out.flows, "sent_bytes")[0]);
    assert_eq!(pk, 20_000);
    let mean = by as f64 / pk as f64;
    // Mean wire size 528 B; standard error 400 / sqrt(20000) = 2.8 B.
    assert!((mean - 528.0).abs() < 12.0, "{mean}");
    assert_eq!(i64s(&out.flows, "class"), vec![2]);
    assert!(out.summary["classes"]["2"]["sent_pkts"].as_u64() == Some(20_000));
}

#[test]
fn start_stop_and_jitter_bound_each_flow() {
    let sc = fat(
        r#"[[traffic]]
name = "w"
model = "cbr"
interval = "100ms"
flows = 10
src = "src*"
dst = "sink0"
size = "100B"
start = "2s"
stop = "5s"
start_jitter = "50ms"
"#,
        "10s",
    );
    let out = run(&sc, 7);
    let starts = f64s(&out.flows, "start_s");
    let ends = f64s(&out.flows, "end_s");
    assert!(starts.iter().all(|s| (2.0..=2.05).contains(s)), "{starts:?}");
    assert!(starts.iter().any(|s| *s > 2.0), "jitter applied");
    assert!(ends.iter().all(|e| *e == 5.0));
    // 3 s at 10 packets/s, minus at most one for the jittered start.
    assert!(u64s(&out.flows, "sent_pkts").iter().all(|n| *n == 29 || *n == 30));
    // Every admitted flow: flow_start, admit, flow_end ("stop").
    let kinds = strs(&out.events, "kind");
    assert_eq!(kinds.iter().filter(|k| *k == "flow_end").count(), 10);
    let detail = strs(&out.events, "detail");
    assert!(kinds.iter().zip(&detail).filter(|(k, _)| *k == "flow_end").all(|(_, d)| d == "stop"));
}

#[test]
fn poisson_flow_arrivals_count_and_lifetimes() {
    // 5 flows/s for 100 s: 500 flows, sd 22; 4 sigma. Fixed lifetime 2 s.
    let sc = fat(
        r#"[[traffic]]
name = "calls"
model = "cbr"
rate = "64kbps"
src = "src*"
dst = "sink0"
size = "160B"
arrivals = { process = "poisson", rate = 5.0, lifetime = "2s", lifetime_dist = "fixed" }
"#,
        "100s",
    );
    let out = run(&sc, 11);
    let n = out.flows.rows() as f64;
    assert!((n - 500.0).abs() < 90.0, "{n}");
    let (s, e) = (f64s(&out.flows, "start_s"), f64s(&out.flows, "end_s"));
    assert!(s.iter().zip(&e).all(|(s, e)| (e - s - 2.0).abs() < 1e-9 || (*e == 100.0 && e - s <= 2.0)));
    assert!(s.windows(2).all(|w| w[0] <= w[1]), "flows are created in start order");
    let names = strs(&out.flows, "name");
    assert_eq!(names[3], "calls.3");
}

#[test]
fn batch_arrivals_and_max_flows_cap() {
    // Batches at 2/s, mean size 3: 600 flows in 100 s (sd 55; 4 sigma),
    // and a cap of 50 flows.
    let base = r#"[[traffic]]
name = "b"
model = "cbr"
rate = "64kbps"
src = "src0"
dst = "sink0"
size = "160B"
"#;
    let sc = fat(
        &format!(
            "{base}arrivals = {{ process = \"batch_poisson\", rate = 2.0, batch_mean = 3.0, lifetime = \"1s\" }}\n"
        ),
        "100s",
    );
    let n = run(&sc, 2).flows.rows() as f64;
    assert!((n - 600.0).abs() < 220.0, "{n}");
    let sc = fat(
        &format!(
            "{base}arrivals = {{ process = \"batch_poisson\", rate = 2.0, batch_mean = 3.0, lifetime = \"1s\", max_flows = 50 }}\n"
        ),
        "100s",
    );
    assert_eq!(run(&sc, 2).flows.rows(), 50);
}

#[test]
fn keep_alive_replaces_each_flow_when_it_ends() {
    // 3 slots, fixed 1 s lifetimes, 10 s: flows start at 0, 1, ..., 9 s.
    let sc = fat(
        r#"[[traffic]]
name = "k"
model = "cbr"
interval = "100ms"
src = "src*"
dst = "sink0"
size = "100B"
arrivals = { process = "keep_alive", alive = 3, lifetime = "1s", lifetime_dist = "fixed" }
"#,
        "10s",
    );
    let out = run(&sc, 1);
    assert_eq!(out.flows.rows(), 30);
    let starts = f64s(&out.flows, "start_s");
    for k in 0..10 {
        assert_eq!(starts.iter().filter(|s| **s == k as f64).count(), 3, "at {k} s");
    }
    // Endpoints alternate over the matching sources.
    let src = strs(&out.flows, "src");
    assert_eq!(&src[..3], &["src0", "src1", "src0"]);
}

#[test]
fn replay_starts_flows_at_recorded_times() {
    // Relative to the temporary folder, which the test scenarios are validated against.
    let sub = format!("qoslab-replay-{}", std::process::id());
    let dir = std::env::temp_dir().join(&sub);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("calls.csv"), "start_s,lifetime_s\n2.5,1\n0.5,0.25\n7,100\n").unwrap();
    let sc = fat(
        &r#"[[traffic]]
name = "rp"
model = "cbr"
interval = "10ms"
src = "src0"
dst = "sink0"
size = "100B"
arrivals = { process = "replay", file = "SUB/calls.csv" }
"#
        .replace("SUB", &sub),
        "10s",
    );
    let out = run(&sc, 1);
    assert_eq!(f64s(&out.flows, "start_s"), vec![0.5, 2.5, 7.0]);
    assert_eq!(f64s(&out.flows, "end_s"), vec![0.75, 3.5, 10.0]);
    assert_eq!(u64s(&out.flows, "sent_pkts"), vec![25, 100, 300]);
    // A bad row is a config error naming the file and line.
    std::fs::write(dir.join("calls.csv"), "start_s,lifetime_s\n1,1\n2,-1\n").unwrap();
    let e = try_run(&sc, 1).unwrap_err().to_string();
    assert!(e.contains("calls.csv:3: traffic.0.arrivals.file: lifetime_s -1"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn adding_a_group_does_not_change_another_groups_draws() {
    let g1 = r#"[[traffic]]
name = "a"
model = "poisson"
rate = "1Mbps"
src = "src0"
dst = "sink0"
size = { base = "100B", exp_mean = "500B" }
"#;
    let g2 = r#"[[traffic]]
name = "b"
model = "poisson"
rate = "2Mbps"
src = "src1"
dst = "sink0"
size = "700B"
"#;
    let one = run(&fat(g1, "5s"), 9);
    let two = run(&fat(&format!("{g1}{g2}"), "5s"), 9);
    assert_eq!(u64s(&one.flows, "sent_pkts")[0], u64s(&two.flows, "sent_pkts")[0]);
    assert_eq!(u64s(&one.flows, "sent_bytes")[0], u64s(&two.flows, "sent_bytes")[0]);
}

/// [Zhang07 §2.3.4]: with `randomize = f` every packet after the first leaves
/// within [0, f × spacing) after its ideal time, and the grid does not drift.
#[test]
fn randomized_packet_times_stay_within_the_fraction_of_the_spacing() {
    let text = |f: f64| {
        format!(
            r#"name = "rnd"
duration = "2s"
[topology]
preset = "dumbbell"
sources = 1
access = {{ rate = "100Mbps", delay = "1ms" }}
bottleneck = {{ rate = "100Mbps", delay = "1ms" }}
[metrics]
trace_flows = ["v.0"]
[[traffic]]
name = "v"
model = "cbr"
src = "src0"
dst = "sink0"
size = "160B"
interval = "20ms"
randomize = {f}
"#
        )
    };
    let plain = run(&scenario(&text(0.0)), 1);
    let rnd = run(&scenario(&text(0.1)), 1);
    let rnd2 = run(&scenario(&text(0.1)), 2);
    let sent = |o: &qoslab_sim::output::RunOutput| u64s(&o.flows, "sent_pkts")[0];
    assert_eq!(sent(&plain), 100);
    assert_eq!(sent(&rnd), 100, "the grid does not drift");
    // Arrival times at the sink: the plain grid is exact; the randomized one
    // deviates by less than 2 ms (0.1 × 20 ms) from it, and not always by 0.
    let arrivals =
        |o: &qoslab_sim::output::RunOutput| series(o, "v.0", "delay_s").iter().map(|(t, _)| *t).collect::<Vec<_>>();
    let (a, b, c) = (arrivals(&plain), arrivals(&rnd), arrivals(&rnd2));
    assert_eq!(a.len(), b.len());
    let dev: Vec<f64> = a.iter().zip(&b).map(|(x, y)| y - x).collect();
    assert!(dev.iter().all(|d| (-1e-9..0.002).contains(d)), "{dev:?}");
    assert!(dev.iter().filter(|d| **d > 1e-6).count() > 80, "most packets moved");
    assert_ne!(b, c, "the seed moves the randomization");
}

/// [Zhang07 §2.3.4] on an ON/OFF source whose OFF periods (exponential,
/// mean 0.3 ms) are often shorter than a packet's delay (up to 9 ms of its
/// 10 ms spacing): the first packet of an ON period can fall before the last
/// one of the period before, and goes right after it instead. The run ends
/// (an event before the current one is an error) and a flow's packets leave
/// in order, none before the one before it.
#[test]
fn randomized_on_off_packets_never_leave_before_the_one_before() {
    let sc = fat(
        r#"[[traffic]]
name = "v"
model = "on_off"
src = "src0"
dst = "sink0"
size = "160B"
interval = "10ms"
on = "15ms"
off = "0.3ms"
randomize = 0.9
[metrics]
trace_flows = ["v.0"]
"#,
        "20s",
    );
    let out = run(&sc, 3);
    // Send times in the order the packets arrived (one FIFO path: the order they left).
    let sent: Vec<f64> = series(&out, "v.0", "delay_s").iter().map(|(t, d)| t - d).collect();
    assert!(sent.len() > 1000, "{} packets", sent.len());
    assert!(sent.windows(2).all(|w| w[1] >= w[0] - 1e-12), "a packet left before the one before it");
    // Some packets did go at the instant of the one before (the case this covers).
    assert!(sent.windows(2).filter(|w| (w[1] - w[0]).abs() < 1e-12).count() > 10);
}

/// One group `v` of `model` (and `extra` keys) from `src0` to `sink0` over a
/// 100 Mb/s dumbbell, 1 s: the scenario the option-refusal tests vary.
fn one_group(name: &str, model: &str, extra: &str) -> String {
    format!(
        r#"name = "{name}"
duration = "1s"
[topology]
preset = "dumbbell"
sources = 1
access = {{ rate = "100Mbps", delay = "1ms" }}
bottleneck = {{ rate = "100Mbps", delay = "1ms" }}
[[traffic]]
name = "v"
src = "src0"
dst = "sink0"
size = "160B"
{model}
{extra}
"#
    )
}

#[test]
fn randomize_is_refused_outside_its_range_and_models() {
    let base = |extra: &str, model: &str| one_group("rnd", model, extra);
    let d = refused(&base("randomize = -0.1", "model = \"cbr\"\ninterval = \"20ms\""));
    assert!(d.iter().any(|d| d.path == "traffic.0.randomize" && d.message.contains("0 to below 1")), "{d:?}");
    let d = refused(&base("randomize = 0.1", "model = \"poisson\"\nrate = \"64kbps\""));
    assert!(d.iter().any(|d| d.path == "traffic.0.randomize" && d.message.contains("poisson")), "{d:?}");
}

/// EXP1 ([MACE98] Table 1: 320 B + 66 B every 40 ms while ON, ON 313 ms, OFF
/// 325 ms, exponential). Nominal: 386 B × 8 / 40 ms × 313 / 638 = 37.87 kb/s.
fn exp1_group(packetization: &str) -> String {
    format!(
        r#"[[traffic]]
name = "e"
model = "on_off"
interval = "40ms"
on = "313ms"
off = "325ms"
flows = 20
src = "src0"
dst = "sink0"
size = "320B"
header = "66B"
{packetization}
"#
    )
}

/// The ceil rule (the default) sends ⌈L / interval⌉ packets per ON
/// period, 40.34 kb/s for EXP1; `packetization = "nominal"` keeps the packet
/// clock's phase across OFF periods and sends the nominal 37.87 kb/s. 20
/// flows × 2000 s are about 62,700 ON periods: the relative standard
/// deviation of the mean rate is about 0.3%, so the tolerance is 1%.
#[test]
fn on_off_nominal_packetization_sends_the_nominal_rate_and_ceil_does_not() {
    let nominal = 386.0 * 8.0 / 0.040 * 313.0 / 638.0;
    let ceil = 386.0 * 8.0 / (1.0 - (-40.0f64 / 313.0).exp()) / 0.638;
    let rate = |extra: &str| {
        let out = run(&fat(&exp1_group(extra), "2000s"), 1);
        let bytes: u64 = u64s(&out.flows, "sent_bytes").iter().sum();
        // The admission request carries the group's mean wire rate.
        let est = f64s(&out.events, "estimate");
        let kinds = strs(&out.events, "kind");
        let admit = kinds.iter().position(|k| k == "admit").unwrap();
        (bytes as f64 * 8.0 / 2000.0 / 20.0, est[admit])
    };
    let (by_default, asked_default) = rate("");
    let (by_ceil, _) = rate("packetization = \"ceil\"");
    let (by_nominal, asked_nominal) = rate("packetization = \"nominal\"");
    assert_eq!(by_default, by_ceil, "ceil is the default");
    assert!((by_ceil / ceil - 1.0).abs() < 0.01, "ceil {by_ceil} vs {ceil}");
    assert!((by_nominal / nominal - 1.0).abs() < 0.01, "nominal {by_nominal} vs {nominal}");
    assert!((asked_default - ceil).abs() < 1.0 && (asked_nominal - nominal).abs() < 1.0);
}

/// `send_jitter = { dist = "uniform", max }` delays each packet
/// after the first by U[0, max] after its ideal time; the grid does not drift,
/// the order holds, the seed moves the draws.
#[test]
fn send_jitter_delays_each_packet_within_max_and_keeps_the_grid() {
    let text = |extra: &str| {
        format!(
            r#"name = "jit"
duration = "4s"
[topology]
preset = "dumbbell"
sources = 1
access = {{ rate = "100Mbps", delay = "1ms" }}
bottleneck = {{ rate = "100Mbps", delay = "1ms" }}
[metrics]
trace_flows = ["v.0"]
[[traffic]]
name = "v"
model = "cbr"
src = "src0"
dst = "sink0"
size = "320B"
header = "66B"
interval = "40ms"
{extra}
"#
        )
    };
    let plain = run(&scenario(&text("")), 1);
    let jit = run(&scenario(&text("send_jitter = { dist = \"uniform\", max = \"10ms\" }")), 1);
    let jit2 = run(&scenario(&text("send_jitter = { dist = \"uniform\", max = \"10ms\" }")), 2);
    let sent = |o: &qoslab_sim::output::RunOutput| u64s(&o.flows, "sent_pkts")[0];
    assert_eq!((sent(&plain), sent(&jit)), (100, 100), "the grid does not drift");
    let arrivals =
        |o: &qoslab_sim::output::RunOutput| series(o, "v.0", "delay_s").iter().map(|(t, _)| *t).collect::<Vec<_>>();
    let (a, b, c) = (arrivals(&plain), arrivals(&jit), arrivals(&jit2));
    let dev: Vec<f64> = a.iter().zip(&b).map(|(x, y)| y - x).collect();
    assert!(dev.iter().all(|d| (-1e-9..0.010 + 1e-9).contains(d)), "{dev:?}");
    // Uniform over [0, 10 ms]: the mean near 5 ms, both halves used.
    let mean = dev.iter().sum::<f64>() / dev.len() as f64;
    assert!((0.0035..0.0065).contains(&mean), "{mean}");
    assert!(dev.iter().filter(|d| **d > 0.005).count() > 30 && dev.iter().filter(|d| **d < 0.005).count() > 30);
    assert!(b.windows(2).all(|w| w[1] >= w[0]), "order holds");
    assert_ne!(b, c, "the seed moves the jitter");
    assert_eq!(b, arrivals(&run(&scenario(&text("send_jitter = { dist = \"uniform\", max = \"10ms\" }")), 1)));
}

#[test]
fn send_jitter_and_packetization_are_refused_where_they_do_not_apply() {
    let base = |extra: &str, model: &str| one_group("jit", model, extra);
    let cbr = "model = \"cbr\"\ninterval = \"20ms\"";
    let has = |d: &[qoslab_scenario::Diagnostic], path: &str, text: &str| {
        assert!(d.iter().any(|d| d.path == path && d.message.contains(text)), "{path} {text}: {d:?}")
    };
    let d = refused(&base("send_jitter = { dist = \"uniform\", max = \"21ms\" }", cbr));
    has(&d, "traffic.0.send_jitter.max", "exceeds the packet spacing (20ms)");
    let d = refused(&base("send_jitter = { dist = \"uniform\", max = \"0ms\" }", cbr));
    has(&d, "traffic.0.send_jitter.max", "above 0");
    // A rate's spacing: 160 B at 64 kb/s = 20 ms.
    let d =
        refused(&base("send_jitter = { dist = \"uniform\", max = \"25ms\" }", "model = \"cbr\"\nrate = \"64kbps\""));
    has(&d, "traffic.0.send_jitter.max", "(20ms)");
    let d =
        refused(&base("send_jitter = { dist = \"uniform\", max = \"5ms\" }", "model = \"poisson\"\nrate = \"64kbps\""));
    has(&d, "traffic.0.send_jitter", "poisson");
    let d = refused(&base("randomize = 0.1\nsend_jitter = { dist = \"uniform\", max = \"5ms\" }", cbr));
    has(&d, "traffic.0.send_jitter", "randomize");
    let d = refused(&base("send_jitter = { dist = \"normal\", max = \"5ms\" }", cbr));
    assert!(d.iter().any(|d| d.path.starts_with("traffic.0.send_jitter")), "{d:?}");
    let d = refused(&base("packetization = \"nominal\"", cbr));
    has(&d, "traffic.0.packetization", "on_off");
    let d = refused(&base(
        "packetization = \"floor\"",
        "model = \"on_off\"\ninterval = \"20ms\"\non = \"1s\"\noff = \"1s\"",
    ));
    assert!(d.iter().any(|d| d.path == "traffic.0.packetization"), "{d:?}");
    // Both accepted where they apply.
    scenario(&base(
        "packetization = \"nominal\"\nsend_jitter = { dist = \"uniform\", max = \"20ms\" }",
        "model = \"on_off\"\ninterval = \"20ms\"\non = \"1s\"\noff = \"1s\"",
    ));
}

/// Six call groups at the same rate over 300 ingresses ([Zhang07]'s MIX over
/// the RTT topology, scaled down): 5 calls/s each for 60 s, 50 ms calls.
fn six_call_groups(src_choice: &str) -> String {
    let mut s = String::from(
        r#"name = "mix"
duration = "60s"
[topology]
preset = "star"
ingresses = 300
access = { rate = "1Gbps", delay = "1ms" }
bottleneck = { rate = "1Gbps", delay = "1ms" }
"#,
    );
    for g in 0..6 {
        s += &format!(
            "[[traffic]]\nname = \"c{g}\"\nmodel = \"cbr\"\ninterval = \"20ms\"\nsize = \"160B\"\nsrc = \"in*\"\n\
             dst = \"sink0\"\n{src_choice}\narrivals = {{ process = \"poisson\", rate = 5.0, lifetime = \"50ms\", \
             lifetime_dist = \"fixed\" }}\n"
        );
    }
    s
}

/// Calls per (ingress, 5 s window): their variance over their mean. A
/// Poisson process at each ingress gives 1; calls in bursts give more.
fn ingress_dispersion(out: &RunOutput) -> f64 {
    let (src, start) = (strs(&out.flows, "src"), f64s(&out.flows, "start_s"));
    let mut cells: BTreeMap<(String, u32), f64> = BTreeMap::new();
    for (s, t) in src.iter().zip(&start) {
        *cells.entry((s.clone(), (*t / 5.0) as u32)).or_default() += 1.0;
    }
    let n = 300.0 * 12.0;
    let mean = cells.values().sum::<f64>() / n;
    let var = (cells.values().map(|c| (c - mean).powi(2)).sum::<f64>() + (n - cells.len() as f64) * mean * mean) / n;
    var / mean
}

/// Round robin hands the six groups' `j`-th calls to the same
/// ingress at nearly the same time (calls in bursts); `src_choice =
/// "random"` spreads them, each ingress seeing a Poisson process of calls.
/// Only the sources change: the calls' start times are the same.
#[test]
fn random_sources_spread_same_rate_groups_over_the_ingresses_and_round_robin_bunches_them() {
    let rr = run(&scenario(&six_call_groups("")), 1);
    let rnd = run(&scenario(&six_call_groups("src_choice = \"random\"")), 1);
    let (d_rr, d_rnd) = (ingress_dispersion(&rr), ingress_dispersion(&rnd));
    assert!(d_rr > 2.0, "round robin: {d_rr}");
    // 3,600 cells at 0.5 calls each: the estimate's sd is about 0.03.
    assert!((0.85..1.15).contains(&d_rnd), "random: {d_rnd}");
    assert_eq!(f64s(&rr.flows, "start_s"), f64s(&rnd.flows, "start_s"));
    assert_eq!(strs(&rr.flows, "name"), strs(&rnd.flows, "name"));
    assert_ne!(strs(&rr.flows, "src"), strs(&rnd.flows, "src"));
    // Deterministic per seed: byte-identical tables; another seed draws others.
    let again = run(&scenario(&six_call_groups("src_choice = \"random\"")), 1);
    assert!(same_table(&rnd.flows, &again.flows) && same_table(&rnd.series, &again.series));
    let other = run(&scenario(&six_call_groups("src_choice = \"random\"")), 2);
    assert_ne!(strs(&rnd.flows, "src"), strs(&other.flows, "src"));
}

#[test]
fn src_choice_is_refused_outside_its_values_and_where_a_flow_could_reach_itself() {
    let d = refused(&one_group("sc", "model = \"cbr\"\ninterval = \"20ms\"", "src_choice = \"shuffle\""));
    assert!(
        d.iter().any(|d| d.path == "traffic.0.src_choice"
            && d.message.contains("round_robin")
            && d.message.contains("random")),
        "{d:?}"
    );
    // One flow: round robin sends it from h0 to h1; at random it may come
    // from h1 itself.
    let topo = explicit(
        &[("h0", "host"), ("h1", "host"), ("r0", "router")],
        &[("h0", "r0", "1Gbps", "1ms"), ("h1", "r0", "1Gbps", "1ms")],
    );
    let text = |extra: &str| {
        format!(
            "name = \"sc\"\nduration = \"1s\"\n{topo}\n[[traffic]]\nname = \"v\"\nmodel = \"cbr\"\n\
             interval = \"20ms\"\nsize = \"160B\"\nflows = 1\nsrc = \"h*\"\ndst = \"h1\"\n{extra}\n"
        )
    };
    let d = refused(&text("src_choice = \"random\""));
    assert!(d.iter().any(|d| d.path == "traffic.0.dst" && d.message.contains("a flow of v")), "{d:?}");
    scenario(&text(""));
    scenario(&text("src_choice = \"round_robin\""));
}
