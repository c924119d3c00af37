//! `fluid_run`: the ideal-rate (fluid) mode of the TCP-CAC schemes
//! (`qoslab_sim::fluid::run`, [Tarasiuk05] Table 4) from a config dict.
//!
//! Keys (all optional; defaults are `FluidConfig::paper_table4`):
//!
//! | key | type | default |
//! |---|---|---|
//! | `scheme` | 1, 2 or 3 | 1 |
//! | `k` | float > 1 (scheme 3) | 3.0 |
//! | `share` | `"capacity"` or `"rho_capacity"` (scheme 2) | `"capacity"` |
//! | `capacity`, `rate` | rate strings | `"100Mbps"`, `"1Mbps"` |
//! | `buffer`, `iplr` | packets, ratio (ρ by M/D/1) | 10, 1e-3 |
//! | `rho` | float in (0, 1] (instead of buffer/iplr) | absent |
//! | `file_size_bits` | int | 10 000 000 |
//! | `arrival_rate` | 1/s | 5.98 |
//! | `duration`, `warmup` | duration strings | `"20000s"`, `"200s"` |
//! | `seed`, `batches` | ints | 1, 20 |
//! | `record_transfers` | bool | true |
//!
//! Returns a dict of the results (`rho`, `n_max`, `requests`, `admitted`,
//! `blocked`, `blocking`, `blocking_ci95`, `mean_transfer_time_s`,
//! `mean_transfer_time_ci95`, `mean_running_at_blocking`,
//! `time_avg_running`, `max_running`, `mean_first_rate_bps`, `events`,
//! `end_s`) and `transfers`: a dict of equal-length lists (`arrival_s`,
//! `admitted`, `measured`, `running_at_arrival`, `transfer_time_s` (NaN if
//! blocked), `rate_first_bps`, `rate_min_bps`, `rate_max_bps`,
//! `rate_changes`). The run releases the GIL. Unknown keys and bad values
//! raise `qoslab.ConfigError`.

use crate::error::config_error_one;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use qoslab_core::admission::cac::{Scheme, Share, Utilization};
use qoslab_core::units::{Dur, Rate};
use qoslab_sim::fluid::{run, FluidConfig};

const KEYS: &[&str] = &[
    "scheme",
    "k",
    "share",
    "capacity",
    "rate",
    "buffer",
    "iplr",
    "rho",
    "file_size_bits",
    "arrival_rate",
    "duration",
    "warmup",
    "seed",
    "batches",
    "record_transfers",
];

fn bad(py: Python<'_>, field: &str, message: impl Into<String>) -> PyErr {
    config_error_one(py, "fluid", field, message)
}

/// `d[key]` extracted as `$t`, `None` when absent or `None`.
macro_rules! get {
    ($py:expr, $d:expr, $key:expr, $t:ty) => {
        match $d.get_item($key)? {
            None => None,
            Some(v) if v.is_none() => None,
            Some(v) => Some(v.extract::<$t>().map_err(|e| bad($py, $key, format!("has the wrong type: {e}")))?),
        }
    };
}

