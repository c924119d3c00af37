//! The PCN domain's messages as frames: the format itself (the 32-byte
//! UDP payload, its field table and [`decode`]) is the core's
//! ([`qoslab_core::edge::pcn::wire`], re-exported here), shared with the
//! traffic generator; this module adds what only the router does with it:
//! reading a request's Ethernet/IPv4/UDP ends ([`udp4`]) and building the
//! answer and notice frames back to the requesting socket ([`frame`]).

pub use qoslab_core::edge::pcn::wire::*;
use std::net::Ipv4Addr;

/// Where a reply goes: the request's Ethernet, IPv4 and UDP ends, swapped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reply {
    pub eth_src: [u8; 6],
    pub eth_dst: [u8; 6],
    pub ip_src: Ipv4Addr,
    pub ip_dst: Ipv4Addr,
    pub src_port: u16,
    pub dst_port: u16,
}

impl Reply {
    /// The reply ends of a request frame that came from `eth_src`/`ip_src`/`src_port`
    /// to `eth_dst`/`ip_dst`/`dst_port`.
    pub fn to_request(req: &Reply) -> Reply {
        Reply {
            eth_src: req.eth_dst,
            eth_dst: req.eth_src,
            ip_src: req.ip_dst,
            ip_dst: req.ip_src,
            src_port: req.dst_port,
            dst_port: req.src_port,
        }
    }
}

/// An Ethernet/IPv4/UDP frame carrying `m` between `r`'s ends (TTL 64, checksums set).
pub fn frame(r: &Reply, m: &Msg) -> Vec<u8> {
    let b = etherparse::PacketBuilder::ethernet2(r.eth_src, r.eth_dst)
        .ipv4(r.ip_src.octets(), r.ip_dst.octets(), 64)
        .udp(r.src_port, r.dst_port);
    let payload = encode(m);
    let mut out = Vec::with_capacity(b.size(LEN));
    b.write(&mut out, &payload).expect("writing to a Vec cannot fail");
    out
}

/// The request ends and UDP payload of an Ethernet/IPv4/UDP frame, if it is one.
pub fn udp4(frame: &[u8]) -> Option<(Reply, &[u8])> {
    let p = etherparse::SlicedPacket::from_ethernet(frame).ok()?;
    let eth = match p.link? {
        etherparse::LinkSlice::Ethernet2(e) => e,
        _ => return None,
    };
    let (ip_src, ip_dst) = match &p.net {
        Some(etherparse::NetSlice::Ipv4(v4)) => (v4.header().source_addr(), v4.header().destination_addr()),
        _ => return None,
    };
    let udp = match p.transport? {
        etherparse::TransportSlice::Udp(u) => u,
        _ => return None,
    };
    let r = Reply {
        eth_src: eth.source(),
        eth_dst: eth.destination(),
        ip_src,
        ip_dst,
        src_port: udp.source_port(),
        dst_port: udp.destination_port(),
    };
    Some((r, udp.payload()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_frame_goes_back_to_the_requesting_socket() {
        let req = Reply {
            eth_src: [2, 0, 0, 0, 0, 1],
            eth_dst: [2, 0, 0, 0, 0, 2],
            ip_src: Ipv4Addr::new(10, 77, 0, 1),
            ip_dst: Ipv4Addr::new(10, 77, 0, 2),
            src_port: 20_001,
            dst_port: 7400,
        };
        let m = Msg { flag: true, ..Msg::new(Kind::FlowAnswer, 3, 0.25) };
        let f = frame(&Reply::to_request(&req), &m);
        let (ends, payload) = udp4(&f).expect("a UDP/IPv4 frame");
        assert_eq!(ends, Reply::to_request(&req));
        assert_eq!(decode(payload), Ok(m));
        assert_eq!(f.len(), 14 + 20 + 8 + LEN);
    }
}
