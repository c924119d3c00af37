//! Link timing and routing, end to end through the simulator.

use crate::common::*;

/// One packet of 1000 B over h0 -(8 Mb/s, 1 ms)- r0 -(4 Mb/s, 3 ms)- h1:
/// 1 ms + 1 ms + 2 ms + 3 ms = 7 ms exactly.
#[test]
fn single_packet_arrives_after_tx_plus_delay_per_hop_exactly() {
    let topo = explicit(
        &[("h0", "host"), ("r0", "router"), ("h1", "host")],
        &[("h0", "r0", "8Mbps", "1ms"), ("r0", "h1", "4Mbps", "3ms")],
    );
    let sc = scenario(&format!(
        r#"name = "timing"
duration = "1s"
{topo}
[[traffic]]
name = "one"
model = "cbr"
interval = "10s"
src = "h0"
dst = "h1"
size = "1000B"
start = "100ms"
[metrics]
trace_flows = ["one.0"]
"#
    ));
    let out = run(&sc, 1);
    assert_eq!(u64s(&out.flows, "delivered_pkts"), vec![1]);
    assert_eq!(f64s(&out.flows, "delay_max_s"), vec![0.007]);
    assert_eq!(series(&out, "one.0", "delay_s"), vec![(0.107, 0.007)]);
}

/// Back-to-back packets leave a link at exactly its rate: 100 packets of
/// 125 B queued at once on a 1 Mb/s link arrive 1 ms apart.
#[test]
fn back_to_back_packets_are_spaced_by_their_transmission_time() {
    let topo = explicit(
        &[("a", "host"), ("r", "router"), ("b", "host")],
        &[("a", "r", "1Gbps", "0ms"), ("r", "b", "1Mbps", "5ms")],
    );
    let sc = scenario(&format!(
        r#"name = "spacing"
duration = "1s"
{topo}
[[traffic]]
name = "burst"
model = "cbr"
interval = "1ns"
src = "a"
dst = "b"
size = "125B"
stop = "100ns"
[metrics]
trace_flows = ["burst.0"]
"#
    ));
    let out = run(&sc, 1);
    let tr = series(&out, "burst.0", "delay_s");
    assert_eq!(tr.len(), 100);
    let arrivals: Vec<u64> = tr.iter().map(|(t, _)| (t * 1e9).round() as u64).collect();
    for w in arrivals.windows(2) {
        assert_eq!(w[1] - w[0], 1_000_000);
    }
    // First: 1 ns at 1 Gb/s on the access link, then 1 ms + 5 ms.
    assert_eq!(arrivals[0], 1_000 + 1_000_000 + 5_000_000);
}

/// Routes take the fewest hops (not the least delay); among equally short
/// ones the next hop over the lowest link index.
#[test]
fn routing_takes_fewest_hops_then_lowest_link_index() {
    // s - r0 - r1 - r2 - d   (3 router hops, 1 ms links)
    // s - r0 - r3 - d        (shorter: 10 ms links, chosen despite the delay)
    // s - r0 - r4 - d        (as short as via r3, higher link indices, 1 ms)
    let topo = explicit(
        &[
            ("s", "host"),
            ("d", "host"),
            ("r0", "router"),
            ("r1", "router"),
            ("r2", "router"),
            ("r3", "router"),
            ("r4", "router"),
        ],
        &[
            ("s", "r0", "1Gbps", "0ms"),
            ("r0", "r1", "1Gbps", "1ms"),
            ("r1", "r2", "1Gbps", "1ms"),
            ("r2", "d", "1Gbps", "1ms"),
            ("r0", "r3", "1Gbps", "10ms"),
            ("r3", "d", "1Gbps", "10ms"),
            ("r0", "r4", "1Gbps", "1ms"),
            ("r4", "d", "1Gbps", "1ms"),
        ],
    );
    let sc = scenario(&format!(
        r#"name = "routes"
duration = "1s"
{topo}
[[traffic]]
name = "f"
model = "cbr"
interval = "10s"
src = "s"
dst = "d"
size = "125B"
"#
    ));
    let out = run(&sc, 1);
    let d = f64s(&out.flows, "delay_max_s")[0];
    // 3 transmissions of 1 us plus 20 ms of propagation: via r3.
    assert!((d - 0.020003).abs() < 1e-9, "{d}");
    let arrivals = u64s(&out.queues, "arrivals");
    assert_eq!(arrivals[queue_row(&out, "r0->r3")], 1);
    assert_eq!(arrivals[queue_row(&out, "r0->r4")], 0);
    assert_eq!(arrivals[queue_row(&out, "r0->r1")], 0);
}

#[test]
fn unreachable_destination_is_a_config_error_naming_the_group() {
    // h0 - r0, and h1 - h2 - ... : h1 reachable only through a host.
    let topo = explicit(
        &[("h0", "host"), ("r0", "router"), ("hx", "host"), ("h1", "host")],
        &[("h0", "r0", "1Gbps", "1ms"), ("r0", "hx", "1Gbps", "1ms"), ("hx", "h1", "1Gbps", "1ms")],
    );
    let ds = refused(&format!(
        r#"name = "unreachable"
duration = "1s"
{topo}
[[traffic]]
name = "ok"
model = "cbr"
interval = "1s"
src = "h0"
dst = "hx"
size = "100B"
[[traffic]]
name = "bad"
model = "cbr"
interval = "1s"
src = "h0"
dst = "h1"
size = "100B"
"#
    ));
    // Validation refuses it: one message, naming the group's destination.
    assert_eq!(ds.len(), 1, "{ds:?}");
    assert_eq!(ds[0].path, "traffic.1.dst");
    assert!(ds[0].message.contains("no route from \"h0\" to \"h1\""), "{}", ds[0]);
}

