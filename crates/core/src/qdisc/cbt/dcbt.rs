//! D-CBT, Dynamic Class-Based Thresholds (Claypool & Chung, [Claypool00]
//! §3.1, Fig. 3): CBT whose UDP thresholds follow the share of active flows
//! in each class, with all averages updated together.
//!
//! On every arrival, of any class, after the flow counter has seen it:
//!
//! ```text
//! step: RED's average moves (EWMA on q, or idle decay), and both class
//!       averages move by the same step with the same weight:
//!     red_avg      <- step(red_avg, q)
//!     tagged_avg   <- step(tagged_avg, n_tagged)       (packets of the class queued)
//!     untagged_avg <- step(untagged_avg, n_untagged)
//! if red_avg > min_th and the packet is UDP:           (the test is off otherwise)
//!     tagged_th   = red_avg * N_tagged / N
//!     untagged_th = (min_th + max_p (max_th - min_th)) * N_untagged / N
//!     drop (ClassThreshold) if its class average > its threshold
//! RED (FJ93) for the survivors and for TCP: verdict, then the limit
//! ```
//!
//! `N_c` are the active flows of each class and `N` all active flows
//! ([`super::FlowCounter`]), the arriving packet's flow included.
//!
//! | parameter | unit | allowed | default (source) |
//! |---|---|---|---|
//! | `red` | RED settings | see [`crate::qdisc::red`] | min_th 5, max_th 15, max_p 0.1, limit 60 pkts [Claypool00 §5]; w_q 0.002 (interpretation) |
//! | flow-count interval | time | > 0 | 300 ms ([Claypool00 §3.1]; set on the queue) |
//!
//! Interpretations:
//! - `w_q = 0.002`: the figure holding the paper's RED parameters is lost;
//!   0.002 is FJ93's and ns-2's default.
//! - A class average counts the packets of that class waiting in the queue,
//!   as the placement accounts them (FIFO: the real queue; ChIPS: the
//!   virtual FIFO), sampled before the arriving packet joins, like RED's `q`.
//!   In byte mode it counts bytes, and the thresholds are in bytes.
//! - After an idle period the class averages decay by RED's idle factor
//!   `(1 - w_q)^m`, the same step as RED's average, so that the three stay
//!   in the ratio the paper relies on ("updated using the same weight").
//! - A packet dropped by the class test has still moved all three averages
//!   (they are updated "for every incoming packet") but not RED's count.
//! - The untagged allowance is `max_p (max_th - min_th)` exactly: the paper's
//!   "10% of (red_max - red_min) when the maximum early drop rate is 0.1".
//! - Thresholds and averages are compared as real numbers; "exceeds" is
//!   strict. With no active flow (impossible at an arrival, which is
//!   counted first) there is no test.

use super::aqm::{Aqm, View};
use super::classes::Class;
use super::flow_counter::FlowCounts;
use crate::error::ConfigError;
use crate::packet::Packet;
use crate::qdisc::red::{algo::RedParams, RedConfig, RedMode};
use crate::qdisc::red::{Outcome, RedStage};
use crate::qdisc::{DropReason, ProbeSink};
use crate::rng::Rng;
use crate::units::{Rate, Time};

/// D-CBT's settings: RED's. The thresholds need no setting.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DcbtConfig {
    pub red: RedConfig,
}

impl DcbtConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.red.validate().map_err(|e| ConfigError { mechanism: "dcbt.red", ..e })
    }
}

/// The tagged class's fair threshold: `red_avg * N_tagged / N`.
pub fn tagged_threshold(red_avg: f64, flows: &FlowCounts) -> Option<f64> {
    flows.share(Class::Tagged).map(|s| red_avg * s)
}

/// The untagged class's fair threshold:
/// `(min_th + max_p (max_th - min_th)) * N_untagged / N`.
pub fn untagged_threshold(p: &RedParams, flows: &FlowCounts) -> Option<f64> {
    flows.share(Class::Untagged).map(|s| (p.min_th + p.max_p * (p.max_th - p.min_th)) * s)
}

