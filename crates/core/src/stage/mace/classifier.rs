//! MACE packet classifier ([MACE98 §3], "Packet Classifier"; stale flows
//! under "Flow Recognition").
//!
//! Every packet's descriptor is looked up in an exact-match table of
//! admitted flows: a match makes it controlled load (CL), anything else is
//! best effort (BE). The paper's descriptor is
//! `<source address, source port, destination address, destination port>`
//! of the IPv4 header; its implementation "allows for the use of the other
//! fields", which here is the protocol, switched on by
//! [`KeyFields::WithProtocol`]. IPv6 addresses work the same way.
//!
//! ```text
//! classify(now, key):  d = descriptor(key)
//!                      if d in table: last_seen[d] = now; CL   else BE
//! insert(now, key, flow):  refused (TableFull) if the table holds `capacity` flows
//! sweep(now):          remove every d with now - last_seen[d] >= timeout  → the stale flows
//! ```
//!
//! | parameter | unit | allowed | default |
//! |---|---|---|---|
//! | `capacity` | flows | ≥ 1 | 1024 |
//! | `timeout` | duration | > 0 | 30 s |
//! | `key` | fields | `Ports4` (paper), `WithProtocol` | `Ports4` |
//!
//! Interpretations (see `docs/mechanisms/mace_classifier.md`):
//! - **Full table: refuse, never evict.** Every entry is a flow that
//!   admission control promised CL service (and, under SSAC, holds a
//!   reservation); evicting one would silently demote a live admitted flow
//!   and leak its reservation. A refused insertion is reported to the
//!   caller, which [`crate::stage::mace::Mace`] checks *before* asking admission
//!   control, so a full table reads as a refusal with its own reason.
//!   Space comes back through the stale sweep. The default 1024 exceeds
//!   every admitted count the paper's set-up allows (the most is MBAC with
//!   POO3: about 2.3 Mb/s / 7.5 kb/s ≈ 310 flows).
//! - **Stale timeout, default 30 s** (the paper gives none): 750 packet
//!   times of a 64 kb/s source. Exponential OFF periods essentially never
//!   last that long (EXP1: P = e^(−30/0.325) ≈ 10⁻⁴⁰), so a live smooth
//!   flow is not cut off; under SSAC a departed flow holds its reservation
//!   for the timeout, about 3% of the allocation for the paper's 1000 s
//!   mean lifetimes. Heavy-tailed Pareto OFF periods (shape 1.1) do
//!   sometimes exceed it; the flow then returns through recognition, as it
//!   would on the testbed.
//! - Only packets the classifier matched refresh `last_seen`; a flow is
//!   stale after `timeout` of silence, checked exactly (see `table.rs`).

use super::table::{FlowDescriptor, FlowSlab, TableFull};
use super::Class;
use crate::error::ConfigError;
use crate::packet::{FlowId, FlowKey};
use crate::units::{Dur, Time};

/// Which header fields form the descriptor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KeyFields {
    /// Source/destination address and port: the paper's descriptor.
    #[default]
    Ports4,
    /// The four fields plus the IP protocol.
    WithProtocol,
}

/// The classifier's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClassifierConfig {
    pub capacity: usize,
    pub timeout: Dur,
    pub key: KeyFields,
}

impl Default for ClassifierConfig {
    fn default() -> Self {
        ClassifierConfig { capacity: 1024, timeout: Dur::from_secs(30), key: KeyFields::Ports4 }
    }
}

impl ClassifierConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.capacity == 0 {
            return Err(ConfigError::new("mace_classifier", "capacity", "(0 flows) must be at least 1 flow"));
        }
        if self.timeout.0 == 0 {
            return Err(ConfigError::new("mace_classifier", "timeout", "(0s) must be longer than 0s"));
        }
        Ok(())
    }
}

/// What the classifier holds for an admitted flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClassifiedFlow {
    pub flow: FlowId,
    pub admitted_at: Time,
    pub last_seen: Time,
}

/// A flow the stale sweep removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StaleFlow {
    pub key: FlowDescriptor,
    pub flow: FlowId,
    pub admitted_at: Time,
    pub last_seen: Time,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Admitted {
    flow: FlowId,
    admitted_at: Time,
}

