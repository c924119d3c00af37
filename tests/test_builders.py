"""The builders of the TCP, MM_APP, shaper, shaping-CAC, link-loss and MACE keys:
what they write, that the real scenario loader accepts it, that a wrong value
comes back as the loader's field-path error, and one TCP dumbbell run."""

from __future__ import annotations

import re
import time
import tomllib

import numpy as np
import pytest

import qoslab
from conftest import ROOT, SCENARIOS, cli
from qoslab import Scenario, admission, queues, topology, traffic

ACCESS = topology.link(rate="100Mbps", delay="1ms")


def dumbbell(*groups, queue=None, bottleneck=None, **kwargs) -> Scenario:
    """A 2-source dumbbell with ``groups`` as its traffic, built and validated."""
    if bottleneck is None:
        bottleneck = topology.link(rate="10Mbps", delay="10ms", queue=queue or queues.fifo(limit=50))
    return Scenario.build(
        name="b",
        duration="2s",
        topology=topology.dumbbell(sources=2, access=ACCESS, bottleneck=bottleneck),
        traffic=list(groups),
        **kwargs,
    )


def config_error(build) -> qoslab.ConfigError:
    """The loader's error for a scenario that ``build()`` makes (never a Python traceback)."""
    with pytest.raises(qoslab.ConfigError) as e:
        build()
    assert "Traceback" not in str(e.value)
    return e.value


def paths(err: qoslab.ConfigError) -> list[str]:
    return [d["path"] for d in err.diagnostics]


# -- TCP -----------------------------------------------------------------


def test_tcp_options_writes_only_what_is_given_with_units():
    assert traffic.tcp_options() == {}
    assert traffic.tcp_options(
        variant="newreno",
        max_window=44,
        rwnd=44,
        delayed_ack=True,
        ack_delay=0.05,
        min_rto="1s",
        initial_rto=3,
        max_rto=60,
        granularity=0,
        stack="ns2",
    ) == {
        "variant": "newreno",
        "max_window": 44,
        "rwnd": 44,
        "delayed_ack": True,
        "ack_delay": "50ms",
        "min_rto": "1s",
        "initial_rto": "3s",
        "max_rto": "60s",
        "granularity": "0s",
        "stack": "ns2",
    }


def test_ftp_group_validates_with_the_tcp_defaults_filled_in():
    g = traffic.ftp(
        name="ftp",
        flows=2,
        src="src*",
        dst="sink0",
        size=1460,
        header=40,
        tcp=traffic.tcp_options(variant="newreno", init_window=2),
    )
    assert g == {
        "name": "ftp",
        "model": "ftp",
        "tcp": {"variant": "newreno", "init_window": 2},
        "src": "src*",
        "dst": "sink0",
        "size": "1460B",
        "flows": 2,
        "header": "40B",
    }
    echo = dumbbell(g).echo["traffic"][0]
    assert echo["model"] == "ftp" and echo["tcp"]["variant"] == "newreno" and echo["tcp"]["init_window"] == 2
    assert echo["tcp"]["max_window"] == 20 and echo["tcp"]["min_rto"] == "200ms"


def test_tcp_windows_in_bytes_validate_and_echo_as_written():
    g = traffic.ftp(
        name="f", src="src0", dst="sink0", size=1500, tcp=traffic.tcp_options(max_window="66kB", rwnd="44pkts")
    )
    echo = dumbbell(g).echo["traffic"][0]
    assert echo["tcp"]["max_window"] == "66000B" and echo["tcp"]["rwnd"] == 44
    e = config_error(
        lambda: dumbbell(traffic.ftp(name="f", src="src0", dst="sink0", size=1500, tcp=traffic.tcp_options(rwnd="1kB")))
    )
    assert "traffic.0.tcp.rwnd" in paths(e) and "less than one segment" in str(e)


def test_ftp_without_tcp_options_takes_the_defaults():
    echo = dumbbell(traffic.ftp(name="f", src="src0", dst="sink0", size=1000)).echo["traffic"][0]
    assert echo["tcp"]["variant"] == "reno" and echo["tcp"]["initial_rto"] == "3s"
    assert echo["tcp"]["stack"] == "rfc"


