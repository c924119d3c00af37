"""Network namespaces, veth pairs and bridges for a testbed (iproute2's
``ip`` and ``ethtool``), under a run-unique prefix.

```
 <p>-h0 ─veth─┐                                                 ┌─veth─ <p>-h5
 <p>-h1 ─veth─┤ <p>-s0: bridge <p>-b0 ─veth─ <p>-r0 ─veth─ <p>-s1: bridge <p>-b1 ├─ ... <p>-r1 ─ <p>-s2 ...
 ...         ─┘     (segment 0)        qoslab-router       (segment 1)       ┘
```

One bridge per segment (the hosts and routers joined by plain links), one
``qoslab-router`` namespace per emulated link (its veths ``<p>-r<j>a`` and
``<p>-r<j>b``, their peers ``<p>-x<j>a`` and ``<p>-x<j>b`` in the bridges).

Every name starts with the prefix ``qtb`` + 6 hex digits + ``-``; the
interfaces are created inside the testbed's namespaces (none in the
caller's), so deleting the namespaces removes every one of them and
nothing else is ever touched. Each testbed records its owner's pid in
``/run/qoslab-testbed/<prefix>.pid`` and its run's work folder in
``<prefix>.work``; :func:`clean` removes the namespaces, the processes left
in them and the work folder of testbeds whose owner is gone (a killed
run), and only those.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PREFIX_RE = re.compile(r"^(qtb[0-9a-f]{6})-")
STATE_DIR = Path("/run/qoslab-testbed")
SUBNET = "10.77.0.0/16"


class NetError(RuntimeError):
    """A command that builds the testbed failed (its command line and stderr)."""


def sh(args: Sequence[str]) -> str:
    p = subprocess.run(list(args), capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise NetError(f"{' '.join(args)}: {p.stderr.strip() or p.stdout.strip()}")
    return p.stdout


def skip_reason() -> str | None:
    """Why a testbed cannot be built here, or ``None``."""
    if os.geteuid() != 0:
        return f"needs root for network namespaces and AF_PACKET (euid {os.geteuid()})"
    for tool in ("ip", "bridge", "ethtool"):
        if not any((Path(d) / tool).is_file() for d in [*os.environ.get("PATH", "").split(":"), "/usr/sbin", "/sbin"]):
            return f"the {tool} command is missing (Debian: apt-get install iproute2 ethtool)"
    probe = f"qtbprobe{os.getpid() % 100_000}"
    try:
        sh(["ip", "netns", "add", probe])
        sh(["ip", "-n", probe, "link", "add", "qp0", "type", "veth", "peer", "name", "qp1"])
    except NetError as e:
        return f"cannot make a network namespace with a veth pair: {e}"
    finally:
        subprocess.run(["ip", "netns", "del", probe], capture_output=True, check=False)
    return None


def new_prefix() -> str:
    return "qtb" + secrets.token_hex(3)


def host_ip(k: int) -> str:
    return f"10.77.{k // 200}.{k % 200 + 1}"


def host_mac(k: int) -> str:
    return f"02:77:00:00:{k // 256:02x}:{k % 256:02x}"


@dataclass
class Testbed:
    """The namespaces of one run; :meth:`teardown` deletes them (idempotent).

    ``segment``: each host's segment (bridge); ``bumps``: each emulated link's two segments
    (its ``a`` end's, its ``b`` end's), a ``qoslab-router`` between their bridges."""

    prefix: str
    hosts: list[str]
    segment: dict[str, int]
    bumps: list[tuple[int, int]]
    made: list[str] = field(default_factory=list)

    def ns(self, what: str) -> str:
        return f"{self.prefix}-{what}"

    def host_ns(self, host: str) -> str:
        return self.ns(f"h{self.hosts.index(host)}")

    def ip(self, host: str) -> str:
        return host_ip(self.hosts.index(host))

    def router_ns(self, j: int) -> str:
        return self.ns(f"r{j}")

    def router_ifs(self, j: int) -> tuple[str, str]:
        return self.ns(f"r{j}a"), self.ns(f"r{j}b")

    @property
    def segments(self) -> list[int]:
        return sorted({*self.segment.values(), *(s for ends in self.bumps for s in ends)})

    def toward(self, frm: int) -> dict[int, str]:
        """Segment -> the port of ``frm``'s bridge that leads to it: the veth of the first
        emulated link on the tree's one path."""
        adj: dict[int, list[tuple[int, str]]] = {}
        for j, (a, b) in enumerate(self.bumps):
            adj.setdefault(a, []).append((b, self.ns(f"x{j}a")))
            adj.setdefault(b, []).append((a, self.ns(f"x{j}b")))
        port: dict[int, str] = {}
        stack = list(adj.get(frm, []))
        seen = {frm}
        while stack:
            m, p = stack.pop()
            if m in seen:
                continue
            seen.add(m)
            port[m] = p
            stack += [(n, p) for n, _ in adj.get(m, [])]
        return port

    def _netns(self, name: str) -> None:
        sh(["ip", "netns", "add", name])
        self.made.append(name)
        # No IPv6 (router solicitations, MLD): only the scenario's packets cross the router.
        sh(
            [
                "ip",
                "netns",
                "exec",
                name,
                "sysctl",
                "-qw",
                "net.ipv6.conf.all.disable_ipv6=1",
                "net.ipv6.conf.default.disable_ipv6=1",
            ]
        )
        sh(["ip", "-n", name, "link", "set", "lo", "up"])

    def _offloads_off(self, ns: str, dev: str) -> None:
        # GRO, GSO, TSO and checksum offloads off: wire-sized frames with complete checksums.
        subprocess.run(
            [
                "ip",
                "netns",
                "exec",
                ns,
                "ethtool",
                "-K",
                dev,
                "tso",
                "off",
                "gso",
                "off",
                "gro",
                "off",
                "tx",
                "off",
                "rx",
                "off",
            ],
            capture_output=True,
            check=False,
        )

    def build(self) -> None:
        """Creates every namespace, bridge and veth pair, addresses and static neighbours."""
        STATE_DIR.mkdir(parents=True, exist_ok=True)
        (STATE_DIR / f"{self.prefix}.pid").write_text(f"{os.getpid()}\n")
        for s in self.segments:
            sw, br = self.ns(f"s{s}"), self.ns(f"b{s}")
            # Without multicast snooping the bridge does not join the snoopers' group (an IGMP
            # report to 224.0.0.106 that would cross the routers).
            nosnoop = ["mcast_snooping", "0"]
            self._netns(sw)
            sh(
                [
                    "ip",
                    "-n",
                    sw,
                    "link",
                    "add",
                    "name",
                    br,
                    "type",
                    "bridge",
                    "forward_delay",
                    "0",
                    "stp_state",
                    "0",
                    *nosnoop,
                ]
            )
            # No multicast from the bridge's own interface nor the hosts' (their IGMP reports
            # would cross the routers): only the scenario's packets do.
            sh(["ip", "-n", sw, "link", "set", br, "multicast", "off", "up"])
        for j, ends in enumerate(self.bumps):
            rns = self.router_ns(j)
            self._netns(rns)
            for end, s, rif in zip(("a", "b"), ends, self.router_ifs(j), strict=True):
                sw, peer = self.ns(f"s{s}"), self.ns(f"x{j}{end}")
                sh(["ip", "link", "add", rif, "netns", rns, "type", "veth", "peer", "name", peer, "netns", sw])
                self._offloads_off(rns, rif)
                self._offloads_off(sw, peer)
                sh(["ip", "-n", sw, "link", "set", peer, "master", self.ns(f"b{s}"), "up"])
                # Only frames to a host behind the router cross it (the static entries below):
                # no unknown unicast, multicast (the hosts' IGMP reports) or broadcast.
                sh(["bridge", "-n", sw, "link", "set", "dev", peer, "flood", "off", "mcast_flood", "off"])
                sh(["bridge", "-n", sw, "link", "set", "dev", peer, "bcast_flood", "off"])
                # The router's namespace sends nothing of its own either (no IGMP report).
                sh(["ip", "-n", rns, "link", "set", rif, "multicast", "off", "up"])
        for k, h in enumerate(self.hosts):
            ns, dev, peer = self.ns(f"h{k}"), self.ns(f"h{k}"), self.ns(f"p{k}")
            sw = self.ns(f"s{self.segment[h]}")
            self._netns(ns)
            veth = ["type", "veth", "peer", "name", peer, "netns", sw]
            sh(["ip", "link", "add", dev, "netns", ns, "address", host_mac(k), *veth])
            self._offloads_off(ns, dev)
            self._offloads_off(sw, peer)
            sh(["ip", "-n", sw, "link", "set", peer, "master", self.ns(f"b{self.segment[h]}"), "up"])
            sh(["ip", "-n", ns, "addr", "add", f"{host_ip(k)}/16", "dev", dev])
            sh(["ip", "-n", ns, "link", "set", dev, "multicast", "off", "up"])
        # Static forwarding entries for every host in every bridge: its own veth, or the veth
        # of the emulated link that leads to its segment. A bridge that never sees a sink's MAC
        # as a source (a UDP sink sends nothing) would flood every frame to all its ports, and
        # through every router; with them nothing is flooded, however many routers a frame crosses.
        for s in self.segments:
            sw, port = self.ns(f"s{s}"), self.toward(s)
            for k, h in enumerate(self.hosts):
                to = self.ns(f"p{k}") if self.segment[h] == s else port.get(self.segment[h])
                if to is not None:
                    sh(["bridge", "-n", sw, "fdb", "replace", host_mac(k), "dev", to, "master", "static"])
        # Static neighbours: no ARP exchange delays or loses a flow's first packets, and no
        # broadcast crosses the routers.
        for k in range(len(self.hosts)):
            for j in range(len(self.hosts)):
                if j != k:
                    dev = self.ns(f"h{k}")
                    sh(
                        [
                            "ip",
                            "-n",
                            dev,
                            "neigh",
                            "replace",
                            host_ip(j),
                            "lladdr",
                            host_mac(j),
                            "dev",
                            dev,
                            "nud",
                            "permanent",
                        ]
                    )

    def tcp_settings(self, host: str, tcp: dict[str, Any]) -> None:
        """Kernel TCP in a host's namespace as the scenario's TCP: Reno, no SACK, no timestamps,
        no RACK/TLP/F-RTO (the simulator's Reno has none), ECN as the group asks; and on the
        route to the testbed's subnet the initial window, the minimum RTO and, without delayed
        ACKs, ``quickack``. The largest window is the receiver's window clamp, set by the sink
        (a route's locked ``cwnd`` reaches a connection only through the TCP metrics cache)."""
        ns, dev = self.host_ns(host), self.host_ns(host)
        sysctls = {
            "net.ipv4.tcp_congestion_control": "reno",
            "net.ipv4.tcp_sack": "0",
            "net.ipv4.tcp_dsack": "0",
            "net.ipv4.tcp_timestamps": "0",
            "net.ipv4.tcp_ecn": "1" if tcp["ecn"] else "0",
            "net.ipv4.tcp_recovery": "0",
            "net.ipv4.tcp_early_retrans": "0",
            "net.ipv4.tcp_frto": "0",
            "net.ipv4.tcp_no_metrics_save": "1",
            "net.ipv4.tcp_slow_start_after_idle": "0",
        }
        sh(["ip", "netns", "exec", ns, "sysctl", "-qw", *[f"{k}={v}" for k, v in sysctls.items()]])
        route = ["ip", "-n", ns, "route", "replace", SUBNET, "dev", dev, "proto", "kernel", "scope", "link"]
        route += ["initcwnd", str(tcp["init_window"]), "rto_min", f"{tcp['min_rto_ms']}ms"]
        if not tcp["delayed_ack"]:
            route += ["quickack", "1"]
        sh(route)

    def exec_args(self, ns: str, args: Sequence[str]) -> list[str]:
        return ["ip", "netns", "exec", ns, *args]

    def record_work(self, work: Path) -> None:
        """Records the owner and the run's work folder, for :func:`clean` to remove should the run
        be killed (the owner first: a folder recorded without a live owner is stale)."""
        STATE_DIR.mkdir(parents=True, exist_ok=True)
        (STATE_DIR / f"{self.prefix}.pid").write_text(f"{os.getpid()}\n")
        (STATE_DIR / f"{self.prefix}.work").write_text(f"{work}\n")

    def teardown(self) -> None:
        """Deletes the namespaces (and with them every interface) this testbed made."""
        for name in reversed(self.made):
            subprocess.run(["ip", "netns", "del", name], capture_output=True, check=False)
        self.made.clear()
        (STATE_DIR / f"{self.prefix}.pid").unlink(missing_ok=True)
        (STATE_DIR / f"{self.prefix}.work").unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def testbeds() -> dict[str, list[str]]:
    """The namespaces of every testbed on this machine, by prefix."""
    out = sh(["ip", "netns", "list"]) if os.geteuid() == 0 else ""
    found: dict[str, list[str]] = {}
    for line in out.splitlines():
        name = line.split()[0] if line.split() else ""
        m = PREFIX_RE.match(name)
        if m:
            found.setdefault(m.group(1), []).append(name)
    return found


