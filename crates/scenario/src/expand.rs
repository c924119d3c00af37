//! Expands any topology preset into explicit nodes and duplex links, and
//! resolves node patterns. The simulator builds only from this form; the
//! validator checks names against it. Naming rules are in [`super::model`].

use super::model::{ExplicitLink, LinkSpec, NodeKind, NodeSpec, QueueSpec, Topology};
use qoslab_core::units::{Dur, Rate};

/// A duplex link between node indices `a` and `b`; `spec.queue` feeds
/// a -> b, `spec.reverse_queue` b -> a (`None`: the topology's default queue).
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    pub a: usize,
    pub b: usize,
    pub spec: LinkSpec,
    /// Dotted path of the link's spec in the scenario (for error messages).
    pub path: String,
}

/// A topology as nodes and links.
#[derive(Clone, Debug, PartialEq)]
pub struct Expanded {
    pub nodes: Vec<(String, NodeKind)>,
    pub links: Vec<Link>,
    pub default_queue: QueueSpec,
    /// The link (index into `links`, a -> b direction) the preset calls the
    /// bottleneck: the first one for parking lots. `None` for explicit topologies.
    pub bottleneck: Option<usize>,
    /// Every link the preset calls a bottleneck (a parking lot's `r{i} -> r{i+1}`,
    /// in order; the one of a dumbbell or star); empty for explicit topologies.
    pub bottlenecks: Vec<usize>,
}

/// The IPv4 address of node `index` in a run: 10.x.y.z with x.y.z = index + 1
/// (so at most 2^24 - 1 nodes). The simulator gives nodes these addresses, and
/// a classifier rule naming a node matches this address.
pub fn node_addr(index: usize) -> std::net::Ipv4Addr {
    let n = index + 1;
    std::net::Ipv4Addr::new(10, (n >> 16) as u8, (n >> 8) as u8, n as u8)
}

impl Expanded {
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|(n, _)| n == name)
    }
    /// Nodes named `pattern`, or, for `"prefix*"`, every node whose name
    /// starts with `prefix`, in node order.
    pub fn resolve(&self, pattern: &str) -> Vec<usize> {
        match pattern.strip_suffix('*') {
            Some(prefix) => {
                self.nodes.iter().enumerate().filter(|(_, (n, _))| n.starts_with(prefix)).map(|(i, _)| i).collect()
            }
            None => self.index_of(pattern).into_iter().collect(),
        }
    }
}

