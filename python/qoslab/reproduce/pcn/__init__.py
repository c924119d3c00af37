"""The ``pcn`` reproduction: PCN admission and termination [Zhang07], one module a family, joined in this order:
:mod:`.admission` (§3), :mod:`.termination` (§4.1-4.3, §4.5), :mod:`.plt` (parking lots, §3.6-3.8, §4.4).
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
