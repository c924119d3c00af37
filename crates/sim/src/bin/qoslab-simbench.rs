//! Whole-run benchmark: runs a scenario file and prints one JSON line with
//! bottleneck arrivals (drops included) per wall-second of the event loop,
//! events per second, loop seconds and peak RSS.
//!
//! ```text
//! qoslab-simbench FILE [--duration S] [--seed N] [--repeat K]
//!                      [--sources N --source-rate RATE] [--set key.path=value ...]
//! ```
//!
//! `--sources N --source-rate RATE` turn a dumbbell with one CBR group into
//! N sources of RATE each (the 4,000 x 10 kb/s scale case of docs/performance.md); the start
//! jitter then becomes one packet period at RATE, so that the sources are
//! spread over a period as in the reference (and the bare loop). With
//! `--repeat K` the scenario runs K times and the median loop time counts.
//! The file is loaded like `qoslab run` loads it
//! ([`qoslab_scenario::load::load_file`]: `--set` overrides, then
//! validation; errors exit with code 2); `--duration`, `--sources` and
//! `--source-rate` apply after that. `peak_rss_kb` is the process's
//! high-water mark, which includes the result tables of the runs.

use qoslab_core::units::{Dur, Rate};
use qoslab_scenario::load::load_file;
use qoslab_scenario::validate::validate;
use qoslab_scenario::{Scenario, SizeSpec, Topology, TrafficModel};
use qoslab_sim::RunOptions;
use std::process::ExitCode;

fn status_kb(key: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn usage() -> ExitCode {
    eprintln!(
        "usage: qoslab-simbench FILE [--duration S] [--seed N] [--repeat K] [--sources N --source-rate RATE] \
         [--set key.path=value ...]"
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(file) = args.first() else { return usage() };
    let mut duration: Option<f64> = None;
    let mut seed = 1u64;
    let mut repeat = 1usize;
    let mut sources: Option<u32> = None;
    let mut source_rate: Option<Rate> = None;
    let mut sets: Vec<String> = Vec::new();
    let mut it = args[1..].iter();
    while let Some(a) = it.next() {
        let v = it.next();
        let ok = match (a.as_str(), v) {
            ("--duration", Some(v)) => v.parse().map(|x| duration = Some(x)).is_ok(),
            ("--seed", Some(v)) => v.parse().map(|x| seed = x).is_ok(),
            ("--repeat", Some(v)) => v.parse().map(|x: usize| repeat = x.max(1)).is_ok(),
            ("--sources", Some(v)) => v.parse().map(|x| sources = Some(x)).is_ok(),
            ("--source-rate", Some(v)) => Rate::parse(v).map(|x| source_rate = Some(x)).is_ok(),
            ("--set", Some(v)) => {
                sets.push(v.clone());
                true
            }
            _ => false,
        };
        if !ok {
            return usage();
        }
    }
    let mut sc: Scenario = match load_file(std::path::Path::new(file), &sets) {
        Ok(s) => s.into_scenario(),
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    if let Some(d) = duration {
        sc.duration = Dur::from_secs_f64(d);
    }
    if let Some(n) = sources {
        if let Topology::Dumbbell { sources, .. } = &mut sc.topology {
            *sources = n;
        }
        if let Some(g) = sc.traffic.first_mut() {
            g.flows = n;
        }
    }
    if let Some(r) = source_rate {
        if let Some(g) = sc.traffic.first_mut() {
            if let (TrafficModel::Cbr { rate, .. }, SizeSpec::Fixed(size)) = (&mut g.model, &g.size) {
                *rate = Some(r);
                g.start_jitter = Dur((size.0 as u128 * 8_000_000_000 / r.0.max(1) as u128) as u64);
            }
        }
    }
    let base_dir = std::path::Path::new(file).parent().map(|p| p.to_path_buf()).unwrap_or_default();
    // The options changed the scenario: it is validated again.
    let sc = match validate(sc, file, "", Some(&base_dir)) {
        Ok(s) => s,
        Err(ds) => {
            ds.iter().for_each(|d| eprintln!("{d}"));
            return ExitCode::from(2);
        }
    };
    let mut runs = Vec::new();
    // Resident memory seen during the event loop (sampled every 2^16 events),
    // before the result tables are built.
    let mut loop_rss_kb = 0u64;
    let mut series_rows = 0usize;
    for _ in 0..repeat {
        let mut watch = |_: f64| {
            loop_rss_kb = loop_rss_kb.max(status_kb("VmRSS:").unwrap_or(0));
            true
        };
        let opts = RunOptions { seed, base_dir: base_dir.clone(), progress: Some(&mut watch) };
        match qoslab_sim::run::run(&sc, opts) {
            Ok(out) => {
                series_rows = out.series.rows();
                runs.push(out.summary)
            }
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(1);
            }
        }
    }
    let wall = |s: &serde_json::Value| s["loop_wall_s"].as_f64().unwrap_or(f64::NAN);
    runs.sort_by(|a, b| wall(a).total_cmp(&wall(b)));
    let s = &runs[runs.len() / 2];
    let loop_s = wall(s);
    let events = s["events"].as_u64().unwrap_or(0);
    let b = &s["bottleneck"];
    let arrivals = b["arrivals"].as_u64().unwrap_or(0);
    let drops: u64 = b["drops"].as_object().map_or(0, |m| m.values().filter_map(|v| v.as_u64()).sum());
    let line = serde_json::json!({
        "scenario": sc.name,
        "sim_time_s": s["sim_time_s"],
        "seed": seed,
        "runs": repeat,
        "loop_s": loop_s,
        "events": events,
        "events_per_s": events as f64 / loop_s,
        "bottleneck": b["name"],
        "bottleneck_arrivals": arrivals,
        "bottleneck_drops": drops,
        "bottleneck_drops_early": b["drops"]["early_random"],
        "bottleneck_drops_forced": b["drops"]["forced"],
        "bottleneck_arrivals_per_s": arrivals as f64 / loop_s,
        "delivered": s["packets"]["delivered"],
        "peak_rss_kb": status_kb("VmHWM:"),
        "loop_rss_kb": loop_rss_kb,
        "series_rows": series_rows,
    });
    println!("{line}");
    ExitCode::SUCCESS
}
