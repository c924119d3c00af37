//! Admission control with shaping-rate assignment for TCP connections:
//! the paper's schemes #1, #2 and #3 as one [`AdmissionControl`].
//!
//! Source: Tarasiuk, Janowski & Burakowski [Tarasiuk05],
//! section 4, equations (2), (4), (5), (6). Each admitted connection is
//! shaped at the network entry to a rate R_i; the controller decides
//! admission and assigns R_i. ρ and the test ΣR ≤ ρC come from [`super::rho`].
//!
//! ```text
//! #1  R_new = R_req                          admit iff ΣR_i + R_new ≤ ρC      (2),(4)
//! #2  R_i   = S · R_req,i / ΣR_req,j  ∀ i    admit iff ΣR_req,j + R_req ≤ ρC
//!     (homogeneous: R_i = S/n), re-assigned at every arrival and departure;
//!     S = C (the paper's example) or S = ρC (option)
//! #3  R_new = max{R_req, (ρC − ΣR_i)/k}      admit iff R_new + ΣR_i ≤ ρC      (5),(6)
//!     fixed for the connection's life, k > 1
//! ```
//!
//! | parameter  | unit  | range          | default (paper, Table 4)        |
//! |------------|-------|----------------|---------------------------------|
//! | `capacity` | bit/s | > 0            | 100 Mb/s                        |
//! | ρ          | ratio | (0, 1] or (B, IPLR) | B = 10 pkts, IPLR = 1e-3 (ρ = 0.743) |
//! | `R_req`    | bit/s | > 0, per request (`FlowRequest::rate`) | 1 Mb/s   |
//! | `k` (#3)   | —     | > 1, finite    | 3                               |
//! | `share` (#2) | —   | `Capacity` (C) or `RhoCapacity` (ρC) | `Capacity` |
//!
//! Interpretations (each also in `docs/mechanisms/tcp_cac_schemes.md`):
//! - **#2 blocks at the CAC limit.** The paper states #2's goals as "at the
//!   CAC limit, rates according to the requested throughput; below it,
//!   share the whole capacity fairly", and Fig. 2 draws #2's usage flat up
//!   to the same N_max as #1. So #2 admits while the *requested* rates fit,
//!   ΣR_req + R_req ≤ ρC (n + 1 ≤ N_max when homogeneous). Table 4's "no
//!   blocking" for #2 is then a measurement (at λ = 5.98/s the mean number
//!   of connections is ~1.5, far from 74), not a rule.
//! - **#2's share.** The paper's example gives C/n (100 Mb/s, n = 10 →
//!   10 Mb/s): the default. With it ΣR_i = C > ρC, so (2) is not kept and
//!   the buffer's loss target is not protected; `Share::RhoCapacity` keeps
//!   ΣR_i ≤ ρC and gives exactly R_req ≈ ρC/N_max at the CAC limit.
//! - **#2 with unequal requests** shares S in proportion to R_req (equal to
//!   S/n for the paper's homogeneous connections), so that with S = ρC
//!   every admitted flow keeps at least its R_req.
//! - **Integer rates.** Assigned rates are whole bit/s, rounded down, so
//!   ΣR_i never exceeds S (#2) or ρC (#3).
//! - **#3 with k > 1** as the paper requires; when (ρC − ΣR)/k ≥ R_req the
//!   test (6) always holds, so #3 blocks only when ρC − ΣR_i < R_req.
//! - A request with R_req = 0 or for a flow id already running is refused
//!   (rules `"R_req > 0"`, `"flow not already admitted"`); a departure of
//!   an unknown flow is counted and otherwise ignored.

use super::rho::{check_capacity, CacLimit, Utilization};
use crate::admission::{AdmissionControl, Decision, DecisionReason, FlowRequest};
use crate::error::ConfigError;
use crate::packet::FlowId;
use crate::units::{Rate, Time};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

const MECH: &str = "cac";

/// Rule strings carried by the decisions (stable: results group by them).
pub mod rule {
    pub const SCHEME1: &str = "sum_R + R_new <= rho*C";
    pub const SCHEME2: &str = "sum_R_req + R_req <= rho*C";
    pub const SCHEME3: &str = "R_new + sum_R <= rho*C";
    pub const ZERO_RATE: &str = "R_req > 0";
    pub const DUPLICATE: &str = "flow not already admitted";
}

