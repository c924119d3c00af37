//! Tests of the structural check: every kind of problem, with its path.

use super::*;

fn doc(text: &str) -> toml::Table {
    toml::from_str(text).unwrap()
}

const MINIMAL: &str = r#"
name = "t"
duration = "1s"
[topology]
preset = "dumbbell"
sources = 1
access = { rate = "10Mbps", delay = "1ms" }
bottleneck = { rate = "1Mbps", delay = "1ms" }
"#;

fn paths(ps: &[Problem]) -> Vec<&str> {
    ps.iter().map(|p| p.path.as_str()).collect()
}

/// The unit alternatives of a pattern: the words in its last group (the
/// rate pattern's link names, in an outer group, are not units).
fn pattern_units(p: &str) -> Vec<&str> {
    let inner = p.rsplit_once(r"\s*(").unwrap().1.split_once(r")\s*$").unwrap().0;
    inner.trim_end_matches(')').split('|').collect()
}

#[test]
fn unit_patterns_list_exactly_the_units_the_parsers_read() {
    let candidates = [
        "bps", "b/s", "kbps", "Kbps", "kb/s", "Mbps", "mbps", "Mb/s", "Gbps", "gbps", "Gb/s", "Tbps", "Tb/s", "bit",
        "kbit", "Kbit", "mbit", "Mbit", "gbit", "Gbit", "tbit", "Tbit", "tbps", "MBps", "ns", "us", "µs", "ms", "s",
        "min", "h", "B", "kB", "KB", "MB", "GB", "KiB", "MiB", "GiB", "pkts", "pkt", "p", "packets", "b", "Bps", "sec",
        "m", "kb", "TB", "pk",
    ];
    // [Zhang07]'s link names are whole values, not units.
    for name in ["T1", "T3", "OC3", "OC12", "OC48"] {
        assert!(Unit::Rate.parses(name) && RATE_PATTERN.contains(&format!("{name}|")), "{name}");
    }
    for (pattern, unit) in [(RATE_PATTERN, Unit::Rate), (DUR_PATTERN, Unit::Dur), (BYTES_PATTERN, Unit::Bytes)]
        .into_iter()
        .chain([(LIMIT_PATTERN, Unit::Limit)])
    {
        let listed = pattern_units(pattern);
        for c in candidates {
            let reads = unit.parses(&format!("1{c}"));
            assert_eq!(reads, listed.contains(&c), "{unit:?} {c:?}: parser {reads}, pattern {listed:?}");
        }
    }
}

#[test]
fn minimal_scenario_has_no_problems() {
    assert_eq!(check(&doc(MINIMAL)), vec![]);
}

#[test]
fn unknown_fields_are_reported_with_the_allowed_ones() {
    let ps = check(&doc(&format!("{MINIMAL}\n[metrics]\nbinn = \"1s\"\n")));
    assert_eq!(paths(&ps), ["metrics.binn"]);
    assert!(
        ps[0].message.starts_with("unknown field \"binn\"; allowed: bin, flow_histograms, interarrival_bin"),
        "{ps:?}"
    );
}

#[test]
fn a_tagged_table_is_checked_against_its_variant() {
    let t = MINIMAL.replace("bottleneck = { rate = \"1Mbps\", delay = \"1ms\" }", "");
    let q = |q: &str| {
        doc(&format!(
            "{t}\n[topology.bottleneck]\nrate = \"1Mbps\"\ndelay = \"1ms\"\nqueue = {{ {} }}\n",
            q.replace('\n', ", ")
        ))
    };
    // min_th is a RED field, not a FIFO one.
    let ps = check(&q("type = \"fifo\"\nlimit = \"5pkts\"\nmin_th = 3"));
    assert_eq!(paths(&ps), ["topology.bottleneck.queue.min_th"]);
    assert!(ps[0].message.contains("allowed: limit, type"), "{ps:?}");
    let ps = check(&q("type = \"red\"\nlimit = \"5pkts\""));
    assert_eq!(paths(&ps), ["topology.bottleneck.queue.min_th", "topology.bottleneck.queue.max_th"]);
    let ps = check(&q("limit = \"5pkts\""));
    assert_eq!(paths(&ps), ["topology.bottleneck.queue.type"]);
    let types = crate::registry::QUEUE_TYPES.join(", ");
    assert_eq!(ps[0].message, format!("missing; allowed: {types}"));
    let ps = check(&q("type = 3\nlimit = \"5pkts\""));
    assert_eq!(ps[0].message, format!("found the number 3; allowed: {types}"));
}