/// The exact-match CL flow table.
#[derive(Clone, Debug)]
pub struct FlowClassifier {
    config: ClassifierConfig,
    table: FlowSlab<Admitted>,
}

impl FlowClassifier {
    pub fn new(config: ClassifierConfig) -> Result<FlowClassifier, ConfigError> {
        config.validate()?;
        Ok(FlowClassifier { config, table: FlowSlab::new(config.capacity, config.timeout) })
    }
    pub fn config(&self) -> &ClassifierConfig {
        &self.config
    }
    /// The descriptor this classifier matches `key` by.
    pub fn descriptor(&self, key: &FlowKey) -> FlowDescriptor {
        FlowDescriptor::of(key, self.config.key == KeyFields::WithProtocol)
    }
    /// CL if `key` matches an admitted flow (which refreshes it), else BE.
    #[inline]
    pub fn classify(&mut self, now: Time, key: &FlowKey) -> Class {
        let d = self.descriptor(key);
        if self.table.touch(now, &d) {
            Class::Cl
        } else {
            Class::Be
        }
    }
    /// The admitted flow matching `key`, without refreshing it.
    pub fn lookup(&self, key: &FlowKey) -> Option<ClassifiedFlow> {
        self.table.get(&self.descriptor(key)).map(|e| ClassifiedFlow {
            flow: e.value.flow,
            admitted_at: e.value.admitted_at,
            last_seen: e.last_seen,
        })
    }
    /// Adds an admitted flow, seen at `now`. Re-inserting a present flow
    /// refreshes it. Refused, with nothing changed, when the table is full.
    pub fn insert(&mut self, now: Time, key: &FlowKey, flow: FlowId) -> Result<(), TableFull> {
        let d = self.descriptor(key);
        let admitted_at = self.table.get(&d).map_or(now, |e| e.value.admitted_at);
        self.table.insert(now, d, Admitted { flow, admitted_at })
    }
    /// Refreshes `key` at `now` without classifying; false if absent.
    pub fn touch(&mut self, now: Time, key: &FlowKey) -> bool {
        let d = self.descriptor(key);
        self.table.touch(now, &d)
    }
    /// Removes `key`; returns what it held.
    pub fn remove(&mut self, key: &FlowKey) -> Option<ClassifiedFlow> {
        let d = self.descriptor(key);
        self.table.remove(&d).map(|e| ClassifiedFlow {
            flow: e.value.flow,
            admitted_at: e.value.admitted_at,
            last_seen: e.last_seen,
        })
    }
    /// Removes and returns the flows silent for `timeout` or more at `now`,
    /// oldest first.
    pub fn sweep(&mut self, now: Time) -> Vec<StaleFlow> {
        self.table
            .sweep(now)
            .into_iter()
            .map(|e| StaleFlow {
                key: e.key,
                flow: e.value.flow,
                admitted_at: e.value.admitted_at,
                last_seen: e.last_seen,
            })
            .collect()
    }
    /// When `sweep` should next run: exact after a sweep, otherwise a lower bound.
    pub fn next_deadline(&self) -> Option<Time> {
        self.table.next_expiry()
    }
    pub fn len(&self) -> usize {
        self.table.len()
    }
    pub fn is_empty(&self) -> bool {
        self.table.len() == 0
    }
    pub fn is_full(&self) -> bool {
        self.table.is_full()
    }
    pub fn capacity(&self) -> usize {
        self.table.capacity()
    }
    /// The admitted flows, ordered by descriptor.
    pub fn flows(&self) -> Vec<(FlowDescriptor, ClassifiedFlow)> {
        self.table
            .entries_sorted()
            .into_iter()
            .map(|e| {
                (e.key, ClassifiedFlow { flow: e.value.flow, admitted_at: e.value.admitted_at, last_seen: e.last_seen })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::proto;
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
    fn secs(s: u64) -> Time {
        Time(Dur::from_secs(s).0)
    }
    fn classifier(capacity: usize) -> FlowClassifier {
        FlowClassifier::new(ClassifierConfig { capacity, ..ClassifierConfig::default() }).unwrap()
    }

    #[test]
    fn classifier_matches_admitted_flows_exactly_and_everything_else_is_be() {
        let mut c = classifier(8);
        c.insert(Time(0), &key(1), FlowId(1)).unwrap();
        assert_eq!(c.classify(Time(1), &key(1)), Class::Cl);
        assert_eq!(c.classify(Time(1), &key(2)), Class::Be);
        let mut other_dst = key(1);
        other_dst.dst_port = 5005;
        assert_eq!(c.classify(Time(1), &other_dst), Class::Be);
        let mut tcp = key(1);
        tcp.proto = proto::TCP;
        assert_eq!(c.classify(Time(1), &tcp), Class::Cl, "the paper's descriptor ignores the protocol");
        let mut c5 =
            FlowClassifier::new(ClassifierConfig { key: KeyFields::WithProtocol, ..Default::default() }).unwrap();
        c5.insert(Time(0), &key(1), FlowId(1)).unwrap();
        assert_eq!(c5.classify(Time(1), &tcp), Class::Be);
        assert_eq!(c5.classify(Time(1), &key(1)), Class::Cl);
    }

    #[test]
    fn classifier_full_refuses_new_flows_and_keeps_admitted_ones() {
        let mut c = classifier(2);
        c.insert(Time(0), &key(1), FlowId(1)).unwrap();
        c.insert(Time(0), &key(2), FlowId(2)).unwrap();
        assert!(c.is_full());
        assert_eq!(c.insert(Time(1), &key(3), FlowId(3)), Err(TableFull { capacity: 2 }));
        assert_eq!(c.classify(Time(2), &key(1)), Class::Cl);
        assert_eq!(c.classify(Time(2), &key(2)), Class::Cl);
        assert_eq!(c.classify(Time(2), &key(3)), Class::Be);
        assert!(c.insert(Time(3), &key(2), FlowId(2)).is_ok(), "refreshing a present flow is not growth");
        assert_eq!(c.remove(&key(1)).map(|f| f.flow), Some(FlowId(1)));
        assert!(c.insert(Time(4), &key(3), FlowId(3)).is_ok());
        assert_eq!(c.len(), 2);
    }

    #[test]
    fn classifier_stale_flow_leaves_after_exactly_the_timeout() {
        let mut c = classifier(8);
        c.insert(secs(0), &key(1), FlowId(1)).unwrap();
        c.insert(secs(0), &key(2), FlowId(2)).unwrap();
        assert_eq!(c.classify(secs(10), &key(2)), Class::Cl);
        assert_eq!(c.next_deadline(), Some(secs(30)));
        assert!(c.sweep(Time(secs(30).0 - 1)).is_empty(), "silent for 30 s minus 1 ns: not yet stale");
        let gone = c.sweep(secs(30));
        assert_eq!(gone.len(), 1);
        assert_eq!((gone[0].flow, gone[0].last_seen, gone[0].admitted_at), (FlowId(1), secs(0), secs(0)));
        assert_eq!(c.classify(secs(31), &key(1)), Class::Be, "a stale flow is best effort again");
        assert_eq!(c.next_deadline(), Some(secs(40)));
        assert_eq!(c.sweep(secs(40)).len(), 1);
        assert!(c.is_empty());
        assert_eq!(c.next_deadline(), None);
    }

    #[test]
    fn classifier_touch_keeps_a_flow_alive_and_remove_reports_it() {
        let mut c = classifier(8);
        assert!(!c.touch(secs(0), &key(1)));
        c.insert(secs(0), &key(1), FlowId(7)).unwrap();
        assert!(c.touch(secs(25), &key(1)));
        assert!(c.sweep(secs(50)).is_empty());
        let f = c.lookup(&key(1)).unwrap();
        assert_eq!((f.flow, f.last_seen), (FlowId(7), secs(25)));
        assert_eq!(c.remove(&key(1)).unwrap().flow, FlowId(7));
        assert_eq!(c.remove(&key(1)), None);
    }

    #[test]
    fn classifier_config_errors_name_the_field() {
        let e = FlowClassifier::new(ClassifierConfig { capacity: 0, ..Default::default() }).unwrap_err();
        assert_eq!((e.mechanism, e.field), ("mace_classifier", "capacity"));
        let e = FlowClassifier::new(ClassifierConfig { timeout: Dur(0), ..Default::default() }).unwrap_err();
        assert_eq!(e.field, "timeout");
        assert!(e.to_string().contains("0s"), "{e}");
    }
}
