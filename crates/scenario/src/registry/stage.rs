//! Port stages in the registry: a link's `stages` entry to a core
//! [`Stage`], one arm per [`StageSpec`] variant, used by the simulator and
//! by validation alike.
//!
//! - `{ type = "policer", rate, depth, action }`: a core [`Policer`] (see
//!   `qoslab_core::stage::policer` and `docs/mechanisms/policer.md`);
//! - `{ type = "classifier", cache, rules, default_stream }`: a core
//!   [`ClassifierStage`] ([Guerin99 §II]; `docs/mechanisms/classifier.md`). Its
//!   rules name nodes (resolved to their addresses, see
//!   [`crate::expand::node_addr`]) and streams of the link direction's queue
//!   (see [`super::edge`]), so it is built with a [`StageContext`].

use super::edge::{streams_of, StreamRef};
use super::BuildError;
use crate::model::{MarkingSpec, NodeKind, PolicerActionSpec, PortMatch, ProtoMatch, QueueSpec, RuleSpec, StageSpec};
use qoslab_core::error::ConfigError;
use qoslab_core::stage::edge_classifier::{ClassifierConfig, ClassifierStage, PortRange, Rule, RuleAction};
use qoslab_core::stage::pcn::{ExcessMeter, ExcessMeterConfig, MarkingCurve, VirtualQueueConfig, VirtualQueueMeter};
use qoslab_core::stage::policer::{Policer, PolicerAction, PolicerConfig};
use qoslab_core::stage::Stage;
use qoslab_core::units::{Bytes, Rate, Time};
use std::net::IpAddr;

/// What a stage may refer to outside itself: the network's nodes (in
/// index order) and the queue of the link direction it sits on.
#[derive(Clone, Copy, Debug)]
pub struct StageContext<'a> {
    pub nodes: &'a [(String, NodeKind)],
    pub queue: Option<&'a QueueSpec>,
    /// The rate of the link the stage sits on (PCN meters default to half of it).
    pub link_rate: Rate,
}

/// Builds one stage from its scenario description, starting at `now`.
pub fn build_stage(spec: &StageSpec, now: Time, ctx: &StageContext<'_>) -> Result<Box<dyn Stage>, BuildError> {
    match spec {
        StageSpec::Policer { rate, depth, action } => policer(*rate, *depth, *action, now),
        StageSpec::Classifier { cache, rules, default_stream } => classifier(*cache, rules, default_stream, ctx),
        StageSpec::PcnAdmission { admissible_rate, marking, min_threshold, max_threshold, threshold, upper_limit } => {
            let rate = pcn_rate(*admissible_rate, "admissible_rate", ctx)?;
            let curve = match marking {
                MarkingSpec::Ramp => MarkingCurve::Ramp { min: *min_threshold, max: *max_threshold },
                MarkingSpec::Step => MarkingCurve::Step { at: *threshold },
            };
            let cfg = VirtualQueueConfig { admissible_rate: rate, curve, upper_limit: *upper_limit };
            let m = VirtualQueueMeter::new(cfg, now).map_err(BuildError::from)?;
            Ok(Box::new(m))
        }
        StageSpec::PcnTermination { termination_rate, depth_packets, packet_size } => {
            let rate = pcn_rate(*termination_rate, "termination_rate", ctx)?;
            if *depth_packets == 0 {
                return Err(BuildError::from(ConfigError::new(
                    "pcn_termination",
                    "depth_packets",
                    "is 0; allowed: at least 1 packet (seed: 256)",
                )));
            }
            let cfg = ExcessMeterConfig::with_packets(rate, *depth_packets, *packet_size);
            let m = ExcessMeter::new(cfg, now).map_err(|error| {
                let field_path =
                    if error.field == "depth" { "packet_size".to_string() } else { error.field.to_string() };
                BuildError::core(field_path, &error)
            })?;
            Ok(Box::new(m))
        }
    }
}

