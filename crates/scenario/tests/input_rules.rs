//! Input that used to pass validation and then fail, mislead or do
//! nothing: each is refused with the field and what is
//! allowed, or, when it is legal but almost surely a mistake, warned about;
//! every front (command line, Python) gets these from here.

use qoslab_scenario::expand::expand;
use qoslab_scenario::load::load_str;
use qoslab_scenario::{ScenarioError, ValidScenario};

/// A small valid scenario (1 s, 2 CBR flows over a RED dumbbell), shared with the Python corpus.
const BASE: &str = include_str!("../../../tests/scenarios/small_dumbbell.toml");

fn load(text: &str) -> Result<ValidScenario, Vec<(String, String)>> {
    load_str(text, "t.toml", &[], None).map_err(|e| match e {
        ScenarioError::Config(ds) => ds.into_iter().map(|d| (d.path, d.message)).collect(),
        ScenarioError::Io { message, .. } => vec![(String::new(), message)],
    })
}

fn with(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "{from:?}");
    BASE.replace(from, to)
}

/// The paths of the errors of `text` (it must be refused).
fn refused(text: &str) -> Vec<(String, String)> {
    match load(text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

/// The paths and messages of the warnings of `text` (it must be valid).
fn warnings(text: &str) -> Vec<(String, String)> {
    match load(text) {
        Ok(v) => v.warnings().iter().map(|d| (d.path.clone(), d.message.clone())).collect(),
        Err(e) => panic!("refused: {e:?}\n{text}"),
    }
}

#[test]
fn the_base_scenario_is_valid_without_a_warning() {
    assert_eq!(warnings(BASE), vec![]);
}

#[test]
fn a_fixed_dst_port_is_refused_where_the_run_would_repeat_a_flow_key() {
    // 66,000 flows over 2 sources: flows 0 and 64,512 are both src0 -> sink0 with source port 1024.
    let text = with("flows = 2\n", "flows = 66000\ndst_port = 5004\n");
    let e = refused(&text);
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].0, "traffic.0.dst_port");
    assert!(e[0].1.contains("flow cbr.64512") && e[0].1.contains("cbr.0"), "{}", e[0].1);
    assert!(e[0].1.contains("at most 64512 flows in cbr"), "{}", e[0].1);
    // Without dst_port the same flows are distinct; with 5 sources no pair repeats within 5 x 64,512.
    assert!(load(&with("flows = 2\n", "flows = 66000\n")).is_ok());
    let five = with("flows = 2\n", "flows = 66000\ndst_port = 5004\n").replace("sources = 2", "sources = 5");
    assert!(load(&five).is_ok());
    // Flows of an arrival process are numbered as they come: a warning, not an error.
    let arrivals = with(
        "flows = 2\n",
        "dst_port = 5004\narrivals = { process = \"poisson\", rate = 2000.0, lifetime = \"10ms\" }\n",
    )
    .replace("duration = \"1s\"", "duration = \"60s\"");
    let w = warnings(&arrivals);
    assert_eq!(w.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>(), ["traffic.0.dst_port"], "{w:?}");
}

#[test]
fn names_are_refused_when_they_cannot_name_a_result_folder_or_file() {
    let long = "n".repeat(241);
    let e = refused(&with("name = \"base\"", &format!("name = \"{long}\"")));
    assert_eq!(e[0].0, "name");
    assert!(e[0].1.contains("at most 240"), "{}", e[0].1);
    let e = refused(&with("name = \"cbr\"", &format!("name = \"{long}\"")));
    assert_eq!(e[0].0, "traffic.0.name");
    assert!(load(&with("name = \"base\"", &format!("name = \"{}\"", "n".repeat(240)))).is_ok());
}

#[test]
fn text_fields_are_bounded() {
    let e = refused(&with("name = \"base\"", &format!("name = \"base\"\ndescription = \"{}\"", "d".repeat(4097))));
    assert_eq!(e[0].0, "description");
    assert_eq!(e[0].1, "is 4097 bytes of text; allowed: at most 4 KiB");
    assert!(load(&with("name = \"base\"", &format!("name = \"base\"\ndescription = \"{}\"", "d".repeat(4096)))).is_ok());
}

#[test]
fn a_limit_list_with_two_packet_counts_is_refused_at_its_field() {
    let e = refused(&with("limit = \"60pkts\"", "limit = [\"60pkts\", \"70pkts\"]"));
    assert_eq!(e[0].0, "topology.bottleneck.queue.limit", "{e:?}");
    assert!(e[0].1.contains("two packet counts"), "{}", e[0].1);
    let e = refused(&with("limit = \"60pkts\"", "limit = [\"64kB\", \"1MB\"]"));
    assert!(e[0].1.contains("two sizes"), "{}", e[0].1);
    assert!(load(&with("limit = \"60pkts\"", "limit = [\"60pkts\", \"64kB\"]")).is_ok());
}

#[test]
fn red_thresholds_at_or_above_the_limit_warn() {
    let w = warnings(&with("max_th = 15", "max_th = 80"));
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].0, "topology.bottleneck.queue.max_th");
    assert!(w[0].1.contains("not below the queue's limit (60 packets)"), "{}", w[0].1);
}

