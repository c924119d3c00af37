"""PCN [Zhang07] from Python: the builders, a run with admission at overload, and
bad settings refused with their field."""

from __future__ import annotations

import pytest

import qoslab
from qoslab import pcn, stages, topology, traffic
from qoslab.errors import ConfigError


def _domain(bottleneck_stages: list[dict], *, calls_per_s: float, duration: str = "200s") -> qoslab.Scenario:
    def link(a: str, b: str, rate: str, delay: str, **kw: object) -> dict:
        return {"a": a, "b": b, **topology.link(rate=rate, delay=delay, **kw)}  # type: ignore[arg-type]

    nodes = [{"name": n, "kind": k} for n, k in (("s0", "host"), ("i0", "router"), ("e0", "router"), ("d0", "host"))]
    links = [
        link("s0", "i0", "100Mbps", "1ms"),
        link("i0", "e0", "2Mbps", "10ms", stages=bottleneck_stages),
        link("e0", "d0", "100Mbps", "1ms"),
    ]
    voice = traffic.cbr(
        name="voice",
        src="s0",
        dst="d0",
        size=160,
        header=40,
        interval="20ms",
        arrivals=traffic.poisson_arrivals(rate=calls_per_s, lifetime="60s"),
    )
    return qoslab.Scenario.build(
        name="pcn_py",
        duration=duration,
        topology=topology.explicit(nodes=nodes, links=links),
        traffic=[voice],
        pcn=pcn.domain(edges=["i0", "e0"]),
        metrics={"series_interval": "1s"},
    )


def test_admission_keeps_the_voice_load_near_the_admissible_rate():
    # 80 kb/s calls of 60 s at 4x an admissible rate of 1 Mb/s.
    sc = _domain([stages.pcn_admission(admissible_rate="1Mbps")], calls_per_s=4 * 1e6 / 80e3 / 60)
    res = qoslab.run(sc, seed=1)
    dep = res.metric("i0->e0", "departures")
    a = float(dep[dep["t_s"] <= 100.0]["value"].iloc[-1])
    b = float(dep[dep["t_s"] <= 200.0]["value"].iloc[-1])
    rate = (b - a) * 200 * 8 / 100.0
    assert abs(rate - 1e6) < 0.1e6, rate
    assert res.flows["refused"].sum() > 50
    assert res.metric("i0->e0", "threshold_marked")["value"].iloc[-1] > 0


@pytest.mark.parametrize(
    "stage, path",
    [
        (stages.pcn_admission(admissible_rate="3Mbps"), "admissible_rate"),
        (stages.pcn_admission(min_threshold="15ms", max_threshold="5ms"), "max_threshold"),
        (stages.pcn_termination(depth_packets=0), "depth_packets"),
    ],
)
def test_bad_meter_settings_name_their_field(stage, path):
    with pytest.raises(ConfigError) as e:
        _domain([stage], calls_per_s=1.0, duration="5s")
    assert any(d["path"].endswith(path) for d in e.value.diagnostics), e.value.diagnostics


def test_edges_must_be_routers():
    with pytest.raises(ConfigError) as e:
        qoslab.Scenario.build(
            name="x",
            duration="1s",
            topology=topology.dumbbell(
                sources=1,
                access=topology.link(rate="100Mbps", delay="1ms"),
                bottleneck=topology.link(rate="10Mbps", delay="1ms"),
            ),
            traffic=[traffic.cbr(name="c", src="src0", dst="sink0", size=100, rate="10kbps")],
            pcn=pcn.domain(edges=["src0"]),
        )
    assert any(d["path"] == "pcn.edges.0" for d in e.value.diagnostics), e.value.diagnostics


def test_voice_codecs_send_table_2_1s_average_rates():
    """[Zhang07] Table 2.1: average rates 64, 21.75 (ratio 0.34), 80, 32, 96, 38.4, 24, 9.6 kb/s."""
    groups = [
        g
        for c in traffic.VOICE_CODECS
        for g in traffic.voice(name=f"v_{c}", src="src0", dst="sink0", codec=c, flows=20)
    ]
    sc = qoslab.Scenario.build(
        name="codecs",
        duration="200s",
        topology=topology.dumbbell(
            sources=1,
            access=topology.link(rate="1Gbps", delay="1ms"),
            bottleneck=topology.link(rate="1Gbps", delay="1ms"),
        ),
        traffic=groups,
    )
    f = qoslab.run(sc, seed=4).flows
    per_flow = f.groupby("group")["sent_bytes"].sum() * 8 / 200 / 20 / 1e3
    want = {"cbr": 64, "vbr": 160 * 8 / 20 * 0.34, "g711_cbr_20": 80, "g711_vbr_20": 32, "g711_cbr_10": 96}
    want |= {"g711_vbr_10": 38.4, "g729_cbr": 24, "g729_vbr": 9.6}
    for codec, kbps in want.items():
        tol = 0.002 if traffic.VOICE_CODECS[codec][2] == 1.0 else 0.08
        assert per_flow[f"v_{codec}"] == pytest.approx(kbps, rel=tol), (codec, per_flow[f"v_{codec}"])


