//! Scenario keys of the TCP (`ftp`, `transfer`) and MM_APP (`mm_app`)
//! traffic models: `tcp = { ... }` and `mm_app = { ... }` tables, every key
//! optional. Defaults are those of ns-2 in 2000 as the D-CBT/ChIPS paper
//! used it [Claypool00 §5] where it says, else RFC 6298 / ns-2's defaults:
//! see `docs/mechanisms/tcp.md` and `docs/mechanisms/mm_app.md`.

use super::units;
use qoslab_core::tcp::{TcpConfig, TcpStack, TcpVariant};
use qoslab_core::units::{Bytes, Dur, Rate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Loss recovery of the TCP sender.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub enum TcpVariantSpec {
    /// Reno (RFC 5681): fast recovery ends on the first new ACK.
    #[default]
    #[serde(rename = "reno")]
    Reno,
    /// NewReno (RFC 6582): partial ACKs retransmit the next hole.
    #[serde(rename = "newreno")]
    NewReno,
}

/// Whose rules the TCP sender follows where implementations differ.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub enum TcpStackSpec {
    /// The RFCs: ssthresh from the flight size (RFC 5681), RTO by RFC 6298.
    #[default]
    #[serde(rename = "rfc")]
    Rfc,
    /// ns-2.35's Agent/TCP: the window cut from cwnd (fraction kept), a second
    /// fast retransmit only past `recover`, RTT counted in ticks of `granularity`.
    #[serde(rename = "ns2")]
    Ns2,
}

fn d_max_window() -> Window {
    Window::Segments(20)
}

/// A TCP window: whole segments (`20` or `"20pkts"`) or bytes (`"64kB"`).
/// A byte window allows as many whole segments of the group's MSS as fit
/// in it (rounded down), since the sender counts in segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    Segments(u32),
    Bytes(u64),
}

impl Window {
    /// The window in segments of `mss` payload bytes.
    pub fn segments(self, mss: u32) -> u32 {
        match self {
            Window::Segments(n) => n,
            Window::Bytes(b) => u32::try_from(b / u64::from(mss.max(1))).unwrap_or(u32::MAX),
        }
    }
}

const WINDOW_ALLOWED: &str = "a segment count such as 20 or \"20pkts\", or a size such as \"64kB\"";

impl Serialize for Window {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            Window::Segments(n) if units::is_numeric() => {
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("segments", n)?;
                m.end()
            }
            Window::Bytes(b) if units::is_numeric() => {
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("bytes", b)?;
                m.end()
            }
            Window::Segments(n) => s.serialize_u32(*n),
            Window::Bytes(b) => s.collect_str(&format_args!("{b}B")),
        }
    }
}

impl<'de> Deserialize<'de> for Window {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Window, D::Error> {
        use serde::de::Error as _;
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Count(u64),
            Text(String),
        }
        let raw = Raw::deserialize(d).map_err(|_| D::Error::custom(format!("allowed: {WINDOW_ALLOWED}")))?;
        let too_many = |n: u64| D::Error::custom(format!("{n} segments is too many; allowed: at most {}", u32::MAX));
        match raw {
            Raw::Count(n) => u32::try_from(n).map(Window::Segments).map_err(|_| too_many(n)),
            Raw::Text(t) => {
                if let Ok(n) = qoslab_core::units::parse_packets(&t) {
                    return u32::try_from(n).map(Window::Segments).map_err(|_| too_many(n));
                }
                Bytes::parse(&t)
                    .map(|b| Window::Bytes(b.0))
                    .map_err(|_| D::Error::custom(format!("cannot read {t:?}; allowed: {WINDOW_ALLOWED}")))
            }
        }
    }
}

impl JsonSchema for Window {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Window".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "Segments (an integer, or \"20pkts\") or bytes (\"64kB\", rounded down to whole segments).",
            "anyOf": [
                {"type": "integer", "minimum": 0},
                {"type": "string", "pattern": super::schema::LIMIT_PATTERN}
            ]
        })
    }
}
/// Named sets of timer settings and initial window (`tcp.preset`); keys
/// written next to the preset override it. Sources in `docs/mechanisms/tcp.md`.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub enum TcpPreset {
    /// qoslab's defaults (ns-2 of 2000 as [Claypool00] ran it, RFC 2988's 3 s
    /// initial RTO): min RTO 200ms, initial RTO 3s, max RTO 60s,
    /// granularity 100ms, initial window 1.
    #[default]
    #[serde(rename = "qoslab")]
    Qoslab,
    /// ns-2 of 2005 (`tcl/lib/ns-default.tcl`): `tcpTick_` 10ms, `minrto_`
    /// 200ms (2004/10/14), `rtxcur_init_` 6s (3s from 2006/01/21),
    /// `maxrto_` 100000s, `windowInit_` 2.
    #[serde(rename = "ns2")]
    Ns2,
    /// RFC 6298: initial RTO 1s (§2.1), min RTO 1s (§2.4), max RTO 60s
    /// (§2.5), granularity 1ms; initial window 1 (RFC 6298 does not set it).
    #[serde(rename = "rfc6298")]
    Rfc6298,
    /// Linux (`include/net/tcp.h`): `TCP_RTO_MIN` 200ms, `TCP_TIMEOUT_INIT`
    /// 1s, `TCP_RTO_MAX` 120s, `TCP_INIT_CWND` 10, granularity one jiffy at
    /// HZ = 1000 (1ms).
    #[serde(rename = "linux")]
    Linux,
}