/// D-CBT's own counters (RED's are in [`RedStage::stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DcbtStats {
    pub tagged_threshold_drops: u64,
    pub untagged_threshold_drops: u64,
    /// UDP arrivals that met the class test (RED's average above min_th).
    pub tested: u64,
}

/// D-CBT as an arrival stage.
#[derive(Clone, Debug)]
pub struct Dcbt {
    config: DcbtConfig,
    red: RedStage,
    tagged_avg: f64,
    untagged_avg: f64,
    stats: DcbtStats,
}

impl Dcbt {
    pub fn new(config: DcbtConfig, link_rate: Rate) -> Result<Dcbt, ConfigError> {
        config.validate()?;
        let red = RedStage::new(config.red, link_rate).map_err(|e| ConfigError { mechanism: "dcbt.red", ..e })?;
        Ok(Dcbt { config, red, tagged_avg: 0.0, untagged_avg: 0.0, stats: DcbtStats::default() })
    }
    pub fn config(&self) -> &DcbtConfig {
        &self.config
    }
    pub fn red(&self) -> &RedStage {
        &self.red
    }
    pub fn tagged_avg(&self) -> f64 {
        self.tagged_avg
    }
    pub fn untagged_avg(&self) -> f64 {
        self.untagged_avg
    }
    pub fn stats(&self) -> &DcbtStats {
        &self.stats
    }
    /// Is the class test on (RED's average above `min_th`)?
    pub fn test_on(&self) -> bool {
        self.red.avg() > self.red.params().min_th
    }
    /// The thresholds `(tagged, untagged)` for `flows` at RED's current average.
    pub fn thresholds(&self, flows: &FlowCounts) -> Option<(f64, f64)> {
        Some((tagged_threshold(self.red.avg(), flows)?, untagged_threshold(self.red.params(), flows)?))
    }
}

