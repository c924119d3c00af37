//! Poisson packet arrivals: exponential gaps whose mean is the period a
//! CBR source of the same payload rate would have (`payload * 8 / rate`,
//! mean payload for random sizes).
//!
//! | parameter | unit | allowed | default |
//! |---|---|---|---|
//! | `rate` | bit/s of payload (mean) | > 0 | - |
//!
//! The first packet leaves at the flow's start (like CBR); each gap is
//! `Exp(mean)` rounded to the nearest nanosecond, at least 1 ns (so that
//! absurd rates cannot stall the clock; at any rate below ~1 Tb/s of
//! 64-byte packets the floor is never reached in practice).

use crate::rng::Rng;
use crate::units::Time;
use rand::Rng as _;
use rand_distr::Exp1;

#[derive(Clone, Copy, Debug)]
pub struct Poisson {
    /// Mean gap in ns.
    pub mean_gap_ns: f64,
}

impl Poisson {
    pub fn new(mean_gap_ns: f64) -> Poisson {
        Poisson { mean_gap_ns }
    }
    pub fn first(&mut self, start: Time) -> Time {
        start
    }
    #[inline]
    pub fn next_send(&mut self, now: Time, rng: &mut Rng) -> Time {
        let e: f64 = rng.sample(Exp1);
        let gap = (e * self.mean_gap_ns).round().max(1.0);
        Time(now.0.saturating_add(gap.min(u64::MAX as f64) as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poisson_gaps_have_the_requested_mean_and_cv() {
        let mut rng = crate::rng::stream(9, 1);
        let mut p = Poisson::new(1_000_000.0);
        let mut t = p.first(Time(0));
        let n = 200_000;
        let mut gaps = Vec::with_capacity(n);
        for _ in 0..n {
            let nt = p.next_send(t, &mut rng);
            gaps.push((nt.0 - t.0) as f64);
            t = nt;
        }
        let mean = gaps.iter().sum::<f64>() / n as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n as f64;
        // Standard error of the mean: 1e6 / sqrt(2e5) = 2236 ns; 4 sigma.
        assert!((mean - 1e6).abs() < 9_000.0, "{mean}");
        assert!((var.sqrt() / mean - 1.0).abs() < 0.02, "cv {}", var.sqrt() / mean);
    }
}
