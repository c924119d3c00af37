//! The one place where simulator errors become Python exceptions.
//!
//! | Rust | Python |
//! |---|---|
//! | `SimError::Config(diagnostics)` | `qoslab.ConfigError` (a `ValueError`) with `.diagnostics`: a list of dicts `{origin, line, path, message}` |
//! | `SimError::Io { path, .. }` | `qoslab.ScenarioFileError` (an `OSError`) with `.filename` |
//! | `SimError::Runtime(..)`, a panic | `qoslab.SimulationError` (a `RuntimeError`) |
//! | `SimError::Interrupted` | `KeyboardInterrupt` (or whatever the progress callback raised) |
//!
//! The exception classes live here, in `qoslab._core`, and the package
//! re-exports them, so `except qoslab.ConfigError` catches what Rust raises.

use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use qoslab_sim::{Diagnostic, SimError};

pyo3::create_exception!(
    qoslab,
    ConfigError,
    PyValueError,
    "The scenario (or a mechanism's configuration) is invalid. `.diagnostics` lists every problem as a dict with keys origin, line, path and message; str() gives them as `file:line: path: problem; allowed: ...` lines."
);
pyo3::create_exception!(
    qoslab,
    ScenarioFileError,
    PyOSError,
    "A scenario file, or a file it refers to, could not be read. `.filename` names it."
);
pyo3::create_exception!(
    qoslab,
    SimulationError,
    PyRuntimeError,
    "The simulation itself failed: a bug in qoslab, reported instead of crashing the interpreter."
);

/// Diagnostics as a list of dicts `{origin, line, path, message}`.
pub fn diagnostics<'py>(py: Python<'py>, diagnostics: &[Diagnostic]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for d in diagnostics {
        let item = PyDict::new(py);
        item.set_item("origin", &d.origin)?;
        item.set_item("line", d.line)?;
        item.set_item("path", &d.path)?;
        item.set_item("message", &d.message)?;
        list.append(item)?;
    }
    Ok(list)
}

/// A `ConfigError` carrying `diagnostics`.
pub fn config_error(py: Python<'_>, diagnostics: &[Diagnostic]) -> PyErr {
    let text = diagnostics.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n");
    let err = ConfigError::new_err(text);
    match self::diagnostics(py, diagnostics).and_then(|list| err.value(py).setattr("diagnostics", list)) {
        Ok(()) => err,
        Err(e) => e,
    }
}

/// A `ConfigError` with a single diagnostic.
pub fn config_error_one(py: Python<'_>, origin: &str, path: &str, message: impl Into<String>) -> PyErr {
    config_error(py, &[Diagnostic { origin: origin.into(), line: None, path: path.into(), message: message.into() }])
}

/// Maps a simulator error to its Python exception.
pub fn to_py(py: Python<'_>, e: SimError) -> PyErr {
    match e {
        SimError::Config(ds) => config_error(py, &ds),
        SimError::Io { path, message } => {
            let err = ScenarioFileError::new_err(format!("{path}: {message}"));
            match err.value(py).setattr("filename", path) {
                Ok(()) => err,
                Err(e) => e,
            }
        }
        SimError::Runtime(m) => SimulationError::new_err(m),
        SimError::Interrupted => PyKeyboardInterrupt::new_err("simulation interrupted"),
    }
}

/// The message of a caught panic.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// Registers the exception classes on the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("ScenarioFileError", py.get_type::<ScenarioFileError>())?;
    m.add("SimulationError", py.get_type::<SimulationError>())?;
    Ok(())
}