/// The values a preset gives the keys it covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PresetValues {
    pub min_rto: Dur,
    pub initial_rto: Dur,
    pub max_rto: Dur,
    pub granularity: Dur,
    pub init_window: u32,
}

impl TcpPreset {
    pub fn values(self) -> PresetValues {
        let v = |min_ms, init_ms, max_s, g_ms, iw| PresetValues {
            min_rto: Dur::from_ms(min_ms),
            initial_rto: Dur::from_ms(init_ms),
            max_rto: Dur::from_secs(max_s),
            granularity: Dur::from_ms(g_ms),
            init_window: iw,
        };
        match self {
            TcpPreset::Qoslab => v(200, 3_000, 60, 100, 1),
            TcpPreset::Ns2 => v(200, 6_000, 100_000, 10, 2),
            TcpPreset::Rfc6298 => v(1_000, 1_000, 60, 1, 1),
            TcpPreset::Linux => v(200, 1_000, 120, 1, 10),
        }
    }
}

fn d_one() -> u32 {
    1
}
fn d_min_rto() -> Dur {
    TcpPreset::Qoslab.values().min_rto
}
fn d_initial_rto() -> Dur {
    TcpPreset::Qoslab.values().initial_rto
}
fn d_max_rto() -> Dur {
    TcpPreset::Qoslab.values().max_rto
}
fn d_granularity() -> Dur {
    TcpPreset::Qoslab.values().granularity
}
fn d_ack_delay() -> Dur {
    Dur::from_ms(100)
}

/// TCP settings of an `ftp` or `transfer` group (windows in segments or bytes).
/// Read through [`TcpSpecRaw`], so that `preset` fills the timer keys and
/// `init_window` left out; the echo writes every value resolved.
#[derive(Clone, Debug, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TcpSpec {
    /// `reno` (default) or `newreno`.
    #[serde(default)]
    pub variant: TcpVariantSpec,
    /// Timer and initial-window preset: `qoslab` (default), `ns2` (ns-2 of
    /// 2005), `rfc6298` or `linux`; `min_rto`, `initial_rto`, `max_rto`,
    /// `granularity` and `init_window` written beside it override it.
    #[serde(default)]
    pub preset: TcpPreset,
    /// Limited transmit (RFC 3042): a new segment on each of the first two
    /// duplicate ACKs; default false.
    #[serde(default)]
    pub limited_transmit: bool,
    /// Largest congestion window (ns-2's `window_`): segments (`20`, `"20pkts"`) or
    /// bytes (`"20kB"`, whole segments of the MSS); >= 1 segment; default 20.
    #[serde(default = "d_max_window")]
    pub max_window: Window,
    /// Initial congestion window in segments; >= 1; default the preset's (1).
    #[serde(default = "d_one")]
    pub init_window: u32,
    /// Receiver window: segments or bytes, as `max_window`; >= 1 segment;
    /// default: none (only `max_window` limits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rwnd: Option<Window>,
    /// Delayed ACKs at the sink (every second segment or `ack_delay`); default false.
    #[serde(default)]
    pub delayed_ack: bool,
    /// Delayed-ACK timeout (ns-2's `interval_`); > 0; default 100ms.
    #[serde(default = "d_ack_delay", with = "units::dur")]
    #[schemars(with = "super::schema::DurText")]
    pub ack_delay: Dur,
    /// Lower bound of the RTO; default the preset's (200ms).
    #[serde(default = "d_min_rto", with = "units::dur")]
    #[schemars(with = "super::schema::DurText")]
    pub min_rto: Dur,
    /// RTO before the first RTT sample; > 0; default the preset's (3s, RFC 2988).
    #[serde(default = "d_initial_rto", with = "units::dur")]
    #[schemars(with = "super::schema::DurText")]
    pub initial_rto: Dur,
    /// Upper bound of the (backed-off) RTO; >= min_rto; default the preset's (60s).
    #[serde(default = "d_max_rto", with = "units::dur")]
    #[schemars(with = "super::schema::DurText")]
    pub max_rto: Dur,
    /// Timer granularity G (ns-2's `tcpTick_`): RTO = SRTT + max(G, 4 RTTVAR),
    /// rounded up to a multiple of G; "0s" for none; default the preset's (100ms).
    #[serde(default = "d_granularity", with = "units::dur")]
    #[schemars(with = "super::schema::DurText")]
    pub granularity: Dur,
    /// `rfc` (default) or `ns2`: ns-2.35's window cut, fast-retransmit guard and
    /// tick-counted RTT, for scenarios that reproduce an ns-2 paper
    /// (`docs/mechanisms/tcp.md`); `ns2` needs `variant = "reno"` and a positive `granularity`.
    #[serde(default)]
    pub stack: TcpStackSpec,
}

