"""A sixth paper's reproduction, to copy: the shape every qoslab reproduction follows.

Copy this folder to ``python/qoslab/reproduce/<name>.py`` (the module) and
``python/qoslab/reproduce/paperdata/<name>/`` (its paper data), register the module in
``REGISTRY`` (``python/qoslab/reproduce/__init__.py``), and replace every ``SKELETON`` part
with the paper's. ``qoslab reproduce <name>`` then runs it, writes ``cells.csv``, the score,
``report.md`` and ``results.json``, and resumes from ``OUT/.store`` when interrupted.

The shape, in the module's order:

1. **The paper data** (``paperdata/<name>/``): every number the paper prints, as it prints it
   (``cells.csv``), its tables (``tables.toml``), the controlled runs behind differing cells
   (``causes.toml``); see docs/reproductions/README.md.
2. **The set-ups**: a function from a grid point to a :class:`~qoslab.Scenario`, built with
   the Python builders (:meth:`qoslab.Scenario.build`, :mod:`qoslab.topology`,
   :mod:`qoslab.queues`, :mod:`qoslab.traffic`) or a built-in scenario with typed overrides
   (``sc.with_overrides(("topology.bottleneck.queue.max_p", 0.1))``). Never text edits of
   a TOML file, and never a parameter read back out of a variant's name: the grid point is
   data, kept beside the run.
3. **The run grid**: ``(key, variant, scenario)`` for every point, the key being the point
   itself; the framework runs each at every seed.
4. **The reduction to cells**: ``ctx.run_grid(points, reduce)`` runs the grid (a local
   pool, or Dask with ``--scheduler``), keeps only ``reduce(key, result)`` of each run (so
   thousands of runs fit in memory), grouped by key in seed order, and takes what
   ``OUT/.store`` already holds; then one
   :class:`Measured` per paper cell, one value per seed, the cell's statistic as the paper
   defines it, in the paper's unit.
5. **The report**: claims of the text, judged two-sided where the paper gives a number
   (:class:`Claim`; a check of the paper's own formula is ``kind="check"``), sections and
   figures. The verdicts, the score and the generated tables are the framework's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qoslab import Result, Scenario, load
from qoslab.reproduce import Claim, Context, Measured, NotMeasured, Outcome
from qoslab.reproduce.framework import scenarios_dir

NAME = "skeleton"  # SKELETON: the name of `qoslab reproduce NAME`
TITLE = "Skeleton: RED's drop share against max_p on the reference dumbbell"
SEED_FILE = "Claypool00"  # SKELETON: the paper's key in docs/papers.md
PAPER = "SKELETON: authors, year, title [Key]"
#: The paper data: this folder's ``paperdata/`` here; ``paperdata/<name>/`` beside the
#: framework once copied (then drop ``PAPER_DATA``: the framework finds it by ``NAME``).
PAPER_DATA = Path(__file__).resolve().parent / "paperdata"
QUICK_SEEDS = 2

#: SKELETON: the grid of the paper's table: one point per row (here RED's max_p).
POINTS = (0.02, 0.1)
QUICK_DURATION, FULL_DURATION = "10s", "60s"


def setup(ctx: Context, max_p: float) -> Scenario:
    """One grid point's scenario: a built-in file with typed overrides."""
    duration = QUICK_DURATION if ctx.quick else FULL_DURATION
    sc = load(scenarios_dir() / "examples" / "red_dumbbell.toml")
    return sc.with_overrides(("duration", duration), ("topology.bottleneck.queue.max_p", max_p))


def drop_share(res: Result) -> float:
    """The cell's statistic (SKELETON: the paper's definition): packets dropped at the
    bottleneck over packets sent, in percent."""
    f = res.flows
    return 100.0 * float(f["dropped_pkts"].sum()) / float(f["sent_pkts"].sum())


def reproduce(ctx: Context) -> Outcome:
    points = [(max_p, f"red_maxp{max_p:g}", setup(ctx, max_p)) for max_p in POINTS]
    by_point = ctx.run_grid(points, lambda _max_p, res: drop_share(res))
    cells: list[Measured | NotMeasured] = [
        Measured("Table 1", f"max_p {p:g}", "Drop share", vs) for p, vs in by_point.items()
    ]
    lo, hi = (sum(by_point[p]) / len(by_point[p]) for p in POINTS)
    claim = Claim(
        id="skeleton-drops-do-not-fall-with-max-p",
        text="A larger max_p drops no smaller a share (SKELETON: a qualitative claim of the text)",
        paper="SKELETON: the sentence of the paper, quoted, with its section",
        measured=f"drop share {lo:.2f} % at max_p {POINTS[0]:g}, {hi:.2f} % at {POINTS[1]:g}",
        tolerance="the larger max_p's mean share >= the smaller's - 0.5 points (fixed before the run)",
        holds=hi >= lo - 0.5,
        explanation="" if hi >= lo - 0.5 else "the drop share fell with max_p",
    )
    data: dict[str, Any] = {"drop_share_pct": {f"{p:g}": vs for p, vs in by_point.items()}}
    return Outcome(claims=[claim], data=data, cells=cells, sections=[("Setup", "SKELETON: the set-up table")])