#[test]
fn nested_bands_and_lists_carry_indices_in_their_paths() {
    let text = MINIMAL.replace(
        "bottleneck = { rate = \"1Mbps\", delay = \"1ms\" }",
        "bottleneck = { rate = \"1Mbps\", delay = \"1ms\", queue = { type = \"prio\", bands = [\
         { type = \"fifo\", limit = \"5pkts\" }, { type = \"fifo\", limit = [\"5pkts\", \"3 apples\"] }] } }",
    );
    let ps = check(&doc(&text));
    assert_eq!(paths(&ps), ["topology.bottleneck.queue.bands.1.limit.1"]);
    assert!(ps[0].message.starts_with("cannot read \"3 apples\"; allowed: a packet count"), "{ps:?}");
    let three = text.replace("[\"5pkts\", \"3 apples\"]", "[\"5pkts\", \"1kB\", \"2kB\"]");
    let ps = check(&doc(&three));
    assert!(ps[0].message.starts_with("has 3 entries; allowed: 1 to 2 entries"), "{ps:?}");
}

#[test]
fn numbers_accept_integers_but_not_infinities_and_integers_keep_their_range() {
    let t = |extra: &str| {
        doc(&format!(
            "{MINIMAL}\n[[traffic]]\nname = \"g\"\nmodel = \"on_off\"\nsrc = \"src0\"\ndst = \"sink0\"\n\
             size = \"1B\"\non = \"1s\"\noff = \"1s\"\npeak = \"1Mbps\"\n{extra}\n"
        ))
    };
    assert_eq!(check(&t("shape = 2")), vec![]);
    let ps = check(&t("shape = inf"));
    assert_eq!(paths(&ps), ["traffic.0.shape"]);
    assert!(ps[0].message.contains("not a finite number"));
    let ps = check(&t("class = 300"));
    assert_eq!(ps[0].message, "300 is out of range; allowed: a whole number from 0 to 255");
    let ps = check(&t("ecn = \"yes\""));
    assert_eq!(ps[0].message, "found the text \"yes\"; allowed: true or false");
    let ps = check(&t("dist = \"weibull\""));
    assert_eq!(ps[0].message, "unknown value \"weibull\"; allowed: exponential, pareto");
}

#[test]
fn untagged_sizes_pick_the_alternative_of_the_value_type() {
    let t = |size: &str| {
        doc(&format!(
            "{MINIMAL}\n[[traffic]]\nname = \"g\"\nmodel = \"poisson\"\nrate = \"1Mbps\"\nsrc = \"src0\"\n\
             dst = \"sink0\"\nsize = {size}\n"
        ))
    };
    assert_eq!(check(&t("{ base = \"1B\", exp_mean = \"2B\" }")), vec![]);
    let ps = check(&t("{ base = \"1B\" }"));
    assert_eq!(paths(&ps), ["traffic.0.size.exp_mean"]);
    let ps = check(&t("1000"));
    assert!(ps[0].message.starts_with("found the number 1000; allowed: a size such as"), "{ps:?}");
}

#[test]
fn negative_units_are_called_negative() {
    assert_eq!(
        Unit::Rate.problem("-5Mbps").unwrap(),
        format!("\"-5Mbps\" is negative; allowed: {}", Unit::Rate.allowed())
    );
    assert!(Unit::Dur.problem("5 parsecs").unwrap().starts_with("cannot read \"5 parsecs\""));
    assert_eq!(Unit::Bytes.problem("1.5kB"), None);
}

#[test]
fn settable_paths_follow_the_model_and_the_document() {
    let d = doc(&format!("{MINIMAL}\n[[traffic]]\nname = \"g\"\nmodel = \"cbr\"\n"));
    assert_eq!(settable(&d, &["duration"]), Ok(()));
    assert_eq!(settable(&d, &["topology", "routers"]), Ok(()));
    assert_eq!(settable(&d, &["topology", "egress", "rate"]), Ok(()), "an absent optional table");
    assert_eq!(settable(&d, &["traffic", "0", "interval"]), Ok(()));
    // Without a queue table yet, any queue type's field may be set.
    assert_eq!(settable(&d, &["topology", "bottleneck", "queue", "max_th"]), Ok(()));
    let e = settable(&d, &["topology", "bottlenecks"]).unwrap_err();
    assert!(e.contains("has no field \"bottlenecks\"; allowed: access, bottleneck, default_queue"), "{e}");
    let e = settable(&d, &["traffic", "0", "on"]).unwrap_err();
    assert!(e.contains("has no field \"on\""), "the group is CBR: {e}");
    let e = settable(&d, &["traffic", "2", "flows"]).unwrap_err();
    assert!(e.contains("has no entry \"2\"; allowed: 0 to 0"), "{e}");
    let e = settable(&d, &["name", "x"]).unwrap_err();
    assert!(e.contains("\"name\" is a string in quotes: it has no field \"x\""), "{e}");
}
