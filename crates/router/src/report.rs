//! What the router reports: a JSON line per stats interval, and at exit
//! `summary.json` in the result schema's shape (`docs/results.md`): the
//! configuration echo, seed, version, `sim_time_s` (here: the run's
//! duration on the monotonic clock), `loop_wall_s`, `events`, and one
//! entry per queue with the `queues.parquet` columns.
//!
//! A stats line (`docs/router.md` lists every key):
//! ```json
//! {"t_s":3.0,"flows":12,"flow_evictions":0,"pool_used":40,"pool_capacity":4096,
//!  "events":{"admit":1,...},"wake":{"wakes":..,"late_over_1ms":..,"late_p99_ns":..,"late_max_ns":..},
//!  "dirs":[{"dir":"a->b","rx_pkts":..,"tx_pkts":..,"tx_bps":..,"backlog_pkts":..,
//!           "drops":{"early_random":..,..},"marks":{..},...}, {"dir":"b->a",...}]}
//! ```

use crate::config::DIRECTIONS;
use crate::datapath::Datapath;
use qoslab_core::qdisc::{DropReason, MarkReason};
use qoslab_core::units::Time;
use serde_json::{json, Map, Value};
use std::io::Write;
use std::path::Path;

/// Monotone counters at the previous line, for rates.
#[derive(Clone, Copy, Debug, Default)]
pub struct Prev {
    pub t: Time,
    pub tx_bytes: [u64; 2],
    pub rx_bytes: [u64; 2],
}

