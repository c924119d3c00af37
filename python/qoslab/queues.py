"""Queue-discipline builders: each returns the scenario table of one queue.

Use them wherever a scenario takes a queue (a link's ``queue``, a
topology's ``default_queue``, the bands of :func:`prio`)::

    from qoslab import queues
    red = queues.red(limit=60, min_th=5, max_th=15)          # FJ93 defaults for the rest
    fifo = queues.fifo(limit="60pkts")
    mace = queues.mace(buffer=50)                            # with topology.link(..., mace=topology.mace(...))

Only the parameters given are written; the core fills in the documented
defaults and checks every value when the scenario is validated (see
``docs/mechanisms/red.md`` and ``docs/scenarios.md``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import _units
from ._units import Quantity


def fifo(*, limit: Any) -> dict[str, Any]:
    """Drop-tail FIFO. ``limit``: packets (int), ``"60pkts"``, ``"64kB"``, or both as a pair."""
    return {"type": "fifo", "limit": _units.limit(limit)}


def red(
    *,
    limit: Any,
    min_th: float,
    max_th: float,
    max_p: float | None = None,
    w_q: float | None = None,
    gentle: bool | None = None,
    ecn: bool | None = None,
    mode: str | None = None,
    mean_pkt_size: Quantity | None = None,
    variant: str | None = None,
) -> dict[str, Any]:
    """RED (Floyd & Jacobson 1993).

    ``min_th``/``max_th`` are in packets (bytes when ``mode="bytes"``);
    defaults: ``max_p`` 0.1, ``w_q`` 0.002, not gentle, no ECN, packet mode,
    ``mean_pkt_size`` 1000 B. ``variant``: ``"floyd93"`` (default, the 1993
    algorithm) or ``"ns2"`` (RED as ns-2's ``queue/red.cc`` runs it; see
    ``docs/mechanisms/red.md``).
    """
    q: dict[str, Any] = {"type": "red", "limit": _units.limit(limit), "min_th": min_th, "max_th": max_th}
    optional = {"max_p": max_p, "w_q": w_q, "gentle": gentle, "ecn": ecn, "mode": mode, "variant": variant}
    q.update({k: v for k, v in optional.items() if v is not None})
    if mean_pkt_size is not None:
        q["mean_pkt_size"] = _units.size(mean_pkt_size, "mean_pkt_size")
    return q


def _chips(chips: bool | dict[str, Any] | None) -> dict[str, Any]:
    if chips is None:
        return {}
    if isinstance(chips, bool):
        return {"chips": chips}
    if isinstance(chips, dict):
        return {"chips": dict(chips)}
    raise TypeError(f"chips must be True, False or a dict such as {{'max_tagged_share': 0.5}}, got {chips!r}")


def cbt(
    *,
    limit: Any,
    min_th: float,
    max_th: float,
    tagged_threshold: float | None = None,
    untagged_threshold: float | None = None,
    flow_interval: Quantity | None = None,
    chips: bool | dict[str, Any] | None = None,
    **red_options: Any,
) -> dict[str, Any]:
    """CBT, "RED for all" ([Claypool00 §3]): static thresholds on the tagged (class 1) and untagged
    (class 2) UDP averages in front of RED. Defaults 2.9 and 0.6 packets; ``red_options`` are
    :func:`red`'s optional keys; ``chips``: ``True`` or ``{"max_tagged_share": 0.5, ...}``."""
    q = red(limit=limit, min_th=min_th, max_th=max_th, **red_options)
    q["type"] = "cbt"
    optional = {"tagged_threshold": tagged_threshold, "untagged_threshold": untagged_threshold}
    q.update({k: v for k, v in optional.items() if v is not None})
    if flow_interval is not None:
        q["flow_interval"] = _units.dur(flow_interval, "flow_interval")
    q.update(_chips(chips))
    return q


def dcbt(
    *,
    limit: Any,
    min_th: float,
    max_th: float,
    flow_interval: Quantity | None = None,
    chips: bool | dict[str, Any] | None = None,
    **red_options: Any,
) -> dict[str, Any]:
    """D-CBT [Claypool00 §3.1]: UDP class thresholds from the active-flow shares (flow interval
    300 ms by default); ``chips`` as in :func:`cbt`."""
    q = red(limit=limit, min_th=min_th, max_th=max_th, **red_options)
    q["type"] = "dcbt"
    if flow_interval is not None:
        q["flow_interval"] = _units.dur(flow_interval, "flow_interval")
    q.update(_chips(chips))
    return q


