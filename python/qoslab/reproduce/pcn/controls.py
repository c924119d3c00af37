"""Controlled runs behind [Zhang07]'s differing cells: one knob changed, the
cells before and after on the same seeds, judged by the one rule.

    python -m qoslab.reproduce.pcn.controls NAME[,NAME...] [--seeds N] [--jobs N] [--weights W,...] [--f F,...]
    python -m qoslab.reproduce.pcn.controls --list

Each control (:data:`CONTROLS`) reruns the runs of the cells it concerns twice, as the
reproduction sets them up (before) and with its one knob changed (after), seeds 1..N, and prints
for each cell the paper's number, before and after (mean over seeds, 95 % interval, verdict).
Nothing is saved and nothing is tuned: each knob's value is fixed here with the reason for it.
docs/reproductions/pcn.md records every control's figures; ``paperdata/pcn/causes.toml`` names
the controls that back a cause.

- **Table 3.7** (PLT5, CBR, 5x; the mean over the weight x CLE settings of each bottleneck's
  over-admission, :mod:`.plt`): ``t37-warmup-40s`` measures the same runs from 40 s instead of
  20 s; ``t37-t3`` runs the parking lot on T3 (the set-up until issue 31) instead of OC3; ``t37-delay-10ms`` gives every
  parking-lot link 10 ms of propagation instead of the paper's 1 ms (the single link's bottleneck
  delay; a control, not a reading); ``t37-single-link`` and ``t37-plt1`` run the same calls per
  bottleneck on the single link of Fig. 2.1 and on a one-bottleneck parking lot (the one link's
  figure in every column). ``--weights`` restricts the settings (default all five
  weights x three CLE thresholds, the paper's 15), the same for before and after.
- **Tables 4.1-4.2 at low aggregation** (:mod:`.termination`; VBR 1,800, MIX 1,000 and SVD 140
  ingresses, f = 0 and 0.1 or ``--f``' values): ``low-agg-nearest`` and ``low-agg-down`` (the ingress's rounding to
  whole flows, up by default; §4.3.1 names up and down), ``low-agg-largest`` (which flows the
  ingress terminates: the largest senders of its interval first instead of a random order; the
  paper does not say), ``low-agg-first-round`` (the runs end at t1 + 0.25 s, after every
  aggregate's first round at t1 + 0.21 s: a diagnostic that splits first and later rounds).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ...errors import ReproductionError
from ...result import Result
from ...scenario import Scenario
from ..cells import Cell, Measured, compare, interval_text
from ..fidelity import md_table
from ..framework import Context, control_context
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
    """One knob: what changes, why that value, which family, and how the "after" runs differ:
    ``link``/``edge_delay`` (Table 3.7's runs), ``warmup_s`` (Table 3.7's measure), ``pcn``
    (``[pcn]`` keys of the termination runs) and ``end_after_s`` (their end after t1)."""

    name: str
    family: str
    knob: str
    why: str
    link: str | None = None
    link_delay: str | None = None
    single_link: bool = False
    bottlenecks: int = 5
    warmup_s: float | None = None
    pcn: dict[str, Any] = field(default_factory=dict)
    end_after_s: float | None = None


CONTROLS: dict[str, Control] = {
    c.name: c
    for c in (
        Control(
            name="t37-warmup-40s",
            family="t37",
            knob="Table 3.7's measure from 40 s instead of 20 s (the same runs)",
            why="halfway through the 80 s runs: the beat-down goes on through the run, so a later start "
            "weighs its later state more",
            warmup_s=40.0,
        ),
        Control(
            name="t37-t3",
            family="t37",
            knob="the parking lot's bottlenecks T3 (45 Mb/s) instead of OC3 (155 Mb/s)",
            why="the set-up until issue 31 (T3 for time); §3.3 runs voice on OC3 in every topology, so this "
            "isolates the link rate's (the aggregation's) share in Table 3.7's sign",
            link="T3",
        ),
        Control(
            name="t37-delay-10ms",
            family="t37",
            knob="every parking-lot link 10 ms of propagation instead of 1 ms",
            why="the single link's bottleneck delay (its over-admission is positive); the paper gives 1 ms for the "
            "parking lots, so this is a control of the control loop's delay, not a reading",
            link_delay="10ms",
        ),
        Control(
            name="t37-single-link",
            family="t37",
            knob="the topology: the single link of Fig. 2.1 (OC3, one aggregate) instead of PLT5, each bottleneck's "
            "column showing the one link's figure",
            why="asks whether the negative sign belongs to the parking lot; the same CBR calls at 5x, the same "
            "weight x CLE settings, 80 s runs measured from 20 s (the single link's bottleneck has 10 ms; "
            "t37-delay-10ms shows the delay alone does not move the parking lot)",
            single_link=True,
        ),
        Control(
            name="t37-plt1",
            family="t37",
            knob="a parking lot of one bottleneck (PLT1: the long and one short aggregate on one OC3 link) instead "
            "of PLT5, each bottleneck's column showing the one link's figure",
            why="between t37-single-link and PLT5: two aggregates (two CLEs, two ingresses) on the link but no "
            "second bottleneck, so no beat-down",
            bottlenecks=1,
        ),
        Control(
            name="low-agg-nearest",
            family="low-agg",
            knob='the ingress\'s rounding to whole flows "up" -> "nearest"',
            why="a flow is taken while at least half of it is uncovered: between up and down",
            pcn={"rounding": "nearest"},
        ),
        Control(
            name="low-agg-down",
            family="low-agg",
            knob='the ingress\'s rounding to whole flows "up" -> "down"',
            why="§4.3.1 names rounding up and rounding down; the reproduction rounds up",
            pcn={"rounding": "down"},
        ),
        Control(
            name="low-agg-largest",
            family="low-agg",
            knob='which flows the ingress terminates: "random" -> "largest" (the largest senders of its interval)',
            why="the paper does not say which flows go; an ON/OFF flow that sent all interval covers the excess "
            "with fewer flows than one that sent part of it",
            pcn={"flow_choice": "largest"},
        ),
        Control(
            name="low-agg-first-round",
            family="low-agg",
            knob="the runs end at t1 + 0.25 s instead of t1 + 1 s",
            why="every aggregate's first round is at about t1 + 0.21 s and no later round before t1 + 0.3 s: "
            "a diagnostic that splits the first round's share from the later rounds'",
            end_after_s=0.25,
        ),
    )
}


# -- Table 3.7 -------------------------------------------------------------------


def _plt5_scenario(weight: float, cle: float, control: Control | None) -> Scenario:
    if control is not None and control.single_link:
        sc, _ = S.build(
            name="pcn_t37_single_link",
            model="CBR",
            link=plt.ADM_LINK["CBR"],
            overload=plt.OVERLOAD,
            duration_s=plt.ADM_DURATION_S,
            cle=S.per_interval(weight, cle),
        )
        return sc
    sc = plt.admission_scenario(
        bottlenecks=control.bottlenecks if control is not None else T37_BOTTLENECKS,
        model="CBR",
        weight=weight,
        cle=cle,
        duration_s=plt.ADM_DURATION_S,
        link=control.link if control is not None else None,
        link_delay=control.link_delay if control is not None else None,
    )
    return sc


def t37_cells(ctx: Context, control: Control | None, weights: Sequence[float]) -> list[Measured]:
    """Table 3.7's CBR cells (per seed each bottleneck's mean over the settings) of the runs as
    set up (``control`` None) or with the control's knob."""
    settings = [(w, c) for w in weights for c in plt.CLES]
    link = (control.link if control is not None else None) or plt.ADM_LINK["CBR"]
    warmup = (control.warmup_s if control is not None else None) or plt.ADM_WARMUP_S
    tag = control.name if control is not None else "before"
    points = [((w, c), f"{tag}_t37_w{w:g}_cle{c:g}", _plt5_scenario(w, c, control)) for (w, c) in settings]

    def reduce(_: tuple[float, float], res: Result) -> list[float]:
        if control is not None and control.single_link:
            one = S.over_admission(res, "i0->e0", plt.RATES[link], warmup)["over_admission_pct"]
            return [one] * T37_BOTTLENECKS
        k = control.bottlenecks if control is not None else T37_BOTTLENECKS
        over = plt.over_admission(res, bottlenecks=k, rate_bps=plt.RATES[link], warmup_s=warmup)
        return over if k == T37_BOTTLENECKS else [over[0]] * T37_BOTTLENECKS

    runs = list(ctx.run_grid(points, reduce, save=False).values())
    per_bn = [
        [sum(runs[i][s][b] for i in range(len(settings))) / len(settings) for s in range(len(ctx.seeds))]
        for b in range(T37_BOTTLENECKS)
    ]
    return [Measured("Table 3.7", "CBR", f"Bottleneck LinkId / {b + 1}", v) for b, v in enumerate(per_bn)]


