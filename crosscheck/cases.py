"""The crosscheck's cases: the seed-001 dumbbell (``scenarios/dcbt/paper.toml``,
seed 001 §5) with its bottleneck RED 5 / 15 / 0.1 / 0.002 over 60 packets,
cut down to the flows under test, written once for each simulator.

- ``tcp``: the 25 Reno flows alone, 0-30 s;
- ``tcp_cbr``: the same plus the two 5 Mb/s CBR flows, 10-30 s (as in the paper);
- ``tcp_late``: the paper's whole TCP schedule, 25 Reno flows from 0 s and 30
  more from 20 s (issue 10 §2: the reference for Table 1's TCP drop rate).

Every packet of a data flow is 1000 B on the wire in both simulators
(qoslab: 960 B of TCP payload + 40 B of headers; ns-2: ``packetSize_`` 1000
with ``useHeaders_`` false). ACKs are 40 B. qoslab's senders run
``tcp.stack = "ns2"``: ns-2.35's window cut, fast-retransmit guard and
tick-counted RTT (``docs/mechanisms/tcp.md``), as the other side runs them.
"""

from __future__ import annotations

from dataclasses import dataclass

RATE_BPS = 25_000_000
DURATION_S = 30.0
CBR_START_S = 10.0
LATE_START_S = 20.0


@dataclass(frozen=True)
class Case:
    name: str
    n_tcp: int
    n_cbr: int
    description: str
    #: TCP flows starting at ``LATE_START_S``
    n_late: int = 0

    @property
    def flows(self) -> range:
        """Flow ids: the TCP flows from 0 s, the late ones, then CBR, as both sides number them."""
        return range(self.n_tcp + self.n_late + self.n_cbr)


CASES = {
    "tcp": Case("tcp", 25, 0, "25 Reno flows"),
    "tcp_cbr": Case("tcp_cbr", 25, 2, "25 Reno + 2 CBR 5 Mb/s (10-30 s)"),
    "tcp_late": Case("tcp_late", 25, 0, "25 Reno + 30 Reno from 20 s", n_late=30),
}


def qoslab_toml(case: Case, rate_bps: int = RATE_BPS) -> str:
    """The case as a qoslab scenario (the paper's file, trimmed to the case's flows),
    its bottleneck at ``rate_bps`` (the paper's 25 Mb/s unless a diagnostic says otherwise)."""
    hosts = [f"tcp_s{i}" for i in range(case.n_tcp)] + [f"tcp_d{i}" for i in range(case.n_tcp)]
    hosts += [f"late_s{i}" for i in range(case.n_late)] + [f"late_d{i}" for i in range(case.n_late)]
    hosts += [f"cbr_s{i}" for i in range(case.n_cbr)] + [f"cbr_d{i}" for i in range(case.n_cbr)]
    nodes = ['  { name = "r0", kind = "router" },', '  { name = "r1", kind = "router" },']
    nodes += [f'  {{ name = "{h}", kind = "host" }},' for h in hosts]
    out = [
        f'name = "crosscheck_red_{case.name}"',
        f'description = "RED crosscheck against ns-2: {case.description}"',
        f'duration = "{DURATION_S:g}s"',
        "",
        "[topology]",
        'preset = "explicit"',
        'default_queue = { type = "fifo", limit = "60pkts" }',
        "nodes = [",
        *nodes,
        "]",
        "",
        "[[topology.links]]",
        'a = "r0"',
        'b = "r1"',
        f'rate = "{rate_bps}bps"',
        'delay = "20ms"',
        'queue = { type = "red", limit = "60pkts", min_th = 5, max_th = 15, max_p = 0.1, w_q = 0.002, '
        'gentle = false, ecn = false, mode = "packets", mean_pkt_size = "1000B" }',
    ]
    for kind, n in (("tcp", case.n_tcp), ("late", case.n_late), ("cbr", case.n_cbr)):
        for i in range(n):
            for a, b in ((f"{kind}_s{i}", "r0"), ("r1", f"{kind}_d{i}")):
                out += ["", "[[topology.links]]", f'a = "{a}"', f'b = "{b}"', 'rate = "25Mbps"', 'delay = "5ms"']
    out += [
        "",
        "[[traffic]]",
        'name = "tcp"',
        'model = "ftp"',
        f"flows = {case.n_tcp}",
        'src = "tcp_s*"',
        'dst = "tcp_d*"',
        'size = "960B"',
        'header = "40B"',
        "class = 0",
        'start_jitter = "100ms"',
        'tcp = { variant = "reno", max_window = 20, init_window = 1, delayed_ack = false, stack = "ns2" }',
    ]
    if case.n_late:
        out += [
            "",
            "[[traffic]]",
            'name = "late"',
            'model = "ftp"',
            f"flows = {case.n_late}",
            'src = "late_s*"',
            'dst = "late_d*"',
            'size = "960B"',
            'header = "40B"',
            "class = 0",
            f'start = "{LATE_START_S:g}s"',
            'start_jitter = "100ms"',
            'tcp = { variant = "reno", max_window = 20, init_window = 1, delayed_ack = false, stack = "ns2" }',
        ]
    if case.n_cbr:
        out += [
            "",
            "[[traffic]]",
            'name = "cbr"',
            'model = "cbr"',
            f"flows = {case.n_cbr}",
            'src = "cbr_s*"',
            'dst = "cbr_d*"',
            'rate = "5Mbps"',
            'size = "1000B"',
            'header = "0B"',
            "class = 2",
            f'start = "{CBR_START_S:g}s"',
            'start_jitter = "100ms"',
        ]
    return "\n".join(out) + "\n"
