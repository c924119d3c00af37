//! What the router reads of a frame, through `etherparse` (no hand-written
//! header parsing): the flow key (addresses, ports, protocol), DSCP and ECN
//! of IPv4 and IPv6 packets, with or without VLAN tags; and the one write
//! it makes, the ECN field when a mechanism marked the packet.
//!
//! Any byte string is accepted: what is not an IP packet (ARP, LLDP, a
//! truncated header) is [`Frame::NotIp`] and forwarded untouched; nothing
//! here panics on any input (the `parse` fuzz target and the property test
//! below check it). Fragments after the first and protocols without ports
//! have ports 0.

use etherparse::{IpEcn, NetSlice, SlicedPacket, TransportSlice};
use qoslab_core::packet::{Ecn, FlowKey, PcnMark};
use std::net::IpAddr;

/// What the datapath needs of one IP packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpInfo {
    pub key: FlowKey,
    pub dscp: u8,
    pub ecn: Ecn,
    /// Offset of the IP header in the frame (after Ethernet and VLAN tags).
    pub ip_offset: usize,
    pub v6: bool,
}

/// A parsed frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame {
    Ip(IpInfo),
    /// Not IPv4/IPv6, or a header that does not parse: forwarded as it is.
    NotIp,
}

fn ecn_of(e: IpEcn) -> Ecn {
    match e {
        IpEcn::NotEct => Ecn::NotEct,
        IpEcn::Ect1 => Ecn::Ect1,
        IpEcn::Ect0 => Ecn::Ect0,
        IpEcn::CongestionExperienced => Ecn::Ce,
    }
}

/// Parses an Ethernet frame.
pub fn parse(frame: &[u8]) -> Frame {
    let Ok(p) = SlicedPacket::from_ethernet(frame) else {
        return Frame::NotIp;
    };
    let (src, dst, proto, dscp, ecn, ip_start, v6) = match &p.net {
        Some(NetSlice::Ipv4(v4)) => {
            let h = v4.header();
            (
                IpAddr::V4(h.source_addr()),
                IpAddr::V4(h.destination_addr()),
                h.protocol().0,
                h.dcp().value(),
                ecn_of(h.ecn()),
                h.slice().as_ptr() as usize,
                false,
            )
        }
        Some(NetSlice::Ipv6(v6)) => {
            let h = v6.header();
            (
                IpAddr::V6(h.source_addr()),
                IpAddr::V6(h.destination_addr()),
                v6.payload().ip_number.0,
                h.dscp().value(),
                ecn_of(h.ecn()),
                h.slice().as_ptr() as usize,
                true,
            )
        }
        _ => return Frame::NotIp,
    };
    let (src_port, dst_port) = match &p.transport {
        Some(TransportSlice::Tcp(t)) => (t.source_port(), t.destination_port()),
        Some(TransportSlice::Udp(u)) => (u.source_port(), u.destination_port()),
        _ => (0, 0),
    };
    // etherparse's header slice borrows from `frame`: its start is the offset.
    let ip_offset = ip_start - frame.as_ptr() as usize;
    Frame::Ip(IpInfo { key: FlowKey { src, dst, src_port, dst_port, proto }, dscp, ecn, ip_offset, v6 })
}

/// The PCN mark of a packet of PCN traffic from its ECN bits (RFC 6660's
/// 3-in-1 encoding): 00 not PCN, 10 (ECT(0)) not-marked, 01 (ECT(1))
/// threshold-marked, 11 (CE) excess-traffic-marked.
pub fn pcn_of(ecn: Ecn) -> PcnMark {
    match ecn {
        Ecn::NotEct => PcnMark::NotPcn,
        Ecn::Ect0 => PcnMark::NotMarked,
        Ecn::Ect1 => PcnMark::ThresholdMarked,
        Ecn::Ce => PcnMark::ExcessMarked,
    }
}

/// The ECN bits a packet leaves with: for PCN traffic its PCN mark in
/// RFC 6660's encoding (the inverse of [`pcn_of`]); otherwise its ECN
/// field, CE if a queue marked it (RFC 3168).
pub fn wire_ecn(ecn: Ecn, pcn: PcnMark) -> Ecn {
    match pcn {
        PcnMark::NotPcn => ecn,
        PcnMark::NotMarked => Ecn::Ect0,
        PcnMark::ThresholdMarked => Ecn::Ect1,
        PcnMark::ExcessMarked => Ecn::Ce,
    }
}

