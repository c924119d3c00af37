//! The PCN egress, per ingress-egress aggregate (IEA): the congestion-level
//! estimate (CLE) and the sustainable-aggregate-rate.
//!
//! Sources: [Zhang07 §2.2] (the egress answers an
//! admission request at once with the current CLE), §3.1.2 (the CLE is an
//! EWMA, per packet with weight 0.01 in §3.2-3.3, per 100 ms interval in
//! the rest), §4.1 (termination: the state machine below), after
//! draft-briscoe-tsvwg-cl-architecture.
//!
//! ```text
//! CLE per packet:    cle <- (1 - w)·cle + w·[packet marked]
//! CLE per interval:  at the end of each interval k = [k·I, (k+1)·I) that carried PCN bytes:
//!                    cle <- (1 - w)·cle + w·(marked bytes / bytes)
//! termination (§4.1), per IEA:
//!   idle, excess-marked packet at t  → measuring until t + T, unmarked := 0
//!   measuring, excess-marked packet  → ignored (still measuring)
//!   measuring, other PCN packet      → unmarked += size
//!   measuring, at t + T              → send SustainableRate(unmarked·8 / T) to the ingress; idle
//! ```
//!
//! | parameter | unit | allowed | default [Zhang07] |
//! |---|---|---|---|
//! | `cle_mode` | `PerPacket` or `PerInterval{interval}` | interval > 0 | `PerPacket` (§3.1.2), or 100 ms intervals |
//! | `cle_weight` | fraction | (0, 1] | 0.01 (§3.1.2) |
//! | `termination_interval` | time | > 0 | 100 ms (§4.1) |
//! | `termination_start` | `Mark`, `Grid` | | `Mark` (§4.1) |
//!
//! Interpretations (see `docs/decisions.md`, "PCN"):
//! - a packet counts as marked for the CLE when it carries either mark
//!   (threshold or excess): an excess-marked packet says the link is past
//!   its termination rate, which is above its admissible rate;
//! - per-interval CLE: intervals are aligned on multiples of the interval
//!   from time 0, bytes are counted, and an interval without PCN traffic
//!   leaves the CLE unchanged. They are closed lazily (at the next packet
//!   or request of the IEA), so no timer runs per IEA;
//! - termination mode lasts exactly one `termination_interval` from the
//!   first excess-marked packet; the egress re-enters it at the next
//!   excess-marked packet after it sent its rate;
//! - the measurement interval is half-open, `[t, t + T)`: a packet at
//!   `t + T` belongs to what follows, whether the driver fires the timer or
//!   delivers the packet first (due intervals are closed before a packet);
//! - only PCN packets count; non-PCN packets pass the egress untouched;
//! - `termination_start = Grid` (a control, not the default): the measured
//!   interval is the grid interval `[kT, (k+1)T)` holding the first excess
//!   mark, with the not-excess-marked bytes that came before it in it.

use crate::edge::{AggregateId, EdgeActions, EdgeMessage, EdgeNode, Signal};
use crate::error::ConfigError;
use crate::packet::{FlowId, Packet, PcnMark};
use crate::pipeline::{EventKind, MechEvent, Value};
use crate::units::{Dur, Time};
use hashbrown::HashMap;
use std::collections::VecDeque;

const MECH: &str = "pcn_egress";

/// How the CLE is sampled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CleMode {
    /// Every PCN packet is a sample (marked: 1, not marked: 0).
    PerPacket,
    /// Every interval with PCN traffic is a sample (its marked byte fraction).
    PerInterval { interval: Dur },
}

/// Where the egress's sustainable-rate measurement interval starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TerminationStart {
    /// At the first excess-marked packet ([Zhang07 §4.1]: "it will start
    /// measuring"): `[t, t + T)`.
    #[default]
    Mark,
    /// On a grid of intervals `[kT, (k+1)T)` from time 0: the interval that
    /// holds the first excess-marked packet, with the not-excess-marked bytes
    /// that arrived in it before that packet (an egress that measures its
    /// rates interval by interval). A control, not the paper's reading.
    Grid,
}

/// Settings of the egress part of a PCN edge node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EgressConfig {
    pub cle_mode: CleMode,
    /// EWMA weight of a new sample, in (0, 1].
    pub cle_weight: f64,
    /// The sustainable-aggregate-rate measurement interval.
    pub termination_interval: Dur,
    pub termination_start: TerminationStart,
}

