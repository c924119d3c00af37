"""`qoslab compare`: the tolerances of issue 16 and the side-by-side of two results.
Needs no root: two simulations compare as well as a simulation and a testbed run."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import qoslab
from conftest import ROOT, cli
from qoslab.compare import compare, within

SMALL = ROOT / "tests" / "scenarios" / "testbed" / "red_small.toml"


def test_throughput_tolerance_is_five_percent_of_the_reference() -> None:
    assert within("throughput_bps", 100.0, 105.0)
    assert within("throughput_bps", 100.0, 95.0)
    assert not within("throughput_bps", 100.0, 105.1)
    assert not within("throughput_bps", 100.0, 94.9)


def test_loss_tolerance_is_one_percentage_point() -> None:
    assert within("loss", 0.30, 0.31)
    assert within("loss", 0.30, 0.29)
    assert not within("loss", 0.30, 0.3101)
    assert not within("loss", 0.0, 0.011)


def test_delay_tolerance_is_one_millisecond_plus_ten_percent() -> None:
    # 20 ms: ±(1 + 2) ms.
    assert within("delay_mean_s", 0.020, 0.023)
    assert within("delay_mean_s", 0.020, 0.017)
    assert not within("delay_mean_s", 0.020, 0.0231)
    # Near zero the 1 ms dominates.
    assert within("delay_mean_s", 0.0, 0.001)
    assert not within("delay_mean_s", 0.0, 0.0011)


def test_no_sample_on_both_sides_agrees_and_on_one_side_does_not() -> None:
    assert within("delay_mean_s", math.nan, math.nan)
    assert not within("delay_mean_s", 0.01, math.nan)
    assert within("delay_p99_s", 0.01, 0.5) is None


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """The reduced RED dumbbell (2 s), the same with another seed, and with a 4 Mb/s bottleneck."""
    d = tmp_path_factory.mktemp("cmp")
    sc = qoslab.load(SMALL, overrides=["duration=2s"])
    a = qoslab.run(sc).save(d / "a")
    b = qoslab.run(sc, seed=2).save(d / "b")
    c = qoslab.run(sc.with_overrides("topology.bottleneck.rate=4Mbps")).save(d / "c")
    return a, b, c


def test_two_seeds_of_one_scenario_agree_within_tolerance(two_runs: tuple[Path, Path, Path]) -> None:
    a, b, _ = two_runs
    c = compare(qoslab.Result.load(a), qoslab.Result.load(b))
    assert c["within"], c["outside"]
    g = c["groups"]["cbr"]
    assert set(g) >= {"throughput_bps", "loss", "delay_mean_s", "delay_p50_s", "delay_p99_s", "dropped_pkts"}
    q = c["queues"]["r0->sink0"]
    # Drops by reason are listed when either side has some.
    assert "drops_forced" in q and "drops_early_random" in q
    assert "drops_policed" not in q


def test_a_slower_bottleneck_is_flagged_on_throughput_and_loss(two_runs: tuple[Path, Path, Path]) -> None:
    a, _, c = two_runs
    cmp = compare(qoslab.Result.load(a), qoslab.Result.load(c))
    assert not cmp["within"]
    assert "groups:cbr:throughput_bps" in cmp["outside"]
    assert "groups:cbr:loss" in cmp["outside"]
    t = cmp["groups"]["cbr"]["throughput_bps"]
    assert t["within"] is False
    # 2 s includes the start (queues filling) and the packets still in flight at the end.
    assert 4.4e6 < t["a"] <= 5e6 and 3.4e6 < t["b"] <= 4e6
    assert t["diff"] == pytest.approx(t["b"] - t["a"])


def test_cli_compare_prints_tables_json_and_checks(two_runs: tuple[Path, Path, Path]) -> None:
    a, b, c = two_runs
    p = cli("compare", str(a), str(c))
    assert p.returncode == 0, p.stderr
    assert "group cbr" in p.stdout and "queue r0->sink0" in p.stdout
    assert "OUTSIDE" in p.stdout and "outside tolerance: groups:cbr:throughput_bps" in p.stdout
    p = cli("compare", str(a), str(c), "--json")
    d = json.loads(p.stdout)
    assert d["tolerances"]["loss"] == "±1 percentage point"
    assert d["within"] is False
    assert cli("compare", str(a), str(c), "--check").returncode == 1
    assert cli("compare", str(a), str(b), "--check").returncode == 0


def test_cli_compare_refuses_a_folder_that_is_not_a_result(tmp_path: Path, two_runs: tuple[Path, Path, Path]) -> None:
    p = cli("compare", str(two_runs[0]), str(tmp_path))
    assert p.returncode == 2
    assert "not a result folder" in p.stderr and "Traceback" not in p.stderr
