//! The network: nodes, duplex point-to-point links and static routes,
//! built from the expanded topology ([`qoslab_scenario::expand`]).
//!
//! **Links.** Each duplex link has two directions ([`DirId`]`(2 l)` is
//! a -> b, `2 l + 1` is b -> a). A direction has its own output [`Port`]
//! (stages, then the queue discipline `queue` / `reverse_queue`, else the
//! topology's `default_queue`, then an optional device queue; built by
//! `qoslab_scenario::registry::build_port`), an
//! exact serializer ([`LinkSerializer`]) at the link rate, a transmitter holding at most
//! one packet on the wire, a propagation pipe, and its own RNG stream
//! `rng::stream(seed, LINK_STREAM_BASE + dir)`. Transmission of a packet of
//! `b` bytes lasts `b * 8 / rate` (exact over any number of packets, see
//! `Serializer`); when it ends the packet propagates for `delay` and the
//! transmitter dequeues the next packet (`Empty`: idle; `NotBefore(t)`: try
//! again at `t`).
//!
//! **Pipe.** Packets leave a direction in order and all take the same
//! `delay`, so they also arrive in order: a direction keeps the packets it
//! has sent (on the wire or propagating) in a FIFO, each with its arrival
//! time, and only the head has an `Arrive` event in the event queue,
//! inserted with the sequence number reserved when the packet went on the
//! wire. The heap stays small (one entry per direction, not per packet).
//!
//! **End of transmission.** The end of a transmission is an event
//! (`TxDone`: dequeue the next packet) only if a packet waits when it
//! starts or arrives during it. Otherwise the transmitter goes idle at
//! `busy_until` with nothing to do, and the `dequeue` that would have found
//! the queue empty then (RED starts its idle period there) is made, with
//! that instant, just before the queue is next touched (`idle_owed`). The
//! queue sees exactly the calls it would have seen with one event per
//! transmission; an idle access link costs no event at all.
//!
//! **Loss.** A direction with `loss` (`reverse_loss` for b -> a) > 0 loses
//! each packet with that probability (Bernoulli, drawn from its own stream
//! `rng::stream(seed, LOSS_STREAM_BASE + dir)`) when it reaches the far
//! end: it was serialized and propagated, then counted as dropped for its
//! flow (not by any queue).
//!
//! **Routing.** Static shortest paths by the rule of
//! [`qoslab_scenario::routes`] (fewest hops, hosts never forward, the
//! lowest direction on ties), towards every destination that traffic uses
//! (and the sources of flows with agents, TCP and MM_APP, whose receivers
//! send packets back).
//!
//! **Utilization** is busy time (serialization) over elapsed time, exact
//! in ns, also for transmissions that straddle a sampling instant.

use crate::engine::{DirId, LinkId, NodeId};
use crate::error::{Diagnostic, SimError};
use qoslab_core::pipeline::Port;
use qoslab_core::rng::{self, Rng};
use qoslab_core::units::{Dur, Rate, Time};
use qoslab_core::Packet;
use qoslab_scenario::expand::{Expanded, Link};
use qoslab_scenario::registry::{build_port, PortSpec};
use qoslab_scenario::NodeKind;
use std::collections::VecDeque;
use std::net::Ipv4Addr;
use std::path::Path;

/// RNG stream of link direction `d` is `LINK_STREAM_BASE + d`.
pub const LINK_STREAM_BASE: u64 = 1 << 62;

/// RNG stream of link direction `d`'s loss draws is `LOSS_STREAM_BASE + d`.
pub const LOSS_STREAM_BASE: u64 = (1 << 62) | (1 << 40);

/// RNG stream of the edge behaviour at node `n` is `EDGE_STREAM_BASE + n`.
pub const EDGE_STREAM_BASE: u64 = (1 << 62) | (1 << 41);

#[derive(Clone, Debug)]
pub struct Node {
    pub name: String,
    pub kind: NodeKind,
    /// Synthesized address `10.a.b.c` from the node index (for flow keys).
    pub addr: Ipv4Addr,
}

/// A packet propagating on a link direction.
#[derive(Clone, Copy, Debug)]
pub struct InFlight {
    pub at: Time,
    pub seq: u64,
    pub pkt: Packet,
}

/// Exact back-to-back serialization, with the same results as
/// `qoslab_core::units::Serializer` (tested): `floor((bits * 1e9 + carry) / rate)`
/// with the remainder carried, but with `bits * 1e9 = q * rate + r` kept
/// for the last packet size, so that a link sending packets of one size
/// never divides 128-bit numbers.
#[derive(Clone, Debug)]
pub struct LinkSerializer {
    rate: u64,
    carry: u64,
    size: u64,
    q: u64,
    r: u64,
}

