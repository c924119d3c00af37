//! [`ClassQueue`]: one physical queue managed as [Claypool00] Fig. 3 draws it,
//! assembled from parts that are each tested alone:
//!
//! ```text
//! arrival -> classifier (ClassMap) -> active-flow counter (if a part needs it)
//!         -> Aqm stage: RED | CBT | D-CBT   (averages, class tests, RED verdict, limit)
//!         -> Placement: Tail | ChIPS        (where the packet goes; class accounting)
//! departure <- head of the queue            (the placement updates its accounting)
//! ```
//!
//! The [`Placement`] decides the position of an admitted packet and keeps
//! the per-class occupancy that the class averages read: [`Tail`] appends
//! and counts the packets really queued (a plain FIFO's accounting);
//! [`Chips`] may cut a tagged packet in and keeps a virtual
//! FIFO instead. So ChIPS composes with RED, CBT and D-CBT without a flag
//! inside any of them.
//!
//! [`ClassQueueConfig`] names a combination and [`build`] makes it, boxed,
//! for drivers that pick the discipline from a scenario file.

use super::aqm::{Aqm, View};
use super::cbt::{Cbt, CbtConfig};
use super::chips::{Chips, ChipsConfig};
use super::classes::{Class, ClassBacklog, ClassMap, PerClass};
use super::dcbt::{Dcbt, DcbtConfig};
use super::flow_counter::{FlowCounter, FlowCounterConfig, FlowCounts};
use crate::error::ConfigError;
use crate::packet::Packet;
use crate::qdisc::red::{Outcome, RedStage};
use crate::qdisc::red::{RedConfig, RedMode};
use crate::qdisc::{Backlog, Dequeue, DropReason, Dropped, ProbeSink, Qdisc, Verdict};
use crate::rng::Rng;
use crate::units::{Rate, Time};
use std::collections::VecDeque;

/// Where admitted packets go, and the per-class accounting the class
/// averages read.
pub trait Placement: 'static {
    fn kind(&self) -> &'static str;
    /// Whether the placement needs active-flow counts.
    fn needs_flow_counts(&self) -> bool {
        false
    }
    /// The index (0 = head) at which `pkt` of `class` joins `queue`, given
    /// RED's average (in `mode`'s unit) and the active flows.
    fn position(
        &mut self,
        pkt: &Packet,
        class: Class,
        queue: &VecDeque<Packet>,
        red_avg: f64,
        mode: RedMode,
        flows: Option<&FlowCounts>,
    ) -> usize;
    /// A packet of `class` joined the queue (wherever it was placed).
    fn on_enqueue(&mut self, class: Class, pkt: &Packet);
    /// `pkt`, of `class`, left from the head of the queue.
    fn on_dequeue(&mut self, class: Class, pkt: &Packet);
    /// Per-class occupancy for the class averages.
    fn class_backlog(&self) -> &ClassBacklog;
    fn reset(&mut self);
    fn probe(&self, _flows: Option<&FlowCounts>, _sink: ProbeSink<'_>) {}
}

/// FIFO placement: every packet joins the tail; the accounting is the
/// packets really queued, per class.
#[derive(Clone, Debug, Default)]
pub struct Tail {
    classes: ClassBacklog,
}

impl Tail {
    pub fn new() -> Tail {
        Tail::default()
    }
}

impl Placement for Tail {
    fn kind(&self) -> &'static str {
        "fifo"
    }
    #[inline]
    fn position(
        &mut self,
        _: &Packet,
        _: Class,
        queue: &VecDeque<Packet>,
        _: f64,
        _: RedMode,
        _: Option<&FlowCounts>,
    ) -> usize {
        queue.len()
    }
    #[inline]
    fn on_enqueue(&mut self, class: Class, pkt: &Packet) {
        self.classes[class].add(pkt);
    }
    #[inline]
    fn on_dequeue(&mut self, class: Class, pkt: &Packet) {
        self.classes[class].sub(pkt);
    }
    fn class_backlog(&self) -> &ClassBacklog {
        &self.classes
    }
    fn reset(&mut self) {
        self.classes = ClassBacklog::default();
    }
}

/// Per-class arrival and verdict counters kept by [`ClassQueue`] (the
/// [`Queue`](crate::qdisc::Queue) wrapper keeps the per-reason totals).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClassCounters {
    pub arrivals: u64,
    pub admitted: u64,
    pub marked: u64,
    /// Drops by [`DropReason`] index.
    pub drops: [u64; DropReason::COUNT],
}

impl ClassCounters {
    pub fn total_drops(&self) -> u64 {
        self.drops.iter().sum()
    }
    pub fn drops_for(&self, r: DropReason) -> u64 {
        self.drops[r as usize]
    }
}