impl Default for TcpSpec {
    fn default() -> Self {
        TcpSpec {
            variant: TcpVariantSpec::Reno,
            preset: TcpPreset::Qoslab,
            limited_transmit: false,
            max_window: d_max_window(),
            init_window: 1,
            rwnd: None,
            delayed_ack: false,
            ack_delay: d_ack_delay(),
            min_rto: d_min_rto(),
            initial_rto: d_initial_rto(),
            max_rto: d_max_rto(),
            granularity: d_granularity(),
            stack: TcpStackSpec::Rfc,
        }
    }
}

impl TcpSpec {
    /// The sender's configuration for segments of `mss` payload bytes.
    pub fn config(&self, mss: u32) -> TcpConfig {
        TcpConfig {
            variant: match self.variant {
                TcpVariantSpec::Reno => TcpVariant::Reno,
                TcpVariantSpec::NewReno => TcpVariant::NewReno,
            },
            mss,
            max_window: self.max_window.segments(mss),
            init_window: self.init_window,
            rwnd: self.rwnd.map(|w| w.segments(mss)),
            min_rto: self.min_rto,
            initial_rto: self.initial_rto,
            max_rto: self.max_rto,
            granularity: self.granularity,
            stack: match self.stack {
                TcpStackSpec::Rfc => TcpStack::Rfc,
                TcpStackSpec::Ns2 => TcpStack::Ns2,
            },
            limited_transmit: self.limited_transmit,
            ecn: false,
        }
    }
    /// The sink's delayed-ACK timeout, if delayed ACKs are on.
    pub fn sink_delay(&self) -> Option<Dur> {
        self.delayed_ack.then_some(self.ack_delay)
    }
}

/// What a scenario's `tcp` table says, before the preset fills the keys
/// it covers.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TcpSpecRaw {
    #[serde(default)]
    variant: TcpVariantSpec,
    #[serde(default)]
    preset: TcpPreset,
    #[serde(default)]
    limited_transmit: bool,
    #[serde(default = "d_max_window")]
    max_window: Window,
    #[serde(default)]
    init_window: Option<u32>,
    #[serde(default)]
    rwnd: Option<Window>,
    #[serde(default)]
    delayed_ack: bool,
    #[serde(default = "d_ack_delay", with = "units::dur")]
    ack_delay: Dur,
    #[serde(default, with = "units::dur::opt")]
    min_rto: Option<Dur>,
    #[serde(default, with = "units::dur::opt")]
    initial_rto: Option<Dur>,
    #[serde(default, with = "units::dur::opt")]
    max_rto: Option<Dur>,
    #[serde(default, with = "units::dur::opt")]
    granularity: Option<Dur>,
    #[serde(default)]
    stack: TcpStackSpec,
}

impl<'de> Deserialize<'de> for TcpSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<TcpSpec, D::Error> {
        let r = TcpSpecRaw::deserialize(d)?;
        let p = r.preset.values();
        Ok(TcpSpec {
            variant: r.variant,
            preset: r.preset,
            limited_transmit: r.limited_transmit,
            max_window: r.max_window,
            init_window: r.init_window.unwrap_or(p.init_window),
            rwnd: r.rwnd,
            delayed_ack: r.delayed_ack,
            ack_delay: r.ack_delay,
            min_rto: r.min_rto.unwrap_or(p.min_rto),
            initial_rto: r.initial_rto.unwrap_or(p.initial_rto),
            max_rto: r.max_rto.unwrap_or(p.max_rto),
            granularity: r.granularity.unwrap_or(p.granularity),
            stack: r.stack,
        })
    }
}

fn d_scales() -> Vec<Rate> {
    [300u64, 500, 700, 900, 1100].iter().map(|k| Rate::kbps(*k)).collect()
}
fn d_feedback() -> Bytes {
    Bytes(40)
}

