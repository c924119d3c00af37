"""The ``examples`` reproduction: the RED reference dumbbell against drop-tail (FJ93 §4, with the RED
settings of [Claypool00]'s Fig. 7). No paper prints this set-up's numbers (``PAPER_DATA = None``): five
claims, tolerances fixed before any run. Set-up, claims and their history: docs/reproductions/examples.md.
"""

from __future__ import annotations

import math
from typing import Any

from ..api import load
from ..errors import ReproductionError
from ..result import Result
from ..stats import Estimate, cv
from . import figures
from .fidelity import md_table
from .framework import Claim, Context, Figure, Outcome, estimate

NAME = "examples"
TITLE = "RED reference dumbbell against drop-tail"
SEED_FILE = "Claypool00"
PAPER = "Floyd & Jacobson 1993 (RED), with the RED settings of Claypool & Chung, D-CBT/ChIPS, Fig. 7"
PAPER_DATA = None

VARIANTS = {"red": "examples/red_dumbbell.toml", "droptail": "examples/droptail_dumbbell.toml"}
QUICK_DURATION = "20s"
FULL_DURATION = "60s"
WARMUP_S = 5.0

LOSS_CV_MAX = 0.25
UTILIZATION_MIN = 0.98
REFERENCE_DROP_FRACTION = 112_500 / 300_000
REFERENCE_TOLERANCE = 0.03
DROP_KINDS = ("drops_early_random", "drops_forced", "drops_overlimit")


def _mean_after_warmup(res: Result, queue: str, metric: str) -> float:
    """The time average of a sampled queue metric (the mean of its samples) from ``WARMUP_S`` on."""
    s = res.metric(queue, metric, entity_kind="queue", allow_missing=True)
    v = s.loc[s["t_s"] >= WARMUP_S, "value"]
    return float(v.mean()) if len(v) else math.nan


def measure(res: Result) -> dict[str, Any]:
    """The figures behind every claim, for one run (of a dumbbell: the preset names its bottleneck)."""
    bq = res.bottleneck
    if bq is None:
        raise ReproductionError(f"{res.name}: no bottleneck queue (not a dumbbell)")
    row = res.queue(bq)
    n = {k: int(row[k]) for k in ("arrivals", "drops", *DROP_KINDS)}
    drops, arrivals = n["drops"], n["arrivals"]
    flows = res.flows
    sent = flows["sent_pkts"].astype("float64")
    loss = (flows["dropped_pkts"].astype("float64") / sent)[sent > 0]
    # Overflow drops after the warm-up: the cumulative series (only when there were any) minus its value at WARMUP_S.
    over = res.metric(bq, "drops_overlimit", entity_kind="queue", allow_missing=True)
    before = over[over["t_s"] <= WARMUP_S]["value"]
    over_after = n["drops_overlimit"] - (int(before.iloc[-1]) if len(before) else 0) if len(over) else 0
    return {
        "bottleneck": bq,
        **n,
        "drops_overlimit_after_warmup": over_after,
        "early_share": n["drops_early_random"] / drops if drops else math.nan,
        "overlimit_share": n["drops_overlimit"] / drops if drops else math.nan,
        "drop_fraction": drops / arrivals if arrivals else math.nan,
        "utilization": float(row["utilization"]),
        "red_avg_mean": _mean_after_warmup(res, bq, "red_avg"),
        "backlog_mean_pkts": _mean_after_warmup(res, bq, "backlog_pkts"),
        "loss_cv": cv(loss),
        "loss_min": float(loss.min()) if len(loss) else math.nan,
        "loss_max": float(loss.max()) if len(loss) else math.nan,
        "flow_loss": {str(n): float(x) for n, x in zip(flows["name"][sent > 0], loss, strict=False)},
    }


def _pct(e: Estimate) -> str:
    return e.fmt(".1f", scale=100, unit="%")


def early_share_bound(max_p: float, drop_fraction: float) -> float:
    """The largest share of drops that non-gentle RED can make early when a fraction ``drop_fraction``
    = D of the arrivals must go (unresponsive overload): 2 max_p (1 - D) / ((1 - 2 max_p) D) [FJ93 §7];
    the derivation is in docs/reproductions/examples.md."""
    e = 2.0 * max_p
    if not 0.0 < drop_fraction <= 1.0 or e >= 1.0 or drop_fraction <= e:
        return 1.0
    return e * (1.0 - drop_fraction) / ((1.0 - e) * drop_fraction)


