//! The MACE composition: classifier + recognition + admission +
//! measurement, in the order of the paper's Fig. 3 [MACE98 §3]. It adds
//! no rule of its own beyond the wiring, and the queue and device queue
//! stay with the driver's link.
//!
//! ```text
//! classify_and_learn(now, key, flow, size):
//!     classifier says CL  → measurement counts size; CL
//!     recognizer says Ask → request {admission id, r, depth} from the descriptor
//!                           classifier full → refuse (rule "classifier_full")
//!                           else admission.request(now, request)
//!                           admitted → classifier.insert(key, flow); ids[descriptor] = admission id
//!                           recognizer.on_decision(admitted); event Decision (with `flow`)
//!     BE (the asking packet itself included)
//! on_tick(now):  measurement sample due → admission.on_sample; event Sample
//!                classifier sweep → admission.on_departure(ids.remove(descriptor)) per stale flow; event Stale
//!                recognizer sweep → event CandidateExpired
//!                admission deadline → admission.on_tick
//! next_deadline(): the earliest of the four
//! ```
//!
//! **Admission is keyed by the flow's descriptor, not the driver's flow
//! id.** The controller keeps its admitted flows by a [`FlowId`], and a
//! driver's ids may be recycled: qoslab-router's bounded flow table gives an
//! evicted flow's id to the next new flow. Had the driver's id reached the
//! controller, a new flow holding an admitted flow's recycled id would be
//! let in as `already_admitted`, reserving nothing. So MACE asks with an
//! admission id of its own, taken for the request and, once admitted, tied
//! to the descriptor (the classifier's key) until the classifier's stale
//! sweep releases the reservation; an id is never handed out while the
//! controller holds state for it. The driver's `flow` only labels the
//! events. The simulator never recycles ids, so its decisions are the same
//! either way.
//!
//! The admission controller is a type parameter, so a driver keeps typed
//! access to it (`mace.admission().estimate()` for an [`crate::admission::mace::Mbac`]).
//! Configuration: the classifier and the recognizer must match on the same
//! key fields (checked), since the recognizer's candidate becomes the
//! classifier's entry.

use super::classifier::{ClassifierConfig, FlowClassifier, StaleFlow};
use super::descriptors::Descriptors;
use super::measurement::{Measurement, MeasurementConfig};
use super::recognition::{ExpiredCandidate, Recognition, Recognizer, RecognizerConfig};
use super::Class;
use crate::admission::{AdmissionControl, Decision, DecisionReason, FlowRequest, LoadSample};
use crate::error::ConfigError;
use crate::packet::{FlowDescriptor, FlowId, FlowKey};
use crate::units::Time;
use std::collections::{HashMap, HashSet};

/// The rule of a refusal because the classifier table is full.
pub const CLASSIFIER_FULL_RULE: &str = "classifier_full";

/// Settings of the parts [`Mace`] owns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MaceConfig {
    pub classifier: ClassifierConfig,
    pub recognizer: RecognizerConfig,
    pub measurement: MeasurementConfig,
}

impl MaceConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.classifier.validate()?;
        self.recognizer.validate()?;
        self.measurement.validate()?;
        if self.classifier.key != self.recognizer.key {
            return Err(ConfigError::new(
                "mace",
                "recognizer.key",
                format!(
                    "({:?}) must equal classifier.key ({:?}): a recognized candidate becomes a classifier entry",
                    self.recognizer.key, self.classifier.key
                ),
            ));
        }
        Ok(())
    }
}

/// Something MACE did that results should record (events.parquet, series).
#[derive(Clone, Debug, PartialEq)]
pub enum MaceEvent {
    /// Recognition asked for admission; the decision carries its reason.
    Decision { at: Time, key: FlowKey, request: FlowRequest, attempt: u32, decision: Decision },
    /// An admitted flow fell silent for the timeout and left the classifier.
    Stale { at: Time, flow: StaleFlow },
    /// A candidate fell silent for the timeout and left the recognition table.
    CandidateExpired { at: Time, candidate: ExpiredCandidate },
    /// A measurement sample, given to admission control.
    Sample(LoadSample),
}

/// Classifier + recognition + admission + measurement.
#[derive(Debug)]
pub struct Mace<A: AdmissionControl> {
    classifier: FlowClassifier,
    recognizer: Recognizer,
    measurement: Measurement,
    admission: A,
    /// The admission id of each admitted descriptor (the classifier's
    /// entries; at most its capacity). Looked up, never iterated.
    admission_ids: HashMap<FlowDescriptor, FlowId>,
    /// The ids in `admission_ids`: not handed out again while held.
    held_ids: HashSet<FlowId>,
    next_admission_id: u32,
}