/// What scheme #2 divides among the running connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Share {
    /// The link capacity C (the paper's example: C/n).
    Capacity,
    /// The admissible aggregate ρC (keeps ΣR_i ≤ ρC).
    RhoCapacity,
}

/// A shaping-rate assignment scheme.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scheme {
    /// #1: R = R_req.
    Requested,
    /// #2: every running connection re-shaped to its share of S at each arrival and departure.
    Equal { share: Share },
    /// #3: R_new = max{R_req, (ρC − ΣR_i)/k}, fixed for life.
    LoadDependent { k: f64 },
}

impl Scheme {
    /// The paper's scheme number (1, 2 or 3).
    pub fn number(&self) -> u8 {
        match self {
            Scheme::Requested => 1,
            Scheme::Equal { .. } => 2,
            Scheme::LoadDependent { .. } => 3,
        }
    }
    fn validate(&self) -> Result<(), ConfigError> {
        if let Scheme::LoadDependent { k } = *self {
            if !(k.is_finite() && k > 1.0) {
                return Err(ConfigError::new(MECH, "k", format!("({k}) must be finite and > 1 (paper, eq. 5)")));
            }
        }
        Ok(())
    }
}

/// Settings of a [`ShapingCac`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShapingCacConfig {
    pub capacity: Rate,
    pub utilization: Utilization,
    pub scheme: Scheme,
}

impl ShapingCacConfig {
    /// The paper's Table 4 link: C = 100 Mb/s, B = 10, IPLR = 1e-3.
    pub fn paper(scheme: Scheme) -> ShapingCacConfig {
        ShapingCacConfig { capacity: Rate::mbps(100), utilization: Utilization::PAPER, scheme }
    }
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_capacity(self.capacity)?;
        self.utilization.rho()?;
        self.scheme.validate()
    }
}

/// A connection's shaping rate set to `rate` at `at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateChange {
    pub at: Time,
    pub flow: FlowId,
    pub rate: Rate,
}

/// Counters of a [`ShapingCac`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShapingCacStats {
    pub requests: u64,
    pub admitted: u64,
    pub rejected: u64,
    pub departures: u64,
    pub unknown_departures: u64,
    /// Rate assignments issued (first assignments and #2's re-assignments).
    pub rate_changes: u64,
}

#[derive(Clone, Copy, Debug)]
struct Conn {
    requested: Rate,
    rate: Rate,
}

/// Admission control and shaping-rate assignment for shaped TCP (schemes #1–#3).
///
/// After each `request` or `on_departure`, [`ShapingCac::drain_rate_changes`]
/// yields the rates the driver must apply to its shapers: the new flow's
/// rate, and under #2 every running flow whose rate moved.
#[derive(Clone, Debug)]
pub struct ShapingCac {
    cfg: ShapingCacConfig,
    limit: CacLimit,
    flows: BTreeMap<FlowId, Conn>,
    sum_rates: u64,
    sum_requested: u64,
    changes: Vec<RateChange>,
    stats: ShapingCacStats,
}

