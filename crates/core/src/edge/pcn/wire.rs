//! The PCN domain's messages on the wire: one fixed 32-byte UDP payload
//! for flow requests, answers and termination notices (between a traffic
//! source and the ingress) and for the messages between the domain's
//! ingress and egress [Zhang07 §2.2, §4.1]. Every
//! field is big-endian at a fixed offset, so a capture is read without a
//! dissector (`docs/testbed.md` shows the same table for reading
//! captures; a test below keeps the two equal):
//!
//! | offset | size | field | meaning |
//! |---|---|---|---|
//! | 0 | 4 | magic | `QPCN` (0x5150434e) |
//! | 4 | 1 | version | 1 |
//! | 5 | 1 | kind | 1 flow request, 2 flow answer, 3 terminate, 4 admission request, 5 congestion level, 6 sustainable rate, 7 flow end |
//! | 6 | 1 | flags | bit 0: answer admits / congestion level answers a request; bit 1: flow request or end of a TCP flow; other bits 0 |
//! | 7 | 1 | reserved | 0 |
//! | 8 | 4 | flow | request, answer, terminate: the source's own flow number, echoed; between edges: the ingress's flow id |
//! | 12 | 4 | aggregate | the ingress-egress aggregate (0: the router's one) |
//! | 16 | 8 | value | IEEE 754 double: request: the flow's rate (bit/s); answer: the CLE (PCN) or the assigned shaping rate (bit/s, shaping CAC); congestion level: the CLE; sustainable rate: bit/s |
//! | 24 | 2 | port | request, flow end: the data flow's destination port; otherwise 0 |
//! | 26 | 6 | reserved | 0 |
//!
//! A request is sent from the data flow's own socket (so its source
//! address and port are the flow's; for a TCP flow, from a UDP socket
//! bound to the TCP flow's address and port) to the flow's destination
//! address at UDP port `router.edge_port`; the answer and a termination
//! notice come back from that port to the requesting socket. The same
//! messages serve the shaping CAC ([Tarasiuk05], `[cac]` in the router):
//! the answer carries the rate the flow's entry shaper was given, and a
//! flow end (kind 7, from the same socket) tells the CAC the connection
//! departed. [`decode`] accepts
//! exactly 32 bytes with the magic, the version, a known kind, zero
//! reserved bits and a finite value, and refuses anything else; it never
//! panics (a property test below feeds it arbitrary bytes).

/// Bytes of every message.
pub const LEN: usize = 32;
pub const MAGIC: [u8; 4] = *b"QPCN";
pub const VERSION: u8 = 1;

/// What a message is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// Source → ingress: may this flow start?
    FlowRequest = 1,
    /// Ingress → source: the decision (flags bit 0: admitted).
    FlowAnswer = 2,
    /// Ingress → source: the flow was terminated; send nothing more.
    Terminate = 3,
    /// Ingress → egress: a flow asks to join the aggregate.
    AdmissionRequest = 4,
    /// Egress → ingress: the aggregate's CLE (flags bit 0: in answer to `flow`'s request).
    CongestionLevel = 5,
    /// Egress → ingress: the aggregate's sustainable rate (bit/s).
    SustainableRate = 6,
    /// Source → admitting router: the flow ended (the shaping CAC's departure).
    FlowEnd = 7,
}

impl Kind {
    fn of(b: u8) -> Option<Kind> {
        Some(match b {
            1 => Kind::FlowRequest,
            2 => Kind::FlowAnswer,
            3 => Kind::Terminate,
            4 => Kind::AdmissionRequest,
            5 => Kind::CongestionLevel,
            6 => Kind::SustainableRate,
            7 => Kind::FlowEnd,
            _ => return None,
        })
    }
}

/// One message.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Msg {
    pub kind: Kind,
    /// Flags bit 0 (see the table).
    pub flag: bool,
    /// Flags bit 1: a flow request or end about a TCP flow (other kinds: false).
    pub tcp: bool,
    pub flow: u32,
    pub aggregate: u32,
    pub value: f64,
    pub port: u16,
}

impl Msg {
    pub fn new(kind: Kind, flow: u32, value: f64) -> Msg {
        Msg { kind, flag: false, tcp: false, flow, aggregate: 0, value, port: 0 }
    }
}

/// Why bytes are not a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireError {
    Length,
    Magic,
    Version,
    Kind,
    Reserved,
    Value,
}

/// The 32 bytes of `m`.
pub fn encode(m: &Msg) -> [u8; LEN] {
    let mut b = [0u8; LEN];
    b[0..4].copy_from_slice(&MAGIC);
    b[4] = VERSION;
    b[5] = m.kind as u8;
    b[6] = m.flag as u8 | (m.tcp as u8) << 1;
    b[8..12].copy_from_slice(&m.flow.to_be_bytes());
    b[12..16].copy_from_slice(&m.aggregate.to_be_bytes());
    b[16..24].copy_from_slice(&m.value.to_be_bytes());
    b[24..26].copy_from_slice(&m.port.to_be_bytes());
    b
}

