"""From a validated scenario to a testbed plan: which links are emulated,
which bridge each host sits on, what each generator sends.

The testbed emulates the scenario's **bottleneck links**: the preset's
(``dumbbell``, ``star``: one; ``parking_lot``: each ``r{i} -> r{i+1}``),
or in an explicit topology every link with a queue, stages or MACE table
of its own (failing that, the one slowest link). The topology must be a
tree. Removing the emulated links splits it into **segments**: each is one
Linux bridge, its hosts on veths into it (scenario routers inside a
segment are the bridge); each emulated link is a ``qoslab-router`` between
the bridges of its two ends (its rate as the pacer, its queues and stages,
its delay in the router's delay line). Every other link is a plain veth:
no rate, no queue, no delay of its own, so its delay is folded into an
emulated link where that is exact (a segment behind one emulated link
whose hosts share one path delay), or the host's access link is emulated
too (:func:`_fold_delays`, ``docs/testbed.md`` "Topology").

Everything the testbed cannot do yet is refused before anything is built,
each problem naming its field and why (:func:`unsupported`).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

#: UDP + IPv4 + Ethernet header bytes around a generator's payload: a scenario packet of
#: wire size W (``size + header``) is sent as a UDP datagram of W - 42 bytes.
OVERHEAD = 42
#: The generator's payload header (magic, flow id, sequence, send time).
PAYLOAD_HEADER = 24
MAX_PAYLOAD = 1472
#: Queue disciplines an emulated link may have (docs/testbed.md). The class-based ones (``cbt``,
#: ``dcbt``, ``red`` with ChIPS, ``prio`` by class) read the packet's class tag, which the
#: generator carries in the DSCP's class selector (precedence, DSCP >> 3 = the group's
#: ``class``) and the router reads back (``class_tag = "precedence"``, :func:`class_tag`).
QUEUES = ("fifo", "red", "mace", "cbt", "dcbt", "prio")
#: The highest traffic ``class`` a DSCP's class selector carries.
MAX_CLASS = 7
MODELS = ("cbr", "poisson", "on_off", "ftp", "transfer")
TCP_MODELS = ("ftp", "transfer")
#: TCP/IPv4 (no options: timestamps are off) and Ethernet header bytes around a segment's payload.
TCP_OVERHEAD = 54

_RATE = {"bps": 1, "b/s": 1, "kbps": 10**3, "Kbps": 10**3, "kb/s": 10**3, "Mbps": 10**6, "Mb/s": 10**6}
_RATE |= {"Gbps": 10**9, "Gb/s": 10**9, "Tbps": 10**12, "bit": 1, "kbit": 10**3, "mbit": 10**6, "gbit": 10**9}
_RATE |= {"tbit": 10**12, "T1": 1_544_000, "T3": 44_736_000, "OC3": 155_520_000, "OC12": 622_080_000}
_DUR = {"ns": 1, "us": 10**3, "µs": 10**3, "ms": 10**6, "s": 10**9, "min": 60 * 10**9, "h": 3600 * 10**9}
_SIZE = {"B": 1, "kB": 10**3, "MB": 10**6, "GB": 10**9, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}
_NUM = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)\s*(.*?)\s*$")


def _quantity(text: Any, units: dict[str, int], what: str) -> Fraction:
    if isinstance(text, int | float):
        return Fraction(text)
    m = _NUM.match(str(text))
    if not m or m.group(2) not in units:
        raise ValueError(f"not a {what}: {text!r}")
    if m.group(2) in ("T1", "T3", "OC3", "OC12") and m.group(1) == "":
        return Fraction(units[m.group(2)])
    return Fraction(m.group(1)) * units[m.group(2)]


def rate_bps(text: Any) -> int:
    """``"25Mbps"`` → 25_000_000 (the echo's units, written back as strings)."""
    if isinstance(text, str) and text in ("T1", "T3", "OC3", "OC12"):
        return _RATE[text]
    return int(_quantity(text, _RATE, "rate"))


def dur_ns(text: Any) -> int:
    """``"20ms"`` → 20_000_000."""
    return int(_quantity(text, _DUR, "duration"))


def size_bytes(text: Any) -> int:
    """``"1000B"`` → 1000."""
    return int(_quantity(text, _SIZE, "size"))


@dataclass
class Problem:
    """Something the testbed does not support, at a scenario field."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@dataclass
class Link:
    a: str
    b: str
    spec: dict[str, Any]
    path: str  # the scenario field that defines it

    @property
    def delay_ns(self) -> int:
        return dur_ns(self.spec.get("delay", "0s"))

    @property
    def rate(self) -> int:
        return rate_bps(self.spec["rate"])


@dataclass
class FlowPlan:
    """One flow as the generator sends it (``crates/traffic/src/spec.rs``)."""

    id: int
    name: str
    group: str
    group_index: int
    index: int
    src: str
    dst: str
    dst_port: int
    src_port: int
    spec: dict[str, Any]
    wire_bytes_mean: float
    #: The group's traffic ``class`` (the simulator's class tag), carried in the DSCP's top 3 bits.
    cls: int = 0
    #: Kernel TCP settings of a TCP flow (None: UDP): init_window, max_window (segments),
    #: min_rto_ms, delayed_ack, ecn, mss.
    tcp: dict[str, Any] | None = None


@dataclass
class Bump:
    """One emulated link: a ``qoslab-router`` between the bridges of the segments of its two ends,
    with the link's rate, queues and stages, and a delay line of ``delay_ns`` (the link's delay
    plus the plain path delays folded into it, docs/testbed.md "Topology")."""

    link: Link
    delay_ns: int
    a_seg: int  # segment (bridge) of link.a
    b_seg: int  # segment (bridge) of link.b
    #: Why it is emulated: "bottleneck" (the preset's), "own rules" (a queue, stages or MACE
    #: table of its own), "slowest" (an explicit topology's lowest rate), "access" (a host's
    #: link given a router of its own so that its delay is exact).
    why: str = "bottleneck"

    @property
    def direction(self) -> str:
        return f"{self.link.a}->{self.link.b}"

    @property
    def reverse(self) -> str:
        return f"{self.link.b}->{self.link.a}"


@dataclass
class Plan:
    """The testbed of one scenario: segments (one Linux bridge each: the hosts and routers joined
    by plain links) and the emulated links (bumps) between them."""

    echo: dict[str, Any]
    hosts: list[str]
    segment: dict[str, int]  # host -> its segment (bridge)
    bumps: list[Bump]
    segments: int = 0
    flows: list[FlowPlan] = field(default_factory=list)
    duration_ns: int = 0

    @property
    def class_tag(self) -> str:
        """The routers' ``class_tag`` rule: ``"precedence"`` (the class selector of the DSCP the
        generator sets) when some group has a ``class`` other than 0, else ``"zero"``."""
        return "precedence" if any(f.cls for f in self.flows) else "zero"

    @property
    def link(self) -> Link:
        """The first emulated link (the dumbbell's bottleneck)."""
        return self.bumps[0].link

    @property
    def router_delay_ns(self) -> int:
        return self.bumps[0].delay_ns

    @property
    def direction(self) -> str:
        return self.bumps[0].direction

    @property
    def reverse(self) -> str:
        return self.bumps[0].reverse

    @property
    def side(self) -> dict[str, str]:
        """Each host's side of the first emulated link, ``"a"`` or ``"b"``."""
        adj: dict[int, list[int]] = {}
        for b in self.bumps[1:]:
            adj.setdefault(b.a_seg, []).append(b.b_seg)
            adj.setdefault(b.b_seg, []).append(b.a_seg)
        on_a, stack = {self.bumps[0].a_seg}, [self.bumps[0].a_seg]
        while stack:
            for m in adj.get(stack.pop(), []):
                if m not in on_a:
                    on_a.add(m)
                    stack.append(m)
        return {h: ("a" if self.segment[h] in on_a else "b") for h in self.hosts}


#: The topology presets the testbed can build.
PRESETS = ("dumbbell", "parking_lot", "star", "explicit")


def _links(topo: dict[str, Any]) -> tuple[list[str], list[str], list[Link], list[Link] | None]:
    """Hosts, routers and links of a topology whose preset is one of :data:`PRESETS`, in the
    simulator's node order (``crates/scenario/src/expand.rs``: it decides which hosts a group's
    patterns match, in turn), and the preset's bottlenecks (``None``: an explicit topology)."""
    preset = topo.get("preset")
    hosts: list[str]
    routers: list[str]
    links: list[Link]
    access = topo.get("access") or {}
    egress = topo.get("egress") or access
    if preset == "dumbbell":
        n_src, n_sink, n_r = int(topo["sources"]), int(topo.get("sinks", 1)), int(topo.get("routers", 1))
        srcs, sinks = [f"src{i}" for i in range(n_src)], [f"sink{i}" for i in range(n_sink)]
        routers = ["r0"] if n_r == 1 else ["r0", "r1"]
        links = [Link(s, "r0", access, "topology.access") for s in srcs]
        if n_r == 1:
            bottleneck = Link("r0", "sink0", topo["bottleneck"], "topology.bottleneck")
            links.append(bottleneck)
            links += [Link("r0", s, egress, "topology.egress") for s in sinks[1:]]
        else:
            bottleneck = Link("r0", "r1", topo["bottleneck"], "topology.bottleneck")
            links += [bottleneck] + [Link("r1", s, egress, "topology.egress") for s in sinks]
        return srcs + sinks, routers, links, [bottleneck]
    if preset == "parking_lot":
        k = int(topo["bottlenecks"])
        routers = [f"r{i}" for i in range(k + 1)]
        hosts = ["src_long", "sink_long"]
        hop_queues = topo.get("hop_queues") or []
        bns = [
            Link(
                f"r{i}",
                f"r{i + 1}",
                {**topo["bottleneck"], "queue": hop_queues[i]} if hop_queues else topo["bottleneck"],
                f"topology.hop_queues.{i}" if hop_queues else "topology.bottleneck",
            )
            for i in range(k)
        ]
        links = [
            *bns,
            Link("src_long", "r0", access, "topology.access"),
            Link(f"r{k}", "sink_long", egress, "topology.egress"),
        ]
        for i in range(k):
            hosts += [f"src_x{i}", f"sink_x{i}"]
            links += [
                Link(f"src_x{i}", f"r{i}", access, "topology.access"),
                Link(f"r{i + 1}", f"sink_x{i}", egress, "topology.egress"),
            ]
        return hosts, routers, links, bns
    if preset == "star":
        n = int(topo["ingresses"])
        delays = topo.get("ingress_delays") or []
        ins = [f"in{i}" for i in range(n)]
        hosts, routers, links = [], [], []
        if topo.get("ingress_routers"):
            routers += ins
            host_link = {**access, "rate": "10Gbps", "delay": "0s", "stages": [], "reverse_stages": []}
            for i, r in enumerate(ins):
                hosts.append(f"src{i}")
                links.append(Link(f"src{i}", r, host_link, "topology.access"))
        else:
            hosts += ins
        routers += ["r0", "r1"]
        hosts.append("sink0")
        for i, r in enumerate(ins):
            spec = {**access, "delay": delays[i]} if i < len(delays) else access
            path = f"topology.ingress_delays.{i}" if i < len(delays) else "topology.access"
            links.append(Link(r, "r0", spec, path))
        bottleneck = Link("r0", "r1", topo["bottleneck"], "topology.bottleneck")
        links += [bottleneck, Link("r1", "sink0", egress, "topology.egress")]
        return hosts, routers, links, [bottleneck]
    hosts = [n["name"] for n in topo["nodes"] if n.get("kind") == "host"]
    routers = [n["name"] for n in topo["nodes"] if n.get("kind") != "host"]
    links = [Link(lk["a"], lk["b"], lk, f"topology.links.{i}") for i, lk in enumerate(topo["links"])]
    return hosts, routers, links, None


def _has_own_rules(spec: dict[str, Any], default_queue: Any) -> bool:
    own = any(spec.get(k) not in (None, [], default_queue) for k in ("queue", "reverse_queue"))
    return own or bool(spec.get("stages")) or bool(spec.get("reverse_stages")) or spec.get("mace") is not None


def _components(nodes: list[str], links: list[Link], without: list[Link]) -> dict[str, int]:
    """Each node's connected component once the links ``without`` are removed (numbered in node order)."""
    skip = {id(lk) for lk in without}
    adj: dict[str, list[str]] = {n: [] for n in nodes}
    for lk in links:
        if id(lk) not in skip:
            adj[lk.a].append(lk.b)
            adj[lk.b].append(lk.a)
    comp: dict[str, int] = {}
    for start in nodes:
        if start in comp:
            continue
        comp[start] = start_id = len(set(comp.values()))
        stack = [start]
        while stack:
            for m in adj[stack.pop()]:
                if m not in comp:
                    comp[m] = start_id
                    stack.append(m)
    return comp


def _path_delay(frm: str, to: str, links: list[Link], without: list[Link]) -> int | None:
    """Propagation delay of the fewest-hop path (the simulator's routing) from ``frm`` to ``to``
    over the links not in ``without``."""
    from collections import deque

    skip = {id(lk) for lk in without}
    best: dict[str, tuple[int, int]] = {frm: (0, 0)}
    q = deque([frm])
    while q:
        n = q.popleft()
        hops, d = best[n]
        for lk in links:
            if id(lk) in skip or n not in (lk.a, lk.b):
                continue
            m = lk.b if n == lk.a else lk.a
            if m not in best:
                best[m] = (hops + 1, d + lk.delay_ns)
                q.append(m)
    return best[to][1] if to in best else None


def unsupported(echo: dict[str, Any]) -> list[Problem]:
    """What in this scenario the testbed cannot run yet (empty: it can)."""
    return make_plan(echo, check_only=True)[1]


def _emulated(links: list[Link], preset_bns: list[Link] | None, default_queue: Any) -> tuple[list[Bump], list[Problem]]:
    """The links the testbed emulates first: the preset's bottlenecks, or in an explicit topology
    every link with rules of its own (failing that, the one slowest link)."""
    if preset_bns is not None:
        return [Bump(lk, 0, -1, -1, "bottleneck") for lk in preset_bns], []
    own = [lk for lk in links if _has_own_rules(lk.spec, default_queue)]
    if own:
        return [Bump(lk, 0, -1, -1, "own rules") for lk in own], []
    slowest = min(lk.rate for lk in links)
    cands = [lk for lk in links if lk.rate == slowest]
    if len(cands) > 1:
        return [], [
            Problem(
                "topology.links",
                f"no link has a queue of its own and {len(cands)} share the "
                "lowest rate; allowed: one link to emulate (give it a queue)",
            )
        ]
    return [Bump(cands[0], 0, -1, -1, "slowest")], []


def _segment_ends(bumps: list[Bump], comp: dict[str, int]) -> dict[int, list[tuple[int, str]]]:
    """Segment -> the emulated links' ends in it: (bump index, the end node)."""
    ends: dict[int, list[tuple[int, str]]] = {}
    for j, b in enumerate(bumps):
        ends.setdefault(comp[b.link.a], []).append((j, b.link.a))
        ends.setdefault(comp[b.link.b], []).append((j, b.link.b))
    return ends


def _fold_delays(
    hosts: list[str], nodes: list[str], links: list[Link], bumps: list[Bump], used: set[str], bad: list[Problem]
) -> list[Bump]:
    """Where the plain links' delays go (docs/testbed.md "Topology"). A segment (what is left
    joined once the emulated links are removed: one bridge) with one emulated link's end is a
    leaf: every flow from or to its hosts crosses that link, so their common path delay to it is
    added to the link's delay line (the dumbbell's folding). Where that is not exact (a leaf whose
    hosts' delays differ, or a segment between emulated links), every plain link with a delay
    that leads only to hosts (no emulated link behind it: a host's access link, or an ingress
    router's) is emulated too, by a router of its own with the link's rate, delay and queues. A
    delay on a plain link between emulated links is refused. Returns the bumps, those access
    bumps appended, with their delays."""
    comp = _components(nodes, links, [b.link for b in bumps])
    ends = _segment_ends(bumps, comp)
    bumped = {id(b.link) for b in bumps}
    extra: list[Bump] = []
    for seg in sorted(set(comp.values())):
        seg_ends = ends.get(seg, [])
        seg_nodes = [n for n in nodes if comp[n] == seg]
        plain = [lk for lk in links if id(lk) not in bumped and comp[lk.a] == seg]
        if not seg_ends:
            continue
        if len(seg_ends) == 1:
            end = seg_ends[0][1]
            ds = {_path_delay(h, end, plain, []) or 0 for h in hosts if comp[h] == seg and h in used}
            if len(ds) <= 1:
                continue
        end_nodes = {n for _, n in seg_ends}
        for lk in plain:
            if not lk.delay_ns:
                continue
            split = _components(seg_nodes, plain, [lk])
            behind = [{n for n in seg_nodes if split[n] == split[x]} for x in (lk.a, lk.b)]
            branch = next((side for side in behind if not side & end_nodes), None)
            if branch is None:
                bad.append(
                    Problem(
                        f"{lk.path}.delay",
                        f"{lk.spec.get('delay')} on {lk.a}-{lk.b}, a plain link between emulated links "
                        f"({', '.join(sorted({bumps[j].direction for j, _ in seg_ends}))}); allowed: 0s "
                        "(the testbed delays frames only in its qoslab-routers, and there the delay "
                        "would be added to flows that do not cross this link)",
                    )
                )
            elif branch & used:
                extra.append(Bump(lk, 0, -1, -1, "access"))
    out = [*bumps, *extra]
    comp = _components(nodes, links, [b.link for b in out])
    ends = _segment_ends(out, comp)
    bumped = {id(b.link) for b in out}
    fold: dict[tuple[int, str], int] = {}
    for seg, seg_ends in ends.items():
        if len(seg_ends) != 1:
            continue
        j, end = seg_ends[0]
        plain = [lk for lk in links if id(lk) not in bumped and comp[lk.a] == seg]
        ds = {_path_delay(h, end, plain, []) or 0 for h in hosts if comp[h] == seg and h in used}
        if len(ds) == 1:
            fold[(j, end)] = ds.pop()
    for j, b in enumerate(out):
        b.delay_ns = b.link.delay_ns + fold.get((j, b.link.a), 0) + fold.get((j, b.link.b), 0)
        b.a_seg, b.b_seg = comp[b.link.a], comp[b.link.b]
    return out


def make_plan(echo: dict[str, Any], *, check_only: bool = False) -> tuple[Plan | None, list[Problem]]:
    """The plan of a validated scenario echo, or the problems that stop it."""
    bad: list[Problem] = []
    topo = echo["topology"]
    if topo.get("preset") not in PRESETS:
        allowed = ", ".join(PRESETS)
        return None, [Problem("topology.preset", f"{topo.get('preset')!r} is not supported yet; allowed: {allowed}")]
    hosts, routers, links, preset_bns = _links(topo)
    nodes = hosts + routers
    default_queue = topo.get("default_queue")
    bumps, problems = _emulated(links, preset_bns, default_queue)
    if problems:
        return None, problems
    whole = _components(nodes, links, [])
    if len(links) >= len(nodes) - len(set(whole.values())) + 1:
        bad.append(
            Problem(
                "topology.links",
                f"{len(links)} links join {len(nodes)} nodes in a loop; allowed: a tree (one path "
                "between any two nodes: the testbed's bridges forward by static entries)",
            )
        )
        return None, bad
    emulated = {id(b.link) for b in bumps}
    fastest = max(bumps, key=lambda b: b.link.rate).link
    for lk in links:
        if id(lk) in emulated:
            continue
        if _has_own_rules(lk.spec, default_queue):
            bad.append(
                Problem(
                    lk.path,
                    "has a queue or stages of its own, but is not one of the links the testbed "
                    f"emulates ({', '.join(b.direction for b in bumps)}); allowed: the default queue",
                )
            )
        if lk.rate < fastest.rate:
            bad.append(
                Problem(
                    f"{lk.path}.rate",
                    f"{lk.spec['rate']} is below the emulated link {fastest.a}-{fastest.b}'s "
                    f"{fastest.spec['rate']}: a "
                    "bottleneck the testbed does not emulate; allowed: at least the fastest "
                    "emulated link's rate",
                )
            )
    for k in ("loss", "reverse_loss"):
        for lk in links:
            if float(lk.spec.get(k) or 0) != 0:
                bad.append(
                    Problem(f"{lk.path}.{k}", f"{lk.spec[k]}; allowed: 0 (the testbed loses what real packets lose)")
                )
    if echo.get("pcn"):
        bad.append(Problem("pcn", "PCN edge behaviours are not supported on the testbed yet; allowed: none"))
    if (echo.get("admission") or {}).get("type", "admit_all") != "admit_all":
        bad.append(
            Problem(
                "admission.type",
                f"{echo['admission']['type']!r} is not supported on the testbed yet "
                "(it needs a signalling path); allowed: admit_all",
            )
        )
    comp = _components(nodes, links, [b.link for b in bumps])
    flows, used = _plan_traffic(echo, hosts, comp, whole, bad)
    bumps = _fold_delays(hosts, nodes, links, bumps, used, bad)
    carried = _carry_classes(flows, bad)
    unsupported_q: dict[str, tuple[str, str, list[str]]] = {}  # field -> what, why, the emulated directions
    for b in bumps:
        for k, direction in (("queue", b.direction), ("reverse_queue", b.reverse)):
            q = b.link.spec.get(k) or default_queue or {"type": "fifo"}
            at = f"{b.link.path}.{k}" if b.link.spec.get(k) else "topology.default_queue"
            for sub, what, why in _queue_problems(q, at, carried):
                unsupported_q.setdefault(sub, (what, why, []))[2].append(direction)
        if carried:
            for k in ("stages", "reverse_stages"):
                if b.link.spec.get(k):
                    bad.append(
                        Problem(
                            f"{b.link.path}.{k}",
                            "stages on an emulated link while traffic classes are carried (their rules "
                            "would see the class in the DSCP's top bits); allowed: none, or every "
                            "traffic class 0",
                        )
                    )
    for at, (what, why, dirs) in unsupported_q.items():
        bad.append(Problem(at, f"{what} on the emulated link direction(s) {', '.join(dirs)} {why}"))
    if bad or check_only:
        # A preset's links share their fields (every access link is ``topology.access``): each problem once.
        return None, list({(p.path, p.message): p for p in bad}.values())
    seg = _components(nodes, links, [b.link for b in bumps])
    plan = Plan(
        echo=echo,
        hosts=hosts,
        segment={h: seg[h] for h in hosts},
        bumps=bumps,
        segments=len(set(seg.values())),
        flows=flows,
        duration_ns=dur_ns(echo["duration"]),
    )
    return plan, []


def _queue_problems(q: dict[str, Any], at: str, carried: bool) -> list[tuple[str, str, str]]:
    """What the testbed cannot run in queue ``q`` (at field ``at``), recursing into ``prio``'s
    bands: (field, what, why and what is allowed) triples."""
    kind = q.get("type")
    if kind not in QUEUES:
        return [(f"{at}.type", repr(kind), f"is not supported on the testbed yet; allowed: {', '.join(QUEUES)}")]
    out: list[tuple[str, str, str]] = []
    if kind == "prio":
        if carried and q.get("classify_by", "class") == "dscp":
            out.append(
                (
                    f"{at}.classify_by",
                    '"dscp"',
                    "while traffic classes are carried (the DSCP's top three bits hold the class); "
                    'allowed: "class", or every traffic class 0',
                )
            )
        for i, band in enumerate(q.get("bands") or []):
            out += _queue_problems(band, f"{at}.bands.{i}", carried)
    return out


def _carry_classes(flows: list[FlowPlan], bad: list[Problem]) -> bool:
    """When some flow has a ``class`` other than 0, every flow's wire DSCP becomes
    ``class << 3 | dscp`` (the class in the class selector, which the routers read back) and a
    group's own ``dscp`` must then fit the low three bits. Returns whether classes are carried."""
    if not any(f.cls for f in flows):
        return False
    seen: set[int] = set()
    for f in flows:
        dscp = f.spec["dscp"]
        if dscp > 7:
            if f.group_index not in seen:
                bad.append(
                    Problem(
                        f"traffic.{f.group_index}.dscp",
                        f"{dscp} while traffic classes are carried (the DSCP's top three bits hold "
                        "the class); allowed: 0 to 7, or every traffic class 0",
                    )
                )
                seen.add(f.group_index)
            continue
        f.spec["dscp"] = (f.cls << 3) | dscp
    return True


def _period(g: dict[str, Any], rate_key: str, payload_mean: Fraction) -> dict[str, int]:
    """The simulator's exact period (``Period::from_rate`` / ``from_interval``) as ``num/den`` ns."""
    if g.get("interval") is not None:
        return {"num": dur_ns(g["interval"]), "den": 1}
    millibits = int(payload_mean * 8000)
    return {"num": millibits * 1_000_000, "den": rate_bps(g[rate_key])}


def _plan_traffic(
    echo: dict[str, Any], hosts: list[str], side: dict[str, int], whole: dict[str, int], bad: list[Problem]
) -> tuple[list[FlowPlan], set[str]]:
    """The flows of every group; ``side``: each node's segment between the emulated links,
    ``whole``: its connected component (a flow must join two segments of one component)."""
    import fnmatch

    flows: list[FlowPlan] = []
    used: set[str] = set()
    duration = dur_ns(echo["duration"])
    for gi, g in enumerate(echo.get("traffic") or []):
        at = f"traffic.{gi}"
        model = g.get("model")
        if model not in MODELS:
            bad.append(
                Problem(f"{at}.model", f"{model!r} is not supported on the testbed yet; allowed: {', '.join(MODELS)}")
            )
            continue
        tcp = g.get("tcp") or {}
        if model in TCP_MODELS and tcp.get("stack", "rfc") != "rfc":
            bad.append(
                Problem(
                    f"{at}.tcp.stack",
                    f'{tcp.get("stack")!r}: the kernel follows its own rules, not ns-2\'s; allowed: "rfc"',
                )
            )
        if model in TCP_MODELS and tcp.get("limited_transmit"):
            bad.append(
                Problem(
                    f"{at}.tcp.limited_transmit",
                    "true: the kernel's limited transmit cannot be switched on alone; allowed: false",
                )
            )
        for k, why in (
            ("arrivals", "flow arrival processes"),
            ("shaper", "entry shapers"),
        ):
            if g.get(k) not in (None, 0, 0.0):
                bad.append(Problem(f"{at}.{k}", f"{why} are not supported on the testbed yet; allowed: none"))
        for k in ("send_jitter", "randomize"):
            if model in TCP_MODELS and g.get(k) not in (None, 0, 0.0):
                bad.append(
                    Problem(f"{at}.{k}", "on a TCP group (the kernel decides when segments leave); allowed: none")
                )
        if g.get("src_choice", "round_robin") != "round_robin":
            bad.append(
                Problem(
                    f"{at}.src_choice",
                    f"{g['src_choice']!r}: random sources are not drawn on the testbed yet (its flows take the "
                    'matches of src in turn); allowed: "round_robin"',
                )
            )
        cls = int(g.get("class") or 0)
        if cls > MAX_CLASS or (cls != 0 and model in TCP_MODELS):
            allowed = "0 for TCP groups (their ACKs carry no class)" if model in TCP_MODELS else f"0 to {MAX_CLASS}"
            bad.append(
                Problem(
                    f"{at}.class",
                    f"{g['class']}: the testbed carries a class in the DSCP's class selector; allowed: {allowed}",
                )
            )
        if model in TCP_MODELS:
            _plan_tcp(g, gi, at, hosts, side, whole, duration, flows, used, bad)
            continue
        header = size_bytes(g.get("header") or "0B")
        size = g["size"]
        if isinstance(size, dict):
            base, exp_mean = size_bytes(size["base"]), size_bytes(size.get("exp_mean") or "0B")
        else:
            base, exp_mean = size_bytes(size), 0
        udp = base + header - OVERHEAD
        if udp < PAYLOAD_HEADER or udp > MAX_PAYLOAD:
            bad.append(
                Problem(
                    f"{at}.size",
                    f"a wire size (size + header) of {base + header} B; allowed: "
                    f"{OVERHEAD + PAYLOAD_HEADER} to {OVERHEAD + MAX_PAYLOAD} B on the testbed (UDP/IPv4/"
                    "Ethernet headers and the sequence header inside, one unfragmented frame)",
                )
            )
            continue
        srcs = [h for h in hosts if fnmatch.fnmatchcase(h, g["src"])]
        dsts = [h for h in hosts if fnmatch.fnmatchcase(h, g["dst"])]
        n = int(g.get("flows") or 1)
        payload_mean = Fraction(base) + exp_mean
        if model == "cbr":
            m: dict[str, Any] = {"cbr": {"period": _period(g, "rate", payload_mean)}}
        elif model == "poisson":
            p = _period(g, "rate", payload_mean)
            m = {"poisson": {"mean_gap_ns": p["num"] / p["den"]}}
        else:
            m = {
                "on_off": {
                    "period": _period(g, "peak", payload_mean),
                    "on_ns": float(dur_ns(g["on"])),
                    "off_ns": float(dur_ns(g["off"])),
                    "dist": g.get("dist") or "exponential",
                    "shape": float(g.get("shape") or 1.5),
                    "packetization": g.get("packetization") or "ceil",
                }
            }
        start = dur_ns(g.get("start") or "0s")
        stop = min(dur_ns(g["stop"]), duration) if g.get("stop") else duration
        for i in range(n):
            f = _flow(
                g,
                gi,
                i,
                at,
                srcs,
                dsts,
                side,
                whole,
                flows,
                used,
                bad,
                start=start,
                stop=stop,
                wire_bytes_mean=float(payload_mean + header),
                payload={"base": udp, "exp_mean": float(exp_mean)},
                model=m,
            )
            if f is None:
                break
            flows.append(f)
    if len(flows) > 40_000:
        bad.append(
            Problem("traffic", f"{len(flows)} flows; allowed: at most 40,000 on the testbed (one UDP port each)")
        )
    _check_tcp_windows(flows, bad)
    return flows, used


def _check_tcp_windows(flows: list[FlowPlan], bad: list[Problem]) -> None:
    """A host's TCP receiver has one window (``max_window`` x ``size``, docs/testbed.md): the TCP
    groups into one host must share both."""
    first: dict[str, tuple[str, int, int]] = {}  # host -> group, window (segments), size
    for f in flows:
        if f.tcp is None:
            continue
        mine = (f.group, f.tcp["max_window"], f.tcp["mss"])
        group, window, mss = first.setdefault(f.dst, mine)
        if (window, mss) != mine[1:]:
            bad.append(
                Problem(
                    f"traffic.{f.group_index}.tcp.max_window",
                    f"{mine[1]} segments of {mine[2]} B into {f.dst}, where group {group!r} has {window} of "
                    f"{mss} B; allowed: the same window and size for every TCP group into one host on the "
                    "testbed (one receiver window per host)",
                )
            )
            first[f.dst] = mine  # one problem per differing group


def _flow(
    g: dict[str, Any],
    gi: int,
    i: int,
    at: str,
    srcs: list[str],
    dsts: list[str],
    side: dict[str, int],
    whole: dict[str, int],
    flows: list[FlowPlan],
    used: set[str],
    bad: list[Problem],
    *,
    start: int,
    stop: int,
    wire_bytes_mean: float,
    payload: dict[str, Any],
    model: dict[str, Any],
) -> FlowPlan | None:
    """Flow ``i`` of group ``g`` (index ``gi``), its endpoints in turn from ``srcs`` and ``dsts``;
    ``None`` (and a problem in ``bad``) when it crosses no emulated link."""
    src, dst = srcs[i % len(srcs)], dsts[i % len(dsts)]
    if whole[src] != whole[dst] or side[src] == side[dst]:
        bad.append(
            Problem(
                f"{at}.dst",
                f"flow {g['name']}.{i} ({src} -> {dst}) crosses no emulated link; allowed: "
                "traffic between hosts an emulated link separates",
            )
        )
        return None
    used |= {src, dst}
    fid = len(flows)
    return FlowPlan(
        id=fid,
        name=f"{g['name']}.{i}",
        group=g["name"],
        group_index=gi,
        index=i,
        src=src,
        dst=dst,
        dst_port=int(g["dst_port"]) if g.get("dst_port") is not None else 9000 + gi,
        src_port=20000 + fid,
        wire_bytes_mean=wire_bytes_mean,
        cls=int(g.get("class") or 0),
        spec={
            "id": fid,
            "src_port": 20000 + fid,
            "dscp": int(g.get("dscp") or 0),
            "ecn": bool(g.get("ecn")),
            "start_ns": start,
            "jitter_ns": dur_ns(g.get("start_jitter") or "0s"),
            "stop_ns": stop,
            "stream": (1 << 61) | (gi << 32) | i,
            # The simulator's per-packet shifts, drawn by the generator as in its `emit`.
            "randomize": float(g.get("randomize") or 0.0),
            "send_jitter_max_ns": dur_ns((g.get("send_jitter") or {}).get("max") or "0s"),
            "payload": payload,
            "model": model,
        },
    )


def _max_window_segments(v: Any, mss: int) -> int:
    """``tcp.max_window`` (``20``, ``"20pkts"`` or bytes) in whole segments."""
    if isinstance(v, int):
        return v
    t = str(v)
    if t.endswith(("pkts", "pkt", "packets")):
        return int(re.sub(r"[^0-9]", "", t))
    return max(1, size_bytes(t) // mss)


def _plan_tcp(
    g: dict[str, Any],
    gi: int,
    at: str,
    hosts: list[str],
    side: dict[str, int],
    whole: dict[str, int],
    duration: int,
    flows: list[FlowPlan],
    used: set[str],
    bad: list[Problem],
) -> None:
    """Kernel TCP flows of an ``ftp`` or ``transfer`` group: the segment payload is ``size``."""
    import fnmatch

    mss = size_bytes(g["size"])
    if not 88 <= mss <= 1460:
        bad.append(
            Problem(
                f"{at}.size",
                f"a segment payload of {mss} B; allowed: 88 to 1460 B on the testbed (TCP_MAXSEG, one 1500-byte frame)",
            )
        )
        return
    tcp = g.get("tcp") or {}
    srcs = [h for h in hosts if fnmatch.fnmatchcase(h, g["src"])]
    dsts = [h for h in hosts if fnmatch.fnmatchcase(h, g["dst"])]
    start = dur_ns(g.get("start") or "0s")
    stop = min(dur_ns(g["stop"]), duration) if g.get("stop") else duration
    nbytes = size_bytes(g["bytes"]) if g.get("model") == "transfer" else None
    for i in range(int(g.get("flows") or 1)):
        f = _flow(
            g,
            gi,
            i,
            at,
            srcs,
            dsts,
            side,
            whole,
            flows,
            used,
            bad,
            start=start,
            stop=stop,
            wire_bytes_mean=float(mss + TCP_OVERHEAD),
            payload={"base": 0, "exp_mean": 0.0},
            model={"tcp": {"mss": mss, "bytes": nbytes, "congestion": "reno"}},
        )
        if f is None:
            return
        flows.append(
            dataclasses.replace(
                f,
                tcp={
                    "init_window": int(tcp.get("init_window") or 1),
                    "max_window": _max_window_segments(tcp.get("max_window", 20), mss),
                    "min_rto_ms": dur_ns(tcp.get("min_rto") or "200ms") // 1_000_000,
                    "delayed_ack": bool(tcp.get("delayed_ack")),
                    "ecn": bool(g.get("ecn")),
                    "mss": mss,
                },
            )
        )