def _claims(m: dict[str, list[dict[str, Any]]], red_q: dict[str, Any], quick: bool) -> list[Claim]:
    red, dt = m["red"], m["droptail"]
    min_th, max_th = float(red_q["min_th"]), float(red_q["max_th"])
    e_red, e_dt = estimate(red, "early_share"), estimate(dt, "early_share")
    over_red, over_dt = estimate(red, "drops_overlimit_after_warmup"), estimate(dt, "overlimit_share")
    bound = early_share_bound(float(red_q.get("max_p", 0.1)), estimate(red, "drop_fraction").mean)
    a_red, b_dt = estimate(red, "red_avg_mean"), estimate(dt, "backlog_mean_pkts")
    c_red, c_dt = estimate(red, "loss_cv"), estimate(dt, "loss_cv")
    dt_range = f"per-flow loss {min(r['loss_min'] for r in dt):.1%} to {max(r['loss_max'] for r in dt):.1%}"
    dt_note = (
        "drop-tail spreads loss as evenly here: the jittered start phases keep CBR arrivals from "
        "locking onto the moments the buffer is full"
        if c_dt.mean <= LOSS_CV_MAX
        else "drop-tail concentrates loss on some flows"
    )
    u_red, u_dt = estimate(red, "utilization"), estimate(dt, "utilization")
    d_red, d_dt = estimate(red, "drop_fraction"), estimate(dt, "drop_fraction")
    ok_val = abs(d_red.mean - REFERENCE_DROP_FRACTION) <= REFERENCE_TOLERANCE
    return [
        Claim.judged(
            over_red.mean == 0 and e_red.mean > 0,
            f"RED dropped {over_red.mean:.0f} packets over its limit after the warm-up and made "
            f"{_pct(e_red)} of its drops early: its average did not hold the queue below the buffer.",
            id="red-drops-early-not-on-overflow",
            text=f"After the {WARMUP_S:g} s warm-up RED drops before its buffer overflows: part of its drops "
            "are early and none is over the physical limit; drop-tail drops only on overflow",
            paper="FJ93 §4: RED drops early and spaced while min_th <= avg < max_th, forced when avg >= max_th; "
            "the average holds the queue far below the buffer limit",
            measured=f"RED: {_pct(e_red)} of drops early (analytic maximum for this overload {bound:.1%}), "
            f"{estimate(red, 'drops_forced').fmt('.0f')} forced, {over_red.fmt('.0f')} over the limit after the "
            f"warm-up ({estimate(red, 'drops_overlimit').fmt('.0f')} in the start-up transient, while the slow "
            f"average, w_q = 0.002, still lags the queue); drop-tail: {_pct(e_dt)} early, {_pct(over_dt)} of its "
            f"{estimate(dt, 'drops').fmt('.0f')} drops over the limit",
            tolerance=f"RED overlimit drops after {WARMUP_S:g} s = 0 and RED early share > 0",
        ),
        Claim.judged(
            min_th <= a_red.mean <= max_th,
            f"the time-average of red_avg is {a_red.mean:.2f}, outside [{min_th:g}, {max_th:g}]: the offered "
            "load of unresponsive CBR sources pushes the average where the early-drop rate matches the "
            "excess load, which need not lie between the thresholds.",
            id="red-average-within-thresholds",
            text=f"RED keeps its average queue between min_th and max_th (after {WARMUP_S:g} s warm-up)",
            paper="FJ93: the average queue settles between the thresholds under persistent load",
            measured=f"RED time-average red_avg {a_red.fmt('.2f', unit=' pkts')}; drop-tail time-average "
            f"backlog {b_dt.fmt('.1f', unit=' pkts')} "
            f"({'outside' if not min_th <= b_dt.mean <= max_th else 'inside'} [{min_th:g}, {max_th:g}])",
            tolerance=f"RED mean in [{min_th:g}, {max_th:g}] pkts",
        ),
        Claim.judged(
            c_red.mean <= LOSS_CV_MAX,
            f"the CV at RED is {c_red.mean:.3f} > {LOSS_CV_MAX}: with CBR sources of one period, arrival "
            "phases repeat and some flows meet the high-probability moments more often.",
            id="red-fair-loss",
            text="RED spreads loss evenly over the flows",
            paper="FJ93 §1, §9: random drops hit each flow in proportion to its share; drop-tail can "
            "concentrate loss on flows whose packets arrive when the buffer is full",
            measured=f"CV of per-flow loss: RED {c_red.fmt('.3f')}; drop-tail {c_dt.fmt('.3f')} ({dt_range}): "
            f"{dt_note}",
            tolerance=f"RED CV ≤ {LOSS_CV_MAX}",
        ),
        Claim.judged(
            u_red.mean >= UTILIZATION_MIN and u_dt.mean >= UTILIZATION_MIN,
            f"utilization RED {u_red.mean:.4f}, drop-tail {u_dt.mean:.4f}: the queue emptied at times, "
            "either from the sources' start-up or because early drops over-reacted.",
            id="red-utilization",
            text="The bottleneck stays busy: early drops cost no throughput under persistent overload",
            paper="FJ93: RED keeps utilization high while keeping the average queue small",
            measured=f"utilization RED {u_red.fmt('.4f')}; drop-tail {u_dt.fmt('.4f')}",
            tolerance=f"≥ {UTILIZATION_MIN} for both queues",
        ),
        Claim.judged(
            ok_val,
            f"RED drops {d_red.mean:.1%} of arrivals, {abs(d_red.mean - REFERENCE_DROP_FRACTION) * 100:.1f} "
            "points from the references: the simulators differ in a modelling detail (see decisions.md).",
            unless=f"quick run: checked on full runs only (the reference is a 60 s run); the quick value "
            f"{'is' if ok_val else 'is not'} within the tolerance."
            if quick
            else "",
            id="red-drop-rate-matches-reference",
            text="RED's overall drop fraction matches the reference implementations",
            paper=f"{REFERENCE_DROP_FRACTION:.1%} (112.5k of 300k bottleneck arrivals in 60 s: bare loop 112,523, "
            "ns-3 3.44 112,831)",
            measured=f"RED {_pct(d_red)}; drop-tail {_pct(d_dt)}",
            tolerance=f"±{REFERENCE_TOLERANCE * 100:.0f} percentage points (full runs only)",
        ),
    ]