def test_tcp_stack_ns2_validates_and_needs_a_tick_and_reno():
    g = traffic.ftp(name="f", src="src0", dst="sink0", size=1000, tcp=traffic.tcp_options(stack="ns2"))
    assert dumbbell(g).echo["traffic"][0]["tcp"]["stack"] == "ns2"
    e = config_error(
        lambda: dumbbell(
            traffic.ftp(
                name="f", src="src0", dst="sink0", size=1000, tcp=traffic.tcp_options(stack="ns2", granularity=0)
            )
        )
    )
    assert "traffic.0.tcp.granularity" in paths(e) and 'stack = "ns2"' in str(e)
    e = config_error(
        lambda: dumbbell(
            traffic.ftp(
                name="f", src="src0", dst="sink0", size=1000, tcp=traffic.tcp_options(stack="ns2", variant="newreno")
            )
        )
    )
    assert "traffic.0.tcp.stack" in paths(e) and "Agent/TCP/Reno only" in str(e)


def test_transfer_group_writes_bytes_and_validates():
    g = traffic.transfer(
        name="file",
        src="src*",
        dst="sink0",
        size=1460,
        bytes=1_250_000,
        tcp=traffic.tcp_options(max_window=44),
        arrivals=traffic.poisson_arrivals(rate=2.0, lifetime="100s", lifetime_dist="fixed"),
    )
    assert g["model"] == "transfer" and g["bytes"] == "1250000B"
    echo = dumbbell(g).echo["traffic"][0]
    assert echo["model"] == "transfer" and echo["tcp"]["max_window"] == 44
    assert echo["arrivals"]["process"] == "poisson"


def test_a_zero_tcp_window_is_the_loaders_field_path_error():
    e = config_error(
        lambda: dumbbell(
            traffic.ftp(name="f", src="src0", dst="sink0", size=1000, tcp=traffic.tcp_options(max_window=0))
        )
    )
    assert "traffic.0.tcp.max_window" in paths(e)
    assert "traffic.0.tcp.max_window" in str(e)


def test_an_unknown_tcp_variant_names_the_field_and_the_allowed_values():
    e = config_error(
        lambda: dumbbell(traffic.ftp(name="f", src="src0", dst="sink0", size=1000, tcp={"variant": "cubic"}))
    )
    assert any(p.startswith("traffic.0.tcp") for p in paths(e)) and "cubic" in str(e)


def test_a_transfer_with_a_bad_byte_count_is_the_loaders_error():
    e = config_error(lambda: dumbbell(traffic.transfer(name="t", src="src0", dst="sink0", size=1000, bytes="lots")))
    assert any(p.startswith("traffic.0") for p in paths(e)) and "lots" in str(e)


# -- MM_APP ----------------------------------------------------------------


def test_mm_app_group_writes_its_table_only_when_given():
    plain = traffic.mm_app(name="mm", src="src0", dst="sink0", size=1000)
    assert "mm_app" not in plain
    g = traffic.mm_app(name="mm2", src="src0", dst="sink0", size=1000, scales=[200_000, "400kbps"], feedback_size=40)
    assert g["mm_app"] == {"scales": ["200kbps", "400kbps"], "feedback_size": "40B"}
    echo = dumbbell(plain, g).echo["traffic"]
    assert echo[0]["mm_app"]["scales"] == ["300kbps", "500kbps", "700kbps", "900kbps", "1100kbps"]
    assert echo[1]["mm_app"]["scales"] == ["200kbps", "400kbps"]


def test_mm_app_without_scales_is_the_loaders_error():
    e = config_error(lambda: dumbbell(traffic.mm_app(name="mm", src="src0", dst="sink0", size=1000, scales=[])))
    assert any(p.startswith("traffic.0.mm_app.scales") for p in paths(e))


