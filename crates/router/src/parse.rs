//! What the router reads of a frame, through `etherparse` (no hand-written
//! header parsing): the flow key (addresses, ports, protocol), DSCP and ECN
//! of IPv4 and IPv6 packets, with or without VLAN tags; and the one write
//! it makes, the ECN field when a mechanism marked the packet.
//!
//! Any byte string is accepted and sorted into one of three kinds; nothing
//! here panics on any input (the `parse` fuzz target and the property test
//! below check it):
//!
//! - [`Frame::Ip`]: an IPv4 or IPv6 packet whose headers parse;
//! - [`Frame::NotIp`]: any other frame (ARP, LLDP, any other EtherType, more
//!   VLAN tags than etherparse reads): queued and paced as best effort,
//!   under the all-zero flow key [`NOT_IP_KEY`];
//! - [`Frame::Malformed`]: shorter than an Ethernet header, or an IP (or
//!   VLAN) header that does not parse (a total length beyond the frame, a
//!   bad version or header length, a truncated TCP/UDP header): dropped.
//!
//! A datagram's first fragment is classified by the ports at the start of
//! its payload (they are there); later fragments and protocols without
//! ports have ports 0.

use etherparse::err::{packet::SliceError, Layer};
use etherparse::{IpEcn, IpPayloadSlice, Ipv6ExtensionSlice, NetSlice, SlicedPacket, TransportSlice};
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
    /// Not IPv4/IPv6: queued as best effort under [`NOT_IP_KEY`].
    NotIp,
    /// Too short for Ethernet, or an IP header that does not parse: dropped.
    Malformed,
}

/// The flow key of every frame that is not IP (all zero: no address, no port,
/// protocol 0), so such frames share one flow and match no port descriptor.
pub const NOT_IP_KEY: FlowKey = FlowKey {
    src: IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED),
    dst: IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED),
    src_port: 0,
    dst_port: 0,
    proto: 0,
};

/// Did slicing fail in a layer that is not IP's? A truncated ARP or MACsec
/// header is a non-IP frame (queued as such); everything else is malformed.
fn not_ip_error(e: &SliceError) -> bool {
    match e {
        SliceError::Len(l) => matches!(l.layer, Layer::Arp | Layer::MacsecHeader | Layer::MacsecPacket),
        SliceError::Macsec(_) => true,
        _ => false,
    }
}

