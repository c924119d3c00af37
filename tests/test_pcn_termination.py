"""PCN termination (seed 004 §4): the failure event, the over-termination metrics, the
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


def test_quick_part_reports_table_4_3_fig_4_4_and_table_4_2_without_judging(tmp_path):
    out = term.run(_ctx(tmp_path, [1]))
    claims = {c.id: c for c in out.claims}
    assert set(claims) == {"table4.3-rtt", "table4.2-randomization"}
    for c in claims.values():
        assert c.holds is None and "5 seeds" in c.explanation
    rounds = out.data["table4_3"]["rounds"]
    # Fig. 4.4: ingress 1 cuts at about t1 + 0.2 s and again at about t1 + 0.4 s, ingress 2 50 ms
    # after ingress 1's first cut (its extra one-way delay).
    (r1,), (r2,) = rounds["1"], rounds["2"]
    assert 0.2 < r1[0] < 0.22 and 0.045 < r2[0] - r1[0] < 0.055 and any(0.39 < t < 0.43 for t in r1[1:]), rounds
    t = out.data["table4_3"]["ingress"]
    # Ingress 1 over-terminates by its second round (seed: 9.59 points); the bottleneck cut stays
    # within a few points of the optimum (seed: about 6).
    assert t["1"]["over_pts"]["mean"] > 5.0
    b = out.data["table4_3"]["bottleneck"]
    assert 2.0 < b["over_pts"]["mean"] < 9.0
    assert "600/0" in "".join(out.data["table4_2"]) and set(out.data["synchronization"]) == {"0"}


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
