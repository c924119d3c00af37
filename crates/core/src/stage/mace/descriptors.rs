//! MACE flow-setup descriptors ([MACE98 §3], "Flow Setup"; thresholds from
//! §4.2): the plain-text list of applications that may receive CL service.
//!
//! The paper: "Each descriptor contains a port number and user specified
//! token bucket parameters. This list is stored as a plain text file which
//! network administrators can easily modify." The flow-setup unit gives the
//! recognizer the ports to watch and gives admission control "the bandwidth
//! usage estimate of each new flow". Here the file is TOML, one `[[port]]`
//! table per application port:
//!
//! ```toml
//! # 64 kb/s audio (320 B payload every 40 ms = 386 B frames: 77.2 kb/s on the wire)
//! [[port]]
//! port = 5004            # 1..=65535
//! side = "dst"           # optional: "dst" (default), "src" or "any"
//! rate = "77.2kbps"      # token-bucket rate: what admission control reserves
//! depth = "386B"         # token-bucket depth
//! threshold = 100        # packets seen before admission is asked (or "100pkts")
//! ```
//!
//! | field | unit | allowed | default |
//! |---|---|---|---|
//! | `port` | port number | 1..=65535, unique per side | required |
//! | `side` | which port of a packet is matched | `"dst"`, `"src"`, `"any"` | `"dst"` |
//! | `rate` | bit/s, on the wire | > 0, e.g. `"77.2kbps"` | required |
//! | `depth` | bytes | ≥ 1 B, e.g. `"386B"` | required |
//! | `threshold` | packets | 1..=4294967295 | required (paper: 100 for 64 kb/s, 10 for 256 kb/s) |
//!
//! Interpretations (see `docs/mechanisms/mace_descriptors.md`):
//! - **`rate` is the reserved rate in wire bits** (headers and framing
//!   included), because the measurement unit counts wire bits: the paper
//!   reserves 77.2 kb/s for a "64 kb/s" source (§4.1) and 154 kb/s for a
//!   256 kb/s one (§4.2). It is the `r` of both admission tests.
//! - **`side` defaults to the destination port**, the receiving
//!   application's well-known port (the paper says only "a port number").
//!   A packet whose destination port and source port are listed under
//!   different descriptors uses the destination's.
//! - Reading the file is the caller's job: [`Descriptors::parse`] takes the
//!   text and a name for messages. Every problem is reported, each as
//!   `file:line: field: problem; allowed: …`; an empty file is valid (no
//!   port is watched, MACE is plain best effort).

use crate::error::ConfigError;
use crate::packet::FlowKey;
use crate::units::{parse_packets, Bytes, Rate};
use std::collections::HashMap;
use std::fmt;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// Which port of a packet a descriptor matches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PortSide {
    #[default]
    Dst,
    Src,
    Any,
}

impl PortSide {
    pub fn as_str(self) -> &'static str {
        match self {
            PortSide::Dst => "dst",
            PortSide::Src => "src",
            PortSide::Any => "any",
        }
    }
    fn overlaps(self, other: PortSide) -> bool {
        self == other || self == PortSide::Any || other == PortSide::Any
    }
}

/// One application that may receive CL service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortDescriptor {
    pub port: u16,
    pub side: PortSide,
    /// Reserved rate `r` in wire bits per second.
    pub rate: Rate,
    pub depth: Bytes,
    /// Packets a candidate flow sends before admission is asked.
    pub threshold: u32,
}

impl PortDescriptor {
    fn check(&self) -> Result<(), (&'static str, String, &'static str)> {
        if self.port == 0 {
            return Err(("port", "0 is not a port".into(), "1..=65535"));
        }
        if self.rate.0 == 0 {
            return Err(("rate", "must be more than 0bps".into(), "a rate above 0 such as \"77.2kbps\""));
        }
        if self.depth.0 == 0 {
            return Err(("depth", "must be at least 1B".into(), "a size of at least 1 byte such as \"386B\""));
        }
        if self.threshold == 0 {
            return Err(("threshold", "must be at least 1 packet".into(), "1..=4294967295 packets"));
        }
        Ok(())
    }
}

/// One problem in a descriptor file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DescriptorError {
    /// The file name (or `<string>`), as given to [`Descriptors::parse`].
    pub origin: String,
    /// 1-based line, if known.
    pub line: Option<usize>,
    /// Field path, e.g. `port[1].rate`.
    pub path: String,
    pub problem: String,
    pub allowed: String,
}

