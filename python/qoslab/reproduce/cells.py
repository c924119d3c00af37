"""The one verdict rule (:func:`judge`) that judges a paper's numbers (:mod:`.paper`), the join
(:func:`compare`), the score, ``cells.csv``: docs/reproductions/README.md."""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import Any

from ..errors import ReproductionError
from ..stats import Estimate
from .paper import Key, Keyed, PaperData, csv_rows, printed_tolerance

#: The verdicts, in the order reports list them.
VERDICTS = ("agrees", "differs", "uncertain", "not run", "lost", "input")
#: The cause of a differing cell that no documented controlled run explains.
UNEXPLAINED = "unexplained"


@dataclass(frozen=True)
class Measured(Keyed):
    """qoslab's value of one paper cell, as the paper defines its statistic: one finite value per
    seed (in ``ctx.seeds`` order), in the paper's unit."""

    values: list[float]

    def __post_init__(self) -> None:
        for name in ("table", "row", "column"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise ReproductionError(f"Measured {name} must be a non-empty str, got {getattr(self, name)!r}")
        try:
            vals = [float(v) for v in self.values]
        except (TypeError, ValueError):
            raise ReproductionError(
                f"Measured {self.key}: values must be numbers, one per seed; got {self.values!r}"
            ) from None
        if not vals:
            raise ReproductionError(f"Measured {self.key}: no values; allowed: one finite number per seed")
        if not all(math.isfinite(v) for v in vals):
            raise ReproductionError(
                f"Measured {self.key}: values {vals} hold NaN or an infinity; allowed: finite numbers "
                "(a cell the run cannot measure is not returned, and the report shows it as not run)"
            )
        object.__setattr__(self, "values", vals)


@dataclass(frozen=True)
class NotMeasured(Keyed):
    """A cell qoslab cannot measure: ``not run`` with ``reason`` instead of its table's ``not_run_reason``."""

    reason: str

    def __post_init__(self) -> None:
        for name in ("table", "row", "column", "reason"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name).strip():
                raise ReproductionError(f"NotMeasured {name} must be a non-empty str, got {getattr(self, name)!r}")


@dataclass(frozen=True)
class Judgement:
    """What the rule gives for one cell: qoslab's mean and 95 % interval, and the verdict."""

    mean: float
    ci_low: float
    ci_high: float
    verdict: str


def interval(values: Sequence[float]) -> tuple[float, float, float]:
    """``(mean, ci_low, ci_high)`` over seeds: the 95 % Student-t interval (both ends the value with one)."""
    est = Estimate.of(values)
    if not est.values or len(est.finite) != len(est.values):
        raise ReproductionError(f"values must be finite numbers, at least one; got {list(values)}")
    hw = est.half_width or 0.0
    return est.mean, est.mean - hw, est.mean + hw


def judge(values: Sequence[float], *, paper: float, tol: float, pm: float | None = None) -> Judgement:
    """The one verdict rule for qoslab's per-seed ``values`` of a cell against the paper's
    ``paper`` (± ``pm`` if printed), with the absolute tolerance ``tol``."""
    if not math.isfinite(tol) or tol < 0:
        raise ReproductionError(f"judge: tolerance {tol!r}; allowed: a finite number >= 0")
    mean, lo, hi = interval(values)
    half = pm or 0.0
    if paper + half < lo - tol or paper - half > hi + tol:
        verdict = "differs"
    elif hi - lo > 2 * tol or len(values) < 2:
        verdict = "uncertain"
    else:
        verdict = "agrees"
    return Judgement(mean=mean, ci_low=lo, ci_high=hi, verdict=verdict)


@dataclass(frozen=True)
class Cell(Keyed):
    """One row of the ``cells.csv`` a reproduction writes (:data:`CELL_COLUMNS`)."""

    unit: str
    paper: str
    qoslab: float | None
    ci_low: float | None
    ci_high: float | None
    tolerance: float | None
    verdict: str
    cause: str = ""

    def to_row(self) -> list[str]:
        return [v if isinstance(v, str) else fmt_number(v) for v in astuple(self)]


#: The columns of the ``cells.csv`` a reproduction writes, in this order: :class:`Cell`'s fields.
CELL_COLUMNS = tuple(f.name for f in fields(Cell))


def fmt_number(x: float | None) -> str:
    """A number as ``cells.csv`` holds it: 6 significant digits, empty for none."""
    if x is None:
        return ""
    s = format(x, ".6g")
    return "0" if s == "-0" else s


def compare(paper: PaperData, measured: Sequence[Measured | NotMeasured]) -> list[Cell]:
    """qoslab's cells joined with the paper's on (table, row, column) and judged, in the paper's order;
    a key the paper data does not hold, one given twice, or one of an ``input`` cell is an error."""
    got: dict[Key, Measured | NotMeasured] = {}
    known = {c.key: c for c in paper.cells}
    for m in measured:
        if not isinstance(m, (Measured, NotMeasured)):
            raise ReproductionError(
                f"{paper.name}: Outcome.cells holds {type(m).__name__}; allowed: Measured, NotMeasured"
            )
        if m.key in known and known[m.key].status == "input":
            raise ReproductionError(
                f"{paper.path / 'cells.csv'}:{known[m.key].line}: cell {m.key} is an input (a set-up value), "
                "never measured; allowed: a result cell"
            )
        if m.key not in known:
            near = [k for k in known if k[0] == m.table]
            hint = (
                f"; {m.table} has rows {', '.join(sorted({k[1] for k in near}))} and columns "
                f"{', '.join(sorted({k[2] for k in near}))}"
                if near
                else f"; tables: {', '.join(t.id for t in paper.tables)}"
            )
            raise ReproductionError(f"{paper.path / 'cells.csv'}: no cell {m.key}{hint}")
        if m.key in got:
            raise ReproductionError(f"{paper.name}: cell {m.key} given twice")
        got[m.key] = m
    out = []
    for pc in paper.cells:
        t = paper.table(pc.table)
        given = got.get(pc.key)
        # The tolerance: the table's, else the printed ``±``, else the rule's; none for a lost or input cell.
        # ``or`` falls through only when one is absent: the loader makes both positive (paper.py).
        tol = None if pc.status in ("lost", "input") else t.tolerance or pc.pm_number or printed_tolerance(pc.value)
        mean, lo, hi = interval(given.values) if isinstance(given, Measured) else (None, None, None)
        if pc.status == "lost":
            verdict, cause = "lost", pc.note or "the paper's number is unreadable in the extraction"
        elif pc.status == "input":
            verdict, cause = "input", pc.note or "a set-up value the paper prints: configured, not judged"
        elif isinstance(given, NotMeasured):
            verdict, cause = "not run", given.reason
        elif given is None:
            verdict = "not run"
            cause = t.not_run_reason or "the reproduction measured no value for this cell in this run"
        else:
            assert pc.number is not None and tol is not None
            verdict = judge(given.values, paper=pc.number, tol=tol, pm=pc.pm_number).verdict
            c = paper.cause_for(pc.key) if verdict == "differs" else None
            cause = c.text if c is not None else (UNEXPLAINED if verdict == "differs" else "")
        out.append(Cell(*pc.key, pc.unit, pc.printed, mean, lo, hi, tol, verdict, cause))
    return out


@dataclass(frozen=True)
class Score:
    """Counts of verdicts; ``value`` = agrees / (agrees + differs + uncertain)."""

    agrees: int = 0
    differs: int = 0
    uncertain: int = 0
    not_run: int = 0
    lost: int = 0
    input: int = 0

    @classmethod
    def of(cls, cells: Iterable[Cell]) -> Score:
        verdicts = [c.verdict for c in cells]
        return cls(*(verdicts.count(v) for v in VERDICTS))

    def __add__(self, other: Score) -> Score:
        return Score(*(a + b for a, b in zip(astuple(self), astuple(other), strict=True)))

    @property
    def compared(self) -> int:
        return self.agrees + self.differs + self.uncertain

    @property
    def value(self) -> float | None:
        return self.agrees / self.compared if self.compared else None

    def to_json(self) -> dict[str, Any]:
        v = self.value
        counts = dict(zip(VERDICTS, astuple(self), strict=True))
        return {"score": round(v, 4) if v is not None else None, "compared": self.compared, **counts}

    def tally(self, cells: bool = True) -> str:
        """``14 of 24 cells agree, 8 differ, 2 uncertain`` (``14 of 24 agree, ...`` unless ``cells``)."""
        compared = f"{self.compared} cells" if cells else str(self.compared)
        return f"{self.agrees} of {compared} agree, {self.differs} differ, {self.uncertain} uncertain"

    def line(self, name: str) -> str:
        """``mace: 14 of 24 cells agree, 8 differ, 2 uncertain (score 0.58); 3 not run, 1 lost``
        (and ``, 12 inputs`` when the paper prints set-up values)."""
        v = self.value
        s = f"score {v:.2f}" if v is not None else "no score: no cell compared"
        inputs = f", {self.input} inputs" if self.input else ""
        return f"{name}: {self.tally()} ({s}); {self.not_run} not run, {self.lost} lost{inputs}"


def cells_csv(cells: Sequence[Cell]) -> str:
    """The text of a reproduction's ``cells.csv`` (header :data:`CELL_COLUMNS`, RFC 4180, ``\\n``)."""
    buf = io.StringIO(newline="")
    csv.writer(buf, lineterminator="\n").writerows([CELL_COLUMNS, *(c.to_row() for c in cells)])
    return buf.getvalue()


def _opt_float(where: str, name: str, v: str) -> float | None:
    if not v:
        return None
    try:
        x = float(v)
    except ValueError:
        raise ReproductionError(f"{where}: {name}: {v!r}; allowed: a number or empty") from None
    if not math.isfinite(x):
        raise ReproductionError(f"{where}: {name}: {v!r}; allowed: a finite number or empty")
    return x


def read_cells(path: str | os.PathLike[str]) -> list[Cell]:
    """A reproduction's ``cells.csv`` read back (bounded, checked: every field named on error)."""
    p = Path(path)
    out = []
    for line, r in csv_rows(p, CELL_COLUMNS):
        where = f"{p}:{line}"
        if r["verdict"] not in VERDICTS:
            raise ReproductionError(f"{where}: verdict: {r['verdict']!r}; allowed: {', '.join(VERDICTS)}")
        mean, lo, hi, tol = (_opt_float(where, k, r[k]) for k in ("qoslab", "ci_low", "ci_high", "tolerance"))
        out.append(
            Cell(r["table"], r["row"], r["column"], r["unit"], r["paper"], mean, lo, hi, tol, r["verdict"], r["cause"])
        )
    return out
