//! The PCN ingress, per ingress-egress aggregate (IEA): admission against
//! the egress's congestion-level estimate, and flow termination down to the
//! sustainable-aggregate-rate.
//!
//! Sources: [Zhang07 §2.2] (a flow request makes the
//! ingress ask the egress, which answers with its CLE; "if the CLE is below
//! the specified CLE-threshold, the flow is admitted"; a terminated flow
//! "sends no more packets from that time on"), §4.1 (the termination state
//! machine below; "the ingress used the same length of the measurement
//! interval as the egress"), §4.3.1 (termination works on whole flows: the
//! rounding of the number of flows matters), after
//! draft-briscoe-tsvwg-cl-architecture.
//!
//! ```text
//! request of flow f           → AdmissionRequest(f) to the egress; decision when its CLE comes back:
//!                               admit iff cle < cle_threshold
//! SustainableRate(s) arrives  → remember s (the latest wins); if not measuring: measure [t, t + T)
//! at t + T                    → rate = bytes sent to the egress in [t, t + T) · 8 / T
//!                               excess = rate - s; if excess > 0: order the flows that sent in the
//!                               interval (flow_choice) and terminate a prefix of that order:
//!                                 Up:   the shortest prefix whose rates reach the excess
//!                                 Down: the longest prefix whose rates stay within the excess
//!                                 Nearest: take a flow while at least half of it is uncovered
//!                               (at most max_flows_per_round flows); leave termination mode
//! packet of a terminated flow → dropped (DropReason::Terminated)
//! ```
//!
//! | parameter | unit | allowed | default [Zhang07] |
//! |---|---|---|---|
//! | `cle_threshold` | fraction | (0, 1] | 0.5 per packet (§3.1.2); 0.05-0.25 per interval (§3.6) |
//! | `interval` | time | > 0 | 100 ms (§4.1) |
//! | `flow_choice` | `Random`, `Newest`, `Largest` | | `Random` |
//! | `rounding` | `Up`, `Down`, `Nearest` | | `Up` |
//! | `max_flows_per_round` | flows | ≥ 1 or none | none (all in one round) |
//!
//! Interpretations (see `docs/decisions.md`, "PCN"):
//! - every packet entering the domain at a PCN ingress is PCN traffic and
//!   leaves the ingress not-marked (marks from outside are cleared, as a
//!   PCN-ingress-node does);
//! - a flow's rate is what it sent in the measurement interval; flows
//!   silent in it are not candidates (terminating them removes nothing
//!   measured);
//! - `Up` (the default) reads "terminate flows down to the sustainable
//!   rate" literally: what remains is at most the sustainable rate, so at
//!   most one flow's rate more than the excess is terminated. `Down` never
//!   terminates more than the excess; `Nearest` (a control: the paper's
//!   §4.3.1 names only up and down) leaves the remainder within half a
//!   flow either way;
//! - a rate that arrives while the ingress measures replaces the one it had
//!   (the latest estimate is used at the end of the interval);
//! - `Random` shuffles the candidates (Fisher-Yates, the ingress's own RNG
//!   stream, given at construction); `Newest` orders by the time the
//!   ingress first saw the flow (admission, else first packet), newest
//!   first; `Largest` by bytes in the interval, largest first; ties by
//!   flow id;
//! - `max_flows_per_round` is the "termination in batches" option: the
//!   [Zhang07 §4.5]'s is about batch *call arrivals*, so this is our reading: a
//!   round terminates at most that many flows and the next sustainable
//!   rate drives the rest.

use crate::admission::{Decision, DecisionReason, FlowRequest};
use crate::edge::{AggregateId, EdgeActions, EdgeMessage, EdgeNode, Signal};
use crate::error::ConfigError;
use crate::packet::{FlowId, Packet, PcnMark};
use crate::pipeline::{EventKind, MechEvent, Value};
use crate::qdisc::DropReason;
use crate::rng::Rng;
use crate::stage::StageVerdict;
use crate::units::{Dur, Time};
use crate::vecmap::VecMap;
use hashbrown::HashMap;
use rand::Rng as _;
use std::collections::VecDeque;

