//! Packet traces of link directions as pcapng files that tcpdump, tshark
//! and Wireshark read (scenario `[trace] pcap = ["r0->r1", ...]`).
//!
//! **What is recorded.** Every packet a traced direction puts on the wire,
//! at the start of its transmission (as a capture on the sending interface
//! sees it), and every packet the direction's port drops (its stages, its
//! queue discipline, push-outs), at the drop, with a pcapng comment
//! `drop: <reason>` (`drop: early_random`, ...). Packets lost on the wire
//! (link `loss`) are not in the trace: they were put on the wire.
//!
//! **The packets.** The simulator carries metadata, not bytes, so each
//! record is synthesized when the result is built, with etherparse:
//!
//! | layer | fields |
//! |---|---|
//! | Ethernet II | source MAC `02:00:` + the sending node's index (4 bytes), destination likewise; EtherType IPv4/IPv6 |
//! | IPv4 (IPv6 for IPv6 flows) | the flow's addresses, DSCP and ECN bits of the packet, TTL 64, total length = the packet's wire size, identification = low 16 bits of the packet id, DF set, header checksum |
//! | UDP | the flow's ports, length = wire size − IP header, checksum 0 (none, allowed for UDP over IPv4) |
//! | TCP data | the flow's ports, sequence number 1 + segment × S, ACK flag off, window 65535 |
//! | TCP ACK (receiver → source) | ports swapped, addresses swapped, acknowledgement 1 + ack × S, ACK flag |
//!
//! S is the payload a full segment shows in the trace: its wire size (MSS +
//! the group's `header`) less the 40 bytes of synthesized IPv4 and TCP
//! headers, so that each segment's sequence number follows the previous
//! one's plus its length, as a reader expects.
//!
//! The capture holds the headers only (`snaplen` = the headers' length),
//! with the packet's full length as its original length: readers show
//! "[Packet size limited during capture]", not a malformed packet. The
//! simulator's wire size counts the IP packet (headers included); the trace
//! adds the 14-byte Ethernet header to it. Timestamps are the simulation
//! clock in nanoseconds (`if_tsresol` = 9).
//!
//! **Cost.** Records are kept in memory during the run (32 bytes each) and
//! turned into pcapng bytes when the result is built (about 100 bytes per
//! packet), which `qoslab run` / `Result.save` writes next to the tables.

use crate::engine::DirId;
use crate::error::SimError;
use crate::net::Network;
use etherparse::{EtherType, Ethernet2Header, IpDscp, IpEcn, IpNumber, Ipv4Header, Ipv6Header, TcpHeader, UdpHeader};
use pcap_file::pcapng::blocks::enhanced_packet::{EnhancedPacketBlock, EnhancedPacketOption};
use pcap_file::pcapng::blocks::interface_description::{InterfaceDescriptionBlock, InterfaceDescriptionOption};
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::DataLink;
use qoslab_core::packet::{proto, FlowId, FlowKey};
use qoslab_core::qdisc::DropReason;
use qoslab_core::units::Time;
use qoslab_core::Ecn;
use qoslab_core::Packet;
use std::borrow::Cow;
use std::net::IpAddr;
use std::time::Duration;

const NONE: u32 = u32::MAX;

/// One traced event: a packet put on the wire, or dropped.
#[derive(Clone, Copy, Debug)]
pub struct Record {
    pub t: Time,
    /// The packet's `handle` (the simulator's sequence number and direction bit).
    pub handle: u64,
    pub flow: FlowId,
    /// Wire size (bytes).
    pub size: u32,
    /// Low 16 bits of the packet id (the IPv4 identification).
    pub id: u16,
    pub dscp: u8,
    pub ecn: Ecn,
    pub drop: Option<DropReason>,
}

impl Record {
    pub fn of(t: Time, p: &Packet, drop: Option<DropReason>) -> Record {
        Record { t, handle: p.handle, flow: p.flow, size: p.size, id: p.id as u16, dscp: p.dscp, ecn: p.ecn, drop }
    }
}

/// The records of one traced direction.
#[derive(Clone, Debug)]
pub struct DirTrace {
    pub dir: DirId,
    /// `from->to`.
    pub name: String,
    pub records: Vec<Record>,
}

/// The traces of a run.
#[derive(Clone, Debug, Default)]
pub struct Tracer {
    /// Per direction: its index in `traces`, or `NONE`.
    slot: Vec<u32>,
    pub traces: Vec<DirTrace>,
}

