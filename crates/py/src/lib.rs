//! qoslab-py: the native module `qoslab._core`. Thin: convert the
//! arguments, call the simulator, convert the result. The public Python
//! API (`python/qoslab`) wraps these functions; `_core.pyi` types them.
//!
//! - `version`, `schema`: the crate version; the scenario JSON Schema.
//! - `validate`: scenario text to its echo (JSON, defaults filled in).
//! - `run`: scenario text to `{"summary": json, "flows": {..}, ...}`,
//!   with the GIL released during the run. The progress closure takes the
//!   GIL back at most ten times per wall-second to call the Python
//!   callback and check for signals, so Ctrl-C stops a long run.
//! - `red_replay::red_replay`: a scripted RED, for the reference tests.
//! - `cac::cac`: the CAC calculator of seed 002 (ρ, N_max, Erlang-B).
//! - `fluid::fluid_run`: the fluid (ideal-rate) mode of the TCP-CAC schemes.
//! - `error`: the exception classes and the `SimError` mapping. A panic
//!   while loading or running is caught (`no_panic`) and raised as
//!   `qoslab.SimulationError`, never unwound into Python.

mod cac;
mod convert;
mod error;
mod fluid;
mod red_replay;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use qoslab_scenario::load::load_str;
use qoslab_sim::{RunOptions, SimError};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Minimum wall time between two calls into Python from a running simulation.
const PROGRESS_EVERY: Duration = Duration::from_millis(100);

/// Runs `f`, turning a panic into `SimError::Runtime` so that no panic
/// crosses into Python (it would surface as pyo3's `PanicException`).
fn no_panic<T>(f: impl FnOnce() -> Result<T, SimError>) -> Result<T, SimError> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| {
        Err(SimError::Runtime(format!(
            "qoslab panicked (a bug; please report it with the scenario): {}",
            error::panic_message(&*p)
        )))
    })
}

/// The qoslab version (the Rust crates' version).
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The JSON Schema of the scenario format, pretty-printed.
#[pyfunction]
fn schema() -> String {
    qoslab_scenario::schema::json_schema()
}

/// Loads and validates a scenario; returns its echo as JSON. Relative
/// paths in the scenario (replay files) are resolved against `base_dir`.
#[pyfunction]
#[pyo3(signature = (text, origin = "<string>", overrides = Vec::new(), base_dir = None))]
fn validate(
    py: Python<'_>,
    text: &str,
    origin: &str,
    overrides: Vec<String>,
    base_dir: Option<PathBuf>,
) -> PyResult<String> {
    let sc = no_panic(|| load_str(text, origin, &overrides, base_dir.as_deref()).map_err(SimError::from))
        .map_err(|e| error::to_py(py, e))?;
    serde_json::to_string(&sc).map_err(|e| error::SimulationError::new_err(format!("scenario echo: {e}")))
}

/// Loads, validates and runs a scenario.
#[pyfunction]
#[pyo3(signature = (text, origin = "<string>", seed = None, overrides = Vec::new(), base_dir = None, progress = None))]
fn run<'py>(
    py: Python<'py>,
    text: &str,
    origin: &str,
    seed: Option<u64>,
    overrides: Vec<String>,
    base_dir: Option<PathBuf>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let sc = no_panic(|| load_str(text, origin, &overrides, base_dir.as_deref()).map_err(SimError::from))
        .map_err(|e| error::to_py(py, e))?;
    let seed = seed.unwrap_or(sc.seed);
    let base_dir = base_dir.unwrap_or_else(|| PathBuf::from("."));
    // An error raised in Python during the run (the callback's, or a
    // KeyboardInterrupt from a signal) is kept here and re-raised after.
    let mut raised: Option<PyErr> = None;
    let outcome = py.detach(|| {
        let mut last = Instant::now();
        let mut tick = |frac: f64| -> bool {
            if last.elapsed() < PROGRESS_EVERY {
                return true;
            }
            last = Instant::now();
            Python::attach(|py| {
                let r = py.check_signals().and_then(|()| match &progress {
                    Some(cb) => cb.call1(py, (frac,)).map(drop),
                    None => Ok(()),
                });
                match r {
                    Ok(()) => true,
                    Err(e) => {
                        raised = Some(e);
                        false
                    }
                }
            })
        };
        let opts = RunOptions { seed, base_dir, progress: Some(&mut tick) };
        no_panic(|| qoslab_sim::run::run(&sc, opts))
    });
    let out = match outcome {
        Ok(out) => out,
        Err(SimError::Interrupted) if raised.is_some() => return Err(raised.take().expect("checked")),
        Err(e) => return Err(error::to_py(py, e)),
    };
    let np = py.import("numpy")?;
    let d = PyDict::new(py);
    let summary = serde_json::to_string(&out.summary)
        .map_err(|e| error::SimulationError::new_err(format!("summary to JSON: {e}")))?;
    d.set_item("summary", summary)?;
    d.set_item("flows", convert::table(&np, &out.flows)?)?;
    d.set_item("queues", convert::table(&np, &out.queues)?)?;
    d.set_item("series", convert::table(&np, &out.series)?)?;
    d.set_item("events", convert::table(&np, &out.events)?)?;
    let traces = PyDict::new(py);
    for (name, bytes) in &out.traces {
        traces.set_item(name, pyo3::types::PyBytes::new(py, bytes))?;
    }
    d.set_item("traces", traces)?;
    Ok(d)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(red_replay::red_replay, m)?)?;
    m.add_function(wrap_pyfunction!(cac::cac, m)?)?;
    m.add_function(wrap_pyfunction!(fluid::fluid_run, m)?)?;
    error::register(m)?;
    Ok(())
}
