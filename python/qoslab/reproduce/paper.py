"""A paper's printed numbers as data: ``paperdata/<folder>/`` read (bounded), checked (a malformed
file refused naming its line and field) and typed; the format: docs/reproductions/README.md."""

from __future__ import annotations

import csv
import io
import math
import os
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from ..errors import ReproductionError

#: The columns of a paper's ``cells.csv``, in this order.
PAPER_COLUMNS = ("table", "row", "column", "value", "unit", "pm", "statistic", "section", "status", "note")
#: What a paper's cell is: a result printed in a table, a result stated in the text, a number lost
#: in the extraction, or an input (a set-up value the paper prints: kept, never judged).
STATUSES = ("printed", "stated", "lost", "input")
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
class Keyed:
    """A cell's name, the first fields of every kind of cell (the paper's, qoslab's): table, row, column."""

    table: str
    row: str
    column: str

    @property
    def key(self) -> Key:
        return (self.table, self.row, self.column)


@dataclass(frozen=True)
class PaperCell(Keyed):
    """One number of the paper (a row of ``paperdata/<folder>/cells.csv``; ``line`` is its line)."""

    value: str
    unit: str
    pm: str
    statistic: str
    section: str
    status: str
    note: str
    line: int = 0

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


def _exponent(d: Decimal) -> int:
    exp = d.as_tuple().exponent
    assert isinstance(exp, int)  # finite: the pattern admits no NaN or infinity
    return exp


def last_digit_unit(printed: str) -> float:
    """One unit of the last printed digit: ``72.5`` -> 0.1, ``93`` and ``1,800`` -> 1, ``0.24`` -> 0.01."""
    return float(Decimal(1).scaleb(_exponent(_decimal(printed))))


def printed_tolerance(printed: str) -> float:
    """The rule's tolerance of a printed value with no ``±``: ``max(10 % of |value|, one unit
    of its last printed digit)``, computed in decimal so that ``72.5`` gives exactly 7.25."""
    d = _decimal(printed)
    return float(max(abs(d) / 10, Decimal(1).scaleb(_exponent(d))))


def decimals_of(printed: str) -> int:
    """The number of decimals a printed value shows (``72.5`` -> 1, ``1,800`` -> 0)."""
    return max(0, -_exponent(_decimal(printed)))


def csv_rows(path: Path, header: Sequence[str]) -> Iterable[tuple[int, dict[str, str]]]:
    """The rows of a CSV file (read bounded) with exactly ``header``, each with its line number."""
    text = read_text_bounded(path)
    assert text is not None
    reader = csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline=""), strict=True)
    try:
        first = next(reader, None)
        if first is None:
            raise ReproductionError(f"{path}:1: empty file; allowed: a header row {','.join(header)}")
        first = [h.strip() for h in first]
        if tuple(first) != tuple(header):
            raise ReproductionError(f"{path}:1: header {','.join(first)!r}; allowed: exactly {','.join(header)}")
        n = 0
        start = reader.line_num + 1
        for rec in reader:
            line, start = start, reader.line_num + 1
            if not rec or all(not x.strip() for x in rec):
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
    except csv.Error as e:
        raise ReproductionError(f"{path}:{reader.line_num}: malformed CSV: {e}") from None


def _paper_cells(path: Path) -> list[PaperCell]:
    cells: list[PaperCell] = []
    seen: dict[Key, int] = {}
    for line, r in csv_rows(path, PAPER_COLUMNS):
        where = f"{path}:{line}"
        for name in ("table", "row", "column", "unit", "statistic", "section"):
            if not r[name]:
                raise ReproductionError(f"{where}: {name}: empty; allowed: a non-empty text")
        if r["status"] not in STATUSES:
            raise ReproductionError(f"{where}: status: {r['status']!r}; allowed: {', '.join(STATUSES)}")
        if r["status"] == "lost" and (r["value"] or r["pm"]):
            raise ReproductionError(
                f"{where}: value: {r['value'] or r['pm']!r} with status lost; allowed: empty value and pm "
                "(say what is readable in note)"
            )
        if r["status"] != "lost":
            for name in ("value", "pm") if r["pm"] else ("value",):
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


def _entries(path: Path, header: str, keys: Sequence[str], *, required: bool) -> list[tuple[str, dict[str, Any]]]:
    """The ``[[header]]`` entries of a TOML file as (where, entry), checked for unknown keys."""
    text = read_text_bounded(path, required=required)
    if text is None:
        return []
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(err))
        if m is None:
            raise ReproductionError(f"{path}: not TOML: {err}") from None
        what = str(err)[: m.start()].strip()
        raise ReproductionError(f"{path}:{m.group(1)}: not TOML: {what} (column {m.group(2)})") from None
    if unknown := sorted(set(doc) - {header}):
        raise ReproductionError(f"{path}: {unknown[0]}: unknown key; allowed: [[{header}]] entries only")
    items = doc.get(header, [])
    if not isinstance(items, list) or not all(isinstance(x, dict) for x in items):
        raise ReproductionError(f"{path}: {header}: not an array of tables; allowed: [[{header}]] entries")
    # The line of each ``[[header]]``, in order (tomllib keeps no positions).
    pat = re.compile(rf"^\s*\[\[\s*{re.escape(header)}\s*\]\]")
    lines = [i + 1 for i, ln in enumerate(text.splitlines()) if pat.match(ln)]
    out = []
    for i, e in enumerate(items):
        where = f"{path}:{lines[i]}" if i < len(lines) else f"{path}: {header}[{i}]"
        if unknown := [k for k in e if k not in keys]:
            raise ReproductionError(f"{where}: {unknown[0]}: unknown field; allowed: {', '.join(keys)}")
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
    tables: list[PaperTable] = []
    seen: dict[str, str] = {}
    for where, e in _entries(path, "table", _TABLE_KEYS, required=True):
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
        title, section = _text(where, e, "title"), _text(where, e, "section")
        tables.append(PaperTable(tid, title, section, quick, tol, reason, not_run))
    if missing := [t for t in dict.fromkeys(used) if t not in seen]:
        raise ReproductionError(f"{path}: table {missing[0]!r} of cells.csv has no [[table]] entry")
    if unused := [t for t in seen if t not in set(used)]:
        raise ReproductionError(f"{seen[unused[0]]}: id: {unused[0]!r} has no cells in cells.csv")
    return tables


def _causes(path: Path, cells: Sequence[PaperCell]) -> list[Cause]:
    tables = dict.fromkeys(c.table for c in cells)
    causes = []
    for where, e in _entries(path, "cause", _CAUSE_KEYS, required=False):
        table = _text(where, e, "table")
        if table not in tables:
            raise ReproductionError(f"{where}: table: {table!r} has no cells; allowed: {', '.join(tables)}")
        these = [c for c in cells if c.table == table]
        picked: dict[str, tuple[str, ...]] = {}
        for k, known in (("rows", {c.row for c in these}), ("columns", {c.column for c in these})):
            v = e.get(k)
            if not isinstance(v, list) or not v or not all(isinstance(x, str) and x for x in v):
                raise ReproductionError(f'{where}: {k}: {v!r}; allowed: a non-empty list of keys, or ["*"]')
            if bad := [x for x in v if x != "*" and x not in known]:
                raise ReproductionError(
                    f"{where}: {k}: {bad[0]!r} is not a {k[:-1]} of {table}; allowed: {', '.join(sorted(known))}, *"
                )
            picked[k] = tuple(v)
        causes.append(Cause(table, picked["rows"], picked["columns"], _text(where, e, "text"), _text(where, e, "run")))
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