impl fmt::Display for DescriptorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{}: ", self.origin, l)?,
            None => write!(f, "{}: ", self.origin)?,
        }
        write!(f, "{}: {}; allowed: {}", self.path, self.problem, self.allowed)
    }
}

/// Every problem found in a descriptor file, in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DescriptorErrors(pub Vec<DescriptorError>);

impl fmt::Display for DescriptorErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}
impl std::error::Error for DescriptorErrors {}

/// The validated descriptor list, with the port lookups the recognizer uses.
#[derive(Clone, Debug, Default)]
pub struct Descriptors {
    ports: Vec<PortDescriptor>,
    by_dst: HashMap<u16, usize>,
    by_src: HashMap<u16, usize>,
}

const FIELDS: &str = "port, side, rate, depth, threshold";

impl Descriptors {
    /// Builds from descriptors given in code (the simulator's scenarios).
    pub fn new(ports: Vec<PortDescriptor>) -> Result<Descriptors, ConfigError> {
        for (i, p) in ports.iter().enumerate() {
            if let Err((field, problem, allowed)) = p.check() {
                return Err(ConfigError::new(
                    "mace_descriptors",
                    field,
                    format!("of entry {i} (port {}): {problem}; allowed: {allowed}", p.port),
                ));
            }
            if let Some(j) = ports[..i].iter().position(|q| q.port == p.port && q.side.overlaps(p.side)) {
                return Err(ConfigError::new(
                    "mace_descriptors",
                    "port",
                    format!(
                        "{} of entry {i} is already described by entry {j}; allowed: each port once per side",
                        p.port
                    ),
                ));
            }
        }
        let mut d = Descriptors { ports, by_dst: HashMap::new(), by_src: HashMap::new() };
        for (i, p) in d.ports.iter().enumerate() {
            if matches!(p.side, PortSide::Dst | PortSide::Any) {
                d.by_dst.insert(p.port, i);
            }
            if matches!(p.side, PortSide::Src | PortSide::Any) {
                d.by_src.insert(p.port, i);
            }
        }
        Ok(d)
    }

    /// Parses and validates descriptor text; `origin` names it in messages.
    pub fn parse(origin: &str, text: &str) -> Result<Descriptors, DescriptorErrors> {
        let mut p = Parser { origin, text, errors: Vec::new() };
        let ports = p.document();
        if !p.errors.is_empty() {
            return Err(DescriptorErrors(p.errors));
        }
        // Parser::document checked every rule that `new` checks, with lines.
        Descriptors::new(ports).map_err(|e| {
            DescriptorErrors(vec![DescriptorError {
                origin: origin.to_string(),
                line: None,
                path: format!("port.{}", e.field),
                problem: e.message,
                allowed: "see the descriptor format".into(),
            }])
        })
    }

    /// The descriptor matching `key`'s destination port, else its source port.
    #[inline]
    pub fn lookup(&self, key: &FlowKey) -> Option<&PortDescriptor> {
        if self.ports.is_empty() {
            return None;
        }
        let i = self.by_dst.get(&key.dst_port).or_else(|| self.by_src.get(&key.src_port))?;
        Some(&self.ports[*i])
    }
    /// All descriptors, in file order.
    pub fn ports(&self) -> &[PortDescriptor] {
        &self.ports
    }
    pub fn is_empty(&self) -> bool {
        self.ports.is_empty()
    }
}

struct Parser<'a> {
    origin: &'a str,
    text: &'a str,
    errors: Vec<DescriptorError>,
}

