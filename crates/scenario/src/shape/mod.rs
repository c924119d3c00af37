//! A structural check of a parsed TOML scenario against the JSON Schema
//! ([`super::schema`]), before serde types it.
//!
//! Serde buffers internally tagged and flattened enums (every `type`,
//! `preset`, `model` and `process` table), which loses the path of an
//! error inside them; this walk keeps it, and reports every structural
//! problem at once, each with its dotted path and what is allowed: unknown
//! fields, missing fields, unknown variants, wrong types, integers out of
//! range, non-finite numbers, unreadable unit strings (read by the same
//! parsers serde uses) and text longer than [`MAX_TEXT`] (4 KiB: a name, a
//! description or a path; the echo copies it into every result). It also tells `--set` which paths exist
//! (`settable`).
//!
//! It interprets the subset of JSON Schema that schemars emits for this
//! model: `$ref`, `oneOf` (internally tagged enums: the variant whose tag
//! property has the matching `const`; unit enums: string `const`s), `anyOf`
//! (optional values and untagged enums: the alternative of the value's
//! type), `enum`, `type`, `properties`, `required`,
//! `additionalProperties`/`unevaluatedProperties: false`, `items`,
//! `minItems`/`maxItems`, `minimum`/`maximum`/`format` and, for strings,
//! the unit patterns of [`super::schema`]. Serde remains the authority:
//! whatever the walk lets through is still typed by serde.

use super::schema::{schema_value, BYTES_PATTERN, DUR_PATTERN, LIMIT_PATTERN, RATE_PATTERN};
use crate::bounded::MAX_TEXT;
use qoslab_core::units::{parse_packets, Bytes, Dur, Rate};
use serde_json::Value as Json;

/// One structural problem: the dotted path of the field and what is wrong,
/// including what is allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub path: String,
    pub message: String,
}

/// Checks a parsed scenario document against the schema; every problem found.
pub fn check(doc: &toml::Table) -> Vec<Problem> {
    let root = schema_value();
    let mut w = Walker { root, out: Vec::new() };
    w.check_table(doc, root, "");
    w.out
}

/// Checks that `--set` may address `comps` in `doc`: each component names a
/// field of the model (of the variant `doc` selects, when it selects one)
/// or an existing array entry. The error says what is allowed.
pub(crate) fn settable(doc: &toml::Table, comps: &[&str]) -> Result<(), String> {
    // A group of a paper model: its own parameters, or a field of the primitive group it stands for.
    if let [_, i, key, ..] = comps {
        let group = (comps[0] == "traffic")
            .then(|| i.parse::<usize>().ok())
            .flatten()
            .and_then(|i| doc.get("traffic")?.as_array()?.get(i)?.as_table());
        if let Some(g) = group {
            if crate::paper_traffic::is_parameter(g, key) {
                return Ok(());
            }
            if let Some(primitive) = crate::paper_traffic::primitive_model(g) {
                let mut doc = doc.clone();
                if let Some(toml::Value::Table(g)) = doc
                    .get_mut("traffic")
                    .and_then(|t| t.as_array_mut())
                    .and_then(|a| a.get_mut(i.parse::<usize>().unwrap_or(0)))
                {
                    g.insert("model".into(), toml::Value::String(primitive.into()));
                }
                return settable(&doc, comps);
            }
        }
    }
    let root = schema_value();
    let w = Walker { root, out: Vec::new() };
    let mut s = root;
    let mut v: Option<&toml::Value> = None;
    let mut at = String::new();
    for (i, c) in comps.iter().enumerate() {
        let table = if i == 0 { Some(doc) } else { v.and_then(|v| v.as_table()) };
        let (child, next) = w.child(s, table, v.and_then(|v| v.as_array()), c, &at)?;
        s = child;
        v = next;
        at = join(&at, c);
    }
    Ok(())
}

/// The unit a string schema stands for, recognized by its pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    Rate,
    Dur,
    Bytes,
    Limit,
}

