//! The edge classifier's rule database, searched on the slow path.
//!
//! Source: [Guerin99 §II] ("a full lookup is
//! performed into a complete rule database"); the paper leaves the search
//! open. Here it is the Lakshman–Stiliadis bit-vector scheme (SIGCOMM
//! 1998): rules are numbered in priority order; each field maps a packet's
//! value to the bitset of rules that field admits, found by a binary search
//! over elementary intervals (addresses: the intervals the rules' prefixes
//! cut the IPv4 or IPv6 line into, each mapped to its longest matching
//! prefix; ports: the ranges' intervals) or over exact values (protocol,
//! ingress, DSCP); the first bit set in the AND of the seven bitsets is the
//! winning rule. Memory is O(distinct values × rules) bits per field, lookup
//! O(log values + rules / 64) word operations.
//!
//! | parameter | unit | allowed | default |
//! |---|---|---|---|
//! | `priority` | | any u32; lower wins; equal only for rules no packet can match both | none |
//! | `src`, `dst` | IPv4/IPv6 prefix | any (host bits are ignored) | wildcard |
//! | `src_port`, `dst_port` | inclusive range | lo ≤ hi | wildcard |
//! | `proto`, `ingress`, `dscp` | exact | dscp ≤ 63 | wildcard |
//! | `action.set_dscp` | | ≤ 63 | none: keep |
//!
//! Interpretations are in `docs/decisions.md`, "Edge QoS: Classifier".

use crate::error::ConfigError;
use crate::packet::FlowKey;
use fixedbitset::FixedBitSet;
use ipnet::IpNet;
use std::collections::HashMap;
use std::net::IpAddr;

/// An inclusive port range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PortRange {
    pub lo: u16,
    pub hi: u16,
}

impl PortRange {
    pub const ANY: PortRange = PortRange { lo: 0, hi: u16::MAX };
    pub fn exact(port: u16) -> PortRange {
        PortRange { lo: port, hi: port }
    }
    #[inline]
    pub fn contains(&self, port: u16) -> bool {
        self.lo <= port && port <= self.hi
    }
}

/// What a matching rule does to a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RuleAction {
    pub stream: u16,
    pub class: u8,
    /// Re-mark the packet's DSCP (6 bits) when set.
    pub set_dscp: Option<u8>,
}

/// One rule of the database. `None` fields are wildcards.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// Lower value wins.
    pub priority: u32,
    pub src: Option<IpNet>,
    pub dst: Option<IpNet>,
    pub src_port: Option<PortRange>,
    pub dst_port: Option<PortRange>,
    pub proto: Option<u8>,
    pub ingress: Option<u16>,
    pub dscp: Option<u8>,
    pub action: RuleAction,
}

impl Rule {
    /// A rule matching everything, with `action`.
    pub fn any(priority: u32, action: RuleAction) -> Rule {
        Rule {
            priority,
            src: None,
            dst: None,
            src_port: None,
            dst_port: None,
            proto: None,
            ingress: None,
            dscp: None,
            action,
        }
    }

    /// Does this rule match? The definition the database implements (and
    /// the linear-scan reference of the tests).
    pub fn matches(&self, key: &FlowKey, ingress: u16, dscp: u8) -> bool {
        self.src.is_none_or(|p| p.contains(&key.src))
            && self.dst.is_none_or(|p| p.contains(&key.dst))
            && self.src_port.is_none_or(|r| r.contains(key.src_port))
            && self.dst_port.is_none_or(|r| r.contains(key.dst_port))
            && self.proto.is_none_or(|p| p == key.proto)
            && self.ingress.is_none_or(|i| i == ingress)
            && self.dscp.is_none_or(|d| d == dscp)
    }