impl ShapingCac {
    pub fn new(cfg: ShapingCacConfig) -> Result<ShapingCac, ConfigError> {
        cfg.validate()?;
        let limit = CacLimit::new(cfg.capacity, cfg.utilization)?;
        Ok(ShapingCac {
            cfg,
            limit,
            flows: BTreeMap::new(),
            sum_rates: 0,
            sum_requested: 0,
            changes: Vec::new(),
            stats: ShapingCacStats::default(),
        })
    }
    pub fn config(&self) -> &ShapingCacConfig {
        &self.cfg
    }
    pub fn limit(&self) -> &CacLimit {
        &self.limit
    }
    pub fn stats(&self) -> &ShapingCacStats {
        &self.stats
    }
    /// Number of running (admitted, not yet departed) connections.
    pub fn running(&self) -> usize {
        self.flows.len()
    }
    /// ΣR_i over the running connections.
    pub fn sum_rates(&self) -> Rate {
        Rate(self.sum_rates)
    }
    /// ΣR_req over the running connections.
    pub fn sum_requested(&self) -> Rate {
        Rate(self.sum_requested)
    }
    /// The shaping rate currently assigned to `flow`, if it is running.
    pub fn rate_of(&self, flow: FlowId) -> Option<Rate> {
        self.flows.get(&flow).map(|c| c.rate)
    }
    /// Running flows and their rates, in flow-id order.
    pub fn rates(&self) -> impl Iterator<Item = (FlowId, Rate)> + '_ {
        self.flows.iter().map(|(f, c)| (*f, c.rate))
    }
    /// The rate assignments made since the last drain, in the order made.
    pub fn drain_rate_changes(&mut self) -> std::vec::Drain<'_, RateChange> {
        self.changes.drain(..)
    }

    /// What a request for `r_req` would get now, without changing anything:
    /// the decision and the rate the new flow would be shaped to (for #2,
    /// its share after admission).
    pub fn evaluate(&self, r_req: Rate) -> (Decision, Rate) {
        let rho_c = self.limit.rho_c();
        if r_req.0 == 0 {
            return (Decision::Reject(reason(rule::ZERO_RATE, 0.0, 0.0)), Rate(0));
        }
        match self.cfg.scheme {
            Scheme::Requested => {
                let est = self.sum_rates.saturating_add(r_req.0);
                (decide(self.limit.fits(est), rule::SCHEME1, est, rho_c), r_req)
            }
            Scheme::Equal { share } => {
                let est = self.sum_requested.saturating_add(r_req.0);
                let rate = share_of(self.share_total(share), r_req.0, est);
                (decide(self.limit.fits(est), rule::SCHEME2, est, rho_c), Rate(rate))
            }
            Scheme::LoadDependent { k } => {
                let spare = (rho_c - self.sum_rates as f64).max(0.0);
                let r_new = r_req.0.max((spare / k).floor() as u64);
                let est = self.sum_rates.saturating_add(r_new);
                (decide(self.limit.fits(est), rule::SCHEME3, est, rho_c), Rate(r_new))
            }
        }
    }

    fn share_total(&self, share: Share) -> u64 {
        match share {
            Share::Capacity => self.cfg.capacity.0,
            Share::RhoCapacity => self.limit.rho_c_floor().0,
        }
    }

    /// #2: give every running flow its share of S; record the rates that moved.
    fn reassign(&mut self, now: Time, share: Share) {
        let total = self.share_total(share);
        let sum_req = self.sum_requested;
        let mut sum = 0u64;
        for (flow, conn) in self.flows.iter_mut() {
            let rate = Rate(share_of(total, conn.requested.0, sum_req));
            if rate != conn.rate {
                conn.rate = rate;
                self.changes.push(RateChange { at: now, flow: *flow, rate });
                self.stats.rate_changes += 1;
            }
            sum += rate.0;
        }
        self.sum_rates = sum;
    }
}

/// ⌊total · part / whole⌋ in exact integer arithmetic.
fn share_of(total: u64, part: u64, whole: u64) -> u64 {
    if whole == 0 {
        return 0;
    }
    (total as u128 * part as u128 / whole as u128) as u64
}

fn reason(rule: &'static str, estimate: f64, threshold: f64) -> DecisionReason {
    DecisionReason { rule, estimate, threshold }
}

fn decide(ok: bool, rule: &'static str, estimate: u64, threshold: f64) -> Decision {
    let r = reason(rule, estimate as f64, threshold);
    if ok {
        Decision::Admit(r)
    } else {
        Decision::Reject(r)
    }
}

