//! Invariants over random scenarios (a loop over seeds; each scenario is
//! drawn from its own seed so a failure names the case): packets are
//! conserved per flow, per queue and in the whole network, no queue goes
//! over its limit, and a classful queue's children add up to it.
//!
//! The queues drawn cover every kind the simulator builds: fifo, red,
//! prio, cbt, dcbt, red/cbt/dcbt with ChIPS, and MACE on the bottleneck
//! (with a CL port that the first group's flows use, so that CL packets
//! push BE packets out). A flow's packets in flight are counted from what
//! the network holds at the end, so the per-flow identity checks the
//! accounting of every drop, pushed-out packets included.

use crate::common::*;
use rand::{Rng, SeedableRng};
use std::collections::BTreeSet;

/// The queue kinds (the queues table's `kind`) the cases must cover.
const KINDS: [&str; 9] =
    ["fifo", "red", "strict_priority", "cbt", "dcbt", "red+chips", "cbt+chips", "dcbt+chips", "mace"];

/// A RED-family queue (`red`, `cbt` or `dcbt`), with or without ChIPS.
fn red_family_toml(rng: &mut impl Rng) -> String {
    let kind = ["red", "cbt", "dcbt"][rng.random_range(0..3)];
    let min = rng.random_range(1..10);
    let chips = match rng.random_range(0..3) {
        0 => String::new(),
        1 => ", chips = true".to_string(),
        _ => format!(", chips = {{ max_tagged_share = {:.2} }}", 0.1 + rng.random::<f64>() * 0.9),
    };
    format!(
        "{{ type = \"{kind}\", limit = \"{}pkts\", min_th = {min}, max_th = {}, max_p = {:.2}, w_q = {:.3}{chips} }}",
        min + 10 + rng.random_range(0..30),
        min + 1 + rng.random_range(0..10),
        0.05 + rng.random::<f64>() * 0.9,
        0.001 + rng.random::<f64>() * 0.2,
    )
}

/// A MACE bottleneck: its queue and the link's `mace` table, with one CL
/// port (5004) recognized after a few packets.
fn mace_toml(rng: &mut impl Rng) -> (String, String) {
    let queue = format!("{{ type = \"mace\", buffer = \"{}pkts\" }}", 2 + rng.random_range(0..40));
    let admission = if rng.random_bool(0.5) {
        "{ type = \"ssac\" }".to_string()
    } else {
        format!("{{ type = \"mbac\", v = 0.95, sample = \"{}ms\", window = 4 }}", 50 + rng.random_range(0..200))
    };
    let mace = format!(
        ", mace = {{ ports = [{{ port = 5004, rate = \"{}kbps\", depth = \"3000B\", threshold = {} }}], \
         admission = {admission}, allocation = \"{}kbps\", device_queue = {}, be_dispatch = \"{}\" }}",
        50 + rng.random_range(0..500),
        1 + rng.random_range(0..20),
        200 + rng.random_range(0..5000),
        1 + rng.random_range(0..3),
        if rng.random_bool(0.5) { "when_room" } else { "when_idle" },
    );
    (queue, mace)
}

fn queue_toml(rng: &mut impl Rng) -> String {
    let fifo =
        |rng: &mut dyn rand::RngCore| format!("{{ type = \"fifo\", limit = \"{}pkts\" }}", 1 + rng.next_u32() % 40);
    match rng.random_range(0..6) {
        4 | 5 => red_family_toml(rng),
        0 => fifo(rng),
        1 => format!(
            "{{ type = \"fifo\", limit = [\"{}pkts\", \"{}B\"] }}",
            1 + rng.random_range(0..60),
            1500 + rng.random_range(0..20_000)
        ),
        2 => {
            let min = rng.random_range(1..10);
            format!(
                "{{ type = \"red\", limit = \"{}pkts\", min_th = {min}, max_th = {}, max_p = {:.2}, w_q = {:.3}, gentle = {}, ecn = {} }}",
                min + 10 + rng.random_range(0..30),
                min + 1 + rng.random_range(0..10),
                0.05 + rng.random::<f64>() * 0.9,
                0.001 + rng.random::<f64>() * 0.2,
                rng.random_bool(0.5),
                rng.random_bool(0.5),
            )
        }
        _ => {
            let band0 = fifo(rng);
            let ecn = rng.random_bool(0.5);
            format!(
                "{{ type = \"prio\", bands = [{band0}, {{ type = \"red\", limit = \"30pkts\", min_th = 3, max_th = 9, ecn = {ecn} }}] }}"
            )
        }
    }
}

