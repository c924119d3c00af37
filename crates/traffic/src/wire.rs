//! The payload header and the sink's record.
//!
//! ```text
//! payload: magic "QLT1" (4 B) | flow id u32 | sequence u64 | send time u64 (ns, CLOCK_MONOTONIC) | zeros
//! record:  flow id u32 | wire size u32 | sequence u64 | send ns u64 | receive ns u64     (32 B, little-endian)
//! MM_APP feedback (sink to source): magic "QLF1" (4 B) | flow id u32 | scale index u32 | zeros
//! ```
//!
//! Wire size is the Ethernet frame without its FCS: UDP payload + 8 + 20
//! (IPv4) + 14, what the router's pacer counts and what a scenario's
//! `size + header` means.

/// Bytes of the payload header.
pub const HEADER: usize = 24;
/// UDP + IPv4 + Ethernet header bytes around a payload.
pub const OVERHEAD: u32 = 42;
pub const MAGIC: [u8; 4] = *b"QLT1";
/// Bytes of one sink record.
pub const RECORD: usize = 32;

/// Bytes of an MM_APP feedback datagram's header.
pub const FEEDBACK_HEADER: usize = 12;
pub const FEEDBACK_MAGIC: [u8; 4] = *b"QLF1";

/// The UDP payload of a feedback packet of `wire` bytes on the wire: `wire - 42`, at least its
/// header (a scenario's default 40 B is 54 B on the testbed).
pub fn feedback_payload(wire: u32) -> usize {
    (wire.saturating_sub(OVERHEAD) as usize).clamp(FEEDBACK_HEADER, crate::spec::MAX_PAYLOAD as usize)
}

/// Writes a feedback header into the first [`FEEDBACK_HEADER`] bytes of `buf`.
pub fn stamp_feedback(buf: &mut [u8], flow: u32, scale: u32) {
    buf[0..4].copy_from_slice(&FEEDBACK_MAGIC);
    buf[4..8].copy_from_slice(&flow.to_le_bytes());
    buf[8..12].copy_from_slice(&scale.to_le_bytes());
}

/// Reads a feedback header: `(flow, scale)`, or `None` for a datagram that is not one.
pub fn read_feedback(buf: &[u8]) -> Option<(u32, u32)> {
    if buf.len() < FEEDBACK_HEADER || buf[0..4] != FEEDBACK_MAGIC {
        return None;
    }
    let u32_at = |i: usize| u32::from_le_bytes(buf[i..i + 4].try_into().expect("4 bytes"));
    Some((u32_at(4), u32_at(8)))
}

/// Writes the header into the first [`HEADER`] bytes of `buf`.
pub fn stamp(buf: &mut [u8], flow: u32, seq: u64, send_ns: u64) {
    buf[0..4].copy_from_slice(&MAGIC);
    buf[4..8].copy_from_slice(&flow.to_le_bytes());
    buf[8..16].copy_from_slice(&seq.to_le_bytes());
    buf[16..24].copy_from_slice(&send_ns.to_le_bytes());
}

/// Reads a header: `(flow, seq, send_ns)`, or `None` for a datagram that is not ours.
pub fn read(buf: &[u8]) -> Option<(u32, u64, u64)> {
    if buf.len() < HEADER || buf[0..4] != MAGIC {
        return None;
    }
    let u32_at = |i: usize| u32::from_le_bytes(buf[i..i + 4].try_into().expect("4 bytes"));
    let u64_at = |i: usize| u64::from_le_bytes(buf[i..i + 8].try_into().expect("8 bytes"));
    Some((u32_at(4), u64_at(8), u64_at(16)))
}

/// One received packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    pub flow: u32,
    pub wire: u32,
    pub seq: u64,
    pub send_ns: u64,
    pub recv_ns: u64,
}

impl Record {
    pub fn to_bytes(&self) -> [u8; RECORD] {
        let mut b = [0u8; RECORD];
        b[0..4].copy_from_slice(&self.flow.to_le_bytes());
        b[4..8].copy_from_slice(&self.wire.to_le_bytes());
        b[8..16].copy_from_slice(&self.seq.to_le_bytes());
        b[16..24].copy_from_slice(&self.send_ns.to_le_bytes());
        b[24..32].copy_from_slice(&self.recv_ns.to_le_bytes());
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips_and_foreign_datagrams_are_refused() {
        let mut b = [0u8; 64];
        stamp(&mut b, 7, 123_456_789_012, 987_654_321);
        assert_eq!(read(&b), Some((7, 123_456_789_012, 987_654_321)));
        assert_eq!(read(&b[..23]), None);
        b[0] = b'X';
        assert_eq!(read(&b), None);
    }

    #[test]
    fn feedback_round_trips_and_is_at_least_its_header() {
        let mut b = [0u8; 20];
        stamp_feedback(&mut b, 9, 3);
        assert_eq!(read_feedback(&b), Some((9, 3)));
        assert_eq!(read_feedback(&b[..11]), None);
        assert_eq!(read(&b), None, "not a data packet");
        assert_eq!((feedback_payload(40), feedback_payload(100), feedback_payload(5000)), (12, 58, 1472));
    }

    #[test]
    fn record_is_32_little_endian_bytes() {
        let r = Record { flow: 1, wire: 1000, seq: 2, send_ns: 3, recv_ns: 4 };
        let b = r.to_bytes();
        assert_eq!(&b[0..4], &[1, 0, 0, 0]);
        assert_eq!(&b[4..8], &1000u32.to_le_bytes());
        assert_eq!(&b[24..32], &4u64.to_le_bytes());
    }
}
