"""Topology builders: each returns the ``[topology]`` table of a scenario.

Node names made by the presets (see ``docs/scenarios.md``): dumbbell
``src0..``, ``r0`` (and ``r1``), ``sink0..``; parking lot ``r0..rk``,
``src_long``/``sink_long`` and ``src_x{i}``/``sink_x{i}``; star ``in0..``,
``r0``, ``r1``, ``sink0``; explicit: the names given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import _units
from ._units import Quantity


def link(*, rate: Quantity, delay: Quantity, queue: dict[str, Any] | None = None,
         reverse_queue: dict[str, Any] | None = None) -> dict[str, Any]:
    """A link's rate, propagation delay and, optionally, its output queues."""
    spec: dict[str, Any] = {"rate": _units.rate(rate), "delay": _units.dur(delay, "delay")}
    if queue is not None:
        spec["queue"] = queue
    if reverse_queue is not None:
        spec["reverse_queue"] = reverse_queue
    return spec


def _with_default(t: dict[str, Any], default_queue: dict[str, Any] | None) -> dict[str, Any]:
    if default_queue is not None:
        t["default_queue"] = default_queue
    return t


def dumbbell(*, sources: int, access: dict[str, Any], bottleneck: dict[str, Any], sinks: int | None = None,
             routers: int | None = None, egress: dict[str, Any] | None = None,
             default_queue: dict[str, Any] | None = None) -> dict[str, Any]:
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


def parking_lot(*, bottlenecks: int, access: dict[str, Any], bottleneck: dict[str, Any],
                egress: dict[str, Any] | None = None,
                default_queue: dict[str, Any] | None = None) -> dict[str, Any]:
    """A chain of ``bottlenecks`` router-to-router links with one cross flow path per bottleneck."""
    t: dict[str, Any] = {"preset": "parking_lot", "bottlenecks": bottlenecks, "access": access,
                         "bottleneck": bottleneck}
    if egress is not None:
        t["egress"] = egress
    return _with_default(t, default_queue)


def star(*, ingresses: int, access: dict[str, Any], bottleneck: dict[str, Any],
         ingress_delays: Sequence[Quantity] | None = None, egress: dict[str, Any] | None = None,
         default_queue: dict[str, Any] | None = None) -> dict[str, Any]:
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


def explicit(*, nodes: Sequence[dict[str, Any]], links: Sequence[dict[str, Any]],
             default_queue: dict[str, Any] | None = None) -> dict[str, Any]:
    """Nodes and duplex links as listed; a link is ``{"a": .., "b": .., **link(...)}``."""
    return _with_default({"preset": "explicit", "nodes": list(nodes), "links": list(links)}, default_queue)
