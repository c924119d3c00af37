"""The ``dcbt`` reproduction: RED, CBT, D-CBT and D-CBT+ChIPS ([Claypool00], Claypool & Chung 2000).

The paper's scenario [Claypool00 §5] under each queue of ``VARIANTS``, reduced to the paper's cells
(:func:`paper_cells`) and two claims (RED unfair; D-CBT and ChIPS fair [Claypool00 §6.1-§6.3]).
Set-up, measures, claims and tolerances (fixed before any run): docs/reproductions/dcbt.md.
"""

from __future__ import annotations

import math
from functools import reduce
from typing import Any

import numpy as np

from ..errors import ReproductionError
from ..result import Result
from ..scenario import Scenario
from ..stats import Estimate
from ..tables import jain as jain_index
from . import figures
from .cells import Measured, NotMeasured
from .fidelity import md_table
from .framework import Claim, Context, Figure, Outcome

NAME = "dcbt"
TITLE = "D-CBT and ChIPS: class fairness, Jain's index and tagged jitter under RED, CBT, D-CBT, D-CBT+ChIPS"
#: Seeds of a full run (runs take about a second each; the issue asks for several).
FULL_SEEDS = 5
SEED_FILE = "Claypool00"
PAPER = "Claypool & Chung 2000, Dynamic-CBT and ChIPS [Claypool00]"

SCENARIO = "dcbt/paper.toml"
BOTTLENECK = "r0->r1"
_Q = f"topology.links[{BOTTLENECK}].queue"
#: Variant -> overrides of the base scenario (its bottleneck queue only).
VARIANTS: dict[str, list[str]] = {
    "red": [],
    "cbt": [f"{_Q}.type=cbt"],
    "dcbt": [f"{_Q}.type=dcbt"],
    "dcbt_chips": [f"{_Q}.type=dcbt", f"{_Q}.chips=true"],
}
LABELS = {"red": "RED", "cbt": "CBT", "dcbt": "D-CBT", "dcbt_chips": "D-CBT+ChIPS"}
PERIODS = [(0.0, 10.0), (10.0, 20.0), (20.0, 30.0)]
PERIOD_NAMES = ["0-10s", "10-20s", "20-30s"]
CLASSES = {0: "tcp", 1: "tagged", 2: "untagged"}
TRACED = "mm.0"

#: §5's fair share, 25 Mb/s over the period's active flows (set-up arithmetic, shown beside qoslab's).
FAIR_SHARE_KBPS = {"0-10s": 714, "10-20s": 675, "20-30s": 373}

RED_JAIN_MAX = 0.8
FAIR_TOL = 0.25
JAIN_MIN = 0.9
#: The tagged delays the report shows (key of ``tagged_delay``, label).
DELAY_ROWS = [
    ("min_s", "min delay (ms)"),
    ("max_s", "max delay (ms)"),
    ("max_variation_s", "largest delay range of a flow (ms)"),
    ("mean_s", "mean delay (ms)"),
]


