//! CBT, D-CBT and ChIPS in the simulator (`type = "cbt"`, `"dcbt"`,
//! `chips = ...`), with CBR and Poisson sources only: the mechanisms act on
//! class tags, not on transport behaviour, so unresponsive sources already
//! show each one's effect. Traffic: class 0 ("TCP" tag) Poisson, class 1
//! (tagged) and class 2 (untagged) UDP, into a 10 Mb/s bottleneck.

use crate::common::*;
use qoslab_sim::output::RunOutput;
use std::collections::BTreeMap;

const BOTTLENECK: &str = "r0->sink0";

/// 16 Mb/s offered to 10 Mb/s: 4 x 1.5 Mb/s class 0, 2 x 1 Mb/s tagged,
/// 2 x 4 Mb/s untagged (stopping at `udp_stop`).
fn overload(queue: &str, duration: &str, udp_stop: &str) -> String {
    format!(
        r#"
name = "cbt_overload"
duration = "{duration}"

[topology]
preset = "dumbbell"
sources = 8
access = {{ rate = "100Mbps", delay = "1ms" }}
bottleneck = {{ rate = "10Mbps", delay = "10ms", queue = {queue} }}

[[traffic]]
name = "tcp"
model = "poisson"
flows = 4
src = "src*"
dst = "sink0"
rate = "1.5Mbps"
size = "1000B"
class = 0

[[traffic]]
name = "mm"
model = "poisson"
flows = 2
src = "src*"
dst = "sink0"
rate = "1Mbps"
size = "1000B"
class = 1

[[traffic]]
name = "udp"
model = "cbr"
flows = 2
src = "src*"
dst = "sink0"
rate = "4Mbps"
size = "1000B"
class = 2
stop = "{udp_stop}"
"#
    )
}

const RED: &str = r#"{ type = "red", limit = "60pkts", min_th = 5, max_th = 15 }"#;
const CBT: &str = r#"{ type = "cbt", limit = "60pkts", min_th = 5, max_th = 15 }"#;
const DCBT: &str = r#"{ type = "dcbt", limit = "60pkts", min_th = 5, max_th = 15 }"#;
const DCBT_CHIPS: &str = r#"{ type = "dcbt", limit = "60pkts", min_th = 5, max_th = 15, chips = true }"#;

/// Delivered payload+header bits per second of each group over the run.
fn group_rates(out: &RunOutput, seconds: f64) -> BTreeMap<String, f64> {
    let mut m = BTreeMap::new();
    for (g, b) in strs(&out.flows, "group").into_iter().zip(u64s(&out.flows, "delivered_bytes")) {
        *m.entry(g).or_insert(0.0) += b as f64 * 8.0 / seconds;
    }
    m
}

/// The last sample of a queue metric (cumulative counters: the run's total).
fn last(out: &RunOutput, metric: &str) -> f64 {
    series(out, BOTTLENECK, metric).last().map(|(_, v)| *v).unwrap_or_else(|| panic!("no series {metric}"))
}

/// Mean and max one-way delay over the flows of `group`.
fn group_delay(out: &RunOutput, group: &str) -> (f64, f64) {
    let groups = strs(&out.flows, "group");
    let pick = |col: &str| -> Vec<f64> {
        f64s(&out.flows, col).into_iter().zip(&groups).filter(|(_, g)| *g == group).map(|(v, _)| v).collect()
    };
    let mean = pick("delay_mean_s");
    (mean.iter().sum::<f64>() / mean.len() as f64, pick("delay_max_s").into_iter().fold(0.0, f64::max))
}

#[test]
fn cbt_cuts_an_untagged_overload_to_its_threshold_share_and_red_does_not() {
    let red = run(&scenario(&overload(RED, "20s", "20s")), 1);
    let cbt = run(&scenario(&overload(CBT, "20s", "20s")), 1);
    let (r, c) = (group_rates(&red, 20.0), group_rates(&cbt, 20.0));
    // RED drops in proportion to the offered load: untagged keeps ~10/16 of its 8 Mb/s.
    assert!(r["udp"] > 4.0e6, "RED untagged {r:?}");
    // CBT holds the untagged average at 0.6 packets; with the untagged load
    // cut, the queue stays short, so 0.6 packets is a sizeable share of it.
    assert!(c["udp"] < 0.5 * r["udp"], "CBT untagged {} vs RED {}", c["udp"], r["udp"]);
    assert!(c["tcp"] > 1.3 * r["tcp"], "class 0 gains what untagged loses: {c:?} vs {r:?}");
    assert_eq!(strs(&cbt.queues, "kind")[queue_row(&cbt, BOTTLENECK)], "cbt");
    // Per-class drop counters: class-threshold drops only for UDP, and those
    // dropped at the threshold never reached RED.
    assert!(last(&cbt, "untagged_drops_class_threshold") > 10_000.0);
    assert_eq!(last(&cbt, "tcp_drops_class_threshold"), 0.0);
    let classes = ["tcp", "tagged", "untagged"];
    let arrivals: f64 = classes.iter().map(|c| last(&cbt, &format!("{c}_arrivals"))).sum();
    assert_eq!(arrivals, last(&cbt, "arrivals"));
    for c in classes {
        let drops: f64 = ["overlimit", "early_random", "forced", "class_threshold"]
            .iter()
            .map(|r| last(&cbt, &format!("{c}_drops_{r}")))
            .sum();
        assert_eq!(drops + last(&cbt, &format!("{c}_admitted")), last(&cbt, &format!("{c}_arrivals")), "{c}");
    }
    // The class averages and static thresholds are sampled.
    assert!(series(&cbt, BOTTLENECK, "tagged_th").iter().all(|(_, v)| *v == 2.9));
    assert!(series(&cbt, BOTTLENECK, "untagged_th").iter().all(|(_, v)| *v == 0.6));
    let ua = series(&cbt, BOTTLENECK, "untagged_avg");
    assert!(ua.iter().filter(|(t, _)| *t > 2.0).all(|(_, v)| *v <= 0.9), "untagged average above its threshold");
    // RED has no per-class counters nor class drops.
    assert!(series(&red, BOTTLENECK, "untagged_arrivals").is_empty());
}