const MECH: &str = "pcn_ingress";

/// Which flows an ingress terminates first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FlowChoice {
    #[default]
    Random,
    Newest,
    Largest,
}

/// How the number of flows to terminate is rounded to whole flows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Rounding {
    /// Terminate until the excess is covered (may exceed it by less than one flow).
    #[default]
    Up,
    /// Terminate only while the excess is not exceeded.
    Down,
    /// Terminate the whole number of flows nearest to the excess: a flow is
    /// taken while at least half of its rate is still uncovered (a tie is
    /// taken).
    Nearest,
}

/// Settings of the ingress part of a PCN edge node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IngressConfig {
    /// Admit a flow iff the egress's CLE is below this.
    pub cle_threshold: f64,
    /// Measurement interval of the ingress's own sending rate.
    pub interval: Dur,
    pub flow_choice: FlowChoice,
    pub rounding: Rounding,
    /// At most this many flows per termination round (`None`: no limit).
    pub max_flows_per_round: Option<u32>,
}

impl IngressConfig {
    /// 100 ms interval, random choice, rounding up, no batch limit.
    pub fn seed_default(cle_threshold: f64) -> IngressConfig {
        IngressConfig {
            cle_threshold,
            interval: Dur::from_ms(100),
            flow_choice: FlowChoice::Random,
            rounding: Rounding::Up,
            max_flows_per_round: None,
        }
    }

    /// Checks every field; called by the only constructor.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(self.cle_threshold > 0.0 && self.cle_threshold <= 1.0) {
            return Err(ConfigError::new(MECH, "cle_threshold", format!("({}) must be in (0, 1]", self.cle_threshold)));
        }
        if self.interval.0 == 0 {
            return Err(ConfigError::new(MECH, "interval", "(0 s) must be above 0"));
        }
        if self.max_flows_per_round == Some(0) {
            return Err(ConfigError::new(MECH, "max_flows_per_round", "(0) must be at least 1, or absent"));
        }
        Ok(())
    }
}

/// How many of `bytes` (the candidates' bytes in the interval, in choice
/// order) to terminate to cover `excess` bytes: the length of the prefix
/// that [`Rounding`] selects, at most `max` flows.
pub fn flows_to_terminate(bytes: &[u64], excess: f64, rounding: Rounding, max: Option<u32>) -> usize {
    let limit = max.map_or(bytes.len(), |m| (m as usize).min(bytes.len()));
    let (mut n, mut sum) = (0usize, 0u64);
    while n < limit {
        let next = sum + bytes[n];
        let take = match rounding {
            Rounding::Up => (sum as f64) < excess,
            Rounding::Down => next as f64 <= excess,
            // 2·sum + b ≤ 2·excess, i.e. at least half of the flow is still uncovered.
            Rounding::Nearest => (2 * sum + bytes[n]) as f64 <= 2.0 * excess,
        };
        if !take {
            break;
        }
        sum = next;
        n += 1;
    }
    n
}

#[derive(Clone, Copy, Debug)]
struct Flow {
    agg: AggregateId,
    first_seen: Time,
    /// The aggregate's measurement `bytes` counts for (0: none).
    epoch: u64,
    bytes: u64,
    terminated: bool,
}

#[derive(Clone, Debug, Default)]
struct Aggregate {
    egress: Option<EdgeNode>,
    last_cle: f64,
    sar_bps: f64,
    measuring_until: Option<Time>,
    epoch: u64,
    bytes: u64,
    /// Flows that sent in the current measurement, in order of their first packet in it.
    flows: Vec<FlowId>,
}