def test_mm_app_scales_must_be_a_list():
    with pytest.raises(TypeError, match=r"mm_app\.scales"):
        traffic.mm_app_options(scales="300kbps")


# -- shapers, ports, shaping CAC -----------------------------------------------


def test_shaper_and_dst_port_on_every_group_model():
    sh = traffic.shaper(rate="2Mbps", depth=2, buffer=(100, "64kB"))
    assert sh == {"rate": "2Mbps", "depth": "2pkts", "buffer": ["100pkts", "64kB"]}
    groups = [
        traffic.cbr(name="c", src="src0", dst="sink0", size=500, rate="1Mbps", shaper=sh, dst_port=5004),
        traffic.poisson(name="p", src="src0", dst="sink0", size=500, rate="1Mbps", dst_port=6000),
        traffic.on_off(
            name="o",
            src="src1",
            dst="sink0",
            size=500,
            on="1s",
            off="1s",
            peak="1Mbps",
            shaper=traffic.shaper(rate=1_000_000, depth="1500B"),
        ),
        traffic.ftp(name="f", src="src1", dst="sink0", size=1000, shaper=traffic.shaper(rate="5Mbps")),
    ]
    echo = dumbbell(*groups).echo["traffic"]
    assert echo[0]["dst_port"] == 5004 and echo[1]["dst_port"] == 6000
    assert echo[0]["shaper"]["rate"] == "2Mbps" and echo[2]["shaper"]["depth"] == "1500B"
    assert echo[3]["shaper"]["depth"] == "1pkts"  # the default, one packet


def test_a_shaper_without_rate_needs_the_shaping_cac():
    g = traffic.ftp(name="f", src="src0", dst="sink0", size=1000, shaper=traffic.shaper())
    e = config_error(lambda: dumbbell(g))
    assert any(p.startswith("traffic.0.shaper") for p in paths(e))
    cac = admission.shaping_cac(
        scheme=3, capacity="10Mbps", buffer=10, iplr=1e-3, r_req=1_000_000, k=3, scheme2_rate="rho_c"
    )
    assert cac == {
        "type": "shaping_cac",
        "scheme": 3,
        "capacity": "10Mbps",
        "buffer": 10,
        "iplr": 1e-3,
        "r_req": "1Mbps",
        "k": 3,
        "scheme2_rate": "rho_c",
    }
    echo = dumbbell(g, admission=cac).echo
    assert echo["admission"]["type"] == "shaping_cac" and echo["admission"]["scheme"] == 3


def test_shaping_cac_defaults_and_a_bad_scheme():
    echo = dumbbell(
        traffic.ftp(name="f", src="src0", dst="sink0", size=1000), admission=admission.shaping_cac(scheme=1)
    ).echo["admission"]
    assert echo["capacity"] == "100Mbps" and echo["buffer"] == 10 and echo["k"] == 3
    e = config_error(
        lambda: dumbbell(
            traffic.ftp(name="f", src="src0", dst="sink0", size=1000), admission=admission.shaping_cac(scheme=4)
        )
    )  # type: ignore[arg-type]
    assert "admission.scheme" in paths(e)


def test_admit_all_and_dumbbell_admission():
    assert dumbbell(admission=admission.admit_all()).echo["admission"]["type"] == "admit_all"
    sc = Scenario.dumbbell(
        name="d",
        sources=1,
        access_rate="100Mbps",
        access_delay="1ms",
        bottleneck_rate="10Mbps",
        bottleneck_delay="1ms",
        queue=queues.fifo(limit=10),
        duration="1s",
        admission=admission.shaping_cac(scheme=2),
        traffic=[traffic.ftp(name="f", src="src0", dst="sink0", size=1000, shaper=traffic.shaper())],
    )
    assert sc.echo["admission"]["scheme"] == 2


def test_a_bad_dst_port_is_the_loaders_error():
    e = config_error(
        lambda: dumbbell(traffic.cbr(name="c", src="src0", dst="sink0", size=500, rate="1Mbps", dst_port=70000))
    )
    assert any(p.startswith("traffic.0") for p in paths(e)) and "70000" in str(e)


