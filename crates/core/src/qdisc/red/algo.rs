//! The RED algorithm as pure functions over explicit state, for RED and for
//! the disciplines built on it (CBT, D-CBT, ChIPS), in two variants:
//!
//! - [`RedVariant::Floyd93`]: the 1993 paper's Fig. 2, literally.
//! - [`RedVariant::Ns2`]: RED as ns-2's `queue/red.cc` (`REDQueue::enque`,
//!   `estimator`, `drop_early`, `modify_p`) and ns-3's `RedQueueDisc`
//!   (`DoEnqueue`, `Estimator`, `DropEarly`, `ModifyP`) run it with
//!   `wait_ = true`. It differs in four rules, each a function here with
//!   its own tests:
//!   1. no early or forced drop while the queue holds at most one packet
//!      ([`decide`]: `qavg >= th_min && qlen > 1`);
//!   2. the `old` flag: the first such arrival after the average crosses
//!      `min_th` passes and sets `count` to 1 ([`decide`]);
//!   3. `wait_` spacing ([`spaced_wait`]): `p_a = 0` while `count·p_b < 1`,
//!      `p_b / (2 - count·p_b)` while `count·p_b < 2`, else 1;
//!   4. after an idle period the average decays `floor(idle / s)` steps and
//!      then takes one ordinary EWMA step with the current queue
//!      ([`after_idle`]).
//!
//! The file that cites the ns-2/ns-3 lines is `docs/mechanisms/red.md`.

use crate::units::Dur;

/// Which RED: the 1993 paper or ns-2's implementation of it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RedVariant {
    /// Floyd & Jacobson 1993, Fig. 2 (the default).
    #[default]
    Floyd93,
    /// ns-2.35 `queue/red.cc` / ns-3 `RedQueueDisc` (with `wait_`).
    Ns2,
}

/// The algorithm's inputs (thresholds in the unit of the average).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedParams {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub w_q: f64,
    pub gentle: bool,
    pub variant: RedVariant,
}

/// RED's variables: the average, the count since the last drop and (ns-2)
/// whether the average was already above `min_th` at the last arrival.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedVars {
    pub avg: f64,
    /// Packets since the last early drop. Floyd93: -1 outside the early
    /// region. Ns2: counts every arrival, set to 1 when the early region is
    /// entered (rule 2) and to 0 by a drop.
    pub count: i64,
    /// Ns2's `old`: the last arrival was judged with `avg >= min_th` and a
    /// queue of more than one packet. Always false for Floyd93.
    pub old: bool,
}

impl Default for RedVars {
    fn default() -> Self {
        RedVars { avg: 0.0, count: -1, old: false }
    }
}

/// EWMA step on an arrival that finds `q` queued: `(1 - w_q) avg + w_q q`.
#[inline]
pub fn update_avg(p: &RedParams, avg: f64, q: f64) -> f64 {
    avg + p.w_q * (q - avg)
}

/// Floyd93's decay over an idle period: `(1 - w_q)^m avg`, `m = idle / s`
/// (not rounded), and no EWMA step.
#[inline]
pub fn decay_idle(p: &RedParams, avg: f64, idle: Dur, pkt_time: Dur) -> f64 {
    if pkt_time.0 == 0 {
        return 0.0;
    }
    let m = idle.0 as f64 / pkt_time.0 as f64;
    avg * (1.0 - p.w_q).powf(m)
}

/// The average after an idle period, for the arrival that ends it, which
/// finds `q` queued. Floyd93: [`decay_idle`]. Ns2 (rule 4, ns-2
/// `REDQueue::enque` + `estimator(q, m + 1, ...)`): `m = floor(idle / s)`
/// decay steps, then one EWMA step with `q`.
#[inline]
pub fn after_idle(p: &RedParams, avg: f64, idle: Dur, pkt_time: Dur, q: f64) -> f64 {
    match p.variant {
        RedVariant::Floyd93 => decay_idle(p, avg, idle, pkt_time),
        RedVariant::Ns2 => {
            let m = idle.0.checked_div(pkt_time.0).unwrap_or(0);
            let decayed = avg * (1.0 - p.w_q).powi(m.min(i32::MAX as u64) as i32);
            update_avg(p, decayed, q)
        }
    }
}

/// Where the average stands.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Zone {
    /// avg < min_th: never drop.
    Below,
    /// Early region with base probability `p_b`.
    Early(f64),
    /// Drop every packet.
    Forced,
}

/// The zone of `avg` and, in the early region, `p_b`.
#[inline]
pub fn zone(p: &RedParams, avg: f64) -> Zone {
    if avg < p.min_th {
        Zone::Below
    } else if avg < p.max_th {
        Zone::Early(p.max_p * (avg - p.min_th) / (p.max_th - p.min_th))
    } else if p.gentle && avg < 2.0 * p.max_th {
        Zone::Early(p.max_p + (1.0 - p.max_p) * (avg - p.max_th) / p.max_th)
    } else {
        Zone::Forced
    }
}

