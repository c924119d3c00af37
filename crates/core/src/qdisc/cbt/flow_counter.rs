//! Active-flow counting per class: D-CBT's "active flow counting unit"
//! ([Claypool00 §3.1]), also used by ChIPS to switch itself off.
//!
//! A hash table keyed by [`FlowId`] holds each flow's class and the time
//! its last packet arrived; a counter per class holds the number of
//! entries. On every arrival (after classification, before any drop test)
//! the flow's entry is inserted or refreshed; a flow seen for the first time
//! raises its class's counter at once. Every `interval` a sweep deletes the
//! entries of flows that sent nothing during the interval just ended and
//! lowers the counters.
//!
//! ```text
//! arrival of flow f, class c, at t:   table[f] <- (c, t)   (counts[c] += 1 if f is new)
//! sweep at T = k * interval:          delete f if T - table[f].last > interval
//! ```
//!
//! | parameter | unit | allowed | default (source) |
//! |---|---|---|---|
//! | `interval` | time | > 0 | 300 ms [Claypool00 §3.1] |
//!
//! Interpretations:
//! - Sweeps fall on the grid `k * interval` from time 0. The driver calls
//!   [`FlowCounter::on_tick`] at [`FlowCounter::next_deadline`]; an arrival
//!   first performs any sweep that is overdue, at its grid time, so the
//!   counts an arrival sees do not depend on how punctual the driver's timer
//!   is. With no flow in the table there is no deadline (nothing to sweep).
//! - "Active" means: sent a packet (whatever became of it) no longer than
//!   `interval` before the last sweep, or since. A flow that falls silent
//!   therefore stays counted for between one and two intervals, as in the
//!   paper's "since the last time checked".
//! - A flow whose tag changes moves to its new class at its next packet.
//! - The paper's simulator used a sorted list per class (O(n) updates); the
//!   hash table makes updates O(1) and keeps the sweep O(n), as the seed
//!   suggests. Removal by predicate does not depend on the table's order.
//!   Flow ids are dense interned integers, so the table hashes them with one
//!   multiply (Fibonacci hashing) rather than SipHash.

use super::classes::{Class, PerClass};
use crate::error::ConfigError;
use crate::packet::FlowId;
use crate::units::{Dur, Time};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Multiplicative (Fibonacci) hashing of the dense, interned flow ids: one
/// multiply instead of SipHash on every arrival. Ids are assigned by the
/// driver's flow table, not taken from the wire, so no keyed hash is needed.
#[derive(Clone, Copy, Debug, Default)]
struct FlowIdHasher(u64);

impl Hasher for FlowIdHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(*b as u64);
        }
    }
    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.write_u64(n as u64);
    }
    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

type FlowMap<V> = HashMap<FlowId, V, BuildHasherDefault<FlowIdHasher>>;

/// Active flows per class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowCounts {
    pub tcp: u32,
    pub tagged: u32,
    pub untagged: u32,
}

