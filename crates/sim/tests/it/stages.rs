//! Port stages in scenarios, end to end: a token-bucket policer on a link
//! direction (the stage added to show docs/architecture.md's recipe).

use crate::common::*;
use qoslab_scenario::load::load_str;

fn policed(stage: &str, reverse: bool) -> String {
    let field = if reverse { "reverse_stages" } else { "stages" };
    format!(
        r#"name = "policed"
duration = "10s"
[topology]
preset = "explicit"
nodes = [{{ name = "h0", kind = "host" }}, {{ name = "r0", kind = "router" }}, {{ name = "h1", kind = "host" }}]
links = [
  {{ a = "h0", b = "r0", rate = "100Mbps", delay = "1ms" }},
  {{ a = "r0", b = "h1", rate = "100Mbps", delay = "1ms", {field} = [{stage}] }},
]
[[traffic]]
name = "cbr"
model = "cbr"
rate = "2Mbps"
src = "h0"
dst = "h1"
size = "1000B"
header = "0B"
"#
    )
}

#[test]
fn policer_stage_passes_rate_times_time_plus_depth_and_counts_policed_drops() {
    let text = policed(r#"{ type = "policer", rate = "1Mbps", depth = "3000B" }"#, false);
    let sc = load_str(&text, "policed.toml", &[], None).unwrap_or_else(|e| panic!("{e}"));
    let out = run(&sc, 1);
    let sent = u64s(&out.flows, "sent_pkts")[0];
    let delivered = u64s(&out.flows, "delivered_pkts")[0];
    let dropped = u64s(&out.flows, "dropped_pkts")[0];
    // 2 Mb/s offered for 10 s = 2500 packets of 1000 B; the policer passes
    // 3 packets at once, then one per 8 ms (1 Mb/s): 3 + floor(9.996 s / 8 ms) = 1252.
    assert_eq!(sent, 2500);
    assert_eq!(delivered + dropped + u64s(&out.flows, "in_flight_pkts")[0], sent);
    assert!(delivered <= 1253, "{delivered} packets passed 1 Mb/s + 3000 B over 10 s");
    assert!(delivered >= 1240, "{delivered} packets passed");
    let q = queue_row(&out, "r0->h1");
    assert_eq!(u64s(&out.queues, "drops_policed")[q], dropped, "every drop is the policer's");
    assert_eq!(u64s(&out.queues, "arrivals")[q], sent, "the port's arrivals include what its stage dropped");
    assert_eq!(u64s(&out.queues, "drops")[q], dropped);
}

#[test]
fn policer_mark_action_never_pcn_marks_non_pcn_traffic() {
    // The CBR flow is not PCN traffic (no PCN domain): RFC 5670's rule, the
    // one `mark_excess` applies everywhere, leaves it unmarked, and the mark
    // action drops nothing. (Before the rule was shared, the policer marked
    // 1248 of the 2500 packets at seed 1.)
    let text = policed(r#"{ type = "policer", rate = "1Mbps", depth = "3000B", action = "mark" }"#, false);
    let sc = load_str(&text, "policed.toml", &[], None).unwrap_or_else(|e| panic!("{e}"));
    let out = run(&sc, 1);
    let q = queue_row(&out, "r0->h1");
    assert_eq!(u64s(&out.flows, "dropped_pkts")[0], 0);
    assert_eq!(u64s(&out.queues, "marks_pcn_excess")[q], 0);
    assert_eq!(u64s(&out.flows, "delivered_pkts")[0] + u64s(&out.flows, "in_flight_pkts")[0], 2500);
}

#[test]
fn policer_on_the_reverse_direction_leaves_the_forward_path_alone() {
    let text = policed(r#"{ type = "policer", rate = "1Mbps", depth = "3000B" }"#, true);
    let sc = load_str(&text, "policed.toml", &[], None).unwrap_or_else(|e| panic!("{e}"));
    let out = run(&sc, 1);
    assert_eq!(u64s(&out.flows, "dropped_pkts")[0], 0);
}

#[test]
fn bad_stages_are_refused_by_validation_naming_the_field() {
    let text = policed(r#"{ type = "policer", rate = "0bps", depth = "3000B" }"#, false);
    let e = load_str(&text, "policed.toml", &[], None).unwrap_err().to_string();
    assert!(e.contains("topology.links.1.stages.0.rate"), "{e}");
    assert!(e.contains("policer.rate"), "{e}");
    let text = policed(r#"{ type = "meter", rate = "1Mbps", depth = "3000B" }"#, false);
    let e = load_str(&text, "policed.toml", &[], None).unwrap_err().to_string();
    assert!(e.contains("stages.0.type") && e.contains("policer"), "{e}");
    let text = policed(r#"{ type = "policer", rate = "1Mbps", depth = "3000B", colour = "red" }"#, false);
    let e = load_str(&text, "policed.toml", &[], None).unwrap_err().to_string();
    assert!(e.contains("colour"), "{e}");
}
