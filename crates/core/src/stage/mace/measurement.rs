//! MACE measurement unit ([MACE98 §3] "Measurement"; S = 5 s from §4.2).
//!
//! "The measurement unit keeps a counter for the number of bits
//! transmitted on each network interface. Periodically, an average
//! bandwidth usage is computed from this counter, and the counter is
//! cleared. The counter is updated whenever a new packet is enqueued.
//! Counting when packets are enqueued gives us the arrival rate, which
//! could be higher than the service rate of the outgoing link. This makes
//! MACE unit more conservative."
//!
//! ```text
//! on_enqueue(bytes):  bits += 8 · bytes                     (CL packets only: the caller's filter)
//! on_tick(now ≥ deadline):  sample = { at: now, interval: now − start, bits }
//!                           start = now; bits = 0; deadline = next multiple of S after now
//! ```
//!
//! | parameter | unit | allowed | default |
//! |---|---|---|---|
//! | `interval` (S) | duration | > 0 | 5 s (§4.2) |
//!
//! Interpretations (see `docs/mechanisms/mace_measurement.md`):
//! - **Bits are wire bits** of CL packets at their arrival at the MACE
//!   queue (the caller counts every packet classified CL, dropped or not):
//!   the paper counts at enqueue to get the arrival rate, and a 64 kb/s
//!   source "appears to be sending 386 byte packets to the measurement
//!   unit" (§4.1).
//! - Deadlines stay on the grid `start + k·S`. A late tick (a wall-clock
//!   driver) reports the true elapsed interval, so the rate stays exact,
//!   and the next deadline is the next grid point; a virtual-clock driver
//!   ticks exactly on the grid and every interval is S.

use super::compose::MaceEvent;
use crate::admission::LoadSample;
use crate::error::ConfigError;
use crate::units::{Dur, Time};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeasurementConfig {
    /// Sampling period S.
    pub interval: Dur,
}

impl Default for MeasurementConfig {
    fn default() -> Self {
        MeasurementConfig { interval: Dur::from_secs(5) }
    }
}

impl MeasurementConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.interval.0 == 0 {
            return Err(ConfigError::new("mace_measurement", "interval", "(0s) must be longer than 0s"));
        }
        Ok(())
    }
}

/// Counts CL bits and emits one [`LoadSample`] per period.
#[derive(Clone, Debug)]
pub struct Measurement {
    config: MeasurementConfig,
    bits: u64,
    window_start: Time,
    deadline: Time,
    samples: u64,
}

impl Measurement {
    /// Starts measuring at `start`; the first sample is due at `start + S`.
    pub fn new(config: MeasurementConfig, start: Time) -> Result<Measurement, ConfigError> {
        config.validate()?;
        Ok(Measurement { config, bits: 0, window_start: start, deadline: start + config.interval, samples: 0 })
    }
    pub fn config(&self) -> &MeasurementConfig {
        &self.config
    }
    /// Counts a CL packet of `bytes` on the wire.
    #[inline]
    pub fn on_enqueue(&mut self, bytes: u32) {
        self.bits = self.bits.saturating_add(bytes as u64 * 8);
    }
    /// Bits counted since the last sample.
    pub fn pending_bits(&self) -> u64 {
        self.bits
    }
    /// Samples emitted so far.
    pub fn samples(&self) -> u64 {
        self.samples
    }
    /// When [`Measurement::on_tick`] is next needed (always: one sample every S).
    pub fn next_deadline(&self) -> Option<Time> {
        Some(self.deadline)
    }
    /// Reports the sample for the period ending at `now` into `out`, if one is due.
    pub fn on_tick(&mut self, now: Time, out: &mut Vec<MaceEvent>) {
        if now < self.deadline {
            return;
        }
        let s = LoadSample { at: now, interval: now.since(self.window_start), bits: self.bits };
        self.bits = 0;
        self.window_start = now;
        let late = now.since(self.deadline).0 / self.config.interval.0;
        self.deadline += Dur(self.config.interval.0 * (late + 1));
        self.samples += 1;
        out.push(MaceEvent::Sample(s));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sample `on_tick(now)` reports, if any.
    fn tick(m: &mut Measurement, now: Time) -> Option<LoadSample> {
        let mut out = Vec::new();
        m.on_tick(now, &mut out);
        assert!(out.len() <= 1);
        out.pop().map(|ev| match ev {
            MaceEvent::Sample(s) => s,
            other => panic!("measurement reported {other:?}"),
        })
    }

    fn secs(s: u64) -> Time {
        Time(Dur::from_secs(s).0)
    }

    #[test]
    fn measurement_samples_cl_bits_every_period_and_clears_the_counter() {
        let mut m = Measurement::new(MeasurementConfig::default(), Time::ZERO).unwrap();
        assert_eq!(m.next_deadline(), Some(secs(5)));
        for _ in 0..125 {
            m.on_enqueue(386); // a 64 kb/s source for 5 s: 125 frames of 386 B
        }
        assert_eq!(tick(&mut m, secs(4)), None, "not due yet");
        let s = tick(&mut m, secs(5)).unwrap();
        assert_eq!((s.at, s.interval, s.bits), (secs(5), Dur::from_secs(5), 125 * 386 * 8));
        assert!((s.rate_bps() - 77_200.0).abs() < 1e-9, "386 B every 40 ms is 77.2 kb/s");
        assert_eq!(m.pending_bits(), 0);
        assert_eq!(m.next_deadline(), Some(secs(10)));
        let s = tick(&mut m, secs(10)).unwrap();
        assert_eq!(s.bits, 0, "an idle period is a zero sample, not a missing one");
        assert_eq!(m.samples(), 2);
    }

    #[test]
    fn measurement_late_tick_reports_the_true_interval_and_stays_on_the_grid() {
        let mut m = Measurement::new(MeasurementConfig { interval: Dur::from_secs(5) }, secs(100)).unwrap();
        m.on_enqueue(1000);
        let late = Time(secs(112).0 + 3);
        let s = tick(&mut m, late).unwrap();
        assert_eq!(s.interval, late.since(secs(100)));
        assert_eq!(m.next_deadline(), Some(secs(115)));
        let s = tick(&mut m, secs(115)).unwrap();
        assert_eq!(s.interval, secs(115).since(late));
        assert!(Measurement::new(MeasurementConfig { interval: Dur(0) }, Time::ZERO).is_err());
    }
}
