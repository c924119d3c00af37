//! Loading and validating scenario files end to end: the bad scenarios in
//! `tests/scenarios/bad/` each fail with the diagnostic their header
//! announces, the good ones and the built-in examples load, overrides
//! work, and the built-in scenarios satisfy the JSON Schema.

use qoslab_core::units::{Bytes, Dur, Rate};
use qoslab_scenario::load::{load_file, load_str};
use qoslab_scenario::{
    registry, schema, shape, Diagnostic, QueueMode, QueueSpec, ScenarioError, SizeSpec, Topology, TrafficModel,
    ValidScenario,
};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn toml_files(dir: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    v.sort();
    v
}

fn diagnostics(r: Result<ValidScenario, ScenarioError>) -> Vec<Diagnostic> {
    match r {
        Err(ScenarioError::Config(ds)) => ds,
        Err(e) => panic!("expected a configuration error, got {e}"),
        Ok(s) => panic!("expected a configuration error, {} loaded", s.name),
    }
}

/// The `# expect:`, `# line:` and `# path:` header of a bad scenario, and
/// `# origin:` when the problem is in a file the scenario names (a replay
/// CSV, a descriptor file), relative to the scenario's folder.
struct Expectation {
    expect: String,
    line: Option<usize>,
    path: String,
    origin: Option<String>,
}

fn expectation(text: &str) -> Expectation {
    let mut e = Expectation { expect: String::new(), line: None, path: String::new(), origin: None };
    for l in text.lines().take_while(|l| l.starts_with('#')) {
        if let Some(x) = l.strip_prefix("# expect: ") {
            e.expect = x.to_string();
        } else if let Some(x) = l.strip_prefix("# line: ") {
            e.line = Some(x.trim().parse().expect("# line: N"));
        } else if let Some(x) = l.strip_prefix("# path: ") {
            e.path = x.trim().to_string();
        } else if let Some(x) = l.strip_prefix("# origin: ") {
            e.origin = Some(x.trim().to_string());
        }
    }
    e
}

#[test]
fn every_bad_scenario_fails_with_its_announced_diagnostic() {
    let files = toml_files("tests/scenarios/bad");
    assert!(files.len() >= 18, "only {} bad scenarios", files.len());
    let mut failures = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let e = expectation(&text);
        assert!(!e.expect.is_empty() && !e.path.is_empty(), "{}: header lacks # expect: or # path:", f.display());
        let ds = diagnostics(load_file(f, &[]));
        let Some(d) = ds.iter().find(|d| d.to_string().contains(&e.expect)) else {
            failures.push(format!("{}: no diagnostic contains {:?}; got:\n  {}", f.display(), e.expect, join(&ds)));
            continue;
        };
        let shown = d.to_string();
        if d.path != e.path || !shown.contains(&format!(": {}: ", e.path)) {
            failures.push(format!("{}: path {:?}, expected {:?} ({shown})", f.display(), d.path, e.path));
        }
        if d.line != e.line {
            failures.push(format!("{}: line {:?}, expected {:?} ({shown})", f.display(), d.line, e.line));
        }
        let origin = match &e.origin {
            Some(o) => f.parent().unwrap().join(o).display().to_string(),
            None => f.display().to_string(),
        };
        if d.origin != origin {
            failures.push(format!("{}: origin {:?}", f.display(), d.origin));
        }
        // What is allowed: "allowed: ...", a mechanism's "must ...", or the list of nodes.
        if !["allowed", "expected", "must", "nodes:", "give"].iter().any(|w| shown.contains(w)) {
            failures.push(format!("{}: the message does not say what is allowed: {shown}", f.display()));
        }
    }
    assert!(failures.is_empty(), "{} problems:\n{}", failures.len(), failures.join("\n"));
}

fn join(ds: &[Diagnostic]) -> String {
    ds.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n  ")
}

#[test]
fn bad_scenario_messages_never_name_rust_types() {
    let rust_words = [
        "QueueSpec",
        "Topology",
        "TrafficModel",
        "TrafficGroup",
        "LinkSpec",
        "SizeSpec",
        "Arrivals",
        "MetricsSpec",
        "Dur",
        "Rate(",
        "Bytes(",
        "u32",
        "u64",
        "f64",
        "struct",
        "enum ",
        "`",
        "Some(",
        "None",
        "i128",
        "i64",
    ];
    for f in toml_files("tests/scenarios/bad") {
        for d in diagnostics(load_file(&f, &[])) {
            let s = d.to_string();
            for w in rust_words {
                assert!(!s.contains(w), "{}: {s:?} contains {w:?}", f.display());
            }
        }
    }
}

