"""Sweeps on a real Dask cluster: ``dask scheduler`` and ``dask worker`` as separate processes
on 127.0.0.1 (tests/dask_cluster.py), as a user runs them.

What a user must be able to count on: ``--scheduler`` (and ``scheduler=``, ``client=``) runs
the sweep there with the local pool's bytes; workers without qoslab or with another build are
refused by name before any job; a killed worker is survived; a killed scheduler, or no worker
left, is one line of qoslab's own with every finished run kept, and the rerun resumes; a killed
client is resumed from the store. No process is left behind, whatever the outcome.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest

import qoslab
from conftest import RED_DUMBBELL
from qoslab.store import Store

if os.environ.get("CI") != "true":  # on CI the cluster tests must run: a missing extra fails
    pytest.importorskip("distributed", reason="the dask extra is not installed (pip install 'qoslab[dask]')")

import cloudpickle

import dask_cluster

# The few functions this file runs on the scheduler and the workers go there by value: those
# processes cannot import the tests.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

MAX_P = "topology.bottleneck.queue.max_p"
TABLES = ("flows", "queues", "series", "events")
#: The sweep of the fault cases: 2 points x 4 seeds, each run long enough (20 s simulated, a
#: few tenths of a second) for a fault to strike while runs remain.
POINTS, SEEDS = "0.02,0.1", 4
TOTAL = 8
#: summary.json fields that measure wall time (the rest must be equal).
WALL_FIELDS = ("loop_wall_s",)


def sweep_cmd(address: str, out: Path, *, points: str, seeds: int, duration: str, quiet: bool = True) -> list[str]:
    cmd = [sys.executable, "-m", "qoslab", "sweep", str(RED_DUMBBELL), "--grid", f"{MAX_P}={points}"]
    cmd += [*f"--seeds {seeds} --set duration={duration} --scheduler {address} --out".split(), str(out)]
    return [*cmd, "--quiet"] if quiet else cmd


def env(**extra: str) -> dict[str, str]:
    e = {**os.environ, "COLUMNS": "200", "PYTHONUNBUFFERED": "1", **extra}
    e.pop("FORCE_COLOR", None)
    return e


def run(cmd: list[str], **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env(**extra))


#: The sweeps a test started: any still running when it ends is killed (the autouse fixture).
STARTED: list[subprocess.Popen[str]] = []


@pytest.fixture(autouse=True)
def no_sweep_left():
    yield
    while STARTED:
        proc = STARTED.pop()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()


def start(cmd: list[str], **extra: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(**extra),
        start_new_session=True,
    )
    STARTED.append(proc)
    return proc


def wait_stored(out: Path, n: int, proc: subprocess.Popen[str], timeout: float = 120) -> int:
    """Waits until ``n`` runs are in the store of ``out`` (or the sweep ended); how many are."""
    store = Store(out)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        k = len(store.stored())
        if k >= n:
            return k
        time.sleep(0.02)
    return len(store.stored())


def finish(proc: subprocess.Popen[str], timeout: float = 120) -> tuple[int, str, str, float]:
    """The exit code, stdout and stderr of ``proc``, and how long it took to end from now."""
    t0 = time.monotonic()
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode, out, err, time.monotonic() - t0


def figures(case: str, kept: int) -> None:
    """The figures of a fault case, for the test log (pytest -s)."""
    print(f"{case}: {kept} of {TOTAL} runs kept; rerun: {TOTAL - kept} executed, {kept} from the store")


def lines(text: str) -> list[str]:
    return [x for x in text.splitlines() if x.strip()]


def one_qoslab_line(err: str) -> str:
    got = lines(err)
    assert len(got) == 1 and got[0].startswith("qoslab: "), f"expected one line of qoslab's own, got:\n{err}"
    assert "Traceback" not in err
    print(got[0])
    return got[0]


def counts(stdout: str) -> tuple[int, int]:
    """``(executed, from the store)`` of the sweep command's last line."""
    import re

    m = re.search(r"(\d+) executed, (\d+) from the store", stdout)
    assert m, stdout
    return int(m.group(1)), int(m.group(2))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """One scheduler and its workers for the tests of this module: each test first asks for
    what it needs (:meth:`dask_cluster.Cluster.ensure`: a killed scheduler is started again,
    killed workers replaced). After the module, no process of theirs is left, whatever the
    tests' outcome."""
    with dask_cluster.cluster(tmp_path_factory.mktemp("cluster"), workers=2) as c:
        yield c
    for name, p in c.procs.items():
        assert not dask_cluster.group_alive(p.pid), f"{name} left a process behind"


