"""VTR traffic [Zhang07 §2.3.3] from Python: the builder, a run of a frame-trace file through the
API, and bad traces refused by the CLI with exit 2, the file and line, and no result folder."""

from __future__ import annotations

import pytest

from conftest import cli
from qoslab import Scenario, api, topology, traffic
from qoslab.errors import ConfigError


def _scenario(group: dict, duration: str = "10s") -> Scenario:
    """One source, one router, one sink; a trace file is found in the working folder."""
    topo = topology.explicit(
        nodes=[
            topology.node(name="s0", kind="host"),
            topology.node(name="r0", kind="router"),
            topology.node(name="d0", kind="host"),
        ],
        links=[
            {"a": "s0", "b": "r0", **topology.link(rate="1Gbps", delay="1ms")},
            {"a": "r0", "b": "d0", **topology.link(rate="1Gbps", delay="1ms")},
        ],
    )
    return Scenario.build(name="vtr_py", duration=duration, topology=topo, traffic=[group])


def test_the_builder_writes_the_vtr_keys_with_the_seeds_defaults():
    g = traffic.vtr(name="v", src="a", dst="b", calls_per_s=2.0)
    assert g["model"] == "vtr" and g["size"] == "1500B" and g["interval"] == "1ms"
    assert g["trace"] == {"synthetic": {"seed": 1}}
    assert g["arrivals"]["process"] == "poisson" and g["arrivals"]["rate"] == 2.0
    f = traffic.vtr(name="v", src="a", dst="b", flows=3, trace="traces/a.txt", randomize=0.01)
    assert (f["trace"], f["flows"], f["randomize"]) == ("traces/a.txt", 3, 0.01)
    s = traffic.synthetic_trace(seed=4, frames=100, frame_interval="33ms", mean_rate="1Mbps")
    assert s == {"synthetic": {"seed": 4, "frames": 100, "frame_interval": "33ms", "mean_rate": "1Mbps"}}
    with pytest.raises(ConfigError, match="exactly one of calls_per_s, flows and arrivals"):
        traffic.vtr(name="v", src="a", dst="b", calls_per_s=1.0, flows=2)
    with pytest.raises(ConfigError, match="trace"):
        traffic.vtr(name="v", src="a", dst="b", flows=1, trace=7)  # type: ignore[arg-type]


def test_a_frame_trace_file_plays_at_its_rate_in_1500_byte_packets(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # 3000 B every 40 ms (600 kb/s): two full packets per frame.
    (tmp_path / "t.txt").write_text("# constant\n" + "".join(f"{k * 0.04:.2f} 3000\n" for k in range(100)))
    sc = _scenario(traffic.vtr(name="v", src="s0", dst="d0", flows=1, trace="t.txt"))
    f = api.run(sc, seed=1).flows
    # 10 s: 250 frames, 500 packets of 1500 B.
    assert (int(f["sent_pkts"][0]), int(f["sent_bytes"][0])) == (500, 750_000)


def test_the_synthetic_trace_averages_769_kbps_over_many_flows():
    sc = _scenario(traffic.vtr(name="v", src="s0", dst="d0", flows=30), duration="120s")
    f = api.run(sc, seed=3).flows
    rate = f["sent_bytes"].sum() * 8 / 120 / 30
    # 3600 flow-seconds of scenes of mean 5 s (activity CV 0.5): a standard error near 2 %.
    assert abs(rate / 769_000 - 1) < 0.08, rate


@pytest.mark.parametrize(
    "text, line, expect",
    [
        ("0 100\n0.04 100\n0.08 x\n", 3, 'size_bytes "x" is not a whole number'),
        ("0 100\n0.04 100 9\n", 2, "has 3 fields"),
        ("0 100\n0.04 100\n0.04 100\n", 3, "is not after the previous frame"),
        ("0 100\n0.04 100\n0.12 100\n0.16 100\n", 3, "off the constant frame rate"),
        ("0 0\n0.04 0\n", 2, "every frame is 0 bytes"),
    ],
)
def test_bad_trace_rows_exit_2_naming_the_file_and_line_without_results(tmp_path, monkeypatch, text, line, expect):
    # The scenario is built against a good trace, then the file is replaced by the bad one.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.txt").write_text("0 100\n0.04 100\n")
    sc = _scenario(traffic.vtr(name="v", src="s0", dst="d0", flows=1, trace="t.txt"))
    (tmp_path / "s.toml").write_text(sc.text)
    (tmp_path / "t.txt").write_text(text)
    for cmd in (("validate",), ("run", "--out", str(tmp_path / "out"))):
        p = cli(*cmd, str(tmp_path / "s.toml"), cwd=tmp_path)
        assert p.returncode == 2, p.stderr
        assert f"{tmp_path / 't.txt'}:{line}: traffic.0.trace: " in p.stderr and expect in p.stderr, p.stderr
        assert "Traceback" not in p.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "results").exists()