# -- links: loss and MACE ---------------------------------------------------------


def test_link_loss_is_written_and_checked():
    link = topology.link(rate="10Mbps", delay="10ms", queue=queues.fifo(limit=50), loss=0.01, reverse_loss=0.001)
    assert link["loss"] == 0.01 and link["reverse_loss"] == 0.001
    echo = dumbbell(bottleneck=link).echo["topology"]["bottleneck"]
    assert echo["loss"] == 0.01 and echo["reverse_loss"] == 0.001
    bad = topology.link(rate="10Mbps", delay="10ms", loss=1.0)
    e = config_error(lambda: dumbbell(bottleneck=bad))
    assert "topology.bottleneck.loss" in paths(e)


def test_mace_link_with_inline_ports_validates_with_defaults():
    settings = topology.mace(
        ports=[
            topology.mace_port(port=5004, rate="77.2kbps", depth=386, threshold=100),
            topology.mace_port(port=5006, side="any", rate=154_000, depth="772B", threshold=10),
        ],
        admission=topology.mbac(v=0.9, sample=5, window=20),
        allocation="2.3Mbps",
    )
    assert settings["admission"] == {"type": "mbac", "v": 0.9, "sample": "5s", "window": 20}
    assert settings["ports"][1] == {"port": 5006, "side": "any", "rate": "154kbps", "depth": "772B", "threshold": 10}
    assert queues.mace(buffer=50) == {"type": "mace", "buffer": "50pkts"}
    link = topology.link(rate="10Mbps", delay="1ms", queue=queues.mace(buffer=50), mace=settings)
    cl = traffic.cbr(name="cl", src="src0", dst="sink0", size=320, header=66, interval="40ms", dst_port=5004)
    echo = dumbbell(cl, bottleneck=link).echo["topology"]["bottleneck"]
    assert echo["queue"] == {"type": "mace", "buffer": "50pkts"}
    m = echo["mace"]
    assert m["stale_timeout"] == "30s" and m["device_queue"] == 1 and m["table_capacity"] == 1024
    assert m["be_dispatch"] == "when_idle" and m["admission"]["restart_window"] is True


def test_mace_link_with_a_descriptor_file_and_ssac():
    descriptors = str(SCENARIOS / "mace" / "cl_ports.descriptors")
    link = topology.link(
        rate="10Mbps",
        delay="1ms",
        queue=queues.mace(buffer="50pkts"),
        mace=topology.mace(
            descriptors=descriptors,
            admission=topology.ssac(),
            allocation=2_300_000,
            stale_timeout="10s",
            device_queue=2,
            be_dispatch="when_idle",
            table_capacity=64,
        ),
    )
    m = dumbbell(bottleneck=link).echo["topology"]["bottleneck"]["mace"]
    assert m["admission"] == {"type": "ssac"} and m["allocation"] == "2300kbps"
    assert m["device_queue"] == 2 and m["be_dispatch"] == "when_idle" and m["stale_timeout"] == "10s"


def test_mace_needs_exactly_one_of_ports_and_descriptors():
    link = topology.link(
        rate="10Mbps",
        delay="1ms",
        queue=queues.mace(buffer=50),
        mace=topology.mace(admission=topology.ssac(), allocation="1Mbps"),
    )
    e = config_error(lambda: dumbbell(bottleneck=link))
    assert any(p.startswith("topology.bottleneck.mace") for p in paths(e))


def test_a_mace_queue_without_mace_settings_is_refused():
    link = topology.link(rate="10Mbps", delay="1ms", queue=queues.mace(buffer=50))
    e = config_error(lambda: dumbbell(bottleneck=link))
    assert any(p.startswith("topology.bottleneck") for p in paths(e))


