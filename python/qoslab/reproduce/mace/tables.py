"""The MACE paper's cells (``paperdata/mace/cells.csv``) from the runs' measures, one value per seed in the
paper's unit (what each is: docs/reproductions/mace.md, "The paper's numbers")."""

from __future__ import annotations

import math
from collections.abc import Callable

from ..framework import Context
from ..reduce import Cell, judged, measured
from .params import LOADS_FULL
from .runs import Fig9, Fig12_13, MixedLoss, Scenario1, Table2, Table2Run

#: Table 2's columns: (admission, column, the run's value in the paper's unit).
TABLE2_COLUMNS: list[tuple[str, str, Callable[[Table2Run], float]]] = [
    (adm, f"CL with {adm.upper()} / {column}", value)
    for adm in ("ssac", "mbac")
    for column, value in (("%Utilization", lambda r: 100.0 * r["utilization"]), ("Flows", lambda r: r["alive_mean"]))
]


def cells(ctx: Context, s1: Scenario1, f9: Fig9, mixed: MixedLoss, t2: Table2, f1213: Fig12_13) -> list[Cell]:
    """Every cell this run measures (all tables in a full run, the quick tables in a quick run): each
    table's (row, column, value per seed) below, kept when the run judges the table."""
    got: list[tuple[str, str, str, list[float]]] = [
        ("Table 2", m.upper(), column, [value(r) for r in x[adm]])
        for m, x in t2.items()
        for adm, column, value in TABLE2_COLUMNS
    ]
    for row, variant, key in (
        ("CL connections with MACE", "mace", "loss_cl_group"),
        ("BE connections without MACE", "nomace", "loss_testing"),
    ):
        per_load = [[r[key] for r in s1["runs"][f"{variant}_{ld}"]] for ld in s1["loads"]]
        got.append(("Fig. 6", row, "worst loss rate", [100 * max(x) for x in zip(*per_load, strict=True)]))
    for ld in [ld for ld in LOADS_FULL if ld >= 100 and f"mace_{ld}" in s1["runs"] and str(ld) in mixed["runs"]]:
        cbr, onoff = s1["runs"][f"mace_{ld}"], mixed["runs"][str(ld)]
        diff = [100 * (a["loss_bg"] - b["loss_bg"]) for a, b in zip(cbr, onoff, strict=True)]
        got.append(("Fig. 8", f"background load {ld} %", "background loss lower with ON/OFF CL than with CBR CL", diff))
    for svc in ("CL", "BE"):
        shares = [100 * r[f"share40_{svc.lower()}"] for r in f9["runs"]["jitter"]]
        got.append(("Fig. 9", svc, "inter-arrivals within 25 % of 40 ms", shares))
    for fig, kbps in (("Fig. 12", 256), ("Fig. 13", 64)):
        for svc in ("cl", "be"):
            loss = [100 * r[f"loss_{svc}{kbps}"] for r in f1213["runs"]]
            got.append((fig, f"{kbps} kbps {svc.upper()} connections", "loss rate", loss))
    if "mixed" in t2:
        pairs = list(zip(t2["mixed"]["ssac"], t2["mixed"]["mbac"], strict=True))
        diff = [100 * (s["share256_10ms"] - b["share256_10ms"]) for s, b in pairs]
        got.append(("Fig. 15", "256 kbps CL connections", "inter-arrivals <= 10 ms, SSAC minus MBAC", diff))
        gain = [100 * (b["utilization"] / s["utilization"] - 1) if s["utilization"] > 0 else math.nan for s, b in pairs]
        got.append(("Fig. 16", "MIXED", "average link utilization, MBAC over SSAC", gain))
    return [
        c for table, row, col, vals in got if judged(ctx, "mace", table) for c in measured(ctx, table, row, col, vals)
    ]
