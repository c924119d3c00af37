//! The CBR admission limit for shaped TCP: utilization factor ρ from the
//! M/D/1 queue, the test ΣR_i + R_new ≤ ρC and N_max.
//!
//! Source: Tarasiuk, Janowski & Burakowski, "Application of Admission
//! Control and Traffic Shaping for providing TCP Throughput Guarantees"
//! ([Tarasiuk05]), section 3, equations (2)–(4); the
//! M/D/1 model is from COST 242 (Roberts, Mocci & Virtamo 1996), the
//! paper's reference \[8\].
//!
//! ```text
//! ρ      = 2B / (2B − ln(IPLR))           (3)   B in packets, 0 < IPLR < 1
//! admit iff ΣR_i + R_new ≤ ρC             (2)
//! N_max  = ⌊ρC / R_req⌋                   (4)   the largest n with n·R_req ≤ ρC
//! ```
//!
//! Derivation of (3) (in full in `docs/mechanisms/cac.md`): shaped TCP
//! leaves the shapers as CBR streams; their superposition is bounded by a
//! Poisson stream of fixed-size packets, an M/D/1 queue. In the diffusion
//! (heavy-traffic) approximation, counting in packet service times, the
//! queue is a reflected Brownian motion with drift −(1−ρ) and variance
//! rate ρ, whose stationary law is exponential: P(Q > x) ≈ exp(−2(1−ρ)x/ρ).
//! Setting P(Q > B) = IPLR and solving for ρ gives (3).
//!
//! | parameter | unit   | range          | paper's values                 |
//! |-----------|--------|----------------|--------------------------------|
//! | `B`       | packets| ≥ 1            | 10, 20, 50                     |
//! | `IPLR`    | ratio  | (0, 1)         | 1e-3 (ITU-T Y.1541)            |
//! | `C`       | bit/s  | > 0            | 100 Mb/s                       |
//! | `R_req`   | bit/s  | > 0            | 1, 5, 10 Mb/s                  |
//! | `ρ` given | ratio  | (0, 1]         | — (instead of B and IPLR)      |
//!
//! Interpretations:
//! - The admission test compares rates in bit/s as `f64` (exact for sums
//!   below 2^53 bit/s) with ρC, *inclusive* (`≤`), as in (2), (4) and (6).
//! - N_max is computed with that same test, so a scheme-#1 controller admits
//!   exactly N_max flows of R_req: ⌊ρC/R_req⌋ evaluated in floating point is
//!   corrected by one if it disagrees with `n·R_req ≤ ρC`.
//! - The paper's Table 2 prints ρ rounded (0.74, 0.85, 0.935); this module
//!   returns the unrounded value (0.7433, 0.8527, 0.9354).

use crate::error::ConfigError;
use crate::units::Rate;
use serde::{Deserialize, Serialize};

const MECH: &str = "cac";

/// How the utilization factor ρ is obtained.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Utilization {
    /// ρ given directly, in (0, 1].
    Rho(f64),
    /// ρ from the M/D/1 formula (3): buffer `B` in packets and target loss `IPLR`.
    Mdl1 { buffer_pkts: u64, iplr: f64 },
}

impl Utilization {
    /// The paper's default: B = 10 packets, IPLR = 1e-3 (ρ ≈ 0.743).
    pub const PAPER: Utilization = Utilization::Mdl1 { buffer_pkts: 10, iplr: 1e-3 };

    /// ρ, validated.
    pub fn rho(&self) -> Result<f64, ConfigError> {
        match *self {
            Utilization::Rho(r) => {
                if r.is_finite() && r > 0.0 && r <= 1.0 {
                    Ok(r)
                } else {
                    Err(ConfigError::new(MECH, "rho", format!("({r}) must be in (0, 1]")))
                }
            }
            Utilization::Mdl1 { buffer_pkts, iplr } => rho_mdl1(buffer_pkts, iplr),
        }
    }
}