#[test]
fn good_scenarios_load_and_are_short() {
    let files = toml_files("tests/scenarios/good");
    assert!(files.len() >= 5);
    for f in files {
        let s = load_file(&f, &[]).unwrap_or_else(|e| panic!("{e}"));
        assert!(s.duration <= Dur::from_secs(5), "{}: {} simulated is too long for a test", f.display(), s.duration);
    }
}

#[test]
fn good_scenarios_cover_every_preset_queue_model_and_arrival_process() {
    let mut seen = std::collections::BTreeSet::new();
    fn queues(q: &QueueSpec, seen: &mut std::collections::BTreeSet<String>) {
        seen.insert(format!("queue:{}", q.type_name()));
        match q {
            QueueSpec::Prio { bands, .. } => bands.iter().for_each(|b| queues(b, seen)),
            QueueSpec::Scfq { queues: children, .. } => children.iter().for_each(|c| queues(&c.queue, seen)),
            _ => {}
        }
    }
    for f in toml_files("tests/scenarios/good") {
        let s = load_file(&f, &[]).unwrap();
        let value = serde_json::to_value(&s).unwrap();
        seen.insert(format!("preset:{}", value["topology"]["preset"].as_str().unwrap()));
        match &s.topology {
            Topology::Dumbbell { access, bottleneck, egress, default_queue, .. }
            | Topology::ParkingLot { access, bottleneck, egress, default_queue, .. }
            | Topology::Star { access, bottleneck, egress, default_queue, .. } => {
                queues(default_queue, &mut seen);
                for l in [Some(access), Some(bottleneck), egress.as_ref()].into_iter().flatten() {
                    l.queue.iter().chain(l.reverse_queue.iter()).for_each(|q| queues(q, &mut seen));
                }
            }
            Topology::Explicit { links, default_queue, .. } => {
                queues(default_queue, &mut seen);
                for l in links {
                    l.link.queue.iter().for_each(|q| queues(q, &mut seen));
                }
            }
        }
        for g in &s.traffic {
            let m = match &g.model {
                TrafficModel::Cbr { rate: Some(_), .. } => "model:cbr_rate".to_string(),
                TrafficModel::Cbr { .. } => "model:cbr_interval".to_string(),
                TrafficModel::Poisson { .. } => "model:poisson".to_string(),
                TrafficModel::OnOff { dist, .. } => format!("model:on_off_{}", serde_json::to_value(dist).unwrap()),
                TrafficModel::Ftp { .. } => "model:ftp".to_string(),
                TrafficModel::Transfer { .. } => "model:transfer".to_string(),
                TrafficModel::MmApp { .. } => "model:mm_app".to_string(),
                TrafficModel::Vtr { .. } => "model:vtr".to_string(),
            };
            seen.insert(m);
            if let Some(a) = &g.arrivals {
                let v = serde_json::to_value(a).unwrap();
                seen.insert(format!("arrivals:{}", v["process"].as_str().unwrap()));
            }
            if matches!(g.size, SizeSpec::Random(_)) {
                seen.insert("size:random".into());
            }
        }
    }
    // Every name of the registry, and the variants within the models.
    let names = |kind: &str, names: &[&str]| names.iter().map(|n| format!("{kind}:{n}")).collect::<Vec<_>>();
    let mut want = names("preset", registry::TOPOLOGY_PRESETS);
    want.extend(names("queue", registry::QUEUE_TYPES));
    want.extend(names("arrivals", registry::ARRIVAL_PROCESSES));
    let models = registry::TRAFFIC_MODELS.iter().flat_map(|m| match *m {
        "cbr" => vec!["model:cbr_rate".to_string(), "model:cbr_interval".to_string()],
        "on_off" => vec!["model:on_off_\"exponential\"".to_string(), "model:on_off_\"pareto\"".to_string()],
        m => vec![format!("model:{m}")],
    });
    want.extend(models);
    want.push("size:random".into());
    for want in &want {
        assert!(seen.contains(want), "no good scenario has {want}; seen: {seen:?}");
    }
}

