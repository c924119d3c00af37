"""The judged cells as the paper prints its tables, for ``report.md``, the generated docs
(:mod:`.docs`) and the HTML report (:mod:`qoslab.report`, from ``results.json``'s ``fidelity``)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import ReproductionError
from .cells import Cell, Score
from .paper import Cause, PaperData, PaperTable, decimals_of

#: The sentence that says how to read a cell, in every rendering.
LEGEND = (
    "Each cell: the paper's number, then qoslab's mean over seeds ± the half-width of its 95 % "
    "Student-t interval (no ± with one seed), then the verdict. The rule: `differs` when the "
    "paper's number (or its whole ± interval) lies outside qoslab's interval widened by the "
    "tolerance on each side; otherwise `uncertain` when that interval is wider than twice the "
    "tolerance or fewer than 2 seeds ran; otherwise `agrees`. See docs/reproductions/README.md."
)


def fidelity_json(paper: PaperData) -> dict[str, Any]:
    """What ``results.json`` keeps of the paper data for the reports: tables and causes."""
    return {
        "paper_data": paper.name,
        "tables": [dataclasses.asdict(t) for t in paper.tables],
        "causes": [dataclasses.asdict(c) for c in paper.causes],
    }


def from_json(doc: Mapping[str, Any]) -> tuple[list[PaperTable], list[Cause]]:
    """The tables and causes of a ``results.json``'s ``fidelity`` (see :func:`fidelity_json`)."""
    try:
        tables = [PaperTable(**t) for t in doc["tables"]]
        causes = [Cause(c["table"], tuple(c["rows"]), tuple(c["columns"]), c["text"], c["run"]) for c in doc["causes"]]
    except (KeyError, TypeError) as e:
        raise ReproductionError(f"results.json: fidelity: malformed ({e}); rerun the reproduction") from None
    return tables, causes


def grid(cells: Sequence[Cell]) -> tuple[list[str], list[str], dict[tuple[str, str], Cell]]:
    """One table's rows and columns in the order they first appear, and the cell at each (row, column)."""
    rows = list(dict.fromkeys(c.row for c in cells))
    cols = list(dict.fromkeys(c.column for c in cells))
    return rows, cols, {(c.row, c.column): c for c in cells}


def by_table(cells: Sequence[Cell], tables: Sequence[PaperTable]) -> list[tuple[PaperTable, list[Cell]]]:
    """The cells of each table, in the tables' order (tables without cells left out)."""
    return [(t, [c for c in cells if c.table == t.id]) for t in tables if any(c.table == t.id for c in cells)]


def digits(c: Cell) -> int:
    """The decimals qoslab's numbers of a cell are shown with: one more than the paper prints
    (``72.5`` -> 2), or 4 significant digits when the paper's number is not a plain number."""
    value = c.paper.split(" ± ")[0].removesuffix(" (input)")
    try:
        return decimals_of(value) + 1
    except ValueError:
        x = abs(c.qoslab) if c.qoslab else 0.0
        return max(0, 3 - math.floor(math.log10(x))) if x > 0 else 0


def value_text(c: Cell) -> str:
    """qoslab's value of a cell as shown: ``34.71 ± 1.62``, ``34.71`` with one seed, ``-`` with none."""
    if c.qoslab is None:
        return "-"
    d = digits(c)
    s = f"{c.qoslab:.{d}f}"
    if c.ci_low is not None and c.ci_high is not None and c.ci_high > c.ci_low:
        s += f" ± {(c.ci_high - c.ci_low) / 2:.{d}f}"
    return s


def interval_text(c: Cell) -> str:
    """``33.71 [33.09, 36.33]`` (qoslab's mean and 95 % interval), the mean alone with one seed."""
    if c.qoslab is None:
        return "-"
    d = digits(c)
    if c.ci_low is None or c.ci_high is None or c.ci_high <= c.ci_low:
        return f"{c.qoslab:.{d}f}"
    return f"{c.qoslab:.{d}f} [{c.ci_low:.{d}f}, {c.ci_high:.{d}f}]"


def counts_text(score: Score) -> str:
    """A table's verdicts in a few words: ``3 of 5 agree, 1 differ, 1 uncertain (score 0.60); 1 lost``."""
    head = f"{score.tally(cells=False)} (score {score.value:.2f})" if score.value is not None else "no cell compared"
    rest = [(score.not_run, "not run"), (score.lost, "lost"), (score.input, "inputs (set-up values, not judged)")]
    extra = ", ".join(f"{n} {w}" for n, w in rest if n)
    return f"{head}; {extra}" if extra else head


