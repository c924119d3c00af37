"""Every topology the testbed builds has the scenario's delays: each preset and
example scenario built for real (namespaces, bridges, a ``qoslab-router`` per emulated link, no
traffic), and the delay of each flow's path, measured with ICMP echo (ping) between the flow's
two hosts inside their namespaces, within 1 ms of the delay of the route the core's expansion
gives (``Scenario.model``: the sum of the links' delays, forward and back).

Needs root and network namespaces (skipped with the reason elsewhere). The routers run without
store-and-forward here (``router.store_and_forward = false``: a frame that finds its link idle
leaves at once), so a ping crosses only delay lines, and the least
round trip of a few is the path's. Runs each testbed on its own run-unique prefix.

The routers and the pingers run at a real-time priority (``SCHED_FIFO``; both sleep between
packets, so they take almost no CPU): on a machine loaded with other work, a process woken late
adds the scheduler's wait to a round trip (tens of ms at a load of 40 on 2 cores), which is the
host's, not the testbed's delay. At most ``PARALLEL`` pingers run at once.

Two traffic settings are left out, as neither changes a route: a group's flow arrival process
(``arrivals``: when flows come; the data group keeps its one data_src -> dst flow, so a ping per
path suffices) and its traffic ``class``, which the testbed does not carry beside
explicit_prio's DSCP 46 (which band of a queue its packets take; every group class 0).
"""

from __future__ import annotations

import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
import tomli_w

import qoslab
from conftest import ROOT, SCENARIOS
from qoslab import testbed
from qoslab.testbed.plan import make_plan
from qoslab.testbed.runner import standing

_why = testbed.skip_reason()
# realtime: `make test` runs these alone, after the rest (pyproject.toml, markers).
pytestmark = [pytest.mark.skipif(_why is not None, reason=f"testbed: {_why}"), pytest.mark.realtime]

EXAMPLES = sorted((SCENARIOS / "examples").glob("*.toml"))
SMALL = ROOT / "tests" / "scenarios" / "testbed" / "red_small.toml"
#: Each preset in the forms the examples do not show.
VARIANTS = [
    (SMALL, ("topology.routers=2",)),
    # The ingress routers take the names in0..; the hosts become src0...
    (SCENARIOS / "examples" / "star.toml", ("topology.ingress_routers=true", "traffic.0.src=src*")),
    (ROOT / "tests" / "scenarios" / "testbed" / "parking_lot.toml", ()),
]

#: Sends ``count`` ICMP echo requests to ``argv[1]`` (a raw socket: root, inside the source's
#: namespace) and prints the least round trip in ns; the kernel of the destination's namespace
#: answers.
PING = r"""
import os, socket, struct, sys, time
dst, count = sys.argv[1], int(sys.argv[2])
os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(20))
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
s.settimeout(2.0)
ident, best = os.getpid() & 0xFFFF, None
def checksum(b):
    n = sum(struct.unpack(f"!{len(b) // 2}H", b))
    n = (n >> 16) + (n & 0xFFFF)
    return ~(n + (n >> 16)) & 0xFFFF
for seq in range(count):
    body = struct.pack("!d", 0.0) + bytes(48)
    head = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
    pkt = struct.pack("!BBHHH", 8, 0, checksum(head + body), ident, seq) + body
    t0 = time.monotonic_ns()
    s.sendto(pkt, (dst, 0))
    while True:
        try:
            data, _ = s.recvfrom(2048)
        except TimeoutError:
            break
        ihl = (data[0] & 0x0F) * 4
        kind, _, _, rid, rseq = struct.unpack("!BBHHH", data[ihl : ihl + 8])
        if kind == 0 and rid == ident and rseq == seq:
            rtt = time.monotonic_ns() - t0
            best = rtt if best is None else min(best, rtt)
            break
    time.sleep(0.05)
print(best if best is not None else -1)
"""
#: Pingers at once.
PARALLEL = 4


def _load(path: Path, overrides: tuple[str, ...]) -> qoslab.Scenario:
    """The scenario at ``path`` without its groups' arrival processes and classes (the module doc)."""
    doc = tomllib.loads(path.read_text())
    for g in doc.get("traffic", []):
        g.pop("arrivals", None)
        g.pop("class", None)
    sc = qoslab.Scenario(tomli_w.dumps(doc), origin=str(path), base_dir=path.parent, overrides=list(overrides))
    sc.validate()
    return sc


def _cases() -> list[tuple[Path, tuple[str, ...]]]:
    return [(p, ()) for p in EXAMPLES] + VARIANTS


@pytest.mark.parametrize(("path", "overrides"), _cases(), ids=lambda c: c.stem if isinstance(c, Path) else ",".join(c))
def test_every_paths_delay_on_the_testbed_is_the_expansions(path: Path, overrides: tuple[str, ...]) -> None:
    t = time.monotonic()
    sc = _load(path, overrides)
    plan, problems = make_plan(sc)
    assert plan is not None, [str(p) for p in problems]
    want = {
        (f["src"], f["dst"]): (f["delay_ns"] + f["reverse_delay_ns"]) / 2
        for g in sc.model["groups"]
        for f in g["flows"]
    }
    pairs = sorted({(f.src, f.dst) for f in plan.flows})
    # Frames leave the routers when taken (no store-and-forward): a ping crosses only delay lines.
    with standing(plan, seed=1, store_and_forward=False) as up:
        for r in up.routers:  # every thread of each router (the module doc)
            subprocess.run(["chrt", "-a", "-f", "-p", "20", str(r.pid)], check=True, capture_output=True)
        got = {}
        for at in range(0, len(pairs), PARALLEL):
            pings = {
                (src, dst): subprocess.Popen(
                    up.tb.exec_args(up.tb.host_ns(src), [sys.executable, "-c", PING, up.tb.ip(dst), "8"]),
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
                for src, dst in pairs[at : at + PARALLEL]
            }
            for pair, p in pings.items():
                out, err = p.communicate(timeout=60)
                assert p.returncode == 0, (pair, err)
                got[pair] = int(out.strip()) / 2  # one way: half the least round trip
    rows = [(f"{s}->{d}", want[(s, d)] / 1e6, got[(s, d)] / 1e6) for s, d in pairs]
    print(f"{path.stem} {overrides}: {len(pairs)} paths, {time.monotonic() - t:.1f} s")
    for name, w, g in rows:
        print(f"  {name}: expansion {w:.3f} ms, ping {g:.3f} ms")
    for name, w, g in rows:
        assert g > 0, f"{name}: no echo reply"
        assert abs(g - w) <= 1.0, f"{name}: ping {g:.3f} ms against the expansion's {w:.3f} ms"
