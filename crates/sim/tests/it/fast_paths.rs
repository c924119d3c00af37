//! The loop's two shortcuts give the results of the events they save
//! (docs/performance.md, "Fewer events on the access links"): a packet
//! on a free link whose port is an empty FIFO goes straight on the wire
//! (`Port::try_pass`), and a packet sent on its last hop, to a host, over
//! a link that loses nothing is counted delivered then, with its arrival
//! time, when nothing else is on its way on that link (`Sim::start_tx`).
//!
//! A link with a loss probability takes neither delivery shortcut, so a
//! loss of 1e-300 (no packet is ever lost) runs the same scenario the long
//! way: every table must be the same, with fewer events the short way.

use crate::common::*;

/// A star: three ingresses into a 10 Mb/s bottleneck, ON/OFF sources
/// that queue there, the egress link to the sink with `delay` and `loss`;
/// 7 ms bins and an end in mid-transmission, so arrivals fall after bin
/// edges and after the end.
fn star(delay: &str, loss: f64) -> String {
    format!(
        r#"
name = "fast_paths"
duration = "3.0000007s"
seed = 3
[topology]
preset = "star"
ingresses = 3
[topology.access]
rate = "100Mbps"
delay = "1ms"
[topology.bottleneck]
rate = "10Mbps"
delay = "5ms"
queue = {{ type = "fifo", limit = "30pkts" }}
[topology.egress]
rate = "12Mbps"
delay = "{delay}"
loss = {loss:e}
[metrics]
bin = "7ms"
[[traffic]]
name = "onoff"
model = "on_off"
flows = 6
src = "in*"
dst = "sink0"
peak = "4Mbps"
on = "100ms"
off = "150ms"
dist = "exponential"
size = "1000B"
"#
    )
}

#[test]
fn counting_deliveries_at_the_last_send_changes_no_result() {
    for delay in ["0s", "2ms"] {
        let short = run(&scenario(&star(delay, 0.0)), 5);
        let long = run(&scenario(&star(delay, 1e-300)), 5);
        // Compared as printed: the same NaNs (no goodput without TCP) compare equal.
        let same = |a: &qoslab_sim::output::Table, b: &qoslab_sim::output::Table, what: &str| {
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "egress delay {delay}: {what}")
        };
        same(&short.flows, &long.flows, "flows");
        same(&short.queues, &long.queues, "queues");
        same(&short.series, &long.series, "series");
        same(&short.events, &long.events, "events");
        assert_eq!(short.summary["packets"], long.summary["packets"], "egress delay {delay}");
        let n = |o: &qoslab_sim::output::RunOutput| o.summary["events"].as_u64().unwrap_or(0);
        let delivered = short.summary["packets"]["delivered"].as_u64().unwrap_or(0);
        assert!(delivered > 1_000, "{delivered}");
        // Without delay the link is empty again before the next packet:
        // (nearly) every delivery saves its event; with 2 ms rarely.
        if delay == "0s" {
            assert!(n(&long) - n(&short) > delivered * 9 / 10, "{} -> {} events", n(&long), n(&short));
        } else {
            assert!(n(&long) > n(&short), "{} -> {} events", n(&long), n(&short));
        }
    }
}

#[test]
fn a_packet_still_on_the_last_link_at_the_end_is_in_flight_not_delivered() {
    // 1,000-byte packets take 0.67 ms on the 12 Mb/s egress: a run that
    // ends 0.3 ms after one starts there leaves it on the wire.
    let out = run(&scenario(&star("0s", 0.0)), 5);
    let p = &out.summary["packets"];
    let held = p["queued_end"].as_u64().unwrap_or(0)
        + p["on_wire_end"].as_u64().unwrap_or(0)
        + p["propagating_end"].as_u64().unwrap_or(0);
    let (sent, delivered, dropped) =
        (p["sent"].as_u64().unwrap_or(0), p["delivered"].as_u64().unwrap_or(0), p["dropped"].as_u64().unwrap_or(0));
    assert_eq!(sent, delivered + dropped + held);
}
