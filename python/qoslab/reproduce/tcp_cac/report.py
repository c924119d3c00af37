"""Report sections of the TCP runs of the ``tcp-cac`` reproduction (Markdown)."""

from __future__ import annotations

from typing import Any

from ...stats import Estimate
from ..fidelity import md_table
from ..framework import pct
from .runs import START_PATTERNS, STOPPED_SHARE, T4_CI_TARGET, T4_MAX_SEEDS, TABLE1_START


def _across(xs: list[float]) -> str:
    return Estimate.of(xs).fmt(".3g")


def tcp_setup(rl: dict[str, tuple[int, int]], quick: bool) -> str:
    d1, w1 = rl["table1"]
    dn, wn = rl["nmax"]
    d4, w4 = rl["table4"]
    t4 = (
        f"Table 4 (`tcp_cac/table4.toml`): {d4} s per scheme, requests after {w4} s counted; files of 10 Mbit on "
        f"the wire (1,216,640 B of payload: 833 segments of 1500 B and one of 500 B); seeds: the run's, then 5 "
        f"more at a time until scheme #1's blocking interval is under ±{100 * T4_CI_TARGET:.1f} points, at most "
        f"{T4_MAX_SEEDS}; schemes #2 and #3 over the same seeds"
        + (" (full runs only: a quick run sees too few blockings)." if quick else ".")
    )
    return "\n".join(
        [
            "Greedy Reno (`ftp`), 1460 B payload + 40 B header = 1500 B segments, receiver window 44, one-packet "
            "shaper buckets, 100 Mb/s bottleneck, 1 Gb/s access links.",
            f"- Table 1 (`tcp_cac/table1_{{shaped,unshaped}}.toml`, 20-packet buffer): {d1} s per run, warm-up {w1} s "
            f"(measures are per-connection counter bins from the warm-up on); each connection starts uniformly in "
            f"[0, {TABLE1_START}] (`start_jitter`), qoslab's timers (`tcp.preset = \"qoslab\"`). RTT is the sender's "
            "SRTT sampled every second, shaper wait included.",
            "- Start patterns: Table 1's unshaped case with every connection starting at t = 0, spread over 10 ms "
            "and spread over 1 s, each with qoslab's timers and with ns-2 of 2005's (`tcp.preset = \"ns2\"`).",
            f"- Tables 2-3 (`tcp_cac/nmax.toml`, min RTT 30 ms): {dn} s per run, warm-up {wn} s.",
            f"- {t4}",
            "- Throughput counts wire bits of data packets delivered (what the shaper meters); loss is data packets "
            "dropped / sent after the warm-up; a connection is stopped when it averages under "
            f"{STOPPED_SHARE:g} x its fair share (C/n).",
        ]
    )


def table1_md(t1: dict[str, Any]) -> str:
    rows = []
    for v in t1.values():
        r = "none" if v["rate_mbps"] is None else f"{v['rate_mbps']:g} Mb/s"
        rows.append(
            f"| {r} | {v['min_rtt_ms']} ms | {_across(v['srtt_s'])} | {_across(v['loss'])} | "
            f"{pct(v['agg_loss'], '.2f')} | {pct(v['stopped_share'], '.0f')} | "
            f"{Estimate.of(x / 1e6 for x in v['thr_bps']).fmt('.3f')} |"
        )
    lines = [
        md_table(
            "| shaping R | min RTT | avg RTT (s) | loss ratio (mean of per-connection ratios) | aggregate loss | "
            "stopped (< 0.1 C/n) | throughput per connection (Mb/s) |",
            rows,
        ),
        "",
        "Per-connection cells: mean ± 95% interval across connections (all seeds pooled). Aggregate loss: all data "
        "packets dropped / sent (a connection that sent 2-3 packets weighs by its packets, not as one ratio). "
        "Stopped: share of connections under 0.1 C/n over the measurement window.",
    ]
    return "\n".join(lines)


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
    lines = [
        md_table(f"| timers | start pattern | {head} |", rows),
        "",
        "Unshaped Table 1 case (100 greedy Reno connections, 20-packet buffer), connections of all seeds pooled. "
        "`qoslab` timers: min RTO 200 ms, initial RTO 3 s, G 100 ms, initial window 1; `ns2` (ns-2 of 2005): "
        "min RTO 200 ms, initial RTO 6 s, max RTO 100,000 s, G 10 ms, initial window 2.",
    ]
    return "\n".join(lines)


def table4_md(t4: dict[str, Any]) -> str:
    rows = []
    paper = {"1": "10 s, 1%, 74", "2": "0.319 s, no blocking", "3": "3.1 s, 0.6%, 31"}
    for s in ("1", "2", "3"):
        runs = t4[s]
        e = {
            k: Estimate.of(r[k] for r in runs) for k in ("mean_transfer_time_s", "blocking", "mean_running_at_blocking")
        }
        rows.append(
            f"| #{s} | {e['mean_transfer_time_s'].fmt('.2f')} | {e['blocking'].fmt('.2f', scale=100)} | "
            f"{e['mean_running_at_blocking'].fmt('.1f')} | {paper[s]} |"
        )
    head = "| scheme | mean transfer time (s) | blocking (%) | running at blocking | paper |"
    return md_table(head, rows) + f"\n\nMean ± 95% interval over {len(t4['seeds'])} seeds."
