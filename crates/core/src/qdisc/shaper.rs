//! Per-connection token-bucket shaper at the network entry point, and a
//! bank of them (one per connection).
//!
//! Source: [Tarasiuk05 §2] (each TCP connection is shaped to rate R at the edge
//! so that its packets enter the core as a smooth stream; the core queue is
//! then analysed as M/D/1 for the admission rule) and §4 (re-shaping the
//! running connections when the rate assignment changes, scheme #2).
//!
//! A shaper is a FIFO in front of a [`TokenBucket`] of rate `R` and depth
//! `depth`. The head packet leaves when the bucket holds its size in tokens:
//!
//! ```text
//! dequeue(now) = Packet(head)            if tokens(now) >= head.size   (tokens -= size)
//!              = NotBefore(now + w)      otherwise, w = time_to_conformance(now, head.size)
//!              = Empty                   if nothing is queued
//! ```
//!
//! `w` is exact (integer bit-nanosecond arithmetic of the token bucket): at
//! `now + w` the head conforms, at `now + w - 1 ns` it does not. Because the
//! bucket never drifts, the bytes that leave over any interval `[0, t]` obey
//! `out(t) <= depth + R t / 8` exactly, and a shaper at `R = C / n` in front
//! of a link of rate `C` releases exactly the bytes the link serializes.
//!
//! | parameter | unit | allowed | default (source) |
//! |---|---|---|---|
//! | `rate` | bit/s | ≥ 1 | none: required (the connection's R) |
//! | `depth` | bytes | ≥ 1 | 1500 B: one full-size packet ([Tarasiuk05] shapes packet by packet) |
//! | `limit` | packets and/or bytes | ≥ 1, or absent | absent: the shaper only delays |
//! | `start_full` | – | bool | `true`: a new connection may send its first packet at once |
//!
//! Interpretations:
//! - Default depth one packet (1500 B): the paper's shaper spaces packets at
//!   exactly `size * 8 / R`; a deeper bucket would let bursts through, which
//!   the M/D/1 analysis does not model.
//! - The shaper delays and never drops unless its own buffer limit is set
//!   and reached; then the arriving packet is dropped as
//!   [`DropReason::ShaperBuffer`] (tail drop).
//! - A packet larger than the depth could never conform; it is refused at
//!   enqueue as [`DropReason::Policed`] instead of blocking the queue for ever.
//! - `set_rate(now, R)` settles the tokens earned at the old rate up to
//!   `now`, then applies the new rate (re-shaping, scheme #2); queued packets
//!   keep their order.
//!
//! **The bank.** [`ShaperBank`] holds one shaper per connection, keyed by
//! [`FlowId`] (a `BTreeMap`, so iteration is deterministic). It is a
//! dedicated [`Qdisc`] rather than a [`crate::qdisc::classful::Classful`] of
//! shapers: classful children are boxed `dyn Qdisc` behind [`Queue`], which
//! cannot be re-shaped, added or removed once built, while the CAC schemes
//! admit and release connections at run time and scheme #2 re-shapes every
//! running connection at each arrival and departure. The bank keeps its own
//! per-connection counters ([`ShaperBank::connection`]). Among connections
//! whose head is conformant at `now`, the bank serves them round-robin
//! (starting after the last one served), so none is starved; if none is
//! conformant it answers `NotBefore` with the earliest instant at which one
//! will be. Packets of an unknown flow are dropped as
//! [`DropReason::Unclassified`].
//!
//! [`Queue`]: crate::qdisc::Queue

use crate::error::ConfigError;
use crate::packet::{FlowId, Packet};
use crate::qdisc::{Backlog, Dequeue, DropReason, Dropped, Limit, Qdisc, Verdict};
use crate::rng::Rng;
use crate::token_bucket::{TokenBucket, TokenBucketConfig};
use crate::units::{Bytes, Rate, Time};
use std::collections::{BTreeMap, VecDeque};

/// The default bucket depth: one full-size (1500 B) packet.
pub const DEFAULT_DEPTH: Bytes = Bytes(1500);

/// A shaper's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShaperConfig {
    /// Shaping rate R (bit/s).
    pub rate: Rate,
    /// Bucket depth (bytes).
    pub depth: Bytes,
    /// The shaper's own buffer; `UNLIMITED` means it only delays.
    pub limit: Limit,
    /// Whether the bucket starts full (first packet leaves at once).
    pub start_full: bool,
}