/// A RED-managed queue with an arrival stage `A` and a placement `P`.
pub struct ClassQueue<A: Aqm, P: Placement> {
    classes: ClassMap,
    flows: Option<FlowCounter>,
    aqm: A,
    placement: P,
    q: VecDeque<Packet>,
    backlog: Backlog,
    stats: PerClass<ClassCounters>,
}

impl<A: Aqm, P: Placement> std::fmt::Debug for ClassQueue<A, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClassQueue")
            .field("aqm", &self.aqm.kind())
            .field("placement", &self.placement.kind())
            .field("backlog", &self.backlog)
            .finish()
    }
}

impl<A: Aqm, P: Placement> ClassQueue<A, P> {
    /// Assembles a queue. A flow counter is made if `aqm` or `placement`
    /// needs one.
    pub fn new(aqm: A, placement: P, classes: ClassMap, flows: FlowCounterConfig) -> Result<Self, ConfigError> {
        classes.validate()?;
        let flows = if aqm.needs_flow_counts() || placement.needs_flow_counts() {
            Some(FlowCounter::new(flows)?)
        } else {
            None
        };
        Ok(ClassQueue {
            classes,
            flows,
            aqm,
            placement,
            q: VecDeque::with_capacity(64),
            backlog: Backlog::default(),
            stats: PerClass::default(),
        })
    }

    pub fn aqm(&self) -> &A {
        &self.aqm
    }
    pub fn placement(&self) -> &P {
        &self.placement
    }
    /// Active-flow counts, if the queue counts flows.
    pub fn flow_counts(&self) -> Option<&FlowCounts> {
        self.flows.as_ref().map(|f| f.counts())
    }
    pub fn flow_counter(&self) -> Option<&FlowCounter> {
        self.flows.as_ref()
    }
    /// Per-class occupancy as the class averages see it.
    pub fn class_backlog(&self) -> &ClassBacklog {
        self.placement.class_backlog()
    }
    /// Per-class counters.
    pub fn class_stats(&self) -> &PerClass<ClassCounters> {
        &self.stats
    }
    /// The queued packets, head first.
    pub fn packets(&self) -> impl Iterator<Item = &Packet> {
        self.q.iter()
    }
}

impl<A: Aqm + Send, P: Placement + Send> Qdisc for ClassQueue<A, P> {
    /// The stage's name, with `+chips` when ChIPS places the packets.
    fn kind(&self) -> &'static str {
        match (self.aqm.kind(), self.placement.kind()) {
            ("red", "chips") => "red+chips",
            ("cbt", "chips") => "cbt+chips",
            ("dcbt", "chips") => "dcbt+chips",
            (a, _) => a,
        }
    }

    fn enqueue(&mut self, now: Time, mut pkt: Packet, rng: &mut Rng) -> Verdict {
        let Some(class) = self.classes.classify(&pkt) else {
            return Verdict::Dropped(Dropped { packet: pkt, reason: DropReason::Unclassified });
        };
        if let Some(f) = &mut self.flows {
            f.on_packet(now, pkt.flow, class);
        }
        let flows = self.flows.as_ref().map(|f| f.counts());
        let view = View { class, backlog: self.backlog, classes: self.placement.class_backlog(), flows };
        let outcome = self.aqm.on_arrival(now, &mut pkt, &view, rng);
        let st = &mut self.stats[class];
        st.arrivals += 1;
        let verdict = match outcome {
            Outcome::Drop(reason) => {
                st.drops[reason as usize] += 1;
                return Verdict::Dropped(Dropped { packet: pkt, reason });
            }
            Outcome::Admit => Verdict::Queued,
            Outcome::AdmitMarked(r) => {
                st.marked += 1;
                Verdict::Marked(r)
            }
        };
        st.admitted += 1;
        let at = self.placement.position(&pkt, class, &self.q, self.aqm.red_avg(), self.aqm.mode(), flows);
        debug_assert!(at <= self.q.len());
        self.backlog.add(&pkt);
        self.placement.on_enqueue(class, &pkt);
        if at >= self.q.len() {
            self.q.push_back(pkt);
        } else {
            self.q.insert(at, pkt);
        }
        verdict
    }

    fn dequeue(&mut self, now: Time) -> Dequeue {
        match self.q.pop_front() {
            Some(p) => {
                self.backlog.sub(&p);
                // A packet admitted under one class keeps it: the map is fixed.
                let class = self.classes.classify(&p).unwrap_or(Class::Untagged);
                self.placement.on_dequeue(class, &p);
                Dequeue::Packet(p)
            }
            None => {
                self.aqm.on_idle(now);
                Dequeue::Empty
            }
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
        self.placement.reset();
        self.aqm.reset();
        self.q.drain(..).collect()
    }
    fn probe(&self, sink: ProbeSink<'_>) {
        let flows = self.flow_counts();
        self.aqm.probe(flows, sink);
        self.placement.probe(flows, sink);
        if let Some(f) = flows {
            sink("flows_tcp", f.tcp as f64);
            sink("flows_tagged", f.tagged as f64);
            sink("flows_untagged", f.untagged as f64);
        }
    }
    fn next_deadline(&self) -> Option<Time> {
        self.flows.as_ref().and_then(|f| f.next_deadline())
    }
    fn on_tick(&mut self, now: Time) {
        if let Some(f) = &mut self.flows {
            f.on_tick(now);
        }
    }
}

