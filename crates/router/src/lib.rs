//! qoslab-router: the core's port pipelines, queue disciplines and MACE
//! forwarding real packets between two Linux interfaces.
//!
//! - [`config`]: the TOML configuration (`[router]` + a scenario `[link]`),
//!   read with a bound (`qoslab_scenario::bounded`: a regular file, 16 MiB)
//!   and built through `qoslab-scenario`'s registry;
//! - [`parse`]: frames to flow keys, DSCP and ECN (etherparse), ECN marks back;
//! - [`pool`]: the packet buffers (a packet's `handle` is its slot);
//! - [`flows`]: the bounded flow table (LRU eviction);
//! - [`datapath`]: the delay line, ports, pacers ("the device") and timers, without I/O;
//! - [`reload`]: reconfiguration checked against the live state;
//! - [`script`]: frames, time steps and reloads from bytes, with conservation checked (fuzzing, tests);
//! - [`delay`]: the link's propagation delay, a delay line before the ports;
//! - [`edge`]: a PCN domain at the link's ends (ingress admission and termination, egress CLE and
//!   sustainable rate, their messages as UDP packets);
//! - [`entry`]: per-connection entry shapers at side a and the shaping CAC that admits and rates them;
//! - [`afpacket`]: AF_PACKET sockets with a receive ring and `sendmmsg` batches;
//! - [`afxdp`]: AF_XDP sockets (copy mode) and their XDP redirect program;
//! - [`io`]: either kind, as `router.io` chooses;
//! - [`control`]: the control socket and thread (stats, validated reconfiguration);
//! - [`report`]: JSON stats lines and the final `summary.json`;
//! - [`daemon`]: the real-time loop, signals and draining;
//! - [`lateness`]: how late the loop woke for the datapath's timers (bounded histogram);
//! - [`testbed`]: network namespaces joined by veth, for tests and the benchmark.

pub mod afpacket;
pub mod afxdp;
pub mod config;
pub mod control;
pub mod daemon;
pub mod datapath;
pub mod delay;
pub mod edge;
pub mod entry;
pub mod flows;
pub mod io;
pub mod lateness;
pub mod parse;
pub mod pool;
pub mod reload;
pub mod report;
pub mod script;
#[cfg(test)]
pub(crate) mod test_frames;
pub mod testbed;
