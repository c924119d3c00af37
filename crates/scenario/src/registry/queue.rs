//! Building queue disciplines from their scenario description.
//!
//! The one place where a [`QueueSpec`] becomes a core [`Queue`]: the
//! validator calls it to check parameters (so a scenario is refused for
//! exactly the reasons the mechanism would refuse it), the simulator to
//! build its links' queues.
//!
//! CBT, D-CBT and ChIPS (`type = "cbt"`, `"dcbt"`, and `chips = ...` on
//! `red`, `cbt`, `dcbt`) become a core [`ClassQueue`] wrapped in
//! the core's [`ClassProbed`], which adds per-class counters to the queue's
//! probes (so they reach the `series` table like `red_avg`):
//! `<class>_arrivals`, `<class>_admitted` and `<class>_drops_<reason>` for
//! the reasons an arrival stage gives (`overlimit`, `early_random`,
//! `forced`, `class_threshold`), `<class>` one of `tcp`, `tagged`,
//! `untagged`; all cumulative since the run's start. A `red` queue without
//! `chips` stays the plain [`Red`] it always was.

use super::names::queue_types_except_mace;
use super::BuildError;
use crate::{ChipsSpec, ClassifyBy, QueueMode, QueueSpec, RedSpec, RedVariantSpec};
use qoslab_core::error::ConfigError;
use qoslab_core::qdisc::cbt::{
    Aqm, Cbt, CbtConfig, Chips, ChipsConfig, ClassMap, ClassProbed, ClassQueue, Dcbt, DcbtConfig, FlowCounterConfig,
    Placement, Tail,
};
use qoslab_core::qdisc::classful::{Classful, StrictPriority, TagClassifier};
use qoslab_core::qdisc::fifo::{Fifo, FifoConfig};
use qoslab_core::qdisc::red::RedStage;
use qoslab_core::qdisc::red::{Red, RedConfig, RedMode, RedVariant};
use qoslab_core::units::Dur;
use qoslab_core::{Queue, Rate};

/// Builds the queue described by `spec` feeding a link of `link_rate`.
pub fn build_queue(spec: &QueueSpec, link_rate: Rate) -> Result<Queue, BuildError> {
    super::edge::check_unique(spec)?;
    let mut next_id = 1;
    build_with(spec, link_rate, &mut next_id)
}

/// [`build_queue`] for a queue whose streams (if any) are numbered from
/// `next_id` on (see [`super::edge`]).
pub(super) fn build_with(spec: &QueueSpec, link_rate: Rate, next_id: &mut u16) -> Result<Queue, BuildError> {
    match spec {
        QueueSpec::Fifo { limit } => {
            Ok(Queue::new(Box::new(Fifo::new(FifoConfig { limit: *limit }).map_err(BuildError::from)?)))
        }
        QueueSpec::Red { red, chips } => red_queue(red, chips, link_rate),
        QueueSpec::Cbt { red, tagged_threshold, untagged_threshold, flow_interval, chips } => {
            let cfg =
                CbtConfig { red: red_config(red), tagged_th: *tagged_threshold, untagged_th: *untagged_threshold };
            let flows = flow_config("cbt", *flow_interval)?;
            // The core checks the thresholds; its field names are `tagged_th` / `untagged_th`.
            let aqm = Cbt::new(cfg, link_rate).map_err(|e| {
                let field = match e.field {
                    "tagged_th" => "tagged_threshold",
                    "untagged_th" => "untagged_threshold",
                    f => f,
                };
                BuildError::from(ConfigError { field, ..e })
            })?;
            with_placement(aqm, chips, flows)
        }
        QueueSpec::Dcbt { red, flow_interval, chips } => {
            let flows = flow_config("dcbt", *flow_interval)?;
            let aqm = Dcbt::new(DcbtConfig { red: red_config(red) }, link_rate).map_err(BuildError::from)?;
            with_placement(aqm, chips, flows)
        }
        QueueSpec::Mace { buffer } => Ok(Queue::new(Box::new(
            qoslab_core::qdisc::mace::MaceQueue::new(qoslab_core::qdisc::mace::MaceQueueConfig { limit: *buffer })
                .map_err(BuildError::from)?,
        ))),
        QueueSpec::Prio { bands, classify_by } => prio_queue(bands, *classify_by, link_rate, next_id),
        QueueSpec::Scfq { queues, classify_by } => super::edge::scfq_queue(queues, *classify_by, link_rate, next_id),
        QueueSpec::BufferManaged { buffers, buff_size, rate, streams } => {
            super::edge::buffer_queue(*buffers, buff_size.0, rate.unwrap_or(link_rate), streams, next_id)
        }
        QueueSpec::Edge { buffers, ef_buffers, buff_size, ef_rate, streams } => {
            super::edge::edge_queue(*buffers, *ef_buffers, buff_size.0, *ef_rate, streams, link_rate, next_id)
        }
    }
}

/// A `red` queue: the plain [`Red`], or RED over ChIPS when `chips` is on.
fn red_queue(red: &RedSpec, chips: &Option<ChipsSpec>, link_rate: Rate) -> Result<Queue, BuildError> {
    let cfg = red_config(red);
    match chips_config(chips)? {
        None => Ok(Queue::new(Box::new(Red::new(cfg, link_rate).map_err(BuildError::from)?))),
        Some(c) => {
            let red = RedStage::new(cfg, link_rate).map_err(BuildError::from)?;
            class_queue(red, Chips::new(c).map_err(chips_wrap)?, FlowCounterConfig::default())
        }
    }
}