fn traffic_toml(rng: &mut impl Rng, i: usize, srcs: &str, extra: &str) -> String {
    let size = if rng.random_bool(0.5) {
        format!("\"{}B\"", 40 + rng.random_range(0..1460))
    } else {
        format!("{{ base = \"{}B\", exp_mean = \"{}B\" }}", 20 + rng.random_range(0..200), 1 + rng.random_range(0..800))
    };
    let model = match rng.random_range(0..3) {
        0 => format!("model = \"cbr\"\nrate = \"{}kbps\"", 100 + rng.random_range(0..3000)),
        1 => format!("model = \"poisson\"\nrate = \"{}kbps\"", 100 + rng.random_range(0..3000)),
        _ => format!(
            "model = \"on_off\"\npeak = \"{}kbps\"\non = \"{}ms\"\noff = \"{}ms\"\ndist = \"{}\"",
            200 + rng.random_range(0..5000),
            1 + rng.random_range(0..300),
            1 + rng.random_range(0..300),
            if rng.random_bool(0.5) { "pareto" } else { "exponential" }
        ),
    };
    let arrivals = match rng.random_range(0..4) {
        0 => "arrivals = { process = \"poisson\", rate = 3.0, lifetime = \"700ms\" }\n".to_string(),
        1 => "arrivals = { process = \"keep_alive\", alive = 2, lifetime = \"400ms\" }\n".to_string(),
        _ => format!("flows = {}\nstart_jitter = \"50ms\"\n", 1 + rng.random_range(0..6)),
    };
    format!(
        "[[traffic]]\nname = \"g{i}\"\n{model}\nsrc = \"{srcs}\"\ndst = \"sink*\"\nsize = {size}\nheader = \"{}B\"\nclass = {}\necn = {}\n{extra}{arrivals}",
        rng.random_range(0..60),
        rng.random_range(0..3),
        rng.random_bool(0.3)
    )
}

fn random_scenario(case: u64) -> (String, qoslab_scenario::ValidScenario) {
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(case);
    let routers = rng.random_range(1..=2);
    let sinks = if routers == 1 { 1 } else { rng.random_range(1..=3) };
    let access = queue_toml(&mut rng);
    // A MACE bottleneck in one case of four; the first group then uses its CL port.
    let (bottleneck, mace, g0_port) = if rng.random_bool(0.25) {
        let (q, m) = mace_toml(&mut rng);
        (q, m, "dst_port = 5004\n")
    } else {
        (queue_toml(&mut rng), String::new(), "")
    };
    let default_queue = queue_toml(&mut rng);
    let g0 = traffic_toml(&mut rng, 0, "src*", g0_port);
    let g1 = traffic_toml(&mut rng, 1, "src0", "");
    let text = format!(
        "name = \"case{case}\"\nduration = \"{}ms\"\n[topology]\npreset = \"dumbbell\"\nsources = {}\nsinks = {sinks}\nrouters = {routers}\n\
         access = {{ rate = \"{}Mbps\", delay = \"{}ms\", queue = {} }}\n\
         bottleneck = {{ rate = \"{}kbps\", delay = \"{}ms\", queue = {bottleneck}{mace} }}\n\
         default_queue = {default_queue}\n{g0}\n{g1}\n[metrics]\nbin = \"{}ms\"\nseries_interval = \"{}ms\"\ntrace_groups = [\"g0\"]\n",
        500 + rng.random_range(0..2500),
        rng.random_range(1..6),
        1 + rng.random_range(0..20),
        rng.random_range(0..10),
        access,
        500 + rng.random_range(0..10_000),
        rng.random_range(0..30),
        50 + rng.random_range(0..500),
        10 + rng.random_range(0..200),
    );
    let sc = scenario(&text);
    (text, sc)
}

/// Random cases run (each a few tenths of a second).
const CASES: u64 = 40;

