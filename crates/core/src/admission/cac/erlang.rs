//! Erlang-B: blocking of a loss system with n servers and offered load A,
//! and its inverse (the load, hence the arrival rate, for a target blocking).
//!
//! Source: A. K. Erlang (1917); the recurrence is the standard stable form
//! (e.g. Iversen, *Teletraffic Engineering and Network Planning*, §4.3).
//! The TCP-CAC paper [Tarasiuk05 §4] uses it to set
//! the arrival rate of Table 4: n = N_max = 74, holding time 10 s, 1 %
//! blocking → λ = 5.98 calls/s.
//!
//! ```text
//! B(n, A) = (Aⁿ/n!) / Σ_{k=0..n} A^k/k!                 (Erlang's formula)
//! B(0) = 1,  B(k) = A·B(k−1) / (k + A·B(k−1))          (recurrence used here)
//! A = λ · h                                             (offered load, erlangs)
//! ```
//!
//! The recurrence only adds and divides positive numbers, so it neither
//! overflows (no Aⁿ, no n!) nor cancels; its cost is O(n). The blocking is
//! insensitive to the holding-time distribution beyond its mean (M/G/n/n).
//!
//! The inverse solves B(n, A) = p for A by bisection on the strictly
//! increasing map A ↦ B(n, A), bracketed by [0, n/(1−p)] (since the carried
//! load A(1−B) cannot exceed n, B(n, A) ≥ 1 − n/A, so B(n, n/(1−p)) ≥ p).
//! It stops when the bracket is narrower than [`INVERSE_REL_TOL`] times its
//! upper end (~45 halvings when A is of the order of n). The blocking at the answer then differs
//! from p by a relative error of at most about (n − A + A·B)·1e-12 (the
//! elasticity of B in A times the tolerance), below 1e-6 for n ≤ 10⁶.
//!
//! | parameter | unit     | range                 |
//! |-----------|----------|-----------------------|
//! | `servers` | count    | 0 ..= [`MAX_SERVERS`] (≥ 1 for the inverse) |
//! | `offered` | erlangs  | finite, ≥ 0           |
//! | `target`  | ratio    | (0, 1)                |
//! | `holding` | seconds  | finite, > 0           |

use crate::error::ConfigError;

const MECH: &str = "erlang_b";

/// Relative width of the final bisection bracket of the inverse.
pub const INVERSE_REL_TOL: f64 = 1e-12;

/// The largest server count accepted (the recurrence is O(n); the inverse
/// evaluates it ~50 times). Far above any link the paper's schemes meet.
pub const MAX_SERVERS: u64 = 10_000_000;

fn check_servers(servers: u64) -> Result<(), ConfigError> {
    if servers > MAX_SERVERS {
        return Err(ConfigError::new(MECH, "servers", format!("({servers}) must be at most {MAX_SERVERS}")));
    }
    Ok(())
}

/// B(n, A) by the recurrence; `offered` in erlangs.
pub fn erlang_b(servers: u64, offered: f64) -> Result<f64, ConfigError> {
    check_servers(servers)?;
    if !(offered.is_finite() && offered >= 0.0) {
        return Err(ConfigError::new(MECH, "offered_load", format!("({offered} erl) must be finite and >= 0")));
    }
    Ok(erlang_b_unchecked(servers, offered))
}

fn erlang_b_unchecked(servers: u64, a: f64) -> f64 {
    let mut b = 1.0f64;
    for k in 1..=servers {
        let ab = a * b;
        b = ab / (k as f64 + ab);
    }
    b
}

