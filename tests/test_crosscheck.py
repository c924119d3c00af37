"""The RED crosscheck's parsers and figures (crosscheck/metrics.py,
crosscheck/cases.py), without ns-2: on a hand-made trace whose figures are
worked out by hand, and on the first 1060 lines of a real ns-2.35 trace of
the crosscheck's 25-Reno case (seed 1), whose counts were taken with awk."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "crosscheck"))

import cases  # noqa: E402
import metrics  # noqa: E402

EXCERPT = Path(__file__).parent / "data" / "ns2_red_bottleneck_excerpt.tr"

HAND = """\
+ 0.0 0 1 tcp 1000 ------- 0 2.0 3.0 0 0
- 0.0 0 1 tcp 1000 ------- 0 2.0 3.0 0 0
+ 0.1 0 1 tcp 1000 ------- 1 4.0 5.0 0 1
+ 0.2 0 1 cbr 1000 ------- 2 6.0 7.0 0 2
d 0.2 0 1 cbr 1000 ------- 2 6.0 7.0 0 2
+ 0.3 1 0 ack 40 ------- 0 3.0 2.0 0 3
r 0.4 0 1 tcp 1000 ------- 0 2.0 3.0 0 0
- 0.5 0 1 tcp 1000 ------- 1 4.0 5.0 0 1
r 0.9 0 1 tcp 1000 ------- 1 4.0 5.0 0 1
+ 1.5 0 1 tcp 1000 ------- 1 4.0 5.0 1 4
"""


def test_hand_trace_gives_the_hand_worked_figures():
    # Link 0 -> 1 only (the 1 -> 0 ACK is ignored); the line at 1.5 s is past the end.
    tr = metrics.parse_ns2_trace(HAND.splitlines(), src=0, dst=1, rate_bps=16_000, duration_s=1.0)
    assert (tr.arrivals, tr.drops, tr.departed_bytes) == (3, 1, 2000)
    # One packet waits from 0.1 s to 0.5 s (the 0.2 s arrival is dropped at once).
    assert tr.queue_area == pytest.approx(0.4)
    assert tr.received == {0: 1000, 1: 1000}
    m = tr.metrics(range(3))  # flow 2 got nothing through
    assert m.utilization == pytest.approx(2000 * 8 / 16_000)
    assert m.drop_fraction == pytest.approx(1 / 3)
    assert m.jain == pytest.approx((2000 * 8) ** 2 / (3 * 2 * (1000 * 8) ** 2))
    assert m.mean_queue == pytest.approx(0.4)


def test_real_ns2_excerpt_counts_match_awk():
    with EXCERPT.open() as f:
        tr = metrics.parse_ns2_trace(f, src=0, dst=1, rate_bps=25e6, duration_s=0.27)
    # awk '{c[$1]++}': + 415, - 352, d 4, r 289; departed 352 x 1000 B.
    assert (tr.arrivals, tr.drops, tr.departed_bytes) == (415, 4, 352_000)
    assert sum(tr.received.values()) == 289_000 and len(tr.received) == 25
    m = tr.metrics(range(25))
    assert m.utilization == pytest.approx(352_000 * 8 / (25e6 * 0.27))
    assert m.drop_fraction == pytest.approx(4 / 415)
    assert m.jain == pytest.approx(0.897834, abs=1e-6)
    # The slow-start burst fills the queue: 59 packets wait at the end.
    assert 0 < m.mean_queue < 60


def test_malformed_lines_name_their_number():
    with pytest.raises(ValueError, match="line 2"):
        metrics.parse_ns2_trace(
            ["+ 0.0 0 1 tcp 1000 ------- 0 2.0 3.0 0 0", "+ 0.1 0 1 tcp"], src=0, dst=1, rate_bps=1.0, duration_s=1.0
        )
    with pytest.raises(ValueError, match="line 1: a number"):
        metrics.parse_ns2_trace(
            ["+ zero 0 1 tcp 1000 ------- 0 2.0 3.0 0 0"], src=0, dst=1, rate_bps=1.0, duration_s=1.0
        )
    with pytest.raises(ValueError, match="more packets left"):
        metrics.parse_ns2_trace(
            ["- 0.0 0 1 tcp 1000 ------- 0 2.0 3.0 0 0"], src=0, dst=1, rate_bps=1.0, duration_s=1.0
        )
    with pytest.raises(ValueError, match="goes back"):
        metrics.parse_ns2_trace(
            ["+ 0.2 0 1 tcp 1000 ------- 0 2.0 3.0 0 0", "- 0.1 0 1 tcp 1000 ------- 0 2.0 3.0 0 0"],
            src=0,
            dst=1,
            rate_bps=1.0,
            duration_s=1.0,
        )


def test_jain_is_one_for_equal_shares_and_one_over_n_for_a_monopoly():
    assert metrics.jain([3.0, 3.0, 3.0]) == pytest.approx(1.0)
    assert metrics.jain([5.0, 0.0, 0.0, 0.0]) == pytest.approx(0.25)
    with pytest.raises(ValueError):
        metrics.jain([])


def test_tolerances_are_the_issues():
    assert metrics.within("utilization", 0.90, 0.929) and not metrics.within("utilization", 0.90, 0.931)
    assert metrics.within("drop_fraction", 0.026, 0.0305) and not metrics.within("drop_fraction", 0.026, 0.0315)
    assert metrics.within("jain", 0.99, 0.961) and not metrics.within("jain", 0.99, 0.959)
    assert metrics.within("mean_queue", 7.5, 8.99) and not metrics.within("mean_queue", 7.5, 9.01)


def test_qoslab_figures_come_from_the_queue_row_and_flows():
    row = {"arrivals": 1000, "drops": 25, "departure_bytes": 900_000, "link_rate_bps": 1e6, "backlog_mean_pkts": 6.5}
    m = metrics.qoslab_metrics(row, [10_000, 10_000, 0], duration_s=8.0)
    assert m.utilization == pytest.approx(0.9)
    assert m.drop_fraction == pytest.approx(0.025)
    assert m.jain == pytest.approx(2 / 3)
    assert m.mean_queue == 6.5


def test_case_scenarios_are_valid_qoslab_scenarios(tmp_path):
    import qoslab

    for case in cases.CASES.values():
        p = tmp_path / f"{case.name}.toml"
        p.write_text(cases.qoslab_toml(case))
        sc = qoslab.load(p)
        assert sc is not None
        text = p.read_text()
        assert text.count('kind = "host"') == 2 * len(case.flows)
        assert 'size = "960B"' in text and 'header = "40B"' in text  # 1000 B TCP packets on the wire
        # ns-2.35's Reno rules on qoslab's side too (docs/mechanisms/tcp.md).
        assert text.count('stack = "ns2"') == 1 + (case.n_late > 0)
        assert sc.echo["topology"]["links"][0]["rate"] == "25Mbps"
    late = cases.CASES["tcp_late"]
    assert (late.n_tcp, late.n_late, len(late.flows)) == (25, 30, 55)
    res = qoslab.run(qoslab.Scenario.from_toml(cases.qoslab_toml(late)).with_overrides("duration=21s"), seed=1)
    starts = res.flows.groupby("group")["start_s"].agg(["min", "max"])
    assert starts.loc["late", "min"] >= cases.LATE_START_S and starts.loc["late", "max"] <= cases.LATE_START_S + 0.1
    slow = qoslab.Scenario.from_toml(cases.qoslab_toml(late, 18_600_000))
    assert slow.echo["topology"]["links"][0]["rate"] != "25Mbps"
