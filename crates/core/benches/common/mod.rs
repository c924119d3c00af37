//! The two forwarding paths that `benches/edge_path.rs` and
//! `examples/edge_overhead.rs` time, on the same pre-built packets.
//!
//! The one formula: QoS share = (cost with QoS − cost without) / cost with QoS.
//!
//! - BASE: parse the raw IPv4 + UDP header into a `FlowKey` (etherparse),
//!   look the destination up in a small prefix routing table (the same
//!   `prefix_trie::PrefixMap` the classifier uses), FIFO `Queue` enqueue
//!   and dequeue.
//! - QOS: the same, plus the classifier stage (fast path: flow-cache hit;
//!   slow path: a cache of one entry and alternating flows, so every packet
//!   misses and searches the rule database), buffer-management admission,
//!   and SCFQ over an EF and an AF/BE child (each `BufferManaged`) instead
//!   of the FIFO.
//!
//! Every packet is enqueued and at once dequeued, so the queues stay short
//! and both paths do the same work per packet in steady state. Both call
//! the queue through the router's entries (`Queue::enqueue_inlined` /
//! `dequeue_inlined`: the edge's SCFQ root inlined, as the router's
//! datapath has it).

// Each user (bench, example) calls a different part of this module.
#![allow(dead_code)]

use etherparse::{Ipv4HeaderSlice, PacketBuilder, UdpHeaderSlice};
use ipnet::{IpNet, Ipv4Net};
use prefix_trie::PrefixMap;
use qoslab_core::pipeline::Discard;
use qoslab_core::qdisc::buffer::{BufferConfig, BufferManaged, StreamShare};
use qoslab_core::qdisc::classful::{Classful, TagClassifier};
use qoslab_core::qdisc::fifo::{Fifo, FifoConfig};
use qoslab_core::qdisc::scfq::Scfq;
use qoslab_core::stage::edge_classifier::{ClassifierConfig, ClassifierStage, PortRange, Rule, RuleAction};
use qoslab_core::stage::{Stage, StageVerdict};
use qoslab_core::{Dequeue, FlowId, FlowKey, Limit, Packet, Queue, Rate, Rng, Time};
use rand::{Rng as _, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::net::{IpAddr, Ipv4Addr};

/// Streams 0..8: even ones EF (class 0), odd ones AF (class 1).
pub const STREAMS: u16 = 8;

/// `flows` distinct IPv4/UDP packets of 64..1400 payload bytes, repeated
/// round-robin to `count` packets (flow k = packet k mod flows).
pub fn packets(flows: usize, count: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut g = Xoshiro256PlusPlus::seed_from_u64(seed);
    let distinct: Vec<Vec<u8>> = (0..flows)
        .map(|_| {
            let src = [10, g.random_range(0..4), g.random(), g.random()];
            let dst = [192, 168, g.random_range(0..16), g.random()];
            let payload = vec![0u8; g.random_range(64..1400)];
            let b = PacketBuilder::ipv4(src, dst, 64).udp(g.random_range(1024..65535), g.random_range(5000..5100));
            let mut buf = Vec::with_capacity(b.size(payload.len()));
            b.write(&mut buf, &payload).expect("writing to a Vec");
            buf
        })
        .collect();
    (0..count).map(|k| distinct[k % flows].clone()).collect()
}

/// `n` random rules with distinct priorities over the packets' address and
/// port space: prefixes of 10.0.0.0/14 and 192.168.0.0/20 (or wildcards),
/// destination port ranges in 5000..5100, UDP/TCP/any.
pub fn rules(n: usize, seed: u64) -> Vec<Rule> {
    let mut g = Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            let src = g.random_bool(0.7).then(|| {
                let a = Ipv4Addr::new(10, g.random_range(0..4), g.random(), g.random());
                IpNet::new(IpAddr::V4(a), g.random_range(14..=32)).unwrap().trunc()
            });
            let dst = g.random_bool(0.7).then(|| {
                let a = Ipv4Addr::new(192, 168, g.random_range(0..16), g.random());
                IpNet::new(IpAddr::V4(a), g.random_range(20..=32)).unwrap().trunc()
            });
            let dst_port = g.random_bool(0.6).then(|| {
                let lo = g.random_range(5000..5100);
                PortRange { lo, hi: lo + g.random_range(0..20) }
            });
            let proto = g.random_bool(0.5).then(|| if g.random_bool(0.8) { 17 } else { 6 });
            let stream = g.random_range(0..STREAMS);
            Rule {
                src,
                dst,
                dst_port,
                proto,
                src_port: None,
                ingress: None,
                dscp: None,
                action: RuleAction {
                    stream,
                    class: (stream % 2) as u8,
                    set_dscp: Some(if stream % 2 == 0 { 46 } else { 10 }),
                },
                priority: i as u32,
            }
        })
        .collect()
}

