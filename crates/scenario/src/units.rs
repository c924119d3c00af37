//! Serde adapters that read human units (`"25Mbps"`, `"20ms"`, `"1500B"`,
//! `"60pkts"`) into core unit types and write them back the same way, for
//! the scenario echo in `summary.json`. Used as `#[serde(with = "...")]`.
//!
//! Inside [`numeric`] they write numbers in the core's units instead, for
//! readers that compute with them (the Python front's scenario model,
//! `qoslab._core.Scenario.model`): a rate in bit/s, a duration in ns, a
//! size in bytes (integers), a limit as `{"packets": n, "bytes": n}` (either
//! may be null), a TCP window as `{"segments": n}` or `{"bytes": n}`.

use qoslab_core::units::{parse_packets, Bytes, Dur, Rate};
use serde::{de::Error as _, Deserialize, Deserializer, Serializer};
use std::cell::Cell;

thread_local! {
    static NUMERIC: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` (a serialization) with every unit written as a number in the
/// core's units (see the module doc), on this thread.
pub fn numeric<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            NUMERIC.with(|n| n.set(self.0));
        }
    }
    let _restore = Restore(NUMERIC.with(|n| n.replace(true)));
    f()
}

/// Whether units are being written as numbers (inside [`numeric`]).
pub fn is_numeric() -> bool {
    NUMERIC.with(Cell::get)
}

/// Something written with a unit: its number in the core's units.
pub trait Quantity: std::fmt::Display {
    fn number(&self) -> u64;
}
impl Quantity for Rate {
    fn number(&self) -> u64 {
        self.0
    }
}
impl Quantity for Dur {
    fn number(&self) -> u64 {
        self.0
    }
}
impl Quantity for Bytes {
    fn number(&self) -> u64 {
        self.0
    }
}

/// Writes `v` with its unit (`"25Mbps"`), or as its number inside [`numeric`].
pub fn write<S: Serializer, Q: Quantity>(v: &Q, s: S) -> Result<S::Ok, S::Error> {
    if is_numeric() {
        s.serialize_u64(v.number())
    } else {
        s.collect_str(v)
    }
}

/// Writes a list of quantities (see [`write`]).
pub fn write_list<S: Serializer, Q: Quantity>(v: &[Q], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(v.len()))?;
    for x in v {
        if is_numeric() {
            seq.serialize_element(&x.number())?;
        } else {
            seq.serialize_element(&x.to_string())?;
        }
    }
    seq.end()
}

macro_rules! unit_adapter {
    ($modname:ident, $ty:ty, $parse:expr) => {
        pub mod $modname {
            use super::*;
            pub fn serialize<S: Serializer>(v: &$ty, s: S) -> Result<S::Ok, S::Error> {
                super::write(v, s)
            }
            pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<$ty, D::Error> {
                let s = String::deserialize(d)?;
                ($parse)(&s).map_err(D::Error::custom)
            }
            /// The same for an optional field.
            pub mod opt {
                use super::*;
                pub fn serialize<S: Serializer>(v: &Option<$ty>, s: S) -> Result<S::Ok, S::Error> {
                    match v {
                        Some(v) => super::super::write(v, s),
                        None => s.serialize_none(),
                    }
                }
                pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<$ty>, D::Error> {
                    let s = String::deserialize(d)?;
                    ($parse)(&s).map(Some).map_err(D::Error::custom)
                }
            }
        }
    };
}

unit_adapter!(rate, Rate, Rate::parse);
unit_adapter!(dur, Dur, Dur::parse);
unit_adapter!(bytes, Bytes, Bytes::parse);

/// A queue limit: `"60pkts"`, `"64kB"`, or both as `["60pkts", "64kB"]`.
pub mod limit {
    use super::*;
    use qoslab_core::qdisc::Limit;
    use serde::ser::SerializeSeq;

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        One(String),
        Many(Vec<String>),
    }

    const ALLOWED: &str =
        "a packet count such as \"60pkts\", a size such as \"64kB\", or both as [\"60pkts\", \"64kB\"]";

    /// Reads one entry into `l`; a second packet count or a second size is
    /// refused (it would silently replace the first).
    fn one(s: &str, l: &mut Limit) -> Result<(), String> {
        if let Ok(n) = parse_packets(s) {
            if let Some(p) = l.packets {
                return Err(format!("{s:?} is a second packet count (after \"{p}pkts\"); allowed: {ALLOWED}"));
            }
            l.packets = Some(u32::try_from(n).map_err(|_| format!("{s:?} is too many packets"))?);
            return Ok(());
        }
        if let Ok(b) = Bytes::parse(s) {
            if let Some(x) = l.bytes {
                return Err(format!("{s:?} is a second size (after \"{x}B\"); allowed: {ALLOWED}"));
            }
            l.bytes = Some(b.0);
            return Ok(());
        }
        Err(format!("cannot read {s:?}; allowed: {ALLOWED}"))
    }

    pub fn serialize<S: Serializer>(v: &Limit, s: S) -> Result<S::Ok, S::Error> {
        if super::is_numeric() {
            use serde::ser::SerializeMap;
            let mut m = s.serialize_map(Some(2))?;
            m.serialize_entry("packets", &v.packets)?;
            m.serialize_entry("bytes", &v.bytes)?;
            return m.end();
        }
        match (v.packets, v.bytes) {
            (Some(p), None) => s.collect_str(&format_args!("{p}pkts")),
            (None, Some(b)) => s.collect_str(&format_args!("{b}B")),
            _ => {
                let mut seq = s.serialize_seq(Some(2))?;
                if let Some(p) = v.packets {
                    seq.serialize_element(&format!("{p}pkts"))?;
                }
                if let Some(b) = v.bytes {
                    seq.serialize_element(&format!("{b}B"))?;
                }
                seq.end()
            }
        }
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Limit, D::Error> {
        let raw = Raw::deserialize(d).map_err(|_| D::Error::custom(format!("allowed: {ALLOWED}")))?;
        let mut l = Limit::UNLIMITED;
        match raw {
            Raw::One(s) => one(&s, &mut l).map_err(D::Error::custom)?,
            Raw::Many(v) => {
                if v.is_empty() || v.len() > 2 {
                    return Err(D::Error::custom(format!("{} entries; allowed: {ALLOWED}", v.len())));
                }
                for s in &v {
                    one(s, &mut l).map_err(D::Error::custom)?;
                }
            }
        }
        Ok(l)
    }

    /// The same for an optional field.
    pub mod opt {
        use super::*;
        pub fn serialize<S: Serializer>(v: &Option<Limit>, s: S) -> Result<S::Ok, S::Error> {
            match v {
                Some(v) => super::serialize(v, s),
                None => s.serialize_none(),
            }
        }
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Limit>, D::Error> {
            super::deserialize(d).map(Some)
        }
    }
}
