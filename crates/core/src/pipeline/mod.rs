//! Where mechanisms beyond one queue live: the per-port stage pipeline and
//! the domain edge behaviours (see `docs/architecture.md`).
//!
//! - [`stage`]: the [`Stage`] interface (classify, meter and mark, admit or
//!   learn) and the [`DevicePolicy`] of a device transmit queue;
//! - [`port`]: a [`Port`] = stages + queue discipline + optional device queue,
//!   the unit a driver (simulator link direction, router egress) drives;
//! - [`edge`]: the [`EdgeBehaviour`] interface for domain ingress and egress
//!   nodes, per ingress-egress aggregate, with [`EdgeMessage`]s between them;
//! - [`event`]: typed events ([`MechEvent`]) and the [`EventSink`] they go to.
//!
//! Nothing here assumes the simulator: the router drives the same ports
//! and edge behaviours from a real-time loop.

pub mod event;
pub mod port;

pub use event::{Discard, EventKind, EventSink, Field, MechEvent, Value};
pub use port::{Port, StageStats};
