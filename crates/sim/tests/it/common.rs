//! Helpers shared by the simulator's cross-module tests: scenarios from
//! TOML text (validated through the loader, or as a bare model to change
//! before validating) and typed access to result columns.
#![allow(dead_code)]

use qoslab_scenario::{load::load_str, validate::validate, Diagnostic, Scenario, ValidScenario};
use qoslab_sim::output::{Column, RunOutput, Table};
use qoslab_sim::run::Sim;
use qoslab_sim::{RunOptions, SimError};

/// A validated scenario from TOML text (through the loader; relative files
/// in the temporary folder).
pub fn scenario(toml_text: &str) -> ValidScenario {
    load_str(toml_text, "test.toml", &[], Some(&std::env::temp_dir()))
        .unwrap_or_else(|e| panic!("test scenario is refused:\n{e}\n{toml_text}"))
}

/// Every problem the loader finds in TOML text (it must refuse it).
pub fn refused(toml_text: &str) -> Vec<Diagnostic> {
    match load_str(toml_text, "test.toml", &[], Some(&std::env::temp_dir())) {
        Err(qoslab_scenario::ScenarioError::Config(ds)) => ds,
        Err(e) => panic!("expected a configuration error, got {e}"),
        Ok(_) => panic!("expected a configuration error, it loaded:\n{toml_text}"),
    }
}

/// The scenario model of TOML text, not validated: to change it, then [`valid`].
pub fn model(toml_text: &str) -> Scenario {
    toml::from_str(toml_text).unwrap_or_else(|e| panic!("test scenario does not parse: {e}"))
}

/// `s` validated (relative files in the temporary folder), or every problem.
pub fn try_valid(s: Scenario) -> Result<ValidScenario, Vec<Diagnostic>> {
    validate(s, "test.toml", "", Some(&std::env::temp_dir()))
}

/// `s` validated (relative files in the temporary folder).
pub fn valid(s: Scenario) -> ValidScenario {
    try_valid(s).unwrap_or_else(|ds| {
        panic!("test scenario is refused: {}", ds.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n"))
    })
}

pub fn try_run(sc: &ValidScenario, seed: u64) -> Result<RunOutput, SimError> {
    qoslab_sim::run::run(sc, RunOptions { seed, base_dir: std::env::temp_dir(), progress: None })
}

/// Runs `sc` and checks that every flow's packets are conserved
/// ([`assert_flows_conserved`]), so every test that runs a scenario checks
/// the simulator's accounting too.
pub fn run(sc: &ValidScenario, seed: u64) -> RunOutput {
    let out = try_run(sc, seed).unwrap_or_else(|e| panic!("run failed: {e}"));
    assert_flows_conserved(&out, &sc.name);
    out
}

/// Per flow, its own packets and those its receiver sent back:
/// `sent = delivered + dropped + in flight`, where the results count the
/// packets in flight from what the network holds at the end (not derived).
pub fn assert_flows_conserved(out: &RunOutput, ctx: &str) {
    let f = &out.flows;
    let names = strs(f, "name");
    for side in ["", "reverse_"] {
        let col = |c: &str| u64s(f, &format!("{side}{c}_pkts"));
        let (s, d, x, i) = (col("sent"), col("delivered"), col("dropped"), col("in_flight"));
        for k in 0..s.len() {
            assert_eq!(
                s[k],
                d[k] + x[k] + i[k],
                "{ctx}: flow {} ({side}packets): sent {} != delivered {} + dropped {} + in flight {}",
                names[k],
                s[k],
                d[k],
                x[k],
                i[k]
            );
        }
    }
}

/// The same identity read from a finished [`Sim`] (for tests that keep it).
pub fn assert_sim_conserved(sim: &Sim, ctx: &str) {
    let held = sim.held_per_flow();
    for (k, m) in sim.metrics.flows.iter().enumerate() {
        let name = sim.flow_name(k);
        assert_eq!(
            m.sent_pkts,
            m.delivered_pkts + m.dropped_pkts + held.forward[k],
            "{ctx}: flow {name}: sent {} != delivered {} + dropped {} + held {}",
            m.sent_pkts,
            m.delivered_pkts,
            m.dropped_pkts,
            held.forward[k]
        );
        let r = &sim.metrics.reverse[k];
        assert_eq!(r.sent_pkts, r.delivered_pkts + r.dropped_pkts + held.reverse[k], "{ctx}: flow {name} (reverse)");
    }
}

pub fn u64s(t: &Table, name: &str) -> Vec<u64> {
    match t.get(name) {
        Some(Column::U64(v)) => v.clone(),
        c => panic!("column {name}: {c:?}"),
    }
}
pub fn f64s(t: &Table, name: &str) -> Vec<f64> {
    match t.get(name) {
        Some(Column::F64(v)) => v.clone(),
        c => panic!("column {name}: {c:?}"),
    }
}
pub fn strs(t: &Table, name: &str) -> Vec<String> {
    match t.get(name) {
        Some(Column::Str(v)) => v.to_vec(),
        c => panic!("column {name}: {c:?}"),
    }
}
pub fn bools(t: &Table, name: &str) -> Vec<bool> {
    match t.get(name) {
        Some(Column::Bool(v)) => v.clone(),
        c => panic!("column {name}: {c:?}"),
    }
}
pub fn i64s(t: &Table, name: &str) -> Vec<i64> {
    match t.get(name) {
        Some(Column::I64(v)) => v.clone(),
        c => panic!("column {name}: {c:?}"),
    }
}

/// Row index of the queue named `name`.
pub fn queue_row(out: &RunOutput, name: &str) -> usize {
    strs(&out.queues, "name").iter().position(|n| n == name).unwrap_or_else(|| panic!("no queue {name}"))
}

/// `(t_s, value)` of series rows for an entity and metric.
pub fn series(out: &RunOutput, entity: &str, metric: &str) -> Vec<(f64, f64)> {
    let t = f64s(&out.series, "t_s");
    let id = strs(&out.series, "entity_id");
    let m = strs(&out.series, "metric");
    let v = f64s(&out.series, "value");
    (0..t.len()).filter(|i| id[*i] == entity && m[*i] == metric).map(|i| (t[i], v[i])).collect()
}

/// A table with NaN compared bit for bit (NaN == NaN), for determinism checks.
pub fn same_table(a: &Table, b: &Table) -> bool {
    if a.columns.len() != b.columns.len() {
        return false;
    }
    a.columns.iter().zip(&b.columns).all(|((na, ca), (nb, cb))| {
        na == nb
            && match (ca, cb) {
                (Column::F64(x), Column::F64(y)) => {
                    x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits())
                }
                _ => ca == cb,
            }
    })
}

/// An explicit topology line: host-to-router-to-host chain and so on.
pub fn explicit(nodes: &[(&str, &str)], links: &[(&str, &str, &str, &str)]) -> String {
    let mut s = String::from("[topology]\npreset = \"explicit\"\n");
    s += "nodes = [";
    s += &nodes.iter().map(|(n, k)| format!("{{ name = \"{n}\", kind = \"{k}\" }}")).collect::<Vec<_>>().join(", ");
    s += "]\nlinks = [";
    s += &links
        .iter()
        .map(|(a, b, r, d)| format!("{{ a = \"{a}\", b = \"{b}\", rate = \"{r}\", delay = \"{d}\" }}"))
        .collect::<Vec<_>>()
        .join(", ");
    s += "]\n";
    s
}