def measure(res: Result) -> dict[str, Any]:
    """Everything the claims and figures need from one run."""
    flows, s = res.flows, res.series
    fb = s[(s["entity_kind"] == "flow") & (s["metric"] == "delivered_bytes")]
    bins: dict[str, dict[int, float]] = {}
    for name, t, v in zip(fb["entity_id"], fb["t_s"], fb["value"], strict=True):
        bins.setdefault(str(name), {})[round(float(t) / 10.0)] = float(v)
    per_period: list[dict[str, Any]] = []
    for k, (a, b) in enumerate(PERIODS):
        rates: dict[str, float] = {}
        klass: dict[str, int] = {}
        for name, cls, start, end in zip(flows["name"], flows["class"], flows["start_s"], flows["end_s"], strict=True):
            end = float(end) if math.isfinite(float(end)) else math.inf
            if float(start) < b and end > a:
                rates[str(name)] = bins.get(str(name), {}).get(k, 0.0) * 8.0 / (b - a)
                klass[str(name)] = int(cls)
        fair = float(np.mean(list(rates.values()))) if rates else math.nan
        by_class: dict[str, Any] = {}
        for c, cname in CLASSES.items():
            v = [r for n, r in rates.items() if klass[n] == c]
            by_class[cname] = {
                "flows": len(v),
                "per_flow_bps": float(np.mean(v)) if v else None,
                "ratio_to_fair": float(np.mean(v)) / fair if v and fair > 0 else None,
            }
        per_period.append(
            {
                "period": PERIOD_NAMES[k],
                "active_flows": len(rates),
                "fair_share_bps": fair,
                "jain": jain_index(list(rates.values())),
                "classes": by_class,
                "per_flow_bps": rates,
            }
        )

    def accounting(cls: int) -> dict[str, float]:
        f = flows[flows["class"] == cls]
        n = {c: float(f[c].sum()) for c in ("sent_pkts", "delivered_pkts", "dropped_pkts")}
        rate = n["dropped_pkts"] / n["sent_pkts"] if n["sent_pkts"] else math.nan
        return n | {"drop_rate": rate, "throughput_bps": float(f["delivered_bytes"].sum()) * 8.0 / PERIODS[-1][1]}

    tagged = flows[flows["class"] == 1]
    tr = s[(s["entity_kind"] == "flow") & (s["metric"] == "delay_s")]
    per_tagged = tr[tr["entity_id"].isin(list(tagged["name"]))].groupby("entity_id")["value"]
    trace = tr[tr["entity_id"] == TRACED].sort_values("t_s", kind="stable")
    delay = {
        "mean_s": float(np.average(tagged["delay_mean_s"], weights=tagged["delivered_pkts"]))
        if tagged["delivered_pkts"].sum() > 0
        else math.nan,
        "max_s": float(tagged["delay_max_s"].max()),
        "min_s": float(per_tagged.min().min()),
        "max_variation_s": float((per_tagged.max() - per_tagged.min()).max()),
    }
    # Each class's wait in the bottleneck queue, 10-20 s (docs/reproductions/dcbt.md, "Class waits").
    traced = tr.merge(flows[["name", "class"]], left_on="entity_id", right_on="name")
    base = float(traced["value"].min()) if len(traced) else math.nan
    mid = traced[(traced["t_s"] >= PERIODS[1][0]) & (traced["t_s"] < PERIODS[1][1])]
    waits: dict[str, Any] = {}
    total_wait = float((mid["value"] - base).sum())
    for c, cname in CLASSES.items():
        x = mid.loc[mid["class"] == c, "value"] - base
        waits[cname] = {
            "wait_s": float(x.mean()) if len(x) else math.nan,
            "packet_share": len(x) / len(mid) if len(mid) else math.nan,
            "queue_share": float(x.sum()) / total_wait if total_wait > 0 else math.nan,
        }
    return {
        "periods": per_period,
        "probes": _probe_means(s),
        "tcp": accounting(0),
        "tagged": accounting(1),
        "tagged_delay": delay,
        "class_wait": waits,
        "trace": {"t_s": [float(x) for x in trace["t_s"]], "delay_s": [float(x) for x in trace["value"]]},
    }


#: The bottleneck's probes whose time averages the paper states (Figs. 8(d), 10), and their windows.
PROBES = ("red_avg", "tagged_avg", "untagged_avg", "tagged_share")
PROBE_WINDOWS = {"0-10s": (0.0, 10.0), "10-20s": (10.0, 20.0), "20-30s": (20.0, 30.0), "0-20s": (0.0, 20.0)}


def _probe_means(s: Any) -> dict[str, dict[str, float]]:
    """Each probe's mean of its samples with ``a <= t < b`` per window (none without a sample)."""
    q = s[(s["entity_kind"] == "queue") & (s["entity_id"] == BOTTLENECK) & (s["metric"].isin(PROBES))]
    out: dict[str, dict[str, float]] = {}
    for metric, rows in q.groupby("metric", sort=True):
        t, v = rows["t_s"].to_numpy(dtype=float), rows["value"].to_numpy(dtype=float)
        out[str(metric)] = {
            w: float(v[(t >= a) & (t < b)].mean()) for w, (a, b) in PROBE_WINDOWS.items() if ((t >= a) & (t < b)).any()
        }
    return out


def _trace_delays_ms(m: dict[str, Any]) -> tuple[float, float]:
    """The traced MM_APP flow's (smallest, largest) end-to-end packet delay over the run, in ms."""
    d = m["trace"]["delay_s"]
    if not d:
        raise ReproductionError(f"dcbt: the traced flow {TRACED} delivered no packet; Fig. 12 has no delays")
    return 1e3 * min(d), 1e3 * max(d)