#[test]
fn start_jitter_beyond_the_run_warns_with_the_share_of_flows_that_never_start() {
    let w = warnings(&with("size = \"1000B\"", "size = \"1000B\"\nstart_jitter = \"2s\""));
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].0, "traffic.0.start_jitter");
    assert!(w[0].1.contains("about 50% of its 2 flow(s) never start"), "{}", w[0].1);
    assert_eq!(warnings(&with("size = \"1000B\"", "size = \"1000B\"\nstart_jitter = \"900ms\"")), vec![]);
}

#[test]
fn tcp_groups_without_header_warn_about_one_byte_acks() {
    let ftp = with("model = \"cbr\"", "model = \"ftp\"").replace("rate = \"1Mbps\"\n", "");
    let w = warnings(&ftp);
    assert_eq!(w.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>(), ["traffic.0.header"]);
    assert!(w[0].1.contains("ACKs are 1 byte"), "{}", w[0].1);
    assert_eq!(warnings(&ftp.replace("size = \"1000B\"", "size = \"1000B\"\nheader = \"40B\"")), vec![]);
}

#[test]
fn mm_app_scales_must_increase() {
    let mm = with("model = \"cbr\"", "model = \"mm_app\"")
        .replace("rate = \"1Mbps\"\n", "mm_app = { scales = [\"2Mbps\", \"1Mbps\"] }\nheader = \"40B\"\n");
    let e = refused(&mm);
    assert_eq!(e[0].0, "traffic.0.mm_app.scales.1");
    assert!(e[0].1.contains("increasing order"), "{}", e[0].1);
}

#[test]
fn too_many_bins_blame_the_duration_when_the_bin_is_a_default() {
    let e = refused(&with("duration = \"1s\"", "duration = \"1000000h\""));
    assert!(e.iter().all(|(p, _)| p == "duration"), "{e:?}");
    assert!(e[0].1.contains("metrics.bin = 10s (its default)"), "{}", e[0].1);
    // Written by the user: the bin is blamed.
    let e = refused(&with("name = \"base\"", "name = \"base\"\nmetrics = { bin = \"10ns\" }"));
    assert_eq!(e[0].0, "metrics.bin");
}

#[test]
fn short_runs_get_about_ten_bins_by_default_and_long_runs_keep_ten_seconds() {
    let bin = |text: &str| load(text).unwrap().metrics.bin.to_string();
    assert_eq!(bin(&with("duration = \"1s\"", "duration = \"5s\"")), "500ms");
    assert_eq!(bin(&with("duration = \"1s\"", "duration = \"12s\"")), "1s");
    assert_eq!(bin(&with("duration = \"1s\"", "duration = \"29s\"")), "2s");
    assert_eq!(bin(BASE), "100ms");
    assert_eq!(bin(&with("duration = \"1s\"", "duration = \"30s\"")), "10s");
    assert_eq!(bin(&with("duration = \"1s\"", "duration = \"600s\"")), "10s");
    let own = with("duration = \"1s\"", "duration = \"5s\"\nmetrics = { bin = \"5s\" }");
    assert_eq!(bin(&own), "5s");
}

#[test]
fn a_sweep_file_given_as_a_scenario_gets_one_message() {
    let e = refused("[sweep]\nscenario = \"a.toml\"\nseeds = 3\n");
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].0, "sweep");
    assert!(e[0].1.contains("qoslab sweep FILE"), "{}", e[0].1);
}

#[test]
fn seeds_beyond_toml_integers_point_to_the_seed_option() {
    let e = refused(&with("name = \"base\"", "name = \"base\"\nseed = 18446744073709551615"));
    assert_eq!(e[0].0, "seed");
    assert!(e[0].1.contains("--seed"), "{}", e[0].1);
    let e = load_str(BASE, "t.toml", &["seed=18446744073709551615".into()], None).unwrap_err().to_string();
    assert!(e.contains("seed: 18446744073709551615 is too large for a TOML integer"), "{e}");
    assert!(!e.contains("found the text"), "{e}");
}

#[test]
fn parking_lot_hops_take_their_own_queues() {
    let lot = r#"
name = "p"
duration = "60s"

[topology]
preset = "parking_lot"
bottlenecks = 2
access = { rate = "100Mbps", delay = "1ms" }
bottleneck = { rate = "10Mbps", delay = "5ms", queue = { type = "fifo", limit = "50pkts" } }
hop_queues = [
  { type = "red", limit = "60pkts", min_th = 5, max_th = 15 },
  { type = "fifo", limit = "20pkts" },
]
"#;
    let v = load(lot).unwrap();
    let net = expand(&v.topology);
    let hop = |a: &str, b: &str| {
        let (ia, ib) = (net.index_of(a).unwrap(), net.index_of(b).unwrap());
        let l = net.links.iter().find(|l| l.a == ia && l.b == ib).unwrap();
        l.spec.queue.as_ref().unwrap().type_name()
    };
    assert_eq!((hop("r0", "r1"), hop("r1", "r2")), ("red", "fifo"));
    let e = refused(&lot.replace("  { type = \"fifo\", limit = \"20pkts\" },\n", ""));
    assert_eq!(e[0].0, "topology.hop_queues");
    let e = refused(&lot.replace("limit = \"20pkts\"", "limit = \"0pkts\""));
    assert!(e[0].0.starts_with("topology.hop_queues.1"), "{e:?}");
    // Without hop_queues every hop has bottleneck.queue (and the echo is unchanged).
    let plain = lot.replace(lot.split("hop_queues").nth(1).unwrap(), "").replace("hop_queues", "");
    let v = load(&plain).unwrap();
    assert!(!serde_json::to_string(&v).unwrap().contains("hop_queues"));
}
