//! The paper traffic models (`model = "voice"`, `"svd"`, `"mgen_periodic"`,
//! `"mgen_poisson"`) give the results of the primitive groups they stand
//! for, as the Python builders wrote them out before the models were part
//! of the format: same echo, same tables, same summary (wall time aside).

use crate::common::*;
use qoslab_sim::output::RunOutput;

const HEAD: &str = r#"name = "paper"
duration = "6s"
[topology]
preset = "dumbbell"
sources = 6
sinks = 2
routers = 2
access = { rate = "100Mbps", delay = "1ms" }
bottleneck = { rate = "12Mbps", delay = "5ms", queue = { type = "fifo", limit = "60pkts" } }
[metrics]
trace_groups = ["mix_g729_vbr", "svd"]
"#;

/// Every paper model, a MIX among them (six groups) and a primitive group after it.
const MODELS: &str = r#"
[[traffic]]
name = "calls"
model = "voice"
src = "src0"
dst = "sink0"
calls_per_s = 3
mean_duration = "2s"
randomize = 0.01
[[traffic]]
name = "mix"
model = "voice"
codec = "mix"
src = "src*"
dst = "sink*"
flows = 2
start_jitter = "20ms"
src_choice = "random"
[[traffic]]
name = "vbr"
model = "voice"
codec = "vbr"
src = "src1"
dst = "sink1"
arrivals = { process = "batch_poisson", rate = 1.5, batch_mean = 2.0, lifetime = "1s" }
[[traffic]]
name = "svd"
model = "svd"
src = "src2"
dst = "sink0"
calls_per_s = 1.25
[[traffic]]
name = "periodic"
model = "mgen_periodic"
src = "src3"
dst = "sink1"
size = 972
pps = 187.5
dscp = 46
[[traffic]]
name = "mgen_poisson"
model = "mgen_poisson"
src = "src4"
dst = "sink0"
size = "100B"
pps = 1500
stop = "4s"
[[traffic]]
name = "after"
model = "poisson"
src = "src5"
dst = "sink1"
size = "500B"
rate = "1Mbps"
"#;

/// The same groups spelled out as `traffic.voice`, `svd`, `mgen_periodic` and `mgen_poisson` did.
fn expansion() -> String {
    let mut s = String::from(
        r#"
[[traffic]]
name = "calls"
model = "cbr"
src = "src0"
dst = "sink0"
size = "160B"
interval = "20ms"
arrivals = { process = "poisson", rate = 3, lifetime = "2s" }
randomize = 0.01
"#,
    );
    for (codec, size, ms, on) in [
        ("g711_cbr_20", 200, 20, 0),
        ("g711_vbr_20", 200, 20, 400),
        ("g711_cbr_10", 120, 10, 0),
        ("g711_vbr_10", 120, 10, 400),
        ("g729_cbr", 60, 20, 0),
        ("g729_vbr", 60, 20, 400),
    ] {
        let model = if on > 0 {
            format!("model = \"on_off\"\non = \"{on}ms\"\noff = \"{}ms\"", 1000 - on)
        } else {
            "model = \"cbr\"".to_string()
        };
        s += &format!(
            "[[traffic]]\nname = \"mix_{codec}\"\n{model}\nsrc = \"src*\"\ndst = \"sink*\"\nsize = \"{size}B\"\n\
             interval = \"{ms}ms\"\nflows = 2\nstart_jitter = \"20ms\"\nsrc_choice = \"random\"\n"
        );
    }
    s + r#"
[[traffic]]
name = "vbr"
model = "on_off"
src = "src1"
dst = "sink1"
size = "160B"
interval = "20ms"
on = "340ms"
off = "660ms"
arrivals = { process = "batch_poisson", rate = 1.5, batch_mean = 2.0, lifetime = "1s" }
[[traffic]]
name = "svd"
model = "on_off"
src = "src2"
dst = "sink0"
size = "1500B"
interval = "1ms"
on = "340ms"
off = "660ms"
arrivals = { process = "poisson", rate = 1.25, lifetime = "60s" }
[[traffic]]
name = "periodic"
model = "cbr"
src = "src3"
dst = "sink1"
size = "972B"
interval = "5333333ns"
header = "28B"
dscp = 46
[[traffic]]
name = "mgen_poisson"
model = "poisson"
src = "src4"
dst = "sink0"
size = "100B"
rate = "1200000bps"
header = "28B"
stop = "4s"
[[traffic]]
name = "after"
model = "poisson"
src = "src5"
dst = "sink1"
size = "500B"
rate = "1Mbps"
"#
}

fn without_wall(out: &RunOutput) -> serde_json::Value {
    let mut s = out.summary.clone();
    s.as_object_mut().unwrap().remove("loop_wall_s");
    s
}

#[test]
fn paper_models_give_the_results_of_the_groups_they_stand_for() {
    let (paper, spelled) = (scenario(&format!("{HEAD}{MODELS}")), scenario(&format!("{HEAD}{}", expansion())));
    assert_eq!(paper.traffic, spelled.traffic, "the expansion");
    assert_eq!(paper.traffic.len(), 12);
    let (a, b) = (run(&paper, 5), run(&spelled, 5));
    assert!(same_table(&a.flows, &b.flows) && same_table(&a.queues, &b.queues));
    assert!(same_table(&a.series, &b.series) && same_table(&a.events, &b.events));
    assert_eq!(without_wall(&a), without_wall(&b));
    // Every group sent something (the comparison is not of empty runs).
    let groups = a.summary["groups"].as_object().unwrap();
    assert_eq!(groups.len(), 12);
    assert!(groups.values().all(|g| g["sent_pkts"].as_u64().unwrap() > 0), "{groups:?}");
}

#[test]
fn a_paper_models_bad_parameter_is_named() {
    let bad = MODELS.replace("codec = \"vbr\"", "codec = \"g723\"").replace("pps = 187.5", "pps = 0");
    let ds = refused(&format!("{HEAD}{bad}"));
    let paths: Vec<&str> = ds.iter().map(|d| d.path.as_str()).collect();
    assert_eq!(paths, ["traffic.2.codec", "traffic.4.pps"], "{ds:?}");
    assert!(ds.iter().all(|d| d.line.is_some()), "{ds:?}");
}