/// Most scales an MM_APP source may have (`mm_app.scales`).
pub use qoslab_core::traffic::mm_app::MAX_SCALES;

/// MM_APP settings.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MmAppSpec {
    /// Payload rates of the scales, lowest first; 1 to 32 rates > 0;
    /// default ["300kbps", "500kbps", "700kbps", "900kbps", "1100kbps"].
    #[serde(default = "d_scales", with = "rate_list")]
    #[schemars(with = "Vec<super::schema::RateText>")]
    pub scales: Vec<Rate>,
    /// Wire size of a feedback packet (receiver to source); >= 1 B; default 40B.
    #[serde(default = "d_feedback", with = "units::bytes")]
    #[schemars(with = "super::schema::BytesText")]
    pub feedback_size: Bytes,
}

impl Default for MmAppSpec {
    fn default() -> Self {
        MmAppSpec { scales: d_scales(), feedback_size: d_feedback() }
    }
}

mod rate_list {
    use qoslab_core::units::Rate;
    use serde::{de::Error as _, Deserialize, Deserializer, Serializer};
    pub fn serialize<S: Serializer>(v: &[Rate], s: S) -> Result<S::Ok, S::Error> {
        crate::units::write_list(v, s)
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Rate>, D::Error> {
        let v = Vec::<String>::deserialize(d)?;
        v.iter().map(|s| Rate::parse(s).map_err(D::Error::custom)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp(toml_text: &str) -> Result<TcpSpec, String> {
        toml::from_str::<TcpSpec>(toml_text).map_err(|e| e.to_string())
    }

    #[test]
    fn windows_read_as_segments_or_bytes() {
        assert_eq!(tcp("max_window = 20").unwrap().max_window, Window::Segments(20));
        assert_eq!(tcp("max_window = \"44pkts\"").unwrap().max_window, Window::Segments(44));
        assert_eq!(tcp("rwnd = \"64kB\"").unwrap().rwnd, Some(Window::Bytes(64_000)));
        let e = tcp("max_window = \"fast\"").unwrap_err();
        assert!(e.contains("cannot read \"fast\"") && e.contains("allowed: a segment count"), "{e}");
        let e = tcp("max_window = -3").unwrap_err();
        assert!(e.contains("allowed: a segment count"), "{e}");
    }

    #[test]
    fn a_byte_window_allows_the_whole_segments_that_fit() {
        assert_eq!(Window::Bytes(66_000).segments(1500), 44);
        assert_eq!(Window::Bytes(65_999).segments(1500), 43);
        assert_eq!(Window::Segments(20).segments(1000), 20);
        let spec = tcp("max_window = \"20kB\"\nrwnd = \"64000B\"").unwrap();
        let cfg = spec.config(1000);
        assert_eq!((cfg.max_window, cfg.rwnd), (20, Some(64)));
    }

    #[test]
    fn a_preset_fills_the_timer_keys_and_written_keys_override_it() {
        let ns2 = tcp("preset = \"ns2\"").unwrap();
        assert_eq!(
            (ns2.min_rto, ns2.initial_rto, ns2.max_rto, ns2.granularity, ns2.init_window),
            (Dur::from_ms(200), Dur::from_secs(6), Dur::from_secs(100_000), Dur::from_ms(10), 2)
        );
        let linux = tcp("preset = \"linux\"\ninitial_rto = \"3s\"").unwrap();
        assert_eq!((linux.initial_rto, linux.max_rto, linux.init_window), (Dur::from_secs(3), Dur::from_secs(120), 10));
        let rfc = tcp("preset = \"rfc6298\"").unwrap();
        assert_eq!(
            (rfc.min_rto, rfc.initial_rto, rfc.max_rto),
            (Dur::from_secs(1), Dur::from_secs(1), Dur::from_secs(60))
        );
        // No preset: qoslab's defaults, the same as TcpSpec::default().
        assert_eq!(tcp("").unwrap(), TcpSpec::default());
        let e = tcp("preset = \"bsd\"").unwrap_err();
        assert!(e.contains("qoslab") && e.contains("ns2") && e.contains("linux"), "{e}");
        // The echo re-reads to the same values.
        let text = toml::to_string(&linux).unwrap();
        assert_eq!(tcp(&text).unwrap(), linux);
        assert!(tcp("limited_transmit = true").unwrap().config(1000).limited_transmit);
    }

    #[test]
    fn windows_write_back_in_the_form_they_were_read() {
        let spec = tcp("max_window = 20\nrwnd = \"64000B\"").unwrap();
        let text = toml::to_string(&spec).unwrap();
        assert!(text.contains("max_window = 20") && text.contains("rwnd = \"64000B\""), "{text}");
        assert_eq!(tcp(&text).unwrap(), spec);
    }
}
