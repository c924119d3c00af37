//! Which queues the series table samples ("series only where
//! asked"): by default the preset's bottleneck, the queues with their own
//! rule to drop or mark, and any other router queue once it has dropped or
//! marked; with `metrics.series`, exactly the directions it names.

use crate::common::*;
use std::collections::{BTreeMap, BTreeSet};

/// Greedy Reno flows over a 2-router dumbbell with a drop-tail bottleneck:
/// its ACKs come back through `r0->src<i>`, which never drop.
fn reno(extra: &str) -> String {
    format!(
        "name = \"sel\"\nduration = \"5s\"\n[topology]\npreset = \"dumbbell\"\nsources = 4\nrouters = 2\n\
         access = {{ rate = \"100Mbps\", delay = \"1ms\" }}\n\
         bottleneck = {{ rate = \"2Mbps\", delay = \"10ms\", queue = {{ type = \"fifo\", limit = \"20pkts\" }} }}\n\
         [[traffic]]\nname = \"ftp\"\nmodel = \"ftp\"\nflows = 4\nsrc = \"src*\"\ndst = \"sink0\"\nsize = \"1000B\"\n\
         header = \"40B\"\n{extra}"
    )
}

/// The queue entities of the series, with the time of their first row.
fn sampled(out: &qoslab_sim::output::RunOutput) -> BTreeMap<String, f64> {
    let s = &out.series;
    let (t, kind, id) = (f64s(s, "t_s"), strs(s, "entity_kind"), strs(s, "entity_id"));
    let mut m = BTreeMap::new();
    for i in 0..t.len() {
        if kind[i] == "queue" {
            m.entry(id[i].clone()).or_insert(t[i]);
        }
    }
    m
}

#[test]
fn by_default_only_the_bottleneck_is_sampled_not_the_ack_return_or_egress_ports() {
    let out = run(&scenario(&reno("")), 1);
    let got: BTreeSet<String> = sampled(&out).into_keys().collect();
    assert_eq!(got, BTreeSet::from(["r0->r1".to_string()]), "{got:?}");
    // The ACK-return ports carried packets: they are in the queues table.
    let q = &out.queues;
    let names = strs(q, "name");
    let arrivals = u64s(q, "arrivals");
    let ack_port = names.iter().position(|n| n == "r0->src0").expect("r0->src0 row");
    assert!(arrivals[ack_port] > 100, "ACKs went through r0->src0");
}

#[test]
fn metrics_series_names_exactly_the_sampled_directions() {
    let out = run(&scenario(&reno("[metrics]\nseries = [\"r0->src*\", \"r1->*\"]\n")), 1);
    let got: BTreeSet<String> = sampled(&out).into_keys().collect();
    // r0->r1, the bottleneck, is not named; r1->r0 carries ACKs.
    let want: BTreeSet<String> =
        ["r0->src0", "r0->src1", "r0->src2", "r0->src3", "r1->r0", "r1->sink0"].map(String::from).into();
    assert_eq!(got, want);
}

#[test]
fn a_quiet_router_queue_joins_the_series_after_its_first_drop() {
    // The egress r1->sink0 is slower than the bottleneck: a drop-tail queue
    // that is neither the preset's bottleneck nor a marking discipline,
    // sampled only once it overflows; its reason counter starts non-zero.
    let text = reno("[metrics]\nseries_interval = \"100ms\"\n").replace(
        "[[traffic]]",
        "[topology.egress]\nrate = \"1Mbps\"\ndelay = \"1ms\"\nqueue = { type = \"fifo\", limit = \"10pkts\" }\n[[traffic]]",
    );
    let out = run(&scenario(&text), 1);
    let first = sampled(&out);
    let egress_first = *first.get("r1->sink0").expect("the overflowing egress is sampled");
    assert!(egress_first > 0.0, "it joins at a sample after its first drop, not from the start");
    assert_eq!(first.get("r0->r1"), Some(&0.1), "the bottleneck from the first sample after its first packet");
    let s = &out.series;
    let (t, id, metric, value) = (f64s(s, "t_s"), strs(s, "entity_id"), strs(s, "metric"), f64s(s, "value"));
    let drops: Vec<(f64, f64)> = (0..t.len())
        .filter(|&i| id[i] == "r1->sink0" && metric[i] == "drops_overlimit")
        .map(|i| (t[i], value[i]))
        .collect();
    assert_eq!(drops.first().map(|d| d.0), Some(egress_first));
    assert!(drops[0].1 > 0.0, "its first sample follows a drop: {drops:?}");
    // Its first sample has no utilization (there is no interval start).
    let util_first = (0..t.len()).find(|&i| id[i] == "r1->sink0" && metric[i] == "utilization").map(|i| t[i]);
    assert!(util_first.is_none_or(|u| u >= egress_first), "{util_first:?}");
    assert_flows_conserved(&out, "egress");
}