impl LinkSerializer {
    /// `rate` must be positive (checked by [`Network::build`]).
    pub fn new(rate: Rate) -> LinkSerializer {
        LinkSerializer { rate: rate.0.max(1), carry: 0, size: 0, q: 0, r: 0 }
    }
    /// The link rate.
    pub fn rate(&self) -> Rate {
        Rate(self.rate)
    }
    #[inline]
    pub fn tx_time(&mut self, bytes: u64) -> Dur {
        if bytes != self.size {
            let num = bytes as u128 * 8_000_000_000;
            let rate = self.rate as u128;
            self.q = (num / rate).min(u64::MAX as u128 - 1) as u64;
            self.r = (num % rate) as u64;
            self.size = bytes;
        }
        let s = self.r as u128 + self.carry as u128;
        if s >= self.rate as u128 {
            self.carry = (s - self.rate as u128) as u64;
            Dur(self.q + 1)
        } else {
            self.carry = s as u64;
            Dur(self.q)
        }
    }
}

/// One direction of a link: queue, transmitter, pipe. Laid out in
/// declaration order (`repr(C)`): the transmitter state every packet
/// touches shares the first cache line, the pipe and the ends the second,
/// and the fields are ordered so that none is padded (one of these is
/// kept for every direction of the network).
#[repr(C)]
pub struct Dir {
    /// End of the current (or last) transmission.
    pub busy_until: Time,
    /// Total serialization time of every transmission started so far (ns).
    pub busy_acc_ns: u64,
    pub delay: Dur,
    pub ser: LinkSerializer,
    pub pipe: VecDeque<InFlight>,
    pub from: NodeId,
    pub to: NodeId,
    pub link: LinkId,
    /// A `TxDone` event is pending at `busy_until`.
    pub tx_event: bool,
    /// The last transmission ends (ended) at `busy_until` with no `TxDone`:
    /// the queue is owed a `dequeue` at that instant (see the module doc).
    pub idle_owed: bool,
    /// The output port: stages, queue discipline, device queue.
    pub port: Port,
    pub rng: Rng,
    /// The time of the pending `Retry` (after `NotBefore`); `Time::MAX`:
    /// none (not an `Option`: this record is kept for every direction).
    pub retry_at: Time,
    /// The time of the pending `QdiscTick`; `Time::MAX`: none.
    pub tick_at: Time,
    /// `from->to`, e.g. `r0->sink0`.
    pub name: String,
    /// Bernoulli loss on the link, if it has any (boxed: most links have
    /// none).
    pub loss: Option<Box<LinkLoss>>,
}

/// A link direction's random loss.
#[derive(Debug)]
pub struct LinkLoss {
    /// Probability that a packet is lost (in (0, 1]).
    pub p: f64,
    /// The loss draws: `rng::stream(seed, LOSS_STREAM_BASE + dir)`.
    pub rng: Rng,
}

impl Dir {
    /// Starts serializing `pkt` at `now`; returns when its transmission ends.
    #[inline]
    pub fn start_tx(&mut self, now: Time, pkt: &Packet) -> Time {
        let d = self.ser.tx_time(pkt.size as u64);
        self.busy_acc_ns = self.busy_acc_ns.saturating_add(d.0);
        self.busy_until = Time(now.0.saturating_add(d.0));
        self.busy_until
    }
    /// May the transmitter start a packet at `now`?
    #[inline]
    pub fn is_free(&self, now: Time) -> bool {
        !self.tx_event && self.busy_until <= now
    }
    /// Packets of the pipe still being serialized at `now`.
    pub fn on_wire(&self, now: Time) -> usize {
        self.pipe.iter().filter(|f| f.at.0.saturating_sub(self.delay.0) > now.0).count()
    }
    /// The link's rate.
    pub fn rate(&self) -> Rate {
        self.ser.rate()
    }
    /// Busy time in `[0, t]`, for `t` not before the current transmission's start.
    pub fn busy_ns_until(&self, t: Time) -> u64 {
        self.busy_acc_ns - self.busy_until.0.saturating_sub(t.0).min(self.busy_acc_ns)
    }
}