# -- the reproducer of issue 29 and the local pool's bytes ----------------------------


def test_scheduler_sweep_submits_work_and_matches_the_local_pool_byte_for_byte(cluster, tmp_path):
    cluster.ensure(2)
    out = tmp_path / "dask"
    proc = start(sweep_cmd(cluster.address, out, points="0.02,0.1", seeds=4, duration="2s", quiet=False))
    local = tmp_path / "local"  # meanwhile, the same sweep in this process
    qoslab.sweep(RED_DUMBBELL, grid={MAX_P: "0.02,0.1"}, seeds=4, overrides=["duration=2s"], jobs=1, out=local)
    code, stdout, err, _ = finish(proc)
    assert code == 0, err
    assert counts(stdout) == (8, 0)
    assert "(2 workers, 2 threads)" in " ".join(stdout.split())
    keys = Store(local).stored()
    assert keys == Store(out).stored() and len(keys) == 8
    for k in keys:
        a, b = local / "runs" / k, out / "runs" / k
        for t in TABLES:
            assert (a / f"{t}.parquet").read_bytes() == (b / f"{t}.parquet").read_bytes(), (k, t)
        sa, sb = (json.loads((d / "summary.json").read_text()) for d in (a, b))
        for f in WALL_FIELDS:
            sa.pop(f), sb.pop(f)
        assert sa == sb, k

    # The Python API: scheduler= and a client that is not the default one both submit work.
    from distributed import Client

    qoslab.sweep(
        RED_DUMBBELL, grid={MAX_P: "0.02,0.1"}, seeds=[5], overrides=["duration=2s"], scheduler=cluster.address, out=out
    )
    assert json.loads((out / "sweep.json").read_text())["executed"] == 2
    with Client(cluster.address, set_as_default=False, timeout="30s") as client:
        qoslab.sweep(
            RED_DUMBBELL, grid={MAX_P: "0.02,0.1"}, seeds=[6], overrides=["duration=2s"], client=client, out=out
        )
    meta = json.loads((out / "sweep.json").read_text())
    assert meta["executed"] == 2 and "(2 workers, 2 threads)" in meta["executor"]


def test_reproduce_on_the_cluster_writes_the_bytes_of_one_by_one(cluster, tmp_path):
    cluster.ensure(2)
    cmd = [sys.executable, "-m", "qoslab", "reproduce", "examples", "--quick", "--scheduler", cluster.address]
    proc = start([*cmd, "--out", str(tmp_path / "dask")])
    from qoslab.reproduce import reproduce

    reproduce("examples", quick=True, out=tmp_path / "local")  # meanwhile, one run at a time in this process
    code, _, err, _ = finish(proc)
    assert code == 0, err
    assert "(2 workers, 2 threads)" in " ".join(err.split())
    a, b = tmp_path / "dask" / "examples", tmp_path / "local" / "examples"
    files = sorted(f.relative_to(a) for f in a.rglob("*") if f.is_file())
    assert files == sorted(f.relative_to(b) for f in b.rglob("*") if f.is_file())
    for f in files:
        if f.suffix == ".json":  # summary.json's loop_wall_s and results.json's wall_s
            assert _no_wall(json.loads((a / f).read_text())) == _no_wall(json.loads((b / f).read_text())), f
        else:
            assert (a / f).read_bytes() == (b / f).read_bytes(), f


def _no_wall(doc):
    if isinstance(doc, dict):
        return {k: _no_wall(v) for k, v in doc.items() if k not in ("wall_s", "loop_wall_s")}
    if isinstance(doc, list):
        return [_no_wall(v) for v in doc]
    return doc


# -- faults ---------------------------------------------------------------------------


