"""The papers' own numbers as data, and the one verdict rule that judges them (issue 26).

A paper reproduction ships its paper's printed numbers in
``paperdata/<folder>/`` (``<folder>`` as ``OUT/<folder>/``, e.g. ``tcp_cac``):

- ``cells.csv``: one row per number, columns :data:`PAPER_COLUMNS`; the
  value is kept as the string the paper prints (``72.5``, ``0.24``,
  ``1,800``) so that its last printed digit is known;
- ``tables.toml``: one ``[[table]]`` per table id of ``cells.csv``: title,
  section, ``quick`` (judged in quick runs), an optional explicit
  ``tolerance`` with its ``tolerance_reason``, and ``not_run_reason``;
- ``causes.toml`` (optional): the controlled runs that explain differing cells.

:func:`load_paper` reads and checks the three files (bounded reads; a
malformed file is a :class:`~qoslab.errors.ReproductionError` naming the
file, line and field). A reproduction returns :class:`Measured` cells
(its value of a cell's statistic, one per seed); :func:`compare` joins them
with the paper's cells and judges each with the one rule of
:func:`judge`:

- qoslab's value is the mean over seeds, ``ci_low``/``ci_high`` its 95 %
  Student-t interval (both the mean with one seed);
- ``tol`` (absolute, the cell's unit): the table's explicit ``tolerance``,
  else the paper's printed ``±``, else ``max(10 % of |value|, one unit of
  its last printed digit)`` (:func:`printed_tolerance`);
- ``differs`` when the paper's value, or its whole ``±`` interval, lies
  outside ``[ci_low - tol, ci_high + tol]``; else ``uncertain`` when
  ``ci_high - ci_low > 2 tol`` or fewer than 2 seeds ran; else ``agrees``;
- ``not run`` (no value measured: a quick run skipping the table, or a
  :class:`NotMeasured` cell with its reason), ``lost`` (the paper's number is
  unreadable) and ``input`` (a set-up value the paper prints, e.g. a source's
  parameters: its qoslab value is the configured one, so it is never judged)
  stay apart.

The :class:`Score` is agrees / (agrees + differs + uncertain).
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import astuple, dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from ..errors import ReproductionError
from .stats import Estimate

#: The columns of a paper's ``cells.csv``, in this order.
PAPER_COLUMNS = ("table", "row", "column", "value", "unit", "pm", "statistic", "section", "status", "note")
#: The columns of the ``cells.csv`` a reproduction writes, in this order.
CELL_COLUMNS = (
    "table",
    "row",
    "column",
    "unit",
    "paper",
    "qoslab",
    "ci_low",
    "ci_high",
    "tolerance",
    "verdict",
    "cause",
)
#: What a paper's cell is: a result printed in a table, a result stated in the text, a number lost
#: in the extraction, or an input (a set-up value the paper prints: kept, never judged).
STATUSES = ("printed", "stated", "lost", "input")
#: The verdicts, in the order reports list them.
VERDICTS = ("agrees", "differs", "uncertain", "not run", "lost", "input")
#: The cause of a differing cell that no documented controlled run explains.
UNEXPLAINED = "unexplained"

#: Bounds on what is read: a paper data file, the rows of a cells.csv, one field.
MAX_FILE_BYTES = 2 << 20
MAX_ROWS = 20_000
MAX_FIELD_CHARS = 2_000

_TABLE_KEYS = ("id", "title", "section", "tolerance", "tolerance_reason", "quick", "not_run_reason")
_CAUSE_KEYS = ("table", "rows", "columns", "text", "run")
# A number as a paper prints it: optional sign (ASCII or U+2212), digits with optional
# thousands commas, optional decimals, optional exponent.
_NUMBER = re.compile(r"[+\-\u2212]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:[eE][+\-]?\d+)?")

Key = tuple[str, str, str]


@dataclass(frozen=True)
class Measured:
    """qoslab's value of one paper cell: the cell's statistic as the paper defines it,
    one value per seed (in ``ctx.seeds`` order), in the paper's unit. NaN is not allowed."""

    table: str
    row: str
    column: str
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

    @property
    def key(self) -> Key:
        return (self.table, self.row, self.column)


