//! MACE estimator: the measured-sum time-window estimate of Jamin, Danzig,
//! Shenker & Zhang 1997 ("A Measurement-based Admission Control Algorithm
//! for Integrated Services Packet Networks", IEEE/ACM ToN 5(1)), as
//! [MACE98 §3] "Estimator" describes it; T = 20 samples from §4.2.
//!
//! "This moving time window mechanism uses a fixed window size expressed
//! in number of samples. The maximum bandwidth during each measurement
//! window is recorded by the estimator. The bandwidth usage estimate is
//! updated on three occasions":
//!
//! ```text
//! on_sample(s):  window_max = max(window_max, s); n += 1
//!                (2) if s > ν̂:  ν̂ = s                      a sample above the estimate raises it at once
//!                (1) if n = T:  ν̂ = window_max; n = 0      at the end of a window, the window's maximum
//! on_admit(r):   (3) ν̂ = ν̂ + r                            an admission adds the flow's reserved rate
//!                    Restart: n = 0, window_max = none     (Continue: the window goes on)
//! ```
//!
//! ν̂ starts at 0 (no CL traffic). Samples are rates in bit/s
//! ([`LoadSample::rate_bps`]).
//!
//! | parameter | unit | allowed | default |
//! |---|---|---|---|
//! | `window` (T) | samples | ≥ 1 | 20 (§4.2: 20 × 5 s = 100 s) |
//! | `on_admit` | window rule | `Restart`, `Continue` | `Restart` |
//!
//! Interpretation (see `docs/mechanisms/mace_estimator.md`): **the window
//! restarts on admission** by default. The MACE paper does not say; it
//! uses "the same moving time window mechanism presented in [JSD97]", which
//! starts a new window T when a flow is admitted. Without the restart, a
//! window that ends soon after an admission replaces ν̂ (which then holds
//! the new flow's `r`) with a maximum measured mostly *before* the flow
//! sent anything, so its reservation is forgotten before its traffic shows
//! up and the next requests are over-admitted (tests here and in
//! `admission/mace/mod.rs` show it: 12 flows and 120% of μ instead of 9). With
//! the restart, every window maximum that replaces ν̂ was measured entirely
//! after the last admission. `Continue` is kept to show the effect.

use crate::admission::LoadSample;
use crate::error::ConfigError;
use crate::units::Rate;

/// What an admission does to the current measurement window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WindowOnAdmit {
    /// Start a new window (JSD97; the default).
    #[default]
    Restart,
    /// Keep the current window going.
    Continue,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EstimatorConfig {
    /// Window length T in samples.
    pub window: u32,
    pub on_admit: WindowOnAdmit,
}

impl Default for EstimatorConfig {
    fn default() -> Self {
        EstimatorConfig { window: 20, on_admit: WindowOnAdmit::Restart }
    }
}

impl EstimatorConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.window == 0 {
            return Err(ConfigError::new("mace_estimator", "window", "(0 samples) must be at least 1 sample"));
        }
        Ok(())
    }
}

/// The time-window estimate ν̂ of the CL load, in bit/s.
#[derive(Clone, Debug)]
pub struct Estimator {
    config: EstimatorConfig,
    estimate: f64,
    window_max: Option<f64>,
    in_window: u32,
    windows_completed: u64,
}

