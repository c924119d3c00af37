//! Loading a scenario: TOML text (or a file) and `--set` overrides to a
//! [`ValidScenario`], or every problem found, each as a
//! [`Diagnostic`] that displays as `file:line: field.path: problem; allowed: ...`.
//!
//! The steps, each reporting all it finds before the next one runs:
//! 1. **Syntax.** The text is parsed with spans ([`Lines`] maps every dotted
//!    path to its line). A TOML syntax error carries its line and the path
//!    of the table (and key) it is in.
//! 2. **Overrides.** Each `--set key.path=value` is applied to the parsed
//!    document before it is typed. The value is read as a TOML value
//!    (`20`, `true`, `"10s"`, `{type = "fifo", limit = "60pkts"}`); text that
//!    is not a valid TOML value is taken as a string (`duration=10s`).
//!    Numeric parts index arrays (`traffic.0.flows`). The path must exist in
//!    the model ([`super::schema`]); a key that is absent but valid (an
//!    optional field) is created, with any missing tables above it. A
//!    malformed override or an unknown path is a diagnostic with origin
//!    `--set`; so is any later problem in a value an override set.
//! 3. **Paper models.** A `[[traffic]]` group of a paper model (`voice`,
//!    `svd`, `mgen_periodic`, `mgen_poisson`) is replaced by the primitive
//!    group(s) it stands for ([`super::paper_traffic`]); a bad parameter is
//!    a diagnostic naming it. Later steps see (and the echo shows) the expansion.
//! 4. **Structure.** [`super::shape::check`] walks the document alongside
//!    the JSON Schema: unknown and missing fields, unknown `type`/`preset`/
//!    `model`/`process` variants, wrong types, unreadable units.
//! 5. **Types.** Serde builds the [`Scenario`]; should it still refuse
//!    something, its message is rephrased into plain words (no Rust type
//!    names) with the path tracked by `serde_path_to_error`.
//! 6. **Meaning.** [`super::validate::validate`] checks every rule that
//!    spans fields (names, references, ranges, queue parameters), reads
//!    the files the scenario names, and estimates the run's memory and
//!    events against [`Limits`].
//!
//! Relative paths in the scenario (replay files) are resolved against
//! `base_dir`: the scenario file's folder for [`load_file`]; for
//! [`load_str`] the folder given, or the current directory if none.

use super::model::Scenario;
use super::validate::Limits;
use super::{shape, validate, ValidScenario};
use crate::error::{Diagnostic, ScenarioError};
use qoslab_core::units::Dur;
use std::collections::BTreeMap;
use std::path::Path;
use toml::de::{DeTable, DeValue};

/// Origin of the diagnostics about `--set` overrides.
pub const OVERRIDE_ORIGIN: &str = "--set";

const OVERRIDE_EXAMPLES: &str = "key.path=value, e.g. duration=10s, topology.bottleneck.queue.max_th=20, \
     traffic.0.flows=10, traffic[cbr].flows=10 (the entry named cbr), topology.links[r0->r1].rate=10Mbps";

/// Loads a scenario from TOML `text`. `origin` names it in diagnostics (a
/// file name, or `<string>`); `overrides` are `key.path=value` strings;
/// `base_dir` is where relative file names in the scenario are looked up
/// (`None`: the current directory).
pub fn load_str(
    text: &str,
    origin: &str,
    overrides: &[String],
    base_dir: Option<&Path>,
) -> Result<ValidScenario, ScenarioError> {
    load_str_limited(text, origin, overrides, base_dir, Limits::default())
}

/// [`load_str`] with other limits on the run's estimated memory and events
/// (`--max-memory`, `--max-events`).
pub fn load_str_limited(
    text: &str,
    origin: &str,
    overrides: &[String],
    base_dir: Option<&Path>,
    limits: Limits,
) -> Result<ValidScenario, ScenarioError> {
    Document::parse(text, origin)?.with_overrides(overrides)?.validate(base_dir, limits)
}

/// A scenario's text parsed once (the document and the line of each key)
/// with the `--set` overrides applied so far: what a [`ValidScenario`] is
/// made from, and made again from when more overrides come (the Python
/// front's `Scenario.with_overrides`), without reading the text again.
#[derive(Clone, Debug)]
pub struct Document {
    origin: String,
    lines: Lines,
    doc: toml::Table,
    /// The path each override set and its text, in order.
    set: Vec<(String, String)>,
}

impl Document {
    /// Step 1: the text parsed with spans.
    pub fn parse(text: &str, origin: &str) -> Result<Document, ScenarioError> {
        let lines = Lines::parse(text).map_err(|e| ScenarioError::Config(vec![syntax_diagnostic(text, origin, &e)]))?;
        // The text parsed once with spans; this second parse cannot fail differently.
        let doc: toml::Table =
            toml::from_str(text).map_err(|e| ScenarioError::Config(vec![syntax_diagnostic(text, origin, &e)]))?;
        Ok(Document { origin: origin.to_string(), lines, doc, set: Vec::new() })
    }