# -- Tables 4.1-4.2 at low aggregation -------------------------------------------------


def low_agg_cells(ctx: Context, control: Control | None, fs: Sequence[float] = LOW_AGG_F) -> list[Measured]:
    """Table 4.2's cells of :data:`LOW_AGG` at each randomization ``fs`` and Table 4.1's rows of
    the same runs (f = 0, the same flows), as set up or with the control's knob."""
    pcn = control.pcn if control is not None else {}
    end = (control.end_after_s if control is not None else None) or 1.0
    tag = control.name if control is not None else "before"
    points = [
        (
            (m, k, f),
            f"{tag}_{m.lower()}_{k}_f{f:g}",
            term.scenario(
                ctx, model=m, ingresses=k, flows=term._flows_4_2(m, k), randomize=f, end_after_s=end, pcn=dict(pcn)
            ),
        )
        for m, k in LOW_AGG
        for f in fs
    ]
    out: list[Measured] = []
    for (m, k, f), block in ctx.run_grid(points, lambda key, res: term._reduce(res, key[0]), save=False).items():
        pts = [float(r["over_pts"]) for r in block]
        out.append(Measured("Table 4.2", f"{m} / {k}", f"Deviation Interval / {C.F_COLUMN[f]}", pts))
        if f == 0.0 and (m, k) in term.FLOWS_4_1:
            out.append(Measured("Table 4.1", f"{m} / {k}", "Actual term", [float(r["actual"]) for r in block]))
            out.append(Measured("Table 4.1", f"{m} / {k}", "Over-term Perc", pts))
    return out


