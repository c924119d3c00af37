//! Static routes over an expanded topology ([`crate::expand::Expanded`]):
//! the one rule the simulator forwards by and the Python front (the
//! testbed's planner, `qoslab._core.Scenario.model`) reads paths from.
//!
//! **Rule.** Fewest hops, computed by a breadth-first search back from
//! every destination traffic uses. Hosts originate and sink traffic but
//! never forward: a path may not pass through a host. Among equally short
//! next hops the one over the link direction with the lowest index
//! (scenario order after expansion) wins, so routes are deterministic.
//!
//! **Directions.** Link `l` joins `a` and `b`; direction `2 l` is a -> b,
//! `2 l + 1` is b -> a (the simulator's `DirId`).
//!
//! **Table.** A host with exactly one outgoing direction (nearly every
//! host) forwards nothing, so its next hop towards any other node is that
//! direction, if the node at its far end reaches the destination: it has no
//! row of its own. The tables hold one row per other node (routers,
//! multi-homed hosts) and destination. With 10,000 TCP sources, each a
//! destination of its ACKs, full `destinations × nodes` tables took 800 MB
//! (docs/performance.md).

use crate::expand::Expanded;
use crate::NodeKind;
use std::collections::VecDeque;

/// Each direction of `ex`'s links as `(from, to)` node indices: `2 l` is
/// a -> b, `2 l + 1` is b -> a.
pub fn directions(ex: &Expanded) -> Vec<(u32, u32)> {
    ex.links.iter().flat_map(|l| [(l.a as u32, l.b as u32), (l.b as u32, l.a as u32)]).collect()
}

/// No route (in the routing table).
const NO_ROUTE: u32 = u32::MAX;

/// Next hops towards every destination that traffic uses (see the module doc).
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
    /// Each direction's `(from, to)` nodes.
    ends: Vec<(u32, u32)>,
}

impl Routes {
    /// Routes to every node in `dsts` (node indices, deduplicated, in
    /// order) over the nodes and links of `ex`.
    ///
    /// Per destination, a breadth-first search backwards from it through the
    /// nodes that forward towards it (the destination itself and routers);
    /// a node's next hop is the lowest-index direction to a neighbour one hop
    /// closer that forwards.
    pub fn compute(ex: &Expanded, dsts: &[u32]) -> Routes {
        let routers: Vec<bool> = ex.nodes.iter().map(|(_, k)| *k == NodeKind::Router).collect();
        Routes::over(&routers, directions(ex), dsts)
    }

