//! qoslab-py: the native module `qoslab._core`. Thin: convert the
//! arguments, call the simulator, convert the result. The public Python
//! API (`python/qoslab`) wraps these functions; `_core.pyi` types them.
//!
//! - `version`, `schema`: the crate version; the scenario JSON Schema.
//! - `scenario::Scenario`: a validated scenario held here from loading to
//!   running (overrides applied to it, its echo, warnings and expanded `model`).
//! - `read_text`: a file's text through the bounded reader (regular files, 16 MiB).
//! - `run`: a held scenario to `{"summary": json, "flows": {..}, ...}`,
//!   with the GIL released during the run. The progress closure takes the
//!   GIL back at most ten times per wall-second to call the Python
//!   callback and check for signals, so Ctrl-C stops a long run.
//! - `facts`: units, the lists of names and the result tables' metric
//!   formulas, for Python to read rather than restate.
//! - `red_replay::red_replay`: a scripted RED, for the reference tests.
//! - `cac::cac`: the CAC calculator of [Tarasiuk05] (ρ, N_max, Erlang-B).
//! - `fluid::fluid_run`: the fluid (ideal-rate) mode of the TCP-CAC schemes.
//! - `error`: the exception classes and the `SimError` mapping. A panic
//!   while loading or running is caught (`no_panic`) and raised as
//!   `qoslab.SimulationError`, never unwound into Python.

mod cac;
mod convert;
mod error;
mod facts;
mod fluid;
mod model;
mod red_replay;
mod scenario;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use qoslab_sim::{RunOptions, SimError};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Minimum wall time between two calls into Python from a running simulation.
const PROGRESS_EVERY: Duration = Duration::from_millis(100);

/// Runs `f`, turning a panic into `SimError::Runtime` so that no panic
/// crosses into Python (it would surface as pyo3's `PanicException`).
pub(crate) fn no_panic<T>(f: impl FnOnce() -> Result<T, SimError>) -> Result<T, SimError> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| {
        Err(SimError::Runtime(format!(
            "qoslab panicked (a bug; please report it with the scenario): {}",
            error::panic_message(&*p)
        )))
    })
}

/// The qoslab version (the Rust crates' version).
#[pyfunction]
pub(crate) fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The JSON Schema of the scenario format, pretty-printed.
#[pyfunction]
fn schema() -> String {
    qoslab_scenario::schema::json_schema()
}

/// The UTF-8 text of the regular file `path`, at most `limit` bytes
/// (default 16 MiB), through the one bounded reader every input goes
/// through (`qoslab_scenario::bounded`): a folder, device, pipe or socket,
/// a larger file or bytes that are not UTF-8 raise `ScenarioFileError`
/// (an `OSError`) whose `filename` is `path` and whose `strerror` says why
/// and what is allowed.
#[pyfunction]
#[pyo3(signature = (path, limit = None))]
fn read_text(py: Python<'_>, path: PathBuf, limit: Option<u64>) -> PyResult<String> {
    use qoslab_scenario::bounded;
    let limit = limit.unwrap_or(bounded::MAX_FILE);
    py.detach(|| bounded::read_text(&path, limit)).map_err(|e| {
        let errno = match &e {
            bounded::ReadError::Io(io) => io.raw_os_error(),
            _ => None,
        };
        let message = match &e {
            bounded::ReadError::NotText { line, message } => format!("line {line}: {message}; allowed: UTF-8 text"),
            // The system's own words ("No such file or directory"), as Python's OSError has them.
            bounded::ReadError::Io(io) => {
                let text = io.to_string();
                text.split(" (os error").next().unwrap_or(&text).to_string()
            }
            other => other.to_string(),
        };
        error::ScenarioFileError::new_err((errno, message, path.display().to_string()))
    })
}

/// Runs a validated scenario (nothing is parsed or validated again).
#[pyfunction]
#[pyo3(signature = (scenario, seed = None, progress = None))]
fn run<'py>(
    py: Python<'py>,
    scenario: &scenario::Scenario,
    seed: Option<u64>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let sc = scenario.valid.as_ref();
    let base_dir = scenario.base_dir.clone();
    let seed = seed.unwrap_or(sc.seed);
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
        no_panic(|| qoslab_sim::run::run(sc, opts))
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
    d.set_item("flows", convert::table(&np, out.flows)?)?;
    d.set_item("queues", convert::table(&np, out.queues)?)?;
    d.set_item("series", convert::table(&np, out.series)?)?;
    d.set_item("events", convert::table(&np, out.events)?)?;
    let traces = PyDict::new(py);
    for t in out.traces {
        traces.set_item(t.name.clone(), Trace { inner: t })?;
    }
    d.set_item("traces", traces)?;
    Ok(d)
}

/// A packet trace of one link direction (``[trace] pcap``), kept as records
/// and written as pcapng on demand: ``write(path)`` streams it to a file,
/// ``to_bytes()`` returns it whole.
#[pyclass(frozen, module = "qoslab._core")]
struct Trace {
    inner: qoslab_sim::trace::PcapTrace,
}

#[pymethods]
impl Trace {
    /// The traced direction (``"r0->r1"``).
    #[getter]
    fn name(&self) -> &str {
        &self.inner.name
    }
    /// Records: packets put on the wire and packets dropped.
    fn __len__(&self) -> usize {
        self.inner.len()
    }
    /// Writes the trace as pcapng to ``path`` and syncs it.
    fn write(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        py.detach(|| self.inner.write_file(&path)).map_err(pyo3::exceptions::PyOSError::new_err)
    }
    /// The trace as pcapng bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
        let b = py.detach(|| self.inner.to_bytes()).map_err(pyo3::exceptions::PyOSError::new_err)?;
        Ok(pyo3::types::PyBytes::new(py, &b))
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(read_text, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_class::<scenario::Scenario>()?;
    m.add_class::<Trace>()?;
    m.add_function(wrap_pyfunction!(facts::parse_rate, m)?)?;
    m.add_function(wrap_pyfunction!(facts::parse_duration, m)?)?;
    m.add_function(wrap_pyfunction!(facts::parse_size, m)?)?;
    m.add_function(wrap_pyfunction!(facts::parse_packets, m)?)?;
    m.add_function(wrap_pyfunction!(facts::format_rate, m)?)?;
    m.add_function(wrap_pyfunction!(facts::format_duration, m)?)?;
    m.add_function(wrap_pyfunction!(facts::format_size, m)?)?;
    m.add_function(wrap_pyfunction!(facts::names, m)?)?;
    m.add_function(wrap_pyfunction!(facts::delay_columns, m)?)?;
    m.add_function(wrap_pyfunction!(facts::jain_index, m)?)?;
    m.add_function(wrap_pyfunction!(facts::totals, m)?)?;
    m.add_function(wrap_pyfunction!(red_replay::red_replay, m)?)?;
    m.add_function(wrap_pyfunction!(cac::cac, m)?)?;
    m.add_function(wrap_pyfunction!(fluid::fluid_run, m)?)?;
    error::register(m)?;
    Ok(())
}
