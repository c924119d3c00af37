"""From a validated scenario to a testbed plan: which links are emulated,
which bridge each host sits on, what each generator sends.

Everything about the scenario itself comes from the core's model of it
(:attr:`qoslab.Scenario.model`: the expanded nodes and links, the
preset's bottlenecks, each group's flows with their endpoints, routes,
RNG streams and exact periods, numbers in the core's units); this module
holds only what is the testbed's own.

The testbed emulates the scenario's **bottleneck links**: the preset's
(``model["bottlenecks"]``), or in an explicit topology every link with a
queue, stages or MACE table of its own (failing that, the one slowest
link). The topology must be a tree. Removing the emulated links splits it
into **segments**: each is one Linux bridge, its hosts on veths into it
(scenario routers inside a segment are the bridge); each emulated link is
a ``qoslab-router`` between the bridges of its two ends (its rate as the
pacer, its queues and stages, its delay in the router's delay line).
Every other link is a plain veth: no rate, no queue, no delay of its own,
so its delay is folded into an emulated link where that is exact (a
segment behind one emulated link whose hosts share one path delay to it),
or the host's access link is emulated too (:func:`_fold_delays`,
``docs/testbed.md`` "Topology").

Everything the testbed cannot do yet is refused before anything is built,
each problem naming its field and why (:func:`unsupported`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from .. import _core

#: UDP + IPv4 + Ethernet header bytes around a generator's payload: a scenario packet of
#: wire size W (``size + header``) is sent as a UDP datagram of W - 42 bytes.
OVERHEAD = 42
#: The generator's payload header (magic, flow id, sequence, send time).
PAYLOAD_HEADER = 24
MAX_PAYLOAD = 1472
#: The routers' ``edge_port``: flow requests to a PCN ingress, its answers and termination notices.
EDGE_PORT = 7400
#: The highest traffic ``class`` a DSCP's class selector carries.
MAX_CLASS = 7
#: TCP/IPv4 (no options: timestamps are off) and Ethernet header bytes around a segment's payload.
TCP_OVERHEAD = 54
#: What the testbed cannot run yet (its own limits; every other name the core knows is allowed):
#: traffic models the generator has no source for (no queue type is refused: the edge router's
#: ``scfq``, ``buffer_managed`` and ``edge`` queues run in the router, their classifier's rules
#: matching the testbed's host addresses, :func:`_rule_problems`). The class-based queues
#: (``cbt``, ``dcbt``, ``red`` with ChIPS, ``prio`` by class) read the packet's class tag, which
#: the generator carries in the DSCP's class selector (precedence, DSCP >> 3 = the group's
#: ``class``) and the router reads back
#: (``class_tag = "precedence"``, :attr:`Plan.class_tag`).
NOT_QUEUES: tuple[str, ...] = ()
NOT_MODELS: tuple[str, ...] = ()
#: The most frames of a VTR trace the generator's spec carries (``MAX_VTR_FRAMES`` in
#: crates/traffic/src/spec.rs): over 11 hours at 25 frames/s, a spec of a few MB.
MAX_VTR_FRAMES = 1_000_000


def _allowed(kind: Literal["queue_types", "traffic_models"], refused: tuple[str, ...]) -> str:
    """The core's names of ``kind`` (``queue_types``, ``traffic_models``) the testbed runs."""
    return ", ".join(n for n in _core.names()[kind] if n not in refused)