impl ShaperConfig {
    /// Rate `rate`, one-packet depth, no buffer limit, bucket starting full.
    pub fn new(rate: Rate) -> ShaperConfig {
        ShaperConfig { rate, depth: DEFAULT_DEPTH, limit: Limit::UNLIMITED, start_full: true }
    }

    /// Checks every field; called by [`Shaper::new`].
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.rate.0 == 0 {
            return Err(ConfigError::new("shaper", "rate", "(0 bit/s) must be at least 1 bit/s"));
        }
        if self.depth.0 == 0 {
            return Err(ConfigError::new("shaper", "depth", "(0 B) must be at least 1 byte"));
        }
        if self.limit.packets == Some(0) {
            return Err(ConfigError::new("shaper", "limit", "(0 packets) must be at least 1 packet, or absent"));
        }
        if self.limit.bytes == Some(0) {
            return Err(ConfigError::new("shaper", "limit", "(0 bytes) must be at least 1 byte, or absent"));
        }
        Ok(())
    }
}

/// A token-bucket shaper: FIFO order, exact release times.
#[derive(Clone, Debug)]
pub struct Shaper {
    config: ShaperConfig,
    bucket: TokenBucket,
    q: VecDeque<Packet>,
    backlog: Backlog,
}

impl Shaper {
    /// A shaper created at `now`.
    pub fn new(config: ShaperConfig, now: Time) -> Result<Shaper, ConfigError> {
        config.validate()?;
        let bucket =
            TokenBucket::new(TokenBucketConfig { rate: config.rate, depth: config.depth }, now, config.start_full)?;
        Ok(Shaper { config, bucket, q: VecDeque::new(), backlog: Backlog::default() })
    }

    pub fn config(&self) -> &ShaperConfig {
        &self.config
    }

    /// The current shaping rate.
    pub fn rate(&self) -> Rate {
        self.config.rate
    }

    /// Re-shapes at `now`: tokens earned so far count at the old rate.
    pub fn set_rate(&mut self, now: Time, rate: Rate) -> Result<(), ConfigError> {
        if rate.0 == 0 {
            return Err(ConfigError::new("shaper", "rate", "(0 bit/s) must be at least 1 bit/s"));
        }
        self.bucket.set_rate(now, rate)?;
        self.config.rate = rate;
        Ok(())
    }

    /// When the head packet may leave (`None` if nothing is queued).
    pub fn head_eligible_at(&self, now: Time) -> Option<Time> {
        let head = self.q.front()?;
        // Enqueue refuses packets above the depth, so the wait is finite
        // unless it ends beyond the last representable instant.
        let wait = self.bucket.time_to_conformance(now, Bytes(head.size as u64));
        Some(wait.map_or(Time::MAX, |w| now + w))
    }
}

impl Qdisc for Shaper {
    fn kind(&self) -> &'static str {
        "shaper"
    }
    fn enqueue(&mut self, _now: Time, pkt: Packet, _rng: &mut Rng) -> Verdict {
        if pkt.size as u64 > self.config.depth.0 {
            return Verdict::Dropped(Dropped { packet: pkt, reason: DropReason::Policed });
        }
        if self.config.limit.would_exceed(self.backlog, pkt.size) {
            return Verdict::Dropped(Dropped { packet: pkt, reason: DropReason::ShaperBuffer });
        }
        self.backlog.add(&pkt);
        self.q.push_back(pkt);
        Verdict::Queued
    }
    fn dequeue(&mut self, now: Time) -> Dequeue {
        let Some(head) = self.q.front() else {
            return Dequeue::Empty;
        };
        let size = Bytes(head.size as u64);
        if self.bucket.consume(now, size) {
            let p = self.q.pop_front().expect("head exists");
            self.backlog.sub(&p);
            return Dequeue::Packet(p);
        }
        match self.bucket.time_to_conformance(now, size) {
            Some(w) => Dequeue::NotBefore(now + w),
            None => Dequeue::NotBefore(Time::MAX),
        }
    }
    fn peek(&self) -> Option<&Packet> {
        self.q.front()
    }
    fn backlog(&self) -> Backlog {
        self.backlog
    }
    fn for_each_packet(&self, f: &mut dyn FnMut(&Packet)) {
        self.q.iter().for_each(f)
    }
    fn reset(&mut self) -> Vec<Packet> {
        self.backlog = Backlog::default();
        self.q.drain(..).collect()
    }
    fn probe(&self, sink: crate::qdisc::ProbeSink<'_>) {
        sink("shaper_rate_bps", self.config.rate.0 as f64);
    }
}

