//! The simulator's cross-module tests, as one test binary: each file under
//! `tests/` would otherwise be linked and optimized on its own, which
//! dominates a cold `make test`.

mod arrivals;
mod cbt_queues;
mod common;
mod conservation;
mod determinism;
mod edges;
mod fast_paths;
mod fluid;
mod generator;
mod links_routes;
mod mace;
mod mace_descriptors;
mod paper_traffic;
mod pcn;
mod red_dumbbell;
mod scenarios;
mod series_counters;
mod series_selection;
mod shaping;
mod stages;
mod tcp;
mod trace;
mod traffic;
mod vtr;