/// The arrival stage of a [`ClassQueueConfig`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AqmConfig {
    Red(RedConfig),
    Cbt(CbtConfig),
    Dcbt(DcbtConfig),
}

/// The placement of a [`ClassQueueConfig`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum PlacementConfig {
    #[default]
    Tail,
    Chips(ChipsConfig),
}

/// A whole queue: stage, placement, class map and flow counting.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClassQueueConfig {
    pub aqm: AqmConfig,
    pub placement: PlacementConfig,
    pub classes: ClassMap,
    pub flows: FlowCounterConfig,
}

impl ClassQueueConfig {
    /// `aqm` over a FIFO, default class map and 300 ms flow sweeps.
    pub fn new(aqm: AqmConfig) -> ClassQueueConfig {
        ClassQueueConfig {
            aqm,
            placement: PlacementConfig::Tail,
            classes: ClassMap::default(),
            flows: FlowCounterConfig::default(),
        }
    }
    pub fn validate(&self) -> Result<(), ConfigError> {
        match &self.aqm {
            AqmConfig::Red(c) => c.validate()?,
            AqmConfig::Cbt(c) => c.validate()?,
            AqmConfig::Dcbt(c) => c.validate()?,
        }
        if let PlacementConfig::Chips(c) = &self.placement {
            c.validate()?;
        }
        self.classes.validate()?;
        self.flows.validate()
    }
}

