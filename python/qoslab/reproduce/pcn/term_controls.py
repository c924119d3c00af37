"""Controls of Table 4.3's and 4.2's CBR / 600 cells [Zhang07 §4.2-4.3] and of Table 4.2's MIX, VTR and §4.5 at low
aggregation, one knob at a time (full run): docs/reproductions/pcn.md, "Termination: why claim 5 fails"."""

from __future__ import annotations

from typing import Any

from ...scenario import Scenario
from ...stats import Estimate
from ..cells import Measured, compare, fmt_number
from ..fidelity import md_table
from ..framework import Context, Outcome
from . import cellmap as C
from . import termination as term

D43 = term.T43_DELAYS_US
#: (label, [pcn] keys, run length after t1 in s (Table 4.3, 600 ingresses), Table 4.3's access delays in µs).
KNOBS: list[tuple[str, dict[str, Any], tuple[float, float], list[int]]] = [
    ("default (rounding up, interval from the first mark)", {}, (1.0, 1.0), D43),
    ("first round only (runs end at t1 + 0.30 / 0.25 s)", {}, (0.3, 0.25), D43),
    ('rounding = "nearest"', {"rounding": "nearest"}, (1.0, 1.0), D43),
    ('rounding = "nearest", first round only', {"rounding": "nearest"}, (0.3, 0.25), D43),
    ('rounding = "down"', {"rounding": "down"}, (1.0, 1.0), D43),
    ('termination_start = "grid"', {"termination_start": "grid"}, (1.0, 1.0), D43),
    ("ingress 2 25 ms one way further (RTT + 50 ms; the reading before)", {}, (1.0, 1.0), [250, 25_250]),
]
FS = (0.0, 0.005, 0.01, 0.1)
#: The paper's cells behind the controls' columns, in the table's order.
CELL_KEYS = [
    ("Table 4.3", "1", "Over-term Perc"),
    ("Table 4.3", "2", "Over-term Perc"),
    *(("Table 4.2", "CBR / 600", f"Deviation Interval / {C.F_COLUMN[f]}") for f in FS),
]


def verdicts(ctx: Context, values: list[list[float]]) -> tuple[list[str], list[str]]:
    """Each column's cell (:data:`CELL_KEYS`) judged two-sided by the one rule on ``values`` (per
    column, one value per seed): the verdicts, and the paper's numbers with their tolerances."""
    if ctx.paper is None:
        return [""] * len(values), [""] * len(values)
    measured = [Measured(t, r, c, v) for (t, r, c), v in zip(CELL_KEYS, values, strict=True)]
    got = {c.key: c for c in compare(ctx.paper, measured)}
    cells = [got[k] for k in CELL_KEYS]
    return [c.verdict for c in cells], [f"{c.paper} ± {fmt_number(c.tolerance)}" for c in cells]


#: Controls of Table 4.2's MIX and VTR rows and of §4.5: (label, model, ingresses, flows, f, [pcn] keys).
#: MIX with 2,400 calls keeps its residents below T; CBR at 236 ingresses has as many aggregates as
#: §4.5's BATCH arrivals with 600.
LOW_AGG: list[tuple[str, str, int, int, float, dict[str, Any]]] = [
    ("MIX 1000 default", "MIX", 1000, 2502, 0.0, {}),
    ("MIX 1000 rounding down", "MIX", 1000, 2502, 0.0, {"rounding": "down"}),
    ("MIX 1000 rounding nearest", "MIX", 1000, 2502, 0.0, {"rounding": "nearest"}),
    ("MIX 1000 2400 calls (residents below T)", "MIX", 1000, 2400, 0.0, {}),
    ("MIX 600 default", "MIX", 600, 2502, 0.0, {}),
    ("MIX 600 rounding down", "MIX", 600, 2502, 0.0, {"rounding": "down"}),
    ("CBR 236 Poisson f=0", "CBR", 236, 1782, 0.0, {}),
    ("CBR 236 Poisson f=0.01", "CBR", 236, 1782, 0.01, {}),
    ("VTR 300 default", "VTR", 300, 975, 0.0, {}),
    ("VTR 300 rounding down", "VTR", 300, 975, 0.0, {"rounding": "down"}),
    ("VTR 300 rounding nearest", "VTR", 300, 975, 0.0, {"rounding": "nearest"}),
]