@dataclass
class Problem:
    """Something the testbed does not support, at a scenario field."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@dataclass
class Link:
    """A link of the expanded topology (``Scenario.model["links"][index]``)."""

    index: int
    a: str
    b: str
    #: The field that defines it in the scenario text (``topology.access``, ``topology.links.2``).
    path: str
    #: Bit/s and ns.
    rate: int
    delay_ns: int
    #: The model's entry: resolved queues and their fields, stages, MACE table, loss, ``given``.
    info: dict[str, Any]


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
    #: The links it crosses, in order (the model's route).
    route: list[int] = field(default_factory=list)
    #: The group's traffic ``class`` (the simulator's class tag), carried in the DSCP's top 3 bits.
    cls: int = 0
    #: Kernel TCP settings of a TCP flow (None: UDP): init_window, max_window (segments),
    #: min_rto_ms, delayed_ack, ecn, mss.
    tcp: dict[str, Any] | None = None
    #: The flow's arrival (ns), when an arrival process starts it (None: a fixed flow).
    arrival_ns: int | None = None


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
    #: The scenario's ``[pcn]`` table when this link is a PCN domain (ingress at ``link.a``, egress
    #: at ``link.b``: the router's ``[pcn]``), else None; and the domain's traffic's wire DSCPs.
    pcn: dict[str, Any] | None = None
    pcn_dscps: list[int] = field(default_factory=list)
    #: The scenario's ``admission`` table when this link's router runs the shaping CAC at side a
    #: (the router's ``[admission]``), else None.
    admission: dict[str, Any] | None = None
    #: The router's ``[shaping]`` when flows are shaped at this link's side a: ``depth`` (bytes),
    #: ``buffer`` (a limit's text, or None) and the fixed-rate connections, each ``{src, dst,
    #: proto, src_port, dst_port, rate}`` with host names (addresses at run time), rate in bit/s.
    shaping: dict[str, Any] | None = None

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

    #: The :class:`qoslab.Scenario` and its model.
    scenario: Any
    model: dict[str, Any]
    hosts: list[str]
    segment: dict[str, int]  # host -> its segment (bridge)
    bumps: list[Bump]
    segments: int = 0
    flows: list[FlowPlan] = field(default_factory=list)
    duration_ns: int = 0

    @property
    def echo(self) -> dict[str, Any]:
        """The scenario with defaults filled in (``summary.json``'s ``scenario``)."""
        return dict(self.scenario.echo)

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


def _own_rules(lk: Link, default_queue: dict[str, Any]) -> bool:
    """Has the link a queue (other than the default), stages or a MACE table of its own?"""
    given = lk.info["given"]
    own = any(given.get(k) not in (None, default_queue) for k in ("queue", "reverse_queue"))
    return own or bool(given.get("stages")) or bool(given.get("reverse_stages")) or given.get("mace") is not None


def _components(nodes: list[str], links: list[Link], without: list[Link]) -> dict[str, int]:
    """Each node's connected component once the links ``without`` are removed (numbered in node
    order): the segments, one bridge each."""
    skip = {lk.index for lk in without}
    adj: dict[str, list[str]] = {n: [] for n in nodes}
    for lk in links:
        if lk.index not in skip:
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


def unsupported(scenario: Any) -> list[Problem]:
    """What in this :class:`qoslab.Scenario` the testbed cannot run yet (empty: it can)."""
    return make_plan(scenario, check_only=True)[1]


def _emulated(
    links: list[Link], bottlenecks: list[int], default_queue: dict[str, Any]
) -> tuple[list[Bump], list[Problem]]:
    """The links the testbed emulates first: the preset's bottlenecks, or in an explicit topology
    every link with rules of its own (failing that, the one slowest link)."""
    if bottlenecks:
        return [Bump(links[i], 0, -1, -1, "bottleneck") for i in bottlenecks], []
    own = [lk for lk in links if _own_rules(lk, default_queue)]
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


def _to_emulated(flows: list[FlowPlan], links: list[Link], emulated: set[int]) -> dict[str, int]:
    """Each flow end's plain propagation delay to the first emulated link on its route (a source)
    or from the last (a destination): in a segment behind one emulated link, every flow of a host
    crosses that link, so this is the host's path delay to it."""
    out: dict[str, int] = {}
    for f in flows:
        cut = [i for i, li in enumerate(f.route) if li in emulated]
        if not cut:
            continue
        out[f.src] = sum(links[li].delay_ns for li in f.route[: cut[0]])
        out[f.dst] = sum(links[li].delay_ns for li in f.route[cut[-1] + 1 :])
    return out


def _fold_delays(
    hosts: list[str], nodes: list[str], links: list[Link], bumps: list[Bump], flows: list[FlowPlan], bad: list[Problem]
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
    used = {f.src for f in flows} | {f.dst for f in flows}
    comp = _components(nodes, links, [b.link for b in bumps])
    ends = _segment_ends(bumps, comp)
    bumped = {b.link.index for b in bumps}
    delay = _to_emulated(flows, links, bumped)
    extra: list[Bump] = []
    for seg in sorted(set(comp.values())):
        seg_ends = ends.get(seg, [])
        seg_nodes = [n for n in nodes if comp[n] == seg]
        plain = [lk for lk in links if lk.index not in bumped and comp[lk.a] == seg]
        if not seg_ends:
            continue
        if len(seg_ends) == 1 and len({delay.get(h, 0) for h in hosts if comp[h] == seg and h in used}) <= 1:
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
                        f"{_core.format_duration(lk.delay_ns)} on {lk.a}-{lk.b}, a plain link between emulated links "
                        f"({', '.join(sorted({bumps[j].direction for j, _ in seg_ends}))}); allowed: 0s "
                        "(the testbed delays frames only in its qoslab-routers, and there the delay "
                        "would be added to flows that do not cross this link)",
                    )
                )
            elif branch & used:
                extra.append(Bump(lk, 0, -1, -1, "access"))
    out = [*bumps, *extra]
    comp = _components(nodes, links, [b.link for b in out])
    delay = _to_emulated(flows, links, {b.link.index for b in out})
    fold: dict[tuple[int, str], int] = {}
    for seg, seg_ends in _segment_ends(out, comp).items():
        if len(seg_ends) != 1:
            continue
        ds = {delay.get(h, 0) for h in hosts if comp[h] == seg and h in used}
        if len(ds) == 1:
            fold[seg_ends[0]] = ds.pop()
    for j, b in enumerate(out):
        b.delay_ns = b.link.delay_ns + fold.get((j, b.link.a), 0) + fold.get((j, b.link.b), 0)
        b.a_seg, b.b_seg = comp[b.link.a], comp[b.link.b]
    return out


