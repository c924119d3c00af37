"""[Tarasiuk05] Table 1 in ns-2.35 and in qoslab: which TCP stops the
unshaped connections at minimum RTT 0.

    .venv/bin/python crosscheck/tcp_cac.py [--seeds N] [--cells unshaped/0,...] [--variants rfc,...]
                                           [--start-jitter S] [--tie-free] [--common-starts]
                                           [--report-only] [--spread] [--markdown]

The Table 1 set-up (``scenarios/tcp_cac/table1_*.toml``; ``ns2/tcp_cac.tcl``):
100 greedy Reno connections, 1500 B segments on the wire, a 44-segment
window, 1 Gb/s access links without delay, a 100 Mb/s bottleneck with a
20-packet drop-tail buffer, minimum RTT 0 / 30 / 60 ms (twice the
bottleneck's delay), starts uniform in [0, 1 s], 60 s with the first 10 s
left out; unshaped, and shaped at the source by a one-packet token bucket
at C/n = 1 Mb/s and at 2 Mb/s. Each cell runs

- ns-2.35 with its own TCP defaults (only the paper's segment size and
  window set: ``ns2defaults``), and with every setting matched to
  qoslab's defaults, limited transmit off (``matched``) and on
  (``matched_lt``);
- qoslab with ``tcp.stack = "rfc"`` (the RFCs' rules, the reproduction's)
  and ``"ns2"`` (ns-2.35's Reno rules), each with ``limited_transmit`` off
  and on;

over seeds 1..N, and prints per cell: the share of connections stopped
(under 0.1 C/n after the warm-up, the reproduction's rule), the mean
per-connection throughput and Jain's index over the connections, the
aggregate loss (packets dropped at the bottleneck / offered to it) and the
mean of the per-connection loss ratios, the mean RTO expiries per
connection and the bottleneck's utilization. Connections of all seeds are
pooled. The verdict compares the pairs that run the same rules, qoslab
``ns2`` with ns-2.35 ``matched`` and qoslab ``ns2`` + limited transmit with
``matched_lt``, within ``metrics.SEED002_TOLERANCE``; exit 0 when every
such figure is within it, 1 when one is not, 2 on a usage or set-up error.
``--start-jitter`` spreads the starts over ``[0, S]`` instead of Table 1's
1 s (a diagnostic: the start pattern decides how many connections stop);
``--spread`` adds each figure's standard deviation over the seeds (each
seed's own figure), to read a difference against the seeds' scatter.
``--tie-free`` runs the judged variant of ``make crosscheck``, which is not
Table 1's set-up: connection i (1..100) has an access link of one-way delay
``d_i = 2 p i + (i^2 mod p)`` ns, ``p = 101`` (``access_delays_ns``), in both
simulators, so that no two connections' segments reach the bottleneck in
the same instant (in Table 1's set-up the order of such ties, which the two
simulators break by different rules, moves the 0 ms cells by more than the
tolerances; docs/decisions.md, docs/validation.md). ``--report-only``
prints the verdicts but exits 0 when every run succeeds (``make
crosscheck`` reports Table 1's exact set-up so and judges the variant).
``--common-starts`` (a diagnostic) starts ns-2's connections at the times
qoslab draws for them instead of ns-2's own draws, so that the columns
compare the same runs rather than two samples of start times.
``--variants`` runs some columns only (a pair is judged when both of its
columns run); with ``tcp_rules.patch`` applied, ``QOSLAB_TCP_KNOBS`` turns
ns-2's rules on one at a time in qoslab's RFC stack (docs/validation.md).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import metrics  # noqa: E402

N = 100
C_BPS = 100e6
SEGMENT_B = 1500
DURATION_S = 60
WARMUP_S = 10
#: A connection is stopped when it averages under this share of C/n after the warm-up
#: (``qoslab.reproduce.tcp_cac``'s rule).
STOPPED_SHARE = 0.10
RTTS_MS = (0, 30, 60)
#: Shaping rates, bit/s (0: unshaped).
SHAPERS = (0, 1_000_000, 2_000_000)

#: The prime of the tie-free variant's access delays (``access_delays_ns``): above N.
ACCESS_P = 101

#: qoslab's senders: the scenario's TCP (reno, max_window = rwnd = 44, preset qoslab) with these keys.
QOSLAB_TCP: dict[str, list[str]] = {
    "rfc": ["traffic.0.tcp.stack=rfc", "traffic.0.tcp.limited_transmit=false"],
    "rfc_lt": ["traffic.0.tcp.stack=rfc", "traffic.0.tcp.limited_transmit=true"],
    "ns2": ["traffic.0.tcp.stack=ns2", "traffic.0.tcp.limited_transmit=false"],
    "ns2_lt": ["traffic.0.tcp.stack=ns2", "traffic.0.tcp.limited_transmit=true"],
}
#: ns-2.35's TCP settings (``ns2/tcp_cac.tcl``).
NS2_TCP = ("ns2defaults", "matched", "matched_lt")
#: The pairs that run the same rules: (qoslab, ns-2.35).
PAIRS = (("ns2", "matched"), ("ns2_lt", "matched_lt"))
LABELS = {
    "ns2defaults": "ns-2.35 defaults",
    "matched": "ns-2.35 matched",
    "matched_lt": "ns-2.35 matched + LT",
    "rfc": "qoslab rfc",
    "rfc_lt": "qoslab rfc + LT",
    "ns2": "qoslab ns2",
    "ns2_lt": "qoslab ns2 + LT",
}


@dataclass(frozen=True)
class Conn:
    """One connection after the warm-up: packets that left and were dropped at the
    bottleneck (qoslab: delivered and dropped, of those sent), RTO expiries over the run."""

    delivered_pkts: float
    dropped_pkts: float
    offered_pkts: float
    timeouts: float


def cell_key(shaper_bps: int, rtt_ms: int) -> str:
    return f"{'unshaped' if shaper_bps == 0 else f'{shaper_bps / 1e6:g}Mbps'}/{rtt_ms}"


def access_delays_ns(n: int = N) -> list[int]:
    """The tie-free variant's access-link delays, ns, of connections 1..n (ns-2 fids and
    qoslab sources 0..n-1): ``2 p i + (i^2 mod p)``, p = ``ACCESS_P`` (Erdős and Turán's
    Sidon set). Distinct modulo 6 µs, so twice the difference of two is never a multiple of
    the 12 µs that every time clocking an arrival at the bottleneck is made of, and no two
    pairs have the same difference (docs/decisions.md)."""
    if not 0 < n < ACCESS_P:
        raise ValueError(f"access_delays_ns: n ({n}) must be 1 to {ACCESS_P - 1}")
    p = ACCESS_P
    return [2 * p * i + (i * i % p) for i in range(1, n + 1)]


def tie_free_topology(dumbbell: dict[str, Any], delays_ns: list[int]) -> dict[str, Any]:
    """A one-router dumbbell (a scenario echo's ``topology``) as an explicit topology with the
    same nodes and links in the preset's order (so the same addresses and RNG streams), each
    access link ``src{i} -> r0`` with one-way delay ``delays_ns[i]``."""
    n = dumbbell["sources"]
    if dumbbell["preset"] != "dumbbell" or dumbbell["routers"] != 1 or dumbbell["sinks"] != 1 or len(delays_ns) != n:
        raise ValueError("tie_free_topology: needs a one-router, one-sink dumbbell and a delay per source")
    nodes = [{"name": f"src{i}", "kind": "host"} for i in range(n)]
    nodes += [{"name": "r0", "kind": "router"}, {"name": "sink0", "kind": "host"}]
    links = [{"a": f"src{i}", "b": "r0", **dumbbell["access"], "delay": f"{d}ns"} for i, d in enumerate(delays_ns)]
    links.append({"a": "r0", "b": "sink0", **dumbbell["bottleneck"]})
    return {"preset": "explicit", "nodes": nodes, "links": links, "default_queue": dumbbell["default_queue"]}


def toml_inline(v: Any) -> str:
    """``v`` (tables, lists, strings, numbers, booleans) as one inline TOML value, for an override."""
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {toml_inline(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(toml_inline(x) for x in v) + "]"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, int | float):
        return repr(v)
    raise TypeError(f"toml_inline: {type(v).__name__} {v!r}")


def run_ns2(
    tcp: str,
    shaper_bps: int,
    rtt_ms: int,
    seed: int,
    work: Path,
    start_jitter_s: float = 1.0,
    tie_free: bool = False,
    starts_ns: list[int] | None = None,
) -> list[Conn]:
    """ns-2.35's run of one cell and seed; ``starts_ns``: each connection's start time, ns,
    instead of ns-2's own draws (``--common-starts``)."""
    out = work / f"ns2_{tcp}_{shaper_bps}_{rtt_ms}_{seed}.txt"
    cmd = [
        "ns",
        str(HERE / "ns2" / "tcp_cac.tcl"),
        tcp,
        str(shaper_bps),
        str(rtt_ms),
        str(DURATION_S),
        str(WARMUP_S),
        str(seed),
        str(out),
        f"{start_jitter_s:g}",
        ",".join(str(d) for d in access_delays_ns()) if tie_free else "",
        ",".join(str(t) for t in starts_ns) if starts_ns is not None else "",
    ]
    done = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"crosscheck: ns-2 failed ({' '.join(cmd)}): {done.stderr.strip()}", file=sys.stderr)
        raise SystemExit(2)
    with out.open() as f:
        conns = parse_ns2_counts(f)
    out.unlink()
    return conns


