"""Controlled runs behind Table 2's cells: Table 2's runs (full settings, seeds 1..N) with one knob
changed, the cells before and after, judged by the one rule (command line, readings and results:
docs/reproductions/mace.md, "Table 2: the set-up checked and the controlled runs")."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import ReproductionError
from ...scenario import Override
from ..cells import Cell, Measured, cells_csv, compare, read_cells
from ..framework import Context, control_context, control_main, control_md, control_parser
from .params import ADMISSIONS, MACE_KEY, S3_MODELS_FULL, mbac_admission
from .runs import lifetime_overrides, table2
from .tables import TABLE2_COLUMNS


def _groups(model: str) -> list[str]:
    """The CL traffic groups of ``model``'s Table 2 scenario."""
    return ["cbr", "poo2", "poo3", "exp1", "exp2"] if model == "mixed" else ["cl"]


def _on_off(model: str) -> list[str]:
    """The ON/OFF ones among them."""
    return [] if model == "cbr" else [g for g in _groups(model) if g != "cbr"]


@dataclass(frozen=True)
class Control:
    """One knob of Table 2's set-up: what changes, why that value, the admission schemes it
    concerns with their tables (``admissions``) and the overrides per model (``extra``)."""

    name: str
    knob: str
    why: str
    admissions: dict[str, dict[str, Any]]
    extra: Callable[[str], list[Override]] = field(default=lambda model: [])


CONTROLS: dict[str, Control] = {
    c.name: c
    for c in (
        Control(
            name="stale-300s",
            knob="stale timeout (classifier and candidates) 30 s -> 300 s",
            why="the paper gives no timeout; 300 s is ten times qoslab's, longer than all but about "
            "one in two thousand of POO3's OFF periods (Pareto, shape 1.1, mean 2.9 s)",
            admissions=ADMISSIONS,
            extra=lambda model: [(f"{MACE_KEY}.stale_timeout", "300s")],
        ),
        Control(
            name="no-departures",
            knob="CL candidates' lifetimes exp(1000 s) -> none (every flow outlives the run)",
            why="isolates batch admission: with departures MBAC's estimate only rises between "
            "window ends, so each window re-admits its departed flows in one batch",
            admissions={"mbac": ADMISSIONS["mbac"]},
            extra=lambda model: [o for g in _groups(model) for o in lifetime_overrides(None, g)],
        ),
        Control(
            name="v-1",
            knob="MBAC's target utilization v 0.95 -> 1",
            why="the paper gives no v; 1 is the largest a utilization of the allocation allows",
            admissions={"mbac": mbac_admission(v=1.0)},
        ),
        Control(
            name="window-continue",
            knob="MBAC's estimator window on admission: restart -> continue",
            why="the paper lists three updates of the estimate and no restart; qoslab restarts as Jamin et al. do",
            admissions={"mbac": mbac_admission(restart_window=False)},
        ),
        Control(
            name="nominal-packetization",
            knob="ON periods packetized ceil(L / interval) -> nominal (one packet per interval of ON time)",
            why="the paper does not say how its senders turned ON periods into packets; nominal "
            "sends exactly the peak rate x the ON share",
            admissions=ADMISSIONS,
            extra=lambda model: [(f"traffic[{g}].packetization", "nominal") for g in _on_off(model)],
        ),
    )
}


#: Table 2's set-up as it is (``--baseline run``).
BASELINE = Control(name="baseline", knob="none", why="", admissions=ADMISSIONS)


def table2_cells(ctx: Context, control: Control | None, models: Sequence[str]) -> list[Cell]:
    """Table 2's judged cells of ``models`` under ``control`` (``None``: the set-up as it is),
    for the admission schemes the control concerns; every other cell ``not run``."""
    control = control or BASELINE
    t2 = table2(ctx, models, control.admissions, control.extra, save=False)
    measured = [
        Measured("Table 2", m.upper(), column, [value(r) for r in runs[adm]])
        for m, runs in t2.items()
        for adm, column, value in TABLE2_COLUMNS
        if adm in runs
    ]
    assert ctx.paper is not None
    return [c for c in compare(ctx.paper, measured) if c.table == "Table 2"]


def main(argv: Sequence[str] | None = None) -> int:
    ap = control_parser(
        "mace", "Table 2 of the MACE paper with one knob changed: the cells before and after.", CONTROLS, 3
    )
    ap.add_argument(
        "--models", default=",".join(S3_MODELS_FULL), help="source models, comma-separated (default: all six)"
    )
    ap.add_argument(
        "--baseline",
        choices=("committed", "run"),
        default="committed",
        help="the cells before: the committed full run's (default) or rerun here with the same seeds",
    )
    ap.add_argument("--out", metavar="FILE", help="also write the after cells (Table 2 only) as a cells.csv")
    a = ap.parse_args(argv)

    def body(controls: list[Control], seeds: list[int]) -> None:
        models = [m.strip() for m in a.models.split(",") if m.strip()]
        bad = [m for m in models if m not in S3_MODELS_FULL]
        if bad or not models:
            raise ReproductionError(f"--models: {', '.join(bad) or 'none'}; allowed: {', '.join(S3_MODELS_FULL)}")
        with control_context("mace", seeds=seeds, jobs=a.jobs) as ctx:
            if a.baseline == "run":
                before, baseline = table2_cells(ctx, None, models), "rerun here"
            else:
                from ..docs import docs_dir

                path = docs_dir() / "data" / "mace" / "cells.csv"
                if not path.is_file():
                    raise ReproductionError(f"{path}: no committed cells; allowed: --baseline run")
                before = [c for c in read_cells(path) if c.table == "Table 2"]
                baseline = f"the committed full run, {path.name}"
            after = table2_cells(ctx, controls[0], models)
        if a.out:
            Path(a.out).write_text(cells_csv(after), encoding="utf-8")
        shown = [c for c in after if c.qoslab is not None]
        print(control_md(controls[0], seeds, f"; before: {baseline}", before, shown, ("row", "column")), end="")

    return control_main(a, CONTROLS, lambda c: f"{c.name}: {c.knob} ({', '.join(c.admissions)})", body)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
