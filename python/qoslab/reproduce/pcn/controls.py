"""Controlled runs behind [Zhang07]'s differing cells: one knob changed, the cells before and after on the
same seeds (1..N), judged by the one rule; nothing saved, nothing tuned. ``t37-...`` rerun Table 3.7's runs
(PLT5, CBR, 5x), ``low-agg-...`` Tables 4.1-4.2 at low aggregation (``--list``, ``--help``). Their figures:
docs/reproductions/pcn.md ("Controlled runs"); ``paperdata/pcn/causes.toml`` names those behind a cause."""

from __future__ import annotations

import sys
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ...errors import ReproductionError
from ...result import Result
from ...scenario import Scenario
from ..cells import Cell, Measured, compare
from ..framework import Context, control_context, control_main, control_md, control_parser
from . import _adm_setup as S
from . import cellmap as C
from . import plt
from . import termination as term

#: Table 3.7's runs: PLT5, CBR (the paper's table is CBR).
T37_BOTTLENECKS = 5
#: Tables 4.1-4.2's low-aggregation points (model, ingresses) and the f values run.
LOW_AGG = (("VBR", 1800), ("MIX", 1000), ("SVD", 140))
LOW_AGG_F = (0.0, 0.1)


@dataclass(frozen=True)
class Control:
    """One knob: what changes, why that value, how the "after" runs differ: Table 3.7's (``link``, ``link_delay``,
    ``single_link``, ``bottlenecks``, ``warmup_s``) or the termination runs' (``pcn``, ``end_after_s``)."""

    name: str
    knob: str
    why: str
    link: str | None = None
    link_delay: str | None = None
    single_link: bool = False
    bottlenecks: int = 5
    warmup_s: float | None = None
    pcn: dict[str, Any] = field(default_factory=dict)
    end_after_s: float | None = None

    @property
    def family(self) -> str:
        """``t37`` (Table 3.7) or ``low-agg`` (Tables 4.1-4.2), by the name's prefix."""
        return "t37" if self.name.startswith("t37-") else "low-agg"


#: The runs as set up: no knob changed.
AS_SET_UP = Control(name="", knob="", why="")
CONTROLS: dict[str, Control] = {
    c.name: c
    for c in (
        Control(
            name="t37-warmup-40s",
            knob="Table 3.7's measure from 40 s instead of 20 s (the same runs)",
            why="halfway through the 80 s runs: the beat-down goes on through the run, so a later start "
            "weighs its later state more",
            warmup_s=40.0,
        ),
        Control(
            name="t37-t3",
            knob="the parking lot's bottlenecks T3 (45 Mb/s) instead of OC3 (155 Mb/s)",
            why="the set-up until issue 31 (T3 for time); §3.3 runs voice on OC3 in every topology, so this "
            "isolates the link rate's (the aggregation's) share in Table 3.7's sign",
            link="T3",
        ),
        Control(
            name="t37-delay-10ms",
            knob="every parking-lot link 10 ms of propagation instead of 1 ms",
            why="the single link's bottleneck delay (its over-admission is positive); the paper gives 1 ms for the "
            "parking lots, so this is a control of the control loop's delay, not a reading",
            link_delay="10ms",
        ),
        Control(
            name="t37-single-link",
            knob="the topology: the single link of Fig. 2.1 (OC3, one aggregate) instead of PLT5, each bottleneck's "
            "column showing the one link's figure",
            why="asks whether the negative sign belongs to the parking lot; the same CBR calls at 5x, the same "
            "weight x CLE settings, 80 s runs measured from 20 s (the single link's bottleneck has 10 ms; "
            "t37-delay-10ms shows the delay alone does not move the parking lot)",
            single_link=True,
        ),
        Control(
            name="t37-plt1",
            knob="a parking lot of one bottleneck (PLT1: the long and one short aggregate on one OC3 link) instead "
            "of PLT5, each bottleneck's column showing the one link's figure",
            why="between t37-single-link and PLT5: two aggregates (two CLEs, two ingresses) on the link but no "
            "second bottleneck, so no beat-down",
            bottlenecks=1,
        ),
        Control(
            name="low-agg-nearest",
            knob='the ingress\'s rounding to whole flows "up" -> "nearest"',
            why="a flow is taken while at least half of it is uncovered: between up and down",
            pcn={"rounding": "nearest"},
        ),
        Control(
            name="low-agg-down",
            knob='the ingress\'s rounding to whole flows "up" -> "down"',
            why="§4.3.1 names rounding up and rounding down; the reproduction rounds up",
            pcn={"rounding": "down"},
        ),
        Control(
            name="low-agg-largest",
            knob='which flows the ingress terminates: "random" -> "largest" (the largest senders of its interval)',
            why="the paper does not say which flows go; an ON/OFF flow that sent all interval covers the excess "
            "with fewer flows than one that sent part of it",
            pcn={"flow_choice": "largest"},
        ),
        Control(
            name="low-agg-first-round",
            knob="the runs end at t1 + 0.25 s instead of t1 + 1 s",
            why="every aggregate's first round is at about t1 + 0.21 s and no later round before t1 + 0.3 s: "
            "a diagnostic that splits the first round's share from the later rounds'",
            end_after_s=0.25,
        ),
    )
}


