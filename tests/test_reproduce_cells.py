"""The papers' numbers as data: the loader, the tolerance rule, the one verdict rule,
the join and the score."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from qoslab import ReproductionError
from qoslab.reproduce.cells import CELL_COLUMNS, Measured, NotMeasured, Score, cells_csv, compare, judge, read_cells
from qoslab.reproduce.paper import last_digit_unit, load_paper, printed_tolerance

HEADER = "table,row,column,value,unit,pm,statistic,section,status,note\n"
TABLES = """
[[table]]
id = "Table 2"
title = "Utilization"
section = "§5.2"
quick = true

[[table]]
id = "Table 3"
title = "Delays"
section = "§5.3"
quick = false
not_run_reason = "3100 s runs: full run only"
"""
ROWS = """Table 2,POO2,MBAC %Utilization,61,%,,mean,§5.2,printed,
Table 2,POO2,SSAC %Utilization,40,%,,mean,§5.2,printed,
Table 2,EXP2,MBAC %Utilization,,%,,mean,§5.2,lost,garbled digits
Table 3,CBR,delay,"1,800",ms,0.5,mean over 10 runs,§5.3,printed,
"""


def _paper(tmp_path: Path, rows: str = ROWS, tables: str = TABLES, causes: str | None = None) -> Path:
    d = tmp_path / "paper"
    d.mkdir(exist_ok=True)
    (d / "cells.csv").write_text(HEADER + rows, encoding="utf-8")
    (d / "tables.toml").write_text(tables, encoding="utf-8")
    if causes is not None:
        (d / "causes.toml").write_text(causes, encoding="utf-8")
    return d


# -- the tolerance rule ---------------------------------------------------------


@pytest.mark.parametrize(
    ("printed", "unit", "tol"),
    [
        ("93", 1.0, 9.3),  # 10 % beats one unit
        ("72.5", 0.1, 7.25),
        ("0.24", 0.01, 0.024),
        ("-0.30", 0.01, 0.03),  # the sign is ignored, the trailing zero counts as printed
        ("1,800", 1.0, 180.0),  # thousands commas
        ("5", 1.0, 1.0),  # one unit of the last digit beats 10 %
        ("0.05", 0.01, 0.01),
        ("0", 1.0, 1.0),
        ("2.99", 0.01, 0.299),
        ("1.5e-3", 1e-4, 1.5e-4),
        ("\u22120.30", 0.01, 0.03),  # a typographic minus
    ],
)
def test_tolerance_is_ten_percent_or_one_unit_of_the_last_printed_digit(printed, unit, tol):
    assert last_digit_unit(printed) == pytest.approx(unit, rel=1e-12)
    assert printed_tolerance(printed) == tol  # exact: computed in decimal


@pytest.mark.parametrize("bad", ["72.5%", "1,80", "abc", "", "1.2.3", "nan", "inf", "-", "12,34.5", "~5"])
def test_a_value_that_is_not_a_printed_number_is_refused(bad):
    with pytest.raises(ValueError):
        printed_tolerance(bad)


# -- the verdict rule -------------------------------------------------------------


def test_a_tight_interval_around_the_paper_agrees():
    j = judge([60.9, 61.0, 61.1], paper=61.0, tol=6.1)
    assert j.verdict == "agrees" and j.mean == pytest.approx(61.0)
    assert j.ci_low < 61.0 < j.ci_high and j.ci_high - j.ci_low < 2 * 6.1


def test_a_paper_value_outside_the_widened_interval_differs():
    # MACE Table 2's POO2 utilization: qoslab about half the paper's.
    j = judge([34.5, 34.7, 34.9], paper=61.0, tol=6.1)
    assert j.verdict == "differs"
    assert judge([90.0, 90.2, 89.8], paper=61.0, tol=6.1).verdict == "differs"  # above, too


def test_a_wide_interval_that_holds_the_paper_is_uncertain_never_agrees():
    j = judge([50.0, 70.0], paper=61.0, tol=6.1)
    assert j.verdict == "uncertain" and j.ci_high - j.ci_low > 2 * 6.1


def test_the_interval_edges_exactly_at_plus_minus_tol_are_inside():
    # Two equal seeds: a zero-width interval at 90; tol 10 reaches exactly 80 and 100.
    assert judge([90.0, 90.0], paper=100.0, tol=10.0).verdict == "agrees"
    assert judge([90.0, 90.0], paper=80.0, tol=10.0).verdict == "agrees"
    assert judge([90.0, 90.0], paper=100.5, tol=10.0).verdict == "differs"
    assert judge([90.0, 90.0], paper=79.5, tol=10.0).verdict == "differs"
    # An interval exactly 2 tol wide agrees; wider is uncertain. Seeds 89, 91: half-width 12.706 (t, 1 df).
    j = judge([89.0, 91.0], paper=90.0, tol=1.0)
    assert j.ci_high - j.ci_low == pytest.approx(2 * 12.706)
    half = (j.ci_high - j.ci_low) / 2
    assert judge([89.0, 91.0], paper=90.0, tol=half).verdict == "agrees"
    assert judge([89.0, 91.0], paper=90.0, tol=half * (1 - 1e-12)).verdict == "uncertain"


def test_one_seed_is_uncertain_unless_it_differs():
    j = judge([61.0], paper=61.0, tol=6.1)
    assert j.verdict == "uncertain" and j.ci_low == j.ci_high == 61.0
    assert judge([30.0], paper=61.0, tol=6.1).verdict == "differs"


def test_a_paper_interval_partly_overlapping_is_not_differs():
    # The paper prints 50 ± 5 (tol = pm = 5): its interval [45, 55] against qoslab 59 widened to [54, 64].
    assert judge([59.0, 59.0], paper=50.0, pm=5.0, tol=5.0).verdict == "agrees"
    # qoslab 61: widened [56, 66], wholly above the paper's [45, 55].
    assert judge([61.0, 61.0], paper=50.0, pm=5.0, tol=5.0).verdict == "differs"
    # The same from below.
    assert judge([41.0, 41.0], paper=50.0, pm=5.0, tol=5.0).verdict == "agrees"
    assert judge([39.0, 39.0], paper=50.0, pm=5.0, tol=5.0).verdict == "differs"


def test_the_verdict_rule_refuses_what_it_cannot_judge():
    with pytest.raises(ReproductionError):
        judge([], paper=1.0, tol=0.1)
    with pytest.raises(ReproductionError):
        judge([math.nan, 1.0], paper=1.0, tol=0.1)
    with pytest.raises(ReproductionError):
        judge([1.0], paper=1.0, tol=-1.0)


def test_measured_refuses_nan_and_empty_values():
    assert Measured("Table 2", "POO2", "MBAC", [1, 2]).values == [1.0, 2.0]
    with pytest.raises(ReproductionError, match="NaN"):
        Measured("Table 2", "POO2", "MBAC", [1.0, math.nan])
    with pytest.raises(ReproductionError, match="no values"):
        Measured("Table 2", "POO2", "MBAC", [])
    with pytest.raises(ReproductionError, match="row"):
        Measured("Table 2", "", "MBAC", [1.0])


# -- the join ---------------------------------------------------------------------------


def test_compare_judges_every_paper_cell_in_the_papers_order(tmp_path):
    paper = load_paper(_paper(tmp_path))
    cells = compare(
        paper,
        [
            Measured("Table 2", "POO2", "MBAC %Utilization", [34.5, 34.7, 34.9]),
            Measured("Table 2", "POO2", "SSAC %Utilization", [40.0, 40.1, 39.9]),
            Measured("Table 2", "EXP2", "MBAC %Utilization", [65.3, 65.1, 65.5]),
        ],
    )
    assert [c.row for c in cells] == ["POO2", "POO2", "EXP2", "CBR"]
    v = {(c.row, c.column): c for c in cells}
    assert v["POO2", "MBAC %Utilization"].verdict == "differs"
    assert v["POO2", "MBAC %Utilization"].cause == "unexplained"
    assert v["POO2", "SSAC %Utilization"].verdict == "agrees" and v["POO2", "SSAC %Utilization"].cause == ""
    lost = v["EXP2", "MBAC %Utilization"]
    assert lost.verdict == "lost" and lost.cause == "garbled digits" and lost.qoslab == pytest.approx(65.3)
    assert lost.paper == "lost" and lost.tolerance is None
    nr = v["CBR", "delay"]
    assert nr.verdict == "not run" and nr.cause == "3100 s runs: full run only" and nr.qoslab is None
    assert nr.paper == "1,800 ± 0.5" and nr.tolerance == 0.5  # the printed ± is the tolerance
    s = Score.of(cells)
    assert (s.agrees, s.differs, s.uncertain, s.not_run, s.lost) == (1, 1, 0, 1, 1)
    assert s.value == 0.5
    assert s.line("mace") == "mace: 1 of 2 cells agree, 1 differ, 0 uncertain (score 0.50); 1 not run, 1 lost"


def test_a_measured_key_the_paper_does_not_hold_fails_loudly(tmp_path):
    paper = load_paper(_paper(tmp_path))
    with pytest.raises(ReproductionError, match=r"no cell \('Table 2', 'POO3'.*has rows EXP2, POO2"):
        compare(paper, [Measured("Table 2", "POO3", "MBAC %Utilization", [1.0])])
    with pytest.raises(ReproductionError, match="tables: Table 2, Table 3"):
        compare(paper, [Measured("Table 9", "x", "y", [1.0])])
    with pytest.raises(ReproductionError, match="given twice"):
        compare(paper, [Measured("Table 2", "POO2", "MBAC %Utilization", [1.0])] * 2)


def test_inputs_are_kept_apart_and_a_not_measured_cell_carries_its_own_reason(tmp_path):
    rows = ROWS + "Table 2,POO2,T on,350,ms,,configured,§4.1,input,Table 1's mean ON time\n"
    paper = load_paper(_paper(tmp_path, rows=rows))
    cells = compare(paper, [NotMeasured("Table 2", "POO2", "SSAC %Utilization", "the paper defines no such ratio")])
    v = {(c.row, c.column): c for c in cells}
    assert v["POO2", "T on"].verdict == "input" and v["POO2", "T on"].paper == "350 (input)"
    assert v["POO2", "T on"].tolerance is None and v["POO2", "T on"].cause == "Table 1's mean ON time"
    nm = v["POO2", "SSAC %Utilization"]
    assert nm.verdict == "not run" and nm.cause == "the paper defines no such ratio"
    s = Score.of(cells)
    assert (s.compared, s.not_run, s.lost, s.input) == (0, 3, 1, 1) and s.value is None
    assert s.line("x").endswith("3 not run, 1 lost, 1 inputs")
    with pytest.raises(ReproductionError, match=r"cells.csv:6: cell .* is an input"):
        compare(paper, [Measured("Table 2", "POO2", "T on", [350.0])])
    with pytest.raises(ReproductionError, match="no cell"):
        compare(paper, [NotMeasured("Table 2", "POO9", "T on", "why")])
    with pytest.raises(ReproductionError, match="reason"):
        NotMeasured("Table 2", "POO2", "T on", " ")


def test_a_table_tolerance_overrides_the_rule_and_a_cause_explains_a_differing_cell(tmp_path):
    tables = TABLES.replace("quick = true", 'quick = true\ntolerance = 30.0\ntolerance_reason = "one run, no interval"')
    causes = """
