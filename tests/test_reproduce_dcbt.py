"""The ``dcbt`` reproduction's measurement code (per-period accounting, Jain,
class averages, tagged delay, packet accounting), checked on a small
explicit network with CBR flows of known rates, one per class, in the
paper's layout (bottleneck = ``topology.links.0``, so the reproduction's
variant overrides apply to it)."""

from __future__ import annotations

import math

import pytest

import qoslab
from qoslab.reproduce import dcbt

NET = """
name = "dcbt_measure"
duration = "30s"
metrics = { bin = "10s", trace_groups = ["mm"] }

[topology]
preset = "explicit"
default_queue = { type = "fifo", limit = "60pkts" }
nodes = [
  { name = "r0", kind = "router" }, { name = "r1", kind = "router" },
  { name = "tcp_s0", kind = "host" }, { name = "tcp_s1", kind = "host" }, { name = "mm_s0", kind = "host" },
  { name = "cbr_s0", kind = "host" }, { name = "late_s0", kind = "host" }, { name = "d0", kind = "host" },
]
links = [
  { a = "r0", b = "r1", rate = "10Mbps", delay = "20ms", queue = { type = "red", limit = "60pkts", min_th = 5, max_th = 15 } },
  { a = "tcp_s0", b = "r0", rate = "25Mbps", delay = "5ms" },
  { a = "tcp_s1", b = "r0", rate = "25Mbps", delay = "5ms" },
  { a = "mm_s0", b = "r0", rate = "25Mbps", delay = "5ms" },
  { a = "cbr_s0", b = "r0", rate = "25Mbps", delay = "5ms" },
  { a = "late_s0", b = "r0", rate = "25Mbps", delay = "5ms" },
  { a = "r1", b = "d0", rate = "100Mbps", delay = "5ms" },
]

[[traffic]]
name = "tcp"
model = "cbr"
flows = 2
src = "tcp_s*"
dst = "d0"
rate = "1Mbps"
size = "1000B"
class = 0

[[traffic]]
name = "mm"
model = "cbr"
src = "mm_s0"
dst = "d0"
rate = "2Mbps"
size = "1000B"
class = 1

[[traffic]]
name = "cbr"
model = "cbr"
src = "cbr_s0"
dst = "d0"
rate = "4Mbps"
size = "1000B"
class = 2
start = "10s"

[[traffic]]
name = "late"
model = "cbr"
src = "late_s0"
dst = "d0"
rate = "1Mbps"
size = "1000B"
class = 0
start = "20s"
"""  # noqa: E501 (a TOML inline table must stay on one line)


@pytest.fixture(scope="module")
def measured():
    return dcbt.measure(qoslab.run(qoslab.Scenario.from_toml(NET), seed=1))


def test_flows_count_in_the_periods_they_are_active_in(measured):
    p = measured["periods"]
    assert [x["active_flows"] for x in p] == [3, 4, 5]
    assert set(p[0]["per_flow_bps"]) == {"tcp.0", "tcp.1", "mm.0"}
    assert "late.0" in p[2]["per_flow_bps"] and "late.0" not in p[1]["per_flow_bps"]
    # Uncongested (8 Mb/s into 10): every flow gets its CBR rate, within the
    # packets in flight at the period edges.
    for k, want in [
        (0, {"tcp": 1e6, "tagged": 2e6, "untagged": None}),
        (2, {"tcp": 1e6, "tagged": 2e6, "untagged": 4e6}),
    ]:
        for cls, rate in want.items():
            got = p[k]["classes"][cls]["per_flow_bps"]
            assert (got is None) if rate is None else got == pytest.approx(rate, rel=0.01), (k, cls, got)
    assert p[2]["classes"]["tcp"]["flows"] == 3


def test_jain_and_fair_share_follow_their_definitions(measured):
    p = measured["periods"][1]
    xs = list(p["per_flow_bps"].values())
    assert p["jain"] == pytest.approx(sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs)))
    assert p["fair_share_bps"] == pytest.approx(sum(xs) / len(xs))
    # 1, 1, 2, 4 Mb/s: Jain = 64 / (4 * 22).
    assert p["jain"] == pytest.approx(64 / 88, rel=0.02)
    assert p["classes"]["untagged"]["ratio_to_fair"] == pytest.approx(4 / 2, rel=0.02)


def test_packet_accounting_and_tagged_delay(measured):
    tcp, tagged = measured["tcp"], measured["tagged"]
    assert tcp["dropped_pkts"] == 0 and tcp["drop_rate"] == 0.0
    # 2 x 1 Mb/s for 30 s and 1 Mb/s for 10 s of 1000-byte packets.
    assert tcp["sent_pkts"] == pytest.approx(7 * 10 * 125, rel=0.01)
    assert tagged["throughput_bps"] == pytest.approx(2e6, rel=0.01)
    d = measured["tagged_delay"]
    # 5 + 20 + 5 ms of propagation and three serializations of 1000 B.
    assert d["min_s"] == pytest.approx(0.030 + 8e3 / 25e6 + 8e3 / 10e6 + 8e3 / 100e6, rel=1e-3)
    assert d["min_s"] <= d["mean_s"] <= d["max_s"]
    assert d["max_variation_s"] == pytest.approx(d["max_s"] - d["min_s"], abs=1e-12)
    assert len(measured["trace"]["t_s"]) == pytest.approx(tagged["delivered_pkts"], abs=0)