/// Per-connection counters kept by a [`ShaperBank`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConnectionStats {
    pub arrivals: u64,
    pub departures: u64,
    pub departure_bytes: u64,
    pub drops: u64,
}

#[derive(Clone, Debug)]
struct Connection {
    shaper: Shaper,
    stats: ConnectionStats,
}

/// One shaper per connection, served round-robin among the conformant.
#[derive(Clone, Debug, Default)]
pub struct ShaperBank {
    conns: BTreeMap<FlowId, Connection>,
    backlog: Backlog,
    /// The flow served last; the next search starts after it.
    last_served: Option<FlowId>,
}

impl ShaperBank {
    pub fn new() -> ShaperBank {
        ShaperBank::default()
    }

    /// Adds a connection's shaper at `now`. Refuses a flow already present.
    pub fn add(&mut self, now: Time, flow: FlowId, config: ShaperConfig) -> Result<(), ConfigError> {
        if self.conns.contains_key(&flow) {
            return Err(ConfigError::new("shaper_bank", "flow", format!("({}) already has a shaper", flow.0)));
        }
        let shaper = Shaper::new(config, now)?;
        self.conns.insert(flow, Connection { shaper, stats: ConnectionStats::default() });
        Ok(())
    }

    /// Removes a connection, returning the packets its shaper still held.
    pub fn remove(&mut self, flow: FlowId) -> Option<Vec<Packet>> {
        let mut c = self.conns.remove(&flow)?;
        let held = c.shaper.reset();
        for p in &held {
            self.backlog.sub(p);
        }
        Some(held)
    }

    /// Re-shapes one connection at `now`.
    pub fn set_rate(&mut self, now: Time, flow: FlowId, rate: Rate) -> Result<(), ConfigError> {
        match self.conns.get_mut(&flow) {
            Some(c) => c.shaper.set_rate(now, rate),
            None => Err(ConfigError::new("shaper_bank", "flow", format!("({}) has no shaper", flow.0))),
        }
    }

    /// Re-shapes every connection at `now` to `rate` (scheme #2).
    pub fn set_all_rates(&mut self, now: Time, rate: Rate) -> Result<(), ConfigError> {
        if rate.0 == 0 {
            return Err(ConfigError::new("shaper", "rate", "(0 bit/s) must be at least 1 bit/s"));
        }
        for c in self.conns.values_mut() {
            c.shaper.set_rate(now, rate)?;
        }
        Ok(())
    }

    /// Number of connections.
    pub fn len(&self) -> usize {
        self.conns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.conns.is_empty()
    }

    /// A connection's shaper and counters.
    pub fn connection(&self, flow: FlowId) -> Option<(&Shaper, ConnectionStats)> {
        self.conns.get(&flow).map(|c| (&c.shaper, c.stats))
    }
}

