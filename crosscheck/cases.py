"""The crosscheck's cases: the [Claypool00] dumbbell (``scenarios/dcbt/paper.toml``,
[Claypool00 §5]) with its bottleneck RED 5 / 15 / 0.1 / 0.002 over 60 packets,
cut down to the flows under test, written once for each simulator.

- ``tcp``: the 25 Reno flows alone, 0-30 s;
- ``tcp_cbr``: the same plus the two 5 Mb/s CBR flows, 10-30 s (as in the paper);
- ``tcp_late``: the paper's whole TCP schedule, 25 Reno flows from 0 s and 30
  more from 20 s (issue 10 §2: the reference for Table 1's TCP drop rate);
- ``tcp_udp``: the paper's whole mix under plain RED, with its UDP classes
  replaced by constant-rate stand-ins that carry what the D-CBT run delivers
  for them (``DCBT_TAGGED_BPS``, ``DCBT_UNTAGGED_BPS``): the TCP schedule of
  ``tcp_late``, 10 UDP flows from 0 s (the MM_APP's place) and the 2 CBR
  from 10 s, each at its class's per-flow rate of each 10 s period. It asks
  whether ns-2.35 and qoslab agree on TCP's drop rate when UDP shares the
  queue as under D-CBT, without D-CBT;
- ``tcp_mm``: the paper's whole mix under plain RED with its 10 MM_APP
  flows (from 0 s) and its 2 CBR at 5 Mb/s (from 10 s): qoslab's MM_APP
  against the MmApp its author published for ns-2, rewritten in OTcl
  (``ns2/red_dumbbell.tcl``; ``mm_app.py`` prints the MM_APP's figures).
  ns-2's UDP packets carry no header, so both sides send 1000 B on the
  wire (qoslab: ``size`` 1000 B, ``header`` 0 B, 40 B feedback).
- ``ecn_rtt20``, ``ecn_rtt60``, ``ecn_rtt200``: 25 ECN-capable Reno flows
  through the same RED with ECN marking (ns-2's ``setbit_``: early drops
  of ECN-capable packets become CE marks; above ``max_th`` it still
  drops), at minimum RTTs of 20, 60 (the [Claypool00] dumbbell) and 200 ms, a
  window of up to 100 segments so that the window, not ``max_window``,
  answers the marks (issue 30 §4: RFC 3168 §6.1.2's sender against
  ns-2.35's).

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


#: A rate schedule: (time s, bit/s) steps; a flow sends at the first rate from
#: its start and switches to each next one at its time.
Schedule = tuple[tuple[float, int], ...]

#: The D-CBT reproduction's per-flow delivered rates per 10 s period (seeds
#: 1-5, branch ``dcbtfix``, docs/reproductions/dcbt.md): tagged 573 / 538 /
#: 348 kb/s, untagged 1,405 / 425 kb/s (from 10 s).
DCBT_TAGGED_BPS: Schedule = ((0.0, 573_000), (10.0, 538_000), (20.0, 348_000))
DCBT_UNTAGGED_BPS: Schedule = ((0.0, 1_405_000), (20.0, 425_000))


@dataclass(frozen=True)
class Case:
    name: str
    n_tcp: int
    n_cbr: int
    description: str
    #: TCP flows starting at ``LATE_START_S``
    n_late: int = 0
    #: the CBR flows' rates (from ``CBR_START_S``)
    cbr_rates: Schedule = ((0.0, 5_000_000),)
    #: constant-rate UDP flows from 0 s, and their rates
    n_udp: int = 0
    udp_rates: Schedule = ()
    #: MM_APP flows from 0 s
    n_mm: int = 0
    #: ECN: RED marks ECN-capable packets early instead of dropping them, the TCP flows are ECN-capable
    ecn: bool = False
    #: one-way delays, ms: each access link, the bottleneck (minimum RTT = 2 x (2 access + bottleneck))
    access_delay_ms: float = 5.0
    bottleneck_delay_ms: float = 20.0
    #: the TCP flows' maximum window, segments
    max_window: int = 20

    @property
    def flows(self) -> range:
        """Flow ids, as both sides number them: the TCP flows from 0 s, the late
        ones, the CBR, the other UDP, then the MM_APP."""
        return range(self.n_tcp + self.n_late + self.n_cbr + self.n_udp + self.n_mm)

    @property
    def mm_flows(self) -> range:
        """The MM_APP flows' ids."""
        return range(len(self.flows) - self.n_mm, len(self.flows))


CASES = {
    "tcp": Case("tcp", 25, 0, "25 Reno flows"),
    "tcp_cbr": Case("tcp_cbr", 25, 2, "25 Reno + 2 CBR 5 Mb/s (10-30 s)"),
    "tcp_late": Case("tcp_late", 25, 0, "25 Reno + 30 Reno from 20 s", n_late=30),
    "tcp_udp": Case(
        "tcp_udp",
        25,
        2,
        "25 Reno + 30 from 20 s + 10 UDP and 2 CBR at D-CBT's class rates",
        n_late=30,
        cbr_rates=DCBT_UNTAGGED_BPS,
        n_udp=10,
        udp_rates=DCBT_TAGGED_BPS,
    ),
    "tcp_mm": Case(
        "tcp_mm",
        25,
        2,
        "25 Reno + 30 from 20 s + 10 MM_APP + 2 CBR 5 Mb/s (10-30 s)",
        n_late=30,
        n_mm=10,
    ),
    **{
        f"ecn_rtt{rtt}": Case(
            f"ecn_rtt{rtt}",
            25,
            0,
            f"25 ECN-capable Reno, RED marking, min RTT {rtt} ms",
            ecn=True,
            access_delay_ms=access,
            bottleneck_delay_ms=bottleneck,
            max_window=100,
        )
        for rtt, access, bottleneck in ((20, 2.5, 5.0), (60, 5.0, 20.0), (200, 25.0, 50.0))
    },
}

