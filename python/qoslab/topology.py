"""Topology builders: each returns the ``[topology]`` table of a scenario.

Node names made by the presets (see ``docs/scenarios.md``): dumbbell
``src0..``, ``r0`` (and ``r1``), ``sink0..``; parking lot ``r0..rk``,
``src_long``/``sink_long`` and ``src_x{i}``/``sink_x{i}``; star ``in0..``,
``r0``, ``r1``, ``sink0``; explicit: the names given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from . import _units
from ._units import Quantity
from .errors import config_error


def link(
    *,
    rate: Quantity,
    delay: Quantity,
    queue: dict[str, Any] | None = None,
    reverse_queue: dict[str, Any] | None = None,
    loss: float | None = None,
    reverse_loss: float | None = None,
    mace: dict[str, Any] | None = None,
    stages: Sequence[dict[str, Any]] | None = None,
    reverse_stages: Sequence[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A link's rate, propagation delay and, optionally, its output queues.

    ``loss``/``reverse_loss``: Bernoulli loss on the wire of the direction ``queue`` feeds
    (a -> b) and of the reverse one, in [0, 1) (default 0). ``mace``: :func:`mace` settings,
    required when a direction's queue is :func:`qoslab.queues.mace`. ``stages`` /
    ``reverse_stages``: :mod:`qoslab.stages` tables run before ``queue`` / ``reverse_queue``.
    """
    spec: dict[str, Any] = {"rate": _units.rate(rate), "delay": _units.dur(delay, "delay")}
    if queue is not None:
        spec["queue"] = queue
    if reverse_queue is not None:
        spec["reverse_queue"] = reverse_queue
    if mace is not None:
        spec["mace"] = mace
    if loss is not None:
        spec["loss"] = loss
    if reverse_loss is not None:
        spec["reverse_loss"] = reverse_loss
    if stages is not None:
        spec["stages"] = list(stages)
    if reverse_stages is not None:
        spec["reverse_stages"] = list(reverse_stages)
    return spec


def mace_port(
    *, port: int, rate: Quantity, depth: Quantity, threshold: int, side: Literal["dst", "src", "any"] | None = None
) -> dict[str, Any]:
    """One MACE descriptor: flows on application ``port`` (matched on the ``side`` ``"dst"``
    (default), ``"src"`` or ``"any"``) reserve ``rate`` (wire bit/s) with a token bucket of
    ``depth`` (bytes) and are recognized after ``threshold`` packets."""
    p: dict[str, Any] = {"port": port}
    if side is not None:
        p["side"] = side
    p["rate"] = _units.rate(rate, "rate")
    p["depth"] = _units.size(depth, "depth")
    p["threshold"] = threshold
    return p


def mbac(
    *,
    v: float | None = None,
    sample: Quantity | None = None,
    window: int | None = None,
    restart_window: bool | None = None,
) -> dict[str, Any]:
    """MACE's measurement-based admission: admit if v*mu > r + measured load (Jamin et al. 1997).
    Defaults: ``v`` 0.95, ``sample`` 5 s, ``window`` 20 samples, ``restart_window`` True."""
    a: dict[str, Any] = {"type": "mbac"}
    if v is not None:
        a["v"] = v
    if sample is not None:
        a["sample"] = _units.dur(sample, "sample")
    if window is not None:
        a["window"] = window
    if restart_window is not None:
        a["restart_window"] = restart_window
    return a


def ssac() -> dict[str, Any]:
    """MACE's simple-sum admission: admit if the reserved rates plus r fit the allocation."""
    return {"type": "ssac"}


def mace(
    *,
    admission: dict[str, Any],
    allocation: Quantity,
    ports: Sequence[dict[str, Any]] | None = None,
    descriptors: str | None = None,
    stale_timeout: Quantity | None = None,
    device_queue: int | None = None,
    be_dispatch: Literal["when_room", "when_idle"] | None = None,
    table_capacity: int | None = None,
) -> dict[str, Any]:
    """A link's MACE settings ([MACE98]; ``docs/mechanisms/mace.md``), for :func:`link`'s ``mace=``.

    Give exactly one of ``ports`` (:func:`mace_port` descriptors, inline) and ``descriptors`` (a
    descriptor file, relative to the scenario file). ``admission``: :func:`mbac` or :func:`ssac`;
    ``allocation``: the CL allocation mu (wire bit/s). Defaults: ``stale_timeout`` 30 s,
    ``device_queue`` 1 packet, ``be_dispatch`` ``"when_idle"`` (the paper's final rule; or
    ``"when_room"``, its abandoned first version),
    ``table_capacity`` 1024 flows.
    """
    m: dict[str, Any] = {}
    if ports is not None:
        m["ports"] = list(ports)
    if descriptors is not None:
        m["descriptors"] = descriptors
    m["admission"] = admission
    m["allocation"] = _units.rate(allocation, "allocation")
    if stale_timeout is not None:
        m["stale_timeout"] = _units.dur(stale_timeout, "stale_timeout")
    optional = {"device_queue": device_queue, "be_dispatch": be_dispatch, "table_capacity": table_capacity}
    m.update({k: v for k, v in optional.items() if v is not None})
    return m


def _with_default(t: dict[str, Any], default_queue: dict[str, Any] | None) -> dict[str, Any]:
    if default_queue is not None:
        t["default_queue"] = default_queue
    return t