    /// Step 2: a copy with `overrides` applied after the ones already applied.
    pub fn with_overrides(&self, overrides: &[String]) -> Result<Document, ScenarioError> {
        let mut out = self.clone();
        let mut diags = Vec::new();
        for raw in overrides {
            match apply_override(&mut out.doc, raw) {
                Ok(path) => out.set.push((path, raw.clone())),
                Err(d) => diags.push(d),
            }
        }
        if diags.is_empty() {
            Ok(out)
        } else {
            Err(ScenarioError::Config(diags))
        }
    }

    /// Steps 3 to 6: paper models, structure, types and meaning.
    pub fn validate(&self, base_dir: Option<&Path>, limits: Limits) -> Result<ValidScenario, ScenarioError> {
        let (origin, set) = (self.origin.as_str(), &self.set);
        let mut lines = self.lines.clone();
        lines.set.extend(set.iter().map(|(p, _)| p.clone()));
        let mut doc = self.doc.clone();
        default_bin(&mut doc);
        if let Some(d) = sweep_file(&doc, origin) {
            return Err(ScenarioError::Config(vec![d]));
        }
        let lines = &lines;
        let at = |path: String, message: String| {
            let mut d = Diagnostic { origin: origin.to_string(), line: lines.line_of(&path), path, message };
            attribute_to_override(&mut d, set);
            d
        };
        let problems = crate::paper_traffic::expand(&mut doc);
        if !problems.is_empty() {
            return Err(ScenarioError::Config(problems.into_iter().map(|p| at(p.path, p.message)).collect()));
        }
        let problems = shape::check(&doc);
        if !problems.is_empty() {
            return Err(ScenarioError::Config(problems.into_iter().map(|p| at(p.path, p.message)).collect()));
        }
        let scenario: Scenario = serde_path_to_error::deserialize(toml::Value::Table(doc)).map_err(|e| {
            let path = serde_path(e.path());
            ScenarioError::Config(vec![at(path, humanize(e.inner().message()))])
        })?;
        let mut valid =
            validate::validate_with_lines(scenario, origin, lines, base_dir, limits).map_err(|mut ds| {
                ds.iter_mut().for_each(|d| attribute_to_override(d, set));
                ScenarioError::Config(ds)
            })?;
        valid.warnings_mut().iter_mut().for_each(|d| attribute_to_override(d, set));
        Ok(valid)
    }
}

/// Fills in `metrics.bin` when the scenario does not set it and its run is
/// short ([`crate::model::bin_for`]): the default depends on the duration,
/// which serde's per-field defaults cannot see. A duration that does not
/// read is left to the checks that report it.
fn default_bin(doc: &mut toml::Table) {
    let Some(duration) = doc.get("duration").and_then(|d| d.as_str()).and_then(|d| Dur::parse(d).ok()) else {
        return;
    };
    if duration.0 == 0 || duration >= crate::model::SHORT_RUN {
        return;
    }
    let metrics = doc.entry("metrics").or_insert_with(|| toml::Value::Table(toml::Table::new()));
    if let toml::Value::Table(m) = metrics {
        m.entry("bin").or_insert_with(|| toml::Value::String(crate::model::bin_for(duration).to_string()));
    }
}

/// A sweep file (`[sweep]` and nothing a scenario has) given where a
/// scenario is expected: one message saying what to do, instead of every
/// missing scenario field.
fn sweep_file(doc: &toml::Table, origin: &str) -> Option<Diagnostic> {
    let scenario_keys = ["name", "duration", "topology", "traffic"];
    if !doc.contains_key("sweep") || scenario_keys.iter().any(|k| doc.contains_key(*k)) {
        return None;
    }
    Some(Diagnostic {
        origin: origin.to_string(),
        line: None,
        path: "sweep".to_string(),
        message: "this is a sweep file, not a scenario; allowed: run it with `qoslab sweep FILE` (or \
                  `qoslab.sweep(FILE)`), or give a scenario file here"
            .to_string(),
    })
}

/// Loads a scenario file (a regular file of at most
/// [`crate::bounded::MAX_FILE`] bytes); relative paths inside it are
/// resolved against its folder. A file that cannot be read is
/// [`ScenarioError::Io`] naming it.
pub fn load_file(path: &Path, overrides: &[String]) -> Result<ValidScenario, ScenarioError> {
    load_file_limited(path, overrides, Limits::default())
}

/// [`load_file`] with other limits (see [`load_str_limited`]).
pub fn load_file_limited(path: &Path, overrides: &[String], limits: Limits) -> Result<ValidScenario, ScenarioError> {
    let text = crate::bounded::read_text(path, crate::bounded::MAX_FILE).map_err(|e| ScenarioError::Io {
        path: path.display().to_string(),
        message: format!("cannot read the scenario file: {e}"),
    })?;
    let base = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    load_str_limited(&text, &path.display().to_string(), overrides, Some(base), limits)
}