def not_run_reasons(cells: Sequence[Cell]) -> list[tuple[str, str]]:
    """Each reason of a table's ``not run`` cells with the cells it covers (``""``: all of them)."""
    nr = [c for c in cells if c.verdict == "not run"]
    out = []
    for reason in dict.fromkeys(c.cause for c in nr):
        these = [c for c in nr if c.cause == reason]
        out.append((reason, "" if len(these) == len(nr) else "; ".join(f"{c.row}, {c.column}" for c in these)))
    return out


def md_cell(s: str) -> str:
    """``s`` safe in a Markdown table cell (pipes escaped, one line)."""
    return s.replace("|", "\\|").replace("\n", " ")


def md_table(head: str | Sequence[str], rows: Iterable[str] = (), intro: str = "", *, rule: str = "") -> str:
    """A report's Markdown table: ``intro`` and a blank line (when given), the header row ``head``
    (``| a | b |``, or its cells), its rule (``|---|`` per column unless ``rule`` aligns them), the ``rows``."""
    head = head if isinstance(head, str) else f"| {' | '.join(head)} |"
    return "\n".join([*([intro, ""] if intro else []), head, rule or "|---" * (head.count("|") - 1) + "|", *rows])


def _md_cell(c: Cell | None) -> str:
    if c is None:
        return ""
    if c.verdict == "lost":
        return f"lost · {value_text(c)}" if c.qoslab is not None else "lost"
    if c.verdict == "not run":
        return f"{md_cell(c.paper)} · not run"
    if c.verdict == "input":
        return md_cell(c.paper)
    verdict = f"**{c.verdict}**" if c.verdict == "differs" else c.verdict
    return f"{md_cell(c.paper)} · {value_text(c)} · {verdict}"


def unit_note(cells: Sequence[Cell]) -> str:
    units = list(dict.fromkeys(c.unit for c in cells))
    return f"unit {units[0]}" if len(units) == 1 else "units " + ", ".join(units)


def score_text(score: Score | None) -> str:
    """The score as a sentence (``None``: a reproduction of no paper)."""
    if score is None:
        return "No paper's tables: this reproduction keeps its claims and reports no fidelity score."
    v = score.value
    s = f"**score {v:.2f}**" if v is not None else "**no score** (no cell compared)"
    inputs = f", {score.input} inputs (set-up values, not judged)" if score.input else ""
    return f"{s}: {score.tally()}; {score.not_run} not run, {score.lost} lost{inputs}."


def markdown(cells: Sequence[Cell], tables: Sequence[PaperTable], causes: Sequence[Cause], *, level: int = 3) -> str:
    """The score, a grid per table and the differing cells with their causes, as Markdown (headings at ``level``)."""
    h = "#" * level
    out = [score_text(Score.of(cells)), "", LEGEND]
    for t, tc in by_table(cells, tables):
        rows, cols, at = grid(tc)
        note = [unit_note(tc), counts_text(Score.of(tc))]
        if t.tolerance is not None:
            note.append(f"tolerance ±{t.tolerance:g} for every cell: {t.tolerance_reason}")
        out += ["", f"{h} {t.id}: {t.title} ({t.section})", "", "; ".join(note) + ".", ""]
        out.append("| | " + " | ".join(md_cell(c) for c in cols) + " |")
        out.append("|---" * (len(cols) + 1) + "|")
        out += [f"| {md_cell(r)} | " + " | ".join(_md_cell(at.get((r, c))) for c in cols) + " |" for r in rows]
        for reason, which in not_run_reasons(tc):
            out += ["", f"Not run{' (' + md_cell(which) + ')' if which else ''}: {md_cell(reason.rstrip('.'))}."]
    differing = [c for c in cells if c.verdict == "differs"]
    out += ["", f"{h} Differing cells and their causes", ""]
    if not differing:
        out.append("No cell differs.")
    runs = {c.text: c.run for c in causes}
    for c in differing:
        run = runs.get(c.cause)
        why = f"{md_cell(c.cause)} (rerun: `{run}`)" if run else md_cell(c.cause)
        where = f"- {md_cell(c.table)}, {md_cell(c.row)}, {md_cell(c.column)}:"
        out.append(
            f"{where} paper {md_cell(c.paper)} {md_cell(c.unit)}, qoslab {interval_text(c)}, "
            f"tolerance {c.tolerance:g}: {why}"
            if c.tolerance is not None
            else f"{where} {why}"
        )
    return "\n".join(out).rstrip() + "\n"
