"""qoslab never deletes or moves a path it did not create: ``--out`` and
``Result.save`` refuse a destination qoslab did not write, before the run,
with exit 2, and leave it as it was."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

import qoslab
from conftest import SCENARIOS
from qoslab import _atomic

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
    r = cli("--out", str(out), "--seed", "2", "--overwrite")
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


# -- overwriting a previous result ------------------------------


def _seed_of(folder: Path) -> int:
    return int(json.loads((folder / "summary.json").read_text())["seed"])


def test_run_refuses_a_result_of_another_seed_or_scenario_unless_overwrite(tmp_path: Path) -> None:
    out = tmp_path / "res"
    assert cli("--out", str(out)).returncode == 0
    first = (out / "summary.json").read_bytes()
    for extra in (["--seed", "2"], ["--set", "duration=2s"]):
        r = cli("--out", str(out), *extra)
        assert r.returncode == 2, r.stderr
        assert "--overwrite" in r.stderr and "--out" in r.stderr and "Traceback" not in r.stderr
        assert (out / "summary.json").read_bytes() == first, "the earlier result is kept"
    r = cli("--out", str(out))  # the same seed and scenario: a rerun replaces it
    assert r.returncode == 0, r.stderr
    r = cli("--out", str(out), "--seed", "2", "--overwrite")
    assert r.returncode == 0, r.stderr
    assert _seed_of(out) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["res"]


def test_save_refuses_another_seed_unless_overwrite(tmp_path: Path) -> None:
    one = qoslab.run(str(SCENARIO), overrides=["duration=1s"])
    two = qoslab.run(str(SCENARIO), overrides=["duration=1s"], seed=2)
    out = tmp_path / "r"
    one.save(out)
    one.save(out)  # a rerun
    with pytest.raises(qoslab.ConfigError, match="overwrite=True"):
        two.save(out)
    assert _seed_of(out) == 1
    two.save(out, overwrite=True)
    assert _seed_of(out) == 2


def _fake_reproduction() -> types.ModuleType:
    from qoslab.reproduce import Outcome

    m = types.ModuleType("fake")
    m.NAME, m.TITLE, m.SEED_FILE, m.PAPER = "fake-one", "A fake", "000_x.txt", "Nobody 2000"
    m.reproduce = lambda ctx: Outcome(claims=[], data={"seeds": ctx.seeds})
    return m


def test_reproduce_refuses_another_mode_or_seed_list_unless_overwrite(tmp_path: Path) -> None:
    from qoslab.reproduce import execute

    fake = _fake_reproduction()
    execute(fake, quick=True, seeds=None, out=tmp_path, log=lambda m: None)
    execute(fake, quick=True, seeds=3, out=tmp_path, log=lambda m: None)  # the same (3 quick seeds): a rerun
    before = (tmp_path / "fake_one" / "results.json").read_text()
    for quick, seeds in ((False, 1), (True, 2)):
        with pytest.raises(qoslab.ConfigError, match="--overwrite"):
            execute(fake, quick=quick, seeds=seeds, out=tmp_path, log=lambda m: None)
        assert (tmp_path / "fake_one" / "results.json").read_text() == before
    execute(fake, quick=False, seeds=2, out=tmp_path, log=lambda m: None, overwrite=True)
    assert json.loads((tmp_path / "fake_one" / "results.json").read_text())["seeds"] == [1, 2]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fake_one"]


def test_sweep_refuses_a_folder_of_another_scenario_unless_overwrite(tmp_path: Path) -> None:
    out = tmp_path / "sw"
    qoslab.sweep(SCENARIO, seeds=1, jobs=1, out=out, overrides=["duration=1s"])
    meta = (out / "sweep.json").read_text()
    qoslab.sweep(SCENARIO, seeds=1, jobs=1, out=out, overrides=["duration=1s"])  # resumes
    with pytest.raises(qoslab.ConfigError, match="--overwrite"):
        qoslab.sweep(SCENARIO, seeds=1, jobs=1, out=out, overrides=["duration=2s"])
    assert json.loads((out / "sweep.json").read_text())["scenario_sha256"] == json.loads(meta)["scenario_sha256"]
    qoslab.sweep(SCENARIO, seeds=1, jobs=1, out=out, overrides=["duration=2s"], overwrite=True)
    assert json.loads((out / "sweep.json").read_text())["scenario_sha256"] != json.loads(meta)["scenario_sha256"]
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "summary.csv").write_text("mine")
    with pytest.raises(qoslab.ConfigError, match="not a sweep folder"):
        qoslab.sweep(SCENARIO, seeds=1, jobs=1, out=mine, overrides=["duration=1s"])
    assert sorted(p.name for p in mine.iterdir()) == ["summary.csv"]


# -- --out checked before the run ---------------------------------------------


def _bad_outs(tmp_path: Path) -> list[str]:
    (tmp_path / "afile").write_text("data")
    return [str(tmp_path / "afile" / "x"), ".", "/", "/proc/qoslab_x", "/sys/kernel/qoslab_x"]


def test_unusable_out_values_are_refused_before_the_run(tmp_path: Path) -> None:
    for out in _bad_outs(tmp_path):
        r = subprocess.run(
            [sys.executable, "-m", "qoslab", "run", str(SCENARIO), "--set", "duration=1s", "-q", "--out", out],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert r.returncode == 2, (out, r.stderr)
        assert r.stderr.startswith("--out:") and "Traceback" not in r.stderr, (out, r.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]
    assert (tmp_path / "afile").read_text() == "data"


def test_reproduce_checks_out_before_running(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("data")
    for out in (str(tmp_path / "afile"), str(tmp_path / "afile" / "x"), "/proc/qoslab_x", "/sys/kernel/qoslab_x"):
        t0 = time.monotonic()
        r = subprocess.run(
            [sys.executable, "-m", "qoslab", "reproduce", "examples", "--quick", "--jobs", "1", "--out", out],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert r.returncode == 2, (out, r.stderr)
        assert "--out:" in r.stderr and "Traceback" not in r.stderr, (out, r.stderr)
        assert "examples: " not in r.stderr, "nothing ran"
        assert time.monotonic() - t0 < 30
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


@contextlib.contextmanager
def _read_only_folder(path: Path) -> Iterator[Path]:
    """A folder nobody may write into: mode 0555 for a normal user; for root, who
    ignores modes, a read-only tmpfs mounted there."""
    path.mkdir()
    if os.geteuid() != 0:
        path.chmod(0o555)
        try:
            yield path
        finally:
            path.chmod(0o755)
        return
    subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(path)], check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=True)


def test_a_read_only_folder_is_refused_before_the_run(tmp_path: Path) -> None:
    with _read_only_folder(tmp_path / "ro") as ro:
        r = cli("--out", str(ro / "x"))
        assert r.returncode == 2 and "cannot be written" in r.stderr, r.stderr


def test_a_240_character_scenario_name_runs_and_a_241_character_one_is_refused_before_the_run(tmp_path: Path) -> None:
    """240 characters: the longest name whose every folder (``sweep_NAME``, ``NAME-testbed``) fits
    the file system's 255 bytes; one more is refused by validation, as ``qoslab validate`` says
    (issue 27 §6: it used to pass validate and fail at run time)."""
    text = SCENARIO.read_text(encoding="utf-8")
    for n, code in ((240, 0), (241, 2)):
        f = tmp_path / f"n{n}.toml"
        f.write_text(re.sub(r'^name = ".*"$', f'name = "{"n" * n}"', text, count=1, flags=re.M), encoding="utf-8")
        for cmd in ("validate", "run"):
            extra = ["--set", "duration=1s", "-q"] if cmd == "run" else []
            r = subprocess.run(
                [sys.executable, "-m", "qoslab", cmd, str(f), *extra],
                capture_output=True,
                text=True,
                cwd=tmp_path,
            )
            assert r.returncode == code, r.stderr
            assert "Traceback" not in r.stderr
    assert [p.name for p in (tmp_path / "results").iterdir()] == ["n" * 240]
    assert _seed_of(tmp_path / "results" / ("n" * 240)) == 1


# -- concurrent writers ---------------------------------------------------------


def test_a_second_writer_of_one_out_is_refused_while_the_first_runs(tmp_path: Path) -> None:
    out = tmp_path / "res"
    args = [sys.executable, "-m", "qoslab", "run", str(SCENARIO), "--set", "duration=1500s", "-q", "--out", str(out)]
    first = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lock = tmp_path / ".res.lock"
    deadline = time.monotonic() + 60
    while not lock.exists() and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert lock.exists(), "the first writer holds its lock during the run"
    second = subprocess.run(args, capture_output=True, text=True)
    _, err1 = first.communicate(timeout=300)
    assert first.returncode == 0, err1
    assert second.returncode == 2, second.stderr
    assert f"being written by another qoslab (PID {first.pid})" in second.stderr
    assert "Traceback" not in second.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["res"], "no lock or temporary folder is left"
    assert (out / "summary.json").is_file()


def test_a_waiting_writer_gets_the_lock_once_the_first_lets_go(tmp_path: Path) -> None:
    target = tmp_path / "runs" / "k"
    order: list[str] = []
    with _atomic.Destination(target, wait=True) as d:
        (d.tmp / "a").write_text("first")

        def second() -> None:
            with _atomic.atomic_dir(target) as tmp:
                order.append("second has the lock")
                (tmp / "a").write_text("second")

        t = threading.Thread(target=second)
        t.start()
        time.sleep(0.3)
        order.append("first commits")
        d.commit()
    t.join(timeout=30)
    assert order == ["first commits", "second has the lock"]
    assert (target / "a").read_text() == "second"


# -- kills during the save -------------------------------------------------------

_SLOW_SAVE = """
import sys, time
from pathlib import Path
import qoslab.result
from qoslab.cli import main

