"""The pcn admission family (seed 004 §3): its scenarios, its quick part, and how its claims are judged."""

from __future__ import annotations

import math

import numpy as np
import pytest

import qoslab
from qoslab.reproduce.framework import Context
from qoslab.reproduce.pcn import _adm_setup as S
from qoslab.reproduce.pcn import admission
from qoslab.reproduce.stats import Estimate


def test_call_rates_offer_the_overload_and_the_rtt_topology_spans_22_to_220_ms():
    # 5 x 77.5 Mb/s of 64 kb/s calls of 60 s: 100.9 calls a second.
    assert math.isclose(S.calls_per_s("CBR", 77_500_000, 5.0), 5 * 77_500_000 / 64_000 / 60)
    d = S.rtt_delays_ms(100)
    assert (d[0], d[-1], len(d)) == (1.0, 100.0, 100)
    # Round trip: twice (access + 10 ms bottleneck).
    assert (2 * (d[0] + 10), 2 * (d[-1] + 10)) == (22.0, 220.0)


def test_admission_scenarios_carry_the_admission_meter_alone():
    sc, d = S.build(name="t", model="VTR", link="1Gbps", overload=5, duration_s=10, cle=S.per_interval(0.3, 0.05))
    echo = sc.echo
    bott = next(lk for lk in echo["topology"]["links"] if lk["a"] == "i0")
    assert [s["type"] for s in bott["stages"]] == ["pcn_admission"] and d == "i0->e0"
    assert echo["pcn"]["cle"] == "per_interval" and echo["traffic"][0]["model"] == "vtr"
    step, _ = S.build(
        name="t",
        model="CBR",
        link="OC3",
        overload=5,
        duration_s=10,
        cle=S.per_packet(),
        ingresses=10,
        marking="step",
        arrivals="BATCH",
    )
    st = step.echo["topology"]["bottleneck"]["stages"][0]
    assert st["marking"] == "step" and step.echo["traffic"][0]["arrivals"]["process"] == "batch_poisson"
    mix, _ = S.build(name="t", model="MIX", link="OC3", overload=5, duration_s=10, cle=S.per_packet())
    assert len(mix.echo["traffic"]) == 6


def test_the_quick_part_measures_one_grid_point_on_both_topologies(tmp_path):
    ctx = Context(name="pcn", quick=True, seeds=[1], folder=tmp_path, log=lambda _m: None)
    out = admission.run(ctx)
    claims = {c.id: c for c in out.claims}
    assert {
        "table3.1-cbr-poisson",
        "table3.2-3.3-aggregation",
        "table3.5-grid-single-rtt",
        "s3.5-rtt-fairness",
        "table3.4-svd-vq",
        "table3.6-ingress-aggregation",
    } <= set(claims)
    # One seed: measured, never judged.
    assert all(c.holds is None for c in claims.values())
    assert "5 seeds" in claims["table3.5-grid-single-rtt"].explanation
    pts = out.data["table3_5"]["points"]
    assert set(pts) == {"VTR/single/w0.3/c0.05", "VTR/rtt/w0.3/c0.05"}
    # VTR at 5x stays near the admissible rate on both topologies; far and near ingresses alike.
    for p in pts.values():
        assert abs(p["over_admission_pct"]["mean"]) < 3.0, p
    f = out.data["s3_5_fairness"]["VTR"]
    assert 0.8 < f["admitted_far"]["mean"] / f["admitted_near"]["mean"] < 1.25, f
    # Low aggregation (1 Mb/s: 8 calls) admits worse than T3 (350 calls).
    t = out.data["table3_2_3"]
    assert t["CBR/1Mbps, T1/POISSON"]["over_admission_pct"] > t["CBR/T3-OC3/POISSON"]["over_admission_pct"]