def test_a_bad_mace_admission_value_names_its_field():
    link = topology.link(
        rate="10Mbps",
        delay="1ms",
        queue=queues.mace(buffer=50),
        mace=topology.mace(
            ports=[topology.mace_port(port=5004, rate="64kbps", depth=400, threshold=10)],
            admission=topology.mbac(v=1.5),
            allocation="1Mbps",
        ),
    )
    e = config_error(lambda: dumbbell(bottleneck=link))
    assert "topology.bottleneck.mace.admission.v" in paths(e)


# -- a TCP dumbbell, run for real --------------------------------------------------


def test_greedy_reno_over_red_dumbbell_runs_and_reports_goodput():
    sc = Scenario.dumbbell(
        name="tcp_red",
        sources=4,
        access_rate="100Mbps",
        access_delay="2ms",
        bottleneck_rate="10Mbps",
        bottleneck_delay="20ms",
        queue=queues.red(limit=100, min_th=5, max_th=15),
        duration="20s",
        seed=3,
        traffic=[
            traffic.ftp(
                name="ftp",
                flows=4,
                src="src*",
                dst="sink0",
                size=1460,
                header=40,
                tcp=traffic.tcp_options(variant="reno", max_window=64),
                start_jitter="100ms",
            )
        ],
        metrics={"tcp_series": ["ftp"]},
    )
    assert tomllib.loads(sc.to_toml())["traffic"][0]["model"] == "ftp"
    t0 = time.monotonic()
    res = sc.run()
    assert time.monotonic() - t0 < 5.0
    flows = res.flows
    assert list(flows["group"]) == ["ftp"] * 4
    goodput = flows["goodput_bps"].to_numpy()
    assert np.all(goodput > 0)
    # Four greedy flows share the 10 Mb/s bottleneck: together they fill most of its payload share
    # (1460 of every 1500 bytes), never more; RED's early drops and Reno's timeouts cost the rest.
    assert 5e6 < goodput.sum() <= 10e6 * 1460 / 1500
    # goodput_bps is goodput_bytes over each flow's active time (20 s less its start jitter).
    bytes_ = flows["goodput_bytes"].to_numpy().astype(float)
    assert np.all(bytes_ * 8 / 20 <= goodput) and np.all(goodput <= bytes_ * 8 / 19.9)
    q = res.queue(res.bottleneck)
    assert q["kind"] == "red" and int(q["drops_early_random"]) + int(q["drops_forced"]) > 0
    cwnd = res.metric("ftp.0", "cwnd_pkts")
    assert len(cwnd) > 10 and cwnd["value"].max() >= 2


def test_the_python_md_tcp_and_mace_examples_run():
    text = (ROOT / "docs" / "python.md").read_text(encoding="utf-8")
    section = text[text.index("### TCP, shapers and MACE") : text.index("## Running")]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 2
    ns: dict = {}
    for block in blocks:
        exec(block, ns)
    assert 5e6 < ns["res"].flows["goodput_bps"].sum() < 10e6
    sc = Scenario.build(
        name="doc",
        duration="2s",
        admission=ns["cac"],
        traffic=[ns["audio"], ns["files"]],
        topology=topology.dumbbell(sources=3, access=ns["lossy"], bottleneck=ns["mace_link"]),
    )
    res = sc.run()
    assert res.queue(res.bottleneck)["kind"] == "mace"
    files = res.flows[res.flows["group"] == "file"]
    assert len(files) > 0 and (files["goodput_bytes"] > 0).any()


# -- port stages -----------------------------------------------------------


def test_policer_stage_writes_units_validates_and_polices_a_run():
    from qoslab import stages

    p = stages.policer(rate="1Mbps", depth=3000)
    assert p == {"type": "policer", "rate": "1Mbps", "depth": "3000B"}
    bottleneck = topology.link(rate="10Mbps", delay="10ms", queue=queues.fifo(limit=50), stages=[p])
    sc = dumbbell(traffic.cbr(name="c", src="src*", dst="sink*", rate="2Mbps", size="1000B"), bottleneck=bottleneck)
    res = qoslab.run(sc)
    q = res.queues.set_index("name").loc[res.summary["bottleneck"]["name"]]
    assert q["drops_policed"] == res.flows["dropped_pkts"].sum() > 0
    assert q["drops"] == q["drops_policed"]
    # 2 Mb/s offered for 2 s; at most 1 Mb/s x 2 s + the 3000 B depth passes the policer.
    delivered_bits = res.flows["delivered_bytes"].sum() * 8
    assert 0.95e6 * 2 <= delivered_bits <= 1.0e6 * 2 + 3000 * 8


