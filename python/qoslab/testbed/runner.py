"""Runs a plan on real packets: the namespaces, a ``qoslab-router`` on each
emulated link, a ``qoslab-traffic sink`` in each destination host and a
``qoslab-traffic gen`` in each source host, all started against one
instant of CLOCK_MONOTONIC (``t0``); then collects what they wrote.

Teardown runs on every way out (``try``/``finally``): a normal end, an
error, Ctrl-C (``KeyboardInterrupt``) and SIGTERM (the command line turns
it into an exception too). Processes are stopped by their own pid, then
the namespaces are deleted.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import _core
from .net import Testbed, new_prefix
from .plan import EDGE_PORT, Plan, vtr_frames

#: Seconds between starting the processes and the scenario's time 0.
LEAD_S = 1.0


class TestbedError(RuntimeError):
    """The testbed could not run: a missing binary, a process that failed (its stderr)."""


def binary(name: str) -> Path:
    """A qoslab binary: ``$QOSLAB_BIN_DIR``, the workspace's ``target/release`` (or
    ``$CARGO_TARGET_DIR/release``) and its ``examples`` (``edge_overhead``), the copy an
    installed wheel carries (``qoslab/_data/bin``), then ``PATH``."""
    here = Path(__file__).resolve().parents[3]
    release = [Path(os.environ["CARGO_TARGET_DIR"]) / "release"] if os.environ.get("CARGO_TARGET_DIR") else []
    release.append(here / "target" / "release")
    dirs = [
        os.environ.get("QOSLAB_BIN_DIR"),
        *(str(d / sub) for d in release for sub in (".", "examples")),
        str(Path(__file__).resolve().parents[1] / "_data" / "bin"),
    ]
    for d in dirs:
        if d and (Path(d) / name).is_file():
            return Path(d) / name
    found = shutil.which(name)
    if found:
        return Path(found)
    raise TestbedError(
        f"the {name} binary was not found (QOSLAB_BIN_DIR, target/release, PATH); build it in the source tree: "
        "make bins"
    )


#: The real-time priority (SCHED_FIFO) the testbed's routers, sinks and generators run at, so a
#: loaded machine's other work does not starve them (docs/testbed.md, "Run health"). They sleep
#: between packets; the kernel's real-time throttling (95 % by default) bounds a runaway.
#: ``QOSLAB_TESTBED_RT=0`` runs them at normal priority.
RT_PRIORITY = 10


def realtime() -> bool:
    """Do the testbed's processes run at real-time priority (``chrt`` present and allowed here,
    not turned off)? A container without the right to real-time scheduling refuses ``chrt``:
    the testbed then runs at normal priority and its runs' health says so."""
    return os.environ.get("QOSLAB_TESTBED_RT", "1") != "0" and _chrt_allowed()


