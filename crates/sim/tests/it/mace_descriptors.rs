//! MACE descriptor files wired to scenarios: a link's `mace.descriptors`
//! names a flow-setup file next to the scenario ([MACE98 §3] "Flow
//! Setup"), the alternative to inline `ports`; the file's problems keep
//! its own file:line.

use crate::common::*;
use qoslab_scenario::load::{load_file, load_str};
use qoslab_sim::{RunOptions, SimError};
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn good() -> PathBuf {
    root().join("tests/scenarios/good")
}

fn good_text() -> String {
    std::fs::read_to_string(good().join("mace_descriptor_file.toml")).unwrap()
}

#[test]
fn a_descriptor_file_runs_exactly_like_the_same_ports_inline() {
    let from_file = load_file(&good().join("mace_descriptor_file.toml"), &[]).unwrap_or_else(|e| panic!("{e}"));
    let inline_text = good_text().replace(
        "descriptors = \"mace_voice.descriptors\"",
        "ports = [{ port = 5004, rate = \"77.2kbps\", depth = \"386B\", threshold = 100 }]",
    );
    let inline = load_str(&inline_text, "inline.toml", &[], None).unwrap_or_else(|e| panic!("{e}"));
    let opts = |seed| RunOptions { seed, base_dir: good(), progress: None };
    let a = qoslab_sim::run::run(&from_file, opts(3)).unwrap_or_else(|e| panic!("{e}"));
    let b = qoslab_sim::run::run(&inline, opts(3)).unwrap_or_else(|e| panic!("{e}"));
    let kinds = strs(&a.events, "kind");
    assert!(kinds.iter().any(|k| k == "admit"), "no MACE admission in {kinds:?}");
    assert!(same_table(&a.events, &b.events) && same_table(&a.flows, &b.flows));
}

#[test]
fn a_run_looks_the_descriptor_file_up_in_its_base_dir() {
    let sc = load_file(&good().join("mace_descriptor_file.toml"), &[]).unwrap();
    // From another folder the file is not there: a configuration error naming the field.
    let Err(SimError::Config(ds)) = try_run(&sc, 1) else { panic!("ran without its descriptor file") };
    assert!(ds.iter().any(|d| d.path == "topology.bottleneck.mace.descriptors"), "{ds:?}");
}

#[test]
fn descriptor_file_errors_keep_the_files_own_line() {
    let text = good_text().replace("mace_voice.descriptors", "mace_bad_rate.descriptors");
    let bad = root().join("tests/scenarios/bad");
    let Err(SimError::Config(ds)) = load_str(&text, "s.toml", &[], Some(&bad)).map_err(SimError::from) else {
        panic!("accepted")
    };
    let file = bad.join("mace_bad_rate.descriptors").display().to_string();
    let d = ds.iter().find(|d| d.origin == file).unwrap_or_else(|| panic!("no diagnostic in {file}: {ds:?}"));
    assert_eq!(d.line, Some(6), "{d}");
    assert!(d.path.ends_with("rate") && d.message.contains("\"fast\""), "{d}");
    assert!(d.to_string().starts_with(&format!("{file}:6: ")), "{d}");
    assert!(d.message.contains("allowed") && d.message.contains("topology.bottleneck.mace.descriptors"), "{d}");
}

#[test]
fn a_mace_table_needs_exactly_one_of_ports_and_descriptors() {
    let neither = good_text().replace("descriptors = \"mace_voice.descriptors\"\n", "");
    let Err(SimError::Config(ds)) = load_str(&neither, "s.toml", &[], Some(&good())).map_err(SimError::from) else {
        panic!("accepted")
    };
    assert!(
        ds.iter().any(|d| d.path == "topology.bottleneck.mace.ports" && d.message.contains("exactly one of")),
        "{ds:?}"
    );
    let missing = good_text().replace("mace_voice.descriptors", "no_such.descriptors");
    let Err(SimError::Config(ds)) = load_str(&missing, "s.toml", &[], Some(&good())).map_err(SimError::from) else {
        panic!("accepted")
    };
    let d = ds.iter().find(|d| d.path == "topology.bottleneck.mace.descriptors").expect("names the field");
    assert_eq!((d.origin.as_str(), d.line), ("s.toml", Some(18)), "{d}");
    assert!(d.message.contains("no_such.descriptors"), "{d}");
}
