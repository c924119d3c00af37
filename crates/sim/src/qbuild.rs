//! Building queue disciplines from their scenario description.
//!
//! The one place where a [`QueueSpec`] becomes a core [`Queue`]: the
//! validator calls it to check parameters (so a scenario is refused for
//! exactly the reasons the mechanism would refuse it), the simulator to
//! build its links' queues.

use crate::scenario::{ClassifyBy, QueueMode, QueueSpec};
use qoslab_core::classful::{Classful, StrictPriority, TagClassifier};
use qoslab_core::error::ConfigError;
use qoslab_core::fifo::{Fifo, FifoConfig};
use qoslab_core::red::{Red, RedConfig, RedMode};
use qoslab_core::{Queue, Rate};

/// A queue error with the path of the offending field below the queue
/// (`max_th`, `bands.1.limit`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueBuildError {
    pub field_path: String,
    pub error: ConfigError,
}

/// Builds the queue described by `spec` feeding a link of `link_rate`.
pub fn build_queue(spec: &QueueSpec, link_rate: Rate) -> Result<Queue, QueueBuildError> {
    let wrap = |e: ConfigError| QueueBuildError { field_path: e.field.to_string(), error: e };
    Ok(match spec {
        QueueSpec::Fifo { limit } => Queue::new(Box::new(Fifo::new(FifoConfig { limit: *limit }).map_err(wrap)?)),
        QueueSpec::Red { limit, min_th, max_th, max_p, w_q, gentle, ecn, mode, mean_pkt_size } => {
            let cfg = RedConfig {
                limit: *limit,
                min_th: *min_th,
                max_th: *max_th,
                max_p: *max_p,
                w_q: *w_q,
                gentle: *gentle,
                ecn: *ecn,
                mode: match mode {
                    QueueMode::Packets => RedMode::Packets,
                    QueueMode::Bytes => RedMode::Bytes,
                },
                mean_pkt_size: *mean_pkt_size,
            };
            Queue::new(Box::new(Red::new(cfg, link_rate).map_err(wrap)?))
        }
        QueueSpec::Mace { buffer } => Queue::new(Box::new(
            qoslab_core::mace::MaceQueue::new(qoslab_core::mace::MaceQueueConfig { limit: *buffer }).map_err(wrap)?,
        )),
        QueueSpec::Prio { bands, classify_by } => {
            if bands.is_empty() {
                return Err(QueueBuildError {
                    field_path: "bands".into(),
                    error: ConfigError::new("prio", "bands", "is empty; give at least one band queue"),
                });
            }
            let mut children = Vec::with_capacity(bands.len());
            for (i, b) in bands.iter().enumerate() {
                if let QueueSpec::Mace { .. } = b {
                    return Err(QueueBuildError {
                        field_path: format!("bands.{i}.type"),
                        error: ConfigError::new(
                            "prio",
                            "bands",
                            "mace is a link direction's queue, not a band; allowed: fifo, red, prio",
                        ),
                    });
                }
                children.push(build_queue(b, link_rate).map_err(|e| QueueBuildError {
                    field_path: format!("bands.{i}.{}", e.field_path),
                    error: e.error,
                })?);
            }
            match classify_by {
                ClassifyBy::Class => Queue::new(Box::new(Classful::new(
                    TagClassifier::identity(children.len()),
                    StrictPriority,
                    children,
                ))),
                ClassifyBy::Dscp => {
                    // The eight precedences (DSCP >> 3) are spread evenly
                    // over the bands, highest first: band = (7 - prec) * n / 8.
                    // With two bands EF (46, precedence 5) and CS4-CS7 go
                    // first, everything else second.
                    let n = children.len();
                    let map = (0..64u8).map(|d| (7 - (d >> 3) as usize) * n / 8).collect::<Vec<_>>();
                    Queue::new(Box::new(Classful::new(DscpClassifier { map }, StrictPriority, children)))
                }
            }
        }
    })
}

/// Maps a packet's DSCP to a band through a 64-entry table.
struct DscpClassifier {
    map: Vec<usize>,
}

impl qoslab_core::classful::Classifier for DscpClassifier {
    fn classify(&mut self, pkt: &qoslab_core::Packet) -> Option<usize> {
        self.map.get((pkt.dscp & 0x3f) as usize).copied()
    }
}