#[test]
fn progress_is_reported_and_can_interrupt() {
    let sc = scenario(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/red_dumbbell.toml")).unwrap(),
    );
    let mut seen = Vec::new();
    let mut cb = |f: f64| {
        seen.push(f);
        seen.len() < 3
    };
    let opts = qoslab_sim::RunOptions { seed: 1, base_dir: ".".into(), progress: Some(&mut cb) };
    assert!(matches!(qoslab_sim::run::run(&sc, opts), Err(qoslab_sim::SimError::Interrupted)));
    assert_eq!(seen.len(), 3);
    assert!(seen.windows(2).all(|w| w[0] <= w[1]) && seen.iter().all(|f| (0.0..=1.0).contains(f)), "{seen:?}");
}

/// RED's idle period starts when the transmitter finds its queue empty,
/// even though the simulator makes no event for that instant (the owed
/// dequeue): three 125 B packets at t = 0, 1 ns, 2 ns on a 1 Mb/s link
/// (1 ms each), w_q = 0.5: the third arrival sees q = 1 (avg 0.5); the
/// link goes idle at 3 ms; a fourth packet at 10 ms decays the average
/// over m = 7 ms / 8 ms (s: 1000 B at 1 Mb/s): avg = 0.5 * 0.5^0.875.
#[test]
fn red_idle_period_starts_when_the_last_transmission_ends() {
    let topo = explicit(
        &[("a", "host"), ("r", "router"), ("b", "host")],
        &[("a", "r", "10Gbps", "0ms"), ("r", "b", "1Mbps", "1ms")],
    );
    let topo = topo.replace(
        "{ a = \"r\", b = \"b\", rate = \"1Mbps\", delay = \"1ms\" }",
        "{ a = \"r\", b = \"b\", rate = \"1Mbps\", delay = \"1ms\", queue = { type = \"red\", limit = \"10pkts\", min_th = 5, max_th = 9, w_q = 0.5 } }",
    );
    let sc = scenario(&format!(
        r#"name = "idle"
duration = "40ms"
{topo}
[[traffic]]
name = "burst"
model = "cbr"
interval = "1ns"
src = "a"
dst = "b"
size = "125B"
stop = "3ns"
[[traffic]]
name = "late"
model = "cbr"
interval = "1s"
src = "a"
dst = "b"
size = "125B"
start = "10ms"
[metrics]
series_interval = "20ms"
"#
    ));
    let out = run(&sc, 1);
    let avg = series(&out, "r->b", "red_avg");
    // Access serialization (0.1 ns rounds to 0 or 1 ns) shifts arrivals by
    // at most a few ns: negligible against ms.
    let expect = 0.5 * 0.5f64.powf(7.0 / 8.0);
    assert_eq!(avg.len(), 2);
    assert!((avg[0].1 - expect).abs() < 1e-6, "{} vs {expect}", avg[0].1);
}

/// The simulator checks what it relies on even of a validated scenario,
/// and says which field is wrong.
#[test]
fn bad_scenarios_are_config_errors_naming_the_field() {
    let topo = explicit(
        &[("h0", "host"), ("r0", "router"), ("h1", "host")],
        &[("h0", "r0", "1Gbps", "1ms"), ("r0", "h1", "1Gbps", "1ms")],
    );
    let base = |duration: &str, src: &str, extra: &str| {
        refused(&format!(
            "name = \"bad\"\nduration = \"{duration}\"\n{topo}\n[[traffic]]\nname = \"g\"\nmodel = \"cbr\"\ninterval = \"1ms\"\nsrc = \"{src}\"\ndst = \"h1\"\nsize = \"100B\"\n{extra}"
        ))
    };
    // Each problem has one message, the loader's validation's.
    let path_of = |ds: Vec<qoslab_scenario::Diagnostic>| {
        assert_eq!(ds.len(), 1, "{ds:?}");
        ds[0].path.clone()
    };
    assert_eq!(path_of(base("0s", "h0", "")), "duration");
    assert_eq!(path_of(base("1s", "nobody*", "")), "traffic.0.src");
    assert_eq!(path_of(base("1s", "r0", "")), "traffic.0.src");
    assert_eq!(path_of(base("1s", "h1", "")), "traffic.0.dst");
    assert_eq!(path_of(base("1s", "h0", "[metrics]\ntrace_flows = [\"nope.1\"]\n")), "metrics.trace_flows.0");
    assert_eq!(path_of(base("1s", "h0", "[metrics]\nbin = \"0s\"\n")), "metrics.bin");
    // A link without rate (the simulator used to say so too; now validation alone does).
    let zero = format!("name = \"z\"\nduration = \"1s\"\n{}\n", topo.replacen("1Gbps", "0bps", 1));
    assert_eq!(path_of(refused(&zero)), "topology.links.0.rate");
    // A bad queue is reported at its path with the mechanism's message.
    let ds = refused(&format!(
        "name = \"badq\"\nduration = \"1s\"\n{}\n",
        topo.replace(
            "{ a = \"r0\", b = \"h1\", rate = \"1Gbps\", delay = \"1ms\" }",
            "{ a = \"r0\", b = \"h1\", rate = \"1Gbps\", delay = \"1ms\", queue = { type = \"red\", limit = \"60pkts\", min_th = 15, max_th = 5 } }"
        )
    ));
    assert_eq!(ds.len(), 1, "{ds:?}");
    assert_eq!(
        (ds[0].path.as_str(), ds[0].message.as_str()),
        ("topology.links.1.queue.max_th", "red.max_th (5) must exceed min_th (15)")
    );
}
