"""Over-termination measures of the PCN termination experiments (seed 004 §4.1, §4.3.2),
from a run's flows table; used by :mod:`.termination` (see its "Measures" and
docs/decisions.md (PCN))."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

#: The failure event's time (seed §4.2: t1 = 200 s).
T1 = 200.0


def termination_metrics(flows: pd.DataFrame, *, mean_bps: float, termination_bps: float) -> dict[str, Any]:
    """Over-termination of one run from its flows table (see :mod:`.termination`, "Measures").

    Returns the bottleneck's figures (``flows`` present at t1, ``terminated``, ``load_bps``,
    ``optimal``, ``actual``, ``over_pct`` = (actual − optimal) / optimal × 100, ``over_pts`` = (actual − optimal) × 100,
    ``terminated_before_t1``), and per ingress (the flows' ``src``) the same plus ``rounds``:
    the distinct times after t1 at which it terminated flows (its termination rounds)."""
    admitted = flows[flows["admitted"]]
    end = admitted["end_s"].to_numpy(dtype=float)
    term = admitted["terminated"].to_numpy(dtype=bool)
    before = term & (end < T1)
    present = admitted[~before]
    cut = present["terminated"].to_numpy(dtype=bool)
    n = len(present)
    load = n * mean_bps
    optimal = max(0.0, 1.0 - termination_bps / load) if load > 0 else math.nan

    def figures(n_present: int, n_cut: int) -> dict[str, float]:
        actual = n_cut / n_present if n_present else math.nan
        over = (actual - optimal) / optimal * 100 if optimal > 0 else math.nan
        return {
            "flows": float(n_present),
            "terminated": float(n_cut),
            "actual": actual,
            "optimal": optimal,
            "over_pct": over,
            "over_pts": (actual - optimal) * 100,
        }

    out: dict[str, Any] = {
        **figures(n, int(cut.sum())),
        "load_bps": load,
        "terminated_before_t1": int(before.sum()),
    }
    per: dict[str, Any] = {}
    for src, g in present.groupby("src", sort=True):
        c = g["terminated"].to_numpy(dtype=bool)
        times = np.unique(np.round(g["end_s"].to_numpy(dtype=float)[c] - T1, 6))
        per[str(src)] = {**figures(len(g), int(c.sum())), "rounds": [float(t) for t in times]}
    out["ingress"] = per
    return out


def marked_fractions(flows: pd.DataFrame) -> np.ndarray:
    """Excess-marked share of each rerouted flow's delivered packets (§4.3.2)."""
    f = flows[flows["group"].str.startswith("rerouted") & (flows["delivered_pkts"] > 0)]
    return (f["pcn_excess_marked_pkts"] / f["delivered_pkts"]).to_numpy(dtype=float)


def synchronization(fr: np.ndarray) -> dict[str, float]:
    """Shares of flows unmarked (0), fully marked (≥ 0.99) and partly marked."""
    n = len(fr)
    if n == 0:
        return {"flows": 0.0, "unmarked": math.nan, "full": math.nan, "partial": math.nan}
    unmarked = float((fr == 0).sum()) / n
    full = float((fr >= 0.99).sum()) / n
    return {"flows": float(n), "unmarked": unmarked, "full": full, "partial": 1.0 - unmarked - full}