def _plt5_scenario(weight: float, cle: float, c: Control) -> Scenario:
    """Table 3.7's run at (weight, CLE threshold): CBR at 5x on PLT5, or as the control ``c`` changes it."""
    if c.single_link:
        kw: dict[str, Any] = {"link": plt.ADM_LINK["CBR"], "overload": plt.OVERLOAD, "cle": S.per_interval(weight, cle)}
        return S.build(name="pcn_t37_single_link", model="CBR", duration_s=plt.ADM_DURATION_S, **kw)[0]
    return plt.admission_scenario(
        bottlenecks=c.bottlenecks,
        model="CBR",
        weight=weight,
        cle=cle,
        duration_s=plt.ADM_DURATION_S,
        link=c.link,
        link_delay=c.link_delay,
    )


def _t37(ctx: Context, control: Control | None, weights: Sequence[float], warmups: Sequence[float]) -> list[list[Cell]]:
    """Table 3.7's CBR cells, judged (per seed each bottleneck's mean over the settings), of the runs
    as set up (``control`` None) or with the control's knob, measured from each of ``warmups``."""
    ctl = control or AS_SET_UP
    settings = [(w, c) for w in weights for c in plt.CLES]
    k, rate = ctl.bottlenecks, plt.RATES[ctl.link or plt.ADM_LINK["CBR"]]
    prefix = f"{ctl.name}_" if ctl.name else ""
    points = [((w, c), f"{prefix}t37_w{w:g}_cle{c:g}", _plt5_scenario(w, c, ctl)) for (w, c) in settings]

    def reduce(_: tuple[float, float], res: Result) -> list[list[float]]:
        if ctl.single_link:
            return [[S.over_admission(res, "i0->e0", rate, w)["over_admission_pct"]] * T37_BOTTLENECKS for w in warmups]
        overs = [plt.over_admission(res, bottlenecks=k, rate_bps=rate, warmup_s=w) for w in warmups]
        return [o if k == T37_BOTTLENECKS else [o[0]] * T37_BOTTLENECKS for o in overs]

    runs = list(ctx.run_grid(points, reduce, save=False).values())

    def cell(j: int, b: int) -> Measured:
        per_seed = [sum(r[s][j][b] for r in runs) / len(runs) for s in range(len(ctx.seeds))]
        return Measured("Table 3.7", "CBR", f"Bottleneck LinkId / {b + 1}", per_seed)

    return [judged(ctx, [cell(j, b) for b in range(T37_BOTTLENECKS)]) for j in range(len(warmups))]


def low_agg_cells(ctx: Context, control: Control | None, fs: Sequence[float] = LOW_AGG_F) -> list[Measured]:
    """Table 4.2's cells of :data:`LOW_AGG` at each randomization ``fs`` and Table 4.1's rows of
    the same runs (f = 0, the same flows), as set up or with the control's knob."""
    c = control or AS_SET_UP
    points = [(m, k, term._flows_4_2(m, k), f) for m, k in LOW_AGG for f in fs]
    runs = term._grid(ctx, points, c.name or "before", end_after_s=c.end_after_s or 1.0, pcn=dict(c.pcn))
    out: list[Measured] = []
    for (m, k, f), block in runs.items():
        pts = [float(r["over_pts"]) for r in block]
        out.append(Measured("Table 4.2", f"{m} / {k}", f"Deviation Interval / {C.F_COLUMN[f]}", pts))
        if f == 0.0 and (m, k) in term.FLOWS_4_1:
            out.append(Measured("Table 4.1", f"{m} / {k}", "Actual term", [float(r["actual"]) for r in block]))
            out.append(Measured("Table 4.1", f"{m} / {k}", "Over-term Perc", pts))
    return out


