//! The `[pcn]` table in the registry: the core's [`PcnEdgeConfig`] of the
//! domain's edge routers [Zhang07], and which
//! routers they are. Used by validation and by the simulator alike.

use super::BuildError;
use crate::model::{CleModeSpec, FlowChoiceSpec, NodeKind, PcnSpec, RoundingSpec, TerminationStartSpec};
use qoslab_core::edge::pcn::{
    CleMode, EgressConfig, FlowChoice, IngressConfig, PcnEdgeConfig, Rounding, TerminationStart,
};

/// The core configuration of every edge router of `spec`. Defaults follow
/// the CLE mode: per packet weight 0.01 and threshold 0.5 [Zhang07 §3.2-3.3],
/// per interval weight 0.3 and threshold 0.05 (§3.6's Table 3.6 setting).
pub fn edge_config(spec: &PcnSpec) -> Result<PcnEdgeConfig, BuildError> {
    let (weight, threshold, mode) = match spec.cle {
        CleModeSpec::PerPacket => {
            (spec.cle_weight.unwrap_or(0.01), spec.cle_threshold.unwrap_or(0.5), CleMode::PerPacket)
        }
        CleModeSpec::PerInterval => (
            spec.cle_weight.unwrap_or(0.3),
            spec.cle_threshold.unwrap_or(0.05),
            CleMode::PerInterval { interval: spec.cle_interval },
        ),
    };
    let cfg = PcnEdgeConfig {
        ingress: IngressConfig {
            cle_threshold: threshold,
            interval: spec.termination_interval,
            flow_choice: match spec.flow_choice {
                FlowChoiceSpec::Random => FlowChoice::Random,
                FlowChoiceSpec::Newest => FlowChoice::Newest,
                FlowChoiceSpec::Largest => FlowChoice::Largest,
            },
            rounding: match spec.rounding {
                RoundingSpec::Up => Rounding::Up,
                RoundingSpec::Down => Rounding::Down,
                RoundingSpec::Nearest => Rounding::Nearest,
            },
            max_flows_per_round: spec.max_flows_per_round,
        },
        egress: EgressConfig {
            cle_mode: mode,
            cle_weight: weight,
            termination_interval: spec.termination_interval,
            termination_start: match spec.termination_start {
                TerminationStartSpec::Mark => TerminationStart::Mark,
                TerminationStartSpec::Grid => TerminationStart::Grid,
            },
        },
    };
    cfg.validate().map_err(|e| {
        let field = match e.field {
            "interval" => "termination_interval",
            f => f,
        };
        BuildError::new(field, format!("{} {}", field, e.message))
    })?;
    Ok(cfg)
}

/// The edge routers `spec.edges` names, in node order, or the problems.
pub fn edge_nodes(spec: &PcnSpec, nodes: &[(String, NodeKind)]) -> Result<Vec<usize>, Vec<BuildError>> {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    if spec.edges.is_empty() {
        errors.push(BuildError::new("edges", "is empty; name the domain's edge routers"));
    }
    for (i, pat) in spec.edges.iter().enumerate() {
        let hits: Vec<usize> = match pat.strip_suffix('*') {
            Some(prefix) => {
                nodes.iter().enumerate().filter(|(_, (n, _))| n.starts_with(prefix)).map(|(k, _)| k).collect()
            }
            None => nodes.iter().position(|(n, _)| n == pat).into_iter().collect(),
        };
        if hits.is_empty() {
            let routers: Vec<&str> =
                nodes.iter().filter(|(_, k)| *k == NodeKind::Router).take(12).map(|(n, _)| n.as_str()).collect();
            errors.push(BuildError::new(
                format!("edges.{i}"),
                format!("{pat:?} names no node; allowed: routers such as {}", routers.join(", ")),
            ));
        }
        for k in hits {
            if nodes[k].1 != NodeKind::Router {
                errors.push(BuildError::new(
                    format!("edges.{i}"),
                    format!("{:?} is a host; allowed: routers (a PCN edge is a router)", nodes[k].0),
                ));
            } else if !out.contains(&k) {
                out.push(k);
            }
        }
    }
    out.sort_unstable();
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}
