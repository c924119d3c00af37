"""The ``dcbt`` reproduction's measurement code (per-period accounting, Jain,
class averages, tagged delay, packet accounting), checked on a small
explicit network with CBR flows of known rates, one per class, in the
paper's layout (bottleneck = the link ``r0->r1``, so the reproduction's
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


def test_quick_reproduction_judges_every_table_of_the_paper(tmp_path):
    import json

    from qoslab.reproduce import reproduce
    from qoslab.reproduce.cells import read_cells
    from qoslab.reproduce.paper import load_paper

    s = reproduce("dcbt", quick=True, out=tmp_path)
    folder = tmp_path / "dcbt"
    doc = json.loads((folder / "results.json").read_text())
    assert doc["quick"] and doc["seeds"] == [1, 2, 3]
    assert [c["id"] for c in doc["claims"]] == ["red-unfair", "dcbt-fair", "dcbt-chips-fair"]
    for f in ("fig8_per_flow_throughput.png", "fig11_jain.png", "fig12_tagged_delay.png", "report.md", "cells.csv"):
        assert (folder / f).stat().st_size > 0, f
    runs = doc["data"]["runs"]
    assert set(runs) == set(dcbt.VARIANTS)
    # Raw per-flow throughput per period: 35, 37 and 67 active flows.
    assert [p["active_flows"] for p in runs["red"][0]["periods"]] == [35, 37, 67]
    # Every cell of every quick table is judged (none is `not run`), with three seeds.
    paper = load_paper("dcbt")
    quick = {t.id for t in paper.tables if t.quick}
    assert quick == {t.id for t in paper.tables}
    cells = {c.key: c for c in read_cells(folder / "cells.csv")}
    assert set(cells) == {c.key for c in paper.cells}
    assert all(c.verdict in ("agrees", "differs", "uncertain") for c in cells.values()), [
        (k, c.verdict) for k, c in cells.items() if c.verdict not in ("agrees", "differs", "uncertain")
    ]
    assert s.score is not None and s.score.compared == len(paper.cells)
    # What three short runs show robustly: RED lets the unresponsive CBR take most of their 5 Mb/s
    # (paper 4.68 Mb/s) and ChIPS's tagged share follows the flow counts (10/35-10/37, 10/67).
    assert cells[("Fig. 8", "RED, 10-20 s", "untagged per-flow throughput")].verdict == "agrees"
    share = cells[("Fig. 8", "D-CBT w/ ChIPS, 20-30 s", "tagged flows / all flows")]
    assert share.qoslab == pytest.approx(100 * 10 / 67, abs=1.5)
    claims = {c.id: c for c in s.outcome.claims}
    assert claims["red-unfair"].holds, claims["red-unfair"].measured
    # The untagged excess is explained by its share of the queue and its packets' waits.
    assert "its flow share of the queue" in claims["dcbt-fair"].explanation, claims["dcbt-fair"].explanation


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


# -- the paper's cells, from fixed measures ---------------------------------------------------


def _fake_measure(seed: int, variant: str) -> dict:
    """A measure() dict with made-up numbers that depend on the seed and the variant."""
    k = {"red": 1.0, "cbt": 2.0, "dcbt": 3.0, "dcbt_chips": 4.0}[variant] + seed / 10

    def period(tcp, tagged, untagged):
        classes = {}
        for name, (n, bps) in (("tcp", tcp), ("tagged", tagged), ("untagged", untagged)):
            classes[name] = {"flows": n, "per_flow_bps": bps if n else None}
        return {"classes": classes}

    return {
        "periods": [
            period((25, 500e3 * k), (10, 800e3 * k), (0, None)),
            period((25, 300e3 * k), (10, 700e3 * k), (2, 4.5e6 * k)),
            period((55, 200e3 * k), (10, 600e3 * k), (2, 1.0e6 * k)),
        ],
        "probes": {
            "tagged_avg": {"20-30s": 2.0 * k},
            "untagged_avg": {"20-30s": 0.5 * k},
            "tagged_share": {"0-20s": 0.28 * k, "20-30s": 0.15 * k},
        },
        "tcp": {"delivered_pkts": 60000 * k, "drop_rate": 0.05 * k, "throughput_bps": 16e6 * k},
        "tagged": {"delivered_pkts": 20000 * k, "drop_rate": 0.2 * k},
        "trace": {"t_s": [0.1, 0.2, 0.3], "delay_s": [0.031 * k, 0.045 * k, 0.033 * k]},
    }


@pytest.fixture
def fake_runs():
    return {v: [_fake_measure(seed, v) for seed in (1, 2)] for v in dcbt.VARIANTS}


def test_paper_cells_cover_every_cell_of_the_paper_once(fake_runs):
    from qoslab.reproduce.paper import load_paper

    got = [c.key for c in dcbt.paper_cells(fake_runs)]
    assert len(got) == len(set(got))
    assert set(got) == {c.key for c in load_paper("dcbt").cells}
    assert all(len(c.values) == 2 for c in dcbt.paper_cells(fake_runs))


def test_paper_cells_are_the_papers_statistics_in_its_units(fake_runs):
    cells = {c.key: c.values for c in dcbt.paper_cells(fake_runs)}
    k = {
        v: [{"red": 1.0, "cbt": 2.0, "dcbt": 3.0, "dcbt_chips": 4.0}[v] + s / 10 for s in (1, 2)] for v in dcbt.VARIANTS
    }
    # Tables 1-2: packets as counted, rates in %, throughput in kb/s; one value per seed.
    assert cells[("Table 1", "D-CBT", "TCP Packets Delivered")] == pytest.approx([60000 * x for x in k["dcbt"]])
    assert cells[("Table 1", "D-CBT w/ ChIPS", "TCP Packet Drop Rate")] == pytest.approx(
        [5 * x for x in k["dcbt_chips"]]
    )
    assert cells[("Table 1", "D-CBT", "TCP Throughput")] == pytest.approx([16e3 * x for x in k["dcbt"]])
    assert cells[("Table 2", "D-CBT", "Tagged Packet Drop Rate")] == pytest.approx([20 * x for x in k["dcbt"]])
    # Fig. 8: RED's tagged flows 800 against TCP's 500 kb/s: 60 % more; untagged in Mb/s.
    assert cells[("Fig. 8", "RED, 0-10 s", "tagged per-flow throughput above TCP's")] == pytest.approx([60.0, 60.0])
    assert cells[("Fig. 8", "RED, 10-20 s", "untagged per-flow throughput")] == pytest.approx(
        [4.5 * x for x in k["red"]]
    )
    assert cells[("Fig. 8", "CBT, 20-30 s", "untagged per-flow throughput")] == pytest.approx(
        [1e3 * x for x in k["cbt"]]
    )
    share = cells[("Fig. 8", "D-CBT w/ ChIPS, 0-20 s", "tagged flows / all flows")]
    assert share == pytest.approx([28 * x for x in k["dcbt_chips"]])
    assert cells[("Fig. 10", "CBT, 20-30 s", "untagged UDP average")] == pytest.approx([0.5 * x for x in k["cbt"]])
    # Fig. 11: 600 against the flow-weighted mean of 55 TCP at 200 and 2 untagged at 1,000 kb/s.
    others = (55 * 200 + 2 * 1000) / 57
    assert cells[("Fig. 11", "CBT, 20-30 s", "tagged per-flow throughput / other flows' per-flow throughput")] == (
        pytest.approx([600 / others] * 2)
    )
    # Fig. 12 from the traced flow's delays: 31, 45, 33 ms (times k).
    assert cells[("Fig. 12", "D-CBT", "maximum tagged jitter")] == pytest.approx([14 * x for x in k["dcbt"]])
    assert cells[("Fig. 12", "D-CBT w/ ChIPS", "minimum end-to-end delay")] == pytest.approx(
        [31 * x for x in k["dcbt_chips"]]
    )
    # §6.3 pairs the two variants' runs of the same seed.
    ratio = [100 * c / d for d, c in zip(k["dcbt"], k["dcbt_chips"], strict=True)]
    row = "D-CBT w/ ChIPS against D-CBT"
    assert cells[("§6.3", row, "TCP throughput ratio")] == pytest.approx(ratio)
    assert cells[("§6.3", row, "TCP throughput loss")] == pytest.approx([100 - r for r in ratio])
    gain = [100 * (45 * d - 45 * c) / (45 * d) for d, c in zip(k["dcbt"], k["dcbt_chips"], strict=True)]
    assert cells[("§6.3", row, "multimedia jitter gain")] == pytest.approx(gain)


def test_paper_cells_refuse_a_run_without_the_probes_the_paper_states(fake_runs):
    from qoslab.errors import ReproductionError

    del fake_runs["cbt"][1]["probes"]["tagged_avg"]
    with pytest.raises(ReproductionError, match="tagged_avg"):
        dcbt.paper_cells(fake_runs)


def test_probe_means_average_the_samples_of_each_window():
    import pandas as pd

    t = [0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0]
    rows = [("queue", dcbt.BOTTLENECK, "tagged_share", x, x / 100) for x in t]
    rows += [("queue", "other", "tagged_share", 12.0, 9.0), ("queue", dcbt.BOTTLENECK, "backlog_pkts", 12.0, 9.0)]
    s = pd.DataFrame(rows, columns=["entity_kind", "entity_id", "metric", "t_s", "value"])
    means = dcbt._probe_means(s)
    assert set(means) == {"tagged_share"}
    # [a, b): the sample at 30 s is the end of the run, in no window.
    assert means["tagged_share"] == pytest.approx({"0-10s": 0.025, "10-20s": 0.125, "20-30s": 0.225, "0-20s": 0.075})


def test_the_transcription_has_the_shape_of_the_paper():
    """Tables 1-2 as printed (two mechanisms; three and two columns), and the figure statements."""
    from qoslab.reproduce.paper import load_paper

    p = load_paper("dcbt")
    by: dict[str, list] = {}
    for c in p.cells:
        by.setdefault(c.table, []).append(c)
    assert {t: len(v) for t, v in by.items()} == {
        "Table 1": 6,
        "Table 2": 4,
        "Fig. 8": 7,
        "Fig. 10": 2,
        "Fig. 11": 1,
        "Fig. 12": 6,
        "§6.3": 3,
    }
    for table, cols in (
        ("Table 1", ["TCP Packets Delivered", "TCP Packet Drop Rate", "TCP Throughput"]),
        ("Table 2", ["Tagged Packets Delivered", "Tagged Packet Drop Rate"]),
    ):
        assert [(c.row, c.column) for c in by[table]] == [(r, k) for r in ("D-CBT", "D-CBT w/ ChIPS") for k in cols]
        assert all(c.status == "printed" for c in by[table])
    assert [c.value for c in by["Table 1"]] == ["66,648", "4.46", "17,773", "66,386", "4.44", "17,703"]
    assert [c.value for c in by["Table 2"]] == ["21,126", "11.85", "21,519", "12.95"]
    assert all(c.status == "stated" for t in by if not t.startswith("Table") for c in by[t])
    # Table 1's throughput is its packets x 8 kbit / 30 s, as printed.
    for row in ("D-CBT", "D-CBT w/ ChIPS"):
        v = {c.column: c.number for c in by["Table 1"] if c.row == row}
        assert v["TCP Packets Delivered"] * 8 / 30 == pytest.approx(v["TCP Throughput"], abs=1)
