//! The edge-router QoS of [Guerin99] in the registry: the `scfq`,
//! `buffer_managed` and `edge` queues and the stream table a `classifier`
//! stage resolves its rules' `stream` names against.
//!
//! Streams are numbered 1, 2, ... in the order a depth-first walk of the
//! queue meets them (`prio`/`scfq` children in order); 0 is "no stream".
//! [`streams_of`] and the builders below walk in the same order, so the id
//! a rule gives a packet is the id its buffer-managed queue knows.

use super::queue::build_with;
use super::BuildError;
use crate::{ClassifyBy, EdgeService, EdgeStreamSpec, QueueSpec, ScfqChild, StreamSpec};
use qoslab_core::error::ConfigError;
use qoslab_core::qdisc::buffer::{BufferConfig, BufferManaged, StreamShare};
use qoslab_core::qdisc::classful::{Classful, TagClassifier};
use qoslab_core::qdisc::scfq::Scfq;
use qoslab_core::{Queue, Rate};

/// A stream of a link direction's queue: its name, its id on packets and
/// the class tag that sends it to its child queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamRef {
    pub name: String,
    pub id: u16,
    pub class: u8,
}

/// The streams of `q` (and of its children), numbered as the builders number them.
pub fn streams_of(q: &QueueSpec) -> Vec<StreamRef> {
    let mut out = Vec::new();
    walk(q, None, &mut out);
    out
}

fn walk(q: &QueueSpec, class: Option<u8>, out: &mut Vec<StreamRef>) {
    let mut push = |name: &str, class: u8| {
        let id = u16::try_from(out.len() + 1).unwrap_or(u16::MAX);
        out.push(StreamRef { name: name.to_string(), id, class });
    };
    match q {
        QueueSpec::BufferManaged { streams, .. } => {
            for s in streams {
                push(&s.name, class.unwrap_or(0));
            }
        }
        QueueSpec::Edge { streams, .. } => {
            // EF streams first (the EF queue, class 0), then AF and BE (class 1),
            // as `edge_queue` builds them.
            for s in streams.iter().filter(|s| s.service == EdgeService::Ef) {
                push(&s.name, 0);
            }
            for s in streams.iter().filter(|s| s.service != EdgeService::Ef) {
                push(&s.name, 1);
            }
        }
        QueueSpec::Prio { bands, .. } => {
            for (i, b) in bands.iter().enumerate() {
                walk(b, Some(class.unwrap_or(i as u8)), out);
            }
        }
        QueueSpec::Scfq { queues, .. } => {
            for (i, c) in queues.iter().enumerate() {
                walk(&c.queue, Some(class.unwrap_or(i as u8)), out);
            }
        }
        _ => {}
    }
}

fn err(field_path: impl Into<String>, mechanism: &'static str, field: &'static str, msg: String) -> BuildError {
    BuildError::core(field_path, &ConfigError::new(mechanism, field, msg))
}

/// Stream names must be unique within one link direction's queue.
pub(super) fn check_unique(q: &QueueSpec) -> Result<(), BuildError> {
    let all = streams_of(q);
    for (i, s) in all.iter().enumerate() {
        if all[..i].iter().any(|o| o.name == s.name) {
            return Err(err(
                "streams",
                "streams",
                "name",
                format!("stream {:?} is defined twice; allowed: each stream name once per queue", s.name),
            ));
        }
    }
    if all.len() >= u16::MAX as usize {
        return Err(err("streams", "streams", "name", format!("{} streams; allowed: at most 65534", all.len())));
    }
    Ok(())
}

/// An `scfq` queue: SCFQ over its children at their rates.
pub(super) fn scfq_queue(
    queues: &[ScfqChild],
    classify_by: ClassifyBy,
    link_rate: Rate,
    next_id: &mut u16,
) -> Result<Queue, BuildError> {
    if queues.is_empty() {
        return Err(err("queues", "scfq", "queues", "is empty; give at least one child queue".into()));
    }
    let mut children = Vec::with_capacity(queues.len());
    for (i, c) in queues.iter().enumerate() {
        if let QueueSpec::Mace { .. } = c.queue {
            return Err(err(
                format!("queues.{i}.queue.type"),
                "scfq",
                "queues",
                "mace is a link direction's queue, not a child; allowed: any other queue type".into(),
            ));
        }
        children.push(build_with(&c.queue, link_rate, next_id).map_err(|e| e.under(format_args!("queues.{i}.queue")))?);
    }
    let rates: Vec<Rate> = queues.iter().map(|c| c.rate).collect();
    let scfq = Scfq::new(rates).map_err(|e| {
        // The core names the child by its index in the message; the field is the rate list.
        BuildError::core("queues", &e)
    })?;
    Ok(match classify_by {
        ClassifyBy::Class => {
            Queue::new(Box::new(Classful::new(TagClassifier::identity(children.len()), scfq, children)))
        }
        ClassifyBy::Dscp => {
            let map = super::queue::DscpClassifier::spread(children.len());
            Queue::new(Box::new(Classful::new(map, scfq, children)))
        }
    })
}

/// A `buffer_managed` queue whose streams take ids from `next_id` on.
pub(super) fn buffer_queue(
    buffers: u32,
    buff_size: u64,
    rate: Rate,
    streams: &[StreamSpec],
    next_id: &mut u16,
) -> Result<Queue, BuildError> {
    let shares = streams
        .iter()
        .map(|s| {
            let id = *next_id;
            *next_id = next_id.saturating_add(1);
            StreamShare { stream: id, rate: s.rate }
        })
        .collect();
    let q = buffer_managed(buffers, buff_size, rate, shares)?;
    Ok(Queue::new(Box::new(q)))
}

