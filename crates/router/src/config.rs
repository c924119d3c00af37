//! The router's configuration: a TOML file with a `[router]` table (the
//! interfaces, the buffer pool, the table capacities, where stats go) and a
//! `[link]` table with exactly the fields of a scenario link (`rate`,
//! `delay`, `queue`, `reverse_queue`, `stages`, `reverse_stages`, `mace`,
//! `loss`, `reverse_loss`), read through `qoslab-scenario`, each direction's
//! port built by its registry (`registry::build_port`): the same function
//! the simulator builds its ports with, so the router accepts a queue,
//! stage or MACE table exactly when a scenario would.
//!
//! ```toml
//! [router]
//! a = "veth-a"            # side a: packets from here leave on b through `queue`
//! b = "veth-b"            # side b: packets from here leave on a through `reverse_queue`
//!
//! [link]
//! rate = "10Mbps"         # the pacer: the device's rate in both directions
//! delay = "0s"         # held in the router's delay line (both directions), at most 10 s
//! queue = { type = "red", limit = "100pkts", min_th = 5, max_th = 15 }
//! ```
//!
//! A problem is a [`Diagnostic`] in the scenario crate's form,
//! `file:line: field.path: problem; allowed: ...`, and every problem of a
//! table is reported at once where they can be found independently.
//!
//! | `[router]` field | unit | allowed | default |
//! |---|---|---|---|
//! | `a`, `b` | interface name | two different names, 1-15 bytes | required |
//! | `seed` | integer | any u64 | 1 |
//! | `stats_interval` | time | ≥ 10 ms | 1 s |
//! | `stats` | path | a file to append JSON lines to; `-` is standard output | `-` |
//! | `out` | folder | where `summary.json` is written at exit | none (not written) |
//! | `control_socket` | path | a Unix socket path | none (no socket) |
//! | `pool` | packets | 16 ..= 1,048,576 | 4096 |
//! | `flows` | flows | 1 ..= 16,777,216 | 65,536 |
//! | `burst` | bytes | 1522 B ..= 16 MB | 3044 B (two full frames) |
//! | `batch` | frames | 1 ..= 1024 | 64 |
//! | `io` | `af_packet`, `af_xdp` | | `af_packet` |
//! | `drain_timeout` | time | ≤ 60 s | 2 s |
//! | `catch_up` | time | ≤ 1 s | 20 ms: how far a backlogged pacer may fall behind (a late wake-up) and make it up |
//! | `profile` | bool | | false: per-packet QoS timestamps (see docs/router.md) |
//! | `store_and_forward` | bool | | false: a frame that finds the wire idle leaves when taken (the idle pacer's tokens); true: at the end of its transmission, as the simulator's link |
//! | `class_tag` | `cbt`, `precedence`, `zero` | | `cbt`: TCP 0, tagged UDP 1, other 2 |
//! | `tagged_dscp_mask` | DSCP bits | 1 ..= 63 | 1 (pool 3, local use) |
//! | `pcn_dscps` | DSCPs | each 0 ..= 63 | none: PCN traffic's DSCPs (RFC 6660 encoding in the ECN bits) |
//! | `edge_port` | UDP port | 1 ..= 65535 | 7400: flow requests, answers and termination notices of a PCN domain ([`crate::edge`]) |
//! | `edge_flows` | flows | 1 ..= 1,048,576 | 65,536: admitted or pending flows a PCN ingress holds at once |
//!
//! An optional `[pcn]` table (exactly a scenario's `[pcn]`, with `edges =
//! ["a", "b"]`) makes the link a PCN domain of its own: the ingress where
//! frames arrive on side a, the egress where they leave on side b
//! ([`crate::edge`]). It needs `pcn_dscps` (which packets are PCN traffic).
//!
//! An optional `[admission]` table (exactly a scenario's `admission`:
//! `type = "shaping_cac"` with its scheme, capacity, buffer, iplr, r_req,
//! k, scheme2_rate) runs [Tarasiuk05]'s shaping CAC at side a: sources ask
//! at `edge_port`, each admitted connection gets an entry shaper at the
//! rate the CAC assigns ([`crate::entry`]). An optional `[shaping]` table
//! sets the shapers' bucket and buffer and lists connections shaped at a
//! fixed rate (a scenario group's `shaper`):
//!
//! | `[shaping]` field | unit | allowed | default |
//! |---|---|---|---|
//! | `depth` | bytes | 64 B ..= 16 MB | 1500 B (one full-size packet, [Tarasiuk05]'s packet-by-packet spacing) |
//! | `buffer` | packets and/or bytes | ≥ 1, or absent | absent: a shaper delays, never drops |
//! | `flows` | `{ src, dst, proto, src_port, dst_port, rate }` | IP addresses, `tcp`/`udp`, ports 1 ..= 65535, rate > 0; at most `edge_flows`, each 5-tuple once | none |