impl Qdisc for ShaperBank {
    fn kind(&self) -> &'static str {
        "shaper_bank"
    }
    fn enqueue(&mut self, now: Time, pkt: Packet, rng: &mut Rng) -> Verdict {
        let Some(c) = self.conns.get_mut(&pkt.flow) else {
            return Verdict::Dropped(Dropped { packet: pkt, reason: DropReason::Unclassified });
        };
        c.stats.arrivals += 1;
        let v = c.shaper.enqueue(now, pkt, rng);
        if matches!(v, Verdict::Dropped(_)) {
            c.stats.drops += 1;
        } else {
            self.backlog.add(&pkt);
        }
        v
    }
    fn dequeue(&mut self, now: Time) -> Dequeue {
        if self.backlog.is_empty() {
            return Dequeue::Empty;
        }
        // Round-robin: the flows after the last one served, then the rest.
        use std::ops::Bound::{Excluded, Included, Unbounded};
        let passes = match self.last_served {
            Some(f) => [Some((Excluded(f), Unbounded)), Some((Unbounded, Included(f)))],
            None => [Some((Unbounded, Unbounded)), None],
        };
        let mut earliest: Option<Time> = None;
        for range in passes.into_iter().flatten() {
            for (flow, c) in self.conns.range_mut(range) {
                match c.shaper.dequeue(now) {
                    Dequeue::Packet(p) => {
                        c.stats.departures += 1;
                        c.stats.departure_bytes += p.size as u64;
                        self.backlog.sub(&p);
                        self.last_served = Some(*flow);
                        return Dequeue::Packet(p);
                    }
                    Dequeue::NotBefore(t) => earliest = Some(earliest.map_or(t, |e| e.min(t))),
                    Dequeue::Empty => {}
                }
            }
        }
        earliest.map_or(Dequeue::Empty, Dequeue::NotBefore)
    }
    fn peek(&self) -> Option<&Packet> {
        self.conns.values().find_map(|c| c.shaper.peek())
    }
    fn backlog(&self) -> Backlog {
        self.backlog
    }
    fn for_each_packet(&self, f: &mut dyn FnMut(&Packet)) {
        for c in self.conns.values() {
            c.shaper.for_each_packet(f);
        }
    }
    fn reset(&mut self) -> Vec<Packet> {
        let mut out = Vec::new();
        for c in self.conns.values_mut() {
            out.extend(c.shaper.reset());
        }
        self.backlog = Backlog::default();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::Queue;
    use crate::units::Dur;
    use rand::RngCore as _;

    fn pkt(id: u64, flow: u32, size: u32) -> Packet {
        Packet::new(id, FlowId(flow), size, Time(0))
    }

    fn shaper(rate: Rate) -> Shaper {
        Shaper::new(ShaperConfig::new(rate), Time(0)).unwrap()
    }

    #[test]
    fn shaper_head_waits_exactly_until_conformant() {
        let mut rng = crate::rng::stream(1, 0);
        let mut s = shaper(Rate::mbps(1)); // 1500 B take 12 ms at 1 Mb/s
        s.enqueue(Time(0), pkt(1, 0, 1500), &mut rng);
        s.enqueue(Time(0), pkt(2, 0, 1500), &mut rng);
        assert!(matches!(s.dequeue(Time(0)), Dequeue::Packet(p) if p.id == 1));
        assert_eq!(s.dequeue(Time(0)), Dequeue::NotBefore(Time(12_000_000)));
        assert_eq!(s.dequeue(Time(5)), Dequeue::NotBefore(Time(12_000_000)));
        assert_eq!(s.dequeue(Time(11_999_999)), Dequeue::NotBefore(Time(12_000_000)));
        assert!(matches!(s.dequeue(Time(12_000_000)), Dequeue::Packet(p) if p.id == 2));
        assert_eq!(s.dequeue(Time(12_000_000)), Dequeue::Empty);
    }

    #[test]
    fn shaper_not_before_is_exact_for_awkward_rates() {
        let mut rng = crate::rng::stream(1, 0);
        let mut s = Shaper::new(ShaperConfig { start_full: false, ..ShaperConfig::new(Rate::bps(7_777_777)) }, Time(3))
            .unwrap();
        s.enqueue(Time(3), pkt(1, 0, 1499), &mut rng);
        let Dequeue::NotBefore(t) = s.dequeue(Time(3)) else { panic!("must wait") };
        // ceil(1499 * 8e9 / 7777777) ns after creation.
        assert_eq!(t.0, 3 + (1499u128 * 8_000_000_000).div_ceil(7_777_777) as u64);
        let mut probe = s.clone();
        assert!(matches!(probe.dequeue(Time(t.0 - 1)), Dequeue::NotBefore(x) if x == t));
        assert!(matches!(s.dequeue(t), Dequeue::Packet(_)));
    }

    #[test]
    fn shaper_output_never_exceeds_rate_times_t_plus_depth() {
        // A backlogged shaper driven at irregular instants: bytes out over
        // [0, t] stay within depth + R t / 8 at every departure.
        let mut rng = crate::rng::stream(7, 0);
        let rate = Rate::bps(3_333_333);
        let mut s = shaper(rate);
        let mut q = Queue::new(Box::new(s.clone()));
        for i in 0..2000 {
            let size = 40 + (rng.next_u64() % 1461) as u32;
            q.enqueue(Time(0), pkt(i, 0, size), &mut rng);
            s.enqueue(Time(0), pkt(i, 0, size), &mut rng);
        }
        let mut now = Time(0);
        let mut out: u128 = 0;
        while !q.backlog().is_empty() {
            match q.dequeue(now) {
                Dequeue::Packet(p) => {
                    out += p.size as u128;
                    assert!(out * 8_000_000_000 <= 1500 * 8_000_000_000 + rate.0 as u128 * now.0 as u128);
                }
                Dequeue::NotBefore(t) => {
                    assert!(t > now);
                    // Sometimes come back late, sometimes exactly on time.
                    now = if rng.next_u64().is_multiple_of(2) { t } else { t + Dur(rng.next_u64() % 1_000_000) };
                }
                Dequeue::Empty => unreachable!("backlog is not empty"),
            }
        }
        assert_eq!(q.stats().departures, 2000);
    }

    #[test]
    fn shaper_at_c_over_n_has_zero_drift_over_a_long_run() {
        // 10 shapers at C/n = 10 Mb/s, each always backlogged with 1500 B
        // packets, polled exactly when due: after 120 s each has sent
        // exactly R * t / 8 bytes plus the initial full bucket, with no drift.
        // 120 s is 10^5 packet times of 1.2 ms: 10^6 packets in all.
        let mut rng = crate::rng::stream(1, 0);
        let mut bank = ShaperBank::new();
        let c = Rate::mbps(100);
        let n = 10u32;
        for f in 0..n {
            bank.add(Time(0), FlowId(f), ShaperConfig::new(Rate(c.0 / n as u64))).unwrap();
        }
        let horizon = Time(Dur::from_secs(120).0);
        let mut id = 0u64;
        for f in 0..n {
            for _ in 0..3 {
                bank.enqueue(Time(0), pkt(id, f, 1500), &mut rng);
                id += 1;
            }
        }
        let mut now = Time(0);
        let mut link_bytes: u64 = 0;
        loop {
            match bank.dequeue(now) {
                Dequeue::Packet(p) => {
                    link_bytes += p.size as u64;
                    bank.enqueue(now, pkt(id, p.flow.0, 1500), &mut rng); // greedy source refills
                    id += 1;
                }
                Dequeue::NotBefore(t) if t <= horizon => now = t,
                _ => break,
            }
        }
        // Per connection: 1 packet at 0 (full bucket) + one every 1.2 ms.
        let per_conn = 1 + Dur::from_secs(120).0 / 1_200_000;
        for f in 0..n {
            let (_, st) = bank.connection(FlowId(f)).unwrap();
            assert_eq!(st.departure_bytes, per_conn * 1500, "flow {f}");
        }
        // The link at C carries exactly what the shapers released: R*n = C.
        assert_eq!(link_bytes, n as u64 * per_conn * 1500);
        assert_eq!(link_bytes - n as u64 * 1500, c.0 / 8 * 120);
    }

    #[test]
    fn shaper_drops_only_when_its_own_buffer_is_set_and_full() {
        let mut rng = crate::rng::stream(1, 0);
        let mut unlimited = shaper(Rate::kbps(8));
        for i in 0..10_000 {
            assert_eq!(unlimited.enqueue(Time(0), pkt(i, 0, 1500), &mut rng), Verdict::Queued);
        }
        let cfg = ShaperConfig { limit: Limit::packets(2), ..ShaperConfig::new(Rate::kbps(8)) };
        let mut q = Queue::new(Box::new(Shaper::new(cfg, Time(0)).unwrap()));
        for i in 0..5 {
            q.enqueue(Time(0), pkt(i, 0, 1500), &mut rng);
        }
        assert_eq!(q.stats().drops_for(DropReason::ShaperBuffer), 3);
        assert_eq!(q.backlog().packets, 2);
        assert!(matches!(q.dequeue(Time(0)), Dequeue::Packet(_)));
        assert_eq!(q.enqueue(Time(0), pkt(9, 0, 1500), &mut rng), Verdict::Queued);
    }

    #[test]
    fn shaper_refuses_a_packet_larger_than_its_depth() {
        let mut rng = crate::rng::stream(1, 0);
        let mut s = shaper(Rate::mbps(1));
        assert!(matches!(
            s.enqueue(Time(0), pkt(1, 0, 1501), &mut rng),
            Verdict::Dropped(Dropped { reason: DropReason::Policed, .. })
        ));
        assert_eq!(s.backlog().packets, 0);
    }

    #[test]
    fn shaper_set_rate_counts_earned_tokens_at_the_old_rate() {
        let mut rng = crate::rng::stream(1, 0);
        let mut s =
            Shaper::new(ShaperConfig { start_full: false, ..ShaperConfig::new(Rate::mbps(1)) }, Time(0)).unwrap();
        s.enqueue(Time(0), pkt(1, 0, 1500), &mut rng);
        // 6 ms at 1 Mb/s earns 750 B; the other 750 B at 2 Mb/s take 3 ms.
        s.set_rate(Time(6_000_000), Rate::mbps(2)).unwrap();
        assert_eq!(s.dequeue(Time(6_000_000)), Dequeue::NotBefore(Time(9_000_000)));
        assert!(s.set_rate(Time(7_000_000), Rate(0)).is_err());
        assert_eq!(s.rate(), Rate::mbps(2));
    }

    #[test]
    fn shaper_config_errors_name_the_field() {
        let e = Shaper::new(ShaperConfig::new(Rate(0)), Time(0)).unwrap_err();
        assert_eq!((e.mechanism, e.field), ("shaper", "rate"));
        let e = Shaper::new(ShaperConfig { depth: Bytes(0), ..ShaperConfig::new(Rate(1)) }, Time(0)).unwrap_err();
        assert_eq!(e.field, "depth");
        let e =
            Shaper::new(ShaperConfig { limit: Limit::packets(0), ..ShaperConfig::new(Rate(1)) }, Time(0)).unwrap_err();
        assert_eq!(e.field, "limit");
    }

    #[test]
    fn shaper_bank_serves_conformant_connections_round_robin() {
        let mut rng = crate::rng::stream(1, 0);
        let mut bank = ShaperBank::new();
        for f in 0..3 {
            bank.add(Time(0), FlowId(f), ShaperConfig { depth: Bytes(3000), ..ShaperConfig::new(Rate::mbps(1)) })
                .unwrap();
            for i in 0..2 {
                bank.enqueue(Time(0), pkt(f as u64 * 10 + i, f, 1500), &mut rng);
            }
        }
        let order: Vec<u32> = (0..6)
            .map(|_| match bank.dequeue(Time(0)) {
                Dequeue::Packet(p) => p.flow.0,
                d => panic!("expected a packet, got {d:?}"),
            })
            .collect();
        assert_eq!(order, vec![0, 1, 2, 0, 1, 2]);
        assert_eq!(bank.dequeue(Time(0)), Dequeue::Empty);
    }

    #[test]
    fn shaper_bank_answers_the_earliest_not_before_and_drops_unknown_flows() {
        let mut rng = crate::rng::stream(1, 0);
        let mut bank = ShaperBank::new();
        bank.add(Time(0), FlowId(4), ShaperConfig { start_full: false, ..ShaperConfig::new(Rate::mbps(1)) }).unwrap();
        bank.add(Time(0), FlowId(9), ShaperConfig { start_full: false, ..ShaperConfig::new(Rate::mbps(2)) }).unwrap();
        bank.enqueue(Time(0), pkt(1, 4, 1500), &mut rng);
        bank.enqueue(Time(0), pkt(2, 9, 1500), &mut rng);
        assert_eq!(bank.dequeue(Time(0)), Dequeue::NotBefore(Time(6_000_000)));
        assert!(matches!(
            bank.enqueue(Time(0), pkt(3, 5, 1500), &mut rng),
            Verdict::Dropped(Dropped { reason: DropReason::Unclassified, .. })
        ));
        assert!(bank.add(Time(0), FlowId(4), ShaperConfig::new(Rate::mbps(1))).is_err());
        bank.set_all_rates(Time(0), Rate::mbps(4)).unwrap();
        assert_eq!(bank.dequeue(Time(0)), Dequeue::NotBefore(Time(3_000_000)));
        assert_eq!(bank.remove(FlowId(9)).map(|v| v.len()), Some(1));
        assert_eq!(bank.backlog().packets, 1);
        assert!(bank.set_rate(Time(0), FlowId(9), Rate::mbps(1)).is_err());
    }
}
