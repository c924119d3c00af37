"""The Rust RED (driven through the counting queue by ``_core.red_replay``)
against the independent FJ93 reference in ``red_reference.py``: same op
sequences, same uniform numbers, same verdicts, averages within 1e-9."""

from __future__ import annotations

import math
import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import qoslab
from qoslab import _core
from red_reference import ReferenceRed

REL = 1e-9


def replay_both(config: dict[str, Any], rate: int, ops: list[tuple[int, str, int]], seed: int) -> Counter:
    """Replays ``ops`` through both REDs and asserts they agree op by op; returns the verdict counts."""
    rust = _core.red_replay(config, rate, ops, seed)
    assert len(rust) == len(ops)
    ref = ReferenceRed(link_rate_bps=rate, **config)
    seen: Counter = Counter()
    for i, ((t, kind, size), got) in enumerate(zip(ops, rust, strict=False)):
        where = f"op {i} {(t, kind, size)} config {config} rate {rate}"
        want = ref.depart(t) if kind == "depart" else ref.arrive(t, size, kind == "arrive_ect", got["uniform"])
        assert got["verdict"] == want.verdict, where
        assert (got["uniform"] is not None) == want.needs_uniform, where
        assert got["count"] == want.count, where
        assert got["qlen"] == want.qlen, where
        assert math.isclose(got["avg"], want.avg, rel_tol=REL, abs_tol=1e-300), (
            f"{where}: avg {got['avg']!r} vs reference {want.avg!r}"
        )
        seen[got["verdict"]] += 1
    return seen


def congested_ops(
    rng: random.Random,
    n: int,
    *,
    arrive_gap_ns: int,
    tx_ns: int,
    size: int = 1000,
    ect_share: float = 0.0,
    pauses: bool = True,
) -> list[tuple[int, str, int]]:
    """Arrivals every ~``arrive_gap_ns`` (exponential) and a link that sends one packet per ``tx_ns``,
    with occasional silences so the queue drains and the idle decay is exercised."""
    ops = []
    t_arr, t_dep = 0, tx_ns
    while len(ops) < n:
        if t_arr <= t_dep:
            kind = "arrive_ect" if rng.random() < ect_share else "arrive"
            ops.append((t_arr, kind, size))
            gap = int(rng.expovariate(1.0 / arrive_gap_ns)) + 1
            if pauses and rng.random() < 0.002:
                gap += rng.randrange(1, 200) * tx_ns
            t_arr += gap
        else:
            ops.append((t_dep, "depart", 0))
            t_dep += tx_ns
    return ops


def test_reference_red_dumbbell_parameters_long_run():
    """RED 60/5/15/0.1/0.002 at 25 Mb/s offered 40 Mb/s (the reference dumbbell's bottleneck)."""
    rate = 25_000_000
    cfg = {"limit": 60, "min_th": 5.0, "max_th": 15.0, "max_p": 0.1, "w_q": 0.002}
    ops = congested_ops(random.Random(1), 40_000, arrive_gap_ns=200_000, tx_ns=320_000)
    seen = replay_both(cfg, rate, ops, seed=7)
    assert seen["early"] > 100 and seen["queued"] > 1000, seen


def test_reference_all_verdicts_occur_and_agree():
    """A fast-moving average (w_q 0.2) and a small limit reach every region: below, early (spaced),
    forced, over the limit, ECN marks, idle decay."""
    rate = 10_000_000
    cfg = {"limit": 12, "min_th": 2.0, "max_th": 8.0, "max_p": 0.3, "w_q": 0.2, "ecn": True}
    ops = congested_ops(random.Random(2), 20_000, arrive_gap_ns=500_000, tx_ns=800_000, ect_share=0.3)
    seen = replay_both(cfg, rate, ops, seed=3)
    for v in ("queued", "early", "forced", "marked", "departed", "empty"):
        assert seen[v] > 0, (v, seen)
    cfg_over = {"limit": 4, "min_th": 5.0, "max_th": 15.0, "w_q": 0.5}
    seen = replay_both(
        cfg_over, rate, congested_ops(random.Random(3), 5_000, arrive_gap_ns=200_000, tx_ns=800_000), seed=4
    )
    assert seen["overlimit"] > 0, seen