def kill_inside(ns: str) -> None:
    """Kills the processes left in one of the testbed's namespaces (a killed run's router,
    generators, sinks): they are the testbed's, started there by it."""
    import signal

    pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True, check=False).stdout.split()
    for p in pids:
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(p), signal.SIGKILL)


def owner(prefix: str) -> int | None:
    try:
        return int((STATE_DIR / f"{prefix}.pid").read_text().strip())
    except (OSError, ValueError):
        return None


def _remove_work(prefix: str) -> None:
    """Removes a testbed's recorded work folder: only a folder named ``qoslab-<prefix>-...``."""
    import shutil

    state = STATE_DIR / f"{prefix}.work"
    try:
        work = Path(state.read_text().strip())
    except OSError:
        return
    if work.name.startswith(f"qoslab-{prefix}-") and work.is_dir() and not work.is_symlink():
        shutil.rmtree(work, ignore_errors=True)
    state.unlink(missing_ok=True)


def clean(*, only_dead: bool = True, prefixes: Sequence[str] | None = None) -> list[str]:
    """Deletes stale testbeds (owner gone or unknown): the processes left in their namespaces,
    the namespaces and the run's work folder; with ``only_dead=False``, every testbed. ``prefixes``
    limits it to those testbeds (a test cleans only its own). Returns the namespaces removed.
    Nothing without the testbed prefix is touched."""
    removed: list[str] = []
    found = testbeds()
    # A testbed whose namespaces are gone may still have left its work folder.
    for f in STATE_DIR.glob("qtb*.work") if STATE_DIR.is_dir() else []:
        found.setdefault(f.stem, [])
    for prefix, names in sorted(found.items()):
        if prefixes is not None and prefix not in prefixes:
            continue
        pid = owner(prefix)
        if only_dead and pid is not None and _alive(pid):
            continue
        for n in names:
            kill_inside(n)
            subprocess.run(["ip", "netns", "del", n], capture_output=True, check=False)
            removed.append(n)
        _remove_work(prefix)
        (STATE_DIR / f"{prefix}.pid").unlink(missing_ok=True)
    return removed