/// A `prio` queue: strict priority over its bands, each built at `link_rate`.
fn prio_queue(
    bands: &[QueueSpec],
    classify_by: ClassifyBy,
    link_rate: Rate,
    next_id: &mut u16,
) -> Result<Queue, BuildError> {
    if bands.is_empty() {
        return Err(BuildError::core(
            "bands",
            &ConfigError::new("prio", "bands", "is empty; give at least one band queue"),
        ));
    }
    let mut children = Vec::with_capacity(bands.len());
    for (i, b) in bands.iter().enumerate() {
        if let QueueSpec::Mace { .. } = b {
            return Err(BuildError::core(
                format!("bands.{i}.type"),
                &ConfigError::new(
                    "prio",
                    "bands",
                    format!(
                        "mace is a link direction's queue, not a band; allowed: {}",
                        queue_types_except_mace().join(", ")
                    ),
                ),
            ));
        }
        children.push(build_with(b, link_rate, next_id).map_err(|e| e.under(format_args!("bands.{i}")))?);
    }
    Ok(match classify_by {
        ClassifyBy::Class => {
            Queue::new(Box::new(Classful::new(TagClassifier::identity(children.len()), StrictPriority, children)))
        }
        ClassifyBy::Dscp => {
            // The eight precedences (DSCP >> 3) are spread evenly
            // over the bands, highest first: band = (7 - prec) * n / 8.
            // With two bands EF (46, precedence 5) and CS4-CS7 go
            // first, everything else second.
            let map = DscpClassifier::spread(children.len());
            Queue::new(Box::new(Classful::new(map, StrictPriority, children)))
        }
    })
}

/// RED's core settings from its scenario spec.
fn red_config(r: &RedSpec) -> RedConfig {
    RedConfig {
        limit: r.limit,
        min_th: r.min_th,
        max_th: r.max_th,
        max_p: r.max_p,
        w_q: r.w_q,
        gentle: r.gentle,
        ecn: r.ecn,
        mode: match r.mode {
            QueueMode::Packets => RedMode::Packets,
            QueueMode::Bytes => RedMode::Bytes,
        },
        mean_pkt_size: r.mean_pkt_size,
        variant: match r.variant {
            RedVariantSpec::Floyd93 => RedVariant::Floyd93,
            RedVariantSpec::Ns2 => RedVariant::Ns2,
        },
    }
}

/// A ChIPS error's path is below the queue's `chips` table.
fn chips_wrap(e: ConfigError) -> BuildError {
    BuildError::from(e).under("chips")
}

fn chips_config(spec: &Option<ChipsSpec>) -> Result<Option<ChipsConfig>, BuildError> {
    let Some(t) = spec.as_ref().and_then(|c| c.settings()) else { return Ok(None) };
    let c = ChipsConfig { max_tagged_share: t.max_tagged_share, keep_flow_order: t.keep_flow_order };
    c.validate().map_err(chips_wrap)?;
    Ok(Some(c))
}

fn flow_config(mechanism: &'static str, interval: Dur) -> Result<FlowCounterConfig, BuildError> {
    if interval.0 == 0 {
        return Err(BuildError::from(ConfigError::new(
            mechanism,
            "flow_interval",
            "(0s) must be positive, e.g. \"300ms\"",
        )));
    }
    Ok(FlowCounterConfig { interval })
}

/// `aqm` over a FIFO, or over ChIPS when `chips` is on.
fn with_placement<A: Aqm + Send + 'static>(
    aqm: A,
    chips: &Option<ChipsSpec>,
    flows: FlowCounterConfig,
) -> Result<Queue, BuildError> {
    match chips_config(chips)? {
        None => class_queue(aqm, Tail::new(), flows),
        Some(c) => class_queue(aqm, Chips::new(c).map_err(chips_wrap)?, flows),
    }
}

fn class_queue<A: Aqm + Send + 'static, P: Placement + Send + 'static>(
    aqm: A,
    placement: P,
    flows: FlowCounterConfig,
) -> Result<Queue, BuildError> {
    let q = ClassQueue::new(aqm, placement, ClassMap::default(), flows).map_err(BuildError::from)?;
    Ok(Queue::new(Box::new(ClassProbed(q))))
}

/// Maps a packet's DSCP to a band through a 64-entry table.
pub(super) struct DscpClassifier {
    map: Vec<usize>,
}

impl DscpClassifier {
    /// The eight precedences (DSCP >> 3) spread evenly over `n` children,
    /// highest first: child = (7 - precedence) * n / 8.
    pub(super) fn spread(n: usize) -> DscpClassifier {
        DscpClassifier { map: (0..64u8).map(|d| (7 - (d >> 3) as usize) * n / 8).collect() }
    }
}

impl qoslab_core::qdisc::classful::Classifier for DscpClassifier {
    fn classify(&mut self, pkt: &qoslab_core::Packet) -> Option<usize> {
        self.map.get((pkt.dscp & 0x3f) as usize).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qoslab_core::qdisc::Limit;

    #[test]
    fn red_config_carries_the_variant_to_the_core() {
        let mut spec = RedSpec::new(Limit::packets(60), 5.0, 15.0);
        assert_eq!(red_config(&spec).variant, RedVariant::Floyd93);
        spec.variant = RedVariantSpec::Ns2;
        assert_eq!(red_config(&spec).variant, RedVariant::Ns2);
    }
}
