"""Sweeps: the grid, the local executor, the result store,
kill-and-resume, the combined dataset and the per-point summary, bad input (Dask on a real
cluster: test_dask_cluster.py)."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time

import pytest

import qoslab
from conftest import RED_DUMBBELL, cli
from qoslab import sweeps
from qoslab.store import Store

MAX_P = "topology.bottleneck.queue.max_p"
MIN_TH = "topology.bottleneck.queue.min_th"


def no_traceback(p: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in p.stderr and "Traceback" not in p.stdout, p.stderr


# -- the grid ---------------------------------------------------------


def test_grid_values_take_comma_lists_ranges_and_lists():
    assert sweeps.parse_values("k", "1e-4,1e-3, 1e-2") == ["1e-4", "1e-3", "1e-2"]
    assert sweeps.parse_values("k", "5ms,10ms") == ["5ms", "10ms"]
    assert sweeps.parse_values("k", "3..6") == ["3", "4", "5", "6"]
    assert sweeps.parse_values("k", "7..7") == ["7"]
    assert sweeps.parse_values("k", [0.02, 5, "10ms", True]) == ["0.02", "5", '"10ms"', "true"]
    assert sweeps.parse_grid_option("traffic.0.flows=1..3") == ("traffic.0.flows", ["1", "2", "3"])
    # A selector may hold an "=": the key ends at the first one outside it.
    key = "topology.links[r0->r1].stages.0.rules[stream=A2].src"
    assert sweeps.parse_grid_option(f"{key}=a,b") == (key, ["a", "b"])
    assert sweeps.parse_values(key, ["a"]) == ['"a"']


@pytest.mark.parametrize(
    "spec, message",
    [
        ("", "no values"),
        (" , ", "no values"),
        ("1,,2", "empty value"),
        ("5..3", "empty"),
        ("a..b", "integers"),
    ],
)
def test_grid_values_refuse_empty_and_malformed(spec, message):
    with pytest.raises(qoslab.ConfigError, match=message):
        sweeps.parse_values("k", spec)
    with pytest.raises(qoslab.ConfigError, match="no values"):
        sweeps.parse_values("k", [])


def test_plan_is_the_cartesian_grid_times_seeds_with_distinct_keys():
    p = sweeps.plan(RED_DUMBBELL, grid={MAX_P: "0.02,0.1", MIN_TH: "3..5"}, seeds=2, overrides=["duration=1s"])
    assert len(p.jobs) == 2 * 3 * 2
    assert len({j.key for j in p.jobs}) == len(p.jobs)
    assert [dict(j.point) for j in p.jobs[:3]] == [{MAX_P: "0.02", MIN_TH: "3"}] * 2 + [{MAX_P: "0.02", MIN_TH: "4"}]
    # The key depends on the normalized scenario, not on how it was written: same override twice, same key.
    again = sweeps.plan(RED_DUMBBELL, grid={MIN_TH: "3..5", MAX_P: "0.02,0.1"}, seeds=2, overrides=["duration=1000ms"])
    assert {j.key for j in again.jobs} == {j.key for j in p.jobs}
    # A changed scenario is a different key.
    other = sweeps.plan(RED_DUMBBELL, grid={MAX_P: "0.02,0.1", MIN_TH: "3..5"}, seeds=2, overrides=["duration=2s"])
    assert not {j.key for j in other.jobs} & {j.key for j in p.jobs}


def test_a_changed_build_is_a_different_key():
    from qoslab.store import build_identity, run_key

    b = dict(build_identity())
    assert len(b["native_sha256"]) == 64
    k = run_key("0" * 64, 1, b)
    assert run_key("0" * 64, 1, {**b, "native_sha256": "1" * 64}) != k
    assert run_key("0" * 64, 1, {**b, "git_commit": "deadbeef"}) != k
    assert run_key("0" * 64, 2, b) != k


# -- running, combining, resuming -------------------------------------------


def _vals(col):
    """A value column as a list that compares NaN equal to NaN."""
    return ["nan" if isinstance(v, float) and math.isnan(v) else v for v in col]


def _values(frame, **where):
    m = frame
    for k, v in where.items():
        m = m[m[k] == v]
    return m


def test_sweep_combines_typed_grid_columns_and_summarizes_over_seeds(tmp_path):
    out = tmp_path / "sw"
    df = qoslab.sweep(
        RED_DUMBBELL, grid={MAX_P: [0.02, 0.1], MIN_TH: "3..4"}, seeds=3, jobs=2, out=out, overrides=["duration=2s"]
    )
    assert list(df.columns[:4]) == [MAX_P, MIN_TH, "seed", "run_key"]
    assert str(df[MAX_P].dtype) == "float64" and str(df[MIN_TH].dtype) == "int64"
    assert df["run_key"].nunique() == 2 * 2 * 3
    assert set(df["entity_kind"]) == {"run", "group", "queue"}
    # Each stored run is a normal result folder: its numbers are the frame's.
    key = df["run_key"].iloc[0]
    res = qoslab.Result.load(out / "runs" / key)
    arrivals = float(res.queue("r0->sink0")["arrivals"])
    row = _values(df, run_key=key, entity_kind="queue", entity="r0->sink0", metric="arrivals")
    assert float(row["value"].iloc[0]) == arrivals
    # The per-point summary: mean and Student-t CI over the 3 seeds, recomputed here by hand.
    summ = sweeps.point_summary(df)
    pt = _values(df, **{MAX_P: 0.1, MIN_TH: 4}, entity_kind="group", entity="cbr", metric="delivered_pkts")
    vals = [float(v) for v in pt["value"]]
    mean = sum(vals) / 3
    sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / 2)
    s = _values(summ, **{MAX_P: 0.1, MIN_TH: 4}, entity_kind="group", entity="cbr", metric="delivered_pkts")
    assert int(s["n"].iloc[0]) == 3
    assert float(s["mean"].iloc[0]) == pytest.approx(mean)
    assert float(s["ci95"].iloc[0]) == pytest.approx(4.303 * sd / math.sqrt(3))
    # On disk: the partitioned dataset reads back to the same rows, the summary file matches.
    back = sweeps.read_dataset(out)
    parts = sorted(p.name for p in (out / "dataset").iterdir() if not p.name.startswith("."))
    assert parts == [f"{MAX_P}=0.02", f"{MAX_P}=0.1"]
    assert len(back) == len(df) and str(back[MAX_P].dtype) == "float64" and str(back[MIN_TH].dtype) == "int64"
    cols = [MAX_P, MIN_TH, "seed", "entity_kind", "entity", "metric"]
    a = df.sort_values(cols).reset_index(drop=True)
    b = back.sort_values(cols).reset_index(drop=True)
    assert _vals(a["value"]) == _vals(b["value"])
    import pandas as pd

    assert len(pd.read_parquet(out / "summary.parquet")) == len(summ)
    meta = json.loads((out / "sweep.json").read_text())
    assert meta["executed"] == 12 and meta["reused"] == 0 and len(meta["runs"]) == 12
    # Again: nothing is run, the frame is the same.
    again = qoslab.sweep(
        RED_DUMBBELL, grid={MAX_P: [0.02, 0.1], MIN_TH: "3..4"}, seeds=3, jobs=2, out=out, overrides=["duration=2s"]
    )
    meta = json.loads((out / "sweep.json").read_text())
    assert meta["executed"] == 0 and meta["reused"] == 12
    assert _vals(again["value"]) == _vals(df["value"])


def test_local_pool_and_in_process_runs_give_identical_results(tmp_path):
    a = qoslab.sweep(RED_DUMBBELL, grid={MIN_TH: "3,5"}, seeds=2, jobs=2, out=tmp_path / "a", overrides=["duration=2s"])
    b = qoslab.sweep(RED_DUMBBELL, grid={MIN_TH: "3,5"}, seeds=2, jobs=1, out=tmp_path / "b", overrides=["duration=2s"])
    keep = a["metric"] != "loop_wall_s"
    assert _vals(a.loc[keep, "value"]) == _vals(b.loc[keep, "value"])
    for key in a["run_key"].unique():
        for t in ("flows", "queues", "series", "events"):
            assert (tmp_path / "a" / "runs" / key / f"{t}.parquet").read_bytes() == (
                tmp_path / "b" / "runs" / key / f"{t}.parquet"
            ).read_bytes()
    # A stored run is the same bytes as qoslab.run + Result.save of that point and seed.
    meta = json.loads((tmp_path / "a" / "sweep.json").read_text())
    first = meta["runs"][0]
    point = f"{MIN_TH}={first['point'][MIN_TH]}"
    saved = qoslab.run(RED_DUMBBELL, seed=first["seed"], overrides=["duration=2s", point], out=tmp_path / "single")
    assert saved.seed == first["seed"]
    for t in ("flows", "queues", "series", "events"):
        assert (tmp_path / "single" / f"{t}.parquet").read_bytes() == (
            tmp_path / "a" / "runs" / first["key"] / f"{t}.parquet"
        ).read_bytes()


def test_sweep_file_names_the_scenario_grid_and_seeds(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(
        f'[sweep]\nscenario = "{RED_DUMBBELL}"\nseeds = 2\nset = ["duration=1s"]\n'
        f'[sweep.grid]\n"{MIN_TH}" = [3, 4]\n"{MAX_P}" = "0.05"\n',
        encoding="utf-8",
    )
    p = sweeps.plan(f)
    assert p.seeds == [1, 2] and p.grid == {MIN_TH: ["3", "4"], MAX_P: ["0.05"]}
    assert p.scenario.duration == "1s" and len(p.jobs) == 4
    # The command line adds to it and overrides its seeds.
    p = sweeps.plan(f, grid={"duration": "1s,2s"}, seeds=1)
    assert len(p.jobs) == 2 * 1 * 2 and p.seeds == [1]


def test_a_sweep_table_inside_a_scenario_is_refused(tmp_path):
    f = tmp_path / "x.toml"
    f.write_text(RED_DUMBBELL.read_text() + "\n[sweep]\nseeds = 2\n", encoding="utf-8")
    p = cli("sweep", str(f), "--out", str(tmp_path / "out"))
    assert p.returncode == 2 and "cannot sit in a scenario file" in p.stderr, p.stderr
    assert not (tmp_path / "out").exists()


# -- bad input: exit 2, clear error, nothing written ---------------------------


@pytest.mark.parametrize(
    "args, message",
    [
        (["--grid", "topology.bottleneck.queue.nope=1,2"], "nope"),
        (["--grid", "topology.bottleneck.queue.max_p=0.1,7"], "max_p"),
        (["--grid", f"{MAX_P}="], "no values"),
        (["--grid", f"{MIN_TH}=9..3"], "empty"),
        (["--grid", "=1,2"], "key.path=values"),
        (["--grid", f"{MIN_TH}=3,4", "--grid", f"{MIN_TH}=5"], "given twice"),
        (["--jobs", "0"], "--jobs"),
        (["--jobs", "2", "--scheduler", "tcp://127.0.0.1:9"], "not allowed with"),
        (["--scheduler", "tcp://127.0.0.1:9"], "cannot reach a Dask scheduler"),
        (["--scheduler", "bogus://x"], "not a scheduler address"),
    ],
)
def test_bad_sweep_input_exits_2_and_writes_nothing(tmp_path, args, message):
    out = tmp_path / "out"
    env = {**os.environ, "QOSLAB_SCHEDULER_TIMEOUT_S": "2", "COLUMNS": "200"}
    p = subprocess.run(
        [sys.executable, "-m", "qoslab", "sweep", str(RED_DUMBBELL), "--set", "duration=1s", "--out", str(out), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert message in p.stderr, p.stderr
    no_traceback(p)
    assert not out.exists()
    assert sorted(x.name for x in tmp_path.iterdir()) == []


# -- kill and resume ------------------------------------------------------------


def test_a_killed_sweep_resumes_without_recomputing_or_losing_runs(tmp_path):
    out = tmp_path / "sw"
    args = [
        sys.executable,
        "-m",
        "qoslab",
        "sweep",
        str(RED_DUMBBELL),
        "--grid",
        f"{MIN_TH}=3,4",
        "--seeds",
        "6",
        "--set",
        "duration=30s",
        "--jobs",
        "2",
        "--out",
        str(out),
    ]
    total = 12
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    store = Store(out)
    deadline = time.monotonic() + 240
    try:
        while len(store.stored()) < 3 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    before = {k: (store.path(k) / "meta.json").stat().st_ino for k in store.stored()}
    assert 3 <= len(before) < total, f"the sweep must be killed halfway: {len(before)} of {total} runs stored"
    assert not (out / "sweep.json").exists()

    p = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    meta = json.loads((out / "sweep.json").read_text())
    assert meta["reused"] == len(before) and meta["executed"] == total - len(before)
    assert f"{total - len(before)} executed, {len(before)} from the store" in p.stdout
    keys = store.stored()
    assert len(keys) == total and sorted(r["key"] for r in meta["runs"]) == keys
    # The runs stored before the kill are the same files: not run again.
    assert all((store.path(k) / "meta.json").stat().st_ino == ino for k, ino in before.items())
    logged = (out / "runs.log").read_text().split()
    assert len(logged) == len(set(logged)), "a run was stored twice"
    assert not [x for x in (out / "runs").iterdir() if x.name.startswith(".")]
    frame = sweeps.read_dataset(out)
    assert frame["run_key"].nunique() == total


def test_cli_sweep_prints_the_per_point_table_and_progress_lines(tmp_path):
    p = cli(
        "sweep",
        str(RED_DUMBBELL),
        "--grid",
        f"{MAX_P}=0.02,0.1",
        "--seeds",
        "2",
        "--set",
        "duration=1s",
        "--jobs",
        "2",
        "--out",
        str(tmp_path / "o"),
    )
    assert p.returncode == 0, p.stderr
    assert "sweep: 4/4 runs" in p.stderr  # plain progress lines off a terminal
    assert "4 runs (2 points x 2 seeds): 4 executed, 0 from the store" in p.stdout
    assert "throughput (Mb/s)" in p.stdout and "0.02" in p.stdout
    assert (tmp_path / "o" / "summary.csv").is_file()


def test_qoslab_run_imports_neither_dask_nor_matplotlib(tmp_path):
    code = (
        "import sys\nfrom qoslab.cli import main\n"
        f"assert main(['run', {str(RED_DUMBBELL)!r}, '--set', 'duration=1s', '--out', {str(tmp_path / 'r')!r},"
        " '-q']) == 0\n"
        "print(sorted(m for m in ('dask', 'distributed', 'matplotlib') if m in sys.modules))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]"


def test_string_grid_values_are_the_same_column_from_python_lists_and_comma_lists(tmp_path):
    a = qoslab.sweep(RED_DUMBBELL, grid={"duration": ["1s", "2s"]}, jobs=1, out=tmp_path / "a")
    b = qoslab.sweep(RED_DUMBBELL, grid={"duration": "1s,2s"}, jobs=1, out=tmp_path / "b")
    assert sorted(set(a["duration"])) == sorted(set(b["duration"])) == ["1s", "2s"]
    assert set(a["run_key"]) == set(b["run_key"])  # the same normalized scenarios
    sim = a[(a["metric"] == "sim_time_s")].set_index("duration")["value"]
    assert sim.to_dict() == {"1s": 1.0, "2s": 2.0}
    assert sorted(p.name for p in (tmp_path / "a" / "dataset").iterdir() if not p.name.startswith(".")) == [
        "duration=1s",
        "duration=2s",
    ]
    assert set(sweeps.read_dataset(tmp_path / "a")["duration"]) == {"1s", "2s"}
