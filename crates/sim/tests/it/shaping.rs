//! Per-flow entry shapers and the shaping CAC at flow start ([Tarasiuk05]
//! §2, §4): exact conformance and zero drift of a shaped CBR flow, drops
//! only with a shaper buffer, the shaper's wait in the flow's delay,
//! scheme #1 blocking against Erlang-B, scheme #2 re-shaping at arrivals
//! and departures, scheme #3's assigned rate, and configuration errors.

use crate::common::*;
use qoslab_core::admission::cac::{erlang_b, rho_mdl1};
use qoslab_scenario::ValidScenario;

/// One source host, a router, a sink; 100 Mb/s links with 1 ms delay.
fn net(body: &str, duration: &str) -> ValidScenario {
    net_with("", body, duration)
}

/// [`net`] with top-level keys `pre` (before the tables).
fn net_with(pre: &str, body: &str, duration: &str) -> ValidScenario {
    scenario(&net_text(pre, body, duration))
}

/// The text of [`net_with`].
fn net_text(pre: &str, body: &str, duration: &str) -> String {
    format!(
        r#"name = "shaping"
duration = "{duration}"
{pre}
[topology]
preset = "dumbbell"
sources = 1
access = {{ rate = "100Mbps", delay = "1ms" }}
bottleneck = {{ rate = "100Mbps", delay = "1ms" }}
{body}"#
    )
}

fn cbr_shaped(extra: &str, duration: &str) -> ValidScenario {
    net(
        &format!(
            r#"[[traffic]]
name = "c"
model = "cbr"
rate = "10Mbps"
src = "src0"
dst = "sink0"
size = "1000B"
shaper = {{ rate = "1Mbps", depth = "1pkt"{extra} }}
[metrics]
trace_flows = ["c.0"]
"#
        ),
        duration,
    )
}

/// A 10 Mb/s CBR flow shaped to 1 Mb/s: one 1000 B packet every 8 ms, exactly.
#[test]
fn shaped_cbr_leaves_at_exactly_the_shaping_rate_without_drift() {
    let out = run(&cbr_shaped("", "200s"), 1);
    let arrivals: Vec<f64> = series(&out, "c.0", "delay_s").iter().map(|(t, _)| *t).collect();
    // Released at k * 8 ms (the bucket starts full), all with the same path latency.
    let latency = arrivals[0];
    assert!(arrivals.len() > 24_000, "{}", arrivals.len());
    for (k, t) in arrivals.iter().enumerate() {
        let released = t - latency;
        // Output never above R t + depth: (k + 1) packets by k * 8 ms, and no later (no drift).
        assert!((released - k as f64 * 0.008).abs() < 1e-9, "packet {k} released at {released}");
        assert!(((k + 1) * 8000) as f64 <= 1e6 * released + 8000.0 + 1e-3);
    }
    // Every 8 ms over the run: the last release at or before 200 s - latency.
    let expected = ((200.0 - latency) / 0.008).floor() as u64 + 1;
    assert_eq!(u64s(&out.flows, "delivered_pkts"), vec![expected]);
    // No buffer: the shaper only delays.
    assert_eq!(u64s(&out.flows, "dropped_pkts"), vec![0]);
    assert_eq!(u64s(&out.flows, "sent_pkts"), vec![250_000]);
    // The shaper's wait counts in the delay: packet k waits k * 7.2 ms.
    let dmax = f64s(&out.flows, "delay_max_s")[0];
    assert!(dmax > 0.9 * 200.0 * 0.9, "{dmax}");
}

#[test]
fn shaper_drops_only_when_its_buffer_is_set_and_full() {
    let out = run(&cbr_shaped(", buffer = \"10pkts\"", "20s"), 1);
    let sent = u64s(&out.flows, "sent_pkts")[0];
    let delivered = u64s(&out.flows, "delivered_pkts")[0];
    let dropped = u64s(&out.flows, "dropped_pkts")[0];
    // The same 1 Mb/s output...
    assert_eq!(delivered, series(&out, "c.0", "delay_s").len() as u64);
    assert!((2499..=2501).contains(&delivered), "{delivered}");
    // ...and the rest dropped, except at most 10 packets held in the shaper and one in flight.
    assert!(sent - delivered - dropped <= 11, "{sent} {delivered} {dropped}");
    assert!(dropped > 22_000, "{dropped}");
    // With a short buffer the wait stays below 11 packet times at 1 Mb/s.
    assert!(f64s(&out.flows, "delay_max_s")[0] < 11.0 * 0.008 + 0.01);
}