/// Floyd93: `p_a = p_b / (1 - count p_b)`, 1 when `count p_b >= 1` (FJ93
/// Fig. 2 and its section "Calculating the packet-marking probability").
#[inline]
pub fn spaced(p_b: f64, count: i64) -> f64 {
    let c = count as f64 * p_b;
    if c >= 1.0 {
        1.0
    } else {
        (p_b / (1.0 - c)).min(1.0)
    }
}

/// Ns2 rule 3, `wait_` (ns-2 `REDQueue::modify_p`, ns-3
/// `RedQueueDisc::ModifyP` with `Wait`): `p_a = 0` while `count p_b < 1`,
/// `p_b / (2 - count p_b)` while `count p_b < 2`, else 1. Drops are at
/// least `1/p_b` packets apart and spread uniformly up to `2/p_b`.
#[inline]
pub fn spaced_wait(p_b: f64, count: i64) -> f64 {
    let c = count as f64 * p_b;
    if c < 1.0 {
        0.0
    } else if c < 2.0 {
        (p_b / (2.0 - c)).min(1.0)
    } else {
        1.0
    }
}

/// RED's decision for one arrival.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Action {
    Pass,
    /// Early (probabilistic) drop or mark.
    Early,
    /// Forced drop.
    Forced,
}

/// Decides for one arrival with the average already updated. `q` is the
/// instantaneous queue the packet finds (RED's unit), used by Ns2's rule 1.
/// `scale` multiplies the probability (byte mode: size / mean size; 1
/// otherwise): Floyd93 scales `p_b` before the spacing (FJ93 §4), Ns2 scales
/// `p_a` after it when `p_a < 1` (ns-2 `modify_p`). A uniform number is drawn
/// from `draw` only where a probabilistic decision is due.
#[inline]
pub fn decide(p: &RedParams, v: &mut RedVars, q: f64, scale: f64, draw: impl FnOnce() -> f64) -> Action {
    match p.variant {
        RedVariant::Floyd93 => decide_floyd93(p, v, scale, draw),
        RedVariant::Ns2 => decide_ns2(p, v, q, scale, draw),
    }
}

fn decide_floyd93(p: &RedParams, v: &mut RedVars, scale: f64, draw: impl FnOnce() -> f64) -> Action {
    match zone(p, v.avg) {
        Zone::Below => {
            v.count = -1;
            Action::Pass
        }
        Zone::Forced => {
            v.count = 0;
            Action::Forced
        }
        Zone::Early(p_b) => {
            v.count += 1;
            let p_a = spaced((p_b * scale).min(1.0), v.count);
            if draw() < p_a {
                v.count = 0;
                Action::Early
            } else {
                Action::Pass
            }
        }
    }
}

