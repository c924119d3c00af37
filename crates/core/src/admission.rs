//! The admission-control interface.
//!
//! The driver asks `request` when a flow wants service, tells
//! `on_departure` when it ends, feeds `on_sample` with load measurements
//! (measurement-based controllers), and calls `on_deadline` at
//! `next_deadline()` (timers are the driver's job). Every [`Decision`]
//! carries the rule that was applied with its two sides, so results can
//! show why a flow was refused.

use crate::packet::{ClassTag, FlowId};
use crate::units::{Bytes, Dur, Rate, Time};

/// A flow asking for admission.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowRequest {
    pub flow: FlowId,
    pub class: ClassTag,
    /// The rate the flow asks to have reserved (token-bucket rate or peak).
    pub rate: Rate,
    /// Token-bucket depth of the flow's descriptor, if it has one.
    pub depth: Bytes,
}

/// Why a decision went the way it did: `lhs <op> rhs` under `rule`.
#[derive(Clone, Debug, PartialEq)]
pub struct DecisionReason {
    /// The test applied, e.g. `"v*mu > r + nu_hat"` or `"admit_all"`.
    pub rule: &'static str,
    /// The quantity tested (e.g. `r + nu_hat`, in bit/s).
    pub estimate: f64,
    /// What it was compared with (e.g. `v*mu`, in bit/s).
    pub threshold: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    Admit(DecisionReason),
    Reject(DecisionReason),
}

impl Decision {
    pub fn admitted(&self) -> bool {
        matches!(self, Decision::Admit(_))
    }
    pub fn reason(&self) -> &DecisionReason {
        match self {
            Decision::Admit(r) | Decision::Reject(r) => r,
        }
    }
}

/// A load measurement: `bits` counted over `interval` ending at `at`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoadSample {
    pub at: Time,
    pub interval: Dur,
    pub bits: u64,
}

impl LoadSample {
    /// Mean rate over the interval, in bit/s.
    pub fn rate_bps(&self) -> f64 {
        if self.interval.0 == 0 {
            0.0
        } else {
            self.bits as f64 / self.interval.as_secs_f64()
        }
    }
}

/// An admission controller.
pub trait AdmissionControl {
    fn kind(&self) -> &'static str;
    fn request(&mut self, now: Time, req: &FlowRequest) -> Decision;
    fn on_departure(&mut self, _now: Time, _flow: FlowId) {}
    fn on_sample(&mut self, _now: Time, _load: &LoadSample) {}
    fn next_deadline(&self) -> Option<Time> {
        None
    }
    fn on_deadline(&mut self, _now: Time) {}
}

/// Admits every flow.
#[derive(Clone, Debug, Default)]
pub struct AdmitAll {
    admitted: u64,
}

impl AdmitAll {
    pub fn admitted(&self) -> u64 {
        self.admitted
    }
}

impl AdmissionControl for AdmitAll {
    fn kind(&self) -> &'static str {
        "admit_all"
    }
    fn request(&mut self, _now: Time, req: &FlowRequest) -> Decision {
        self.admitted += 1;
        Decision::Admit(DecisionReason { rule: "admit_all", estimate: req.rate.as_f64(), threshold: f64::INFINITY })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admit_all_admits_and_says_why() {
        let mut a = AdmitAll::default();
        let req = FlowRequest { flow: FlowId(3), class: ClassTag(1), rate: Rate::kbps(64), depth: Bytes(0) };
        let d = a.request(Time(0), &req);
        assert!(d.admitted());
        assert_eq!(d.reason().rule, "admit_all");
        assert_eq!(a.admitted(), 1);
    }
}
