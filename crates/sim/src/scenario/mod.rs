//! Scenarios: the model, loading with `file:line` errors, validation, schema.
//!
//! - [`model`]: the typed scenario ([`Scenario`]) and its defaults;
//! - [`tcp_model`]: the `tcp` and `mm_app` tables of the TCP and MM_APP models;
//! - [`units`]: serde adapters for `"25Mbps"`, `"20ms"`, `"1500B"`, `"60pkts"`;
//! - [`expand`]: presets to explicit nodes and links, node patterns;
//! - [`load`]: TOML text or file and `--set` overrides to a validated scenario;
//! - [`validate`]: the semantic rules, all problems at once;
//! - [`schema`]: the JSON Schema (`qoslab schema`);
//! - [`shape`]: the structural check of a document against the schema.

pub mod model;
pub mod stages;
pub mod tcp_model;
pub mod units;

pub use model::*;
pub use stages::*;
pub use tcp_model::*;
pub mod expand;
pub mod load;
pub mod schema;
pub mod shape;
pub mod validate;
