//! `traffic::arrivals::schedule` (what the testbed starts real flows by)
//! against the simulator's own run: every arrival process gives the flows
//! the run creates, at the same instants, with the same lifetimes, also
//! when admission control refuses some of them.

use crate::common::*;
use qoslab_sim::traffic::arrivals::schedule;
use qoslab_sim::traffic::plan_groups;

const GROUPS: &str = r#"
[[traffic]]
name = "poi"
model = "cbr"
rate = "64kbps"
size = "160B"
src = "src0"
dst = "sink0"
start = "1s"
arrivals = { process = "poisson", rate = 4.0, lifetime = "3s" }
[[traffic]]
name = "bat"
model = "poisson"
rate = "64kbps"
size = "160B"
src = "src1"
dst = "sink0"
arrivals = { process = "batch_poisson", rate = 1.5, batch_mean = 3.0, lifetime = "2s", max_flows = 40 }
[[traffic]]
name = "ka"
model = "cbr"
rate = "64kbps"
size = "160B"
src = "src0"
dst = "sink0"
stop = "17s"
arrivals = { process = "keep_alive", alive = 5, lifetime = "4s" }
[[traffic]]
name = "kaf"
model = "cbr"
rate = "64kbps"
size = "160B"
src = "src1"
dst = "sink0"
arrivals = { process = "keep_alive", alive = 3, lifetime = "2500ms", lifetime_dist = "fixed" }
"#;

fn net(extra: &str) -> qoslab_scenario::ValidScenario {
    let topo = explicit(
        &[("src0", "host"), ("src1", "host"), ("r0", "router"), ("sink0", "host")],
        &[("src0", "r0", "1Gbps", "1ms"), ("src1", "r0", "1Gbps", "1ms"), ("r0", "sink0", "10Mbps", "1ms")],
    );
    scenario(&format!("name = \"arr\"\nduration = \"20s\"\n{extra}\n{topo}\n{GROUPS}"))
}

/// A flow's name, start and end (s).
type Span = (String, f64, f64);

/// Every flow the plan schedules, every flow the run created, and how many the run refused.
fn both(sc: &qoslab_scenario::ValidScenario, seed: u64) -> (Vec<Span>, Vec<Span>, usize) {
    let ex = qoslab_scenario::expand::expand(&sc.topology);
    let plans = plan_groups(sc, &ex, seed, std::path::Path::new(".")).expect("plans");
    let end = sc.duration.0;
    let mut planned: Vec<Span> = plans
        .iter()
        .flat_map(|g| {
            schedule(g, seed).into_iter().map(move |p| {
                (format!("{}.{}", g.name, p.index), p.start.0 as f64 / 1e9, p.end.0.min(end) as f64 / 1e9)
            })
        })
        .collect();
    let out = run(sc, seed);
    let (names, start, stop) = (strs(&out.flows, "name"), f64s(&out.flows, "start_s"), f64s(&out.flows, "end_s"));
    let refused = bools(&out.flows, "refused");
    // A refused flow's row ends where it starts; its slot (keep-alive) is held to its planned end.
    let mut ran: Vec<Span> = (0..names.len())
        .map(|i| {
            let e = if refused[i] { f64::NAN } else { stop[i] };
            (names[i].clone(), start[i], e)
        })
        .collect();
    let n_refused = refused.iter().filter(|r| **r).count();
    planned.sort_by(|a, b| a.0.cmp(&b.0));
    ran.sort_by(|a, b| a.0.cmp(&b.0));
    (planned, ran, n_refused)
}

fn assert_same(planned: &[Span], ran: &[Span]) {
    assert_eq!(planned.len(), ran.len(), "flows planned vs created");
    for (p, r) in planned.iter().zip(ran) {
        assert_eq!(p.0, r.0);
        assert!((p.1 - r.1).abs() < 1e-9, "{}: start {} vs {}", p.0, p.1, r.1);
        assert!(r.2.is_nan() || (p.2 - r.2).abs() < 1e-9, "{}: end {} vs {}", p.0, p.2, r.2);
    }
}

#[test]
fn the_schedule_is_the_simulators_flows_for_every_process() {
    for seed in [1, 7] {
        let (planned, ran, _) = both(&net(""), seed);
        assert_same(&planned, &ran);
        for g in ["poi.", "bat.", "ka.", "kaf."] {
            assert!(planned.iter().filter(|p| p.0.starts_with(g)).count() >= 10, "{g}: {planned:?}");
        }
        // The batch group stops at its cap; the keep-alive group at its stop.
        assert_eq!(planned.iter().filter(|p| p.0.starts_with("bat.")).count(), 40);
        assert!(planned.iter().filter(|p| p.0.starts_with("ka.")).all(|p| p.1 < 17.0));
    }
}

#[test]
fn refusals_do_not_move_the_schedule() {
    // Admission that refuses some calls: arrivals and lifetimes stay the plan's.
    // Shaping CAC (scheme 1: N_max = capacity / r_req = 10 flows at once) refuses calls beyond ten.
    let sc = net(r#"admission = { type = "shaping_cac", scheme = 1, capacity = "1Mbps", r_req = "100kbps" }"#);
    let (planned, ran, refused) = both(&sc, 3);
    assert!(refused > 20, "{refused} refused");
    assert_same(&planned, &ran);
}