/// The ingress part of a PCN edge node.
#[derive(Debug)]
pub struct PcnIngress {
    config: IngressConfig,
    me: EdgeNode,
    rng: Rng,
    /// Per flow seen here (a map: a node holds only its own flows, whatever
    /// the driver's flow ids). A hash map, read on every packet: a parking
    /// lot's ingress holds thousands of flows, where the sorted vector's
    /// binary search took 9 % of a run (docs/performance.md). Never
    /// iterated, so its order (a seed per table) decides nothing.
    flows: HashMap<FlowId, Flow>,
    /// Per aggregate entering here. A sorted vector, not a hash map: an
    /// ingress holds one aggregate or a few.
    aggs: VecMap<AggregateId, Aggregate>,
    due: VecDeque<(Time, AggregateId)>,
    pending: VecMap<FlowId, AggregateId>,
    terminated: u64,
}

impl PcnIngress {
    /// `rng` is the ingress's own stream (random flow choice).
    pub fn new(config: IngressConfig, me: EdgeNode, rng: Rng) -> Result<PcnIngress, ConfigError> {
        config.validate()?;
        Ok(PcnIngress {
            config,
            me,
            rng,
            flows: HashMap::new(),
            aggs: VecMap::new(),
            due: VecDeque::new(),
            pending: VecMap::new(),
            terminated: 0,
        })
    }

    pub fn config(&self) -> &IngressConfig {
        &self.config
    }

    /// Flows terminated so far.
    pub fn terminated(&self) -> u64 {
        self.terminated
    }

    /// Is aggregate `a` measuring its sending rate (termination mode)?
    pub fn measuring(&self, a: AggregateId) -> bool {
        self.aggs.get(&a).is_some_and(|g| g.measuring_until.is_some())
    }

    /// The last CLE the egress of `a` reported.
    pub fn last_cle(&self, a: AggregateId) -> f64 {
        self.aggs.get(&a).map_or(0.0, |g| g.last_cle)
    }

    fn agg(&mut self, a: AggregateId) -> &mut Aggregate {
        self.aggs.get_or_insert_with(a, Aggregate::default)
    }

    fn flow(flows: &mut HashMap<FlowId, Flow>, f: FlowId, a: AggregateId, now: Time) -> &mut Flow {
        let fl =
            flows.entry(f).or_insert_with(|| Flow { agg: a, first_seen: now, epoch: 0, bytes: 0, terminated: false });
        fl.agg = a;
        fl
    }

    /// Forget flow `f` (its state and any pending request): a later answer
    /// for it is ignored, and a measurement in progress no longer counts it
    /// as a candidate for termination (its bytes stay in the aggregate's).
    pub fn forget(&mut self, f: FlowId) {
        self.flows.remove(&f);
        self.pending.remove(&f);
    }

    /// How many flows the ingress keeps state for (admitted or seen, and pending).
    pub fn flows_held(&self) -> usize {
        self.flows.len() + self.pending.len()
    }

    /// The aggregate's egress node (from the driver's `on_aggregate`).
    pub fn set_egress(&mut self, a: AggregateId, egress: EdgeNode) {
        self.agg(a).egress = Some(egress);
    }

    /// A packet of aggregate `a` enters the domain here at `now`.
    pub fn on_packet(&mut self, now: Time, a: AggregateId, pkt: &mut Packet, out: &mut EdgeActions) -> StageVerdict {
        self.settle(now, out);
        // One lookup of the flow for the whole packet (the aggregate is a second field).
        let fl = Self::flow(&mut self.flows, pkt.flow, a, now);
        if fl.terminated {
            return StageVerdict::Drop(DropReason::Terminated);
        }
        pkt.pcn = PcnMark::NotMarked;
        let size = pkt.size as u64;
        let g = self.aggs.get_or_insert_with(a, Aggregate::default);
        if g.measuring_until.is_some() {
            let epoch = g.epoch;
            g.bytes += size;
            if fl.epoch != epoch {
                g.flows.push(pkt.flow);
                fl.epoch = epoch;
                fl.bytes = 0;
            }
            fl.bytes += size;
        }
        StageVerdict::Pass
    }