fn reasons<const N: usize>(names: [&'static str; N], v: [u64; N]) -> Value {
    Value::Object(names.iter().zip(v).map(|(n, c)| (n.to_string(), Value::from(c))).collect())
}

fn drop_names() -> [&'static str; DropReason::COUNT] {
    DropReason::ALL.map(|r| r.as_str())
}
fn mark_names() -> [&'static str; MarkReason::COUNT] {
    MarkReason::ALL.map(|r| r.as_str())
}

/// One direction's state as JSON.
pub fn direction_json(dp: &Datapath, d: usize, now: Time, prev: Option<&Prev>) -> Value {
    let dir = &dp.dirs[d];
    let c = &dir.counters;
    let q = dir.port.queue();
    let backlog = dir.port.backlog();
    let r = &dp.cfg.config.router;
    let mut o = json!({
        "dir": DIRECTIONS[d],
        "iface": if d == 0 { &r.a } else { &r.b },
        "queue": q.kind(),
        "rx_pkts": c.rx_pkts, "rx_bytes": c.rx_bytes,
        "tx_pkts": c.tx_pkts, "tx_bytes": c.tx_bytes,
        "kernel_drops": dir.router_drops[DropReason::Kernel as usize],
        "pool_exhausted": c.pool_exhausted,
        "not_ip_pkts": c.not_ip_pkts,
        "tx_errors": c.tx_errors, "ecn_rewrites": c.ecn_rewrites, "edge_consumed": c.edge_consumed,
        "link_lost": c.link_lost,
        "service_lost_s": c.service_lost_ns as f64 / 1e9,
        "delay_line_pkts": dp.line.held(d),
        "backlog_pkts": backlog.packets, "backlog_bytes": backlog.bytes,
        "drops": reasons(drop_names(), dp.drops(d)),
        "marks": reasons(mark_names(), dp.marks(d)),
        "classes": c.classes.iter().enumerate().filter(|(_, k)| k.tx_pkts > 0).map(|(i, k)| json!({
            "class": i, "tx_pkts": k.tx_pkts, "tx_bytes": k.tx_bytes,
            "delay_mean_s": k.delay_sum_ns as f64 / k.tx_pkts as f64 / 1e9,
            "delay_max_s": k.delay_max_ns as f64 / 1e9,
            "ahead_max_pkts": k.ahead_max,
        })).collect::<Vec<_>>(),
    });
    let mut probes = Map::new();
    q.probe(&mut |name, v| {
        if v.is_finite() {
            probes.insert(name.to_string(), Value::from(v));
        }
    });
    o["probes"] = Value::Object(probes);
    if let Some(p) = prev {
        let dt = now.0.saturating_sub(p.t.0) as f64 / 1e9;
        if dt > 0.0 {
            o["tx_bps"] = Value::from((c.tx_bytes - p.tx_bytes[d]) as f64 * 8.0 / dt);
            o["rx_bps"] = Value::from((c.rx_bytes - p.rx_bytes[d]) as f64 * 8.0 / dt);
        }
    }
    o
}

/// The whole router's state as one JSON object (a stats line, or the
/// control socket's `stats` answer).
pub fn stats_json(dp: &Datapath, now: Time, prev: Option<&Prev>) -> Value {
    let mut o = json!({
        "t_s": now.0 as f64 / 1e9,
        "flows": dp.flows.len(),
        "flow_capacity": dp.flows.capacity(),
        "flow_evictions": dp.flows.evictions,
        "pool_used": dp.pool.in_use(),
        "pool_capacity": dp.pool.capacity(),
        "events": dp.events.counts_json(),
        "wake": dp.wake.to_json(),
        "dirs": [direction_json(dp, 0, now, prev), direction_json(dp, 1, now, prev)],
    });
    if let Some(p) = &dp.profile {
        o["profile"] = serde_json::to_value(p).unwrap_or(Value::Null);
    }
    if let Some(dm) = &dp.domain {
        let mut e = serde_json::to_value(&dm.stats).unwrap_or(Value::Null);
        e["flows"] = Value::from(dm.flows());
        o["edge"] = e;
    }
    if let Some(en) = &dp.entry {
        let mut e = serde_json::to_value(&en.stats).unwrap_or(Value::Null);
        e["connections"] = Value::from(en.connections());
        e["running"] = Value::from(en.running());
        e["shaped_backlog_pkts"] = Value::from(en.backlog_packets());
        o["entry"] = e;
    }
    o
}

/// The counters a later line's rates are computed against.
pub fn snapshot(dp: &Datapath, now: Time) -> Prev {
    Prev {
        t: now,
        tx_bytes: [dp.dirs[0].counters.tx_bytes, dp.dirs[1].counters.tx_bytes],
        rx_bytes: [dp.dirs[0].counters.rx_bytes, dp.dirs[1].counters.rx_bytes],
    }
}

/// One `queues` entry per direction, with the `queues.parquet` columns.
pub fn queues_json(dp: &Datapath, now: Time) -> Vec<Value> {
    (0..2)
        .map(|d| {
            let q = dp.dirs[d].port.queue();
            let s = q.stats();
            let drops = dp.drops(d);
            let (arrivals, arrival_bytes, departures, departure_bytes) = dp.totals(d);
            let mut o = json!({
                "queue_id": d, "name": DIRECTIONS[d], "link": DIRECTIONS[d], "kind": q.kind(), "parent": "",
                "arrivals": arrivals, "arrival_bytes": arrival_bytes,
                "departures": departures, "departure_bytes": departure_bytes,
                "drops": drops.iter().sum::<u64>(),
                "backlog_mean_pkts": q.mean_backlog_packets(now), "backlog_mean_bytes": q.mean_backlog_bytes(now),
                "backlog_max_pkts": s.peak_packets, "backlog_max_bytes": s.peak_bytes,
                "backlog_end_pkts": q.backlog().packets,
                "sojourn_mean_s": if s.departures > 0 { s.sojourn_sum_ns as f64 / s.departures as f64 / 1e9 } else { f64::NAN },
                "sojourn_max_s": s.sojourn_max_ns as f64 / 1e9,
                "link_rate_bps": dp.cfg.config.link.rate.0,
            });
            for (r, n) in DropReason::ALL.iter().zip(drops) {
                o[format!("drops_{}", r.as_str())] = Value::from(n);
            }
            for (r, n) in MarkReason::ALL.iter().zip(dp.marks(d)) {
                o[format!("marks_{}", r.as_str())] = Value::from(n);
            }
            o
        })
        .collect()
}

/// `summary.json`'s content.
pub fn summary_json(dp: &Datapath, now: Time, loop_wall_s: f64) -> Value {
    let events: u64 = dp.dirs.iter().map(|d| d.counters.rx_pkts + d.counters.tx_pkts).sum();
    json!({
        "scenario": serde_json::to_value(&dp.cfg.config).unwrap_or(Value::Null),
        "seed": dp.cfg.config.router.seed,
        "qoslab_version": env!("CARGO_PKG_VERSION"),
        "driver": "qoslab-router",
        "sim_time_s": now.0 as f64 / 1e9,
        "loop_wall_s": loop_wall_s,
        "events": events,
        "queues": queues_json(dp, now),
        "router": stats_json(dp, now, None),
        "mechanism_events": dp.events.recent.iter().map(|e| json!({
            "t_s": e.at.0 as f64 / 1e9, "kind": e.kind.as_str(), "flow": e.flow.map(|f| f.0),
            "rule": e.rule, "estimate": e.estimate, "threshold": e.threshold,
        })).collect::<Vec<_>>(),
    })
}

/// Writes `summary.json` into folder `out` (created if absent) under a
/// temporary name, then renames it into place.
pub fn write_summary(out: &Path, v: &Value) -> std::io::Result<()> {
    std::fs::create_dir_all(out)?;
    let tmp = out.join(".summary.json.tmp");
    {
        let mut f = std::fs::File::create(&tmp)?;
        serde_json::to_writer_pretty(&mut f, v)?;
        f.write_all(b"\n")?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, out.join("summary.json"))
}