def make_plan(scenario: Any, *, check_only: bool = False) -> tuple[Plan | None, list[Problem]]:
    """The plan of a :class:`qoslab.Scenario`, or the problems that stop it."""
    bad: list[Problem] = []
    model = scenario.model
    hosts = [n["name"] for n in model["nodes"] if n["kind"] == "host"]
    # Hosts first: segments (bridges) are numbered in this order.
    nodes = hosts + [n["name"] for n in model["nodes"] if n["kind"] != "host"]
    links = [
        Link(i, lk["a"], lk["b"], lk["field"], lk["rate_bps"], lk["delay_ns"], lk)
        for i, lk in enumerate(model["links"])
    ]
    default_queue = model["default_queue"]
    bumps, problems = _emulated(links, model["bottlenecks"], default_queue)
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
    emulated = {b.link.index for b in bumps}
    fastest = max(bumps, key=lambda b: b.link.rate).link
    for lk in links:
        if lk.index in emulated:
            continue
        if _own_rules(lk, default_queue):
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
                    f"{_core.format_rate(lk.rate)} is below the emulated link {fastest.a}-{fastest.b}'s "
                    f"{_core.format_rate(fastest.rate)}: a "
                    "bottleneck the testbed does not emulate; allowed: at least the fastest "
                    "emulated link's rate",
                )
            )
    for k in ("loss", "reverse_loss"):
        for lk in links:
            if lk.info[k] and lk.index not in emulated:
                bad.append(
                    Problem(
                        f"{lk.path}.{k}",
                        f"{lk.info[k]} on a link the testbed does not emulate (a plain veth loses nothing); "
                        "allowed: 0, or loss on an emulated link (its router loses frames after their transmission)",
                    )
                )
    echo = scenario.echo
    flows = _plan_traffic(model, emulated, bad)
    bumps = _fold_delays(hosts, nodes, links, bumps, flows, bad)
    carried = _carry_classes(flows, bad)
    if echo.get("pcn"):
        _plan_pcn(echo["pcn"], model, bumps, flows, bad)
    _plan_shaping(echo, model, bumps, flows, bad)
    _check_mm_admission(flows, bad)
    unsupported_q: dict[str, tuple[str, str, list[str]]] = {}  # field -> what, why, the emulated directions
    for b in bumps:
        for k, direction in (("queue", b.direction), ("reverse_queue", b.reverse)):
            for sub, what, why in _queue_problems(b.link.info[k], b.link.info[f"{k}_path"], carried):
                unsupported_q.setdefault(sub, (what, why, []))[2].append(direction)
        for k in ("stages", "reverse_stages"):
            bad.extend(_rule_problems(b.link.info[k] or [], f"{b.link.path}.{k}", hosts))
        if carried:
            for k in ("stages", "reverse_stages"):
                if b.link.info[k]:
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
        scenario=scenario,
        model=model,
        hosts=hosts,
        segment={h: seg[h] for h in hosts},
        bumps=bumps,
        segments=len(set(seg.values())),
        flows=flows,
        duration_ns=model["duration_ns"],
    )
    return plan, []


