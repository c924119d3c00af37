"""Port-stage builders: each returns the scenario table of one stage.

A link's ``stages`` (and ``reverse_stages``) list runs on every packet
entering that link direction, before its queue discipline, in order (see
``docs/architecture.md`` and ``docs/scenarios.md``)::

    from qoslab import stages, topology
    link = topology.link(rate="10Mbps", delay="1ms",
                         stages=[stages.policer(rate="2Mbps", depth="3000B")])
"""

from __future__ import annotations

from typing import Any, Literal

from . import _units
from ._units import Quantity


def policer(*, rate: Quantity, depth: Quantity, action: Literal["drop", "mark"] | None = None) -> dict[str, Any]:
    """A token-bucket policer (``docs/mechanisms/policer.md``).

    Packets that find ``size`` bytes of tokens pass and take them; the others are dropped
    (``action="drop"``, the default: ``drops_policed``) or passed with their PCN
    excess-traffic mark set (``action="mark"``: ``marks_pcn_excess``). ``rate``: bit/s
    (``"2Mbps"``); ``depth``: bytes (``"3000B"``); the bucket starts full.
    """
    spec: dict[str, Any] = {"type": "policer", "rate": _units.rate(rate), "depth": _units.size(depth, "depth")}
    if action is not None:
        spec["action"] = action
    return spec


def rule(
    *,
    stream: str | None = None,
    class_: int | None = None,
    priority: int | None = None,
    src: str | None = None,
    dst: str | None = None,
    src_port: int | str | None = None,
    dst_port: int | str | None = None,
    proto: str | int | None = None,
    ingress: str | None = None,
    dscp: int | None = None,
    set_dscp: int | None = None,
) -> dict[str, Any]:
    """One classifier rule: the match fields given (the others are wildcards) and where
    matching packets go, a ``stream`` of the link direction's queue or a ``class_`` tag.
    ``src``/``dst``: a node name, an address or a prefix; ports: ``5001`` or ``"5000-5099"``;
    ``proto``: ``"udp"``, ``"tcp"`` or a number; ``ingress``: the node packets arrive from.
    Rules that can match one packet need different ``priority`` values (lower wins)."""
    r: dict[str, Any] = {}
    for key, value in (
        ("priority", priority),
        ("src", src),
        ("dst", dst),
        ("src_port", src_port),
        ("dst_port", dst_port),
        ("proto", proto),
        ("ingress", ingress),
        ("dscp", dscp),
        ("stream", stream),
        ("class", class_),
        ("set_dscp", set_dscp),
    ):
        if value is not None:
            r[key] = value
    return r


def classifier(
    *, rules: list[dict[str, Any]], cache: int | None = None, default_stream: str | None = None
) -> dict[str, Any]:
    """A rule-database classifier with a fast-path flow cache ([Guerin99 §II];
    ``docs/mechanisms/classifier.md``). ``rules``: :func:`rule` tables; ``cache``: flow
    entries (default 1024, least recently used evicted); ``default_stream``: where packets
    no rule matches go (default: dropped as unclassified)."""
    spec: dict[str, Any] = {"type": "classifier", "rules": list(rules)}
    if cache is not None:
        spec["cache"] = cache
    if default_stream is not None:
        spec["default_stream"] = default_stream
    return spec


def pcn_admission(
    *,
    admissible_rate: Quantity | None = None,
    marking: Literal["ramp", "step"] | None = None,
    min_threshold: Quantity | None = None,
    max_threshold: Quantity | None = None,
    threshold: Quantity | None = None,
    upper_limit: Quantity | None = None,
) -> dict[str, Any]:
    """PCN admission marking ([Zhang07 §3.1.1]; ``docs/mechanisms/pcn.md``): a virtual queue
    drained at ``admissible_rate`` (default half the link rate) marks PCN packets with a
    probability ramping from ``min_threshold`` (5 ms) to ``max_threshold`` (15 ms), or
    stepping at ``threshold``; capped at ``upper_limit`` (20 ms)."""
    spec: dict[str, Any] = {"type": "pcn_admission"}
    if admissible_rate is not None:
        spec["admissible_rate"] = _units.rate(admissible_rate, "admissible_rate")
    if marking is not None:
        spec["marking"] = marking
    for key, value in (
        ("min_threshold", min_threshold),
        ("max_threshold", max_threshold),
        ("threshold", threshold),
        ("upper_limit", upper_limit),
    ):
        if value is not None:
            spec[key] = _units.dur(value, key)
    return spec


def pcn_termination(
    *,
    termination_rate: Quantity | None = None,
    depth_packets: int | None = None,
    packet_size: Quantity | None = None,
) -> dict[str, Any]:
    """PCN termination marking [Zhang07 §4.1]: a token bucket at ``termination_rate``
    (default half the link rate), ``depth_packets`` (256) packets of ``packet_size``
    (1500 B) deep; packets finding too few tokens are excess-marked."""
    spec: dict[str, Any] = {"type": "pcn_termination"}
    if termination_rate is not None:
        spec["termination_rate"] = _units.rate(termination_rate, "termination_rate")
    if depth_packets is not None:
        spec["depth_packets"] = depth_packets
    if packet_size is not None:
        spec["packet_size"] = _units.size(packet_size, "packet_size")
    return spec