def judged(ctx: Context, measured: Sequence[Measured]) -> list[Cell]:
    """The paper's verdicts of ``measured`` (only those cells, in the paper's order)."""
    assert ctx.paper is not None
    keys = {m.key for m in measured}
    return [c for c in compare(ctx.paper, list(measured)) if c.key in keys]


def run_controls(
    ctx: Context, controls: Sequence[Control], weights: Sequence[float], fs: Sequence[float] = LOW_AGG_F
) -> tuple[list[Cell], list[list[Cell]]]:
    """The cells before (once) and after each control (judged), on ``ctx``'s seeds; the controls
    are of one family."""
    families = {c.family for c in controls}
    if len(families) != 1:
        raise ReproductionError(
            f"controls: {', '.join(c.name for c in controls)} mix families {', '.join(sorted(families))}; "
            "allowed: controls of one family (t37-..., low-agg-...)"
        )
    if families == {"t37"}:
        # The controls that only measure the same runs otherwise share the set-up's runs.
        same = [c for c in controls if replace(c, name="", knob="", why="", warmup_s=None) == AS_SET_UP]
        before, *after_same = _t37(
            ctx, None, weights, [plt.ADM_WARMUP_S, *(c.warmup_s or plt.ADM_WARMUP_S for c in same)]
        )
        afters = dict(zip([c.name for c in same], after_same, strict=True))
        for c in controls:
            if c not in same:
                afters[c.name] = _t37(ctx, c, weights, [c.warmup_s or plt.ADM_WARMUP_S])[0]
        return before, [afters[c.name] for c in controls]
    before = judged(ctx, low_agg_cells(ctx, None, fs))
    return before, [judged(ctx, low_agg_cells(ctx, c, fs)) for c in controls]


def _floats(flag: str, text: str, allowed: Collection[float]) -> list[float]:
    """The comma-separated numbers given to ``flag``, each one of ``allowed``."""
    try:
        got = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ReproductionError(f"{flag}: {text!r}; allowed: comma-separated numbers") from None
    if not got or any(x not in allowed for x in got):
        raise ReproductionError(f"{flag}: {text!r}; allowed: some of {', '.join(f'{x:g}' for x in allowed)}")
    return got


def main(argv: Sequence[str] | None = None) -> int:
    description = "[Zhang07]'s cells with one knob changed: before and after on the same seeds."
    ap = control_parser("pcn", description, CONTROLS, 5, several=True)
    allowed_f = ", ".join(f"{f:g}" for f in C.F_COLUMN)
    ap.add_argument(
        "--weights",
        default=",".join(f"{w:g}" for w in plt.WEIGHTS),
        help="Table 3.7 controls: the EWMA weights run (default the paper's five; each with the three CLE thresholds)",
    )
    ap.add_argument(
        "--f",
        default=",".join(f"{f:g}" for f in LOW_AGG_F),
        help=f"low-agg controls: Table 4.2's randomization intervals run (default 0,0.1; any of {allowed_f})",
    )
    a = ap.parse_args(argv)

    def body(controls: list[Control], seeds: list[int]) -> None:
        weights = _floats("--weights", a.weights, plt.WEIGHTS)
        fs = _floats("--f", a.f, C.F_COLUMN)
        with control_context("pcn", seeds=seeds, jobs=a.jobs) as ctx:
            before, afters = run_controls(ctx, controls, weights, fs)
        note = ""
        if controls[0].family == "t37" and len(weights) < len(plt.WEIGHTS):
            note = f"; weights {', '.join(f'{w:g}' for w in weights)} only, each with CLE 0.05, 0.15, 0.25"
        for control, after in zip(controls, afters, strict=True):
            print(control_md(control, seeds, note, before, after, ("table", "row", "column")))

    return control_main(a, CONTROLS, lambda c: f"{c.name}: {c.knob}", body, several=True)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
