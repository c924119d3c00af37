//! The CAC calculator behind `qoslab cac`: ρ and N_max from a link, and
//! optionally the Erlang-B blocking of N_max "servers" for an arrival rate,
//! or the arrival rate for a target blocking.
//!
//! Source: [Tarasiuk05 §3] (ρ, N_max: Table 2) and §4
//! (λ for 1 % blocking of scheme #1: 5.98/s). Scheme #1 holds each
//! connection for h = file / R_req and admits at most N_max, so it is an
//! Erlang loss system with N_max servers and offered load A = λh.
//!
//! | input                | unit    | range            | needed for         |
//! |----------------------|---------|------------------|--------------------|
//! | `capacity`           | bit/s   | > 0              | always             |
//! | `buffer_pkts`        | packets | ≥ 1              | always             |
//! | `iplr`               | ratio   | (0, 1)           | always             |
//! | `r_req`              | bit/s   | > 0              | always             |
//! | `holding_time_s`     | s       | > 0              | blocking, λ        |
//! | `arrival_rate_per_s` | 1/s     | ≥ 0              | blocking           |
//! | `target_blocking`    | ratio   | (0, 1)           | λ                  |
//!
//! With N_max = 0 no connection can ever be admitted: blocking is 1 and no
//! arrival rate reaches a target below 1 (the inverse reports an error).

use super::erlang::{erlang_b, erlang_b_offered_load};
use super::rho::rho_and_n_max;
use crate::error::ConfigError;
use crate::units::Rate;
use serde::{Deserialize, Serialize};

/// What to compute.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CacQuery {
    pub capacity: Rate,
    pub buffer_pkts: u64,
    pub iplr: f64,
    pub r_req: Rate,
    /// Mean holding time of a connection (the paper: 10 Mbit / 1 Mb/s = 10 s).
    pub holding_time_s: Option<f64>,
    /// Arrival rate of connection requests, for the blocking.
    pub arrival_rate_per_s: Option<f64>,
    /// Target blocking, for the arrival rate that gives it.
    pub target_blocking: Option<f64>,
}

impl CacQuery {
    /// The paper's Table 4 set-up: 100 Mb/s, B = 10, IPLR = 1e-3, 1 Mb/s, 10 s.
    pub fn paper() -> CacQuery {
        CacQuery {
            capacity: Rate::mbps(100),
            buffer_pkts: 10,
            iplr: 1e-3,
            r_req: Rate::mbps(1),
            holding_time_s: Some(10.0),
            arrival_rate_per_s: None,
            target_blocking: None,
        }
    }
}

/// The answers; the optional parts are present when their inputs were given.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CacAnswer {
    pub rho: f64,
    /// ρC in bit/s.
    pub rho_c_bps: f64,
    pub n_max: u64,
    /// A = λh and B(N_max, A), when an arrival rate and a holding time were given.
    pub offered_load_erl: Option<f64>,
    pub blocking: Option<f64>,
    /// A and λ = A/h that give `target_blocking` with N_max servers.
    pub target_offered_load_erl: Option<f64>,
    pub target_arrival_rate_per_s: Option<f64>,
}

/// Computes every answer the query has inputs for.
pub fn calculate(q: &CacQuery) -> Result<CacAnswer, ConfigError> {
    let (rho, n_max) = rho_and_n_max(q.capacity, q.buffer_pkts, q.iplr, q.r_req)?;
    let holding = match q.holding_time_s {
        Some(h) if !(h.is_finite() && h > 0.0) => {
            return Err(ConfigError::new("cac", "holding_time", format!("({h} s) must be finite and > 0")))
        }
        h => h,
    };
    let need_h = |what: &'static str| {
        ConfigError::new("cac", "holding_time", format!("is required with {what} (e.g. file size / R_req)"))
    };
    let (mut offered, mut blocking) = (None, None);
    if let Some(lambda) = q.arrival_rate_per_s {
        if !(lambda.is_finite() && lambda >= 0.0) {
            return Err(ConfigError::new("cac", "arrival_rate", format!("({lambda} /s) must be finite and >= 0")));
        }
        let h = holding.ok_or_else(|| need_h("arrival_rate"))?;
        let a = lambda * h;
        offered = Some(a);
        blocking = Some(erlang_b(n_max, a)?);
    }
    let (mut t_offered, mut t_lambda) = (None, None);
    if let Some(p) = q.target_blocking {
        let h = holding.ok_or_else(|| need_h("target_blocking"))?;
        let a = erlang_b_offered_load(n_max, p)?;
        t_offered = Some(a);
        t_lambda = Some(a / h);
    }
    Ok(CacAnswer {
        rho,
        rho_c_bps: rho * q.capacity.as_f64(),
        n_max,
        offered_load_erl: offered,
        blocking,
        target_offered_load_erl: t_offered,
        target_arrival_rate_per_s: t_lambda,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_query_gives_74_connections_and_5_98_per_second() {
        let mut q = CacQuery::paper();
        q.target_blocking = Some(0.01);
        q.arrival_rate_per_s = Some(5.98);
        let a = calculate(&q).unwrap();
        assert_eq!(a.n_max, 74);
        assert!((a.rho - 0.7433).abs() < 1e-4);
        assert!((a.rho_c_bps - 74.328e6).abs() < 1e3);
        assert!((a.target_arrival_rate_per_s.unwrap() - 5.98).abs() < 0.001);
        assert!((a.offered_load_erl.unwrap() - 59.8).abs() < 1e-12);
        assert!((a.blocking.unwrap() - 0.01).abs() < 1e-5);
    }

    #[test]
    fn only_rho_and_n_max_without_traffic_inputs() {
        let q = CacQuery { holding_time_s: None, ..CacQuery::paper() };
        let a = calculate(&q).unwrap();
        assert_eq!((a.blocking, a.target_arrival_rate_per_s), (None, None));
    }

    #[test]
    fn traffic_inputs_need_a_holding_time() {
        let q = CacQuery { holding_time_s: None, arrival_rate_per_s: Some(1.0), ..CacQuery::paper() };
        let e = calculate(&q).unwrap_err();
        assert_eq!(e.field, "holding_time");
        assert!(e.to_string().contains("required with arrival_rate"), "{e}");
        let q = CacQuery { holding_time_s: Some(-1.0), ..CacQuery::paper() };
        assert_eq!(calculate(&q).unwrap_err().field, "holding_time");
        let q = CacQuery { arrival_rate_per_s: Some(-1.0), ..CacQuery::paper() };
        assert_eq!(calculate(&q).unwrap_err().field, "arrival_rate");
        let q = CacQuery { target_blocking: Some(1.5), ..CacQuery::paper() };
        assert_eq!(calculate(&q).unwrap_err().field, "target_blocking");
    }

    #[test]
    fn a_link_too_small_for_one_flow_blocks_everything() {
        let q = CacQuery { r_req: Rate::mbps(80), arrival_rate_per_s: Some(0.1), ..CacQuery::paper() };
        let a = calculate(&q).unwrap();
        assert_eq!(a.n_max, 0);
        assert_eq!(a.blocking, Some(1.0));
        let q = CacQuery { target_blocking: Some(0.01), ..q };
        assert_eq!(calculate(&q).unwrap_err().field, "servers");
    }
}