def _one_link(*groups: dict) -> qoslab.Scenario:
    return qoslab.Scenario.build(
        name="paper",
        duration="2s",
        topology=topology.dumbbell(
            sources=1,
            access=topology.link(rate="1Gbps", delay="1ms"),
            bottleneck=topology.link(rate="1Gbps", delay="1ms"),
        ),
        traffic=list(groups),
    )


def test_the_mix_is_six_codecs_in_equal_proportion_and_svd_is_4_mbps_on_average():
    mix = traffic.voice(name="m", src="src0", dst="sink0", codec="mix", calls_per_s=6.0)
    s = traffic.svd(name="s", src="src0", dst="sink0", flows=1, randomize=0.01)
    echo = _one_link(*mix, s).echo["traffic"]
    assert [g["name"] for g in echo[:6]] == [f"m_{c}" for c in traffic.VOICE_MIX]
    assert all(g["arrivals"]["rate"] == 1.0 for g in echo[:6])
    e = echo[6]
    assert (e["model"], e["interval"], e["on"], e["off"], e["size"], e["randomize"]) == (
        "on_off",
        "1ms",
        "340ms",
        "660ms",
        "1500B",
        0.01,
    )
    with pytest.raises(ConfigError) as err:
        _one_link(*traffic.voice(name="x", src="src0", dst="sink0", codec="g723", flows=1))
    assert [d["path"] for d in err.value.diagnostics] == ["traffic.0.codec"], err.value.diagnostics
    assert "allowed: cbr, vbr" in err.value.diagnostics[0]["message"]


def test_the_python_codec_table_is_the_cores():
    """``traffic.VOICE_CODECS`` (the reproductions' arithmetic) against the core's expansion."""
    groups = [g for c in traffic.VOICE_CODECS for g in traffic.voice(name=c, src="src0", dst="sink0", codec=c, flows=1)]
    echo = {g["name"]: g for g in _one_link(*groups).echo["traffic"]}
    for codec, (size, spacing_ms, on) in traffic.VOICE_CODECS.items():
        g = echo[codec]
        assert (g["size"], g["interval"]) == (f"{size}B", f"{spacing_ms}ms"), codec
        if on == 1.0:
            assert g["model"] == "cbr", codec
        else:
            on_ms = round(on * traffic.VOICE_CYCLE_MS)
            assert (g["model"], g["on"], g["off"]) == ("on_off", f"{on_ms}ms", f"{traffic.VOICE_CYCLE_MS - on_ms}ms")


def test_reproduce_pcn_quick_judges_the_quick_tables_and_checks_the_expected_termination(tmp_path):
    from qoslab.reproduce import reproduce

    # One seed keeps it short (eleven runs); `make run` has three.
    s = reproduce("pcn", quick=True, seeds=1, out=tmp_path)
    claims = {c.id: c for c in s.outcome.claims}
    # §4.4.1's formula against the paper's own arithmetic: a check, never a counted claim.
    assert claims["expected-termination-plt2"].kind == "check" and claims["expected-termination-plt2"].holds is True
    # The text's claims need the full run's families: reported, not judged.
    assert all(c.holds is None for c in s.outcome.claims if c.kind == "claim")
    # Every cell of the quick tables is measured (one seed: uncertain at best); the others are not
    # run, with their table's reason; the set-up figures are inputs.
    assert s.paper is not None
    quick = {t.id for t in s.paper.tables if t.quick}
    assert quick == {"Table 4.1", "Table 4.3", "Fig. 4.4", "§4.2", "Table 4.7"}
    for c in s.cells:
        if c.verdict == "input":
            continue
        if c.key[0] in quick:
            assert c.verdict in ("uncertain", "differs"), c
        else:
            assert c.verdict == "not run" and "full run only" in c.cause, c
    score = s.score
    assert score is not None and score.input == 26 and score.compared == 81 and score.agrees == 0
    assert (tmp_path / "pcn" / "cells.csv").is_file()
