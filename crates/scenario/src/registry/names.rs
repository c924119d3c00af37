//! The names a scenario picks its mechanisms and models by: the tags of
//! the model's serde enums (`type`, `preset`, `model`, `process`), in
//! declaration order. Error messages ("allowed: ..."), the structural
//! check's tests and the coverage tests read these lists instead of
//! spelling them out; a test checks each against the JSON Schema that
//! schemars derives from the same enums, so adding a variant without its
//! name here fails the build's tests.

use serde::Serialize;

/// `type` of a queue ([`crate::QueueSpec`]).
pub const QUEUE_TYPES: &[&str] = &["fifo", "red", "mace", "prio", "cbt", "dcbt", "scfq", "buffer_managed", "edge"];
/// `preset` of a topology ([`crate::Topology`]).
pub const TOPOLOGY_PRESETS: &[&str] = &["dumbbell", "parking_lot", "star", "explicit"];
/// `model` of a traffic group ([`crate::TrafficModel`]).
pub const TRAFFIC_MODELS: &[&str] = &["cbr", "poisson", "on_off", "ftp", "transfer", "vtr", "mm_app"];
/// `process` of a group's `arrivals` ([`crate::Arrivals`]).
pub const ARRIVAL_PROCESSES: &[&str] = &["poisson", "batch_poisson", "keep_alive", "replay"];
/// `type` of the scenario's `admission` ([`crate::AdmissionSpec`]).
pub const ADMISSION_TYPES: &[&str] = &["admit_all", "shaping_cac"];
/// `type` of a MACE link's `admission` ([`crate::MaceAdmissionSpec`]).
pub const MACE_ADMISSION_TYPES: &[&str] = &["mbac", "ssac"];

/// Every queue type but `mace`, which is only a link direction's queue (it
/// needs the link's `mace` table): what a priority band or a topology's
/// `default_queue` may be.
pub fn queue_types_except_mace() -> Vec<&'static str> {
    QUEUE_TYPES.iter().copied().filter(|t| *t != "mace").collect()
}

/// The tag `tag` of `value` as serialized (an internally tagged enum), as
/// one of `names`; `"?"` if it is none of them (a test keeps the lists and
/// the enums in step).
pub fn tag_of<T: Serialize>(value: &T, tag: &str, names: &'static [&'static str]) -> &'static str {
    let v = serde_json::to_value(value).ok();
    let t = v.as_ref().and_then(|v| v.get(tag)).and_then(|t| t.as_str());
    names.iter().copied().find(|n| Some(*n) == t).unwrap_or("?")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::schema_value;

    /// The `const` values of the tag property in a definition's `oneOf`, in order.
    fn schema_tags(def: &str, tag: &str) -> Vec<String> {
        let root = schema_value();
        let d = &root["$defs"][def];
        let alts = d["oneOf"].as_array().unwrap_or_else(|| panic!("{def} has no oneOf: {d}"));
        alts.iter()
            .map(|a| a["properties"][tag]["const"].as_str().unwrap_or_else(|| panic!("{def}: {a}")).to_string())
            .collect()
    }

    #[test]
    fn every_name_list_is_its_enum_in_the_json_schema() {
        for (def, tag, names) in [
            ("QueueSpec", "type", QUEUE_TYPES),
            ("Topology", "preset", TOPOLOGY_PRESETS),
            ("TrafficGroup", "model", TRAFFIC_MODELS),
            ("Arrivals", "process", ARRIVAL_PROCESSES),
            ("AdmissionSpec", "type", ADMISSION_TYPES),
            ("MaceAdmissionSpec", "type", MACE_ADMISSION_TYPES),
        ] {
            assert_eq!(schema_tags(def, tag), names, "{def}.{tag}");
        }
    }

    #[test]
    fn bands_and_default_queues_may_be_every_queue_but_mace() {
        assert_eq!(queue_types_except_mace(), ["fifo", "red", "prio", "cbt", "dcbt", "scfq", "buffer_managed", "edge"]);
    }
}
