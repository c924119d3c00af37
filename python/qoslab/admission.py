"""Admission-control builders: each returns a scenario's ``admission`` table,
for :meth:`qoslab.Scenario.build`'s ``admission=``::

    from qoslab import admission
    cac = admission.shaping_cac(scheme=3, capacity="100Mbps", buffer=10, iplr=1e-3, r_req="1Mbps", k=3)

Only the parameters given are written; the core fills in the documented
defaults and checks every value when the scenario is validated (see
``docs/mechanisms/tcp_cac_schemes.md`` and ``docs/scenarios.md``). MACE's own
admission (``mbac``/``ssac``) belongs to a link: see :func:`qoslab.topology.mace`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from . import _units
from ._units import Quantity


def admit_all() -> dict[str, Any]:
    """Every flow is admitted (the default)."""
    return {"type": "admit_all"}


def shaping_cac(
    *,
    scheme: Literal[1, 2, 3],
    capacity: Quantity | None = None,
    buffer: int | None = None,
    iplr: float | None = None,
    r_req: Quantity | None = None,
    k: float | None = None,
    scheme2_rate: Literal["c", "rho_c"] | None = None,
) -> dict[str, Any]:
    """Shaping CAC for TCP [Tarasiuk05 §4]: admit a flow iff the shaping rates fit rho*C, with
    rho = 2B / (2B - ln IPLR); each admitted flow's shaper (its group's ``shaper=``) gets the
    rate of ``scheme`` 1 (R_req), 2 (a share of C, or of rho*C with ``scheme2_rate="rho_c"``,
    re-assigned at every arrival and departure) or 3 (max{R_req, (rho*C - sum R)/k}, fixed).

    Defaults: ``capacity`` 100 Mb/s, ``buffer`` B = 10 packets, ``iplr`` 1e-3, ``r_req`` the
    group's ``reserve`` (or the model's mean wire rate), ``k`` 3, ``scheme2_rate`` ``"c"``.
    """
    a: dict[str, Any] = {"type": "shaping_cac", "scheme": scheme}
    if capacity is not None:
        a["capacity"] = _units.rate(capacity, "capacity")
    if buffer is not None:
        a["buffer"] = buffer
    if iplr is not None:
        a["iplr"] = iplr
    if r_req is not None:
        a["r_req"] = _units.rate(r_req, "r_req")
    if k is not None:
        a["k"] = k
    if scheme2_rate is not None:
        a["scheme2_rate"] = scheme2_rate
    return a


__all__: Sequence[str] = ("admit_all", "shaping_cac")
