//! Pre-Congestion Notification in scenarios [Zhang07]:
//! the `[pcn]` table names the domain's edge routers and their settings;
//! the interior meters are link stages (`pcn_admission`,
//! `pcn_termination`, see [`super::StageSpec`]). Defaults are the paper's.

use crate::units;
use qoslab_core::units::Dur;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How the egress samples its congestion-level estimate [Zhang07 §3.1.2].
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CleModeSpec {
    /// Every PCN packet is a sample (§3.2-3.3: weight 0.01).
    #[default]
    PerPacket,
    /// Every `cle_interval` with PCN traffic is a sample (§3.6 on: 100 ms).
    PerInterval,
}

/// Which flows an ingress terminates first.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FlowChoiceSpec {
    #[default]
    Random,
    Newest,
    Largest,
}

/// How the number of flows to terminate is rounded (§4.3.1).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RoundingSpec {
    /// Terminate until the excess is covered (at most one flow more).
    #[default]
    Up,
    /// Terminate only while the excess is not exceeded.
    Down,
    /// Terminate the whole number of flows nearest to the excess.
    Nearest,
}

/// Where the egress's sustainable-rate measurement starts (a control; [Zhang07 §4.1] is `mark`).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TerminationStartSpec {
    /// At the first excess-marked packet.
    #[default]
    Mark,
    /// The grid interval `[kT, (k+1)T)` holding the first excess-marked packet.
    Grid,
}

fn is_mark(s: &TerminationStartSpec) -> bool {
    *s == TerminationStartSpec::Mark
}

fn cle_weight_default() -> Option<f64> {
    None
}
fn cle_threshold_default() -> Option<f64> {
    None
}
fn interval_100ms() -> Dur {
    Dur::from_ms(100)
}

/// `[pcn]`: the PCN domain's edge routers and their ingress/egress settings.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PcnSpec {
    /// The edge routers: names or patterns (`"ingress*"`). A flow whose route crosses
    /// an edge router asks the first one for admission; packets get PCN-capable there.
    pub edges: Vec<String>,
    /// `per_packet` (default) or `per_interval`.
    #[serde(default)]
    pub cle: CleModeSpec,
    /// EWMA weight of a CLE sample, in (0, 1]; default 0.01 per packet, 0.3 per interval.
    #[serde(default = "cle_weight_default", skip_serializing_if = "Option::is_none")]
    pub cle_weight: Option<f64>,
    /// The per-interval CLE's interval (default 100 ms).
    #[serde(default = "interval_100ms", with = "units::dur")]
    #[schemars(with = "crate::schema::DurText")]
    pub cle_interval: Dur,
    /// A flow is admitted while the CLE is below this, in (0, 1]; default 0.5 per packet,
    /// 0.05 per interval.
    #[serde(default = "cle_threshold_default", skip_serializing_if = "Option::is_none")]
    pub cle_threshold: Option<f64>,
    /// The sustainable-rate (egress) and sending-rate (ingress) measurement interval; default 100 ms.
    #[serde(default = "interval_100ms", with = "units::dur")]
    #[schemars(with = "crate::schema::DurText")]
    pub termination_interval: Dur,
    /// `random` (default), `newest` or `largest`.
    #[serde(default)]
    pub flow_choice: FlowChoiceSpec,
    /// `up` (default), `down` or `nearest`.
    #[serde(default)]
    pub rounding: RoundingSpec,
    /// `mark` (default) or `grid`: where the egress's sustainable-rate interval starts.
    #[serde(default, skip_serializing_if = "is_mark")]
    pub termination_start: TerminationStartSpec,
    /// Terminate at most this many flows per round ([Zhang07 §4.5] batches; default no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_flows_per_round: Option<u32>,
}
