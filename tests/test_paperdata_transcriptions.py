"""The double transcription of the papers' numbers.

Each paper's printed numbers are transcribed twice, independently: the primary
``python/qoslab/reproduce/paperdata/<folder>/cells.csv`` (what the reproductions
judge against) and a second, blind transcription
``tests/data/paperdata_b/<folder>/cells.csv``. For every folder that has both, the
two must hold the same keys and, cell by cell, the same value (as printed, spaces
stripped), unit, ± and status. A disagreement is a misread digit, unit or status in
one of them: re-read the seed and fix the wrong file (the adjudications so far are
in ``tests/data/paperdata_b/TRANSCRIPTION_DIFFS.md``). Units are compared exactly:
the two transcriptions write them alike, so no normalisation table is needed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from qoslab.reproduce.paper import Key, PaperCell, paper_dir

# The paper data's own reader, which also validates the file (header, statuses, printed
# numbers, unique keys); it has no public name because load_paper() wants a whole folder.
from qoslab.reproduce.paper import _paper_cells as paper_cells

SECOND = Path(__file__).parent / "data" / "paperdata_b"
FOLDERS = ("mace", "dcbt", "tcp_cac", "edge", "pcn")
COMPARED = ("value", "unit", "pm", "status")


def _norm(field: str, text: str) -> str:
    """A field as compared: printed numbers without spaces, the rest as written."""
    return text.replace(" ", "") if field in ("value", "pm") else text


def _show(c: PaperCell) -> str:
    return f"value={c.value!r} unit={c.unit!r} pm={c.pm!r} status={c.status!r}"


def disagreements(first: list[PaperCell], second: list[PaperCell]) -> list[str]:
    """One line per key present in one transcription only or differing in a compared field."""
    a: dict[Key, PaperCell] = {c.key: c for c in first}
    b: dict[Key, PaperCell] = {c.key: c for c in second}
    out = [f"{k}: only in the primary ({_show(a[k])})" for k in a if k not in b]
    out += [f"{k}: only in the second ({_show(b[k])})" for k in b if k not in a]
    for k in a.keys() & b.keys():
        x, y = a[k], b[k]
        fields = [f for f in COMPARED if _norm(f, getattr(x, f)) != _norm(f, getattr(y, f))]
        if fields:
            both = "; ".join(f"{f}: primary {getattr(x, f)!r}, second {getattr(y, f)!r}" for f in fields)
            out.append(f"{k}: {both}")
    return sorted(out)


@pytest.mark.parametrize("folder", FOLDERS)
def test_second_transcription_is_valid_paper_data(folder: str) -> None:
    cells = paper_cells(SECOND / folder / "cells.csv")
    assert cells, folder


@pytest.mark.parametrize("folder", FOLDERS)
def test_primary_and_second_transcriptions_agree(folder: str) -> None:
    primary = paper_dir(folder) / "cells.csv"
    assert primary.is_file(), f"{primary}: the paper's primary transcription is missing"
    diffs = disagreements(paper_cells(primary), paper_cells(SECOND / folder / "cells.csv"))
    assert not diffs, (
        f"{folder}: {len(diffs)} cells disagree between {primary} and {SECOND / folder / 'cells.csv'} "
        "(re-read the seed, fix the wrong one):\n" + "\n".join(diffs)
    )


def _cell(key: Key, value: str, *, unit: str = "%", pm: str = "", status: str = "printed") -> PaperCell:
    return PaperCell(*key, value=value, unit=unit, pm=pm, statistic="mean", section="§1", status=status, note="")


def test_disagreements_names_each_differing_key_with_both_values() -> None:
    k1, k2, k3, k4 = (("Table 1", r, "c") for r in ("a", "b", "c", "d"))
    first = [_cell(k1, "1,800"), _cell(k2, "72.5"), _cell(k3, "0.24", pm="0.02")]
    second = [_cell(k1, "1, 800"), _cell(k2, "72.6", unit="points"), _cell(k4, "", status="lost")]
    got = disagreements(first, second)
    assert got == sorted(
        [
            f"{k2}: value: primary '72.5', second '72.6'; unit: primary '%', second 'points'",
            f"{k3}: only in the primary (value='0.24' unit='%' pm='0.02' status='printed')",
            f"{k4}: only in the second (value='' unit='%' pm='' status='lost')",
        ]
    )
    assert disagreements(first, list(first)) == []
