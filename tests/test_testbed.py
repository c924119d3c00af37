"""The testbed's plan (no root needed): how a scenario maps onto namespaces and
one qoslab-router, and what is refused by name before anything is built."""

from __future__ import annotations

from pathlib import Path

import pytest

import qoslab
from conftest import ROOT, SCENARIOS, cli
from qoslab.testbed import make_plan, unsupported
from qoslab.testbed.net import PREFIX_RE, host_ip, host_mac, new_prefix
from qoslab.testbed.runner import router_config

SMALL = ROOT / "tests" / "scenarios" / "testbed" / "red_small.toml"


def _echo(path: Path, *overrides: str) -> dict:
    return qoslab.load(path, overrides=list(overrides)).echo


def test_red_dumbbell_plan_emulates_the_bottleneck_with_the_whole_path_delay() -> None:
    plan, problems = make_plan(_echo(SMALL))
    assert problems == [] and plan is not None
    assert plan.direction == "r0->sink0"
    assert plan.side == {**{f"src{i}": "a" for i in range(10)}, "sink0": "b"}
    # 5 ms access + 20 ms bottleneck: the one-way propagation delay of every flow.
    assert plan.router_delay_ns == 25_000_000
    assert len(plan.flows) == 10
    f = plan.flows[3]
    assert (f.name, f.src, f.dst, f.src_port) == ("cbr.3", "src3", "sink0", 20003)
    # 1000 B on the wire = 958 B of UDP payload; 1 Mb/s of 1000 B payloads: 8 ms.
    assert f.spec["payload"] == {"base": 958, "exp_mean": 0.0}
    p = f.spec["model"]["cbr"]["period"]
    assert p["num"] / p["den"] == 8_000_000
    assert f.spec["jitter_ns"] == 8_000_000 and f.spec["stop_ns"] == 5_000_000_000
    # The simulator's RNG stream of flow 3 of group 0.
    assert f.spec["stream"] == (1 << 61) | 3


def test_mace_scenario_one_plan_puts_both_sources_on_one_side() -> None:
    plan, problems = make_plan(_echo(SCENARIOS / "mace" / "s1_cbr_mace.toml", "duration=10s"))
    assert problems == [] and plan is not None
    assert plan.direction == "router1->dst"
    assert plan.side == {"src0": "a", "src1": "a", "dst": "b"}
    assert plan.router_delay_ns == 3_000_000
    cl = [f for f in plan.flows if f.group == "cl"]
    assert {f.dst_port for f in cl} == {5004}
    # 320 B + 66 B of header on the wire: 344 B of UDP payload.
    assert cl[0].spec["payload"]["base"] == 386 - 42


def test_router_config_carries_the_link_its_delay_and_the_mace_table(tmp_path: Path) -> None:
    sc = qoslab.load(SCENARIOS / "mace" / "s1_cbr_mace.toml", overrides=["duration=10s"])
    plan, _ = make_plan(sc.echo)
    from qoslab.testbed.net import Testbed

    tb = Testbed(prefix="qtb000000", hosts=plan.hosts, side=plan.side)
    text = router_config(plan, tb, tmp_path, 7, sc.base_dir)
    assert 'a = "qtb000000-ra"' in text and 'b = "qtb000000-rb"' in text
    assert 'delay = "3000000ns"' in text and 'rate = "10Mbps"' in text
    assert "seed = 7" in text and "[link.mace]" in text
    assert str((SCENARIOS / "mace" / "cl_ports.descriptors").resolve()) in text


@pytest.mark.parametrize(
    ("overrides", "field", "words"),
    [
        (["traffic.0.class=1"], "traffic.0.class", "class tags are not carried"),
        (["traffic.0.size=10B"], "traffic.0.size", "allowed: 66 to 1514 B"),
        (
            ["topology.access.queue.type=fifo", "topology.access.queue.limit=10pkts"],
            "topology.access",
            "has a queue or stages of its own",
        ),
        (["topology.access.rate=1Mbps"], "topology.access.rate", "a second bottleneck"),
        (["topology.bottleneck.loss=0.01"], "topology.bottleneck.loss", "allowed: 0"),
    ],
)
def test_unsupported_features_are_refused_naming_the_field(overrides: list[str], field: str, words: str) -> None:
    problems = unsupported(_echo(SMALL, *overrides))
    msgs = [str(p) for p in problems]
    assert any(p.path == field and words in p.message for p in problems), msgs