/// The header fields both paths parse: flow key, DSCP, bytes on the wire.
#[inline]
pub fn parse(buf: &[u8]) -> Option<(FlowKey, u8, u32)> {
    let ip = Ipv4HeaderSlice::from_slice(buf).ok()?;
    let udp = UdpHeaderSlice::from_slice(&buf[ip.slice().len()..]).ok()?;
    let key = FlowKey {
        src: IpAddr::V4(ip.source_addr()),
        dst: IpAddr::V4(ip.destination_addr()),
        src_port: udp.source_port(),
        dst_port: udp.destination_port(),
        proto: ip.protocol().0,
    };
    Some((key, ip.dcp().value(), ip.total_len() as u32))
}

/// A routing table of 256 prefixes over 192.168.0.0/16 (/20 to /28) and a default.
pub fn routes() -> PrefixMap<Ipv4Net, u16> {
    let mut g = Xoshiro256PlusPlus::seed_from_u64(99);
    let mut t = PrefixMap::new();
    t.insert("0.0.0.0/0".parse().unwrap(), 0);
    for i in 0..256u16 {
        let a = Ipv4Addr::new(192, 168, g.random_range(0..16), g.random());
        t.insert(Ipv4Net::new(a, g.random_range(20..=28)).unwrap().trunc(), 1 + i % 4);
    }
    t
}

#[inline]
pub fn route(t: &PrefixMap<Ipv4Net, u16>, key: &FlowKey) -> u16 {
    match key.dst {
        IpAddr::V4(a) => t.get_lpm(&Ipv4Net::from(a)).map_or(0, |(_, e)| *e),
        IpAddr::V6(_) => 0,
    }
}

/// The path without QoS: without a classifier (`Base::new`), or with the
/// same classifier stage as the QoS path (`Base::classified`, [Guerin99]
/// §V.A's split: the flow cache and rule database are forwarding work, the
/// QoS extensions are what follows the stream id).
pub struct Base {
    routes: PrefixMap<Ipv4Net, u16>,
    stage: Option<ClassifierStage>,
    q: Queue,
    rng: Rng,
}

/// The base path's queue: a drop-tail FIFO of 1000 packets.
pub fn fifo_queue() -> Queue {
    Queue::new(Box::new(Fifo::new(FifoConfig { limit: Limit::packets(1000) }).unwrap()))
}

/// The QoS path's queue: SCFQ (weights 1:3) over an EF and an AF/BE
/// `BufferManaged` child (100 buffers of 512 B, 2 Mb/s; 100 kb/s per
/// stream; the default stream `STREAMS` best effort in AF/BE).
pub fn qos_queue() -> Queue {
    let link = Rate::mbps(2);
    let bm = |streams: Vec<StreamShare>| {
        Queue::new(Box::new(
            BufferManaged::new(BufferConfig { buffers: 100, buff_size: 512, rate: link, streams }).unwrap(),
        ))
    };
    let share = |s: u16| StreamShare { stream: s, rate: Some(Rate::kbps(100)) };
    let ef = bm((0..STREAMS).step_by(2).map(share).collect());
    let mut af_streams: Vec<StreamShare> = (1..STREAMS).step_by(2).map(share).collect();
    af_streams.push(StreamShare { stream: STREAMS, rate: None });
    let af = bm(af_streams);
    let scfq = Scfq::new(vec![Rate::kbps(500), Rate::kbps(1500)]).unwrap();
    Queue::new(Box::new(Classful::new(TagClassifier::identity(2), scfq, vec![ef, af])))
}

