"""Over-termination measures of the PCN termination experiments ([Zhang07 §4.1], §4.3.2) from a run's
flows table (docs/reproductions/pcn.md, "Termination", Measures; docs/decisions/pcn.md)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

#: The failure event's time ([Zhang07 §4.2]: t1 = 200 s).
T1 = 200.0


def termination_metrics(
    flows: pd.DataFrame, *, mean_bps: float | Sequence[float] | np.ndarray | pd.Series, termination_bps: float
) -> dict[str, Any]:
    """Over-termination of one run: the bottleneck's ``flows`` present at t1, ``terminated``, ``load_bps``,
    ``optimal``, ``actual``, ``over_pct`` (of the optimal), ``over_pts`` ((actual − optimal) × 100) and
    ``terminated_before_t1``; per ingress (``src``) the same and its ``rounds`` (termination times after t1).
    ``mean_bps``: one rate for all flows or one per row (Table 4.2's MIX); one rate gives count shares."""
    rates_all = np.asarray(mean_bps, dtype=float)
    if rates_all.ndim == 0:
        rates_all = np.full(len(flows), float(rates_all))
    elif rates_all.shape != (len(flows),):
        raise ValueError(f"mean_bps: {rates_all.shape[0]} rates for {len(flows)} flows; allowed: one, or one per flow")
    sel = flows["admitted"].to_numpy(dtype=bool)
    admitted = flows[sel]
    before = admitted["terminated"].to_numpy(dtype=bool) & (admitted["end_s"].to_numpy(dtype=float) < T1)
    present = admitted[~before]
    rates = rates_all[sel][~before]
    cut = present["terminated"].to_numpy(dtype=bool)

    def share(r: np.ndarray, c: np.ndarray) -> float:
        if len(r) == 0:
            return math.nan
        if bool((r == r[0]).all()):
            return int(c.sum()) / len(r)
        return float(r[c].sum()) / float(r.sum())

    # One rate: count × rate, as the single-rate form always was.
    load = len(rates) * float(rates[0]) if len(rates) and bool((rates == rates[0]).all()) else float(rates.sum())
    optimal = max(0.0, 1.0 - termination_bps / load) if load > 0 else math.nan

    def figures(r: np.ndarray, c: np.ndarray) -> dict[str, float]:
        actual = share(r, c)
        over = (actual - optimal) / optimal * 100 if optimal > 0 else math.nan
        return {
            "flows": float(len(r)),
            "terminated": float(int(c.sum())),
            "actual": actual,
            "optimal": optimal,
            "over_pct": over,
            "over_pts": (actual - optimal) * 100,
        }

    out: dict[str, Any] = {**figures(rates, cut), "load_bps": load, "terminated_before_t1": int(before.sum())}
    out["ingress"] = {}
    srcs = present["src"].to_numpy()
    for src in sorted(set(srcs.tolist())):
        m = srcs == src
        times = np.unique(np.round(present["end_s"].to_numpy(dtype=float)[m][cut[m]] - T1, 6))
        out["ingress"][str(src)] = {**figures(rates[m], cut[m]), "rounds": [float(t) for t in times]}
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


def ingress_load(
    flows: pd.DataFrame, *, delays_s: Sequence[float], mean_bps: float, times_s: Sequence[float]
) -> dict[str, list[float]]:
    """[Zhang07] Fig. 4.3's curves (bit/s, per ingress ``src{i}``): the load each ingress brings to the bottleneck at
    ``times_s``, each admitted flow ``mean_bps`` from its start to its end, both ``delays_s[i]`` later."""
    adm = flows[flows["admitted"].to_numpy(dtype=bool)]
    t = np.asarray(times_s, dtype=float)
    out: dict[str, list[float]] = {}
    for i, d in enumerate(delays_s):
        f = adm[adm["src"].astype(str) == f"src{i}"]
        start = np.sort(f["start_s"].to_numpy(dtype=float) + d)
        end = np.sort(f["end_s"].to_numpy(dtype=float) + d)
        active = np.searchsorted(start, t, side="right") - np.searchsorted(end, t, side="right")
        out[f"src{i}"] = [float(x) * mean_bps for x in active]
    return out