/// ρ = 2B / (2B − ln(IPLR)), equation (3).
///
/// `buffer_pkts` ≥ 1, 0 < `iplr` < 1; anything else is a [`ConfigError`].
pub fn rho_mdl1(buffer_pkts: u64, iplr: f64) -> Result<f64, ConfigError> {
    if buffer_pkts < 1 {
        return Err(ConfigError::new(MECH, "buffer", format!("({buffer_pkts} pkts) must be at least 1 packet")));
    }
    check_iplr(iplr)?;
    let two_b = 2.0 * buffer_pkts as f64;
    Ok(two_b / (two_b - iplr.ln()))
}

/// The target loss that formula (3) ties to a given ρ and B: the inverse
/// of [`rho_mdl1`], IPLR = exp(−2B(1−ρ)/ρ).
pub fn iplr_for_rho(buffer_pkts: u64, rho: f64) -> Result<f64, ConfigError> {
    if buffer_pkts < 1 {
        return Err(ConfigError::new(MECH, "buffer", format!("({buffer_pkts} pkts) must be at least 1 packet")));
    }
    Utilization::Rho(rho).rho()?;
    Ok((-2.0 * buffer_pkts as f64 * (1.0 - rho) / rho).exp())
}

fn check_iplr(iplr: f64) -> Result<(), ConfigError> {
    if iplr.is_finite() && iplr > 0.0 && iplr < 1.0 {
        Ok(())
    } else {
        Err(ConfigError::new(MECH, "iplr", format!("({iplr}) must be in (0, 1), e.g. 1e-3")))
    }
}

pub(crate) fn check_capacity(capacity: Rate) -> Result<(), ConfigError> {
    if capacity.0 == 0 {
        return Err(ConfigError::new(MECH, "capacity", "(0bps) must be a positive rate, e.g. \"100Mbps\""));
    }
    Ok(())
}

pub(crate) fn check_r_req(r_req: Rate) -> Result<(), ConfigError> {
    if r_req.0 == 0 {
        return Err(ConfigError::new(MECH, "r_req", "(0bps) must be a positive rate, e.g. \"1Mbps\""));
    }
    Ok(())
}

/// The admissible aggregate ρC of a link, and the test (2) against it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CacLimit {
    capacity: Rate,
    rho: f64,
    rho_c: f64,
}

impl CacLimit {
    /// Validates `capacity` > 0 and ρ.
    pub fn new(capacity: Rate, utilization: Utilization) -> Result<CacLimit, ConfigError> {
        check_capacity(capacity)?;
        let rho = utilization.rho()?;
        Ok(CacLimit { capacity, rho, rho_c: rho * capacity.as_f64() })
    }
    pub fn capacity(&self) -> Rate {
        self.capacity
    }
    pub fn rho(&self) -> f64 {
        self.rho
    }
    /// ρC in bit/s.
    pub fn rho_c(&self) -> f64 {
        self.rho_c
    }
    /// ρC rounded down to a whole bit/s: the largest integer aggregate that passes [`CacLimit::fits`].
    pub fn rho_c_floor(&self) -> Rate {
        Rate(self.rho_c.floor() as u64)
    }
    /// Test (2): does an aggregate of `sum_bps` bit/s fit, `sum ≤ ρC`?
    #[inline]
    pub fn fits(&self, sum_bps: u64) -> bool {
        (sum_bps as f64) <= self.rho_c
    }
    /// N_max of (4): the largest n with n·R_req ≤ ρC (by the same test as [`CacLimit::fits`]).
    pub fn n_max(&self, r_req: Rate) -> Result<u64, ConfigError> {
        check_r_req(r_req)?;
        let r = r_req.0;
        let mut n = (self.rho_c / r as f64).floor() as u64;
        // Floating-point floor can be off by one at exact multiples; settle with the test itself.
        while n > 0 && !self.fits(n.saturating_mul(r)) {
            n -= 1;
        }
        while n.checked_add(1).and_then(|m| m.checked_mul(r)).is_some_and(|s| self.fits(s)) {
            n += 1;
        }
        Ok(n)
    }
}