def _figures(ctx: Context, data: dict[str, Any], limit: float) -> list[Figure]:
    """The report's figures from its data (:func:`reproduce`) and the drop-tail queue's limit."""
    fig, (ax1, ax2) = figures.new_axes(8.0, 5.5, 2, 1, sharex=True)
    r, d = data["series_seed_first"]["red"], data["series_seed_first"]["droptail"]
    ax1.plot(r["t_s"], r["backlog_pkts"], color="0.7", lw=0.6, label="instantaneous backlog")
    ax1.plot(r["t_s"], r["red_avg"], color="C0", lw=1.4, label="red_avg")
    for th, name in zip(data["thresholds_pkts"], ("min_th", "max_th"), strict=False):
        ax1.axhline(th, color="C3", ls="--", lw=0.8)
        ax1.annotate(name, (0, th), xytext=(2, 2), textcoords="offset points", color="C3", fontsize=8)
    top = 1.1 * max(
        limit if math.isfinite(limit) else 0.0, *r.get("backlog_pkts", [0.0]), *d.get("backlog_pkts", [0.0])
    )
    for ax in (ax1, ax2):
        ax.set_ylim(0, top)
        ax.set_ylabel("packets")
    ax1.set_title("RED bottleneck (seed 1)")
    ax1.legend(loc="upper right", fontsize=8)
    ax2.plot(d["t_s"], d["backlog_pkts"], color="C1", lw=0.6, label="instantaneous backlog")
    ax2.axhline(limit, color="C3", ls="--", lw=0.8)
    ax2.annotate("limit", (0, limit), xytext=(2, -10), textcoords="offset points", color="C3", fontsize=8)
    ax2.set_xlabel("time (s)")
    ax2.set_title("drop-tail bottleneck (seed 1)")
    ax2.legend(loc="lower right", fontsize=8)
    queue = ctx.figure(
        fig,
        "queue_over_time.png",
        "Bottleneck queue over time: RED's average and backlog against "
        "its thresholds (top); the drop-tail backlog at its limit (bottom).",
    )

    fig, ax = figures.new_axes(9.0, 4.0)
    loss, reasons = data["flow_loss_mean"], data["drops_by_reason_mean"]
    names = list(loss["red"])
    xs = list(range(len(names)))
    for v, dx, label, color in (("red", -0.2, "RED", "C0"), ("droptail", 0.2, "drop-tail", "C1")):
        ax.bar(
            [x + dx for x in xs], [loss[v].get(n, math.nan) * 100 for n in names], width=0.4, label=label, color=color
        )
    ax.set_xticks(xs, [n.rsplit(".", 1)[-1] for n in names], fontsize=6)
    ax.set_xlabel("flow (cbr.N)")
    ax.set_ylabel("loss rate (%)")
    ax.set_ylim(0, 115)
    ax.legend(fontsize=8, ncol=2, loc="upper right")
    ax.set_title("Per-flow loss rate (mean over seeds)")
    flow_loss = ctx.figure(fig, "flow_loss.png", "Per-flow loss rates at the bottleneck, RED against drop-tail.")

    fig, ax = figures.new_axes(6.0, 4.0)
    variants = list(reasons)
    bottom = [0.0] * len(variants)
    for i, k in enumerate(DROP_KINDS):
        vals = [reasons[v][k] for v in variants]
        ax.bar(variants, vals, bottom=bottom, label=k.removeprefix("drops_"), color=f"C{i + 2}")
        bottom = [b + v for b, v in zip(bottom, vals, strict=False)]
    ax.set_ylabel("packets dropped (mean over seeds)")
    ax.set_ylim(0, max([*bottom, 1.0]) * 1.3)
    ax.legend(fontsize=8, ncol=3, loc="upper center")
    ax.set_title("Bottleneck drops by reason")
    drops = ctx.figure(fig, "drops_by_reason.png", "Bottleneck drops by reason: early, forced and over the limit.")
    return [queue, flow_loss, drops]


