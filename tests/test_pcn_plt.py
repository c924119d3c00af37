"""PCN parking lots ([Zhang07 §2.1], §3.8, §4.4): the topology builder against the shipped
scenario files, the reproduction's metrics on hand-computed inputs, and the family's quick
part (beat-down direction under admission, termination near §4.4.1's expectation)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import qoslab
from qoslab import stages, topology
from qoslab.errors import ConfigError
from qoslab.reproduce.framework import Context
from qoslab.reproduce.pcn import plt
from test_pcn_paperdata import paper_keys

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios" / "pcn"


@pytest.mark.parametrize("k", [2, 3, 5])
def test_builder_and_scenario_file_describe_the_same_parking_lot(k):
    file = qoslab.Scenario.load(SCENARIOS / f"plt{k}.toml")
    built = plt.admission_scenario(bottlenecks=k, model="CBR", weight=0.3, cle=0.05, duration_s=80)
    assert file.echo["topology"] == built.echo["topology"]
    assert file.echo["pcn"] == built.echo["pcn"]
    assert file.echo["traffic"] == built.echo["traffic"]
    topo = file.echo["topology"]
    names = {n["name"] for n in topo["nodes"]}
    assert {f"c{i}" for i in range(k + 1)} | {f"v{i}" for i in range(k + 1)} <= names
    # k bottlenecks carry the meter; every PLT link (bottleneck and vertical) has 1 ms.
    metered = [ln for ln in topo["links"] if ln.get("stages")]
    assert [(ln["a"], ln["b"]) for ln in metered] == [(f"c{i}", f"c{i + 1}") for i in range(k)]
    plt_links = [ln for ln in topo["links"] if ln["a"][0] in "cv" and ln["b"][0] in "cv"]
    assert len(plt_links) == 2 * k + 1
    assert all(ln["delay"] in ("1ms", "1000us", "1000000ns") for ln in plt_links), plt_links


def test_builder_refuses_a_parking_lot_without_bottlenecks():
    with pytest.raises(ConfigError, match="bottlenecks"):
        topology.pcn_parking_lot(bottlenecks=0, rate="T3", stages=[stages.pcn_admission()])


def test_termination_table_on_the_seeds_plt2_example():
    # Link 4 Mb/s (termination rate 2 Mb/s), 1 kb/s flows: long 2 Mb/s, shorts 1 Mb/s each
    # (3/4 of the link on both bottlenecks, long:short 2:1), as §4.4.1's example.
    flows = {"long": 2000, "short0": 1000, "short1": 1000}
    term = {"long": 900, "short0": 300, "short1": 150}
    t = plt.termination_table(flows, term, bottlenecks=2, mean_bps=1000.0, rate_bps=4_000_000.0)
    assert list(t) == ["IEA1 (2H)", "IEA2 (1H)", "IEA3 (1H)", "BN1", "BN2"]
    assert t["IEA1 (2H)"]["optimal"] == pytest.approx(1 / 3)
    assert t["IEA1 (2H)"]["expected"] == pytest.approx(3 / 7)
    assert t["IEA1 (2H)"]["actual"] == pytest.approx(0.45)
    assert t["IEA1 (2H)"]["a_o"] == pytest.approx((0.45 - 1 / 3) * 100)
    assert t["IEA1 (2H)"]["a_e"] == pytest.approx((0.45 - 3 / 7) * 100)
    assert t["IEA3 (1H)"]["expected"] == pytest.approx(1 / 7)
    assert t["IEA3 (1H)"]["a_e"] == pytest.approx((0.15 - 1 / 7) * 100)
    assert t["BN1"]["actual"] == pytest.approx(1200 / 3000)
    assert t["BN1"]["expected"] == pytest.approx(25 / 63)
    assert t["BN2"]["actual"] == pytest.approx(1050 / 3000)
    assert t["BN2"]["a_o"] == pytest.approx((0.35 - 1 / 3) * 100)


def test_termination_table_long_optimal_is_its_most_loaded_bottleneck():
    flows = {"long": 2000, "short0": 1000, "short1": 1400}
    t = plt.termination_table(flows, dict.fromkeys(flows, 0), bottlenecks=2, mean_bps=1000.0, rate_bps=4e6)
    assert t["IEA1 (2H)"]["optimal"] == pytest.approx((3400 - 2000) / 3400)
    assert t["IEA2 (1H)"]["optimal"] == pytest.approx(1 / 3)
    assert t["IEA1 (2H)"]["a_o"] == pytest.approx(-(1400 / 3400) * 100)


def test_beat_down_ratio_and_marking_share_by_hand():
    bins = {
        0.0: {"long": 100.0, "short0": 200.0, "short1": 100.0},
        10.0: {"long": 50.0, "short0": 150.0, "short1": 150.0},
    }
    assert plt.beat_down_ratio(bins, bottlenecks=2) == [1.5, 3.0]
    assert math.isnan(plt.beat_down_ratio({0.0: {"short0": 1.0}}, bottlenecks=1)[0])
    any_, one = plt.any_and_mean([[True, False, False, False], [False, True, False, False]])
    assert (any_, one) == (0.5, 0.25)
    assert plt.any_and_mean([[True, True], [True, True]]) == (1.0, 1.0)


def test_event_and_resident_flows_put_three_quarters_then_at_most_the_rate_on_every_bottleneck():
    # OC3 is 155 Mb/s in scenarios (the paper's value): 3/4 is 1,816.4 flows of 64 kb/s, the
    # termination rate 1,210.9.
    f = plt.event_flows(bottlenecks=3, model="CBR", ratio="2:1")
    assert f["long"] == 1211 and f["short0"] == f["short2"] == 605
    r = plt.resident_flows(bottlenecks=3, model="CBR", ratio="2:1")
    assert r["long"] == 806 and r["short1"] == 403
    assert all(r["long"] + r[f"short{i}"] <= 1210 for i in range(3))
    f = plt.event_flows(bottlenecks=2, model="CBR", ratio="1:1")
    r = plt.resident_flows(bottlenecks=2, model="CBR", ratio="1:1")
    assert f["long"] == f["short1"] == 908 and r["long"] == r["short1"] == 605
    # The rates the metrics use are those the scenario's link names stand for.
    for model, link in plt.TERM_LINK.items():
        sc = plt.termination_scenario(bottlenecks=2, model=model, ratio="1:1")
        bn = next(ln for ln in sc.model["links"] if (ln["a"], ln["b"]) == ("c0", "c1"))
        assert bn["rate_bps"] == plt.RATES[link], (model, bn["rate_bps"])


def test_quick_part_measures_every_cell_of_table_4_7_per_seed_near_the_expectation(tmp_path):
    logs: list[str] = []
    ctx = Context(name="pcn", quick=True, seeds=[1, 2], folder=tmp_path, log=logs.append)
    out = plt.run(ctx)
    ids = [c.id for c in out.claims]
    assert ids == ["expected-termination-plt2", "table3.5-grid-plt", "table3.8-beat-down", "tables4.8-4.9-plt"]
    # §4.4.1's example is a check of the formula, not a reproduced result.
    assert out.claims[0].holds is True and out.claims[0].kind == "check"
    assert all(c.holds is None for c in out.claims[1:])
    # Every cell of Table 4.7 (the quick table), one value per seed, and no other table's.
    got = {(m.table, m.row, m.column): m.values for m in out.cells}
    assert set(got) == paper_keys("Table 4.7")
    assert all(len(v) == 2 for v in got.values())
    # PLT5 at 3/4 load, 2:1: near §4.4.1 (seed: long 0.4446 against 0.4432 expected; the last short
    # aggregate 0.0307 against 0.0049). Were marked packets metered downstream too, the downstream
    # short aggregates would lose a third each.
    assert all(0.38 < v < 0.50 for v in got[("Table 4.7", "IEA1 (5H)", "Actual term")])
    assert all(0.0 <= v < 0.12 for v in got[("Table 4.7", "IEA6 (1H)", "Actual term")])
    assert all(abs(v) < 5 for v in got[("Table 4.7", "BN5", "A - E")])
    assert any("termination runs" in m for m in logs)


def test_vtr_is_in_the_plt_grid_on_1_gbps_links_at_the_same_overload(tmp_path):
    sc = plt.admission_scenario(bottlenecks=3, model="VTR", weight=0.3, cle=0.05, duration_s=80)
    bns = [ln for ln in sc.echo["topology"]["links"] if ln["a"].startswith("c") and ln["b"].startswith("c")]
    assert [ln["rate"] for ln in bns] == ["1Gbps"] * 3
    groups = sc.echo["traffic"]
    assert [g["model"] for g in groups] == ["vtr"] * 4 and [g["name"] for g in groups] == [
        "long",
        "short0",
        "short1",
        "short2",
    ]
    # Each aggregate offered 2.5x its bottleneck's admissible rate (half of 1 Gb/s) in 769 kb/s calls of 60 s.
    rate = groups[0]["arrivals"]["rate"]
    assert math.isclose(rate * 60 * 769_000, 2.5 * 500_000_000)
    # Voice on OC3 and SVD on OC48, as §3.3 runs every topology.
    cbr = plt.admission_scenario(bottlenecks=2, model="CBR", weight=0.3, cle=0.05, duration_s=80)
    assert {ln["rate"] for ln in cbr.echo["topology"]["links"] if ln["a"] == "c0" and ln["b"] == "c1"} == {"155Mbps"}
    svd = plt.admission_scenario(bottlenecks=2, model="SVD", weight=0.3, cle=0.05, duration_s=80)
    assert {ln["rate"] for ln in svd.echo["topology"]["links"] if ln["a"] == "c0" and ln["b"] == "c1"} == {"2400Mbps"}
    # Every type's grid on PLT5 (Table 3.7's rows), the beat-down's PLT2 and PLT3 points besides.
    ctx = Context(name="pcn", quick=False, seeds=[1, 2, 3, 4, 5], folder=tmp_path, log=lambda _m: None)
    plan = plt._admission_plan(ctx)
    for model in ("CBR", "VBR", "MIX", "VTR", "SVD"):
        points = [p for p in plan if p[1] == model and p[0] == 5]
        assert len(points) == 15, model
    assert sorted({(p[0], p[2]) for p in plan if p[0] != 5}) == [(k, w) for k in (2, 3) for w in (0.1, 0.5, 0.9)]


def test_vtr_termination_runs_on_1_gbps_with_its_flows_spread_over_one_frame():
    # 3/4 of 1 Gb/s in 769 kb/s flows: 975.3; the termination rate holds 650.
    f = plt.event_flows(bottlenecks=2, model="VTR", ratio="2:1")
    r = plt.resident_flows(bottlenecks=2, model="VTR", ratio="2:1")
    assert (f["long"], f["short0"], r["long"], r["short0"]) == (650, 325, 433, 216)
    sc = plt.termination_scenario(bottlenecks=2, model="VTR", ratio="2:1")
    groups = {g["name"]: g for g in sc.echo["traffic"]}
    assert {g["model"] for g in groups.values()} == {"vtr"}
    assert groups["long_rr"]["admitted"] is True and groups["long_rr"]["start_jitter"] == "40ms"
    assert groups["long_res"]["flows"] == 433 and groups["long_rr"]["flows"] == 650 - 433
    assert plt.CLAIM_6["VTR"] == 3.0


def test_the_edge_rate_control_moves_only_the_vertical_and_host_links() -> None:
    """Claim 6's control (plt_edge_control) changes one knob: the edge links' rate."""
    base = plt.termination_scenario(bottlenecks=2, model="CBR", ratio="2:1")
    oc3 = plt.termination_scenario(bottlenecks=2, model="CBR", ratio="2:1", edge_rate="OC3")
    links_base, links_oc3 = base.echo["topology"]["links"], oc3.echo["topology"]["links"]
    assert len(links_base) == len(links_oc3)
    bottleneck_rate = links_base[0]["rate"]
    for a, b in zip(links_base, links_oc3, strict=True):
        is_bottleneck = a["a"].startswith("c") and a["b"].startswith("c")
        assert (a == b) == is_bottleneck, (a, b)
        assert b["rate"] == bottleneck_rate
        assert {**a, "rate": None} == {**b, "rate": None}
    assert base.echo["traffic"] == oc3.echo["traffic"]