/// A link's path without the bracketed name of an expanded link
/// (`topology.access[src3]` -> `topology.access`): the field in the text.
pub fn field_of(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut depth = 0usize;
    for c in path.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// Expands `t`. Node names not defined by an explicit topology are
/// reported by the validator, not here: unknown names map to no link.
pub fn expand(t: &Topology) -> Expanded {
    let mut b = Builder { nodes: Vec::new(), links: Vec::new() };
    let (bottlenecks, default_queue): (Vec<usize>, _) = match t {
        Topology::Dumbbell { sources, sinks, routers, access, bottleneck, egress, default_queue } => {
            let eg = egress.as_ref().unwrap_or(access);
            (vec![b.dumbbell(*sources, *sinks, *routers, access, bottleneck, eg)], default_queue)
        }
        Topology::ParkingLot { bottlenecks, access, bottleneck, hop_queues, egress, default_queue } => {
            let k = *bottlenecks as usize;
            let first = b.parking_lot(k, access, bottleneck, hop_queues, egress.as_ref().unwrap_or(access));
            (first.map(|f| (f..f + k).collect()).unwrap_or_default(), default_queue)
        }
        Topology::Star { ingresses, access, ingress_delays, ingress_routers, bottleneck, egress, default_queue } => {
            let eg = egress.as_ref().unwrap_or(access);
            (vec![b.star(*ingresses, access, ingress_delays, *ingress_routers, bottleneck, eg)], default_queue)
        }
        Topology::Explicit { nodes, links, default_queue } => {
            b.explicit(nodes, links);
            (Vec::new(), default_queue)
        }
    };
    let bottleneck = bottlenecks.first().copied();
    Expanded { nodes: b.nodes, links: b.links, default_queue: default_queue.clone(), bottleneck, bottlenecks }
}

/// Nodes and links as a preset adds them (the order is part of the result:
/// it numbers nodes, links and their RNG streams).
struct Builder {
    nodes: Vec<(String, NodeKind)>,
    links: Vec<Link>,
}

impl Builder {
    fn node(&mut self, name: String, kind: NodeKind) -> usize {
        self.nodes.push((name, kind));
        self.nodes.len() - 1
    }

    fn link(&mut self, a: usize, b: usize, spec: &LinkSpec, path: String) {
        self.links.push(Link { a, b, spec: spec.clone(), path });
    }

    /// `src0..` -> `r0` [-> `r1`] -> `sink0..`; the bottleneck link's index.
    fn dumbbell(
        &mut self,
        sources: u32,
        sinks: u32,
        routers: u32,
        access: &LinkSpec,
        bn: &LinkSpec,
        eg: &LinkSpec,
    ) -> usize {
        let srcs: Vec<usize> = (0..sources).map(|i| self.node(format!("src{i}"), NodeKind::Host)).collect();
        let r0 = self.node("r0".into(), NodeKind::Router);
        let r1 = (routers >= 2).then(|| self.node("r1".into(), NodeKind::Router));
        let sinks: Vec<usize> = (0..sinks).map(|i| self.node(format!("sink{i}"), NodeKind::Host)).collect();
        for (i, s) in srcs.iter().enumerate() {
            self.link(*s, r0, access, format!("topology.access[src{i}]"));
        }
        let bottleneck = self.links.len();
        match r1 {
            Some(r1) => {
                self.link(r0, r1, bn, "topology.bottleneck".into());
                for (i, k) in sinks.iter().enumerate() {
                    self.link(r1, *k, eg, format!("topology.egress[sink{i}]"));
                }
            }
            None => {
                for (i, k) in sinks.iter().enumerate() {
                    match i {
                        0 => self.link(r0, *k, bn, "topology.bottleneck".into()),
                        _ => self.link(r0, *k, eg, format!("topology.egress[sink{i}]")),
                    }
                }
            }
        }
        bottleneck
    }

    /// Routers `r0..rk` in a chain, the long path and each bottleneck's cross
    /// traffic; the first bottleneck link's index (none without bottlenecks).
    /// The chain `r0..rk`; bottleneck `i` takes `hop_queues[i]` as its queue
    /// when given. The first bottleneck link's index.
    fn parking_lot(
        &mut self,
        k: usize,
        access: &LinkSpec,
        bn: &LinkSpec,
        hop_queues: &[QueueSpec],
        eg: &LinkSpec,
    ) -> Option<usize> {
        let routers: Vec<usize> = (0..=k).map(|i| self.node(format!("r{i}"), NodeKind::Router)).collect();
        let src_long = self.node("src_long".into(), NodeKind::Host);
        let sink_long = self.node("sink_long".into(), NodeKind::Host);
        let first_bottleneck = self.links.len();
        for i in 0..k {
            let path = format!("topology.bottleneck[r{i}->r{}]", i + 1);
            match hop_queues.get(i) {
                Some(q) => {
                    let spec = LinkSpec { queue: Some(q.clone()), ..bn.clone() };
                    self.link(routers[i], routers[i + 1], &spec, path);
                }
                None => self.link(routers[i], routers[i + 1], bn, path),
            }
        }
        self.link(src_long, routers[0], access, "topology.access[src_long]".into());
        self.link(routers[k], sink_long, eg, "topology.egress[sink_long]".into());
        for i in 0..k {
            let s = self.node(format!("src_x{i}"), NodeKind::Host);
            let d = self.node(format!("sink_x{i}"), NodeKind::Host);
            self.link(s, routers[i], access, format!("topology.access[src_x{i}]"));
            self.link(routers[i + 1], d, eg, format!("topology.egress[sink_x{i}]"));
        }
        (k > 0).then_some(first_bottleneck)
    }

    /// `in0..` (each with its own delay, if given) -> `r0` -> `r1` -> `sink0`;
    /// the bottleneck link's index.
    fn star(
        &mut self,
        ingresses: u32,
        access: &LinkSpec,
        delays: &[Dur],
        routers: bool,
        bn: &LinkSpec,
        eg: &LinkSpec,
    ) -> usize {
        let kind = if routers { NodeKind::Router } else { NodeKind::Host };
        let ins: Vec<usize> = (0..ingresses).map(|i| self.node(format!("in{i}"), kind)).collect();
        if routers {
            // Each ingress router's own host: a fast link without delay.
            let host_link = LinkSpec {
                rate: Rate(10_000_000_000),
                delay: Dur(0),
                stages: Vec::new(),
                reverse_stages: Vec::new(),
                ..access.clone()
            };
            for (i, n) in ins.iter().enumerate() {
                let h = self.node(format!("src{i}"), NodeKind::Host);
                self.link(h, *n, &host_link, format!("topology.access[src{i}]"));
            }
        }
        let r0 = self.node("r0".into(), NodeKind::Router);
        let r1 = self.node("r1".into(), NodeKind::Router);
        let sink = self.node("sink0".into(), NodeKind::Host);
        for (i, n) in ins.iter().enumerate() {
            let spec = match delays.get(i) {
                Some(d) => LinkSpec { delay: *d, ..access.clone() },
                None => access.clone(),
            };
            self.link(*n, r0, &spec, format!("topology.access[in{i}]"));
        }
        let bottleneck = self.links.len();
        self.link(r0, r1, bn, "topology.bottleneck".into());
        self.link(r1, sink, eg, "topology.egress".into());
        bottleneck
    }

    /// The nodes and links listed; a link naming an unknown node is left out.
    fn explicit(&mut self, nodes: &[NodeSpec], links: &[ExplicitLink]) {
        for n in nodes {
            self.node(n.name.clone(), n.kind);
        }
        for (i, l) in links.iter().enumerate() {
            let find = |name: &str| self.nodes.iter().position(|(n, _)| n == name);
            if let (Some(a), Some(b)) = (find(&l.a), find(&l.b)) {
                self.link(a, b, &l.link, format!("topology.links.{i}"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qoslab_core::units::{Dur, Rate};

    fn ls(rate: u64, ms: u64) -> LinkSpec {
        LinkSpec {
            rate: Rate::mbps(rate),
            delay: Dur::from_ms(ms),
            queue: None,
            reverse_queue: None,
            stages: vec![],
            reverse_stages: vec![],
            loss: 0.0,
            reverse_loss: 0.0,
            mace: None,
        }
    }
    fn fifo() -> QueueSpec {
        QueueSpec::Fifo { limit: qoslab_core::Limit::packets(100) }
    }

    #[test]
    fn dumbbell_one_router_has_bottleneck_to_sink0() {
        let t = Topology::Dumbbell {
            sources: 3,
            sinks: 1,
            routers: 1,
            access: ls(100, 5),
            bottleneck: ls(25, 20),
            egress: None,
            default_queue: fifo(),
        };
        let e = expand(&t);
        let names: Vec<&str> = e.nodes.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["src0", "src1", "src2", "r0", "sink0"]);
        let b = &e.links[e.bottleneck.unwrap()];
        assert_eq!((e.nodes[b.a].0.as_str(), e.nodes[b.b].0.as_str()), ("r0", "sink0"));
        assert_eq!(b.spec.rate, Rate::mbps(25));
        assert_eq!(e.resolve("src*"), vec![0, 1, 2]);
        assert_eq!(e.resolve("sink0"), vec![4]);
        assert!(e.resolve("nowhere").is_empty());
    }

    #[test]
    fn parking_lot_chains_routers_with_cross_traffic() {
        let t = Topology::ParkingLot {
            bottlenecks: 3,
            access: ls(100, 1),
            bottleneck: ls(10, 5),
            hop_queues: Vec::new(),
            egress: None,
            default_queue: fifo(),
        };
        let e = expand(&t);
        assert_eq!(e.nodes.iter().filter(|(_, k)| *k == NodeKind::Router).count(), 4);
        assert_eq!(e.links.iter().filter(|l| l.spec.rate == Rate::mbps(10)).count(), 3);
        let names = |l: &Link| format!("{}->{}", e.nodes[l.a].0, e.nodes[l.b].0);
        let bns: Vec<String> = e.bottlenecks.iter().map(|&i| names(&e.links[i])).collect();
        assert_eq!(bns, ["r0->r1", "r1->r2", "r2->r3"]);
        assert_eq!(e.bottleneck, Some(e.bottlenecks[0]));
        assert_eq!(e.resolve("src_x*").len(), 3);
    }

    #[test]
    fn star_gives_each_ingress_its_delay() {
        let t = Topology::Star {
            ingress_routers: false,
            ingresses: 2,
            access: ls(100, 1),
            ingress_delays: vec![Dur::from_ms(3), Dur::from_ms(7)],
            bottleneck: ls(10, 5),
            egress: None,
            default_queue: fifo(),
        };
        let e = expand(&t);
        assert_eq!(e.links[0].spec.delay, Dur::from_ms(3));
        assert_eq!(e.links[1].spec.delay, Dur::from_ms(7));
    }
}