def _others_per_flow_bps(period: dict[str, Any]) -> float:
    """The average per-flow throughput of a period's active TCP and untagged flows together."""
    parts = [period["classes"][c] for c in ("tcp", "untagged")]
    n = sum(p["flows"] for p in parts)
    return sum(p["per_flow_bps"] * p["flows"] for p in parts if p["flows"]) / n if n else math.nan


def paper_cells(runs: dict[str, list[dict[str, Any]]]) -> list[Measured | NotMeasured]:
    """Every cell of ``paperdata/dcbt/cells.csv``, one value per seed, in the paper's unit and as it
    defines it (docs/decisions/reproduce-dcbt.md, "dcbt: the paper's numbers as cells")."""
    out: list[Measured | NotMeasured] = []

    def cell(table: str, row: str, column: str, values: Any) -> None:
        out.append(Measured(table=table, row=row, column=column, values=[float(v) for v in values]))

    def per_flow(v: str, k: int, cls: str) -> list[float]:
        return [_num(m["periods"][k]["classes"][cls]["per_flow_bps"]) for m in runs[v]]

    def probe(v: str, metric: str, window: str) -> list[float]:
        got = [m["probes"].get(metric, {}).get(window) for m in runs[v]]
        if any(x is None for x in got):
            raise ReproductionError(f"dcbt: the {v} bottleneck has no {metric} samples in {window}")
        return [float(x) for x in got]

    for v, row in (("dcbt", "D-CBT"), ("dcbt_chips", "D-CBT w/ ChIPS")):  # the paper's rows (Tables 1-2, Fig. 12)
        cell("Table 1", row, "TCP Packets Delivered", (m["tcp"]["delivered_pkts"] for m in runs[v]))
        cell("Table 1", row, "TCP Packet Drop Rate", (100 * m["tcp"]["drop_rate"] for m in runs[v]))
        cell("Table 1", row, "TCP Throughput", (m["tcp"]["throughput_bps"] / 1e3 for m in runs[v]))
        cell("Table 2", row, "Tagged Packets Delivered", (m["tagged"]["delivered_pkts"] for m in runs[v]))
        cell("Table 2", row, "Tagged Packet Drop Rate", (100 * m["tagged"]["drop_rate"] for m in runs[v]))
        delays = [_trace_delays_ms(m) for m in runs[v]]
        cell("Fig. 12", row, "maximum tagged jitter", (hi - lo for lo, hi in delays))
        cell("Fig. 12", row, "maximum end-to-end delay", (hi for _, hi in delays))
        cell("Fig. 12", row, "minimum end-to-end delay", (lo for lo, _ in delays))

    above = [100 * (a / b - 1) for a, b in zip(per_flow("red", 0, "tagged"), per_flow("red", 0, "tcp"), strict=True)]
    cell("Fig. 8", "RED, 0-10 s", "tagged per-flow throughput above TCP's", above)
    cell("Fig. 8", "RED, 10-20 s", "untagged per-flow throughput", (x / 1e6 for x in per_flow("red", 1, "untagged")))
    cell("Fig. 8", "RED, 10-20 s", "TCP per-flow throughput", (x / 1e3 for x in per_flow("red", 1, "tcp")))
    cell("Fig. 8", "CBT, 20-30 s", "tagged per-flow throughput", (x / 1e3 for x in per_flow("cbt", 2, "tagged")))
    cell("Fig. 8", "CBT, 20-30 s", "untagged per-flow throughput", (x / 1e3 for x in per_flow("cbt", 2, "untagged")))
    for window, label in (("0-20s", "0-20 s"), ("20-30s", "20-30 s")):
        share = probe("dcbt_chips", "tagged_share", window)
        cell("Fig. 8", f"D-CBT w/ ChIPS, {label}", "tagged flows / all flows", (100 * x for x in share))
    cell("Fig. 10", "CBT, 20-30 s", "tagged UDP average", probe("cbt", "tagged_avg", "20-30s"))
    cell("Fig. 10", "CBT, 20-30 s", "untagged UDP average", probe("cbt", "untagged_avg", "20-30s"))
    others = [_others_per_flow_bps(m["periods"][2]) for m in runs["cbt"]]
    ratio = [a / b for a, b in zip(per_flow("cbt", 2, "tagged"), others, strict=True)]
    cell("Fig. 11", "CBT, 20-30 s", "tagged per-flow throughput / other flows' per-flow throughput", ratio)

    pair = list(zip(runs["dcbt"], runs["dcbt_chips"], strict=True))
    ratio = [100 * c["tcp"]["throughput_bps"] / d["tcp"]["throughput_bps"] for d, c in pair]
    row = "D-CBT w/ ChIPS against D-CBT"
    cell("§6.3", row, "TCP throughput ratio", ratio)
    cell("§6.3", row, "TCP throughput loss", (100 - r for r in ratio))
    highs = [(_trace_delays_ms(d)[1], _trace_delays_ms(c)[1]) for d, c in pair]
    cell("§6.3", row, "multimedia jitter gain", (100 * (d - c) / d for d, c in highs))
    return out


