//! `red_replay`: drives a real [`qoslab_core::qdisc::red::Red`] through the
//! counting [`Queue`] wrapper (through the core's [`Shared`], so the replay
//! can read RED's state after each op) with a scripted sequence of arrivals and
//! departures, and reports RED's state after each one. The Python tests
//! feed the same sequence, with the uniform numbers reported here, to an
//! independent pure-Python RED written from Floyd & Jacobson 1993 and
//! compare verdicts and averages.
//!
//! Ops are `(t_ns, kind, size)` with `kind` one of `"arrive"` (a packet of
//! `size` bytes, not ECN-capable), `"arrive_ect"` (the same, ECT(0)), or
//! `"depart"` (the link takes the head packet; `size` is ignored). Times
//! must not decrease. Per op the result is a dict:
//!
//! | key | meaning |
//! |---|---|
//! | `avg` | RED's average after the op |
//! | `count` | packets since the last early drop (-1 below `min_th`) |
//! | `verdict` | `queued`, `early`, `forced`, `overlimit`, `marked`, `departed` or `empty` |
//! | `uniform` | the uniform number drawn for this arrival, or `None` |
//! | `qlen` | packets queued after the op |
//!
//! The config dict takes RED's parameters under their scenario names:
//! `limit` (packets), `limit_bytes`, `min_th`, `max_th`, `max_p`, `w_q`,
//! `gentle`, `ecn`, `mode` (`"packets"`/`"bytes"`), `mean_pkt_size` (bytes);
//! defaults as in [`RedConfig::new`]. Unknown keys are a `ConfigError`.

use crate::error::config_error_one;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use qoslab_core::packet::{Ecn, FlowId, Packet};
use qoslab_core::qdisc::red::{Red, RedConfig, RedMode};
use qoslab_core::qdisc::shared::Shared;
use qoslab_core::qdisc::{Dequeue, DropReason, Limit, Qdisc, Queue, Verdict};
use qoslab_core::units::{Bytes, Rate, Time};

const KEYS: &str = "limit, limit_bytes, min_th, max_th, max_p, w_q, gentle, ecn, mode, mean_pkt_size";

fn config(py: Python<'_>, d: &Bound<'_, PyDict>) -> PyResult<RedConfig> {
    let mut c = RedConfig::new(Limit::UNLIMITED, f64::NAN, f64::NAN);
    let bad = |k: &str, what: &str| config_error_one(py, "red_replay", &format!("red.{k}"), what.to_string());
    for (k, v) in d.iter() {
        let key: String = k.extract()?;
        let f = || v.extract::<f64>().map_err(|_| bad(&key, "must be a number"));
        let u = || v.extract::<u64>().map_err(|_| bad(&key, "must be a whole number >= 0"));
        let b = || v.extract::<bool>().map_err(|_| bad(&key, "must be true or false"));
        match key.as_str() {
            "limit" => c.limit.packets = Some(u32::try_from(u()?).map_err(|_| bad(&key, "is too large"))?),
            "limit_bytes" => c.limit.bytes = Some(u()?),
            "min_th" => c.min_th = f()?,
            "max_th" => c.max_th = f()?,
            "max_p" => c.max_p = f()?,
            "w_q" => c.w_q = f()?,
            "gentle" => c.gentle = b()?,
            "ecn" => c.ecn = b()?,
            "mean_pkt_size" => c.mean_pkt_size = Bytes(u()?),
            "mode" => {
                c.mode = match v.extract::<String>().as_deref() {
                    Ok("packets") => RedMode::Packets,
                    Ok("bytes") => RedMode::Bytes,
                    _ => return Err(bad(&key, "must be \"packets\" or \"bytes\"")),
                }
            }
            _ => return Err(bad(&key, &format!("is not a RED parameter; allowed: {KEYS}"))),
        }
    }
    for (name, v) in [("min_th", c.min_th), ("max_th", c.max_th)] {
        if v.is_nan() {
            return Err(bad(name, "is missing"));
        }
    }
    Ok(c)
}

/// Replays `ops` through RED; see the module doc.
#[pyfunction]
#[pyo3(signature = (config, link_rate_bps, ops, seed))]
pub fn red_replay<'py>(
    py: Python<'py>,
    config: &Bound<'py, PyDict>,
    link_rate_bps: u64,
    ops: Vec<(u64, String, u32)>,
    seed: u64,
) -> PyResult<Bound<'py, PyList>> {
    let cfg = self::config(py, config)?;
    let red = Red::new(cfg, Rate(link_rate_bps))
        .map_err(|e| config_error_one(py, "red_replay", &format!("{}.{}", e.mechanism, e.field), e.to_string()))?;
    // The queue drives RED; the replay reads RED's state through its own handle.
    let shared = Shared::new(red);
    let mut queue = Queue::new(Box::new(shared.clone()));
    let mut rng = qoslab_core::rng::stream(seed, 0);
    let out = PyList::empty(py);
    let mut last_t = 0u64;
    for (i, (t, kind, size)) in ops.into_iter().enumerate() {
        if t < last_t {
            return Err(PyValueError::new_err(format!(
                "ops[{i}]: time {t} ns is before the previous op ({last_t} ns)"
            )));
        }
        last_t = t;
        let now = Time(t);
        let verdict = match kind.as_str() {
            "arrive" | "arrive_ect" => {
                if size == 0 {
                    return Err(PyValueError::new_err(format!("ops[{i}]: size must be at least 1 byte")));
                }
                let mut p = Packet::new(i as u64, FlowId(0), size, now);
                if kind == "arrive_ect" {
                    p.ecn = Ecn::Ect0;
                }
                match queue.enqueue(now, p, &mut rng) {
                    Verdict::Queued => "queued",
                    Verdict::Marked(_) => "marked",
                    Verdict::Dropped(d) => match d.reason {
                        DropReason::EarlyRandom => "early",
                        DropReason::Forced => "forced",
                        DropReason::Overlimit => "overlimit",
                        r => return Err(PyValueError::new_err(format!("RED dropped for reason {}", r.as_str()))),
                    },
                    Verdict::QueuedPushingOut(_) => "pushed_out",
                }
            }
            "depart" => match queue.dequeue(now) {
                Dequeue::Packet(_) => "departed",
                Dequeue::Empty | Dequeue::NotBefore(_) => "empty",
            },
            other => {
                return Err(PyValueError::new_err(format!(
                    "ops[{i}]: unknown op {other:?}; allowed: arrive, arrive_ect, depart"
                )))
            }
        };
        let red = shared.lock();
        let row = PyDict::new(py);
        row.set_item("avg", red.avg())?;
        row.set_item("count", red.count())?;
        row.set_item("verdict", verdict)?;
        row.set_item("uniform", if kind == "depart" { None } else { red.last_uniform() })?;
        row.set_item("qlen", red.backlog().packets)?;
        out.append(row)?;
    }
    Ok(out)
}
