"""The MACE paper's numbers from the runs: each run's measures reduced to the cells of
``paperdata/mace/cells.csv`` they feed, one value per seed, in the paper's unit.

=========  ===================================================================================
table      qoslab's value of the cell, per seed
=========  ===================================================================================
Table 2    %Utilization: mean of the 5 s CL load samples after the warm-up over the allocation
           (39 % or 23 % of the link), in %; Flows: admitted flows still sending, time-averaged
           after the warm-up (scenarios 3-4, 3100 s, warm-up 100 s)
Fig. 6     the largest, over scenario 1's background loads, of the aggregate loss (dropped /
           sent, every packet, end to end) of the 20 CL connections with MACE, and of the 40
           connections without MACE, in %
Fig. 8     at each background load >= 100 %: background loss with scenario 1's CBR CL sources
           minus with Figs. 7-8's mixed ON/OFF CL sources, in points (the same seed's runs)
Fig. 9     share of the CL and of the BE connections' inter-arrivals (< 80 ms) within 25 % of
           40 ms, at §5.2's 20 background sources with the host timing jitter, in %
Figs.      aggregate loss of the CL and of the BE connections of each peak rate after the
12, 13     warm-up (every packet they sent, end to end), scenario 4's mixed models, in %
Fig. 15    share of the 256 kb/s CL inter-arrivals of 10 ms or less, SSAC minus MBAC (Table 2's
           MIXED runs), in points
Fig. 16    MBAC's mean utilization over SSAC's, minus 1 (Table 2's MIXED runs), in %
=========  ===================================================================================

Table 1, §5.2 and §5.3 are the set-up and the paper's arithmetic: no run measures them
(``tables.toml`` says why; the tests check the scenarios against Table 1 and §5.3).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from ..cells import PaperData
from ..framework import Context
from ..reduce import Cell, measured, paper_of
from ..reduce import judged as _judged
from .params import FIG8_LOADS, FIG12_13_MODELS
from .runs import Fig9, Fig12_13, MixedLoss, Scenario1, Table2, Table2Run


def _util_pct(r: Table2Run) -> float:
    return 100.0 * r["utilization"]


def _flows(r: Table2Run) -> float:
    return r["alive_mean"]


#: Table 2's columns: (admission, column, the run's value in the paper's unit).
TABLE2_COLUMNS: list[tuple[str, str, Callable[[Table2Run], float]]] = [
    ("ssac", "CL with SSAC / %Utilization", _util_pct),
    ("ssac", "CL with SSAC / Flows", _flows),
    ("mbac", "CL with MBAC / %Utilization", _util_pct),
    ("mbac", "CL with MBAC / Flows", _flows),
]


def paper(ctx: Context) -> PaperData:
    """The MACE paper's numbers: the run's, else ``paperdata/mace/``."""
    return paper_of(ctx, "mace")


def judged(ctx: Context, table: str) -> bool:
    """Whether this run measures ``table``'s cells (all in a full run, the quick tables in a quick run)."""
    return _judged(ctx, "mace", table)


def cells(
    ctx: Context,
    s1: Scenario1,
    f9: Fig9,
    mixed: MixedLoss,
    t2: Table2,
    f1213: Fig12_13,
) -> list[Cell]:
    """Every cell this run measures."""
    out: list[Cell] = []
    if judged(ctx, "Table 2"):
        for model, runs in t2.items():
            for adm, column, value in TABLE2_COLUMNS:
                out += measured(ctx, "Table 2", model.upper(), column, [value(r) for r in runs[adm]])
    if judged(ctx, "Fig. 6"):
        loads = s1["loads"]
        cl = [max(x) for x in zip(*(_pick(s1["runs"][f"mace_{ld}"], "loss_cl_group") for ld in loads), strict=True)]
        be0 = [max(x) for x in zip(*(_pick(s1["runs"][f"nomace_{ld}"], "loss_testing") for ld in loads), strict=True)]
        out += measured(ctx, "Fig. 6", "CL connections with MACE", "worst loss rate", [100 * v for v in cl])
        out += measured(ctx, "Fig. 6", "BE connections without MACE", "worst loss rate", [100 * v for v in be0])
    if judged(ctx, "Fig. 8"):
        for ld in FIG8_LOADS:
            cbr, onoff = s1["runs"].get(f"mace_{ld}"), mixed["runs"].get(str(ld))
            if cbr is None or onoff is None:
                continue
            diff = [100 * (a["loss_bg"] - b["loss_bg"]) for a, b in zip(cbr, onoff, strict=True)]
            out += measured(
                ctx, "Fig. 8", f"background load {ld} %", "background loss lower with ON/OFF CL than with CBR CL", diff
            )
    if judged(ctx, "Fig. 9"):
        for svc, key in (("CL", "share40_cl"), ("BE", "share40_be")):
            vals = [100 * v for v in _pick(f9["runs"]["jitter"], key)]
            out += measured(ctx, "Fig. 9", svc, "inter-arrivals within 25 % of 40 ms", vals)
    for fig, kbps in (("Fig. 12", 256), ("Fig. 13", 64)):
        if judged(ctx, fig) and kbps in FIG12_13_MODELS:
            for svc in ("cl", "be"):
                vals = [100 * v for v in _pick(f1213["runs"], f"loss_{svc}{kbps}")]
                out += measured(ctx, fig, f"{kbps} kbps {svc.upper()} connections", "loss rate", vals)
    if "mixed" in t2:
        ssac, mbac = t2["mixed"]["ssac"], t2["mixed"]["mbac"]
        if judged(ctx, "Fig. 15"):
            diff = [100 * (s["share256_10ms"] - b["share256_10ms"]) for s, b in zip(ssac, mbac, strict=True)]
            out += measured(ctx, "Fig. 15", "256 kbps CL connections", "inter-arrivals <= 10 ms, SSAC minus MBAC", diff)
        if judged(ctx, "Fig. 16"):
            gain = [
                100 * (b["utilization"] / s["utilization"] - 1) if s["utilization"] > 0 else math.nan
                for s, b in zip(ssac, mbac, strict=True)
            ]
            out += measured(ctx, "Fig. 16", "MIXED", "average link utilization, MBAC over SSAC", gain)
    return out


def _pick(runs: Sequence[dict[str, float]], key: str) -> list[float]:
    return [r[key] for r in runs]
