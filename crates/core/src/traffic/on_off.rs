//! ON/OFF source ([MACE98 §5], Table 1: EXP1/EXP2 exponential, POO1-3
//! Pareto): CBR at the peak rate during ON periods, silent during OFF
//! periods. ON and OFF lengths are drawn independently from the same
//! family with their own means.
//!
//! | parameter | unit | allowed | default |
//! |---|---|---|---|
//! | `peak` | bit/s of payload | > 0; exactly one of `peak`, `interval` | - |
//! | `interval` | time between packets while ON | > 0 | - |
//! | `on`, `off` | mean ON / OFF length | > 0 | - |
//! | `dist` | `exponential` or `pareto` | | `exponential` |
//! | `shape` | Pareto shape alpha | > 1 (finite mean) | 1.5 |
//!
//! Pareto by mean and shape [MACE98 §5]: location
//! `x_m = mean * (shape - 1) / shape`, sample `x_m * U^(-1/shape)` with
//! `U` uniform in (0, 1]. Lengths are rounded to whole ns, at least 1 ns.
//!
//! **Packetization rule.** A flow starts with an ON period. A packet is
//! sent at the start of each ON period and every `interval` after it while
//! the send time is strictly before the ON period's end, so an ON period of
//! length L carries `ceil(L / interval)` packets; the OFF period starts when
//! the ON period ends. The mean rate is therefore
//! `E[ceil(L / interval)] * size * 8 / (on + off)`, which exceeds the
//! nominal `peak * on / (on + off)` by up to one packet per ON period:
//! for exponential ON, `E[ceil(L/i)] = 1 / (1 - exp(-i/on))`. [MACE98]'s
//! EXP2 (ON 20 ms, OFF 180 ms, 256 kb/s = 320 B every 10 ms) sends
//! 2.54 packets per ON period instead of 2: 32.5 kb/s of payload instead
//! of the nominal 25.6 kb/s (x1.27). [`mean_packets_per_on`] computes the
//! factor for both families; the admission request uses it.
//!
//! **Nominal packetization** (`packetization = "nominal"`):
//! the packet clock runs only while ON and keeps its phase across OFF
//! periods, so a packet is sent each time the ON time accumulated since
//! the flow started crosses a multiple of `interval` (the first at the
//! flow's start). An ON period then carries `L / interval` packets on
//! average (one more or one fewer than that by the phase it inherits) and
//! the mean rate is exactly the nominal `peak * on / (on + off)`: EXP1
//! 37.9 kb/s on the wire instead of 40.3.

use super::cbr::{Grid, Period};
use crate::rng::Rng;
use crate::units::Time;
use rand::Rng as _;
use rand_distr::Exp1;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum PeriodDist {
    #[default]
    Exponential,
    Pareto,
}

/// ON-period packetization of an `on_off` group (`packetization = "ceil"` or `"nominal"`).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Packetization {
    /// A packet at the start of each ON period and every interval while strictly before its
    /// end: an ON period of length L carries ⌈L / interval⌉ packets (above the nominal rate).
    #[default]
    Ceil,
    /// The packet clock runs only while ON and carries its phase over OFF periods: one packet
    /// per `interval` of accumulated ON time, so the mean rate is exactly peak × on / (on + off).
    Nominal,
}

/// Draws period lengths (ns) of one family around a mean.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PeriodLaw {
    Exponential { mean_ns: f64 },
    Pareto { location_ns: f64, shape: f64 },
}

impl PeriodLaw {
    pub fn new(dist: PeriodDist, mean_ns: f64, shape: f64) -> PeriodLaw {
        match dist {
            PeriodDist::Exponential => PeriodLaw::Exponential { mean_ns },
            PeriodDist::Pareto => PeriodLaw::Pareto { location_ns: mean_ns * (shape - 1.0) / shape, shape },
        }
    }
    pub fn mean_ns(&self) -> f64 {
        match *self {
            PeriodLaw::Exponential { mean_ns } => mean_ns,
            PeriodLaw::Pareto { location_ns, shape } => location_ns * shape / (shape - 1.0),
        }
    }
    /// One length in whole ns, at least 1.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let x = match *self {
            PeriodLaw::Exponential { mean_ns } => {
                let e: f64 = rng.sample(Exp1);
                e * mean_ns
            }
            PeriodLaw::Pareto { location_ns, shape } => {
                let u: f64 = 1.0 - rng.random::<f64>(); // (0, 1]
                location_ns * u.powf(-1.0 / shape)
            }
        };
        x.round().clamp(1.0, u64::MAX as f64 / 4.0) as u64
    }
    /// `P(L > x)`.
    fn survival(&self, x: f64) -> f64 {
        match *self {
            PeriodLaw::Exponential { mean_ns } => (-x / mean_ns).exp(),
            PeriodLaw::Pareto { location_ns, shape } => {
                if x < location_ns {
                    1.0
                } else {
                    (location_ns / x).powf(shape)
                }
            }
        }
    }
}

