"""The reproduction framework: statistics, claims, registry, atomic output."""

from __future__ import annotations

import json
import math
import types

import pytest

from qoslab import ReproductionError
from qoslab.reproduce import Claim, Outcome, execute, module, names
from qoslab.reproduce.framework import RESULTS_KEYS
from qoslab.stats import Estimate, cv, t975


def test_t_quantiles_match_the_table_and_are_conservative_between_entries():
    assert t975(1) == 12.706 and t975(2) == 4.303 and t975(9) == 2.262 and t975(30) == 2.042
    assert t975(45) == 2.021 and t975(100) == 2.000 and t975(10_000) == 1.960
    assert all(t975(d) >= t975(d + 1) for d in range(1, 200))
    with pytest.raises(ValueError):
        t975(0)


def test_estimate_mean_and_confidence_interval():
    e = Estimate.of([1.0, 2.0, 3.0])
    assert e.mean == 2.0 and e.sd == 1.0
    assert math.isclose(e.half_width, 4.303 / math.sqrt(3))
    assert e.fmt(".2f") == "2.00 ± 2.48"
    one = Estimate.of([0.5])
    assert one.half_width is None and one.fmt(".1f", scale=100, unit="%") == "50.0%"
    assert Estimate.of([math.nan]).fmt() == "n/a"
    assert Estimate.of([1.0, math.nan, 3.0]).mean == 2.0
    assert Estimate.of([2.0, math.nan]).to_json() == {"mean": 2.0, "ci95": None, "values": [2.0, None]}


def test_coefficient_of_variation():
    assert cv([0.3, 0.3, 0.3]) == 0.0
    assert cv([0.0, 2.0]) == 1.0
    assert math.isnan(cv([])) and math.isnan(cv([0.0, 0.0]))


def test_a_claim_that_does_not_hold_must_explain_itself():
    Claim("a", "t", "p", "m", "tol", True)
    Claim("b", "t", "p", "m", "tol", False, explanation="because")
    with pytest.raises(ReproductionError, match="no explanation"):
        Claim("c", "t", "p", "m", "tol", False)
    with pytest.raises(ReproductionError, match="not checked"):
        Claim("d", "t", "p", "m", "tol", None, explanation="  ")


def test_registry_lists_examples_and_rejects_unknown_names():
    assert names()[0] == "examples"
    assert module("examples").NAME == "examples"
    with pytest.raises(ReproductionError, match="available: examples"):
        module("nope")


def _fake(reproduce):
    m = types.ModuleType("fake")
    m.NAME, m.TITLE, m.SEED_FILE, m.PAPER = "fake-one", "A fake", "000_x.txt", "Nobody 2000"
    m.reproduce = reproduce
    return m


def test_execute_writes_results_json_and_report(tmp_path):
    def reproduce(ctx):
        assert ctx.seeds == [1, 2] and not ctx.quick
        (ctx.folder / "fig.png").write_bytes(b"png")
        return Outcome(
            claims=[
                Claim("x-holds", "it holds", "1.0", "1.01 ± 0.02", "±5%", True),
                Claim("x-fails", "it fails", "2", "3", "±0", False, explanation="why"),
            ],
            data={"nan": math.nan, "t": (1, 2)},
            sections=[("Setup", "the setup")],
        )

    s = execute(_fake(reproduce), quick=False, seeds=2, out=tmp_path, log=lambda m: None)
    folder = tmp_path / "fake_one"
    assert s.folder == folder and s.counts == {"holds": 1, "fails": 1, "not checked": 0}
    doc = json.loads((folder / "results.json").read_text())
    assert tuple(doc) == RESULTS_KEYS
    assert RESULTS_KEYS[:6] == ("name", "seed_file", "qoslab_version", "quick", "seeds", "wall_s")
    assert RESULTS_KEYS[6:] == ("score", "fidelity", "claims", "data")
    assert doc["seeds"] == [1, 2] and doc["data"] == {"nan": None, "t": [1, 2]}
    assert doc["score"] is None and doc["fidelity"] is None  # the fake reproduces no paper's tables
    assert not (folder / "cells.csv").exists()
    report = (folder / "report.md").read_text()
    assert "`x-holds`" in report and "`x-fails`" in report and "why" in report and "## Setup" in report
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fake_one"]


