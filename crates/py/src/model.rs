//! `qoslab._core.Scenario.model()`: a validated scenario expanded as the
//! simulator builds it, as Python data with numbers, for the Python front
//! (the testbed's planner, plots, the CLI) to read instead of re-deriving
//! it. Every part comes from where the simulator takes it: nodes and links
//! from `qoslab_scenario::expand`, routes from `qoslab_scenario::routes`,
//! specs serialized by the scenario model with
//! `qoslab_scenario::units::numeric` (rates in bit/s, durations in ns,
//! sizes in bytes, limits as `{packets, bytes}`), each group's period and
//! times, marks, TCP settings and VTR frames from `qoslab_sim::traffic::plan_groups`, flows' RNG streams
//! from `qoslab_sim::traffic::flow_stream`.
//!
//! ```text
//! {name, seed, duration_ns, metrics: {...},
//!  nodes: [{name, kind, addr}],
//!  links: [{a, b, path, rate_bps, delay_ns, loss, reverse_loss,
//!           queue, queue_path, reverse_queue, reverse_queue_path,   # resolved (default queue filled in)
//!           stages, reverse_stages, mace, given: {the link's own fields}}],
//!  bottlenecks: [link index], default_queue: {...},
//!  groups: [{index, name, model, proto, src_choice, srcs, dsts, fixed_flows,
//!            start_ns, stop_ns, start_jitter_ns, randomize, send_jitter_max_ns, class, dscp,
//!            header_bytes, payload_mean_bytes, mean_wire_bps, spec: {...},
//!            source: {period_ns: [num, den], packetization?} | {mean_gap_ns} | {tcp: {...}}
//!                    | {vtr: {frame_ns, spacing_ns, payload, header, frames: [bytes]}}
//!                    | {mm_app: {periods_ns: [[num, den]], feedback_size}},
//!            flows: [{index, name, src, dst, stream, route: [link index], hops: [node],
//!                     delay_ns, reverse_delay_ns,
//!                     arrival: null | {start_ns, end_ns, lifetime_drawn}}]}]}
//! ```
//!
//! `flows` lists a group's flows with their endpoints in turn
//! (`src_choice = "round_robin"`): its fixed flows (`flows`), or every flow
//! its arrival process starts in the run, with the instant it arrives
//! (asks admission), the end its lifetime gives it and whether that
//! lifetime was the first draw of the flow's stream
//! (`qoslab_sim::traffic::arrivals::schedule`, the simulator's own draws).
//! With random sources the endpoints are drawn during the run, and the list
//! is empty. A route is the links crossed from `src` to `dst` in order.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use qoslab_scenario::expand::{expand, field_of, node_addr, Expanded};
use qoslab_scenario::routes::Routes;
use qoslab_scenario::{units, NodeKind, SrcChoice, Topology, ValidScenario};
use qoslab_sim::traffic::arrivals::{schedule, Arrival, Planned};
use qoslab_sim::traffic::{flow_stream, plan_groups, GroupPlan, ModelPlan};
use serde::Serialize;
use serde_json::{json, Value};
use std::path::Path;

/// `v` serialized with numbers in the core's units.
fn numeric<T: Serialize>(v: &T) -> Value {
    units::numeric(|| serde_json::to_value(v)).unwrap_or(Value::Null)
}

/// The model of `sc` as a Python dict (see the module doc).
pub fn model(py: Python<'_>, sc: &ValidScenario, base_dir: &Path) -> PyResult<Py<PyDict>> {
    let v = describe(sc, base_dir).map_err(PyValueError::new_err)?;
    let d = to_py(py, &v)?;
    Ok(d.cast_into::<PyDict>().map_err(PyErr::from)?.unbind())
}

fn kind(k: NodeKind) -> &'static str {
    match k {
        NodeKind::Host => "host",
        NodeKind::Router => "router",
    }
}