impl Tracer {
    /// Traces the directions named in `names` (validation checked that each
    /// names a direction, once: one that does not is a bug, a runtime error).
    pub fn new(names: &[String], net: &Network) -> Result<Tracer, SimError> {
        let mut t = Tracer::default();
        if names.is_empty() {
            return Ok(t);
        }
        t.slot = vec![NONE; net.dirs.len()];
        for name in names {
            match net.dirs.iter().position(|d| &d.name == name) {
                Some(d) if t.slot[d] == NONE => {
                    t.slot[d] = t.traces.len() as u32;
                    t.traces.push(DirTrace { dir: DirId(d as u32), name: name.clone(), records: Vec::new() });
                }
                _ => {
                    return Err(SimError::Runtime(format!(
                        "trace.pcap: {name:?} is no direction or listed twice, which validation refuses (a bug)"
                    )))
                }
            }
        }
        Ok(t)
    }

    /// Is anything traced at all?
    #[inline]
    pub fn any(&self) -> bool {
        !self.traces.is_empty()
    }

    #[inline]
    pub fn record(&mut self, d: DirId, t: Time, pkt: &Packet, drop: Option<DropReason>) {
        if let Some(&s) = self.slot.get(d.index()) {
            if s != NONE {
                self.traces[s as usize].records.push(Record::of(t, pkt, drop));
            }
        }
    }
}

/// What the trace needs to know of a flow to synthesize its headers.
#[derive(Clone, Copy, Debug)]
pub struct FlowWire {
    pub key: FlowKey,
    /// TCP flows: the MSS (payload bytes of a full segment).
    pub tcp_mss: Option<u32>,
}

fn mac(node: u32) -> [u8; 6] {
    let n = node.to_be_bytes();
    [0x02, 0x00, n[0], n[1], n[2], n[3]]
}

fn v6(a: IpAddr) -> [u8; 16] {
    match a {
        IpAddr::V6(x) => x.octets(),
        IpAddr::V4(x) => x.to_ipv6_mapped().octets(),
    }
}

/// The synthesized headers of one record (Ethernet, IP, UDP or TCP),
/// written with etherparse. `from`/`to`: the direction's node indices;
/// `reverse`: a packet from the flow's receiver back to its source; `seq`:
/// the segment (or ACK) number the simulator carries.
pub fn headers(b: &mut Vec<u8>, rec: &Record, from: u32, to: u32, flow: &FlowWire, reverse: bool, seq: u64) {
    let key = &flow.key;
    let (src, dst, sport, dport) = if reverse {
        (key.dst, key.src, key.dst_port, key.src_port)
    } else {
        (key.src, key.dst, key.src_port, key.dst_port)
    };
    let is_tcp = key.proto == proto::TCP;
    let protocol = IpNumber(key.proto);
    let size = rec.size;
    b.clear();
    let (ether_type, ip_len) = match (src, dst) {
        (IpAddr::V4(_), IpAddr::V4(_)) => (EtherType::IPV4, 20),
        _ => (EtherType::IPV6, 40),
    };
    let eth = Ethernet2Header { source: mac(from), destination: mac(to), ether_type };
    let _ = eth.write(b);
    let payload = size.saturating_sub(ip_len).min(u16::MAX as u32 - 20) as u16;
    match (src, dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            if let Ok(mut ip) = Ipv4Header::new(payload, 64, protocol, s.octets(), d.octets()) {
                ip.dscp = IpDscp::try_new(rec.dscp & 0x3f).unwrap_or(IpDscp::ZERO);
                ip.ecn = IpEcn::try_new(rec.ecn as u8 & 0b11).unwrap_or(IpEcn::ZERO);
                ip.identification = rec.id;
                ip.dont_fragment = true;
                ip.header_checksum = ip.calc_header_checksum();
                let _ = ip.write(b);
            }
        }
        (s, d) => {
            let ip = Ipv6Header {
                traffic_class: (rec.dscp << 2) | (rec.ecn as u8 & 0b11),
                flow_label: Default::default(),
                payload_length: payload,
                next_header: protocol,
                hop_limit: 64,
                source: v6(s),
                destination: v6(d),
            };
            let _ = ip.write(b);
        }
    }
    if is_tcp {
        let mss = flow.tcp_mss.unwrap_or(1) as u64;
        let number = 1u64.wrapping_add(seq.wrapping_mul(mss)) as u32;
        let mut tcp = TcpHeader::new(sport, dport, if reverse { 1 } else { number }, 65535);
        if reverse {
            tcp.ack = true;
            tcp.acknowledgment_number = number;
        }
        let _ = tcp.write(b);
    } else {
        let udp = UdpHeader { source_port: sport, destination_port: dport, length: payload, checksum: 0 };
        let _ = udp.write(b);
    }
}