impl<A: AdmissionControl> Mace<A> {
    /// Builds MACE with measurement starting at `start`.
    pub fn new(config: MaceConfig, descriptors: Descriptors, admission: A, start: Time) -> Result<Self, ConfigError> {
        config.validate()?;
        Ok(Mace {
            classifier: FlowClassifier::new(config.classifier)?,
            recognizer: Recognizer::new(config.recognizer, descriptors)?,
            measurement: Measurement::new(config.measurement, start)?,
            admission,
            admission_ids: HashMap::new(),
            held_ids: HashSet::new(),
            next_admission_id: 0,
        })
    }

    /// An admission id the controller holds no state for: the next of a
    /// wrapping counter, skipping the (at most `classifier.capacity`) held ones.
    fn fresh_admission_id(&mut self) -> FlowId {
        loop {
            let id = FlowId(self.next_admission_id);
            self.next_admission_id = self.next_admission_id.wrapping_add(1);
            if !self.held_ids.contains(&id) {
                return id;
            }
        }
    }

    /// Classifies a packet of `size` wire bytes of flow `flow` (`key` its
    /// header fields) arriving at `now`, and learns from it: counts CL
    /// load, counts candidates, asks admission at the threshold.
    #[inline]
    pub fn classify_and_learn(
        &mut self,
        now: Time,
        key: &FlowKey,
        flow: FlowId,
        size: u32,
    ) -> (Class, Option<MaceEvent>) {
        if self.classifier.classify(now, key) == Class::Cl {
            self.measurement.on_enqueue(size);
            return (Class::Cl, None);
        }
        let Recognition::Ask { descriptor, attempt } = self.recognizer.on_packet(now, key) else {
            return (Class::Be, None);
        };
        let id = self.fresh_admission_id();
        let asked = FlowRequest { flow: id, class: Class::CL_TAG, rate: descriptor.rate, depth: descriptor.depth };
        let full = |c: &FlowClassifier| {
            Decision::Reject(DecisionReason {
                rule: CLASSIFIER_FULL_RULE,
                estimate: c.len() as f64,
                threshold: c.capacity() as f64,
            })
        };
        let mut decision =
            if self.classifier.is_full() { full(&self.classifier) } else { self.admission.request(now, &asked) };
        if decision.admitted() && self.classifier.insert(now, key, flow).is_err() {
            // Unreachable while the check above holds; undone rather than trusted.
            self.admission.on_departure(now, id);
            decision = full(&self.classifier);
        }
        if decision.admitted() {
            self.admission_ids.insert(self.classifier.descriptor(key), id);
            self.held_ids.insert(id);
        }
        self.recognizer.on_decision(now, key, decision.admitted());
        let request = FlowRequest { flow, ..asked };
        (Class::Be, Some(MaceEvent::Decision { at: now, key: *key, request, attempt, decision }))
    }

