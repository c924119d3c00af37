"""``pcn`` termination experiments (seed 004 §4.1-4.3): over-termination.

Not built yet (issue 13): the failure event, the over-termination metrics
and Tables 4.1-4.3; their claims are listed as not checked.
"""

from __future__ import annotations

from ..framework import Claim, Context, Outcome


def run(ctx: Context) -> Outcome:
    """Tables 4.1-4.3 (not built yet: claims listed as not checked)."""
    del ctx
    claims = [
        Claim(
            id=cid,
            text=text,
            paper="see docs/reproductions/pcn.md",
            measured="not run",
            tolerance="the issue's",
            holds=None,
            explanation="not built yet: needs the failure event and the termination metrics "
            "(issue 13 remains open; docs/reproductions/pcn.md lists what is missing)",
        )
        for cid, text in (
            ("table4.3-rtt", "Table 4.3: ingress 1 over-terminates 5-15 %, ingress 2 within ±2 %"),
            ("table4.2-randomization", "Table 4.2: 600 ingresses, CBR <= 2 % without randomization, >= 9 % with it"),
        )
    ]
    return Outcome(claims=claims, data={})
