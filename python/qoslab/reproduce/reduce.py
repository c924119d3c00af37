"""Helpers of the per-paper reductions (``mace``, ``tcp-cac``): which tables a run measures, and a
:class:`~.cells.Measured` cell from per-seed values."""

from __future__ import annotations

import math
from collections.abc import Sequence

from .cells import Measured, NotMeasured
from .framework import Context
from .paper import PaperData, load_paper, paper_dir


def paper_of(ctx: Context, folder: str) -> PaperData:
    """The paper's numbers: the run's (``ctx.paper``), else ``paperdata/<folder>/``."""
    return ctx.paper if ctx.paper is not None else load_paper(paper_dir(folder))


def judged(ctx: Context, folder: str, table: str) -> bool:
    """Whether this run measures ``table``'s cells: every table in a full run, the ``quick`` ones in a quick run."""
    return not ctx.quick or paper_of(ctx, folder).table(table).quick


#: What a reduction returns for a cell: its values, or why it has none.
Cell = Measured | NotMeasured


def measured(ctx: Context, table: str, row: str, column: str, values: Sequence[float]) -> list[Cell]:
    """The cell from one value per seed, or :class:`~.cells.NotMeasured` when a seed's value is
    not finite (a run without what the cell counts, e.g. no blocked request)."""
    vals = [float(v) for v in values]
    if vals and all(math.isfinite(v) for v in vals):
        return [Measured(table, row, column, vals)]
    why = f"a seed's run cannot measure it (values per seed: {', '.join(f'{v:g}' for v in vals) or 'none'})"
    ctx.log(f"  {ctx.name}: {table} / {row} / {column}: {why}")
    return [NotMeasured(table, row, column, why)]