def _crosses(model: dict[str, Any], f: FlowPlan, link: int) -> str | None:
    """How flow ``f`` crosses link ``link`` of the model: ``"ab"`` (from its ``a`` end), ``"ba"``,
    or None (not on its route)."""
    node = f.src
    for li in f.route:
        lk = model["links"][li]
        if li == link:
            return "ab" if node == lk["a"] else "ba"
        node = lk["b"] if node == lk["a"] else lk["a"]
    return None


def _once_per_group(bad: list[Problem]) -> Callable[[int, str, str], None]:
    """``once(group, path, message)``: adds the problem to ``bad`` the first time a group meets it
    (a group's flows share their fields: one problem per group and field)."""
    seen: set[tuple[int, str]] = set()

    def once(gi: int, path: str, message: str) -> None:
        if (gi, path) not in seen:
            seen.add((gi, path))
            bad.append(Problem(path, message))

    return once


def _plan_pcn(
    pcn: dict[str, Any], model: dict[str, Any], bumps: list[Bump], flows: list[FlowPlan], bad: list[Problem]
) -> None:
    """The scenario's PCN domain on the testbed: its two edges must be the ends of one emulated
    link, whose router then runs the ingress (side a) and the egress (side b) with the link's
    interior meters between them (``docs/testbed.md``, "PCN domains"). Every flow across that
    link enters the domain at ``a`` and asks the router before it sends (its generator's
    ``admission``); the router reads the domain's traffic by the flows' wire DSCPs."""
    edges = list(pcn["edges"])
    domain = [b for b in bumps if len(edges) == 2 and {b.link.a, b.link.b} == set(edges)]
    if not domain:
        ends = ", ".join(f'["{b.link.a}", "{b.link.b}"]' for b in bumps)
        bad.append(
            Problem(
                "pcn.edges",
                f"{edges}: the testbed runs a PCN domain inside one qoslab-router (ingress and egress at "
                f"the two ends of one emulated link); allowed: {ends}",
            )
        )
        return
    bump = domain[0]
    stages = {st["type"] for st in bump.link.info["stages"] or []}
    once = _once_per_group(bad)

    inside = []
    for f in flows:
        way = _crosses(model, f, bump.link.index)
        if way is None:
            continue
        g = model["groups"][f.group_index]
        at = f"traffic.{f.group_index}"
        if way == "ba":
            once(
                f.group_index,
                f"{at}.src",
                f"flow {f.name} crosses the PCN domain from its egress {bump.link.b} to its ingress "
                f"{bump.link.a}; allowed: flows that enter at {bump.link.a} (the router's ingress is its side a)",
            )
        elif f.tcp is not None:
            once(
                f.group_index,
                f"{at}.proto",
                "a TCP group in a PCN domain: the ingress terminates flows by notices, which a kernel TCP "
                "sender does not read (TCP flows ask the shaping CAC instead); "
                "allowed: UDP groups",
            )
        elif g["spec"].get("admitted"):
            once(
                f.group_index,
                f"{at}.admitted",
                "true: flows admitted elsewhere would be policed by the router's ingress, which "
                "admits only the flows that asked it; allowed: false",
            )
        elif "pcn_termination" in stages and (g["spec"].get("arrivals") or {}).get("process") == "keep_alive":
            once(
                f.group_index,
                f"{at}.arrivals.process",
                '"keep_alive" where flows are terminated: the simulator refills a slot when its flow is '
                "terminated, while the testbed starts every flow at its planned time; allowed: poisson, "
                "batch_poisson, replay",
            )
        else:
            inside.append(f)
    for f in inside:
        g = model["groups"][f.group_index]
        rate = g["spec"].get("reserve") or g["mean_wire_bps"]
        f.spec["admission"] = {"port": EDGE_PORT, "rate_bps": float(rate)}
    bump.pcn = dict(pcn)
    bump.pcn_dscps = sorted({int(f.spec["dscp"]) for f in inside})


