"""PCN analysis helpers [Zhang07].

``expected_termination`` is the "expected-termination" of §4.4.1: the
termination each ingress-egress aggregate (IEA) and each bottleneck of a
parking-lot (PLT) topology should see when termination marking is
uniformly random, generalized from the paper's two-bottleneck example to
any number of bottlenecks and any load split.

The model (§4.4.1, "assuming uniformly random marking"): one long IEA
crosses bottlenecks 1..N in order; short IEA i crosses bottleneck i only.
Loads are in any one unit (fractions of the link in the paper) and the
bottlenecks have the same configured-termination-rate ``T``. Only traffic
still not excess-marked is metered downstream (§4.1), so with ``u_1 =
long_load``:

    m_i     = max(0, (u_i + s_i - T) / (u_i + s_i))    marked fraction at bottleneck i
    u_{i+1} = u_i * (1 - m_i)                          long traffic still unmarked
    long    = 1 - u_{N+1} / long_load                  the long IEA terminates what was marked
    short_i = m_i
    bottleneck_i = (long * long_load + m_i * s_i) / (long_load + s_i)

(an ingress terminates whole flows, so the long IEA's termination removes
its traffic from every bottleneck it crosses, which is why the paper's
Bottleneck2 value uses the long IEA's total 3/7). With ``bottlenecks=2``,
``long_load=1/2``, ``short_load=1/4`` and ``termination_rate=1/2`` this
gives the paper's 3/7, 1/3, 1/7 and bottlenecks 25/63, 1/3.

The arithmetic is exact (``fractions.Fraction`` of the float inputs), and
each result is the float nearest the exact value, so the paper's example
compares equal to ``3/7`` etc. in Python floats.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from numbers import Real
from typing import Any

from .errors import config_error

__all__ = ["expected_termination"]


def _load(name: str, value: Any, *, positive: bool) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise config_error(name, f"must be a number, got {value!r}", origin="qoslab.pcn.expected_termination")
    f = float(value)
    if not math.isfinite(f):
        raise config_error(name, f"must be finite, got {value!r}", origin="qoslab.pcn.expected_termination")
    if positive and f <= 0:
        raise config_error(name, f"must be > 0, got {value!r}", origin="qoslab.pcn.expected_termination")
    if not positive and f < 0:
        raise config_error(name, f"must be >= 0, got {value!r}", origin="qoslab.pcn.expected_termination")
    return Fraction(value) if isinstance(value, (int, Fraction)) else Fraction(f)


def expected_termination(
    bottlenecks: int,
    long_load: float,
    short_load: float | Sequence[float],
    termination_rate: float,
) -> dict[str, Any]:
    """The expected termination of [Zhang07 §4.4.1] on a parking lot of
    ``bottlenecks`` links (see the module docstring for the model).

    ``long_load``: the long IEA's load at the event (same unit as the rate);
    ``short_load``: one number (every short IEA) or one per bottleneck, in
    order from upstream (Table 4.7's Expected column uses measured loads);
    ``termination_rate``: the configured-termination-rate of each bottleneck.

    Returns ``{"long": float, "short": [float] * bottlenecks, "bottlenecks":
    [float] * bottlenecks}``: fractions of each aggregate's, and each
    bottleneck's pre-event load, that are terminated. Bad arguments raise
    ``qoslab.ConfigError`` naming the argument.
    """
    if isinstance(bottlenecks, bool) or not isinstance(bottlenecks, int) or bottlenecks < 1:
        raise config_error(
            "bottlenecks",
            f"must be an integer >= 1, got {bottlenecks!r}",
            origin="qoslab.pcn.expected_termination",
        )
    long_ = _load("long_load", long_load, positive=True)
    rate = _load("termination_rate", termination_rate, positive=True)
    loads: object = short_load  # checked at run time, whatever the annotation says
    if isinstance(loads, (str, bytes)) or not isinstance(loads, (Real, Sequence)):
        raise config_error(
            "short_load",
            f"must be a number or a list of {bottlenecks} numbers, got {short_load!r}",
            origin="qoslab.pcn.expected_termination",
        )
    if isinstance(loads, Sequence):
        if len(loads) != bottlenecks:
            raise config_error(
                "short_load",
                f"has {len(loads)} values; it needs one per bottleneck ({bottlenecks})",
                origin="qoslab.pcn.expected_termination",
            )
        shorts = [_load(f"short_load[{i}]", s, positive=False) for i, s in enumerate(loads)]
    else:
        shorts = [_load("short_load", loads, positive=False)] * bottlenecks

    unmarked = long_
    marked: list[Fraction] = []
    for s in shorts:
        total = unmarked + s
        m = (total - rate) / total if total > rate else Fraction(0)
        marked.append(m)
        unmarked *= 1 - m
    long_term = 1 - unmarked / long_
    per_bottleneck = [(long_term * long_ + m * s) / (long_ + s) for m, s in zip(marked, shorts, strict=True)]
    return {
        "long": float(long_term),
        "short": [float(m) for m in marked],
        "bottlenecks": [float(b) for b in per_bottleneck],
    }


def domain(
    *,
    edges: Sequence[str],
    cle: str | None = None,
    cle_weight: float | None = None,
    cle_interval: str | None = None,
    cle_threshold: float | None = None,
    termination_interval: str | None = None,
    flow_choice: str | None = None,
    rounding: str | None = None,
    max_flows_per_round: int | None = None,
    termination_start: str | None = None,
) -> dict[str, Any]:
    """The ``[pcn]`` table of a PCN domain (``docs/scenarios.md``, "PCN"): its edge
    routers (names or ``"prefix*"`` patterns) and the settings given; the core fills in
    the paper's defaults (per-packet CLE, weight 0.01, threshold 0.5, 100 ms intervals,
    random flow choice, rounding up). Use with ``Scenario.build(..., pcn=...)`` and the
    link stages :func:`qoslab.stages.pcn_admission` / :func:`qoslab.stages.pcn_termination`."""
    t: dict[str, Any] = {"edges": list(edges)}
    for key, value in (
        ("cle", cle),
        ("cle_weight", cle_weight),
        ("cle_interval", cle_interval),
        ("cle_threshold", cle_threshold),
        ("termination_interval", termination_interval),
        ("flow_choice", flow_choice),
        ("rounding", rounding),
        ("max_flows_per_round", max_flows_per_round),
        ("termination_start", termination_start),
    ):
        if value is not None:
            t[key] = value
    return t