use qoslab_core::units::{Bytes, Dur, Rate, Time};
use qoslab_core::{pipeline::Port, Limit};
use qoslab_scenario::load::Lines;
use qoslab_scenario::registry::{build_port, PortSpec};
use qoslab_scenario::{units, AdmissionSpec, Diagnostic, LinkSpec, PcnSpec, QueueSpec};
use serde::{Deserialize, Serialize};
use std::net::IpAddr;
use std::path::{Path, PathBuf};

/// Largest Ethernet frame the pacer must be able to send: 1500 B of IP, 14 B
/// of Ethernet header, a 4-byte VLAN tag and 4 spare bytes.
pub const MAX_FRAME: u64 = 1522;

/// The longest `link.delay` the router's delay line holds.
pub const MAX_DELAY: Dur = Dur::from_secs(10);

/// The `[router]` table.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RouterSection {
    /// Interface of side a.
    pub a: String,
    /// Interface of side b.
    pub b: String,
    #[serde(default = "one")]
    pub seed: u64,
    #[serde(default = "one_second", with = "units::dur")]
    pub stats_interval: Dur,
    #[serde(default = "stdout")]
    pub stats: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub out: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_socket: Option<String>,
    #[serde(default = "default_pool")]
    pub pool: u32,
    #[serde(default = "default_flows")]
    pub flows: u32,
    #[serde(default = "default_burst", with = "units::bytes")]
    pub burst: Bytes,
    #[serde(default = "default_batch")]
    pub batch: u32,
    /// How frames reach the interfaces: AF_PACKET sockets or AF_XDP sockets.
    #[serde(default)]
    pub io: IoMode,
    #[serde(default = "two_seconds", with = "units::dur")]
    pub drain_timeout: Dur,
    #[serde(default = "twenty_ms", with = "units::dur")]
    pub catch_up: Dur,
    /// A frame that finds the wire idle leaves at the end of its own transmission (size / rate
    /// after it is taken), as a store-and-forward link and the simulator send it; false: it
    /// leaves at once when the idle pacer holds its tokens.
    #[serde(default)]
    pub store_and_forward: bool,
    #[serde(default)]
    pub profile: bool,
    /// How an arriving packet's class tag is set before the port's stages
    /// (a stage such as MACE's may set it again).
    #[serde(default)]
    pub class_tag: ClassTagRule,
    /// `class_tag = "cbt"`: the DSCP bits that mark UDP as tagged ([Claypool00]'s
    /// "unused bit of the ToS field"); default 1, DSCP pool 3 (xxxx01,
    /// experimental or local use, RFC 2474 §6).
    #[serde(default = "one_u8")]
    pub tagged_dscp_mask: u8,
    /// DSCPs of PCN traffic: a packet with one of them has its PCN mark read
    /// from its ECN bits (RFC 6660: 10 not-marked, 01 threshold-marked, 11
    /// excess-traffic-marked, 00 not PCN) and written back at departure.
    /// Default: none (no packet is PCN traffic).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pcn_dscps: Vec<u8>,
    /// The UDP port of a PCN domain's flow requests, answers and
    /// termination notices ([`crate::edge::wire`]).
    #[serde(default = "default_edge_port")]
    pub edge_port: u16,
    /// The most flows (admitted or waiting for their answer) a PCN ingress holds.
    #[serde(default = "default_edge_flows")]
    pub edge_flows: u32,
}