# -- the report -------------------------------------------------------------------


def judged(ctx: Context, measured: Sequence[Measured]) -> list[Cell]:
    """The paper's verdicts of ``measured`` (only those cells, in the paper's order)."""
    assert ctx.paper is not None
    keys = {m.key for m in measured}
    return [c for c in compare(ctx.paper, list(measured)) if c.key in keys]


def markdown(control: Control, seeds: Sequence[int], before: Sequence[Cell], after: Sequence[Cell], note: str) -> str:
    """The before/after table of one control."""
    b = {c.key: c for c in before}
    rows = (
        f"| {c.table} | {c.row} | {c.column} | {c.paper} | {interval_text(b.get(c.key))} | {interval_text(c)} |"
        for c in after
    )
    intro = f"Control `{control.name}`: {control.knob} (seeds {', '.join(map(str, seeds))}{note}).\n"
    return (
        md_table("| table | row | column | paper | before | after |", rows, intro + f"Why this value: {control.why}.")
        + "\n"
    )


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
        same_runs = [
            c
            for c in controls
            if c.link is None and c.link_delay is None and not c.single_link and c.bottlenecks == T37_BOTTLENECKS
        ]
        other = [c for c in controls if c not in same_runs]
        before, after_same = _t37_measures(ctx, [c.warmup_s or plt.ADM_WARMUP_S for c in same_runs], weights)
        afters = dict(zip([c.name for c in same_runs], after_same, strict=True))
        for c in other:
            afters[c.name] = judged(ctx, t37_cells(ctx, c, weights))
        return before, [afters[c.name] for c in controls]
    before = judged(ctx, low_agg_cells(ctx, None, fs))
    return before, [judged(ctx, low_agg_cells(ctx, c, fs)) for c in controls]