impl Dir {
    /// Builds direction `d` of link `l` (a -> b, or b -> a when `d` is the
    /// reverse): its port from the link's (or the default) queue and stages.
    fn build(
        ex: &Expanded,
        l: &Link,
        d: DirId,
        nodes: &[Node],
        seed: u64,
        origin: &str,
        base_dir: &Path,
    ) -> Result<Dir, Vec<Diagnostic>> {
        let reverse = d.0 % 2 == 1;
        let (from, to) = if reverse { (l.b, l.a) } else { (l.a, l.b) };
        let spec = PortSpec {
            link: &l.spec,
            reverse,
            path: &l.path,
            default_queue: &ex.default_queue,
            default_queue_path: Some("topology.default_queue"),
            nodes: &ex.nodes,
        };
        let port = build_port(&spec, Time::ZERO, Some(base_dir), origin)?;
        Ok(Dir {
            from: NodeId(from as u32),
            to: NodeId(to as u32),
            link: LinkId(d.0 / 2),
            name: format!("{}->{}", nodes[from].name, nodes[to].name),
            delay: l.spec.delay,
            port,
            ser: LinkSerializer::new(l.spec.rate),
            busy_acc_ns: 0,
            busy_until: Time::ZERO,
            tx_event: false,
            idle_owed: false,
            pipe: VecDeque::new(),
            rng: rng::stream(seed, LINK_STREAM_BASE + d.0 as u64),
            retry_at: Time::MAX,
            tick_at: Time::MAX,
            loss: Some(if reverse { l.spec.reverse_loss } else { l.spec.loss })
                .filter(|&p| p > 0.0)
                .map(|p| Box::new(LinkLoss { p, rng: rng::stream(seed, LOSS_STREAM_BASE + d.0 as u64) })),
        })
    }
}

/// A duplex link as the results name it.
#[derive(Clone, Debug)]
pub struct LinkInfo {
    pub a: NodeId,
    pub b: NodeId,
    /// `a<->b`.
    pub name: String,
    /// Where its spec sits in the scenario, for messages.
    pub path: String,
}

/// The routes of [`qoslab_scenario::routes`] in the simulator's ids.
#[derive(Clone, Debug, Default)]
pub struct Routes(qoslab_scenario::routes::Routes);

impl Routes {
    /// The slot of destination `dst`, if routes to it were computed.
    #[inline]
    pub fn slot(&self, dst: NodeId) -> Option<u32> {
        self.0.slot(dst.0)
    }
    /// The direction a packet at `node` takes towards the destination in `slot`.
    #[inline]
    pub fn next(&self, slot: u32, node: NodeId) -> Option<DirId> {
        self.0.next(slot, node.0).map(DirId)
    }
    /// Hops from `node` to the destination in `slot`, `None` if unreachable.
    pub fn hops(&self, slot: u32, node: NodeId) -> Option<u32> {
        self.0.hops(slot, node.0)
    }
}

pub struct Network {
    pub nodes: Vec<Node>,
    pub links: Vec<LinkInfo>,
    pub dirs: Vec<Dir>,
    pub routes: Routes,
    /// The preset's bottleneck direction (a -> b of its bottleneck link).
    pub bottleneck: Option<DirId>,
}

fn addr(i: usize) -> Ipv4Addr {
    qoslab_scenario::expand::node_addr(i)
}

impl Network {
    /// Builds nodes, links and queues (no routes yet: see [`Self::route_to`]).
    /// `origin` names the scenario in error messages.
    /// MACE descriptor files are looked up in `base_dir`.
    pub fn build(ex: &Expanded, seed: u64, origin: &str, base_dir: &Path) -> Result<Network, SimError> {
        let nodes: Vec<Node> =
            ex.nodes.iter().enumerate().map(|(i, (n, k))| Node { name: n.clone(), kind: *k, addr: addr(i) }).collect();
        let mut errors = Vec::new();
        let mut links = Vec::with_capacity(ex.links.len());
        let mut dirs = Vec::with_capacity(ex.links.len() * 2);
        for (li, l) in ex.links.iter().enumerate() {
            if l.a >= nodes.len() || l.b >= nodes.len() || l.a == l.b {
                return Err(SimError::Runtime(format!(
                    "{}: a link that does not join two different nodes, which validation refuses (a bug)",
                    l.path
                )));
            }
            links.push(LinkInfo {
                a: NodeId(l.a as u32),
                b: NodeId(l.b as u32),
                name: format!("{}<->{}", nodes[l.a].name, nodes[l.b].name),
                path: l.path.clone(),
            });
            for reverse in [false, true] {
                let d = DirId::of(LinkId(li as u32), reverse);
                match Dir::build(ex, l, d, &nodes, seed, origin, base_dir) {
                    Ok(dir) => dirs.push(dir),
                    // A descriptor file can change between validation and the run.
                    Err(es) => errors.extend(es),
                }
            }
        }
        if !errors.is_empty() {
            return Err(SimError::Config(errors));
        }
        let bottleneck = ex.bottleneck.filter(|b| *b < links.len()).map(|b| DirId::of(LinkId(b as u32), false));
        Ok(Network { nodes, links, dirs, routes: Routes::default(), bottleneck })
    }

