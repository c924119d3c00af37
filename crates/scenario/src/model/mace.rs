//! MACE [MACE98] at a link: the link's `mace` table (descriptors,
//! admission control, allocation, device queue). The shared CL/BE buffer
//! is the direction's queue (`{ type = "mace", buffer = "50pkts" }`).

use super::{one, yes};
use crate::units;
use qoslab_core::units::{Bytes, Dur, Rate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

fn default_stale_timeout() -> Dur {
    Dur::from_secs(30)
}
fn default_mace_table() -> u32 {
    1024
}

/// MACE [MACE98] at a link: recognition, admission, measurement and the
/// device transmit queue. The shared CL/BE buffer is the direction's queue
/// (`queue = { type = "mace", buffer = "50pkts" }`); one MACE instance runs
/// per such direction, each with these settings.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MaceSpec {
    /// The application ports whose flows may receive CL service (the descriptor file, inline);
    /// exactly one of `ports` and `descriptors`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ports: Option<Vec<MacePortSpec>>,
    /// A flow-setup descriptor file (`[[port]]` tables, docs/mechanisms/mace_descriptors.md),
    /// relative to the scenario file like replay files; exactly one of `ports` and `descriptors`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub descriptors: Option<String>,
    /// `{ type = "mbac", v, sample, window }` or `{ type = "ssac" }`.
    pub admission: MaceAdmissionSpec,
    /// CL allocation μ (bit/s on the wire), e.g. "3.9Mbps"; > 0.
    #[serde(with = "units::rate")]
    #[schemars(with = "crate::schema::RateText")]
    pub allocation: Rate,
    /// An admitted flow (or a candidate) silent this long leaves its table; default "30s".
    #[serde(default = "default_stale_timeout", with = "units::dur")]
    #[schemars(with = "crate::schema::DurText")]
    pub stale_timeout: Dur,
    /// Device transmit queue size in packets, the one being sent included; default 1 (the paper's fix).
    #[serde(default = "one")]
    pub device_queue: u32,
    /// When BE may enter the device queue: `when_idle` (default; the paper's revised
    /// version, the one it ran) or `when_room` (its abandoned first version when
    /// `device_queue` > 1).
    #[serde(default)]
    pub be_dispatch: MaceBeDispatch,
    /// Capacity of the classifier and of the recognition table (flows); default 1024.
    #[serde(default = "default_mace_table")]
    pub table_capacity: u32,
}

/// One descriptor: a port and the token bucket of its flows.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MacePortSpec {
    /// The application port, 1..=65535.
    pub port: u16,
    /// Which port of a packet it matches: `dst` (default), `src` or `any`.
    #[serde(default)]
    pub side: MacePortSide,
    /// Reserved rate r per flow (wire bit/s), e.g. "77.2kbps".
    #[serde(with = "units::rate")]
    #[schemars(with = "crate::schema::RateText")]
    pub rate: Rate,
    /// Token-bucket depth, e.g. "386B".
    #[serde(with = "units::bytes")]
    #[schemars(with = "crate::schema::BytesText")]
    pub depth: Bytes,
    /// Packets a candidate sends before admission is asked (paper: 100 at 64 kb/s, 10 at 256 kb/s).
    pub threshold: u32,
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MacePortSide {
    #[default]
    Dst,
    Src,
    Any,
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MaceBeDispatch {
    WhenRoom,
    #[default]
    WhenIdle,
}

fn default_mbac_v() -> f64 {
    0.95
}
fn default_mbac_sample() -> Dur {
    Dur::from_secs(5)
}
fn default_mbac_window() -> u32 {
    20
}

/// MACE admission control.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum MaceAdmissionSpec {
    /// Measurement-based: admit if v·μ > r + ν̂ (Jamin et al. 1997 measured sum).
    Mbac {
        /// Target utilization v in (0, 1]; default 0.95.
        #[serde(default = "default_mbac_v")]
        v: f64,
        /// Measurement sampling period S; default "5s" (paper).
        #[serde(default = "default_mbac_sample", with = "units::dur")]
        #[schemars(with = "crate::schema::DurText")]
        sample: Dur,
        /// Estimator window T in samples; default 20 (paper).
        #[serde(default = "default_mbac_window")]
        window: u32,
        /// Restart the estimator window on each admission (default true, JSD97).
        #[serde(default = "yes")]
        restart_window: bool,
    },
    /// Simple sum: admit if Σr + r ≤ μ.
    Ssac,
}