/// The default action of the QoS path's classifier: best effort, AF/BE queue.
pub const DEFAULT: RuleAction = RuleAction { stream: STREAMS, class: 1, set_dscp: Some(0) };

impl Base {
    pub fn new() -> Base {
        Base { routes: routes(), stage: None, q: fifo_queue(), rng: qoslab_core::rng::stream(1, 0) }
    }
    /// The base path with the QoS path's classifier stage in front of its FIFO.
    pub fn classified(rules: Vec<Rule>, cache_capacity: usize) -> Base {
        let cfg = ClassifierConfig { rules, cache_capacity, default: Some(DEFAULT) };
        Base { stage: Some(ClassifierStage::new(cfg).unwrap()), ..Base::new() }
    }
    /// Forwards one packet; returns something of it so nothing is optimized away.
    #[inline]
    pub fn forward(&mut self, id: u64, buf: &[u8]) -> u64 {
        let Some((key, dscp, size)) = parse(buf) else { return 0 };
        let egress = route(&self.routes, &key);
        let mut p = Packet::new(id, FlowId(0), size, Time(id));
        p.dscp = dscp;
        if let Some(stage) = &mut self.stage {
            if let StageVerdict::Drop(_) = stage.on_arrival(Time(id), &mut p, &key, &mut self.rng, &mut Discard) {
                return 0;
            }
        }
        let _ = self.q.enqueue_inlined(Time(id), p, &mut self.rng);
        match self.q.dequeue_inlined(Time(id)) {
            Dequeue::Packet(p) => p.id + egress as u64,
            _ => 0,
        }
    }
}

/// The path with QoS.
pub struct Qos {
    routes: PrefixMap<Ipv4Net, u16>,
    stage: ClassifierStage,
    q: Queue,
    rng: Rng,
}

impl Qos {
    /// `cache_capacity` 1 with alternating flows makes every packet a miss.
    pub fn new(rules: Vec<Rule>, cache_capacity: usize) -> Qos {
        let cfg = ClassifierConfig { rules, cache_capacity, default: Some(DEFAULT) };
        let stage = ClassifierStage::new(cfg).unwrap();
        Qos { routes: routes(), stage, q: qos_queue(), rng: qoslab_core::rng::stream(1, 0) }
    }
    #[inline]
    pub fn forward(&mut self, id: u64, buf: &[u8]) -> u64 {
        let Some((key, dscp, size)) = parse(buf) else { return 0 };
        let egress = route(&self.routes, &key);
        let mut p = Packet::new(id, FlowId(0), size, Time(id));
        p.dscp = dscp;
        if let StageVerdict::Drop(_) = self.stage.on_arrival(Time(id), &mut p, &key, &mut self.rng, &mut Discard) {
            return 0;
        }
        let _ = self.q.enqueue_inlined(Time(id), p, &mut self.rng);
        match self.q.dequeue_inlined(Time(id)) {
            Dequeue::Packet(p) => p.id + egress as u64,
            _ => 0,
        }
    }
    pub fn hits_misses(&self) -> (u64, u64) {
        (self.stage.hits(), self.stage.misses())
    }
    pub fn stage_mut(&mut self) -> &mut ClassifierStage {
        &mut self.stage
    }
}

/// The fast-path workload: 64 flows round-robin and a cache of 1024 flows,
/// so every packet after the first 64 hits.
pub fn fast(rules_n: usize) -> (Vec<Vec<u8>>, Qos) {
    (packets(64, 4096, 1), Qos::new(rules(rules_n, 2), 1024))
}
/// The slow-path workload: the same 64 flows round-robin through a cache
/// of one entry, so consecutive packets always differ and every one misses
/// and searches the rule database.
pub fn slow(rules_n: usize) -> (Vec<Vec<u8>>, Qos) {
    (packets(64, 4096, 1), Qos::new(rules(rules_n, 2), 1))
}

/// The base path with the fast path's classifier (rules, cache as `fast`).
pub fn fast_classified(rules_n: usize) -> Base {
    Base::classified(rules(rules_n, 2), 1024)
}
/// The base path with the slow path's classifier (rules, cache as `slow`).
pub fn slow_classified(rules_n: usize) -> Base {
    Base::classified(rules(rules_n, 2), 1)
}
