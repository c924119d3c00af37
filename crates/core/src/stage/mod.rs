//! The stage interface: what happens to a packet at an output port before
//! its queue discipline (see [`super::Port`]).
//!
//! A stage classifies (sets `pkt.class`, a stream or flow id), meters and
//! marks (sets ECN/PCN marks, or drops with a reason), admits or learns
//! (MACE's recognition and measurement-based admission). It sees every
//! packet that reaches it, in port order, and hears of every packet it
//! passed that something after it dropped (a later stage, the queue
//! discipline, or a push-out from the queue). Periodic work (measurement
//! intervals, table sweeps) runs at `next_deadline()` through `on_tick`.
//! Events go out through an [`EventSink`] with typed fields.
//!
//! Clock-free, like everything in core: every call takes `now`; randomness
//! only through the [`Rng`] passed in.

pub mod edge_classifier;
pub mod mace;
pub mod pcn;
pub mod policer;

use crate::packet::{FlowKey, Packet};
use crate::pipeline::EventSink;
use crate::qdisc::{DropReason, MarkReason, ProbeSink};
use crate::rng::Rng;
use crate::units::Time;

/// What a stage did with a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StageVerdict {
    /// Passed on unchanged in its fate (its class or fields may have been set).
    Pass,
    /// Passed on with a congestion mark set on the packet (for the counters).
    Mark(MarkReason),
    /// Dropped here; later stages and the queue never see it.
    Drop(DropReason),
}

/// One step of a port pipeline.
pub trait Stage: std::fmt::Debug + Send {
    /// Short name (`"mace"`, `"policer"`), used in results.
    fn kind(&self) -> &'static str;
    /// A packet reaches the stage at `now`; `key` is its flow's header fields.
    fn on_arrival(
        &mut self,
        now: Time,
        pkt: &mut Packet,
        key: &FlowKey,
        rng: &mut Rng,
        events: &mut dyn EventSink,
    ) -> StageVerdict;
    /// A packet this stage passed was dropped further on (`reason` says where).
    fn on_drop(&mut self, _now: Time, _pkt: &Packet, _reason: DropReason) {}
    /// When [`Stage::on_tick`] is next needed, if ever.
    fn next_deadline(&self) -> Option<Time> {
        None
    }
    /// The periodic work due at `now` (called at or after `next_deadline()`).
    fn on_tick(&mut self, _now: Time, _events: &mut dyn EventSink) {}
    /// Instantaneous state for time series (`name`, value), like a qdisc's probe.
    fn probe(&self, _sink: ProbeSink<'_>) {}
}

/// The device side of a port: a transmit queue below the queue discipline
/// whose admission rule the port consults before each dequeue (MACE's
/// "BE only when the device is idle", [MACE98 §3.1]). The port keeps the
/// packets; the policy keeps only what it needs to decide.
pub trait DevicePolicy: std::fmt::Debug + Send {
    /// May the device take `head` (the queue's next packet) now?
    fn admits(&self, head: &Packet) -> bool;
    /// `pkt` was handed to the device.
    fn on_pull(&mut self, pkt: &Packet);
    /// `pkt` finished transmission; `false` if the device did not hold it
    /// (a driver bug the driver should report).
    fn on_sent(&mut self, pkt: &Packet) -> bool;
}
