//! RED's arrival side as a stage over [`super::algo`], split from the
//! queue itself so that RED and the CBT family can each sit over any
//! placement (FIFO or ChIPS).
//!
//! [`RedStage`] is RED (either variant, [`super::RedVariant`]) built from
//! the pure functions of [`super::algo`]: idle decay or EWMA, then the
//! verdict, then the physical limit. It is the one implementation of RED's
//! arrival side: [`super::Red`] is a `RedStage` over a FIFO, CBT and D-CBT
//! hold a `RedStage` and add their class tests in front of it (through the
//! [`crate::qdisc::cbt::Aqm`] interface), and a
//! [`ClassQueue`](crate::qdisc::cbt::ClassQueue) over `RedStage` and the
//! FIFO placement behaves exactly as `Red` (a property test checks
//! verdicts, packets, averages, counts and statistics).
//!
//! [`AvgStep`] records which step moved RED's average at an arrival, so
//! that D-CBT can move its class averages by the very same step ("all of the
//! averages are updated using the same weight", [Claypool00 §3.1]).

use super::{algo, RedConfig, RedMode, RedStats};
use crate::error::ConfigError;
use crate::packet::{Ecn, Packet};
use crate::qdisc::{Backlog, DropReason, MarkReason};
use crate::rng::Rng;
use crate::units::{Dur, Rate, Time};
use rand::Rng as _;

/// A stage's decision on one arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Admit,
    /// Admitted with CE set (the stage has already set it on the packet).
    AdmitMarked(MarkReason),
    Drop(DropReason),
}

/// How RED's average moved at an arrival.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AvgStep {
    /// `avg <- avg + w_q (q - avg)`.
    Ewma,
    /// The queue had been idle this long: `avg <- (1 - w_q)^(idle / s) avg`
    /// (Ns2: `floor(idle / s)` steps, then one EWMA step; see
    /// [`algo::after_idle`]).
    Idle(Dur),
}

/// RED as a stage over [`crate::qdisc::red::algo`]; [`crate::qdisc::red::Red`] is one over a FIFO.
#[derive(Clone, Debug)]
pub struct RedStage {
    config: RedConfig,
    params: algo::RedParams,
    vars: algo::RedVars,
    /// Transmission time of `mean_pkt_size` (FJ93's `s`).
    pkt_time: Dur,
    idle_since: Option<Time>,
    stats: RedStats,
    /// The uniform number drawn for the last arrival, if one was drawn.
    last_uniform: Option<f64>,
}

impl RedStage {
    /// RED feeding a link of `link_rate` (needed for the idle decay).
    pub fn new(config: RedConfig, link_rate: Rate) -> Result<RedStage, ConfigError> {
        config.validate()?;
        if link_rate.0 == 0 {
            return Err(ConfigError::new("red", "link_rate", "(0 bit/s) must be positive"));
        }
        Ok(RedStage {
            params: config.params(),
            config,
            vars: algo::RedVars::default(),
            pkt_time: link_rate.tx_time(config.mean_pkt_size),
            idle_since: Some(Time::ZERO),
            stats: RedStats::default(),
            last_uniform: None,
        })
    }

    pub fn config(&self) -> &RedConfig {
        &self.config
    }
    pub fn params(&self) -> &algo::RedParams {
        &self.params
    }
    pub fn avg(&self) -> f64 {
        self.vars.avg
    }
    pub fn count(&self) -> i64 {
        self.vars.count
    }
    pub fn stats(&self) -> &RedStats {
        &self.stats
    }
    /// The average, count and (Ns2) `old` flag.
    pub fn vars(&self) -> &algo::RedVars {
        &self.vars
    }
    /// The uniform number drawn at the last arrival (only where a
    /// probabilistic decision was due).
    pub fn last_uniform(&self) -> Option<f64> {
        self.last_uniform
    }

    /// `backlog` in RED's unit (packets, or bytes in byte mode).
    #[inline]
    pub fn measure(&self, backlog: Backlog) -> f64 {
        match self.config.mode {
            RedMode::Packets => backlog.packets as f64,
            RedMode::Bytes => backlog.bytes as f64,
        }
    }

    /// Moves RED's average for an arrival finding `backlog` queued (FJ93
    /// Fig. 2): decay over the idle period if the queue was idle (Ns2: then
    /// one EWMA step), else EWMA.
    /// Returns the step taken, for averages that must follow it.
    pub fn update_avg(&mut self, now: Time, backlog: Backlog) -> AvgStep {
        let step = match self.idle_since.take() {
            Some(t0) if backlog.is_empty() => AvgStep::Idle(now.since(t0)),
            _ => AvgStep::Ewma,
        };
        self.vars.avg = self.follow(step, self.vars.avg, self.measure(backlog));
        step
    }