def burst_ops(rng: random.Random, cycles: int) -> list[tuple[int, str, int]]:
    """Bursts of back-to-back arrivals of mixed sizes that fill the queue faster than the
    average follows, then slow departures that drain it and leave the link idle."""
    ops, t = [], 0
    for _ in range(cycles):
        for _ in range(rng.randrange(20, 80)):
            t += rng.randrange(1, 20_000)
            ops.append((t, "arrive", rng.choice([64, 576, 1000, 1500])))
        for _ in range(rng.randrange(20, 80)):
            t += rng.randrange(50_000, 1_500_000)
            ops.append((t, "depart", 0))
    return ops


def test_reference_gentle_and_byte_mode():
    rate = 10_000_000
    ops = burst_ops(random.Random(5), 100)
    gentle = {"limit": 40, "min_th": 3.0, "max_th": 6.0, "max_p": 0.2, "w_q": 0.05, "gentle": True}
    seen = replay_both(gentle, rate, ops, seed=11)
    assert seen["early"] > 0 and seen["forced"] > 0, seen
    bytes_mode = {
        "limit_bytes": 30_000,
        "min_th": 3000.0,
        "max_th": 9000.0,
        "max_p": 0.2,
        "w_q": 0.05,
        "mode": "bytes",
        "mean_pkt_size": 800,
    }
    seen = replay_both(bytes_mode, rate, ops, seed=12)
    assert seen["early"] > 0 and seen["forced"] > 0, seen


@st.composite
def scripts(draw: Any) -> tuple[dict[str, Any], int, list[tuple[int, str, int]], int]:
    mode = draw(st.sampled_from(["packets", "bytes"]))
    unit = 1.0 if mode == "packets" else 1000.0
    min_th = draw(st.floats(0.0, 10.0)) * unit
    max_th = min_th + draw(st.floats(0.5, 20.0)) * unit
    cfg: dict[str, Any] = {
        "min_th": min_th,
        "max_th": max_th,
        "max_p": draw(st.floats(0.01, 1.0)),
        "w_q": draw(st.sampled_from([0.002, 0.01, 0.05, 0.2, 0.5, 1.0])),
        "gentle": draw(st.booleans()),
        "ecn": draw(st.booleans()),
        "mode": mode,
        "mean_pkt_size": draw(st.integers(64, 1500)),
    }
    if draw(st.booleans()):
        cfg["limit"] = draw(st.integers(1, 40))
    else:
        cfg["limit_bytes"] = draw(st.integers(1500, 60_000))
    rate = draw(st.sampled_from([1_000_000, 10_000_000, 25_000_000, 1_000_000_000]))
    steps = draw(
        st.lists(
            st.tuples(
                st.integers(0, 3_000_000),
                st.sampled_from(["arrive", "arrive", "arrive_ect", "depart"]),
                st.integers(40, 1500),
            ),
            min_size=1,
            max_size=300,
        )
    )
    ops, t = [], 0
    for dt, kind, size in steps:
        t += dt
        ops.append((t, kind, size if kind != "depart" else 0))
    return cfg, rate, ops, draw(st.integers(0, 2**64 - 1))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scripts())
def test_reference_random_scripts(script):
    cfg, rate, ops, seed = script
    replay_both(cfg, rate, ops, seed)


def test_red_replay_rejects_bad_configs_with_the_field():
    with pytest.raises(qoslab.ConfigError) as e:
        _core.red_replay({"limit": 60, "min_th": 15.0, "max_th": 5.0}, 25_000_000, [], 1)
    assert e.value.diagnostics[0]["path"] == "red.max_th"
    assert "must exceed min_th" in str(e.value)
    with pytest.raises(qoslab.ConfigError) as e:
        _core.red_replay({"limit": 60, "min_th": 5.0, "max_th": 15.0, "wq": 0.1}, 25_000_000, [], 1)
    assert e.value.diagnostics[0]["path"] == "red.wq"
    assert "allowed:" in str(e.value)
    with pytest.raises(qoslab.ConfigError):
        _core.red_replay({"limit": 60, "min_th": 5.0}, 25_000_000, [], 1)


def test_red_replay_rejects_bad_ops():
    cfg = {"limit": 60, "min_th": 5.0, "max_th": 15.0}
    with pytest.raises(ValueError, match="before the previous op"):
        _core.red_replay(cfg, 25_000_000, [(10, "arrive", 100), (5, "arrive", 100)], 1)
    with pytest.raises(ValueError, match="allowed: arrive, arrive_ect, depart"):
        _core.red_replay(cfg, 25_000_000, [(10, "leave", 0)], 1)
    with pytest.raises(ValueError, match="at least 1 byte"):
        _core.red_replay(cfg, 25_000_000, [(10, "arrive", 0)], 1)
