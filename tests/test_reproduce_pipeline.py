"""The whole pipeline of issue 26 on a fake paper (tests/data/fakepaper): paper data ->
Measured -> cells.csv -> report.md and the HTML report -> the generated docs block; and a
deliberately broken mechanism that turns a simulated cell to ``differs``.

``python tests/test_reproduce_pipeline.py`` rewrites the fixture's committed full-run cells and
its generated docs block (after a deliberate change of the rendering or the fake data)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

from qoslab import ReproductionError
from qoslab.reproduce import Claim, Measured, NotMeasured, Outcome, execute
from qoslab.reproduce.cells import Score, read_cells
from qoslab.reproduce.docs import regenerate, write
from qoslab.reproduce.paper import load_paper

FIXTURE = Path(__file__).parent / "data" / "fakepaper"
PAPERDATA = FIXTURE / "paperdata"
DOCS = FIXTURE / "docs"


def _reproduce(ctx):
    """The fake paper's reproduction: made-up values, a function of the seed (deterministic)."""
    s = ctx.seeds

    def v(base, step=0.01):
        return [base + step * i for i in s]

    cells = [
        Measured("Table 2", "RED", "drop rate", v(37.6)),  # agrees
        Measured("Table 2", "RED", "mean queue", v(14.88)),  # agrees
        Measured("Table 2", "RED", "utilization", v(90.0, 9.0)),  # a wide interval: uncertain
        Measured("Table 2", "drop-tail", "drop rate", v(37.5)),  # agrees
        Measured("Table 2", "drop-tail", "mean queue", v(40.0, 0.1)),  # differs, with a cause
        Measured("Table 2", "drop-tail", "utilization", v(99.8)),  # lost in the paper: kept lost
        Measured("Fig. 4", "RED", "early share", v(39.0, 0.2)),  # agrees (the table's tolerance 5)
        NotMeasured("Fig. 4", "drop-tail", "early share", "the fake run records no early drops for drop-tail"),
    ]
    if not ctx.quick:
        cells += [
            Measured("Table 3", "RED", "1,800 s", v(0.27, 0.001)),  # paper 0.24 ± 0.02: partly overlapping
            Measured("Table 3", "drop-tail", "1,800 s", v(0.1, 0.001)),  # differs, unexplained
        ]
    return Outcome(
        claims=[
            Claim("red-below-droptail", "RED's queue is shorter than drop-tail's", "§3.1", "14.9 vs 40", "<", True),
            Claim("rate-identity", "the configured rate is the rate", "1 Mb/s", "1 Mb/s", "=", True, kind="check"),
        ],
        data={},
        cells=cells,
    )


def fake_module() -> types.ModuleType:
    m = types.ModuleType("fake")
    m.NAME, m.TITLE, m.SEED_FILE, m.PAPER = "fake", "A fake paper", "none", "Nobody 2026 (a test fixture)"
    m.PAPER_DATA = PAPERDATA / "fake"
    m.reproduce = _reproduce
    return m


