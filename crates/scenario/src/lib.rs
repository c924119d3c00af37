//! qoslab-scenario: the scenario model, its one validation, and the
//! registry of mechanisms. The simulator and the router both build from a
//! [`ValidScenario`]; this crate does not depend on either of them.
//!
//! - [`model`]: the typed scenario ([`Scenario`]) and its defaults, by subject;
//! - [`tcp_model`]: the `tcp` and `mm_app` tables of the TCP and MM_APP models;
//! - [`units`]: serde adapters for `"25Mbps"`, `"20ms"`, `"1500B"`, `"60pkts"`;
//! - [`bounded`]: reading input files with a bound (regular files only, a size limit, data files streamed);
//! - [`files`]: files a scenario names (replay CSVs, MACE descriptor files), read as text;
//! - [`vtr`]: frame traces of the `vtr` traffic model, their file format and the synthetic generator;
//! - [`expand`]: presets to explicit nodes and links, node patterns;
//! - [`routes`]: the static routes over them (fewest hops, hosts never forward);
//! - [`load`]: TOML text or file and `--set` overrides to a [`ValidScenario`];
//! - [`validate`]: the semantic rules, all problems at once; the only
//!   maker of a [`ValidScenario`];
//! - [`schema`]: the JSON Schema (`qoslab schema`);
//! - [`shape`]: the structural check of a document against the schema;
//! - [`registry`]: each mechanism's scenario spec to its core type
//!   ([`registry::build_queue`], [`registry::mace`]) and the lists of type
//!   names ([`registry::QUEUE_TYPES`], ...);
//! - [`error`]: the problems found, [`Diagnostic`] (`file:line: field: problem; allowed: ...`)
//!   and [`ScenarioError`].

pub mod error;
pub mod model;
pub mod tcp_model;
pub mod units;

pub use error::{Diagnostic, ScenarioError};
pub use model::*;
pub use tcp_model::*;
pub use validate::ValidScenario;
pub mod bounded;
pub mod expand;
pub mod files;
pub mod load;
pub mod paper_traffic;
pub mod registry;
pub mod routes;
pub mod schema;
pub mod shape;
pub mod validate;
pub mod vtr;
