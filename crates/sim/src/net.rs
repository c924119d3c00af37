//! The network: nodes, duplex point-to-point links and static routes,
//! built from the expanded topology ([`qoslab_scenario::expand`]).
//!
//! **Links.** Each duplex link has two directions ([`DirId`]`(2 l)` is
//! a -> b, `2 l + 1` is b -> a). A direction has its own output [`Port`]
//! (stages, then the queue discipline `queue` / `reverse_queue`, else the
//! topology's `default_queue`, then an optional device queue; built by
//! [`crate::mechanisms::build_port`]), an
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
//! **Routing.** Static shortest paths, fewest hops, computed by a
//! breadth-first search back from every destination that traffic uses
//! (and from the sources of flows with agents, TCP and MM_APP, whose
//! receivers send packets back).
//! Hosts originate and sink traffic but never forward: a path may not pass
//! through a host. Among equally short next hops the one over the link with
//! the lowest index (scenario order after expansion) wins, so routes are
//! deterministic. The table is `destinations x nodes` (4 bytes each).
//!
//! **Utilization** is busy time (serialization) over elapsed time, exact
//! in ns, also for transmissions that straddle a sampling instant.

use crate::engine::{DirId, LinkId, NodeId};
use crate::error::{Diagnostic, SimError};
use crate::mechanisms::{build_port, DirSpec};
use qoslab_core::pipeline::Port;
use qoslab_core::rng::{self, Rng};
use qoslab_core::units::{Dur, Rate, Time};
use qoslab_core::Packet;
use qoslab_scenario::expand::{Expanded, Link};
use qoslab_scenario::{NodeKind, QueueSpec};
use std::collections::VecDeque;
use std::net::Ipv4Addr;
use std::path::Path;

/// RNG stream of link direction `d` is `LINK_STREAM_BASE + d`.
pub const LINK_STREAM_BASE: u64 = 1 << 62;

/// RNG stream of link direction `d`'s loss draws is `LOSS_STREAM_BASE + d`.
pub const LOSS_STREAM_BASE: u64 = (1 << 62) | (1 << 40);

/// RNG stream of the edge behaviour at node `n` is `EDGE_STREAM_BASE + n`.
pub const EDGE_STREAM_BASE: u64 = (1 << 62) | (1 << 41);

/// No route (in the routing table).
const NO_ROUTE: u32 = u32::MAX;

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
        let (spec, field, stages, sfield) = if reverse {
            (&l.spec.reverse_queue, "reverse_queue", &l.spec.reverse_stages, "reverse_stages")
        } else {
            (&l.spec.queue, "queue", &l.spec.stages, "stages")
        };
        let (qspec, qpath): (&QueueSpec, String) = match spec {
            Some(q) => (q, format!("{}.{field}", l.path)),
            None => (&ex.default_queue, "topology.default_queue".to_string()),
        };
        let dir = DirSpec {
            queue: qspec,
            queue_path: &qpath,
            stages,
            stages_path: format!("{}.{sfield}", l.path),
            nodes: &ex.nodes,
        };
        let port = build_port(&dir, &l.spec, &l.path, base_dir, origin)?;
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

/// Next hops towards every destination that traffic uses.
///
/// A host with exactly one outgoing direction (nearly every host) forwards
/// nothing, so its next hop towards any other node is that direction, if
/// the node at its far end reaches the destination: it has no row of its
/// own. The tables hold one row per other node (routers, multi-homed hosts)
/// and destination. With 10,000 TCP sources, each a destination of its
/// ACKs, full `destinations × nodes` tables took 800 MB
/// (docs/performance.md, issue 11 §3).
#[derive(Clone, Debug, Default)]
pub struct Routes {
    /// Destination slot of each node (`NO_ROUTE` if not a destination).
    slot_of: Vec<u32>,
    /// The destination of each slot.
    dst_of: Vec<u32>,
    /// Per node: its row in `next` / `dist`, or `NO_ROUTE` for a host with
    /// one outgoing direction (`uplink`).
    row_of: Vec<u32>,
    /// Per node: its only outgoing direction and the node at its far end
    /// (hosts without a row).
    uplink: Vec<(u32, u32)>,
    /// Per node: is it a router (forwards towards other nodes)?
    forwards: Vec<bool>,
    n_rows: usize,
    /// `next[slot * n_rows + row]`: the direction to take, or `NO_ROUTE`.
    next: Vec<u32>,
    /// Hop count to the destination, `u32::MAX` if unreachable.
    dist: Vec<u32>,
}