/// Where each dotted path of a scenario text is: the 1-based line of its
/// key (or, for an array entry, of the entry).
#[derive(Clone, Debug, Default)]
pub struct Lines {
    lines: BTreeMap<String, usize>,
    /// Paths set by `--set` overrides (they have no line).
    set: std::collections::BTreeSet<String>,
}

impl Lines {
    /// Indexes `text`; a syntax error is returned as is.
    pub fn parse(text: &str) -> Result<Lines, toml::de::Error> {
        let root = DeTable::parse(text)?;
        let starts: Vec<usize> = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
        let line = |offset: usize| starts.partition_point(|&s| s <= offset);
        let mut lines = BTreeMap::new();
        fn walk_table(t: &DeTable, prefix: &str, line: &dyn Fn(usize) -> usize, out: &mut BTreeMap<String, usize>) {
            for (k, v) in t.iter() {
                let path = join(prefix, k.get_ref());
                out.insert(path.clone(), line(k.span().start));
                walk_value(v.get_ref(), &path, line, out);
            }
        }
        fn walk_value(v: &DeValue, path: &str, line: &dyn Fn(usize) -> usize, out: &mut BTreeMap<String, usize>) {
            match v {
                DeValue::Table(t) => walk_table(t, path, line, out),
                DeValue::Array(a) => {
                    for (i, e) in a.iter().enumerate() {
                        let p = join(path, &i.to_string());
                        out.insert(p.clone(), line(e.span().start));
                        walk_value(e.get_ref(), &p, line, out);
                    }
                }
                _ => {}
            }
        }
        walk_table(root.get_ref(), "", &line, &mut lines);
        Ok(Lines { lines, set: Default::default() })
    }

    /// Does the text, or an override, set `path` or a table above it (so
    /// that `path` is not a default the user never wrote)?
    pub fn has(&self, path: &str) -> bool {
        let mut p = path;
        loop {
            if self.lines.contains_key(p) || self.set.contains(p) {
                return p == path || self.set.contains(p);
            }
            match p.rfind('.') {
                Some(i) => p = &p[..i],
                None => return false,
            }
        }
    }

    /// The line of `path` or, if it is not in the text (a missing field, a
    /// default), of its nearest enclosing table. Bracketed parts name
    /// expanded links (`topology.access[src3]`) and are ignored.
    pub fn line_of(&self, path: &str) -> Option<usize> {
        let clean = crate::expand::field_of(path);
        let mut p = clean.as_str();
        loop {
            if let Some(l) = self.lines.get(p) {
                return Some(*l);
            }
            match p.rfind('.') {
                Some(i) => p = &p[..i],
                None => return None,
            }
        }
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// A TOML syntax error as a diagnostic: its line, and the path of the
/// table (and key) the line belongs to.
fn syntax_diagnostic(text: &str, origin: &str, e: &toml::de::Error) -> Diagnostic {
    // Count newlines in bytes: a span may start inside a multi-byte character.
    let line = e.span().map(|s| text.as_bytes()[..s.start.min(text.len())].iter().filter(|&&b| b == b'\n').count() + 1);
    let path = line.map(|l| path_at_line(text, l)).unwrap_or_default();
    let msg: Vec<&str> = e.message().lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let msg = msg.join("; ").replace('`', "'");
    // The parser's "invalid type: integer '18446744073709551616' as i128":
    // an integer beyond TOML's 64 bits, in words.
    if let Some(n) = msg.strip_prefix("invalid type: integer '").and_then(|r| r.split('\'').next()) {
        let message = too_large(n, &path);
        return Diagnostic { origin: origin.to_string(), line, path, message };
    }
    // "u64 value was too large": the number is at the error's span.
    if msg.contains("value was too large") {
        if let Some(sp) = e.span() {
            let n: String = text
                .get(sp.start..)
                .unwrap_or("")
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '+' || *c == '-')
                .collect();
            if !n.is_empty() {
                let message = too_large(&n, &path);
                return Diagnostic { origin: origin.to_string(), line, path, message };
            }
        }
    }
    let message = if msg.contains("expected") {
        format!("TOML syntax error: {msg}")
    } else {
        format!("TOML syntax error: {msg}; allowed: TOML 1.0 syntax (key = value, [table], [[array of tables]])")
    };
    Diagnostic { origin: origin.to_string(), line, path, message }
}

/// An integer beyond TOML's 64 bits, in words (a seed: where larger ones go).
fn too_large(n: &str, path: &str) -> String {
    if path == "seed" {
        return format!(
            "{n} is too large for a TOML integer; allowed: a seed from 0 to {} here (larger seeds, up to \
             2^64-1: qoslab run --seed N, or seed= in Python)",
            i64::MAX
        );
    }
    format!(
        "{n} is too large; allowed: a whole number from {} to {} (TOML integers are 64-bit; each field has its \
         own smaller range)",
        i64::MIN,
        i64::MAX
    )
}

/// The dotted path at 1-based `line` of `text`, from the table headers
/// above it and the key on it, read line by line (the text does not parse).
fn path_at_line(text: &str, line: usize) -> String {
    let mut table = String::new();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let key_of = |s: &str| -> String {
        s.split('.').map(|p| p.trim().trim_matches('"').trim_matches('\'')).collect::<Vec<_>>().join(".")
    };
    for (i, l) in text.lines().enumerate().take(line) {
        let t = l.trim();
        if let Some(h) = t.strip_prefix("[[").and_then(|r| r.split("]]").next()) {
            let name = key_of(h);
            let n = counts.entry(name.clone()).or_insert(0);
            table = format!("{name}.{n}");
            *n += 1;
        } else if let Some(h) = t.strip_prefix('[').and_then(|r| r.split(']').next()) {
            table = key_of(h);
        } else if i + 1 == line {
            if let Some((k, _)) = t.split_once('=') {
                let k = key_of(k);
                let plain = k.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c));
                if !k.is_empty() && plain {
                    return join(&table, &k);
                }
            }
        }
    }
    table
}