def test_a_client_killed_mid_sweep_is_resumed_from_the_store(cluster, tmp_path):
    cluster.ensure(2)
    out = tmp_path / "sw"
    cmd = sweep_cmd(cluster.address, out, points=POINTS, seeds=SEEDS, duration="20s")
    proc = start(cmd)
    wait_stored(out, 2, proc)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    kept = len(Store(out).stored())
    assert 2 <= kept < TOTAL
    # The scheduler forgets the dead client's jobs: nothing is left to run for nobody.
    client = cluster.client()
    deadline = time.monotonic() + 30
    while client.run_on_scheduler(_task_count) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert client.run_on_scheduler(_task_count) == 0

    resumes(cluster, out, kept)
    figures("client killed", kept)


def _task_count(dask_scheduler) -> int:  # runs on the scheduler
    return sum(1 for k in dask_scheduler.tasks if str(k).startswith("qoslab-"))


def test_a_worker_killed_mid_sweep_is_survived(cluster, tmp_path):
    cluster.ensure(2)
    out = tmp_path / "sw"
    proc = start(sweep_cmd(cluster.address, out, points=POINTS, seeds=SEEDS, duration="20s"))
    kept = wait_stored(out, 2, proc)
    cluster.kill(sorted(cluster.workers())[-1])
    code, _, err, _ = finish(proc)
    assert code == 0, err
    assert err == ""
    assert 2 <= kept < TOTAL and len(Store(out).stored()) == TOTAL
    print(f"worker killed after {kept} of {TOTAL} runs: exit 0, {TOTAL} stored")


def strike_mid_sweep(cluster, out: Path, strike, **extra: str) -> tuple[str, int, float]:
    """Starts the fault cases' sweep, calls ``strike()`` once two runs are stored, and checks
    that the sweep ends with exit 1 and one line of qoslab's own: returns that line, how many
    runs are kept, and how long the sweep took to end after the strike."""
    proc = start(sweep_cmd(cluster.address, out, points=POINTS, seeds=SEEDS, duration="20s"), **extra)
    wait_stored(out, 2, proc)
    strike()
    code, _, err, took = finish(proc)
    kept = len(Store(out).stored())
    line = one_qoslab_line(err)
    assert code == 1
    assert 2 <= kept < TOTAL
    assert f"{kept} of {TOTAL} runs are kept in {out}" in line and "rerun the same command to resume" in line
    return line, kept, took


def resumes(cluster, out: Path, kept: int) -> None:
    """The same command on the cluster as it is now runs only the runs not kept."""
    p = run(sweep_cmd(cluster.address, out, points=POINTS, seeds=SEEDS, duration="20s", quiet=False))
    assert p.returncode == 0, p.stderr
    assert counts(p.stdout) == (TOTAL - kept, kept)


def test_all_workers_gone_is_one_line_within_a_minute_and_the_rerun_resumes(cluster, tmp_path):
    cluster.ensure(2)
    out = tmp_path / "sw"

    def kill_workers() -> None:
        for name in cluster.workers():
            cluster.kill(name)

    line, kept, took = strike_mid_sweep(cluster, out, kill_workers, QOSLAB_NO_WORKERS_TIMEOUT_S="5")
    assert f"no usable Dask worker at {cluster.address}" in line and "none connected" in line
    assert f"dask worker {cluster.address}" in line
    assert took < 60
    cluster.ensure(1)
    resumes(cluster, out, kept)
    figures(f"all workers gone: exit 1 in {took:.1f} s", kept)


def test_the_scheduler_killed_mid_sweep_is_one_line_and_the_rerun_resumes(cluster, tmp_path):
    cluster.ensure(2)
    out = tmp_path / "sw"
    address = cluster.address
    scheduler = next(n for n in reversed(cluster.procs) if n.startswith("scheduler"))
    line, kept, took = strike_mid_sweep(cluster, out, lambda: cluster.kill(scheduler))
    assert f"lost the Dask scheduler {address}" in line
    assert took < 30
    cluster.ensure(1)  # a new scheduler and a worker
    resumes(cluster, out, kept)
    figures(f"scheduler killed: exit 1 in {took:.1f} s", kept)


# -- refused workers ---------------------------------------------------------------------