def _limit_text(limit: dict[str, Any]) -> str | list[str]:
    """A limit ``{packets, bytes}`` of the model as the configuration's text."""
    parts = [f"{limit['packets']}pkts"] if limit.get("packets") is not None else []
    parts += [f"{limit['bytes']}B"] if limit.get("bytes") is not None else []
    return parts[0] if len(parts) == 1 else parts


def _plan_shaping(
    echo: dict[str, Any], model: dict[str, Any], bumps: list[Bump], flows: list[FlowPlan], bad: list[Problem]
) -> None:
    """Entry shapers and the shaping CAC ([Tarasiuk05]) on the testbed: a shaped flow's shaper
    runs at side a of the first emulated link on its route (the router's ``[shaping]``; the
    simulator's shaper sits before the flow's first link, and the plain links before it are
    faster and carry nothing else of it); with ``admission = shaping_cac`` every flow asks that
    router by packet (its generator's ``admission``, with ``cac``), which admits by the CAC and
    gives the flow's shaper the rate the CAC assigns (``docs/testbed.md``, "Entry shapers")."""
    cac = echo["admission"]["type"] == "shaping_cac"
    by_link = {b.link.index: b for b in bumps}
    once = _once_per_group(bad)

    cac_bumps: dict[int, Bump] = {}
    for f in flows:
        g = model["groups"][f.group_index]
        spec = g["spec"].get("shaper")
        if spec is None and not cac:
            continue
        at = f"traffic.{f.group_index}"
        first = next((by_link[li] for li in f.route if li in by_link), None)
        if first is None:
            continue  # crosses no emulated link: refused by _plan_traffic
        if _crosses(model, f, first.link.index) != "ab":
            once(
                f.group_index,
                f"{at}.src",
                f"flow {f.name} enters its first emulated link {first.link.a}-{first.link.b} at "
                f"{first.link.b}, and the router's entry shapers sit at its side a ({first.link.a}); "
                f"allowed: flows that cross it from {first.link.a}",
            )
            continue
        if first.pcn is not None:
            once(
                f.group_index,
                f"{at}.shaper" if spec is not None else "admission.type",
                "shaped flows into a PCN domain: its ingress and the entry take the same requests; "
                "allowed: shapers or a PCN domain on one emulated link",
            )
            continue
        depth = (spec or {}).get("depth") or {"packets": 1, "bytes": None}
        depth_b = depth["bytes"] if depth.get("bytes") is not None else int(depth["packets"] * f.wire_bytes_mean)
        buffer = (spec or {}).get("buffer")
        mine = {"depth": depth_b, "buffer": None if buffer is None else _limit_text(buffer)}
        sh = first.shaping
        if sh is None:
            sh = first.shaping = {**mine, "flows": []}
        elif (sh["depth"], sh["buffer"]) != (mine["depth"], mine["buffer"]):
            once(
                f.group_index,
                f"{at}.shaper.depth",
                f"a shaper of {mine['depth']} B (buffer {mine['buffer']}) where another group's at "
                f"{first.link.a}-{first.link.b} has {sh['depth']} B (buffer {sh['buffer']}): its router has "
                "one bucket depth and buffer; allowed: the same depth and buffer for every group shaped there",
            )
            continue
        proto = "udp" if f.tcp is None else "tcp"
        if cac:
            cac_bumps[first.link.index] = first
            adm = echo["admission"]
            rate = g["spec"].get("reserve") or g["mean_wire_bps"]
            f.spec["admission"] = {"port": EDGE_PORT, "rate_bps": float(rate or 0.0), "cac": True}
            first.admission = {k: v for k, v in adm.items() if v is not None}
        else:
            sh["flows"].append(
                {
                    "src": f.src,
                    "dst": f.dst,
                    "proto": proto,
                    "src_port": f.src_port,
                    "dst_port": f.dst_port,
                    "rate": int(spec["rate"]),
                }
            )
    if len(cac_bumps) > 1:
        names = ", ".join(f"{b.link.a}-{b.link.b}" for b in cac_bumps.values())
        bad.append(
            Problem(
                "admission.type",
                f'"shaping_cac" where the flows enter different emulated links first ({names}): the '
                "testbed runs the CAC in one router; allowed: flows that all enter one emulated link first",
            )
        )


