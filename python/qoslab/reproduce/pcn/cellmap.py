"""Where the ``pcn`` runs go in [Zhang07]'s tables: the keys of ``paperdata/pcn/cells.csv`` and the per-seed
statistics the tables print (one value per seed: the statistic on that seed's runs, never of seed means)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

from ...stats import Estimate
from ..cells import Measured, NotMeasured

#: What a family returns for a paper cell.
Cell = Measured | NotMeasured

#: Tables 3.1-3.4's two columns.
OVER = "over-admission percent"
SD = "standard deviation to conf-adm-rate ratio"
#: Tables 3.1-3.3's row label of the links above T3 (the paper's own spelling).
T3_OC3 = "T3,100Mbps,OC3"
#: Table 3.5's columns and its topology labels (qoslab's ``single`` / ``rtt`` / the parking lots).
STATS = ("Min", "Max", "Mean", "SD")
TOPO_35 = {"single": "S.Link", "rtt": "RTT", "plt": "PLT"}
#: Table 4.2's columns by randomization f.
F_COLUMN = {0.0: "No-Rand", 0.0001: "0.0001", 0.001: "0.001", 0.005: "0.005", 0.01: "0.01", 0.1: "0.1"}


def cells(
    log: Callable[[str], None],
    table: str,
    row: str,
    columns: Iterable[tuple[str, Sequence[float]]],
    *,
    missing: str = "",
) -> list[Cell]:
    """The cells of one row, ``columns`` as (column, values per seed); a cell with a value that is not finite
    is :class:`NotMeasured` (logged), its reason ``missing`` (what that means) and the seeds without one."""
    out: list[Cell] = []
    for column, values in columns:
        vals = [float(v) for v in values]
        if vals and all(math.isfinite(v) for v in vals):
            out.append(Measured(table=table, row=row, column=column, values=vals))
            continue
        seeds = [str(i + 1) for i, v in enumerate(values) if not math.isfinite(float(v))]
        why = f"{missing or 'no finite value'} in the run(s) of seed index {', '.join(seeds)} (1-based)"
        log(f"pcn: {table} / {row} / {column}: {why}; the cell is not measured")
        out.append(NotMeasured(table=table, row=row, column=column, reason=why))
    return out


def worst(over: Sequence[Sequence[float]], sd: Sequence[Sequence[float]]) -> tuple[list[float], list[float]]:
    """Per seed the worst case of a set of experiments (Tables 3.1-3.4; ``over[c][s]``, ``sd[c][s]``: case ``c``'s
    over-admission and sd ratio in seed ``s``): the largest over-admission and the sd ratio of its case."""
    if not over:
        raise ValueError("worst: no cases")
    top = [max(range(len(over)), key=lambda c: over[c][s]) for s in range(len(over[0]))]
    return [over[c][s] for s, c in enumerate(top)], [sd[c][s] for s, c in enumerate(top)]


def table_3_5(
    log: Callable[[str], None], row: str, points: Sequence[Sequence[float]]
) -> tuple[list[Cell], dict[str, Estimate]]:
    """Table 3.5's four cells of ``row`` and their estimates: per seed the min, max, mean and sample sd (n − 1)
    over the grid's points (``points[p][s]``: point ``p``'s over-admission in seed ``s``)."""
    if len(points) < 2:
        raise ValueError(f"table_3_5: {len(points)} grid point(s); allowed: at least 2")
    seeds = [[p[s] for p in points] for s in range(len(points[0]))]
    means = [sum(xs) / len(xs) for xs in seeds]
    sds = [math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) for xs, m in zip(seeds, means, strict=True)]
    st = dict(zip(STATS, ([min(xs) for xs in seeds], [max(xs) for xs in seeds], means, sds), strict=True))
    cells_ = cells(log, "Table 3.5", row, ((f"Over Admission Perc Stats / {k}", v) for k, v in st.items()))
    return cells_, {k: Estimate.of(v) for k, v in st.items()}


def vq_label(vq: tuple[float, float, float]) -> str:
    """Table 3.4's row label of a virtual-queue setting: ``5, 15, 20``."""
    return ", ".join(f"{x:g}" for x in vq)
