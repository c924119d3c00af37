"""The ``mace`` reproduction: MACE, measurement-based admission control for controlled-load
service [MACE98 §3-5], on the simulated Fig. 4 testbed (``scenarios/mace/*.toml``).

The set-up, the runs (scenarios 1-4, Figs. 7-9, 12-13, the departures experiment, the v sweep),
the quick run, the claims and checks with their tolerances (fixed before any run, never tuned to
pass) and the interpretations are in docs/reproductions/mace.md; the paper's numbers are judged
cell by cell (``paperdata/mace/``, :mod:`.tables`). Modules: :mod:`.params` (testbed, sources,
run lengths), :mod:`.measures` (one run's result), :mod:`.runs` (the scenarios), :mod:`.tables`
(the cells), :mod:`.claims`, :mod:`.plots`, :mod:`.report`; :mod:`.controls` (Table 2's
controlled runs).
"""

from __future__ import annotations

from ...recording import record_arrivals as record_arrivals
from ..framework import Context, Outcome
from . import claims, plots, report, runs, tables
from .measures import admitted_path as admitted_path
from .measures import admitted_stats as admitted_stats
from .measures import alive_path as alive_path
from .measures import alive_stats as alive_stats
from .measures import binned_loss as binned_loss
from .measures import class_counters as class_counters
from .measures import class_loss as class_loss
from .measures import generation_matches as generation_matches
from .measures import mbac_path as mbac_path
from .measures import share_at_most as share_at_most
from .measures import share_within as share_within
from .params import ALLOCATION as ALLOCATION
from .params import BG_SOURCE_BPS as BG_SOURCE_BPS
from .params import ESTIMATOR_WINDOW_S as ESTIMATOR_WINDOW_S
from .params import S3_MODELS_QUICK as S3_MODELS_QUICK
from .params import bg_sources as bg_sources
from .runs import batch_prediction as batch_prediction

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
    found = claims.claims(ctx, s1, t2, dep, mixed)
    r = runs.Runs(s1, s2, t2, sweep, f9, dep, mixed, f1213)
    figs = plots.plots(ctx, r)
    return Outcome(
        claims=found,
        data=report.data(ctx, r),
        sections=report.sections(ctx, r),
        figures=figs,
        cells=tables.cells(ctx, s1, f9, mixed, t2, f1213),
    )
