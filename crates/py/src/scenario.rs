//! `qoslab._core.Scenario`: a validated scenario held on the Rust side,
//! from loading to running. The Python `qoslab.Scenario` wraps one.
//!
//! - `Scenario.load(text, ...)`: the text parsed once (a
//!   [`Document`]) and validated once ([`ValidScenario`]);
//! - `with_overrides(...)`: more `key.path=value` overrides applied to the
//!   held document (not to the text), validated once more;
//! - `with_limits(...)`: the same scenario checked against other limits;
//! - `warnings()`: what validation found legal but almost surely a mistake;
//! - `echo()`, `model()`: the scenario with defaults filled in (JSON, units
//!   as text) and its expansion with numbers ([`crate::model`]);
//! - `run(scenario, ...)` (in `lib.rs`) runs the held scenario: nothing is
//!   parsed or validated again;
//! - pickling (a sweep's jobs going to worker processes) writes the echo
//!   and reads it back with [`ValidScenario::restore`] when the reader is
//!   this same build (its version), so a worker does not validate again;
//!   the document is parsed again only if the worker asks for more
//!   overrides. An echo from another build is loaded and validated.

use crate::error;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use qoslab_scenario::load::Document;
use qoslab_scenario::validate::Limits;
use qoslab_scenario::ValidScenario;
use qoslab_sim::SimError;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// A validated scenario (see the module doc).
#[pyclass(frozen, module = "qoslab._core")]
pub struct Scenario {
    pub(crate) valid: Arc<ValidScenario>,
    /// The parsed text with the overrides so far; made again from `text`
    /// and `overrides` when absent (a scenario read back from a pickle).
    doc: OnceLock<Arc<Document>>,
    text: Arc<str>,
    overrides: Vec<String>,
    origin: String,
    pub(crate) base_dir: PathBuf,
    limits: Limits,
    /// The model (`model()`), made on first use.
    model: OnceLock<Py<PyDict>>,
}

/// What a pickled echo must have been written by to be read back without
/// validation: this version with this scenario format (a digest of its
/// JSON Schema, which changes with every field).
fn build_key() -> &'static str {
    static KEY: OnceLock<String> = OnceLock::new();
    KEY.get_or_init(|| {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        qoslab_scenario::schema::json_schema().hash(&mut h);
        format!("{}-{:016x}", crate::version(), h.finish())
    })
}

/// The limits on a run's estimated memory (bytes) and events; `None`: the default.
pub fn limits(max_memory: Option<u64>, max_events: Option<u64>) -> Limits {
    let d = Limits::default();
    Limits { max_memory: max_memory.unwrap_or(d.max_memory), max_events: max_events.unwrap_or(d.max_events) }
}

impl Scenario {
    fn document(&self) -> Result<Arc<Document>, SimError> {
        if let Some(d) = self.doc.get() {
            return Ok(d.clone());
        }
        let d = Arc::new(Document::parse(&self.text, &self.origin)?.with_overrides(&self.overrides)?);
        Ok(self.doc.get_or_init(|| d).clone())
    }

    /// `doc` validated, as a new scenario that keeps this one's text.
    fn validated(&self, doc: Arc<Document>, overrides: Vec<String>, limits: Limits) -> Result<Scenario, SimError> {
        let valid = doc.validate(Some(&self.base_dir), limits)?;
        Ok(Scenario {
            valid: Arc::new(valid),
            doc: OnceLock::from(doc),
            text: self.text.clone(),
            overrides,
            origin: self.origin.clone(),
            base_dir: self.base_dir.clone(),
            limits,
            model: OnceLock::new(),
        })
    }
}

#[pymethods]
impl Scenario {
    /// Parses, overrides and validates a scenario's TOML text; relative paths
    /// in it resolve against `base_dir`.
    #[staticmethod]
    #[pyo3(signature = (text, origin = "<string>", overrides = Vec::new(), base_dir = None, max_memory = None, max_events = None))]
    fn load(
        py: Python<'_>,
        text: &str,
        origin: &str,
        overrides: Vec<String>,
        base_dir: Option<PathBuf>,
        max_memory: Option<u64>,
        max_events: Option<u64>,
    ) -> PyResult<Scenario> {
        let base_dir = base_dir.unwrap_or_else(|| PathBuf::from("."));
        let limits = limits(max_memory, max_events);
        crate::no_panic(|| {
            let doc = Arc::new(Document::parse(text, origin)?.with_overrides(&overrides)?);
            let valid = doc.validate(Some(&base_dir), limits)?;
            Ok(Scenario {
                valid: Arc::new(valid),
                doc: OnceLock::from(doc),
                text: Arc::from(text),
                overrides,
                origin: origin.to_string(),
                base_dir,
                limits,
                model: OnceLock::new(),
            })
        })
        .map_err(|e| error::to_py(py, e))
    }

    /// This scenario with more overrides, applied after its own (later ones win).
    fn with_overrides(&self, py: Python<'_>, overrides: Vec<String>) -> PyResult<Scenario> {
        crate::no_panic(|| {
            let doc = Arc::new(self.document()?.with_overrides(&overrides)?);
            let all = self.overrides.iter().chain(&overrides).cloned().collect();
            self.validated(doc, all, self.limits)
        })
        .map_err(|e| error::to_py(py, e))
    }

    /// This scenario checked against other limits (`None`: the default).
    #[pyo3(signature = (max_memory = None, max_events = None))]
    fn with_limits(&self, py: Python<'_>, max_memory: Option<u64>, max_events: Option<u64>) -> PyResult<Scenario> {
        let limits = limits(max_memory, max_events);
        crate::no_panic(|| self.validated(self.document()?, self.overrides.clone(), limits))
            .map_err(|e| error::to_py(py, e))
    }

