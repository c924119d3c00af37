//! Traffic rules: group names, endpoints and routes, models, sizes,
//! times and flow arrivals (see the table in [`super`]).

use super::*;

impl Checker<'_> {
    /// The nodes `pattern` matches, if it is well formed and matches hosts only.
    fn endpoints(&mut self, path: &str, pattern: &str, net: &Expanded) -> Option<Vec<usize>> {
        let allowed = "a node name, or a prefix followed by \"*\" (\"src*\")";
        let star = pattern.find('*');
        if pattern.is_empty() || star.is_some_and(|i| i + 1 != pattern.len()) {
            self.err(path, format!("{pattern:?} is not a node pattern; allowed: {allowed}"));
            return None;
        }
        let hosts: Vec<&str> =
            net.nodes.iter().filter(|(_, k)| *k == NodeKind::Host).map(|(n, _)| n.as_str()).collect();
        let m = net.resolve(pattern);
        if m.is_empty() {
            let near = closest(pattern.trim_end_matches('*'), &hosts);
            let hint = if near.is_empty() || star.is_some() {
                String::new()
            } else {
                format!(" did you mean {}?", near.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(" or "))
            };
            self.err(path, format!("{pattern:?} matches no node;{hint} allowed: hosts {}", names_list(&hosts)));
            return None;
        }
        if let Some(&r) = m.iter().find(|&&i| net.nodes[i].1 == NodeKind::Router) {
            self.err(
                path,
                format!(
                    "{pattern:?} matches router {:?}; allowed: hosts only ({})",
                    net.nodes[r].0,
                    names_list(&hosts)
                ),
            );
            return None;
        }
        Some(m)
    }

    pub(super) fn traffic(&mut self, s: &Scenario, net: Option<&Expanded>, base_dir: Option<&Path>) {
        let mut names: BTreeMap<&str, usize> = BTreeMap::new();
        let mut reach = net.map(Reach::new);
        for (gi, g) in s.traffic.iter().enumerate() {
            let p = |f: &str| format!("traffic.{gi}.{f}");
            if !is_name(&g.name, "") {
                self.err(
                    p("name"),
                    format!("{:?} is not a group name; allowed: letters, digits, \"_\", \"-\"", g.name),
                );
            } else if g.name.len() > MAX_NAME {
                self.err(
                    p("name"),
                    format!(
                        "is {} characters long; allowed: at most {MAX_NAME} (it names files such as \
                         arrivals_NAME.csv)",
                        g.name.len()
                    ),
                );
            } else if let Some(j) = names.insert(&g.name, gi) {
                self.err(p("name"), format!("{:?} is already the name of traffic.{j}; allowed: unique names", g.name));
            }
            if g.arrivals.is_none() && !(1..=MAX_FLOWS).contains(&g.flows) {
                self.err(p("flows"), format!("{} flows; allowed: 1 to {MAX_FLOWS}", g.flows));
            }
            if let Some(net) = net {
                let src = self.endpoints(&p("src"), &g.src, net);
                let dst = self.endpoints(&p("dst"), &g.dst, net);
                if let (Some(src), Some(dst), Some(reach)) = (src, dst, reach.as_mut()) {
                    self.pairs(gi, g, &src, &dst, net, reach);
                }
            }
            self.model(gi, &g.model);
            self.agent_model(gi, g);
            self.size(gi, g);
            if g.dscp > 63 {
                self.err(p("dscp"), format!("{} does not fit in six bits; allowed: 0 to 63", g.dscp));
            }
            if s.duration.0 > 0 && g.start >= s.duration {
                self.err(
                    p("start"),
                    format!(
                        "{} is not before the end of the run ({}); allowed: less than duration",
                        g.start, s.duration
                    ),
                );
            }
            if let Some(stop) = g.stop {
                if stop <= g.start {
                    self.err(p("stop"), format!("{stop} is not after start ({}); allowed: later than start", g.start));
                }
            }
            self.start_jitter(gi, g, s.duration);
            self.tcp_header(gi, g);
            if let Some(r) = g.reserve {
                self.positive_rate(&p("reserve"), r);
            }
            if !(g.randomize.is_finite() && (0.0..1.0).contains(&g.randomize)) {
                self.err(
                    p("randomize"),
                    format!("{} is not a fraction of the packet spacing; allowed: 0 to below 1", g.randomize),
                );
            } else if g.randomize > 0.0
                && !matches!(g.model, TrafficModel::Cbr { .. } | TrafficModel::OnOff { .. } | TrafficModel::Vtr { .. })
            {
                self.err(
                    p("randomize"),
                    format!(
                        "applies to the packet grid of cbr, on_off and vtr flows, not to model {}; allowed: 0 here",
                        crate::registry::tag_of(&g.model, "model", crate::registry::TRAFFIC_MODELS)
                    ),
                );
            }
            if g.admitted && s.pcn.is_none() {
                self.err(
                    p("admitted"),
                    "is true but the scenario has no [pcn] table, so no domain ingress asks for \
                     admission; allowed: true with a [pcn] table (flows rerouted into a PCN domain), \
                     else false or absent",
                );
            }
            self.packetization(gi, g);
            self.send_jitter(gi, g);
            self.vtr(gi, g, base_dir);
            if let Some(a) = &g.arrivals {
                self.arrivals(&p("arrivals"), a, base_dir);
            }
        }
    }

    /// A warning when fixed flows may start after their group ends: each
    /// starts at `start` plus a uniform draw in [0, `start_jitter`].
    fn start_jitter(&mut self, gi: usize, g: &TrafficGroup, duration: Dur) {
        let end = g.stop.map_or(duration, |x| x.min(duration));
        let span = end.0.saturating_sub(g.start.0);
        if g.arrivals.is_some() || g.start_jitter.0 == 0 || span == 0 || g.start_jitter.0 < span {
            return;
        }
        let late = (g.start_jitter.0 - span) as f64 / g.start_jitter.0 as f64;
        self.warn(
            format!("traffic.{gi}.start_jitter"),
            format!(
                "{} is not shorter than the group's time to send ({} from start {} to {}): flows start at a \
                 uniform time up to start_jitter after start, so about {:.0}% of its {} flow(s) never start; \
                 allowed (no warning): a start_jitter below {}",
                g.start_jitter,
                Dur(span),
                g.start,
                end,
                late * 100.0,
                g.flows,
                Dur(span)
            ),
        );
    }

    /// A warning for TCP groups without `header`: segments carry no header
    /// bytes and ACKs are 1 byte on the wire (an ACK's size is the header).
    fn tcp_header(&mut self, gi: usize, g: &TrafficGroup) {
        if g.header.0 == 0 && matches!(g.model, TrafficModel::Ftp { .. } | TrafficModel::Transfer { .. }) {
            self.warn(
                format!("traffic.{gi}.header"),
                "is not set (0 B) for a TCP group: its segments carry no header bytes and its ACKs are 1 byte \
                 on the wire (an ACK is header bytes only); allowed (no warning): the header bytes per packet, \
                 e.g. header = \"40B\" (IPv4 + TCP)",
            );
        }
    }

    /// Fixed `dst_port`s: the simulator gives the run's `n`-th flow (every
    /// group, fixed flows first in group order, then arrivals as they come)
    /// the source port `1024 + n mod 64512`; a group's fixed `dst_port`
    /// replaces the destination port, so two flows of one address pair and
    /// port whose numbers differ by a multiple of 64,512 would share a key
    /// and the run would stop. Fixed flows are checked exactly (an error);
    /// flows of arrival processes or of `src_choice = "random"` are numbered
    /// as they come, so a run that may make more than 64,512 flows gets a
    /// warning. `flows`: each group's flows over the run (the estimate's).
    pub(super) fn dst_ports(&mut self, s: &Scenario, net: &Expanded, flows: &[f64]) {
        const PORTS: u64 = 64_512;
        let total: f64 = flows.iter().sum();
        if s.traffic.iter().all(|g| g.dst_port.is_none()) || total <= PORTS as f64 {
            return;
        }
        // (source node, destination node, destination port, source port) -> (group, flow, run-wide number)
        type Key = (usize, usize, u16, u16);
        let mut seen: std::collections::HashMap<Key, (usize, u32, u64)> = Default::default();
        let fixed_ports: BTreeSet<u16> = s.traffic.iter().filter_map(|g| g.dst_port).collect();
        let mut n: u64 = 0;
        for (gi, g) in s.traffic.iter().enumerate() {
            let dynamic = g.arrivals.is_some() || g.src_choice == SrcChoice::Random;
            if dynamic {
                if let Some(port) = g.dst_port {
                    self.warn(
                        format!("traffic.{gi}.dst_port"),
                        format!(
                            "{port} is fixed and the run may make about {} flows: flows are numbered as they \
                             come, the n-th gets source port 1024 + n mod 64512, so two flows of one address \
                             pair with this port 64,512 flows apart would share their addresses and ports and \
                             the run would stop; allowed (no warning): at most 64,512 flows in the run (e.g. \
                             arrivals.max_flows), or no dst_port",
                            estimate::show_count(total)
                        ),
                    );
                }
                if g.arrivals.is_none() {
                    n += u64::from(g.flows);
                }
                continue;
            }
            let (src, dst) = (net.resolve(&g.src), net.resolve(&g.dst));
            if src.is_empty() || dst.is_empty() {
                n += u64::from(g.flows);
                continue;
            }
            for i in 0..g.flows {
                let num = n + u64::from(i);
                let port = g.dst_port.unwrap_or(1024 + ((num / PORTS) % PORTS) as u16);
                if g.dst_port.is_none() && !fixed_ports.contains(&port) {
                    continue; // a derived port repeats only 64,512^2 flows later
                }
                let (a, b) = (src[i as usize % src.len()], dst[i as usize % dst.len()]);
                let key = (a, b, port, (num % PORTS) as u16);
                if let Some((gj, j, other_n)) = seen.insert(key, (gi, i, num)) {
                    let (an, bn) = (&net.nodes[a].0, &net.nodes[b].0);
                    let other = &s.traffic[gj].name;
                    let field = if g.dst_port.is_some() { gi } else { gj };
                    self.err(
                        format!("traffic.{field}.dst_port"),
                        format!(
                            "flow {}.{i} would have the addresses, ports and protocol of flow {other}.{j} \
                             ({an} -> {bn}, destination port {port}): the run's n-th flow gets source port \
                             1024 + n mod 64512 and these two are 64,512 flows apart (n = {} and {}); allowed: \
                             at most {i} flows in {} here, sources or sinks whose count does not divide 64,512 \
                             (flows take them in turn), or no dst_port",
                            g.name, other_n, num, g.name
                        ),
                    );
                    return;
                }
            }
            n += u64::from(g.flows);
        }
    }

    /// Flow `i` goes from `src[i % n_src]` (or, with `src_choice = "random"`,
    /// any match of `src`) to `dst[i % n_dst]`: no flow to itself, and a
    /// route through routers for every pair.
    fn pairs(&mut self, gi: usize, g: &TrafficGroup, src: &[usize], dst: &[usize], net: &Expanded, reach: &mut Reach) {
        let pairs: Vec<(usize, usize)> = match g.src_choice {
            SrcChoice::RoundRobin => {
                let cycle = src.len() / gcd(src.len(), dst.len()) * dst.len();
                let n = if g.arrivals.is_some() { cycle } else { (g.flows as usize).min(cycle) };
                (0..n.min(MAX_FLOWS as usize)).map(|i| (src[i % src.len()], dst[i % dst.len()])).collect()
            }
            SrcChoice::Random => {
                let m = if g.arrivals.is_some() { dst.len() } else { (g.flows as usize).min(dst.len()) };
                dst[..m].iter().flat_map(|&b| src.iter().map(move |&a| (a, b))).take(MAX_FLOWS as usize).collect()
            }
        };
        let mut seen = BTreeSet::new();
        for (i, (a, b)) in pairs.into_iter().enumerate() {
            if !seen.insert((a, b)) {
                continue;
            }
            let (an, bn) = (&net.nodes[a].0, &net.nodes[b].0);
            if a == b {
                self.err(
                    format!("traffic.{gi}.dst"),
                    format!(
                        "{} would go from {an:?} to itself; allowed: a destination other than each \
                         flow's source ({})",
                        match g.src_choice {
                            SrcChoice::RoundRobin => format!("flow {}.{i}", g.name),
                            SrcChoice::Random => format!("a flow of {}", g.name),
                        },
                        match g.src_choice {
                            SrcChoice::RoundRobin => "flows take the matches of src and dst in turn",
                            SrcChoice::Random => "src_choice = \"random\": a flow may come from any match of src",
                        }
                    ),
                );
                return;
            }
            if !reach.connects(net, a, b) {
                self.err(
                    format!("traffic.{gi}.dst"),
                    format!(
                        "no route from {an:?} to {bn:?}; allowed: endpoints joined by links through routers \
                         (hosts do not forward packets)"
                    ),
                );
                return;
            }
        }
    }

    fn model(&mut self, gi: usize, m: &TrafficModel) {
        let p = |f: &str| format!("traffic.{gi}.{f}");
        match m {
            TrafficModel::Cbr { rate, interval } => self.rate_or_interval(gi, "rate", *rate, *interval),
            TrafficModel::Poisson { rate } => self.positive_rate(&p("rate"), *rate),
            TrafficModel::OnOff { peak, interval, on, off, dist, shape } => {
                self.rate_or_interval(gi, "peak", *peak, *interval);
                self.positive_dur(&p("on"), *on);
                self.positive_dur(&p("off"), *off);
                if *dist == PeriodDist::Pareto && !(*shape > 1.0 && shape.is_finite()) {
                    self.err(
                        p("shape"),
                        format!("{shape} is not above 1; allowed: a Pareto shape > 1 (the mean period is infinite otherwise)"),
                    );
                }
            }
            TrafficModel::Vtr { interval, .. } => self.positive_dur(&p("interval"), *interval),
            // See `agent_model` (tcp.rs).
            TrafficModel::Ftp { .. } | TrafficModel::Transfer { .. } | TrafficModel::MmApp { .. } => {}
        }
    }

    /// A `vtr` group: fixed packet sizes, and a trace that reads (a file, as
    /// the simulator reads it: each bad row at its own line) or a sound
    /// generator setting. A file trace's mean rate is kept for the estimate.
    fn vtr(&mut self, gi: usize, g: &TrafficGroup, base_dir: Option<&Path>) {
        let TrafficModel::Vtr { trace, .. } = &g.model else { return };
        if let SizeSpec::Random(_) = g.size {
            self.err(
                format!("traffic.{gi}.size"),
                "is random; allowed: a fixed packet size for vtr (a frame is cut into packets of this size)",
            );
        }
        let field = format!("traffic.{gi}.trace");
        match trace {
            VtrTrace::Synthetic { synthetic } => {
                for (f, m) in crate::vtr::check_synthetic(synthetic) {
                    self.err(format!("{field}.synthetic.{f}"), m);
                }
            }
            VtrTrace::File(file) => {
                let full = match base_dir {
                    Some(d) => d.join(file),
                    None => Path::new(file).to_path_buf(),
                };
                if file.is_empty() || !full.is_file() {
                    self.err(
                        &field,
                        format!(
                            "no file {file:?} (looked for {}); allowed: a frame-trace file relative to the \
                             scenario's folder, or {{ synthetic = {{ ... }} }}",
                            full.display()
                        ),
                    );
                    return;
                }
                match crate::vtr::read_frame_trace(&full, self.origin, self.lines.line_of(&field), &field) {
                    Ok(t) => {
                        self.replay_rows.insert(field, t.mean_bps().round() as u64);
                    }
                    Err(d) => self.out.push(d),
                }
            }
        }
    }

    /// `packetization` applies to `on_off` groups only.
    fn packetization(&mut self, gi: usize, g: &TrafficGroup) {
        if g.packetization.is_some() && !matches!(g.model, TrafficModel::OnOff { .. }) {
            self.err(
                format!("traffic.{gi}.packetization"),
                format!(
                    "applies to the ON periods of on_off flows, not to model {}; allowed: leave it out here",
                    crate::registry::tag_of(&g.model, "model", crate::registry::TRAFFIC_MODELS)
                ),
            );
        }
    }

    /// `send_jitter` applies to the packet grid of `cbr` and `on_off` groups; its `max` is
    /// positive and at most the packet spacing (so a flow's packets keep their order).
    fn send_jitter(&mut self, gi: usize, g: &TrafficGroup) {
        let Some(SendJitter::Uniform { max }) = &g.send_jitter else { return };
        let path = format!("traffic.{gi}.send_jitter.max");
        if g.randomize > 0.0 {
            self.err(
                format!("traffic.{gi}.send_jitter"),
                "is set together with randomize; allowed: one of the two (both move the same send times)",
            );
            return;
        }
        let (rate, interval) = match &g.model {
            TrafficModel::Cbr { rate, interval } => (*rate, *interval),
            TrafficModel::OnOff { peak, interval, .. } => (*peak, *interval),
            _ => {
                self.err(
                    format!("traffic.{gi}.send_jitter"),
                    format!(
                        "applies to the packet grid of cbr and on_off flows, not to model {}; allowed: leave it out here",
                        crate::registry::tag_of(&g.model, "model", crate::registry::TRAFFIC_MODELS)
                    ),
                );
                return;
            }
        };
        if max.0 == 0 {
            self.err(&path, "0s is not a jitter; allowed: a duration above 0 and at most the packet spacing");
            return;
        }
        let payload_bits = match &g.size {
            SizeSpec::Fixed(b) => b.0 as f64 * 8.0,
            SizeSpec::Random(r) => (r.base.0 + r.exp_mean.0) as f64 * 8.0,
        };
        let spacing_ns = match (rate, interval) {
            (None, Some(i)) => i.0 as f64,
            (Some(r), None) if r.0 > 0 => payload_bits * 1e9 / r.0 as f64,
            // A missing or doubled rate is reported at the model's fields.
            _ => return,
        };
        if max.0 as f64 > spacing_ns {
            self.err(
                &path,
                format!(
                    "{max} exceeds the packet spacing ({}); allowed: above 0 and at most the spacing, so that \
                     a flow's packets keep their order",
                    Dur(spacing_ns.floor() as u64)
                ),
            );
        }
    }

    /// Exactly one of a rate field and `interval`, and it positive.
    fn rate_or_interval(&mut self, gi: usize, rate_field: &str, rate: Option<Rate>, interval: Option<Dur>) {
        let p = |f: &str| format!("traffic.{gi}.{f}");
        match (rate, interval) {
            (Some(_), Some(_)) => {
                self.err(p("interval"), format!("{rate_field} and interval are both set; allowed: exactly one of them"))
            }
            (None, None) => self.err(
                p(rate_field),
                format!(
                    "missing; allowed: {rate_field} (a payload rate such as \"1Mbps\") or interval (a packet \
                     spacing such as \"8ms\"), exactly one"
                ),
            ),
            (Some(r), None) => self.positive_rate(&p(rate_field), r),
            (None, Some(i)) => self.positive_dur(&p("interval"), i),
        }
    }

    fn size(&mut self, gi: usize, g: &TrafficGroup) {
        let (path, payload) = match &g.size {
            SizeSpec::Fixed(b) => (format!("traffic.{gi}.size"), b.0),
            SizeSpec::Random(r) => {
                if r.exp_mean.0 > MAX_PACKET {
                    self.err(
                        format!("traffic.{gi}.size.exp_mean"),
                        format!("{} is too large; allowed: at most {MAX_PACKET}B", r.exp_mean),
                    );
                }
                (format!("traffic.{gi}.size.base"), r.base.0)
            }
        };
        if payload == 0 {
            self.err(&path, "0B is empty; allowed: a payload of at least 1 byte");
        } else if payload.saturating_add(g.header.0) > MAX_PACKET {
            self.err(
                &path,
                format!(
                    "{payload}B plus header {} exceeds {MAX_PACKET}B; allowed: payload + header at most \
                     {MAX_PACKET}B (an IP packet)",
                    g.header
                ),
            );
        }
    }

    fn arrivals(&mut self, path: &str, a: &Arrivals, base_dir: Option<&Path>) {
        let p = |f: &str| format!("{path}.{f}");
        let rate = |c: &mut Self, r: f64| {
            if !(r > 0.0 && r.is_finite()) {
                c.err(
                    p("rate"),
                    format!("{r} is not positive; allowed: a positive number of flows (or batches) per second"),
                );
            }
        };
        let max_flows = |c: &mut Self, m: Option<u32>| {
            if m == Some(0) {
                c.err(p("max_flows"), "0 flows; allowed: at least 1 (leave it out for no cap)");
            }
        };
        match a {
            Arrivals::Poisson { rate: r, lifetime, max_flows: m, .. } => {
                rate(self, *r);
                self.positive_dur(&p("lifetime"), *lifetime);
                max_flows(self, *m);
            }
            Arrivals::BatchPoisson { rate: r, batch_mean, lifetime, max_flows: m, .. } => {
                rate(self, *r);
                if !(*batch_mean >= 1.0 && batch_mean.is_finite()) {
                    self.err(p("batch_mean"), format!("{batch_mean} is below 1; allowed: a mean batch size >= 1"));
                }
                self.positive_dur(&p("lifetime"), *lifetime);
                max_flows(self, *m);
            }
            Arrivals::KeepAlive { alive, lifetime, max_flows: m, .. } => {
                if !(1..=MAX_FLOWS).contains(alive) {
                    self.err(p("alive"), format!("{alive} flows; allowed: 1 to {MAX_FLOWS}"));
                }
                self.positive_dur(&p("lifetime"), *lifetime);
                max_flows(self, *m);
            }
            Arrivals::Replay { file } => {
                let full = match base_dir {
                    Some(d) => d.join(file),
                    None => Path::new(file).to_path_buf(),
                };
                if file.is_empty() || !full.is_file() {
                    self.err(
                        p("file"),
                        format!(
                            "no file {file:?} (looked for {}); allowed: a CSV file with columns start_s,lifetime_s, \
                             relative to the scenario's folder",
                            full.display()
                        ),
                    );
                    return;
                }
                // Read as `run` reads it: every problem of the file at its own line.
                let field = p("file");
                match crate::files::read_replay(&full, self.origin, self.lines.line_of(&field), &field) {
                    Ok(rows) => {
                        self.replay_rows.insert(field, rows.len() as u64);
                    }
                    Err(d) => self.out.push(d),
                }
            }
        }
    }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Which hosts can reach which: hosts joined by a link, or attached to
