"""The command line end to end: exit codes, output, nothing written on bad input."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import qoslab
from conftest import BAD, GOOD, RED_DUMBBELL, cli, files, header
from qoslab.reproduce.framework import RESULTS_KEYS

RESULT_FILES = [".qoslab", "events.parquet", "flows.parquet", "queues.parquet", "series.parquet", "summary.json"]


def no_traceback(p: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in p.stderr and "Traceback" not in p.stdout, p.stderr
    assert "panicked" not in p.stderr, p.stderr


def test_run_writes_results_to_the_default_folder(tmp_path):
    p = cli("run", str(RED_DUMBBELL), "--set", "duration=2s", "--seed", "3", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    out = tmp_path / "results" / "red_dumbbell"
    assert sorted(x.name for x in out.iterdir()) == RESULT_FILES
    summary = json.loads((out / "summary.json").read_text())
    assert summary["seed"] == 3 and summary["scenario"]["duration"] == "2s"
    assert "red_dumbbell" in p.stdout and "results" in p.stdout
    no_traceback(p)


def test_run_quiet_prints_nothing_and_honours_out(tmp_path):
    p = cli("run", str(RED_DUMBBELL), "--set", "duration=1s", "--out", str(tmp_path / "x"), "--quiet")
    assert p.returncode == 0, p.stderr
    assert p.stdout == "" and p.stderr == ""
    assert sorted(x.name for x in (tmp_path / "x").iterdir()) == RESULT_FILES


def test_validate_schema_and_version():
    p = cli("validate", str(RED_DUMBBELL))
    assert p.returncode == 0 and "valid" in p.stdout, p.stderr
    p = cli("validate", str(RED_DUMBBELL), "--set", "duration=7s", "--echo")
    assert p.returncode == 0 and json.loads(p.stdout)["duration"] == "7s"
    p = cli("schema")
    assert p.returncode == 0 and "properties" in json.loads(p.stdout)
    p = cli("version")
    assert p.returncode == 0 and p.stdout.strip() == f"qoslab {qoslab.__version__}"


@pytest.mark.parametrize(
    "args, message",
    [
        ((), "required"),
        (("run",), "FILE"),
        (("frobnicate",), "invalid choice"),
        (("run", "x.toml", "--seed", "abc"), "invalid seed"),
        (("run", "x.toml", "--seed", "-4"), "out of range"),
        (("run", "x.toml", "--set", "duration"), "key.path=value"),
        (("run", "x.toml", "--bogus"), "unrecognized arguments"),
        (("reproduce", "examples", "--seeds", "0"), "allowed: an integer >= 1"),
        (("run", "x.toml", "--max-memory", "lots"), "invalid --max-memory 'lots'; allowed: a size such as 16GiB"),
        (("validate", "x.toml", "--max-memory", "0GiB"), "invalid --max-memory"),
        (("validate", "x.toml", "--max-events", "-3"), "invalid --max-events '-3'; allowed: a count such as 1e11"),
    ],
)
def test_bad_flags_exit_2_with_a_message(args, message, tmp_path):
    p = cli(*args, cwd=tmp_path)
    assert p.returncode == 2
    assert message in p.stderr and "usage:" in p.stderr
    no_traceback(p)
    assert list(tmp_path.iterdir()) == []


def _assert_rejected(
    scenario: Path, tmp_path: Path, expect: str | None, line: str | None, origin: Path | None = None
) -> None:
    for args in (("validate", str(scenario)), ("run", str(scenario), "--out", str(tmp_path / "out"))):
        p = cli(*args, cwd=tmp_path)
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        no_traceback(p)
        assert p.stdout == ""
        if expect:
            assert expect in p.stderr, p.stderr
        if line:
            assert f"{origin or scenario}:{line}:" in p.stderr, p.stderr
        assert not (tmp_path / "out").exists() and not (tmp_path / "results").exists()
        assert [x for x in tmp_path.iterdir() if x.name.startswith(".")] == []


@pytest.mark.parametrize("scenario", files(BAD), ids=lambda p: p.stem)
def test_bad_scenario_files_are_rejected_cleanly(scenario, tmp_path):
    expect = header(scenario, "expect")
    assert expect, f"{scenario.name} lacks its '# expect:' header"
    # A problem inside a file the scenario names (replay CSV, descriptor file) is at that file's line.
    origin = header(scenario, "origin")
    _assert_rejected(scenario, tmp_path, expect, header(scenario, "line"), scenario.parent / origin if origin else None)


@pytest.mark.parametrize(
    "text, expect, line",
    [
        ('name = "x"\nduration = "1s"\n[topology\n', None, "3"),
        ('name = "x"\nduration = "1s"\n[topology]\npreset = "ring"\n', "ring", None),
        ("", "name", None),
    ],
)
def test_inline_bad_scenarios_are_rejected_cleanly(text, expect, line, tmp_path):
    f = tmp_path / "in" / "s.toml"
    f.parent.mkdir()
    f.write_text(text)
    work = tmp_path / "work"
    work.mkdir()
    _assert_rejected(f, work, expect, line)


def test_missing_file_and_bad_override_exit_2(tmp_path):
    p = cli("run", str(tmp_path / "missing.toml"), cwd=tmp_path)
    assert p.returncode == 2 and "missing.toml: cannot read" in p.stderr
    no_traceback(p)
    p = cli("validate", str(RED_DUMBBELL), "--set", "topology.bottleneck.queue.type=blue", cwd=tmp_path)
    assert p.returncode == 2 and "blue" in p.stderr
    no_traceback(p)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("scenario", files(GOOD), ids=lambda p: p.stem)
def test_good_scenarios_validate_and_run(scenario, tmp_path):
    p = cli("run", str(scenario), "--out", str(tmp_path / "r"), "--quiet")
    assert p.returncode == 0, p.stderr
    res = qoslab.Result.load(tmp_path / "r")
    f = res.flows
    assert (f["sent_pkts"] == f["delivered_pkts"] + f["dropped_pkts"] + f["in_flight_pkts"]).all()
    rev = f["reverse_delivered_pkts"] + f["reverse_dropped_pkts"] + f["reverse_in_flight_pkts"]
    assert (f["reverse_sent_pkts"] == rev).all()


LONG = ("--max-memory", "1TiB")


def test_ctrl_c_stops_a_run_without_traceback_or_results(tmp_path):
    code = (
        "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "from qoslab.cli import main; print('imported', flush=True); sys.exit(main(sys.argv[1:]))"
    )
    out = tmp_path / "out"
    proc = subprocess.Popen(
        # 100,000 s would need ~60 GiB of series (estimated): allowed here, since it is interrupted.
        [sys.executable, "-c", code, "run", str(RED_DUMBBELL), "--set", "duration=100000s", *LONG, "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "imported"
    time.sleep(1.5)  # loading, validation, and well into the run
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGINT)
    try:
        _stdout, stderr = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("the run did not stop within 60 s of Ctrl-C")
    assert proc.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_reproduce_examples_quick(tmp_path):
    p = cli("reproduce", "examples", "--quick", "--out", str(tmp_path), timeout=600)
    assert p.returncode == 0, p.stderr
    no_traceback(p)
    folder = tmp_path / "examples"
    doc = json.loads((folder / "results.json").read_text())
    assert tuple(doc) == RESULTS_KEYS  # the order tests/test_reproduce_framework.py fixes
    assert doc["name"] == "examples" and doc["quick"] is True and doc["seeds"] == [1, 2, 3]
    assert doc["score"] is None and doc["fidelity"] is None  # no paper's tables: no score
    assert "examples: no paper's tables, no score" in p.stdout
    assert doc["seed_file"] == "Claypool00" and doc["qoslab_version"] == qoslab.__version__
    ids = [c["id"] for c in doc["claims"]]
    assert ids == [
        "red-drops-early-not-on-overflow",
        "red-average-within-thresholds",
        "red-fair-loss",
        "red-utilization",
        "red-drop-rate-matches-reference",
    ]
    for c in doc["claims"]:
        assert {"id", "text", "paper", "measured", "tolerance", "holds"} <= set(c)
        assert c["holds"] in (True, False, None)
        if c["holds"] is not True:
            assert c["explanation"]
        assert "drop-tail" in c["measured"]
    assert doc["claims"][-1]["holds"] is None  # full runs only
    report = (folder / "report.md").read_text()
    for i in ids:
        assert f"`{i}`" in report
    for png in ("queue_over_time.png", "flow_loss.png", "drops_by_reason.png"):
        assert (folder / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"]({png})" in report
    for variant in ("red", "droptail"):
        assert sorted(x.name for x in (folder / variant / "seed_1").iterdir()) == RESULT_FILES
    assert "overall" in p.stdout and "red-drops-early-not-on-overflow" in p.stdout
    assert sorted(x.name for x in tmp_path.iterdir()) == [".store", "examples"]
    # The same command again takes every run from OUT/.store and writes the same results.
    again = cli("reproduce", "examples", "--quick", "--out", str(tmp_path), timeout=600)
    assert again.returncode == 0, again.stderr
    assert "examples: 0 runs computed, " in again.stderr, again.stderr
    redo = json.loads((folder / "results.json").read_text())
    assert {**redo, "wall_s": 0} == {**doc, "wall_s": 0}


def test_reproduce_unknown_name_exits_2(tmp_path):
    p = cli("reproduce", "nonesuch", "--out", str(tmp_path))
    assert p.returncode == 2 and "available: examples" in p.stderr
    no_traceback(p)
    assert list(tmp_path.iterdir()) == []


def test_progress_bar_appears_only_after_two_seconds():
    import io

    from qoslab import _progress as c

    buf = io.StringIO()
    off = c.Progress("none", label="x", stream=buf)
    off(0.5)
    assert off.bar is None
    bar = c.Progress("bar", label="x", stream=buf)
    bar(0.1)
    assert bar.bar is None  # a short run shows nothing
    bar.t0 -= c.PROGRESS_AFTER_S + 0.1
    bar(0.5)
    assert bar.bar is not None
    bar(0.9)
    bar.close()
    assert "x" in buf.getvalue()


def test_default_folder_name_is_made_safe(tmp_path):
    from qoslab.cli import _folder_name

    assert _folder_name("red_dumbbell") == "red_dumbbell"
    assert _folder_name("../../etc") == "_.._etc"
    assert _folder_name("a b/c") == "a_b_c"
    assert _folder_name("..") == "scenario"