def test_tcp_groups_become_kernel_tcp_flows_with_the_scenarios_settings() -> None:
    plan, problems = make_plan(_echo(ROOT / "tests" / "scenarios" / "testbed" / "reno_red.toml"))
    assert problems == [] and plan is not None
    f = plan.flows[2]
    assert f.spec["model"] == {"tcp": {"mss": 1000, "bytes": None, "congestion": "reno"}}
    # The linux preset's initial window and minimum RTO, the group's 20-segment window, no delayed ACKs.
    assert f.tcp == {
        "init_window": 10,
        "max_window": 20,
        "min_rto_ms": 200,
        "delayed_ack": False,
        "ecn": False,
        "mss": 1000,
    }


def test_tcp_rules_the_kernel_cannot_follow_are_refused() -> None:
    echo = _echo(ROOT / "tests" / "scenarios" / "testbed" / "reno_red.toml")
    echo["traffic"][0]["tcp"] = {**echo["traffic"][0]["tcp"], "stack": "ns2", "limited_transmit": True}
    msgs = {p.path: p.message for p in unsupported(echo)}
    assert "the kernel follows its own rules" in msgs["traffic.0.tcp.stack"]
    assert "allowed: false" in msgs["traffic.0.tcp.limited_transmit"]
    echo["traffic"][0] = {**echo["traffic"][0], "model": "mm_app"}
    assert "'mm_app' is not supported on the testbed yet" in unsupported(echo)[0].message


def test_parking_lot_and_unequal_path_delays_are_refused() -> None:
    pl = unsupported(_echo(SCENARIOS / "examples" / "parking_lot.toml"))
    assert pl and pl[0].path == "topology.preset" and "allowed: dumbbell, explicit" in pl[0].message
    text = SMALL.read_text().replace(
        'preset = "dumbbell"\nsources = 10',
        'preset = "explicit"\nnodes = [\n'
        '{ name = "h0", kind = "host" }, { name = "h1", kind = "host" }, { name = "r", kind = "router" },\n'
        '{ name = "sink0", kind = "host" }]\n[[topology.links]]\na = "h0"\nb = "r"\nrate = "100Mbps"\ndelay = "1ms"\n'
        '[[topology.links]]\na = "h1"\nb = "r"\nrate = "100Mbps"\ndelay = "9ms"\n[[topology.links]]\na = "r"\n'
        'b = "sink0"\nrate = "5Mbps"\ndelay = "20ms"\nqueue = { type = "fifo", limit = "60pkts" }\n'
        "[topology.unused]",
    )
    text = text.split("[topology.unused]")[0] + "[[traffic]]" + text.split("[[traffic]]")[1]
    text = text.replace('src = "src*"', 'src = "h*"')
    bad = unsupported(qoslab.Scenario.from_toml(text).echo)
    assert any("different path delays (1 ms: h0; 9 ms: h1)" in p.message for p in bad), [str(p) for p in bad]


def test_cli_refuses_unsupported_scenarios_with_exit_2_and_every_reason(tmp_path: Path) -> None:
    p = cli(
        "testbed",
        "run",
        str(SMALL),
        "--set",
        "traffic.0.model=poisson",
        "--set",
        "traffic.0.class=2",
        "--set",
        "topology.bottleneck.loss=0.1",
        "--out",
        str(tmp_path / "r"),
    )
    assert p.returncode == 2
    assert "traffic.0.class" in p.stderr and "topology.bottleneck.loss" in p.stderr
    assert "2 feature(s) not supported on the testbed yet" in p.stderr
    assert "Traceback" not in p.stderr and not (tmp_path / "r").exists()


def test_prefix_addresses_and_macs_are_the_testbeds_own() -> None:
    p = new_prefix()
    assert PREFIX_RE.match(f"{p}-h0") and len(f"{p}-h199") <= 15
    assert not PREFIX_RE.match("qb17471-h1") and not PREFIX_RE.match("eth0")
    assert host_ip(0) == "10.77.0.1" and host_ip(201) == "10.77.1.2"
    assert host_mac(258) == "02:77:00:00:01:02"


def test_tcp_groups_into_one_host_with_different_windows_are_refused() -> None:
    """A host's TCP receiver has one window (docs/testbed.md, "TCP"): a second group into the
    same sink with another max_window is refused, naming its field; the same window passes."""
    echo = _echo(ROOT / "tests" / "scenarios" / "testbed" / "reno_red.toml")
    second = {**echo["traffic"][0], "name": "reno2", "flows": 1}
    echo["traffic"].append({**second, "tcp": {**second["tcp"], "max_window": 20}})
    assert unsupported(echo) == []
    echo["traffic"][1] = {**second, "tcp": {**second["tcp"], "max_window": 30}}
    msgs = {p.path: p.message for p in unsupported(echo)}
    assert list(msgs) == ["traffic.1.tcp.max_window"], msgs
    assert "30 segments of 1000 B into sink0, where group 'reno' has 20 of 1000 B" in msgs["traffic.1.tcp.max_window"]