def test_a_full_run_writes_the_committed_cells_and_reports_them(tmp_path):
    s = execute(fake_module(), quick=False, seeds=None, out=tmp_path, log=lambda m: None)
    folder = tmp_path / "fake"
    # Deterministic: the same bytes as the committed full-run cells the docs are generated from.
    assert (folder / "cells.csv").read_bytes() == (DOCS / "data" / "fake" / "cells.csv").read_bytes()
    verdicts = {(c.table, c.row, c.column): c.verdict for c in read_cells(folder / "cells.csv")}
    assert verdicts == {
        ("Table 1", "Source", "rate"): "input",
        ("Table 1", "Source", "packet size"): "input",
        ("Table 2", "RED", "drop rate"): "agrees",
        ("Table 2", "RED", "mean queue"): "agrees",
        ("Table 2", "RED", "utilization"): "uncertain",
        ("Table 2", "drop-tail", "drop rate"): "agrees",
        ("Table 2", "drop-tail", "mean queue"): "differs",
        ("Table 2", "drop-tail", "utilization"): "lost",
        ("Table 3", "RED", "1,800 s"): "agrees",
        ("Table 3", "drop-tail", "1,800 s"): "differs",
        ("Fig. 4", "RED", "early share"): "agrees",
        ("Fig. 4", "drop-tail", "early share"): "not run",
    }
    assert s.score == Score(agrees=5, differs=2, uncertain=1, not_run=1, lost=1, input=2)
    assert s.counts == {"holds": 1, "fails": 0, "not checked": 0}  # the check is not counted
    assert s.check_counts == {"holds": 1, "fails": 0, "not checked": 0}
    doc = json.loads((folder / "results.json").read_text())
    assert doc["score"] == {
        "score": 0.625,
        "compared": 8,
        "agrees": 5,
        "differs": 2,
        "uncertain": 1,
        "not run": 1,
        "lost": 1,
        "input": 2,
    }
    assert [t["id"] for t in doc["fidelity"]["tables"]] == ["Table 1", "Table 2", "Table 3", "Fig. 4"]
    assert [c["kind"] for c in doc["claims"]] == ["claim", "check"]

    report = (folder / "report.md").read_text()
    head = report.split("## Claims")[0]
    assert "**score 0.62**: 5 of 8 cells agree, 2 differ, 1 uncertain; 1 not run, 1 lost, 2 inputs" in head
    assert "units %, pkts; 3 of 5 agree, 1 differ, 1 uncertain (score 0.60); 1 lost." in head
    assert "### Table 2: Drop rate, queue and utilization (§3.1)" in head
    assert "| | drop rate | mean queue | utilization |" in head
    assert "| drop-tail | 37.5 · 37.52 ± 0.02 · agrees | 59 · 40.2 ± 0.2 · **differs** | lost · 99.82 ± 0.02 |" in head
    assert "| RED | 0.24 ± 0.02 · 0.272 ± 0.002 · agrees |" in head
    assert "Not run: the fake run records no early drops for drop-tail." in head
    assert (
        "- Table 2, drop-tail, mean queue: paper 59 pkts, qoslab 40.2 [40.0, 40.4], tolerance 5.9: a fake cause" in head
    )
    assert "(rerun: `qoslab reproduce fake --control limit-60`)" in head
    unexplained = "- Table 3, drop-tail, 1,800 s: paper -0.30 ratio, qoslab 0.102 [0.100, 0.104], tolerance 0.03"
    assert unexplained + ": unexplained" in head
    assert "## Checks (not counted as reproduced claims)" in report and "`rate-identity`" in report

    from qoslab.report import render

    page = render(folder)
    assert page.count('class="v-differs"') == 2 and page.count('class="v-agrees"') == 5
    assert page.count('class="v-uncertain"') == 1 and page.count('class="v-input"') == 2
    assert "<h3>Table 2: Drop rate, queue and utilization (§3.1)</h3>" in page
    assert "score 0.62: 5 of 8 cells agree" in page and "unexplained" in page
    assert "<h2>Checks (not counted as reproduced claims)</h2>" in page
    assert page.count("numbers, cell by cell</h2>") == 1  # not again from report.md
    assert 'src="http' not in page and "<link" not in page  # self-contained


def test_a_quick_run_judges_the_quick_tables_and_says_why_the_others_did_not_run(tmp_path):
    s = execute(fake_module(), quick=True, seeds=None, out=tmp_path, log=lambda m: None)
    assert s.seeds == [1, 2, 3]
    cells = {(c.table, c.row): c for c in s.cells if c.table == "Table 3"}
    assert {c.verdict for c in cells.values()} == {"not run"}
    assert {c.cause for c in cells.values()} == {"1,800 s runs: full run only"}
    assert "Not run: 1,800 s runs: full run only." in (tmp_path / "fake" / "report.md").read_text()


def test_a_key_the_paper_does_not_hold_fails_the_reproduction_and_writes_nothing(tmp_path):
    m = fake_module()
    m.reproduce = lambda ctx: Outcome(claims=[], data={}, cells=[Measured("Table 2", "RED", "delay", [1.0])])
    with pytest.raises(ReproductionError, match=r"no cell \('Table 2', 'RED', 'delay'\)"):
        execute(m, quick=True, seeds=None, out=tmp_path, log=lambda m: None)
    assert list(tmp_path.iterdir()) == []


