//! The core's cross-module and property tests, as one test binary: each
//! file under `tests/` would otherwise be linked and optimized on its own,
//! which dominates a cold `make test`.

mod cac_properties;
mod cbt_properties;
mod edge;
mod mace_properties;
mod pcn_properties;
mod properties;
mod visit_properties;
