//! Scenarios: the model, loading with `file:line` errors, validation, schema.

pub mod model;
pub mod units;

pub use model::*;
pub mod expand;
