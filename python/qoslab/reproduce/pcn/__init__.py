"""The ``pcn`` reproduction: Pre-Congestion Notification admission and termination [Zhang07].

The experiment families are modules of their own, each returning an
:class:`~qoslab.reproduce.framework.Outcome` that :func:`reproduce` joins
in this order:

- :mod:`.admission`: §3, over-admission on the single link and the RTT
  topology (Tables 3.1-3.6, ramp against step, RTTs of 22-220 ms);
- :mod:`.termination`: §4.1-4.3, over-termination on the single link and
  the RTT topology (Tables 4.1-4.3, the Fig. 4.4 timeline);
- :mod:`.plt`: the parking lots, §3.7-3.8 and §4.4 (Tables 3.7-3.8,
  4.7-4.9) and §4.4.1's expected termination.

Each family returns the paper's cells it ran (``Outcome.cells``: every
printed number of Tables 3.1-3.8, 4.1-4.3 and 4.7-4.9, one value per seed;
the keys are ``paperdata/pcn/cells.csv``'s, :mod:`.cellmap`) and the
text's statements as claims, judged over at least 5 seeds;
a run with fewer seeds reports them without judging. ``--quick``
runs the tables ``paperdata/pcn/tables.toml`` marks quick: Tables 4.1,
4.3 (with Fig. 4.4 and §4.2) and 4.7.
"""

from __future__ import annotations

from ..framework import Context, Outcome
from . import admission, plt, termination

NAME = "pcn"
TITLE = "PCN: admission control and flow termination (over-admission, over-termination, beat-down)"
SEED_FILE = "Zhang07"
PAPER = "Pre-Congestion Notification performance evaluation (draft-zhang-pcn-performance-evaluation, [Zhang07])"
FULL_SEEDS = 5

#: The families, in report order.
PARTS = (admission, termination, plt)


def reproduce(ctx: Context) -> Outcome:
    """Runs every family and joins their claims, data, sections and figures."""
    out = Outcome(claims=[], data={})
    for part in PARTS:
        o = part.run(ctx)
        out.cells.extend(o.cells)
        out.claims.extend(o.claims)
        out.data.update(o.data)
        out.sections.extend(o.sections)
        out.figures.extend(o.figures)
    return out
