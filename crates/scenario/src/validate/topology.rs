//! Topology rules: counts of each preset, explicit nodes and links, link
//! rates, and every queue built at its link's rate (see the table in
//! [`super`]).

use super::*;

/// A preset's link specs with their paths: access, bottleneck, egress if set.
fn preset_links<'a>(
    access: &'a LinkSpec,
    bottleneck: &'a LinkSpec,
    egress: &'a Option<LinkSpec>,
) -> Vec<(String, &'a LinkSpec)> {
    let mut l = vec![("topology.access".to_string(), access), ("topology.bottleneck".to_string(), bottleneck)];
    if let Some(e) = egress {
        l.push(("topology.egress".to_string(), e));
    }
    l
}

impl Checker<'_> {
    fn link(&mut self, path: &str, l: &LinkSpec) {
        self.positive_rate(&format!("{path}.rate"), l.rate);
        self.loss(path, l);
        if l.rate.0 == 0 {
            return; // the queues need a rate; the rate's problem is reported
        }
        for (field, q) in [("queue", &l.queue), ("reverse_queue", &l.reverse_queue)] {
            if let Some(q) = q {
                self.queue(&format!("{path}.{field}"), q, l.rate);
            }
        }
        self.mace(path, l);
    }

    /// Every link direction's stages, built as the simulator builds them: with
    /// the network's nodes and the direction's queue (a classifier's rules name
    /// both). A preset's link spec serves many links; each error is given once.
    pub(super) fn stages(&mut self, net: &Expanded) {
        let mut seen = std::collections::BTreeSet::new();
        for l in &net.links {
            if l.spec.rate.0 == 0 {
                continue;
            }
            let dirs = [
                ("stages", &l.spec.stages, l.spec.queue.as_ref()),
                ("reverse_stages", &l.spec.reverse_stages, l.spec.reverse_queue.as_ref()),
            ];
            for (field, stages, queue) in dirs {
                let ctx = crate::registry::StageContext {
                    nodes: &net.nodes,
                    queue: Some(queue.unwrap_or(&net.default_queue)),
                    link_rate: l.spec.rate,
                };
                for (i, st) in stages.iter().enumerate() {
                    if let Err(e) = crate::registry::build_stage(st, qoslab_core::units::Time::ZERO, &ctx) {
                        let path = format!("{}.{field}.{i}.{}", l.path, e.field_path);
                        if seen.insert((path.clone(), e.message.clone())) {
                            self.err(path, e.message);
                        }
                    }
                }
            }
        }
    }

    /// A mace queue needs the link's `mace` table and the table a mace queue.
    fn mace(&mut self, path: &str, l: &LinkSpec) {
        let is_mace = |q: &Option<QueueSpec>| matches!(q, Some(QueueSpec::Mace { .. }));
        let queues = is_mace(&l.queue) || is_mace(&l.reverse_queue);
        match &l.mace {
            Some(m) => {
                if !queues {
                    self.err(
                        format!("{path}.mace"),
                        "is set but neither queue of the link is { type = \"mace\" }; allowed: a mace queue on the link",
                    );
                }
                if let Err(es) = crate::registry::mace::from_spec(m, qoslab_core::units::Time::ZERO, self.base_dir) {
                    for e in es {
                        match e.file {
                            // A problem inside the descriptor file: at its own file:line.
                            Some(file) => self.out.push(Diagnostic {
                                origin: file,
                                line: e.line,
                                path: e.field_path,
                                message: format!("{} (descriptor file of {path}.mace.descriptors)", e.message),
                            }),
                            None => self.err(format!("{path}.mace.{}", e.field_path), e.message),
                        }
                    }
                }
            }
            None if queues => self.err(
                format!("{path}.mace"),
                "is missing but a queue of the link is a mace queue; allowed: a mace table on the link",
            ),
            None => {}
        }
    }

    fn queue(&mut self, path: &str, q: &QueueSpec, rate: Rate) {
        match build_queue(q, rate) {
            Err(e) => self.err(format!("{path}.{}", e.field_path), e.message),
            Ok(_) => self.red_thresholds(path, q),
        }
    }

    /// A warning for RED thresholds at or above the queue's limit (in the
    /// queue's mode): the average rarely reaches them before the queue
    /// overflows, so RED's early drops give way to overflow drops.
    fn red_thresholds(&mut self, path: &str, q: &QueueSpec) {
        if let QueueSpec::Prio { bands, .. } = q {
            for (i, b) in bands.iter().enumerate() {
                self.red_thresholds(&format!("{path}.bands.{i}"), b);
            }
            return;
        }
        let Some(red) = q.red() else { return };
        let (limit, unit) = match red.mode {
            QueueMode::Packets => (red.limit.packets.map(f64::from), "packets"),
            QueueMode::Bytes => (red.limit.bytes.map(|b| b as f64), "bytes"),
        };
        let Some(limit) = limit else { return };
        for (field, th) in [("max_th", red.max_th), ("min_th", red.min_th)] {
            if th >= limit {
                self.warn(
                    format!("{path}.{field}"),
                    format!(
                        "{th} is not below the queue's limit ({limit} {unit}): RED's average rarely reaches it \
                         before the queue overflows, so arrivals are dropped by the limit (overlimit) instead \
                         of early; allowed (no warning): {field} below the limit"
                    ),
                );
                return;
            }
        }
    }

    fn count(&mut self, path: &str, n: u32, min: u32) {
        if n < min {
            self.err(path, format!("{n} is too few; allowed: at least {min}"));
        }
    }

    /// Checks the topology; `false` if its counts are unusable (so node
    /// names cannot be checked).
    pub(super) fn topology(&mut self, t: &Topology) -> bool {
        let before = self.out.len();
        let (links, default_queue): (Vec<(String, &LinkSpec)>, &QueueSpec) = match t {
            Topology::Dumbbell { sources, sinks, routers, access, bottleneck, egress, default_queue } => {
                self.dumbbell(*sources, *sinks, *routers, egress.is_some());
                (preset_links(access, bottleneck, egress), default_queue)
            }
            Topology::ParkingLot { bottlenecks, access, bottleneck, hop_queues, egress, default_queue } => {
                self.count("topology.bottlenecks", *bottlenecks, 1);
                self.max_nodes(3 * *bottlenecks as u64 + 3);
                if !hop_queues.is_empty() && hop_queues.len() != *bottlenecks as usize {
                    self.err(
                        "topology.hop_queues",
                        format!(
                            "has {} entries for {bottlenecks} bottlenecks; allowed: none (every bottleneck uses \
                             bottleneck.queue) or exactly {bottlenecks}, the queue of r{{i}} -> r{{i+1}} at entry i",
                            hop_queues.len()
                        ),
                    );
                }
                if bottleneck.rate.0 > 0 {
                    for (i, q) in hop_queues.iter().enumerate() {
                        self.queue(&format!("topology.hop_queues.{i}"), q, bottleneck.rate);
                    }
                }
                (preset_links(access, bottleneck, egress), default_queue)
            }
            Topology::Star {
                ingresses,
                access,
                ingress_delays,
                ingress_routers,
                bottleneck,
                egress,
                default_queue,
            } => {
                self.count("topology.ingresses", *ingresses, 1);
                if !ingress_delays.is_empty() && ingress_delays.len() != *ingresses as usize {
                    self.err(
                        "topology.ingress_delays",
                        format!(
                            "has {} entries for {ingresses} ingresses; allowed: none (every ingress uses \
                             access.delay) or exactly {ingresses}",
                            ingress_delays.len()
                        ),
                    );
                }
                self.max_nodes(*ingresses as u64 * if *ingress_routers { 2 } else { 1 } + 3);
                (preset_links(access, bottleneck, egress), default_queue)
            }
            Topology::Explicit { nodes, links, default_queue } => {
                self.explicit(nodes, links);
                let l = links.iter().enumerate().map(|(i, l)| (format!("topology.links.{i}"), &l.link)).collect();
                (l, default_queue)
            }
        };
        for (path, l) in &links {
            self.link(path, l);
        }
        let rate = links.iter().map(|(_, l)| l.rate).find(|r| r.0 > 0).unwrap_or(Rate(1));
        self.queue("topology.default_queue", default_queue, rate);
        if let QueueSpec::Mace { .. } = default_queue {
            self.err(
                "topology.default_queue.type",
                format!(
                    "mace needs a link's mace table; allowed: {} (set mace on the link's queue)",
                    crate::registry::queue_types_except_mace().join(", ")
                ),
            );
        }
        self.out.len() == before
    }

    /// A dumbbell's counts, and the one-router rule (one sink, no egress).
    fn dumbbell(&mut self, sources: u32, sinks: u32, routers: u32, egress: bool) {
        self.count("topology.sources", sources, 1);
        self.count("topology.sinks", sinks, 1);
        if !(1..=2).contains(&routers) {
            self.err("topology.routers", format!("{routers} routers; allowed: 1 or 2"));
        }
        if routers == 1 && sinks > 1 {
            self.err(
                "topology.sinks",
                format!(
                    "{sinks} sinks with one router; allowed: 1 (the bottleneck is r0 -> sink0), \
                     or set routers = 2 for several sinks behind one bottleneck"
                ),
            );
        }
        if routers == 1 && egress {
            self.err(
                "topology.egress",
                "is unused with one router (the bottleneck r0 -> sink0 is the only link to a sink); \
                 allowed: remove it, or set routers = 2",
            );
        }
        self.max_nodes(sources as u64 + sinks as u64 + 2);
    }

    fn max_nodes(&mut self, n: u64) {
        if n > MAX_NODES {
            self.err("topology", format!("has {n} nodes; allowed: at most {MAX_NODES}"));
        }
    }

    fn explicit(&mut self, nodes: &[NodeSpec], links: &[ExplicitLink]) {
        if nodes.is_empty() {
            self.err("topology.nodes", "is empty; allowed: a list of nodes ({name = \"h0\", kind = \"host\"}, ...)");
        }
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, n) in nodes.iter().enumerate() {
            let path = format!("topology.nodes.{i}.name");
            if !is_name(&n.name, ".") {
                self.err(
                    path,
                    format!("{:?} is not a node name; allowed: letters, digits, \"_\", \"-\", \".\"", n.name),
                );
            } else if n.name.len() > MAX_NODE_NAME {
                self.err(
                    &path,
                    format!(
                        "is {} characters long; allowed: at most {MAX_NODE_NAME} (two node names name a trace \
                         file, A_to_B.pcapng)",
                        n.name.len()
                    ),
                );
            } else if let Some(j) = seen.insert(&n.name, i) {
                self.err(
                    path,
                    format!("{:?} is already the name of topology.nodes.{j}; allowed: unique names", n.name),
                );
            }
        }
        let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).filter(|n| seen.contains_key(n)).collect();
        // A node whose own name is refused is still there: its links are not
        // "to no node" (that message would contradict the list of nodes).
        let refused: BTreeSet<&str> = nodes.iter().map(|n| n.name.as_str()).filter(|n| !seen.contains_key(n)).collect();
        let mut pairs: BTreeMap<(&str, &str), usize> = BTreeMap::new();
        for (i, l) in links.iter().enumerate() {
            for (end, name) in [("a", &l.a), ("b", &l.b)] {
                if !seen.contains_key(name.as_str()) && !refused.contains(name.as_str()) {
                    self.err(format!("topology.links.{i}.{end}"), unknown_name("node", name, &names));
                }
            }
            if l.a == l.b {
                self.err(
                    format!("topology.links.{i}.b"),
                    format!("links node {:?} to itself; allowed: two different nodes", l.a),
                );
                continue;
            }
            let key = if l.a <= l.b { (l.a.as_str(), l.b.as_str()) } else { (l.b.as_str(), l.a.as_str()) };
            if let Some(j) = pairs.insert(key, i) {
                pairs.insert(key, j);
                self.err(
                    format!("topology.links.{i}"),
                    format!(
                        "joins {:?} and {:?} like topology.links.{j}; allowed: one link between two nodes \
                         (routing has no way to choose between parallel links: remove one, or put a router \
                         between them)",
                        l.a, l.b
                    ),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;

    #[test]
    fn parallel_links_are_refused_naming_both() {
        let t = EXPLICIT.replace(
            "  { a = \"r0\", b = \"h1\", rate = \"10Mbps\", delay = \"1ms\" },",
            "  { a = \"r0\", b = \"h1\", rate = \"10Mbps\", delay = \"1ms\" },\n  { a = \"h1\", b = \"r0\", rate = \"1Mbps\", delay = \"1ms\" },",
        );
        let m = message(&t, "topology.links.2");
        assert!(m.starts_with("joins \"h1\" and \"r0\" like topology.links.1; allowed: one link"), "{m}");
    }

    #[test]
    fn a_node_with_a_refused_name_is_not_also_missing() {
        let t = EXPLICIT.replace("\"h1\"", "\"宛先\"");
        let ps = problems(&t);
        assert_eq!(ps.len(), 1, "{ps:?}");
        assert_eq!(ps[0].0, "topology.nodes.2.name");
        assert!(ps[0].1.contains("is not a node name"), "{ps:?}");
    }

    #[test]
    fn an_unknown_link_end_suggests_the_closest_node() {
        let t = EXPLICIT.replace("{ a = \"r0\", b = \"h1\"", "{ a = \"r0\", b = \"H1\"");
        let m = message(&t, "topology.links.1.b");
        assert!(m.starts_with("no node named \"H1\"; did you mean \"h1\" or \"h0\"?"), "{m}");
    }

    #[test]
    fn link_rates_must_be_positive_but_delays_may_be_zero() {
        assert_eq!(paths_with(BASE, "rate = \"100Mbps\"", "rate = \"0bps\""), ["topology.access.rate"]);
        assert_eq!(paths_with(BASE, "delay = \"1ms\"", "delay = \"0s\""), Vec::<String>::new());
    }

    #[test]
    fn queues_are_built_and_their_errors_carry_the_field_path() {
        let t = BASE.replace("min_th = 5, max_th = 15", "min_th = 15, max_th = 5");
        assert_eq!(message(&t, "topology.bottleneck.queue.max_th"), "red.max_th (5) must exceed min_th (15)");
        let t = BASE.replace(
            "access = { rate = \"100Mbps\", delay = \"1ms\" }",
            "access = { rate = \"100Mbps\", delay = \"1ms\", reverse_queue = { type = \"fifo\", limit = \"0pkts\" } }",
        );
        assert!(message(&t, "topology.access.reverse_queue.limit").starts_with("fifo.limit"));
        let t = BASE.replace(
            "sources = 2",
            "sources = 2\ndefault_queue = { type = \"red\", limit = \"9pkts\", min_th = 1, max_th = 2, w_q = 0 }",
        );
        assert_eq!(message(&t, "topology.default_queue.w_q"), "red.w_q (0) must be in (0, 1]");
        let t = BASE.replace(
            "queue = { type = \"red\", limit = \"60pkts\", min_th = 5, max_th = 15 }",
            "queue = { type = \"prio\", bands = [{ type = \"fifo\", limit = \"5pkts\" }, { type = \"prio\", bands = [] }] }",
        );
        assert!(message(&t, "topology.bottleneck.queue.bands.1.bands").contains("is empty"));
    }

    #[test]
    fn a_class_beyond_the_bands_is_not_an_error() {
        let t = BASE
            .replace(
                "queue = { type = \"red\", limit = \"60pkts\", min_th = 5, max_th = 15 }",
                "queue = { type = \"prio\", bands = [{ type = \"fifo\", limit = \"5pkts\" }] }",
            )
            .replace("size = \"1000B\"", "size = \"1000B\"\nclass = 7");
        assert_eq!(problems(&t), vec![]);
    }

    #[test]
    fn dumbbell_counts_and_the_one_router_rule() {
        assert_eq!(paths_with(BASE, "sources = 2", "sources = 0"), ["topology.sources"]);
        assert_eq!(paths_with(BASE, "sources = 2", "sources = 2\nsinks = 0"), ["topology.sinks"]);
        assert_eq!(paths_with(BASE, "sources = 2", "sources = 2\nrouters = 3"), ["topology.routers"]);
        assert_eq!(paths_with(BASE, "sources = 2", "sources = 2\nsinks = 2"), ["topology.sinks"]);
        let egress = "sources = 2\negress = { rate = \"1Gbps\", delay = \"1ms\" }";
        assert_eq!(paths_with(BASE, "sources = 2", egress), ["topology.egress"]);
        let two = format!("{egress}\nrouters = 2\nsinks = 2");
        assert_eq!(
            paths_with(&BASE.replace("dst = \"sink0\"", "dst = \"sink*\""), "sources = 2", &two),
            Vec::<String>::new()
        );
    }

    #[test]
    fn parking_lots_need_a_bottleneck_and_stars_an_ingress_and_matching_delays() {
        let pl = BASE
            .replace("preset = \"dumbbell\"\nsources = 2", "preset = \"parking_lot\"\nbottlenecks = 0")
            .replace("src = \"src*\"\ndst = \"sink0\"", "src = \"src_long\"\ndst = \"sink_long\"");
        assert_eq!(paths_with(&pl, "", ""), ["topology.bottlenecks"]);
        assert_eq!(paths_with(&pl, "bottlenecks = 0", "bottlenecks = 2"), Vec::<String>::new());
        let star = BASE
            .replace("preset = \"dumbbell\"\nsources = 2", "preset = \"star\"\ningresses = 2")
            .replace("src = \"src*\"", "src = \"in*\"");
        assert_eq!(paths_with(&star, "", ""), Vec::<String>::new());
        assert_eq!(paths_with(&star, "ingresses = 2", "ingresses = 0"), ["topology.ingresses"]);
        assert_eq!(
            paths_with(&star, "ingresses = 2", "ingresses = 2\ningress_delays = [\"1ms\"]"),
            ["topology.ingress_delays"]
        );
        assert_eq!(
            paths_with(&star, "ingresses = 2", "ingresses = 2\ningress_delays = [\"1ms\", \"0s\"]"),
            Vec::<String>::new()
        );
    }

    // A broken topology stops the checks of traffic endpoints (no cascade).
    #[test]
    fn explicit_nodes_must_be_named_uniquely_and_links_must_join_two_existing_nodes() {
        assert_eq!(
            paths_with(EXPLICIT, "{ name = \"h1\", kind = \"host\" }", "{ name = \"\", kind = \"host\" }"),
            ["topology.nodes.2.name", "topology.links.1.b"]
        );
        assert_eq!(
            paths_with(EXPLICIT, "{ name = \"h1\", kind = \"host\" }", "{ name = \"h0\", kind = \"host\" }"),
            ["topology.nodes.2.name", "topology.links.1.b"]
        );
        let m = message(&EXPLICIT.replace("a = \"r0\", b = \"h1\"", "a = \"r0\", b = \"r9\""), "topology.links.1.b");
        assert_eq!(m, "no node named \"r9\"; did you mean \"r0\"? allowed: h0, r0, h1");
        assert_eq!(paths_with(EXPLICIT, "a = \"r0\", b = \"h1\"", "a = \"r0\", b = \"r0\""), ["topology.links.1.b"]);
        let empty = EXPLICIT.replace(
            "nodes = [{ name = \"h0\", kind = \"host\" }, { name = \"r0\", kind = \"router\" }, { name = \"h1\", kind = \"host\" }]",
            "nodes = []",
        );
        assert!(paths_with(&empty, "", "").contains(&"topology.nodes".to_string()));
    }

    #[test]
    fn topologies_are_capped_in_size() {
        assert_eq!(paths_with(BASE, "sources = 2", "sources = 4000000"), ["topology"]);
    }
}