def parse_ns2_counts(lines: Any) -> list[Conn]:
    """``tcp_cac.tcl``'s output: one ``fid departures drops arrivals timeouts`` line per
    connection, fids 0..N-1 in order; a malformed line raises ``ValueError`` naming it."""
    conns = []
    for n, line in enumerate(lines, 1):
        f = line.split()
        if not f:
            continue
        try:
            if len(f) != 5 or int(f[0]) != len(conns):
                raise ValueError
            dep, drop, arr, tos = (float(x) for x in f[1:])
        except ValueError:
            got = line.strip()
            raise ValueError(
                f"tcp_cac.tcl output line {n}: expected 'fid departures drops arrivals timeouts' "
                f"with fid {len(conns)}, got {got!r}"
            ) from None
        conns.append(Conn(dep, drop, arr, tos))
    return conns


def qoslab_scenario(shaper_bps: int, rtt_ms: int, tcp: str, start_jitter_s: float = 1.0, tie_free: bool = False) -> Any:
    """Table 1's scenario for one cell and TCP; ``tie_free``: with ``access_delays_ns``."""
    import qoslab

    name = "table1_unshaped.toml" if shaper_bps == 0 else "table1_shaped.toml"
    ov = [
        f"duration={DURATION_S}s",
        f"topology.bottleneck.delay={rtt_ms / 2:g}ms",
        f"metrics.bin={WARMUP_S}s",
        f"traffic.0.start_jitter={start_jitter_s:g}s",
        *QOSLAB_TCP[tcp],
    ]
    if shaper_bps:
        ov.append(f"traffic.0.shaper.rate={shaper_bps}bps")
    sc = qoslab.load(ROOT / "scenarios" / "tcp_cac" / name, overrides=ov)
    if not tie_free:
        return sc
    topo = tie_free_topology(sc.echo["topology"], access_delays_ns())
    return sc.with_overrides("topology=" + toml_inline(topo))


