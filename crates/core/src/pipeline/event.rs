//! Events a mechanism reports: admission decisions, departures, samples,
//! terminations. Typed fields, never text: the driver decides how to store
//! them (the simulator and the router write the events table of the
//! result schema from them).
//!
//! An event has the columns every event shares (`at`, `kind`, `flow`,
//! `rule`, `estimate`, `threshold`, as in the events table) and a short list
//! of named, typed [`Field`]s specific to the mechanism, in a fixed order
//! (a driver that renders them as `name=value` text gets the same text for
//! the same event).

use crate::packet::{FlowDescriptor, FlowId};
use crate::units::Time;

/// What kind of thing happened (the events table's `kind` column).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// A flow was admitted.
    Admit,
    /// A flow was refused.
    Reject,
    /// An admitted flow fell silent and was forgotten.
    Stale,
    /// A flow-recognition candidate expired.
    Recognition,
    /// A measurement sample.
    Sample,
    /// A flow was terminated.
    Terminate,
    /// A domain edge sent or received a signalling message.
    Message,
}

impl EventKind {
    /// Every kind, in declaration order.
    pub const ALL: [EventKind; 7] = [
        EventKind::Admit,
        EventKind::Reject,
        EventKind::Stale,
        EventKind::Recognition,
        EventKind::Sample,
        EventKind::Terminate,
        EventKind::Message,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Admit => "admit",
            EventKind::Reject => "reject",
            EventKind::Stale => "stale",
            EventKind::Recognition => "recognition",
            EventKind::Sample => "sample",
            EventKind::Terminate => "terminate",
            EventKind::Message => "message",
        }
    }
}

/// A typed value of a mechanism-specific field.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    U64(u64),
    F64(f64),
    /// A flow's header fields (rendered in their `Debug` form).
    Flow(FlowDescriptor),
    Str(&'static str),
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::U64(v) => write!(f, "{v}"),
            Value::F64(v) => write!(f, "{v}"),
            Value::Flow(k) => write!(f, "{k:?}"),
            Value::Str(s) => f.write_str(s),
        }
    }
}

/// A named field of an event.
pub type Field = (&'static str, Value);

/// One event, as a mechanism reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct MechEvent {
    pub at: Time,
    pub kind: EventKind,
    pub flow: Option<FlowId>,
    /// The rule applied (`"v*mu > r + nu_hat"`, `"stale_timeout"`, ...).
    pub rule: &'static str,
    /// The quantity tested, or the measured value.
    pub estimate: f64,
    /// What it was compared with (NaN when nothing was).
    pub threshold: f64,
    /// Mechanism-specific fields, in a fixed order.
    pub fields: Vec<Field>,
}

/// Where mechanisms send their events. The driver implements it (a `Vec`
/// collects them, for tests and simple drivers).
pub trait EventSink {
    fn emit(&mut self, ev: MechEvent);
}

impl EventSink for Vec<MechEvent> {
    fn emit(&mut self, ev: MechEvent) {
        self.push(ev);
    }
}

/// A sink that forgets every event.
#[derive(Clone, Copy, Debug, Default)]
pub struct Discard;

impl EventSink for Discard {
    fn emit(&mut self, _ev: MechEvent) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_display_as_their_plain_value() {
        assert_eq!(Value::U64(77_200).to_string(), "77200");
        assert_eq!(Value::F64(0.5).to_string(), "0.5");
        assert_eq!(Value::F64(3.0).to_string(), "3");
        assert_eq!(Value::Str("cl").to_string(), "cl");
    }

    #[test]
    fn a_vec_collects_events_and_discard_forgets_them() {
        let ev = MechEvent {
            at: Time(5),
            kind: EventKind::Sample,
            flow: None,
            rule: "r",
            estimate: 1.0,
            threshold: f64::NAN,
            fields: vec![("bits", Value::U64(8))],
        };
        let mut v: Vec<MechEvent> = Vec::new();
        v.emit(ev.clone());
        Discard.emit(ev.clone());
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].kind.as_str(), "sample");
    }
}