impl Unit {
    fn of(pattern: &str) -> Option<Unit> {
        [
            (RATE_PATTERN, Unit::Rate),
            (DUR_PATTERN, Unit::Dur),
            (BYTES_PATTERN, Unit::Bytes),
            (LIMIT_PATTERN, Unit::Limit),
        ]
        .into_iter()
        .find(|(p, _)| *p == pattern)
        .map(|(_, u)| u)
    }
    /// What is allowed, in the parsers' own words.
    fn allowed(self) -> String {
        match self {
            Unit::Rate => Rate::parse("").unwrap_err().expected.to_string(),
            Unit::Dur => Dur::parse("").unwrap_err().expected.to_string(),
            Unit::Bytes => Bytes::parse("").unwrap_err().expected.to_string(),
            Unit::Limit => "a packet count such as \"60pkts\" or a size such as \"64kB\"".to_string(),
        }
    }
    fn parses(self, s: &str) -> bool {
        match self {
            Unit::Rate => Rate::parse(s).is_ok(),
            Unit::Dur => Dur::parse(s).is_ok(),
            Unit::Bytes => Bytes::parse(s).is_ok(),
            Unit::Limit => parse_packets(s).is_ok_and(|n| n <= u64::from(u32::MAX)) || Bytes::parse(s).is_ok(),
        }
    }
    /// `None` if `s` reads; else what is wrong and what is allowed.
    fn problem(self, s: &str) -> Option<String> {
        if self.parses(s) {
            return None;
        }
        if self == Unit::Rate {
            // The parser's own words when it explains a refusal (lowercase "mbps").
            if let Err(e) = Rate::parse(s) {
                if e.expected != self.allowed() {
                    return Some(e.to_string());
                }
            }
        }
        if self == Unit::Limit && parse_packets(s).is_ok() {
            return Some(format!(
                "{s:?} is too many packets; allowed: at most {}pkts, or a size such as \"64kB\"",
                u32::MAX
            ));
        }
        if let Some(rest) = s.trim().strip_prefix('-') {
            if self.parses(rest) {
                return Some(format!("{s:?} is negative; allowed: {}", self.allowed()));
            }
        }
        Some(format!("cannot read {s:?}; allowed: {}", self.allowed()))
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// `a, b or c`.
fn or_list<S: AsRef<str>>(items: &[S]) -> String {
    match items {
        [] => String::new(),
        [one] => one.as_ref().to_string(),
        [init @ .., last] => {
            format!("{} or {}", init.iter().map(|s| s.as_ref()).collect::<Vec<_>>().join(", "), last.as_ref())
        }
    }
}

/// How a TOML value is described in messages: `the number 25`, `a table`.
fn found(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => format!("the text {s:?}"),
        toml::Value::Integer(i) => format!("the number {i}"),
        toml::Value::Float(f) => format!("the number {f}"),
        toml::Value::Boolean(b) => format!("{b}"),
        toml::Value::Datetime(d) => format!("the date {d}"),
        toml::Value::Array(_) => "a list".to_string(),
        toml::Value::Table(_) => "a table".to_string(),
    }
}

/// JSON type names of a schema's `type` (a string or a list), `null` left out.
fn types(s: &Json) -> Vec<&str> {
    match s.get("type") {
        Some(Json::String(t)) => vec![t.as_str()],
        Some(Json::Array(ts)) => ts.iter().filter_map(|t| t.as_str()).filter(|t| *t != "null").collect(),
        _ => Vec::new(),
    }
}

fn is_null_schema(s: &Json) -> bool {
    s.get("type").and_then(|t| t.as_str()) == Some("null")
}

fn value_type(v: &toml::Value) -> &'static str {
    match v {
        toml::Value::String(_) => "string",
        toml::Value::Integer(_) => "integer",
        toml::Value::Float(_) => "number",
        toml::Value::Boolean(_) => "boolean",
        toml::Value::Datetime(_) => "datetime",
        toml::Value::Array(_) => "array",
        toml::Value::Table(_) => "object",
    }
}

/// Does a schema of JSON type `t` accept a TOML value of type `vt`?
fn type_accepts(t: &str, vt: &str) -> bool {
    t == vt || (t == "number" && vt == "integer")
}