impl Routes {
    /// The slot of destination `dst`, if routes to it were computed.
    pub fn slot(&self, dst: NodeId) -> Option<u32> {
        self.slot_of.get(dst.index()).copied().filter(|s| *s != NO_ROUTE)
    }
    /// The direction a packet at `node` takes towards the destination in `slot`.
    #[inline]
    pub fn next(&self, slot: u32, node: NodeId) -> Option<DirId> {
        let row = self.row_of[node.index()];
        let v = if row != NO_ROUTE {
            self.next[slot as usize * self.n_rows + row as usize]
        } else {
            self.uplink_next(slot, node)
        };
        (v != NO_ROUTE).then_some(DirId(v))
    }
    #[cold]
    fn uplink_next(&self, slot: u32, node: NodeId) -> u32 {
        match self.uplink_dist(slot, node) {
            Some(d) if d > 0 => self.uplink[node.index()].0,
            _ => NO_ROUTE,
        }
    }
    /// Hops from a host without a row to the destination in `slot`.
    fn uplink_dist(&self, slot: u32, node: NodeId) -> Option<u32> {
        let dst = self.dst_of[slot as usize];
        if node.0 == dst {
            return Some(0);
        }
        let (_, far) = self.uplink[node.index()];
        if far == dst {
            return Some(1);
        }
        let row = self.row_of[far as usize];
        // The far end forwards only if it is a router (a host with a row may
        // be multi-homed, but hosts never forward).
        if row == NO_ROUTE || !self.forwards[far as usize] {
            return None;
        }
        let d = self.dist[slot as usize * self.n_rows + row as usize];
        (d != u32::MAX).then_some(d + 1)
    }
    /// Hops from `node` to the destination in `slot`, `None` if unreachable.
    pub fn hops(&self, slot: u32, node: NodeId) -> Option<u32> {
        let row = self.row_of[node.index()];
        if row == NO_ROUTE {
            return self.uplink_dist(slot, node);
        }
        let v = self.dist[slot as usize * self.n_rows + row as usize];
        (v != u32::MAX).then_some(v)
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

    /// Computes routes to every node in `dsts` (deduplicated, in order).
    ///
    /// Per destination, a breadth-first search backwards from it through the
    /// nodes that forward towards it (the destination itself and routers);
    /// a node's next hop is the lowest-index direction to a neighbour one hop
    /// closer that forwards. Tables hold rows for routers and multi-homed
    /// hosts only (see [`Routes`]).
    pub fn route_to(&mut self, dsts: &[NodeId]) {
        let n = self.nodes.len();
        let mut slot_of = vec![NO_ROUTE; n];
        let mut order: Vec<NodeId> = Vec::new();
        for d in dsts {
            if slot_of[d.index()] == NO_ROUTE {
                slot_of[d.index()] = order.len() as u32;
                order.push(*d);
            }
        }
        let forwards: Vec<bool> = self.nodes.iter().map(|x| x.kind == NodeKind::Router).collect();
        // Outgoing directions per node: hosts with exactly one get no row.
        let mut out_deg = vec![0u32; n];
        let mut uplink = vec![(NO_ROUTE, NO_ROUTE); n];
        for (i, d) in self.dirs.iter().enumerate() {
            out_deg[d.from.index()] += 1;
            uplink[d.from.index()] = (i as u32, d.to.0);
        }
        let mut row_of = vec![NO_ROUTE; n];
        let mut n_rows = 0usize;
        for v in 0..n {
            if forwards[v] || out_deg[v] != 1 {
                row_of[v] = n_rows as u32;
                n_rows += 1;
            } else {
                continue;
            }
        }
        for (v, u) in uplink.iter_mut().enumerate() {
            if row_of[v] != NO_ROUTE {
                *u = (NO_ROUTE, NO_ROUTE);
            }
        }
        // Adjacency: for each node, the directions arriving at it (reverse search).
        let mut incoming: Vec<Vec<DirId>> = vec![Vec::new(); n];
        for (i, d) in self.dirs.iter().enumerate() {
            incoming[d.to.index()].push(DirId(i as u32));
        }
        let mut next = vec![NO_ROUTE; order.len() * n_rows];
        let mut dist_rows = vec![u32::MAX; order.len() * n_rows];
        // Whole-graph scratch for one search, reset through `touched`.
        let mut dist = vec![u32::MAX; n];
        let mut hop = vec![NO_ROUTE; n];
        let mut touched: Vec<usize> = Vec::new();
        let mut frontier: VecDeque<NodeId> = VecDeque::new();
        for (s, dst) in order.iter().enumerate() {
            dist[dst.index()] = 0;
            touched.push(dst.index());
            frontier.push_back(*dst);
            while let Some(u) = frontier.pop_front() {
                // Only the destination and routers forward towards it.
                if u != *dst && !forwards[u.index()] {
                    continue;
                }
                let du = dist[u.index()];
                for d in &incoming[u.index()] {
                    let v = self.dirs[d.index()].from.index();
                    if v == dst.index() {
                        continue;
                    }
                    if dist[v] == u32::MAX {
                        dist[v] = du + 1;
                        touched.push(v);
                        frontier.push_back(NodeId(v as u32));
                    }
                    // Every `u` one hop closer is expanded before `v`'s own
                    // level: the lowest such direction wins.
                    if dist[v] == du + 1 && d.0 < hop[v] {
                        hop[v] = d.0;
                    }
                }
            }
            for &v in &touched {
                let row = row_of[v];
                if row != NO_ROUTE {
                    next[s * n_rows + row as usize] = hop[v];
                    dist_rows[s * n_rows + row as usize] = dist[v];
                }
                dist[v] = u32::MAX;
                hop[v] = NO_ROUTE;
            }
            touched.clear();
        }
        let dst_of = order.iter().map(|d| d.0).collect();
        self.routes = Routes { slot_of, dst_of, row_of, uplink, forwards, n_rows, next, dist: dist_rows };
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
    use qoslab_scenario::LinkSpec;

    /// 10 Mb/s, 1 ms, every optional field at its default.
    fn spec() -> LinkSpec {
        toml::from_str("rate = \"10Mbps\"\ndelay = \"1ms\"").expect("a link spec")
    }

    /// h0 - r0 - r1 - h1, plus a longer detour r0 - r2 - r3 - r1, and a
    /// second parallel r0 - r1 link (higher index) that ties with the first.
    fn graph() -> Expanded {
        let nodes = [
            ("h0", NodeKind::Host),
            ("r0", NodeKind::Router),
            ("r1", NodeKind::Router),
            ("h1", NodeKind::Host),
            ("r2", NodeKind::Router),
            ("r3", NodeKind::Router),
            ("h2", NodeKind::Host),
        ];
        let l = |a, b| Link { a, b, spec: spec(), path: format!("topology.links.{a}-{b}") };
        Expanded {
            nodes: nodes.iter().map(|(n, k)| (n.to_string(), *k)).collect(),
            links: vec![l(0, 1), l(1, 4), l(4, 5), l(5, 2), l(1, 2), l(2, 3), l(1, 2), l(6, 3)],
            default_queue: QueueSpec::Fifo { limit: Limit::packets(10) },
            bottleneck: None,
        }
    }

    /// The rule of [`Network::route_to`] computed the plain way, over the
    /// whole `destinations × nodes` table: hops by breadth-first search
    /// backwards through forwarding nodes, then the lowest-index direction
    /// to a forwarding neighbour one hop closer.
    fn reference(net: &Network, dst: NodeId) -> Vec<(Option<DirId>, Option<u32>)> {
        let n = net.nodes.len();
        let fwd = |u: usize| u == dst.index() || net.nodes[u].kind == NodeKind::Router;
        let mut dist = vec![u32::MAX; n];
        dist[dst.index()] = 0;
        let mut q = VecDeque::from([dst.index()]);
        while let Some(u) = q.pop_front() {
            if !fwd(u) {
                continue;
            }
            for d in net.dirs.iter().filter(|d| d.to.index() == u) {
                if dist[d.from.index()] == u32::MAX {
                    dist[d.from.index()] = dist[u] + 1;
                    q.push_back(d.from.index());
                }
            }
        }
        (0..n)
            .map(|v| {
                let next = (v != dst.index())
                    .then(|| {
                        net.dirs.iter().position(|d| {
                            let u = d.to.index();
                            d.from.index() == v && fwd(u) && dist[u] != u32::MAX && dist[v] == dist[u] + 1
                        })
                    })
                    .flatten()
                    .map(|i| DirId(i as u32));
                (next, (dist[v] != u32::MAX).then_some(dist[v]))
            })
            .collect()
    }

    #[test]
    fn compact_routes_equal_the_full_table_and_keep_rows_only_where_needed() {
        // h1 has two links (r1, h2): a row; h0 and h2 one each: none.
        let mut net = Network::build(&graph(), 1, "t", Path::new("")).unwrap();
        let all: Vec<NodeId> = (0..net.nodes.len() as u32).map(NodeId).collect();
        net.route_to(&all);
        for &dst in &all {
            let slot = net.routes.slot(dst).unwrap();
            for (v, want) in reference(&net, dst).into_iter().enumerate() {
                let got = (net.routes.next(slot, NodeId(v as u32)), net.routes.hops(slot, NodeId(v as u32)));
                assert_eq!(got, want, "towards {} from {}", net.nodes[dst.index()].name, net.nodes[v].name);
            }
        }
        // 4 routers + h1: 5 rows of 7 destinations, not 7 x 7.
        assert_eq!(net.routes.n_rows, 5);
        assert_eq!(net.routes.next.len(), 7 * 5);
    }

    #[test]
    fn routes_take_fewest_hops_and_lowest_link_on_ties() {
        let mut net = Network::build(&graph(), 1, "t", Path::new("")).unwrap();
        let h1 = net.node_id("h1").unwrap();
        net.route_to(&[h1]);
        let slot = net.routes.slot(h1).unwrap();
        let path = |net: &Network, from: &str| {
            let mut at = net.node_id(from).unwrap();
            let mut names = vec![from.to_string()];
            while at != h1 {
                let d = net.routes.next(slot, at).expect("route");
                at = net.dirs[d.index()].to;
                names.push(net.nodes[at.index()].name.clone());
            }
            names.join(" ")
        };
        assert_eq!(path(&net, "h0"), "h0 r0 r1 h1");
        // The r0 -> r1 hop uses link 4 (index lower than the parallel link 6).
        let r0 = net.node_id("r0").unwrap();
        assert_eq!(net.routes.next(slot, r0), Some(DirId::of(LinkId(4), false)));
        assert_eq!(net.routes.hops(slot, net.node_id("h0").unwrap()), Some(3));
        // h2 reaches h1 directly; nothing routes through h2 or h1.
        assert_eq!(path(&net, "h2"), "h2 h1");
    }

    #[test]
    fn hosts_never_forward() {
        // a - h - b with h a host: a cannot reach b.
        let ex = Expanded {
            nodes: vec![("a".into(), NodeKind::Host), ("h".into(), NodeKind::Host), ("b".into(), NodeKind::Host)],
            links: vec![
                Link { a: 0, b: 1, spec: spec(), path: "l0".into() },
                Link { a: 1, b: 2, spec: spec(), path: "l1".into() },
            ],
            default_queue: QueueSpec::Fifo { limit: Limit::packets(10) },
            bottleneck: None,
        };
        let mut net = Network::build(&ex, 1, "t", Path::new("")).unwrap();
        net.route_to(&[NodeId(2)]);
        let s = net.routes.slot(NodeId(2)).unwrap();
        assert_eq!(net.routes.next(s, NodeId(0)), None);
        assert_eq!(net.routes.hops(s, NodeId(0)), None);
        assert_eq!(net.routes.next(s, NodeId(1)), Some(DirId(2)));
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