FAKE_MODULE = """
from pathlib import Path
import sys
sys.path.insert(0, {tests!r})
from test_reproduce_pipeline import _reproduce as reproduce
NAME, TITLE, SEED_FILE, PAPER = "fake", "A fake paper", "none", "Nobody 2026 (a test fixture)"
PAPER_DATA = Path({data!r})
"""


def _registered_fake(tmp_path, monkeypatch, data: Path) -> None:
    from qoslab import reproduce

    name = f"qoslab_fake_paper_{tmp_path.name}"  # one module per test: imports are cached
    (tmp_path / f"{name}.py").write_text(
        FAKE_MODULE.format(tests=str(Path(__file__).parent), data=str(data)), encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(reproduce.REGISTRY, "fake", name)


def test_qoslab_reproduce_prints_the_score_lines(tmp_path, monkeypatch, capsys):
    from qoslab.cli import main

    _registered_fake(tmp_path, monkeypatch, PAPERDATA / "fake")
    out = tmp_path / "out"
    assert main(["reproduce", "fake", "--quick", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "fake: 1 hold, 0 fail, 0 not checked; 1 checks (0 fail)" in printed
    assert "fake: 4 of 6 cells agree, 1 differ, 1 uncertain (score 0.67); 3 not run, 1 lost, 2 inputs" in printed
    assert "overall (1 paper): 4 of 6 cells agree" in printed
    assert (out / "fake" / "cells.csv").is_file() and not (out / "scores.json").exists()  # only for all


def test_malformed_paper_data_is_refused_before_any_run(tmp_path, monkeypatch, capsys):
    from qoslab.cli import main

    bad = tmp_path / "bad"
    shutil.copytree(PAPERDATA / "fake", bad)
    cells = bad / "cells.csv"
    cells.write_text(cells.read_text().replace("Table 2,RED,drop rate,37.5,", "Table 2,RED,drop rate,37.5%,"))
    _registered_fake(tmp_path, monkeypatch, bad)
    out = tmp_path / "out"
    assert main(["reproduce", "fake", "--quick", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{cells}:4: value: '37.5%' is not a printed number" in err and "Traceback" not in err
    assert not out.exists()


def _docs_copy(tmp_path: Path) -> Path:
    d = tmp_path / "docs"
    shutil.copytree(DOCS, d)
    return d


def test_regenerating_the_fixture_docs_from_the_committed_cells_gives_no_diff(tmp_path):
    pages = regenerate(DOCS, paper_root=PAPERDATA)
    assert [p.path.name for p in pages] == ["fake.md"]
    assert not pages[0].stale, "run: python tests/test_reproduce_pipeline.py"
    text = pages[0].new
    assert text.startswith("# Reproduction `fake`") and text.rstrip().endswith("stays as it is.")
    assert "| drop-tail | 37.5 · 37.52 ± 0.02 · agrees | 59 · 40.2 ± 0.2 · **differs** |" in text


def test_the_docs_command_checks_and_rewrites_a_stale_page(tmp_path):
    d = _docs_copy(tmp_path)
    page = d / "fake.md"
    good = page.read_text()
    page.write_text(good.replace("| RED | 37.5 ·", "| RED | 99 ·"))
    cmd = [sys.executable, "-m", "qoslab.reproduce.docs", "--docs", str(d), "--paperdata", str(PAPERDATA)]
    p = subprocess.run([*cmd, "--check"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 1 and "stale" in p.stderr and "Traceback" not in p.stderr
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert page.read_text() == good
    p = subprocess.run([*cmd, "--check"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "1 pages with generated cells, 0 stale" in p.stdout


def test_a_cause_found_after_the_full_run_reaches_the_committed_cells_and_the_page(tmp_path):
    # A controlled run recorded in causes.toml after the full run: regenerating gives the committed
    # cells.csv and the page the new cause (as a run would), values and verdicts untouched.
    d = _docs_copy(tmp_path)
    paper = tmp_path / "paperdata"
    shutil.copytree(PAPERDATA, paper)
    causes = paper / "fake" / "causes.toml"
    causes.write_text(causes.read_text().replace("a fake cause:", "a second fake cause:"))
    cells = d / "data" / "fake" / "cells.csv"
    before = cells.read_text()
    cmd = [sys.executable, "-m", "qoslab.reproduce.docs", "--docs", str(d), "--paperdata", str(paper)]
    p = subprocess.run([*cmd, "--check"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 1 and "fake.md" in p.stderr, p.stdout + p.stderr
    assert subprocess.run(cmd, capture_output=True, text=True, timeout=120).returncode == 0
    after = cells.read_text()
    assert after == before.replace("a fake cause:", "a second fake cause:") and after != before
    assert "a second fake cause:" in (d / "fake.md").read_text()
    p = subprocess.run([*cmd, "--check"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr


def test_a_page_with_markers_and_no_cells_or_cells_and_no_markers_is_an_error(tmp_path):
    d = _docs_copy(tmp_path)
    (d / "data" / "fake" / "cells.csv").unlink()
    with pytest.raises(ReproductionError, match=r"fake.md: has <!-- cells:begin --> .* but there is no"):
        regenerate(d, paper_root=PAPERDATA)
    d = _docs_copy(tmp_path / "b")
    page = d / "fake.md"
    page.write_text(page.read_text().replace("<!-- cells:end -->\n", ""))
    with pytest.raises(ReproductionError, match="1 <!-- cells:begin --> and 0 <!-- cells:end --> lines"):
        regenerate(d, paper_root=PAPERDATA)
    page.write_text("# no markers\n")
    with pytest.raises(ReproductionError, match="no <!-- cells:begin --> / <!-- cells:end --> lines"):
        regenerate(d, paper_root=PAPERDATA)


def test_committed_cells_of_other_paper_data_are_refused(tmp_path):
    d = _docs_copy(tmp_path)
    cells = d / "data" / "fake" / "cells.csv"
    cells.write_text(cells.read_text().replace("Table 2,RED,drop rate,%,37.5,", "Table 2,RED,drop rate,%,38.5,"))
    with pytest.raises(ReproductionError, match=r"not the cells of .*38\.5.*37\.5"):
        regenerate(d, paper_root=PAPERDATA)


def test_the_reproduction_pages_are_generated_from_their_committed_cells():
    """docs/reproductions: every page with cells markers has committed full-run cells in
    data/<folder>/ and regenerating it changes nothing (a page with markers but no cells, or
    cells but no markers, raises)."""
    from qoslab.reproduce.docs import docs_dir

    d = docs_dir()
    assert d == Path(__file__).parents[1] / "docs" / "reproductions"
    pages = regenerate()
    with_data = sorted(p.name for p in (d / "data").iterdir() if p.is_dir()) if (d / "data").is_dir() else []
    assert sorted(p.path.stem for p in pages) == with_data
    stale = [p.path.name for p in pages if p.stale]
    assert not stale, f"{stale}: run python -m qoslab.reproduce.docs"


# -- a deliberately broken mechanism turns a simulated cell to differs -----------------------

RED_PAPER_CELLS = """table,row,column,value,unit,pm,statistic,section,status,note
Table 1,RED,average queue,14.9,pkts,,time average after 5 s,§1,printed,made up from a correct run
Table 1,RED,drop rate,37.6,%,,drops / arrivals,§1,printed,made up from a correct run
"""
RED_TABLES = '[[table]]\nid = "Table 1"\ntitle = "RED dumbbell, 10 s"\nsection = "§1"\nquick = true\n'


def test_a_broken_red_threshold_turns_the_average_queue_cell_to_differs(tmp_path):
    """The examples' RED dumbbell (40 CBR x 1 Mb/s into 25 Mb/s, RED 5/15 pkts), 10 s, seeds 1-3,
    judged against a made-up paper that prints a correct run's figures; then the same with
    RED's max_th broken (15 -> 30 pkts, a typed override): the average queue cell differs,
    the drop rate (fixed by the overload, not by RED) still agrees."""
    import qoslab
    from qoslab.reproduce.cells import compare
    from qoslab.reproduce.examples import measure
    from qoslab.scenario import Scenario

    d = tmp_path / "red"
    d.mkdir()
    (d / "cells.csv").write_text(RED_PAPER_CELLS, encoding="utf-8")
    (d / "tables.toml").write_text(RED_TABLES, encoding="utf-8")
    paper = load_paper(d)
    base = Scenario.load(Path(__file__).parents[1] / "scenarios" / "examples" / "red_dumbbell.toml")
    base = base.with_overrides(("duration", "10s"))

    def verdicts(sc):
        runs = [measure(qoslab.run(sc, seed=seed)) for seed in (1, 2, 3)]
        cells = compare(
            paper,
            [
                Measured("Table 1", "RED", "average queue", [r["red_avg_mean"] for r in runs]),
                Measured("Table 1", "RED", "drop rate", [100 * r["drop_fraction"] for r in runs]),
            ],
        )
        return {c.column: (c.verdict, c.qoslab) for c in cells}

    good = verdicts(base)
    assert good["average queue"][0] == "agrees" and good["drop rate"][0] == "agrees", good
    broken = verdicts(base.with_overrides(("topology.bottleneck.queue.max_th", 30)))
    assert broken["average queue"][0] == "differs", broken
    assert broken["average queue"][1] > 25.0
    assert broken["drop rate"][0] == "agrees", broken


if __name__ == "__main__":  # rewrite the fixture's committed cells and docs block
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        execute(fake_module(), quick=False, seeds=None, out=tmp, log=print)
        shutil.copyfile(Path(tmp) / "fake" / "cells.csv", DOCS / "data" / "fake" / "cells.csv")
    for written in write(regenerate(DOCS, paper_root=PAPERDATA)):
        print(f"rewrote {written}")


def test_testbed_cells_are_judged_by_the_same_rule_into_their_own_file(tmp_path):
    """``--testbed``: a reproduction with ``TESTBED = True`` returns the cells it measured on real
    packets beside the simulated ones; the framework judges them by the one rule into
    ``cells_testbed.csv``, scores them apart and shows them in report.md. A module without
    ``TESTBED`` is refused by name before anything runs."""
    seen = []

    def reproduce(ctx):
        seen.append(ctx.testbed)
        out = _reproduce(ctx)
        out.testbed_cells = [
            Measured("Table 2", "RED", "drop rate", [37.6] * len(ctx.seeds)),  # agrees
            Measured("Table 2", "RED", "mean queue", [30.0] * len(ctx.seeds)),  # differs
        ]
        return out

    m = fake_module()
    m.reproduce, m.TESTBED = reproduce, True
    s = execute(m, quick=True, seeds=None, out=tmp_path, log=lambda _: None, testbed=True)
    assert seen == [True]
    tb = {(c.table, c.row, c.column): c.verdict for c in read_cells(tmp_path / "fake" / "cells_testbed.csv")}
    assert tb[("Table 2", "RED", "drop rate")] == "agrees" and tb[("Table 2", "RED", "mean queue")] == "differs"
    assert s.testbed_score is not None and (s.testbed_score.agrees, s.testbed_score.differs) == (1, 1)
    doc = json.loads((tmp_path / "fake" / "results.json").read_text())
    assert doc["testbed_score"]["agrees"] == 1
    assert "## The paper's numbers on real packets" in (tmp_path / "fake" / "report.md").read_text()
    # Without the testbed: no file, no score; a module without TESTBED refuses --testbed.
    s2 = execute(fake_module(), quick=True, seeds=None, out=tmp_path / "b", log=lambda _: None)
    assert s2.testbed_score is None and not (tmp_path / "b" / "fake" / "cells_testbed.csv").exists()
    with pytest.raises(ReproductionError, match="no set-up on real packets yet; allowed: --testbed with edge"):
        execute(fake_module(), quick=True, seeds=None, out=tmp_path / "c", log=lambda _: None, testbed=True)


def test_the_cli_refuses_testbed_for_a_reproduction_without_it():
    from qoslab.cli import main

    assert main(["reproduce", "dcbt", "--testbed", "--quick", "--out", "/nonexistent/never"]) == 2