/// The ports at the start of a transport payload: the first fragment of a
/// TCP or UDP datagram carries them (RFC 791: offset 0 holds the header's start).
fn first_fragment_ports(p: &IpPayloadSlice<'_>) -> (u16, u16) {
    let b = p.payload;
    if matches!(p.ip_number.0, 6 | 17) && b.len() >= 4 {
        (u16::from_be_bytes([b[0], b[1]]), u16::from_be_bytes([b[2], b[3]]))
    } else {
        (0, 0)
    }
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
    let p = match SlicedPacket::from_ethernet(frame) {
        Ok(p) => p,
        Err(e) if not_ip_error(&e) => return Frame::NotIp,
        Err(_) => return Frame::Malformed,
    };
    // The ports of a first fragment, which etherparse leaves unsliced.
    let mut first_fragment = (0, 0);
    let (src, dst, proto, dscp, ecn, ip_start, v6) = match &p.net {
        Some(NetSlice::Ipv4(v4)) => {
            let h = v4.header();
            if v4.is_payload_fragmented() && h.fragments_offset().value() == 0 {
                first_fragment = first_fragment_ports(v4.payload());
            }
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
            let first = v6
                .extensions()
                .clone()
                .into_iter()
                .any(|x| matches!(x, Ipv6ExtensionSlice::Fragment(f) if f.fragment_offset().value() == 0));
            if v6.is_payload_fragmented() && first {
                first_fragment = first_fragment_ports(v6.payload());
            }
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
        _ => first_fragment,
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
    fn parse_arp_and_other_ethertypes_are_not_ip() {
        let mut arp = vec![0xff; 12];
        arp.extend_from_slice(&[0x08, 0x06]);
        arp.extend_from_slice(&[0; 28]);
        assert_eq!(parse(&arp), Frame::NotIp);
        assert_eq!(parse(&arp[..20]), Frame::NotIp, "a truncated ARP is still not IP");
        let mut local = vec![0xff; 12];
        local.extend_from_slice(&[0x88, 0xb5]); // local experimental EtherType
        local.extend_from_slice(&[0; 46]);
        assert_eq!(parse(&local), Frame::NotIp);
        // Four VLAN tags: etherparse reads three; the frame is queued as not IP.
        let ip = udp4(1, 2, 10);
        let mut tagged = ip[..12].to_vec();
        for _ in 0..4 {
            tagged.extend_from_slice(&[0x81, 0x00, 0x00, 0x2a]);
        }
        tagged.extend_from_slice(&ip[12..]);
        assert_eq!(parse(&tagged), Frame::NotIp);
    }

    #[test]
    fn parse_runts_and_bad_ip_headers_are_malformed() {
        assert_eq!(parse(&[]), Frame::Malformed);
        assert_eq!(parse(&[0xff; 13]), Frame::Malformed);
        let mut long = udp4(1, 2, 100);
        long[16..18].copy_from_slice(&2000u16.to_be_bytes()); // IPv4 total length beyond the frame
        assert_eq!(parse(&long), Frame::Malformed);
        let mut ihl = udp4(1, 2, 100);
        ihl[14] = 0x43; // header length 12 bytes < 20
        assert_eq!(parse(&ihl), Frame::Malformed);
        let cut = udp4(1, 2, 0);
        let mut short = cut[..cut.len() - 4].to_vec(); // UDP header cut (total length fixed to match)
        let total = (short.len() - 14) as u16;
        short[16..18].copy_from_slice(&total.to_be_bytes());
        assert_eq!(parse(&short), Frame::Malformed);
        // Ethernet padding after a short packet is fine.
        let mut padded = udp4(1, 2, 2);
        padded.resize(60, 0);
        assert!(matches!(parse(&padded), Frame::Ip(_)));
    }

    #[test]
    fn parse_first_fragment_has_its_ports_and_later_ones_none() {
        let mut first = udp4(1234, 5004, 100);
        first[20] = 0x20; // more fragments, offset 0
        let Frame::Ip(i) = parse(&first) else { panic!("not ip") };
        assert_eq!((i.key.src_port, i.key.dst_port, i.key.proto), (1234, 5004, proto::UDP));
        let mut later = udp4(1234, 5004, 100);
        later[20..22].copy_from_slice(&[0x00, 0x10]); // offset 16 x 8 bytes, last fragment
        let Frame::Ip(i) = parse(&later) else { panic!("not ip") };
        assert_eq!((i.key.src_port, i.key.dst_port), (0, 0));
        // IPv6: a fragment header at offset 0 with more fragments, then the UDP header's start.
        let b = PacketBuilder::ethernet2([2; 6], [3; 6]).ipv6([1; 16], [2; 16], 64).udp(7, 5004);
        let mut v6 = Vec::new();
        b.write(&mut v6, &[0; 40]).unwrap();
        let mut frag = v6[..54].to_vec();
        frag[20] = 44; // next header: fragment
        frag.extend_from_slice(&[17, 0, 0x00, 0x01, 0, 0, 0, 9]); // UDP, offset 0, more fragments, id 9
        frag.extend_from_slice(&v6[54..]);
        let plen = (frag.len() - 54) as u16;
        frag[18..20].copy_from_slice(&plen.to_be_bytes());
        let Frame::Ip(i) = parse(&frag) else { panic!("not ip: {:?}", parse(&frag)) };
        assert_eq!((i.key.src_port, i.key.dst_port, i.key.proto), (7, 5004, proto::UDP));
        frag[56..58].copy_from_slice(&[0x00, 0x08]); // offset 1 x 8 bytes: a later fragment
        let Frame::Ip(i) = parse(&frag) else { panic!("not ip") };
        assert_eq!((i.key.src_port, i.key.dst_port), (0, 0));
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
