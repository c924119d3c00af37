"""From a validated scenario to a testbed plan: which link the router
emulates, which hosts sit on either side of it, what each generator sends.

The testbed emulates **one link**: the scenario's bottleneck (the preset's,
or in an explicit topology the one link with a queue, stages or MACE of
its own; failing that, the slowest link). Removing it must split the
network in two: the hosts on its ``a`` side join one Linux bridge, those
on its ``b`` side another, and a ``qoslab-router`` between the bridges runs
the link (its rate as the pacer, its queues and stages, its delay in the
router's delay line). Every other link is a plain veth into a bridge:
no rate, no queue. So that one-way delays match, the propagation delay of
the hosts' paths to the emulated link is added to the router's delay,
which requires every host on a side to have the same path delay
(``docs/testbed.md``, "Topology").

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
#: Queue disciplines whose verdicts do not depend on a class tag the router would derive
#: differently from the simulator (docs/testbed.md, "What is not supported yet").
QUEUES = ("fifo", "red", "mace")
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
    #: Kernel TCP settings of a TCP flow (None: UDP): init_window, max_window (segments),
    #: min_rto_ms, delayed_ack, ecn, mss.
    tcp: dict[str, Any] | None = None


@dataclass
class Plan:
    """The testbed of one scenario."""

    echo: dict[str, Any]
    hosts: list[str]
    side: dict[str, str]  # host -> "a" or "b"
    link: Link
    router_delay_ns: int
    flows: list[FlowPlan] = field(default_factory=list)
    duration_ns: int = 0

    @property
    def direction(self) -> str:
        return f"{self.link.a}->{self.link.b}"

    @property
    def reverse(self) -> str:
        return f"{self.link.b}->{self.link.a}"


#: The topology presets the testbed can build.
PRESETS = ("dumbbell", "explicit")


def _links(topo: dict[str, Any]) -> tuple[list[str], list[str], list[Link], Link | None]:
    """Hosts, routers, links and the preset's bottleneck (``None``: choose one) of a topology
    whose preset is one of :data:`PRESETS`."""
    preset = topo.get("preset")
    if preset == "dumbbell":
        n_src, n_sink, n_r = int(topo["sources"]), int(topo.get("sinks", 1)), int(topo.get("routers", 1))
        srcs, sinks = [f"src{i}" for i in range(n_src)], [f"sink{i}" for i in range(n_sink)]
        routers = ["r0"] if n_r == 1 else ["r0", "r1"]
        links = [Link(s, "r0", topo["access"], "topology.access") for s in srcs]
        if n_r == 1:
            bottleneck = Link("r0", "sink0", topo["bottleneck"], "topology.bottleneck")
            links.append(bottleneck)
        else:
            bottleneck = Link("r0", "r1", topo["bottleneck"], "topology.bottleneck")
            egress = topo.get("egress") or topo["access"]
            links += [bottleneck] + [Link("r1", s, egress, "topology.egress") for s in sinks]
        return srcs + sinks, routers, links, bottleneck
    hosts = [n["name"] for n in topo["nodes"] if n.get("kind") == "host"]
    routers = [n["name"] for n in topo["nodes"] if n.get("kind") != "host"]
    links = [Link(lk["a"], lk["b"], lk, f"topology.links.{i}") for i, lk in enumerate(topo["links"])]
    return hosts, routers, links, None


def _has_own_rules(spec: dict[str, Any], default_queue: Any) -> bool:
    own = any(spec.get(k) not in (None, [], default_queue) for k in ("queue", "reverse_queue"))
    return own or bool(spec.get("stages")) or bool(spec.get("reverse_stages")) or spec.get("mace") is not None


def _components(nodes: list[str], links: list[Link], without: Link) -> dict[str, int]:
    adj: dict[str, list[str]] = {n: [] for n in nodes}
    for lk in links:
        if lk is not without:
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


def _path_delay(frm: str, to: str, links: list[Link], without: Link) -> int | None:
    """Propagation delay of the fewest-hop path (the simulator's routing) from ``frm`` to ``to``."""
    from collections import deque

    best: dict[str, tuple[int, int]] = {frm: (0, 0)}
    q = deque([frm])
    while q:
        n = q.popleft()
        hops, d = best[n]
        for lk in links:
            if lk is without or n not in (lk.a, lk.b):
                continue
            m = lk.b if n == lk.a else lk.a
            if m not in best:
                best[m] = (hops + 1, d + lk.delay_ns)
                q.append(m)
    return best[to][1] if to in best else None


def unsupported(echo: dict[str, Any]) -> list[Problem]:
    """What in this scenario the testbed cannot run yet (empty: it can)."""
    return make_plan(echo, check_only=True)[1]


def make_plan(echo: dict[str, Any], *, check_only: bool = False) -> tuple[Plan | None, list[Problem]]:
    """The plan of a validated scenario echo, or the problems that stop it."""
    bad: list[Problem] = []
    topo = echo["topology"]
    if topo.get("preset") not in PRESETS:
        allowed = ", ".join(PRESETS)
        return None, [Problem("topology.preset", f"{topo.get('preset')!r} is not supported yet; allowed: {allowed}")]
    hosts, routers, links, bottleneck = _links(topo)
    default_queue = topo.get("default_queue")
    if bottleneck is None:
        own = [lk for lk in links if _has_own_rules(lk.spec, default_queue)]
        if len(own) > 1:
            names = ", ".join(f"{lk.path} ({lk.a}-{lk.b})" for lk in own)
            return None, [
                Problem(
                    "topology.links",
                    f"{len(own)} links have queues or stages of their own ({names}); "
                    "allowed: one (the testbed emulates one link)",
                )
            ]
        if own:
            bottleneck = own[0]
        else:
            slowest = min(lk.rate for lk in links)
            cands = [lk for lk in links if lk.rate == slowest]
            if len(cands) > 1:
                return None, [
                    Problem(
                        "topology.links",
                        f"no link has a queue of its own and {len(cands)} share the "
                        "lowest rate; allowed: one link to emulate (give it a queue)",
                    )
                ]
            bottleneck = cands[0]
    for lk in links:
        if lk is bottleneck:
            continue
        if _has_own_rules(lk.spec, default_queue):
            bad.append(
                Problem(
                    lk.path,
                    "has a queue or stages of its own, but the testbed emulates only the "
                    f"bottleneck ({bottleneck.a}-{bottleneck.b}); allowed: the default queue",
                )
            )
        if lk.rate < bottleneck.rate:
            bad.append(
                Problem(
                    f"{lk.path}.rate",
                    f"{lk.spec['rate']} is below the emulated link's "
                    f"{bottleneck.spec['rate']}: a second bottleneck the testbed does not emulate; "
                    "allowed: at least the bottleneck's rate",
                )
            )
    for k in ("loss", "reverse_loss"):
        for lk in links:
            if float(lk.spec.get(k) or 0) != 0:
                bad.append(
                    Problem(f"{lk.path}.{k}", f"{lk.spec[k]}; allowed: 0 (the testbed loses what real packets lose)")
                )
    for k in ("queue", "reverse_queue"):
        q = bottleneck.spec.get(k) or default_queue or {"type": "fifo"}
        if q.get("type") not in QUEUES:
            bad.append(
                Problem(
                    f"{bottleneck.path}.{k}.type",
                    f"{q.get('type')!r} is not supported on the testbed yet; allowed: {', '.join(QUEUES)}",
                )
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
    comp = _components(hosts + routers, links, bottleneck)
    if comp[bottleneck.a] == comp[bottleneck.b]:
        bad.append(
            Problem(
                bottleneck.path,
                f"{bottleneck.a}-{bottleneck.b} is not a cut: traffic can go around it; "
                "allowed: a link whose removal splits the network in two",
            )
        )
    side = {
        h: ("a" if comp[h] == comp[bottleneck.a] else "b")
        for h in hosts
        if comp[h] in (comp[bottleneck.a], comp[bottleneck.b])
    }
    flows, used = _plan_traffic(echo, hosts, side, bad)
    # Path delays of the hosts that carry traffic, per side.
    delays: dict[str, dict[int, list[str]]] = {"a": {}, "b": {}}
    for h in sorted(used):
        end = bottleneck.a if side[h] == "a" else bottleneck.b
        d = _path_delay(h, end, links, bottleneck)
        delays[side[h]].setdefault(d or 0, []).append(h)
    for s, by in delays.items():
        if len(by) > 1:
            what = "; ".join(f"{d / 1e6:g} ms: {', '.join(hs)}" for d, hs in sorted(by.items()))
            bad.append(
                Problem(
                    "topology",
                    f"hosts on the {s} side of the emulated link have different path delays "
                    f"({what}); allowed: one path delay per side (the router holds one delay)",
                )
            )
    extra = sum(next(iter(by), 0) for by in delays.values())
    if bad or check_only:
        return None, bad
    plan = Plan(
        echo=echo,
        hosts=sorted(side, key=hosts.index),
        side=side,
        link=bottleneck,
        router_delay_ns=bottleneck.delay_ns + extra,
        flows=flows,
        duration_ns=dur_ns(echo["duration"]),
    )
    return plan, []


def _period(g: dict[str, Any], rate_key: str, payload_mean: Fraction) -> dict[str, int]:
    """The simulator's exact period (``Period::from_rate`` / ``from_interval``) as ``num/den`` ns."""
    if g.get("interval") is not None:
        return {"num": dur_ns(g["interval"]), "den": 1}
    millibits = int(payload_mean * 8000)
    return {"num": millibits * 1_000_000, "den": rate_bps(g[rate_key])}


def _plan_traffic(
    echo: dict[str, Any], hosts: list[str], side: dict[str, str], bad: list[Problem]
) -> tuple[list[FlowPlan], set[str]]:
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
            ("send_jitter", "host timing jitter (the real host has its own)"),
            ("randomize", "send-time randomization"),
        ):
            if g.get(k) not in (None, 0, 0.0):
                bad.append(Problem(f"{at}.{k}", f"{why} are not supported on the testbed yet; allowed: none"))
        if int(g.get("class") or 0) != 0:
            bad.append(
                Problem(f"{at}.class", f"{g['class']}: class tags are not carried on real packets yet; allowed: 0")
            )
        if model in TCP_MODELS:
            _plan_tcp(g, gi, at, hosts, side, duration, flows, used, bad)
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
    side: dict[str, str],
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
    ``None`` (and a problem in ``bad``) when it does not cross the emulated link."""
    src, dst = srcs[i % len(srcs)], dsts[i % len(dsts)]
    if src not in side or dst not in side or side[src] == side[dst]:
        bad.append(
            Problem(
                f"{at}.dst",
                f"flow {g['name']}.{i} ({src} -> {dst}) does not cross the emulated "
                "link; allowed: traffic between the two sides",
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
        spec={
            "id": fid,
            "src_port": 20000 + fid,
            "dscp": int(g.get("dscp") or 0),
            "ecn": bool(g.get("ecn")),
            "start_ns": start,
            "jitter_ns": dur_ns(g.get("start_jitter") or "0s"),
            "stop_ns": stop,
            "stream": (1 << 61) | (gi << 32) | i,
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
    side: dict[str, str],
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
