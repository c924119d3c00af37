"""The ``mace`` reproduction: MACE, measurement-based admission control for controlled-load
service [MACE98 §3-5], on the simulated Fig. 4 testbed (``scenarios/mace/*.toml``); its set-up,
runs, claims, tolerances, interpretations and modules: docs/reproductions/mace.md."""

from __future__ import annotations

from ...recording import record_arrivals as record_arrivals
from ..framework import Context, Outcome
from . import claims, plots, report, runs, tables
from .measures import class_counters as class_counters

NAME = "mace"
TITLE = "MACE: measurement-based admission control for controlled-load service"
SEED_FILE = "MACE98"
PAPER = "the MACE paper ([MACE98 §3-5]: Fig. 4 testbed, Table 1 sources, Figs. 6, 9-16, Table 2)"


def reproduce(ctx: Context) -> Outcome:
    """Runs every scenario, then judges the claims and draws the figures (the framework's entry point)."""
    s1 = runs.scenario1(ctx)
    f9 = runs.fig9(ctx)
    mixed = runs.mixed_loss(ctx)
    s2 = runs.scenario2(ctx)
    t2 = runs.table2(ctx)
    f1213 = runs.fig12_13(ctx)
    dep = runs.departures(ctx, t2)
    sweep = runs.sweep(ctx, t2)
    r = runs.Runs(s1, s2, t2, sweep, f9, dep, mixed, f1213)
    return Outcome(
        claims=claims.claims(ctx, s1, t2, dep, mixed),
        data=report.data(ctx, r),
        sections=report.sections(ctx, r),
        figures=plots.plots(ctx, r),
        cells=tables.cells(ctx, s1, f9, mixed, t2, f1213),
    )
