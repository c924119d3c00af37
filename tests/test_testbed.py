"""The testbed's plan (no root needed): how a scenario maps onto namespaces and
one qoslab-router, and what is refused by name before anything is built."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import qoslab
from conftest import ROOT, SCENARIOS, cli
from qoslab.testbed import make_plan, unsupported
from qoslab.testbed.net import PREFIX_RE, host_ip, host_mac, new_prefix
from qoslab.testbed.net import Testbed as Bed
from qoslab.testbed.runner import router_config

SMALL = ROOT / "tests" / "scenarios" / "testbed" / "red_small.toml"


def _echo(path: Path, *overrides: str) -> qoslab.Scenario:
    """The scenario file with overrides (the planner reads its model)."""
    return qoslab.load(path, overrides=list(overrides))


def _edited(sc: qoslab.Scenario, edit: Any) -> qoslab.Scenario:
    """``sc`` with its echo changed by ``edit`` (a function of the echo dict), validated again."""
    import copy

    import tomli_w

    from qoslab.scenario import _drop_none

    echo = copy.deepcopy(sc.echo)
    edit(echo)
    return qoslab.Scenario.from_toml(tomli_w.dumps(_drop_none(echo)), origin=sc.origin, base_dir=sc.base_dir)


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
    plan, _ = make_plan(sc)
    tb = Bed(prefix="qtb000000", hosts=plan.hosts, segment=plan.segment, bumps=[(0, 1)])
    text = router_config(plan, tb, tmp_path, 7)
    assert 'a = "qtb000000-r0a"' in text and 'b = "qtb000000-r0b"' in text
    assert 'delay = "3ms"' in text and 'rate = "10Mbps"' in text
    assert "seed = 7" in text and "[link.mace]" in text
    assert str((SCENARIOS / "mace" / "cl_ports.descriptors").resolve()) in text


@pytest.mark.parametrize(
    ("overrides", "field", "words"),
    [
        (["traffic.0.class=8"], "traffic.0.class", "DSCP's class selector; allowed: 0 to 7"),
        (["traffic.0.src_choice=random"], "traffic.0.src_choice", "random sources are not drawn on the testbed"),
        (["traffic.0.size=10B"], "traffic.0.size", "allowed: 66 to 1514 B"),
        (
            ["topology.access.queue.type=fifo", "topology.access.queue.limit=10pkts"],
            "topology.access",
            "has a queue or stages of its own",
        ),
        (["topology.access.rate=1Mbps"], "topology.access.rate", "a bottleneck the testbed does not emulate"),
        (["topology.access.loss=0.01"], "topology.access.loss", "a link the testbed does not emulate"),
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
    reno = ROOT / "tests" / "scenarios" / "testbed" / "reno_red.toml"
    sc = _echo(reno, "traffic.0.tcp.stack=ns2", "traffic.0.tcp.limited_transmit=true")
    msgs = {p.path: p.message for p in unsupported(sc)}
    assert "the kernel follows its own rules" in msgs["traffic.0.tcp.stack"]
    assert "allowed: false" in msgs["traffic.0.tcp.limited_transmit"]


PL = ROOT / "tests" / "scenarios" / "testbed" / "parking_lot.toml"


def _testbed_delay(plan: Any, src: str, dst: str) -> int:
    """The delay lines a frame from ``src`` to ``dst`` crosses on the testbed (the segments' tree)."""
    adj: dict[int, list[tuple[int, int]]] = {}
    for b in plan.bumps:
        adj.setdefault(b.a_seg, []).append((b.b_seg, b.delay_ns))
        adj.setdefault(b.b_seg, []).append((b.a_seg, b.delay_ns))
    best, stack = {plan.segment[src]: 0}, [plan.segment[src]]
    while stack:
        s = stack.pop()
        for m, d in adj.get(s, []):
            if m not in best:
                best[m] = best[s] + d
                stack.append(m)
    return best[plan.segment[dst]]


@pytest.mark.parametrize(
    "path",
    [PL, SMALL, SCENARIOS / "examples" / "parking_lot.toml", SCENARIOS / "examples" / "star.toml"],
    ids=lambda p: p.stem,
)
def test_every_flow_crosses_the_scenarios_path_delay_in_delay_lines(path: Path) -> None:
    """Folded or emulated, each flow's one-way propagation delay on the testbed is the scenario's
    (the core's route of the flow, ``Scenario.model``)."""
    sc = _echo(path)
    plan, problems = make_plan(sc)
    assert problems == [] and plan is not None
    delay = {f["name"]: f["delay_ns"] for g in sc.model["groups"] for f in g["flows"]}
    for f in plan.flows:
        assert _testbed_delay(plan, f.src, f.dst) == delay[f.name], f.name


def test_parking_lot_plan_emulates_each_bottleneck_and_the_access_links_between_them() -> None:
    plan, problems = make_plan(_echo(PL))
    assert problems == [] and plan is not None
    got = [(b.direction, b.why, b.delay_ns, b.a_seg, b.b_seg) for b in plan.bumps]
    # The long path's ends fold their 1 ms access delays into the first and last bottleneck;
    # sink_x0 and src_x1 sit between the bottlenecks: their access links get routers of their own.
    assert got == [
        ("r0->r1", "bottleneck", 21_000_000, 0, 4),
        ("r1->r2", "bottleneck", 21_000_000, 4, 1),
        ("r1->sink_x0", "access", 1_000_000, 4, 2),
        ("src_x1->r1", "access", 1_000_000, 3, 4),
    ]
    assert plan.segment == {"src_long": 0, "sink_long": 1, "src_x0": 0, "sink_x0": 2, "src_x1": 3, "sink_x1": 1}
    assert [(f.group, f.src, f.dst) for f in plan.flows][::2] == [
        ("long", "src_long", "sink_long"),
        ("cross0", "src_x0", "sink_x0"),
        ("cross0", "src_x0", "sink_x0"),
    ]
    tb = Bed(prefix="qtb000000", hosts=plan.hosts, segment=plan.segment, bumps=[(b.a_seg, b.b_seg) for b in plan.bumps])
    # The bridges' static entries: each segment reaches every other through the first router on the one path.
    assert tb.toward(0) == dict.fromkeys((1, 2, 3, 4), "qtb000000-x0a")
    assert tb.toward(4) == {0: "qtb000000-x0b", 1: "qtb000000-x1a", 2: "qtb000000-x2a", 3: "qtb000000-x3b"}
    assert tb.toward(2) == dict.fromkeys((0, 1, 3, 4), "qtb000000-x2b")
    text = router_config(plan, tb, Path("/nonexistent"), 7, 3)
    assert 'a = "qtb000000-r3a"' in text and 'delay = "1ms"' in text and 'rate = "100Mbps"' in text
    assert "seed = 10" in text and "router3.sock" in text


def test_star_ingresses_with_their_own_delays_get_routers_of_their_own() -> None:
    plan, problems = make_plan(_echo(SCENARIOS / "examples" / "star.toml"))
    assert problems == [] and plan is not None
    assert [(b.direction, b.delay_ns) for b in plan.bumps] == [
        ("r0->r1", 11_000_000),
        ("in0->r0", 1_000_000),
        ("in1->r0", 5_000_000),
        ("in2->r0", 20_000_000),
        ("in3->r0", 50_000_000),
    ]


def _explicit(links: str, hosts: tuple[str, ...], routers: tuple[str, ...], src: str, dst: str) -> qoslab.Scenario:
    nodes = ", ".join(
        [f'{{ name = "{h}", kind = "host" }}' for h in hosts]
        + [f'{{ name = "{r}", kind = "router" }}' for r in routers]
    )
    text = SMALL.read_text()
    head, traffic = text.split("[topology]")[0], "[[traffic]]" + text.split("[[traffic]]")[1]
    traffic = traffic.replace('src = "src*"', f'src = "{src}"').replace('dst = "sink0"', f'dst = "{dst}"')
    return qoslab.Scenario.from_toml(f'{head}[topology]\npreset = "explicit"\nnodes = [{nodes}]\n{links}\n{traffic}')


def _lk(a: str, b: str, rate: str = "100Mbps", delay: str = "0s", queue: bool = False) -> str:
    q = '\nqueue = { type = "fifo", limit = "60pkts" }' if queue else ""
    return f'[[topology.links]]\na = "{a}"\nb = "{b}"\nrate = "{rate}"\ndelay = "{delay}"{q}\n'


def test_hosts_with_different_access_delays_behind_one_link_get_routers_of_their_own() -> None:
    links = _lk("h0", "r", delay="1ms") + _lk("h1", "r", delay="9ms") + _lk("r", "sink0", "5Mbps", "20ms", True)
    plan, problems = make_plan(_explicit(links, ("h0", "h1", "sink0"), ("r",), "h*", "sink0"))
    assert problems == [] and plan is not None
    assert [(b.direction, b.why, b.delay_ns) for b in plan.bumps] == [
        ("r->sink0", "own rules", 20_000_000),
        ("h0->r", "access", 1_000_000),
        ("h1->r", "access", 9_000_000),
    ]


def test_a_delay_between_emulated_links_a_loop_and_traffic_crossing_none_are_refused() -> None:
    chain = _lk("h0", "r0") + _lk("r0", "r1", "5Mbps", "10ms", True) + _lk("r1", "r2", delay="5ms")
    chain += _lk("r2", "r3", "5Mbps", "10ms", True) + _lk("r3", "h1")
    bad = unsupported(_explicit(chain, ("h0", "h1"), ("r0", "r1", "r2", "r3"), "h0", "h1"))
    assert [p.path for p in bad] == ["topology.links.2.delay"], [str(p) for p in bad]
    assert "5ms on r1-r2, a plain link between emulated links (r0->r1, r2->r3); allowed: 0s" in bad[0].message
    loop = (
        _lk("h0", "r0") + _lk("r0", "r1", "5Mbps", "10ms", True) + _lk("r1", "r2") + _lk("r2", "r0") + _lk("r1", "h1")
    )
    bad = unsupported(_explicit(loop, ("h0", "h1"), ("r0", "r1", "r2"), "h0", "h1"))
    assert [p.path for p in bad] == ["topology.links"] and "in a loop; allowed: a tree" in bad[0].message
    # cross traffic from src_x1 to sink_x0: both hang off r1, no bottleneck between them.
    bad = unsupported(_echo(PL, "traffic.2.dst=sink_x0"))
    assert [p.path for p in bad] == ["traffic.2.dst"]
    assert "flow cross1.0 (src_x1 -> sink_x0) crosses no emulated link" in bad[0].message


def test_a_parking_lots_hop_queues_are_its_bottlenecks_queues_named_at_their_own_fields() -> None:
    """The model carries each bottleneck's own queue and the field that set it (where the
    testbed's refusals point)."""
    hop = '[{type = "fifo", limit = "10pkts"}, {type = "red", limit = "60pkts", min_th = 5, max_th = 15}]'
    sc = _echo(PL, f"topology.hop_queues={hop}")
    bns = [sc.model["links"][i] for i in sc.model["bottlenecks"]]
    assert [(lk["a"], lk["b"], lk["queue"]["type"], lk["queue_path"]) for lk in bns] == [
        ("r0", "r1", "fifo", "topology.hop_queues.0"),
        ("r1", "r2", "red", "topology.hop_queues.1"),
    ]
    assert bns[0]["reverse_queue_path"] == "topology.default_queue"


def test_parking_lot_access_links_with_queues_of_their_own_are_refused() -> None:
    bad = unsupported(_echo(PL, "topology.access.queue.type=fifo", "topology.access.queue.limit=10pkts"))
    # (egress defaults to access: both are named, each once)
    assert [p.path for p in bad] == ["topology.access", "topology.egress"]
    assert "is not one of the links the testbed emulates (r0->r1, r1->r2)" in bad[0].message


def test_cli_refuses_unsupported_scenarios_with_exit_2_and_every_reason(tmp_path: Path) -> None:
    p = cli(
        "testbed",
        "run",
        str(SMALL),
        "--set",
        "traffic.0.model=poisson",
        "--set",
        "traffic.0.class=9",
        "--set",
        "topology.access.loss=0.1",
        "--out",
        str(tmp_path / "r"),
    )
    assert p.returncode == 2
    assert "traffic.0.class" in p.stderr and "topology.access.loss" in p.stderr
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
    sc = _echo(ROOT / "tests" / "scenarios" / "testbed" / "reno_red.toml")

    def second(window: int) -> Any:
        def edit(echo: dict[str, Any]) -> None:
            g = {**echo["traffic"][0], "name": "reno2", "flows": 1}
            echo["traffic"].append({**g, "tcp": {**g["tcp"], "max_window": window}})

        return edit

    assert unsupported(_edited(sc, second(20))) == []
    msgs = {p.path: p.message for p in unsupported(_edited(sc, second(30)))}
    assert list(msgs) == ["traffic.1.tcp.max_window"], msgs
    assert "30 segments of 1000 B into sink0, where group 'reno' has 20 of 1000 B" in msgs["traffic.1.tcp.max_window"]


def test_a_default_queue_the_testbed_cannot_run_is_refused_once_naming_every_direction() -> None:
    # A priority queue by DSCP while traffic classes ride in the DSCP's top bits.
    def edit(echo: dict[str, Any]) -> None:
        fifo = {"type": "fifo", "limit": "10pkts"}
        echo["topology"]["default_queue"] = {"type": "prio", "classify_by": "dscp", "bands": [fifo, fifo]}
        echo["traffic"][0]["class"] = 1

    bad = [p for p in unsupported(_edited(_echo(SCENARIOS / "examples" / "star.toml"), edit)) if "queue" in p.path]
    assert [p.path for p in bad] == ["topology.default_queue.classify_by"], [str(p) for p in bad]
    # The bottleneck's own fifo passes; its reverse direction and the emulated ingress links take the default.
    assert '"dscp" on the emulated link direction(s) r1->r0, in0->r0, r0->in0, in1->r0' in bad[0].message


CBT = ROOT / "tests" / "scenarios" / "testbed" / "cbt_small.toml"


def test_class_tags_ride_in_the_dscp_class_selector_and_the_router_reads_them_back(tmp_path: Path) -> None:
    """Traffic classes on real packets (docs/testbed.md, "Traffic classes"): a group's ``class``
    is the top three bits of its flows' DSCP, its own ``dscp`` the low three, and the router's
    ``class_tag`` rule is ``precedence`` (DSCP >> 3); with every class 0 nothing changes."""
    plan, problems = make_plan(_echo(CBT, "traffic.0.dscp=5"))
    assert problems == [] and plan is not None
    assert plan.class_tag == "precedence"
    assert {(f.group, f.cls, f.spec["dscp"]) for f in plan.flows} == {("tagged", 1, 13), ("untagged", 2, 16)}
    tb = Bed(prefix="qtb000000", hosts=plan.hosts, segment=plan.segment, bumps=[(0, 1)])
    text = router_config(plan, tb, tmp_path, 1)
    assert 'class_tag = "precedence"' in text and 'type = "cbt"' in text
    # Every class 0: the group's DSCP as it is, every packet class 0 in the router (the simulator's tag).
    plan0, _ = make_plan(_echo(CBT, "traffic.0.class=0", "traffic.1.class=0", "traffic.0.dscp=46"))
    assert plan0 is not None and plan0.class_tag == "zero"
    assert {f.spec["dscp"] for f in plan0.flows} == {46, 0}
    assert 'class_tag = "zero"' in router_config(plan0, tb, tmp_path, 1)


@pytest.mark.parametrize(
    "queue",
    [
        {"type": "dcbt", "limit": "60pkts", "min_th": 5, "max_th": 15},
        {"type": "red", "limit": "60pkts", "min_th": 5, "max_th": 15, "chips": True},
        {
            "type": "prio",
            "bands": [
                {"type": "fifo", "limit": "10pkts"},
                {"type": "red", "limit": "60pkts", "min_th": 5, "max_th": 15},
            ],
        },
    ],
)
def test_class_based_queues_run_on_emulated_links(queue: dict[str, Any]) -> None:
    sc = _edited(_echo(CBT), lambda echo: echo["topology"]["bottleneck"].update(queue=queue))
    assert unsupported(sc) == []


def test_what_the_dscp_class_selector_cannot_carry_is_refused_naming_the_field() -> None:
    """A group's own DSCP above 7 (its top bits hold the class), a prio queue classifying by DSCP
    and stages on an emulated link (they would see the class in the DSCP) while classes are
    carried; a class on a TCP group (its ACKs carry none)."""
    queue = {
        "type": "prio",
        "classify_by": "class",
        "bands": [{"type": "prio", "classify_by": "dscp", "bands": [{"type": "fifo", "limit": "9pkts"}]}],
    }
    stages = [{"type": "classifier", "cache": 64, "rules": []}]

    def edit(echo: dict[str, Any]) -> None:
        echo["topology"]["bottleneck"].update(queue=queue, stages=stages)

    msgs = {p.path: p.message for p in unsupported(_edited(_echo(CBT, "traffic.1.dscp=46"), edit))}
    assert "stages on an emulated link while traffic classes are carried" in msgs["topology.bottleneck.stages"]
    assert "46 while traffic classes are carried" in msgs["traffic.1.dscp"], msgs
    assert "allowed: 0 to 7, or every traffic class 0" in msgs["traffic.1.dscp"]
    assert msgs["topology.bottleneck.queue.bands.0.classify_by"].startswith(
        '"dscp" on the emulated link direction(s) r0->sink0 while traffic classes are carried'
    ), msgs
    assert len(msgs) == 3, msgs
    # With every class 0 the same DSCP classifier and stages see the scenario's DSCP: allowed.
    echo0 = _edited(_echo(CBT, "traffic.0.class=0", "traffic.1.class=0", "traffic.1.dscp=46"), edit)
    assert unsupported(echo0) == []
    tcp = _echo(ROOT / "tests" / "scenarios" / "testbed" / "reno_red.toml", "traffic.0.class=1")
    msgs = {p.path: p.message for p in unsupported(tcp)}
    assert "allowed: 0 for TCP groups" in msgs["traffic.0.class"], msgs


def test_randomize_and_send_jitter_reach_the_generator_as_the_simulators_shifts() -> None:
    """A UDP group's ``randomize`` and ``send_jitter`` go to its flows' generator specs (the
    generator draws the simulator's per-packet shifts from the flow's stream, a unit test in
    crates/traffic checks the send times); on a TCP group the scenario is refused."""
    plan, problems = make_plan(_echo(SMALL, "traffic.0.randomize=0.5"))
    assert problems == [] and plan is not None
    assert {(f.spec["randomize"], f.spec["send_jitter_max_ns"]) for f in plan.flows} == {(0.5, 0)}
    plan, problems = make_plan(_echo(SMALL, "traffic.0.send_jitter.dist=uniform", "traffic.0.send_jitter.max=500us"))
    assert problems == [] and plan is not None
    assert {(f.spec["randomize"], f.spec["send_jitter_max_ns"]) for f in plan.flows} == {(0.0, 500_000)}
    plan, _ = make_plan(_echo(SMALL))
    assert plan is not None and plan.flows[0].spec["randomize"] == 0.0 and plan.flows[0].spec["send_jitter_max_ns"] == 0
    # On a TCP group the scenario's validation refuses both (they shift a packet grid TCP has not).
    for extra in (["traffic.0.randomize=0.2"], ["traffic.0.send_jitter.dist=uniform", "traffic.0.send_jitter.max=1ms"]):
        with pytest.raises(qoslab.ConfigError, match="not to model ftp"):
            _echo(ROOT / "tests" / "scenarios" / "testbed" / "reno_red.toml", *extra)


VTR = ROOT / "tests" / "scenarios" / "testbed" / "vtr_small.toml"


def test_a_vtr_groups_model_carries_the_frames_the_simulator_loads(tmp_path: Path) -> None:
    """A VTR group's source in ``Scenario.model()`` is its trace as the simulator loads it (the
    synthetic generator's or a file's frames) with its packetization; its flows' generator specs
    name the trace by the group, which the runner writes into the spec once; a trace longer than
    the spec carries is refused at ``trace``."""
    from qoslab.testbed.plan import MAX_VTR_FRAMES, vtr_frames

    sc = _echo(VTR)
    v = sc.model["groups"][0]["source"]["vtr"]
    assert {k: v[k] for k in v if k != "frames"} == {
        "frame_ns": 40_000_000,
        "spacing_ns": 1_000_000,
        "payload": 1458,
        "header": 42,
    }
    # The synthetic trace's default length, its mean rate 769 kb/s at 25 frames/s.
    assert len(v["frames"]) == 180_000 and abs(sum(v["frames"]) * 8 / 180_000 * 25 / 769e3 - 1) < 0.01
    plan, problems = make_plan(sc)
    assert problems == [] and plan is not None and len(plan.flows) == 10
    assert plan.flows[3].spec["model"] == {
        "vtr": {"trace": "video", "frame_ns": 40_000_000, "spacing_ns": 1_000_000, "payload": 1458, "header": 42}
    }
    assert plan.flows[3].spec["payload"] == {"base": 1458, "exp_mean": 0.0}
    assert vtr_frames(plan.model, "video") == v["frames"]
    # A trace file: its rows' sizes, as written.
    trace = tmp_path / "t.trace"
    trace.write_text("# time_s size_bytes\n0 1200\n0.04 0\n0.08 3100\n0.12 10\n")

    def from_file(echo: dict[str, Any]) -> None:
        echo["traffic"][0]["trace"] = str(trace)

    v = _edited(sc, from_file).model["groups"][0]["source"]["vtr"]
    assert v["frames"] == [1200, 0, 3100, 10] and v["frame_ns"] == 40_000_000
    # Bounded: the simulator's longest synthetic trace is longer than the generator's spec carries.
    long = _echo(VTR, f"traffic.0.trace.synthetic.frames={MAX_VTR_FRAMES + 1}")
    msgs = [str(p) for p in unsupported(long)]
    assert msgs == [
        f"traffic.0.trace: {MAX_VTR_FRAMES + 1} frames; allowed: at most 1,000,000 on the testbed (the "
        "generator's spec carries the trace)"
    ], msgs


def test_an_mm_app_group_runs_its_scales_in_the_generator_and_its_receiver_in_the_sink() -> None:
    """An MM_APP group's source is the simulator's periods of its scales and its feedback size;
    the runner gives the sink each flow's receiver (``--mm FLOW:SCALES:FEEDBACK_SIZE``); a flow
    that would ask admission is refused (its socket reads its feedback)."""
    sc = _echo(ROOT / "tests" / "scenarios" / "testbed" / "mm_small.toml")
    mm = sc.model["groups"][0]["source"]["mm_app"]
    assert mm == {
        "feedback_size": 40,
        "periods_ns": [[8_000_000_000_000, k * 1000] for k in (300, 500, 700, 900, 1100)],
    }
    plan, problems = make_plan(sc)
    assert problems == [] and plan is not None and len(plan.flows) == 4
    assert plan.flows[1].spec["model"] == {
        "mm_app": {"periods": [{"num": n, "den": d} for n, d in mm["periods_ns"]], "feedback_size": 40}
    }
    from qoslab.testbed.plan import _check_mm_admission

    bad: list[Any] = []
    plan.flows[1].spec["admission"] = {"port": 7400, "rate_bps": 1e6}
    _check_mm_admission(plan.flows, bad)
    assert [b.path for b in bad] == ["traffic.0.model"] and "ask admission" in bad[0].message


def test_what_the_testbed_refuses_are_names_the_core_knows() -> None:
    """The testbed writes only what it cannot do; every other name comes from the core."""
    from qoslab.testbed.plan import NOT_MODELS, NOT_QUEUES

    names = qoslab._core.names()
    assert set(NOT_QUEUES) < set(names["queue_types"]) and set(NOT_MODELS) < set(names["traffic_models"])


def test_queue_rows_carry_the_routers_own_drop_reasons_which_the_simulator_names_too() -> None:
    """The kernel's, malformed, oversize and delay-line drops are drop reasons of the core's list:
    a simulated result has their columns (zero), and a testbed queue row takes them from the
    router's summary like any reason."""
    from qoslab.tables import DROP_REASONS
    from qoslab.testbed.results import _columns, _queue_row

    sim = qoslab.run(qoslab.load(SMALL, overrides=["duration=1s"]))
    named = {c.removeprefix("drops_") for c in sim.queues.columns if c.startswith("drops_")}
    assert named == set(DROP_REASONS)
    assert {"malformed", "oversize", "kernel", "delay_line"} <= named
    assert all((sim.queues[f"drops_{r}"] == 0).all() for r in ("malformed", "oversize", "kernel", "delay_line"))
    q = {"name": "a->b", "kind": "fifo", "arrivals": 20, "drops": 9, "drops_kernel": 5, "drops_malformed": 3}
    q["drops_delay_line"] = 1
    # The row as the queues table holds it (a reason the summary leaves out is a zero count).
    t = _columns("queues", [_queue_row(q, 0, {"a->b": "r0->sink0"}, "r0<->sink0", 1_000_000, 1.0)])
    assert [int(t[f"drops_{r}"][0]) for r in ("kernel", "malformed", "delay_line", "oversize")] == [5, 3, 1, 0]


PCN_SINGLE = SCENARIOS / "pcn" / "single_link.toml"
T1 = ("duration=60s", "topology.links.1.rate=1544kbps", "traffic.0.calls_per_s=1.00521")


def test_a_pcn_domain_plans_its_router_as_ingress_and_egress_and_every_call_asks_it(tmp_path: Path) -> None:
    sc = _echo(PCN_SINGLE, *T1)
    plan, problems = make_plan(sc)
    assert plan is not None, [str(p) for p in problems]
    (bump,) = plan.bumps
    assert (bump.direction, bump.pcn_dscps) == ("i0->e0", [0])
    # Every call is one of the simulator's arrivals: its start, end and stream are the model's.
    model = sc.model["groups"][0]["flows"]
    assert len(plan.flows) == len(model) > 40
    for f, m in zip(plan.flows, model, strict=True):
        a = m["arrival"]
        assert (f.spec["start_ns"], f.spec["stop_ns"], f.spec["jitter_ns"]) == (a["start_ns"], a["end_ns"], 0)
        assert f.spec["lifetime_drawn"] is True and f.spec["stream"] == m["stream"]
        assert f.spec["admission"] == {"port": 7400, "rate_bps": 64000.0}
    cfg = router_config(plan, Bed(prefix="qt1", hosts=plan.hosts, segment=plan.segment, bumps=[(0, 1)]), tmp_path, 1)
    assert "pcn_dscps = [0]" in cfg and "edge_port = 7400" in cfg
    import tomllib

    assert tomllib.loads(cfg)["pcn"]["edges"] == ["a", "b"]
    # Another seed draws other calls.
    other = make_plan(_echo(PCN_SINGLE, *T1, "seed=2"))[0]
    assert other is not None and [f.spec["start_ns"] for f in other.flows] != [f.spec["start_ns"] for f in plan.flows]


def test_pcn_domains_the_testbed_cannot_run_are_refused_naming_the_field() -> None:
    sc = _echo(PCN_SINGLE, *T1)

    def keep_alive(e: dict[str, Any]) -> None:
        e["traffic"][0].pop("calls_per_s", None)
        e["traffic"][0]["arrivals"] = {"process": "keep_alive", "alive": 5, "lifetime": "10s"}

    def admitted(e: dict[str, Any]) -> None:
        e["traffic"][0]["admitted"] = True

    for edit, field, words in (
        (keep_alive, "traffic.0.arrivals.process", "allowed: poisson, batch_poisson, replay"),
        (admitted, "traffic.0.admitted", "allowed: false"),
    ):
        problems = unsupported(_edited(sc, edit))
        assert any(p.path == field and words in p.message for p in problems), [str(p) for p in problems]


def test_an_answered_call_is_admitted_refused_or_terminated_in_the_flows_row() -> None:
    from types import SimpleNamespace

    from qoslab.testbed.results import _admission

    c = SimpleNamespace(t0_ns=1_000_000_000)
    asks = SimpleNamespace(spec={"admission": {"port": 7400}})
    rep = {"decision": "admitted", "asked_ns": 2_000_000_000, "answered_ns": 2_020_000_000, "cle": 0.0}
    a = _admission(asks, {"admission": rep}, c)
    assert (a["admitted"], a["refused"], a["terminated"], a["decided_s"]) == (True, False, False, 1.02)
    t = _admission(asks, {"admission": {**rep, "terminated_ns": 5_000_000_000}}, c)
    assert t["terminated"] and t["terminated_s"] == 4.0
    r = _admission(asks, {"admission": {**rep, "decision": "refused", "cle": 0.9}}, c)
    assert (r["admitted"], r["refused"], r["cle"]) == (False, True, 0.9)
    u = _admission(asks, {"admission": {**rep, "decision": "unanswered"}}, c)
    assert (u["admitted"], u["refused"]) == (False, False)
    plain = _admission(SimpleNamespace(spec={}), {}, c)
    assert (plain["asked"], plain["admitted"]) == (False, True)


EDGE_6B = SCENARIOS / "edge" / "fig6b_periodic.toml"


def test_the_edge_egress_runs_on_its_link_with_rules_on_the_testbeds_addresses(tmp_path: Path) -> None:
    plan, problems = make_plan(_echo(EDGE_6B, "duration=15s"))
    assert plan is not None, [str(p) for p in problems]
    j = next(i for i, b in enumerate(plan.bumps) if b.direction == "mckinley->alps")
    bed = Bed(prefix="qt2", hosts=plan.hosts, segment=plan.segment, bumps=[(b.a_seg, b.b_seg) for b in plan.bumps])
    import tomllib

    cfg = tomllib.loads(router_config(plan, bed, tmp_path, 1, j))
    assert cfg["link"]["queue"]["type"] == "edge"
    (stage,) = cfg["link"]["stages"]
    ips = {h: bed.ip(h) for h in plan.hosts}
    # Every rule's hosts are the testbed's addresses of those hosts; ports and streams unchanged.
    assert {(r["src"], r["dst"]) for r in stage["rules"]} <= {(ips[s], ips["desert"]) for s in ("sea", "sky", "land")}
    assert [r["stream"] for r in stage["rules"]][:3] == ["A1", "E1", "B1"]


def test_classifier_rules_the_testbed_cannot_match_are_refused_naming_the_rule() -> None:
    sc = _echo(EDGE_6B, "duration=15s")

    def router_src(e: dict[str, Any]) -> None:
        e["topology"]["links"][6]["stages"][0]["rules"][0]["src"] = "tim"

    def prefix(e: dict[str, Any]) -> None:
        e["topology"]["links"][6]["stages"][0]["rules"][1]["dst"] = "10.0.0.0/8"

    def ingress(e: dict[str, Any]) -> None:
        e["topology"]["links"][6]["stages"][0]["rules"][2]["ingress"] = "tim"

    for edit, field, words in (
        (router_src, "topology.links.6.stages.0.rules.0.src", "allowed: a host's name"),
        (prefix, "topology.links.6.stages.0.rules.1.dst", "addresses of its own"),
        (ingress, "topology.links.6.stages.0.rules.2.ingress", "allowed: none"),
    ):
        problems = unsupported(_edited(sc, edit))
        assert any(p.path == field and words in p.message for p in problems), [str(p) for p in problems]


TCP_CAC = ROOT / "tests" / "scenarios" / "testbed" / "tcp_cac.toml"
TABLE1 = SCENARIOS / "tcp_cac" / "table1_shaped.toml"


def test_the_shaping_cac_runs_in_the_first_emulated_links_router_and_every_flow_asks_it(tmp_path: Path) -> None:
    import tomllib

    sc = _echo(TCP_CAC)
    plan, problems = make_plan(sc)
    assert plan is not None, [str(p) for p in problems]
    (bump,) = plan.bumps
    # Every transfer is one of the simulator's arrivals and asks the router by packet, as a CAC flow.
    assert len(plan.flows) == len(sc.model["groups"][0]["flows"]) > 100
    assert all(f.tcp is not None and f.spec["admission"]["cac"] is True for f in plan.flows)
    bed = Bed(prefix="qt3", hosts=plan.hosts, segment=plan.segment, bumps=[(bump.a_seg, bump.b_seg)])
    cfg = tomllib.loads(router_config(plan, bed, tmp_path, 1))
    assert cfg["router"]["edge_port"] == 7400
    # The scenario's own admission table; the shapers one 1514-byte frame deep (depth "1pkt").
    assert cfg["admission"] == {**sc.echo["admission"], "type": "shaping_cac"}
    assert cfg["shaping"] == {"depth": "1514B"}


def test_fixed_rate_shapers_are_listed_by_the_flows_testbed_addresses(tmp_path: Path) -> None:
    import tomllib

    plan, problems = make_plan(
        _echo(TABLE1, "topology.sources=4", "traffic.0.flows=4", "topology.bottleneck.rate=10Mbps")
    )
    assert plan is not None, [str(p) for p in problems]
    j = next(i for i, b in enumerate(plan.bumps) if b.shaping is not None)
    bed = Bed(prefix="qt4", hosts=plan.hosts, segment=plan.segment, bumps=[(b.a_seg, b.b_seg) for b in plan.bumps])
    cfg = tomllib.loads(router_config(plan, bed, tmp_path, 1, j))
    flows = cfg["shaping"]["flows"]
    assert len(flows) == 4 and "admission" not in cfg
    for f, p in zip(flows, plan.flows, strict=True):
        assert f == {
            "src": bed.ip(p.src),
            "dst": bed.ip(p.dst),
            "proto": "tcp",
            "src_port": p.src_port,
            "dst_port": p.dst_port,
            "rate": "1000000bps",
        }
        assert "admission" not in p.spec


def test_shapers_the_testbed_cannot_place_are_refused_naming_the_field() -> None:
    sc = _echo(TABLE1, "topology.sources=2", "traffic.0.flows=2")

    def two_groups(echo: dict[str, Any]) -> None:
        g = dict(echo["traffic"][0])
        g["name"] = "other"
        g["shaper"] = {"rate": "1Mbps", "depth": "3000B"}
        echo["traffic"].append(g)

    problems = unsupported(_edited(sc, two_groups))
    assert any(p.path == "traffic.1.shaper.depth" and "one bucket depth" in p.message for p in problems), [
        str(p) for p in problems
    ]


def test_the_processes_outputs_are_read_with_a_bound(tmp_path: Path) -> None:
    """The runner reads its generators', sinks' and routers' files only as regular files of a
    bounded size; anything else is a TestbedError naming the file."""
    import os

    from qoslab.testbed.runner import TestbedError, _own_file, _own_text

    ok = tmp_path / "gen.report.json"
    ok.write_text('{"flows": []}')
    assert _own_text(ok) == '{"flows": []}'
    with pytest.raises(TestbedError, match="not a regular file"):
        _own_file(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(TestbedError, match="not a regular file"):
        _own_file(fifo)
    with pytest.raises(TestbedError, match="of 13 bytes; allowed: at most 12"):
        _own_file(ok, 12)
    with pytest.raises(TestbedError, match="cannot read"):
        _own_file(tmp_path / "missing.json")


def test_cpu_shares_are_the_stolen_and_busy_parts_of_the_ticks_between_two_readings() -> None:
    """A run's health reports the hypervisor's and the machine's share of the CPU time while the
    generators ran (docs/testbed.md, "Run health"), from two readings of /proc/stat."""
    from qoslab.testbed.runner import cpu_shares, cpu_times

    a = {"user": 100, "nice": 0, "system": 50, "idle": 800, "iowait": 10, "irq": 0, "softirq": 5, "steal": 0}
    # 1000 ticks later: 300 user, 100 system, 500 idle, 20 I/O wait, 80 stolen.
    b = dict(a, user=400, system=150, idle=1300, iowait=30, steal=80)
    steal, busy = cpu_shares(a, b)
    assert steal == pytest.approx(0.08) and busy == pytest.approx(0.40)
    assert cpu_shares(a, a) == (None, None)  # no tick passed
    assert cpu_shares(None, b) == (None, None)
    now = cpu_times()
    assert now is None or set(now) >= {"user", "idle", "steal"}