def _rule_problems(stages: list[dict[str, Any]], at: str, hosts: list[str]) -> list[Problem]:
    """What the testbed cannot match in a classifier's rules: the router sees addresses, so a rule's
    ``src``/``dst`` may name a host (it becomes the host's testbed address) but not a router (no
    address) nor give the simulator's addresses or prefixes (the testbed's differ); ``ingress``
    (the node a packet came from) has no meaning in a router with one side a."""
    out: list[Problem] = []
    for i, st in enumerate(stages):
        if st.get("type") != "classifier":
            continue
        for j, r in enumerate(st.get("rules") or []):
            for end in ("src", "dst"):
                v = r.get(end)
                if v is not None and v not in hosts:
                    out.append(
                        Problem(
                            f"{at}.{i}.rules.{j}.{end}",
                            f"{v!r}: the testbed gives its hosts addresses of its own; allowed: a host's name "
                            f"({', '.join(hosts[:8])}{', ...' if len(hosts) > 8 else ''})",
                        )
                    )
            if r.get("ingress") is not None:
                out.append(
                    Problem(
                        f"{at}.{i}.rules.{j}.ingress",
                        f"{r['ingress']!r}: the testbed's router has one arrival side per direction; allowed: none",
                    )
                )
    return out


def _queue_problems(q: dict[str, Any], at: str, carried: bool) -> list[tuple[str, str, str]]:
    """What the testbed cannot run in queue ``q`` (at field ``at``), recursing into ``prio``'s
    bands: (field, what, why and what is allowed) triples."""
    kind = q["type"]
    if kind in NOT_QUEUES:
        allowed = _allowed("queue_types", NOT_QUEUES)
        return [(f"{at}.type", repr(kind), f"is not supported on the testbed yet; allowed: {allowed}")]
    out: list[tuple[str, str, str]] = []
    if kind == "prio":
        if carried and q["classify_by"] == "dscp":
            out.append(
                (
                    f"{at}.classify_by",
                    '"dscp"',
                    "while traffic classes are carried (the DSCP's top three bits hold the class); "
                    'allowed: "class", or every traffic class 0',
                )
            )
        for i, band in enumerate(q["bands"]):
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