/// A PCN meter's rate: given (at most the link rate) or half the link rate ([Zhang07 §3], §4).
fn pcn_rate(given: Option<Rate>, field: &'static str, ctx: &StageContext<'_>) -> Result<Rate, BuildError> {
    let mech = if field == "admissible_rate" { "pcn_admission" } else { "pcn_termination" };
    match given {
        None => Ok(Rate(ctx.link_rate.0 / 2)),
        Some(r) if r.0 > ctx.link_rate.0 => Err(BuildError::from(ConfigError::new(
            mech,
            field,
            format!(
                "{r} is above the link rate {}; allowed: at most the link rate (the paper uses half of it)",
                ctx.link_rate
            ),
        ))),
        Some(r) => Ok(r),
    }
}

fn bad(field_path: impl Into<String>, field: &'static str, message: String) -> BuildError {
    BuildError::core(field_path, &ConfigError::new("classifier", field, message))
}

/// A `src`/`dst` match: a node name (its /32), an address, or a prefix.
fn net_of(text: &str, ctx: &StageContext<'_>, path: String, field: &'static str) -> Result<ipnet::IpNet, BuildError> {
    if let Some(i) = ctx.nodes.iter().position(|(n, _)| n == text) {
        return Ok(ipnet::IpNet::from(IpAddr::V4(crate::expand::node_addr(i))));
    }
    if let Ok(n) = text.parse::<ipnet::IpNet>() {
        return Ok(n.trunc());
    }
    if let Ok(a) = text.parse::<IpAddr>() {
        return Ok(ipnet::IpNet::from(a));
    }
    let names: Vec<&str> = ctx.nodes.iter().take(12).map(|(n, _)| n.as_str()).collect();
    Err(bad(
        path,
        field,
        format!(
            "{text:?} is neither a node, an address nor a prefix; allowed: a node ({}{}), \"10.0.0.1\" or \"10.0.0.0/8\"",
            names.join(", "),
            if ctx.nodes.len() > 12 { ", ..." } else { "" }
        ),
    ))
}

fn port_of(m: &PortMatch, path: String, field: &'static str) -> Result<PortRange, BuildError> {
    match m {
        PortMatch::One(p) => Ok(PortRange { lo: *p, hi: *p }),
        PortMatch::Range(t) => {
            let parsed = t
                .split_once('-')
                .and_then(|(a, b)| Some((a.trim().parse::<u16>().ok()?, b.trim().parse::<u16>().ok()?)));
            match parsed {
                Some((lo, hi)) if lo <= hi => Ok(PortRange { lo, hi }),
                Some((lo, hi)) => Err(bad(
                    path,
                    field,
                    format!("{t:?} runs backwards ({lo} > {hi}); allowed: \"low-high\" with low <= high"),
                )),
                None => {
                    Err(bad(path, field, format!("{t:?} is not a port range; allowed: a port (5001) or \"5000-5099\"")))
                }
            }
        }
    }
}

fn proto_of(m: &ProtoMatch, path: String) -> Result<u8, BuildError> {
    match m {
        ProtoMatch::Number(n) => Ok(*n),
        ProtoMatch::Name(t) => match t.as_str() {
            "udp" => Ok(qoslab_core::packet::proto::UDP),
            "tcp" => Ok(qoslab_core::packet::proto::TCP),
            _ => Err(bad(
                path,
                "proto",
                format!("{t:?} is not a protocol; allowed: \"udp\", \"tcp\" or a number 0..255"),
            )),
        },
    }
}

fn dscp_of(v: u8, path: String, field: &'static str) -> Result<u8, BuildError> {
    if v > 63 {
        return Err(bad(path, field, format!("{v} is not a DSCP; allowed: 0..63")));
    }
    Ok(v)
}

fn stream_action(name: &str, streams: &[StreamRef], path: String) -> Result<RuleAction, BuildError> {
    match streams.iter().find(|s| s.name == name) {
        Some(s) => Ok(RuleAction { stream: s.id, class: s.class, set_dscp: None }),
        None if streams.is_empty() => Err(bad(
            path,
            "stream",
            format!("{name:?} names a stream, but the link direction's queue has none; allowed: an edge or buffer_managed queue with streams, or a class instead of a stream"),
        )),
        None => {
            let names: Vec<&str> = streams.iter().map(|s| s.name.as_str()).collect();
            Err(bad(path, "stream", format!("no stream named {name:?} in the link direction's queue; allowed: {}", names.join(", "))))
        }
    }
}