impl EgressConfig {
    /// [Zhang07 §3.1.2] as used in §3.2-3.3: per-packet CLE with weight 0.01; 100 ms termination interval.
    pub fn per_packet_default() -> EgressConfig {
        EgressConfig {
            cle_mode: CleMode::PerPacket,
            cle_weight: 0.01,
            termination_interval: Dur::from_ms(100),
            termination_start: TerminationStart::Mark,
        }
    }

    /// [Zhang07 §3.1.2] from §3.6 on: 100 ms intervals with EWMA weight `weight`.
    pub fn per_interval(weight: f64) -> EgressConfig {
        EgressConfig {
            cle_mode: CleMode::PerInterval { interval: Dur::from_ms(100) },
            cle_weight: weight,
            termination_interval: Dur::from_ms(100),
            termination_start: TerminationStart::Mark,
        }
    }

    /// Checks every field; called by the only constructor.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(self.cle_weight > 0.0 && self.cle_weight <= 1.0) {
            return Err(ConfigError::new(MECH, "cle_weight", format!("({}) must be in (0, 1]", self.cle_weight)));
        }
        if let CleMode::PerInterval { interval } = self.cle_mode {
            if interval.0 == 0 {
                return Err(ConfigError::new(MECH, "cle_interval", "(0 s) must be above 0"));
            }
        }
        if self.termination_interval.0 == 0 {
            return Err(ConfigError::new(MECH, "termination_interval", "(0 s) must be above 0"));
        }
        Ok(())
    }
}

/// One IEA as its egress sees it.
#[derive(Clone, Debug, Default)]
struct Aggregate {
    ingress: Option<EdgeNode>,
    cle: f64,
    /// Per-interval CLE: the interval being counted, its bytes and marked bytes.
    epoch: u64,
    bytes: u64,
    marked_bytes: u64,
    /// Termination mode: until when, and the bytes that arrived not excess-marked.
    measuring_until: Option<Time>,
    unmarked_bytes: u64,
    /// `TerminationStart::Grid`: the grid interval being counted and its not-excess-marked bytes.
    grid_epoch: u64,
    grid_unmarked: u64,
}

/// The egress part of a PCN edge node.
#[derive(Debug)]
pub struct PcnEgress {
    config: EgressConfig,
    me: EdgeNode,
    /// Per aggregate leaving here (a map: a node holds only its own). Read on
    /// every packet, so hashbrown's fast hash, not SipHash (a parking lot's run
    /// spent 2 % hashing here); never iterated, so its order decides nothing.
    aggs: HashMap<AggregateId, Aggregate>,
    /// Ends of termination-mode intervals, in time order (they all last
    /// `termination_interval` and start in time order).
    due: VecDeque<(Time, AggregateId)>,
    rates_sent: u64,
}

impl PcnEgress {
    pub fn new(config: EgressConfig, me: EdgeNode) -> Result<PcnEgress, ConfigError> {
        config.validate()?;
        Ok(PcnEgress { config, me, aggs: HashMap::new(), due: VecDeque::new(), rates_sent: 0 })
    }

    pub fn config(&self) -> &EgressConfig {
        &self.config
    }

    fn agg(&mut self, a: AggregateId) -> &mut Aggregate {
        self.aggs.entry(a).or_default()
    }

    /// The aggregate's ingress node (from the driver's `on_aggregate`).
    pub fn set_ingress(&mut self, a: AggregateId, ingress: EdgeNode) {
        self.agg(a).ingress = Some(ingress);
    }

    /// The CLE of aggregate `a` at `now` (0 for an aggregate never seen).
    pub fn cle(&mut self, now: Time, a: AggregateId) -> f64 {
        let (mode, w) = (self.config.cle_mode, self.config.cle_weight);
        let g = self.agg(a);
        Self::roll(mode, w, now, g);
        g.cle
    }

    /// Is aggregate `a` in termination mode?
    pub fn measuring(&self, a: AggregateId) -> bool {
        self.aggs.get(&a).is_some_and(|g| g.measuring_until.is_some())
    }

    /// Sustainable rates sent so far.
    pub fn rates_sent(&self) -> u64 {
        self.rates_sent
    }

