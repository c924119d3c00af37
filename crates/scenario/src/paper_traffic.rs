//! The papers' traffic models as `[[traffic]]` models: `model = "voice"`,
//! `"svd"`, `"mgen_periodic"` and `"mgen_poisson"`. Each is a named
//! setting of the primitive models (`cbr`, `on_off`, `poisson`), so a group
//! of one of them is expanded, in the document, into the primitive group(s)
//! it stands for before the structure check ([`super::load`] step 3); what
//! the run sees, and what the scenario echoes, is the expansion.
//!
//! | model | parameters | expands into |
//! |---|---|---|
//! | `voice` | `codec` (default `"cbr"`), one of `calls_per_s`, `flows`, `arrivals`; `mean_duration` (default `"60s"`) | `cbr` or `on_off` ([`VOICE_CODECS`]); `codec = "mix"`: one group a codec of [`VOICE_MIX`], named `<name>_<codec>` |
//! | `svd` | one of `calls_per_s`, `flows`, `arrivals`; `mean_duration` | `on_off`: 1500 B every 1 ms during exponential ON of mean 340 ms, OFF 660 ms |
//! | `mgen_periodic` | `size`, `pps`; `header` (default `"28B"`) | `cbr` with `interval` = 1/`pps`, rounded to the ns |
//! | `mgen_poisson` | `size`, `pps`; `header` (default `"28B"`) | `poisson` at `pps` × `size` × 8 bit/s of payload, rounded to the bit/s |
//!
//! `calls_per_s` stands for `arrivals = { process = "poisson", rate =
//! calls_per_s, lifetime = mean_duration }` ([Zhang07 §2.3]: Poisson calls of
//! exponential duration); with `codec = "mix"` each codec's group gets a
//! sixth of the calls, and `flows` or `arrivals` are given to each group as
//! they are. Every other key of the group (`src`, `dst`, `randomize`,
//! `start`, `admitted`, `src_choice`, ...) is the primitive group's, copied
//! as it is; a key the model sets itself (`size` of a voice codec,
//! `interval`, `on`, `rate`, ...) is refused, naming the field. Rounding is
//! half to even, as the Python builders that these replace rounded.

use qoslab_core::units::{Bytes, Dur};
use toml::{Table, Value};

/// A codec of [Zhang07] Table 2.1: payload bytes, packet spacing in ms, and
/// mean ON time in ms of a 1 s ON + OFF cycle (1000: always ON, CBR).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Codec {
    pub name: &'static str,
    pub size: u64,
    pub spacing_ms: u64,
    pub on_ms: u64,
}

/// [Zhang07] Table 2.1: the codecs, by name. VBR codecs talk during
/// exponential ON periods whose mean is the codec's ON fraction of a
/// [`VOICE_CYCLE_MS`] cycle (the paper gives the fraction only; see
/// docs/decisions.md, "PCN traffic").
pub const VOICE_CODECS: [Codec; 8] = [
    Codec { name: "cbr", size: 160, spacing_ms: 20, on_ms: 1000 },
    Codec { name: "vbr", size: 160, spacing_ms: 20, on_ms: 340 },
    Codec { name: "g711_cbr_20", size: 200, spacing_ms: 20, on_ms: 1000 },
    Codec { name: "g711_vbr_20", size: 200, spacing_ms: 20, on_ms: 400 },
    Codec { name: "g711_cbr_10", size: 120, spacing_ms: 10, on_ms: 1000 },
    Codec { name: "g711_vbr_10", size: 120, spacing_ms: 10, on_ms: 400 },
    Codec { name: "g729_cbr", size: 60, spacing_ms: 20, on_ms: 1000 },
    Codec { name: "g729_vbr", size: 60, spacing_ms: 20, on_ms: 400 },
];

/// The paper's primary MIX: the six G.711/G.729 codecs in equal proportion.
pub const VOICE_MIX: [&str; 6] = ["g711_cbr_20", "g711_vbr_20", "g711_cbr_10", "g711_vbr_10", "g729_cbr", "g729_vbr"];

