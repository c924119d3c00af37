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