    /// [`Routes::compute`] over `routers.len()` nodes (`routers[v]`: node `v`
    /// forwards) and the directions `ends` (`(from, to)`, in index order).
    pub fn over(routers: &[bool], ends: Vec<(u32, u32)>, dsts: &[u32]) -> Routes {
        let n = routers.len();
        let mut slot_of = vec![NO_ROUTE; n];
        let mut order: Vec<u32> = Vec::new();
        for &d in dsts {
            if slot_of[d as usize] == NO_ROUTE {
                slot_of[d as usize] = order.len() as u32;
                order.push(d);
            }
        }
        let forwards = routers.to_vec();
        // Outgoing directions per node: hosts with exactly one get no row.
        let mut out_deg = vec![0u32; n];
        let mut uplink = vec![(NO_ROUTE, NO_ROUTE); n];
        for (i, &(from, to)) in ends.iter().enumerate() {
            out_deg[from as usize] += 1;
            uplink[from as usize] = (i as u32, to);
        }
        let mut row_of = vec![NO_ROUTE; n];
        let mut n_rows = 0usize;
        for v in 0..n {
            if forwards[v] || out_deg[v] != 1 {
                row_of[v] = n_rows as u32;
                n_rows += 1;
            }
        }
        for (v, u) in uplink.iter_mut().enumerate() {
            if row_of[v] != NO_ROUTE {
                *u = (NO_ROUTE, NO_ROUTE);
            }
        }
        // Adjacency: for each node, the directions arriving at it (reverse search).
        let mut incoming: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (i, &(_, to)) in ends.iter().enumerate() {
            incoming[to as usize].push(i as u32);
        }
        let mut next = vec![NO_ROUTE; order.len() * n_rows];
        let mut dist_rows = vec![u32::MAX; order.len() * n_rows];
        // Whole-graph scratch for one search, reset through `touched`.
        let mut dist = vec![u32::MAX; n];
        let mut hop = vec![NO_ROUTE; n];
        let mut touched: Vec<usize> = Vec::new();
        let mut frontier: VecDeque<usize> = VecDeque::new();
        for (s, &dst) in order.iter().enumerate() {
            let dst = dst as usize;
            dist[dst] = 0;
            touched.push(dst);
            frontier.push_back(dst);
            while let Some(u) = frontier.pop_front() {
                // Only the destination and routers forward towards it.
                if u != dst && !forwards[u] {
                    continue;
                }
                let du = dist[u];
                for &d in &incoming[u] {
                    let v = ends[d as usize].0 as usize;
                    if v == dst {
                        continue;
                    }
                    if dist[v] == u32::MAX {
                        dist[v] = du + 1;
                        touched.push(v);
                        frontier.push_back(v);
                    }
                    // Every `u` one hop closer is expanded before `v`'s own
                    // level: the lowest such direction wins.
                    if dist[v] == du + 1 && d < hop[v] {
                        hop[v] = d;
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
        Routes { slot_of, dst_of: order, row_of, uplink, forwards, n_rows, next, dist: dist_rows, ends }
    }

    /// The slot of destination `dst`, if routes to it were computed.
    pub fn slot(&self, dst: u32) -> Option<u32> {
        self.slot_of.get(dst as usize).copied().filter(|s| *s != NO_ROUTE)
    }
    /// The direction a packet at `node` takes towards the destination in `slot`.
    #[inline]
    pub fn next(&self, slot: u32, node: u32) -> Option<u32> {
        let row = self.row_of[node as usize];
        let v = if row != NO_ROUTE {
            self.next[slot as usize * self.n_rows + row as usize]
        } else {
            self.uplink_next(slot, node)
        };
        (v != NO_ROUTE).then_some(v)
    }
    #[cold]
    fn uplink_next(&self, slot: u32, node: u32) -> u32 {
        match self.uplink_dist(slot, node) {
            Some(d) if d > 0 => self.uplink[node as usize].0,
            _ => NO_ROUTE,
        }
    }
    /// Hops from a host without a row to the destination in `slot`.
    fn uplink_dist(&self, slot: u32, node: u32) -> Option<u32> {
        let dst = self.dst_of[slot as usize];
        if node == dst {
            return Some(0);
        }
        let (_, far) = self.uplink[node as usize];
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
    pub fn hops(&self, slot: u32, node: u32) -> Option<u32> {
        let row = self.row_of[node as usize];
        if row == NO_ROUTE {
            return self.uplink_dist(slot, node);
        }
        let v = self.dist[slot as usize * self.n_rows + row as usize];
        (v != u32::MAX).then_some(v)
    }
    /// The directions from `src` to `dst` in order (empty when they are the
    /// same node), `None` when `dst` is not a destination here or not reached.
    pub fn path(&self, src: u32, dst: u32) -> Option<Vec<u32>> {
        let slot = self.slot(dst)?;
        let mut at = src;
        let mut dirs = Vec::new();
        while at != dst {
            let d = self.next(slot, at)?;
            dirs.push(d);
            at = self.ends[d as usize].1;
            if dirs.len() > self.ends.len() {
                return None; // not reached: a route never repeats a direction
            }
        }
        Some(dirs)
    }
    /// Rows held (routers and multi-homed hosts), per destination.
    pub fn rows(&self) -> usize {
        self.n_rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expand::Link;
    use crate::{LinkSpec, QueueSpec};
    use qoslab_core::Limit;

    /// 10 Mb/s, 1 ms, every optional field at its default.
    fn spec() -> LinkSpec {
        toml::from_str("rate = \"10Mbps\"\ndelay = \"1ms\"").expect("a link spec")
    }

    fn net(nodes: &[(&str, NodeKind)], links: &[(usize, usize)]) -> Expanded {
        Expanded {
            nodes: nodes.iter().map(|(n, k)| (n.to_string(), *k)).collect(),
            links: links.iter().map(|&(a, b)| Link { a, b, spec: spec(), path: format!("l{a}-{b}") }).collect(),
            default_queue: QueueSpec::Fifo { limit: Limit::packets(10) },
            bottleneck: None,
            bottlenecks: Vec::new(),
        }
    }

    /// h0 - r0 - r1 - h1, plus a longer detour r0 - r2 - r3 - r1, and a
    /// second parallel r0 - r1 link (higher index) that ties with the first.
    fn graph() -> Expanded {
        net(
            &[
                ("h0", NodeKind::Host),
                ("r0", NodeKind::Router),
                ("r1", NodeKind::Router),
                ("h1", NodeKind::Host),
                ("r2", NodeKind::Router),
                ("r3", NodeKind::Router),
                ("h2", NodeKind::Host),
            ],
            &[(0, 1), (1, 4), (4, 5), (5, 2), (1, 2), (2, 3), (1, 2), (6, 3)],
        )
    }

    /// The rule computed the plain way, over the whole `destinations ×
    /// nodes` table: hops by breadth-first search backwards through
    /// forwarding nodes, then the lowest-index direction to a forwarding
    /// neighbour one hop closer.
    fn reference(ex: &Expanded, dst: usize) -> Vec<(Option<u32>, Option<u32>)> {
        let n = ex.nodes.len();
        let ends: Vec<(usize, usize)> = ex.links.iter().flat_map(|l| [(l.a, l.b), (l.b, l.a)]).collect();
        let fwd = |u: usize| u == dst || ex.nodes[u].1 == NodeKind::Router;
        let mut dist = vec![u32::MAX; n];
        dist[dst] = 0;
        let mut q = VecDeque::from([dst]);
        while let Some(u) = q.pop_front() {
            if !fwd(u) {
                continue;
            }
            for &(from, _) in ends.iter().filter(|(_, to)| *to == u) {
                if dist[from] == u32::MAX {
                    dist[from] = dist[u] + 1;
                    q.push_back(from);
                }
            }
        }
        (0..n)
            .map(|v| {
                let next = (v != dst)
                    .then(|| {
                        ends.iter()
                            .position(|&(from, u)| from == v && fwd(u) && dist[u] != u32::MAX && dist[v] == dist[u] + 1)
                    })
                    .flatten()
                    .map(|i| i as u32);
                (next, (dist[v] != u32::MAX).then_some(dist[v]))
            })
            .collect()
    }

    #[test]
    fn compact_routes_equal_the_full_table_and_keep_rows_only_where_needed() {
        // h1 has two links (r1, h2): a row; h0 and h2 one each: none.
        let ex = graph();
        let all: Vec<u32> = (0..ex.nodes.len() as u32).collect();
        let r = Routes::compute(&ex, &all);
        for &dst in &all {
            let slot = r.slot(dst).unwrap();
            for (v, want) in reference(&ex, dst as usize).into_iter().enumerate() {
                let got = (r.next(slot, v as u32), r.hops(slot, v as u32));
                assert_eq!(got, want, "towards {} from {}", ex.nodes[dst as usize].0, ex.nodes[v].0);
            }
        }
        // 4 routers + h1: 5 rows of 7 destinations, not 7 x 7.
        assert_eq!(r.rows(), 5);
        assert_eq!(r.next.len(), 7 * 5);
    }

    #[test]
    fn routes_take_fewest_hops_and_lowest_link_on_ties() {
        let ex = graph();
        let idx = |name: &str| ex.index_of(name).unwrap() as u32;
        let r = Routes::compute(&ex, &[idx("h1")]);
        let names = |from: &str| {
            let mut out = vec![from.to_string()];
            for d in r.path(idx(from), idx("h1")).expect("a route") {
                let l = &ex.links[d as usize / 2];
                let to = if d % 2 == 0 { l.b } else { l.a };
                out.push(ex.nodes[to].0.clone());
            }
            out.join(" ")
        };
        assert_eq!(names("h0"), "h0 r0 r1 h1");
        // The r0 -> r1 hop uses link 4 (index lower than the parallel link 6).
        let slot = r.slot(idx("h1")).unwrap();
        assert_eq!(r.next(slot, idx("r0")), Some(8));
        assert_eq!(r.hops(slot, idx("h0")), Some(3));
        // h2 reaches h1 directly; nothing routes through h2 or h1.
        assert_eq!(names("h2"), "h2 h1");
        assert_eq!(r.path(idx("h1"), idx("h1")), Some(vec![]));
        assert_eq!(r.path(idx("h1"), idx("h0")), None, "h0 is not a destination");
    }

    #[test]
    fn hosts_never_forward() {
        // a - h - b with h a host: a cannot reach b.
        let ex = net(&[("a", NodeKind::Host), ("h", NodeKind::Host), ("b", NodeKind::Host)], &[(0, 1), (1, 2)]);
        let r = Routes::compute(&ex, &[2]);
        let s = r.slot(2).unwrap();
        assert_eq!(r.next(s, 0), None);
        assert_eq!(r.hops(s, 0), None);
        assert_eq!(r.next(s, 1), Some(2));
        assert_eq!(r.path(0, 2), None);
    }
}
