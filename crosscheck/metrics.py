"""The crosscheck's four figures, how each side's output becomes them, and
the tolerances they must meet.

Pure Python, no dependencies beyond the standard library, so the parsers
are unit-tested without ns-2 (``tests/test_crosscheck.py``).

Definitions, the same on both sides, over the whole run ``[0, duration]``:

- ``utilization``: bits the bottleneck r0 -> r1 sent / (rate x duration);
- ``drop_fraction``: packets dropped at that queue / packets offered to it;
- ``jain``: Jain's index of the per-flow throughputs (every data flow of
  the case: delivered bytes / duration), ``(sum x)^2 / (n sum x^2)``;
- ``mean_queue``: time-average number of packets waiting in that queue
  (the packet on the wire excluded, on both sides);
- ``mark_fraction`` (the ECN cases): packets RED marked CE at that queue /
  packets offered to it (ns-2: departures whose trace flags carry ``E``,
  the CE bit, as no packet arrives marked; qoslab: the queue's
  ``marks_ecn_early``);
- ``tcp_drop_fraction`` (a diagnostic beside the issue's four, issue 10 §2:
  Table 1's TCP drop rate): TCP data packets dropped / TCP data packets
  offered, at that queue in ns-2; in qoslab the TCP flows' packets dropped /
  sent (every drop is the bottleneck's: the access links never fill; the
  packets still on an access link at the end, a few, are the difference).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

#: Tolerances fixed by the issue: absolute points for the two fractions,
#: absolute for Jain's index, relative for the mean queue.
TOLERANCE = {"utilization": 0.03, "drop_fraction": 0.005, "jain": 0.03, "mean_queue": 0.20, "mark_fraction": 0.005}
#: Figures of the ECN cases only.
ECN_ONLY = ("mark_fraction",)
#: [Tarasiuk05] Table 1 crosscheck (``tcp_cac.py``), absolute: the share of connections
#: stopped (a share of 500 connections over 5 seeds: 25 connections), Jain's index of the
#: connections' throughput, the aggregate loss and the utilization with the tolerances of
#: the RED cases' Jain's index, drop fraction and utilization.
SEED002_TOLERANCE = {"stopped_share": 0.05, "jain": 0.03, "agg_loss": 0.005, "utilization": 0.03}
#: Figures shown beside the issue's, with the drop fraction's tolerance, that
#: do not count in the verdict.
DIAGNOSTIC = {"tcp_drop_fraction": 0.005}


@dataclass(frozen=True)
class Metrics:
    utilization: float
    drop_fraction: float
    jain: float
    mean_queue: float
    tcp_drop_fraction: float
    mark_fraction: float = 0.0

    def as_dict(self) -> dict[str, float]:
        return {
            "utilization": self.utilization,
            "drop_fraction": self.drop_fraction,
            "jain": self.jain,
            "mean_queue": self.mean_queue,
            "tcp_drop_fraction": self.tcp_drop_fraction,
            "mark_fraction": self.mark_fraction,
        }


def jain(xs: Iterable[float]) -> float:
    """Jain's fairness index; 1 for equal shares, 1/n when one flow has all."""
    xs = list(xs)
    if not xs:
        raise ValueError("jain: no flows")
    s, s2 = sum(xs), sum(x * x for x in xs)
    return 1.0 if s2 == 0 else s * s / (len(xs) * s2)


def within(metric: str, reference: float, value: float) -> bool:
    """Whether ``value`` is within the issue's tolerance of ``reference`` (ns-2)."""
    tol = TOLERANCE[metric] if metric in TOLERANCE else DIAGNOSTIC[metric]
    if metric == "mean_queue":
        return abs(value - reference) <= tol * abs(reference)
    return abs(value - reference) <= tol


def within_seed002(metric: str, reference: float, value: float) -> bool:
    """Whether ``value`` is within ``SEED002_TOLERANCE`` of ``reference`` (ns-2)."""
    return abs(value - reference) <= SEED002_TOLERANCE[metric]


def mean(ms: list[Metrics]) -> Metrics:
    """The mean of several seeds' figures, field by field."""
    n = len(ms)
    if n == 0:
        raise ValueError("mean: no runs")
    return Metrics(**{k: sum(m.as_dict()[k] for m in ms) / n for k in ms[0].as_dict()})


# --- ns-2 ----------------------------------------------------------------------