fn default_edge_port() -> u16 {
    7400
}
fn default_edge_flows() -> u32 {
    65_536
}

/// How the router reaches its interfaces.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum IoMode {
    /// AF_PACKET sockets: a memory-mapped receive ring, `sendmmsg` batches.
    #[default]
    AfPacket,
    /// AF_XDP sockets in copy mode, an XDP program redirecting queue 0.
    AfXdp,
}

/// The class tag the router gives an arriving IP packet.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ClassTagRule {
    /// CBT's classes from the header (`qoslab_core::qdisc::cbt::Class::from_header`):
    /// TCP 0, tagged UDP 1, other 2.
    #[default]
    Cbt,
    /// The DSCP's class selector (precedence, DSCP >> 3): 0..7.
    Precedence,
    /// Every packet 0.
    Zero,
}

fn one_u8() -> u8 {
    1
}

fn one() -> u64 {
    1
}
fn one_second() -> Dur {
    Dur::from_secs(1)
}
fn two_seconds() -> Dur {
    Dur::from_secs(2)
}
fn twenty_ms() -> Dur {
    Dur::from_ms(20)
}
fn stdout() -> String {
    "-".into()
}
fn default_pool() -> u32 {
    4096
}
fn default_flows() -> u32 {
    65_536
}
fn default_burst() -> Bytes {
    Bytes(2 * MAX_FRAME)
}
fn default_batch() -> u32 {
    64
}

/// The transport protocol of a shaped connection.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum ShapedProto {
    Tcp,
    Udp,
}

/// A connection shaped at a fixed rate (`[shaping].flows`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ShapedFlow {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub proto: ShapedProto,
    pub src_port: u16,
    pub dst_port: u16,
    /// Frame bits per second (what the pacer counts).
    #[serde(with = "units::rate")]
    pub rate: Rate,
}

/// The `[shaping]` table: the entry shapers' bucket and buffer, and the
/// connections shaped at fixed rates ([`crate::entry`]).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ShapingSection {
    #[serde(default = "default_depth", with = "units::bytes")]
    pub depth: Bytes,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "units::limit::opt")]
    pub buffer: Option<Limit>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<ShapedFlow>,
}

impl Default for ShapingSection {
    fn default() -> ShapingSection {
        ShapingSection { depth: default_depth(), buffer: None, flows: Vec::new() }
    }
}

fn default_depth() -> Bytes {
    qoslab_core::qdisc::shaper::DEFAULT_DEPTH
}

/// A whole configuration, as read (the echo in `summary.json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RouterConfig {
    pub router: RouterSection,
    pub link: LinkSpec,
    /// A PCN domain at the link's ends (ingress at side a, egress at side b).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcn: Option<PcnSpec>,
    /// The shaping CAC at side a (a scenario's `admission` table).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admission: Option<AdmissionSpec>,
    /// The entry shapers' settings and fixed-rate connections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shaping: Option<ShapingSection>,
}

/// A configuration that was read, checked, and whose ports were all built
/// once (so building them again cannot fail).
#[derive(Clone, Debug)]
pub struct ValidConfig {
    pub config: RouterConfig,
    /// Where `mace.descriptors` files are looked up (the config file's folder).
    pub base_dir: PathBuf,
    pub origin: String,
}

/// The queue of a direction that names none (a scenario's default default_queue).
pub fn default_queue() -> QueueSpec {
    QueueSpec::Fifo { limit: Limit::packets(1000) }
}

