//! The `[trace]` table: packet traces (pcapng) of chosen link directions.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Packet traces to write with the results.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    /// Link directions to trace, by name (`"r0->r1"`, as in the queues
    /// table): one pcapng file each, `pcap/<from>_to_<to>.pcapng`, with every
    /// packet put on the wire and every packet the direction's port dropped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pcap: Vec<String>,
}

impl TraceSpec {
    pub fn is_empty(&self) -> bool {
        self.pcap.is_empty()
    }
}