def mace(*, buffer: Any) -> dict[str, Any]:
    """MACE's two-level strict-priority queue in one shared ``buffer`` (CL pushes out BE;
    [MACE98]). Only as a link direction's queue, whose link then needs ``mace=``
    (:func:`qoslab.topology.mace`); ``buffer`` as a :func:`fifo` limit (paper: 50 packets)."""
    return {"type": "mace", "buffer": _units.limit(buffer, "buffer")}


def prio(*, bands: Sequence[dict[str, Any]], classify_by: str | None = None) -> dict[str, Any]:
    """Strict priority over ``bands`` (band 0 first), classified by packet class tag or ``"dscp"``."""
    q: dict[str, Any] = {"type": "prio", "bands": list(bands)}
    if classify_by is not None:
        q["classify_by"] = classify_by
    return q


def scfq(*, queues: Sequence[tuple[Quantity, dict[str, Any]]], classify_by: str | None = None) -> dict[str, Any]:
    """Self-clocked fair queueing (Golestani 1994; ``docs/mechanisms/scfq.md``) over child queues.

    ``queues``: ``(rate, queue)`` pairs in order; each child is served in proportion to its
    ``rate`` when backlogged. A packet's class tag (or ``"dscp"``) picks its child, as for
    :func:`prio`::

        queues.scfq(queues=[("300kbps", queues.fifo(limit=20)), ("1.7Mbps", queues.fifo(limit=80))])
    """
    q: dict[str, Any] = {
        "type": "scfq",
        "queues": [{"rate": _units.rate(r, f"queues.{i}.rate"), "queue": c} for i, (r, c) in enumerate(queues)],
    }
    if classify_by is not None:
        q["classify_by"] = classify_by
    return q


def stream(name: str, *, rate: Quantity | None = None, service: str | None = None) -> dict[str, Any]:
    """A stream of :func:`buffer_management` (``name``, optional ``rate``) or of :func:`edge`
    (``service`` ``"ef"``, ``"af"`` or ``"be"``; a ``rate`` for ``ef`` and ``af``)."""
    s: dict[str, Any] = {"name": name}
    if service is not None:
        s["service"] = service
    if rate is not None:
        s["rate"] = _units.rate(rate, f"stream {name}.rate")
    return s


def buffer_management(
    *, buffers: int, buff_size: Quantity, streams: Sequence[dict[str, Any]], rate: Quantity | None = None
) -> dict[str, Any]:
    """Rate guarantees by buffer management (Guérin et al. 1998; [Guerin99 §III.A];
    ``docs/mechanisms/buffer_management.md``): a FIFO of ``buffers`` packet buffers of
    ``buff_size`` bytes each, in which every stream with a ``rate`` owns
    buffers × buff_size × rate / ``rate`` (the queue's, default the link's) bytes and the rest
    is shared under the "holes" rule. ``streams``: :func:`stream` tables; a ``classifier``
    stage (:func:`qoslab.stages.classifier`) puts packets in them."""
    q: dict[str, Any] = {
        "type": "buffer_managed",
        "buffers": buffers,
        "buff_size": _units.size(buff_size, "buff_size"),
        "streams": list(streams),
    }
    if rate is not None:
        q["rate"] = _units.rate(rate, "rate")
    return q


def edge(
    *,
    buffers: int,
    buff_size: Quantity,
    streams: Sequence[dict[str, Any]],
    ef_buffers: int | None = None,
    ef_rate: Quantity | None = None,
) -> dict[str, Any]:
    """The [Guerin99] edge egress: SCFQ between an EF queue and an AF/BE queue, each
    buffer-managed from its share of ``buffers`` packet buffers of ``buff_size`` bytes.
    ``streams``: :func:`stream` tables with a ``service``; ``ef_rate`` defaults to the EF
    streams' reservations, ``ef_buffers`` to the pool's share at that rate::

        queues.edge(buffers=80, buff_size="512B", streams=[
            queues.stream("E1", service="ef", rate="100kbps"),
            queues.stream("A1", service="af", rate="200kbps"),
            queues.stream("B1", service="be")])
    """
    q: dict[str, Any] = {
        "type": "edge",
        "buffers": buffers,
        "buff_size": _units.size(buff_size, "buff_size"),
        "streams": list(streams),
    }
    if ef_buffers is not None:
        q["ef_buffers"] = ef_buffers
    if ef_rate is not None:
        q["ef_rate"] = _units.rate(ef_rate, "ef_rate")
    return q


#: The queue's ``type`` name, ``buffer_managed``, as a builder name too.
buffer_managed = buffer_management