#: The MM_APP's scales [Claypool00 §5], bit/s of 1000 B packets.
MM_SCALES_BPS = (300_000, 500_000, 700_000, 900_000, 1_100_000)


def ns2_schedule(rates: Schedule) -> str:
    """A schedule as ``red_dumbbell.tcl`` reads it: ``t:rate,...`` (rates in bit/s)."""
    return ",".join(f"{t:g}:{bps}" for t, bps in rates)


def _udp_groups(name: str, n: int, start: float, rates: Schedule, cls: int) -> list[str]:
    """qoslab groups for ``n`` constant-rate flows following ``rates`` from
    ``start``: one group per step, ``name`` if there is one step, else
    ``name_p0``, ``name_p1``, ... (``logical_flow`` joins them back). The first
    starts within 100 ms of ``start``; a later step's flows start within one
    packet interval of its time (a random phase, as ns-2's flows keep theirs
    when their rate changes) and the previous step's stop at that time."""
    out: list[str] = []
    live = [(t, bps) for t, bps in rates if t <= start][-1:] + [(t, bps) for t, bps in rates if t > start]
    for j, (t, bps) in enumerate(live):
        begin = max(t, start)
        jitter = "100ms" if j == 0 else f"{8000 / bps * 1e3:.3f}ms"
        out += [
            "",
            "[[traffic]]",
            f'name = "{name if len(live) == 1 else f"{name}_p{j}"}"',
            'model = "cbr"',
            f"flows = {n}",
            f'src = "{name}_s*"',
            f'dst = "{name}_d*"',
            f'rate = "{bps}bps"',
            'size = "1000B"',
            'header = "0B"',
            f"class = {cls}",
            f'start = "{begin:g}s"',
            f'start_jitter = "{jitter}"',
        ]
        if j + 1 < len(live):
            out.append(f'stop = "{live[j + 1][0]:g}s"')
    return out


def logical_flow(name: str) -> str:
    """The case's flow a qoslab flow belongs to: ``cbr_p1.0`` is ``cbr.0``."""
    group, _, index = name.rpartition(".")
    base, sep, step = group.rpartition("_p")
    return f"{base}.{index}" if sep and step.isdigit() else name


def qoslab_toml(case: Case, rate_bps: int = RATE_BPS) -> str:
    """The case as a qoslab scenario (the paper's file, trimmed to the case's flows),
    its bottleneck at ``rate_bps`` (the paper's 25 Mb/s unless a diagnostic says otherwise)."""
    hosts = [f"tcp_s{i}" for i in range(case.n_tcp)] + [f"tcp_d{i}" for i in range(case.n_tcp)]
    hosts += [f"late_s{i}" for i in range(case.n_late)] + [f"late_d{i}" for i in range(case.n_late)]
    hosts += [f"cbr_s{i}" for i in range(case.n_cbr)] + [f"cbr_d{i}" for i in range(case.n_cbr)]
    hosts += [f"udp_s{i}" for i in range(case.n_udp)] + [f"udp_d{i}" for i in range(case.n_udp)]
    hosts += [f"mm_s{i}" for i in range(case.n_mm)] + [f"mm_d{i}" for i in range(case.n_mm)]
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
        f'delay = "{case.bottleneck_delay_ms:g}ms"',
        'queue = { type = "red", limit = "60pkts", min_th = 5, max_th = 15, max_p = 0.1, w_q = 0.002, '
        f'gentle = false, ecn = {str(case.ecn).lower()}, mode = "packets", mean_pkt_size = "1000B" }}',
    ]
    kinds = (("tcp", case.n_tcp), ("late", case.n_late), ("cbr", case.n_cbr), ("udp", case.n_udp), ("mm", case.n_mm))
    for kind, n in kinds:
        for i in range(n):
            for a, b in ((f"{kind}_s{i}", "r0"), ("r1", f"{kind}_d{i}")):
                delay = f'delay = "{case.access_delay_ms:g}ms"'
                out += ["", "[[topology.links]]", f'a = "{a}"', f'b = "{b}"', 'rate = "25Mbps"', delay]
    tcp = (
        f'tcp = {{ variant = "reno", max_window = {case.max_window}, init_window = 1, delayed_ack = false, '
        'stack = "ns2" }'
    )
    ecn = ["ecn = true"] if case.ecn else []
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
        *ecn,
        tcp,
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
            *ecn,
            tcp,
        ]
    if case.n_cbr:
        out += _udp_groups("cbr", case.n_cbr, CBR_START_S, case.cbr_rates, 2)
    if case.n_udp:
        out += _udp_groups("udp", case.n_udp, 0.0, case.udp_rates, 1)
    if case.n_mm:
        scales = ", ".join(f'"{bps}bps"' for bps in MM_SCALES_BPS)
        out += [
            "",
            "[[traffic]]",
            'name = "mm"',
            'model = "mm_app"',
            f"flows = {case.n_mm}",
            'src = "mm_s*"',
            'dst = "mm_d*"',
            'size = "1000B"',
            'header = "0B"',
            "class = 1",
            'start_jitter = "100ms"',
            f'mm_app = {{ scales = [{scales}], feedback_size = "40B" }}',
        ]
    return "\n".join(out) + "\n"