def test_bad_policer_comes_back_as_the_loaders_field_error():
    from qoslab import stages

    bottleneck = topology.link(rate="10Mbps", delay="10ms", stages=[stages.policer(rate="0bps", depth=100)])
    err = config_error(
        lambda: dumbbell(
            traffic.cbr(name="c", src="src*", dst="sink*", rate="1Mbps", size="1000B"), bottleneck=bottleneck
        )
    )
    assert "topology.bottleneck.stages.0.rate" in paths(err)


# -- RED variant -----------------------------------------------------------


def test_red_variant_is_written_for_red_cbt_and_dcbt_and_validates():
    assert "variant" not in queues.red(limit=60, min_th=5, max_th=15)
    for build in (queues.red, queues.cbt, queues.dcbt):
        q = build(limit=60, min_th=5, max_th=15, variant="ns2")
        assert q["variant"] == "ns2"
        sc = dumbbell(traffic.cbr(name="c", src="src0", dst="sink0", rate="1Mbps", size=1000), queue=q)
        assert tomllib.loads(sc.to_toml())["topology"]["bottleneck"]["queue"]["variant"] == "ns2"


def test_an_unknown_red_variant_names_the_field_and_the_allowed_values():
    e = config_error(
        lambda: dumbbell(
            traffic.cbr(name="c", src="src0", dst="sink0", rate="1Mbps", size=1000),
            queue=queues.red(limit=60, min_th=5, max_th=15, variant="ns3"),
        )
    )
    assert any(p.endswith("queue.variant") for p in paths(e)), paths(e)
    assert "floyd93" in str(e) and "ns2" in str(e)


def test_the_ns2_variant_changes_a_red_run():
    # Two greedy Reno flows into RED 5/15 with w_q 0.02: the variants' drop patterns differ.
    def run(variant):
        sc = dumbbell(
            traffic.ftp(name="f", flows=2, src="src*", dst="sink0", size=1000, header=40),
            queue=queues.red(limit=60, min_th=5, max_th=15, w_q=0.02, variant=variant),
        )
        res = sc.run(seed=1)
        q = res.queue(res.bottleneck)
        return int(q["drops_early_random"]), int(q["drops_forced"]), int(q["arrivals"])

    assert run("floyd93") != run("ns2")
    assert run("ns2") == run("ns2")


def test_tcp_preset_and_limited_transmit_reach_the_scenario_and_bad_presets_name_the_field(tmp_path):
    t = traffic.tcp_options(preset="ns2", limited_transmit=True, initial_rto="3s")
    assert t == {"preset": "ns2", "limited_transmit": True, "initial_rto": "3s"}
    sc = dumbbell(traffic.ftp(name="f", src="src0", dst="sink0", size=1460, tcp=t))
    echo = sc.echo["traffic"][0]["tcp"]
    # The preset fills the keys left out (ns-2 of 2005); the key written beside it wins.
    assert (echo["preset"], echo["min_rto"], echo["max_rto"], echo["granularity"], echo["init_window"]) == (
        "ns2",
        "200ms",
        "100000s",
        "10ms",
        2,
    )
    assert echo["initial_rto"] == "3s" and echo["limited_transmit"] is True
    bad = tmp_path / "bad.toml"
    bad.write_text(sc.to_toml().replace('preset = "ns2"', 'preset = "bsd"'))
    p = cli("validate", str(bad))
    assert p.returncode == 2, p.stderr
    assert "tcp" in p.stderr and "bsd" in p.stderr and "ns2" in p.stderr and "Traceback" not in p.stderr


# -- source choice ---------------------------------------------------------------


