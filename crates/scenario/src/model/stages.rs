//! Port stages in scenarios: the `stages` (and `reverse_stages`) list of a
//! link, each a table with a `type`. A stage runs on every packet entering
//! the link direction, before its queue discipline, in list order (see
//! `qoslab_core::pipeline`). Built by [`crate::registry::build_stage`].

use crate::units;
use qoslab_core::units::{Bytes, Rate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a policer does with a packet that finds too few tokens.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PolicerActionSpec {
    /// Drop it (`drops_policed`).
    #[default]
    Drop,
    /// Pass it with its PCN excess-traffic mark set (`marks_pcn_excess`).
    Mark,
}

/// One stage of a link direction's port.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum StageSpec {
    /// A token-bucket policer (`qoslab_core::policer`): packets that find
    /// `size` bytes of tokens pass; the others are dropped or marked.
    Policer {
        /// Token rate (bit/s), e.g. "2Mbps"; > 0.
        #[serde(with = "units::rate")]
        #[schemars(with = "crate::schema::RateText")]
        rate: Rate,
        /// Bucket depth (bytes), e.g. "3000B"; > 0. The bucket starts full.
        #[serde(with = "units::bytes")]
        #[schemars(with = "crate::schema::BytesText")]
        depth: Bytes,
        /// `drop` (default) or `mark`.
        #[serde(default)]
        action: PolicerActionSpec,
    },
}
