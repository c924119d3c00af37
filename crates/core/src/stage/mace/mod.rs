//! MACE: Measurement-based Admission control for Controlled-load sErvice
//! ([MACE98 §3] "Design and Implementation",
//! §3.1 "Caveat Implementor", §4.2 parameters).
//!
//! MACE gives real-time flows a controlled-load (CL) class above best
//! effort (BE) at one router output, without a signalling protocol: flows
//! on ports an administrator lists are *recognized* after a number of
//! packets, *admitted* by a measurement-based test, then *classified* CL
//! until they fall silent. Each of the paper's components (its Fig. 3) is a
//! separate, bounded, clock-free part here, tested alone:
//!
//! | paper component | here | file |
//! |---|---|---|
//! | packet classifier | [`FlowClassifier`]: exact-match descriptor table → CL, else BE; stale sweep | `classifier.rs` |
//! | flow setup (descriptor file) | [`Descriptors`]: the administrator's TOML list of ports, token buckets, thresholds | `descriptors.rs` |
//! | flow recognition | [`Recognizer`]: per-candidate packet counters on listed ports → "ask admission" | `recognition.rs` |
//! | queue manager | [`MaceQueue`]: two-level strict priority in one shared buffer, CL pushes out BE | `qdisc/mace.rs` |
//! | packet scheduler (device side) | [`DeviceQueue`]: when the driver may hand the device the next packet | `dispatch.rs` |
//! | measurement | [`Measurement`]: CL bits counted at enqueue, one [`LoadSample`] every S | `measurement.rs` |
//! | estimator | [`Estimator`]: JSD97 time-window measured sum | `admission/mace/estimator.rs` |
//! | admission control | [`Mbac`] (`v·μ > r + ν̂`) and [`Ssac`] (`Σr + r ≤ μ`) | `admission/mace/mod.rs` |
//! | (glue) | [`Mace`]: classifier + recognition + admission + measurement for a driver | `compose.rs` |
//! | port stage | [`MaceStage`]: [`Mace`] as a [`crate::stage::Stage`] with per-class counters; [`DeviceQueue`] as the port's device policy | `stage.rs` |
//!
//! `table.rs` holds the bounded exact-match table that the classifier and
//! the recognizer share (slab + index + expiry bound).
//!
//! A driver (simulator or router) builds one [`crate::pipeline::Port`]:
//! a [`MaceStage`] in front of a [`crate::qdisc::Queue`] around a
//! [`MaceQueue`], with a [`DeviceQueue`] as its device policy; the port
//! then does what follows. For each packet: `mace.classify_and_learn(now, key,
//! flow, size)` gives its [`Class`]; the driver sets `pkt.class =
//! class.tag()` and enqueues; when the device may take a packet
//! ([`DeviceQueue::admits`] on the queue's head) it dequeues. At
//! `mace.next_deadline()` it calls `mace.on_tick(now)` and records the
//! returned [`MaceEvent`]s (decisions with reasons, stale flows, samples).
//!
//! Classes are carried as [`ClassTag`]s, as everywhere in qoslab with the
//! highest priority first: `ClassTag(0)` is CL and every other tag is BE
//! ([`Class::of_tag`] is the one mapping). `Packet::new` leaves tag 0, so a
//! MACE driver must tag every packet from `classify_and_learn` before it
//! enqueues it (the paper's classifier sees every packet, §3).

mod classifier;
mod compose;
mod descriptors;
mod dispatch;
mod measurement;
mod recognition;
mod stage;
mod table;

pub use classifier::{ClassifiedFlow, ClassifierConfig, FlowClassifier, KeyFields, StaleFlow};
pub use compose::{Mace, MaceConfig, MaceEvent, CLASSIFIER_FULL_RULE};
pub use descriptors::{DescriptorError, DescriptorErrors, Descriptors, PortDescriptor, PortSide};
pub use dispatch::{BeDispatch, DeviceQueue, DeviceQueueConfig};
pub use measurement::{Measurement, MeasurementConfig};
pub use recognition::{ExpiredCandidate, Recognition, Recognizer, RecognizerConfig};
pub use stage::{AdmissionFields, MaceStage};
pub use table::{FlowDescriptor, TableFull};

use crate::packet::ClassTag;

/// The two MACE service classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// Controlled load: served first, may push BE out of the shared buffer.
    Cl,
    /// Best effort.
    Be,
}

impl Class {
    /// The tag a CL packet carries (child 0 of a strict-priority queue).
    pub const CL_TAG: ClassTag = ClassTag(0);
    /// The tag this module gives BE packets (any tag other than 0 is BE).
    pub const BE_TAG: ClassTag = ClassTag(1);

    /// The packet tag for this class.
    pub fn tag(self) -> ClassTag {
        match self {
            Class::Cl => Class::CL_TAG,
            Class::Be => Class::BE_TAG,
        }
    }
    /// The class of a tagged packet: tag 0 is CL, every other tag BE.
    pub fn of_tag(tag: ClassTag) -> Class {
        if tag == Class::CL_TAG {
            Class::Cl
        } else {
            Class::Be
        }
    }
    /// `"cl"` or `"be"`, for result columns.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Cl => "cl",
            Class::Be => "be",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_tags_round_trip_and_unknown_tags_are_be() {
        assert_eq!(Class::of_tag(Class::Cl.tag()), Class::Cl);
        assert_eq!(Class::of_tag(Class::Be.tag()), Class::Be);
        assert_eq!(Class::of_tag(ClassTag(7)), Class::Be);
        assert_eq!(Class::Cl.as_str(), "cl");
    }
}
