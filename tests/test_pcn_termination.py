"""PCN termination [Zhang07 §4]: the failure event, the over-termination metrics, the
``admitted`` traffic key, and the reproduction's quick termination part."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import qoslab
from conftest import cli
from qoslab import pcn, topology, traffic
from qoslab.errors import ConfigError
from qoslab.reproduce.framework import Context
from qoslab.reproduce.pcn import termination as term
from test_pcn_paperdata import paper_keys

ROOT = Path(__file__).resolve().parents[1]


def _ctx(tmp_path: Path, seeds: list[int]) -> Context:
    return Context(name="pcn", quick=True, seeds=seeds, folder=tmp_path, log=lambda _: None)


def test_metrics_count_the_flows_present_at_t1_and_both_forms_of_over_termination():
    # Ingress a: 6 flows, 3 terminated after t1; ingress b: 3 flows, 1 terminated
    # after t1 and 1 before it (not in the load); one refused flow (not admitted).
    rows = [
        ("a", True, True, 200.21),
        ("a", True, True, 200.21),
        ("a", True, True, 200.41),
        ("a", True, False, 201.0),
        ("a", True, False, 201.0),
        ("a", True, False, 201.0),
        ("b", True, True, 200.235),
        ("b", True, True, 150.0),
        ("b", True, False, 201.0),
        ("b", True, False, 201.0),
        ("b", False, False, 190.0),
    ]
    flows = pd.DataFrame(rows, columns=["src", "admitted", "terminated", "end_s"])
    m = term.termination_metrics(flows, mean_bps=1.0, termination_bps=6.0)
    # 9 flows present at 1 bit/s against 6: optimal 1/3; 4 terminated: 4/9.
    assert m["flows"] == 9 and m["terminated"] == 4 and m["terminated_before_t1"] == 1
    assert m["optimal"] == pytest.approx(1 / 3)
    assert m["actual"] == pytest.approx(4 / 9)
    assert m["over_pct"] == pytest.approx((4 / 9 - 1 / 3) / (1 / 3) * 100)
    assert m["over_pts"] == pytest.approx((4 / 9 - 1 / 3) * 100)
    a, b = m["ingress"]["a"], m["ingress"]["b"]
    assert a["actual"] == pytest.approx(0.5) and a["over_pct"] == pytest.approx(50.0)
    assert b["actual"] == pytest.approx(1 / 3) and b["over_pct"] == pytest.approx(0.0)
    assert a["rounds"] == pytest.approx([0.21, 0.41]) and b["rounds"] == pytest.approx([0.235])
    # Below the termination rate the optimum is 0 and the percent form is undefined.
    m = term.termination_metrics(flows, mean_bps=0.5, termination_bps=6.0)
    assert m["optimal"] == 0.0 and m["over_pts"] == pytest.approx(4 / 9 * 100)


def test_synchronization_splits_flows_into_unmarked_full_and_partial():
    import numpy as np

    s = term.synchronization(np.array([0.0, 0.0, 1.0, 0.995, 0.5]))
    assert (s["unmarked"], s["full"], s["partial"]) == pytest.approx((0.4, 0.4, 0.2))


def test_the_failure_event_steps_the_load_and_the_ingresses_cut_about_a_third(tmp_path):
    # A tenth of Table 4.3: 176 CBR calls on 15.552 Mb/s (half of it is 121.5 calls),
    # ingresses at RTT 1 ms and 51 ms.
    sc = term.scenario(
        _ctx(tmp_path, [1]), model="CBR", ingresses=2, flows=[118, 58], delays_us=[250, 25_250], link_bps=15_552_000
    )
    res = qoslab.run(sc, seed=1)
    f = res.flows
    rerouted = f[f["group"].str.startswith("rerouted")]
    # Rerouted flows are admitted without asking: they start at t1 less their access delay.
    assert rerouted["admitted"].all() and len(rerouted) == 39 + 19
    assert ((rerouted["start_s"] >= 199.97) & (rerouted["start_s"] < 200.02)).all()
    dep = res.metric("r0->r1", "departures")

    def rate(t0: float, t1: float) -> float:
        v = dep[(dep["t_s"] >= t0 - 1e-9) & (dep["t_s"] <= t1 + 1e-9)]["value"].to_numpy()
        return (v[-1] - v[0]) * 160 * 8 / (t1 - t0)

    before, during, after = rate(199.5, 199.99), rate(200.03, 200.2), rate(200.6, 200.99)
    assert before < 7.776e6 < during, (before, during)
    assert during == pytest.approx(176 * 64e3, rel=0.02)
    assert after <= 7.776e6 * 1.01, after
    m = term.termination_metrics(f, mean_bps=64e3, termination_bps=7.776e6)
    assert m["terminated_before_t1"] == 0
    assert m["optimal"] == pytest.approx(1 - 121.5 / 176)
    # About a third is cut, never less than the optimum (rounding up), at most a few flows more.
    assert m["optimal"] <= m["actual"] <= m["optimal"] + 0.06, m
    # Ingress 1 (RTT 1 ms) first cuts two intervals (200 ms) after the first marks (the
    # 256-packet bucket lasts about 90 ms at this small excess); ingress 2 its extra one-way
    # delay (25 ms) later.
    r1, r2 = m["ingress"]["src0"]["rounds"], m["ingress"]["src1"]["rounds"]
    assert 0.2 < r1[0] < 0.32 and 0.02 < r2[0] - r1[0] < 0.03, (r1, r2)
    # Every delivered packet of a flow cut at t2 crossed the bottleneck after t1, marked or not.
    assert (f["pcn_excess_marked_pkts"] <= f["delivered_pkts"]).all()
    assert f["pcn_excess_marked_pkts"].sum() > 0 and f["pcn_threshold_marked_pkts"].sum() == 0


def test_quick_part_measures_every_cell_of_tables_4_1_4_3_fig_4_4_and_section_4_2_per_seed(tmp_path):
    # One seed keeps the test short (ten runs); the quick run itself has three.
    out = term.run(_ctx(tmp_path, [1]))
    assert [c.id for c in out.claims] == ["sec4.5-batch", "sec4.5-batch-types"]
    assert all(c.holds is None for c in out.claims)
    got = {(m.table, m.row, m.column): m.values for m in out.cells}
    # Every measured cell of the quick tables (not Table 4.3's RTT nor Fig. 4.4's t1: set-up figures).
    assert set(got) == paper_keys("Table 4.1") | paper_keys("Table 4.3") | paper_keys("Fig. 4.4") | paper_keys("§4.2")
    assert all(len(v) == 1 for v in got.values())
    # Fig. 4.4: ingress 1 cuts at about t1 + 0.2 s and again at about t1 + 0.4 s, ingress 2 50 ms
    # after ingress 1's first cut (its extra one-way delay).
    fig = {c: got[("Fig. 4.4", "RT Difference experiment", c)] for c in ("t2", "t3", "t4")}
    for t2, t3, t4 in zip(*fig.values(), strict=True):
        assert 200.2 < t2 < 200.22 and 0.045 < t3 - t2 < 0.055 and 200.39 < t4 < 200.43, fig
    # The flows at the event are the set-up (input cells, never measured); ingress 1 over-terminates
    # by its second round (seed: 9.59 points); the bottleneck stays within a few points of the
    # optimum (seed: about 6).
    assert ("Table 4.3", "1", "Bottleneck Eventload") not in got
    assert all(v > 5.0 for v in got[("Table 4.3", "1", "Over-term Perc")])
    assert all(2.0 < v < 9.0 for v in got[("§4.2", "RT Difference experiment: bottleneck", "over-termination")])
    rounds = out.data["table4_3"]["rounds"]
    assert len(rounds["1"]) == 1 and all(len(r) >= 2 for r in rounds["1"]), rounds
    # Fig. 4.3: the load by ingress (64 kb/s a flow): 1,761 flows at the event (a third above the
    # termination rate of 77.76 Mb/s: 112.7 Mb/s), ingress 1's cut reaches the bottleneck before
    # ingress 2's, and after both rounds the load is near the termination rate.
    f43 = out.data["table4_3"]["fig4_3"]
    t = f43["t_s"]
    at = {x: min(range(len(t)), key=lambda i, x=x: abs(t[i] - x)) for x in (200.05, 200.23, 200.55)}
    total = [a + b for a, b in zip(f43["src0"], f43["src1"], strict=True)]
    assert total[at[200.05]] == pytest.approx(1761 * 64_000, rel=0.01)
    assert f43["src0"][at[200.23]] < f43["src0"][at[200.05]] and f43["src1"][at[200.23]] == f43["src1"][at[200.05]]
    assert 0.8 < total[at[200.55]] / 77_760_000 < 1.0
    assert [f.file for f in out.figures] == ["fig4_3.png"] and (tmp_path / "fig4_3.png").stat().st_size > 10_000
    # Table 4.1: CBR keeps every flow to the event (the paper's load, an input cell, is in the report's
    # data only); about a third is cut (seed: 0.321-0.336).
    assert ("Table 4.1", "CBR / 600", "BtleNeck Load") not in got
    assert out.data["table4_1"]["CBR/600"]["flows"]["values"] == [1782.0]
    assert all(0.30 < v < 0.40 for v in got[("Table 4.1", "CBR / 2", "Actual term")])


def _rerouted_scenario(with_pcn: bool) -> qoslab.Scenario:
    return qoslab.Scenario.build(
        name="rerouted",
        duration="2s",
        topology=topology.dumbbell(
            sources=1,
            routers=2,
            access=topology.link(rate="100Mbps", delay="1ms"),
            bottleneck=topology.link(rate="10Mbps", delay="1ms"),
        ),
        traffic=traffic.voice(name="v", src="src0", dst="sink0", flows=3, start="1s", admitted=True),
        pcn=pcn.domain(edges=["r0", "r1"]) if with_pcn else None,
    )


def test_admitted_groups_start_at_once_and_need_a_pcn_domain():
    res = qoslab.run(_rerouted_scenario(True), seed=1)
    assert (res.flows["first_tx_s"] == 1.0).all() and res.flows["admitted"].all()
    with pytest.raises(ConfigError) as e:
        _rerouted_scenario(False)
    assert any(d["path"] == "traffic.0.admitted" and "[pcn]" in d["message"] for d in e.value.diagnostics)


def test_bad_admitted_value_exits_2_naming_the_field_and_writes_nothing(tmp_path):
    text = (
        (ROOT / "scenarios" / "pcn" / "term_rtt.toml")
        .read_text()
        .replace("\nadmitted = true\n", '\nadmitted = "yes"\n', 1)
    )
    assert 'admitted = "yes"' in text
    f = tmp_path / "in" / "bad.toml"
    f.parent.mkdir()
    f.write_text(text)
    p = cli("run", str(f), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    assert "traffic.1.admitted" in p.stderr and "Traceback" not in p.stderr and "panicked" not in p.stderr
    assert not (tmp_path / "out").exists()


def test_rounding_and_termination_start_keys_change_the_cut_and_unknown_values_name_the_field(tmp_path):
    # A tenth of the 600-ingress row: 178 CBR calls over 60 ingresses (3 each) on 15.552 Mb/s,
    # packet times randomized (f = 0.01): the marks of a 3-flow aggregate are a draw, so how its
    # excess is rounded to whole flows matters (docs/reproductions/pcn.md).
    ctx = _ctx(tmp_path, [1])

    def cut(**pcn_keys: str) -> float:
        sc = term.scenario(ctx, model="CBR", ingresses=60, flows=178, randomize=0.01, link_bps=15_552_000, pcn=pcn_keys)
        return term.termination_metrics(qoslab.run(sc, seed=1).flows, mean_bps=64e3, termination_bps=7.776e6)["actual"]

    up, nearest, down, grid = cut(), cut(rounding="nearest"), cut(rounding="down"), cut(termination_start="grid")
    assert down < nearest < up, (down, nearest, up)
    assert grid != up
    bad = (("rounding", "sideways", "up, down, nearest"), ("termination_start", "x", "mark, grid"))
    for key, value, allowed in bad:
        with pytest.raises(ConfigError) as e:
            term.scenario(ctx, model="CBR", ingresses=2, flows=[118, 58], link_bps=15_552_000, pcn={key: value})
        assert any(d["path"] == f"pcn.{key}" and allowed in d["message"] for d in e.value.diagnostics)


def _doc(sc: qoslab.Scenario) -> dict:
    import tomllib

    return tomllib.loads(sc.text)


def _count_form(flows: pd.DataFrame, *, mean_bps: float, termination_bps: float) -> dict:
    """The single-rate measure as it was before mixed rates (count shares), kept verbatim as
    the reference the rate-share form must reproduce byte for byte."""
    import math

    import numpy as np

    admitted = flows[flows["admitted"]]
    end = admitted["end_s"].to_numpy(dtype=float)
    cut_all = admitted["terminated"].to_numpy(dtype=bool)
    before = cut_all & (end < term.T1)
    present = admitted[~before]
    cut = present["terminated"].to_numpy(dtype=bool)
    n = len(present)
    load = n * mean_bps
    optimal = max(0.0, 1.0 - termination_bps / load) if load > 0 else math.nan

    def figures(n_present: int, n_cut: int) -> dict:
        actual = n_cut / n_present if n_present else math.nan
        over = (actual - optimal) / optimal * 100 if optimal > 0 else math.nan
        return {
            "flows": float(n_present),
            "terminated": float(n_cut),
            "actual": actual,
            "optimal": optimal,
            "over_pct": over,
            "over_pts": (actual - optimal) * 100,
        }

    out: dict = {**figures(n, int(cut.sum())), "load_bps": load, "terminated_before_t1": int(before.sum())}
    per = {}
    for src, g in present.groupby("src", sort=True):
        c = g["terminated"].to_numpy(dtype=bool)
        times = np.unique(np.round(g["end_s"].to_numpy(dtype=float)[c] - term.T1, 6))
        per[str(src)] = {**figures(len(g), int(c.sum())), "rounds": [float(t) for t in times]}
    out["ingress"] = per
    return out


def test_rate_shares_keep_single_rate_figures_byte_identical(tmp_path):
    import json

    import numpy as np

    # A tenth of Table 4.2's VBR row at 600 ingresses (VBR: flows end before t1, so the
    # "present" filter is exercised) with randomized packet times.
    sc = term.scenario(_ctx(tmp_path, [1]), model="VBR", ingresses=60, flows=534, randomize=0.01, link_bps=15_552_000)
    f = qoslab.run(sc, seed=2).flows
    mean = term.MODELS["VBR"].mean_bps
    old = _count_form(f, mean_bps=mean, termination_bps=7.776e6)
    assert old["terminated"] > 0 and len(old["ingress"]) == 60
    for rates in (mean, np.full(len(f), mean), term.flow_rates(f, "VBR")):
        new = term.termination_metrics(f, mean_bps=rates, termination_bps=7.776e6)
        assert json.dumps(new) == json.dumps(old)


def test_mixed_rates_give_rate_shares_and_a_wrong_rate_count_names_the_field():
    # Ingress a: a 3 b/s flow cut of 3 + 1 + 1 b/s; ingress b: 1 + 1 b/s, one cut. Load 7 b/s
    # against 4.2: optimal 0.4; cut 3 + 1 = 4 of 7 (a count share would say 2 of 5).
    rows = [
        ("a", True, True, 200.21, 3.0),
        ("a", True, False, 201.0, 1.0),
        ("a", True, False, 201.0, 1.0),
        ("b", True, True, 200.21, 1.0),
        ("b", True, False, 201.0, 1.0),
    ]
    flows = pd.DataFrame(rows, columns=["src", "admitted", "terminated", "end_s", "bps"])
    m = term.termination_metrics(flows, mean_bps=flows["bps"], termination_bps=4.2)
    assert m["load_bps"] == pytest.approx(7.0) and m["optimal"] == pytest.approx(0.4)
    assert m["actual"] == pytest.approx(4 / 7) and m["flows"] == 5 and m["terminated"] == 2
    assert m["ingress"]["a"]["actual"] == pytest.approx(3 / 5) and m["ingress"]["b"]["actual"] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="mean_bps: 2 rates for 5 flows"):
        term.termination_metrics(flows, mean_bps=[1.0, 2.0], termination_bps=4.2)


def test_mix_spreads_each_codec_over_the_ingresses_and_cuts_about_a_third_of_the_rate(tmp_path):
    ctx = _ctx(tmp_path, [1])
    # Table 4.2's MIX at 1,000 ingresses: 2,502 calls, 417 per codec; the j-th calls of the six
    # codecs land on six different ingresses and every ingress carries 1-2 residents.
    doc = _doc(term.scenario(ctx, model="MIX", ingresses=1000, flows=2502))
    groups = doc["traffic"]
    per_codec: dict[str, int] = {}
    residents: dict[str, int] = {}
    for g in groups:
        codec = g["name"].split("_", 1)[1]
        per_codec[codec] = per_codec.get(codec, 0) + g["flows"]
        if g["name"].startswith("resident"):
            residents[g["src"]] = residents.get(g["src"], 0) + g["flows"]
        else:
            assert g["admitted"] is True
    assert per_codec == dict.fromkeys(traffic.VOICE_MIX, 417)
    assert len(residents) == 1000 and set(residents.values()) == {1, 2}
    first = {g["name"].split("_", 1)[1]: g["src"] for g in groups if g["name"].startswith("resident")}
    assert len(set(first.values())) == 6, first
    assert term.MODELS["MIX"].mean_bps == pytest.approx(280_000 / 6)
    # A tenth, run: 252 calls (42 per codec) over 20 ingresses on 15.552 Mb/s.
    sc = term.scenario(ctx, model="MIX", ingresses=20, flows=252, link_bps=15_552_000)
    f = qoslab.run(sc, seed=1).flows
    rates = term.flow_rates(f, "MIX", sc.echo["traffic"])
    assert sorted(set(rates)) == [9_600.0, 24_000.0, 32_000.0, 38_400.0, 80_000.0, 96_000.0]
    m = term.termination_metrics(f, mean_bps=rates, termination_bps=7.776e6)
    cut = f["terminated"].to_numpy() & (f["end_s"].to_numpy() >= term.T1)
    present = ~(f["terminated"].to_numpy() & (f["end_s"].to_numpy() < term.T1))
    assert m["actual"] == pytest.approx(rates[cut].sum() / rates[present].sum())
    assert m["actual"] != pytest.approx(cut.sum() / present.sum())
    # Residents alone sit at the termination rate (75 % × 2/3 = 50 %), so the VBR codecs' bursts
    # cut a few flows before t1 (out of the load) and more after it at this small scale.
    assert 0.25 < m["optimal"] < 0.36 and m["optimal"] <= m["actual"] <= m["optimal"] + 0.25, m
    with pytest.raises(ValueError, match="multiple of 6"):
        term.scenario(ctx, model="MIX", ingresses=2, flows=100)


def test_batch_arrivals_keep_the_calls_and_put_a_batch_at_one_ingress_and_instant(tmp_path):
    import numpy as np

    ctx = _ctx(tmp_path, [1])

    def groups(seed: int) -> list[dict]:
        sc = term.scenario(ctx, model="CBR", ingresses=600, flows=1782, arrivals="batch", batch_seed=seed)
        return _doc(sc)["traffic"]

    g1 = groups(1)
    assert g1 == groups(1) and g1 != groups(2)
    res = [g for g in g1 if g["name"].startswith("resident")]
    rer = [g for g in g1 if g["name"].startswith("rerouted")]
    assert sum(g["flows"] for g in res) == 1188 and sum(g["flows"] for g in rer) == 594
    assert all("start_jitter" not in g for g in g1)
    assert all(g.get("admitted") is True for g in rer)
    # Mean batch 5 (the last of a class is cut): about 238 resident batches, so fewer than 600
    # ingresses carry residents, and batch b is at ingress b mod 600.
    assert 4.0 < np.mean([g["flows"] for g in res]) < 6.0
    assert all(g["src"] == f"src{int(g['name'].rsplit('_b', 1)[1]) % 600}" for g in g1)
    # A tenth, run: the batches' calls start at their batch's instant.
    sc = term.scenario(ctx, model="CBR", ingresses=60, flows=178, link_bps=15_552_000, arrivals="batch", batch_seed=3)
    f = qoslab.run(sc, seed=3).flows
    assert f.groupby("group")["start_s"].nunique().max() == 1 and len(f) == 178
    m = term.termination_metrics(f, mean_bps=64e3, termination_bps=7.776e6)
    assert m["optimal"] <= m["actual"] <= m["optimal"] + 0.1, m
    for bad, msg in (({"arrivals": "bulk"}, "arrivals: 'bulk'"), ({"model": "MIX", "flows": 13}, "multiple of 6")):
        with pytest.raises(ValueError, match=msg):
            term.scenario(ctx, **{"model": "CBR", "ingresses": 2, "flows": 180, **bad})


def test_mix_batch_arrivals_keep_each_codecs_calls_and_their_rates(tmp_path):
    """§4.5 for the MIX: each codec's sixth of the calls in batches of one codec, the batches taken by
    the ingresses in turn across the codecs; every flow's rate is its codec's (Table 2.1)."""
    ctx = _ctx(tmp_path, [1])
    sc = term.scenario(ctx, model="MIX", ingresses=40, flows=600, arrivals="batch", batch_seed=2)
    groups = _doc(sc)["traffic"]
    per_codec: dict[str, int] = {}
    for g in groups:
        codec = g["name"].split("_", 1)[1]
        per_codec[codec] = per_codec.get(codec, 0) + g["flows"]
        assert "start_jitter" not in g or g["start_jitter"] in ("0s", 0)
    assert per_codec == dict.fromkeys(traffic.VOICE_MIX, 100)
    assert 40 < len(groups) < 600 // 2, "batches of mean 5, not single calls"
    f = qoslab.run(sc, seed=2).flows
    rates = term.flow_rates(f, "MIX", sc.echo["traffic"])
    assert len(f) == 600 and sorted(set(rates)) == sorted(set(term.MIX_BPS.values()))


def test_vtr_runs_on_its_link_and_cuts_about_a_third(tmp_path):
    ctx = _ctx(tmp_path, [1])
    doc = _doc(term.scenario(ctx, model="VTR", ingresses=300, flows=975))
    assert doc["topology"]["bottleneck"]["rate"] == "1000000000bps"
    # Small: 30 flows (23 Mb/s; the 20 residents 15.4 Mb/s, below the termination rate, so
    # none is cut before t1) over 10 ingresses on 36 Mb/s: about a fifth is to be cut. The
    # 256-packet bucket of 1500 B (3 Mb) lasts about 0.6 s at this 5 Mb/s excess: run 2 s on.
    sc = term.scenario(ctx, model="VTR", ingresses=10, flows=30, link_bps=36_000_000, end_after_s=2.0)
    f = qoslab.run(sc, seed=1).flows
    m = term.termination_metrics(f, mean_bps=term.flow_rates(f, "VTR"), termination_bps=18e6)
    assert m["flows"] == 30 and m["optimal"] == pytest.approx(1 - 18e6 / (30 * 769e3))
    assert m["optimal"] <= m["actual"] <= m["optimal"] + 0.3 and len(m["ingress"]) == 10, m
