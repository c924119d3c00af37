"""Bad input gets a clear error naming what the user gave, never a traceback,
and progress off a terminal (§3)."""

from __future__ import annotations

import importlib
import io
from typing import Any

import pytest

import qoslab
from conftest import SCENARIOS, cli
from qoslab import cli as qcli

SCENARIO = SCENARIOS / "examples" / "red_dumbbell.toml"
CAC = {"--capacity": "100Mbps", "--buffer": "10", "--iplr": "1e-3", "--rate": "1Mbps"}


def run_cac(capsys: pytest.CaptureFixture[str], **changes: str) -> tuple[int, str]:
    args = {**CAC, **{f"--{k.replace('_', '-')}": v for k, v in changes.items()}}
    code = qcli.main(["cac", *[x for kv in args.items() for x in kv]])
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("changes", "flag"),
    [
        ({"buffer": "99999999999999999999999"}, "--buffer"),
        ({"buffer": "0"}, "--buffer"),
        ({"holding": "-1s", "arrival_rate": "1"}, "--holding"),
        ({"holding": "10s", "arrival_rate": "-1"}, "--arrival-rate"),
        ({"holding": "10s", "arrival_rate": "-1e-3"}, "--arrival-rate"),
        ({"iplr": "-1e-3"}, "--iplr"),
        ({"iplr": "nan"}, "--iplr"),
        ({"capacity": "fast"}, "--capacity"),
        ({"rate": "-1Mbps"}, "--rate"),
        ({"holding": "10s", "blocking": "x"}, "--blocking"),
        ({"rate": "80Mbps", "holding": "10s", "blocking": "0.01"}, "--blocking"),
        ({"capacity": "100Tbps", "rate": "1bps", "holding": "1s", "blocking": "0.01"}, "--blocking"),
    ],
)
def test_cac_names_the_flag_of_every_bad_value(capsys: pytest.CaptureFixture[str], changes: dict, flag: str) -> None:
    code, err = run_cac(capsys, **changes)
    assert code == 2, err
    assert err.startswith(f"{flag}: "), err
    assert "Traceback" not in err and "expected one argument" not in err


def test_cac_with_no_connection_says_why_in_terms_of_the_flags(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cac(capsys, rate="80Mbps", holding="10s", blocking="0.01")
    assert code == 2
    assert "N_max = 0" in err and "--rate 80Mbps" in err and "servers: (0)" not in err


def test_cac_huge_buffer_from_the_command_line_has_no_traceback() -> None:
    p = cli("cac", *[x for kv in {**CAC, "--buffer": "99999999999999999999999"}.items() for x in kv])
    assert p.returncode == 2 and p.stderr.startswith("--buffer: ") and "Traceback" not in p.stderr, p.stderr


def test_cac_api_refuses_a_huge_buffer_with_a_config_error() -> None:
    from qoslab.cac import cac

    with pytest.raises(qoslab.ConfigError, match="buffer"):
        cac("100Mbps", 99999999999999999999999, 1e-3, "1Mbps")


def test_overrides_given_as_one_string_are_refused_clearly() -> None:
    with pytest.raises(qoslab.ConfigError, match=r"overrides: got the string 'duration=1s'.*\['duration=1s'\]"):
        qoslab.load(SCENARIO, overrides="duration=1s")  # type: ignore[arg-type]
    sc = qoslab.load(SCENARIO)
    with pytest.raises(qoslab.ConfigError, match="overrides: got the string"):
        qoslab.run(sc, overrides="duration=1s")  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [1e308, float("inf"), float("nan"), -1.0, 10**20])
def test_an_absurd_duration_number_is_a_config_error(value: float) -> None:
    from qoslab import _units

    with pytest.raises(qoslab.ConfigError, match=r"duration: .* out of range"):
        _units.dur(value, "duration")


def test_a_builder_duration_of_1e308_is_a_config_error_not_an_overflow() -> None:
    with pytest.raises(qoslab.ConfigError, match=r"duration: 1e\+308 s is out of range"):
        qoslab.Scenario.build(name="x", duration=1e308, topology={"preset": "dumbbell", "sources": 1})


@pytest.fixture(scope="module")
def small() -> qoslab.Result:
    return qoslab.run(str(SCENARIO), overrides=["duration=2s"])


def test_metric_of_an_unknown_entity_lists_the_closest_first(small: qoslab.Result) -> None:
    with pytest.raises(KeyError, match=r"no entity 'r0->snk0' in the series; entities: r0->sink0, "):
        small.metric("r0->snk0", "backlog_pkts")


def test_metric_of_an_unknown_metric_lists_the_entitys_metrics(small: qoslab.Result) -> None:
    with pytest.raises(KeyError, match=r"no metric 'backlg_pkts' for 'r0->sink0'.*metrics: backlog_pkts, "):
        small.metric("r0->sink0", "backlg_pkts")
    with pytest.raises(KeyError, match="kinds: queue"):
        small.metric("r0->sink0", "backlog_pkts", entity_kind="qeue")
    assert len(small.metric("r0->sink0", "backlog_pkts")) > 0
    assert small.metric("r0->sink0", "no_such", allow_missing=True).empty


# -- progress --------------------------------------------------


def _progress() -> Any:
    """``qoslab._progress``, imported by each test (so that each fails alone without it)."""
    return importlib.import_module("qoslab._progress")


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_plain_progress_writes_one_line_every_five_seconds() -> None:
    clock, out = Clock(), io.StringIO()
    p = _progress().Progress("plain", "red", clock=clock, stream=out)
    for step in range(1, 121):  # 12 s of wall time, a call every 0.1 s
        clock.t += 0.1
        p(step / 120)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2, lines
    assert lines[0].startswith("qoslab: red: 42% simulated, 0:00:05 elapsed, ~0:00:07 left"), lines[0]
    assert "0:00:10 elapsed" in lines[1]


def test_the_bar_counts_elapsed_time_from_the_start_of_the_run() -> None:
    clock = Clock()
    p = _progress().Progress("bar", "red", clock=clock, stream=io.StringIO())
    clock.t += 1.0
    p(0.1)
    assert p.elapsed() is None  # not shown yet
    clock.t += 37.0
    p(0.38)
    try:
        assert p.elapsed() == pytest.approx(38.0)
    finally:
        p.close()


def test_progress_none_writes_nothing() -> None:
    clock, out = Clock(), io.StringIO()
    p = _progress().Progress("none", "red", clock=clock, stream=out)
    clock.t += 60
    p(0.5)
    assert out.getvalue() == ""


def test_progress_defaults_to_plain_off_a_terminal_and_none_when_quiet() -> None:
    assert _progress().progress_mode(quiet=False, choice=None) == "plain"  # pytest's stderr is not a terminal
    assert _progress().progress_mode(quiet=True, choice="bar") == "none"
    assert _progress().progress_mode(quiet=False, choice="bar") == "bar"


def test_run_takes_progress_bar_plain_none(tmp_path) -> None:
    for mode in ("plain", "none"):
        p = cli("run", str(SCENARIO), "--set", "duration=1s", "--progress", mode, "--out", str(tmp_path / mode))
        assert p.returncode == 0, p.stderr
    p = cli("run", str(SCENARIO), "--progress", "fancy")
    assert p.returncode == 2 and "--progress" in p.stderr
