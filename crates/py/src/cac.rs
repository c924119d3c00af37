//! `cac`: the CAC calculator of [Tarasiuk05] (`qoslab_core::admission::cac::calc::calculate`)
//! for `qoslab.cac(...)` and `qoslab cac`.
//!
//! Arguments are the scenario format's strings (`capacity="100Mbps"`,
//! `rate="1Mbps"`, `holding="10s"`); `buffer` is a packet count (int or
//! `"10pkts"`), `iplr`, `arrival_rate` (1/s) and `blocking` are numbers.
//! Returns a dict: `rho`, `rho_c_bps`, `n_max`, and, when their inputs were
//! given, `offered_load_erl` and `blocking` (from `arrival_rate` and
//! `holding`), `target_offered_load_erl` and `target_arrival_rate_per_s`
//! (from `blocking` and `holding`); absent answers are `None`. Every bad
//! value raises `qoslab.ConfigError` naming the argument.

use crate::error::config_error_one;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use qoslab_core::admission::cac::calc::{calculate, CacQuery};
use qoslab_core::units::{parse_packets, Dur, Rate};

/// A packet count given as an int or as `"10pkts"`.
#[derive(FromPyObject)]
pub enum Packets {
    Int(i64),
    Text(String),
}

fn bad(py: Python<'_>, field: &str, message: impl Into<String>) -> PyErr {
    config_error_one(py, "cac", field, message)
}

/// The argument a core field name comes from.
fn argument_name(field: &str) -> &str {
    match field {
        "r_req" => "rate",
        "holding_time" => "holding",
        "target_blocking" => "blocking",
        "offered_load" => "arrival_rate",
        f => f,
    }
}

/// Computes ρ and N_max, and the Erlang-B blocking or the arrival rate
/// for a target blocking when their inputs are given.
#[pyfunction]
#[pyo3(signature = (capacity, buffer, iplr, rate, holding = None, arrival_rate = None, blocking = None))]
#[allow(clippy::too_many_arguments)]
pub fn cac<'py>(
    py: Python<'py>,
    capacity: &str,
    buffer: Packets,
    iplr: f64,
    rate: &str,
    holding: Option<&str>,
    arrival_rate: Option<f64>,
    blocking: Option<f64>,
) -> PyResult<Bound<'py, PyDict>> {
    let capacity = Rate::parse(capacity).map_err(|e| bad(py, "capacity", e.to_string()))?;
    let r_req = Rate::parse(rate).map_err(|e| bad(py, "rate", e.to_string()))?;
    let buffer_pkts = match buffer {
        Packets::Int(n) if n >= 1 => n as u64,
        Packets::Int(n) => return Err(bad(py, "buffer", format!("({n} packets) must be at least 1 packet"))),
        Packets::Text(s) => {
            let n = parse_packets(&s).map_err(|e| bad(py, "buffer", e.to_string()))?;
            if n == 0 {
                return Err(bad(py, "buffer", "(0 packets) must be at least 1 packet"));
            }
            n
        }
    };
    let holding_time_s = match holding {
        Some(h) => {
            let d = Dur::parse(h).map_err(|e| bad(py, "holding", e.to_string()))?;
            Some(d.as_secs_f64())
        }
        None => None,
    };
    let q = CacQuery {
        capacity,
        buffer_pkts,
        iplr,
        r_req,
        holding_time_s,
        arrival_rate_per_s: arrival_rate,
        target_blocking: blocking,
    };
    let a = calculate(&q).map_err(|e| bad(py, argument_name(e.field), e.message))?;
    let d = PyDict::new(py);
    d.set_item("rho", a.rho)?;
    d.set_item("rho_c_bps", a.rho_c_bps)?;
    d.set_item("n_max", a.n_max)?;
    d.set_item("offered_load_erl", a.offered_load_erl)?;
    d.set_item("blocking", a.blocking)?;
    d.set_item("target_offered_load_erl", a.target_offered_load_erl)?;
    d.set_item("target_arrival_rate_per_s", a.target_arrival_rate_per_s)?;
    Ok(d)
}
