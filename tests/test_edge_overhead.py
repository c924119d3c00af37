"""[Guerin99 §V.A]'s QoS shares in ``reproduce edge``: the cells, the
not-measured path, the example's ``--shares`` flag."""

from __future__ import annotations

import subprocess

import pytest

from qoslab.errors import ReproductionError
from qoslab.reproduce import edge_overhead
from qoslab.reproduce.cells import Measured, NotMeasured, compare
from qoslab.reproduce.paper import load_paper
from qoslab.testbed import runner


def _exe() -> str:
    try:
        return str(runner.binary(edge_overhead.BINARY))
    except runner.TestbedError:
        pytest.skip("the edge_overhead example is not built (make bins)")


def test_quick_run_measures_both_share_cells_one_value_per_repetition() -> None:
    _exe()
    got, data, text = edge_overhead.cells(2)
    assert [type(c) for c in got] == [Measured, Measured]
    assert {c.row for c in got} == {"fast path (cache hit)", "slow path"}
    for c in got:
        assert len(c.values) == 2
        # A share of the QoS path's own time: the QoS queues cost something, never all of it.
        assert all(0 < v < 100 for v in c.values), c
    judged = {c.row: c for c in compare(load_paper("edge"), got) if c.column == "QoS share"}
    assert {c.verdict for c in judged.values()} <= {"agrees", "differs", "uncertain"}
    assert len(data["core"]) == 4
    assert "| slow path |" in text and "Router path" in text


def test_missing_example_gives_not_measured_cells_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> None:
        raise runner.TestbedError(f"the {name} binary was not found")

    monkeypatch.setattr(edge_overhead, "binary", missing)
    got, data, text = edge_overhead.cells(2)
    assert all(isinstance(c, NotMeasured) for c in got) and len(got) == 2
    judged = [c for c in compare(load_paper("edge"), got) if c.column == "QoS share"]
    assert [c.verdict for c in judged] == ["not run", "not run"]
    assert all("edge_overhead binary was not found" in c.cause for c in judged)
    assert data["core"] is None and "not measured" in text.lower()


@pytest.mark.parametrize("arg", [["--shares", "0"], ["--shares", "x"], ["--shares", "1001"], ["--shares"]])
def test_shares_flag_rejects_bad_counts_with_a_clear_error(arg: list[str]) -> None:
    proc = subprocess.run([_exe(), *arg], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2
    assert "--shares" in proc.stderr and "1..=1000" in proc.stderr
    assert "panicked" not in proc.stderr and proc.stdout == ""


@pytest.mark.parametrize("bad", [0, -1, 1001, True, "3"])
def test_repetitions_outside_the_range_are_refused(bad: object) -> None:
    with pytest.raises(ReproductionError, match="repetitions"):
        edge_overhead.run_core(bad)  # type: ignore[arg-type]


def test_malformed_or_incomplete_output_is_refused() -> None:
    with pytest.raises(runner.TestbedError, match="line 1"):
        edge_overhead.parse_rows("not json\n", 1)
    row = '{"repetition": 1, "path": "fast", "base": 40.0, "classified": 50.0, "qos": 90.0}'
    with pytest.raises(runner.TestbedError, match="each path once"):
        edge_overhead.parse_rows(row + "\n", 1)
    both = row + "\n" + row.replace("fast", "slow") + "\n"
    rows = edge_overhead.parse_rows(both, 1)
    # The paper's split: (qos - classified) / qos; the classifier counted as QoS: (qos - base) / qos.
    assert edge_overhead.shares(rows, "fast") == pytest.approx([100 * 40 / 90])
    assert edge_overhead.shares(rows, "fast", classifier_is_qos=True) == pytest.approx([100 * 50 / 90])