/// Mean ON + OFF of a VBR voice flow: a talk spurt and a silence, about 1 s (Brady's model).
pub const VOICE_CYCLE_MS: u64 = 1000;

/// The paper models' names (`model = ...`).
pub const MODELS: [&str; 4] = ["voice", "svd", "mgen_periodic", "mgen_poisson"];

/// Keys a paper model reads (and removes) from its group, by model.
fn own_keys(model: &str) -> &'static [&'static str] {
    match model {
        "voice" => &["model", "codec", "calls_per_s", "mean_duration"],
        "svd" => &["model", "calls_per_s", "mean_duration"],
        _ => &["model", "pps", "size"],
    }
}

/// Keys of the primitive group that a paper model sets itself.
fn set_keys(model: &str) -> &'static [&'static str] {
    match model {
        "voice" | "svd" => &["size", "interval", "peak", "rate", "on", "off", "dist", "shape"],
        "mgen_periodic" => &["interval", "rate"],
        _ => &["rate"],
    }
}

/// Is `key` a parameter of the paper model of `group` (so `--set traffic.i.<key>` may set it)?
pub(crate) fn is_parameter(group: &Table, key: &str) -> bool {
    match group.get("model").and_then(Value::as_str) {
        Some(m) if MODELS.contains(&m) => own_keys(m).contains(&key) || (m.starts_with("mgen") && key == "header"),
        _ => false,
    }
}

/// The primitive model a paper-model group stands for (the fields it takes beside the model's parameters).
pub(crate) fn primitive_model(group: &Table) -> Option<&'static str> {
    match group.get("model").and_then(Value::as_str)? {
        "voice" | "svd" => Some("on_off"),
        "mgen_periodic" => Some("cbr"),
        "mgen_poisson" => Some("poisson"),
        _ => None,
    }
}

/// A problem with a paper model's group: the dotted field and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub path: String,
    pub message: String,
}

/// Expands every paper-model group of `doc["traffic"]` in place; the other
/// groups are left as they are. Every problem found, each naming its field
/// (indices are those of the document as written).
pub fn expand(doc: &mut Table) -> Vec<Problem> {
    let Some(Value::Array(groups)) = doc.get_mut("traffic") else { return Vec::new() };
    let mut problems = Vec::new();
    let mut out = Vec::with_capacity(groups.len());
    for (i, g) in std::mem::take(groups).into_iter().enumerate() {
        let model = g.as_table().and_then(|t| t.get("model")).and_then(Value::as_str).map(str::to_string);
        match (g, model) {
            (Value::Table(t), Some(m)) if MODELS.contains(&m.as_str()) => match expand_group(t, &m, i) {
                Ok(gs) => out.extend(gs.into_iter().map(Value::Table)),
                Err(ps) => problems.extend(ps),
            },
            (g, _) => out.push(g),
        }
    }
    *groups = out;
    problems
}

struct Group {
    t: Table,
    at: String,
    problems: Vec<Problem>,
}

impl Group {
    fn err(&mut self, key: &str, message: String) {
        self.problems.push(Problem { path: format!("{}.{key}", self.at), message });
    }
    /// A positive finite number (TOML integer or float), or a problem.
    fn positive(&mut self, key: &str, what: &str) -> Option<f64> {
        let v = self.t.get(key)?;
        let x = match v {
            Value::Integer(n) => Some(*n as f64),
            Value::Float(x) => Some(*x),
            _ => None,
        };
        match x {
            Some(x) if x > 0.0 && x.is_finite() => Some(x),
            _ => {
                self.err(key, format!("{v} is not {what}; allowed: a number > 0"));
                None
            }
        }
    }
    /// A duration (`"60s"` or a number of seconds is the format's: text only here).
    fn duration(&mut self, key: &str, default: &str) -> Option<Value> {
        match self.t.get(key) {
            None => Some(Value::String(default.to_string())),
            Some(Value::String(s)) if Dur::parse(s).is_ok_and(|d| d.0 > 0) => Some(Value::String(s.clone())),
            Some(v) => {
                self.err(key, format!("{v} is not a duration; allowed: a time > 0 such as \"60s\""));
                None
            }
        }
    }
}

