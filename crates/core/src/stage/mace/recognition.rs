//! MACE flow recognition ([MACE98 §3], "Flow Recognition" and "Flow
//! Setup"; thresholds from §4.2).
//!
//! The recognizer watches packets that are not (yet) CL on the ports the
//! descriptor file lists. It keeps a bounded recognition table, "similar to
//! the classifier flow table, with an additional packet counter field", and
//! when a candidate's counter reaches its port's threshold it tells the
//! caller to ask admission control, with the descriptor's token bucket:
//!
//! ```text
//! on_packet(now, key):   no descriptor for key's ports      → Ignored
//!                        count[key] += 1, last_seen[key] = now
//!                        pending[key]                        → Pending
//!                        count[key] == threshold             → Ask(descriptor), pending[key] = true
//!                        otherwise                           → Counting
//! on_decision(key, admitted):  admitted → forget key (the caller puts it in the classifier)
//!                              refused  → count[key] = 0, pending = false: asks again after
//!                                         another `threshold` packets
//! sweep(now):            forget candidates silent for `timeout` or more
//! ```
//!
//! | parameter | unit | allowed | default |
//! |---|---|---|---|
//! | `capacity` | candidate flows | ≥ 1 | 1024 |
//! | `timeout` | duration | > 0 | 30 s |
//! | thresholds, ports, rates | from [`Descriptors`] | | |
//!
//! Interpretations (see `docs/mechanisms/mace_recognition.md`):
//! - **The threshold-th packet asks; it is itself still BE.** The paper's
//!   "initial 100 packets from each CL connection are classified as BE
//!   packets" (§5.1): packets 1..=threshold are BE, packet threshold + 1 is
//!   the first that can be CL.
//! - **Full table: evict the least recently seen candidate.** Candidates
//!   hold no promise, only a count; the least recently seen one is the
//!   least likely to be a live real-time flow (a 64 kb/s source sends every
//!   40 ms). A new flow is always counted. (The classifier, whose entries
//!   are promises, refuses instead.)
//! - **Stale candidates expire** after the same kind of timeout as
//!   admitted flows (default 30 s); a flow that returns starts from 0.
//! - A candidate stays `Pending` between `Ask` and `on_decision`, so an
//!   asynchronous admission unit is asked once per threshold; packets keep
//!   being counted meanwhile, and a refusal restarts the count at 0.
//! - The descriptor is matched with the classifier's key fields: the
//!   candidate's descriptor is the same tuple the classifier will hold.

use super::classifier::KeyFields;
use super::descriptors::{Descriptors, PortDescriptor};
use super::table::{FlowDescriptor, FlowSlab};
use crate::error::ConfigError;
use crate::packet::FlowKey;
use crate::units::{Dur, Time};

/// The recognizer's settings (the ports come from [`Descriptors`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecognizerConfig {
    pub capacity: usize,
    pub timeout: Dur,
    pub key: KeyFields,
}

impl Default for RecognizerConfig {
    fn default() -> Self {
        RecognizerConfig { capacity: 1024, timeout: Dur::from_secs(30), key: KeyFields::Ports4 }
    }
}

impl RecognizerConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.capacity == 0 {
            return Err(ConfigError::new("mace_recognition", "capacity", "(0 flows) must be at least 1 flow"));
        }
        if self.timeout.0 == 0 {
            return Err(ConfigError::new("mace_recognition", "timeout", "(0s) must be longer than 0s"));
        }
        Ok(())
    }
}

/// What the recognizer made of one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recognition {
    /// Not on a listed port: plain best effort, nothing kept.
    Ignored,
    /// Counted toward the threshold.
    Counting { count: u32, threshold: u32 },
    /// The counter reached the threshold: ask admission control for this
    /// flow with the descriptor's token bucket. `attempt` is 1 on the first
    /// request, 2 after one refusal, and so on.
    Ask { descriptor: PortDescriptor, attempt: u32 },
    /// Asked already; waiting for [`Recognizer::on_decision`].
    Pending,
}

/// A candidate that left the recognition table without being admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExpiredCandidate {
    pub key: FlowDescriptor,
    pub count: u32,
    pub refusals: u32,
    pub last_seen: Time,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Candidate {
    count: u32,
    refusals: u32,
    pending: bool,
}

/// Counts candidate flows on listed ports and says when to ask admission.
#[derive(Clone, Debug)]
pub struct Recognizer {
    config: RecognizerConfig,
    descriptors: Descriptors,
    table: FlowSlab<Candidate>,
    evicted: u64,
}