def test_a_failed_reproduction_leaves_nothing_and_keeps_the_previous_one(tmp_path):
    ok = _fake(lambda ctx: Outcome(claims=[], data={}))
    execute(ok, quick=True, seeds=None, out=tmp_path, log=lambda m: None)
    before = (tmp_path / "fake_one" / "results.json").read_text()

    def boom(ctx):
        (ctx.folder / "partial").write_text("x")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        execute(_fake(boom), quick=True, seeds=None, out=tmp_path, log=lambda m: None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fake_one"]
    assert (tmp_path / "fake_one" / "results.json").read_text() == before
    assert json.loads(before)["seeds"] == [1, 2, 3]  # quick default: three seeds


def test_early_share_bound_of_non_gentle_red():
    from qoslab.reproduce.examples import early_share_bound

    # 40 x 1 Mb/s into 25 Mb/s with max_p 0.1: at most 2*0.1*(1-0.375)/(0.8*0.375) of the drops are early.
    assert math.isclose(early_share_bound(0.1, 0.375), 0.2 * 0.625 / (0.8 * 0.375))
    assert early_share_bound(0.1, 0.15) == 1.0  # light overload: early drops can do it all
    assert early_share_bound(0.6, 0.9) == 1.0  # 2 max_p >= 1: no bound
    assert early_share_bound(0.1, 0.375) > early_share_bound(0.1, 0.5)


def test_early_share_bound_matches_a_replayed_red_under_heavy_overload():
    """The bound is what a real RED reaches: arrivals at 1.6x the service rate through RED 60/5/15/0.1."""
    import random

    from qoslab import _core
    from qoslab.reproduce.examples import early_share_bound

    rng, ops, t_arr, t_dep = random.Random(9), [], 0, 320_000
    while len(ops) < 60_000:
        if t_arr <= t_dep:
            ops.append((t_arr, "arrive", 1000))
            t_arr += 200_000
        else:
            ops.append((t_dep, "depart", 0))
            t_dep += 320_000
    steps = _core.red_replay({"limit": 60, "min_th": 5.0, "max_th": 15.0}, 25_000_000, ops, rng.randrange(1 << 60))
    v = [s["verdict"] for s in steps[5000:]]
    drops = v.count("early") + v.count("forced") + v.count("overlimit")
    arrivals = drops + v.count("queued")
    share = v.count("early") / drops
    assert share <= early_share_bound(0.1, drops / arrivals) + 0.02
    assert share > 0.25


def test_a_store_gives_back_every_run_it_holds_and_computes_only_the_rest(tmp_path):
    """The resume of an interrupted reproduction: with a store, the same batch again computes
    nothing and gives the same values (reduced ones, and saved runs' folders byte for byte); a
    value lost or damaged is computed again, alone; another reduction of the same runs is not
    given the first one's values."""
    import qoslab
    from conftest import SCENARIOS
    from qoslab.reproduce.framework import Context, _reduction_name
    from qoslab.store import Store, ValueStore

    sc = qoslab.load(SCENARIOS / "edge" / "fig6a_periodic.toml").with_overrides('duration="4s"')
    runs = [("a", sc, 1), ("b", sc.with_overrides("topology.links.6.queue.buffers=50"), 1), ("c", sc, 2)]
    logs: list[str] = []

    def ctx(folder: str) -> Context:
        store = ValueStore(tmp_path / "store")
        return Context(name="t", quick=True, seeds=[1], folder=tmp_path / folder, log=logs.append, store=store)

    def delivered(res: qoslab.Result) -> int:
        return int(res.flows["delivered_pkts"].sum())

    def sent(res: qoslab.Result) -> int:
        return int(res.flows["sent_pkts"].sum())

    first = ctx("one")
    kept = first.run_reduced(runs, delivered, save=False)
    assert (first.computed_runs, first.stored_runs) == (3, 0)
    again = ctx("two")
    assert again.run_reduced(runs, delivered, save=False) == kept
    assert (again.computed_runs, again.stored_runs) == (0, 3)
    assert "t: 3 of 3 runs taken from the store" in logs[-1]
    other = ctx("three")
    assert other.run_reduced(runs, sent, save=False) != kept and other.computed_runs == 3
    # Saved runs: their folders written from the store are the computed ones, byte for byte
    # (the store keeps the folder's own files, summary.json with its run's loop_wall_s too).
    first.run_many(runs)
    redo = ctx("four")
    assert [delivered(r) for r in redo.run_many(runs)] == kept and redo.computed_runs == 0
    for v, _, seed in runs:
        one = tmp_path / "one" / v / f"seed_{seed}"
        assert sorted(f.name for f in one.iterdir() if not f.name.startswith(".")) == [
            "events.parquet",
            "flows.parquet",
            "queues.parquet",
            "series.parquet",
            "summary.json",
        ]
        for f in one.iterdir():
            assert f.read_bytes() == (tmp_path / "four" / v / f"seed_{seed}" / f.name).read_bytes(), f
    # The store: the saved runs as result folders (the sweep engine's layout), the reduced
    # values as files.
    assert len(Store(tmp_path / "store").stored()) == 3
    files = sorted((tmp_path / "store" / "values").rglob("*.pkl.gz"))
    assert len(files) == 6  # 3 runs' values under each of the two reductions
    # A saved run whose table is damaged is computed again, alone.
    key = redo._key(0, 3, *runs[0], "run", True)
    (Store(tmp_path / "store").path(key) / "flows.parquet").write_bytes(b"not parquet")
    again_saved = ctx("six")
    assert [delivered(r) for r in again_saved.run_many(runs)] == kept
    assert (again_saved.computed_runs, again_saved.stored_runs) == (1, 2)
    # One value damaged, one lost: those two are computed again, the third taken.
    damaged = ctx("five")
    name = _reduction_name(delivered)
    keys = [damaged._key(i, 3, v, s, seed, name, False) for i, (v, s, seed) in enumerate(runs)]
    store = ValueStore(tmp_path / "store")
    store.path(keys[0]).write_bytes(b"not a gzip file")
    store.path(keys[1]).unlink()
    assert damaged.run_reduced(runs, delivered, save=False) == kept
    assert (damaged.computed_runs, damaged.stored_runs) == (2, 1)


def test_run_reduced_keeps_only_the_reduced_value_in_order_and_saves_only_when_asked(tmp_path):
    """The pool and the in-process path keep the same reduced values in the order given; with
    ``save=False`` no run folder is written (a study of thousands of runs keeps only what it needs)."""
    import qoslab
    from conftest import SCENARIOS
    from qoslab.executor import open_executor
    from qoslab.reproduce.framework import Context

    sc = qoslab.load(SCENARIOS / "edge" / "fig6a_periodic.toml").with_overrides('duration="6s"')
    runs = [("a", sc, 2), ("b", sc.with_overrides("topology.links.6.queue.buffers=50"), 1), ("c", sc, 1)]

    def delivered(res: qoslab.Result) -> int:
        return int(res.flows["delivered_pkts"].sum())

    inproc = Context(name="t", quick=True, seeds=[1], folder=tmp_path / "in", log=lambda _m: None)
    kept = inproc.run_reduced(runs, delivered, save=False)
    assert not (tmp_path / "in").exists()
    with open_executor(jobs=2) as ex:
        pooled = Context(name="t", quick=True, seeds=[1], folder=tmp_path / "pool", log=lambda _m: None, executor=ex)
        assert pooled.run_reduced(runs, delivered, save=False) == kept
        assert not (tmp_path / "pool").exists()
        saved = pooled.run_many(runs)
    assert [delivered(r) for r in saved] == kept
    assert kept[0] != kept[2]  # the seed moves the flows' starts
    assert sorted(p.name for p in (tmp_path / "pool").iterdir()) == ["a", "b", "c"]


def test_a_failed_run_names_its_run_and_seed(tmp_path, monkeypatch):
    """With ``--jobs`` many runs go at once: a run's error names the reproduction, the variant
    and the seed (a sweep's: its grid point and seed), not the core's message alone."""
    import qoslab
    from conftest import SCENARIOS
    from qoslab import _core
    from qoslab.reproduce.framework import Context
    from qoslab.sweeps import Job, execute_job

    def fails(_scenario, _seed):
        raise qoslab.SimulationError("an event was scheduled at 5 ns, before the current event's time (a bug)")

    sc = qoslab.load(SCENARIOS / "edge" / "fig6a_periodic.toml").with_overrides('duration="1s"')
    monkeypatch.setattr(_core, "run", fails)
    ctx = Context(name="pcn", quick=True, seeds=[1], folder=tmp_path / "r", log=lambda _m: None)
    with pytest.raises(qoslab.SimulationError, match=r"^pcn: t4_2_vbr_2_f0\.1 seed 4: an event was scheduled at 5 ns"):
        ctx.run_reduced([("t4_2_vbr_2_f0.1", sc, 4)], lambda r: 0, save=False)
    job = Job(index=0, key="", seed=3, point=(("topology.links.6.queue.buffers", "50"),), text=sc.text)
    with pytest.raises(qoslab.SimulationError, match=r"^buffers=50 seed 3: an event was scheduled"):
        execute_job(job)