/// The offered load A (erlangs) at which `servers` servers block a fraction `target`.
pub fn erlang_b_offered_load(servers: u64, target: f64) -> Result<f64, ConfigError> {
    check_servers(servers)?;
    if servers == 0 {
        return Err(ConfigError::new(MECH, "servers", "(0) must be at least 1: with no server every call is blocked"));
    }
    if !(target.is_finite() && target > 0.0 && target < 1.0) {
        return Err(ConfigError::new(MECH, "target_blocking", format!("({target}) must be in (0, 1), e.g. 0.01")));
    }
    let n = servers as f64;
    let (mut lo, mut hi) = (0.0f64, n / (1.0 - target));
    // B(n, lo) < target ≤ B(n, hi) throughout.
    // Enough halvings to walk from n down to the smallest normal f64 and then refine.
    for _ in 0..2200 {
        if hi - lo <= INVERSE_REL_TOL * hi {
            break;
        }
        let mid = 0.5 * (lo + hi);
        if erlang_b_unchecked(servers, mid) < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(0.5 * (lo + hi))
}

/// The arrival rate λ (per second) that gives blocking `target` with
/// `servers` servers and a mean holding time of `holding_s` seconds: A / h.
pub fn erlang_b_arrival_rate(servers: u64, holding_s: f64, target: f64) -> Result<f64, ConfigError> {
    if !(holding_s.is_finite() && holding_s > 0.0) {
        return Err(ConfigError::new(MECH, "holding_time", format!("({holding_s} s) must be finite and > 0")));
    }
    Ok(erlang_b_offered_load(servers, target)? / holding_s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(x: f64, y: f64, rel: f64) -> bool {
        (x / y - 1.0).abs() <= rel
    }

    #[test]
    fn small_cases_match_the_closed_form() {
        assert_eq!(erlang_b(0, 3.0).unwrap(), 1.0);
        assert_eq!(erlang_b(5, 0.0).unwrap(), 0.0);
        for a in [0.1, 1.0, 7.5] {
            assert!(close(erlang_b(1, a).unwrap(), a / (1.0 + a), 1e-15));
            let two = a * a / 2.0 / (1.0 + a + a * a / 2.0);
            assert!(close(erlang_b(2, a).unwrap(), two, 1e-15));
        }
    }

    #[test]
    fn b_10_5_is_the_textbook_value() {
        // 0.0183845703366481... (mpmath, 50 digits).
        assert!(close(erlang_b(10, 5.0).unwrap(), 0.018_384_570_336_648_13, 1e-13));
    }

    #[test]
    fn paper_load_gives_one_percent_at_74_servers() {
        // λ = 5.98/s, h = 10 s: A = 59.8 erl → B = 0.0099930 (mpmath).
        assert!(close(erlang_b(74, 59.8).unwrap(), 0.009_992_953_543_226_7, 1e-12));
        let lambda = erlang_b_arrival_rate(74, 10.0, 0.01).unwrap();
        assert!((lambda - 5.980_284_891_786_272).abs() < 1e-9, "{lambda}");
    }

    #[test]
    fn inverse_matches_a_standard_erlang_b_table() {
        // (n, blocking, A) from published Erlang-B tables, checked with mpmath.
        for (n, p, a) in [
            (10, 0.01, 4.461_176_857_577_69),
            (20, 0.01, 12.030_614_594_900_94),
            (50, 0.01, 37.901_398_088_524_9),
            (100, 0.01, 84.064_158_893_947_75),
            (10, 0.001, 3.092_044_997_889_299),
            (100, 0.001, 75.241_982_672_458_53),
            (10, 0.05, 6.215_707_011_048_425),
        ] {
            let got = erlang_b_offered_load(n, p).unwrap();
            assert!(close(got, a, 1e-10), "n={n} p={p}: {got} vs {a}");
        }
    }

    #[test]
    fn recurrence_is_stable_for_thousands_of_servers() {
        // mpmath references; the direct formula would overflow f64 (5000! ≈ 10^16326).
        assert!(close(erlang_b(1000, 1000.0).unwrap(), 0.024_811_917_646_160_41, 1e-11));
        assert!(close(erlang_b(5000, 5000.0).unwrap(), 0.011_199_358_278_505_49, 1e-10));
        assert!(close(erlang_b(5000, 4800.0).unwrap(), 9.275_841_339_695_1e-5, 1e-9));
        let a = erlang_b_offered_load(5000, 0.011_199_358_278_505_49).unwrap();
        assert!(close(a, 5000.0, 1e-9), "{a}");
    }

    #[test]
    fn bad_inputs_are_refused_with_the_field() {
        assert_eq!(erlang_b(10, -1.0).unwrap_err().field, "offered_load");
        assert_eq!(erlang_b(10, f64::NAN).unwrap_err().field, "offered_load");
        assert_eq!(erlang_b(MAX_SERVERS + 1, 1.0).unwrap_err().field, "servers");
        assert_eq!(erlang_b_offered_load(0, 0.01).unwrap_err().field, "servers");
        for bad in [0.0, 1.0, -0.5, f64::NAN] {
            let e = erlang_b_offered_load(10, bad).unwrap_err();
            assert_eq!(e.field, "target_blocking");
            assert!(e.to_string().starts_with("erlang_b.target_blocking ("), "{e}");
        }
        assert_eq!(erlang_b_arrival_rate(74, 0.0, 0.01).unwrap_err().field, "holding_time");
    }
}
