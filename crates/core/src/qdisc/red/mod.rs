//! RED: Random Early Detection (Floyd & Jacobson 1993, "Random Early
//! Detection Gateways for Congestion Avoidance", IEEE/ACM ToN 1(4)).
//! [Claypool00] uses it as the baseline and as the core of CBT, D-CBT and
//! ChIPS (it describes RED in §1, builds CBT/D-CBT on its average in §3 and
//! §3.1, gives min_th 5 / max_th 15 in §3.2 and §6.3 and the 60-packet
//! queue in §5; its §2 omits queue management); those reuse the pure
//! functions in [`algo`], as Linux's `red.h` serves red, choke and gred.
//! See `docs/mechanisms/red.md`.
//!
//! On every arrival (FJ93 §4, Fig. 2):
//!
//! ```text
//! if the queue is non-empty (or the link is still busy):
//!     avg <- (1 - w_q) * avg + w_q * q                        (q: packets, or bytes in byte mode)
//! else (idle since q_time):
//!     m   <- (now - q_time) / s                              (s: transmission time of mean_pkt_size)
//!     avg <- (1 - w_q)^m * avg
//! if min_th <= avg < max_th:
//!     count <- count + 1
//!     p_b   <- max_p * (avg - min_th) / (max_th - min_th)
//!     p_b   <- p_b * size / mean_pkt_size                    (byte mode only, FJ93 §4)
//!     p_a   <- p_b / (1 - count * p_b)                       (1 when count * p_b >= 1)
//!     with probability p_a: drop (or ECN-mark), count <- 0
//! else if avg >= max_th:                                     (gentle: if avg >= 2 max_th)
//!     drop, count <- 0
//! else: count <- -1
//! gentle, max_th <= avg < 2 max_th:
//!     p_b <- max_p + (1 - max_p) * (avg - max_th) / max_th, then spaced as above
//! ```
//!
//! A packet that would take the backlog over `limit` is dropped
//! (`Overlimit`) after the average is updated, and resets `count` to 0.
//!
//! That is `variant = floyd93` (the default). `variant = ns2` is RED as
//! ns-2's `queue/red.cc` and ns-3's `RedQueueDisc` run it (with `wait_`):
//!
//! ```text
//! average after idle:  avg <- (1 - w_q)^floor(idle / s) * avg, then avg <- (1 - w_q) * avg + w_q * q
//! count <- count + 1   (every arrival)
//! if avg >= min_th and q > 1:
//!     if avg >= max_th (gentle: 2 max_th):  drop, count <- 0
//!     else if not old:                      old <- true, count <- 1, pass
//!     else:  p_a <- 0 if count p_b < 1; p_b / (2 - count p_b) if count p_b < 2; else 1
//!            p_a <- p_a * size / mean_pkt_size when p_a < 1 (byte mode)
//!            with probability p_a: drop (or ECN-mark), count <- 0
//! else: old <- false, pass
//! ```
//!
//! `Red` is a [`RedStage`] (the arrival side shared with CBT, D-CBT and
//! ChIPS) over a FIFO, so the rules above live in one place ([`algo`]).
//!
//! | parameter | unit | allowed | default (source) |
//! |---|---|---|---|
//! | `limit` | packets and/or bytes | ≥ 1 | none: required |
//! | `min_th` | packets (bytes in byte mode) | ≥ 0, < `max_th` | none: required |
//! | `max_th` | packets (bytes) | > `min_th` | none: required |
//! | `max_p` | probability | (0, 1] | 0.1 (FJ93 simulations, ns-2) |
//! | `w_q` | weight | (0, 1] | 0.002 (FJ93 §5, ns-2) |
//! | `gentle` | flag | | false (FJ93; gentle is Floyd 2000) |
//! | `ecn` | flag | | false: ECT packets are marked instead of early-dropped |
//! | `mode` | packets or bytes | | packets |
//! | `mean_pkt_size` | bytes | ≥ 1 | 1000 B (ns-2 `mean_pktsize_`) |
//! | `variant` | `floyd93` or `ns2` | | `floyd93` (the paper; `ns2` is ns-2's implementation) |
//! | link rate | bit/s | > 0 | given by the link the queue feeds |
//!
//! Interpretations (also in `docs/decisions/red.md#red`):
//! - `q` counts packets waiting in this queue, not the one on the wire
//!   (Linux semantics). The idle period starts when `dequeue` finds the
//!   queue empty, which the simulator does when the link finishes sending.
//! - In the forced region ECN-capable packets are dropped, not marked
//!   (FJ93 "mark" = drop; RFC 3168 §7 leaves forced marking optional).
//! - Gentle mode applies the count spacing in the gentle region too (ns-2).
//! - Inside strict priority the scheduler polls empty bands too, so a RED
//!   band still sees its queue found empty and decays (see classful.rs).

use crate::error::ConfigError;
use crate::packet::Packet;
use crate::qdisc::{Backlog, Dequeue, Dropped, Limit, ProbeSink, Qdisc, Verdict};
use crate::rng::Rng;
use crate::units::{Bytes, Rate, Time};
use std::collections::VecDeque;

pub mod algo;
pub mod stage;

pub use algo::RedVariant;
pub use stage::{AvgStep, Outcome, RedStage};

/// How the queue is measured for thresholds and the average.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RedMode {
    #[default]
    Packets,
    Bytes,
}