#[test]
fn built_in_examples_load() {
    let files = toml_files("scenarios/examples");
    assert!(files.len() >= 5, "expected the two dumbbells and one example per other preset");
    for f in files {
        load_file(&f, &[]).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn red_dumbbell_is_the_performance_reference() {
    let s = load_file(&root().join("scenarios/examples/red_dumbbell.toml"), &[]).unwrap();
    assert_eq!(s.duration, Dur::from_secs(60));
    let Topology::Dumbbell { sources, sinks, routers, access, bottleneck, .. } = &s.topology else {
        panic!("not a dumbbell")
    };
    assert_eq!((*sources, *sinks, *routers), (40, 1, 1));
    assert_eq!((access.rate, access.delay), (Rate::mbps(100), Dur::from_ms(5)));
    assert_eq!((bottleneck.rate, bottleneck.delay), (Rate::mbps(25), Dur::from_ms(20)));
    match bottleneck.queue.as_ref().unwrap() {
        QueueSpec::Red { red, .. } => {
            assert_eq!(red.limit.packets, Some(60));
            assert_eq!(red.limit.bytes, None);
            assert_eq!((red.min_th, red.max_th, red.max_p, red.w_q), (5.0, 15.0, 0.1, 0.002));
            assert!(!red.gentle && !red.ecn);
            assert_eq!(red.mode, QueueMode::Packets);
        }
        q => panic!("bottleneck queue is {}", q.type_name()),
    }
    let [g] = s.traffic.as_slice() else { panic!("one traffic group expected") };
    assert_eq!(g.flows, 40);
    assert_eq!(g.model, TrafficModel::Cbr { rate: Some(Rate::mbps(1)), interval: None });
    assert_eq!(g.size, SizeSpec::Fixed(Bytes(1000)));
    assert_eq!(g.header, Bytes(0));
    assert_eq!(g.start_jitter, Dur::from_ms(8));

    let d = load_file(&root().join("scenarios/examples/droptail_dumbbell.toml"), &[]).unwrap();
    let Topology::Dumbbell { bottleneck, .. } = &d.topology else { panic!("not a dumbbell") };
    assert_eq!(bottleneck.queue, Some(QueueSpec::Fifo { limit: qoslab_core::Limit::packets(60) }));
    assert_eq!(d.traffic, s.traffic, "the contrast differs only in its queue");
}

#[test]
fn built_in_and_good_scenarios_satisfy_the_schema() {
    // The structural check interprets the schema that `qoslab schema` prints.
    let schema: serde_json::Value = serde_json::from_str(&schema::json_schema()).unwrap();
    assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
    let mut n = 0;
    for dir in ["scenarios/examples", "tests/scenarios/good"] {
        for f in toml_files(dir) {
            let doc: toml::Table = toml::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
            assert_eq!(shape::check(&doc), vec![], "{}", f.display());
            n += 1;
        }
    }
    assert!(n >= 10);
}

fn red_dumbbell_text() -> String {
    std::fs::read_to_string(root().join("scenarios/examples/red_dumbbell.toml")).unwrap()
}

fn load_with(overrides: &[&str]) -> Result<ValidScenario, ScenarioError> {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    load_str(&red_dumbbell_text(), "red.toml", &o, None)
}

#[test]
fn overrides_set_nested_fields_indices_and_plain_text() {
    let s = load_with(&["topology.bottleneck.queue.max_th=20", "duration=10s", "traffic.0.flows=10"]).unwrap();
    let Topology::Dumbbell { bottleneck, .. } = &s.topology else { panic!() };
    assert!(matches!(&bottleneck.queue, Some(QueueSpec::Red { red, .. }) if red.max_th == 20.0));
    assert_eq!(s.duration, Dur::from_secs(10));
    assert_eq!(s.traffic[0].flows, 10);
    let quoted = load_with(&["duration=\"10s\""]).unwrap();
    assert_eq!(quoted.duration, Dur::from_secs(10));
}

#[test]
fn overrides_create_absent_optional_keys() {
    let s = load_with(&["traffic.0.stop=30s", "metrics.trace_groups=[\"cbr\"]", "traffic.0.class=2"]).unwrap();
    assert_eq!(s.traffic[0].stop, Some(Dur::from_secs(30)));
    assert_eq!(s.metrics.trace_groups, vec!["cbr".to_string()]);
    assert_eq!(s.traffic[0].class, 2);
    // A whole table at once, and a table created on the way.
    let s = load_with(&[
        "topology.routers=2",
        "topology.egress.rate=1Gbps",
        "topology.egress.delay=1ms",
        "topology.access.reverse_queue={type = \"fifo\", limit = \"5pkts\"}",
    ])
    .unwrap();
    let Topology::Dumbbell { egress, access, .. } = &s.topology else { panic!() };
    assert_eq!(egress.as_ref().map(|e| e.rate), Some(Rate::gbps(1)));
    assert_eq!(access.reverse_queue, Some(QueueSpec::Fifo { limit: qoslab_core::Limit::packets(5) }));
}

fn edge_with(overrides: &[&str]) -> Result<ValidScenario, ScenarioError> {
    let text = std::fs::read_to_string(root().join("scenarios/edge/fig6a_periodic.toml")).unwrap();
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    load_str(&text, "fig6a.toml", &o, None)
}

#[test]
fn overrides_select_list_entries_by_name_link_ends_or_a_field() {
    // By name, by a link's a->b, by a field's value: the same scenario as by index.
    let by_name = edge_with(&[
        "traffic[A2].src=\"sky\"",
        "topology.links[mckinley->alps].queue.buffers=120",
        "topology.links[mckinley->alps].stages.0.rules[stream=A2].src=\"sky\"",
        "topology.links[mckinley->alps].queue.streams[\"A3\"]={name = \"A3\", service = \"be\"}",
    ])
    .unwrap();
    let by_index = edge_with(&[
        "traffic.1.src=\"sky\"",
        "topology.links.6.queue.buffers=120",
        "topology.links.6.stages.0.rules.1.src=\"sky\"",
        "topology.links.6.queue.streams.3={name = \"A3\", service = \"be\"}",
    ])
    .unwrap();
    assert_eq!(format!("{:?}", *by_name), format!("{:?}", *by_index));
    assert_eq!(by_name.traffic[1].src, "sky");
    assert!(matches!(by_name.topology, Topology::Explicit { .. }));
    // A selector's entry is the one the file holds when the override applies: later overrides see earlier ones.
    let renamed = edge_with(&["traffic[A2].name=\"X2\"", "traffic[X2].flows=2"]).unwrap();
    assert_eq!((renamed.traffic[1].name.as_str(), renamed.traffic[1].flows), ("X2", 2));
}

#[test]
fn a_selector_that_selects_no_entry_or_several_says_what_is_allowed() {
    let cases: [(&str, &str, &str); 7] = [
        ("traffic[A9].flows=2", "traffic[A9].flows", "\"traffic\" has no entry named \"A9\"; allowed: A1, A2, B1, A3"),
        (
            "topology.links[alps->mckinley].rate=1Mbps",
            "topology.links[alps->mckinley].rate",
            "allowed: sea->tim, tim->mckinley",
        ),
        (
            "topology.links[mckinley->alps].stages.0.rules[src=sea].src=\"sky\"",
            "topology.links[mckinley->alps].stages.0.rules[src=sea].src",
            "matches 3 entries (0, 1, 2); allowed: a selector that matches one entry",
        ),
        ("topology.links[mckinley->alps].stages.0.rules[A1].src=x", "", "its entries have no name; select by a field"),
        ("duration[x]=3", "duration[x]", "\"duration\" is not a list in the scenario, so [x] selects nothing"),
        ("traffic[A1.flows=2", "traffic[A1.flows", "has a \"[\" that is not closed"),
        ("traffic[].flows=2", "traffic[].flows", "has an empty selector"),
    ];
    for (o, path, want) in cases {
        assert_refused_override(edge_with(&[o]), o, (!path.is_empty()).then_some(path), want);
    }
}

/// The one diagnostic of a refused override `o`: from `--set`, no line, at
/// `path` (when given), saying `want` and naming the override.
fn assert_refused_override(r: Result<ValidScenario, ScenarioError>, o: &str, path: Option<&str>, want: &str) {
    let ds = diagnostics(r);
    assert_eq!(ds.len(), 1, "{o}: {}", join(&ds));
    let d = &ds[0];
    assert_eq!((d.origin.as_str(), d.line), ("--set", None), "{o}");
    if let Some(path) = path {
        assert_eq!(d.path, path, "{o}");
    }
    assert!(d.message.contains(want), "{o}: {d}");
    assert!(d.message.contains(o), "{o}: the override is not named: {d}");
}

#[test]
fn malformed_or_unknown_overrides_name_the_override_and_what_is_allowed() {
    let cases: [(&str, &str, &str); 6] = [
        ("nonsense", "", "has no \"=\"; allowed: key.path=value"),
        ("=3", "", "has an empty key part"),
        (
            "topology.bottleneck.queue.max_thr=3",
            "topology.bottleneck.queue.max_thr",
            "allowed: chips, ecn, gentle, limit",
        ),
        ("traffic.1.flows=3", "traffic.1.flows", "has no entry \"1\"; allowed: 0 to 0"),
        ("traffic.x.flows=3", "traffic.x.flows", "has no entry \"x\""),
        ("duration.s=3", "duration.s", "is a duration such as"),
    ];
    for (o, path, want) in cases {
        assert_refused_override(load_with(&[o]), o, Some(path), want);
    }
}

#[test]
fn problems_in_overridden_values_are_attributed_to_the_override() {
    let ds = diagnostics(load_with(&["topology.bottleneck.queue.max_th=3", "duration=fast"]));
    assert_eq!(ds.len(), 1, "the structural problem stops before validation: {}", join(&ds));
    assert_eq!(ds[0].to_string(), "--set: duration: cannot read \"fast\"; allowed: a duration such as \"20ms\", \"1.5s\", \"100us\" or \"250ns\" (from --set duration=fast)");
    let ds = diagnostics(load_with(&["topology.bottleneck.queue.max_th=3"]));
    assert_eq!(
        ds[0].to_string(),
        "--set: topology.bottleneck.queue.max_th: red.max_th (3) must exceed min_th (5) (from --set \
         topology.bottleneck.queue.max_th=3)"
    );
}

#[test]
fn every_problem_is_reported_at_once() {
    let text = red_dumbbell_text()
        .replace("rate = \"100Mbps\"", "rate = \"0Mbps\"")
        .replace("max_th = 15", "max_th = 2")
        .replace("flows = 40", "flows = 0");
    let ds = diagnostics(load_str(&text, "x.toml", &[], None));
    let paths: Vec<&str> = ds.iter().map(|d| d.path.as_str()).collect();
    assert_eq!(paths, ["topology.access.rate", "topology.bottleneck.queue.max_th", "traffic.0.flows"], "{}", join(&ds));
    // Structural problems too, before typing.
    let text = red_dumbbell_text().replace("rate = \"100Mbps\"", "rate = 5").replace("w_q = 0.002", "w_q = \"x\"");
    let ds = diagnostics(load_str(&text, "x.toml", &[], None));
    assert_eq!(ds.len(), 2, "{}", join(&ds));
}

#[test]
fn diagnostics_display_as_file_line_path_message() {
    let text = red_dumbbell_text().replace("max_th = 15", "max_th = 2");
    let ds = diagnostics(load_str(&text, "scen/red.toml", &[], None));
    let line = text.lines().position(|l| l.starts_with("max_th")).unwrap() + 1;
    assert_eq!(
        ds[0].to_string(),
        format!("scen/red.toml:{line}: topology.bottleneck.queue.max_th: red.max_th (2) must exceed min_th (5)")
    );
}

#[test]
fn a_missing_file_is_an_io_error_naming_it() {
    let p = root().join("scenarios/examples/no_such_scenario.toml");
    match load_file(&p, &[]) {
        Err(ScenarioError::Io { path, message }) => {
            assert_eq!(path, p.display().to_string());
            assert!(message.contains("cannot read"), "{message}");
        }
        other => panic!("expected an I/O error, got {other:?}"),
    }
}

#[test]
fn replay_files_are_found_relative_to_the_base_dir() {
    let good = root().join("tests/scenarios/good");
    let text = std::fs::read_to_string(good.join("replay_dscp_traces.toml")).unwrap();
    load_str(&text, "replay.toml", &[], Some(&good)).unwrap();
    let ds = diagnostics(load_str(&text, "replay.toml", &[], Some(Path::new("/nonexistent"))));
    assert_eq!(ds[0].path, "traffic.1.arrivals.file");
    assert!(ds[0].message.contains("/nonexistent/replay_flows.csv"), "{}", ds[0]);
}

#[test]
fn the_complete_example_in_the_format_reference_loads() {
    let doc = std::fs::read_to_string(root().join("docs/scenarios.md")).unwrap();
    let start = doc.rfind("```toml\n").expect("a toml block") + "```toml\n".len();
    let len = doc[start..].find("```").unwrap();
    let s = load_str(&doc[start..start + len], "docs/scenarios.md", &[], None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.name, "example");
    assert_eq!(s.traffic.len(), 3);
}

mod robustness {
    use super::*;
    use proptest::prelude::*;

    /// Values that stress every stage: wrong types, zero, negative, huge,
    /// non-finite, empty, patterns, unit edge cases.
    const VALUES: &[&str] = &[
        "0",
        "-1",
        "1.5",
        "4294967296",
        "18446744073709551615",
        "nan",
        "inf",
        "true",
        "\"\"",
        "\"0s\"",
        "\"0B\"",
        "\"0bps\"",
        "\"-5Mbps\"",
        "\"1e3Mbps\"",
        "\"99999999999h\"",
        "\"0.0000001ns\"",
        "\"*\"",
        "\"r0\"",
        "\"src*\"",
        "\"sink0\"",
        "[]",
        "{}",
        "[\"1ms\"]",
        "{ type = \"prio\", bands = [] }",
        "\"µs\"",
        "\"60pkts\"",
        "\"65536B\"",
    ];

    fn good_texts() -> Vec<String> {
        ["scenarios/examples", "tests/scenarios/good"]
            .iter()
            .flat_map(|d| toml_files(d))
            .map(|f| std::fs::read_to_string(f).unwrap())
            .collect()
    }

    /// One random edit of a scenario text: a value replaced, a line
    /// dropped or doubled, or the text cut short.
    fn mutate(text: &str, kind: u8, at: usize, value: usize) -> String {
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        if lines.is_empty() {
            return text.to_string();
        }
        let i = at % lines.len();
        match kind % 4 {
            0 => {
                if let Some((k, _)) = lines[i].split_once('=') {
                    lines[i] = format!("{k}= {}", VALUES[value % VALUES.len()]);
                }
            }
            1 => {
                lines.remove(i);
            }
            2 => {
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            _ => {
                let mut cut = at % text.len().max(1);
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                return text[..cut].to_string();
            }
        }
        lines.join("\n")
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, .. ProptestConfig::default() })]

        #[test]
        fn mutated_scenarios_load_or_fail_cleanly_never_panic(
            file in any::<usize>(), kind in any::<u8>(), at in any::<usize>(), value in any::<usize>(),
            kind2 in any::<u8>(), at2 in any::<usize>(),
        ) {
            let texts = good_texts();
            let text = &texts[file % texts.len()];
            let m = mutate(&mutate(text, kind, at, value), kind2, at2, value / 7);
            match load_str(&m, "m.toml", &[], Some(&root().join("tests/scenarios/good"))) {
                Ok(_) => {}
                Err(ScenarioError::Config(ds)) => {
                    prop_assert!(!ds.is_empty());
                    for d in ds {
                        prop_assert!(!d.message.is_empty() && !d.message.contains('`'), "{}", d);
                    }
                }
                Err(e) => prop_assert!(false, "not a configuration error: {}", e),
            }
        }

        #[test]
        fn random_overrides_load_or_fail_cleanly_never_panic(
            path in prop::sample::select(vec![
                "duration", "topology.sources", "topology.routers", "topology.bottleneck.queue.max_th",
                "topology.bottleneck.queue", "topology.bottleneck.rate", "topology.egress.rate", "traffic.0.flows",
                "traffic.0", "traffic.0.size", "traffic.0.size.base", "traffic.3.x", "metrics.trace_flows",
                "metrics.bin", "topology.preset", "traffic.0.model", "name", "", "a..b", "traffic.0.arrivals.rate",
                "traffic[cbr].flows", "traffic[cbr]", "traffic[x]", "traffic[name=cbr].size", "traffic[model=cbr]",
                "traffic[]", "traffic[", "traffic]", "traffic[a[b]]", "duration[x]", "[cbr].flows", "traffic[cbr]x",
                "traffic[\"cbr\"].stop", "topology[x]", "traffic[cbr].size[x]",
            ]),
            value in any::<usize>(),
            sep in prop::sample::select(vec!["=", "", "=="]),
        ) {
            let o = vec![format!("{path}{sep}{}", VALUES[value % VALUES.len()])];
            match load_str(&red_dumbbell_text(), "red.toml", &o, None) {
                Ok(_) | Err(ScenarioError::Config(_)) => {}
                Err(e) => prop_assert!(false, "not a configuration error: {}", e),
            }
        }

        #[test]
        fn any_override_text_loads_or_fails_cleanly_never_panics(key in "[a-z0-9_.\\[\\]=>\"'µ -]{0,40}") {
            let o = vec![format!("{key}=3")];
            match load_str(&red_dumbbell_text(), "red.toml", &o, None) {
                Ok(_) | Err(ScenarioError::Config(_)) => {}
                Err(e) => prop_assert!(false, "not a configuration error: {}", e),
            }
        }
    }
}