impl Recognizer {
    pub fn new(config: RecognizerConfig, descriptors: Descriptors) -> Result<Recognizer, ConfigError> {
        config.validate()?;
        Ok(Recognizer { config, descriptors, table: FlowSlab::new(config.capacity, config.timeout), evicted: 0 })
    }
    pub fn config(&self) -> &RecognizerConfig {
        &self.config
    }
    pub fn descriptors(&self) -> &Descriptors {
        &self.descriptors
    }
    fn descriptor(&self, key: &FlowKey) -> FlowDescriptor {
        FlowDescriptor::of(key, self.config.key == KeyFields::WithProtocol)
    }

    /// Counts a non-CL packet of `key` seen at `now`.
    pub fn on_packet(&mut self, now: Time, key: &FlowKey) -> Recognition {
        let Some(desc) = self.descriptors.lookup(key).copied() else {
            return Recognition::Ignored;
        };
        let d = self.descriptor(key);
        if self.table.get(&d).is_none() {
            if self.table.is_full() {
                let victim = self.table.least_recent().map(|e| e.key).expect("a full table has entries");
                self.table.remove(&victim);
                self.evicted += 1;
            }
            self.table
                .insert(now, d, Candidate { count: 0, refusals: 0, pending: false })
                .expect("room was made above");
        } else {
            self.table.touch(now, &d);
        }
        let c = self.table.value_mut(&d).expect("present: inserted or found above");
        c.count = c.count.saturating_add(1);
        if c.pending {
            return Recognition::Pending;
        }
        if c.count >= desc.threshold {
            c.pending = true;
            return Recognition::Ask { descriptor: desc, attempt: c.refusals + 1 };
        }
        Recognition::Counting { count: c.count, threshold: desc.threshold }
    }

    /// Admission's answer for `key`: admitted candidates leave the table,
    /// refused ones count again from zero. Unknown keys (evicted or expired
    /// while pending) are ignored.
    pub fn on_decision(&mut self, _now: Time, key: &FlowKey, admitted: bool) {
        let d = self.descriptor(key);
        if admitted {
            self.table.remove(&d);
        } else if let Some(c) = self.table.value_mut(&d) {
            c.count = 0;
            c.pending = false;
            c.refusals = c.refusals.saturating_add(1);
        }
    }

    /// Forgets `key` (for example when the driver learns it ended).
    pub fn remove(&mut self, key: &FlowKey) -> bool {
        let d = self.descriptor(key);
        self.table.remove(&d).is_some()
    }