/// Writes `ecn` into the IP header at `info.ip_offset` of `frame`, fixing
/// the IPv4 header checksum (RFC 1624 incremental update through a
/// re-parse and re-write of the header by etherparse). Returns `false`
/// (and leaves the frame unchanged) if the header does not parse.
pub fn set_ecn(frame: &mut [u8], info: &IpInfo, ecn: Ecn) -> bool {
    let Some(ip) = frame.get_mut(info.ip_offset..) else { return false };
    if info.v6 {
        let Ok((mut h, _)) = etherparse::Ipv6Header::from_slice(ip) else { return false };
        h.traffic_class = (h.traffic_class & !0b11) | ecn as u8;
        let mut out = Vec::with_capacity(40);
        if h.write(&mut out).is_err() {
            return false;
        }
        ip[..40].copy_from_slice(&out);
        true
    } else {
        let Ok((mut h, _)) = etherparse::Ipv4Header::from_slice(ip) else { return false };
        let Ok(e) = IpEcn::try_new(ecn as u8) else { return false };
        h.ecn = e;
        h.header_checksum = h.calc_header_checksum();
        let bytes = h.to_bytes();
        let n = bytes.len();
        if ip.len() < n {
            return false;
        }
        ip[..n].copy_from_slice(&bytes);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use etherparse::PacketBuilder;
    use qoslab_core::packet::proto;

    pub(crate) fn udp4(src_port: u16, dst_port: u16, payload: usize) -> Vec<u8> {
        let b = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
            .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
            .udp(src_port, dst_port);
        let mut out = Vec::new();
        b.write(&mut out, &vec![0u8; payload]).unwrap();
        out
    }

    #[test]
    fn parse_ipv4_udp_gives_the_five_tuple() {
        let f = udp4(1234, 5004, 100);
        let Frame::Ip(i) = parse(&f) else { panic!("not ip") };
        assert_eq!((i.key.src_port, i.key.dst_port, i.key.proto), (1234, 5004, proto::UDP));
        assert_eq!(i.ip_offset, 14);
        assert_eq!(i.ecn, Ecn::NotEct);
    }

    #[test]
    fn parse_ipv6_tcp_gives_the_five_tuple() {
        let b = PacketBuilder::ethernet2([2; 6], [3; 6]).ipv6([1; 16], [2; 16], 64).tcp(80, 4000, 1, 1000);
        let mut f = Vec::new();
        b.write(&mut f, &[1, 2, 3]).unwrap();
        let Frame::Ip(i) = parse(&f) else { panic!("not ip") };
        assert_eq!((i.key.src_port, i.key.dst_port, i.key.proto, i.v6), (80, 4000, proto::TCP, true));
    }

    #[test]
    fn parse_garbage_and_arp_are_not_ip() {
        assert_eq!(parse(&[]), Frame::NotIp);
        assert_eq!(parse(&[0xff; 13]), Frame::NotIp);
        let mut arp = vec![0xff; 12];
        arp.extend_from_slice(&[0x08, 0x06]);
        arp.extend_from_slice(&[0; 28]);
        assert_eq!(parse(&arp), Frame::NotIp);
    }

    #[test]
    fn set_ecn_marks_ce_and_keeps_the_ipv4_checksum_valid() {
        let mut f = udp4(1, 2, 10);
        f[15] |= 0b10; // ECT(0); the checksum is now stale, set_ecn rewrites it
        let Frame::Ip(i) = parse(&f) else { panic!() };
        assert!(set_ecn(&mut f, &i, Ecn::Ce));
        let (h, _) = etherparse::Ipv4Header::from_slice(&f[14..]).unwrap();
        assert_eq!(h.ecn, IpEcn::CongestionExperienced);
        assert_eq!(h.header_checksum, h.calc_header_checksum());
    }

    #[test]
    fn pcn_marks_round_trip_through_the_ecn_bits() {
        for e in [Ecn::Ect0, Ecn::Ect1, Ecn::Ce] {
            assert_eq!(wire_ecn(Ecn::NotEct, pcn_of(e)), e);
        }
        assert_eq!(pcn_of(Ecn::NotEct), PcnMark::NotPcn);
        assert_eq!(wire_ecn(Ecn::Ce, PcnMark::NotPcn), Ecn::Ce, "RED's CE mark on non-PCN traffic");
    }

    #[test]
    fn parse_never_panics_on_truncations_and_bit_flips() {
        let base = udp4(7, 8, 40);
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        for n in 0..base.len() {
            let _ = parse(&base[..n]);
        }
        for _ in 0..20_000 {
            let mut f = base.clone();
            for _ in 0..4 {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                let i = (rng as usize) % f.len();
                f[i] ^= (rng >> 32) as u8;
            }
            let len = (rng >> 40) as usize % (f.len() + 1);
            if let Frame::Ip(i) = parse(&f[..len]) {
                let mut g = f[..len].to_vec();
                let _ = set_ecn(&mut g, &i, Ecn::Ce);
            }
        }
    }
}