impl Aqm for Dcbt {
    fn kind(&self) -> &'static str {
        "dcbt"
    }
    fn needs_flow_counts(&self) -> bool {
        true
    }

    fn on_arrival(&mut self, now: Time, pkt: &mut Packet, view: &View<'_>, rng: &mut Rng) -> Outcome {
        let step = self.red.update_avg(now, view.backlog);
        let n_tagged = self.red.measure(view.classes[Class::Tagged]);
        let n_untagged = self.red.measure(view.classes[Class::Untagged]);
        self.tagged_avg = self.red.follow(step, self.tagged_avg, n_tagged);
        self.untagged_avg = self.red.follow(step, self.untagged_avg, n_untagged);
        if view.class != Class::Tcp && self.test_on() {
            if let Some((tagged_th, untagged_th)) = view.flows.and_then(|f| self.thresholds(f)) {
                self.stats.tested += 1;
                let over = match view.class {
                    Class::Tagged => self.tagged_avg > tagged_th,
                    _ => self.untagged_avg > untagged_th,
                };
                if over {
                    match view.class {
                        Class::Tagged => self.stats.tagged_threshold_drops += 1,
                        _ => self.stats.untagged_threshold_drops += 1,
                    }
                    return Outcome::Drop(DropReason::ClassThreshold);
                }
            }
        }
        self.red.judge(pkt, view.backlog, rng)
    }
    fn on_idle(&mut self, now: Time) {
        self.red.on_idle(now)
    }
    fn red_avg(&self) -> f64 {
        self.red.avg()
    }
    fn mode(&self) -> RedMode {
        self.red.config().mode
    }
    fn reset(&mut self) {
        self.red.reset();
        self.tagged_avg = 0.0;
        self.untagged_avg = 0.0;
    }
    fn probe(&self, flows: Option<&FlowCounts>, sink: ProbeSink<'_>) {
        sink("red_avg", self.red.avg());
        sink("tagged_avg", self.tagged_avg);
        sink("untagged_avg", self.untagged_avg);
        if let Some((t, u)) = flows.and_then(|f| self.thresholds(f)) {
            sink("tagged_th", t);
            sink("untagged_th", u);
        }
        sink("threshold_test_on", self.test_on() as u8 as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::super::classes::ClassMap;
    use super::super::flow_counter::FlowCounterConfig;
    use super::super::queue::{ClassQueue, Tail};
    use super::*;
    use crate::packet::{ClassTag, FlowId};
    use crate::qdisc::{Dropped, Limit, Qdisc, Verdict};

    fn pkt(id: u64, flow: u32, class: Class) -> Packet {
        let mut p = Packet::new(id, FlowId(flow), 1000, Time(0));
        p.class = ClassTag(class as u8);
        p
    }
    fn red(w_q: f64, min_th: f64, max_th: f64) -> RedConfig {
        RedConfig { w_q, ..RedConfig::new(Limit::packets(60), min_th, max_th) }
    }
    fn params() -> RedParams {
        RedConfig::new(Limit::packets(60), 5.0, 15.0).params()
    }
    fn dcbt(red: RedConfig) -> ClassQueue<Dcbt, Tail> {
        let d = Dcbt::new(DcbtConfig { red }, Rate::mbps(25)).unwrap();
        ClassQueue::new(d, Tail::new(), ClassMap::default(), FlowCounterConfig::default()).unwrap()
    }

    #[test]
    fn dcbt_thresholds_follow_the_flow_shares() {
        // The paper's 10-20 s mix: 25 TCP, 10 tagged, 2 untagged flows.
        let f = FlowCounts { tcp: 25, tagged: 10, untagged: 2 };
        let t = tagged_threshold(8.0, &f).unwrap();
        assert!((t - 8.0 * 10.0 / 37.0).abs() < 1e-12);
        // (5 + 0.1 * (15 - 5)) * 2 / 37 = 6 * 2 / 37
        let u = untagged_threshold(&params(), &f).unwrap();
        assert!((u - 12.0 / 37.0).abs() < 1e-12);
        // 20-30 s: 55 TCP join the 10 tagged and 2 untagged.
        let f = FlowCounts { tcp: 55, tagged: 10, untagged: 2 };
        assert!((tagged_threshold(10.0, &f).unwrap() - 100.0 / 67.0).abs() < 1e-12);
        assert!((untagged_threshold(&params(), &f).unwrap() - 12.0 / 67.0).abs() < 1e-12);
        assert_eq!(tagged_threshold(10.0, &FlowCounts::default()), None);
    }

    #[test]
    fn dcbt_updates_every_average_on_every_arrival() {
        let mut rng = crate::rng::stream(1, 0);
        let mut q = dcbt(red(0.5, 50.0, 60.0));
        q.enqueue(Time(0), pkt(1, 1, Class::Tagged), &mut rng); // all averages 0
        q.enqueue(Time(1), pkt(2, 2, Class::Untagged), &mut rng); // tagged: 0.5 * 1
        assert_eq!(q.aqm().tagged_avg(), 0.5);
        q.enqueue(Time(2), pkt(3, 3, Class::Tcp), &mut rng); // a TCP arrival moves both class averages
        assert_eq!(q.aqm().tagged_avg(), 0.75);
        assert_eq!(q.aqm().untagged_avg(), 0.5);
        assert_eq!(q.aqm().red_avg(), 0.5 * 0.5 + 0.5 * 2.0);
    }

    #[test]
    fn dcbt_class_averages_decay_with_red_over_idle_time() {
        let mut rng = crate::rng::stream(1, 0);
        let mut q = dcbt(red(0.5, 50.0, 60.0));
        q.enqueue(Time(0), pkt(1, 1, Class::Tagged), &mut rng);
        q.enqueue(Time(0), pkt(2, 1, Class::Tagged), &mut rng);
        q.enqueue(Time(0), pkt(3, 1, Class::Tagged), &mut rng);
        let (red, tagged) = (q.aqm().red_avg(), q.aqm().tagged_avg());
        assert_eq!(red, tagged);
        while let crate::qdisc::Dequeue::Packet(_) = q.dequeue(Time(10)) {}
        // Idle from 10 ns; 640 us later is m = 2 packet times at 25 Mb/s.
        q.enqueue(Time(10 + 640_000), pkt(4, 2, Class::Tcp), &mut rng);
        assert!((q.aqm().red_avg() - red * 0.25).abs() < 1e-12);
        assert!((q.aqm().tagged_avg() - tagged * 0.25).abs() < 1e-12);
    }

    #[test]
    fn dcbt_test_is_off_while_red_avg_is_at_most_min_th() {
        let mut rng = crate::rng::stream(1, 0);
        // w_q = 1 makes RED's average the queue length; min_th = 3.
        let mut q = dcbt(red(1.0, 3.0, 15.0));
        // One untagged flow and one TCP flow: untagged_th = (3 + 0.1 * 12) / 2 = 2.1.
        q.enqueue(Time(0), pkt(1, 1, Class::Tcp), &mut rng);
        for i in 0..3 {
            // The untagged average reaches 1, 2 while RED's stays <= 3: no test.
            assert_eq!(q.enqueue(Time(1 + i), pkt(2 + i, 2, Class::Untagged), &mut rng), Verdict::Queued);
        }
        assert_eq!(q.aqm().stats().tested, 0);
        // Now q = 4: RED's average 4 > 3, untagged average 3 > 2.1: dropped by the class test.
        match q.enqueue(Time(5), pkt(9, 2, Class::Untagged), &mut rng) {
            Verdict::Dropped(Dropped { reason: DropReason::ClassThreshold, .. }) => {}
            v => panic!("expected a class-threshold drop, got {v:?}"),
        }
        assert_eq!(q.aqm().stats().untagged_threshold_drops, 1);
        assert!(q.aqm().test_on());
    }

    #[test]
    fn dcbt_tagged_test_uses_red_avg_times_tagged_share() {
        let mut rng = crate::rng::stream(1, 0);
        // max_p ~ 0 keeps RED's own early drops out of the way.
        let mut q = dcbt(RedConfig { max_p: 1e-12, ..red(1.0, 1.0, 15.0) });
        // Flows: 3 TCP, 1 tagged. Queue: 3 TCP then tagged packets.
        for i in 0..3 {
            q.enqueue(Time(i), pkt(i, 10 + i as u32, Class::Tcp), &mut rng);
        }
        // Tagged 1: q = 3, red_avg 3 > 1, tagged_th = 3 / 4 = 0.75, tagged_avg 0: passes.
        assert_eq!(q.enqueue(Time(3), pkt(3, 1, Class::Tagged), &mut rng), Verdict::Queued);
        // Tagged 2: red_avg 4, tagged_th = 1, tagged_avg 1: equal, passes.
        assert_eq!(q.enqueue(Time(4), pkt(4, 1, Class::Tagged), &mut rng), Verdict::Queued);
        let th = q.aqm().thresholds(q.flow_counts().unwrap()).unwrap().0;
        assert!((th - 1.0).abs() < 1e-12);
        // Tagged 3: red_avg 5, tagged_th = 1.25, tagged_avg 2: dropped.
        assert!(matches!(
            q.enqueue(Time(5), pkt(5, 1, Class::Tagged), &mut rng),
            Verdict::Dropped(Dropped { reason: DropReason::ClassThreshold, .. })
        ));
    }

    #[test]
    fn dcbt_config_error_names_dcbt_red() {
        let red = RedConfig { w_q: 0.0, ..RedConfig::new(Limit::packets(60), 5.0, 15.0) };
        let e = Dcbt::new(DcbtConfig { red }, Rate::mbps(25)).unwrap_err();
        assert_eq!(e.to_string(), "dcbt.red.w_q (0) must be in (0, 1]");
    }
}