    /// Removes and returns the candidates silent for `timeout` or more.
    pub fn sweep(&mut self, now: Time) -> Vec<ExpiredCandidate> {
        self.table
            .sweep(now)
            .into_iter()
            .map(|e| ExpiredCandidate {
                key: e.key,
                count: e.value.count,
                refusals: e.value.refusals,
                last_seen: e.last_seen,
            })
            .collect()
    }
    /// When `sweep` should next run (a lower bound, exact after a sweep).
    pub fn next_deadline(&self) -> Option<Time> {
        self.table.next_expiry()
    }
    /// The packet count of `key`'s candidate, if it is one.
    pub fn count(&self, key: &FlowKey) -> Option<u32> {
        self.table.get(&self.descriptor(key)).map(|e| e.value.count)
    }
    /// Candidates in the table.
    pub fn len(&self) -> usize {
        self.table.len()
    }
    pub fn is_empty(&self) -> bool {
        self.table.len() == 0
    }
    /// Candidates evicted to make room since the start.
    pub fn evicted(&self) -> u64 {
        self.evicted
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::proto;
    use crate::stage::mace::descriptors::PortSide;
    use crate::units::{Bytes, Rate};
    use std::net::{IpAddr, Ipv4Addr};

    fn key(src_port: u16, dst_port: u16) -> FlowKey {
        FlowKey {
            src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
            dst: IpAddr::V4(Ipv4Addr::new(10, 0, 1, 1)),
            src_port,
            dst_port,
            proto: proto::UDP,
        }
    }
    fn audio(threshold: u32) -> PortDescriptor {
        PortDescriptor { port: 5004, side: PortSide::Dst, rate: Rate(77_200), depth: Bytes(386), threshold }
    }
    fn recognizer(capacity: usize, threshold: u32) -> Recognizer {
        let cfg = RecognizerConfig { capacity, ..RecognizerConfig::default() };
        Recognizer::new(cfg, Descriptors::new(vec![audio(threshold)]).unwrap()).unwrap()
    }
    fn secs(s: u64) -> Time {
        Time(Dur::from_secs(s).0)
    }

    #[test]
    fn recognition_asks_on_the_threshold_packet_and_not_before() {
        let mut r = recognizer(8, 100);
        let k = key(40000, 5004);
        for i in 1..100 {
            assert_eq!(r.on_packet(Time(i), &k), Recognition::Counting { count: i as u32, threshold: 100 });
        }
        assert_eq!(r.on_packet(Time(100), &k), Recognition::Ask { descriptor: audio(100), attempt: 1 });
        assert_eq!(r.on_packet(Time(101), &k), Recognition::Pending, "asked once per threshold");
        r.on_decision(Time(102), &k, true);
        assert_eq!(r.count(&k), None, "an admitted flow leaves the recognition table");
    }

    #[test]
    fn recognition_ignores_unlisted_ports() {
        let mut r = recognizer(8, 10);
        assert_eq!(r.on_packet(Time(0), &key(5004, 9)), Recognition::Ignored, "5004 is a destination-port descriptor");
        assert_eq!(r.on_packet(Time(0), &key(1, 80)), Recognition::Ignored);
        assert!(r.is_empty(), "ignored packets keep no state");
    }

    #[test]
    fn recognition_refused_flow_asks_again_after_another_threshold() {
        let mut r = recognizer(8, 10);
        let k = key(40000, 5004);
        let mut asks = Vec::new();
        for i in 1..=35u64 {
            if let Recognition::Ask { attempt, .. } = r.on_packet(Time(i), &k) {
                asks.push((i, attempt));
                r.on_decision(Time(i), &k, false);
            }
        }
        assert_eq!(asks, vec![(10, 1), (20, 2), (30, 3)]);
        assert_eq!(r.count(&k), Some(5));
    }

    #[test]
    fn recognition_counts_while_pending_and_restarts_at_zero_on_refusal() {
        let mut r = recognizer(8, 3);
        let k = key(40000, 5004);
        r.on_packet(Time(1), &k);
        r.on_packet(Time(2), &k);
        assert!(matches!(r.on_packet(Time(3), &k), Recognition::Ask { .. }));
        assert_eq!(r.on_packet(Time(4), &k), Recognition::Pending);
        assert_eq!(r.count(&k), Some(4));
        r.on_decision(Time(5), &k, false);
        assert_eq!(r.count(&k), Some(0));
        assert_eq!(r.on_packet(Time(6), &k), Recognition::Counting { count: 1, threshold: 3 });
    }

    #[test]
    fn recognition_table_is_bounded_and_evicts_the_least_recently_seen() {
        let mut r = recognizer(3, 100);
        for (t, p) in [(1, 1), (2, 2), (3, 3)] {
            r.on_packet(Time(t), &key(p, 5004));
        }
        r.on_packet(Time(4), &key(1, 5004)); // flow 1 is live again; flow 2 is now the oldest
        r.on_packet(Time(5), &key(4, 5004));
        assert_eq!(r.len(), 3);
        assert_eq!(r.evicted(), 1);
        assert_eq!(r.count(&key(2, 5004)), None, "the least recently seen candidate went");
        assert_eq!(r.count(&key(1, 5004)), Some(2));
        assert_eq!(r.count(&key(4, 5004)), Some(1));
    }

    #[test]
    fn recognition_stale_candidates_expire_and_start_again_from_zero() {
        let mut r = recognizer(8, 100);
        let k = key(40000, 5004);
        for i in 0..50 {
            r.on_packet(Time(i), &k);
        }
        assert_eq!(r.next_deadline(), Some(secs(30)));
        assert!(r.sweep(secs(29)).is_empty());
        let gone = r.sweep(Time(49 + secs(30).0));
        assert_eq!(gone.len(), 1);
        assert_eq!((gone[0].count, gone[0].last_seen), (50, Time(49)));
        assert_eq!(r.on_packet(secs(40), &k), Recognition::Counting { count: 1, threshold: 100 });
    }

    #[test]
    fn recognition_decision_for_a_forgotten_candidate_is_harmless() {
        let mut r = recognizer(8, 1);
        let k = key(40000, 5004);
        assert!(matches!(r.on_packet(Time(0), &k), Recognition::Ask { .. }));
        assert!(r.remove(&k));
        r.on_decision(Time(1), &k, false);
        assert!(r.is_empty());
        let e = Recognizer::new(RecognizerConfig { capacity: 0, ..Default::default() }, Descriptors::default())
            .unwrap_err();
        assert_eq!((e.mechanism, e.field), ("mace_recognition", "capacity"));
    }
}