def controls(ctx: Context) -> Outcome:
    """Runs every knob × (Table 4.3, 600 ingresses at each f in :data:`FS`) and every :data:`LOW_AGG` row,
    × seeds, in one grid: the two controls' data and sections."""
    points: list[tuple[tuple[Any, float | None, str], str, Scenario]] = []
    for k, (_, pcn, end, delays) in enumerate(KNOBS):
        flows = list(term.FLOWS_4_3)
        sc = term.scenario(ctx, model="CBR", ingresses=2, flows=flows, delays_us=delays, end_after_s=end[0], pcn=pcn)
        points.append(((k, None, "CBR"), f"ctl{k}_t4_3", sc))
        for f in FS:
            n = term.CBR_FLOWS_4_2
            sc = term.scenario(ctx, model="CBR", ingresses=600, flows=n, randomize=f, end_after_s=end[1], pcn=pcn)
            points.append(((k, f, "CBR"), f"ctl{k}_600_{f:g}", sc))
    for label, m, k, n, f, pcn in LOW_AGG:
        sc = term.scenario(ctx, model=m, ingresses=k, flows=n, randomize=f, pcn=pcn)
        points.append(((label, None, m), f"ctl_{label.replace(' ', '_')}", sc))
    runs = ctx.run_grid(points, lambda key, res: term._reduce(res, key[2]), save=False)
    seeds = f"seeds {', '.join(map(str, ctx.seeds))}, mean ± 95 % CI"
    data: dict[str, Any] = {}
    rows: list[str] = []
    paper: list[str] = []
    for k, (label, *_) in enumerate(KNOBS):
        ingress = (Estimate.of(r["ingress"][f"src{i}"]["over_pts"] for r in runs[(k, None, "CBR")]) for i in (0, 1))
        cells = dict(zip(("ingress1", "ingress2"), ingress, strict=True))
        cells |= {f"600/{f:g}": Estimate.of(r["over_pts"] for r in runs[(k, f, "CBR")]) for f in FS}
        data[label] = {key: v.to_json() for key, v in cells.items()}
        verdict, paper = verdicts(ctx, [list(v.values) for v in cells.values()])
        values = (f"{v.fmt('.2f')} {w}".rstrip() for v, w in zip(cells.values(), verdict, strict=True))
        rows.append(f"| {label} | " + " | ".join(values) + " |")
    knobs = md_table(
        "| run | Table 4.3 ingress 1 | Table 4.3 ingress 2 | 600 ingresses f = 0 | f = 0.005 | f = 0.01 | f = 0.1 |",
        [*(["| paper ± tolerance | " + " | ".join(paper) + " |"] if ctx.paper is not None else []), *rows],
        f"Over-termination in points, (actual − optimal) × 100, {seeds}; one knob changed at a time "
        "(docs/reproductions/pcn.md). Each column is a paper cell (Table 4.3's over-termination of ingresses 1 "
        "and 2, Table 4.2's CBR / 600 at f), judged two-sided by the one rule: the paper's number ± the cell's "
        "tolerance against the 95 % interval.",
    )
    low: dict[str, Any] = {}
    rows = []
    for label, m, *_ in LOW_AGG:
        block = runs[(label, None, m)]
        e = Estimate.of(r["over_pts"] for r in block)
        opt = sum(r["optimal"] for r in block) / len(block)
        pre = sum(r["terminated_before_t1"] for r in block) / len(block)
        low[label] = {"points": e.to_json(), "optimal": opt, "terminated_before_t1": pre}
        rows.append(f"| {label} | {e.fmt('.2f')} | {opt:.4f} | {pre:.1f} |")
    lows = md_table(
        "| run | over-term (points) | optimal | cut before t1 |",
        rows,
        f"Over-termination in points, {seeds}; one knob at a time (docs/reproductions/pcn.md, Table 4.2's MIX and "
        "VTR rows and §4.5); optimal and flows cut before t1 as means.",
    )
    sections = [
        ("Controls: claims 4 and 5, one knob at a time", knobs),
        ("Controls: MIX, VTR and BATCH at low aggregation", lows),
    ]
    return Outcome(claims=[], data={"controls": data, "controls_low_aggregation": low}, sections=sections)