@dataclass(frozen=True)
class NotMeasured:
    """A paper cell of a table the run covers that qoslab cannot measure, with the reason
    (e.g. the paper does not define the statistic; a seed without the event the cell times).
    Reported as ``not run`` with ``reason`` instead of the table's ``not_run_reason``."""

    table: str
    row: str
    column: str
    reason: str

    def __post_init__(self) -> None:
        for name in ("table", "row", "column", "reason"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name).strip():
                raise ReproductionError(f"NotMeasured {name} must be a non-empty str, got {getattr(self, name)!r}")

    @property
    def key(self) -> Key:
        return (self.table, self.row, self.column)


# -- paper data ---------------------------------------------------------------


@dataclass(frozen=True)
class PaperCell:
    """One number of the paper (a row of ``paperdata/<folder>/cells.csv``; ``line`` is its line)."""

    table: str
    row: str
    column: str
    value: str
    unit: str
    pm: str
    statistic: str
    section: str
    status: str
    note: str
    line: int = 0

    @property
    def key(self) -> Key:
        return (self.table, self.row, self.column)

    @property
    def number(self) -> float | None:
        """The printed value as a number; ``None`` when lost."""
        return float(_decimal(self.value)) if self.value else None

    @property
    def pm_number(self) -> float | None:
        """The printed ± half-width; ``None`` when the paper gives none."""
        return float(_decimal(self.pm)) if self.pm else None

    @property
    def printed(self) -> str:
        """The value as the paper prints it, with its ``±`` when it gives one (``lost`` when lost)."""
        if self.status == "lost":
            return "lost"
        if self.status == "input":
            return f"{self.value} (input)"
        return f"{self.value} ± {self.pm}" if self.pm else self.value


@dataclass(frozen=True)
class PaperTable:
    """One ``[[table]]`` of ``tables.toml``."""

    id: str
    title: str
    section: str
    quick: bool
    tolerance: float | None = None
    tolerance_reason: str = ""
    not_run_reason: str = ""


@dataclass(frozen=True)
class Cause:
    """One ``[[cause]]`` of ``causes.toml``: a controlled run explaining differing cells."""

    table: str
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    text: str
    run: str

    def matches(self, key: Key) -> bool:
        t, r, c = key
        return t == self.table and ("*" in self.rows or r in self.rows) and ("*" in self.columns or c in self.columns)


@dataclass(frozen=True)
class PaperData:
    """A paper's numbers: its cells (file order), tables (file order) and causes."""

    name: str
    path: Path
    cells: tuple[PaperCell, ...]
    tables: tuple[PaperTable, ...]
    causes: tuple[Cause, ...] = ()

    def table(self, table_id: str) -> PaperTable:
        for t in self.tables:
            if t.id == table_id:
                return t
        raise ReproductionError(f"{self.path}: no table {table_id!r}; tables: {', '.join(t.id for t in self.tables)}")

    def cause_for(self, key: Key) -> Cause | None:
        """The first cause that matches ``key``."""
        return next((c for c in self.causes if c.matches(key)), None)

    def keys(self) -> list[Key]:
        return [c.key for c in self.cells]


def paperdata_root() -> Path:
    """Where the papers' data live: ``qoslab/reproduce/paperdata/``."""
    return Path(__file__).resolve().parent / "paperdata"


def paper_dir(folder: str) -> Path:
    """``paperdata/<folder>/`` (the folder need not exist)."""
    return paperdata_root() / folder