def _group_problems(g: dict[str, Any], at: str, bad: list[Problem]) -> bool:
    """What the testbed cannot do in traffic group ``g`` (at field ``at``); ``False`` when it
    cannot plan the group's flows at all."""
    spec, tcp = g["spec"], g["proto"] == "tcp"
    if g["model"] in NOT_MODELS or not g["source"]:
        allowed = _allowed("traffic_models", NOT_MODELS)
        bad.append(Problem(f"{at}.model", f"{g['model']!r} is not supported on the testbed yet; allowed: {allowed}"))
        return False
    settings = spec.get("tcp") or {}
    if tcp and settings.get("stack") != "rfc":
        bad.append(
            Problem(
                f"{at}.tcp.stack",
                f'{settings.get("stack")!r}: the kernel follows its own rules, not ns-2\'s; allowed: "rfc"',
            )
        )
    if tcp and settings.get("limited_transmit"):
        bad.append(
            Problem(
                f"{at}.tcp.limited_transmit",
                "true: the kernel's limited transmit cannot be switched on alone; allowed: false",
            )
        )
    if g["src_choice"] != "round_robin":
        bad.append(
            Problem(
                f"{at}.src_choice",
                f"{g['src_choice']!r}: random sources are not drawn on the testbed yet (its flows take the "
                'matches of src in turn); allowed: "round_robin"',
            )
        )
    cls = g["class"]
    if cls > MAX_CLASS or (cls != 0 and tcp):
        allowed = "0 for TCP groups (their ACKs carry no class)" if tcp else f"0 to {MAX_CLASS}"
        bad.append(
            Problem(
                f"{at}.class",
                f"{cls}: the testbed carries a class in the DSCP's class selector; allowed: {allowed}",
            )
        )
    return True


def _generator_model(g: dict[str, Any]) -> dict[str, Any]:
    """A UDP group's source as the generator takes it (``crates/traffic/src/spec.rs``: its models
    are named as the scenario's): the simulator's exact period (``num/den`` ns) or mean gap, for
    ON/OFF its periods' law and packetization, for MM_APP its scales' periods (the sink runs its
    receiver with ``feedback_size``), for VTR the group's trace (by the group's name: the
    runner puts its frames into the spec once, :func:`vtr_frames`) and packetization."""
    src, spec = g["source"], g["spec"]
    if "mm_app" in src:
        mm = src["mm_app"]
        periods = [{"num": num, "den": den} for num, den in mm["periods_ns"]]
        return {"mm_app": {"periods": periods, "feedback_size": mm["feedback_size"]}}
    if "vtr" in src:
        v = src["vtr"]
        return {
            "vtr": {
                "trace": g["name"],
                "frame_ns": v["frame_ns"],
                "spacing_ns": v["spacing_ns"],
                "payload": v["payload"],
                "header": v["header"],
            }
        }
    if "mean_gap_ns" in src:
        return {g["model"]: {"mean_gap_ns": src["mean_gap_ns"]}}
    params: dict[str, Any] = {"period": {"num": src["period_ns"][0], "den": src["period_ns"][1]}}
    if "packetization" in src:
        params |= {
            "on_ns": float(spec["on"]),
            "off_ns": float(spec["off"]),
            "dist": spec["dist"],
            "shape": float(spec["shape"]),
            "packetization": src["packetization"],
        }
    return {g["model"]: params}


def vtr_frames(model: dict[str, Any], group: str) -> list[int]:
    """The frame sizes of VTR group ``group`` as the simulator loaded them (``Scenario.model()``)."""
    g = next(g for g in model["groups"] if g["name"] == group)
    frames: list[int] = g["source"]["vtr"]["frames"]
    return frames