@dataclass
class Ns2Trace:
    """Counts from an ns-2 queue trace of one link direction."""

    rate_bps: float
    duration_s: float
    arrivals: int = 0
    drops: int = 0
    #: the same two counts for TCP data packets (trace type ``tcp``)
    tcp_arrivals: int = 0
    tcp_drops: int = 0
    #: packets that left the queue CE-marked (RED's ECN marks)
    marks: int = 0
    departed_bytes: int = 0
    #: time integral of the number of packets waiting (packet-seconds)
    queue_area: float = 0.0
    #: bytes received at the far end, per flow id
    received: dict[int, int] | None = None
    #: packets offered to and dropped at the queue, per flow id
    flow_arrivals: dict[int, int] | None = None
    flow_drops: dict[int, int] | None = None

    def metrics(self, flows: Iterable[int]) -> Metrics:
        """The four figures; ``flows`` are the data flows' ids (a flow that
        got nothing through counts as 0)."""
        rx = self.received or {}
        return Metrics(
            utilization=self.departed_bytes * 8 / (self.rate_bps * self.duration_s),
            drop_fraction=self.drops / self.arrivals if self.arrivals else 0.0,
            jain=jain(rx.get(f, 0) * 8 / self.duration_s for f in flows),
            mean_queue=self.queue_area / self.duration_s,
            tcp_drop_fraction=self.tcp_drops / self.tcp_arrivals if self.tcp_arrivals else 0.0,
            mark_fraction=self.marks / self.arrivals if self.arrivals else 0.0,
        )


def parse_ns2_trace(lines: Iterable[str], *, src: int, dst: int, rate_bps: float, duration_s: float) -> Ns2Trace:
    """Reads ns-2's standard trace format (``ev time from to type size flags
    fid src dst seq id``) for the link ``src -> dst``.

    ``+`` is an arrival at the queue, ``-`` a departure onto the link, ``d`` a
    drop (early, forced or overflow: RED traces each once), ``r`` a
    reception at ``dst``. The number waiting is ``+`` minus ``-`` minus ``d``;
    its time average is taken up to ``duration_s``. Lines of other links and
    events after ``duration_s`` are ignored; a malformed line raises
    ``ValueError`` naming its number.
    """
    tr = Ns2Trace(rate_bps=rate_bps, duration_s=duration_s, received={}, flow_arrivals={}, flow_drops={})
    rx, fa, fd = tr.received, tr.flow_arrivals, tr.flow_drops
    assert rx is not None and fa is not None and fd is not None
    q, last_t = 0, 0.0
    for n, line in enumerate(lines, 1):
        f = line.split()
        if not f:
            continue
        if len(f) < 12 or f[0] not in ("+", "-", "r", "d"):
            fields = "'ev time from to type size flags fid src dst seq id'"
            raise ValueError(f"ns-2 trace line {n}: expected 12 fields {fields}, got {line.strip()!r}")
        try:
            ev, t, a, b, size, fid = f[0], float(f[1]), int(f[2]), int(f[3]), int(f[5]), int(f[7])
            tcp = f[4] == "tcp"
        except ValueError:
            raise ValueError(f"ns-2 trace line {n}: a number field does not parse: {line.strip()!r}") from None
        if (a, b) != (src, dst) or t > duration_s:
            continue
        if t < last_t:
            raise ValueError(f"ns-2 trace line {n}: time {t} goes back (after {last_t})")
        tr.queue_area += q * (t - last_t)
        last_t = t
        if ev == "+":
            tr.arrivals += 1
            tr.tcp_arrivals += tcp
            fa[fid] = fa.get(fid, 0) + 1
            q += 1
        elif ev == "-":
            tr.departed_bytes += size
            tr.marks += f[6][4:5] == "E"
            q -= 1
        elif ev == "d":
            tr.drops += 1
            tr.tcp_drops += tcp
            fd[fid] = fd.get(fid, 0) + 1
            q -= 1
        else:  # r
            rx[fid] = rx.get(fid, 0) + size
        if q < 0:
            raise ValueError(f"ns-2 trace line {n}: more packets left the queue than entered it")
    tr.queue_area += q * (duration_s - last_t)
    return tr


# --- MM_APP scale changes -----------------------------------------

#: Two cuts are "together" when they are at most this far apart (about one
#: RTT of the dumbbell: 2 x (5 + 20 + 5) ms plus queueing).
SYNC_WINDOW_S = 0.065
#: A cut is synchronized when at least this many other flows cut within the window.
SYNC_OTHERS = 5


def parse_scale_log(lines: Iterable[str]) -> list[tuple[float, int, int]]:
    """Reads ``red_dumbbell.tcl``'s MM_APP scale log: one ``time flow_id scale``
    line per scale a source applied. A malformed line raises ``ValueError``
    naming its number."""
    out: list[tuple[float, int, int]] = []
    for n, line in enumerate(lines, 1):
        f = line.split()
        if not f:
            continue
        try:
            if len(f) != 3:
                raise ValueError
            t, fid, scale = float(f[0]), int(f[1]), int(f[2])
        except ValueError:
            got = line.strip()
            raise ValueError(f"MM_APP scale log line {n}: expected 'time flow_id scale', got {got!r}") from None
        if scale < 0:
            raise ValueError(f"MM_APP scale log line {n}: scale must be >= 0, got {scale}")
        out.append((t, fid, scale))
    return out