def read_text_bounded(path: Path, *, limit: int = MAX_FILE_BYTES, required: bool = True) -> str | None:
    """The text of ``path`` (UTF-8, at most ``limit`` bytes, else a :class:`ReproductionError`
    naming the file, and the line of a bad byte); ``None`` if absent and not ``required``."""
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except FileNotFoundError:
        if required:
            raise ReproductionError(f"{path}: no such file") from None
        return None
    except OSError as e:
        raise ReproductionError(f"{path}: cannot read: {e.strerror or e}") from None
    if len(data) > limit:
        raise ReproductionError(f"{path}: larger than {limit} bytes; allowed: up to {limit}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise ReproductionError(f"{path}:{line}: not UTF-8 text ({e.reason})") from None


def _decimal(text: str) -> Decimal:
    """A printed number (``1,800``, ``-0.30``, ``72.5``, ``1.5e-3``) as a Decimal; ValueError if it is not one."""
    t = text.strip()
    if not t or not _NUMBER.fullmatch(t) or not any(ch.isdigit() for ch in t):
        raise ValueError(text)
    try:
        return Decimal(t.replace(",", "").replace("\u2212", "-"))
    except InvalidOperation:  # pragma: no cover - the pattern admits only what Decimal reads
        raise ValueError(text) from None


def last_digit_unit(printed: str) -> float:
    """One unit of the last printed digit: ``72.5`` -> 0.1, ``93`` and ``1,800`` -> 1, ``0.24`` -> 0.01."""
    exp = _decimal(printed).as_tuple().exponent
    assert isinstance(exp, int)  # finite: the pattern admits no NaN or infinity
    return float(Decimal(1).scaleb(exp))


def printed_tolerance(printed: str) -> float:
    """The rule's tolerance of a printed value with no ``±``: ``max(10 % of |value|, one unit
    of its last printed digit)``, computed in decimal so that ``72.5`` gives exactly 7.25."""
    d = _decimal(printed)
    exp = d.as_tuple().exponent
    assert isinstance(exp, int)
    return float(max(abs(d) / 10, Decimal(1).scaleb(exp)))


def decimals_of(printed: str) -> int:
    """The number of decimals a printed value shows (``72.5`` -> 1, ``1,800`` -> 0)."""
    exp = _decimal(printed).as_tuple().exponent
    assert isinstance(exp, int)
    return max(0, -exp)


def _csv_rows(path: Path, text: str, header: Sequence[str]) -> Iterable[tuple[int, dict[str, str]]]:
    """The rows of a CSV file with exactly ``header``, each with its line number."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        first = next(reader, None)
        if first is None:
            raise ReproductionError(f"{path}:1: empty file; allowed: a header row {','.join(header)}")
        first = [h.strip() for h in first]
        if first and first[0].startswith("\ufeff"):
            first[0] = first[0][1:]
        if tuple(first) != tuple(header):
            raise ReproductionError(f"{path}:1: header {','.join(first)!r}; allowed: exactly {','.join(header)}")
        n = 0
        line = reader.line_num + 1
        for rec in reader:
            if not rec or all(not x.strip() for x in rec):
                line = reader.line_num + 1
                continue
            n += 1
            if n > MAX_ROWS:
                raise ReproductionError(f"{path}:{line}: more than {MAX_ROWS} rows; allowed: up to {MAX_ROWS}")
            if len(rec) != len(header):
                raise ReproductionError(
                    f"{path}:{line}: {len(rec)} fields; allowed: {len(header)} ({','.join(header)}); "
                    "quote a field holding a comma"
                )
            for name, v in zip(header, rec, strict=True):
                if len(v) > MAX_FIELD_CHARS:
                    raise ReproductionError(f"{path}:{line}: {name}: longer than {MAX_FIELD_CHARS} characters")
            yield line, {h: v.strip() for h, v in zip(header, rec, strict=True)}
            line = reader.line_num + 1
    except csv.Error as e:
        raise ReproductionError(f"{path}:{reader.line_num}: malformed CSV: {e}") from None


def _paper_cells(path: Path) -> list[PaperCell]:
    text = read_text_bounded(path)
    assert text is not None
    cells: list[PaperCell] = []
    seen: dict[Key, int] = {}
    for line, r in _csv_rows(path, text, PAPER_COLUMNS):
        where = f"{path}:{line}"
        for name in ("table", "row", "column", "unit", "statistic", "section"):
            if not r[name]:
                raise ReproductionError(f"{where}: {name}: empty; allowed: a non-empty text")
        if r["status"] not in STATUSES:
            raise ReproductionError(f"{where}: status: {r['status']!r}; allowed: {', '.join(STATUSES)}")
        if r["status"] == "lost":
            if r["value"] or r["pm"]:
                raise ReproductionError(
                    f"{where}: value: {r['value'] or r['pm']!r} with status lost; allowed: empty value and pm "
                    "(say what is readable in note)"
                )
        else:
            for name in ("value", "pm"):
                if not r[name] and name == "pm":
                    continue
                try:
                    d = _decimal(r[name])
                except ValueError:
                    raise ReproductionError(
                        f"{where}: {name}: {r[name]!r} is not a printed number; allowed: digits with an optional "
                        "sign, thousands commas, decimals and exponent (e.g. 72.5, -0.30, 1,800, 1.5e-3); the unit "
                        "goes in unit, a lost number is status lost"
                    ) from None
                if name == "pm" and d <= 0:
                    raise ReproductionError(f"{where}: pm: {r['pm']!r}; allowed: a positive half-width, or empty")
        key = (r["table"], r["row"], r["column"])
        if key in seen:
            raise ReproductionError(
                f"{where}: (table, row, column) {key} already on line {seen[key]}; allowed: each key once"
            )
        seen[key] = line
        cells.append(PaperCell(**{k: r[k] for k in PAPER_COLUMNS}, line=line))
    if not cells:
        raise ReproductionError(f"{path}: no cells; allowed: one row per number the paper prints")
    return cells


def _toml(path: Path, *, required: bool) -> tuple[dict[str, Any], str] | None:
    text = read_text_bounded(path, required=required)
    if text is None:
        return None
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        if m is None:
            raise ReproductionError(f"{path}: not TOML: {e}") from None
        what = str(e)[: m.start()].strip()
        raise ReproductionError(f"{path}:{m.group(1)}: not TOML: {what} (column {m.group(2)})") from None


def _entry_lines(text: str, header: str) -> list[int]:
    """The line of each ``[[header]]`` in ``text``, in order (tomllib keeps no positions)."""
    pat = re.compile(rf"^\s*\[\[\s*{re.escape(header)}\s*\]\]")
    return [i + 1 for i, ln in enumerate(text.splitlines()) if pat.match(ln)]


def _entries(
    path: Path, doc: dict[str, Any], text: str, header: str, keys: Sequence[str]
) -> list[tuple[str, dict[str, Any]]]:
    """The ``[[header]]`` entries as (where, entry), checked for unknown keys."""
    unknown = sorted(set(doc) - {header})
    if unknown:
        raise ReproductionError(f"{path}: {unknown[0]}: unknown key; allowed: [[{header}]] entries only")
    items = doc.get(header, [])
    if not isinstance(items, list) or not all(isinstance(x, dict) for x in items):
        raise ReproductionError(f"{path}: {header}: not an array of tables; allowed: [[{header}]] entries")
    lines = _entry_lines(text, header)
    out = []
    for i, e in enumerate(items):
        where = f"{path}:{lines[i]}" if i < len(lines) else f"{path}: {header}[{i}]"
        for k in e:
            if k not in keys:
                raise ReproductionError(f"{where}: {k}: unknown field; allowed: {', '.join(keys)}")
        out.append((where, e))
    return out


def _text(where: str, e: Mapping[str, Any], k: str, *, required: bool = True) -> str:
    v = e.get(k, "")
    if not isinstance(v, str) or (required and not v.strip()):
        raise ReproductionError(f"{where}: {k}: {v!r}; allowed: a non-empty string")
    if len(v) > MAX_FIELD_CHARS:
        raise ReproductionError(f"{where}: {k}: longer than {MAX_FIELD_CHARS} characters")
    return v.strip()


def _tables(path: Path, used: Sequence[str]) -> list[PaperTable]:
    got = _toml(path, required=True)
    assert got is not None
    tables: list[PaperTable] = []
    seen: dict[str, str] = {}
    for where, e in _entries(path, *got, "table", _TABLE_KEYS):
        tid = _text(where, e, "id")
        if tid in seen:
            raise ReproductionError(f"{where}: id: {tid!r} already at {seen[tid]}; allowed: each table once")
        seen[tid] = where
        quick = e.get("quick")
        if not isinstance(quick, bool):
            raise ReproductionError(f"{where}: quick: {quick!r}; allowed: true or false (judged in quick runs?)")
        tol = e.get("tolerance")
        if tol is not None:
            if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not math.isfinite(tol) or tol <= 0:
                raise ReproductionError(
                    f"{where}: tolerance: {tol!r}; allowed: a positive number, absolute in the cells' unit"
                )
            tol = float(tol)
        reason = _text(where, e, "tolerance_reason", required=tol is not None)
        if reason and tol is None:
            raise ReproductionError(f"{where}: tolerance_reason without tolerance; allowed: both or neither")
        not_run = _text(where, e, "not_run_reason", required=not quick)
        tables.append(
            PaperTable(
                id=tid,
                title=_text(where, e, "title"),
                section=_text(where, e, "section"),
                quick=quick,
                tolerance=tol,
                tolerance_reason=reason,
                not_run_reason=not_run,
            )
        )
    missing = [t for t in dict.fromkeys(used) if t not in seen]
    if missing:
        raise ReproductionError(f"{path}: table {missing[0]!r} of cells.csv has no [[table]] entry")
    unused = [t for t in seen if t not in set(used)]
    if unused:
        raise ReproductionError(f"{seen[unused[0]]}: id: {unused[0]!r} has no cells in cells.csv")
    return tables


def _causes(path: Path, cells: Sequence[PaperCell]) -> list[Cause]:
    got = _toml(path, required=False)
    if got is None:
        return []
    rows: dict[str, set[str]] = {}
    cols: dict[str, set[str]] = {}
    for c in cells:
        rows.setdefault(c.table, set()).add(c.row)
        cols.setdefault(c.table, set()).add(c.column)
    causes = []
    for where, e in _entries(path, *got, "cause", _CAUSE_KEYS):
        table = _text(where, e, "table")
        if table not in rows:
            raise ReproductionError(f"{where}: table: {table!r} has no cells; allowed: {', '.join(rows)}")
        picked: dict[str, tuple[str, ...]] = {}
        for k, known in (("rows", rows[table]), ("columns", cols[table])):
            v = e.get(k)
            if not isinstance(v, list) or not v or not all(isinstance(x, str) and x for x in v):
                raise ReproductionError(f'{where}: {k}: {v!r}; allowed: a non-empty list of keys, or ["*"]')
            bad = [x for x in v if x != "*" and x not in known]
            if bad:
                raise ReproductionError(
                    f"{where}: {k}: {bad[0]!r} is not a {k[:-1]} of {table}; allowed: {', '.join(sorted(known))}, *"
                )
            picked[k] = tuple(v)
        causes.append(
            Cause(
                table=table,
                rows=picked["rows"],
                columns=picked["columns"],
                text=_text(where, e, "text"),
                run=_text(where, e, "run"),
            )
        )
    return causes


def load_paper(folder: str | os.PathLike[str]) -> PaperData:
    """A paper's data: ``folder`` is a folder name under :func:`paperdata_root` (``"mace"``)
    or a path to a folder holding ``cells.csv``, ``tables.toml`` and optionally ``causes.toml``."""
    path = Path(folder) if not isinstance(folder, str) or os.sep in folder else paper_dir(folder)
    if not path.is_dir():
        raise ReproductionError(f"{path}: no paper data folder (cells.csv, tables.toml, causes.toml)")
    cells = _paper_cells(path / "cells.csv")
    tables = _tables(path / "tables.toml", [c.table for c in cells])
    causes = _causes(path / "causes.toml", cells)
    return PaperData(name=path.name, path=path, cells=tuple(cells), tables=tuple(tables), causes=tuple(causes))


# -- the verdict rule -----------------------------------------------------------


@dataclass(frozen=True)
class Judgement:
    """What the rule gives for one cell: qoslab's mean and 95 % interval, and the verdict."""

    mean: float
    ci_low: float
    ci_high: float
    verdict: str


def interval(values: Sequence[float]) -> tuple[float, float, float]:
    """``(mean, ci_low, ci_high)``: the mean over seeds and its 95 % Student-t interval
    (:mod:`.stats`); with one value both ends are the value."""
    est = Estimate.of(values)
    if est.n == 0 or len(est.finite) != est.n:
        raise ReproductionError(f"values must be finite numbers, at least one; got {list(values)}")
    hw = est.half_width or 0.0
    return est.mean, est.mean - hw, est.mean + hw


def judge(values: Sequence[float], *, paper: float, tol: float, pm: float | None = None) -> Judgement:
    """The one verdict rule (module doc) for qoslab's per-seed ``values`` of a cell against the
    paper's ``paper`` (± ``pm`` if printed), with the absolute tolerance ``tol``."""
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


def tolerance_of(cell: PaperCell, table: PaperTable) -> float | None:
    """The cell's ``tol``: the table's explicit tolerance, else the printed ``±``, else
    :func:`printed_tolerance`; ``None`` for a lost cell."""
    if cell.status in ("lost", "input"):
        return None
    if table.tolerance is not None:
        return table.tolerance
    if cell.pm:
        return float(_decimal(cell.pm))
    return printed_tolerance(cell.value)


@dataclass(frozen=True)
class Cell:
    """One row of the ``cells.csv`` a reproduction writes (:data:`CELL_COLUMNS`)."""

    table: str
    row: str
    column: str
    unit: str
    paper: str
    qoslab: float | None
    ci_low: float | None
    ci_high: float | None
    tolerance: float | None
    verdict: str
    cause: str = ""

    @property
    def key(self) -> Key:
        return (self.table, self.row, self.column)

    def to_row(self) -> list[str]:
        return [
            self.table,
            self.row,
            self.column,
            self.unit,
            self.paper,
            fmt_number(self.qoslab),
            fmt_number(self.ci_low),
            fmt_number(self.ci_high),
            fmt_number(self.tolerance),
            self.verdict,
            self.cause,
        ]


def fmt_number(x: float | None) -> str:
    """A number as ``cells.csv`` holds it: 6 significant digits, empty for none."""
    if x is None:
        return ""
    s = format(x, ".6g")
    return "0" if s == "-0" else s


def compare(paper: PaperData, measured: Sequence[Measured | NotMeasured]) -> list[Cell]:
    """Joins qoslab's cells with the paper's on (table, row, column) and judges each; the
    result is in the paper's order. A key the paper data does not hold, one given twice, or
    one of an ``input`` cell is a :class:`ReproductionError`."""
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
    tables = {t.id: t for t in paper.tables}
    out = []
    for pc in paper.cells:
        t = tables[pc.table]
        given = got.get(pc.key)
        mine = given if isinstance(given, Measured) else None
        tol = tolerance_of(pc, t)
        ours = interval(mine.values) if mine is not None else None
        if pc.status == "lost":
            verdict, cause = "lost", pc.note or "the paper's number is unreadable in the extraction"
        elif pc.status == "input":
            verdict, cause = "input", pc.note or "a set-up value the paper prints: configured, not judged"
        elif isinstance(given, NotMeasured):
            verdict, cause = "not run", given.reason
        elif mine is None:
            verdict = "not run"
            cause = t.not_run_reason or "the reproduction measured no value for this cell in this run"
        else:
            assert pc.number is not None and tol is not None
            verdict = judge(mine.values, paper=pc.number, tol=tol, pm=pc.pm_number).verdict
            c = paper.cause_for(pc.key) if verdict == "differs" else None
            cause = c.text if c is not None else (UNEXPLAINED if verdict == "differs" else "")
        out.append(
            Cell(
                table=pc.table,
                row=pc.row,
                column=pc.column,
                unit=pc.unit,
                paper=pc.printed,
                qoslab=ours[0] if ours else None,
                ci_low=ours[1] if ours else None,
                ci_high=ours[2] if ours else None,
                tolerance=tol,
                verdict=verdict,
                cause=cause,
            )
        )
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
        n = dict.fromkeys(VERDICTS, 0)
        for c in cells:
            n[c.verdict] += 1
        return cls(n["agrees"], n["differs"], n["uncertain"], n["not run"], n["lost"], n["input"])

    def __add__(self, other: Score) -> Score:
        return Score(*(a + b for a, b in zip(astuple(self), astuple(other), strict=True)))

    @property
    def compared(self) -> int:
        return self.agrees + self.differs + self.uncertain

    @property
    def value(self) -> float | None:
        return self.agrees / self.compared if self.compared else None

    def counts(self) -> dict[str, int]:
        return {
            "agrees": self.agrees,
            "differs": self.differs,
            "uncertain": self.uncertain,
            "not run": self.not_run,
            "lost": self.lost,
            "input": self.input,
        }

    def to_json(self) -> dict[str, Any]:
        v = self.value
        return {"score": round(v, 4) if v is not None else None, "compared": self.compared, **self.counts()}

    def line(self, name: str) -> str:
        """``mace: 14 of 24 cells agree, 8 differ, 2 uncertain (score 0.58); 3 not run, 1 lost``
        (and ``, 12 inputs`` when the paper prints set-up values)."""
        v = self.value
        s = f"score {v:.2f}" if v is not None else "no score: no cell compared"
        inputs = f", {self.input} inputs" if self.input else ""
        return (
            f"{name}: {self.agrees} of {self.compared} cells agree, {self.differs} differ, "
            f"{self.uncertain} uncertain ({s}); {self.not_run} not run, {self.lost} lost{inputs}"
        )


# -- cells.csv of a reproduction -----------------------------------------------


def cells_csv(cells: Sequence[Cell]) -> str:
    """The text of a reproduction's ``cells.csv`` (header :data:`CELL_COLUMNS`, RFC 4180, ``\\n``)."""
    buf = io.StringIO(newline="")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CELL_COLUMNS)
    for c in cells:
        w.writerow(c.to_row())
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
    text = read_text_bounded(p)
    assert text is not None
    out = []
    for line, r in _csv_rows(p, text, CELL_COLUMNS):
        where = f"{p}:{line}"
        if r["verdict"] not in VERDICTS:
            raise ReproductionError(f"{where}: verdict: {r['verdict']!r}; allowed: {', '.join(VERDICTS)}")
        out.append(
            Cell(
                table=r["table"],
                row=r["row"],
                column=r["column"],
                unit=r["unit"],
                paper=r["paper"],
                qoslab=_opt_float(where, "qoslab", r["qoslab"]),
                ci_low=_opt_float(where, "ci_low", r["ci_low"]),
                ci_high=_opt_float(where, "ci_high", r["ci_high"]),
                tolerance=_opt_float(where, "tolerance", r["tolerance"]),
                verdict=r["verdict"],
                cause=r["cause"],
            )
        )
    return out


__all__ = [
    "CELL_COLUMNS",
    "PAPER_COLUMNS",
    "STATUSES",
    "UNEXPLAINED",
    "VERDICTS",
    "Cause",
    "Cell",
    "Judgement",
    "Measured",
    "NotMeasured",
    "PaperCell",
    "PaperData",
    "PaperTable",
    "Score",
    "cells_csv",
    "compare",
    "decimals_of",
    "fmt_number",
    "interval",
    "judge",
    "last_digit_unit",
    "load_paper",
    "paper_dir",
    "paperdata_root",
    "printed_tolerance",
    "read_cells",
    "read_text_bounded",
    "tolerance_of",
]