struct Walker<'a> {
    root: &'a Json,
    out: Vec<Problem>,
}

/// The variants of an internally tagged enum: the tag's name and, per
/// variant, its tag value and schema.
struct Tagged<'a> {
    tag: &'a str,
    variants: Vec<(&'a str, &'a Json)>,
}

impl<'a> Walker<'a> {
    fn problem(&mut self, path: &str, message: String) {
        self.out.push(Problem { path: path.to_string(), message });
    }

    /// Follows `$ref`s into `$defs`.
    fn resolve(&self, mut s: &'a Json) -> &'a Json {
        for _ in 0..16 {
            match s.get("$ref").and_then(|r| r.as_str()).and_then(|r| r.strip_prefix("#/$defs/")) {
                Some(name) => match self.root.get("$defs").and_then(|d| d.get(name)) {
                    Some(target) => s = target,
                    None => return s,
                },
                None => return s,
            }
        }
        s
    }

    /// Drops the `null` alternative of an optional value.
    fn unwrap_option(&self, s: &'a Json) -> &'a Json {
        let s = self.resolve(s);
        if let Some(Json::Array(alts)) = s.get("anyOf") {
            let rest: Vec<&Json> = alts.iter().filter(|a| !is_null_schema(a)).collect();
            if rest.len() == 1 {
                return self.unwrap_option(rest[0]);
            }
        }
        s
    }

    /// If `s` is an internally tagged enum, its tag and variants.
    fn tagged(&self, s: &'a Json) -> Option<Tagged<'a>> {
        let alts: Vec<&'a Json> = s.get("oneOf")?.as_array()?.iter().map(|a| self.resolve(a)).collect();
        let first = alts.first()?.get("properties")?.as_object()?;
        let tag = first.iter().find(|(k, p)| {
            p.get("const").is_some() && alts.iter().all(|a| a.pointer(&format!("/properties/{k}/const")).is_some())
        })?;
        let tag: &'a str = tag.0.as_str();
        let variants = alts
            .iter()
            .map(|a| (a.pointer(&format!("/properties/{tag}/const")).and_then(|c| c.as_str()).unwrap_or(""), *a))
            .collect();
        Some(Tagged { tag, variants })
    }

    /// If `s` is an enum of strings (`enum`, or `oneOf` of string `const`s), its values.
    fn string_enum(&self, s: &'a Json) -> Option<Vec<&'a str>> {
        if let Some(Json::Array(vs)) = s.get("enum") {
            return vs.iter().map(|v| v.as_str()).collect();
        }
        let alts = s.get("oneOf")?.as_array()?;
        alts.iter().map(|a| self.resolve(a).get("const").and_then(|c| c.as_str())).collect()
    }

    /// What a schema allows, in words.
    fn describe(&self, s: &'a Json) -> String {
        let s = self.unwrap_option(s);
        if let Some(vals) = self.string_enum(s) {
            return format!("one of {}", vals.join(", "));
        }
        if let Some(t) = self.tagged(s) {
            let names: Vec<&str> = t.variants.iter().map(|(n, _)| *n).collect();
            return format!("a table with {} = {}", t.tag, or_list(&names));
        }
        if let Some(Json::Array(alts)) = s.get("anyOf") {
            let ds: Vec<String> = alts.iter().filter(|a| !is_null_schema(a)).map(|a| self.describe(a)).collect();
            return or_list(&ds);
        }
        if let Some(c) = s.get("const").and_then(|c| c.as_str()) {
            return format!("{c:?}");
        }
        match types(s).first().copied() {
            Some("string") => match s.get("pattern").and_then(|p| p.as_str()).and_then(Unit::of) {
                Some(u) => u.allowed(),
                None => "a string in quotes".to_string(),
            },
            Some("integer") => {
                let (lo, hi) = int_range(s);
                match hi {
                    Some(hi) => format!("a whole number from {lo} to {hi}"),
                    None => format!("a whole number >= {lo}"),
                }
            }
            Some("number") => "a number".to_string(),
            Some("boolean") => "true or false".to_string(),
            Some("array") => match s.get("items") {
                Some(items) => format!("a list of {}", self.describe(items)),
                None => "a list".to_string(),
            },
            Some("object") => "a table".to_string(),
            _ => "a value".to_string(),
        }
    }

    fn check(&mut self, v: &toml::Value, s: &'a Json, path: &str) {
        if let toml::Value::String(x) = v {
            if x.len() > MAX_TEXT {
                let what = crate::bounded::size(MAX_TEXT as u64);
                self.problem(path, format!("is {} bytes of text; allowed: at most {what}", x.len()));
                return;
            }
        }
        let s = self.unwrap_option(s);
        if let Some(vals) = self.string_enum(s) {
            match v.as_str() {
                Some(x) if vals.contains(&x) => {}
                Some(x) => {
                    self.problem(path, format!("unknown value {x:?}; allowed: {}", vals.join(", ")));
                }
                None => self.problem(path, format!("found {}; allowed: one of {}", found(v), vals.join(", "))),
            }
            return;
        }
        if self.tagged(s).is_some() {
            match v.as_table() {
                Some(t) => self.check_table(t, s, path),
                None => self.problem(path, format!("found {}; allowed: {}", found(v), self.describe(s))),
            }
            return;
        }
        if let Some(Json::Array(alts)) = s.get("anyOf") {
            // An untagged choice: the alternative of the value's type.
            let vt = value_type(v);
            let pick = alts.iter().map(|a| self.unwrap_option(a)).find(|a| {
                let ts = types(a);
                ts.iter().any(|t| type_accepts(t, vt)) || (vt == "object" && self.tagged(a).is_some())
            });
            match pick {
                Some(a) => self.check(v, a, path),
                None => self.problem(path, format!("found {}; allowed: {}", found(v), self.describe(s))),
            }
            return;
        }
        let ts = types(s);
        let vt = value_type(v);
        if !ts.is_empty() && !ts.iter().any(|t| type_accepts(t, vt)) {
            self.problem(path, format!("found {}; allowed: {}", found(v), self.describe(s)));
            return;
        }
        match v {
            toml::Value::Table(t) => self.check_table(t, s, path),
            toml::Value::Array(items) => self.check_array(items, s, path),
            toml::Value::String(x) => {
                if let Some(c) = s.get("const").and_then(|c| c.as_str()) {
                    if c != x {
                        self.problem(path, format!("unknown value {x:?}; allowed: {c}"));
                    }
                } else if let Some(u) = s.get("pattern").and_then(|p| p.as_str()).and_then(Unit::of) {
                    if let Some(m) = u.problem(x) {
                        self.problem(path, m);
                    }
                }
            }
            toml::Value::Integer(i) => {
                if ts.contains(&"integer") {
                    let (lo, hi) = int_range(s);
                    if (*i as i128) < lo as i128 || hi.is_some_and(|hi| *i as i128 > hi as i128) {
                        self.problem(path, format!("{i} is out of range; allowed: {}", self.describe(s)));
                    }
                }
            }
            toml::Value::Float(f) => {
                if !f.is_finite() {
                    self.problem(path, format!("{f} is not a finite number; allowed: a finite number"));
                }
            }
            toml::Value::Boolean(_) | toml::Value::Datetime(_) => {}
        }
    }

    /// Checks an array's length against `minItems`/`maxItems`, then each entry.
    fn check_array(&mut self, items: &[toml::Value], s: &'a Json, path: &str) {
        let n = items.len() as u64;
        let min = s.get("minItems").and_then(|m| m.as_u64());
        let max = s.get("maxItems").and_then(|m| m.as_u64());
        if min.is_some_and(|m| n < m) || max.is_some_and(|m| n > m) {
            let range = match (min, max) {
                (Some(a), Some(b)) => format!("{a} to {b} entries"),
                (Some(a), None) => format!("at least {a} entries"),
                (None, Some(b)) => format!("at most {b} entries"),
                (None, None) => unreachable!("one bound was checked"),
            };
            self.problem(path, format!("has {n} entries; allowed: {range} ({})", self.describe(s)));
            return;
        }
        if let Some(item) = s.get("items") {
            let before = self.out.len();
            for (i, x) in items.iter().enumerate() {
                self.check(x, item, &join(path, &i.to_string()));
            }
            let limit = item.get("pattern").and_then(|p| p.as_str()).and_then(Unit::of) == Some(Unit::Limit);
            if limit && self.out.len() == before {
                self.limit_pair(items, path);
            }
        }
    }

    /// A limit given as a list holds one packet count and one size at most:
    /// a second of either would silently replace the first.
    fn limit_pair(&mut self, items: &[toml::Value], path: &str) {
        let texts: Vec<&str> = items.iter().filter_map(|v| v.as_str()).collect();
        if let [a, b] = texts[..] {
            let packets = |s: &str| parse_packets(s).is_ok();
            if packets(a) == packets(b) {
                let what = if packets(a) { "two packet counts" } else { "two sizes" };
                self.problem(
                    path,
                    format!(
                        "[{a:?}, {b:?}] gives {what}; allowed: {}, or one packet count and one size \
                         ([\"60pkts\", \"64kB\"]: whichever is reached first)",
                        Unit::Limit.allowed()
                    ),
                );
            }
        }
    }

    /// Checks a table against an object schema, possibly an internally
    /// tagged enum, possibly with a flattened tagged enum (`oneOf` beside
    /// `properties`).
    fn check_table(&mut self, t: &toml::Table, s: &'a Json, path: &str) {
        let mut props: Vec<(&'a str, &'a Json)> = Vec::new();
        let mut required: Vec<&'a str> = Vec::new();
        let mut closed = false;
        let mut add = |o: &'a Json, props: &mut Vec<(&'a str, &'a Json)>, required: &mut Vec<&'a str>| {
            if let Some(Json::Object(p)) = o.get("properties") {
                props.extend(p.iter().map(|(k, v)| (k.as_str(), v)));
            }
            if let Some(Json::Array(r)) = o.get("required") {
                required.extend(r.iter().filter_map(|x| x.as_str()));
            }
            closed |= o.get("additionalProperties") == Some(&Json::Bool(false))
                || o.get("unevaluatedProperties") == Some(&Json::Bool(false));
        };
        add(s, &mut props, &mut required);
        let mut known_variant = true;
        if let Some(tg) = self.tagged(s) {
            let names: Vec<&str> = tg.variants.iter().map(|(n, _)| *n).collect();
            match t.get(tg.tag) {
                None => {
                    self.problem(&join(path, tg.tag), format!("missing; allowed: {}", names.join(", ")));
                    known_variant = false;
                }
                Some(toml::Value::String(x)) => match tg.variants.iter().find(|(n, _)| n == x) {
                    Some((_, vs)) => add(vs, &mut props, &mut required),
                    None => {
                        let m = format!("unknown {} {x:?}; allowed: {}", tg.tag, names.join(", "));
                        self.problem(&join(path, tg.tag), m);
                        known_variant = false;
                    }
                },
                Some(other) => {
                    self.problem(&join(path, tg.tag), format!("found {}; allowed: {}", found(other), names.join(", ")));
                    known_variant = false;
                }
            }
        }
        for r in required {
            if !t.contains_key(r) {
                if let Some((_, p)) = props.iter().find(|(k, _)| *k == r) {
                    self.problem(&join(path, r), format!("missing; allowed: {}", self.describe(p)));
                }
            }
        }
        for (k, v) in t {
            match props.iter().find(|(name, _)| name == k) {
                Some((_, p)) => self.check(v, p, &join(path, k)),
                None if closed && known_variant => {
                    let mut names: Vec<&str> = props.iter().map(|(k, _)| *k).collect();
                    names.sort_unstable();
                    names.dedup();
                    self.problem(&join(path, k), format!("unknown field {k:?}; allowed: {}", names.join(", ")));
                }
                None => {}
            }
        }
    }

    /// One step of a `--set` path: the schema of `comp` below `s`, and the
    /// document's value there (if any).
    fn child<'d>(
        &self,
        s: &'a Json,
        table: Option<&'d toml::Table>,
        array: Option<&'d Vec<toml::Value>>,
        comp: &str,
        at: &str,
    ) -> Result<(&'a Json, Option<&'d toml::Value>), String> {
        let s = self.unwrap_option(s);
        let here = if at.is_empty() { "the top level".to_string() } else { format!("{at:?}") };
        // Untagged choices: the table-like or list-like alternative.
        let s = match s.get("anyOf") {
            Some(Json::Array(alts)) => {
                let want = if comp.parse::<usize>().is_ok() && array.is_some() { "array" } else { "object" };
                alts.iter()
                    .map(|a| self.unwrap_option(a))
                    .find(|a| types(a).contains(&want) || (want == "object" && self.tagged(a).is_some()))
                    .ok_or_else(|| format!("{here} is {}: it has no field {comp:?}", self.describe(s)))?
            }
            _ => s,
        };
        if types(s).contains(&"array") {
            let items = s.get("items").ok_or_else(|| format!("{here} has no entries"))?;
            let n = array.map_or(0, |a| a.len());
            let allowed = if n == 0 { "none (the list is empty)".to_string() } else { format!("0 to {}", n - 1) };
            return match comp.parse::<usize>() {
                Ok(i) if i < n => Ok((items, array.and_then(|a| a.get(i)))),
                _ => Err(format!("{here} has no entry {comp:?}; allowed: {allowed}")),
            };
        }
        let is_object = types(s).contains(&"object") || self.tagged(s).is_some() || s.get("properties").is_some();
        if !is_object {
            return Err(format!("{here} is {}: it has no field {comp:?}", self.describe(s)));
        }
        let mut names: Vec<&'a str> = Vec::new();
        let mut found_schema: Option<&'a Json> = None;
        let mut consider = |o: &'a Json, names: &mut Vec<&'a str>| {
            if let Some(Json::Object(p)) = o.get("properties") {
                for (k, v) in p {
                    names.push(k.as_str());
                    if k == comp && found_schema.is_none() {
                        found_schema = Some(v);
                    }
                }
            }
        };
        consider(s, &mut names);
        if let Some(tg) = self.tagged(s) {
            let chosen = table.and_then(|t| t.get(tg.tag)).and_then(|v| v.as_str());
            match chosen.and_then(|c| tg.variants.iter().find(|(n, _)| *n == c)) {
                Some((_, vs)) => consider(vs, &mut names),
                // No (known) variant chosen yet: any variant's field may be set.
                None => tg.variants.iter().for_each(|(_, vs)| consider(vs, &mut names)),
            }
        }
        names.sort_unstable();
        names.dedup();
        match found_schema {
            Some(p) => Ok((p, table.and_then(|t| t.get(comp)))),
            None => Err(format!("{here} has no field {comp:?}; allowed: {}", names.join(", "))),
        }
    }
}

/// The allowed integer range of a schema: `minimum`/`maximum`, else its format.
fn int_range(s: &Json) -> (i64, Option<u64>) {
    let fmt = s.get("format").and_then(|f| f.as_str()).unwrap_or("");
    let (flo, fhi): (i64, Option<u64>) = match fmt {
        "uint8" => (0, Some(u8::MAX as u64)),
        "uint16" => (0, Some(u16::MAX as u64)),
        "uint32" => (0, Some(u32::MAX as u64)),
        "uint64" | "uint" => (0, None),
        "int8" => (i8::MIN as i64, Some(i8::MAX as u64)),
        "int16" => (i16::MIN as i64, Some(i16::MAX as u64)),
        "int32" => (i32::MIN as i64, Some(i32::MAX as u64)),
        _ => (i64::MIN, None),
    };
    let lo = s.get("minimum").and_then(|m| m.as_i64()).map_or(flo, |m| m.max(flo));
    let hi = match (s.get("maximum").and_then(|m| m.as_u64()), fhi) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    (lo, hi)
}

#[cfg(test)]
mod tests;