/// Builds the queue `cfg` describes, feeding a link of `link_rate`.
pub fn build(cfg: &ClassQueueConfig, link_rate: Rate) -> Result<Box<dyn Qdisc + Send>, ConfigError> {
    cfg.validate()?;
    fn boxed<A: Aqm + Send + 'static, P: Placement + Send + 'static>(
        a: A,
        p: P,
        cfg: &ClassQueueConfig,
    ) -> Result<Box<dyn Qdisc + Send>, ConfigError> {
        Ok(Box::new(ClassQueue::new(a, p, cfg.classes, cfg.flows)?))
    }
    match (cfg.aqm, cfg.placement) {
        (AqmConfig::Red(c), PlacementConfig::Tail) => boxed(RedStage::new(c, link_rate)?, Tail::new(), cfg),
        (AqmConfig::Red(c), PlacementConfig::Chips(p)) => boxed(RedStage::new(c, link_rate)?, Chips::new(p)?, cfg),
        (AqmConfig::Cbt(c), PlacementConfig::Tail) => boxed(Cbt::new(c, link_rate)?, Tail::new(), cfg),
        (AqmConfig::Cbt(c), PlacementConfig::Chips(p)) => boxed(Cbt::new(c, link_rate)?, Chips::new(p)?, cfg),
        (AqmConfig::Dcbt(c), PlacementConfig::Tail) => boxed(Dcbt::new(c, link_rate)?, Tail::new(), cfg),
        (AqmConfig::Dcbt(c), PlacementConfig::Chips(p)) => boxed(Dcbt::new(c, link_rate)?, Chips::new(p)?, cfg),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{ClassTag, FlowId};
    use crate::qdisc::{Limit, Queue};

    fn pkt(id: u64, flow: u32, class: Class) -> Packet {
        let mut p = Packet::new(id, FlowId(flow), 1000, Time(0));
        p.class = ClassTag(class as u8);
        p
    }

    fn red_fifo(limit: u32) -> ClassQueue<RedStage, Tail> {
        let red = RedStage::new(RedConfig::new(Limit::packets(limit), 5.0, 15.0), Rate::mbps(25)).unwrap();
        ClassQueue::new(red, Tail::new(), ClassMap::default(), FlowCounterConfig::default()).unwrap()
    }

    #[test]
    fn fifo_placement_counts_classes_and_serves_in_order() {
        let mut rng = crate::rng::stream(1, 0);
        let mut q = red_fifo(60);
        q.enqueue(Time(0), pkt(1, 1, Class::Tcp), &mut rng);
        q.enqueue(Time(0), pkt(2, 2, Class::Tagged), &mut rng);
        q.enqueue(Time(0), pkt(3, 3, Class::Untagged), &mut rng);
        q.enqueue(Time(0), pkt(4, 2, Class::Tagged), &mut rng);
        assert_eq!(q.class_backlog()[Class::Tagged].packets, 2);
        assert_eq!(q.class_backlog().total(), q.backlog());
        let Dequeue::Packet(p) = q.dequeue(Time(1)) else { panic!("empty") };
        assert_eq!(p.id, 1);
        assert_eq!(q.class_backlog()[Class::Tcp].packets, 0);
        assert_eq!(q.class_stats()[Class::Tagged].arrivals, 2);
        assert!(q.flow_counts().is_none(), "RED over a FIFO needs no flow counting");
    }

    #[test]
    fn dcbt_with_chips_probes_averages_thresholds_and_flow_counts() {
        let mut rng = crate::rng::stream(1, 0);
        let red = RedConfig::new(Limit::packets(60), 5.0, 15.0);
        let cfg = ClassQueueConfig {
            placement: PlacementConfig::Chips(ChipsConfig::default()),
            ..ClassQueueConfig::new(AqmConfig::Dcbt(DcbtConfig { red }))
        };
        let mut q = build(&cfg, Rate::mbps(25)).unwrap();
        assert_eq!(q.kind(), "dcbt+chips");
        q.enqueue(Time(0), pkt(1, 1, Class::Tcp), &mut rng);
        q.enqueue(Time(0), pkt(2, 2, Class::Tagged), &mut rng);
        q.enqueue(Time(0), pkt(3, 3, Class::Tcp), &mut rng);
        let mut seen = std::collections::BTreeMap::new();
        q.probe(&mut |name, v| {
            seen.insert(name, v);
        });
        let names: Vec<&str> = seen.keys().copied().collect();
        assert_eq!(
            names,
            [
                "chips_on",
                "flows_tagged",
                "flows_tcp",
                "flows_untagged",
                "red_avg",
                "tagged_avg",
                "tagged_share",
                "tagged_th",
                "threshold_test_on",
                "untagged_avg",
                "untagged_th"
            ]
        );
        assert_eq!(seen["flows_tcp"], 2.0);
        assert_eq!(seen["flows_tagged"], 1.0);
        assert!((seen["tagged_share"] - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(seen["tagged_th"], seen["red_avg"] / 3.0);
        assert_eq!(seen["untagged_th"], 0.0);
        assert_eq!(seen["chips_on"], 1.0);
        assert_eq!(q.next_deadline(), Some(Time(300_000_000)));
    }

    #[test]
    fn unknown_tag_without_default_is_unclassified() {
        let mut rng = crate::rng::stream(1, 0);
        let red = RedStage::new(RedConfig::new(Limit::packets(60), 5.0, 15.0), Rate::mbps(25)).unwrap();
        let map = ClassMap { unknown: None, ..ClassMap::default() };
        let mut q = ClassQueue::new(red, Tail::new(), map, FlowCounterConfig::default()).unwrap();
        let mut p = pkt(1, 1, Class::Tcp);
        p.class = ClassTag(7);
        assert!(matches!(
            q.enqueue(Time(0), p, &mut rng),
            Verdict::Dropped(Dropped { reason: DropReason::Unclassified, .. })
        ));
    }

    #[test]
    fn build_makes_every_combination_and_names_bad_fields() {
        let red = RedConfig::new(Limit::packets(60), 5.0, 15.0);
        let aqms = [AqmConfig::Red(red), AqmConfig::Cbt(CbtConfig::paper(red)), AqmConfig::Dcbt(DcbtConfig { red })];
        let placements = [PlacementConfig::Tail, PlacementConfig::Chips(ChipsConfig::default())];
        let mut rng = crate::rng::stream(1, 0);
        for a in aqms {
            for p in placements {
                let cfg = ClassQueueConfig { placement: p, ..ClassQueueConfig::new(a) };
                let mut q = Queue::new(build(&cfg, Rate::mbps(25)).unwrap());
                assert_eq!(q.enqueue(Time(0), pkt(1, 1, Class::Tagged), &mut rng), Verdict::Queued);
                assert_eq!(q.backlog().packets, 1);
            }
        }
        let bad = ClassQueueConfig {
            placement: PlacementConfig::Chips(ChipsConfig { max_tagged_share: 0.0, ..ChipsConfig::default() }),
            ..ClassQueueConfig::new(AqmConfig::Red(red))
        };
        let Err(e) = build(&bad, Rate::mbps(25)) else { panic!("a zero share must be refused") };
        assert_eq!(e.mechanism, "chips");
        assert_eq!(e.field, "max_tagged_share");
    }
}