#[test]
fn dcbt_thresholds_follow_the_active_flow_counts() {
    let out = run(&scenario(&overload(DCBT, "8s", "4s")), 1);
    let s = |m: &str| series(&out, BOTTLENECK, m);
    let (tcp, tagged, untagged) = (s("flows_tcp"), s("flows_tagged"), s("flows_untagged"));
    let (red_avg, tagged_th, untagged_th) = (s("red_avg"), s("tagged_th"), s("untagged_th"));
    assert_eq!(tcp.len(), red_avg.len());
    assert_eq!(tagged_th.len(), red_avg.len());
    for i in 0..tcp.len() {
        let t = tcp[i].0;
        if t < 0.5 {
            continue; // flows still arriving for the first time
        }
        assert_eq!((tcp[i].1, tagged[i].1), (4.0, 2.0), "t={t}");
        // The untagged flows stop at 4 s and are forgotten within two 300 ms intervals.
        let want_u = if t <= 4.0 {
            2.0
        } else if t >= 4.6 {
            0.0
        } else {
            untagged[i].1
        };
        assert_eq!(untagged[i].1, want_u, "t={t}");
        let n = tcp[i].1 + tagged[i].1 + untagged[i].1;
        assert!((tagged_th[i].1 - red_avg[i].1 * tagged[i].1 / n).abs() < 1e-9, "t={t}");
        // (min_th + max_p (max_th - min_th)) N_untagged / N = 6 N_untagged / N.
        assert!((untagged_th[i].1 - 6.0 * untagged[i].1 / n).abs() < 1e-9, "t={t}");
    }
    assert!(untagged_th.iter().any(|(_, v)| (*v - 1.5).abs() < 1e-12), "2 of 8 flows untagged");
    assert_eq!(untagged_th.last().unwrap().1, 0.0);
    assert!(s("threshold_test_on").iter().any(|(_, v)| *v == 1.0));
    assert!(last(&out, "untagged_drops_class_threshold") > 0.0);
    assert_eq!(strs(&out.queues, "kind")[queue_row(&out, BOTTLENECK)], "dcbt");
}

#[test]
fn chips_lowers_the_tagged_delay_under_dcbt() {
    let plain = run(&scenario(&overload(DCBT, "20s", "20s")), 1);
    let chips = run(&scenario(&overload(DCBT_CHIPS, "20s", "20s")), 1);
    assert_eq!(strs(&chips.queues, "kind")[queue_row(&chips, BOTTLENECK)], "dcbt+chips");
    let (pm, px) = group_delay(&plain, "mm");
    let (cm, cx) = group_delay(&chips, "mm");
    // Propagation and serialization: 2 ms access + 10 ms bottleneck + ~0.9 ms.
    let base = 0.0129;
    assert!(cm - base < 0.8 * (pm - base), "tagged queueing delay: chips {cm} vs {pm}");
    assert!(cx < px, "tagged max delay: chips {cx} vs {px}");
    // ChIPS stays on: 2 tagged of 8 active flows is below the 50 % share.
    assert!(series(&chips, BOTTLENECK, "chips_on").iter().all(|(_, v)| *v == 1.0));
    // Admission is the same decision process: class-0 throughput is not hurt.
    let (a, b) = (group_rates(&plain, 20.0), group_rates(&chips, 20.0));
    assert!(b["tcp"] > 0.95 * a["tcp"], "{b:?} vs {a:?}");
}

#[test]
fn chips_over_red_and_a_disabled_chips_flag_build_the_expected_queues() {
    let on = run(
        &scenario(&overload(
            r#"{ type = "red", limit = "60pkts", min_th = 5, max_th = 15, chips = true }"#,
            "2s",
            "2s",
        )),
        1,
    );
    assert_eq!(strs(&on.queues, "kind")[queue_row(&on, BOTTLENECK)], "red+chips");
    let off = run(
        &scenario(&overload(
            r#"{ type = "cbt", limit = "60pkts", min_th = 5, max_th = 15, chips = false }"#,
            "2s",
            "2s",
        )),
        1,
    );
    assert_eq!(strs(&off.queues, "kind")[queue_row(&off, BOTTLENECK)], "cbt");
    // CBT without ChIPS counts no flows; ChIPS over RED does (for its
    // switch-off share), unless it is always on (share 1).
    assert!(series(&off, BOTTLENECK, "flows_tcp").is_empty());
    assert!(!series(&on, BOTTLENECK, "flows_tcp").is_empty());
    let always = run(
        &scenario(&overload(
            r#"{ type = "red", limit = "60pkts", min_th = 5, max_th = 15, chips = { max_tagged_share = 1.0 } }"#,
            "2s",
            "2s",
        )),
        1,
    );
    assert_eq!(strs(&always.queues, "kind")[queue_row(&always, BOTTLENECK)], "red+chips");
    assert!(series(&always, BOTTLENECK, "flows_tcp").is_empty());
}