    /// A flow of `a` asks to start: the request goes to the egress and the
    /// decision comes with its answer (`None` now). Without a known egress
    /// the flow is refused at once (rule `pcn_no_egress_known`).
    pub fn on_flow_request(
        &mut self,
        now: Time,
        a: AggregateId,
        req: &FlowRequest,
        out: &mut EdgeActions,
    ) -> Option<Decision> {
        self.settle(now, out);
        let me = self.me;
        let Some(egress) = self.agg(a).egress else {
            let reason = DecisionReason { rule: "pcn_no_egress_known", estimate: f64::NAN, threshold: f64::NAN };
            out.events.push(decision_event(now, EventKind::Reject, req.flow, &reason, a));
            return Some(Decision::Reject(reason));
        };
        self.pending.insert(req.flow, a);
        out.messages.push(EdgeMessage {
            from: me,
            to: egress,
            aggregate: a,
            signal: Signal::AdmissionRequest { flow: req.flow },
        });
        None
    }

    /// The egress's CLE for `a` arrives, in answer to `flow`'s request if any.
    pub fn on_congestion_level(
        &mut self,
        now: Time,
        a: AggregateId,
        flow: Option<FlowId>,
        cle: f64,
        out: &mut EdgeActions,
    ) {
        self.settle(now, out);
        self.agg(a).last_cle = cle;
        let Some(f) = flow else { return };
        if self.pending.remove(&f).is_none() {
            return;
        }
        let reason =
            DecisionReason { rule: "cle < cle_threshold", estimate: cle, threshold: self.config.cle_threshold };
        let (kind, decision) = if cle < self.config.cle_threshold {
            Self::flow(&mut self.flows, f, a, now);
            (EventKind::Admit, Decision::Admit(reason.clone()))
        } else {
            (EventKind::Reject, Decision::Reject(reason.clone()))
        };
        out.events.push(decision_event(now, kind, f, &reason, a));
        out.decisions.push((f, decision));
    }

    /// The egress's sustainable-aggregate-rate for `a` arrives (bit/s).
    pub fn on_sustainable_rate(&mut self, now: Time, a: AggregateId, bps: f64, out: &mut EdgeActions) {
        self.settle(now, out);
        let end = now + self.config.interval;
        let g = self.agg(a);
        g.sar_bps = bps;
        if g.measuring_until.is_none() {
            g.measuring_until = Some(end);
            g.epoch += 1;
            g.bytes = 0;
            g.flows.clear();
            self.due.push_back((end, a));
        }
    }

    /// The end of the next measurement interval, if any.
    pub fn next_deadline(&self) -> Option<Time> {
        self.due.front().map(|d| d.0)
    }

    /// Ends every measurement interval that ended at or before `now`.
    pub fn settle(&mut self, now: Time, out: &mut EdgeActions) {
        while let Some(&(end, a)) = self.due.front() {
            if end > now {
                break;
            }
            self.due.pop_front();
            if self.aggs.get(&a).is_some_and(|g| g.measuring_until == Some(end)) {
                self.finish(end, a, out);
            }
        }
    }