/// Diagnostics about values an override set are the override's: origin
/// `--set`, no line, and the override named.
fn attribute_to_override(d: &mut Diagnostic, set: &[(String, String)]) {
    let hit = set.iter().rev().find(|(p, _)| {
        d.path == *p || d.path.strip_prefix(p.as_str()).is_some_and(|rest| rest.starts_with(['.', '[']))
    });
    if let Some((_, raw)) = hit {
        d.origin = OVERRIDE_ORIGIN.to_string();
        d.line = None;
        d.message = format!("{} (from --set {})", d.message, shorten(raw, 100));
    }
}

/// `text`, cut to at most `most` characters with "..." (for echoing input in a message).
pub(crate) fn shorten(text: &str, most: usize) -> String {
    if text.chars().count() <= most {
        return text.to_string();
    }
    let cut: String = text.chars().take(most).collect();
    format!("{cut}... ({} characters)", text.chars().count())
}

/// Applies one `key.path=value` override; returns the dotted path it set
/// (with every `[selector]` replaced by the index of the entry it selects).
fn apply_override(doc: &mut toml::Table, raw: &str) -> Result<String, Diagnostic> {
    let bad = |path: &str, message: String| Diagnostic {
        origin: OVERRIDE_ORIGIN.to_string(),
        line: None,
        path: path.to_string(),
        message,
    };
    let Some((key, val)) = split_override(raw) else {
        return Err(bad("", format!("{raw:?} has no \"=\"; allowed: {OVERRIDE_EXAMPLES}")));
    };
    let key = key.trim();
    let parts = key_parts(key).map_err(|m| bad(key, format!("{raw:?} {m}; allowed: {OVERRIDE_EXAMPLES}")))?;
    let resolved =
        resolve_selectors(doc, &parts).map_err(|m| bad(key, format!("{m} (in --set {})", shorten(raw, 100))))?;
    let comps: Vec<&str> = resolved.iter().map(String::as_str).collect();
    let path = comps.join(".");
    shape::settable(doc, &comps).map_err(|m| bad(&path, format!("{m} (in --set {})", shorten(raw, 100))))?;
    let digits = val.trim().strip_prefix(['-', '+']).unwrap_or(val.trim());
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && val.trim().parse::<i64>().is_err() {
        return Err(bad(&path, too_large(val.trim(), &path)));
    }
    let value = override_value(val);
    set_path(doc, &comps, value).map_err(|m| bad(&path, format!("{m} (in --set {raw})")))?;
    Ok(path)
}

/// An override's key and value, split at the first `=` outside a `[selector]`
/// (a selector may hold one: `rules[stream=A2]`); at the first `=` when a
/// `[` is not closed before it, so that the key's check names the bracket.
fn split_override(raw: &str) -> Option<(&str, &str)> {
    let mut depth = 0usize;
    for (i, c) in raw.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            '=' if depth == 0 => return Some((&raw[..i], &raw[i + 1..])),
            _ => {}
        }
    }
    raw.split_once('=')
}

/// One part of an override's key: a field name or a list index, and the
/// `[selector]` written after it, if any.
#[derive(Debug, PartialEq, Eq)]
struct KeyPart<'a> {
    field: &'a str,
    select: Option<&'a str>,
}