/// `E[ceil(L / interval)] = sum_{k >= 0} P(L > k interval)`: the mean
/// number of packets in an ON period under the packetization rule.
pub fn mean_packets_per_on(law: &PeriodLaw, interval_ns: f64) -> f64 {
    if interval_ns <= 0.0 {
        return f64::INFINITY;
    }
    match *law {
        PeriodLaw::Exponential { mean_ns } => 1.0 / (1.0 - (-interval_ns / mean_ns).exp()),
        PeriodLaw::Pareto { location_ns, shape } => {
            // Terms below the location are 1; then (x_m / (k i))^shape,
            // summed exactly up to K and by the midpoint integral beyond.
            let k0 = (location_ns / interval_ns).ceil().max(0.0);
            let mut sum = k0; // k = 0 .. k0-1
            let start = k0.max(1.0) as u64;
            if k0 == 0.0 {
                sum += 1.0; // k = 0 term when the location is 0
            }
            const K: u64 = 20_000;
            for k in start..start + K {
                sum += law.survival(k as f64 * interval_ns);
            }
            let edge = (start + K) as f64 - 0.5;
            let c = (location_ns / interval_ns).powf(shape);
            sum + c * edge.powf(1.0 - shape) / (shape - 1.0)
        }
    }
}

/// An ON/OFF source's state.
///
/// Under [`Packetization::Ceil`] the grid restarts at each ON start (real
/// time). Under [`Packetization::Nominal`] the grid runs in *ON time* (the
/// ON time accumulated since the flow started): the packet of ON time `v`
/// is sent at `on_start + (v - on_origin)`, `on_origin` being the ON time at
/// which the current ON period began; a grid point past the ON period's end
/// waits for the next ON period, so the clock keeps its phase across OFF
/// periods and every `interval` of ON time carries exactly one packet.
#[derive(Clone, Copy, Debug)]
pub struct OnOff {
    grid: Grid,
    pub on: PeriodLaw,
    pub off: PeriodLaw,
    packetization: Packetization,
    on_start: Time,
    on_end: Time,
    /// Nominal: ON time at the start of the current ON period, and the next grid point in ON time.
    on_origin: u64,
    next_v: u64,
}

