"""The limits on a run's estimated memory and events on ``qoslab sweep`` and ``qoslab reproduce``
(the refusal message tells the user to pass ``--max-memory`` / ``--max-events``, or
``max_memory=`` / ``max_events=`` in Python): they are taken, reach every job, and are checked
where the job runs."""

from __future__ import annotations

import dataclasses

import pytest

import qoslab
from conftest import RED_DUMBBELL, cli
from qoslab import sweeps
from qoslab.scenario import Scenario, default_limits


def test_sweep_refuses_a_run_beyond_max_events_and_says_which_option_raises_it(tmp_path):
    p = cli("sweep", str(RED_DUMBBELL), "--set", "duration=1s", "--max-events", "1e3", "--out", str(tmp_path / "o"))
    assert p.returncode == 2, p.stderr
    assert "traffic.0.rate" in p.stderr and "at most 1000" in p.stderr and "--max-events" in p.stderr
    assert "Traceback" not in p.stderr and not (tmp_path / "o").exists()
    with pytest.raises(qoslab.ConfigError, match="max_events= in Python"):
        qoslab.sweep(RED_DUMBBELL, overrides=["duration=1s"], max_events=1000, jobs=1, out=tmp_path / "o")
    with pytest.raises(qoslab.ConfigError, match="max_memory= in Python"):
        qoslab.sweep(RED_DUMBBELL, overrides=["duration=1s"], max_memory=1000, jobs=1, out=tmp_path / "o")
    assert not (tmp_path / "o").exists()


def test_sweep_limits_reach_every_job_and_are_checked_where_it_runs(tmp_path):
    p = sweeps.plan(
        RED_DUMBBELL,
        grid={"topology.bottleneck.queue.max_p": "0.02,0.1"},
        overrides=["duration=1s"],
        max_events=10**7,
        max_memory=2**30,
    )
    assert {(j.max_memory, j.max_events) for j in p.jobs} == {(2**30, 10**7)}
    # A Scenario object keeps its own limits unless they are given.
    sc = Scenario.load(RED_DUMBBELL, overrides=["duration=1s"], max_events=10**7)
    assert {j.max_events for j in sweeps.plan(sc).jobs} == {10**7}
    assert {j.max_events for j in sweeps.plan(sc, max_events=2 * 10**7).jobs} == {2 * 10**7}
    # The worker checks the job's limits: a job whose limit is too low is refused there.
    low = dataclasses.replace(p.jobs[0], max_events=1000)
    with pytest.raises(qoslab.ConfigError, match="at most 1000"):
        sweeps.execute_job(low)
    summary, _, _ = sweeps.execute_job(p.jobs[0])
    assert summary["events"] > 0


def test_reproduce_takes_the_limits_for_the_scenarios_it_builds(tmp_path):
    with default_limits(max_events=1000):
        assert Scenario(RED_DUMBBELL.read_text()).limits == (None, 1000)
    assert Scenario(RED_DUMBBELL.read_text()).limits == (None, None)
    p = cli("reproduce", "examples", "--quick", "--max-events", "1e3", "--out", str(tmp_path / "r"))
    assert p.returncode == 2, p.stderr
    assert "at most 1000" in p.stderr and "--max-events" in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "r" / "examples").exists()