    /// Can one packet match both rules?
    pub fn overlaps(&self, other: &Rule) -> bool {
        fn net(a: Option<IpNet>, b: Option<IpNet>) -> bool {
            match (a, b) {
                (Some(a), Some(b)) => a.contains(&b) || b.contains(&a),
                _ => true,
            }
        }
        fn range(a: Option<PortRange>, b: Option<PortRange>) -> bool {
            let (a, b) = (a.unwrap_or(PortRange::ANY), b.unwrap_or(PortRange::ANY));
            a.lo <= b.hi && b.lo <= a.hi
        }
        fn exact<T: PartialEq>(a: Option<T>, b: Option<T>) -> bool {
            match (a, b) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            }
        }
        net(self.src, other.src)
            && net(self.dst, other.dst)
            && range(self.src_port, other.src_port)
            && range(self.dst_port, other.dst_port)
            && exact(self.proto, other.proto)
            && exact(self.ingress, other.ingress)
            && exact(self.dscp, other.dscp)
    }

    fn validate(&self, i: usize) -> Result<(), ConfigError> {
        for (name, r) in [("src_port", self.src_port), ("dst_port", self.dst_port)] {
            if let Some(r) = r {
                if r.lo > r.hi {
                    return Err(ConfigError::new(
                        "classifier",
                        "rules",
                        format!("[{i}].{name}: lo {} is above hi {}; a range needs lo <= hi", r.lo, r.hi),
                    ));
                }
            }
        }
        for (name, d) in [("dscp", self.dscp), ("action.set_dscp", self.action.set_dscp)] {
            if let Some(d) = d {
                if d > 63 {
                    return Err(ConfigError::new(
                        "classifier",
                        "rules",
                        format!("[{i}].{name} ({d}) is not a DSCP; allowed 0..=63"),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Bits of one block of a [`FixedBitSet`].
const BLOCK_BITS: usize = usize::BITS as usize;

/// One address field: longest-prefix match on the rules' prefixes.
#[derive(Debug)]
struct PrefixField {
    v4: Intervals<u32>,
    v6: Intervals<u128>,
    /// `sets[i]`: the rules admitting every address under distinct prefix i.
    sets: Vec<FixedBitSet>,
    /// The rules with no prefix (they admit every address).
    wild: FixedBitSet,
}

/// No prefix covers the interval.
const NO_PREFIX: u32 = u32::MAX;

/// The elementary intervals that one family's prefixes cut the address
/// line into (`starts` sorted, `starts[0] == 0`), each with the longest
/// prefix covering it (`ids`, [`NO_PREFIX`] for none). Every address of an
/// interval has the same longest match, so a longest-prefix match is one
/// binary search (a trie walk was 40 % of the slow path's time: perf,
/// docs/performance.md).
#[derive(Debug)]
struct Intervals<A> {
    starts: Vec<A>,
    ids: Vec<u32>,
}

impl<A: Copy + Ord + Default> Intervals<A> {
    /// `prefixes`: (first address, last address, length, id), distinct.
    fn build(mut prefixes: Vec<(A, A, u8, u32)>, after: impl Fn(A) -> Option<A>) -> Intervals<A> {
        let mut starts = vec![A::default()];
        for &(lo, hi, _, _) in &prefixes {
            starts.push(lo);
            starts.extend(after(hi));
        }
        starts.sort_unstable();
        starts.dedup();
        let mut ids = vec![NO_PREFIX; starts.len()];
        // Two distinct prefixes are nested or disjoint: painted shortest
        // first, each interval ends with its longest covering prefix.
        prefixes.sort_by_key(|p| p.2);
        for (lo, hi, _, id) in prefixes {
            let first = starts.partition_point(|s| *s < lo);
            let end = starts.partition_point(|s| *s <= hi);
            ids[first..end].fill(id);
        }
        Intervals { starts, ids }
    }

    #[inline]
    fn lookup(&self, a: A) -> u32 {
        self.ids[self.starts.partition_point(|s| *s <= a) - 1]
    }
}

impl PrefixField {
    fn build(n: usize, field: impl Fn(usize) -> Option<IpNet>) -> PrefixField {
        let mut wild = FixedBitSet::with_capacity(n);
        let mut groups: HashMap<IpNet, Vec<usize>> = HashMap::new();
        let mut distinct: Vec<IpNet> = Vec::new();
        for r in 0..n {
            match field(r) {
                None => wild.insert(r),
                Some(p) => {
                    let g = groups.entry(p).or_default();
                    if g.is_empty() {
                        distinct.push(p);
                    }
                    g.push(r);
                }
            }
        }
        let mut sets = Vec::new();
        let (mut v4, mut v6) = (Vec::new(), Vec::new());
        for p in distinct {
            // Rules whose prefix contains p: those of p's ancestors (and p).
            let mut set = wild.clone();
            for len in 0..=p.prefix_len() {
                let a = IpNet::new(p.addr(), len).expect("a shorter length is valid").trunc();
                if let Some(g) = groups.get(&a) {
                    for &r in g {
                        set.insert(r);
                    }
                }
            }
            let id = sets.len() as u32;
            sets.push(set);
            match p {
                IpNet::V4(p) => v4.push((u32::from(p.network()), u32::from(p.broadcast()), p.prefix_len(), id)),
                IpNet::V6(p) => v6.push((u128::from(p.network()), u128::from(p.broadcast()), p.prefix_len(), id)),
            }
        }
        PrefixField {
            v4: Intervals::build(v4, |hi: u32| hi.checked_add(1)),
            v6: Intervals::build(v6, |hi: u128| hi.checked_add(1)),
            sets,
            wild,
        }
    }

    #[inline]
    fn lookup(&self, a: IpAddr) -> &FixedBitSet {
        let id = match a {
            IpAddr::V4(a) => self.v4.lookup(u32::from(a)),
            IpAddr::V6(a) => self.v6.lookup(u128::from(a)),
        };
        if id == NO_PREFIX {
            &self.wild
        } else {
            &self.sets[id as usize]
        }
    }
}

/// One port field: elementary intervals, binary search.
#[derive(Debug)]
struct RangeField {
    /// Sorted starts of the elementary intervals; `starts[0] == 0`.
    starts: Vec<u16>,
    sets: Vec<FixedBitSet>,
}

impl RangeField {
    fn build(n: usize, field: impl Fn(usize) -> Option<PortRange>) -> RangeField {
        let ranges: Vec<PortRange> = (0..n).map(|r| field(r).unwrap_or(PortRange::ANY)).collect();
        let mut starts = vec![0u16];
        for r in &ranges {
            starts.push(r.lo);
            if r.hi < u16::MAX {
                starts.push(r.hi + 1);
            }
        }
        starts.sort_unstable();
        starts.dedup();
        let mut sets = vec![FixedBitSet::with_capacity(n); starts.len()];
        for (r, range) in ranges.iter().enumerate() {
            // The intervals inside [lo, hi]: from the one starting at lo to
            // the last one starting at or before hi.
            let first = starts.partition_point(|s| *s < range.lo);
            let end = starts.partition_point(|s| *s <= range.hi);
            for set in &mut sets[first..end] {
                set.insert(r);
            }
        }
        RangeField { starts, sets }
    }

    #[inline]
    fn lookup(&self, port: u16) -> &FixedBitSet {
        &self.sets[self.starts.partition_point(|s| *s <= port) - 1]
    }
}

/// One exact-or-wildcard field.
#[derive(Debug)]
struct ExactField<T> {
    values: Vec<T>,
    sets: Vec<FixedBitSet>,
    wild: FixedBitSet,
}

impl<T: Ord + Copy> ExactField<T> {
    fn build(n: usize, field: impl Fn(usize) -> Option<T>) -> ExactField<T> {
        let mut wild = FixedBitSet::with_capacity(n);
        let mut values: Vec<T> = Vec::new();
        for r in 0..n {
            match field(r) {
                None => wild.insert(r),
                Some(v) => values.push(v),
            }
        }
        values.sort_unstable();
        values.dedup();
        let mut sets = vec![wild.clone(); values.len()];
        for r in 0..n {
            if let Some(v) = field(r) {
                sets[values.binary_search(&v).expect("collected above")].insert(r);
            }
        }
        ExactField { values, sets, wild }
    }

    #[inline]
    fn lookup(&self, v: T) -> &FixedBitSet {
        match self.values.binary_search(&v) {
            Ok(i) => &self.sets[i],
            Err(_) => &self.wild,
        }
    }
}

/// The rule database of the slow path.
#[derive(Debug)]
pub struct RuleDatabase {
    /// Rules in priority order (bit i of every bitset is `rules[i]`).
    rules: Vec<Rule>,
    src: PrefixField,
    dst: PrefixField,
    src_port: RangeField,
    dst_port: RangeField,
    proto: ExactField<u8>,
    ingress: ExactField<u16>,
    dscp: ExactField<u8>,
}

impl RuleDatabase {
    /// Checks the rules (ranges, DSCP values, no two overlapping rules of
    /// equal priority) and builds the per-field bitsets.
    pub fn new(rules: Vec<Rule>) -> Result<RuleDatabase, ConfigError> {
        for (i, r) in rules.iter().enumerate() {
            r.validate(i)?;
        }
        let mut rules: Vec<(usize, Rule)> = rules
            .into_iter()
            .map(|mut r| {
                r.src = r.src.map(|p| p.trunc());
                r.dst = r.dst.map(|p| p.trunc());
                r
            })
            .enumerate()
            .collect();
        // Stable: equal priorities keep their order (they cannot both match).
        rules.sort_by_key(|(_, r)| r.priority);
        let mut start = 0;
        while start < rules.len() {
            let end = start + rules[start..].partition_point(|(_, r)| r.priority == rules[start].1.priority);
            for a in start..end {
                for b in a + 1..end {
                    if rules[a].1.overlaps(&rules[b].1) {
                        let (i, j) = (rules[a].0.min(rules[b].0), rules[a].0.max(rules[b].0));
                        return Err(ConfigError::new(
                            "classifier",
                            "rules",
                            format!(
                                "rules {i} and {j} overlap and have the same priority {}; give them different priorities",
                                rules[a].1.priority
                            ),
                        ));
                    }
                }
            }
            start = end;
        }
        let rules: Vec<Rule> = rules.into_iter().map(|(_, r)| r).collect();
        let n = rules.len();
        Ok(RuleDatabase {
            src: PrefixField::build(n, |i| rules[i].src),
            dst: PrefixField::build(n, |i| rules[i].dst),
            src_port: RangeField::build(n, |i| rules[i].src_port),
            dst_port: RangeField::build(n, |i| rules[i].dst_port),
            proto: ExactField::build(n, |i| rules[i].proto),
            ingress: ExactField::build(n, |i| rules[i].ingress),
            dscp: ExactField::build(n, |i| rules[i].dscp),
            rules,
        })
    }

    /// The action of the highest-priority rule matching the packet.
    #[inline]
    pub fn lookup(&self, key: &FlowKey, ingress: u16, dscp: u8) -> Option<&RuleAction> {
        self.lookup_rule(key, ingress, dscp).map(|r| &r.action)
    }

    /// The highest-priority rule matching the packet.
    pub fn lookup_rule(&self, key: &FlowKey, ingress: u16, dscp: u8) -> Option<&Rule> {
        let sets = [
            self.src.lookup(key.src).as_slice(),
            self.dst.lookup(key.dst).as_slice(),
            self.src_port.lookup(key.src_port).as_slice(),
            self.dst_port.lookup(key.dst_port).as_slice(),
            self.proto.lookup(key.proto).as_slice(),
            self.ingress.lookup(ingress).as_slice(),
            self.dscp.lookup(dscp).as_slice(),
        ];
        let words = sets[0].len();
        for w in 0..words {
            let x = sets.iter().fold(usize::MAX, |acc, s| acc & s[w]);
            if x != 0 {
                return Some(&self.rules[w * BLOCK_BITS + x.trailing_zeros() as usize]);
            }
        }
        None
    }

    /// The rules in priority order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }
    pub fn len(&self) -> usize {
        self.rules.len()
    }
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }
}

/// Rules and keys shared by the classifier's unit tests.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::*;
    use crate::packet::proto;
    use std::net::Ipv4Addr;

    pub fn key(src: [u8; 4], sport: u16, dst: [u8; 4], dport: u16, p: u8) -> FlowKey {
        FlowKey {
            src: IpAddr::V4(Ipv4Addr::from(src)),
            dst: IpAddr::V4(Ipv4Addr::from(dst)),
            src_port: sport,
            dst_port: dport,
            proto: p,
        }
    }
    pub fn act(stream: u16) -> RuleAction {
        RuleAction { stream, class: (stream % 2) as u8, set_dscp: None }
    }
    pub fn net(s: &str) -> Option<IpNet> {
        Some(s.parse().unwrap())
    }

    /// EF voice re-marked 46; AF from 10/8 on ingress 2; AF TCP to
    /// 192.168.7/24; a catch-all for DSCP 0.
    pub fn example_rules() -> Vec<Rule> {
        vec![
            Rule {
                src: net("10.1.0.0/16"),
                dst_port: Some(PortRange { lo: 5000, hi: 5010 }),
                proto: Some(proto::UDP),
                action: RuleAction { stream: 1, class: 0, set_dscp: Some(46) },
                ..Rule::any(10, act(0))
            },
            Rule { src: net("10.0.0.0/8"), ingress: Some(2), ..Rule::any(20, act(2)) },
            Rule { dst: net("192.168.7.0/24"), proto: Some(proto::TCP), ..Rule::any(30, act(3)) },
            Rule { dscp: Some(0), ..Rule::any(100, act(9)) },
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::*;
    use super::*;
    use crate::packet::proto;

    #[test]
    fn rule_database_picks_the_highest_priority_match() {
        let db = RuleDatabase::new(example_rules()).unwrap();
        let l = |k: FlowKey, ing: u16, d: u8| db.lookup(&k, ing, d).map(|a| a.stream);
        assert_eq!(l(key([10, 1, 2, 3], 40000, [1, 1, 1, 1], 5005, proto::UDP), 2, 0), Some(1));
        assert_eq!(l(key([10, 1, 2, 3], 40000, [1, 1, 1, 1], 5011, proto::UDP), 2, 0), Some(2));
        assert_eq!(l(key([10, 1, 2, 3], 40000, [1, 1, 1, 1], 5011, proto::UDP), 1, 0), Some(9));
        assert_eq!(l(key([11, 1, 2, 3], 1, [192, 168, 7, 200], 80, proto::TCP), 1, 12), Some(3));
        assert_eq!(l(key([11, 1, 2, 3], 1, [192, 168, 8, 200], 80, proto::TCP), 1, 12), None);
        assert_eq!(db.len(), 4);
    }

    #[test]
    fn overlapping_rules_of_equal_priority_are_refused() {
        let mut r = example_rules();
        // Same priority as rule 1 (20), and 10.0.0.0/8 ∩ 10.2.0.0/16 on any port.
        r.push(Rule { src: net("10.2.0.0/16"), ..Rule::any(20, act(5)) });
        let e = RuleDatabase::new(r).unwrap_err();
        assert_eq!((e.mechanism, e.field), ("classifier", "rules"));
        assert_eq!(e.message, "rules 1 and 4 overlap and have the same priority 20; give them different priorities");
        // Disjoint rules may share a priority: 11/8 never meets 10/8.
        let mut r = example_rules();
        r.push(Rule { src: net("11.0.0.0/8"), ..Rule::any(20, act(5)) });
        assert!(RuleDatabase::new(r).is_ok());
        // Nor 10/8 on ingress 2 and 10/8 on ingress 3.
        let mut r = example_rules();
        r.push(Rule { src: net("10.9.0.0/16"), ingress: Some(3), ..Rule::any(20, act(5)) });
        assert!(RuleDatabase::new(r).is_ok());
    }

    #[test]
    fn bad_ranges_and_dscp_values_are_refused() {
        let r = vec![Rule { src_port: Some(PortRange { lo: 90, hi: 80 }), ..Rule::any(1, act(1)) }];
        let e = RuleDatabase::new(r).unwrap_err();
        assert_eq!(e.to_string(), "classifier.rules [0].src_port: lo 90 is above hi 80; a range needs lo <= hi");
        let r = vec![Rule::any(1, RuleAction { stream: 1, class: 0, set_dscp: Some(64) })];
        assert!(RuleDatabase::new(r).unwrap_err().message.contains("set_dscp (64)"));
    }

    #[test]
    fn longest_prefix_match_holds_at_the_ends_of_the_address_line() {
        // /0, /1, /32 and nested prefixes touching 0.0.0.0 and 255.255.255.255
        // (and the same in IPv6): the database against the rules' own `matches`.
        let nets = [
            "0.0.0.0/0",
            "0.0.0.0/1",
            "128.0.0.0/1",
            "255.255.255.255/32",
            "0.0.0.0/32",
            "255.255.255.0/24",
            "10.0.0.0/8",
            "10.1.0.0/16",
            "10.1.2.3/32",
            "::/0",
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128",
            "::/128",
            "2001:db8::/32",
        ];
        let rules: Vec<Rule> = nets
            .iter()
            .enumerate()
            .map(|(i, n)| Rule { src: net(n), ..Rule::any(100 - i as u32, act(i as u16)) })
            .collect();
        let db = RuleDatabase::new(rules.clone()).unwrap();
        let addrs = [
            "0.0.0.0",
            "0.0.0.1",
            "127.255.255.255",
            "128.0.0.0",
            "255.255.255.254",
            "255.255.255.255",
            "255.255.254.255",
            "10.0.0.0",
            "10.1.2.2",
            "10.1.2.3",
            "10.1.2.4",
            "10.255.255.255",
            "11.0.0.0",
            "::",
            "::1",
            "2001:db8::",
            "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff",
            "2001:db9::",
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe",
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        ];
        for a in addrs {
            let mut k = key([0; 4], 1, [0; 4], 2, proto::UDP);
            k.src = a.parse().unwrap();
            let want = rules.iter().filter(|r| r.matches(&k, 0, 0)).min_by_key(|r| r.priority);
            assert_eq!(db.lookup_rule(&k, 0, 0), want, "{a}");
        }
    }

    #[test]
    fn ipv6_prefixes_match_only_ipv6_addresses() {
        let r = vec![
            Rule { src: net("2001:db8::/32"), ..Rule::any(1, act(1)) },
            Rule { src: net("0.0.0.0/0"), ..Rule::any(2, act(2)) },
        ];
        let db = RuleDatabase::new(r).unwrap();
        let mut k = key([1, 2, 3, 4], 1, [5, 6, 7, 8], 2, proto::TCP);
        assert_eq!(db.lookup(&k, 0, 0).map(|a| a.stream), Some(2));
        k.src = "2001:db8::1".parse().unwrap();
        assert_eq!(db.lookup(&k, 0, 0).map(|a| a.stream), Some(1));
        k.src = "2001:db9::1".parse().unwrap();
        assert_eq!(db.lookup(&k, 0, 0).map(|a| a.stream), None, "0.0.0.0/0 is IPv4 only");
    }
}