impl OnOff {
    pub fn new(period: Period, on: PeriodLaw, off: PeriodLaw, packetization: Packetization) -> OnOff {
        OnOff {
            grid: Grid::new(period),
            on,
            off,
            packetization,
            on_start: Time::ZERO,
            on_end: Time::ZERO,
            on_origin: 0,
            next_v: 0,
        }
    }
    pub fn spacing_ns(&self) -> u64 {
        self.grid.spacing_ns()
    }
    fn begin_on(&mut self, at: Time, rng: &mut Rng) -> Time {
        self.on_start = at;
        self.on_end = Time(at.0.saturating_add(self.on.sample(rng)));
        self.grid.restart(at)
    }
    /// The first send time: the start of the first ON period.
    pub fn first(&mut self, start: Time, rng: &mut Rng) -> Time {
        match self.packetization {
            Packetization::Ceil => self.begin_on(start, rng),
            Packetization::Nominal => {
                self.on_start = start;
                self.on_end = Time(start.0.saturating_add(self.on.sample(rng)));
                self.on_origin = 0;
                self.next_v = self.grid.restart(Time::ZERO).0;
                start
            }
        }
    }
    /// The send time after the current one (in this ON period or a later one).
    #[inline]
    pub fn next_send(&mut self, rng: &mut Rng) -> Time {
        match self.packetization {
            Packetization::Ceil => {
                let t = self.grid.step();
                if t < self.on_end {
                    return t;
                }
                let off = self.off.sample(rng);
                self.begin_on(Time(self.on_end.0.saturating_add(off)), rng)
            }
            Packetization::Nominal => {
                self.next_v = self.grid.step().0;
                loop {
                    let len = self.on_end.0 - self.on_start.0;
                    let into = self.next_v - self.on_origin;
                    if into < len {
                        return Time(self.on_start.0.saturating_add(into));
                    }
                    // The grid point falls after this ON period: the next ON period carries it.
                    self.on_origin += len;
                    let off = self.off.sample(rng);
                    self.on_start = Time(self.on_end.0.saturating_add(off));
                    self.on_end = Time(self.on_start.0.saturating_add(self.on.sample(rng)));
                }
            }
        }
    }
    /// The current ON period as `(start, end)`.
    pub fn on_period(&self) -> (Time, Time) {
        (self.on_start, self.on_end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Dur;

    #[test]
    fn an_on_period_of_length_l_carries_ceil_l_over_interval_packets() {
        // Fixed-length ON periods via a degenerate Pareto (huge shape ~ constant).
        let mut rng = crate::rng::stream(1, 2);
        let period = Period::from_interval(Dur::from_ms(10));
        for (on_ms, expect) in [(20.0, 2), (20.5, 3), (9.0, 1), (30.0, 3), (30.001, 4)] {
            let law = PeriodLaw::Pareto { location_ns: on_ms * 1e6, shape: 1e12 };
            let off = PeriodLaw::Pareto { location_ns: 1e9, shape: 1e12 };
            let mut s = OnOff::new(period, law, off, Packetization::Ceil);
            let first = s.first(Time(0), &mut rng);
            let (_, end) = s.on_period();
            let mut n = 1;
            let mut t = s.next_send(&mut rng);
            while t < end {
                n += 1;
                t = s.next_send(&mut rng);
            }
            assert_eq!((first, n), (Time(0), expect), "ON {on_ms} ms");
            // The next packet opens the next ON period after the OFF second.
            assert_eq!(t, Time(end.0 + 1_000_000_000));
        }
    }

    #[test]
    fn nominal_packetization_keeps_the_packet_clock_across_off_periods() {
        // ON periods of exactly 25 ms, OFF 1 s, 10 ms interval: ON time 0, 10, 20 in the
        // first period; 30 falls 5 ms into the second (ON time 25..50), then 40; 50 opens
        // the third period at its start. Ceil would send 3 per period (0, 10, 20).
        let mut rng = crate::rng::stream(1, 2);
        let on = PeriodLaw::Pareto { location_ns: 25e6, shape: 1e12 };
        let off = PeriodLaw::Pareto { location_ns: 1e9, shape: 1e12 };
        let mut s = OnOff::new(Period::from_interval(Dur::from_ms(10)), on, off, Packetization::Nominal);
        let mut times = vec![s.first(Time(7), &mut rng).0];
        for _ in 0..7 {
            times.push(s.next_send(&mut rng).0);
        }
        let ms = 1_000_000;
        let p2 = 7 + 25 * ms + 1_000 * ms;
        let p3 = p2 + 25 * ms + 1_000 * ms;
        assert_eq!(times, vec![7, 7 + 10 * ms, 7 + 20 * ms, p2 + 5 * ms, p2 + 15 * ms, p3, p3 + 10 * ms, p3 + 20 * ms]);
    }

    #[test]
    fn pareto_mean_matches_its_parameters() {
        let mut rng = crate::rng::stream(4, 2);
        // Shape 2.5 has a finite variance, so the sample mean converges quickly.
        let law = PeriodLaw::new(PeriodDist::Pareto, 400e6, 2.5);
        assert!((law.mean_ns() - 400e6).abs() < 1e-3);
        let n = 400_000;
        let m = (0..n).map(|_| law.sample(&mut rng) as f64).sum::<f64>() / n as f64;
        assert!((m / 400e6 - 1.0).abs() < 0.02, "{m}");
        // Location per [MACE98]: mean * (shape - 1) / shape.
        assert_eq!(
            PeriodLaw::new(PeriodDist::Pareto, 300.0, 1.5),
            PeriodLaw::Pareto { location_ns: 100.0, shape: 1.5 }
        );
    }

    #[test]
    fn mean_packets_per_on_matches_simulation_for_both_families() {
        // EXP2: 20 ms ON, 10 ms interval -> 1 / (1 - e^-0.5) = 2.5415.
        let exp2 = PeriodLaw::new(PeriodDist::Exponential, 20e6, 0.0);
        assert!((mean_packets_per_on(&exp2, 10e6) - 2.541494).abs() < 1e-5);
        let mut rng = crate::rng::stream(5, 2);
        for law in [exp2, PeriodLaw::new(PeriodDist::Pareto, 40e6, 2.5)] {
            let n = 300_000;
            let sim = (0..n).map(|_| (law.sample(&mut rng) as f64 / 10e6).ceil()).sum::<f64>() / n as f64;
            let formula = mean_packets_per_on(&law, 10e6);
            assert!((sim / formula - 1.0).abs() < 0.02, "{law:?}: sim {sim} formula {formula}");
        }
        // Heavy tail (POO2: shape 1.1): the series with its integral tail
        // against a brute-force sum of 2*10^6 terms plus the same tail.
        let poo = PeriodLaw::new(PeriodDist::Pareto, 40e6, 1.1);
        let brute: f64 = (0..2_000_000u64).map(|k| poo.survival(k as f64 * 10e6)).sum::<f64>()
            + (40e6 * 0.1 / 1.1 / 10e6f64).powf(1.1) * (2e6f64 - 0.5).powf(-0.1) / 0.1;
        assert!((mean_packets_per_on(&poo, 10e6) / brute - 1.0).abs() < 1e-4);
    }
}