def run_qoslab(
    tcp: str, shaper_bps: int, rtt_ms: int, seed: int, start_jitter_s: float = 1.0, tie_free: bool = False
) -> list[Conn]:
    import qoslab

    res: Any = qoslab.run(qoslab_scenario(shaper_bps, rtt_ms, tcp, start_jitter_s, tie_free), seed=seed)
    return qoslab_conns(res)


def qoslab_starts_ns(
    shaper_bps: int, rtt_ms: int, seed: int, start_jitter_s: float = 1.0, tie_free: bool = False
) -> list[int]:
    """The start times, ns, that qoslab draws for connections 0..N-1 of a cell and seed (for
    ``--common-starts``): they come from each flow's own stream, so the TCP settings and the
    run's length do not move them (``test_common_starts_are_qoslab_s_draws``)."""
    import qoslab

    sc = qoslab_scenario(shaper_bps, rtt_ms, "ns2", start_jitter_s, tie_free)
    res: Any = qoslab.run(sc.with_overrides(f"duration={start_jitter_s + 0.001:g}s"), seed=seed)
    fl = res.flows.sort_values("flow_id")
    return [round(t * 1e9) for t in fl["start_s"]]


def qoslab_conns(res: Any) -> list[Conn]:
    """Each connection's data packets delivered, dropped and sent in the bins after the
    warm-up (every drop is the bottleneck's: the access links never fill); a connection
    with no row there sent nothing after the warm-up."""
    s = res.series
    f = s[(s["entity_kind"] == "flow") & (s["t_s"] >= WARMUP_S - 1e-9)]
    piv = f.pivot_table(index="entity_id", columns="metric", values="value", aggfunc="sum")
    fl = res.flows.sort_values("flow_id")

    def count(name: str, metric: str) -> float:
        return float(piv.at[name, metric]) if name in piv.index and metric in piv.columns else 0.0

    return [
        Conn(count(n, "delivered_pkts"), count(n, "dropped_pkts"), count(n, "sent_pkts"), float(t))
        for n, t in zip(fl["name"], fl["timeouts"], strict=True)
    ]