def test_src_choice_is_written_by_every_group_builder_and_round_robin_is_the_default():
    kw = {"src": "src*", "dst": "sink0", "src_choice": "random"}
    groups = [
        traffic.cbr(name="c", size=500, rate="1Mbps", **kw),
        traffic.poisson(name="p", size=500, rate="1Mbps", **kw),
        traffic.on_off(name="o", size=500, on="1s", off="1s", peak="1Mbps", **kw),
        traffic.ftp(name="f", size=1000, **kw),
        traffic.transfer(name="t", size=1000, bytes=10_000, **kw),
        traffic.mm_app(name="m", size=1000, **kw),
        traffic.vtr(name="v", flows=2, **kw),
        traffic.svd(name="s", flows=2, **kw),
        *traffic.voice(name="mix", codec="mix", flows=2, **kw),
    ]
    assert len(groups) == 9 and all(g["src_choice"] == "random" for g in groups)
    # The voice MIX is one group of the format, six once the core has expanded it.
    echo = dumbbell(*groups).echo["traffic"]
    assert len(echo) == 14
    assert [g["src_choice"] for g in echo] == ["random"] * 14
    # The default (round robin) is neither written nor echoed: older scenarios echo as before.
    plain = traffic.cbr(name="c", src="src*", dst="sink0", size=500, rate="1Mbps")
    assert "src_choice" not in plain and "src_choice" not in dumbbell(plain).echo["traffic"][0]
    rr = traffic.cbr(name="c", src="src*", dst="sink0", size=500, rate="1Mbps", src_choice="round_robin")
    assert "src_choice" not in dumbbell(rr).echo["traffic"][0]


def test_a_bad_src_choice_names_the_field_and_the_allowed_values(tmp_path):
    g = traffic.cbr(name="c", src="src*", dst="sink0", size=500, rate="1Mbps", src_choice="shuffle")  # type: ignore[arg-type]
    e = config_error(lambda: dumbbell(g))
    assert "traffic.0.src_choice" in paths(e) and "round_robin, random" in str(e)
    # The command line: exit 2, the field and what is allowed, no traceback.
    path = tmp_path / "bad.toml"
    text = (ROOT / "tests" / "scenarios" / "testbed" / "red_small.toml").read_text()
    path.write_text(text.replace('src = "src*"', 'src = "src*"\nsrc_choice = "shuffle"', 1))
    p = cli("validate", str(path))
    assert p.returncode == 2, p.stderr
    assert 'traffic.0.src_choice: unknown value "shuffle"; allowed: round_robin, random' in p.stderr
    assert "Traceback" not in p.stderr


def test_random_sources_are_the_same_for_a_seed_and_spread_calls_that_round_robin_hands_out_in_turn():
    # Six call groups at the same rate over 40 sources, fixed flows: round robin gives source k the
    # six groups' k-th flows; at random the sources differ between groups, the same for a seed.
    def sources(choice: str | None, seed: int) -> list[list[str]]:
        gs = [
            traffic.cbr(name=f"g{k}", src="src*", dst="sink0", size=160, interval="20ms", flows=40, src_choice=choice)  # type: ignore[arg-type]
            for k in range(6)
        ]
        sc = Scenario.build(
            name="sc",
            duration="100ms",
            topology=topology.dumbbell(sources=40, access=ACCESS, bottleneck=topology.link(rate="1Gbps", delay="1ms")),
            traffic=gs,
        )
        f = qoslab.run(sc, seed=seed).flows
        return [f[f["group"] == f"g{k}"]["src"].tolist() for k in range(6)]

    rr = sources(None, 1)
    assert all(g == [f"src{i}" for i in range(40)] for g in rr)
    rnd = sources("random", 1)
    assert rnd == sources("random", 1) and rnd != sources("random", 2)
    # The six groups' k-th flows share one source for no k (six draws from 40 all equal: 2e-8).
    assert not any(len({g[k] for g in rnd}) == 1 for k in range(40))
    assert len({s for g in rnd for s in g}) > 30