    /// The end of `a`'s measurement at `end`: terminate down to the sustainable rate.
    fn finish(&mut self, end: Time, a: AggregateId, out: &mut EdgeActions) {
        let secs = self.config.interval.as_secs_f64();
        let g = self.aggs.get_mut(&a).expect("a measuring aggregate exists");
        g.measuring_until = None;
        let flows = std::mem::take(&mut g.flows);
        let (sent, sar) = (g.bytes, g.sar_bps);
        let excess = sent as f64 - sar * secs / 8.0;
        let mut cands: Vec<(FlowId, u64, Time)> = flows
            .iter()
            .filter_map(|&f| {
                let fl = self.flows.get(&f)?;
                (!fl.terminated && fl.bytes > 0).then_some((f, fl.bytes, fl.first_seen))
            })
            .collect();
        match self.config.flow_choice {
            FlowChoice::Random => {
                for i in (1..cands.len()).rev() {
                    let j = self.rng.random_range(0..=i);
                    cands.swap(i, j);
                }
            }
            FlowChoice::Newest => cands.sort_by(|x, y| y.2.cmp(&x.2).then(x.0.cmp(&y.0))),
            FlowChoice::Largest => cands.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0))),
        }
        let n = if excess > 0.0 {
            let bytes: Vec<u64> = cands.iter().map(|c| c.1).collect();
            flows_to_terminate(&bytes, excess, self.config.rounding, self.config.max_flows_per_round)
        } else {
            0
        };
        let mut cut = 0u64;
        for &(f, bytes, _) in &cands[..n] {
            if let Some(fl) = self.flows.get_mut(&f) {
                fl.terminated = true;
            }
            cut += bytes;
            out.terminate.push(f);
            out.events.push(MechEvent {
                at: end,
                kind: EventKind::Terminate,
                flow: Some(f),
                rule: "terminate_to_sustainable_rate",
                estimate: bytes as f64 * 8.0 / secs,
                threshold: excess * 8.0 / secs,
                fields: vec![("aggregate", Value::U64(a.0 as u64))],
            });
        }
        self.terminated += n as u64;
        let last = if n > 0 { cands[n - 1].1 } else { 0 };
        // Restore the (cleared) vector to keep its allocation.
        let g = self.aggs.get_mut(&a).expect("a measuring aggregate exists");
        g.flows = flows;
        g.flows.clear();
        out.events.push(MechEvent {
            at: end,
            kind: EventKind::Sample,
            flow: None,
            rule: "ingress_rate vs sustainable_rate",
            estimate: sent as f64 * 8.0 / secs,
            threshold: sar,
            fields: vec![
                ("aggregate", Value::U64(a.0 as u64)),
                ("sent_bytes", Value::U64(sent)),
                ("excess_bytes", Value::F64(excess)),
                ("candidates", Value::U64(cands.len() as u64)),
                ("terminated_flows", Value::U64(n as u64)),
                ("terminated_bytes", Value::U64(cut)),
                ("last_flow_bytes", Value::U64(last)),
            ],
        });
    }
}