/// ρ and N_max for a link of `capacity` with a buffer of `buffer_pkts`, a
/// target loss `iplr` and flows asking for `r_req` each (the paper's Table 2).
pub fn rho_and_n_max(capacity: Rate, buffer_pkts: u64, iplr: f64, r_req: Rate) -> Result<(f64, u64), ConfigError> {
    let lim = CacLimit::new(capacity, Utilization::Mdl1 { buffer_pkts, iplr })?;
    Ok((lim.rho(), lim.n_max(r_req)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rho_and_n_max_match_table_2() {
        let c = Rate::mbps(100);
        for (b, r_req, rho3, n) in [(10, 1, 0.743, 74), (20, 5, 0.853, 17), (50, 10, 0.935, 9)] {
            let (rho, n_max) = rho_and_n_max(c, b, 1e-3, Rate::mbps(r_req)).unwrap();
            assert_eq!((rho * 1000.0).round() / 1000.0, rho3, "B={b}");
            assert_eq!(n_max, n, "B={b}");
        }
    }

    #[test]
    fn rho_matches_the_closed_form_to_full_precision() {
        // mpmath, 50 digits: 20 / (20 + 3 ln 10).
        let rho = rho_mdl1(10, 1e-3).unwrap();
        assert!((rho - 0.743_280_135_880_459_7).abs() < 1e-15, "{rho}");
        assert!((rho_mdl1(50, 1e-3).unwrap() - 0.935_385_835_564_913_5).abs() < 1e-15);
    }

    #[test]
    fn iplr_for_rho_inverts_formula_3() {
        for b in [1, 10, 20, 50, 1000] {
            for iplr in [1e-1, 1e-3, 1e-6, 1e-12] {
                let rho = rho_mdl1(b, iplr).unwrap();
                let back = iplr_for_rho(b, rho).unwrap();
                assert!((back / iplr - 1.0).abs() < 1e-9, "B={b} iplr={iplr} back={back}");
            }
        }
    }

    #[test]
    fn rho_grows_with_buffer_and_with_tolerated_loss() {
        assert!(rho_mdl1(20, 1e-3).unwrap() > rho_mdl1(10, 1e-3).unwrap());
        assert!(rho_mdl1(10, 1e-2).unwrap() > rho_mdl1(10, 1e-3).unwrap());
        let r = rho_mdl1(1, 0.999_999).unwrap();
        assert!(r > 0.0 && r < 1.0);
    }

    #[test]
    fn n_max_is_exact_at_multiples() {
        // ρ = 0.5 exactly: ρC = 50 Mb/s holds exactly 50 flows of 1 Mb/s, not 49.
        let lim = CacLimit::new(Rate::mbps(100), Utilization::Rho(0.5)).unwrap();
        assert_eq!(lim.n_max(Rate::mbps(1)).unwrap(), 50);
        assert!(lim.fits(50_000_000));
        assert!(!lim.fits(50_000_001));
        assert_eq!(lim.n_max(Rate::mbps(60)).unwrap(), 0);
        let full = CacLimit::new(Rate::mbps(100), Utilization::Rho(1.0)).unwrap();
        assert_eq!(full.n_max(Rate::bps(3)).unwrap(), 33_333_333);
        assert_eq!(full.rho_c_floor(), Rate::mbps(100));
    }

    #[test]
    fn bad_inputs_name_field_value_and_range() {
        let e = rho_mdl1(0, 1e-3).unwrap_err();
        assert_eq!(e.field, "buffer");
        assert!(e.to_string().contains("(0 pkts) must be at least 1"), "{e}");
        for bad in [0.0, 1.0, -1e-3, f64::NAN, f64::INFINITY] {
            let e = rho_mdl1(10, bad).unwrap_err();
            assert_eq!(e.field, "iplr", "{bad}");
            assert!(e.to_string().starts_with("cac.iplr ("), "{e}");
        }
        assert_eq!(CacLimit::new(Rate(0), Utilization::PAPER).unwrap_err().field, "capacity");
        for bad in [0.0, 1.5, -0.2, f64::NAN] {
            assert_eq!(Utilization::Rho(bad).rho().unwrap_err().field, "rho");
        }
        let lim = CacLimit::new(Rate::mbps(100), Utilization::PAPER).unwrap();
        assert_eq!(lim.n_max(Rate(0)).unwrap_err().field, "r_req");
        assert_eq!(rho_and_n_max(Rate::mbps(100), 10, 2.0, Rate::mbps(1)).unwrap_err().field, "iplr");
    }
}