/// A `classifier` stage: rules resolved against the nodes and the queue's streams.
fn classifier(
    cache: u32,
    rules: &[RuleSpec],
    default_stream: &Option<String>,
    ctx: &StageContext<'_>,
) -> Result<Box<dyn Stage>, BuildError> {
    let streams = ctx.queue.map(streams_of).unwrap_or_default();
    let mut out = Vec::with_capacity(rules.len());
    for (i, r) in rules.iter().enumerate() {
        let p = |f: &str| format!("rules.{i}.{f}");
        let mut action = match (&r.stream, r.class) {
            (Some(s), None) => stream_action(s, &streams, p("stream"))?,
            (None, Some(c)) => RuleAction { stream: 0, class: c, set_dscp: None },
            (Some(_), Some(_)) => {
                return Err(bad(
                    p("class"),
                    "class",
                    "is given beside stream, which sets the class itself; allowed: one of the two".into(),
                ))
            }
            (None, None) => {
                return Err(bad(
                    p("stream"),
                    "stream",
                    "is missing; a rule must say where its packets go: stream = \"name\" or class = N".into(),
                ))
            }
        };
        action.set_dscp = r.set_dscp.map(|d| dscp_of(d, p("set_dscp"), "set_dscp")).transpose()?;
        let ingress = match &r.ingress {
            None => None,
            Some(n) => match ctx.nodes.iter().position(|(x, _)| x == n) {
                Some(k) => Some(
                    u16::try_from(k)
                        .map_err(|_| bad(p("ingress"), "ingress", format!("node {n:?} has index {k}, beyond 65535")))?,
                ),
                None => {
                    return Err(bad(
                        p("ingress"),
                        "ingress",
                        format!("no node named {n:?}; allowed: the name of the node the packets arrive from"),
                    ))
                }
            },
        };
        out.push(Rule {
            priority: r.priority.unwrap_or(u32::MAX),
            src: r.src.as_deref().map(|t| net_of(t, ctx, p("src"), "src")).transpose()?,
            dst: r.dst.as_deref().map(|t| net_of(t, ctx, p("dst"), "dst")).transpose()?,
            src_port: r.src_port.as_ref().map(|m| port_of(m, p("src_port"), "src_port")).transpose()?,
            dst_port: r.dst_port.as_ref().map(|m| port_of(m, p("dst_port"), "dst_port")).transpose()?,
            proto: r.proto.as_ref().map(|m| proto_of(m, p("proto"))).transpose()?,
            ingress,
            dscp: r.dscp.map(|d| dscp_of(d, p("dscp"), "dscp")).transpose()?,
            action,
        });
    }
    // Rules that can match one packet need different priorities (the core
    // refuses them too); said here in the scenario's words.
    for j in 0..out.len() {
        for i in 0..j {
            if out[i].priority == out[j].priority && out[i].overlaps(&out[j]) {
                let why = match rules[j].priority {
                    None => "neither has a priority".to_string(),
                    Some(p) => format!("both have priority {p}"),
                };
                return Err(bad(
                    "rules",
                    "rules",
                    format!("rules {i} and {j} can match the same packets and {why}; give them different priority values (lower wins)"),
                ));
            }
        }
    }
    let default = default_stream.as_deref().map(|s| stream_action(s, &streams, "default_stream".into())).transpose()?;
    let stage = ClassifierStage::new(ClassifierConfig { rules: out, cache_capacity: cache as usize, default })
        .map_err(|e| {
            let field_path = match e.field {
                "cache_capacity" => "cache".to_string(),
                f => f.to_string(),
            };
            BuildError::core(field_path, &e)
        })?;
    Ok(Box::new(stage))
}

/// Builds a policer with a full bucket at `now`.
fn policer(rate: Rate, depth: Bytes, action: PolicerActionSpec, now: Time) -> Result<Box<dyn Stage>, BuildError> {
    let action = match action {
        PolicerActionSpec::Drop => PolicerAction::Drop,
        PolicerActionSpec::Mark => PolicerAction::Mark,
    };
    let p = Policer::new(PolicerConfig { rate, depth, action }, now).map_err(BuildError::from)?;
    Ok(Box::new(p))
}