/// One trace as pcapng bytes; `ends(d)` gives a direction's (from, to)
/// node indices, `flow(f)` a flow's wire identity, `is_reverse(pkt)` and
/// `seq(pkt)` read the simulator's packet handle.
pub fn pcapng(
    trace: &DirTrace,
    ends: (u32, u32),
    flow: &dyn Fn(FlowId) -> FlowWire,
    is_reverse: &dyn Fn(u64) -> bool,
    seq: &dyn Fn(u64) -> u64,
) -> Result<Vec<u8>, String> {
    let err = |e: pcap_file::PcapError| format!("pcapng of {}: {e}", trace.name);
    let mut w = PcapNgWriter::new(Vec::with_capacity(trace.records.len() * 100)).map_err(err)?;
    let idb = InterfaceDescriptionBlock {
        linktype: DataLink::ETHERNET,
        snaplen: 0,
        options: vec![
            InterfaceDescriptionOption::IfName(Cow::Owned(trace.name.clone())),
            InterfaceDescriptionOption::IfTsResol(9),
        ],
    };
    w.write_pcapng_block(idb).map_err(err)?;
    let mut data = Vec::with_capacity(14 + 40 + 20);
    let mut wire: Option<(FlowId, FlowWire)> = None;
    for rec in &trace.records {
        // Consecutive records of one flow (the common case) look it up once.
        let fw = match wire {
            Some((f, w)) if f == rec.flow => w,
            _ => {
                let w = flow(rec.flow);
                wire = Some((rec.flow, w));
                w
            }
        };
        headers(&mut data, rec, ends.0, ends.1, &fw, is_reverse(rec.handle), seq(rec.handle));
        let options = match rec.drop {
            Some(r) => vec![EnhancedPacketOption::Comment(Cow::Owned(format!("drop: {}", r.as_str())))],
            None => vec![],
        };
        let block = EnhancedPacketBlock {
            interface_id: 0,
            timestamp: Duration::from_nanos(rec.t.0),
            original_len: rec.size.saturating_add(14).max(data.len() as u32),
            data: Cow::Borrowed(&data),
            options,
        };
        w.write_pcapng_block(block).map_err(err)?;
    }
    Ok(w.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use qoslab_core::packet::FlowId;
    use std::net::Ipv4Addr;

    fn udp() -> FlowWire {
        FlowWire {
            key: FlowKey {
                src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
                dst: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
                src_port: 1000,
                dst_port: 5004,
                proto: proto::UDP,
            },
            tcp_mss: None,
        }
    }

    #[test]
    fn ipv4_udp_headers_carry_the_packets_fields_and_a_valid_checksum() {
        let mut pkt = Packet::new(7, FlowId(0), 200, Time(5));
        pkt.dscp = 46;
        pkt.ecn = qoslab_core::Ecn::Ce;
        let mut h = Vec::new();
        headers(&mut h, &Record::of(Time(5), &pkt, None), 1, 2, &udp(), false, 0);
        assert_eq!(h.len(), 14 + 20 + 8);
        assert_eq!(&h[12..14], &[0x08, 0x00]);
        let ip = &h[14..34];
        assert_eq!(ip[1], (46 << 2) | 0b11, "DSCP EF and CE");
        assert_eq!(u16::from_be_bytes([ip[2], ip[3]]), 200);
        let parsed = etherparse::Ipv4HeaderSlice::from_slice(ip).unwrap().to_header();
        assert_eq!(parsed.header_checksum, parsed.calc_header_checksum());
        assert_eq!(&h[34..36], &1000u16.to_be_bytes());
        assert_eq!(u16::from_be_bytes([h[38], h[39]]), 180, "UDP length = wire size - IP header");
    }

    #[test]
    fn tcp_sequence_numbers_count_bytes_of_mss_segments_and_acks_swap_ends() {
        let mut f = udp();
        f.key.proto = proto::TCP;
        f.tcp_mss = Some(960);
        let pkt = Packet::new(1, FlowId(0), 1000, Time(0));
        let mut h = Vec::new();
        headers(&mut h, &Record::of(Time(0), &pkt, None), 1, 2, &f, false, 3);
        assert_eq!(u32::from_be_bytes([h[38], h[39], h[40], h[41]]), 1 + 3 * 960);
        let mut a = Vec::new();
        headers(&mut a, &Record::of(Time(0), &pkt, None), 2, 1, &f, true, 4);
        assert_eq!(&a[26..30], &[10, 0, 0, 2], "the ACK comes from the destination");
        assert_eq!(u32::from_be_bytes([a[42], a[43], a[44], a[45]]), 1 + 4 * 960);
        assert_eq!(a[47], 0x10, "ACK flag");
    }
}
