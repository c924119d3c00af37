"""The ``pcn`` reproduction: Pre-Congestion Notification admission and termination [Zhang07]. One module
a family, joined in this order: :mod:`.admission` (§3: Tables 3.1-3.6), :mod:`.termination` (§4.1-4.3:
Tables 4.1-4.3, Fig. 4.4) and :mod:`.plt` (the parking lots, §3.7-3.8, §4.4: Tables 3.7-3.8, 4.7-4.9).
Set-up and results: docs/reproductions/pcn.md."""

from __future__ import annotations

from ..framework import Context, Outcome
from . import admission, plt, termination

NAME = "pcn"
TITLE = "PCN: admission control and flow termination (over-admission, over-termination, beat-down)"
SEED_FILE = "Zhang07"
PAPER = "Pre-Congestion Notification performance evaluation (draft-zhang-pcn-performance-evaluation, [Zhang07])"
FULL_SEEDS = 5


def reproduce(ctx: Context) -> Outcome:
    """Runs every family and joins their claims, data, sections and figures."""
    return Outcome.join(part.run(ctx) for part in (admission, termination, plt))