[[cause]]
table = "Table 2"
rows = ["POO2"]
columns = ["*"]
text = "MBAC without departures: 34.7 -> 58.9 %"
run = "qoslab reproduce mace --control no-departures"
"""
    paper = load_paper(_paper(tmp_path, tables=tables, causes=causes))
    cells = compare(paper, [Measured("Table 2", "POO2", "MBAC %Utilization", [34.5, 34.7, 34.9])])
    assert cells[0].tolerance == 30.0 and cells[0].verdict == "agrees"
    cells = compare(paper, [Measured("Table 2", "POO2", "MBAC %Utilization", [24.5, 24.7, 24.9])])
    assert cells[0].verdict == "differs" and cells[0].cause == "MBAC without departures: 34.7 -> 58.9 %"


def test_cells_csv_round_trips(tmp_path):
    paper = load_paper(_paper(tmp_path))
    cells = compare(paper, [Measured("Table 2", "POO2", "MBAC %Utilization", [34.5, 34.7, 34.9])])
    text = cells_csv(cells)
    assert text.splitlines()[0] == ",".join(CELL_COLUMNS)
    assert '"1,800 ± 0.5"' in text  # RFC 4180 quoting
    p = tmp_path / "cells.csv"
    p.write_text(text, encoding="utf-8")
    back = read_cells(p)
    assert [c.verdict for c in back] == [c.verdict for c in cells]
    assert back[0].qoslab == pytest.approx(34.7) and back[0].ci_low == pytest.approx(cells[0].ci_low, rel=1e-5)
    assert cells_csv(back) == text


# -- malformed paper data: file, line and field named -------------------------------------


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ("Table 2,POO2,MBAC,61%,%,,mean,§5.2,printed,\n", r"cells.csv:2: value: '61%' is not a printed number"),
        ("Table 2,POO2,MBAC,61,%,,mean,§5.2,typed,\n", r"cells.csv:2: status: 'typed'; allowed: printed, stated, lost"),
        ("Table 2,POO2,MBAC,61,%,-1,mean,§5.2,printed,\n", r"cells.csv:2: pm: '-1'; allowed: a positive"),
        ("Table 2,POO2,MBAC,61,,,mean,§5.2,printed,\n", r"cells.csv:2: unit: empty"),
        ("Table 2,POO2,MBAC,61,%,,mean,§5.2,lost,\n", r"cells.csv:2: value: '61' with status lost"),
        ("Table 2,POO2,MBAC,61,%,,mean,§5.2\n", r"cells.csv:2: 8 fields; allowed: 10"),
        (
            "Table 2,POO2,MBAC,61,%,,mean,§5.2,printed,\nTable 2,POO2,MBAC,62,%,,mean,§5.2,printed,\n",
            r"cells.csv:3: \(table, row, column\) \('Table 2', 'POO2', 'MBAC'\) already on line 2",
        ),
        ("Table 9,POO2,MBAC,61,%,,mean,§5.2,printed,\n", r"table 'Table 9' of cells.csv has no \[\[table\]\] entry"),
        ("", r"cells.csv: no cells"),
    ],
)
def test_a_malformed_cells_csv_names_file_line_and_field(tmp_path, rows, message):
    table2 = TABLES.split('[[table]]\nid = "Table 3"')[0]
    with pytest.raises(ReproductionError, match=message):
        load_paper(_paper(tmp_path, rows=rows, tables=table2))


@pytest.mark.parametrize(
    ("tables", "message"),
    [
        (TABLES.replace("quick = true", 'quick = "yes"'), r"tables.toml:2: quick: 'yes'; allowed: true or false"),
        (TABLES.replace('not_run_reason = "3100 s runs: full run only"', ""), r"tables.toml:8: not_run_reason"),
        (TABLES.replace("quick = true", "quick = true\ntolerance = 2.0"), r"tables.toml:2: tolerance_reason"),
        (TABLES.replace("quick = true", "quick = true\ntolerance = -2.0"), r"tables.toml:2: tolerance: -2.0"),
        (TABLES.replace("quick = true", "quick = true\ntolerence = 2.0"), r"tables.toml:2: tolerence: unknown field"),
        (TABLES.replace('id = "Table 3"', 'id = "Table 2"'), r"tables.toml:8: id: 'Table 2' already at"),
        (TABLES + '\n[[table]]\nid = "Table 4"\ntitle = "t"\nsection = "s"\nquick = true\n', r"'Table 4' has no cells"),
        (TABLES.replace('title = "Delays"', "title = "), r"tables.toml:10: not TOML: Invalid value \(column 9\)"),
    ],
)
def test_a_malformed_tables_toml_names_file_line_and_field(tmp_path, tables, message):
    with pytest.raises(ReproductionError, match=message):
        load_paper(_paper(tmp_path, tables=tables))


CAUSE = '[[cause]]\ntable = "Table 2"\nrows = ["*"]\ncolumns = ["*"]\ntext = "t"\nrun = "r"\n'


@pytest.mark.parametrize(
    ("causes", "message"),
    [
        (CAUSE.replace('rows = ["*"]', 'rows = ["POO9"]'), r"causes.toml:1: rows: 'POO9'"),
        (CAUSE.replace('"Table 2"', '"Table 7"'), r"causes.toml:1: table: 'Table 7'"),
        (CAUSE.replace('rows = ["*"]', "rows = []"), r"causes.toml:1: rows: \[\]"),
        (CAUSE.replace('run = "r"\n', ""), r"causes.toml:1: run: ''"),
        (CAUSE + "why = 1\n", r"causes.toml:1: why: unknown field"),
    ],
)
def test_a_malformed_causes_toml_names_file_line_and_field(tmp_path, causes, message):
    with pytest.raises(ReproductionError, match=message):
        load_paper(_paper(tmp_path, causes=causes))


def test_paper_data_reads_are_bounded(tmp_path):
    d = _paper(tmp_path)
    with open(d / "cells.csv", "a", encoding="utf-8") as f:
        f.write("x" * (3 << 20))
    with pytest.raises(ReproductionError, match="larger than"):
        load_paper(d)
    (d / "cells.csv").write_bytes(HEADER.encode() + b"Table 2,\xff\n")
    with pytest.raises(ReproductionError, match=r"cells.csv:2: not UTF-8"):
        load_paper(d)
    with pytest.raises(ReproductionError, match="no paper data folder"):
        load_paper(tmp_path / "nothing")


def test_every_committed_paper_data_folder_loads():
    from qoslab.reproduce.paper import paperdata_root

    root = paperdata_root()
    for d in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        paper = load_paper(d)
        assert paper.cells and paper.tables