impl Estimator {
    pub fn new(config: EstimatorConfig) -> Result<Estimator, ConfigError> {
        config.validate()?;
        Ok(Estimator { config, estimate: 0.0, window_max: None, in_window: 0, windows_completed: 0 })
    }
    pub fn config(&self) -> &EstimatorConfig {
        &self.config
    }
    /// ν̂, bit/s.
    pub fn estimate(&self) -> f64 {
        self.estimate
    }
    /// Samples in the current window.
    pub fn window_samples(&self) -> u32 {
        self.in_window
    }
    /// The largest sample of the current window, if it has one.
    pub fn window_max(&self) -> Option<f64> {
        self.window_max
    }
    /// Windows that ran to their end (admission restarts do not count).
    pub fn windows_completed(&self) -> u64 {
        self.windows_completed
    }
    /// Rules (1) and (2): one measurement sample.
    pub fn on_sample(&mut self, sample: &LoadSample) {
        self.add_rate(sample.rate_bps());
    }
    pub(crate) fn add_rate(&mut self, s: f64) {
        let s = if s.is_finite() && s > 0.0 { s } else { 0.0 };
        self.window_max = Some(self.window_max.map_or(s, |m| m.max(s)));
        self.in_window += 1;
        if s > self.estimate {
            self.estimate = s;
        }
        if self.in_window >= self.config.window {
            self.estimate = self.window_max.unwrap_or(0.0);
            self.window_max = None;
            self.in_window = 0;
            self.windows_completed += 1;
        }
    }
    /// Rule (3): a flow reserving `r` was admitted.
    pub fn on_admit(&mut self, r: Rate) {
        self.estimate += r.as_f64();
        if self.config.on_admit == WindowOnAdmit::Restart {
            self.window_max = None;
            self.in_window = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(window: u32, on_admit: WindowOnAdmit) -> Estimator {
        Estimator::new(EstimatorConfig { window, on_admit }).unwrap()
    }

    #[test]
    fn estimator_window_end_sets_the_estimate_to_the_window_maximum() {
        let mut e = est(3, WindowOnAdmit::Restart);
        for s in [500.0, 900.0, 700.0] {
            e.add_rate(s);
        }
        assert_eq!(e.estimate(), 900.0);
        for s in [300.0, 200.0] {
            e.add_rate(s);
        }
        assert_eq!(e.estimate(), 900.0, "mid-window, lower samples do not lower it");
        e.add_rate(400.0);
        assert_eq!(e.estimate(), 400.0, "end of window: the window's maximum, even when lower");
        assert_eq!(e.windows_completed(), 2);
        assert_eq!(e.window_max(), None);
    }

    #[test]
    fn estimator_sample_above_the_estimate_raises_it_at_once() {
        let mut e = est(20, WindowOnAdmit::Restart);
        e.add_rate(100.0);
        assert_eq!(e.estimate(), 100.0);
        e.add_rate(50.0);
        assert_eq!(e.estimate(), 100.0);
        e.add_rate(250.0);
        assert_eq!(e.estimate(), 250.0, "raised on the sample, not at the end of the window");
        assert_eq!(e.window_samples(), 3);
    }

    #[test]
    fn estimator_admission_adds_the_reserved_rate() {
        let mut e = est(20, WindowOnAdmit::Continue);
        e.add_rate(1000.0);
        e.on_admit(Rate(77_200));
        assert_eq!(e.estimate(), 78_200.0);
        assert_eq!(e.window_samples(), 1, "Continue keeps the window");
        let mut r = est(20, WindowOnAdmit::Restart);
        r.add_rate(1000.0);
        r.on_admit(Rate(77_200));
        assert_eq!(r.estimate(), 78_200.0);
        assert_eq!((r.window_samples(), r.window_max()), (0, None), "Restart starts a new window");
    }

    #[test]
    fn estimator_restart_keeps_a_new_flow_reserved_until_its_window_has_measured_it() {
        // 10 flows of 50 kb/s measured; a new flow reserving 77.2 kb/s is
        // admitted at the 19th sample of the window and is silent at first
        // (an ON/OFF source in an OFF period).
        let run = |on_admit| {
            let mut e = est(20, on_admit);
            for _ in 0..19 {
                e.add_rate(500_000.0);
            }
            e.on_admit(Rate(77_200));
            e.add_rate(500_000.0); // the 20th sample of the old window
            e.estimate()
        };
        assert_eq!(run(WindowOnAdmit::Continue), 500_000.0, "the window ended: the new flow's r is forgotten");
        assert_eq!(run(WindowOnAdmit::Restart), 577_200.0, "r stays until a whole window measured the flow");
    }

    #[test]
    fn estimator_ignores_non_finite_samples_and_refuses_an_empty_window() {
        let mut e = est(2, WindowOnAdmit::Restart);
        e.add_rate(f64::NAN);
        e.add_rate(-5.0);
        assert_eq!(e.estimate(), 0.0);
        e.on_sample(&LoadSample { at: crate::units::Time(0), interval: crate::units::Dur::from_secs(5), bits: 500 });
        assert_eq!(e.estimate(), 100.0);
        assert_eq!(Estimator::new(EstimatorConfig { window: 0, ..Default::default() }).unwrap_err().field, "window");
    }
}