/// The primitive group(s) of group `i`, a `model` paper model.
fn expand_group(t: Table, model: &str, i: usize) -> Result<Vec<Table>, Vec<Problem>> {
    let mut g = Group { t, at: format!("traffic.{i}"), problems: Vec::new() };
    for k in set_keys(model) {
        if g.t.contains_key(*k) {
            g.err(k, format!("set by model = \"{model}\"; allowed: the model's parameters (docs/scenarios.md)"));
        }
    }
    let out = match model {
        "voice" | "svd" => calls(&mut g, model),
        _ => mgen(&mut g, model),
    };
    match out {
        Some(gs) if g.problems.is_empty() => Ok(gs),
        _ => Err(g.problems),
    }
}

/// `voice` and `svd`: the call process and the codec(s).
fn calls(g: &mut Group, model: &str) -> Option<Vec<Table>> {
    let given: Vec<&str> = ["calls_per_s", "flows", "arrivals"].into_iter().filter(|k| g.t.contains_key(*k)).collect();
    if given.len() != 1 {
        let at = g.at.clone();
        g.problems.push(Problem {
            path: at,
            message: format!(
                "model = \"{model}\" with {}; allowed: exactly one of calls_per_s, flows and arrivals",
                if given.is_empty() { "none of them".to_string() } else { given.join(" and ") }
            ),
        });
    }
    let calls_per_s = g.positive("calls_per_s", "a call rate");
    if g.t.contains_key("mean_duration") && !g.t.contains_key("calls_per_s") {
        g.err("mean_duration", "without calls_per_s; allowed: only with calls_per_s".to_string());
    }
    let lifetime = g.duration("mean_duration", "60s");
    let codecs: Vec<Codec> = if model == "svd" {
        vec![Codec { name: "svd", size: 1500, spacing_ms: 1, on_ms: 340 }]
    } else {
        match g.t.get("codec").map(|v| (v.as_str(), v)) {
            None => vec![VOICE_CODECS[0]],
            Some((Some("mix"), _)) => VOICE_MIX.iter().filter_map(|n| codec(n)).collect(),
            Some((Some(n), _)) if codec(n).is_some() => codec(n).into_iter().collect(),
            Some((_, v)) => {
                let names: Vec<&str> = VOICE_CODECS.iter().map(|c| c.name).collect();
                let v = v.to_string();
                g.err("codec", format!("{v} is not a codec; allowed: {}, mix", names.join(", ")));
                return None;
            }
        }
    };
    if !g.problems.is_empty() {
        return None;
    }
    let mix = codecs.len() > 1;
    let cycle = if model == "svd" { 1000 } else { VOICE_CYCLE_MS };
    let name = g.t.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
    let mut base = g.t.clone();
    for k in own_keys(model) {
        base.remove(*k);
    }
    Some(
        codecs
            .iter()
            .map(|c| {
                let mut t = Table::new();
                // The primitive group's keys in the builders' order (the echo types them anyway).
                for (k, v) in &base {
                    t.insert(k.clone(), v.clone());
                }
                if mix {
                    t.insert("name".into(), Value::String(format!("{name}_{}", c.name)));
                }
                let on = c.on_ms < cycle;
                t.insert("model".into(), Value::String(if on { "on_off" } else { "cbr" }.into()));
                t.insert("size".into(), Value::String(format!("{}B", c.size)));
                t.insert("interval".into(), Value::String(format!("{}ms", c.spacing_ms)));
                if on {
                    t.insert("on".into(), Value::String(format!("{}ms", c.on_ms)));
                    t.insert("off".into(), Value::String(format!("{}ms", cycle - c.on_ms)));
                }
                if let (Some(rate), Some(lifetime)) = (calls_per_s, &lifetime) {
                    let rate = if mix { rate / codecs.len() as f64 } else { rate };
                    let mut a = Table::new();
                    a.insert("process".into(), Value::String("poisson".into()));
                    a.insert("rate".into(), Value::Float(rate));
                    a.insert("lifetime".into(), lifetime.clone());
                    t.insert("arrivals".into(), Value::Table(a));
                }
                t
            })
            .collect(),
    )
}