/// Default `max_p` (FJ93 simulations, ns-2).
pub const DEFAULT_MAX_P: f64 = 0.1;
/// Default `w_q` (FJ93 §5, ns-2).
pub const DEFAULT_W_Q: f64 = 0.002;
/// Default `mean_pkt_size` (ns-2 `mean_pktsize_`).
pub const DEFAULT_MEAN_PKT_SIZE: Bytes = Bytes(1000);

/// RED's settings. Validated by [`RedConfig::validate`], called by [`Red::new`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedConfig {
    pub limit: Limit,
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub w_q: f64,
    pub gentle: bool,
    pub ecn: bool,
    pub mode: RedMode,
    pub mean_pkt_size: Bytes,
    /// The 1993 paper's algorithm or ns-2's (see [`algo`]).
    pub variant: RedVariant,
}

impl RedConfig {
    /// The FJ93 defaults around the given thresholds and limit.
    pub fn new(limit: Limit, min_th: f64, max_th: f64) -> RedConfig {
        RedConfig {
            limit,
            min_th,
            max_th,
            max_p: 0.1,
            w_q: 0.002,
            gentle: false,
            ecn: false,
            mode: RedMode::Packets,
            mean_pkt_size: Bytes(1000),
            variant: RedVariant::Floyd93,
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let e = |f, m: String| Err(ConfigError::new("red", f, m));
        if self.limit.packets.is_none() && self.limit.bytes.is_none() {
            return e("limit", "is missing; set a packet and/or byte limit".into());
        }
        if self.limit.packets == Some(0) || self.limit.bytes == Some(0) {
            return e("limit", "must be at least 1".into());
        }
        if !(self.min_th.is_finite() && self.min_th >= 0.0) {
            return e("min_th", format!("({}) must be a number >= 0", self.min_th));
        }
        if !(self.max_th.is_finite() && self.max_th > self.min_th) {
            return e("max_th", format!("({}) must exceed min_th ({})", self.max_th, self.min_th));
        }
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            return e("max_p", format!("({}) must be in (0, 1]", self.max_p));
        }
        if !(self.w_q > 0.0 && self.w_q <= 1.0) {
            return e("w_q", format!("({}) must be in (0, 1]", self.w_q));
        }
        if self.mean_pkt_size.0 == 0 {
            return e("mean_pkt_size", "(0 B) must be at least 1 byte".into());
        }
        Ok(())
    }

    pub fn params(&self) -> algo::RedParams {
        algo::RedParams {
            min_th: self.min_th,
            max_th: self.max_th,
            max_p: self.max_p,
            w_q: self.w_q,
            gentle: self.gentle,
            variant: self.variant,
        }
    }
}

/// Counters specific to RED (the wrapper counts drops by reason).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RedStats {
    pub early: u64,
    pub forced: u64,
    pub overlimit: u64,
    pub marked: u64,
}

/// RED over a FIFO: a [`RedStage`] (the arrival side every RED-family
/// discipline shares) in front of a plain FIFO. `Red` adds no rule of its
/// own, so it cannot drift from the stage CBT, D-CBT and ChIPS use.
#[derive(Debug)]
pub struct Red {
    stage: RedStage,
    q: VecDeque<Packet>,
    backlog: Backlog,
}

impl Red {
    /// RED feeding a link of `link_rate` (needed for the idle decay).
    pub fn new(config: RedConfig, link_rate: Rate) -> Result<Red, ConfigError> {
        Ok(Red { stage: RedStage::new(config, link_rate)?, q: VecDeque::new(), backlog: Backlog::default() })
    }
    pub fn config(&self) -> &RedConfig {
        self.stage.config()
    }
    /// The current average queue (packets, or bytes in byte mode).
    pub fn avg(&self) -> f64 {
        self.stage.avg()
    }
    pub fn count(&self) -> i64 {
        self.stage.count()
    }
    pub fn red_stats(&self) -> &RedStats {
        self.stage.stats()
    }
    /// The uniform number drawn at the last arrival (early region only).
    pub fn last_uniform(&self) -> Option<f64> {
        self.stage.last_uniform()
    }
    /// The arrival stage itself.
    pub fn stage(&self) -> &RedStage {
        &self.stage
    }
}

impl Qdisc for Red {
    fn kind(&self) -> &'static str {
        "red"
    }

    fn enqueue(&mut self, now: Time, mut pkt: Packet, rng: &mut Rng) -> Verdict {
        self.stage.update_avg(now, self.backlog);
        match self.stage.judge(&mut pkt, self.backlog, rng) {
            Outcome::Drop(reason) => Verdict::Dropped(Dropped { packet: pkt, reason }),
            outcome => {
                self.backlog.add(&pkt);
                self.q.push_back(pkt);
                match outcome {
                    Outcome::AdmitMarked(r) => Verdict::Marked(r),
                    _ => Verdict::Queued,
                }
            }
        }
    }

    fn dequeue(&mut self, now: Time) -> Dequeue {
        match self.q.pop_front() {
            Some(p) => {
                self.backlog.sub(&p);
                Dequeue::Packet(p)
            }
            None => {
                self.stage.on_idle(now);
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
        self.stage.reset();
        self.q.drain(..).collect()
    }
    fn probe(&self, sink: ProbeSink<'_>) {
        sink("red_avg", self.stage.avg());
    }
}

#[cfg(test)]
mod tests;