def scale_cuts(changes: Iterable[tuple[float, int, int]]) -> list[tuple[float, int]]:
    """The cuts among scale changes ``(time, flow, new scale)``: the changes to a
    lower scale than the flow's previous one (every flow starts at scale 0),
    as ``(time, flow)`` in time order."""
    last: dict[int, int] = {}
    cuts = []
    for t, flow, scale in sorted(changes):
        if scale < last.get(flow, 0):
            cuts.append((t, flow))
        last[flow] = scale
    return cuts


def cut_figures(
    cuts: list[tuple[float, int]],
    n_flows: int,
    duration_s: float,
    *,
    window_s: float = SYNC_WINDOW_S,
    others: int = SYNC_OTHERS,
) -> tuple[float, float]:
    """``(cuts per second per flow, share of cuts with at least `others` other
    flows cutting within `window_s` of it)``; the share is 0 without cuts."""
    if n_flows < 1 or duration_s <= 0:
        raise ValueError("cut_figures: n_flows must be >= 1 and duration_s > 0")
    cuts = sorted(cuts)
    together = 0
    lo = 0
    for i, (t, flow) in enumerate(cuts):
        while cuts[lo][0] < t - window_s:
            lo += 1
        hi = i
        while hi + 1 < len(cuts) and cuts[hi + 1][0] <= t + window_s:
            hi += 1
        near = {f for _, f in cuts[lo : hi + 1]} - {flow}
        together += len(near) >= others
    return len(cuts) / (n_flows * duration_s), together / len(cuts) if cuts else 0.0


# --- qoslab --------------------------------------------------------------------


def qoslab_metrics(
    queue_row: Mapping[str, float],
    flow_delivered_bytes: Iterable[float],
    duration_s: float,
    *,
    tcp_sent: float,
    tcp_dropped: float,
) -> Metrics:
    """The figures from qoslab's ``queues`` row of the bottleneck, its flows'
    ``delivered_bytes`` (one per flow of the case) and the TCP flows' summed
    ``sent_pkts`` and ``dropped_pkts`` (``docs/results.md``)."""
    arrivals = queue_row["arrivals"]
    return Metrics(
        utilization=queue_row["departure_bytes"] * 8 / (queue_row["link_rate_bps"] * duration_s),
        drop_fraction=queue_row["drops"] / arrivals if arrivals else 0.0,
        jain=jain(b * 8 / duration_s for b in flow_delivered_bytes),
        mean_queue=queue_row["backlog_mean_pkts"],
        tcp_drop_fraction=tcp_dropped / tcp_sent if tcp_sent else 0.0,
        mark_fraction=queue_row.get("marks_ecn_early", 0) / arrivals if arrivals else 0.0,
    )


def print_table(title: str, head: Sequence[str], rows: Iterable[Sequence[object]], *, markdown: bool) -> None:
    """Prints ``rows`` under ``head``: a Markdown table with a bold title, or aligned plain columns."""
    body = [tuple(str(x) for x in r) for r in rows]
    if markdown:
        print(f"\n**{title}**\n")
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in body:
            print("| " + " | ".join(r) + " |")
        return
    print(f"\n{title}")
    widths = [max(len(x) for x in col) for col in zip(head, *body, strict=True)]
    for r in (tuple(head), *body):
        print("  ".join(x.ljust(w) for x, w in zip(r, widths, strict=True)).rstrip())


def ns_missing() -> bool:
    """True (after saying so on stderr, with the fix) when ns-2's `ns` is not on the PATH."""
    if shutil.which("ns") is not None:
        return False
    print(
        "crosscheck: ns-2 (`ns`) is not installed; `make crosscheck` installs it (apt-get install ns2)", file=sys.stderr
    )
    return True


def seeds_args(doc: str | None, argv: list[str] | None, *, markdown_help: str) -> argparse.Namespace:
    """The ``--seeds N`` / ``--markdown`` command line of the crosscheck scripts (exit 2 on bad input)."""
    ap = argparse.ArgumentParser(description=(doc or "").split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5, help="seeds 1..N (default 5)")
    ap.add_argument("--markdown", action="store_true", help=markdown_help)
    a = ap.parse_args(argv)
    if a.seeds < 1:
        ap.error("--seeds must be at least 1")
    return a