def dumbbell(
    *,
    sources: int,
    access: dict[str, Any],
    bottleneck: dict[str, Any],
    sinks: int | None = None,
    routers: int | None = None,
    egress: dict[str, Any] | None = None,
    default_queue: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """N sources -> r0 [-> r1] -> sinks; links from :func:`link`."""
    t: dict[str, Any] = {"preset": "dumbbell", "sources": sources}
    if sinks is not None:
        t["sinks"] = sinks
    if routers is not None:
        t["routers"] = routers
    t["access"] = access
    t["bottleneck"] = bottleneck
    if egress is not None:
        t["egress"] = egress
    return _with_default(t, default_queue)


def parking_lot(
    *,
    bottlenecks: int,
    access: dict[str, Any],
    bottleneck: dict[str, Any],
    hop_queues: Sequence[dict[str, Any]] | None = None,
    egress: dict[str, Any] | None = None,
    default_queue: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A chain of ``bottlenecks`` router-to-router links with one cross flow path per bottleneck.
    ``hop_queues``: one queue per bottleneck (entry ``i`` for ``r{i} -> r{i+1}``), instead of
    ``bottleneck``'s queue on every hop."""
    t: dict[str, Any] = {
        "preset": "parking_lot",
        "bottlenecks": bottlenecks,
        "access": access,
        "bottleneck": bottleneck,
    }
    if hop_queues is not None:
        t["hop_queues"] = list(hop_queues)
    if egress is not None:
        t["egress"] = egress
    return _with_default(t, default_queue)


def star(
    *,
    ingresses: int,
    access: dict[str, Any],
    bottleneck: dict[str, Any],
    ingress_delays: Sequence[Quantity] | None = None,
    egress: dict[str, Any] | None = None,
    default_queue: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """N ingresses (each with its own access delay if given) into one bottleneck."""
    t: dict[str, Any] = {"preset": "star", "ingresses": ingresses, "access": access}
    if ingress_delays is not None:
        t["ingress_delays"] = [_units.dur(d, "ingress_delays") for d in ingress_delays]
    t["bottleneck"] = bottleneck
    if egress is not None:
        t["egress"] = egress
    return _with_default(t, default_queue)


def node(*, name: str, kind: str) -> dict[str, Any]:
    """A node of an explicit topology: ``kind`` is ``"host"`` or ``"router"``."""
    return {"name": name, "kind": kind}


def explicit(
    *, nodes: Sequence[dict[str, Any]], links: Sequence[dict[str, Any]], default_queue: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Nodes and duplex links as listed; a link is ``{"a": .., "b": .., **link(...)}``."""
    return _with_default({"preset": "explicit", "nodes": list(nodes), "links": list(links)}, default_queue)


def pcn_parking_lot(
    *,
    bottlenecks: int,
    rate: Quantity,
    stages: Sequence[dict[str, Any]],
    queue: dict[str, Any] | None = None,
    delay: Quantity = "1ms",
    edge_rate: Quantity = "10Gbps",
) -> dict[str, Any]:
    """[Zhang07]'s parking lot (§2.1, Fig. 2.3) with PCN edge routers, as an explicit topology.

    A chain of core routers ``c0 … c{k}`` (``k = bottlenecks``; the paper's A, B, C, …) joined
    by the bottleneck links ``c{i} -> c{i+1}`` (``rate``, ``delay``, ``queue``, the PCN meter
    ``stages`` on the forward direction). The long ingress-egress aggregate enters at ``c0``
    and leaves at ``c{k}``, from host ``src_long`` to host ``sink_long``. Each chain router
    ``c{i}`` has a "vertical" edge router ``v{i}`` (the paper's D, E, F, …) on a non-limiting
    link (``edge_rate``, ``delay``); short aggregate ``i`` goes ``h{i} -> v{i} -> c{i} ->
    c{i+1} -> v{i+1} -> h{i+1}``, so ``v{i}`` is the ingress of short ``i`` and the egress of
    short ``i - 1`` (the paper's E). Hosts sit behind their edge routers on links of
    ``edge_rate`` without delay (the paper does not model source-ingress and egress-destination
    delays, §2.2). The PCN edges are :func:`pcn_parking_lot_edges`.
    """
    if isinstance(bottlenecks, bool) or not isinstance(bottlenecks, int) or bottlenecks < 1:
        raise config_error(
            "bottlenecks", f"must be an integer >= 1, got {bottlenecks!r}", origin="topology.pcn_parking_lot"
        )
    k = bottlenecks
    nodes = [node(name=f"c{i}", kind="router") for i in range(k + 1)]
    nodes += [node(name=f"v{i}", kind="router") for i in range(k + 1)]
    nodes += [node(name="src_long", kind="host"), node(name="sink_long", kind="host")]
    nodes += [node(name=f"h{i}", kind="host") for i in range(k + 1)]
    fast_host = link(rate=edge_rate, delay="0s")
    vertical = link(rate=edge_rate, delay=delay)
    bn = link(rate=rate, delay=delay, queue=queue, stages=stages)
    links = [{"a": f"c{i}", "b": f"c{i + 1}", **bn} for i in range(k)]
    links += [{"a": "src_long", "b": "c0", **fast_host}, {"a": f"c{k}", "b": "sink_long", **fast_host}]
    links += [{"a": f"v{i}", "b": f"c{i}", **vertical} for i in range(k + 1)]
    links += [{"a": f"h{i}", "b": f"v{i}", **fast_host} for i in range(k + 1)]
    return explicit(nodes=nodes, links=links)


def pcn_parking_lot_edges(*, bottlenecks: int) -> list[str]:
    """The PCN edge routers of :func:`pcn_parking_lot`: the long aggregate's ingress ``c0`` and
    egress ``c{k}``, and every vertical router ``v{i}``."""
    return ["c0", f"c{bottlenecks}", "v*"]