/// Every built-in and good scenario, with its estimate: all far below the
/// default limits (the estimate refuses absurd inputs, not real ones).
#[test]
fn built_in_scenarios_are_estimated_far_below_the_default_limits() {
    use qoslab_scenario::expand::expand;
    use qoslab_scenario::validate::estimate;
    let mut files = Vec::new();
    let dirs = ["scenarios/examples", "scenarios/mace", "scenarios/dcbt", "scenarios/edge", "scenarios/tcp_cac"];
    for dir in dirs.into_iter().chain(["tests/scenarios/good"]) {
        files.extend(toml_files(dir));
    }
    assert!(files.len() >= 20, "{}", files.len());
    for f in files {
        let s = load_file(&f, &[]).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        // Replay rows are not needed for the bound checked here.
        let e = estimate(&s, &expand(&s.topology), &Default::default());
        let (mem, ev) = (e.memory_bytes(), e.event_count());
        // The largest: tcp_cac/table4, 600 s of queue series on 202 link directions (1.1 GiB).
        assert!(mem < (2u64 << 30) as f64 && ev < 1e9, "{}: {mem} B, {ev} events", f.display());
    }
}

/// Every scenario file under `scenarios/` and `tests/scenarios/` but the bad ones.
fn every_good_scenario() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let p = e.unwrap().path();
            if p.is_dir() && p.file_name().is_some_and(|n| n != "bad") {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "toml") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root().join("scenarios"), &mut out);
    walk(&root().join("tests/scenarios"), &mut out);
    out.sort();
    out
}

