//! qoslab-traffic: the testbed's UDP traffic, on real sockets.
//!
//! - [`spec`]: what a generator sends (a JSON file the testbed writes: one
//!   entry per flow, the scenario group's model, sizes and start);
//! - [`wire`]: the payload header (magic, flow id, sequence number, send
//!   time on CLOCK_MONOTONIC) and the sink's per-packet record;
//! - [`gen`]: the generator: the simulator's own sources (CBR, Poisson,
//!   ON/OFF with exponential or Pareto periods) and a replay of a packet
//!   list, each flow from its own UDP port, sent on the monotonic clock;
//! - [`admission`]: a flow that asks a PCN ingress (a `qoslab-router`
//!   with `[pcn]`) or the shaping CAC (`[cac]`) before it sends, by
//!   packet, stops when terminated, and tells the CAC when it ends;
//! - [`sink`]: the receiver: one socket per port, a record per packet
//!   (flow, size, sequence, send and receive times) written at the end;
//! - [`tcp`]: kernel TCP senders (one thread each) and receivers, the
//!   congestion control and segment size set per socket.
//!
//! Every network namespace shares CLOCK_MONOTONIC, so a sink in one
//! namespace measures one-way delay from a send time stamped in another.

pub mod admission;
pub mod clock;
pub mod error;
pub mod gen;
pub mod sink;
pub mod spec;
pub mod tcp;
pub mod wire;
