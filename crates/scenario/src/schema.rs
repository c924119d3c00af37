//! The scenario format's JSON Schema: what `qoslab schema` prints.
//!
//! [`json_schema()`] is draft 2020-12, derived by schemars from the types in
//! [`super::model`], with their doc comments as descriptions and their
//! defaults. Unit strings carry a `pattern` and `examples` ([`RateText`],
//! [`DurText`], [`BytesText`], [`LimitText`]), so an editor can complete
//! and check a scenario file. [`super::shape`] checks documents against the
//! same schema, with paths, before serde types them.

use super::model::Scenario;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde_json::Value as Json;
use std::borrow::Cow;
use std::sync::OnceLock;

/// A rate: a decimal number and a unit of bit/s (decimal prefixes).
pub const RATE_PATTERN: &str = r"^\s*(T1|T3|OC3|OC12|OC48|[0-9_]*[0-9][0-9_]*(\.[0-9_]+)?\s*(bps|b/s|bit|kbps|Kbps|kb/s|kbit|Kbit|Mbps|Mb/s|mbit|Mbit|Gbps|Gb/s|gbit|Gbit|Tbps|Tb/s|tbit|Tbit))\s*$";
/// A duration: a decimal number and a unit of time.
pub const DUR_PATTERN: &str = r"^\s*[0-9_]*[0-9][0-9_]*(\.[0-9_]+)?\s*(ns|us|µs|ms|s|min|h)\s*$";
/// A size: a decimal number and a unit of bytes (decimal or binary prefixes).
pub const BYTES_PATTERN: &str = r"^\s*[0-9_]*[0-9][0-9_]*(\.[0-9_]+)?\s*(B|kB|KB|MB|GB|TB|KiB|MiB|GiB|TiB)\s*$";
/// One queue limit: a packet count or a size.
pub const LIMIT_PATTERN: &str =
    r"^\s*[0-9_]*[0-9][0-9_]*(\.[0-9_]+)?\s*(pkts|pkt|p|packets|B|kB|KB|MB|GB|TB|KiB|MiB|GiB|TiB)\s*$";

macro_rules! unit_text {
    ($name:ident, $title:literal, $description:literal, $pattern:expr, [$($ex:literal),*]) => {
        #[doc = concat!("Schema of ", $description)]
        pub struct $name;
        impl JsonSchema for $name {
            fn inline_schema() -> bool {
                true
            }
            fn schema_name() -> Cow<'static, str> {
                $title.into()
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                json_schema!({
                    "type": "string",
                    "description": $description,
                    "pattern": $pattern,
                    "examples": [$($ex),*],
                })
            }
        }
    };
}

unit_text!(
    RateText,
    "Rate",
    "A rate in bit/s: a number and bps, kbps, Mbps, Gbps or Tbps (decimal: 1 kbps = 1000 bit/s), e.g. \"25Mbps\", \
     or a link name T1, T3, OC3, OC12, OC48 ([Zhang07]'s values: 1.5, 45, 155, 622, 2400 Mb/s).",
    RATE_PATTERN,
    ["25Mbps", "1.5Gbps", "64kbps"]
);
unit_text!(
    DurText,
    "Duration",
    "A duration: a number and ns, us, ms, s, min or h, e.g. \"20ms\".",
    DUR_PATTERN,
    ["20ms", "1.5s", "100us"]
);
unit_text!(
    BytesText,
    "Size",
    "A size: a number and B, kB, MB, GB, TB (decimal) or KiB, MiB, GiB, TiB (binary), e.g. \"1500B\".",
    BYTES_PATTERN,
    ["1500B", "64kB", "4KiB"]
);

/// Schema of a queue limit: `"60pkts"`, `"64kB"`, or both as a list.
pub struct LimitText;
impl JsonSchema for LimitText {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "Limit".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A queue limit: a packet count (\"60pkts\"), a size (\"64kB\"), or both \
                            ([\"60pkts\", \"64kB\"]: whichever is reached first).",
            "anyOf": [
                {"type": "string", "pattern": LIMIT_PATTERN},
                {"type": "array", "items": {"type": "string", "pattern": LIMIT_PATTERN}, "minItems": 1, "maxItems": 2},
            ],
            "examples": ["60pkts", "64kB", ["60pkts", "64kB"]],
        })
    }
}

/// The scenario format's JSON Schema, pretty-printed: the typed format's, with the paper
/// traffic models ([`crate::paper_traffic`]) beside the traffic group they expand into.
pub fn json_schema() -> String {
    static PUBLISHED: OnceLock<Json> = OnceLock::new();
    let s = PUBLISHED.get_or_init(|| {
        let mut s = schema_value().clone();
        add_paper_models(&mut s);
        s
    });
    // Serializing a JSON value cannot fail (its keys are strings).
    serde_json::to_string_pretty(s).expect("a JSON value always serializes")
}