def _plan_traffic(model: dict[str, Any], emulated: set[int], bad: list[Problem]) -> list[FlowPlan]:
    """The flows of every group (the model's fixed flows, their endpoints and routes); a flow
    must cross an emulated link."""
    flows: list[FlowPlan] = []
    for g in model["groups"]:
        gi = g["index"]
        at = f"traffic.{gi}"
        if not _group_problems(g, at, bad):
            continue
        header = g["header_bytes"]
        if g["proto"] == "tcp":
            tcp = g["source"]["tcp"]
            mss = tcp["mss"]
            if not 88 <= mss <= 1460:
                bad.append(
                    Problem(
                        f"{at}.size",
                        f"a segment payload of {mss} B; allowed: 88 to 1460 B on the testbed (TCP_MAXSEG, one "
                        "1500-byte frame)",
                    )
                )
                continue
            payload: dict[str, Any] = {"base": 0, "exp_mean": 0.0}
            source = {"tcp": {"mss": mss, "bytes": tcp["bytes"], "congestion": "reno"}}
            wire_mean = float(mss + TCP_OVERHEAD)
            kernel = {
                "init_window": tcp["init_window"],
                "max_window": tcp["max_window"],
                "min_rto_ms": tcp["min_rto_ns"] // 1_000_000,
                "delayed_ack": tcp["delayed_ack"],
                "ecn": bool(g["spec"]["ecn"]),
                "mss": mss,
            }
        else:
            size = g["spec"]["size"]
            base, exp_mean = (size["base"], size["exp_mean"]) if isinstance(size, dict) else (size, 0)
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
            payload = {"base": udp, "exp_mean": float(exp_mean)}
            vtr = g["source"].get("vtr")
            if vtr is not None and len(vtr["frames"]) > MAX_VTR_FRAMES:
                bad.append(
                    Problem(
                        f"{at}.trace",
                        f"{len(vtr['frames'])} frames; allowed: at most {MAX_VTR_FRAMES:,} on the testbed "
                        "(the generator's spec carries the trace)",
                    )
                )
                continue
            source = _generator_model(g)
            # (VTR: a full packet's, an upper bound of the trace's packets.)
            wire_mean = float(g["payload_mean_bytes"] + header)
            kernel = None
        for f in g["flows"]:
            arrival = f.get("arrival")
            if not emulated & set(f["route"]):
                bad.append(
                    Problem(
                        f"{at}.dst",
                        f"flow {f['name']} ({f['src']} -> {f['dst']}) crosses no emulated link; allowed: "
                        "traffic between hosts an emulated link separates",
                    )
                )
                break
            fid = len(flows)
            flows.append(
                FlowPlan(
                    id=fid,
                    name=f["name"],
                    group=g["name"],
                    group_index=gi,
                    index=f["index"],
                    src=f["src"],
                    dst=f["dst"],
                    dst_port=g["spec"]["dst_port"] if g["spec"].get("dst_port") is not None else 9000 + gi,
                    src_port=20000 + fid,
                    wire_bytes_mean=wire_mean,
                    route=list(f["route"]),
                    cls=g["class"],
                    tcp=None if kernel is None else dict(kernel),
                    arrival_ns=None if arrival is None else arrival["start_ns"],
                    spec={
                        "id": fid,
                        "src_port": 20000 + fid,
                        "dscp": g["dscp"],
                        "ecn": bool(g["spec"]["ecn"]),
                        # A flow of an arrival process starts at its arrival and stops at the end
                        # its lifetime gives it, with the simulator's draws (the model's schedule).
                        "start_ns": g["start_ns"] if arrival is None else arrival["start_ns"],
                        "jitter_ns": g["start_jitter_ns"] if arrival is None else 0,
                        "stop_ns": g["stop_ns"] if arrival is None else arrival["end_ns"],
                        "lifetime_drawn": False if arrival is None else bool(arrival["lifetime_drawn"]),
                        "stream": f["stream"],
                        # The simulator's per-packet shifts, drawn by the generator as in its `emit`.
                        "randomize": float(g["randomize"]),
                        "send_jitter_max_ns": g["send_jitter_max_ns"],
                        "payload": dict(payload),
                        "model": source,
                    },
                )
            )
    if len(flows) > 40_000:
        bad.append(
            Problem("traffic", f"{len(flows)} flows; allowed: at most 40,000 on the testbed (one UDP port each)")
        )
    _check_tcp_windows(flows, bad)
    return flows


def _check_mm_admission(flows: list[FlowPlan], bad: list[Problem]) -> None:
    """An MM_APP flow reads its feedback on its socket, where a flow that asks admission reads the
    router's answers: one reader per socket on the testbed."""
    seen = set()
    for f in flows:
        if "mm_app" in f.spec["model"] and "admission" in f.spec and f.group_index not in seen:
            seen.add(f.group_index)
            bad.append(
                Problem(
                    f"traffic.{f.group_index}.model",
                    "'mm_app' in flows that ask admission (a PCN domain or the shaping CAC): the flow's "
                    "socket reads either its feedback or the router's answers on the testbed; allowed: "
                    "mm_app groups whose flows do not ask admission",
                )
            )


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