#[test]
fn packets_are_conserved_and_queues_stay_within_limits_in_random_scenarios() {
    let (mut total_drops, mut pushed_out) = (0u64, 0u64);
    let mut kinds = BTreeSet::new();
    for case in 0..CASES {
        let (text, sc) = random_scenario(case);
        let out = try_run(&sc, case + 1).unwrap_or_else(|e| panic!("case {case}: {e}\n{text}"));
        let ctx = || format!("case {case}:\n{text}");
        // Per flow: sent = delivered + dropped + in flight, with in flight
        // counted from the packets held at the end (not derived).
        assert_flows_conserved(&out, &ctx());
        let f = &out.flows;
        let (s, x, i) = (u64s(f, "sent_pkts"), u64s(f, "dropped_pkts"), u64s(f, "in_flight_pkts"));
        // The whole network: what is in flight is queued, on a wire or propagating.
        let p = &out.summary["packets"];
        let held = p["queued_end"].as_u64().unwrap()
            + p["on_wire_end"].as_u64().unwrap()
            + p["propagating_end"].as_u64().unwrap();
        assert_eq!(i.iter().sum::<u64>(), held, "{}", ctx());
        // Drops seen by flows are drops counted by queues (roots).
        let q = &out.queues;
        let parent = strs(q, "parent");
        let roots: Vec<usize> = (0..q.rows()).filter(|r| parent[*r].is_empty()).collect();
        let qdrops = u64s(q, "drops");
        assert_eq!(x.iter().sum::<u64>(), roots.iter().map(|r| qdrops[*r]).sum::<u64>(), "{}", ctx());
        total_drops += qdrops.iter().sum::<u64>();
        pushed_out += u64s(q, "drops_pushed_out").iter().sum::<u64>();
        kinds.extend(strs(q, "kind"));
        // Per queue: arrivals = departures + drops + backlog at the end, and
        // the same in bytes for the totals; never above the packet limit.
        let (a, dep, be) = (u64s(q, "arrivals"), u64s(q, "departures"), u64s(q, "backlog_end_pkts"));
        let (ab, db, xb) = (u64s(q, "arrival_bytes"), u64s(q, "departure_bytes"), u64s(q, "drop_bytes"));
        let by_reason: Vec<Vec<u64>> =
            qoslab_core::DropReason::ALL.iter().map(|r| u64s(q, &format!("drops_{}", r.as_str()))).collect();
        for r in 0..q.rows() {
            assert_eq!(a[r], dep[r] + qdrops[r] + be[r], "queue {r}, {}", ctx());
            assert!(ab[r] >= db[r] + xb[r], "queue {r} bytes, {}", ctx());
            assert_eq!(by_reason.iter().map(|v| v[r]).sum::<u64>(), qdrops[r], "{}", ctx());
        }
        // A classful queue's arrivals are its children's plus unclassified drops.
        let names = strs(q, "name");
        for r in &roots {
            let kids: Vec<usize> = (0..q.rows()).filter(|k| parent[*k] == names[*r]).collect();
            if !kids.is_empty() {
                assert_eq!(a[*r], kids.iter().map(|k| a[*k]).sum::<u64>(), "{}", ctx());
                assert_eq!(dep[*r], kids.iter().map(|k| dep[*k]).sum::<u64>(), "{}", ctx());
            }
        }
        // No backlog sample above the queue's packet limit (60 at most here,
        // 70 for a prio root: bands of up to 40 and 30 packets).
        let max_pkts = u64s(q, "backlog_max_pkts");
        let kind = strs(q, "kind");
        for r in 0..q.rows() {
            let limit = if kind[r] == "strict_priority" { 70 } else { 60 };
            assert!(max_pkts[r] <= limit, "queue {} peaked at {} packets, {}", names[r], max_pkts[r], ctx());
        }
        // Binned counters add up to the totals.
        let (metric, value) = (strs(&out.series, "metric"), f64s(&out.series, "value"));
        let sent_binned: f64 = (0..out.series.rows()).filter(|k| metric[*k] == "sent_pkts").map(|k| value[k]).sum();
        assert_eq!(sent_binned as u64, s.iter().sum::<u64>(), "{}", ctx());
    }
    println!("{CASES} cases: {total_drops} queue drops, {pushed_out} pushed out; kinds {kinds:?}");
    assert!(total_drops > 0, "the random cases should congest some queue");
    assert!(pushed_out > 0, "some MACE case should push BE packets out");
    for k in KINDS {
        assert!(kinds.contains(k), "no case built a {k} queue; built: {kinds:?}");
    }
}