/// The two directions: 0 = a -> b (`queue`, `stages`), 1 = b -> a (`reverse_*`).
pub const DIRECTIONS: [&str; 2] = ["a->b", "b->a"];

impl ValidConfig {
    /// The queue spec of direction `dir` and its field name.
    pub fn queue_spec(&self, dir: usize) -> (QueueSpec, &'static str) {
        let l = &self.config.link;
        match dir {
            0 => (l.queue.clone().unwrap_or_else(default_queue), "queue"),
            _ => (l.reverse_queue.clone().unwrap_or_else(default_queue), "reverse_queue"),
        }
    }

    /// Builds the port of direction `dir` (0 or 1) at `now`.
    pub fn port(&self, dir: usize, now: Time) -> Result<Port, Vec<Diagnostic>> {
        port(self, dir, now, None)
    }
}

fn diag(origin: &str, lines: Option<&Lines>, path: String, message: String) -> Diagnostic {
    Diagnostic { origin: origin.to_string(), line: lines.and_then(|l| l.line_of(&path)), path, message }
}

/// Direction `dir`'s port from the registry's [`build_port`], with the lines
/// of the configuration's own fields in its diagnostics.
fn port(v: &ValidConfig, dir: usize, now: Time, lines: Option<&Lines>) -> Result<Port, Vec<Diagnostic>> {
    let default_queue = default_queue();
    let spec = PortSpec {
        link: &v.config.link,
        reverse: dir != 0,
        path: "link",
        default_queue: &default_queue,
        default_queue_path: None,
        nodes: &[],
    };
    build_port(&spec, now, Some(&v.base_dir), &v.origin).map_err(|mut ds| {
        for d in ds.iter_mut().filter(|d| d.origin == v.origin && d.line.is_none()) {
            d.line = lines.and_then(|l| l.line_of(&d.path));
        }
        ds
    })
}

/// Reads and checks a configuration file; relative paths in it are looked
/// up in its folder.
pub fn load_file(path: &Path) -> Result<ValidConfig, Vec<Diagnostic>> {
    let origin = path.display().to_string();
    // Bounded like every input file: a regular file of at most 16 MiB (`/dev/zero` or a
    // pipe given by mistake is refused before a byte is read).
    let text = qoslab_scenario::bounded::read_text(path, qoslab_scenario::bounded::MAX_FILE).map_err(|e| {
        vec![Diagnostic {
            origin: origin.clone(),
            line: None,
            path: String::new(),
            message: format!("cannot read the router configuration: {e}"),
        }]
    })?;
    let base = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    load_str(&text, &origin, &base)
}

/// Reads and checks configuration `text`; `origin` names it in messages.
pub fn load_str(text: &str, origin: &str, base_dir: &Path) -> Result<ValidConfig, Vec<Diagnostic>> {
    let syntax = |e: toml::de::Error| {
        let line = e.span().map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
        vec![Diagnostic {
            origin: origin.to_string(),
            line,
            path: String::new(),
            message: format!("not valid TOML: {}", e.message()),
        }]
    };
    let lines = Lines::parse(text).map_err(syntax)?;
    let doc: toml::Table = toml::from_str(text).map_err(syntax)?;
    let mut diags = Vec::new();
    for key in doc.keys() {
        if !["router", "link", "pcn", "admission", "shaping"].contains(&key.as_str()) {
            diags.push(diag(
                origin,
                Some(&lines),
                key.clone(),
                "is not a router configuration table; allowed: [router], [link], [pcn], [admission], [shaping]".into(),
            ));
        }
    }
    for key in ["router", "link"] {
        if !doc.contains_key(key) {
            diags.push(Diagnostic {
                origin: origin.to_string(),
                line: None,
                path: key.into(),
                message: format!(
                    "is missing; allowed: a [{key}] table ({})",
                    if key == "router" {
                        "the interfaces a and b, pool, flows, burst, ..."
                    } else {
                        "a scenario link: rate, delay, queue, stages, mace, ..."
                    }
                ),
            });
        }
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    let config: RouterConfig = serde_path_to_error::deserialize(toml::Value::Table(doc)).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        vec![diag(origin, Some(&lines), path, e.inner().message().to_string())]
    })?;
    let v = ValidConfig { config, base_dir: base_dir.to_path_buf(), origin: origin.to_string() };
    check(&v, &lines)?;
    Ok(v)
}