/// The message in `b` (a UDP payload), or why it is none.
pub fn decode(b: &[u8]) -> Result<Msg, WireError> {
    if b.len() != LEN {
        return Err(WireError::Length);
    }
    if b[0..4] != MAGIC {
        return Err(WireError::Magic);
    }
    if b[4] != VERSION {
        return Err(WireError::Version);
    }
    let kind = Kind::of(b[5]).ok_or(WireError::Kind)?;
    let tcp = b[6] & 2 != 0;
    if b[6] > 3
        || (tcp && !matches!(kind, Kind::FlowRequest | Kind::FlowEnd))
        || b[7] != 0
        || b[26..32].iter().any(|&x| x != 0)
    {
        return Err(WireError::Reserved);
    }
    let value = f64::from_be_bytes(b[16..24].try_into().expect("8 bytes"));
    if !value.is_finite() {
        return Err(WireError::Value);
    }
    Ok(Msg {
        kind,
        flag: b[6] & 1 == 1,
        tcp,
        flow: u32::from_be_bytes(b[8..12].try_into().expect("4 bytes")),
        aggregate: u32::from_be_bytes(b[12..16].try_into().expect("4 bytes")),
        value,
        port: u16::from_be_bytes(b[24..26].try_into().expect("2 bytes")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips_through_its_32_bytes() {
        for k in 1..=7u8 {
            let m = Msg {
                kind: Kind::of(k).unwrap(),
                flag: k % 2 == 0,
                tcp: k == 1 || k == 7,
                flow: 0xdead_beef,
                aggregate: 7,
                value: 0.125,
                port: 9000,
            };
            let b = encode(&m);
            assert_eq!(&b[0..4], b"QPCN");
            assert_eq!((b[4], b[5]), (1, k));
            assert_eq!(&b[8..12], &[0xde, 0xad, 0xbe, 0xef]);
            assert_eq!(&b[24..26], &9000u16.to_be_bytes());
            assert_eq!(decode(&b), Ok(m));
        }
    }

    #[test]
    fn decode_refuses_wrong_length_magic_version_kind_reserved_and_nan() {
        let good = encode(&Msg::new(Kind::FlowRequest, 1, 64_000.0));
        assert_eq!(decode(&good[..31]), Err(WireError::Length));
        let mut long = good.to_vec();
        long.push(0);
        assert_eq!(decode(&long), Err(WireError::Length));
        let bad = |i: usize, v: u8| {
            let mut b = good;
            b[i] = v;
            decode(&b)
        };
        assert_eq!(bad(0, b'X'), Err(WireError::Magic));
        assert_eq!(bad(4, 2), Err(WireError::Version));
        assert_eq!(bad(5, 0), Err(WireError::Kind));
        assert_eq!(bad(5, 8), Err(WireError::Kind));
        assert_eq!(bad(6, 4), Err(WireError::Reserved));
        assert!(bad(6, 2).is_ok_and(|m| m.tcp), "a TCP flow's request");
        let answer = encode(&Msg::new(Kind::FlowAnswer, 1, 0.0));
        let mut tcp_answer = answer;
        tcp_answer[6] = 2;
        assert_eq!(decode(&tcp_answer), Err(WireError::Reserved), "bit 1 on an answer");
        assert_eq!(bad(7, 1), Err(WireError::Reserved));
        assert_eq!(bad(31, 1), Err(WireError::Reserved));
        let mut nan = good;
        nan[16..24].copy_from_slice(&f64::NAN.to_be_bytes());
        assert_eq!(decode(&nan), Err(WireError::Value));
    }

    #[test]
    fn the_offsets_table_in_docs_testbed_md_is_this_files() {
        let rows = |text: &str, prefix: &str| -> Vec<String> {
            text.lines()
                .filter_map(|l| l.strip_prefix(prefix))
                .filter(|l| {
                    l.starts_with("| ")
                        && (l.contains("| magic |")
                            || l.starts_with("| offset")
                            || l.chars().nth(2).is_some_and(|c| c.is_ascii_digit()))
                })
                .map(str::to_string)
                .collect()
        };
        let here = rows(include_str!("wire.rs"), "//! ");
        let doc = include_str!("../../../../../docs/testbed.md");
        let start = doc.find("### PCN domain messages on the wire").expect("the section");
        let there = rows(&doc[start..], "");
        assert_eq!(here.len(), 11, "{here:?}");
        assert_eq!(here, there[..here.len()]);
    }

    #[test]
    fn decode_never_panics_and_accepts_only_what_encode_writes() {
        // 200,000 byte strings of 0-63 bytes (xorshift), a tenth of them a
        // valid message with one byte changed.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let good = encode(&Msg { flag: true, ..Msg::new(Kind::CongestionLevel, 9, 0.5) });
        let mut accepted = 0;
        for i in 0..200_000u32 {
            let b: Vec<u8> = if i % 10 == 0 {
                let mut b = good.to_vec();
                let at = (next() % LEN as u64) as usize;
                b[at] = next() as u8;
                b
            } else {
                (0..next() % 64).map(|_| next() as u8).collect()
            };
            if let Ok(m) = decode(&b) {
                assert_eq!(encode(&m).as_slice(), b.as_slice());
                accepted += 1;
            }
        }
        assert!(accepted > 1000, "the changed valid messages are partly still valid ({accepted})");
    }
}
