"""[Tarasiuk05]'s numbers from the runs: each TCP run reduced to the cells of
``paperdata/tcp_cac/cells.csv`` it feeds, one value per seed, in the paper's unit
(what each cell's value is: docs/reproductions/tcp_cac.md). Table 2 (ρ and N_max) is the
paper's formulas (3)-(4): evaluating them is the check ``rho-n-max``, not a reproduced result.
"""

from __future__ import annotations

import math
from typing import Any

from ..framework import Context
from ..reduce import Cell, judged, measured, paper_of
from .runs import NMAX_CASES

#: Table 1's columns: (column, the per-seed statistic of :func:`.runs.per_seed`).
TABLE1_COLUMNS = [
    ("Average RTT [ms]", "rtt_ms"),
    ("Packet loss ratio per TCP connection", "loss"),
    ("Throughput per TCP connection [Mbps]", "thr_mbps"),
]
#: Table 4's columns: (column, the per-seed measure of :func:`.runs.transfers`, scale to the paper's unit).
TABLE4_COLUMNS = [
    ("Mean file transfer time [sec]", "mean_transfer_time_s", 1.0),
    ("Mean system state when call blocking", "mean_running_at_blocking", 1.0),
    ("Call blocking probability", "blocking", 100.0),
]
#: Table 3's simulated columns and §4's ratios of scheme #1 over #3: (column, measure).
TABLE3_COLUMNS = [
    ("Simulation results / Packet loss ratio IPLR", "agg_loss"),
    ("Simulation results / Received rate per connection [Mbps]", "thr_mbps"),
]
SECTION4_COLUMNS = [
    ("transfer time, times shorter", "mean_transfer_time_s"),
    ("call blocking, times lower", "blocking"),
]


def cells(ctx: Context, t1: dict[str, Any], nm: dict[str, Any], t4: dict[str, Any] | None) -> list[Cell]:
    """Every cell this run measures (all tables in a full run, the quick tables in a quick run)."""
    known = set(paper_of(ctx, "tcp_cac").keys())
    out: list[Cell] = []
    if judged(ctx, "tcp_cac", "Table 1"):
        for v in t1.values():
            rate = v["rate_mbps"]
            row = f"Min RTT = {v['min_rtt_ms']} msec / " + ("No shaping" if rate is None else f"R = {rate:g}")
            for column, key in TABLE1_COLUMNS:
                # Min RTT 0 unshaped: the paper prints no number ("almost all stopped").
                if ("Table 1", row, column) in known:
                    out += measured(ctx, "Table 1", row, column, [s[key] for s in v["per_seed"]])
    if judged(ctx, "tcp_cac", "Table 3"):
        for b, r, n_max in NMAX_CASES:
            v = nm.get(f"B{b}_R{r:g}Mbps_n{n_max}")
            if v is None:
                continue
            row = f"B = {b}, R_req = {r:g}"  # Tables 2-3 have no row labels: the inputs B and R_req
            for column, key in TABLE3_COLUMNS:
                out += measured(ctx, "Table 3", row, column, [s[key] for s in v["per_seed"]])
    if judged(ctx, "tcp_cac", "Table 4") and t4:
        for scheme in ("1", "2", "3"):
            row = f"Scheme#{scheme}"
            for column, key, scale in TABLE4_COLUMNS:
                if ("Table 4", row, column) in known:
                    out += measured(ctx, "Table 4", row, column, [scale * r[key] for r in t4[scheme]])
    if judged(ctx, "tcp_cac", "§4") and t4:
        pairs = list(zip(t4["1"], t4["3"], strict=True))
        for column, key in SECTION4_COLUMNS:
            ratios = [a[key] / b[key] if b[key] > 0 else math.nan for a, b in pairs]
            out += measured(ctx, "§4", "Scheme#1 against Scheme#3", column, ratios)
    return out