/// The rules across fields, then every port built once.
fn check(v: &ValidConfig, lines: &Lines) -> Result<(), Vec<Diagnostic>> {
    let r = &v.config.router;
    let l = &v.config.link;
    let mut ds = Vec::new();
    let mut bad = |path: &str, message: String| ds.push(diag(&v.origin, Some(lines), path.to_string(), message));
    for (f, name) in [("router.a", &r.a), ("router.b", &r.b)] {
        if name.is_empty() || name.len() > 15 || name.contains(['/', ' ', '\0']) {
            bad(f, format!("{name:?} is not an interface name; allowed: 1 to 15 bytes, no '/', space or NUL"));
        }
    }
    if r.a == r.b {
        bad("router.b", format!("{:?} is also router.a; allowed: two different interfaces", r.b));
    }
    if r.stats_interval < Dur::from_ms(10) {
        bad("router.stats_interval", format!("({}) is too short; allowed: at least 10ms", r.stats_interval));
    }
    if !(16..=1 << 20).contains(&r.pool) {
        bad("router.pool", format!("({}) is out of range; allowed: 16 to 1048576 packet buffers", r.pool));
    }
    if !(1..=1 << 24).contains(&r.flows) {
        bad("router.flows", format!("({}) is out of range; allowed: 1 to 16777216 flows", r.flows));
    }
    if r.burst.0 < MAX_FRAME || r.burst.0 > 16_000_000 {
        bad("router.burst", format!("({}) is out of range; allowed: {MAX_FRAME}B (one full frame) to 16MB", r.burst));
    }
    if !(1..=1024).contains(&r.batch) {
        bad("router.batch", format!("({}) is out of range; allowed: 1 to 1024 frames", r.batch));
    }
    if r.drain_timeout > Dur::from_secs(60) {
        bad("router.drain_timeout", format!("({}) is too long; allowed: at most 60s", r.drain_timeout));
    }
    if !(1..=63).contains(&r.tagged_dscp_mask) {
        bad(
            "router.tagged_dscp_mask",
            format!("({}) is out of range; allowed: 1 to 63 (DSCP bits)", r.tagged_dscp_mask),
        );
    }
    if let Some(d) = r.pcn_dscps.iter().find(|d| **d > 63) {
        bad("router.pcn_dscps", format!("contains {d}; allowed: DSCPs 0 to 63"));
    }
    if r.edge_port == 0 {
        bad("router.edge_port", "(0) is not a port; allowed: 1 to 65535".into());
    }
    if !(1..=1 << 20).contains(&r.edge_flows) {
        bad("router.edge_flows", format!("({}) is out of range; allowed: 1 to 1048576 flows", r.edge_flows));
    }
    if let Some(p) = &v.config.pcn {
        if p.edges != ["a", "b"] {
            bad(
                "pcn.edges",
                format!(
                    "({:?}) is not this router's domain; allowed: [\"a\", \"b\"] (the ingress where frames \
                     arrive on side a, the egress where they leave on side b)",
                    p.edges
                ),
            );
        }
        if let Err(e) = qoslab_scenario::registry::pcn::edge_config(p) {
            bad(&format!("pcn.{}", e.field_path), e.message);
        }
        if r.pcn_dscps.is_empty() {
            bad(
                "router.pcn_dscps",
                "is empty while [pcn] is set; allowed: the DSCPs of the domain's PCN traffic, e.g. [0]".into(),
            );
        }
    }
    let cac = v.config.admission.as_ref().map(qoslab_scenario::registry::cac::shaping_cac);
    if let Some(Err(e)) = &cac {
        bad(&format!("admission.{}", e.field_path), e.message.clone());
    }
    if matches!(cac, Some(Ok(Some(_)))) && v.config.pcn.is_some() {
        bad(
            "admission",
            "a shaping CAC beside [pcn]: both take the requests at edge_port; allowed: one of them".into(),
        );
    }
    if let Some(s) = &v.config.shaping {
        if !(64..=16_000_000).contains(&s.depth.0) {
            bad("shaping.depth", format!("({}) is out of range; allowed: 64B to 16MB", s.depth));
        }
        if s.buffer.is_some_and(|b| b.packets == Some(0) || b.bytes == Some(0)) {
            bad("shaping.buffer", "is zero; allowed: at least 1 packet or byte, or no buffer (delays only)".into());
        }
        if s.flows.len() > r.edge_flows as usize {
            bad(
                "shaping.flows",
                format!("has {} connections; allowed: at most router.edge_flows ({})", s.flows.len(), r.edge_flows),
            );
        }
        let mut seen = std::collections::HashSet::new();
        for (i, f) in s.flows.iter().enumerate() {
            if f.src_port == 0 || f.dst_port == 0 {
                bad(&format!("shaping.flows.{i}"), "has port 0; allowed: ports 1 to 65535".into());
            }
            if f.rate == Rate(0) {
                bad(&format!("shaping.flows.{i}.rate"), "(0bps) must be positive; allowed: e.g. \"1Mbps\"".into());
            }
            if !seen.insert((f.src, f.dst, f.proto, f.src_port, f.dst_port)) {
                bad(&format!("shaping.flows.{i}"), "repeats an earlier connection; allowed: each 5-tuple once".into());
            }
        }
    }
    if r.catch_up > Dur::from_secs(1) {
        bad("router.catch_up", format!("({}) is too long; allowed: at most 1s", r.catch_up));
    }
    if l.rate == Rate(0) {
        bad("link.rate", "(0bps) must be positive; allowed: the pacer's rate, e.g. \"10Mbps\"".into());
    }
    if l.delay > MAX_DELAY {
        bad(
            "link.delay",
            format!("({}) is too long; allowed: at most 10s (held in the router's delay line, in pool slots)", l.delay),
        );
    }
    for (f, x) in [("link.loss", l.loss), ("link.reverse_loss", l.reverse_loss)] {
        if !(0.0..1.0).contains(&x) {
            bad(
                f,
                format!("({x}) is not a loss probability; allowed: 0 <= p < 1 (frames lost after their transmission)"),
            );
        }
    }
    let any_mace = [0, 1].iter().any(|&d| matches!(v.queue_spec(d).0, QueueSpec::Mace { .. }));
    if l.mace.is_some() && !any_mace {
        bad("link.mace", "is set but neither queue is { type = \"mace\" }; allowed: only with a mace queue".into());
    }
    if !ds.is_empty() {
        return Err(ds);
    }
    let mut ds = Vec::new();
    for dir in 0..2 {
        if let Err(mut e) = port(v, dir, Time::ZERO, Some(lines)) {
            ds.append(&mut e);
        }
    }
    if ds.is_empty() {
        Ok(())
    } else {
        Err(ds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<ValidConfig, Vec<Diagnostic>> {
        load_str(text, "r.toml", Path::new("."))
    }
    fn msgs(r: Result<ValidConfig, Vec<Diagnostic>>) -> String {
        r.unwrap_err().iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n")
    }
    const OK: &str = "[router]\na = \"x0\"\nb = \"x1\"\n[link]\nrate = \"10Mbps\"\ndelay = \"0s\"\n";

    #[test]
    fn config_minimal_gets_defaults_and_fifo_queues() {
        let v = load(OK).unwrap();
        assert_eq!(v.config.router.pool, 4096);
        assert_eq!(v.config.router.burst, Bytes(3044));
        assert_eq!(v.queue_spec(0).0, default_queue());
        assert_eq!(v.port(1, Time::ZERO).unwrap().queue().kind(), "fifo");
    }

    #[test]
    fn config_red_bad_threshold_names_file_line_and_field() {
        let t = format!("{OK}queue = {{ type = \"red\", limit = \"100pkts\", min_th = 15, max_th = 5 }}\n");
        let m = msgs(load(&t));
        assert!(m.starts_with("r.toml:7: link.queue.max_th: "), "{m}");
        assert!(m.contains("must exceed"), "{m}");
    }

    #[test]
    fn config_file_is_read_with_a_bound() {
        // A device or a folder given by mistake is refused before a byte is read.
        let m = msgs(load_file(Path::new("/dev/zero")));
        assert!(m.contains("cannot read the router configuration: is a device, not a regular file"), "{m}");
        let m = msgs(load_file(&std::env::temp_dir()));
        assert!(m.contains("is a folder"), "{m}");
    }

    #[test]
    fn config_unknown_table_and_field_are_refused() {
        assert!(msgs(load(&format!("{OK}[extra]\nx = 1\n"))).contains("r.toml:7: extra: is not a router"));
        let m = msgs(load(&OK.replace("b = \"x1\"", "b = \"x1\"\nspeed = 3")));
        assert!(m.contains("router.speed") || m.contains("unknown field `speed`"), "{m}");
    }

    #[test]
    fn config_rules_across_fields_all_reported() {
        let t = OK.replace("b = \"x1\"", "b = \"x0\"\npool = 2\nburst = \"100B\"").replace("\"0s\"", "\"11s\"");
        let m = msgs(load(&t));
        for f in ["router.b:", "router.pool:", "router.burst:", "link.delay:"] {
            assert!(m.contains(f), "{f} missing in {m}");
        }
    }

    #[test]
    fn config_mace_queue_without_table_is_refused() {
        let m = msgs(load(&format!("{OK}queue = {{ type = \"mace\", buffer = \"60pkts\" }}\n")));
        assert!(m.contains("link.queue.type: is mace but the link has no mace table"), "{m}");
    }

    #[test]
    fn config_mace_flow_setup_file_is_read_beside_the_config() {
        let dir = std::env::temp_dir().join(format!("qoslab-router-cfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("voice.descriptors"),
            "[[port]]\nport = 5004\nrate = \"77.2kbps\"\ndepth = \"386B\"\nthreshold = 100\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("bad.descriptors"),
            "[[port]]\nport = 5004\nrate = \"0kbps\"\ndepth = \"386B\"\nthreshold = 100\n",
        )
        .unwrap();
        let text = |file: &str| {
            format!(
                "{OK}queue = {{ type = \"mace\", buffer = \"60pkts\" }}\n[link.mace]\ndescriptors = \"{file}\"\n\
                 allocation = \"1Mbps\"\nadmission = {{ type = \"ssac\" }}\n"
            )
        };
        let v = load_str(&text("voice.descriptors"), "r.toml", &dir).unwrap_or_else(|e| panic!("{e:?}"));
        let port = v.port(0, Time::ZERO).unwrap();
        assert!(port.wants_tx_done(), "MACE's device queue is there");
        // A problem inside the file is reported at the file's own line.
        let m = msgs(load_str(&text("bad.descriptors"), "r.toml", &dir));
        assert!(m.contains("bad.descriptors:3: port[0].rate: \"0kbps\" is zero"), "{m}");
        let m = msgs(load_str(&text("none.descriptors"), "r.toml", &dir));
        assert!(m.contains("link.mace.descriptors: no readable file"), "{m}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn config_bad_toml_has_a_line() {
        let m = msgs(load("[router]\na = \n"));
        assert!(m.starts_with("r.toml:2: not valid TOML"), "{m}");
    }
}
