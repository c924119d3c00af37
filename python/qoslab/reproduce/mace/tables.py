"""The MACE paper's cells (``paperdata/mace/cells.csv``) from the runs' measures, one value per seed in the
paper's unit (what each is: docs/reproductions/mace.md, "The paper's numbers")."""

from __future__ import annotations

import math
from collections.abc import Callable

from ..framework import Context
from ..reduce import Cell, judged, measured
from .params import FIG12_13_MODELS, LOADS_FULL
from .runs import Fig9, Fig12_13, MixedLoss, Scenario1, Table2, Table2Run

#: Table 2's columns: (admission, column, the run's value in the paper's unit).
TABLE2_COLUMNS: list[tuple[str, str, Callable[[Table2Run], float]]] = [
    (adm, f"CL with {adm.upper()} / {column}", value)
    for adm in ("ssac", "mbac")
    for column, value in (("%Utilization", lambda r: 100.0 * r["utilization"]), ("Flows", lambda r: r["alive_mean"]))
]


def cells(ctx: Context, s1: Scenario1, f9: Fig9, mixed: MixedLoss, t2: Table2, f1213: Fig12_13) -> list[Cell]:
    """Every cell this run measures (all tables in a full run, the quick tables in a quick run)."""
    out: list[Cell] = []
    if judged(ctx, "mace", "Table 2"):
        for model, runs in t2.items():
            for adm, column, value in TABLE2_COLUMNS:
                out += measured(ctx, "Table 2", model.upper(), column, [value(r) for r in runs[adm]])
    if judged(ctx, "mace", "Fig. 6"):
        for row, variant, key in (
            ("CL connections with MACE", "mace", "loss_cl_group"),
            ("BE connections without MACE", "nomace", "loss_testing"),
        ):
            per_load = [[r[key] for r in s1["runs"][f"{variant}_{ld}"]] for ld in s1["loads"]]
            out += measured(ctx, "Fig. 6", row, "worst loss rate", [100 * max(x) for x in zip(*per_load, strict=True)])
    if judged(ctx, "mace", "Fig. 8"):
        for ld in [ld for ld in LOADS_FULL if ld >= 100]:
            cbr, onoff = s1["runs"].get(f"mace_{ld}"), mixed["runs"].get(str(ld))
            if cbr is None or onoff is None:
                continue
            diff = [100 * (a["loss_bg"] - b["loss_bg"]) for a, b in zip(cbr, onoff, strict=True)]
            out += measured(
                ctx, "Fig. 8", f"background load {ld} %", "background loss lower with ON/OFF CL than with CBR CL", diff
            )
    if judged(ctx, "mace", "Fig. 9"):
        for svc in ("CL", "BE"):
            vals = [100 * r[f"share40_{svc.lower()}"] for r in f9["runs"]["jitter"]]
            out += measured(ctx, "Fig. 9", svc, "inter-arrivals within 25 % of 40 ms", vals)
    for fig, kbps in (("Fig. 12", 256), ("Fig. 13", 64)):
        if judged(ctx, "mace", fig) and kbps in FIG12_13_MODELS:
            for svc in ("cl", "be"):
                vals = [100 * r[f"loss_{svc}{kbps}"] for r in f1213["runs"]]
                out += measured(ctx, fig, f"{kbps} kbps {svc.upper()} connections", "loss rate", vals)
    if "mixed" in t2:
        ssac, mbac = t2["mixed"]["ssac"], t2["mixed"]["mbac"]
        if judged(ctx, "mace", "Fig. 15"):
            diff = [100 * (s["share256_10ms"] - b["share256_10ms"]) for s, b in zip(ssac, mbac, strict=True)]
            out += measured(ctx, "Fig. 15", "256 kbps CL connections", "inter-arrivals <= 10 ms, SSAC minus MBAC", diff)
        if judged(ctx, "mace", "Fig. 16"):
            gain = [
                100 * (b["utilization"] / s["utilization"] - 1) if s["utilization"] > 0 else math.nan
                for s, b in zip(ssac, mbac, strict=True)
            ]
            out += measured(ctx, "Fig. 16", "MIXED", "average link utilization, MBAC over SSAC", gain)
    return out