fn config(py: Python<'_>, d: &Bound<'_, PyDict>) -> PyResult<FluidConfig> {
    for k in d.keys() {
        let k: String = k.extract()?;
        if !KEYS.contains(&k.as_str()) {
            return Err(bad(py, &k, format!("is not a fluid-mode key; allowed: {}", KEYS.join(", "))));
        }
    }
    let k = get!(py, d, "k", f64).unwrap_or(3.0);
    let share = match get!(py, d, "share", String).as_deref() {
        None | Some("capacity") => Share::Capacity,
        Some("rho_capacity") => Share::RhoCapacity,
        Some(s) => return Err(bad(py, "share", format!("({s:?}) must be \"capacity\" or \"rho_capacity\""))),
    };
    let scheme = match get!(py, d, "scheme", i64).unwrap_or(1) {
        1 => Scheme::Requested,
        2 => Scheme::Equal { share },
        3 => Scheme::LoadDependent { k },
        n => return Err(bad(py, "scheme", format!("({n}) must be 1, 2 or 3"))),
    };
    let mut c = FluidConfig::paper_table4(scheme);
    let rate = |key: &str| -> PyResult<Option<Rate>> {
        get!(py, d, key, String).map(|s| Rate::parse(&s).map_err(|e| bad(py, key, e.to_string()))).transpose()
    };
    let dur = |key: &str| -> PyResult<Option<Dur>> {
        get!(py, d, key, String).map(|s| Dur::parse(&s).map_err(|e| bad(py, key, e.to_string()))).transpose()
    };
    if let Some(r) = rate("capacity")? {
        c.capacity = r;
    }
    if let Some(r) = rate("rate")? {
        c.r_req = r;
    }
    let buffer = get!(py, d, "buffer", u64);
    let iplr = get!(py, d, "iplr", f64);
    c.utilization = match (get!(py, d, "rho", f64), buffer, iplr) {
        (Some(rho), None, None) => Utilization::Rho(rho),
        (Some(_), _, _) => return Err(bad(py, "rho", "give either rho or buffer/iplr, not both")),
        (None, b, p) => Utilization::Mdl1 { buffer_pkts: b.unwrap_or(10), iplr: p.unwrap_or(1e-3) },
    };
    if let Some(v) = get!(py, d, "file_size_bits", u64) {
        c.file_size_bits = v;
    }
    if let Some(v) = get!(py, d, "arrival_rate", f64) {
        c.arrival_rate_per_s = v;
    }
    if let Some(v) = dur("duration")? {
        c.duration = v;
    }
    if let Some(v) = dur("warmup")? {
        c.warmup = v;
    }
    if let Some(v) = get!(py, d, "seed", u64) {
        c.seed = v;
    }
    if let Some(v) = get!(py, d, "batches", u32) {
        c.batches = v;
    }
    if let Some(v) = get!(py, d, "record_transfers", bool) {
        c.record_transfers = v;
    }
    c.validate().map_err(|e| bad(py, e.field, e.message))?;
    Ok(c)
}

/// Runs the fluid mode of the TCP-CAC schemes; see the module doc.
#[pyfunction]
pub fn fluid_run<'py>(py: Python<'py>, config_dict: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyDict>> {
    let cfg = config(py, config_dict)?;
    let r = py.detach(|| run(&cfg)).map_err(|e| bad(py, e.field, e.message))?;
    let d = PyDict::new(py);
    d.set_item("rho", r.rho)?;
    d.set_item("n_max", r.n_max)?;
    d.set_item("requests", r.requests)?;
    d.set_item("admitted", r.admitted)?;
    d.set_item("blocked", r.blocked)?;
    d.set_item("blocking", r.blocking_probability.mean)?;
    d.set_item("blocking_ci95", r.blocking_probability.ci95)?;
    d.set_item("mean_transfer_time_s", r.mean_transfer_time_s.mean)?;
    d.set_item("mean_transfer_time_ci95", r.mean_transfer_time_s.ci95)?;
    d.set_item("mean_running_at_blocking", r.mean_running_at_blocking)?;
    d.set_item("time_avg_running", r.time_avg_running)?;
    d.set_item("max_running", r.max_running)?;
    d.set_item("mean_first_rate_bps", r.mean_first_rate_bps)?;
    d.set_item("events", r.events)?;
    d.set_item("end_s", r.end.as_secs_f64())?;
    let t = &r.transfers;
    let tr = PyDict::new(py);
    tr.set_item("arrival_s", t.iter().map(|x| x.arrival.as_secs_f64()).collect::<Vec<_>>())?;
    tr.set_item("admitted", t.iter().map(|x| x.admitted).collect::<Vec<_>>())?;
    tr.set_item("measured", t.iter().map(|x| x.measured).collect::<Vec<_>>())?;
    tr.set_item("running_at_arrival", t.iter().map(|x| x.running_at_arrival).collect::<Vec<_>>())?;
    tr.set_item(
        "transfer_time_s",
        t.iter().map(|x| x.transfer_time().map_or(f64::NAN, |d| d.as_secs_f64())).collect::<Vec<_>>(),
    )?;
    tr.set_item("rate_first_bps", t.iter().map(|x| x.rate_first.0).collect::<Vec<_>>())?;
    tr.set_item("rate_min_bps", t.iter().map(|x| x.rate_min.0).collect::<Vec<_>>())?;
    tr.set_item("rate_max_bps", t.iter().map(|x| x.rate_max.0).collect::<Vec<_>>())?;
    tr.set_item("rate_changes", t.iter().map(|x| x.rate_changes).collect::<Vec<_>>())?;
    d.set_item("transfers", tr)?;
    Ok(d)
}
