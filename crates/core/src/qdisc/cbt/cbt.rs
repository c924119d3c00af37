//! CBT, Class-Based Thresholds, "RED for all" (Parris, Jeffay & Smith
//! 1999; [Claypool00 §3], Fig. 2).
//!
//! Three classes: TCP, tagged (multimedia) UDP, untagged (other) UDP. Each
//! UDP class has a static threshold and a weighted average of the number of
//! its packets in the queue, updated only when a packet of that class
//! arrives. On an arrival of class `c`:
//!
//! ```text
//! if c is tagged or untagged UDP:
//!     avg_c <- (1 - w_q) avg_c + w_q n_c          (n_c: packets of class c queued, before this one)
//!     if avg_c > th_c: drop (ClassThreshold)      (RED's average is not updated)
//! RED (FJ93) for the survivors and for TCP: update RED's average, early / forced drop, limit
//! ```
//!
//! | parameter | unit | allowed | default (source) |
//! |---|---|---|---|
//! | `red` | RED settings | see [`crate::qdisc::red`] | min_th 5, max_th 15, max_p 0.1, limit 60 pkts [Claypool00 §5]; w_q 0.002 (interpretation: the paper's figure is lost; FJ93/ns-2 default) |
//! | `tagged_th` | packets (bytes in byte mode) | finite, ≥ 0 | 2.9 ([Claypool00 §5], `mmu_th`) |
//! | `untagged_th` | packets (bytes in byte mode) | finite, ≥ 0 | 0.6 ([Claypool00 §5], `udp_th`) |
//!
//! Interpretations:
//! - The class averages use RED's `w_q` and the same EWMA function
//!   ([`crate::qdisc::red::algo::update_avg`]). They take no idle decay: they move
//!   only on their own class's arrivals (the "unsynchronized updates" the
//!   [Claypool00 §6.1]'s and Fig. 9 analyse), each arrival sampling the class's
//!   current occupancy, which is 0 after an idle period.
//! - `n_c` counts packets of the class waiting in the queue as the
//!   placement accounts them (FIFO: the real queue; ChIPS: its virtual
//!   FIFO), not the one on the wire, as RED's `q` does.
//! - "Exceeds" is strict: a class average equal to its threshold passes.
//!   Thresholds are compared as real numbers (2.9 is not rounded to 3).
//! - The class test comes first and a packet it drops never reaches RED,
//!   so RED's average and count move only for TCP and surviving UDP
//!   packets ([Claypool00 §6.1]: "the RED unit updates its queue average for all
//!   incoming TCP packets and for UDP packets that passed").

use super::aqm::{Aqm, View};
use super::classes::Class;
use super::flow_counter::FlowCounts;
use crate::error::ConfigError;
use crate::packet::Packet;
use crate::qdisc::red::{algo, RedConfig, RedMode};
use crate::qdisc::red::{Outcome, RedStage};
use crate::qdisc::{DropReason, ProbeSink};
use crate::rng::Rng;
use crate::units::{Rate, Time};

/// CBT's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CbtConfig {
    pub red: RedConfig,
    /// Threshold of the tagged UDP class's average.
    pub tagged_th: f64,
    /// Threshold of the untagged UDP class's average.
    pub untagged_th: f64,
}

impl CbtConfig {
    /// `red` with the paper's thresholds: tagged 2.9, untagged 0.6 packets.
    pub fn paper(red: RedConfig) -> CbtConfig {
        CbtConfig { red, tagged_th: 2.9, untagged_th: 0.6 }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        self.red.validate().map_err(|e| ConfigError { mechanism: "cbt.red", ..e })?;
        for (field, v) in [("tagged_th", self.tagged_th), ("untagged_th", self.untagged_th)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(ConfigError::new(
                    "cbt",
                    field,
                    format!("({v}) must be a number >= 0 (an average queue occupancy)"),
                ));
            }
        }
        Ok(())
    }
}

/// CBT's own counters (RED's are in [`RedStage::stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CbtStats {
    pub tagged_threshold_drops: u64,
    pub untagged_threshold_drops: u64,
}

/// CBT as an arrival stage: class thresholds in front of RED.
#[derive(Clone, Debug)]
pub struct Cbt {
    config: CbtConfig,
    red: RedStage,
    tagged_avg: f64,
    untagged_avg: f64,
    stats: CbtStats,
}

impl Cbt {
    pub fn new(config: CbtConfig, link_rate: Rate) -> Result<Cbt, ConfigError> {
        config.validate()?;
        let red = RedStage::new(config.red, link_rate).map_err(|e| ConfigError { mechanism: "cbt.red", ..e })?;
        Ok(Cbt { config, red, tagged_avg: 0.0, untagged_avg: 0.0, stats: CbtStats::default() })
    }
    pub fn config(&self) -> &CbtConfig {
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
    pub fn stats(&self) -> &CbtStats {
        &self.stats
    }
}

impl Aqm for Cbt {
    fn kind(&self) -> &'static str {
        "cbt"
    }