def figures(conns: list[Conn], seeds: int) -> dict[str, float]:
    """A cell's figures over the connections of every seed."""
    span = DURATION_S - WARMUP_S
    thr = [c.delivered_pkts * SEGMENT_B * 8 / span for c in conns]
    offered = sum(c.offered_pkts for c in conns)
    ratios = [c.dropped_pkts / c.offered_pkts if c.offered_pkts else 0.0 for c in conns]
    return {
        "stopped_share": sum(x < STOPPED_SHARE * C_BPS / N for x in thr) / len(thr),
        "thr_mbps": statistics.fmean(thr) / 1e6,
        "jain": metrics.jain(thr),
        "agg_loss": sum(c.dropped_pkts for c in conns) / offered if offered else 0.0,
        "loss_ratio_mean": statistics.fmean(ratios),
        "timeouts": statistics.fmean(c.timeouts for c in conns),
        "utilization": sum(thr) / (C_BPS * seeds),
    }


def seed_spread(per_seed: list[dict[str, float]]) -> dict[str, float]:
    """Each figure's standard deviation over the seeds' own figures (0 with one seed)."""
    return {k: statistics.stdev(f[k] for f in per_seed) if len(per_seed) > 1 else 0.0 for k in per_seed[0]}


FIGURES = (
    ("stopped_share", "stopped (< 0.1 C/n)"),
    ("thr_mbps", "throughput per connection, mean (Mb/s)"),
    ("jain", "Jain's index of the connections' throughput"),
    ("agg_loss", "aggregate loss (dropped / offered)"),
    ("loss_ratio_mean", "loss ratio per connection, mean"),
    ("timeouts", "RTO expiries per connection"),
    ("utilization", "bottleneck utilization"),
)


#: How a table names its set-up (by ``--tie-free``).
SETUP = {False: "Table 1's set-up", True: "tie-free access delays (not Table 1's)"}


