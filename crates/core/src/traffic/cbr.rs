//! Constant bit rate: one packet every `interval`, or every
//! `payload * 8 / rate` when a `rate` is given (the rate counts payload
//! bits; with random sizes the mean payload is used).
//!
//! | parameter | unit | allowed | default |
//! |---|---|---|---|
//! | `rate` | bit/s of payload | > 0; exactly one of `rate`, `interval` | - |
//! | `interval` | time | > 0 | - |
//!
//! Send times are `start + floor(k * period)` for k = 0, 1, ... with the
//! period kept as an exact fraction of nanoseconds, so a flow never drifts
//! from its rate however long it runs (3 Mb/s of 1000 B: 2.666... ms,
//! exact over 10^9 packets). Packets are sent while the send time is
//! before the flow's end.

use crate::units::{Dur, Rate, Time};

/// A period of `num / den` nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Period {
    pub num: u128,
    pub den: u128,
}

impl Period {
    pub fn from_interval(d: Dur) -> Period {
        Period { num: d.0 as u128, den: 1 }
    }
    /// The period of `payload_bits_x1000 / 1000` bits at `rate` (payload
    /// bits in thousandths, so that a mean payload may be fractional).
    /// `None` for a zero rate.
    pub fn from_rate(payload_millibits: u128, rate: Rate) -> Option<Period> {
        (rate.0 > 0).then(|| Period { num: payload_millibits * 1_000_000, den: rate.0 as u128 })
    }
    /// `floor(k * num / den)` ns, saturating.
    #[inline]
    pub fn offset(&self, k: u64) -> u64 {
        let v = (k as u128 * self.num) / self.den;
        v.min(u64::MAX as u128) as u64
    }
    pub fn as_ns_f64(&self) -> f64 {
        self.num as f64 / self.den as f64
    }
}

/// Steps `floor(k * num / den)` for k = 0, 1, 2, ... without dividing:
/// `q = floor(num/den)`, `r = num mod den`, and the remainders carried.
/// (A period longer than 2^64 ns is cut to that: no second packet.)
#[derive(Clone, Copy, Debug)]
pub struct Grid {
    q: u64,
    r: u64,
    den: u64,
    start: Time,
    /// `floor(k num / den)` and `k num mod den` for the current k.
    off: u64,
    rem: u64,
}

impl Grid {
    pub fn new(p: Period) -> Grid {
        let (q, r, den) = match u64::try_from(p.den) {
            Ok(den) if den > 0 => ((p.num / p.den).min(u64::MAX as u128) as u64, (p.num % p.den) as u64, den),
            // Periods are built from u64 rates and durations: not reached.
            _ => (u64::MAX, 0, 1),
        };
        Grid { q, r, den, start: Time::ZERO, off: 0, rem: 0 }
    }
    /// The whole nanoseconds of one period.
    pub fn spacing_ns(&self) -> u64 {
        self.q
    }
    /// Restarts the grid at `start` (k = 0).
    #[inline]
    pub fn restart(&mut self, start: Time) -> Time {
        self.start = start;
        self.off = 0;
        self.rem = 0;
        start
    }
    /// The next point of the grid: `start + floor(k num / den)` for k + 1.
    #[inline]
    pub fn step(&mut self) -> Time {
        self.off = self.off.saturating_add(self.q);
        let rem = self.rem as u128 + self.r as u128;
        if rem >= self.den as u128 {
            self.rem = (rem - self.den as u128) as u64;
            self.off = self.off.saturating_add(1);
        } else {
            self.rem = rem as u64;
        }
        Time(self.start.0.saturating_add(self.off))
    }
}

/// A CBR source's state: its grid of send times.
#[derive(Clone, Copy, Debug)]
pub struct Cbr {
    grid: Grid,
}

impl Cbr {
    pub fn new(period: Period) -> Cbr {
        Cbr { grid: Grid::new(period) }
    }
    pub fn spacing_ns(&self) -> u64 {
        self.grid.spacing_ns()
    }
    /// The first send time of a flow starting at `start`.
    pub fn first(&mut self, start: Time) -> Time {
        self.grid.restart(start)
    }
    /// The send time after the current one.
    #[inline]
    pub fn next_send(&mut self) -> Time {
        self.grid.step()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cbr_grid_is_exact_and_never_drifts() {
        // 1000 B at 3 Mb/s: 8000/3 us.
        let p = Period::from_rate(8000 * 1000, Rate::mbps(3)).unwrap();
        let mut c = Cbr::new(p);
        assert_eq!(c.first(Time(5)), Time(5));
        assert_eq!(c.next_send(), Time(5 + 2_666_666));
        assert_eq!(c.next_send(), Time(5 + 5_333_333));
        assert_eq!(c.next_send(), Time(5 + 8_000_000));
        // Packet 10^9 is sent at exactly 10^9 * 8/3 ms.
        assert_eq!(p.offset(1_000_000_000), 2_666_666_666_666_666);
    }

    #[test]
    fn grid_stepping_equals_the_exact_formula() {
        for (num, den) in [(8_000_000_000u128, 3_000_000u128), (7, 1), (1_000_000_007, 999_983), (1, 3)] {
            let p = Period { num, den };
            let mut g = Grid::new(p);
            g.restart(Time(11));
            for k in 1..100_000u64 {
                assert_eq!(g.step(), Time(11 + p.offset(k)), "{num}/{den} k={k}");
            }
        }
        // A rate near 2^64 bit/s (remainders near 2^64) still steps exactly.
        let p = Period { num: u64::MAX as u128 * 3 + 5, den: u64::MAX as u128 - 1 };
        let mut g = Grid::new(p);
        g.restart(Time(0));
        for k in 1..1000u64 {
            assert_eq!(g.step(), Time(p.offset(k)));
        }
    }

    #[test]
    fn cbr_interval_and_fractional_payload() {
        let mut c = Cbr::new(Period::from_interval(Dur::from_ms(10)));
        c.first(Time(0));
        assert_eq!(c.next_send(), Time(10_000_000));
        // A mean payload of 100.5 B at 804 kb/s: 1 ms.
        let p = Period::from_rate(804_000, Rate::kbps(804)).unwrap();
        assert_eq!(p.offset(1), 1_000_000);
        assert!(Period::from_rate(1, Rate(0)).is_none());
    }
}