@functools.cache
def _chrt_allowed() -> bool:
    chrt = shutil.which("chrt")
    if chrt is None:
        return False
    try:
        probe = subprocess.run([chrt, "-f", str(RT_PRIORITY), "true"], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


def _rt(args: list[str]) -> list[str]:
    return ["chrt", "-f", str(RT_PRIORITY), *args] if realtime() else args


@dataclass
class Collected:
    """What the processes wrote."""

    t0_ns: int
    #: Per emulated link (the plan's bumps, in order): its router's start, summary and stats lines.
    router_start_ns: list[int] = field(default_factory=list)
    gen: dict[int, dict[str, Any]] = field(default_factory=dict)  # flow id -> its report
    gen_late_max_ns: int = 0
    gen_late_mean_ns: float = 0.0
    gen_late_p99_ns: int = 0  # the largest of the generators' 99th percentiles
    gen_sends: int = 0  # schedule points of every generator (the lateness's population)
    gen_late_over_1ms: int = 0  # of those, more than 1 ms late
    records: Any = None  # numpy structured array of every received packet
    routers: list[dict[str, Any]] = field(default_factory=list)
    stats: list[list[dict[str, Any]]] = field(default_factory=list)
    wall_s: float = 0.0
    prefix: str = ""
    tcp_received: dict[int, dict[str, Any]] = field(default_factory=dict)  # flow id -> bytes, first_ns, last_ns
    #: MM_APP flow id -> its receiver's counts (the sink's: feedback sent, losses found).
    mm_received: dict[int, dict[str, Any]] = field(default_factory=dict)
    realtime: bool = False
    #: The machine's CPU time (every CPU's, /proc/stat) while the generators ran, as shares of
    #: it: stolen by the hypervisor (a virtual machine's vCPUs not run), and busy in this
    #: machine (user, system, interrupts; the testbed's own processes included). None where
    #: /proc/stat cannot be read.
    cpu_steal_share: float | None = None
    cpu_busy_share: float | None = None


RECORD_DTYPE = [("flow", "<u4"), ("wire", "<u4"), ("seq", "<u8"), ("send_ns", "<u8"), ("recv_ns", "<u8")]


def router_config(plan: Plan, tb: Testbed, work: Path, seed: int, j: int = 0, *, store_and_forward: bool = True) -> str:
    """The configuration of emulated link ``j``'s router: ``[router]`` and the link as
    ``[link]`` (written by the core from the scenario's link, ``Scenario.router_link``), its
    delay the link's plus the plain path delays folded into it (``docs/testbed.md``). Each frame
    leaves at the end of its own transmission (``store_and_forward``, the simulator's link: a
    frame on an idle wire does not leave at once, docs/testbed.md "Results"). Router
    ``j`` draws from seed + ``j`` (the first, the run's seed)."""
    a, b = tb.router_ifs(j)
    bump = plan.bumps[j]
    interval = _core.format_duration(plan.model["metrics"]["series_interval"])
    lines = [
        "[router]",
        f"a = {json.dumps(a)}",
        f"b = {json.dumps(b)}",
        f"seed = {(seed + j) % 2**64}",
        f"stats = {json.dumps(str(work / f'router{j}-stats.jsonl'))}",
        f"out = {json.dumps(str(work / f'router{j}'))}",
        f"control_socket = {json.dumps(str(work / f'router{j}.sock'))}",
        f"stats_interval = {json.dumps(interval)}",
        f"class_tag = {json.dumps(plan.class_tag)}",
        "pool = 65536",
        'drain_timeout = "5s"',
        f"store_and_forward = {json.dumps(store_and_forward)}",
    ]
    if bump.pcn is not None:
        # A PCN domain at this link: its traffic's DSCPs, and the scenario's [pcn] with the
        # router's two sides as its edges (ingress a, egress b).
        lines += [f"pcn_dscps = {json.dumps(bump.pcn_dscps)}", f"edge_port = {EDGE_PORT}"]
    if bump.admission is not None:
        lines.append(f"edge_port = {EDGE_PORT}")
    lines.append("")
    # Classifier rules that name hosts match the testbed's addresses of those hosts.
    addrs = {h: tb.ip(h) for h in plan.hosts}
    link: str = plan.scenario.held().router_link(bump.link.index, bump.delay_ns, addrs)
    text = "\n".join(lines) + link
    if bump.pcn is not None:
        import tomli_w

        text += "\n" + tomli_w.dumps({"pcn": {**bump.pcn, "edges": ["a", "b"]}})
    tables: dict[str, Any] = {}
    if bump.admission is not None:
        # The scenario's own admission table: the router's CAC is built as the simulator's.
        tables["admission"] = dict(bump.admission)
    if bump.shaping is not None:
        sh = bump.shaping
        shaping: dict[str, Any] = {"depth": f"{sh['depth']}B"}
        if sh["buffer"] is not None:
            shaping["buffer"] = sh["buffer"]
        if sh["flows"]:
            shaping["flows"] = [
                {**f, "src": addrs[f["src"]], "dst": addrs[f["dst"]], "rate": f"{f['rate']}bps"} for f in sh["flows"]
            ]
        tables["shaping"] = shaping
    if tables:
        import tomli_w

        text += "\n" + tomli_w.dumps(tables)
    return text


def _wait_for(path: Path, proc: subprocess.Popen[bytes], what: str, timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while not path.exists():
        if proc.poll() is not None:
            raise TestbedError(f"{what} exited with status {proc.returncode}: {_stderr(proc)}")
        if time.monotonic() > end:
            raise TestbedError(f"{what} did not start within {timeout:g} s")
        time.sleep(0.02)


def _stderr(proc: subprocess.Popen[bytes]) -> str:
    try:
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    except (OSError, ValueError):
        err = ""
    return err.strip() or "(no message)"


def _stop(proc: subprocess.Popen[bytes], timeout: float) -> None:
    """SIGTERM to one of our processes by its pid; SIGKILL if it has not ended in ``timeout``."""
    _stop_all([proc], timeout)


def _stop_all(procs: list[subprocess.Popen[bytes]], timeout: float) -> None:
    """SIGTERM to each of our processes (by pid) at once, then one shared ``timeout`` for all of
    them to end; SIGKILL to those that have not. So a teardown takes ``timeout`` at most, however
    many processes and however loaded the machine, not ``timeout`` per process."""
    live = [p for p in procs if p.poll() is None]
    for p in live:
        with contextlib.suppress(ProcessLookupError):
            p.send_signal(signal.SIGTERM)
    end = time.monotonic() + timeout
    for p in live:
        try:
            p.wait(max(0.0, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


@dataclass
class Standing:
    """A built testbed with its routers running (:func:`standing`)."""

    tb: Testbed
    work: Path
    #: Every process started, in order (stopped by pid on the way out).
    procs: list[subprocess.Popen[bytes]]
    routers: list[subprocess.Popen[bytes]]
    router_start_ns: list[int]


@contextlib.contextmanager
def standing(plan: Plan, *, seed: int, keep: Path | None = None, store_and_forward: bool = True) -> Iterator[Standing]:
    """Builds the plan's namespaces, bridges and veths, sets kernel TCP where a TCP flow ends,
    and starts a ``qoslab-router`` on each emulated link (waiting for each to listen); yields
    them. Everything started is stopped by its pid and the namespaces are deleted on every way
    out. ``keep``: a folder to copy the processes' raw files into (for debugging)."""
    router_bin = binary("qoslab-router")
    tb = Testbed(
        prefix=new_prefix(), hosts=plan.hosts, segment=plan.segment, bumps=[(b.a_seg, b.b_seg) for b in plan.bumps]
    )
    work = Path(tempfile.mkdtemp(prefix=f"qoslab-{tb.prefix}-"))
    up = Standing(tb=tb, work=work, procs=[], routers=[], router_start_ns=[])
    try:
        tb.record_work(work)
        tb.build()
        # Kernel TCP set as the scenario's, in every namespace that ends a TCP flow.
        for f in plan.flows:
            if f.tcp is not None:
                tb.tcp_settings(f.src, f.tcp)
                tb.tcp_settings(f.dst, f.tcp)
        for j in range(len(plan.bumps)):
            cfg = work / f"router{j}.toml"
            cfg.write_text(router_config(plan, tb, work, seed, j, store_and_forward=store_and_forward))
            up.router_start_ns.append(time.monotonic_ns())
            router = subprocess.Popen(
                tb.exec_args(tb.router_ns(j), _rt([str(router_bin), "run", str(cfg)])),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            up.procs.append(router)
            up.routers.append(router)
        for j, router in enumerate(up.routers):
            _wait_for(work / f"router{j}.sock", router, f"qoslab-router of {plan.bumps[j].direction}")
        yield up
    finally:
        _stop_all(up.procs, 5)
        tb.teardown()
        if keep is not None:
            shutil.copytree(work, keep, dirs_exist_ok=True)
        shutil.rmtree(work, ignore_errors=True)


def execute(plan: Plan, *, seed: int, keep: Path | None = None) -> Collected:
    """Builds the testbed, runs the scenario's traffic through it, tears it down; returns what
    was measured. ``keep``: a folder to copy the processes' raw files into (for debugging)."""
    import numpy as np

    traffic_bin = binary("qoslab-traffic")
    wall0 = time.monotonic()
    with standing(plan, seed=seed, keep=keep) as up:
        tb, work, procs, routers = up.tb, up.work, up.procs, up.routers
        # Sinks: one per destination host, a socket per destination port.
        sinks: dict[str, subprocess.Popen[bytes]] = {}
        for dst in sorted({f.dst for f in plan.flows}, key=plan.hosts.index):
            ports = sorted({f.dst_port for f in plan.flows if f.dst == dst and f.tcp is None})
            tcp_ports = sorted({f.dst_port for f in plan.flows if f.dst == dst and f.tcp is not None})
            args = [str(traffic_bin), "sink", "--out", str(work / f"sink-{dst}.bin")]
            for p in ports:
                args += ["--listen", f"{tb.ip(dst)}:{p}"]
            for p in tcp_ports:
                args += ["--listen-tcp", f"{tb.ip(dst)}:{p}"]
            # MM_APP flows: the sink runs each one's receiver and sends it its scale.
            for f in plan.flows:
                mm = f.spec["model"].get("mm_app")
                if f.dst == dst and mm is not None:
                    args += ["--mm", f"{f.id}:{len(mm['periods'])}:{mm['feedback_size']}"]
            windows = {(f.tcp["max_window"], f.tcp["mss"]) for f in plan.flows if f.dst == dst and f.tcp is not None}
            if windows:
                # The scenario's largest window as the receiver's (one per host: the plan checks it).
                segments, mss = max(windows)
                args += ["--tcp-window-clamp", str(segments * mss), "--tcp-mss", str(mss)]
            s = subprocess.Popen(
                tb.exec_args(tb.host_ns(dst), _rt(args)), stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
            procs.append(s)
            sinks[dst] = s
        for dst, s in sinks.items():
            line = s.stdout.readline().decode().strip() if s.stdout else ""
            if line != "ready":
                s.wait(5)
                raise TestbedError(f"the sink in {dst} did not start: {_stderr(s)}")
        cpu0 = cpu_times()
        t0 = time.monotonic_ns() + int(LEAD_S * 1e9)
        gens: dict[str, subprocess.Popen[bytes]] = {}
        for src in sorted({f.src for f in plan.flows}, key=plan.hosts.index):
            flows = [dict(f.spec, dst=f"{tb.ip(f.dst)}:{f.dst_port}") for f in plan.flows if f.src == src]
            spec = work / f"gen-{src}.json"
            # Each VTR trace once, shared by its flows (by the group's name).
            traces = {
                m["vtr"]["trace"]: vtr_frames(plan.model, m["vtr"]["trace"])
                for m in (f["model"] for f in flows)
                if "vtr" in m
            }
            spec.write_text(
                json.dumps({"t0_ns": t0, "seed": seed, "flows": flows} | ({"vtr_traces": traces} if traces else {}))
            )
            args = [str(traffic_bin), "gen", str(spec), "--report", str(work / f"gen-{src}.report.json")]
            g = subprocess.Popen(
                tb.exec_args(tb.host_ns(src), _rt(args)), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
            )
            procs.append(g)
            gens[src] = g
        deadline = time.monotonic() + LEAD_S + plan.duration_ns / 1e9 + 30
        for src, g in gens.items():
            try:
                g.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                raise TestbedError(f"the generator in {src} did not finish in time") from None
            if g.returncode != 0:
                raise TestbedError(f"the generator in {src} exited with status {g.returncode}: {_stderr(g)}")
        cpu1 = cpu_times()
        # Let the last packets cross: the router's delay plus what its queue may hold (a few seconds at most).
        # (Every router's delay and drain: a bound on the longest path's.)
        delays = sum(b.delay_ns for b in plan.bumps) / 1e9
        time.sleep(min(5.0, 0.5 + delays + sum(_drain_s(plan, j) for j in range(len(plan.bumps)))))
        for s in sinks.values():
            _stop(s, 10)
        for j, router in enumerate(routers):
            _stop(router, 15)
            if router.returncode not in (0, None):
                raise TestbedError(
                    f"the qoslab-router of {plan.bumps[j].direction} exited with status "
                    f"{router.returncode}: {_stderr(router)}"
                )
        for src, s in sinks.items():
            if s.returncode != 0:
                raise TestbedError(f"the sink in {src} exited with status {s.returncode}: {_stderr(s)}")
        out = Collected(t0_ns=t0, router_start_ns=up.router_start_ns, prefix=tb.prefix, realtime=realtime())
        out.cpu_steal_share, out.cpu_busy_share = cpu_shares(cpu0, cpu1)
        for src in gens:
            rep = json.loads(_own_text(work / f"gen-{src}.report.json"))
            for f in rep["flows"]:
                out.gen[int(f["id"])] = f
            out.gen_late_max_ns = max(out.gen_late_max_ns, int(rep["late_max_ns"]))
            out.gen_late_mean_ns = max(out.gen_late_mean_ns, float(rep["late_mean_ns"]))
            out.gen_late_p99_ns = max(out.gen_late_p99_ns, int(rep["late_p99_ns"]))
            out.gen_sends += int(rep["sends"])
            out.gen_late_over_1ms += int(rep["late_over_1ms"])
        for d in sinks:
            mm_file = work / f"sink-{d}.mm.json"
            if mm_file.exists():
                for r in json.loads(_own_text(mm_file)):
                    out.mm_received[int(r["id"])] = r
            tcp_file = work / f"sink-{d}.tcp.json"
            if tcp_file.exists():
                for r in json.loads(_own_text(tcp_file)):
                    out.tcp_received[int(r["id"])] = r
        parts = [np.fromfile(_own_file(work / f"sink-{d}.bin", MAX_RECORDS_BYTES), dtype=RECORD_DTYPE) for d in sinks]
        recs = np.concatenate(parts) if parts else np.zeros(0, dtype=RECORD_DTYPE)
        out.records = recs[np.lexsort((recs["seq"], recs["flow"], recs["recv_ns"]))]
        for j in range(len(plan.bumps)):
            out.routers.append(json.loads(_own_text(work / f"router{j}" / "summary.json")))
            lines = _own_text(work / f"router{j}-stats.jsonl").splitlines()
            out.stats.append([json.loads(line) for line in lines if line])
        out.wall_s = time.monotonic() - wall0
        return out


#: The most bytes read from one report or stats file the testbed's processes wrote (a router's
#: stats lines of a long run at a short interval stay far below it).
MAX_OUTPUT_BYTES = 256 * 2**20
#: The most bytes of one sink's packet records (28 B a packet: about 150 million packets).
MAX_RECORDS_BYTES = 4 * 2**30


def _own_file(path: Path, limit: int = MAX_OUTPUT_BYTES) -> Path:
    """``path``, a file the testbed's own processes wrote in its work folder, checked before it
    is read: a regular file of at most ``limit`` bytes, else a :class:`TestbedError` naming it."""
    import stat

    try:
        st = path.stat()
    except OSError as e:
        raise TestbedError(f"{path}: cannot read a process's output: {e.strerror or e}") from None
    if not stat.S_ISREG(st.st_mode):
        raise TestbedError(f"{path}: a process's output is not a regular file")
    if st.st_size > limit:
        raise TestbedError(f"{path}: a process's output of {st.st_size} bytes; allowed: at most {limit}")
    return path


def _own_text(path: Path) -> str:
    """The text of a report or stats file of the testbed's processes (:func:`_own_file`)."""
    return _own_file(path).read_text(encoding="utf-8")


def _limits(q: Any) -> list[dict[str, Any]]:
    """Every limit in a queue's numeric spec (``{"packets", "bytes"}`` tables, bands' included)."""
    if isinstance(q, dict):
        if set(q) == {"packets", "bytes"}:
            return [q]
        return [x for v in q.values() for x in _limits(v)]
    if isinstance(q, list):
        return [x for v in q for x in _limits(v)]
    return []


#: The fields of /proc/stat's ``cpu`` line, in order (proc(5)); guest time is also counted in user.
_CPU_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def cpu_times() -> dict[str, int] | None:
    """Every CPU's time so far by kind (clock ticks), from /proc/stat's first line (read with a
    bound); None where it cannot be read or has not the fields of proc(5)."""
    try:
        with open("/proc/stat", "rb") as f:
            line = f.read(4096).split(b"\n", 1)[0].split()
    except OSError:
        return None
    if len(line) < 1 + len(_CPU_FIELDS) or line[0] != b"cpu":
        return None
    try:
        return {k: int(v) for k, v in zip(_CPU_FIELDS, line[1:], strict=False)}
    except ValueError:
        return None


def cpu_shares(a: dict[str, int] | None, b: dict[str, int] | None) -> tuple[float | None, float | None]:
    """The shares of the CPU time between two :func:`cpu_times` that the hypervisor stole and
    that this machine was busy (neither idle, waiting for I/O nor stolen); (None, None) when
    either is missing or no tick passed."""
    if a is None or b is None:
        return None, None
    d = {k: b[k] - a[k] for k in _CPU_FIELDS}
    total = sum(d.values())
    if total <= 0:
        return None, None
    return d["steal"] / total, (total - d["idle"] - d["iowait"] - d["steal"]) / total


def _drain_s(plan: Plan, j: int = 0) -> float:
    """How long emulated link ``j``'s queue may take to empty: its limits (packets of a full
    frame, or bytes) at the link's rate."""
    link = plan.bumps[j].link
    held = sum(max((lim["packets"] or 0) * 1514, lim["bytes"] or 0) for lim in _limits(link.info["queue"]))
    return held * 8 / link.rate