/// An override's key split at the dots outside selectors: `a.b[sel].c`.
fn key_parts(key: &str) -> Result<Vec<KeyPart<'_>>, String> {
    let mut pieces = Vec::new();
    let (mut depth, mut from) = (0usize, 0usize);
    for (i, c) in key.char_indices() {
        match c {
            '[' if depth > 0 => return Err("has a \"[\" inside a selector".into()),
            '[' => depth = 1,
            ']' if depth == 0 => return Err("has a \"]\" with no \"[\" before it".into()),
            ']' => depth = 0,
            '.' if depth == 0 => {
                pieces.push(&key[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    if depth > 0 {
        return Err("has a \"[\" that is not closed".into());
    }
    pieces.push(&key[from..]);
    pieces
        .into_iter()
        .map(|piece| {
            let piece = piece.trim();
            let (field, select) = match piece.split_once('[') {
                None => (piece, None),
                Some((f, rest)) => match rest.strip_suffix(']') {
                    Some(sel) if !sel.trim().is_empty() => (f.trim(), Some(sel.trim())),
                    Some(_) => return Err(format!("has an empty selector in {piece:?}")),
                    None => return Err(format!("has text after the selector in {piece:?}")),
                },
            };
            if field.is_empty() {
                return Err("has an empty key part".into());
            }
            Ok(KeyPart { field, select })
        })
        .collect()
}

/// The key's parts as a dotted path, each `[selector]` replaced by the index
/// of the one entry of the list before it that the selector names in `doc`:
/// `[NAME]`, the entry whose `name` is NAME (a link's name is `a->b`), or
/// `[field=value]`, the entry whose `field` is `value`.
fn resolve_selectors(doc: &toml::Table, parts: &[KeyPart<'_>]) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::with_capacity(parts.len() + 2);
    // What the path reached so far: `None` is a part the document does not hold (yet).
    let mut here: Option<&toml::Value> = None;
    for (k, p) in parts.iter().enumerate() {
        let next = match (k, here) {
            (0, _) => doc.get(p.field),
            (_, Some(toml::Value::Table(t))) => t.get(p.field),
            (_, Some(toml::Value::Array(a))) => p.field.parse::<usize>().ok().and_then(|i| a.get(i)),
            _ => None,
        };
        out.push(p.field.to_string());
        here = next;
        if let Some(sel) = p.select {
            let at = out.join(".");
            let Some(toml::Value::Array(list)) = next else {
                return Err(format!(
                    "{at:?} is not a list in the scenario, so [{sel}] selects nothing; allowed: a selector after a \
                     list, such as traffic[NAME] or topology.links[a->b]"
                ));
            };
            let i = select_entry(list, sel, &at)?;
            out.push(i.to_string());
            here = list.get(i);
        }
    }
    Ok(out)
}

/// The index of the one entry of `list` (at path `at`) that `sel` selects.
fn select_entry(list: &[toml::Value], sel: &str, at: &str) -> Result<usize, String> {
    let unquote = |s: &str| -> String {
        let s = s.trim();
        let quoted =
            s.len() >= 2 && (s.starts_with('"') && s.ends_with('"') || s.starts_with('\'') && s.ends_with('\''));
        if quoted {
            s[1..s.len() - 1].to_string()
        } else {
            s.to_string()
        }
    };
    let (field, want) = match sel.split_once('=') {
        Some((f, v)) => (Some(f.trim()), unquote(v)),
        None => (None, unquote(sel)),
    };
    let label = |v: &toml::Value| -> Option<String> {
        let t = v.as_table()?;
        match field {
            Some(f) => scalar_text(t.get(f)?),
            None => entry_name(t),
        }
    };
    let hits: Vec<usize> =
        list.iter().enumerate().filter(|(_, v)| label(v).as_deref() == Some(&want)).map(|(i, _)| i).collect();
    match hits.as_slice() {
        [i] => Ok(*i),
        [] => {
            let labels: Vec<String> = list.iter().filter_map(label).collect();
            let what = match field {
                Some(f) => format!("whose {f} is {want:?}"),
                None => format!("named {want:?}"),
            };
            let allowed = if labels.is_empty() {
                match field {
                    Some(f) => format!("none (no entry has a {f})"),
                    None => "none (its entries have no name; select by a field: [field=value], or by index)".into(),
                }
            } else {
                let shown: Vec<&str> = labels.iter().take(16).map(String::as_str).collect();
                let more =
                    if labels.len() > shown.len() { format!(" ... ({} entries)", labels.len()) } else { String::new() };
                format!("{}{more}", shown.join(", "))
            };
            Err(format!("{at:?} has no entry {what}; allowed: {allowed}"))
        }
        many => Err(format!(
            "{at:?}[{sel}] matches {} entries ({}); allowed: a selector that matches one entry",
            many.len(),
            many.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// An entry's name for `[NAME]`: its `name`, or, for a link, `a->b`.
fn entry_name(t: &toml::Table) -> Option<String> {
    if let Some(n) = t.get("name").and_then(toml::Value::as_str) {
        return Some(n.to_string());
    }
    let end = |k: &str| t.get(k).and_then(toml::Value::as_str);
    Some(format!("{}->{}", end("a")?, end("b")?))
}

/// A scalar field as `[field=value]` compares it: text as is, numbers and booleans as written.
fn scalar_text(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        toml::Value::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// An override's value: a TOML value if it reads as one, else the text.
fn override_value(val: &str) -> toml::Value {
    let val = val.trim();
    match toml::from_str::<toml::Table>(&format!("v = {val}")) {
        Ok(t) if t.len() == 1 => t.get("v").cloned().unwrap_or_else(|| toml::Value::String(val.to_string())),
        _ => toml::Value::String(val.to_string()),
    }
}

/// Sets `comps` in `doc` to `value`, creating missing tables on the way.
/// (On an error the document may keep tables created so far; it is then
/// discarded with the whole load.)
fn set_path(doc: &mut toml::Table, comps: &[&str], value: toml::Value) -> Result<(), String> {
    enum Node<'a> {
        Table(&'a mut toml::Table),
        Array(&'a mut Vec<toml::Value>),
    }
    let (last, init) = comps.split_last().ok_or("the key path is empty")?;
    let mut here = Node::Table(doc);
    let mut at = String::new();
    for c in init {
        let next: &mut toml::Value = match here {
            Node::Table(t) => t.entry(c.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new())),
            Node::Array(a) => c
                .parse::<usize>()
                .ok()
                .and_then(|i| a.get_mut(i))
                .ok_or_else(|| format!("{at:?} has no entry {c:?}"))?,
        };
        at = join(&at, c);
        here = match next {
            toml::Value::Table(t) => Node::Table(t),
            toml::Value::Array(a) => Node::Array(a),
            other => return Err(format!("{at:?} is {}, not a table; set it whole instead", kind(other))),
        };
    }
    match here {
        Node::Table(t) => {
            t.insert(last.to_string(), value);
        }
        Node::Array(a) => match last.parse::<usize>().ok().and_then(|i| a.get_mut(i)) {
            Some(slot) => *slot = value,
            None => return Err(format!("{at:?} has no entry {last:?}")),
        },
    }
    Ok(())
}

fn kind(v: &toml::Value) -> &'static str {
    match v {
        toml::Value::String(_) => "a string",
        toml::Value::Integer(_) | toml::Value::Float(_) => "a number",
        toml::Value::Boolean(_) => "a boolean",
        toml::Value::Datetime(_) => "a date",
        toml::Value::Array(_) => "a list",
        toml::Value::Table(_) => "a table",
    }
}

/// A serde path as a dotted path with numeric array indices.
fn serde_path(p: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for s in p.iter() {
        match s {
            Segment::Seq { index } => out = join(&out, &index.to_string()),
            Segment::Map { key } => out = join(&out, key),
            Segment::Enum { .. } | Segment::Unknown => {}
        }
    }
    out
}

/// Serde's messages in plain words, without Rust type names:
/// ``unknown field `x`, expected one of `a`, `b` `` becomes
/// `unknown field "x"; allowed: a, b`.
pub(crate) fn humanize(msg: &str) -> String {
    let ticked = |s: &str| -> Vec<String> { s.split('`').skip(1).step_by(2).map(str::to_string).collect() };
    let first_line = msg.lines().next().unwrap_or("").trim();
    if let Some(rest) =
        first_line.strip_prefix("unknown field ").or_else(|| first_line.strip_prefix("unknown variant "))
    {
        let what = if first_line.starts_with("unknown field") { "unknown field" } else { "unknown value" };
        let names = ticked(rest);
        let (name, allowed) = names.split_first().map(|(n, a)| (n.clone(), a.to_vec())).unwrap_or_default();
        let allowed = if allowed.is_empty() { "none".to_string() } else { allowed.join(", ") };
        return format!("{what} {name:?}; allowed: {allowed}");
    }
    if let Some(rest) = first_line.strip_prefix("missing field ") {
        return format!("missing field {:?}", rest.trim_matches('`'));
    }
    for prefix in ["invalid type: ", "invalid value: ", "invalid length "] {
        if let Some(rest) = first_line.strip_prefix(prefix) {
            if let Some((found, expected)) = rest.split_once(", expected ") {
                return format!("found {}; allowed: {}", found.replace('`', ""), plain_type(expected));
            }
        }
    }
    if first_line.starts_with("data did not match any variant") {
        return "does not match any allowed form; see `qoslab schema`".to_string();
    }
    scrub(first_line)
}

/// A serde "expected ..." phrase in plain words.
fn plain_type(expected: &str) -> String {
    let e = expected.trim();
    let words: &[(&str, &str)] = &[
        ("u8", "a whole number from 0 to 255"),
        ("u16", "a whole number from 0 to 65535"),
        ("u32", "a whole number from 0 to 4294967295"),
        ("u64", "a whole number >= 0"),
        ("i64", "a whole number"),
        ("f64", "a number"),
        ("a boolean", "true or false"),
        ("a sequence", "a list"),
        ("a string", "a string in quotes"),
    ];
    if let Some((_, w)) = words.iter().find(|(k, _)| *k == e) {
        return w.to_string();
    }
    if e.starts_with("struct ") || e.contains("tagged enum") || e.starts_with("a map") {
        return "a table".to_string();
    }
    scrub(e)
}

/// Removes backticks and Rust type words from a message.
fn scrub(m: &str) -> String {
    let mut out = m.replace('`', "\"");
    for (rust, plain) in [("struct variant ", ""), ("struct ", ""), ("enum ", ""), ("tuple variant ", "")] {
        out = out.replace(rust, plain);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "name = \"x\"\n\
                        [topology]\n\
                        preset = \"dumbbell\"\n\
                        bottleneck.rate = \"1Mbps\"\n\
                        [topology.access.queue]\n\
                        type = \"fifo\"\n\
                        \n\
                        [[traffic]]\n\
                        name = \"a\"\n\
                        size = { base = \"1B\", exp_mean = \"2B\" }\n\
                        [[traffic]]\n\
                        name = \"b\"\n\
                        list = [1,\n  2]\n";

    #[test]
    fn lines_map_keys_table_headers_inline_tables_and_array_entries() {
        let l = Lines::parse(TEXT).unwrap();
        assert_eq!(l.line_of("name"), Some(1));
        assert_eq!(l.line_of("topology"), Some(2));
        assert_eq!(l.line_of("topology.bottleneck.rate"), Some(4));
        assert_eq!(l.line_of("topology.access.queue"), Some(5));
        assert_eq!(l.line_of("topology.access.queue.type"), Some(6));
        assert_eq!(l.line_of("traffic.0"), Some(8));
        assert_eq!(l.line_of("traffic.0.size.exp_mean"), Some(10));
        assert_eq!(l.line_of("traffic.1.name"), Some(12));
        assert_eq!(l.line_of("traffic.1.list.1"), Some(14));
    }

    #[test]
    fn absent_paths_take_the_line_of_their_nearest_table() {
        let l = Lines::parse(TEXT).unwrap();
        assert_eq!(l.line_of("traffic.1.flows"), Some(11));
        assert_eq!(l.line_of("topology.access[src3]"), Some(5), "expanded link names are ignored");
        assert_eq!(l.line_of("topology.access[src3].queue.type"), Some(6));
        assert_eq!(l.line_of("duration"), None);
        assert_eq!(Lines::default().line_of("name"), None);
    }

    #[test]
    fn syntax_errors_carry_their_line_and_the_path_there() {
        let text = "name = \"x\"\n[topology]\npreset = \"d\"\n[[traffic]]\nname = 1\n[[traffic]]\nrate = \"1Mbps\n";
        let e = load_str(text, "f.toml", &[], None).unwrap_err();
        let ScenarioError::Config(ds) = e else { panic!("{e}") };
        assert_eq!(ds.len(), 1);
        assert_eq!((ds[0].line, ds[0].path.as_str()), (Some(7), "traffic.1.rate"));
        assert!(ds[0].message.starts_with("TOML syntax error: "), "{}", ds[0]);
        assert!(!ds[0].message.contains('`'));
        assert_eq!(path_at_line("[a.\"b\"]\nk = 1\n", 2), "a.b.k");
        assert_eq!(path_at_line("[a]\n= 1\n", 2), "a", "no key on the line");
    }

    #[test]
    fn integers_beyond_64_bits_are_too_large_in_plain_words() {
        let text = "name = \"x\"\nflows = 18446744073709551616\n";
        let ScenarioError::Config(ds) = load_str(text, "f.toml", &[], None).unwrap_err() else { panic!() };
        assert_eq!((ds[0].line, ds[0].path.as_str()), (Some(2), "flows"));
        assert!(ds[0].message.starts_with("18446744073709551616 is too large; allowed: a whole number"), "{}", ds[0]);
        assert!(!ds[0].message.contains("i128"));
    }

    #[test]
    fn syntax_errors_after_multibyte_text_do_not_panic() {
        let text = "description = \"µ-benchmark ✓\"\nname = \"é\" ✓\n";
        let ScenarioError::Config(ds) = load_str(text, "f.toml", &[], None).unwrap_err() else { panic!() };
        assert_eq!(ds[0].line, Some(2));
    }

    #[test]
    fn override_values_are_toml_values_or_else_text() {
        assert_eq!(override_value("20"), toml::Value::Integer(20));
        assert_eq!(override_value(" 0.5 "), toml::Value::Float(0.5));
        assert_eq!(override_value("true"), toml::Value::Boolean(true));
        assert_eq!(override_value("\"10s\""), toml::Value::String("10s".into()));
        assert_eq!(override_value("10s"), toml::Value::String("10s".into()));
        assert_eq!(override_value("a b = c"), toml::Value::String("a b = c".into()));
        assert_eq!(override_value("1\nduration = 3"), toml::Value::String("1\nduration = 3".into()));
        let t = override_value("{ type = \"fifo\", limit = \"5pkts\" }");
        assert_eq!(t.get("type").and_then(|v| v.as_str()), Some("fifo"));
    }

    #[test]
    fn override_keys_split_at_dots_and_equals_outside_selectors() {
        assert_eq!(split_override("a.b[x=1].c=2"), Some(("a.b[x=1].c", "2")));
        assert_eq!(split_override("a=b=c"), Some(("a", "b=c")));
        assert_eq!(split_override("a[x=1"), Some(("a[x", "1")), "an unclosed [ is left to the key's check");
        let parts = key_parts("topology.links[r0->r1.a].queue").unwrap();
        assert_eq!(
            parts,
            vec![
                KeyPart { field: "topology", select: None },
                KeyPart { field: "links", select: Some("r0->r1.a") },
                KeyPart { field: "queue", select: None },
            ]
        );
        assert_eq!(key_parts("a]").unwrap_err(), "has a \"]\" with no \"[\" before it");
        assert_eq!(key_parts("a[b[c]]").unwrap_err(), "has a \"[\" inside a selector");
        assert_eq!(key_parts("a[b]c").unwrap_err(), "has text after the selector in \"a[b]c\"");
        assert_eq!(key_parts("[b].c").unwrap_err(), "has an empty key part");
    }

    #[test]
    fn a_selector_matches_names_link_ends_and_fields_as_written() {
        let d: toml::Table =
            toml::from_str("l = [{ name = \"x\" }, { a = \"r0\", b = \"r1\", port = 5 }, { on = true }]\n").unwrap();
        let list = d["l"].as_array().unwrap();
        assert_eq!(select_entry(list, "x", "l"), Ok(0));
        assert_eq!(select_entry(list, "'x'", "l"), Ok(0));
        assert_eq!(select_entry(list, "r0->r1", "l"), Ok(1));
        assert_eq!(select_entry(list, "port=5", "l"), Ok(1));
        assert_eq!(select_entry(list, "on = true", "l"), Ok(2));
        assert_eq!(select_entry(list, "y", "l").unwrap_err(), "\"l\" has no entry named \"y\"; allowed: x, r0->r1");
    }

    #[test]
    fn set_path_creates_tables_and_refuses_to_descend_into_values() {
        let mut d: toml::Table = toml::from_str("a = 1\nl = [{ x = 1 }]\n").unwrap();
        set_path(&mut d, &["b", "c", "d"], toml::Value::Integer(2)).unwrap();
        assert_eq!(d["b"]["c"]["d"].as_integer(), Some(2));
        set_path(&mut d, &["l", "0", "x"], toml::Value::Integer(5)).unwrap();
        assert_eq!(d["l"][0]["x"].as_integer(), Some(5));
        let e = set_path(&mut d, &["a", "z"], toml::Value::Integer(1)).unwrap_err();
        assert_eq!(e, "\"a\" is a number, not a table; set it whole instead");
    }

    #[test]
    fn override_attribution_respects_path_boundaries() {
        let set = vec![("traffic.1".to_string(), "traffic.1={...}".to_string())];
        let mut d =
            Diagnostic { origin: "f".into(), line: Some(3), path: "traffic.10.flows".into(), message: "m".into() };
        attribute_to_override(&mut d, &set);
        assert_eq!((d.origin.as_str(), d.line), ("f", Some(3)));
        d.path = "traffic.1.flows".into();
        attribute_to_override(&mut d, &set);
        assert_eq!(d.to_string(), "--set: traffic.1.flows: m (from --set traffic.1={...})");
    }

    #[test]
    fn serde_messages_are_rephrased_without_rust_words() {
        assert_eq!(
            humanize("unknown field `rat`, expected one of `rate`, `delay`"),
            "unknown field \"rat\"; allowed: rate, delay"
        );
        assert_eq!(humanize("unknown field `x`, there are no fields"), "unknown field \"x\"; allowed: none");
        assert_eq!(
            humanize("unknown variant `wred`, expected `fifo` or `red`"),
            "unknown value \"wred\"; allowed: fifo, red"
        );
        assert_eq!(humanize("missing field `delay`"), "missing field \"delay\"");
        assert_eq!(
            humanize("invalid type: integer `5`, expected u32"),
            "found integer 5; allowed: a whole number from 0 to 4294967295"
        );
        assert_eq!(
            humanize("invalid type: string \"a\", expected struct LinkSpec"),
            "found string \"a\"; allowed: a table"
        );
        assert_eq!(
            humanize("invalid type: integer `1`, expected internally tagged enum QueueSpec"),
            "found integer 1; allowed: a table"
        );
        assert_eq!(
            humanize("data did not match any variant of untagged enum SizeSpec"),
            "does not match any allowed form; see `qoslab schema`"
        );
    }

    #[test]
    fn load_file_resolves_relative_paths_next_to_the_file() {
        let dir = std::env::temp_dir().join(format!("qoslab-load-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("flows.csv"), "start_s,lifetime_s\n0.1,1\n").unwrap();
        let text = "name = \"r\"\nduration = \"2s\"\n[topology]\npreset = \"dumbbell\"\nsources = 1\n\
                    access = { rate = \"10Mbps\", delay = \"1ms\" }\nbottleneck = { rate = \"1Mbps\", delay = \"1ms\" }\n\
                    [[traffic]]\nname = \"g\"\nmodel = \"cbr\"\nrate = \"1Mbps\"\nsrc = \"src0\"\ndst = \"sink0\"\n\
                    size = \"100B\"\narrivals = { process = \"replay\", file = \"flows.csv\" }\n";
        std::fs::write(dir.join("s.toml"), text).unwrap();
        let s = load_file(&dir.join("s.toml"), &[]);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(s.unwrap().name, "r");
    }
}