def reproduce(ctx: Context) -> Outcome:
    base = ctx.scenario_path(SCENARIO)
    points = [(variant, variant, Scenario.load(base, overrides=overrides)) for variant, overrides in VARIANTS.items()]
    runs = ctx.run_grid(points, lambda _, res: measure(res))
    claims = [_claim_red(runs["red"]), _claim_fair("dcbt", runs["dcbt"]), _claim_fair("dcbt_chips", runs["dcbt_chips"])]
    summary = {v: _summary(runs[v]) for v in VARIANTS}
    data = {
        "variants": VARIANTS,
        "summary": summary,
        "runs": {v: [{k: x for k, x in m.items() if k != "trace"} for m in ms] for v, ms in runs.items()},
        "fig12_trace": {v: runs[v][0]["trace"] for v in ("dcbt", "dcbt_chips")},
    }
    figs = _figures(ctx, summary, runs)
    return Outcome(claims=claims, data=data, sections=_sections(summary), figures=figs, cells=paper_cells(runs))


def _num(x: Any) -> float:
    return float(x) if x is not None else math.nan


def _est(ms: list[dict[Any, Any]], *path: str | int) -> Estimate:
    """The estimate over seeds of the measure at ``path`` in each run's :func:`measure` (None is NaN)."""
    return Estimate.of(_num(reduce(lambda d, k: d[k], path, m)) for m in ms)


def _claim_red(ms: list[dict[str, Any]]) -> Claim:
    j = [_est(ms, "periods", k, "jain") for k in range(len(PERIODS))]
    return Claim.judged(
        j[2].mean < RED_JAIN_MAX,
        "the flows under RED were fairer than the paper's (Jain >= 0.8 in 20-30 s)",
        id="red-unfair",
        text="RED, 20-30 s: Jain's index < 0.8 (the text gives no number: \"the low Jain's index value for the "
        'RED system", flows in "even more severe starvation during 20-30 seconds")',
        paper="RED fails to share fairly from 10 s on (Fig. 11); its per-class numbers are cells of Fig. 8",
        measured="Jain " + ", ".join(f"{p} {x.fmt('.3f')}" for p, x in zip(PERIOD_NAMES, j, strict=True)),
        tolerance=f"Jain in 20-30 s < {RED_JAIN_MAX:g}",
    )