def test_class_waits_and_shares_follow_the_traced_packets(measured):
    # Every group traced: 10-20 s carries TCP 2, tagged 2 and untagged 4 Mb/s of 1000 B packets.
    sc = qoslab.Scenario.from_toml(NET).with_overrides('metrics.trace_groups=["mm", "cbr", "tcp"]')
    w = dcbt.measure(qoslab.run(sc, seed=1))["class_wait"]
    shares = {c: w[c]["packet_share"] for c in ("tcp", "tagged", "untagged")}
    assert shares == pytest.approx({"tcp": 0.25, "tagged": 0.25, "untagged": 0.5}, abs=0.01)
    assert sum(w[c]["queue_share"] for c in shares) == pytest.approx(1.0)
    # Uncongested (8 of 10 Mb/s): a packet waits at most a few packet times (0.8 ms each).
    assert all(0.0 <= w[c]["wait_s"] < 3e-3 for c in shares), w
    # Only the tagged group traced (the module's scenario): the other classes have no wait.
    only_mm = measured["class_wait"]
    assert only_mm["tagged"]["packet_share"] == 1.0 and math.isnan(only_mm["tcp"]["wait_s"])


@pytest.mark.parametrize(
    "variant,kind", [("red", "red"), ("cbt", "cbt"), ("dcbt", "dcbt"), ("dcbt_chips", "dcbt+chips")]
)
def test_the_variant_overrides_set_the_bottleneck_queue(variant, kind):
    sc = qoslab.Scenario.from_toml(NET).with_overrides(*dcbt.VARIANTS[variant], "duration=21s")
    res = qoslab.run(sc, seed=1)
    q = res.queue(dcbt.BOTTLENECK)
    assert q["kind"] == kind
    # Every flow crosses the bottleneck: each delivered packet arrived there and each arrival was sent.
    sent, delivered = int(res.flows["sent_pkts"].sum()), int(res.flows["delivered_pkts"].sum())
    assert delivered <= q["arrivals"] <= sent, (delivered, q["arrivals"], sent)
    # The rest are on an access link (5 ms + 0.32 ms for 1000 B at 25 Mb/s) when the run ends: at most
    # ceil(5.32 ms / interval) per flow, intervals 8, 8, 4, 2, 8 ms: 1 + 1 + 2 + 3 + 1 = 8.
    assert sent - q["arrivals"] <= 8, (sent, q["arrivals"])
    # Conserved at the queue: an arrival departed, was dropped or is still queued.
    assert q["arrivals"] == q["departures"] + q["drops"] + q["backlog_end_pkts"]
    assert q["arrival_bytes"] == 1000 * q["arrivals"]


def test_quick_reproduction_writes_its_results_and_shows_the_orderings(tmp_path):
    import json

    from qoslab.reproduce import reproduce

    s = reproduce("dcbt", quick=True, out=tmp_path)
    folder = tmp_path / "dcbt"
    doc = json.loads((folder / "results.json").read_text())
    assert doc["quick"] and doc["seeds"] == [1, 2, 3]
    assert [c["id"] for c in doc["claims"]] == [
        "red-untagged-dominates",
        "cbt-tagged-over-tcp",
        "dcbt-fair",
        "dcbt-chips-fair",
        "chips-vs-dcbt",
        "dcbt-table1-tcp",
    ]
    for f in ("fig8_per_flow_throughput.png", "fig11_jain.png", "fig12_tagged_delay.png", "report.md"):
        assert (folder / f).stat().st_size > 0, f
    runs = doc["data"]["runs"]
    assert set(runs) == set(dcbt.VARIANTS)
    # Raw per-flow throughput per period: 35, 37 and 67 active flows.
    assert [p["active_flows"] for p in runs["red"][0]["periods"]] == [35, 37, 67]
    # What one short run shows: RED lets the unresponsive CBR dominate (claim 1)...
    claims = {c.id: c for c in s.outcome.claims}
    assert claims["red-untagged-dominates"].holds, claims["red-untagged-dominates"].measured
    # ...D-CBT is fairer than RED once the CBR are in, and ChIPS narrows the tagged delay range.
    jain = {v: [p["jain"] for p in runs[v][0]["periods"]] for v in ("red", "dcbt")}
    assert all(d > r for d, r in zip(jain["dcbt"][1:], jain["red"][1:], strict=True)), jain
    var = {v: runs[v][0]["tagged_delay"]["max_variation_s"] for v in ("dcbt", "dcbt_chips")}
    assert var["dcbt_chips"] < var["dcbt"], var


def test_python_queue_builders_write_the_scenario_keys():
    from qoslab import queues

    q = queues.dcbt(limit=60, min_th=5, max_th=15, chips=True, flow_interval="300ms", w_q=0.002)
    assert q == {
        "type": "dcbt",
        "limit": "60pkts",
        "min_th": 5,
        "max_th": 15,
        "w_q": 0.002,
        "flow_interval": "300ms",
        "chips": True,
    }
    c = queues.cbt(limit=60, min_th=5, max_th=15, tagged_threshold=2.9, chips={"max_tagged_share": 1.0})
    assert c["type"] == "cbt" and c["tagged_threshold"] == 2.9 and c["chips"] == {"max_tagged_share": 1.0}
    with pytest.raises(TypeError, match="chips must be"):
        queues.cbt(limit=60, min_th=5, max_th=15, chips=0.5)  # type: ignore[arg-type]
    sc = qoslab.Scenario.dumbbell(
        name="b",
        sources=2,
        access_rate="100Mbps",
        access_delay="1ms",
        bottleneck_rate="10Mbps",
        bottleneck_delay="10ms",
        queue=q,
        duration="1s",
        traffic=[],
    )
    assert sc.echo["topology"]["bottleneck"]["queue"]["chips"] is True