def _t37_measures(
    ctx: Context, warmups: Sequence[float], weights: Sequence[float]
) -> tuple[list[Cell], list[list[Cell]]]:
    """Table 3.7's runs as set up, measured from the set-up's warm-up and from each of ``warmups``."""
    settings = [(w, c) for w in weights for c in plt.CLES]
    points = [((w, c), f"t37_w{w:g}_cle{c:g}", _plt5_scenario(w, c, None)) for (w, c) in settings]
    rate = plt.RATES[plt.ADM_LINK["CBR"]]
    starts = [plt.ADM_WARMUP_S, *warmups]

    def reduce(_: tuple[float, float], res: Result) -> list[list[float]]:
        return [plt.over_admission(res, bottlenecks=T37_BOTTLENECKS, rate_bps=rate, warmup_s=w) for w in starts]

    runs = list(ctx.run_grid(points, reduce, save=False).values())
    n = len(ctx.seeds)
    out = []
    for which in range(len(starts)):
        per_bn = [
            [sum(runs[i][s][which][b] for i in range(len(settings))) / len(settings) for s in range(n)]
            for b in range(T37_BOTTLENECKS)
        ]
        out.append(
            judged(ctx, [Measured("Table 3.7", "CBR", f"Bottleneck LinkId / {b + 1}", v) for b, v in enumerate(per_bn)])
        )
    return out[0], out[1:]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m qoslab.reproduce.pcn.controls",
        description="[Zhang07]'s cells with one knob changed: before and after on the same seeds.",
    )
    ap.add_argument(
        "name", nargs="?", help=f"the control, or several of one family comma-separated: {', '.join(CONTROLS)}"
    )
    ap.add_argument("--list", action="store_true", help="list the controls and exit")
    ap.add_argument("--seeds", type=int, default=5, metavar="N", help="seeds 1..N (default 5, as the full run)")
    ap.add_argument("--jobs", type=int, default=None, metavar="N", help="local worker processes (default: every core)")
    ap.add_argument(
        "--weights",
        default=",".join(f"{w:g}" for w in plt.WEIGHTS),
        help="Table 3.7 controls: the EWMA weights run (default the paper's five; each with the three CLE thresholds)",
    )
    ap.add_argument(
        "--f",
        default=",".join(f"{f:g}" for f in LOW_AGG_F),
        help="low-agg controls: Table 4.2's randomization intervals run (default 0,0.1; any of "
        + ", ".join(f"{f:g}" for f in C.F_COLUMN)
        + ")",
    )
    a = ap.parse_args(argv)
    if a.list:
        for c in CONTROLS.values():
            print(f"{c.name}: {c.knob}")
        return 0
    try:
        names = [n.strip() for n in (a.name or "").split(",") if n.strip()]
        unknown = [n for n in names if n not in CONTROLS]
        if unknown or not names:
            raise ReproductionError(f"control: {a.name!r}; allowed: {', '.join(CONTROLS)}")
        if a.seeds < 1:
            raise ReproductionError(f"--seeds: {a.seeds}; allowed: an integer >= 1")
        try:
            weights = [float(w) for w in a.weights.split(",") if w.strip()]
        except ValueError:
            raise ReproductionError(f"--weights: {a.weights!r}; allowed: comma-separated numbers") from None
        bad = [w for w in weights if w not in plt.WEIGHTS]
        if bad or not weights:
            raise ReproductionError(
                f"--weights: {a.weights!r}; allowed: some of {', '.join(f'{w:g}' for w in plt.WEIGHTS)}"
            )
        try:
            fs = [float(f) for f in a.f.split(",") if f.strip()]
        except ValueError:
            raise ReproductionError(f"--f: {a.f!r}; allowed: comma-separated numbers") from None
        if not fs or any(f not in C.F_COLUMN for f in fs):
            raise ReproductionError(f"--f: {a.f!r}; allowed: some of {', '.join(f'{f:g}' for f in C.F_COLUMN)}")
        controls = [CONTROLS[n] for n in names]
        seeds = list(range(1, a.seeds + 1))
        with control_context("pcn", seeds=seeds, jobs=a.jobs) as ctx:
            before, afters = run_controls(ctx, controls, weights, fs)
        note = ""
        if controls[0].family == "t37" and len(weights) < len(plt.WEIGHTS):
            note = f"; weights {', '.join(f'{w:g}' for w in weights)} only, each with CLE 0.05, 0.15, 0.25"
        for control, after in zip(controls, afters, strict=True):
            print(markdown(control, seeds, before, after, note))
    except ReproductionError as e:
        print(f"qoslab: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