/// The model as JSON data.
pub fn describe(sc: &ValidScenario, base_dir: &Path) -> Result<Value, String> {
    let ex = expand(&sc.topology);
    let nodes: Vec<Value> = ex
        .nodes
        .iter()
        .enumerate()
        .map(|(i, (n, k))| json!({"name": n, "kind": kind(*k), "addr": node_addr(i).to_string()}))
        .collect();
    // A parking lot's hop_queues: bottleneck i's queue is `topology.hop_queues.i`.
    let hop_queue = |li: usize| match &sc.topology {
        Topology::ParkingLot { hop_queues, .. } if !hop_queues.is_empty() => {
            ex.bottlenecks.iter().position(|&b| b == li).map(|i| format!("topology.hop_queues.{i}"))
        }
        _ => None,
    };
    let links: Vec<Value> = ex.links.iter().enumerate().map(|(i, l)| link(&ex, l, hop_queue(i))).collect();
    let groups = groups(sc, &ex, base_dir)?;
    Ok(json!({
        "name": sc.name,
        "seed": sc.seed,
        "duration_ns": sc.duration.0,
        "metrics": numeric(&sc.metrics),
        "nodes": nodes,
        "links": links,
        "bottlenecks": ex.bottlenecks,
        "default_queue": numeric(&ex.default_queue),
        "groups": groups,
    }))
}

fn link(ex: &Expanded, l: &qoslab_scenario::expand::Link, hop_queue: Option<String>) -> Value {
    let s = &l.spec;
    let at = field_of(&l.path);
    let queue = |q: &Option<qoslab_scenario::QueueSpec>, name: &str| match q {
        Some(q) => (numeric(q), format!("{at}.{name}")),
        None => (numeric(&ex.default_queue), "topology.default_queue".to_string()),
    };
    let (q, qp) = match (hop_queue, &s.queue) {
        (Some(path), Some(q)) => (numeric(q), path),
        _ => queue(&s.queue, "queue"),
    };
    let (rq, rqp) = queue(&s.reverse_queue, "reverse_queue");
    json!({
        "a": ex.nodes[l.a].0,
        "b": ex.nodes[l.b].0,
        "path": l.path,
        "field": at,
        "rate_bps": s.rate.0,
        "delay_ns": s.delay.0,
        "loss": s.loss,
        "reverse_loss": s.reverse_loss,
        "queue": q,
        "queue_path": qp,
        "reverse_queue": rq,
        "reverse_queue_path": rqp,
        "stages": numeric(&s.stages),
        "reverse_stages": numeric(&s.reverse_stages),
        "mace": numeric(&s.mace),
        "given": numeric(s),
    })
}