    /// Per-interval CLE: closes the interval `g` is counting if `now` is past
    /// it (the aggregate looked up once by the caller, for the whole packet).
    fn roll(mode: CleMode, w: f64, now: Time, g: &mut Aggregate) {
        let CleMode::PerInterval { interval } = mode else { return };
        let epoch = now.0 / interval.0;
        if epoch > g.epoch {
            if g.bytes > 0 {
                let f = g.marked_bytes as f64 / g.bytes as f64;
                g.cle = (1.0 - w) * g.cle + w * f;
            }
            g.epoch = epoch;
            g.bytes = 0;
            g.marked_bytes = 0;
        }
    }

    /// A packet of aggregate `a` leaves the domain here at `now`.
    pub fn on_packet(&mut self, now: Time, a: AggregateId, pkt: &Packet, out: &mut EdgeActions) {
        self.settle(now, out);
        if pkt.pcn == PcnMark::NotPcn {
            return;
        }
        let marked = matches!(pkt.pcn, PcnMark::ThresholdMarked | PcnMark::ExcessMarked);
        let excess = pkt.pcn == PcnMark::ExcessMarked;
        let size = pkt.size as u64;
        let (mode, w, t) = (self.config.cle_mode, self.config.cle_weight, self.config.termination_interval);
        let grid = self.config.termination_start == TerminationStart::Grid;
        let g = self.agg(a);
        Self::roll(mode, w, now, g);
        if grid {
            let epoch = now.0 / t.0;
            if epoch != g.grid_epoch {
                g.grid_epoch = epoch;
                g.grid_unmarked = 0;
            }
        }
        match mode {
            CleMode::PerPacket => g.cle = (1.0 - w) * g.cle + if marked { w } else { 0.0 },
            CleMode::PerInterval { .. } => {
                g.bytes += size;
                if marked {
                    g.marked_bytes += size;
                }
            }
        }
        let counted_before = g.grid_unmarked;
        if grid && !excess {
            g.grid_unmarked += size;
        }
        match (g.measuring_until, excess) {
            (None, true) => {
                let (end, counted) = if grid { (Time((g.grid_epoch + 1) * t.0), counted_before) } else { (now + t, 0) };
                g.measuring_until = Some(end);
                g.unmarked_bytes = counted;
                self.due.push_back((end, a));
            }
            (Some(_), false) => g.unmarked_bytes += size,
            // Idle and unmarked: nothing to measure; measuring and marked: ignored (§4.1).
            _ => {}
        }
    }

    /// An admission request for `flow` of aggregate `a` from `from`: the
    /// answer is the current CLE, sent back at once (§2.2).
    pub fn on_request(&mut self, now: Time, a: AggregateId, flow: FlowId, from: EdgeNode, out: &mut EdgeActions) {
        self.settle(now, out);
        let cle = self.cle(now, a);
        out.messages.push(EdgeMessage {
            from: self.me,
            to: from,
            aggregate: a,
            signal: Signal::CongestionLevel { flow: Some(flow), cle },
        });
    }

    /// The end of the next termination-mode interval, if any.
    pub fn next_deadline(&self) -> Option<Time> {
        self.due.front().map(|d| d.0)
    }