/// routers of one component of the router-to-router graph (a host sinks
/// what it receives; it never forwards).
struct Reach {
    /// Union-find parents; only router-to-router links are united.
    parent: Vec<usize>,
    /// Per node, the nodes it is linked to.
    adj: Vec<Vec<usize>>,
}

impl Reach {
    fn new(net: &Expanded) -> Reach {
        let n = net.nodes.len();
        let mut r = Reach { parent: (0..n).collect(), adj: vec![Vec::new(); n] };
        for l in &net.links {
            r.adj[l.a].push(l.b);
            r.adj[l.b].push(l.a);
            if net.nodes[l.a].1 == NodeKind::Router && net.nodes[l.b].1 == NodeKind::Router {
                let (x, y) = (r.find(l.a), r.find(l.b));
                r.parent[x.max(y)] = x.min(y);
            }
        }
        r
    }
    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }
    /// Router components a node is attached to.
    fn components(&mut self, net: &Expanded, x: usize) -> BTreeSet<usize> {
        let routers: Vec<usize> = self.adj[x].iter().copied().filter(|&m| net.nodes[m].1 == NodeKind::Router).collect();
        routers.into_iter().map(|m| self.find(m)).collect()
    }
    fn connects(&mut self, net: &Expanded, a: usize, b: usize) -> bool {
        self.adj[a].contains(&b) || !self.components(net, a).is_disjoint(&self.components(net, b))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;

    #[test]
    fn endpoints_need_a_route_through_routers_only() {
        // h0 - hx - h1 with hx a host: hosts do not forward.
        let t = EXPLICIT.replace("{ name = \"r0\", kind = \"router\" }", "{ name = \"r0\", kind = \"host\" }");
        assert_eq!(message(&t, "traffic.0.dst"), "no route from \"h0\" to \"h1\"; allowed: endpoints joined by links through routers (hosts do not forward packets)");
        // A direct host-to-host link is a route.
        let t = EXPLICIT
            .replace("links = [", "links = [\n  { a = \"h0\", b = \"h1\", rate = \"1Mbps\", delay = \"1ms\" },")
            .replace("{ a = \"h0\", b = \"r0\", rate = \"10Mbps\", delay = \"1ms\" },", "");
        assert_eq!(problems(&t), vec![]);
        // Two router islands.
        let t = EXPLICIT
            .replace(
                "{ name = \"h1\", kind = \"host\" }",
                "{ name = \"h1\", kind = \"host\" }, { name = \"r1\", kind = \"router\" }",
            )
            .replace("a = \"r0\", b = \"h1\"", "a = \"r1\", b = \"h1\"");
        assert_eq!(paths_with(&t, "", ""), ["traffic.0.dst"]);
    }

    #[test]
    fn group_names_are_unique_and_usable_in_flow_names() {
        let dup = with_group("[[traffic]]\nname = \"cbr\"\nmodel = \"poisson\"\nsrc = \"src0\"\ndst = \"sink0\"\nrate = \"1Mbps\"\nsize = \"1B\"");
        assert_eq!(message(&dup, "traffic.1.name"), "\"cbr\" is already the name of traffic.0; allowed: unique names");
        assert_eq!(paths_with(BASE, "name = \"cbr\"", "name = \"a.b\""), ["traffic.0.name"]);
        assert_eq!(paths_with(BASE, "name = \"cbr\"", "name = \"\""), ["traffic.0.name"]);
    }

    #[test]
    fn patterns_match_at_least_one_node_and_hosts_only() {
        assert!(message(&BASE.replace("src = \"src*\"", "src = \"s*c\""), "traffic.0.src")
            .contains("is not a node pattern"));
        assert!(
            message(&BASE.replace("src = \"src*\"", "src = \"\""), "traffic.0.src").contains("is not a node pattern")
        );
        assert!(message(&BASE.replace("src = \"src*\"", "src = \"x*\""), "traffic.0.src").contains("matches no node"));
        assert!(
            message(&BASE.replace("src = \"src*\"", "src = \"*\""), "traffic.0.src").contains("matches router \"r0\"")
        );
    }

    #[test]
    fn an_unknown_endpoint_suggests_the_closest_hosts() {
        let t = BASE.replace("sources = 2", "sources = 41").replace("dst = \"sink0\"", "dst = \"snik0\"");
        let m = message(&t, "traffic.0.dst");
        assert!(m.starts_with("\"snik0\" matches no node; did you mean \"sink0\"? allowed: hosts "), "{m}");
        // Nothing close: no guess.
        let m = message(&BASE.replace("dst = \"sink0\"", "dst = \"elsewhere\""), "traffic.0.dst");
        assert!(m.starts_with("\"elsewhere\" matches no node; allowed: hosts "), "{m}");
    }

    #[test]
    fn no_flow_goes_from_a_node_to_itself() {
        let t = BASE.replace("dst = \"sink0\"", "dst = \"src*\"");
        assert!(message(&t, "traffic.0.dst").starts_with("flow cbr.0 would go from \"src0\" to itself"));
        // src0 -> src1, src1 -> src0: fine.
        let t = BASE.replace("dst = \"sink0\"", "dst = \"src*\"").replace("src = \"src*\"", "src = \"src1\"");
        assert!(message(&t, "traffic.0.dst").starts_with("flow cbr.1 would go from \"src1\" to itself"));
        let one = BASE.replace("flows = 2\n", "flows = 1\n").replace("dst = \"sink0\"", "dst = \"src1\"");
        assert_eq!(problems(&one), vec![]);
        // With arrivals, a whole cycle of pairs is checked.
        let arr = one.replace("flows = 1\n", "arrivals = { process = \"poisson\", rate = 1.0, lifetime = \"1s\" }\n");
        assert_eq!(paths_with(&arr, "", ""), ["traffic.0.dst"]);
    }

    #[test]
    fn flow_counts_are_bounded() {
        assert_eq!(paths_with(BASE, "flows = 2", "flows = 0"), ["traffic.0.flows"]);
        assert_eq!(paths_with(BASE, "flows = 2", "flows = 2000000"), ["traffic.0.flows"]);
    }

    #[test]
    fn cbr_and_on_off_take_exactly_one_positive_rate_or_interval() {
        assert_eq!(paths_with(BASE, "rate = \"1Mbps\"", "interval = \"8ms\""), Vec::<String>::new());
        assert_eq!(
            paths_with(BASE, "rate = \"1Mbps\"", "rate = \"1Mbps\"\ninterval = \"8ms\""),
            ["traffic.0.interval"]
        );
        assert_eq!(paths_with(BASE, "rate = \"1Mbps\"\n", ""), ["traffic.0.rate"]);
        assert_eq!(paths_with(BASE, "rate = \"1Mbps\"", "rate = \"0bps\""), ["traffic.0.rate"]);
        assert_eq!(paths_with(BASE, "rate = \"1Mbps\"", "interval = \"0s\""), ["traffic.0.interval"]);
        let on_off = BASE
            .replace("model = \"cbr\"", "model = \"on_off\"\non = \"1s\"\noff = \"1s\"")
            .replace("rate = \"1Mbps\"", "peak = \"1Mbps\"");
        assert_eq!(problems(&on_off), vec![]);
        assert_eq!(
            paths_with(&on_off, "peak = \"1Mbps\"", "peak = \"1Mbps\"\ninterval = \"1ms\""),
            ["traffic.0.interval"]
        );
        assert_eq!(paths_with(&on_off, "peak = \"1Mbps\"\n", ""), ["traffic.0.peak"]);
        assert_eq!(
            paths_with(&on_off, "on = \"1s\"\noff = \"1s\"", "on = \"0s\"\noff = \"0s\""),
            ["traffic.0.on", "traffic.0.off"]
        );
    }

    #[test]
    fn poisson_rates_must_be_positive_and_pareto_shapes_above_one() {
        let p = BASE.replace("model = \"cbr\"", "model = \"poisson\"");
        assert_eq!(problems(&p), vec![]);
        assert_eq!(paths_with(&p, "rate = \"1Mbps\"", "rate = \"0bps\""), ["traffic.0.rate"]);
        let pareto = BASE
            .replace("model = \"cbr\"", "model = \"on_off\"\non = \"1s\"\noff = \"1s\"\ndist = \"pareto\"")
            .replace("rate = \"1Mbps\"", "peak = \"1Mbps\"");
        assert_eq!(problems(&pareto), vec![], "the default shape is 1.5");
        assert_eq!(paths_with(&pareto, "dist = \"pareto\"", "dist = \"pareto\"\nshape = 0.9"), ["traffic.0.shape"]);
        assert_eq!(paths_with(&pareto, "dist = \"pareto\"", "dist = \"pareto\"\nshape = inf"), ["traffic.0.shape"]);
        // The shape is unused with exponential periods.
        assert_eq!(
            paths_with(&pareto, "dist = \"pareto\"", "dist = \"exponential\"\nshape = 0.5"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn payloads_are_at_least_a_byte_and_packets_fit_an_ip_packet() {
        assert_eq!(paths_with(BASE, "size = \"1000B\"", "size = \"0B\""), ["traffic.0.size"]);
        assert_eq!(paths_with(BASE, "size = \"1000B\"", "size = \"65000B\"\nheader = \"536B\""), ["traffic.0.size"]);
        assert_eq!(paths_with(BASE, "size = \"1000B\"", "size = \"65000B\"\nheader = \"535B\""), Vec::<String>::new());
        assert_eq!(
            paths_with(BASE, "size = \"1000B\"", "size = { base = \"0B\", exp_mean = \"100B\" }"),
            ["traffic.0.size.base"]
        );
        assert_eq!(
            paths_with(BASE, "size = \"1000B\"", "size = { base = \"1B\", exp_mean = \"1MB\" }"),
            ["traffic.0.size.exp_mean"]
        );
    }

    #[test]
    fn dscp_start_stop_and_reserve_are_checked() {
        assert_eq!(paths_with(BASE, "size = \"1000B\"", "size = \"1000B\"\ndscp = 64"), ["traffic.0.dscp"]);
        assert_eq!(paths_with(BASE, "size = \"1000B\"", "size = \"1000B\"\nstart = \"10s\""), ["traffic.0.start"]);
        assert_eq!(
            paths_with(BASE, "size = \"1000B\"", "size = \"1000B\"\nstart = \"2s\"\nstop = \"2s\""),
            ["traffic.0.stop"]
        );
        assert_eq!(paths_with(BASE, "size = \"1000B\"", "size = \"1000B\"\nstop = \"20s\""), Vec::<String>::new());
        assert_eq!(paths_with(BASE, "size = \"1000B\"", "size = \"1000B\"\nreserve = \"0bps\""), ["traffic.0.reserve"]);
    }

    #[test]
    fn arrival_processes_are_checked() {
        let a = |arr: &str| paths_with(BASE, "size = \"1000B\"", &format!("size = \"1000B\"\narrivals = {arr}"));
        let none = Vec::<String>::new();
        assert_eq!(a("{ process = \"poisson\", rate = 2.0, lifetime = \"1s\" }"), none);
        assert_eq!(a("{ process = \"poisson\", rate = 0.0, lifetime = \"1s\" }"), ["traffic.0.arrivals.rate"]);
        assert_eq!(a("{ process = \"poisson\", rate = nan, lifetime = \"1s\" }"), ["traffic.0.arrivals.rate"]);
        assert_eq!(a("{ process = \"poisson\", rate = 1.0, lifetime = \"0s\" }"), ["traffic.0.arrivals.lifetime"]);
        assert_eq!(
            a("{ process = \"poisson\", rate = 1.0, lifetime = \"1s\", max_flows = 0 }"),
            ["traffic.0.arrivals.max_flows"]
        );
        assert_eq!(
            a("{ process = \"batch_poisson\", rate = 1.0, batch_mean = 0.5, lifetime = \"1s\" }"),
            ["traffic.0.arrivals.batch_mean"]
        );
        assert_eq!(a("{ process = \"batch_poisson\", rate = 1.0, batch_mean = 1.0, lifetime = \"1s\" }"), none);
        assert_eq!(a("{ process = \"keep_alive\", alive = 0, lifetime = \"1s\" }"), ["traffic.0.arrivals.alive"]);
        assert_eq!(a("{ process = \"keep_alive\", alive = 3, lifetime = \"1s\" }"), none);
        assert_eq!(a("{ process = \"replay\", file = \"\" }"), ["traffic.0.arrivals.file"]);
    }

    #[test]
    fn replay_files_are_looked_up_in_the_base_dir() {
        let dir = std::env::temp_dir().join(format!("qoslab-validate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("f.csv"), "start_s,lifetime_s\n").unwrap();
        let t =
            BASE.replace("size = \"1000B\"", "size = \"1000B\"\narrivals = { process = \"replay\", file = \"f.csv\" }");
        let found = problems_in(&t, Some(&dir));
        let missing = problems_in(&t, Some(&dir.join("elsewhere")));
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(found, vec![]);
        assert_eq!(missing.len(), 1);
        assert!(missing[0].1.contains("elsewhere/f.csv"), "{missing:?}");
    }
}