impl FlowCounts {
    pub fn total(&self) -> u32 {
        self.tcp + self.tagged + self.untagged
    }
    pub fn of(&self, c: Class) -> u32 {
        match c {
            Class::Tcp => self.tcp,
            Class::Tagged => self.tagged,
            Class::Untagged => self.untagged,
        }
    }
    /// `of(c) / total()`, or `None` when no flow is active.
    pub fn share(&self, c: Class) -> Option<f64> {
        let n = self.total();
        (n > 0).then(|| self.of(c) as f64 / n as f64)
    }
    fn slot(&mut self, c: Class) -> &mut u32 {
        match c {
            Class::Tcp => &mut self.tcp,
            Class::Tagged => &mut self.tagged,
            Class::Untagged => &mut self.untagged,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowCounterConfig {
    pub interval: Dur,
}

impl Default for FlowCounterConfig {
    fn default() -> Self {
        FlowCounterConfig { interval: Dur::from_ms(300) }
    }
}

impl FlowCounterConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.interval.0 == 0 {
            return Err(ConfigError::new("flow_counter", "interval", "(0 s) must be positive, e.g. 300ms"));
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    class: Class,
    last: Time,
}

/// Sweep counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowCounterStats {
    pub sweeps: u64,
    /// Entries deleted as stale.
    pub expired: u64,
    /// Flows inserted (a flow that returns after expiring counts again).
    pub inserted: u64,
}

/// The active-flow table and its per-class counters.
#[derive(Clone, Debug)]
pub struct FlowCounter {
    interval: Dur,
    table: FlowMap<Entry>,
    counts: FlowCounts,
    /// The next grid time at which a sweep is due.
    next_sweep: Time,
    stats: FlowCounterStats,
}

impl FlowCounter {
    pub fn new(config: FlowCounterConfig) -> Result<FlowCounter, ConfigError> {
        config.validate()?;
        Ok(FlowCounter {
            interval: config.interval,
            table: FlowMap::default(),
            counts: FlowCounts::default(),
            next_sweep: Time::ZERO + config.interval,
            stats: FlowCounterStats::default(),
        })
    }

    pub fn counts(&self) -> &FlowCounts {
        &self.counts
    }
    pub fn stats(&self) -> &FlowCounterStats {
        &self.stats
    }
    /// Is `flow` in the table?
    pub fn is_active(&self, flow: FlowId) -> bool {
        self.table.contains_key(&flow)
    }

    /// Records a packet of `flow` in `class` at `now` (sweeping first if due).
    pub fn on_packet(&mut self, now: Time, flow: FlowId, class: Class) {
        self.catch_up(now);
        match self.table.get_mut(&flow) {
            Some(e) => {
                if e.class != class {
                    *self.counts.slot(e.class) -= 1;
                    *self.counts.slot(class) += 1;
                    e.class = class;
                }
                e.last = now;
            }
            None => {
                self.table.insert(flow, Entry { class, last: now });
                *self.counts.slot(class) += 1;
                self.stats.inserted += 1;
            }
        }
    }

    /// When the next sweep is due; `None` while the table is empty.
    pub fn next_deadline(&self) -> Option<Time> {
        (!self.table.is_empty()).then_some(self.next_sweep)
    }

    /// Performs the sweep due at or before `now`, if any.
    pub fn on_tick(&mut self, now: Time) {
        self.catch_up(now);
    }

    /// Sweeps at the last grid time `<= now` if a sweep is overdue. Sweeps
    /// missed before it need not be replayed: a flow stale at an earlier
    /// grid time is stale at a later one too.
    fn catch_up(&mut self, now: Time) {
        if now < self.next_sweep {
            return;
        }
        let late = (now.0 - self.next_sweep.0) / self.interval.0;
        let at = Time(self.next_sweep.0 + late * self.interval.0);
        self.sweep(at);
        self.next_sweep = at + self.interval;
    }

    fn sweep(&mut self, at: Time) {
        self.stats.sweeps += 1;
        let interval = self.interval;
        let mut gone = PerClass([0u32; 3]);
        self.table.retain(|_, e| {
            let keep = at.since(e.last) <= interval;
            if !keep {
                gone[e.class] += 1;
            }
            keep
        });
        for c in Class::ALL {
            *self.counts.slot(c) -= gone[c];
            self.stats.expired += gone[c] as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn counter() -> FlowCounter {
        FlowCounter::new(FlowCounterConfig::default()).unwrap()
    }

    #[test]
    fn new_flows_count_at_once_and_repeats_do_not() {
        let mut f = counter();
        f.on_packet(Time(0), FlowId(1), Class::Tcp);
        f.on_packet(Time(1), FlowId(1), Class::Tcp);
        f.on_packet(Time(2), FlowId(2), Class::Tagged);
        f.on_packet(Time(3), FlowId(3), Class::Tagged);
        f.on_packet(Time(4), FlowId(4), Class::Untagged);
        assert_eq!(*f.counts(), FlowCounts { tcp: 1, tagged: 2, untagged: 1 });
        assert_eq!(f.counts().share(Class::Tagged), Some(0.5));
    }

    #[test]
    fn sweep_removes_flows_silent_for_a_whole_interval() {
        let mut f = counter();
        f.on_packet(Time(10 * MS), FlowId(1), Class::Tcp); // silent from 10 ms
        f.on_packet(Time(250 * MS), FlowId(2), Class::Tagged);
        assert_eq!(f.next_deadline(), Some(Time(300 * MS)));
        f.on_tick(Time(300 * MS)); // 1 sent 290 ms ago: still active
        assert_eq!(f.counts().total(), 2);
        f.on_packet(Time(450 * MS), FlowId(2), Class::Tagged);
        f.on_tick(Time(600 * MS)); // 1 silent for 590 ms: gone; 2 sent 150 ms ago
        assert_eq!(*f.counts(), FlowCounts { tcp: 0, tagged: 1, untagged: 0 });
        assert!(!f.is_active(FlowId(1)));
        f.on_tick(Time(900 * MS)); // 2 silent for 450 ms: gone
        assert_eq!(f.counts().total(), 0);
        assert_eq!(f.next_deadline(), None);
        assert_eq!(f.stats().expired, 2);
    }

    #[test]
    fn a_flow_exactly_one_interval_old_is_still_active() {
        let mut f = counter();
        f.on_packet(Time(0), FlowId(1), Class::Tcp);
        f.on_tick(Time(300 * MS));
        assert!(f.is_active(FlowId(1)));
        f.on_tick(Time(600 * MS));
        assert!(!f.is_active(FlowId(1)));
    }

    #[test]
    fn an_arrival_performs_an_overdue_sweep_at_its_grid_time() {
        let mut f = counter();
        f.on_packet(Time(0), FlowId(1), Class::Tcp);
        f.on_packet(Time(100 * MS), FlowId(2), Class::Untagged);
        // No tick was delivered; at 950 ms the sweep due at 900 ms happens
        // first (both flows stale), then flow 3 is counted.
        f.on_packet(Time(950 * MS), FlowId(3), Class::Tagged);
        assert_eq!(*f.counts(), FlowCounts { tcp: 0, tagged: 1, untagged: 0 });
        assert_eq!(f.next_deadline(), Some(Time(1200 * MS)));
        assert_eq!(f.stats().sweeps, 1);
    }

    #[test]
    fn a_flow_that_changes_tag_moves_class() {
        let mut f = counter();
        f.on_packet(Time(0), FlowId(7), Class::Tagged);
        f.on_packet(Time(1), FlowId(7), Class::Untagged);
        assert_eq!(*f.counts(), FlowCounts { tcp: 0, tagged: 0, untagged: 1 });
    }

    #[test]
    fn zero_interval_is_refused() {
        let e = FlowCounter::new(FlowCounterConfig { interval: Dur(0) }).unwrap_err();
        assert_eq!(e.to_string(), "flow_counter.interval (0 s) must be positive, e.g. 300ms");
    }
}