    /// When [`Mace::on_tick`] is next needed (always: the measurement
    /// interval never ends).
    pub fn next_deadline(&self) -> Option<Time> {
        [
            self.measurement.next_deadline(),
            self.classifier.next_deadline(),
            self.recognizer.next_deadline(),
            self.admission.next_deadline(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Does the periodic work due at `now` and reports it into `events`.
    pub fn on_tick(&mut self, now: Time, events: &mut Vec<MaceEvent>) {
        let first = events.len();
        self.measurement.on_tick(now, events);
        if let Some(MaceEvent::Sample(s)) = events.get(first) {
            self.admission.on_sample(now, s);
        }
        if self.classifier.next_deadline().is_some_and(|t| t <= now) {
            for flow in self.classifier.sweep(now) {
                if let Some(id) = self.admission_ids.remove(&flow.key) {
                    self.held_ids.remove(&id);
                    self.admission.on_departure(now, id);
                }
                events.push(MaceEvent::Stale { at: now, flow });
            }
        }
        if self.recognizer.next_deadline().is_some_and(|t| t <= now) {
            for candidate in self.recognizer.sweep(now) {
                events.push(MaceEvent::CandidateExpired { at: now, candidate });
            }
        }
        if self.admission.next_deadline().is_some_and(|t| t <= now) {
            self.admission.on_tick(now);
        }
    }

    pub fn classifier(&self) -> &FlowClassifier {
        &self.classifier
    }
    pub fn recognizer(&self) -> &Recognizer {
        &self.recognizer
    }
    pub fn measurement(&self) -> &Measurement {
        &self.measurement
    }
    pub fn admission(&self) -> &A {
        &self.admission
    }
    pub fn admission_mut(&mut self) -> &mut A {
        &mut self.admission
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::mace::{Mbac, MbacConfig, Ssac, SsacConfig, SSAC_RULE};
    use crate::packet::proto;
    use crate::stage::mace::classifier::KeyFields;
    use crate::stage::mace::descriptors::{PortDescriptor, PortSide};
    use crate::units::{Bytes, Dur, Rate};
    use std::net::{IpAddr, Ipv4Addr};

    fn key(src_port: u16) -> FlowKey {
        FlowKey {
            src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
            dst: IpAddr::V4(Ipv4Addr::new(10, 0, 1, 1)),
            src_port,
            dst_port: 5004,
            proto: proto::UDP,
        }
    }
    fn descriptors(threshold: u32) -> Descriptors {
        Descriptors::new(vec![PortDescriptor {
            port: 5004,
            side: PortSide::Dst,
            rate: Rate(77_200),
            depth: Bytes(386),
            threshold,
        }])
        .unwrap()
    }
    fn ms(t: u64) -> Time {
        Time(Dur::from_ms(t).0)
    }
    fn ssac(mu: u64, threshold: u32) -> Mace<Ssac> {
        let a = Ssac::new(SsacConfig { mu: Rate(mu) }).unwrap();
        Mace::new(MaceConfig::default(), descriptors(threshold), a, Time::ZERO).unwrap()
    }

    #[test]
    fn mace_flow_is_be_for_threshold_packets_then_cl() {
        let mut m = ssac(3_900_000, 100);
        let classes: Vec<Class> =
            (0..102).map(|i| m.classify_and_learn(ms(40 * i), &key(1), FlowId(1), 386).0).collect();
        assert!(classes[..100].iter().all(|c| *c == Class::Be), "the initial 100 packets are BE (§5.1)");
        assert_eq!(&classes[100..], &[Class::Cl, Class::Cl]);
        assert_eq!(m.measurement().pending_bits(), 2 * 386 * 8, "only CL packets are measured");
        assert_eq!(m.admission().admitted_flows(), 1);
    }

    #[test]
    fn mace_decision_event_carries_the_request_and_its_reason() {
        let mut m = ssac(100_000, 2);
        m.classify_and_learn(ms(0), &key(1), FlowId(1), 386);
        let (_, ev) = m.classify_and_learn(ms(40), &key(1), FlowId(1), 386);
        let Some(MaceEvent::Decision { at, request, attempt, decision, .. }) = ev else {
            panic!("expected a decision")
        };
        assert_eq!((at, request.flow, request.rate, attempt), (ms(40), FlowId(1), Rate(77_200), 1));
        assert_eq!((decision.admitted(), decision.reason().rule), (true, SSAC_RULE));
        // A second flow does not fit (2 × 77.2k > 100k): refused, asks again 2 packets later.
        let mut attempts = Vec::new();
        for i in 0..4 {
            if let (Class::Be, Some(MaceEvent::Decision { attempt, decision, .. })) =
                m.classify_and_learn(ms(40 * i), &key(2), FlowId(2), 386)
            {
                assert!(!decision.admitted());
                attempts.push(attempt);
            }
        }
        assert_eq!(attempts, vec![1, 2]);
    }

    #[test]
    fn mace_stale_flow_releases_its_ssac_reservation_and_becomes_be() {
        let mut m = ssac(100_000, 1);
        m.classify_and_learn(ms(0), &key(1), FlowId(1), 386);
        assert_eq!(m.admission().reserved(), Rate(77_200));
        assert_eq!(m.classify_and_learn(ms(1000), &key(1), FlowId(1), 386).0, Class::Cl);
        // Silent from 1 s: stale at 31 s. Measurement deadlines come first, every 5 s.
        let mut stale_at = None;
        while stale_at.is_none() {
            let t = m.next_deadline().unwrap();
            assert!(t <= ms(31_000), "deadline {t} passed the stale time");
            let mut evs = Vec::new();
            m.on_tick(t, &mut evs);
            for ev in evs {
                if let MaceEvent::Stale { at, flow } = ev {
                    assert_eq!((flow.flow, flow.last_seen), (FlowId(1), ms(1000)));
                    stale_at = Some(at);
                }
            }
        }
        assert_eq!(stale_at, Some(ms(31_000)));
        assert_eq!(m.admission().reserved(), Rate(0));
        assert_eq!(m.classifier().len(), 0);
        // Back as a new candidate: one BE packet (threshold 1) asks again.
        assert_eq!(m.classify_and_learn(ms(32_000), &key(1), FlowId(1), 386).0, Class::Be);
        assert_eq!(m.classify_and_learn(ms(32_040), &key(1), FlowId(1), 386).0, Class::Cl);
    }

    #[test]
    fn mace_admission_follows_the_descriptor_not_a_recycled_flow_id() {
        // Room for one 77.2 kb/s flow. A driver that recycles ids (the router's
        // bounded flow table) gives key 2 the id key 1 was admitted under.
        let mut m = ssac(100_000, 1);
        assert!(matches!(
            m.classify_and_learn(ms(0), &key(1), FlowId(0), 386).1,
            Some(MaceEvent::Decision { ref decision, .. }) if decision.admitted()
        ));
        let (class, ev) = m.classify_and_learn(ms(10), &key(2), FlowId(0), 386);
        let Some(MaceEvent::Decision { request, decision, .. }) = ev else { panic!("expected a decision") };
        assert_eq!(class, Class::Be);
        assert!(!decision.admitted(), "no second flow fits: {decision:?}");
        assert_eq!(decision.reason().rule, SSAC_RULE, "not already_admitted");
        assert_eq!(request.flow, FlowId(0), "the event names the driver's flow");
        assert_eq!((m.admission().reserved(), m.admission().admitted_flows()), (Rate(77_200), 1));
        assert_eq!(m.classify_and_learn(ms(20), &key(1), FlowId(0), 386).0, Class::Cl, "key 1 keeps its place");
        // Key 1 goes stale: its reservation (under MACE's id, not FlowId(0)) is released ...
        while m.classifier().len() == 1 {
            let t = m.next_deadline().unwrap();
            m.on_tick(t, &mut Vec::new());
        }
        assert_eq!(m.admission().reserved(), Rate(0));
        // ... and key 2, still under the recycled id, now fits.
        let (_, ev) = m.classify_and_learn(ms(40_000), &key(2), FlowId(0), 386);
        assert!(matches!(ev, Some(MaceEvent::Decision { ref decision, .. }) if decision.admitted()), "{ev:?}");
        assert_eq!(m.admission().reserved(), Rate(77_200));
    }

    #[test]
    fn mace_samples_feed_mbac_and_stale_flows_leave_the_estimate_to_it() {
        let a = Mbac::new(MbacConfig::new(Rate(1_000_000))).unwrap();
        let mut m = Mace::new(MaceConfig::default(), descriptors(1), a, Time::ZERO).unwrap();
        m.classify_and_learn(ms(0), &key(1), FlowId(1), 386);
        assert_eq!(m.admission().estimate(), 77_200.0);
        for i in 1..=125 {
            m.classify_and_learn(ms(40 * i), &key(1), FlowId(1), 386);
        }
        let mut ev = Vec::new();
        m.on_tick(ms(5000), &mut ev);
        assert!(matches!(ev.as_slice(), [MaceEvent::Sample(s)] if s.bits == 125 * 386 * 8), "{ev:?}");
        assert_eq!(m.admission().estimate(), 77_200.0, "77.2 kb/s measured, not above the estimate");
        assert_eq!(m.measurement().samples(), 1);
    }

    #[test]
    fn mace_full_classifier_refuses_without_asking_admission() {
        let a = Ssac::new(SsacConfig { mu: Rate(10_000_000) }).unwrap();
        let mut cfg = MaceConfig::default();
        cfg.classifier.capacity = 1;
        let mut m = Mace::new(cfg, descriptors(1), a, Time::ZERO).unwrap();
        m.classify_and_learn(ms(0), &key(1), FlowId(1), 386);
        let (_, ev) = m.classify_and_learn(ms(0), &key(2), FlowId(2), 386);
        let Some(MaceEvent::Decision { decision, .. }) = ev else { panic!("expected a decision") };
        assert_eq!(decision.reason(), &DecisionReason { rule: CLASSIFIER_FULL_RULE, estimate: 1.0, threshold: 1.0 });
        assert_eq!(m.admission().admitted_flows(), 1, "admission control was not asked");
    }

    #[test]
    fn mace_config_requires_one_key_for_classifier_and_recognizer() {
        let mut cfg = MaceConfig::default();
        cfg.recognizer.key = KeyFields::WithProtocol;
        let a = Ssac::new(SsacConfig { mu: Rate(1) }).unwrap();
        let e = Mace::new(cfg, descriptors(1), a, Time::ZERO).unwrap_err();
        assert_eq!((e.mechanism, e.field), ("mace", "recognizer.key"));
    }
}