def _claim_fair(variant: str, ms: list[dict[str, Any]]) -> Claim:
    ratios = [
        (cls, p, r)
        for k, p in enumerate(PERIOD_NAMES)
        for cls in CLASSES.values()
        if (r := _est(ms, "periods", k, "classes", cls, "ratio_to_fair")).finite
    ]
    worst = sorted(((abs(r.mean - 1.0), f"{cls} {p} {r.fmt('.2f')}") for cls, p, r in ratios), reverse=True)
    out_of_band = [f"{cls} {p} ({r.mean:.2f}x)" for cls, p, r in ratios if abs(r.mean - 1.0) > FAIR_TOL]
    jain = [(p, _est(ms, "periods", k, "jain")) for k, p in enumerate(PERIOD_NAMES)]
    low_jain = [f"{p} ({j.mean:.3f})" for p, j in jain if not j.mean >= JAIN_MIN]
    parts = ", ".join(f"{p} {j.fmt('.3f')}" for p, j in jain)
    why = [f"outside ±25% of the fair share: {', '.join(out_of_band)}"] if out_of_band else []
    why += [f"Jain below 0.9 in {', '.join(low_jain)}"] if low_jain else []
    if any(o.startswith("untagged") and "(0." not in o for o in out_of_band):
        w = {c: _est(ms, "class_wait", c, "wait_s") for c in CLASSES.values()}
        pk, qs = (_est(ms, "class_wait", "untagged", k) for k in ("packet_share", "queue_share"))
        occ = Estimate.of(
            m["probes"]["untagged_avg"]["10-20s"]
            / m["probes"]["red_avg"]["10-20s"]
            / (m["periods"][1]["classes"]["untagged"]["flows"] / m["periods"][1]["active_flows"])
            for m in ms
        )
        why.append(
            f"D-CBT holds the untagged class to {occ.fmt('.2f', unit='x')} its flow share of the queue in 10-20 s "
            f"(its class average over RED's, against N_untagged / N), but the CBR packets its class test admits "
            f"wait {w['untagged'].fmt('.2f', scale=1e3, unit=' ms')} in the bottleneck against "
            f"{w['tcp'].fmt('.2f', scale=1e3, unit=' ms')} (TCP) and "
            f"{w['tagged'].fmt('.2f', scale=1e3, unit=' ms')} (MM_APP): they get in while the queue is short, "
            f"so the CBR hold {qs.fmt('.1f', scale=100, unit=' %')} of the queue while taking "
            f"{pk.fmt('.1f', scale=100, unit=' %')} of the packets delivered; the one-knob runs "
            f"(crosscheck/dcbt_fairness.py) are in docs/reproductions/dcbt.md"
        )
    return Claim.judged(
        not out_of_band and not low_jain,
        "; ".join(why),
        id=f"{variant.replace('_', '-')}-fair",
        text=f"{LABELS[variant]}: every class's per-flow throughput within ±25% of the fair share in every "
        f"period; Jain >= 0.9 in every period",
        paper="fair in every period (Fig. 8 c/d, Fig. 11)",
        measured=f"per-flow / fair share, worst: {'; '.join(w for _, w in worst[:3])}; Jain {parts}",
        tolerance=f"|ratio - 1| <= {FAIR_TOL:g}; Jain >= {JAIN_MIN:g}",
    )


def _summary(ms: list[dict[str, Any]]) -> dict[str, Any]:
    def js(*path: str | int) -> dict[str, Any]:
        return _est(ms, *path).to_json()

    periods = [
        {
            "period": PERIOD_NAMES[k],
            "jain": js("periods", k, "jain"),
            "fair_share_bps": js("periods", k, "fair_share_bps"),
            "per_flow_bps": {c: js("periods", k, "classes", c, "per_flow_bps") for c in CLASSES.values()},
        }
        for k in range(len(PERIODS))
    ]
    parts = {p: {k: js(p, k) for k in ("delivered_pkts", "drop_rate", "throughput_bps")} for p in ("tcp", "tagged")}
    delay = {k: js("tagged_delay", k) for k in ("mean_s", "max_s", "min_s", "max_variation_s")}
    return {"periods": periods, **parts, "tagged_delay": delay}


def _m(j: dict[str, Any]) -> float:
    return _num(j["mean"])