flag = Path(sys.argv[1])
real = qoslab.result.Result.write_into

def slow(self, folder):
    real(self, folder)
    flag.write_text("saving")
    time.sleep(60)

qoslab.result.Result.write_into = slow
sys.exit(main(sys.argv[2:]))
"""


def _slow_save(flag: Path, out: Path) -> subprocess.Popen[str]:
    """``qoslab run --out OUT`` in a child whose save pauses (``_SLOW_SAVE``) once ``flag`` is written."""
    args = ["run", str(SCENARIO), "--set", "duration=1s", "-q", "--out", str(out)]
    return subprocess.Popen(
        [sys.executable, "-c", _SLOW_SAVE, str(flag), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_sigterm_during_the_save_keeps_the_earlier_result_and_leaves_no_temporary_folder(tmp_path: Path) -> None:
    out = tmp_path / "res"
    assert cli("--out", str(out)).returncode == 0
    before = (out / "summary.json").read_bytes()
    flag = tmp_path.parent / f"{tmp_path.name}.saving"
    p = _slow_save(flag, out)
    deadline = time.monotonic() + 60
    while not flag.exists() and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert flag.exists(), p.communicate()[1]
    assert any(".res.tmp-" in q.name for q in tmp_path.iterdir()), "the save is under way"
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    flag.unlink()
    assert p.returncode == 143, err
    assert "terminated" in err and "Traceback" not in err
    assert (out / "summary.json").read_bytes() == before
    assert sorted(q.name for q in tmp_path.iterdir()) == ["res"]


def _writer_folder(parent: Path, name: str, pid: int) -> Path:
    tmp = parent / f".{name}.tmp-{pid}-{'0123456789ab'}"
    tmp.mkdir()
    (tmp / _atomic.WRITER).write_text(json.dumps({"pid": pid, "host": socket.gethostname()}))
    (tmp / "summary.json").write_text("{}")
    return tmp


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_the_next_run_removes_a_dead_writers_temporary_folder_and_leaves_a_live_ones(tmp_path: Path) -> None:
    dead = _writer_folder(tmp_path, "res", _dead_pid())
    alive = _writer_folder(tmp_path, "res", os.getpid())
    r = cli("--out", str(tmp_path / "res"))
    assert r.returncode == 0, r.stderr
    assert not dead.exists()
    assert alive.is_dir() and (alive / "summary.json").read_text() == "{}"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["res", alive.name])


def test_a_dead_writers_set_aside_result_comes_back_when_the_target_is_missing(tmp_path: Path) -> None:
    old = tmp_path / f".res.old-{_dead_pid()}-0123456789ab"
    old.mkdir()
    (old / "summary.json").write_text('{"qoslab_version": "x"}')
    assert [p.name for p in _atomic.clean_dead_writers(tmp_path / "res")] == [old.name]
    assert (tmp_path / "res" / "summary.json").is_file() and not old.exists()


def test_sigterm_during_the_run_keeps_the_earlier_result(tmp_path: Path) -> None:
    out = tmp_path / "res"
    assert cli("--out", str(out)).returncode == 0
    before = (out / "summary.json").read_bytes()
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "qoslab",
            "run",
            str(SCENARIO),
            "--set",
            "duration=100000s",
            # Interrupted long before its estimated 59 GiB of series.
            "--max-memory",
            "1TiB",
            "-q",
            "--overwrite",
            "--out",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while (
        not any(".res.tmp-" in q.name for q in tmp_path.iterdir()) and p.poll() is None and time.monotonic() < deadline
    ):
        time.sleep(0.02)
    time.sleep(0.5)  # well into the simulation
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 143, err
    assert "terminated" in err and "Traceback" not in err
    assert (out / "summary.json").read_bytes() == before
    assert sorted(q.name for q in tmp_path.iterdir()) == ["res"]


def test_a_sigkilled_savers_temporary_folder_is_removed_by_the_next_run(tmp_path: Path) -> None:
    out = tmp_path / "res"
    assert cli("--out", str(out)).returncode == 0
    flag = tmp_path.parent / f"{tmp_path.name}.killed"
    p = _slow_save(flag, out)
    deadline = time.monotonic() + 60
    while not flag.exists() and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    p.kill()
    p.communicate(timeout=60)
    flag.unlink()
    left = [q.name for q in tmp_path.iterdir() if q.name != "res"]
    assert any(n.startswith(f".res.tmp-{p.pid}-") for n in left), left
    r = cli("--out", str(out))
    assert r.returncode == 0, r.stderr
    assert sorted(q.name for q in tmp_path.iterdir()) == ["res"]


def test_a_sweep_into_a_folder_another_sweep_is_writing_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "sw"
    lock = _atomic.lock_path(out)
    fd = _atomic._acquire(lock, wait=False, target=out, option="--out")
    try:
        with pytest.raises(qoslab.ConfigError, match=f"being written by another qoslab \\(PID {os.getpid()}\\)"):
            qoslab.sweep(SCENARIO, seeds=1, jobs=1, out=out, overrides=["duration=1s"])
    finally:
        _atomic._release(lock, fd)
    assert not out.exists()


def test_reproduce_command_refuses_another_seed_list_unless_overwrite(tmp_path: Path) -> None:
    def rp(*extra: str) -> subprocess.CompletedProcess[str]:
        args = ["reproduce", "examples", "--quick", "--jobs", "1", "--out", str(tmp_path), *extra]
        return subprocess.run([sys.executable, "-m", "qoslab", *args], capture_output=True, text=True)

    assert rp().returncode == 0
    before = (tmp_path / "examples" / "results.json").read_text()
    r = rp("--seeds", "2")
    assert r.returncode == 2 and "--overwrite" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert (tmp_path / "examples" / "results.json").read_text() == before
    stored = sorted((tmp_path / ".store").rglob("*"))
    r = rp("--seeds", "2", "--overwrite", "--no-store")
    assert r.returncode == 0, r.stderr
    assert "store" not in r.stderr, r.stderr
    assert json.loads((tmp_path / "examples" / "results.json").read_text())["seeds"] == [1, 2]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".store", "examples"]
    assert sorted((tmp_path / ".store").rglob("*")) == stored, "--no-store keeps nothing"


def _qoslab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "qoslab", *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def a_result(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("res") / "r"
    r = cli("--out", str(out))
    assert r.returncode == 0, r.stderr
    return out


def test_report_out_refuses_a_file_it_did_not_write_and_replaces_its_own(a_result: Path, tmp_path: Path) -> None:
    """``qoslab report --out`` goes through the same rule as ``--out`` folders: a
    user's file (here a scenario) is refused with exit 2 and left as it was; a
    report qoslab wrote earlier is replaced; nothing is left behind."""
    mine = tmp_path / "s.toml"
    mine.write_text("name = 'mine'\n")
    r = _qoslab("report", str(a_result), "--out", str(mine))
    assert r.returncode == 2, r.stderr
    assert "not written by qoslab" in r.stderr and "--out" in r.stderr and "Traceback" not in r.stderr
    assert mine.read_text() == "name = 'mine'\n"
    page = tmp_path / "page.html"
    for _ in range(2):  # the second write replaces qoslab's own report
        r = _qoslab("report", str(a_result), "--out", str(page))
        assert r.returncode == 0, r.stderr
    assert b'<meta name="generator" content="qoslab ' in page.read_bytes()[:4096]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["page.html", "s.toml"]
    for bad in (str(tmp_path), "/dev/null", str(mine / "x.html")):
        r = _qoslab("report", str(a_result), "--out", bad)
        assert r.returncode == 2 and "Traceback" not in r.stderr, (bad, r.stderr)
    assert Path("/dev/null").is_char_device() and mine.read_text() == "name = 'mine'\n"


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_plot_out_refuses_a_file_it_did_not_write_and_replaces_its_own(
    a_result: Path, tmp_path: Path, suffix: str
) -> None:
    mine = tmp_path / f"photo{suffix}"
    mine.write_bytes(b"not a qoslab figure")
    r = _qoslab("plot", str(a_result), "--queue", "r0->sink0", "--metric", "backlog_pkts", "--out", str(mine))
    assert r.returncode == 2 and "not written by qoslab" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert mine.read_bytes() == b"not a qoslab figure"
    fig = tmp_path / f"fig{suffix}"
    first = None
    for _ in range(2):
        r = _qoslab("plot", str(a_result), "--queue", "r0->sink0", "--metric", "backlog_pkts", "--out", str(fig))
        assert r.returncode == 0, r.stderr
        data = fig.read_bytes()
        assert first is None or data == first, "the same figure, byte for byte"
        first = data
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([mine.name, fig.name])
