//! The scenario data model: what a TOML scenario file says, typed.
//!
//! Checked against the JSON Schema by the loader's structural walk
//! ([`crate::shape`]: unknown keys, missing keys, types, units), typed by
//! serde, then checked by [`crate::validate`] before anything runs. Every field has a default
//! taken from the paper or tool that introduced it; `summary.json` echoes
//! the whole scenario with the defaults filled in. The JSON Schema
//! (`qoslab schema`) is derived from these types.
//!
//! One file per subject: [`topology`] (presets, nodes, links), [`queue`]
//! (queue disciplines, RED's shared parameters, ChIPS), [`mace`] (a link's
//! MACE table), [`stages`] (a link's port stages), [`traffic`] (groups, models, sizes, arrivals, shapers),
//! [`admission`], [`metrics`] and [`trace`] (pcapng packet traces); the `tcp` and `mm_app` tables are in
//! [`crate::tcp_model`].

use crate::units;
use qoslab_core::units::Dur;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub mod admission;
pub mod mace;
pub mod metrics;
pub mod pcn;
pub mod queue;
pub mod stages;
pub mod topology;
pub mod trace;
pub mod traffic;

pub use admission::*;
pub use mace::*;
pub use metrics::*;
pub use pcn::*;
pub use queue::*;
pub use stages::*;
pub use topology::*;
pub use trace::*;
pub use traffic::*;

fn default_seed() -> u64 {
    1
}

/// A whole scenario file.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short name, used in result folders.
    pub name: String,
    /// Free text, echoed in the results.
    #[serde(default)]
    pub description: String,
    /// Simulated time, e.g. "60s".
    #[serde(with = "units::dur")]
    #[schemars(with = "crate::schema::DurText")]
    pub duration: Dur,
    /// Default seed, 0 to 2^63-1 (a TOML integer); `--seed` overrides it and
    /// takes the whole 0 to 2^64-1.
    #[serde(default = "default_seed")]
    #[schemars(range(max = 9_223_372_036_854_775_807_u64))]
    pub seed: u64,
    /// The network: a preset (`dumbbell`, `parking_lot`, `star`) or `explicit` nodes and links.
    pub topology: Topology,
    /// Traffic groups (`[[traffic]]`), each one or more flows of one model.
    #[serde(default)]
    pub traffic: Vec<TrafficGroup>,
    /// Admission control asked when each flow starts (default: admit all).
    #[serde(default)]
    pub admission: AdmissionSpec,
    /// What to measure beyond the defaults (bins, sampling, traces).
    #[serde(default)]
    pub metrics: MetricsSpec,
    /// Packet traces (pcapng) of link directions.
    #[serde(default, skip_serializing_if = "trace::TraceSpec::is_empty")]
    pub trace: trace::TraceSpec,
    /// A Pre-Congestion Notification domain [Zhang07]: its edge routers and settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcn: Option<PcnSpec>,
}

// Defaults shared by the subjects' serde attributes.
fn one() -> u32 {
    1
}
fn yes() -> bool {
    true
}
fn is_true(b: &bool) -> bool {
    *b
}
