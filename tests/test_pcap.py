"""pcap traces read back by tshark (Wireshark's reader): no malformed packet,
counts and sizes that match the queues table, TCP sequence numbers that
cover a contiguous range of MSS-sized segments."""

from __future__ import annotations

import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

import qoslab
from qoslab import Scenario, queues, topology, traffic

TSHARK = shutil.which("tshark")
needs_tshark = pytest.mark.skipif(TSHARK is None, reason="tshark is not installed (apt-get install tshark)")


def traced_run(tmp_path: Path) -> qoslab.Result:
    access = topology.link(rate="100Mbps", delay="1ms")
    bottleneck = topology.link(rate="2Mbps", delay="10ms", queue=queues.red(limit=30, min_th=5, max_th=15))
    sc = Scenario.build(
        name="traced",
        duration="3s",
        topology=topology.dumbbell(sources=2, access=access, bottleneck=bottleneck),
        traffic=[
            traffic.ftp(name="tcp", src="src0", dst="sink0", flows=2, size="1000B"),
            traffic.cbr(name="udp", src="src1", dst="sink0", rate="1Mbps", size="500B"),
        ],
        trace={"pcap": ["r0->sink0"]},
    )
    res = qoslab.run(sc)
    res.save(tmp_path / "out")
    return res


def tshark(path: Path, *args: str) -> list[str]:
    out = subprocess.run([str(TSHARK), "-r", str(path), *args], check=True, capture_output=True, text=True)
    return [line for line in out.stdout.splitlines() if line]


@needs_tshark
def test_tshark_reads_the_trace_without_malformed_packets_and_counts_match(tmp_path: Path) -> None:
    res = traced_run(tmp_path)
    pcap = res.trace_path("r0->sink0")
    assert pcap == tmp_path / "out" / "pcap" / "r0_to_sink0.pcapng"
    assert tshark(pcap, "-Y", "_ws.malformed || _ws.expert.severity == error") == []
    q = res.queue("r0->sink0")
    rows = tshark(pcap, "-T", "fields", "-e", "frame.len", "-e", "ip.len", "-e", "frame.comment")
    sent = [r for r in rows if "drop:" not in r]
    dropped = [r for r in rows if "drop:" in r]
    assert len(sent) == q["departures"]
    assert len(dropped) == q["drops"] > 0
    reasons = {r.split("drop: ")[1] for r in dropped}
    assert reasons <= {"early_random", "forced", "overlimit"}, reasons
    for r in rows:
        frame_len, ip_len = (int(x) for x in r.split("\t")[:2])
        assert frame_len == ip_len + 14
    # Loading the saved folder gives the same bytes back.
    assert qoslab.Result.load(tmp_path / "out").traces == res.traces


@needs_tshark
def test_tcp_sequence_numbers_cover_contiguous_mss_segments(tmp_path: Path) -> None:
    res = traced_run(tmp_path)
    rows = tshark(
        res.trace_path("r0->sink0"),
        "-Y",
        "tcp",
        "-T",
        "fields",
        "-e",
        "tcp.srcport",
        "-e",
        "tcp.seq_raw",
        "-e",
        "tcp.len",
        "-e",
        "ip.len",
    )
    seqs: dict[str, set[int]] = defaultdict(set)
    payload = set()
    for r in rows:
        port, seq, _tcp_len, ip_len = r.split("\t")
        seqs[port].add(int(seq))
        payload.add(int(ip_len) - 40)
    assert len(seqs) == 2, "both TCP flows cross the bottleneck"
    (mss,) = payload  # greedy flows send full segments only
    for port, s in seqs.items():
        k = sorted((x - 1) // mss for x in s)
        assert all((x - 1) % mss == 0 for x in s), port
        assert k == list(range(len(k))), f"flow {port}: segments {k[:5]}... are not contiguous from 0"
        assert len(k) > 50


def test_an_unknown_direction_is_a_config_error_naming_the_field() -> None:
    access = topology.link(rate="100Mbps", delay="1ms")
    with pytest.raises(qoslab.ConfigError) as e:
        Scenario.build(
            name="t",
            duration="1s",
            topology=topology.dumbbell(sources=1, access=access, bottleneck=access),
            traffic=[traffic.cbr(name="u", src="src0", dst="sink0", rate="1Mbps", size="500B")],
            trace={"pcap": ["r9->x"]},
        )
    assert "trace.pcap.0" in str(e.value) and "r0->sink0" in str(e.value)
