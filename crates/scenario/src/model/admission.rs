//! The admission controller asked when a flow starts: admit all, or the
//! shaping CAC for TCP [Tarasiuk05 §4].

use crate::units;
use qoslab_core::units::Rate;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The admission controller asked when a flow starts.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum AdmissionSpec {
    #[default]
    AdmitAll,
    /// Shaping CAC for TCP [Tarasiuk05 §4]: admit iff the shaping rates fit
    /// ρC, ρ = 2B / (2B − ln IPLR); each admitted flow's shaper gets the
    /// rate of scheme #1 (R_req), #2 (share of C or ρC, re-assigned at every
    /// arrival and departure) or #3 (max{R_req, (ρC − ΣR)/k}, fixed).
    ShapingCac {
        /// 1, 2 or 3.
        scheme: u8,
        /// Link capacity C (default 100 Mb/s, the paper's).
        #[serde(default = "cac_capacity", with = "units::rate")]
        #[schemars(with = "crate::schema::RateText")]
        capacity: Rate,
        /// Core buffer B in packets for the M/D/1 ρ (default 10, Table 4).
        #[serde(default = "cac_buffer")]
        buffer: u64,
        /// Target packet loss IPLR in (0, 1) (default 1e-3).
        #[serde(default = "cac_iplr")]
        iplr: f64,
        /// Rate every flow requests; default: its group's `reserve` (or the model's mean wire rate).
        #[serde(default, skip_serializing_if = "Option::is_none", with = "units::rate::opt")]
        #[schemars(with = "Option<crate::schema::RateText>")]
        r_req: Option<Rate>,
        /// Scheme #3's divisor k > 1 (default 3, Table 4).
        #[serde(default = "cac_k")]
        k: f64,
        /// Scheme #2 shares `c` (C/n, the paper's example; default) or `rho_c` (ρC/n).
        #[serde(default)]
        scheme2_rate: Scheme2Rate,
    },
}

/// What scheme #2 divides among the running flows.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Scheme2Rate {
    /// The capacity C: each of n flows gets C/n.
    #[default]
    C,
    /// The admissible aggregate ρC: each gets ρC/n.
    RhoC,
}

fn cac_capacity() -> Rate {
    Rate::mbps(100)
}
fn cac_buffer() -> u64 {
    10
}
fn cac_iplr() -> f64 {
    1e-3
}
fn cac_k() -> f64 {
    3.0
}