    fn on_arrival(&mut self, now: Time, pkt: &mut Packet, view: &View<'_>, rng: &mut Rng) -> Outcome {
        let p = *self.red.params();
        let n = self.red.measure(view.classes[view.class]);
        let over = match view.class {
            Class::Tcp => false,
            Class::Tagged => {
                self.tagged_avg = algo::update_avg(&p, self.tagged_avg, n);
                self.tagged_avg > self.config.tagged_th
            }
            Class::Untagged => {
                self.untagged_avg = algo::update_avg(&p, self.untagged_avg, n);
                self.untagged_avg > self.config.untagged_th
            }
        };
        if over {
            match view.class {
                Class::Tagged => self.stats.tagged_threshold_drops += 1,
                _ => self.stats.untagged_threshold_drops += 1,
            }
            return Outcome::Drop(DropReason::ClassThreshold);
        }
        self.red.update_avg(now, view.backlog);
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
    fn probe(&self, _flows: Option<&FlowCounts>, sink: ProbeSink<'_>) {
        sink("red_avg", self.red.avg());
        sink("tagged_avg", self.tagged_avg);
        sink("untagged_avg", self.untagged_avg);
        sink("tagged_th", self.config.tagged_th);
        sink("untagged_th", self.config.untagged_th);
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

    fn pkt(id: u64, class: Class) -> Packet {
        let mut p = Packet::new(id, FlowId(class as u32), 1000, Time(0));
        p.class = ClassTag(class as u8);
        p
    }

    fn cbt(w_q: f64, tagged_th: f64, untagged_th: f64) -> ClassQueue<Cbt, Tail> {
        let red = RedConfig { w_q, ..RedConfig::new(Limit::packets(60), 5.0, 15.0) };
        let c = Cbt::new(CbtConfig { red, tagged_th, untagged_th }, Rate::mbps(25)).unwrap();
        ClassQueue::new(c, Tail::new(), ClassMap::default(), FlowCounterConfig::default()).unwrap()
    }

    #[test]
    fn cbt_drops_untagged_over_threshold_before_red_and_passes_tcp_to_red() {
        let mut rng = crate::rng::stream(1, 0);
        // w_q = 1: each average is the occupancy its arrival finds.
        let mut q = cbt(1.0, 10.0, 0.6);
        assert_eq!(q.enqueue(Time(0), pkt(1, Class::Untagged), &mut rng), Verdict::Queued); // avg 0
        let red_before = q.aqm().red_avg();
        let count_before = q.aqm().red().count();
        // One untagged packet queued: the average is 1 > 0.6.
        match q.enqueue(Time(1), pkt(2, Class::Untagged), &mut rng) {
            Verdict::Dropped(Dropped { reason: DropReason::ClassThreshold, packet }) => assert_eq!(packet.id, 2),
            v => panic!("expected a class-threshold drop, got {v:?}"),
        }
        assert_eq!(q.aqm().red_avg(), red_before, "a class drop must not reach RED");
        assert_eq!(q.aqm().red().count(), count_before);
        assert_eq!(q.aqm().stats().untagged_threshold_drops, 1);
        // TCP meets no class test: it reaches RED, whose average moves.
        assert_eq!(q.enqueue(Time(2), pkt(3, Class::Tcp), &mut rng), Verdict::Queued);
        assert_eq!(q.aqm().red_avg(), 1.0);
        // Fill the queue with TCP until RED (avg = q with w_q = 1) forces drops.
        let mut forced = 0;
        for i in 0..40 {
            if let Verdict::Dropped(d) = q.enqueue(Time(3 + i), pkt(10 + i, Class::Tcp), &mut rng) {
                assert_ne!(d.reason, DropReason::ClassThreshold);
                forced += (d.reason == DropReason::Forced) as u32;
            }
        }
        assert!(forced > 0);
        assert_eq!(q.class_stats()[Class::Tcp].drops_for(DropReason::ClassThreshold), 0);
    }

    #[test]
    fn cbt_class_averages_move_only_on_their_own_arrivals() {
        let mut rng = crate::rng::stream(1, 0);
        let mut q = cbt(0.5, 100.0, 100.0);
        q.enqueue(Time(0), pkt(1, Class::Tagged), &mut rng); // tagged avg: 0.5 * 0 = 0
        q.enqueue(Time(1), pkt(2, Class::Tagged), &mut rng); // 0.5 * 1 = 0.5
        assert_eq!(q.aqm().tagged_avg(), 0.5);
        for i in 0..5 {
            q.enqueue(Time(2 + i), pkt(3 + i, Class::Tcp), &mut rng);
        }
        assert_eq!(q.aqm().tagged_avg(), 0.5, "TCP arrivals leave the tagged average alone");
        assert_eq!(q.aqm().untagged_avg(), 0.0);
        q.enqueue(Time(9), pkt(9, Class::Untagged), &mut rng);
        assert_eq!(q.aqm().tagged_avg(), 0.5, "untagged arrivals leave it alone too");
        q.enqueue(Time(10), pkt(10, Class::Tagged), &mut rng); // 0.5 * 0.5 + 0.5 * 2
        assert_eq!(q.aqm().tagged_avg(), 1.25);
    }

    #[test]
    fn cbt_average_equal_to_threshold_passes() {
        let mut rng = crate::rng::stream(1, 0);
        let mut q = cbt(1.0, 1.0, 0.6);
        q.enqueue(Time(0), pkt(1, Class::Tagged), &mut rng);
        assert_eq!(q.enqueue(Time(1), pkt(2, Class::Tagged), &mut rng), Verdict::Queued); // avg 1 = th
        assert!(matches!(q.enqueue(Time(2), pkt(3, Class::Tagged), &mut rng), Verdict::Dropped(_)));
        // 2 > 1
    }

    #[test]
    fn cbt_config_errors_name_mechanism_field_and_value() {
        let red = RedConfig::new(Limit::packets(60), 5.0, 15.0);
        let e = Cbt::new(CbtConfig { untagged_th: -0.5, ..CbtConfig::paper(red) }, Rate::mbps(25)).unwrap_err();
        assert_eq!(e.to_string(), "cbt.untagged_th (-0.5) must be a number >= 0 (an average queue occupancy)");
        let bad_red = RedConfig { max_p: 2.0, ..red };
        let e = Cbt::new(CbtConfig::paper(bad_red), Rate::mbps(25)).unwrap_err();
        assert_eq!(e.to_string(), "cbt.red.max_p (2) must be in (0, 1]");
    }
}