/// Each group as the simulator plans it ([`plan_groups`]): its resolved
/// endpoints, times, marks, source and fixed flows.
fn groups(sc: &ValidScenario, ex: &Expanded, base_dir: &Path) -> Result<Vec<Value>, String> {
    let plans = plan_groups(sc, ex, sc.seed, base_dir).map_err(|e| e.to_string())?;
    // The endpoints of each fixed flow, in turn (random sources are drawn in the run).
    // An arrival process's flows as the simulator will create them ([`schedule`]).
    let arrivals: Vec<Vec<Planned>> = plans.iter().map(|g| schedule(g, sc.seed)).collect();
    let pairs: Vec<Vec<(usize, usize)>> = plans
        .iter()
        .zip(&arrivals)
        .map(|(g, planned)| {
            let n = match (g.fixed_flows, g.src_choice) {
                (_, SrcChoice::Random) => 0,
                (Some(n), _) => n as usize,
                (None, _) => planned.len(),
            };
            (0..n).map(|i| (g.srcs[i % g.srcs.len()].index(), g.dsts[i % g.dsts.len()].index())).collect()
        })
        .collect();
    let dsts: Vec<u32> = pairs.iter().flatten().flat_map(|&(s, d)| [s as u32, d as u32]).collect();
    let routes = Routes::compute(ex, &dsts);
    let name = |i: usize| ex.nodes[i].0.as_str();
    let walk = |s: usize, d: usize| -> Option<(Vec<usize>, Vec<&str>, u64)> {
        let dirs = routes.path(s as u32, d as u32)?;
        let mut hops = vec![name(s)];
        let mut delay = 0u64;
        let mut links = Vec::with_capacity(dirs.len());
        for dir in dirs {
            let l = &ex.links[dir as usize / 2];
            hops.push(name(if dir % 2 == 0 { l.b } else { l.a }));
            delay += l.spec.delay.0;
            links.push(dir as usize / 2);
        }
        Some((links, hops, delay))
    };
    let mut out = Vec::with_capacity(plans.len());
    for (((gi, g), (spec, p)), planned) in plans.iter().enumerate().zip(sc.traffic.iter().zip(&pairs)).zip(&arrivals) {
        let int = |x: u128| u64::try_from(x).unwrap_or(u64::MAX);
        let source = match &g.model {
            ModelPlan::Cbr(p) => json!({"period_ns": [int(p.num), int(p.den)]}),
            ModelPlan::OnOff { period: p, packetization, .. } => json!({
                "period_ns": [int(p.num), int(p.den)],
                "packetization": numeric(packetization),
            }),
            ModelPlan::Poisson(gap) => json!({"mean_gap_ns": gap}),
            ModelPlan::Tcp { cfg, sink_delay, bytes, .. } => json!({"tcp": {
                "mss": cfg.mss,
                "init_window": cfg.init_window,
                "max_window": cfg.max_window,
                "min_rto_ns": cfg.min_rto.0,
                "delayed_ack": sink_delay.is_some(),
                "bytes": bytes,
            }}),
            // The trace as the simulator loaded it: the generator plays it with core's `Vtr`.
            ModelPlan::Vtr(p) => json!({"vtr": {
                "frame_ns": p.frame,
                "spacing_ns": p.spacing,
                "payload": p.payload,
                "header": p.header,
                "frames": &*g.frames,
            }}),
            // The periods of its scales (lowest rate first) and the size of its feedback packets.
            ModelPlan::MmApp { feedback_size } => json!({"mm_app": {
                "periods_ns": g.mm_periods.iter().map(|p| [int(p.num), int(p.den)]).collect::<Vec<_>>(),
                "feedback_size": feedback_size,
            }}),
        };
        let proto = if matches!(g.model, ModelPlan::Tcp { .. }) { "tcp" } else { "udp" };
        let mut flows = Vec::with_capacity(p.len());
        for (i, &(s, d)) in p.iter().enumerate() {
            let (route, hops, delay) = walk(s, d).ok_or_else(|| format!("group {}: flow {i} has no route", g.name))?;
            let back = walk(d, s).map(|(_, _, d)| d);
            flows.push(json!({
                "index": i,
                "name": format!("{}.{i}", g.name),
                "src": name(s),
                "dst": name(d),
                "stream": flow_stream(gi as u32, i as u32),
                "route": route,
                "hops": hops,
                "delay_ns": delay,
                "reverse_delay_ns": back,
                "arrival": planned.get(i).map(|a| json!({
                    "start_ns": a.start.0,
                    "end_ns": a.end.0,
                    "lifetime_drawn": lifetime_drawn(g),
                })),
            }));
        }
        let nodes = |ids: &[qoslab_sim::engine::NodeId]| ids.iter().map(|n| name(n.index())).collect::<Vec<_>>();
        let header = spec.header.0;
        out.push(json!({
            "index": gi,
            "name": g.name,
            "model": numeric(&spec.model).get("model").cloned().unwrap_or(Value::Null),
            "proto": proto,
            "src_choice": numeric(&g.src_choice),
            "srcs": nodes(&g.srcs),
            "dsts": nodes(&g.dsts),
            "fixed_flows": g.fixed_flows,
            "start_ns": g.start.0,
            "stop_ns": g.stop.0,
            "start_jitter_ns": g.jitter.0,
            "randomize": g.randomize,
            "send_jitter_max_ns": g.send_jitter_max_ns,
            "class": g.class.0,
            "dscp": g.dscp,
            "header_bytes": header,
            "payload_mean_bytes": g.size.mean_payload(header),
            "mean_wire_bps": g.mean_wire_bps,
            "spec": numeric(spec),
            "source": source,
            "flows": flows,
        }));
    }
    Ok(out)
}

/// A JSON value as a Python object (dicts keep the key order written).
pub fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => u.into_pyobject(py)?.into_any(),
            (None, Some(i)) => i.into_pyobject(py)?.into_any(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        Value::Array(a) => {
            let l = PyList::empty(py);
            for x in a {
                l.append(to_py(py, x)?)?;
            }
            l.into_any()
        }
        Value::Object(m) => {
            let d = PyDict::new(py);
            for (k, x) in m {
                d.set_item(k, to_py(py, x)?)?;
            }
            d.into_any()
        }
    })
}

/// Did the simulator draw each arrival flow's lifetime from the flow's own stream before its
/// source's draws (an exponential law; a fixed lifetime or a replayed one draws nothing)?
fn lifetime_drawn(g: &GroupPlan) -> bool {
    let law = match &g.arrival {
        Some(
            Arrival::Poisson { lifetime, .. } | Arrival::Batch { lifetime, .. } | Arrival::KeepAlive { lifetime, .. },
        ) => lifetime,
        _ => return false,
    };
    law.dist == qoslab_scenario::LifetimeDist::Exponential
}
