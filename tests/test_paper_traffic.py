"""The paper traffic models of the scenario format (``model = "voice"``, ``"svd"``,
``"mgen_periodic"``, ``"mgen_poisson"``), which the Python builders now only name: a run of
them writes the same result bytes as a run of the primitive groups the builders used to
write out (``docs/scenarios.md``, "Paper models")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import qoslab
from qoslab import topology, traffic


def _scenario(groups: list[dict[str, Any]]) -> qoslab.Scenario:
    return qoslab.Scenario.build(
        name="paper",
        duration="5s",
        topology=topology.dumbbell(
            sources=4,
            sinks=2,
            routers=2,
            access=topology.link(rate="100Mbps", delay="1ms"),
            bottleneck=topology.link(rate="10Mbps", delay="5ms"),
        ),
        traffic=groups,
        metrics={"trace_groups": ["vbr", "svd"]},
    )


def _models() -> list[dict[str, Any]]:
    return [
        *traffic.voice(name="cbr", src="src0", dst="sink0", calls_per_s=4.0, mean_duration="2s", randomize=0.01),
        *traffic.voice(name="vbr", src="src1", dst="sink1", codec="vbr", flows=3, start_jitter="1s"),
        *traffic.voice(name="mix", src="src*", dst="sink*", codec="mix", calls_per_s=3.0, src_choice="random"),
        traffic.svd(name="svd", src="src2", dst="sink0", calls_per_s=0.5, admitted=None),
        traffic.mgen_periodic(name="per", src="src3", dst="sink1", size=972, pps=187.5, dscp=46),
        traffic.mgen_poisson(name="poi", src="src3", dst="sink0", size=100, pps=1500, stop="4s"),
    ]


def _spelled_out() -> list[dict[str, Any]]:
    """The same groups as ``traffic.voice``, ``svd``, ``mgen_periodic`` and ``mgen_poisson``
    expanded them before the core did."""

    def calls(rate: float, lifetime: str = "60s") -> dict[str, Any]:
        return traffic.poisson_arrivals(rate=rate, lifetime=lifetime)

    mix = []
    for codec in traffic.VOICE_MIX:
        size, ms, on = traffic.VOICE_CODECS[codec]
        kw: dict[str, Any] = {"src": "src*", "dst": "sink*", "size": size, "interval": f"{ms}ms"}
        kw |= {"src_choice": "random", "arrivals": calls(3.0 / len(traffic.VOICE_MIX))}
        if on >= 1.0:
            mix.append(traffic.cbr(name=f"mix_{codec}", **kw))
        else:
            on_ms = round(on * 1000)
            mix.append(traffic.on_off(name=f"mix_{codec}", on=f"{on_ms}ms", off=f"{1000 - on_ms}ms", **kw))
    return [
        traffic.cbr(
            name="cbr", src="src0", dst="sink0", size=160, interval="20ms", arrivals=calls(4.0, "2s"), randomize=0.01
        ),
        traffic.on_off(
            name="vbr",
            src="src1",
            dst="sink1",
            size=160,
            interval="20ms",
            on="340ms",
            off="660ms",
            flows=3,
            start_jitter="1s",
        ),
        *mix,
        traffic.on_off(
            name="svd", src="src2", dst="sink0", size=1500, interval="1ms", on="340ms", off="660ms", arrivals=calls(0.5)
        ),
        traffic.cbr(
            name="per", src="src3", dst="sink1", size=972, interval=f"{round(1e9 / 187.5)}ns", header="28B", dscp=46
        ),
        traffic.poisson(
            name="poi",
            src="src3",
            dst="sink0",
            size="100B",
            rate=f"{1500 * 100 * 8}bps",
            header="28B",
            stop="4s",
        ),
    ]


def _files(folder: Path) -> dict[str, bytes]:
    out = {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}
    summary = json.loads(out["summary.json"])
    summary.pop("loop_wall_s")
    out["summary.json"] = json.dumps(summary, sort_keys=True).encode()
    return out


def test_paper_models_write_the_result_bytes_of_the_groups_they_stand_for(tmp_path):
    paper, spelled = _scenario(_models()), _scenario(_spelled_out())
    assert paper.echo == spelled.echo
    assert len(paper.echo["traffic"]) == 11
    a = _files(qoslab.run(paper, seed=3).save(tmp_path / "paper"))
    b = _files(qoslab.run(spelled, seed=3).save(tmp_path / "spelled"))
    assert {"flows.parquet", "series.parquet", "summary.json"} <= set(a)
    assert a == b
    groups = json.loads(a["summary.json"])["groups"]
    assert all(g["sent_pkts"] > 0 for g in groups.values()), groups


def test_the_shipped_pcn_scenarios_name_their_models():
    root = Path(__file__).resolve().parent.parent / "scenarios" / "pcn"
    models = {p.name: {g["model"] for g in qoslab.Scenario.load(p).echo["traffic"]} for p in root.glob("*.toml")}
    text = {p.name: p.read_text() for p in root.glob("*.toml")}
    # Every voice or SVD group is written by its model's name, not spelled out.
    assert all('interval = "20ms"' not in t and 'on = "340ms"' not in t for t in text.values()), text
    assert any('model = "voice"' in t for t in text.values()) and any('model = "svd"' in t for t in text.values())
    assert models["adm_vtr_single.toml"] == {"vtr"}