def _grid(value: float) -> dict:
    return {
        (m, t, w, c): {"over_admission_pct": Estimate.of([value] * 5), "sd_ratio": Estimate.of([0.01] * 5)}
        for m in S.TRAFFIC
        for t in ("single", "rtt")
        for w in admission.WEIGHTS
        for c in admission.CLE_THRESHOLDS
    }


@pytest.mark.parametrize("value, holds", [(1.9, True), (-2.9, True), (2.1, False), (-3.1, False)])
def test_the_grid_claim_holds_only_inside_minus_3_plus_2_with_5_seeds(tmp_path, value, holds):
    ctx = Context(name="pcn", quick=False, seeds=[1, 2, 3, 4, 5], folder=tmp_path, log=lambda _m: None)
    grid = _grid(1.0)
    grid[("MIX", "rtt", 0.5, 0.15)]["over_admission_pct"] = Estimate.of([value] * 5)
    # SVD is outside the claim: its points do not count.
    grid[("SVD", "single", 0.1, 0.05)]["over_admission_pct"] = Estimate.of([6.0] * 5)
    (claim,), _table, data, summary = admission._table_3_5(ctx, grid)
    assert claim.holds is holds, claim
    if not holds:
        assert "MIX rtt w=0.5 CLE=0.15" in claim.explanation
    assert summary[("SVD", "single")][1] == 6.0
    assert len(data["points"]) == 150
    few = Context(name="pcn", quick=False, seeds=[1, 2, 3], folder=tmp_path, log=lambda _m: None)
    assert admission._table_3_5(few, grid)[0][0].holds is None


def _ingress_dispersion(flows, ingresses: int, duration_s: float, window_s: float = 5.0) -> float:
    """Calls per (ingress, window) after the first window: their variance over their mean (1 for a
    Poisson process of calls at every ingress, more when an ingress gets its calls in bursts)."""
    f = flows[flows["start_s"] >= window_s]
    cells = f.groupby([f["src"], (f["start_s"] // window_s).astype(int)]).size().to_numpy().astype(float)
    n = ingresses * (int(duration_s // window_s) - 1)
    counts = np.concatenate([cells, np.zeros(n - len(cells))])
    return float(counts.var() / counts.mean())


def test_the_mix_draws_each_calls_ingress_so_no_ingress_gets_its_calls_in_bursts():
    # Table 3.6's set-up scaled down: the six codec groups of the MIX over 300 ingresses.
    n, duration = 300, 40.0
    sc, _ = S.build(
        name="t", model="MIX", link="T3", overload=5, duration_s=duration, cle=S.per_interval(0.3, 0.05), ingresses=n
    )
    assert [g.get("src_choice") for g in sc.echo["traffic"]] == ["random"] * 6
    # One group (CBR) and the single link keep their sources in turn: their figures stay valid.
    cbr, _ = S.build(
        name="t", model="CBR", link="T3", overload=5, duration_s=duration, cle=S.per_interval(0.3, 0.05), ingresses=n
    )
    single, _ = S.build(name="t", model="MIX", link="T3", overload=5, duration_s=duration, cle=S.per_packet())
    assert all("src_choice" not in g for g in cbr.echo["traffic"] + single.echo["traffic"])
    res = qoslab.run(sc, seed=1)
    # About 43 calls a second: 1,500 calls in 2,100 cells; the estimate's sd is about 0.04.
    d = _ingress_dispersion(res.flows, n, duration)
    assert 0.85 < d < 1.15, d
    # The same scenario with the groups' calls handed out in turn (qoslab before issue 13's fix):
    # the six groups' j-th calls reach ingress j together, in bursts.
    rr = qoslab.run(sc, seed=1, overrides=[f"traffic.{k}.src_choice=round_robin" for k in range(6)])
    assert _ingress_dispersion(rr.flows, n, duration) > 2.0
    # The same call arrivals (the sources are drawn from a stream of their own).
    assert len(res.flows) == len(rr.flows)
    # Deterministic per seed.
    again = qoslab.run(sc, seed=1)
    assert again.flows.equals(res.flows) and again.series.equals(res.series)
