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

#[test]
fn cumulative_queue_counters_end_at_the_queue_totals_and_never_decrease() {
    let out = run(&dumbbell(5, RED), 1);
    let series = queue_series(&out);
    let q = &out.queues;
    let names = strs(q, "name");
    let bottleneck = names.iter().position(|n| n == "r0->sink0").expect("bottleneck row");
    // The RED bottleneck drops both early and forced in 5 s of 60 % overload.
    for col in ["drops_early_random", "drops_forced"] {
        assert!(u64s(q, col)[bottleneck] > 0, "{col}");
    }
    let mut checked = 0;
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
            let cum = cum.unwrap_or_else(|| panic!("{key:?}: missing"));
            // One value at every sample of the queue, from the first on.
            assert_eq!(cum.iter().map(|(t, _)| *t).collect::<Vec<_>>(), times, "{key:?}");
            assert!(cum.windows(2).all(|w| w[0].1 <= w[1].1), "{key:?} decreases");
            assert_eq!(cum.last().unwrap().1, total as f64, "{key:?}");
            checked += 1;
        }
    }
    // arrivals, departures, early and forced drops of the bottleneck at least.
    assert!(checked >= 4, "{checked}");
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