def test_workers_without_qoslab_or_of_another_build_are_refused_by_name_before_any_job(tmp_path):
    # A worker where "import qoslab" fails, and one whose build identity is another's.
    nolib = tmp_path / "nolib"
    (nolib / "qoslab").mkdir(parents=True)
    (nolib / "qoslab" / "__init__.py").write_text('raise ImportError("qoslab is not installed here")\n')
    other = tmp_path / "other"
    other.mkdir()
    (other / "sitecustomize.py").write_text(
        "import qoslab.store as s\n"
        "real = s.build_identity()\n"
        's.build_identity = lambda: {**real, "native_sha256": "0" * 64}\n'
    )
    with dask_cluster.cluster(tmp_path / "cluster", workers=0) as c:
        c.start_worker("nolib", {"PYTHONPATH": str(nolib)}, wait=False)
        c.start_worker("other", {"PYTHONPATH": str(other)}, wait=False)
        c.wait_for(lambda names: {"nolib", "other"} <= names, "the two workers")
        out = tmp_path / "sw"
        cmd = sweep_cmd(c.address, out, points="0.02,0.1", seeds=2, duration="2s")

        # Only refused workers: each refused by name, then no usable worker, nothing run.
        p = run(cmd, QOSLAB_NO_WORKERS_TIMEOUT_S="3")
        assert p.returncode == 1, p.stderr
        *refusals, last = lines(p.stderr)
        assert len(refusals) == 2, p.stderr
        assert any("'nolib'" in x and "refused: qoslab is not importable there" in x for x in refusals), p.stderr
        assert any(
            "'other'" in x and "refused: its qoslab build is not this one" in x and "native_sha256" in x
            for x in refusals
        ), p.stderr
        assert f"no usable Dask worker at {c.address}" in last and "2 connected, all refused" in last, last
        assert "(qoslab not importable)" in last and "(another qoslab build)" in last, last
        assert "0 of 4 runs are kept" in last and "Traceback" not in p.stderr

        # A good worker joins mid-sweep: it is checked and given every job, the others none.
        proc = start(cmd, QOSLAB_NO_WORKERS_TIMEOUT_S="120")
        try:
            time.sleep(1)
            c.start_worker("good", nanny=True)
        except BaseException:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
        code, _, err, _ = finish(proc, timeout=180)
        assert code == 0, err
        assert len(lines(err)) == 2 and "refused" in err, err
        assert len(Store(out).stored()) == 4
        ran = c.client().run(_executed, on_error="return")
        by_name = {name: ran[addr] for name, addr in c.workers().items()}
        assert by_name == {"nolib": 0, "other": 0, "good": 4}, by_name
    for name, p in c.procs.items():
        assert not dask_cluster.group_alive(p.pid), f"{name} left a process behind"


def _executed(dask_worker) -> int:  # runs on each worker
    return int(dask_worker.state.executed_count)


# -- without a cluster: the messages of the rarer cases -----------------------------------


def test_a_run_that_kills_its_workers_is_one_cluster_error_naming_the_job():
    from distributed import KilledWorker

    from qoslab.executor import DaskExecutor

    class Failed:
        status = "error"

    ex = DaskExecutor.__new__(DaskExecutor)
    last = types.SimpleNamespace(address="tcp://127.0.0.1:1")
    with pytest.raises(qoslab.ClusterError) as e:
        ex._result(Failed(), 3, KilledWorker("qoslab-3-abc", last, 3))
    assert str(e.value).startswith("job 3 was on 4 Dask workers that all died while running it (the last: tcp://")
    assert e.value.item == 3 and "rerun the same command" in str(e.value)


def test_refusals_say_why_in_a_few_words_and_in_full():
    from qoslab.executor import _refusal
    from qoslab.store import build_identity

    build = dict(build_identity())
    assert _refusal(dict(build), build) is None
    # Dask hands back a failure to load the check as a plain Exception around the real one.
    short, full = _refusal(Exception(ModuleNotFoundError("No module named 'qoslab'")), build)
    assert short == "qoslab not importable"
    assert full == "qoslab is not importable there (ModuleNotFoundError: No module named 'qoslab')"
    short, full = _refusal({**build, "git_commit": "f" * 40}, build)
    assert short == "another qoslab build" and f"git_commit ffffffffffff there, {build['git_commit'][:12]}" in full
