"""[Tarasiuk05]'s numbers from the runs: each TCP run reduced to the cells of
``paperdata/tcp_cac/cells.csv`` it feeds, one value per seed, in the paper's unit.

=========  ===================================================================================
table      qoslab's value of the cell, per seed
=========  ===================================================================================
Table 1    over the 100 connections after the warm-up: the mean of their SRTT (ms, shaper wait
           included), of their loss ratios (data dropped / sent) and of their throughputs (wire
           bits of data delivered, Mb/s)
Table 3    at N_max connections shaped at R_req: the aggregate loss ratio and the mean received
           rate per connection (Mb/s); the input columns are the set-up
Table 4    with TCP transfers through the shaping CAC: the mean transfer time (s), the mean
           running connections a blocked request sees and the blocking (%), one value per seed
           of Table 4's seeds (as many as scheme #1's blocking interval needs)
§4         scheme #1's transfer time over scheme #3's, and its blocking over scheme #3's
=========  ===================================================================================

Table 2 (ρ and N_max) is the paper's formulas (3)-(4): evaluating them is the check
``rho-n-max``, not a reproduced result; the paper verifies them by simulation in Table 3.
"""

from __future__ import annotations

import math
from typing import Any

from ..cells import PaperData
from ..framework import Context
from ..reduce import Cell, measured, paper_of
from ..reduce import judged as _judged
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


def paper(ctx: Context) -> PaperData:
    """[Tarasiuk05]'s numbers: the run's, else ``paperdata/tcp_cac/``."""
    return paper_of(ctx, "tcp_cac")


def judged(ctx: Context, table: str) -> bool:
    """Whether this run measures ``table``'s cells (all in a full run, the quick tables in a quick run)."""
    return _judged(ctx, "tcp_cac", table)


def table1_row(rate_mbps: float | None, rtt_ms: int) -> str:
    """Table 1's row key: the sub-table (minimum RTT) and the shaping rate as printed."""
    return f"Min RTT = {rtt_ms} msec / " + ("No shaping" if rate_mbps is None else f"R = {rate_mbps:g}")


def case_row(buffer: int, r_req_mbps: float) -> str:
    """Tables 2-3's row key: the inputs B and R_req (the tables have no row labels)."""
    return f"B = {buffer}, R_req = {r_req_mbps:g}"


def cells(ctx: Context, t1: dict[str, Any], nm: dict[str, Any], t4: dict[str, Any] | None) -> list[Cell]:
    """Every cell this run measures."""
    data = paper(ctx)
    known = set(data.keys())
    out: list[Cell] = []
    if judged(ctx, "Table 1"):
        for v in t1.values():
            row = table1_row(v["rate_mbps"], v["min_rtt_ms"])
            for column, key in TABLE1_COLUMNS:
                # Min RTT 0 unshaped: the paper prints no number ("almost all stopped").
                if ("Table 1", row, column) in known:
                    out += measured(ctx, "Table 1", row, column, [s[key] for s in v["per_seed"]])
    if judged(ctx, "Table 3"):
        for b, r, n_max in NMAX_CASES:
            v = nm.get(f"B{b}_R{r:g}Mbps_n{n_max}")
            if v is None:
                continue
            row = case_row(b, r)
            seeds = v["per_seed"]
            out += measured(
                ctx, "Table 3", row, "Simulation results / Packet loss ratio IPLR", [s["agg_loss"] for s in seeds]
            )
            out += measured(
                ctx,
                "Table 3",
                row,
                "Simulation results / Received rate per connection [Mbps]",
                [s["thr_mbps"] for s in seeds],
            )
    if judged(ctx, "Table 4") and t4:
        for scheme in ("1", "2", "3"):
            row = f"Scheme#{scheme}"
            for column, key, scale in TABLE4_COLUMNS:
                if ("Table 4", row, column) in known:
                    out += measured(ctx, "Table 4", row, column, [scale * r[key] for r in t4[scheme]])
    if judged(ctx, "§4") and t4:
        pairs = list(zip(t4["1"], t4["3"], strict=True))
        row = "Scheme#1 against Scheme#3"
        out += measured(
            ctx,
            "§4",
            row,
            "transfer time, times shorter",
            [_ratio(a["mean_transfer_time_s"], b["mean_transfer_time_s"]) for a, b in pairs],
        )
        out += measured(
            ctx, "§4", row, "call blocking, times lower", [_ratio(a["blocking"], b["blocking"]) for a, b in pairs]
        )
    return out


def _ratio(a: float, b: float) -> float:
    return a / b if b > 0 else math.nan
