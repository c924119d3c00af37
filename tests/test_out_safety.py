"""qoslab never deletes or moves a path it did not create: ``--out`` and
``Result.save`` refuse a destination qoslab did not write, before the run,
with exit 2, and leave it as it was (issue 11 §1)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import qoslab
from conftest import SCENARIOS

SCENARIO = SCENARIOS / "examples" / "red_dumbbell.toml"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "qoslab", "run", str(SCENARIO), "--set", "duration=1s", "-q", *args],
        capture_output=True,
        text=True,
    )


def test_run_refuses_a_folder_it_did_not_write_and_leaves_it_alone(tmp_path: Path) -> None:
    mine = tmp_path / "project"
    mine.mkdir()
    (mine / "keep.txt").write_text("mine")
    r = cli("--out", str(mine))
    assert r.returncode == 2, r.stderr
    assert "not written by qoslab" in r.stderr and "--out" in r.stderr
    assert "Traceback" not in r.stderr
    assert (mine / "keep.txt").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["project"], "no temporary sibling left behind"


def test_run_refuses_a_file_and_a_device(tmp_path: Path) -> None:
    f = tmp_path / "afile"
    f.write_text("data")
    r = cli("--out", str(f))
    assert r.returncode == 2 and "is not a folder" in r.stderr, r.stderr
    assert f.read_text() == "data"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]
    r = cli("--out", "/dev/null")
    assert r.returncode == 2, r.stderr
    assert Path("/dev/null").is_char_device()


def test_run_replaces_its_own_result_and_marks_what_it_writes(tmp_path: Path) -> None:
    out = tmp_path / "res"
    assert cli("--out", str(out)).returncode == 0
    assert (out / ".qoslab").is_file()
    first = (out / "summary.json").read_text()
    r = cli("--out", str(out), "--seed", "2")
    assert r.returncode == 0, r.stderr
    assert (out / "summary.json").read_text() != first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["res"]


def test_an_unwritable_destination_is_refused_before_the_run(tmp_path: Path) -> None:
    r = cli("--out", "/proc/qoslab_x")
    assert r.returncode == 2 and "cannot be written" in r.stderr, r.stderr


def test_save_refuses_a_scenario_file_and_keeps_it(tmp_path: Path) -> None:
    res = qoslab.run(str(SCENARIO), overrides=["duration=1s"])
    s = tmp_path / "s.toml"
    s.write_text("name = 'x'")
    with pytest.raises(qoslab.ConfigError, match="not a folder"):
        res.save(s)
    assert s.read_text() == "name = 'x'"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.toml"]