fn decision_event(at: Time, kind: EventKind, flow: FlowId, reason: &DecisionReason, a: AggregateId) -> MechEvent {
    MechEvent {
        at,
        kind,
        flow: Some(flow),
        rule: reason.rule,
        estimate: reason.estimate,
        threshold: reason.threshold,
        fields: vec![("aggregate", Value::U64(a.0 as u64))],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::ClassTag;
    use crate::units::{Bytes, Rate};

    const A: AggregateId = AggregateId(0);
    const ME: EdgeNode = EdgeNode(0);
    const EG: EdgeNode = EdgeNode(5);

    fn ms(m: u64) -> Time {
        Time(Dur::from_ms(m).0)
    }

    fn ingress(cfg: IngressConfig) -> PcnIngress {
        let mut i = PcnIngress::new(cfg, ME, crate::rng::stream(1, 0)).unwrap();
        i.set_egress(A, EG);
        i
    }

    fn send(i: &mut PcnIngress, t: Time, flow: u32, size: u32, out: &mut EdgeActions) -> StageVerdict {
        let mut p = Packet::new(0, FlowId(flow), size, t);
        i.on_packet(t, A, &mut p, out)
    }

    /// `flows` CBR flows of 1000 B every 10 ms (800 kb/s each) from `from` to `to` ms.
    fn cbr(i: &mut PcnIngress, flows: u32, from: u64, to: u64, out: &mut EdgeActions) {
        for t in (from..to).step_by(10) {
            for f in 0..flows {
                send(i, ms(t) + Dur(f as u64), f, 1000, out);
            }
        }
    }

    fn req(flow: u32) -> FlowRequest {
        FlowRequest { flow: FlowId(flow), class: ClassTag(0), rate: Rate::kbps(64), depth: Bytes(0) }
    }

    #[test]
    fn rounding_selects_the_prefix_that_covers_or_stays_within_the_excess() {
        let b = [100, 100, 100, 100];
        assert_eq!(flows_to_terminate(&b, 250.0, Rounding::Up, None), 3);
        assert_eq!(flows_to_terminate(&b, 250.0, Rounding::Down, None), 2);
        assert_eq!(flows_to_terminate(&b, 200.0, Rounding::Up, None), 2, "an exact cover is not exceeded");
        assert_eq!(flows_to_terminate(&b, 200.0, Rounding::Down, None), 2);
        assert_eq!(flows_to_terminate(&b, 50.0, Rounding::Up, None), 1, "§4.3.1: one flow, rounded up");
        assert_eq!(flows_to_terminate(&b, 50.0, Rounding::Down, None), 0, "§4.3.1: one flow, rounded down");
        assert_eq!(flows_to_terminate(&b, 1e9, Rounding::Up, None), 4);
        assert_eq!(flows_to_terminate(&b, 1e9, Rounding::Up, Some(3)), 3, "batch limit");
        assert_eq!(flows_to_terminate(&b, 0.0, Rounding::Up, None), 0);
    }

    #[test]
    fn nearest_rounding_takes_a_flow_while_half_of_it_is_uncovered() {
        let b = [100u64, 100, 100, 100];
        assert_eq!(flows_to_terminate(&b, 249.0, Rounding::Nearest, None), 2, "2.49 flows -> 2");
        assert_eq!(flows_to_terminate(&b, 250.0, Rounding::Nearest, None), 3, "2.5 flows -> 3 (a tie is taken)");
        assert_eq!(flows_to_terminate(&b, 251.0, Rounding::Nearest, None), 3);
        assert_eq!(flows_to_terminate(&b, 49.0, Rounding::Nearest, None), 0, "§4.3.1: under half a flow -> none");
        assert_eq!(flows_to_terminate(&b, 50.0, Rounding::Nearest, None), 1, "§4.3.1: half a flow -> one");
        assert_eq!(flows_to_terminate(&b, 200.0, Rounding::Nearest, None), 2, "an exact cover is not exceeded");
        assert_eq!(flows_to_terminate(&b, 1e9, Rounding::Nearest, Some(3)), 3, "batch limit");
        assert_eq!(flows_to_terminate(&b, 0.0, Rounding::Nearest, None), 0);
        // Unequal flows, in choice order: 300 covers 200 past half of it; then 10 is past 0.
        assert_eq!(flows_to_terminate(&[300, 10], 160.0, Rounding::Nearest, None), 1);
        assert_eq!(flows_to_terminate(&[300, 10], 149.0, Rounding::Nearest, None), 0);
    }

    #[test]
    fn a_forgotten_flow_leaves_no_state_and_its_late_answer_is_ignored() {
        let mut i = ingress(IngressConfig::seed_default(0.5));
        let mut out = EdgeActions::default();
        i.on_flow_request(ms(1), A, &req(7), &mut out);
        i.on_flow_request(ms(1), A, &req(8), &mut out);
        i.on_congestion_level(ms(3), A, Some(FlowId(7)), 0.0, &mut out);
        send(&mut i, ms(4), 7, 1000, &mut out);
        assert_eq!(i.flows_held(), 2, "flow 7 admitted, flow 8 pending");
        i.forget(FlowId(7));
        i.forget(FlowId(8));
        assert_eq!(i.flows_held(), 0);
        i.on_congestion_level(ms(5), A, Some(FlowId(8)), 0.0, &mut out);
        assert_eq!(out.decisions.len(), 1, "the forgotten request's answer decides nothing");
        assert_eq!(i.flows_held(), 0);
    }

    #[test]
    fn admission_asks_the_egress_and_admits_below_the_cle_threshold() {
        let mut i = ingress(IngressConfig::seed_default(0.5));
        let mut out = EdgeActions::default();
        assert_eq!(i.on_flow_request(ms(1), A, &req(7), &mut out), None);
        assert_eq!(
            out.messages,
            vec![EdgeMessage { from: ME, to: EG, aggregate: A, signal: Signal::AdmissionRequest { flow: FlowId(7) } }]
        );
        i.on_flow_request(ms(1), A, &req(8), &mut out);
        i.on_congestion_level(ms(3), A, Some(FlowId(7)), 0.49, &mut out);
        i.on_congestion_level(ms(3), A, Some(FlowId(8)), 0.5, &mut out);
        // A late duplicate answer is ignored.
        i.on_congestion_level(ms(4), A, Some(FlowId(8)), 0.0, &mut out);
        let d: Vec<(u32, bool)> = out.decisions.iter().map(|(f, d)| (f.0, d.admitted())).collect();
        assert_eq!(d, vec![(7, true), (8, false)], "admitted iff cle < threshold (0.5 is refused)");
        assert_eq!(out.decisions[1].1.reason().estimate, 0.5);
        let kinds: Vec<EventKind> = out.events.iter().map(|e| e.kind).collect();
        assert_eq!(kinds, vec![EventKind::Admit, EventKind::Reject]);
        // No egress known: refused at once.
        let d = i.on_flow_request(ms(5), AggregateId(3), &req(9), &mut out).unwrap();
        assert_eq!((d.admitted(), d.reason().rule), (false, "pcn_no_egress_known"));
    }

    #[test]
    fn packets_enter_the_domain_not_marked() {
        let mut i = ingress(IngressConfig::seed_default(0.5));
        let mut out = EdgeActions::default();
        let mut p = Packet::new(0, FlowId(0), 100, Time::ZERO);
        p.pcn = PcnMark::ExcessMarked;
        assert_eq!(i.on_packet(Time::ZERO, A, &mut p, &mut out), StageVerdict::Pass);
        assert_eq!(p.pcn, PcnMark::NotMarked);
    }

    #[test]
    fn state_machine_measures_one_interval_after_the_rate_then_terminates_to_it() {
        // 10 flows at 800 kb/s = 8 Mb/s; the egress says 5.6 Mb/s is sustainable:
        // excess 2.4 Mb/s = 3 flows exactly.
        let mut i = ingress(IngressConfig { flow_choice: FlowChoice::Largest, ..IngressConfig::seed_default(0.5) });
        let mut out = EdgeActions::default();
        cbr(&mut i, 10, 0, 200, &mut out);
        assert!(!i.measuring(A) && i.next_deadline().is_none(), "idle until a rate arrives");
        i.on_sustainable_rate(ms(200), A, 5_600_000.0, &mut out);
        assert_eq!(i.next_deadline(), Some(ms(300)));
        // A second rate during the interval replaces the first, and does not restart it.
        i.on_sustainable_rate(ms(250), A, 5_600_000.0, &mut out);
        assert_eq!(i.next_deadline(), Some(ms(300)));
        cbr(&mut i, 10, 200, 300, &mut out);
        assert!(out.terminate.is_empty(), "nothing before the interval ends");
        i.settle(ms(300), &mut out);
        assert_eq!(out.terminate, vec![FlowId(0), FlowId(1), FlowId(2)], "largest, ties by flow id");
        let round = out.events.iter().find(|e| e.kind == EventKind::Sample).unwrap();
        assert_eq!((round.estimate, round.threshold), (8_000_000.0, 5_600_000.0));
        assert!(!i.measuring(A), "left termination mode");
        // Their later packets are dropped; the others pass.
        assert_eq!(send(&mut i, ms(301), 1, 1000, &mut out), StageVerdict::Drop(DropReason::Terminated));
        assert_eq!(send(&mut i, ms(301), 3, 1000, &mut out), StageVerdict::Pass);
        assert_eq!(i.terminated(), 3);
        // A rate at or above what is sent terminates nothing.
        out.terminate.clear();
        i.on_sustainable_rate(ms(310), A, 6_000_000.0, &mut out);
        cbr(&mut i, 10, 310, 410, &mut out);
        i.settle(ms(410), &mut out);
        assert!(out.terminate.is_empty());
    }

    #[test]
    fn scripted_rates_drive_successive_rounds_with_up_and_down_rounding() {
        for (rounding, first, second) in [(Rounding::Up, 2, 1), (Rounding::Down, 1, 1)] {
            let mut i = ingress(IngressConfig {
                rounding,
                flow_choice: FlowChoice::Newest,
                ..IngressConfig::seed_default(0.5)
            });
            let mut out = EdgeActions::default();
            // 4 flows at 800 kb/s; excess 1.2 Mb/s = 1.5 flows.
            i.on_sustainable_rate(ms(0), A, 2_000_000.0, &mut out);
            cbr(&mut i, 4, 0, 100, &mut out);
            i.settle(ms(100), &mut out);
            assert_eq!(out.terminate.len(), first, "{rounding:?}");
            assert_eq!(out.terminate[0], FlowId(3), "newest first: flow 3 was seen last");
            // Next round: the rest must come down to 1.2 Mb/s (1.5 flows).
            let left = 4 - first;
            i.on_sustainable_rate(ms(100), A, 1_200_000.0, &mut out);
            cbr(&mut i, 4, 100, 200, &mut out);
            i.settle(ms(200), &mut out);
            assert_eq!(out.terminate.len() - first, second, "{rounding:?} with {left} flows left");
        }
    }

    #[test]
    fn random_choice_is_reproducible_from_the_stream_and_spreads_over_flows() {
        let run = |seed: u64| {
            let mut i = PcnIngress::new(IngressConfig::seed_default(0.5), ME, crate::rng::stream(seed, 0)).unwrap();
            i.set_egress(A, EG);
            let mut out = EdgeActions::default();
            i.on_sustainable_rate(ms(0), A, 4_000_000.0, &mut out);
            cbr(&mut i, 10, 0, 100, &mut out);
            i.settle(ms(100), &mut out);
            out.terminate
        };
        assert_eq!(run(3), run(3));
        assert_eq!(run(3).len(), 5);
        let distinct: std::collections::BTreeSet<Vec<FlowId>> = (0..20).map(run).collect();
        assert!(distinct.len() > 10, "{distinct:?}");
    }

    #[test]
    fn batches_cap_the_flows_per_round() {
        let mut i = ingress(IngressConfig { max_flows_per_round: Some(2), ..IngressConfig::seed_default(0.5) });
        let mut out = EdgeActions::default();
        i.on_sustainable_rate(ms(0), A, 0.0, &mut out);
        cbr(&mut i, 10, 0, 100, &mut out);
        i.settle(ms(100), &mut out);
        assert_eq!(out.terminate.len(), 2);
    }

    #[test]
    fn config_errors_name_the_field() {
        let err = |c: IngressConfig| PcnIngress::new(c, ME, crate::rng::stream(1, 0)).unwrap_err();
        for t in [0.0, 1.01, f64::NAN] {
            assert_eq!(err(IngressConfig::seed_default(t)).field, "cle_threshold");
        }
        assert_eq!(err(IngressConfig { interval: Dur::ZERO, ..IngressConfig::seed_default(0.5) }).field, "interval");
        let e = err(IngressConfig { max_flows_per_round: Some(0), ..IngressConfig::seed_default(0.5) });
        assert_eq!((e.mechanism, e.field), ("pcn_ingress", "max_flows_per_round"));
    }
}