#[test]
fn every_scenario_reads_back_from_its_echo_unchanged() {
    // A sweep hands its workers the echo (`ValidScenario::restore`): it must hold every field.
    let mut n = 0;
    for f in every_good_scenario() {
        let Ok(v) = load_file(&f, &[]) else { continue };
        let echo = serde_json::to_string(&v).unwrap();
        let back = ValidScenario::restore(&echo).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert_eq!(back, v, "{}", f.display());
        n += 1;
    }
    assert!(n > 20, "only {n} scenarios read");
}

#[test]
fn every_scenarios_numeric_form_has_numbers_for_units() {
    use qoslab_core::units::parse_packets;
    fn walk(v: &serde_json::Value, at: &str, file: &Path) {
        match v {
            serde_json::Value::String(s) => {
                let unit = Rate::parse(s).is_ok() || Dur::parse(s).is_ok() || Bytes::parse(s).is_ok();
                assert!(!unit && parse_packets(s).is_err(), "{}: {at} = {s:?} is text with a unit", file.display());
            }
            serde_json::Value::Array(a) => a.iter().enumerate().for_each(|(i, x)| walk(x, &format!("{at}.{i}"), file)),
            serde_json::Value::Object(m) => m.iter().for_each(|(k, x)| walk(x, &format!("{at}.{k}"), file)),
            _ => {}
        }
    }
    for f in every_good_scenario() {
        let Ok(v) = load_file(&f, &[]) else { continue };
        let numeric = qoslab_scenario::units::numeric(|| serde_json::to_value(&v)).unwrap();
        walk(&numeric, "", &f);
        // Outside `numeric` the echo is as it always was (units as text).
        assert_eq!(serde_json::to_value(&v).unwrap()["duration"], serde_json::json!(v.duration.to_string()));
    }
}