fn cac(admission: &str, traffic: &str, duration: &str) -> ValidScenario {
    net_with(&format!("admission = {admission}"), traffic, duration)
}

fn decisions(out: &qoslab_sim::output::RunOutput) -> (Vec<String>, Vec<String>) {
    let kinds = strs(&out.events, "kind");
    let details = strs(&out.events, "detail");
    let idx: Vec<usize> = (0..kinds.len()).filter(|i| kinds[*i] == "admit" || kinds[*i] == "reject").collect();
    (idx.iter().map(|i| kinds[*i].clone()).collect(), idx.iter().map(|i| details[*i].clone()).collect())
}

fn field(detail: &str, key: &str) -> u64 {
    detail
        .split(' ')
        .find_map(|w| w.strip_prefix(key))
        .and_then(|v| v.trim_end_matches("bps").parse().ok())
        .unwrap_or_else(|| panic!("no {key} in {detail:?}"))
}

/// Poisson arrivals of 10 s CBR flows, each asking for 1 Mb/s: scheme #1
/// is a loss system with N_max = 74 servers (ρ = 0.743 at B = 10, IPLR 1e-3).
#[test]
fn scheme1_blocking_matches_erlang_b() {
    let traffic = r#"[[traffic]]
name = "f"
model = "cbr"
interval = "200ms"
src = "src0"
dst = "sink0"
size = "100B"
arrivals = { process = "poisson", rate = 7.0, lifetime = "10s", lifetime_dist = "fixed" }
"#;
    let sc = cac(r#"{ type = "shaping_cac", scheme = 1, r_req = "1Mbps" }"#, traffic, "2000s");
    let out = run(&sc, 3);
    let (kinds, details) = decisions(&out);
    // Skip the first 20 s (the system fills up from empty).
    let t: Vec<f64> = f64s(&out.events, "t_s");
    let k_all = strs(&out.events, "kind");
    let steady: Vec<usize> =
        (0..t.len()).filter(|i| t[*i] >= 20.0 && (k_all[*i] == "admit" || k_all[*i] == "reject")).collect();
    let blocked = steady.iter().filter(|i| k_all[**i] == "reject").count() as f64;
    let p = blocked / steady.len() as f64;
    let eb = erlang_b(74, 70.0).unwrap();
    // ~13,800 requests, ~800 blocked; blocking comes in bursts, so 15%.
    assert!((p - eb).abs() < 0.15 * eb, "blocking {p} vs Erlang-B {eb}");
    // A blocked request finds all 74 slots taken; admitted ones fewer.
    for (k, d) in kinds.iter().zip(&details) {
        let running = field(d, "running=");
        if k == "reject" {
            assert_eq!(running, 74, "{d}");
        } else {
            assert!(running < 74, "{d}");
            assert_eq!(field(d, "assigned="), 1_000_000, "{d}");
        }
    }
}

/// Scheme #2 (C/n, C = 8 Mb/s here): two greedy 4 Mb/s flows alone get
/// 4 Mb/s each; while two more run (10-15 s) every flow gets 2 Mb/s; after
/// they leave, the first two are back at 4 Mb/s.
#[test]
fn scheme2_reshapes_every_flow_at_arrivals_and_departures() {
    let group = |name: &str, start: &str, stop: &str| {
        format!(
            r#"[[traffic]]
name = "{name}"
model = "cbr"
rate = "4Mbps"
flows = 2
src = "src0"
dst = "sink0"
size = "1000B"
start = "{start}"
stop = "{stop}"
shaper = {{ buffer = "20pkts" }}
"#
        )
    };
    let traffic = format!("{}{}", group("a", "0s", "20s"), group("b", "10s", "15s"));
    let sc = cac(
        r#"{ type = "shaping_cac", scheme = 2, capacity = "8Mbps", r_req = "1Mbps", buffer = 50 }"#,
        &traffic,
        "20s",
    );
    let out = run(&sc, 1);
    let (kinds, details) = decisions(&out);
    assert!(kinds.iter().all(|k| k == "admit"), "{kinds:?}");
    assert_eq!(
        details.iter().map(|d| field(d, "assigned=")).collect::<Vec<_>>(),
        [8e6 as u64, 4e6 as u64, 8e6 as u64 / 3, 2e6 as u64]
    );
    let bits: Vec<f64> = u64s(&out.flows, "delivered_bytes").iter().map(|b| *b as f64 * 8.0).collect();
    // a: 4 Mb/s for 15 s, 2 Mb/s for 5 s = 70 Mbit; b: 2 Mb/s for 5 s = 10 Mbit
    // (within 21 packets: the buffer and the bucket).
    for (i, want) in [70e6, 70e6, 10e6, 10e6].iter().enumerate() {
        assert!((bits[i] - want).abs() < 21.0 * 8000.0, "flow {i}: {} vs {want}", bits[i]);
    }
}

/// Scheme #2 blocks only at the CAC limit: at 2 arrivals/s of 10 s flows
/// (20 erlangs against N_max = 74) it never blocks.
#[test]
fn scheme2_never_blocks_below_the_cac_limit() {
    let traffic = r#"[[traffic]]
name = "f"
model = "cbr"
interval = "500ms"
src = "src0"
dst = "sink0"
size = "100B"
arrivals = { process = "poisson", rate = 2.0, lifetime = "10s", lifetime_dist = "fixed" }
"#;
    let sc = cac(r#"{ type = "shaping_cac", scheme = 2, r_req = "1Mbps" }"#, traffic, "300s");
    let (kinds, details) = decisions(&run(&sc, 2));
    assert!(kinds.len() > 500);
    assert!(kinds.iter().all(|k| k == "admit"));
    // Each new flow gets C / n with n counting itself.
    for d in &details {
        assert_eq!(field(d, "assigned="), 100_000_000 / (field(d, "running=") + 1), "{d}");
    }
}

#[test]
fn scheme3_assigns_a_share_of_the_spare_capacity_and_keeps_it() {
    let traffic = r#"[[traffic]]
name = "f"
model = "cbr"
interval = "100ms"
flows = 3
src = "src0"
dst = "sink0"
size = "100B"
"#;
    let sc = cac(r#"{ type = "shaping_cac", scheme = 3, r_req = "1Mbps", k = 3 }"#, traffic, "2s");
    let (_, details) = decisions(&run(&sc, 1));
    let rho_c = rho_mdl1(10, 1e-3).unwrap() * 100e6;
    let mut sum = 0u64;
    for d in &details {
        let want = ((rho_c - sum as f64) / 3.0).floor() as u64;
        assert_eq!(field(d, "assigned="), want.max(1_000_000), "{d}");
        sum += want;
    }
}

#[test]
fn bad_shaper_and_cac_settings_are_refused_by_validation_naming_the_field() {
    let paths = |ds: Vec<qoslab_scenario::Diagnostic>| ds.into_iter().map(|d| d.path).collect::<Vec<_>>();
    let mut sc = cbr_shaped("", "1s").into_scenario();
    sc.traffic[0].shaper.as_mut().unwrap().rate = None;
    assert_eq!(paths(try_valid(sc).unwrap_err()), ["traffic.0.shaper.rate"]);
    let traffic =
        "[[traffic]]\nname = \"f\"\nmodel = \"cbr\"\nrate = \"1Mbps\"\nsrc = \"src0\"\ndst = \"sink0\"\nsize = \"100B\"\n";
    let bad = net_text(r#"admission = { type = "shaping_cac", scheme = 2, iplr = 1.5 }"#, traffic, "1s");
    assert_eq!(paths(try_valid(model(&bad)).unwrap_err()), ["admission.iplr"]);
}

/// A greedy TCP connection shaped at 1 Mb/s: it gets exactly the shaping
/// rate, and its window (44 segments of 1500 B) waits in the shaper, so the
/// segments' delay (and the sender's RTT) includes ~43 x 12 ms of shaping.
#[test]
fn tcp_through_a_shaper_gets_the_shaping_rate_and_waits_in_it() {
    let sc = net(
        r#"[[traffic]]
name = "ftp"
model = "ftp"
src = "src0"
dst = "sink0"
size = "1460B"
header = "40B"
tcp = { max_window = 44, rwnd = 44 }
shaper = { rate = "1Mbps" }
"#,
        "30s",
    );
    let out = run(&sc, 1);
    let bits = u64s(&out.flows, "delivered_bytes")[0] as f64 * 8.0;
    // 1 Mb/s of wire bits, one packet time (12 ms) of slack at each end.
    assert!((bits - 30e6).abs() <= 3.0 * 12_000.0, "{bits}");
    assert_eq!(u64s(&out.flows, "dropped_pkts"), vec![0]);
    assert_eq!(u64s(&out.flows, "timeouts"), vec![0]);
    let d = f64s(&out.flows, "delay_mean_s")[0];
    assert!(d > 0.4 && d < 0.53, "{d}");
}
