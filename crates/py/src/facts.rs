//! What Python reads instead of restating it: units, the schema's lists of
//! names and the result tables' metric formulas, each from its one home.
//!
//! - units (`qoslab_core::units`): `parse_rate`, `parse_duration`,
//!   `parse_size`, `parse_packets` (text to the core's integers; a
//!   `ValueError` with the core's message) and `format_rate`,
//!   `format_duration`, `format_size` (the reverse, as the echo writes them);
//! - `names()`: drop and mark reasons (`qoslab_core::qdisc`), event kinds,
//!   the scenario's type names (`qoslab_scenario::registry::names`) and each
//!   result table's columns (`qoslab_sim::metrics::tables::columns`);
//! - `delay_columns`, `jain_index`, `totals`: the flows table's delay
//!   columns, Jain's index and the summary's per-group totals, computed by
//!   the simulator's own code (for the testbed's results).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use qoslab_core::qdisc::{DropReason, MarkReason};
use qoslab_core::units::{parse_packets as core_packets, Bytes, Dur, Rate};
use qoslab_scenario::registry::names as type_names;
use qoslab_sim::metrics::tables::{self, FlowCounts, Totals};

fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// A rate (`"25Mbps"`, `"T1"`) in bit/s.
#[pyfunction]
pub fn parse_rate(text: &str) -> PyResult<u64> {
    Rate::parse(text).map(|r| r.0).map_err(value_error)
}

/// A duration (`"20ms"`) in ns.
#[pyfunction]
pub fn parse_duration(text: &str) -> PyResult<u64> {
    Dur::parse(text).map(|d| d.0).map_err(value_error)
}

/// A size (`"1500B"`, `"8GiB"`) in bytes.
#[pyfunction]
pub fn parse_size(text: &str) -> PyResult<u64> {
    Bytes::parse(text).map(|b| b.0).map_err(value_error)
}

/// A packet count (`"60pkts"`).
#[pyfunction]
pub fn parse_packets(text: &str) -> PyResult<u64> {
    core_packets(text).map_err(value_error)
}

/// A rate in bit/s as the echo writes it (`25000000` -> `"25Mbps"`).
#[pyfunction]
pub fn format_rate(bps: u64) -> String {
    Rate(bps).to_string()
}

/// A duration in ns as the echo writes it (`20000000` -> `"20ms"`).
#[pyfunction]
pub fn format_duration(ns: u64) -> String {
    Dur(ns).to_string()
}

/// A size in bytes as the echo writes it (`1500` -> `"1500B"`).
#[pyfunction]
pub fn format_size(bytes: u64) -> String {
    Bytes(bytes).to_string()
}

/// The lists of names (see the module doc).
#[pyfunction]
pub fn names(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("drop_reasons", DropReason::ALL.map(DropReason::as_str).to_vec())?;
    d.set_item("mark_reasons", MarkReason::ALL.map(MarkReason::as_str).to_vec())?;
    d.set_item("event_kinds", qoslab_sim::metrics::event_kinds())?;
    d.set_item("queue_types", type_names::QUEUE_TYPES.to_vec())?;
    d.set_item("topology_presets", type_names::TOPOLOGY_PRESETS.to_vec())?;
    d.set_item("traffic_models", type_names::TRAFFIC_MODELS.to_vec())?;
    d.set_item("arrival_processes", type_names::ARRIVAL_PROCESSES.to_vec())?;
    d.set_item("admission_types", type_names::ADMISSION_TYPES.to_vec())?;
    d.set_item("mace_admission_types", type_names::MACE_ADMISSION_TYPES.to_vec())?;
    let t = PyDict::new(py);
    for table in ["flows", "queues", "series", "events"] {
        t.set_item(table, tables::columns(table).unwrap_or_default())?;
    }
    d.set_item("tables", t)?;
    Ok(d)
}

/// The flows table's delay columns (`delay_mean_s`, `delay_p50_s`,
/// `delay_p99_s`, `delay_max_s`, `delay_var_s2`, `jitter_rfc3550_s`) of a
/// flow's one-way delays in ns, in arrival order, as the simulator computes
/// them (NaN for none).
#[pyfunction]
pub fn delay_columns(delays_ns: Vec<u64>) -> Vec<(&'static str, f64)> {
    tables::DELAY_COLUMNS.into_iter().zip(tables::delay_columns_of(&delays_ns)).collect()
}

/// Jain's fairness index `(Σx)² / (n Σx²)`: NaN for no values, 1 when all are zero.
#[pyfunction]
pub fn jain_index(xs: Vec<f64>) -> f64 {
    qoslab_core::stats::jain_index(&xs)
}

/// The summary's totals over flows (a group's or a class's entry): per flow
/// its sent, delivered and dropped packets and bytes, and its throughput
/// (NaN: the flow never ran); `duration_s` is the run's. A JSON object.
#[pyfunction]
pub fn totals(flows: Vec<(u64, u64, u64, u64, u64, u64, f64)>, duration_s: f64) -> String {
    let mut t = Totals::default();
    for (sp, sb, dp, db, xp, xb, thr) in flows {
        t.add_flow(&FlowCounts {
            sent_pkts: sp,
            sent_bytes: sb,
            delivered_pkts: dp,
            delivered_bytes: db,
            dropped_pkts: xp,
            dropped_bytes: xb,
            throughput_bps: (!thr.is_nan()).then_some(thr),
        });
    }
    t.json(duration_s).to_string()
}
