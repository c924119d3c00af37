//! The per-queue cumulative counters in the series (`arrivals`,
//! `departures`, `drops_<reason>`, `marks_<reason>`): complete from each
//! queue's first sample, never decreasing, and ending at the queues
//! table's totals.

use crate::common::*;
use qoslab_core::units::Dur;
use std::collections::BTreeMap;

const RED: &str =
    r#"queue = { type = "red", limit = "60pkts", min_th = 5, max_th = 15, max_p = 0.1, w_q = 0.002, gentle = false }"#;

fn dumbbell(secs: u64, queue: &str) -> qoslab_scenario::ValidScenario {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/red_dumbbell.toml")).unwrap();
    assert!(text.contains(RED), "the reference scenario's RED queue changed");
    let mut sc = model(&text.replace(RED, queue));
    sc.duration = Dur::from_secs(secs);
    valid(sc)
}

/// `(entity, metric) -> [(t_s, value)]` of the queue rows of the series.
fn queue_series(out: &qoslab_sim::output::RunOutput) -> BTreeMap<(String, String), Vec<(f64, f64)>> {
    let s = &out.series;
    let (t, kind, id, metric, value) =
        (f64s(s, "t_s"), strs(s, "entity_kind"), strs(s, "entity_id"), strs(s, "metric"), f64s(s, "value"));
    let mut m: BTreeMap<(String, String), Vec<(f64, f64)>> = BTreeMap::new();
    for i in 0..t.len() {
        if kind[i] == "queue" {
            m.entry((id[i].clone(), metric[i].clone())).or_default().push((t[i], value[i]));
        }
    }
    m
}

/// Every sampled queue's cumulative counters: one value at every sample
/// of the queue, never decreasing, the last equal to the queues table's
/// column; a reason never counted has no series. Returns the `(queue,
/// counter)` pairs checked.
fn assert_counters_end_at_the_queue_totals(out: &qoslab_sim::output::RunOutput) -> Vec<(String, String)> {
    let series = queue_series(out);
    let q = &out.queues;
    let names = strs(q, "name");
    let mut checked = Vec::new();
    for (row, name) in names.iter().enumerate() {
        let backlog = series.get(&(name.clone(), "backlog_pkts".to_string()));
        let Some(backlog) = backlog else { continue };
        let times: Vec<f64> = backlog.iter().map(|(t, _)| *t).collect();
        let counters = q.columns.iter().filter(|(c, _)| {
            c == "arrivals" || c == "departures" || c.starts_with("drops_") || c.starts_with("marks_")
        });
        for (col, _) in counters {
            let total = u64s(q, col)[row];
            let key = (name.clone(), col.clone());
            let cum = series.get(&key);
            if total == 0 && col != "arrivals" && col != "departures" {
                assert!(cum.is_none(), "{key:?}: a reason never counted has no series");
                continue;
            }
            let cum = cum.unwrap_or_else(|| panic!("{key:?}: missing (the queues table counts {total})"));
            assert_eq!(cum.iter().map(|(t, _)| *t).collect::<Vec<_>>(), times, "{key:?}");
            assert!(cum.windows(2).all(|w| w[0].1 <= w[1].1), "{key:?} decreases");
            assert_eq!(cum.last().unwrap().1, total as f64, "{key:?}: the last value is not the table's total");
            checked.push(key);
        }
    }
    checked
}

#[test]
fn cumulative_queue_counters_end_at_the_queue_totals_and_never_decrease() {
    let out = run(&dumbbell(5, RED), 1);
    let q = &out.queues;
    let bottleneck = queue_row(&out, "r0->sink0");
    // The RED bottleneck drops both early and forced in 5 s of 60 % overload.
    for col in ["drops_early_random", "drops_forced"] {
        assert!(u64s(q, col)[bottleneck] > 0, "{col}");
    }
    let checked = assert_counters_end_at_the_queue_totals(&out);
    // arrivals, departures, early and forced drops of the bottleneck at least.
    assert!(checked.len() >= 4, "{checked:?}");
}

/// A policer and the two PCN meters as stages of one port:
/// what the stages drop and mark has its cumulative series, and the port's
/// `arrivals` series counts the packets its stages dropped, so each ends at
/// the queues table's total as the queue discipline's own counters do.
#[test]
fn a_ports_stage_drops_and_marks_have_cumulative_series_ending_at_the_table() {
    // 40 voice calls of 80 kb/s (3.2 Mb/s) through a 2 Mb/s policer in front
    // of a 2.5 Mb/s bottleneck whose PCN meters see the policed 2 Mb/s above
    // their admissible and termination rates (1 and 1.5 Mb/s); a 20-packet
    // FIFO behind them.
    let sc = scenario(
        r#"
name = "staged"
duration = "20s"
[topology]
preset = "explicit"
nodes = [
  { name = "s0", kind = "host" }, { name = "i0", kind = "router" },
  { name = "e0", kind = "router" }, { name = "d0", kind = "host" },
]
[[topology.links]]
a = "s0"
b = "i0"
rate = "100Mbps"
delay = "1ms"
[[topology.links]]
a = "i0"
b = "e0"
rate = "2500kbps"
delay = "10ms"
queue = { type = "fifo", limit = "20pkts" }
stages = [
  { type = "policer", rate = "2Mbps", depth = "8000B" },
  { type = "pcn_admission", admissible_rate = "1Mbps" },
  { type = "pcn_termination", packet_size = "200B", termination_rate = "1500kbps" },
]
[[topology.links]]
a = "e0"
b = "d0"
rate = "100Mbps"
delay = "1ms"
[pcn]
edges = ["i0", "e0"]
[metrics]
series_interval = "1s"
[[traffic]]
name = "voice"
model = "cbr"
flows = 40
src = "s0"
dst = "d0"
size = "160B"
header = "40B"
interval = "20ms"
"#,
    );
    let out = run(&sc, 1);
    let q = &out.queues;
    let port = queue_row(&out, "i0->e0");
    for col in ["drops_policed", "marks_pcn_threshold", "marks_pcn_excess"] {
        assert!(u64s(q, col)[port] > 0, "{col}: the scenario must exercise it");
    }
    let checked = assert_counters_end_at_the_queue_totals(&out);
    for col in ["arrivals", "departures", "drops_policed", "marks_pcn_threshold", "marks_pcn_excess"] {
        assert!(checked.contains(&("i0->e0".to_string(), col.to_string())), "{col} not checked: {checked:?}");
    }
    // The port's arrivals: what the policer dropped and what reached the FIFO.
    let arrivals = u64s(q, "arrivals")[port];
    assert_eq!(
        arrivals,
        u64s(q, "drops_policed")[port]
            + u64s(q, "departures")[port]
            + u64s(q, "drops_overlimit")[port]
            + u64s(q, "backlog_end_pkts")[port]
    );
}

#[test]
fn a_drop_reason_series_starts_with_zeros_before_its_first_drop() {
    // 15 Mb/s of excess fill a 2000-packet FIFO in about a second: tail
    // drops start well after the first sample.
    let out = run(&dumbbell(3, r#"queue = { type = "fifo", limit = "2000pkts" }"#), 1);
    let series = queue_series(&out);
    let key = |m: &str| ("r0->sink0".to_string(), m.to_string());
    let over = &series[&key("drops_overlimit")];
    assert_eq!(over.len(), series[&key("backlog_pkts")].len());
    assert_eq!(over[0].1, 0.0);
    assert!(over.last().unwrap().1 > 0.0);
    assert!(!series.contains_key(&key("drops_early_random")), "a FIFO never drops early");
}
