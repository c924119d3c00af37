"""Report sections of the TCP runs of the ``tcp-cac`` reproduction (Markdown); the set-up in full is
in docs/reproductions/tcp_cac.md."""

from __future__ import annotations

from typing import Any

from ...stats import Estimate
from ..fidelity import md_table
from ..framework import pct
from .runs import START_PATTERNS, STOPPED_SHARE, T4_CI_TARGET, T4_MAX_SEEDS, TABLE1_START


def tcp_setup(rl: dict[str, tuple[int, int]], quick: bool) -> str:
    (d1, w1), (dn, wn), (d4, w4) = rl["table1"], rl["nmax"], rl["table4"]
    t4 = (
        "not run in quick runs (too few blockings)"
        if quick
        else f"{d4} s per scheme, requests after {w4} s counted, seeds added 5 at a time until scheme #1's "
        f"blocking interval is under ±{100 * T4_CI_TARGET:.1f} points (at most {T4_MAX_SEEDS})"
    )
    return (
        f"Greedy Reno, 1500 B segments, receiver window 44, 100 Mb/s bottleneck. Table 1 and the start patterns: "
        f"{d1} s per run, warm-up {w1} s, starts uniform in [0, {TABLE1_START}] for Table 1. Tables 2-3: {dn} s, "
        f"warm-up {wn} s. Table 4 with TCP: {t4}. Stopped: under {STOPPED_SHARE:g} x C/n."
    )


def table1_md(t1: dict[str, Any]) -> str:
    def across(xs: list[float]) -> str:
        return Estimate.of(xs).fmt(".3g")

    rows = []
    for v in t1.values():
        r = "none" if v["rate_mbps"] is None else f"{v['rate_mbps']:g} Mb/s"
        rows.append(
            f"| {r} | {v['min_rtt_ms']} ms | {across(v['srtt_s'])} | {across(v['loss'])} | "
            f"{pct(v['agg_loss'], '.2f')} | {pct(v['stopped_share'], '.0f')} | "
            f"{Estimate.of(x / 1e6 for x in v['thr_bps']).fmt('.3f')} |"
        )
    head = (
        "| shaping R | min RTT | avg RTT (s) | loss ratio (mean of per-connection ratios) | aggregate loss | "
        "stopped (< 0.1 C/n) | throughput per connection (Mb/s) |"
    )
    return (
        md_table(head, rows)
        + "\n\nMean ± 95% interval across connections (all seeds pooled); aggregate: all dropped / sent."
    )


def start_patterns_md(sp: dict[str, Any]) -> str:
    rtts = sorted({v["min_rtt_ms"] for v in sp.values()})
    head = " | ".join(f"stopped at {r} ms | agg. loss at {r} ms" for r in rtts)
    rows = []
    for preset in ("qoslab", "ns2"):
        for pkey, _j, desc in START_PATTERNS:
            cells = []
            for r in rtts:
                v = sp.get(f"{preset}/{pkey}/rtt{r}ms")
                cells += [pct(v["stopped_share"], ".0f"), pct(v["agg_loss"], ".2f")] if v else ["n/a", "n/a"]
            rows.append(f"| {preset} | {desc} | {' | '.join(cells)} |")
    return md_table(f"| timers | start pattern | {head} |", rows) + "\n\nTable 1's unshaped case, all seeds pooled."