fn buffer_managed(
    buffers: u32,
    buff_size: u64,
    rate: Rate,
    streams: Vec<StreamShare>,
) -> Result<BufferManaged, BuildError> {
    let buff_size = u32::try_from(buff_size).map_err(|_| {
        err("buff_size", "buffer_managed", "buff_size", format!("{buff_size} B is too large; allowed: up to 4 GB"))
    })?;
    BufferManaged::new(BufferConfig { buffers, buff_size, rate, streams }).map_err(BuildError::from)
}

/// The [Guerin99] egress: SCFQ over [EF, AF/BE], each buffer-managed.
pub(super) fn edge_queue(
    buffers: u32,
    ef_buffers: Option<u32>,
    buff_size: u64,
    ef_rate: Option<Rate>,
    streams: &[EdgeStreamSpec],
    link_rate: Rate,
    next_id: &mut u16,
) -> Result<Queue, BuildError> {
    for (i, s) in streams.iter().enumerate() {
        match (s.service, s.rate) {
            (EdgeService::Be, Some(_)) => {
                return Err(err(
                    format!("streams.{i}.rate"),
                    "edge",
                    "rate",
                    format!("stream {:?} is best effort and cannot reserve a rate; allowed: service \"af\" or \"ef\" for a rate", s.name),
                ))
            }
            (EdgeService::Ef | EdgeService::Af, None) => {
                return Err(err(
                    format!("streams.{i}.rate"),
                    "edge",
                    "rate",
                    format!("stream {:?} of service {:?} needs a rate, e.g. rate = \"100kbps\"", s.name, s.service),
                ))
            }
            (_, Some(r)) if r.0 == 0 => {
                return Err(err(format!("streams.{i}.rate"), "edge", "rate", "is 0; allowed: a rate > 0".into()))
            }
            _ => {}
        }
    }
    let ef: Vec<&EdgeStreamSpec> = streams.iter().filter(|s| s.service == EdgeService::Ef).collect();
    let rest: Vec<&EdgeStreamSpec> = streams.iter().filter(|s| s.service != EdgeService::Ef).collect();
    let sum = |v: &[&EdgeStreamSpec]| v.iter().filter_map(|s| s.rate).map(|r| r.0).sum::<u64>();
    let (ef_sum, af_sum) = (sum(&ef), sum(&rest));
    if ef_sum + af_sum > link_rate.0 {
        return Err(err(
            "streams",
            "edge",
            "streams",
            format!(
                "reservations sum to {}, above the link rate {}; allowed: at most the link rate",
                Rate(ef_sum + af_sum),
                link_rate
            ),
        ));
    }
    let r_ef = ef_rate.unwrap_or(Rate(ef_sum));
    if r_ef.0 >= link_rate.0 {
        return Err(err(
            "ef_rate",
            "edge",
            "ef_rate",
            format!("{r_ef} leaves nothing for the AF/BE queue on a {link_rate} link; allowed: below the link rate"),
        ));
    }
    if r_ef.0 < ef_sum {
        return Err(err(
            "ef_rate",
            "edge",
            "ef_rate",
            format!("{r_ef} is below the EF streams' reservations ({}); allowed: at least their sum", Rate(ef_sum)),
        ));
    }
    let r_af = Rate(link_rate.0 - r_ef.0);
    if af_sum > r_af.0 {
        return Err(err(
            "streams",
            "edge",
            "streams",
            format!(
                "AF reservations sum to {}, above the AF/BE queue's rate {r_af}; allowed: at most it",
                Rate(af_sum)
            ),
        ));
    }
    if buffers == 0 {
        return Err(err("buffers", "edge", "buffers", "is 0; allowed: at least 1 packet buffer".into()));
    }
    let b_ef = match ef_buffers {
        Some(b) if b >= buffers => {
            return Err(err(
                "ef_buffers",
                "edge",
                "ef_buffers",
                format!("{b} leaves no buffer of the {buffers} for the AF/BE queue; allowed: below buffers"),
            ))
        }
        Some(b) => b,
        None if ef.is_empty() => 0,
        None => {
            let share = (buffers as f64 * r_ef.0 as f64 / link_rate.0 as f64).round() as u32;
            share.clamp(1, buffers - 1)
        }
    };
    if !ef.is_empty() && b_ef == 0 {
        return Err(err(
            "ef_buffers",
            "edge",
            "ef_buffers",
            "is 0 but there are EF streams; allowed: at least 1".into(),
        ));
    }
    let mut ids = |v: &[&EdgeStreamSpec]| -> Vec<StreamShare> {
        v.iter()
            .map(|s| {
                let id = *next_id;
                *next_id = next_id.saturating_add(1);
                StreamShare { stream: id, rate: s.rate }
            })
            .collect()
    };
    let ef_shares = ids(&ef);
    let af_shares = ids(&rest);
    // An EF queue without streams still exists (SCFQ has two children); it gets
    // one buffer and never sees a packet unless a rule sends one there.
    let ef_q = buffer_managed(b_ef.max(1), buff_size, r_ef.max(Rate(1)), ef_shares).map_err(|e| BuildError {
        field_path: if e.field_path == "buffers" { "ef_buffers".into() } else { e.field_path },
        ..e
    })?;
    let af_q = buffer_managed(buffers - b_ef, buff_size, r_af, af_shares)?;
    let scfq = Scfq::new(vec![r_ef.max(Rate(1)), r_af]).map_err(|e| BuildError::core("ef_rate", &e))?;
    Ok(Queue::new(Box::new(Classful::new(
        TagClassifier::identity(2),
        scfq,
        vec![Queue::new(Box::new(ef_q)), Queue::new(Box::new(af_q))],
    ))))
}
