"""The traffic groups' timing options of issue 10 §3: ``packetization`` of ON/OFF
groups and the host timing jitter ``send_jitter``. What the builders write, that
the loader accepts it and refuses wrong values with field paths, and that each
option changes what the sources send (so each test fails without it)."""

from __future__ import annotations

import pytest

import qoslab
from qoslab import Scenario, queues, topology, traffic

ACCESS = topology.link(rate="100Mbps", delay="1ms")


def dumbbell(*groups, duration="2s", **kwargs) -> Scenario:
    bottleneck = topology.link(rate="100Mbps", delay="1ms", queue=queues.fifo(limit=50))
    return Scenario.build(
        name="t",
        duration=duration,
        topology=topology.dumbbell(sources=1, access=ACCESS, bottleneck=bottleneck),
        traffic=list(groups),
        **kwargs,
    )


def exp1(**kw):
    return traffic.on_off(
        name="e", src="src0", dst="sink0", size=320, header=66, interval="40ms", on="313ms", off="325ms", flows=10, **kw
    )


def test_builders_write_the_keys_only_when_given():
    assert traffic.uniform_jitter(max="10ms") == {"dist": "uniform", "max": "10ms"}
    assert "packetization" not in exp1() and "send_jitter" not in exp1()
    g = exp1(packetization="nominal", send_jitter=traffic.uniform_jitter(max="10ms"))
    assert g["packetization"] == "nominal" and g["send_jitter"] == {"dist": "uniform", "max": "10ms"}
    c = traffic.cbr(
        name="c", src="src0", dst="sink0", size=320, interval="40ms", send_jitter=traffic.uniform_jitter(max="10ms")
    )
    echo = dumbbell(g, c).echo["traffic"]
    assert echo[0]["packetization"] == "nominal" and echo[1]["send_jitter"]["max"] == "10ms"


def test_nominal_packetization_sends_the_nominal_rate():
    # EXP1: nominal 386 B x 8 / 40 ms x 313/638 = 37.87 kb/s; ceil 40.34 kb/s.
    def rate(**kw) -> float:
        res = qoslab.run(dumbbell(exp1(**kw), duration="400s"), seed=1)
        return float(res.flows["sent_bytes"].sum()) * 8 / 400 / 10

    ceil, nominal = rate(), rate(packetization="nominal")
    assert ceil == pytest.approx(40_340, rel=0.02)
    assert nominal == pytest.approx(37_870, rel=0.02)
    assert rate(packetization="ceil") == ceil


def test_send_jitter_spreads_the_receiver_inter_arrivals_deterministically():
    def hist(seed: int, **kw) -> dict[float, float]:
        g = traffic.cbr(name="c", src="src0", dst="sink0", size=320, interval="40ms", flows=5, **kw)
        sc = dumbbell(g, duration="20s", metrics={"interarrival_bin": "1ms", "interarrival_max": "80ms"})
        s = qoslab.run(sc, seed=seed).series
        s = s[s["metric"] == "interarrival_count"]
        out: dict[float, float] = {}
        for t, v in zip(s["t_s"], s["value"], strict=True):
            out[round(float(t), 3)] = out.get(round(float(t), 3), 0.0) + float(v)
        return out

    plain = hist(1)
    jit = hist(1, send_jitter=traffic.uniform_jitter(max="10ms"))
    # Exact send times over an idle path: every inter-arrival is 40 ms. With the jitter it is 40 ms
    # plus the difference of two uniform [0, 10 ms] delays: triangular over [30, 50] ms.
    assert set(plain) == {0.04}
    total = sum(jit.values())
    assert min(jit) >= 0.030 and max(jit) < 0.050
    assert jit.get(0.04, 0.0) / total < 0.15
    assert sum(v for t, v in jit.items() if t < 0.035) / total == pytest.approx(0.125, abs=0.04)
    assert jit == hist(1, send_jitter=traffic.uniform_jitter(max="10ms"))
    assert jit != hist(2, send_jitter=traffic.uniform_jitter(max="10ms"))


@pytest.mark.parametrize(
    ("group", "path", "text"),
    [
        (
            lambda: traffic.cbr(
                name="c",
                src="src0",
                dst="sink0",
                size=320,
                interval="20ms",
                send_jitter=traffic.uniform_jitter(max="30ms"),
            ),
            "traffic.0.send_jitter.max",
            "exceeds the packet spacing",
        ),
        (
            lambda: (
                traffic.poisson(name="p", src="src0", dst="sink0", size=320, rate="64kbps")
                | {"packetization": "nominal"}
            ),
            "traffic.0.packetization",
            "on_off",
        ),
        (lambda: exp1(packetization="floor"), "traffic.0.packetization", ""),
    ],
)
def test_wrong_values_are_the_loaders_field_path_errors(group, path, text):
    with pytest.raises(qoslab.ConfigError) as e:
        dumbbell(group())
    assert path in str(e.value) and text in str(e.value)