impl Parser<'_> {
    fn line(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        self.text.as_bytes()[..end].iter().filter(|b| **b == b'\n').count() + 1
    }
    fn err(&mut self, offset: Option<usize>, path: String, problem: impl Into<String>, allowed: impl Into<String>) {
        let line = offset.map(|o| self.line(o));
        self.errors.push(DescriptorError {
            origin: self.origin.to_string(),
            line,
            path,
            problem: problem.into(),
            allowed: allowed.into(),
        });
    }

    fn document(&mut self) -> Vec<PortDescriptor> {
        let doc = match DeTable::parse(self.text) {
            Ok(d) => d,
            Err(e) => {
                let at = e.span().map(|s| s.start);
                self.err(at, "(syntax)".into(), e.message().trim().to_string(), "a TOML document of [[port]] tables");
                return Vec::new();
            }
        };
        let mut keys: Vec<_> = doc.get_ref().iter().collect();
        keys.sort_by_key(|(k, _)| k.span().start);
        let mut out = Vec::new();
        for (k, v) in keys {
            let name: &str = k.get_ref();
            if name != "port" {
                self.err(Some(k.span().start), name.to_string(), "unknown field", "port (as [[port]] tables)");
                continue;
            }
            match v.get_ref() {
                DeValue::Array(items) => {
                    for (i, item) in items.iter().enumerate() {
                        if let Some(p) = self.entry(i, item) {
                            out.push(p);
                        }
                    }
                }
                _ => self.err(Some(v.span().start), "port".into(), "must be a list of tables", "[[port]] tables"),
            }
        }
        self.duplicates(&out);
        out.into_iter().map(|(p, _)| p).collect()
    }

    /// Checks one `[[port]]` table; `None` if it has a problem (reported).
    fn entry(&mut self, i: usize, item: &Spanned<DeValue<'_>>) -> Option<(PortDescriptor, usize)> {
        let at = item.span().start;
        let DeValue::Table(t) = item.get_ref() else {
            self.err(
                Some(at),
                format!("port[{i}]"),
                "must be a table",
                "[[port]] tables with fields: ".to_string() + FIELDS,
            );
            return None;
        };
        let mut fields: Vec<_> = t.iter().collect();
        fields.sort_by_key(|(k, _)| k.span().start);
        let (mut port, mut side, mut rate, mut depth, mut threshold) = (None, Some(PortSide::Dst), None, None, None);
        let mut port_at = at;
        let before = self.errors.len();
        for (k, v) in fields {
            let name: &str = k.get_ref();
            let path = format!("port[{i}].{name}");
            let vat = Some(v.span().start);
            match name {
                "port" => {
                    port_at = v.span().start;
                    port = self.port(path, vat, v.get_ref());
                }
                "side" => side = self.side(path, vat, v.get_ref()),
                "rate" => rate = self.rate(path, vat, v.get_ref()),
                "depth" => depth = self.depth(path, vat, v.get_ref()),
                "threshold" => threshold = self.threshold(path, vat, v.get_ref()),
                _ => self.err(Some(k.span().start), path, "unknown field", FIELDS),
            }
        }
        for (name, missing) in [
            ("port", port.is_none()),
            ("rate", rate.is_none()),
            ("depth", depth.is_none()),
            ("threshold", threshold.is_none()),
        ] {
            let reported = self.errors[before..].iter().any(|e| e.path == format!("port[{i}].{name}"));
            if missing && !reported {
                self.err(
                    Some(at),
                    format!("port[{i}].{name}"),
                    "is missing",
                    format!("a [[port]] table sets {FIELDS} (side optional)"),
                );
            }
        }
        Some((PortDescriptor { port: port?, side: side?, rate: rate?, depth: depth?, threshold: threshold? }, port_at))
    }

    fn duplicates(&mut self, ports: &[(PortDescriptor, usize)]) {
        for (i, (p, at)) in ports.iter().enumerate() {
            if let Some((_, first)) = ports[..i].iter().find(|(q, _)| q.port == p.port && q.side.overlaps(p.side)) {
                let first_line = self.line(*first);
                self.err(
                    Some(*at),
                    format!("port[{i}].port"),
                    format!("{} ({}) is already described at line {first_line}", p.port, p.side.as_str()),
                    "each port once per side (\"any\" covers both sides)",
                );
            }
        }
    }

    fn port(&mut self, path: String, at: Option<usize>, v: &DeValue<'_>) -> Option<u16> {
        const ALLOWED: &str = "an integer port number 1..=65535";
        let DeValue::Integer(n) = v else {
            self.err(at, path, format!("{} is not an integer", v.type_str()), ALLOWED);
            return None;
        };
        match i64::from_str_radix(n.as_str(), n.radix()).ok().filter(|p| (1..=65535).contains(p)) {
            Some(p) => Some(p as u16),
            None => {
                self.err(at, path, format!("{n} is out of range"), ALLOWED);
                None
            }
        }
    }
    fn side(&mut self, path: String, at: Option<usize>, v: &DeValue<'_>) -> Option<PortSide> {
        const ALLOWED: &str = "\"dst\", \"src\" or \"any\"";
        match v.as_str() {
            Some("dst") => Some(PortSide::Dst),
            Some("src") => Some(PortSide::Src),
            Some("any") => Some(PortSide::Any),
            Some(s) => {
                self.err(at, path, format!("{s:?} is not a side"), ALLOWED);
                None
            }
            None => {
                self.err(at, path, format!("{} is not a string", v.type_str()), ALLOWED);
                None
            }
        }
    }
    fn rate(&mut self, path: String, at: Option<usize>, v: &DeValue<'_>) -> Option<Rate> {
        const ALLOWED: &str = "a rate above 0 with its unit, such as \"77.2kbps\" or \"1.5Mbps\"";
        let Some(s) = v.as_str() else {
            self.err(at, path, format!("{} is not a string with a unit", v.type_str()), ALLOWED);
            return None;
        };
        match Rate::parse(s) {
            Ok(r) if r.0 > 0 => Some(r),
            Ok(_) => {
                self.err(at, path, format!("{s:?} is zero"), ALLOWED);
                None
            }
            Err(_) => {
                self.err(at, path, format!("cannot read {s:?}"), ALLOWED);
                None
            }
        }
    }
    fn depth(&mut self, path: String, at: Option<usize>, v: &DeValue<'_>) -> Option<Bytes> {
        const ALLOWED: &str = "a size of at least 1 byte with its unit, such as \"386B\" or \"4kB\"";
        let Some(s) = v.as_str() else {
            self.err(at, path, format!("{} is not a string with a unit", v.type_str()), ALLOWED);
            return None;
        };
        match Bytes::parse(s) {
            Ok(b) if b.0 > 0 => Some(b),
            Ok(_) => {
                self.err(at, path, format!("{s:?} is zero"), ALLOWED);
                None
            }
            Err(_) => {
                self.err(at, path, format!("cannot read {s:?}"), ALLOWED);
                None
            }
        }
    }
    fn threshold(&mut self, path: String, at: Option<usize>, v: &DeValue<'_>) -> Option<u32> {
        const ALLOWED: &str = "a packet count 1..=4294967295, as 100 or \"100pkts\"";
        let n = match v {
            DeValue::Integer(n) => i64::from_str_radix(n.as_str(), n.radix()).ok(),
            DeValue::String(s) => parse_packets(s).ok().and_then(|n| i64::try_from(n).ok()),
            _ => {
                self.err(at, path, format!("{} is not a packet count", v.type_str()), ALLOWED);
                return None;
            }
        };
        match n.filter(|n| (1..=u32::MAX as i64).contains(n)) {
            Some(n) => Some(n as u32),
            None => {
                let shown = match v {
                    DeValue::Integer(i) => i.to_string(),
                    DeValue::String(s) => format!("{s:?}"),
                    _ => String::new(),
                };
                self.err(at, path, format!("{shown} is not a packet count in range"), ALLOWED);
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::proto;
    use std::net::{IpAddr, Ipv4Addr};

    const PAPER: &str = r#"# MACE flow-setup descriptors ([MACE98] section 4.2)
[[port]]
port = 5004
rate = "77.2kbps"
depth = "386B"
threshold = 100

[[port]]
port = 5006
side = "any"
rate = "154kbps"
depth = "3860B"
threshold = "10pkts"
"#;

    fn key(src_port: u16, dst_port: u16) -> FlowKey {
        FlowKey {
            src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
            dst: IpAddr::V4(Ipv4Addr::new(10, 0, 1, 1)),
            src_port,
            dst_port,
            proto: proto::UDP,
        }
    }
    fn errors(text: &str) -> Vec<String> {
        Descriptors::parse("mace.toml", text).unwrap_err().0.iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn descriptors_parse_the_paper_parameters() {
        let d = Descriptors::parse("mace.toml", PAPER).unwrap();
        assert_eq!(
            d.ports(),
            &[
                PortDescriptor {
                    port: 5004,
                    side: PortSide::Dst,
                    rate: Rate(77_200),
                    depth: Bytes(386),
                    threshold: 100
                },
                PortDescriptor {
                    port: 5006,
                    side: PortSide::Any,
                    rate: Rate(154_000),
                    depth: Bytes(3860),
                    threshold: 10
                },
            ]
        );
        assert_eq!(d.lookup(&key(40000, 5004)).map(|p| p.port), Some(5004));
        assert_eq!(d.lookup(&key(5004, 40000)), None, "5004 is watched as a destination port only");
        assert_eq!(d.lookup(&key(5006, 40000)).map(|p| p.port), Some(5006), "side any matches a source port");
        assert_eq!(d.lookup(&key(5006, 5004)).map(|p| p.port), Some(5004), "the destination port wins");
        assert!(Descriptors::parse("empty.toml", "# nothing watched\n").unwrap().is_empty());
    }

    #[test]
    fn descriptor_errors_give_file_line_field_problem_and_allowed() {
        let text = "[[port]]\nport = 5004\nrate = \"fast\"\ndepth = \"386B\"\nthreshold = 100\n";
        assert_eq!(
            errors(text),
            vec![
                "mace.toml:3: port[0].rate: cannot read \"fast\"; allowed: a rate above 0 with its unit, such as \
                 \"77.2kbps\" or \"1.5Mbps\""
            ]
        );
    }

    #[test]
    fn descriptor_errors_are_all_reported_in_file_order() {
        let text = "[[port]]\nport = 70000\nrate = \"0bps\"\ndepth = 386\nthreshold = 0\ncolour = \"red\"\n\n\
                    [[port]]\nport = 5004\n";
        let e = errors(text);
        assert!(
            e[0].starts_with("mace.toml:2: port[0].port: 70000 is out of range; allowed: an integer port"),
            "{e:?}"
        );
        assert!(e[1].starts_with("mace.toml:3: port[0].rate: \"0bps\" is zero"), "{e:?}");
        assert!(e[2].starts_with("mace.toml:4: port[0].depth: integer is not a string with a unit"), "{e:?}");
        assert!(e[3].starts_with("mace.toml:5: port[0].threshold: 0 is not a packet count in range"), "{e:?}");
        assert!(e[4].starts_with("mace.toml:6: port[0].colour: unknown field; allowed: port, side"), "{e:?}");
        assert!(e[5].starts_with("mace.toml:8: port[1].rate: is missing"), "{e:?}");
        assert!(e[6].starts_with("mace.toml:8: port[1].depth: is missing"), "{e:?}");
        assert!(e[7].starts_with("mace.toml:8: port[1].threshold: is missing"), "{e:?}");
        assert_eq!(e.len(), 8, "{e:?}");
    }

    #[test]
    fn descriptor_duplicates_and_shapes_are_refused() {
        let dup = "[[port]]\nport = 5004\nrate = \"77.2kbps\"\ndepth = \"386B\"\nthreshold = 100\n\
                   [[port]]\nport = 5004\nside = \"any\"\nrate = \"77.2kbps\"\ndepth = \"386B\"\nthreshold = 100\n";
        assert_eq!(
            errors(dup),
            vec![
                "mace.toml:7: port[1].port: 5004 (any) is already described at line 2; allowed: each port once \
                  per side (\"any\" covers both sides)"
            ]
        );
        let src_and_dst = dup.replace("\"any\"", "\"src\"");
        assert_eq!(Descriptors::parse("ok.toml", &src_and_dst).unwrap().ports().len(), 2);
        assert_eq!(
            errors("port = 5004\n"),
            vec!["mace.toml:1: port: must be a list of tables; allowed: [[port]] tables"]
        );
        let e = errors("ports = 1\n");
        assert_eq!(e, vec!["mace.toml:1: ports: unknown field; allowed: port (as [[port]] tables)"]);
        let e = errors("[[port]]\nside = \"up\"\n");
        assert!(
            e[0].starts_with("mace.toml:2: port[0].side: \"up\" is not a side; allowed: \"dst\", \"src\" or \"any\"")
        );
    }

    #[test]
    fn descriptor_syntax_errors_carry_their_line() {
        let e = errors("[[port]]\nport = 5004\nrate = \"77.2kbps\n");
        assert_eq!(e.len(), 1);
        assert!(e[0].starts_with("mace.toml:3: (syntax): "), "{e:?}");
        assert!(e[0].ends_with("; allowed: a TOML document of [[port]] tables"), "{e:?}");
    }

    #[test]
    fn descriptors_built_in_code_are_validated_too() {
        let p =
            PortDescriptor { port: 5004, side: PortSide::Dst, rate: Rate(77_200), depth: Bytes(386), threshold: 100 };
        assert!(Descriptors::new(vec![p]).is_ok());
        let e = Descriptors::new(vec![PortDescriptor { threshold: 0, ..p }]).unwrap_err();
        assert_eq!((e.mechanism, e.field), ("mace_descriptors", "threshold"));
        let e = Descriptors::new(vec![p, PortDescriptor { side: PortSide::Any, ..p }]).unwrap_err();
        assert_eq!(e.field, "port");
        assert!(e.to_string().contains("already described by entry 0"), "{e}");
    }
}