def fmt(key: str, v: float) -> str:
    if key in ("stopped_share", "agg_loss", "utilization"):
        return f"{100 * v:.1f} %" if key != "agg_loss" else f"{100 * v:.2f} %"
    if key in ("thr_mbps", "jain", "loss_ratio_mean"):
        return f"{v:.3f}"
    return f"{v:.1f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5, help="seeds 1..N per cell and simulator (default 5)")
    every = [cell_key(s, r) for s in SHAPERS for r in RTTS_MS]
    ap.add_argument("--cells", default=",".join(every), help="comma-separated: " + ", ".join(every))
    ap.add_argument("--variants", default=",".join(LABELS), help="comma-separated: " + ", ".join(LABELS))
    ap.add_argument("--start-jitter", type=float, default=1.0, help="starts uniform in [0, S] s (default 1, Table 1's)")
    ap.add_argument("--markdown", action="store_true", help="print Markdown tables (for docs/validation.md)")
    ap.add_argument("--spread", action="store_true", help="print each figure's standard deviation over the seeds")
    ap.add_argument(
        "--tie-free",
        action="store_true",
        help="the judged variant, not Table 1's: connection i's access link delayed by 2*101*i + (i^2 mod 101) ns",
    )
    ap.add_argument(
        "--common-starts",
        action="store_true",
        help="a diagnostic: ns-2 starts each connection when qoslab does (qoslab's draws), "
        "so the two columns compare the same runs, not two samples of start times",
    )
    ap.add_argument(
        "--report-only", action="store_true", help="print the verdicts; exit 0 unless a run fails (Table 1's own)"
    )
    a = ap.parse_args(argv)
    if a.seeds < 1:
        ap.error("--seeds must be at least 1")
    if not 0 <= a.start_jitter <= 10:
        ap.error("--start-jitter must be 0 to 10 seconds")
    names = [c for c in a.cells.split(",") if c]
    unknown = [c for c in names if c not in every]
    if unknown:
        ap.error(f"--cells: unknown {', '.join(unknown)}; allowed: {', '.join(every)}")
    variants = [v for v in a.variants.split(",") if v]
    bad = [v for v in variants if v not in LABELS]
    if bad or not variants:
        ap.error(f"--variants: unknown {', '.join(bad) or '(none given)'}; allowed: {', '.join(LABELS)}")
    if any(v in NS2_TCP for v in variants) and metrics.ns_missing():
        return 2
    seeds = range(1, a.seeds + 1)
    ok = True
    with tempfile.TemporaryDirectory(prefix="qoslab-tcpcac-") as tmp:
        work = Path(tmp)
        for key in names:
            shaper_bps, rtt_ms = next((s, r) for s in SHAPERS for r in RTTS_MS if cell_key(s, r) == key)
            got: dict[str, dict[str, float]] = {}
            sd: dict[str, dict[str, float]] = {}
            for tcp in variants:
                if tcp in NS2_TCP:
                    per_seed = [
                        run_ns2(
                            tcp,
                            shaper_bps,
                            rtt_ms,
                            s,
                            work,
                            a.start_jitter,
                            a.tie_free,
                            qoslab_starts_ns(shaper_bps, rtt_ms, s, a.start_jitter, a.tie_free)
                            if a.common_starts
                            else None,
                        )
                        for s in seeds
                    ]
                else:
                    per_seed = [run_qoslab(tcp, shaper_bps, rtt_ms, s, a.start_jitter, a.tie_free) for s in seeds]
                got[tcp] = figures([c for conns in per_seed for c in conns], len(seeds))
                sd[tcp] = seed_spread([figures(conns, 1) for conns in per_seed])
            rows = []
            for fig, label in FIGURES:
                spread = {v: f" (sd {fmt(fig, sd[v][fig])})" if a.spread else "" for v in variants}
                cells = [fmt(fig, got[v][fig]) + spread[v] for v in variants]
                rows.append((label, *cells))
            verdicts = []
            for ours, ref in (p for p in PAIRS if p[0] in got and p[1] in got):
                bad = [
                    fig
                    for fig in metrics.SEED002_TOLERANCE
                    if not metrics.within_seed002(fig, got[ref][fig], got[ours][fig])
                ]
                ok &= not bad
                verdict = "ok" if not bad else f"OUT ({', '.join(bad)})"
                verdicts.append(f"{LABELS[ours]} vs {LABELS[ref]}: {verdict}")
            shaping = "unshaped" if shaper_bps == 0 else f"shaped at {shaper_bps / 1e6:g} Mb/s"
            title = f"{shaping}, min RTT {rtt_ms} ms, seeds 1-{a.seeds} pooled ({len(seeds) * N} connections)"
            title = f"{SETUP[a.tie_free]}: {title}"
            if a.start_jitter != 1.0:
                title += f", starts over {a.start_jitter:g} s (diagnostic)"
            if a.common_starts:
                title += ", ns-2 started at qoslab's start times (diagnostic)"
            metrics.print_table(title, ("figure", *(LABELS[v] for v in variants)), rows, markdown=a.markdown)
            print(("\n" if a.markdown else "") + "; ".join(verdicts))
    tol = ", ".join(f"{k} ±{v:g}" for k, v in metrics.SEED002_TOLERANCE.items())
    judged = " (reported, not judged)" if a.report_only else ""
    print(
        f"\n{SETUP[a.tie_free]}: qoslab ns2 stack within tolerance of ns-2.35 matched ({tol}):",
        ("yes" if ok else "NO") + judged,
    )
    return 0 if ok or a.report_only else 1


if __name__ == "__main__":
    sys.exit(main())
