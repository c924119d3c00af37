//! Same scenario and seed: identical results (the loop's wall time aside);
//! different seeds: different results whenever anything is random.

use crate::common::*;
use qoslab_sim::output::RunOutput;

const MIXED: &str = r#"name = "mixed"
duration = "8s"
[topology]
preset = "dumbbell"
sources = 4
routers = 2
sinks = 2
access = { rate = "20Mbps", delay = "2ms" }
bottleneck = { rate = "4Mbps", delay = "10ms", queue = { type = "red", limit = "40pkts", min_th = 4, max_th = 12 } }
[[traffic]]
name = "p"
model = "poisson"
rate = "1.5Mbps"
flows = 3
src = "src*"
dst = "sink*"
size = { base = "200B", exp_mean = "600B" }
[[traffic]]
name = "o"
model = "on_off"
peak = "2Mbps"
on = "300ms"
off = "300ms"
dist = "pareto"
src = "src3"
dst = "sink0"
size = "1000B"
arrivals = { process = "poisson", rate = 2.0, lifetime = "1s" }
[metrics]
trace_groups = ["p"]
"#;

fn without_wall(out: &RunOutput) -> serde_json::Value {
    let mut s = out.summary.clone();
    s.as_object_mut().unwrap().remove("loop_wall_s");
    s
}

fn same(a: &RunOutput, b: &RunOutput) -> bool {
    same_table(&a.flows, &b.flows)
        && same_table(&a.queues, &b.queues)
        && same_table(&a.series, &b.series)
        && same_table(&a.events, &b.events)
        && without_wall(a) == without_wall(b)
}

#[test]
fn same_seed_gives_identical_results() {
    let sc = scenario(MIXED);
    let (a, b) = (run(&sc, 42), run(&sc, 42));
    assert!(same(&a, &b));
    assert!(a.series.rows() > 1000 && a.flows.rows() > 5);
    assert_eq!(a.summary["seed"], 42);
}

#[test]
fn different_seeds_give_different_results() {
    let sc = scenario(MIXED);
    let (a, b) = (run(&sc, 1), run(&sc, 2));
    assert!(!same_table(&a.flows, &b.flows));
    assert!(!same_table(&a.series, &b.series));
}

#[test]
fn summary_has_the_documented_keys() {
    let out = run(&scenario(MIXED), 3);
    let s = out.summary.as_object().unwrap();
    for k in [
        "scenario",
        "seed",
        "qoslab_version",
        "sim_time_s",
        "loop_wall_s",
        "events",
        "flows",
        "classes",
        "groups",
        "queues",
        "bottleneck",
        "packets",
    ] {
        assert!(s.contains_key(k), "missing {k}");
    }
    assert_eq!(out.summary["sim_time_s"], 8.0);
    assert_eq!(out.summary["scenario"]["name"], "mixed");
    // Defaults are filled in in the echo: the bin of this 8 s run is a tenth of it, rounded
    // down to 1, 2 or 5 x 10^k (runs of 30 s and more get 10 s).
    assert_eq!(out.summary["scenario"]["metrics"]["bin"], "500ms");
    assert_eq!(out.summary["bottleneck"]["name"], "r0->r1");
    let flows = &out.summary["flows"];
    assert_eq!(flows["count"].as_u64().unwrap() as usize, out.flows.rows());
    assert_eq!(flows["admitted"], flows["count"]);
    let g = &out.summary["groups"]["p"];
    assert_eq!(g["flows"], 3);
    assert!(g["fairness_jain"].as_f64().unwrap() > 0.3);
}
