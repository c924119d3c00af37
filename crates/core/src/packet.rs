//! Packet metadata: what a mechanism sees of a packet.
//!
//! Mechanisms never touch payload bytes. The driver (simulator or router)
//! keeps the bytes, if any, and finds them again through [`Packet::handle`]:
//! the router stores a buffer-pool slot there; the simulator stores
//! transport state (for example a TCP sequence number).
//!
//! Flows are interned: a [`FlowTable`] maps each 5-tuple ([`FlowKey`]) to a
//! dense [`FlowId`], so per-flow state lives in vectors, not hash maps.

use crate::units::Time;
use std::collections::HashMap;
use std::net::IpAddr;

/// Dense id of an interned flow (index into the driver's flow arrays).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowId(pub u32);

impl FlowId {
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// IP protocol numbers used by qoslab.
pub mod proto {
    pub const TCP: u8 = 6;
    pub const UDP: u8 = 17;
}

/// A flow's identity on the wire: addresses, ports and protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FlowKey {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub src_port: u16,
    pub dst_port: u16,
    pub proto: u8,
}

/// The header fields a MACE table matches on: the paper's
/// `<source address, source port, destination address, destination port>`,
/// plus the protocol when the table is configured to match it (`None`
/// otherwise).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FlowDescriptor {
    pub src: IpAddr,
    pub src_port: u16,
    pub dst: IpAddr,
    pub dst_port: u16,
    pub proto: Option<u8>,
}

impl FlowDescriptor {
    /// The descriptor of `key`, with or without its protocol.
    pub fn of(key: &FlowKey, with_proto: bool) -> FlowDescriptor {
        FlowDescriptor {
            src: key.src,
            src_port: key.src_port,
            dst: key.dst,
            dst_port: key.dst_port,
            proto: with_proto.then_some(key.proto),
        }
    }
}

impl std::fmt::Display for FlowDescriptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{} -> {}:{}", self.src, self.src_port, self.dst, self.dst_port)?;
        if let Some(p) = self.proto {
            write!(f, " proto {p}")?;
        }
        Ok(())
    }
}

/// Interns [`FlowKey`]s into dense [`FlowId`]s. Owned by the driver.
#[derive(Clone, Debug, Default)]
pub struct FlowTable {
    ids: HashMap<FlowKey, FlowId>,
    keys: Vec<FlowKey>,
}

impl FlowTable {
    pub fn new() -> FlowTable {
        FlowTable::default()
    }
    /// The id of `key`, interning it on first sight.
    pub fn intern(&mut self, key: FlowKey) -> FlowId {
        if let Some(id) = self.ids.get(&key) {
            return *id;
        }
        let id = FlowId(u32::try_from(self.keys.len()).expect("more than 2^32 flows"));
        self.keys.push(key);
        self.ids.insert(key, id);
        id
    }
    pub fn get(&self, key: &FlowKey) -> Option<FlowId> {
        self.ids.get(key).copied()
    }
    pub fn key(&self, id: FlowId) -> &FlowKey {
        &self.keys[id.index()]
    }
    pub fn len(&self) -> usize {
        self.keys.len()
    }
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// Service class tag carried by a packet (set by the source or by a
/// classifier): an index the classful disciplines map to their children.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClassTag(pub u8);

/// The two ECN bits of the IP header (RFC 3168).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Ecn {
    #[default]
    NotEct = 0b00,
    Ect1 = 0b01,
    Ect0 = 0b10,
    Ce = 0b11,
}

impl Ecn {
    pub fn is_ect(self) -> bool {
        matches!(self, Ecn::Ect0 | Ecn::Ect1)
    }
}

/// PCN marking state (RFC 6660 encoding in the ECN field of PCN-capable
/// traffic): not PCN traffic, not-marked, threshold-marked, excess-traffic-marked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum PcnMark {
    #[default]
    NotPcn = 0,
    NotMarked = 1,
    ThresholdMarked = 2,
    ExcessMarked = 3,
}

/// What a mechanism knows about one packet. `Copy`, 48 bytes (checked below).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Packet {
    /// Unique per run, assigned by the driver in creation order.
    pub id: u64,
    pub flow: FlowId,
    /// Bytes on the wire at the layer the link serializes (headers included).
    pub size: u32,
    pub class: ClassTag,
    /// Differentiated-services code point (6 bits).
    pub dscp: u8,
    pub ecn: Ecn,
    pub pcn: PcnMark,
    /// The stream id a classifier gave the packet ([Guerin99 §II]: the unit
    /// of resource allocation; many flows may share one). 0 by default.
    pub stream: u16,
    /// The interface the packet arrived on at the node now holding it,
    /// driver-defined (simulator: upstream node index; router: ifindex).
    /// 0 by default.
    pub ingress: u16,
    /// When the source emitted it.
    pub created: Time,
    /// When it entered the queue that now holds it (set by [`crate::qdisc::Queue`]).
    pub enqueued: Time,
    /// Opaque to mechanisms; the driver's way back to the bytes or transport state.
    pub handle: u64,
}

const _: () = assert!(std::mem::size_of::<Packet>() == 48);

impl Packet {
    /// A packet with default marks, class 0, stream 0, ingress 0 and no handle.
    pub fn new(id: u64, flow: FlowId, size: u32, created: Time) -> Packet {
        Packet {
            id,
            flow,
            size,
            class: ClassTag(0),
            dscp: 0,
            ecn: Ecn::NotEct,
            pcn: PcnMark::NotPcn,
            stream: 0,
            ingress: 0,
            created,
            enqueued: created,
            handle: 0,
        }
    }
    #[inline]
    pub fn bytes(&self) -> crate::units::Bytes {
        crate::units::Bytes(self.size as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn key(port: u16) -> FlowKey {
        FlowKey {
            src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
            dst: IpAddr::V4(Ipv4Addr::new(10, 0, 1, 1)),
            src_port: port,
            dst_port: 5000,
            proto: proto::UDP,
        }
    }

    #[test]
    fn flow_table_interns_densely_and_stably() {
        let mut t = FlowTable::new();
        assert_eq!(t.intern(key(1)), FlowId(0));
        assert_eq!(t.intern(key(2)), FlowId(1));
        assert_eq!(t.intern(key(1)), FlowId(0));
        assert_eq!(t.len(), 2);
        assert_eq!(t.key(FlowId(1)).src_port, 2);
        assert_eq!(t.get(&key(3)), None);
    }

    #[test]
    fn packet_stays_small() {
        assert!(std::mem::size_of::<Packet>() <= 48, "{}", std::mem::size_of::<Packet>());
    }
}
