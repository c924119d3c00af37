//! Expands any topology preset into explicit nodes and duplex links, and
//! resolves node patterns. The simulator builds only from this form; the
//! validator checks names against it. Naming rules are in [`super::model`].

use super::model::{LinkSpec, NodeKind, QueueSpec, Topology};

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

/// Expands `t`. Node names not defined by an explicit topology are
/// reported by the validator, not here: unknown names map to no link.
pub fn expand(t: &Topology) -> Expanded {
    let mut nodes: Vec<(String, NodeKind)> = Vec::new();
    let mut links = Vec::new();
    let add = |nodes: &mut Vec<(String, NodeKind)>, name: String, kind| {
        nodes.push((name, kind));
        nodes.len() - 1
    };
    let with_delay = |s: &LinkSpec, d| LinkSpec { delay: d, ..s.clone() };
    match t {
        Topology::Dumbbell { sources, sinks, routers, access, bottleneck, egress, default_queue } => {
            let srcs: Vec<usize> = (0..*sources).map(|i| add(&mut nodes, format!("src{i}"), NodeKind::Host)).collect();
            let r0 = add(&mut nodes, "r0".into(), NodeKind::Router);
            let r1 = (*routers >= 2).then(|| add(&mut nodes, "r1".into(), NodeKind::Router));
            let sinks_: Vec<usize> = (0..*sinks).map(|i| add(&mut nodes, format!("sink{i}"), NodeKind::Host)).collect();
            for (i, s) in srcs.iter().enumerate() {
                links.push(Link { a: *s, b: r0, spec: access.clone(), path: format!("topology.access[src{i}]") });
            }
            let bottleneck_idx = links.len();
            let eg = egress.as_ref().unwrap_or(access);
            match r1 {
                Some(r1) => {
                    links.push(Link { a: r0, b: r1, spec: bottleneck.clone(), path: "topology.bottleneck".into() });
                    for (i, k) in sinks_.iter().enumerate() {
                        links.push(Link { a: r1, b: *k, spec: eg.clone(), path: format!("topology.egress[sink{i}]") });
                    }
                }
                None => {
                    for (i, k) in sinks_.iter().enumerate() {
                        let (spec, path) = if i == 0 {
                            (bottleneck.clone(), "topology.bottleneck".to_string())
                        } else {
                            (eg.clone(), format!("topology.egress[sink{i}]"))
                        };
                        links.push(Link { a: r0, b: *k, spec, path });
                    }
                }
            }
            Expanded { nodes, links, default_queue: default_queue.clone(), bottleneck: Some(bottleneck_idx) }
        }
        Topology::ParkingLot { bottlenecks, access, bottleneck, egress, default_queue } => {
            let k = *bottlenecks as usize;
            let routers: Vec<usize> = (0..=k).map(|i| add(&mut nodes, format!("r{i}"), NodeKind::Router)).collect();
            let src_long = add(&mut nodes, "src_long".into(), NodeKind::Host);
            let sink_long = add(&mut nodes, "sink_long".into(), NodeKind::Host);
            let eg = egress.as_ref().unwrap_or(access);
            let first_bottleneck = links.len();
            for i in 0..k {
                links.push(Link {
                    a: routers[i],
                    b: routers[i + 1],
                    spec: bottleneck.clone(),
                    path: format!("topology.bottleneck[r{i}->r{}]", i + 1),
                });
            }
            links.push(Link {
                a: src_long,
                b: routers[0],
                spec: access.clone(),
                path: "topology.access[src_long]".into(),
            });
            links.push(Link {
                a: routers[k],
                b: sink_long,
                spec: eg.clone(),
                path: "topology.egress[sink_long]".into(),
            });
            for i in 0..k {
                let s = add(&mut nodes, format!("src_x{i}"), NodeKind::Host);
                let d = add(&mut nodes, format!("sink_x{i}"), NodeKind::Host);
                links.push(Link {
                    a: s,
                    b: routers[i],
                    spec: access.clone(),
                    path: format!("topology.access[src_x{i}]"),
                });
                links.push(Link {
                    a: routers[i + 1],
                    b: d,
                    spec: eg.clone(),
                    path: format!("topology.egress[sink_x{i}]"),
                });
            }
            Expanded {
                nodes,
                links,
                default_queue: default_queue.clone(),
                bottleneck: (k > 0).then_some(first_bottleneck),
            }
        }
        Topology::Star { ingresses, access, ingress_delays, bottleneck, egress, default_queue } => {
            let ins: Vec<usize> = (0..*ingresses).map(|i| add(&mut nodes, format!("in{i}"), NodeKind::Host)).collect();
            let r0 = add(&mut nodes, "r0".into(), NodeKind::Router);
            let r1 = add(&mut nodes, "r1".into(), NodeKind::Router);
            let sink = add(&mut nodes, "sink0".into(), NodeKind::Host);
            for (i, n) in ins.iter().enumerate() {
                let spec = match ingress_delays.get(i) {
                    Some(d) => with_delay(access, *d),
                    None => access.clone(),
                };
                links.push(Link { a: *n, b: r0, spec, path: format!("topology.access[in{i}]") });
            }
            let b = links.len();
            links.push(Link { a: r0, b: r1, spec: bottleneck.clone(), path: "topology.bottleneck".into() });
            links.push(Link {
                a: r1,
                b: sink,
                spec: egress.clone().unwrap_or_else(|| access.clone()),
                path: "topology.egress".into(),
            });
            Expanded { nodes, links, default_queue: default_queue.clone(), bottleneck: Some(b) }
        }
        Topology::Explicit { nodes: ns, links: ls, default_queue } => {
            for n in ns {
                add(&mut nodes, n.name.clone(), n.kind);
            }
            let find = |name: &str| nodes.iter().position(|(n, _)| n == name);
            for (i, l) in ls.iter().enumerate() {
                if let (Some(a), Some(b)) = (find(&l.a), find(&l.b)) {
                    links.push(Link { a, b, spec: l.link.clone(), path: format!("topology.links.{i}") });
                }
            }
            Expanded { nodes, links, default_queue: default_queue.clone(), bottleneck: None }
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
            egress: None,
            default_queue: fifo(),
        };
        let e = expand(&t);
        assert_eq!(e.nodes.iter().filter(|(_, k)| *k == NodeKind::Router).count(), 4);
        assert_eq!(e.links.iter().filter(|l| l.spec.rate == Rate::mbps(10)).count(), 3);
        assert_eq!(e.resolve("src_x*").len(), 3);
    }

    #[test]
    fn star_gives_each_ingress_its_delay() {
        let t = Topology::Star {
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