impl AdmissionControl for ShapingCac {
    fn kind(&self) -> &'static str {
        match self.cfg.scheme {
            Scheme::Requested => "shaping_cac_scheme1",
            Scheme::Equal { .. } => "shaping_cac_scheme2",
            Scheme::LoadDependent { .. } => "shaping_cac_scheme3",
        }
    }

    fn request(&mut self, now: Time, req: &FlowRequest) -> Decision {
        self.stats.requests += 1;
        if self.flows.contains_key(&req.flow) {
            self.stats.rejected += 1;
            let n = self.flows.len() as f64;
            return Decision::Reject(reason(rule::DUPLICATE, n, n));
        }
        let (decision, rate) = self.evaluate(req.rate);
        if !decision.admitted() {
            self.stats.rejected += 1;
            return decision;
        }
        self.stats.admitted += 1;
        self.sum_requested += req.rate.0;
        match self.cfg.scheme {
            Scheme::Equal { share } => {
                // The new flow starts "unassigned" so that reassign reports it.
                self.flows.insert(req.flow, Conn { requested: req.rate, rate: Rate(u64::MAX) });
                self.reassign(now, share);
            }
            Scheme::Requested | Scheme::LoadDependent { .. } => {
                self.flows.insert(req.flow, Conn { requested: req.rate, rate });
                self.sum_rates += rate.0;
                self.changes.push(RateChange { at: now, flow: req.flow, rate });
                self.stats.rate_changes += 1;
            }
        }
        decision
    }

    fn on_departure(&mut self, now: Time, flow: FlowId) {
        let Some(conn) = self.flows.remove(&flow) else {
            self.stats.unknown_departures += 1;
            return;
        };
        self.stats.departures += 1;
        self.sum_requested -= conn.requested.0;
        match self.cfg.scheme {
            Scheme::Equal { share } => self.reassign(now, share),
            Scheme::Requested | Scheme::LoadDependent { .. } => self.sum_rates -= conn.rate.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::ClassTag;
    use crate::units::Bytes;

    fn req(flow: u32, mbps: u64) -> FlowRequest {
        FlowRequest { flow: FlowId(flow), class: ClassTag(0), rate: Rate::mbps(mbps), depth: Bytes(0) }
    }

    fn cac(scheme: Scheme) -> ShapingCac {
        ShapingCac::new(ShapingCacConfig::paper(scheme)).unwrap()
    }

    #[test]
    fn scheme1_admits_exactly_n_max_then_refuses_with_the_rule() {
        let mut c = cac(Scheme::Requested);
        for i in 0..74 {
            assert!(c.request(Time(0), &req(i, 1)).admitted(), "flow {i}");
            assert_eq!(c.rate_of(FlowId(i)), Some(Rate::mbps(1)));
        }
        let d = c.request(Time(0), &req(74, 1));
        assert!(!d.admitted());
        assert_eq!(d.reason().rule, "sum_R + R_new <= rho*C");
        assert_eq!(d.reason().estimate, 75e6);
        assert!((d.reason().threshold - 74.328_013_588e6).abs() < 1.0);
        assert_eq!(c.stats().rejected, 1);
        c.on_departure(Time(1), FlowId(3));
        assert!(c.request(Time(2), &req(74, 1)).admitted());
        assert_eq!(c.running(), 74);
    }

    #[test]
    fn scheme2_reshapes_everyone_to_c_over_n_on_arrival_and_departure() {
        let mut c = cac(Scheme::Equal { share: Share::Capacity });
        for i in 0..10 {
            assert!(c.request(Time(0), &req(i, 1)).admitted());
        }
        // The paper's example: C = 100 Mb/s, n = 10 → 10 Mb/s each.
        assert!(c.rates().all(|(_, r)| r == Rate::mbps(10)));
        let _ = c.drain_rate_changes().count();
        for i in 10..20 {
            c.request(Time(1), &req(i, 1));
        }
        assert!(c.rates().all(|(_, r)| r == Rate::mbps(5)), "n = 20 → 5 Mb/s");
        let _ = c.drain_rate_changes().count();
        c.on_departure(Time(2), FlowId(0));
        let changes: Vec<_> = c.drain_rate_changes().collect();
        assert_eq!(changes.len(), 19, "every remaining flow is re-shaped");
        assert!(changes.iter().all(|ch| ch.rate == Rate(5_263_157) && ch.at == Time(2)));
        assert_eq!(c.sum_rates(), Rate(5_263_157 * 19));
    }

    #[test]
    fn scheme2_blocks_at_the_cac_limit_of_requested_rates() {
        for share in [Share::Capacity, Share::RhoCapacity] {
            let mut c = cac(Scheme::Equal { share });
            for i in 0..74 {
                assert!(c.request(Time(0), &req(i, 1)).admitted());
            }
            let d = c.request(Time(0), &req(74, 1));
            assert!(!d.admitted());
            assert_eq!(d.reason().rule, "sum_R_req + R_req <= rho*C");
            let per = c.rate_of(FlowId(0)).unwrap();
            match share {
                Share::Capacity => assert_eq!(per, Rate(100_000_000 / 74)),
                // ρC/74 = 1.00443 Mb/s ≥ R_req: the guarantee is kept.
                Share::RhoCapacity => assert_eq!(per, Rate(74_328_013 / 74)),
            }
        }
    }

    #[test]
    fn scheme2_shares_in_proportion_to_requests_when_they_differ() {
        let mut c = cac(Scheme::Equal { share: Share::RhoCapacity });
        c.request(Time(0), &req(0, 1));
        c.request(Time(0), &req(1, 3));
        assert_eq!(c.rate_of(FlowId(0)), Some(Rate(74_328_013 / 4)));
        assert_eq!(c.rate_of(FlowId(1)), Some(Rate(74_328_013 * 3 / 4)));
    }

    #[test]
    fn scheme3_assigns_a_third_of_the_spare_capacity_then_r_req() {
        let mut c = cac(Scheme::LoadDependent { k: 3.0 });
        let rho_c = c.limit().rho_c();
        assert!(c.request(Time(0), &req(0, 1)).admitted());
        let r0 = c.rate_of(FlowId(0)).unwrap();
        assert_eq!(r0, Rate((rho_c / 3.0).floor() as u64)); // 24.776 Mb/s
        assert!(c.request(Time(0), &req(1, 1)).admitted());
        let r1 = c.rate_of(FlowId(1)).unwrap();
        assert_eq!(r1, Rate(((rho_c - r0.as_f64()) / 3.0).floor() as u64));
        // Fill up: rates never fall below R_req, the sum never passes ρC.
        let mut i = 2;
        while c.request(Time(0), &req(i, 1)).admitted() {
            assert!(c.rate_of(FlowId(i)).unwrap() >= Rate::mbps(1));
            i += 1;
        }
        assert!(c.limit().fits(c.sum_rates().0));
        assert!(rho_c - c.sum_rates().as_f64() < 1e6, "blocked only when under R_req is left");
        let d = c.request(Time(0), &req(999, 1));
        assert_eq!(d.reason().rule, "R_new + sum_R <= rho*C");
        assert_eq!(d.reason().estimate, c.sum_rates().as_f64() + 1e6);
        // Rates are fixed for life: a departure changes nobody else's.
        let before: Vec<_> = c.rates().collect();
        c.on_departure(Time(5), FlowId(0));
        assert_eq!(c.drain_rate_changes().filter(|ch| ch.at == Time(5)).count(), 0);
        let after: Vec<_> = c.rates().collect();
        assert_eq!(&before[1..], &after[..]);
    }

    #[test]
    fn evaluate_agrees_with_request_and_changes_nothing() {
        let mut c = cac(Scheme::LoadDependent { k: 3.0 });
        c.request(Time(0), &req(0, 1));
        let (d, rate) = c.evaluate(Rate::mbps(1));
        assert_eq!(c.running(), 1);
        let got = c.request(Time(0), &req(1, 1));
        assert_eq!(d, got);
        assert_eq!(c.rate_of(FlowId(1)), Some(rate));
    }

    #[test]
    fn odd_requests_and_departures_are_refused_or_counted() {
        let mut c = cac(Scheme::Requested);
        assert!(c.request(Time(0), &req(0, 1)).admitted());
        let d = c.request(Time(0), &req(0, 1));
        assert_eq!(d.reason().rule, "flow not already admitted");
        let d = c.request(Time(0), &req(1, 0));
        assert_eq!(d.reason().rule, "R_req > 0");
        c.on_departure(Time(0), FlowId(42));
        assert_eq!(c.stats().unknown_departures, 1);
        assert_eq!(c.running(), 1);
        assert_eq!(c.stats().requests, 3);
        assert_eq!(c.stats().rejected, 2);
    }

    #[test]
    fn bad_config_is_refused_before_anything_runs() {
        for k in [1.0, 0.5, f64::NAN, f64::INFINITY] {
            let e = ShapingCac::new(ShapingCacConfig::paper(Scheme::LoadDependent { k })).unwrap_err();
            assert_eq!(e.field, "k");
            assert!(e.to_string().contains("must be finite and > 1"), "{e}");
        }
        let mut cfg = ShapingCacConfig::paper(Scheme::Requested);
        cfg.capacity = Rate(0);
        assert_eq!(ShapingCac::new(cfg).unwrap_err().field, "capacity");
        cfg.capacity = Rate::mbps(1);
        cfg.utilization = Utilization::Mdl1 { buffer_pkts: 0, iplr: 1e-3 };
        assert_eq!(ShapingCac::new(cfg).unwrap_err().field, "buffer");
    }
}