    /// The scenario with defaults filled in, as JSON (units as text: what
    /// `summary.json` echoes).
    fn echo(&self) -> PyResult<String> {
        serde_json::to_string(&*self.valid).map_err(|e| error::SimulationError::new_err(format!("scenario echo: {e}")))
    }

    /// What validation found legal but almost surely a mistake, each a dict
    /// `{origin, line, path, message}` (none for a scenario read back from a
    /// pickle: a sweep worker's, already warned about where it was loaded).
    fn warnings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        error::diagnostics(py, self.valid.warnings())
    }

    /// The expanded scenario with numbers in the core's units (see `crate::model`).
    fn model(&self, py: Python<'_>) -> PyResult<Py<PyDict>> {
        if let Some(m) = self.model.get() {
            return Ok(m.clone_ref(py));
        }
        let m = crate::model::model(py, &self.valid, &self.base_dir)?;
        Ok(self.model.get_or_init(|| m).clone_ref(py))
    }

    /// The `[link]` table of a router that emulates link `index` of the
    /// expanded topology (`model()["links"][index]`): the link's fields with
    /// its delay set to `delay_ns`, each direction's queue given (the
    /// topology's default queue where the link names none) and its MACE
    /// descriptor file's path made absolute. TOML text. `addrs` maps node names to the
    /// addresses the testbed gives them: a classifier rule's `src` / `dst` that names a node
    /// becomes that address (the router knows no node names); a name not in it stays (the
    /// planner refuses such rules).
    #[pyo3(signature = (index, delay_ns, addrs = None))]
    fn router_link(
        &self,
        index: usize,
        delay_ns: u64,
        addrs: Option<std::collections::HashMap<String, String>>,
    ) -> PyResult<String> {
        let ex = qoslab_scenario::expand::expand(&self.valid.topology);
        let l =
            ex.links.get(index).ok_or_else(|| pyo3::exceptions::PyIndexError::new_err(format!("no link {index}")))?;
        let mut spec = l.spec.clone();
        spec.delay = qoslab_core::units::Dur(delay_ns);
        spec.queue.get_or_insert_with(|| ex.default_queue.clone());
        spec.reverse_queue.get_or_insert_with(|| ex.default_queue.clone());
        if let Some(m) = &mut spec.mace {
            if let Some(d) = &mut m.descriptors {
                let p = self.base_dir.join(&*d);
                *d = std::fs::canonicalize(&p).unwrap_or(p).display().to_string();
            }
        }
        if let Some(addrs) = &addrs {
            for st in spec.stages.iter_mut().chain(spec.reverse_stages.iter_mut()) {
                if let qoslab_scenario::StageSpec::Classifier { rules, .. } = st {
                    for r in rules.iter_mut() {
                        for end in [&mut r.src, &mut r.dst] {
                            if let Some(a) = end.as_ref().and_then(|n| addrs.get(n)) {
                                *end = Some(a.clone());
                            }
                        }
                    }
                }
            }
        }
        #[derive(serde::Serialize)]
        struct Router {
            link: qoslab_scenario::LinkSpec,
        }
        toml::to_string(&Router { link: spec })
            .map_err(|e| error::SimulationError::new_err(format!("link {index} as TOML: {e}")))
    }

    #[getter]
    fn name(&self) -> &str {
        &self.valid.name
    }
    #[getter]
    fn seed(&self) -> u64 {
        self.valid.seed
    }
    #[getter]
    fn origin(&self) -> &str {
        &self.origin
    }
    #[getter]
    fn base_dir(&self) -> PathBuf {
        self.base_dir.clone()
    }
    #[getter]
    fn overrides(&self) -> Vec<String> {
        self.overrides.clone()
    }
    /// `(max_memory, max_events)` the scenario was checked against.
    #[getter]
    fn limits(&self) -> (u64, u64) {
        (self.limits.max_memory, self.limits.max_events)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Scenario>().is_ok_and(|o| o.get().valid.scenario() == self.valid.scenario())
    }

    fn __repr__(&self) -> String {
        format!("Scenario(name={:?}, origin={:?})", self.valid.name, self.origin)
    }

    /// Pickles as the text, the overrides and the echo (see the module doc).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let py = slf.py();
        let s = slf.get();
        let restore = py.get_type::<Scenario>().getattr("_restore")?;
        let args = (
            s.text.as_ref(),
            s.origin.as_str(),
            s.overrides.clone(),
            s.base_dir.clone(),
            s.limits.max_memory,
            s.limits.max_events,
            build_key(),
            s.echo()?,
        )
            .into_pyobject(py)?;
        Ok((restore, args))
    }

    /// The other half of `__reduce__`.
    #[staticmethod]
    #[allow(clippy::too_many_arguments)] // the pickled state, in order
    fn _restore(
        py: Python<'_>,
        text: &str,
        origin: &str,
        overrides: Vec<String>,
        base_dir: PathBuf,
        max_memory: u64,
        max_events: u64,
        version: &str,
        echo: &str,
    ) -> PyResult<Scenario> {
        let restored = (version == build_key()).then(|| ValidScenario::restore(echo).ok()).flatten();
        match restored {
            Some(valid) => Ok(Scenario {
                valid: Arc::new(valid),
                doc: OnceLock::new(),
                text: Arc::from(text),
                overrides,
                origin: origin.to_string(),
                base_dir,
                limits: Limits { max_memory, max_events },
                model: OnceLock::new(),
            }),
            None => Scenario::load(py, text, origin, overrides, Some(base_dir), Some(max_memory), Some(max_events)),
        }
    }
}
