//! The arrival side of a class-managed RED queue: the [`Aqm`] interface
//! that RED ([`RedStage`]), CBT and D-CBT implement, and the [`View`] of the
//! queue it decides on.
//!
//! An [`Aqm`] decides, for each arriving packet, whether it may enter
//! (possibly ECN-marked) or why not. It sees a [`View`] of the queue: the
//! physical backlog, the per-class backlog as the placement accounts it
//! (a plain FIFO's, or ChIPS's virtual FIFO), and the active-flow counts.
//! RED's own arrival side is [`crate::qdisc::red::RedStage`]; its `Aqm`
//! implementation is here, so that RED does not depend on the class model.

use super::classes::{Class, ClassBacklog};
use super::flow_counter::FlowCounts;
use crate::packet::Packet;
use crate::qdisc::red::{Outcome, RedMode, RedStage};
use crate::qdisc::{Backlog, ProbeSink};
use crate::rng::Rng;
use crate::units::Time;

/// What a stage sees of the queue when a packet arrives.
#[derive(Clone, Copy, Debug)]
pub struct View<'a> {
    pub class: Class,
    /// The physical queue, before this packet.
    pub backlog: Backlog,
    /// Per-class occupancy as the placement accounts it, before this packet.
    pub classes: &'a ClassBacklog,
    /// Active flows per class, this packet's flow included (`None` if no
    /// stage asked for flow counting).
    pub flows: Option<&'a FlowCounts>,
}

/// The arrival side of a queue: averages, class tests, RED's verdict and
/// the physical limit.
pub trait Aqm: 'static {
    fn kind(&self) -> &'static str;
    /// Whether the stage needs [`View::flows`].
    fn needs_flow_counts(&self) -> bool {
        false
    }
    /// Decides on `pkt` (which it may ECN-mark).
    fn on_arrival(&mut self, now: Time, pkt: &mut Packet, view: &View<'_>, rng: &mut Rng) -> Outcome;
    /// The queue was found empty at `now` (an idle period may start).
    fn on_idle(&mut self, now: Time);
    /// RED's average (packets, or bytes in byte mode).
    fn red_avg(&self) -> f64;
    /// How RED measures the queue.
    fn mode(&self) -> RedMode;
    /// Forgets averages and counts (the queue was reset).
    fn reset(&mut self);
    /// Reports internal variables (`red_avg`, class averages, thresholds).
    fn probe(&self, flows: Option<&FlowCounts>, sink: ProbeSink<'_>);
}

impl Aqm for RedStage {
    fn kind(&self) -> &'static str {
        "red"
    }
    fn on_arrival(&mut self, now: Time, pkt: &mut Packet, view: &View<'_>, rng: &mut Rng) -> Outcome {
        self.update_avg(now, view.backlog);
        self.judge(pkt, view.backlog, rng)
    }
    fn on_idle(&mut self, now: Time) {
        RedStage::on_idle(self, now)
    }
    fn red_avg(&self) -> f64 {
        self.avg()
    }
    fn mode(&self) -> RedMode {
        self.config().mode
    }
    fn reset(&mut self) {
        RedStage::reset(self)
    }
    fn probe(&self, _flows: Option<&FlowCounts>, sink: ProbeSink<'_>) {
        sink("red_avg", self.avg());
    }
}