fn codec(name: &str) -> Option<Codec> {
    VOICE_CODECS.iter().copied().find(|c| c.name == name)
}

/// `mgen_periodic` and `mgen_poisson` (MGEN 3.0, [Guerin99 §IV]).
fn mgen(g: &mut Group, model: &str) -> Option<Vec<Table>> {
    let pps = g.positive("pps", "a packet rate");
    if !g.t.contains_key("pps") {
        g.err("pps", "missing; allowed: a number of packets per second > 0".to_string());
    }
    let size = match g.t.get("size") {
        None => {
            g.err("size", "missing; allowed: payload bytes, e.g. 512 or \"512B\"".to_string());
            None
        }
        Some(Value::Integer(n)) if *n > 0 => Some(Bytes(*n as u64)),
        Some(Value::String(s)) if Bytes::parse(s).is_ok_and(|b| b.0 > 0) => Bytes::parse(s).ok(),
        Some(v) => {
            let v = v.to_string();
            g.err("size", format!("{v} is not a size; allowed: payload bytes > 0, e.g. 512 or \"512B\""));
            None
        }
    };
    let (pps, size) = (pps?, size?);
    let mut t = g.t.clone();
    for k in own_keys(model) {
        t.remove(*k);
    }
    t.insert("size".into(), Value::String(format!("{}B", size.0)));
    t.entry("header").or_insert_with(|| Value::String("28B".into()));
    if model == "mgen_periodic" {
        let ns = (1e9 / pps).round_ties_even();
        if !(ns >= 1.0 && ns < u64::MAX as f64) {
            g.err("pps", format!("{pps} packets a second; allowed: 1e-9 to 1e9 (a spacing of 1 ns or more)"));
            return None;
        }
        t.insert("model".into(), Value::String("cbr".into()));
        t.insert("interval".into(), Value::String(format!("{}ns", ns as u64)));
    } else {
        let bps = (pps * size.0 as f64 * 8.0).round_ties_even();
        if !(bps >= 1.0 && bps < u64::MAX as f64) {
            g.err("pps", format!("{pps} packets a second of {} B; allowed: 1 bit/s to 2^64 bit/s", size.0));
            return None;
        }
        t.insert("model".into(), Value::String("poisson".into()));
        t.insert("rate".into(), Value::String(format!("{}bps", bps as u64)));
    }
    Some(vec![t])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Table {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn a_voice_mix_is_six_groups_with_a_sixth_of_the_calls_each() {
        let mut d =
            doc("[[traffic]]\nname = \"m\"\nmodel = \"voice\"\ncodec = \"mix\"\nsrc = \"a\"\ndst = \"b\"\ncalls_per_s = 6.0\n");
        assert_eq!(expand(&mut d), vec![]);
        let gs = d["traffic"].as_array().unwrap();
        let names: Vec<&str> = gs.iter().map(|g| g["name"].as_str().unwrap()).collect();
        assert_eq!(names, VOICE_MIX.iter().map(|c| format!("m_{c}")).collect::<Vec<_>>());
        assert!(gs.iter().all(|g| g["arrivals"]["rate"].as_float() == Some(1.0)));
        assert_eq!(gs[1]["model"].as_str(), Some("on_off"));
        assert_eq!((gs[1]["on"].as_str(), gs[1]["off"].as_str()), (Some("400ms"), Some("600ms")));
        assert_eq!((gs[4]["size"].as_str(), gs[4]["interval"].as_str()), (Some("60B"), Some("20ms")));
    }

    #[test]
    fn mgen_rates_round_half_to_even_and_the_header_defaults_to_28_bytes() {
        let mut d = doc(concat!(
            "[[traffic]]\nname = \"a\"\nmodel = \"mgen_periodic\"\nsrc = \"a\"\ndst = \"b\"\nsize = 972\npps = 187.5\n",
            "[[traffic]]\nname = \"b\"\nmodel = \"mgen_poisson\"\nsrc = \"a\"\ndst = \"b\"\nsize = \"100B\"\npps = 1500\n",
            "header = \"40B\"\n"
        ));
        assert_eq!(expand(&mut d), vec![]);
        let gs = d["traffic"].as_array().unwrap();
        assert_eq!(gs[0]["interval"].as_str(), Some("5333333ns"));
        assert_eq!(gs[0]["header"].as_str(), Some("28B"));
        assert_eq!(gs[1]["rate"].as_str(), Some("1200000bps"));
        assert_eq!(gs[1]["header"].as_str(), Some("40B"));
    }

    #[test]
    fn set_reaches_a_paper_models_parameters_and_its_expansions_fields() {
        let text = concat!(
            "name = \"p\"\nduration = \"2s\"\n[topology]\npreset = \"dumbbell\"\nsources = 1\n",
            "access = { rate = \"10Mbps\", delay = \"1ms\" }\nbottleneck = { rate = \"10Mbps\", delay = \"1ms\" }\n",
            "[[traffic]]\nname = \"v\"\nmodel = \"voice\"\nsrc = \"src0\"\ndst = \"sink0\"\ncalls_per_s = 1\n",
        );
        let set = |o: &[&str]| {
            let o: Vec<String> = o.iter().map(|s| s.to_string()).collect();
            crate::load::load_str(text, "s.toml", &o, None)
        };
        let sc = set(&["traffic.0.codec=vbr", "traffic.0.calls_per_s=2.5", "traffic.0.randomize=0.01"]).unwrap();
        let g = &sc.traffic[0];
        assert_eq!((g.randomize, g.arrivals.is_some()), (0.01, true));
        assert!(matches!(g.model, crate::TrafficModel::OnOff { .. }), "{:?}", g.model);
        let e = set(&["traffic.0.codex=vbr"]).unwrap_err().to_string();
        assert!(e.contains("traffic.0.codex"), "{e}");
        // A bad parameter in the file is reported at its line.
        let bad = text.replace("calls_per_s = 1", "calls_per_s = \"many\"");
        let e = crate::load::load_str(&bad, "s.toml", &[], None).unwrap_err().to_string();
        assert!(e.starts_with("s.toml:13: traffic.0.calls_per_s: \"many\" is not a call rate"), "{e}");
    }

    #[test]
    fn problems_name_the_field() {
        let mut d = doc(concat!(
            "[[traffic]]\nname = \"v\"\nmodel = \"voice\"\ncodec = \"g723\"\nsrc = \"a\"\ndst = \"b\"\nflows = 1\n",
            "[[traffic]]\nname = \"s\"\nmodel = \"svd\"\nsrc = \"a\"\ndst = \"b\"\nflows = 1\ncalls_per_s = 2\n",
            "size = \"1B\"\n",
            "[[traffic]]\nname = \"p\"\nmodel = \"mgen_periodic\"\nsrc = \"a\"\ndst = \"b\"\nsize = 10\npps = 0\n",
            "[[traffic]]\nname = \"q\"\nmodel = \"voice\"\nsrc = \"a\"\ndst = \"b\"\ncalls_per_s = -1\n",
        ));
        let ps = expand(&mut d);
        let paths: Vec<&str> = ps.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(paths, ["traffic.0.codec", "traffic.1.size", "traffic.1", "traffic.2.pps", "traffic.3.calls_per_s"]);
        assert!(ps[0].message.contains("allowed: cbr, vbr"), "{}", ps[0].message);
        assert!(ps[2].message.contains("exactly one of calls_per_s, flows and arrivals"), "{}", ps[2].message);
    }
}