    /// Computes routes to every node in `dsts` (deduplicated, in order), by
    /// the rule of [`qoslab_scenario::routes`].
    pub fn route_to(&mut self, dsts: &[NodeId]) {
        let routers: Vec<bool> = self.nodes.iter().map(|x| x.kind == NodeKind::Router).collect();
        let ends = self.dirs.iter().map(|d| (d.from.0, d.to.0)).collect();
        let dsts: Vec<u32> = dsts.iter().map(|d| d.0).collect();
        self.routes = Routes(qoslab_scenario::routes::Routes::over(&routers, ends, &dsts));
    }

    pub fn node_id(&self, name: &str) -> Option<NodeId> {
        self.nodes.iter().position(|n| n.name == name).map(|i| NodeId(i as u32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qoslab_core::Limit;
    use qoslab_scenario::expand::{Expanded, Link};
    use qoslab_scenario::{LinkSpec, QueueSpec};

    /// 10 Mb/s, 1 ms, every optional field at its default.
    fn spec() -> LinkSpec {
        toml::from_str("rate = \"10Mbps\"\ndelay = \"1ms\"").expect("a link spec")
    }

    /// h0 - r0 - r1 - h0: two hosts, two routers.
    fn graph() -> Expanded {
        let nodes =
            [("h0", NodeKind::Host), ("r0", NodeKind::Router), ("r1", NodeKind::Router), ("h1", NodeKind::Host)];
        let l = |a, b| Link { a, b, spec: spec(), path: format!("topology.links.{a}-{b}") };
        Expanded {
            nodes: nodes.iter().map(|(n, k)| (n.to_string(), *k)).collect(),
            links: vec![l(0, 1), l(1, 2), l(2, 3)],
            default_queue: QueueSpec::Fifo { limit: Limit::packets(10) },
            bottleneck: None,
            bottlenecks: Vec::new(),
        }
    }

    #[test]
    fn routes_follow_the_scenario_crates_rule_in_the_simulators_ids() {
        let mut net = Network::build(&graph(), 1, "t", Path::new("")).unwrap();
        let h1 = net.node_id("h1").unwrap();
        net.route_to(&[h1]);
        let slot = net.routes.slot(h1).unwrap();
        assert_eq!(net.routes.next(slot, NodeId(0)), Some(DirId::of(LinkId(0), false)));
        assert_eq!(net.routes.next(slot, NodeId(1)), Some(DirId::of(LinkId(1), false)));
        assert_eq!(net.routes.hops(slot, NodeId(0)), Some(3));
        assert_eq!(net.routes.next(slot, h1), None);
    }

    #[test]
    fn link_serializer_equals_the_core_serializer() {
        use rand::{Rng as _, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
        for rate in [1u64, 3, 999_983, 25_000_000, 1_000_000_007, 10_000_000_000, 400_000_000_000] {
            let mut mine = LinkSerializer::new(Rate(rate));
            let mut core = qoslab_core::units::Serializer::new(Rate(rate));
            for i in 0..20_000 {
                // Runs of equal sizes (the cache) and random ones.
                let b: u64 = if i % 7 < 4 { 1000 } else { rng.random_range(0..70_000) };
                assert_eq!(mine.tx_time(b), core.tx_time(qoslab_core::Bytes(b)), "rate {rate} step {i}");
            }
        }
    }

    #[test]
    fn busy_time_counts_only_what_was_serialized_by_t() {
        let mut net = Network::build(&graph(), 1, "t", Path::new("")).unwrap();
        let d = &mut net.dirs[0];
        let end = d.start_tx(Time(1_000), &Packet::new(0, qoslab_core::FlowId(0), 1250, Time(0))); // 1 ms at 10 Mb/s
        assert_eq!(end, Time(1_001_000));
        assert_eq!(d.busy_ns_until(Time(501_000)), 500_000);
        assert_eq!(d.busy_ns_until(Time(2_000_000)), 1_000_000);
    }
}