def reproduce(ctx: Context) -> Outcome:
    duration = QUICK_DURATION if ctx.quick else FULL_DURATION
    scenarios = {v: load(ctx.scenario_path(p), overrides=[f"duration={duration}"]) for v, p in VARIANTS.items()}
    topo = scenarios["red"].echo["topology"]
    red_q = topo["bottleneck"]["queue"]
    if red_q.get("type") != "red":
        raise ReproductionError(f"{VARIANTS['red']}: the bottleneck queue is {red_q.get('type')!r}, not RED")
    dt_q = scenarios["droptail"].echo["topology"]["bottleneck"]["queue"]
    dt_limit = str(dt_q.get("limit", "60pkts"))
    limit = float(dt_limit.removesuffix("pkts")) if dt_limit.endswith("pkts") else math.nan

    measures: dict[str, list[dict[str, Any]]] = {v: [] for v in VARIANTS}
    series: dict[str, dict[str, list[float]]] = {}
    batch = [(variant, sc, seed) for variant, sc in scenarios.items() for seed in ctx.seeds]
    for (variant, _, seed), res in zip(batch, ctx.run_many(batch), strict=True):
        m = measure(res)
        if variant == "red" and math.isnan(m["red_avg_mean"]):
            raise ReproductionError(f"{variant} seed {seed}: no red_avg series for queue {m['bottleneck']}")
        measures[variant].append(m)
        if seed == ctx.seeds[0]:  # the figure's series
            series[variant] = {}
            for metric in ("backlog_pkts", "red_avg"):
                q = res.metric(m["bottleneck"], metric, entity_kind="queue", allow_missing=True)
                if len(q):
                    series[variant].setdefault("t_s", [float(t) for t in q["t_s"]])
                    series[variant][metric] = [float(v) for v in q["value"]]

    loss = {
        v: {n: sum(r["flow_loss"].get(n, math.nan) for r in runs) / len(runs) for n in runs[0]["flow_loss"]}
        for v, runs in measures.items()
    }
    reasons = {v: {k: sum(r[k] for r in runs) / len(runs) for k in DROP_KINDS} for v, runs in measures.items()}
    claims = _claims(measures, red_q, ctx.quick)

    per_run = {
        v: {
            f"seed_{s}": {k: x for k, x in m.items() if k != "flow_loss"} for s, m in zip(ctx.seeds, runs, strict=False)
        }
        for v, runs in measures.items()
    }
    data = {
        "duration": duration,
        "warmup_s": WARMUP_S,
        "thresholds_pkts": [float(red_q["min_th"]), float(red_q["max_th"])],
        "runs": per_run,
        "flow_loss_mean": loss,
        "drops_by_reason_mean": reasons,
        "series_seed_first": series,
    }
    traffic = scenarios["red"].echo.get("traffic", [{}])[0]
    setup = md_table(
        "| | RED variant | drop-tail variant |",
        [
            f"| scenario | `scenarios/{VARIANTS['red']}` | `scenarios/{VARIANTS['droptail']}` |",
            f"| sources | {topo.get('sources')} × CBR {traffic.get('rate', '?')} of {traffic.get('size', '?')} "
            f"(start jitter {traffic.get('start_jitter', '0s')}) | same |",
            f"| access links | {topo['access']['rate']} / {topo['access']['delay']} | same |",
            f"| bottleneck | {topo['bottleneck']['rate']} / {topo['bottleneck']['delay']} | same |",
            f"| bottleneck queue | RED limit {red_q['limit']}, min_th {red_q['min_th']}, max_th {red_q['max_th']}, "
            f"max_p {red_q.get('max_p')}, w_q {red_q.get('w_q')}, gentle {red_q.get('gentle')} | "
            f"FIFO limit {dt_limit} |",
            f"| simulated time | {duration} per run | same |",
            f"| seeds | {', '.join(map(str, ctx.seeds))} | same |",
        ],
        "As run; the measures' definitions: docs/reproductions/examples.md.",
    )
    return Outcome(claims=claims, data=data, sections=[("Setup", setup)], figures=_figures(ctx, data, limit))