    /// Closes every termination-mode interval that ended at or before `now`.
    pub fn settle(&mut self, now: Time, out: &mut EdgeActions) {
        let t = self.config.termination_interval;
        while let Some(&(end, a)) = self.due.front() {
            if end > now {
                break;
            }
            self.due.pop_front();
            let me = self.me;
            let Some(g) = self.aggs.get_mut(&a).filter(|g| g.measuring_until == Some(end)) else { continue };
            g.measuring_until = None;
            let bps = g.unmarked_bytes as f64 * 8.0 / t.as_secs_f64();
            let fields = vec![("aggregate", Value::U64(a.0 as u64)), ("unmarked_bytes", Value::U64(g.unmarked_bytes))];
            match g.ingress {
                Some(to) => {
                    out.messages.push(EdgeMessage {
                        from: me,
                        to,
                        aggregate: a,
                        signal: Signal::SustainableRate { bps },
                    });
                    self.rates_sent += 1;
                    out.events.push(MechEvent {
                        at: end,
                        kind: EventKind::Message,
                        flow: None,
                        rule: "sustainable_rate",
                        estimate: bps,
                        threshold: f64::NAN,
                        fields,
                    });
                }
                None => out.events.push(MechEvent {
                    at: end,
                    kind: EventKind::Message,
                    flow: None,
                    rule: "sustainable_rate_no_ingress_known",
                    estimate: bps,
                    threshold: f64::NAN,
                    fields,
                }),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: AggregateId = AggregateId(0);
    const ME: EdgeNode = EdgeNode(9);
    const ING: EdgeNode = EdgeNode(1);

    fn pkt(size: u32, mark: PcnMark) -> Packet {
        let mut p = Packet::new(0, FlowId(0), size, Time::ZERO);
        p.pcn = mark;
        p
    }

    fn ms(m: u64) -> Time {
        Time(Dur::from_ms(m).0)
    }

    #[test]
    fn per_packet_cle_is_the_ewma_of_marks_with_weight_0_01() {
        let mut e = PcnEgress::new(EgressConfig::per_packet_default(), ME).unwrap();
        let mut out = EdgeActions::default();
        let mut expect = 0.0f64;
        for i in 0..500u64 {
            let mark = if i % 4 == 0 { PcnMark::ThresholdMarked } else { PcnMark::NotMarked };
            e.on_packet(Time(i), A, &pkt(160, mark), &mut out);
            expect = (1.0 - 0.01) * expect + if i % 4 == 0 { 0.01 } else { 0.0 };
        }
        assert_eq!(e.cle(Time(500), A), expect);
        // Excess marks count as marks; non-PCN packets are not samples.
        let before = e.cle(Time(500), A);
        e.on_packet(Time(501), A, &pkt(160, PcnMark::NotPcn), &mut out);
        assert_eq!(e.cle(Time(501), A), before);
        e.on_packet(Time(502), A, &pkt(160, PcnMark::ExcessMarked), &mut out);
        assert_eq!(e.cle(Time(502), A), (1.0 - 0.01) * before + 0.01);
        // 1000 marked packets in a row bring it within 1e-4 of 1.
        for i in 0..1000u64 {
            e.on_packet(Time(600 + i), A, &pkt(160, PcnMark::ThresholdMarked), &mut out);
        }
        assert!((1.0 - e.cle(Time(2000), A)) < 1e-4);
    }

    #[test]
    fn per_interval_cle_takes_one_sample_per_100ms_interval_by_bytes() {
        let mut e = PcnEgress::new(EgressConfig::per_interval(0.5), ME).unwrap();
        let mut out = EdgeActions::default();
        // Interval 0: 1500 B marked of 2000 B (0.75). Interval 1: nothing. Interval 2: 0 of 1000 B.
        e.on_packet(ms(10), A, &pkt(1500, PcnMark::ThresholdMarked), &mut out);
        e.on_packet(ms(99), A, &pkt(500, PcnMark::NotMarked), &mut out);
        assert_eq!(e.cle(ms(99), A), 0.0, "the interval is not over yet");
        assert_eq!(e.cle(ms(100), A), 0.375, "closed at 100 ms: 0.5·0 + 0.5·0.75");
        assert_eq!(e.cle(ms(199), A), 0.375, "an empty interval is no sample");
        e.on_packet(ms(250), A, &pkt(1000, PcnMark::NotMarked), &mut out);
        assert_eq!(e.cle(ms(299), A), 0.375);
        assert_eq!(e.cle(ms(300), A), 0.1875);
        // Aggregates are independent.
        assert_eq!(e.cle(ms(300), AggregateId(3)), 0.0);
    }

    #[test]
    fn sustainable_rate_is_the_unmarked_rate_over_one_interval_from_the_first_excess_mark() {
        let mut e = PcnEgress::new(EgressConfig::per_interval(0.3), ME).unwrap();
        e.set_ingress(A, ING);
        let mut out = EdgeActions::default();
        // Before any excess mark: nothing measured.
        e.on_packet(ms(1), A, &pkt(1000, PcnMark::NotMarked), &mut out);
        assert!(!e.measuring(A));
        // The first excess mark at 5 ms starts the interval [5, 105) ms.
        e.on_packet(ms(5), A, &pkt(1000, PcnMark::ExcessMarked), &mut out);
        assert_eq!(e.next_deadline(), Some(ms(105)));
        for i in 0..100u64 {
            // 1250 B every ms (10 Mb/s), every 5th excess-marked (ignored): 8 Mb/s unmarked.
            let mark = if i % 5 == 0 { PcnMark::ExcessMarked } else { PcnMark::ThresholdMarked };
            e.on_packet(ms(5) + Dur::from_us(500) + Dur::from_ms(i), A, &pkt(1250, mark), &mut out);
        }
        // A packet exactly at the end belongs to what follows: the interval is closed first.
        assert!(out.messages.is_empty());
        e.on_packet(ms(105), A, &pkt(1250, PcnMark::NotMarked), &mut out);
        assert_eq!(
            out.messages,
            vec![EdgeMessage { from: ME, to: ING, aggregate: A, signal: Signal::SustainableRate { bps: 8_000_000.0 } }]
        );
        assert_eq!(out.events[0].rule, "sustainable_rate");
        assert!(!e.measuring(A), "back to idle after sending");
        // The timer path gives the same: a new mode at 106 ms, closed by settle at 206 ms.
        e.on_packet(ms(106), A, &pkt(1250, PcnMark::ExcessMarked), &mut out);
        e.on_packet(ms(150), A, &pkt(1250, PcnMark::NotMarked), &mut out);
        out.messages.clear();
        e.settle(ms(205), &mut out);
        assert!(out.messages.is_empty());
        e.settle(ms(206), &mut out);
        assert_eq!(out.messages[0].signal, Signal::SustainableRate { bps: 100_000.0 });
        assert_eq!(e.rates_sent(), 2);
    }

    #[test]
    fn grid_start_measures_the_grid_interval_holding_the_first_excess_mark() {
        let cfg = EgressConfig { termination_start: TerminationStart::Grid, ..EgressConfig::per_interval(0.3) };
        let mut e = PcnEgress::new(cfg, ME).unwrap();
        e.set_ingress(A, ING);
        let mut out = EdgeActions::default();
        // 95 ms (the previous grid interval) does not count; 130 ms (before the mark) does.
        e.on_packet(ms(95), A, &pkt(1000, PcnMark::NotMarked), &mut out);
        e.on_packet(ms(130), A, &pkt(1000, PcnMark::ThresholdMarked), &mut out);
        assert!(!e.measuring(A));
        e.on_packet(ms(150), A, &pkt(1000, PcnMark::ExcessMarked), &mut out);
        assert_eq!(e.next_deadline(), Some(ms(200)), "the grid interval [100, 200) ms");
        e.on_packet(ms(160), A, &pkt(500, PcnMark::NotMarked), &mut out);
        e.on_packet(ms(170), A, &pkt(700, PcnMark::ExcessMarked), &mut out);
        e.settle(ms(200), &mut out);
        // 1000 + 500 B unmarked in 100 ms: 120 kb/s.
        assert_eq!(out.messages[0].signal, Signal::SustainableRate { bps: 120_000.0 });
        // A mark in the next interval measures [200, 300) from its start.
        e.on_packet(ms(210), A, &pkt(1000, PcnMark::NotMarked), &mut out);
        e.on_packet(ms(299), A, &pkt(1000, PcnMark::ExcessMarked), &mut out);
        e.settle(ms(300), &mut out);
        assert_eq!(out.messages[1].signal, Signal::SustainableRate { bps: 80_000.0 });
    }

    #[test]
    fn request_is_answered_with_the_current_cle_for_that_flow() {
        let mut e = PcnEgress::new(EgressConfig::per_packet_default(), ME).unwrap();
        let mut out = EdgeActions::default();
        e.on_packet(ms(1), A, &pkt(160, PcnMark::ThresholdMarked), &mut out);
        e.on_request(ms(2), A, FlowId(42), EdgeNode(4), &mut out);
        assert_eq!(
            out.messages,
            vec![EdgeMessage {
                from: ME,
                to: EdgeNode(4),
                aggregate: A,
                signal: Signal::CongestionLevel { flow: Some(FlowId(42)), cle: 0.01 }
            }]
        );
    }

    #[test]
    fn config_errors_name_the_field() {
        let err = |c: EgressConfig| PcnEgress::new(c, ME).unwrap_err();
        for w in [0.0, -0.1, 1.5, f64::NAN] {
            let e = err(EgressConfig { cle_weight: w, ..EgressConfig::per_packet_default() });
            assert_eq!((e.mechanism, e.field), ("pcn_egress", "cle_weight"));
        }
        assert!(PcnEgress::new(EgressConfig { cle_weight: 1.0, ..EgressConfig::per_packet_default() }, ME).is_ok());
        let e = err(EgressConfig {
            cle_mode: CleMode::PerInterval { interval: Dur::ZERO },
            ..EgressConfig::per_interval(0.1)
        });
        assert_eq!(e.field, "cle_interval");
        let e = err(EgressConfig { termination_interval: Dur::ZERO, ..EgressConfig::per_interval(0.1) });
        assert_eq!(e.field, "termination_interval");
    }
}