    /// Applies `step` to another average whose current sample is `q`, with
    /// RED's weight: how D-CBT keeps its class averages in step with RED's.
    #[inline]
    pub fn follow(&self, step: AvgStep, avg: f64, q: f64) -> f64 {
        match step {
            AvgStep::Ewma => algo::update_avg(&self.params, avg, q),
            AvgStep::Idle(idle) => algo::after_idle(&self.params, avg, idle, self.pkt_time, q),
        }
    }

    /// RED's verdict on `pkt` with the average already updated, then the
    /// physical limit against `backlog` (the packets waiting before it).
    /// An ECN mark that the limit then overrides is not counted.
    pub fn judge(&mut self, pkt: &mut Packet, backlog: Backlog, rng: &mut Rng) -> Outcome {
        let scale = match self.config.mode {
            RedMode::Packets => 1.0,
            RedMode::Bytes => pkt.size as f64 / self.config.mean_pkt_size.0 as f64,
        };
        let q = self.measure(backlog);
        let mut drawn = None;
        let action = algo::decide(&self.params, &mut self.vars, q, scale, || {
            let u = rng.random::<f64>();
            drawn = Some(u);
            u
        });
        self.last_uniform = drawn;
        let mut outcome = Outcome::Admit;
        match action {
            algo::Action::Pass => {}
            algo::Action::Early if self.config.ecn && pkt.ecn.is_ect() => {
                pkt.ecn = Ecn::Ce;
                self.stats.marked += 1;
                outcome = Outcome::AdmitMarked(MarkReason::EcnEarly);
            }
            algo::Action::Early => {
                self.stats.early += 1;
                return Outcome::Drop(DropReason::EarlyRandom);
            }
            algo::Action::Forced => {
                self.stats.forced += 1;
                return Outcome::Drop(DropReason::Forced);
            }
        }
        if self.config.limit.would_exceed(backlog, pkt.size) {
            self.vars.count = 0;
            self.stats.overlimit += 1;
            if matches!(outcome, Outcome::AdmitMarked(_)) {
                self.stats.marked -= 1;
            }
            return Outcome::Drop(DropReason::Overlimit);
        }
        outcome
    }

    /// The queue was found empty: the idle period starts now (if not already).
    pub fn on_idle(&mut self, now: Time) {
        if self.idle_since.is_none() {
            self.idle_since = Some(now);
        }
    }

    pub fn reset(&mut self) {
        self.vars = algo::RedVars::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::FlowId;
    use crate::qdisc::Limit;

    fn stage(cfg: RedConfig) -> RedStage {
        RedStage::new(cfg, Rate::mbps(25)).unwrap()
    }

    #[test]
    fn red_stage_follows_the_ewma_then_decays_when_idle() {
        let mut r = stage(RedConfig { w_q: 0.5, ..RedConfig::new(Limit::packets(60), 5.0, 15.0) });
        // The first arrival finds an idle queue (since t = 0) with avg 0.
        assert_eq!(r.update_avg(Time(0), Backlog::default()), AvgStep::Idle(Dur(0)));
        let four = Backlog { packets: 4, bytes: 4000 };
        assert_eq!(r.update_avg(Time(1), four), AvgStep::Ewma);
        assert_eq!(r.avg(), 2.0);
        r.on_idle(Time(1_000));
        r.on_idle(Time(5_000)); // the idle period started at 1 us, not 5 us
        let step = r.update_avg(Time(1_000 + 640_000), Backlog::default()); // s = 320 us: m = 2
        assert_eq!(step, AvgStep::Idle(Dur(640_000)));
        assert!((r.avg() - 0.5).abs() < 1e-12);
        // Another average follows the same step.
        assert!((r.follow(step, 8.0, 0.0) - 2.0).abs() < 1e-12);
        assert_eq!(r.follow(AvgStep::Ewma, 1.0, 3.0), 2.0);
    }

    #[test]
    fn red_stage_drops_over_the_limit_and_resets_count() {
        let mut rng = crate::rng::stream(1, 0);
        let mut r = stage(RedConfig::new(Limit::packets(2), 5.0, 15.0));
        let mut p = Packet::new(1, FlowId(0), 1000, Time(0));
        let full = Backlog { packets: 2, bytes: 2000 };
        r.update_avg(Time(0), full);
        assert_eq!(r.judge(&mut p, full, &mut rng), Outcome::Drop(DropReason::Overlimit));
        assert_eq!(r.count(), 0);
        assert_eq!(r.stats().overlimit, 1);
    }

    #[test]
    fn red_stage_refuses_a_zero_link_rate() {
        let e = RedStage::new(RedConfig::new(Limit::packets(60), 5.0, 15.0), Rate(0)).unwrap_err();
        assert_eq!(e.field, "link_rate");
    }
}