def _sections(summary: dict[str, Any]) -> list[tuple[str, str]]:
    def kbps(e: dict[str, Any]) -> str:
        return f"{_m(e) / 1e3:.0f}" if math.isfinite(_m(e)) else "-"

    rows = [
        f"| {LABELS[v]} | {p['period']} | {' | '.join(kbps(p['per_flow_bps'][c]) for c in CLASSES.values())} | "
        f"{_m(p['fair_share_bps']) / 1e3:.0f} ({FAIR_SHARE_KBPS[p['period']]}) | {_m(p['jain']):.3f} |"
        for v, s in summary.items()
        for p in s["periods"]
    ]
    head = "| variant | period | TCP kb/s | tagged kb/s | untagged kb/s | fair share kb/s (paper) | Jain |"
    delays = []
    for key, label in DELAY_ROWS:
        ms = " | ".join(f"{_m(summary[v]['tagged_delay'][key]) * 1e3:.1f}" for v in ("dcbt", "dcbt_chips"))
        delays.append(f"| {label} | {ms} |")
    intro = (
        f"Over all 10 tagged flows (Fig. 12's cells take the one flow the figure plots, `{TRACED}`), means over seeds:"
    )
    return [
        (
            "Per-flow throughput per period (Fig. 8) and Jain's index (Fig. 11)",
            "Means over seeds; the set-up and the fair share: docs/reproductions/dcbt.md.\n\n" + md_table(head, rows),
        ),
        (
            "Tagged end-to-end delay of every tagged flow",
            md_table("| | D-CBT | D-CBT+ChIPS |", delays, intro)
            + f"\n\nThe paper bounds ChIPS's jitter by RED's max_th of queueing, \"15 pkts × 8 kbit / 25 Mb/s\", and "
            f"writes 3 ms; the product is {15 * 8000 / 25e6 * 1e3:.1f} ms (its own measured 5 ms agrees with 4.8 ms).",
        ),
    ]


def _figures(ctx: Context, summary: dict[str, Any], runs: dict[str, list[dict[str, Any]]]) -> list[Figure]:
    """Figs. 8, 11 and 12 from the summary over seeds (:func:`_summary`) and the first seed's trace."""
    fig, axes = figures.new_axes(11.0, 3.6, 1, 4, sharey=True)
    x = np.arange(len(PERIOD_NAMES))
    colors = {"tcp": "#4c72b0", "tagged": "#55a868", "untagged": "#c44e52"}
    for ax, (v, s) in zip(axes, summary.items(), strict=True):
        for i, c in enumerate(CLASSES.values()):
            means = [_m(p["per_flow_bps"][c]) / 1e3 for p in s["periods"]]
            errs = [_num(p["per_flow_bps"][c]["ci95"]) / 1e3 for p in s["periods"]]  # none with one seed
            means, errs = ([y if math.isfinite(y) else 0.0 for y in ys] for ys in (means, errs))
            ax.bar(x + (i - 1) * 0.27, means, width=0.27, yerr=errs, color=colors[c], label=c)
        ax.plot(x, [FAIR_SHARE_KBPS[p] for p in PERIOD_NAMES], "k_", markersize=24, label="paper fair share")
        ax.set_xticks(x, PERIOD_NAMES)
        ax.set_title(LABELS[v])
    axes[0].set_ylabel("per-flow throughput (kb/s)")
    axes[0].legend(fontsize=7)
    fig8 = ctx.figure(
        fig,
        "fig8_per_flow_throughput.png",
        "Fig. 8: average per-flow throughput of each class per period (mean over seeds, 95% CI), with "
        "the paper's fair share (25 Mb/s over the active flows).",
    )

    fig, ax = figures.new_axes(6.0, 3.6)
    for i, (v, s) in enumerate(summary.items()):
        ax.bar(x + (i - 1.5) * 0.2, [_m(p["jain"]) for p in s["periods"]], width=0.2, label=LABELS[v])
    ax.axhline(JAIN_MIN, color="k", lw=0.8, ls="--")
    ax.set_xticks(x, PERIOD_NAMES)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("Jain's fairness index")
    ax.legend(fontsize=7)
    fig11 = ctx.figure(
        fig,
        "fig11_jain.png",
        "Fig. 11: Jain's index over the active flows' per-period throughputs "
        "(mean over seeds); dashed: the 0.9 of the fairness claims.",
    )

    fig, ax = figures.new_axes(8.0, 3.6)
    for v, color in (("dcbt", "#c44e52"), ("dcbt_chips", "#4c72b0")):
        tr = runs[v][0]["trace"]
        ax.plot(tr["t_s"], [d * 1e3 for d in tr["delay_s"]], lw=0.6, color=color, label=LABELS[v])
    ax.set_xlabel("time (s)")
    ax.set_ylabel(f"{TRACED} end-to-end delay (ms)")
    ax.legend(fontsize=8)
    fig12 = ctx.figure(
        fig,
        "fig12_tagged_delay.png",
        f"Fig. 12: end-to-end delay of every packet of tagged flow {TRACED} "
        f"(seed {ctx.seeds[0]}) under D-CBT and D-CBT+ChIPS.",
    )
    return [fig8, fig11, fig12]