/// `traffic` items: a [`crate::TrafficGroup`] or a `PaperTrafficGroup`, a group of a paper
/// model with the traffic group's other fields (`size` only for the MGEN models). The loader
/// expands paper models before its structural check, which therefore reads the typed schema.
fn add_paper_models(s: &mut Json) {
    use crate::paper_traffic::{VOICE_CODECS, VOICE_MIX};
    use serde_json::json;
    let tg = s["$defs"]["TrafficGroup"]["properties"].clone();
    let bare = |v: &Json, description: &str| {
        let mut v = v.clone();
        if let Some(o) = v.as_object_mut() {
            o.remove("default");
            o.insert("description".into(), description.into());
        }
        v
    };
    let mut common = tg.as_object().cloned().unwrap_or_default();
    common.remove("size");
    let mut codecs: Vec<&str> = VOICE_CODECS.iter().map(|c| c.name).collect();
    codecs.push("mix");
    let calls = json!({
        "calls_per_s": {"type": "number", "exclusiveMinimum": 0,
            "description": "Calls a second, a Poisson process (one of calls_per_s, flows, arrivals)."},
        "mean_duration": bare(&tg["start"], "Mean (exponential) call duration with calls_per_s (default \"60s\")."),
    });
    let with = |model: &str, description: &str, mut props: Json, required: &[&str]| {
        props["model"] = json!({"const": model, "type": "string"});
        let mut req = vec!["model"];
        req.extend_from_slice(required);
        json!({"description": description, "type": "object", "properties": props, "required": req})
    };
    let mut voice = calls.clone();
    voice["codec"] = json!({"type": "string", "enum": codecs, "default": "cbr",
        "description": format!("A codec of [Zhang07] Table 2.1, or \"mix\" (one group each of {}).", VOICE_MIX.join(", "))});
    let mgen = json!({
        "size": {"anyOf": [{"type": "integer", "minimum": 1}, bare(&tg["header"], "UDP payload bytes.")],
            "description": "UDP payload bytes, e.g. 512 or \"512B\"."},
        "pps": {"type": "number", "exclusiveMinimum": 0, "description": "Packets a second (mean, for POISSON)."},
    });
    s["$defs"]["PaperTrafficGroup"] = json!({
        "description": "A group of one of the papers' traffic models, expanded into the group(s) it stands for (docs/scenarios.md, \"Paper models\").",
        "type": "object",
        "properties": common,
        "required": ["name", "src", "dst"],
        "oneOf": [
            with("voice", "Voice calls of [Zhang07] Table 2.1.", voice, &[]),
            with("svd", "[Zhang07]'s synthetic video: ON/OFF, 1500 B every 1 ms, ON 340 ms, OFF 660 ms.", calls, &[]),
            with("mgen_periodic", "MGEN 3.0 PERIODIC: a cbr group at 1/pps.", mgen.clone(), &["size", "pps"]),
            with("mgen_poisson", "MGEN 3.0 POISSON: a poisson group at pps x size x 8 bit/s.", mgen, &["size", "pps"]),
        ],
        "unevaluatedProperties": false,
    });
    s["properties"]["traffic"]["items"] =
        json!({"anyOf": [{"$ref": "#/$defs/TrafficGroup"}, {"$ref": "#/$defs/PaperTrafficGroup"}]});
}

/// The schema as a JSON value, generated once.
pub(crate) fn schema_value() -> &'static Json {
    static SCHEMA: OnceLock<Json> = OnceLock::new();
    SCHEMA.get_or_init(|| schemars::schema_for!(Scenario).to_value())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_is_draft_2020_12_with_descriptions_and_unit_patterns() {
        let s: Json = serde_json::from_str(&json_schema()).unwrap();
        assert_eq!(s["$schema"], "https://json-schema.org/draft/2020-12/schema");
        assert_eq!(s["properties"]["duration"]["pattern"], DUR_PATTERN);
        assert!(s["properties"]["duration"]["description"].as_str().unwrap().contains("Simulated time"));
        let link = &s["$defs"]["LinkSpec"]["properties"];
        assert_eq!(link["rate"]["pattern"], RATE_PATTERN);
        assert_eq!(link["rate"]["examples"][0], "25Mbps");
        let fifo = &s["$defs"]["QueueSpec"]["oneOf"][0]["properties"]["limit"];
        assert_eq!(fifo["anyOf"][0]["pattern"], LIMIT_PATTERN);
        assert_eq!(fifo["anyOf"][1]["maxItems"], 2);
        // Optional unit fields keep their pattern.
        assert_eq!(s["$defs"]["TrafficGroup"]["properties"]["stop"]["pattern"], DUR_PATTERN);
    }

    #[test]
    fn schema_lists_the_traffic_timing_options_of_issue_10() {
        let s: Json = serde_json::from_str(&json_schema()).unwrap();
        let tg = &s["$defs"]["TrafficGroup"]["properties"];
        assert_eq!(tg["packetization"]["anyOf"][0]["$ref"], "#/$defs/Packetization");
        assert_eq!(tg["send_jitter"]["anyOf"][0]["$ref"], "#/$defs/SendJitter");
        let rules: Vec<&str> = s["$defs"]["Packetization"]["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["const"].as_str().unwrap())
            .collect();
        assert_eq!(rules, ["ceil", "nominal"]);
        let uniform = &s["$defs"]["SendJitter"]["oneOf"][0];
        assert_eq!(uniform["properties"]["dist"]["const"], "uniform");
        assert_eq!(uniform["properties"]["max"]["pattern"], DUR_PATTERN);
        assert_eq!(uniform["additionalProperties"], false);
    }

    #[test]
    fn schema_lists_the_source_choices_with_round_robin_the_default() {
        let s: Json = serde_json::from_str(&json_schema()).unwrap();
        let tg = &s["$defs"]["TrafficGroup"]["properties"];
        assert_eq!(tg["src_choice"]["$ref"], "#/$defs/SrcChoice");
        assert!(tg["src_choice"]["description"].as_str().unwrap().contains("`round_robin` (default"));
        let rules: Vec<&str> =
            s["$defs"]["SrcChoice"]["oneOf"].as_array().unwrap().iter().map(|v| v["const"].as_str().unwrap()).collect();
        assert_eq!(rules, ["round_robin", "random"]);
    }
}