/// ns-2 `REDQueue::enque` ("DROP LOGIC") and `drop_early`.
fn decide_ns2(p: &RedParams, v: &mut RedVars, q: f64, scale: f64, draw: impl FnOnce() -> f64) -> Action {
    v.count += 1;
    // Rule 1: nothing is dropped early or forced while at most one packet waits.
    if v.avg < p.min_th || q <= 1.0 {
        v.old = false;
        return Action::Pass;
    }
    match zone(p, v.avg) {
        Zone::Below => unreachable!("avg >= min_th was checked above"),
        Zone::Forced => {
            // ns-2 resets count on a forced drop (unless ns1_compat_).
            v.count = 0;
            Action::Forced
        }
        // Rule 2: the first arrival after the crossing passes; count = 1.
        Zone::Early(_) if !v.old => {
            v.old = true;
            v.count = 1;
            Action::Pass
        }
        Zone::Early(p_b) => {
            let mut p_a = spaced_wait(p_b, v.count);
            if p_a < 1.0 {
                p_a = (p_a * scale).min(1.0);
            }
            if draw() < p_a {
                v.count = 0;
                Action::Early
            } else {
                Action::Pass
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> RedParams {
        RedParams { min_th: 5.0, max_th: 15.0, max_p: 0.1, w_q: 0.002, gentle: false, variant: RedVariant::Floyd93 }
    }
    fn ns2() -> RedParams {
        RedParams { variant: RedVariant::Ns2, ..p() }
    }

    #[test]
    fn avg_is_an_ewma_of_the_queue() {
        let mut a = 0.0;
        for _ in 0..3 {
            a = update_avg(&p(), a, 10.0);
        }
        // 10 * (1 - 0.998^3)
        assert!((a - 10.0 * (1.0 - 0.998f64.powi(3))).abs() < 1e-12);
    }

    #[test]
    fn idle_decay_is_per_packet_time() {
        let a = decay_idle(&p(), 8.0, Dur(3_200_000), Dur(320_000)); // m = 10
        assert!((a - 8.0 * 0.998f64.powi(10)).abs() < 1e-12);
        // Floyd93 does not round m and takes no EWMA step.
        let a = after_idle(&p(), 8.0, Dur(3_360_000), Dur(320_000), 0.0); // m = 10.5
        assert!((a - 8.0 * 0.998f64.powf(10.5)).abs() < 1e-12);
    }

    #[test]
    fn ns2_idle_decays_whole_packet_times_then_takes_one_ewma_step() {
        // ns-2 estimator(q, m + 1, ave, w): ave (1 - w)^m, then (1 - w) ave + w q.
        // idle = 10.5 packet times -> m = 10 (int()), then one step with q = 0.
        let a = after_idle(&ns2(), 8.0, Dur(3_360_000), Dur(320_000), 0.0);
        assert!((a - 8.0 * 0.998f64.powi(11)).abs() < 1e-12, "{a}");
        // With a non-empty queue the step takes it in.
        let a = after_idle(&ns2(), 8.0, Dur(0), Dur(320_000), 3.0);
        assert!((a - (8.0 * 0.998 + 0.002 * 3.0)).abs() < 1e-12, "{a}");
        // Shorter than one packet time: no decay, one EWMA step.
        let a = after_idle(&ns2(), 8.0, Dur(319_999), Dur(320_000), 0.0);
        assert!((a - 8.0 * 0.998).abs() < 1e-12, "{a}");
    }

    #[test]
    fn zones_and_base_probability() {
        assert_eq!(zone(&p(), 4.99), Zone::Below);
        assert_eq!(zone(&p(), 10.0), Zone::Early(0.05));
        assert_eq!(zone(&p(), 15.0), Zone::Forced);
        let g = RedParams { gentle: true, ..p() };
        match zone(&g, 22.5) {
            Zone::Early(pb) => assert!((pb - (0.1 + 0.9 * 0.5)).abs() < 1e-12),
            z => panic!("{z:?}"),
        }
        assert_eq!(zone(&g, 30.0), Zone::Forced);
    }

    #[test]
    fn count_spacing_raises_probability_until_certain() {
        assert_eq!(spaced(0.05, 0), 0.05);
        assert!((spaced(0.05, 10) - 0.05 / 0.5).abs() < 1e-12);
        assert_eq!(spaced(0.05, 20), 1.0);
        assert_eq!(spaced(0.05, 25), 1.0);
    }

    #[test]
    fn wait_spacing_is_zero_then_p_over_two_minus_count_p_then_one() {
        // p_b = 0.05: count p_b < 1 for count < 20.
        assert_eq!(spaced_wait(0.05, 0), 0.0);
        assert_eq!(spaced_wait(0.05, 19), 0.0);
        // count = 20: count p_b = 1 -> p_b / (2 - 1) = p_b.
        assert!((spaced_wait(0.05, 20) - 0.05).abs() < 1e-12);
        // count = 30: count p_b = 1.5 -> 0.05 / 0.5 = 0.1.
        assert!((spaced_wait(0.05, 30) - 0.1).abs() < 1e-12);
        // count p_b >= 2: certain.
        assert_eq!(spaced_wait(0.05, 40), 1.0);
        assert_eq!(spaced_wait(0.05, 400), 1.0);
    }

    #[test]
    fn decide_resets_count_on_drop_and_below_min() {
        let mut v = RedVars { avg: 10.0, count: -1, old: false };
        assert_eq!(decide(&p(), &mut v, 10.0, 1.0, || 0.99), Action::Pass);
        assert_eq!(v.count, 0);
        assert_eq!(decide(&p(), &mut v, 10.0, 1.0, || 0.0), Action::Early);
        assert_eq!(v.count, 0);
        v.avg = 1.0;
        assert_eq!(decide(&p(), &mut v, 10.0, 1.0, || panic!("no draw below min_th")), Action::Pass);
        assert_eq!(v.count, -1);
        v.avg = 20.0;
        assert_eq!(decide(&p(), &mut v, 10.0, 1.0, || panic!("no draw when forced")), Action::Forced);
    }

    #[test]
    fn floyd93_drops_whatever_the_instantaneous_queue() {
        let mut v = RedVars { avg: 20.0, count: 3, old: false };
        assert_eq!(decide(&p(), &mut v, 0.0, 1.0, || panic!()), Action::Forced);
        let mut v = RedVars { avg: 10.0, count: 5, old: false };
        assert_eq!(decide(&p(), &mut v, 1.0, 1.0, || 0.0), Action::Early);
    }

    #[test]
    fn ns2_never_drops_while_at_most_one_packet_waits() {
        // Rule 1: avg far above max_th, but the queue holds 0 or 1 packet.
        for q in [0.0, 1.0] {
            let mut v = RedVars { avg: 40.0, count: 7, old: true };
            assert_eq!(decide(&ns2(), &mut v, q, 1.0, || panic!("no draw")), Action::Pass);
            assert!(!v.old, "the next arrival counts as a fresh crossing");
            assert_eq!(v.count, 8);
        }
        // Two packets waiting: forced, and count reset as in ns-2.
        let mut v = RedVars { avg: 40.0, count: 7, old: true };
        assert_eq!(decide(&ns2(), &mut v, 2.0, 1.0, || panic!("no draw")), Action::Forced);
        assert_eq!(v.count, 0);
    }

    #[test]
    fn ns2_first_arrival_after_crossing_min_th_passes_with_count_one() {
        // Rule 2: old = 0 -> pass without a draw, count = 1, old = 1.
        let mut v = RedVars { avg: 14.9, count: 500, old: false };
        assert_eq!(decide(&ns2(), &mut v, 10.0, 1.0, || panic!("no draw on the crossing")), Action::Pass);
        assert_eq!((v.count, v.old), (1, true));
        // The next one is judged with count = 2 (p_b = 0.099, 2 p_b < 1 -> p_a = 0).
        assert_eq!(decide(&ns2(), &mut v, 10.0, 1.0, || 0.0), Action::Pass);
        assert_eq!(v.count, 2);
        // Falling below min_th clears old.
        v.avg = 4.0;
        assert_eq!(decide(&ns2(), &mut v, 10.0, 1.0, || panic!()), Action::Pass);
        assert!(!v.old);
    }

    #[test]
    fn ns2_early_drops_are_spaced_by_wait() {
        // avg = 10 -> p_b = 0.05. count reaches 20 at the 20th judged arrival
        // after the crossing; none before it can drop, even with u = 0.
        let mut v = RedVars { avg: 10.0, count: 0, old: false };
        assert_eq!(decide(&ns2(), &mut v, 5.0, 1.0, || panic!()), Action::Pass); // crossing: count 1
        for _ in 2..20 {
            assert_eq!(decide(&ns2(), &mut v, 5.0, 1.0, || 0.0), Action::Pass);
        }
        assert_eq!(v.count, 19);
        // count = 20: p_a = 0.05.
        assert_eq!(decide(&ns2(), &mut v, 5.0, 1.0, || 0.051), Action::Pass);
        assert_eq!(decide(&ns2(), &mut v, 5.0, 1.0, || 0.0), Action::Early);
        assert_eq!(v.count, 0);
        // After a drop the count restarts from 0 (old stays set).
        assert!(v.old);
        assert_eq!(decide(&ns2(), &mut v, 5.0, 1.0, || 0.0), Action::Pass);
        assert_eq!(v.count, 1);
    }

    #[test]
    fn ns2_byte_mode_scales_p_a_after_the_spacing() {
        // count p_b = 1.5 -> p_a = 0.1; a 500 B packet of a 1000 B mean: 0.05.
        let mut v = RedVars { avg: 10.0, count: 29, old: true };
        assert_eq!(decide(&ns2(), &mut v, 5.0, 0.5, || 0.06), Action::Pass);
        let mut v = RedVars { avg: 10.0, count: 29, old: true };
        assert_eq!(decide(&ns2(), &mut v, 5.0, 0.5, || 0.049), Action::Early);
        // p_a = 1 is not scaled.
        let mut v = RedVars { avg: 10.0, count: 39, old: true };
        assert_eq!(decide(&ns2(), &mut v, 5.0, 0.5, || 0.99), Action::Early);
    }

    #[test]
    fn ns2_gentle_region_is_spaced_too() {
        let g = RedParams { gentle: true, ..ns2() };
        // avg = 22.5: p_b = 0.55; count 2 -> count p_b = 1.1 -> p_a = 0.55 / 0.9.
        let mut v = RedVars { avg: 22.5, count: 1, old: true };
        let want = 0.55 / 0.9;
        assert_eq!(decide(&g, &mut v, 5.0, 1.0, || want + 1e-9), Action::Pass);
        let mut v = RedVars { avg: 22.5, count: 1, old: true };
        assert_eq!(decide(&g, &mut v, 5.0, 1.0, || want - 1e-9), Action::Early);
        // 2 max_th: forced.
        let mut v = RedVars { avg: 30.0, count: 1, old: true };
        assert_eq!(decide(&g, &mut v, 5.0, 1.0, || panic!()), Action::Forced);
    }
}
