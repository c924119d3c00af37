//! The admission-control interface.
//!
//! The driver asks `request` when a flow wants service, tells
//! `on_departure` when it ends, feeds `on_sample` with load measurements
//! (measurement-based controllers), and calls `on_tick` at
//! `next_deadline()` (timers are the driver's job). Every [`Decision`]
//! carries the rule that was applied with its two sides, so results can
//! show why a flow was refused.

pub mod cac;
pub mod mace;

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
    fn on_tick(&mut self, _now: Time) {}
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
        assert_eq!(d.reason().estimate, 64_000.0);
        assert_eq!(d.reason().threshold, f64::INFINITY);
    }

    #[test]
    fn admit_all_counts_every_request_and_ignores_the_hooks() {
        let mut a = AdmitAll::default();
        assert_eq!(a.kind(), "admit_all");
        for i in 0..5 {
            let req = FlowRequest { flow: FlowId(i), class: ClassTag(0), rate: Rate::mbps(1), depth: Bytes(1500) };
            assert!(a.request(Time(i as u64), &req).admitted());
            a.on_departure(Time(i as u64), FlowId(i));
            a.on_sample(Time(i as u64), &LoadSample { at: Time(i as u64), interval: Dur::from_ms(1), bits: 1 });
        }
        assert_eq!(a.admitted(), 5);
        assert_eq!(a.next_deadline(), None);
    }

    #[test]
    fn decision_reason_is_available_for_both_outcomes() {
        let why = DecisionReason { rule: "v*mu > r + nu_hat", estimate: 9.5e6, threshold: 9.0e6 };
        let d = Decision::Reject(why.clone());
        assert!(!d.admitted());
        assert_eq!(d.reason(), &why);
        assert!(Decision::Admit(why.clone()).admitted());
    }

    #[test]
    fn load_sample_rate_is_bits_over_interval() {
        let s = LoadSample { at: Time(1_000_000_000), interval: Dur::from_ms(100), bits: 2_500_000 };
        assert!((s.rate_bps() - 25_000_000.0).abs() < 1e-6);
        assert_eq!(LoadSample { interval: Dur::ZERO, ..s }.rate_bps(), 0.0);
    }
}
