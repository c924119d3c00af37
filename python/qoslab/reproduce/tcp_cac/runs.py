"""The simulator runs of the ``tcp-cac`` reproduction and their measures [Tarasiuk05 §2-§4]
(set-up and measures: docs/reproductions/tcp_cac.md)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ...api import load
from ...stats import Estimate
from ..framework import Context

C_BPS = 100e6
IPLR = 1e-3
TABLE1_RATES = [1.0, 1.1, 1.2, 1.5, 2.0]  # Mb/s
TABLE1_RTTS = [0, 30, 60]  # ms, minimum RTT; bottleneck delay = RTT / 2
NMAX_CASES = [(10, 1.0, 74), (20, 5.0, 17), (50, 10.0, 9)]  # (B pkts, R_req Mb/s, N_max)
#: A connection is "stopped" when it averages under this share of C/n after the warm-up.
STOPPED_SHARE = 0.10
#: Start patterns of the unshaped runs: (key, ``start_jitter``: starts uniform in [0, it], description).
START_PATTERNS = [("t0", "0s", "all at t = 0"), ("10ms", "10ms", "spread over 10 ms"), ("1s", "1s", "spread over 1 s")]
TABLE1_START = "1s"
#: Timer presets of the unshaped runs (``tcp.preset``; docs/mechanisms/tcp.md).
TIMER_PRESETS = ["qoslab", "ns2"]
#: Table 4 seeds: the run's, then ``T4_STEP`` more until scheme #1's blocking interval is under ±0.3 points.
T4_CI_TARGET = 0.003
T4_STEP = 5
T4_MAX_SEEDS = 40


def runlen(quick: bool) -> dict[str, tuple[int, int]]:
    """(duration s, warm-up s) per table; the warm-up is one per-flow counter bin."""
    if quick:
        return {"table1": (20, 5), "nmax": (20, 5), "table4": (300, 50)}
    return {"table1": (60, 10), "nmax": (60, 10), "table4": (2000, 50)}


def greedy(res: Any, warmup_s: float, duration_s: float) -> dict[str, Any]:
    """Per-connection throughput, loss and SRTT after the warm-up, and the run's data sent and dropped."""
    s = res.series
    f = s[(s["entity_kind"] == "flow") & (s["t_s"] >= warmup_s - 1e-9)]
    piv = f.pivot_table(index="entity_id", columns="metric", values="value", aggfunc="sum")
    thr = (piv["delivered_bytes"] * 8.0 / (duration_s - warmup_s)).to_dict()
    sent, drop = piv["sent_pkts"], piv["dropped_pkts"]
    loss = (drop / sent.where(sent > 0)).fillna(0.0).to_dict()
    srtt = f[f["metric"] == "srtt_s"].groupby("entity_id")["value"].mean().to_dict()
    early = s[(s["entity_kind"] == "flow") & (s["metric"] == "delivered_pkts") & (s["t_s"] < warmup_s - 1e-9)]
    early_pkts = early.groupby("entity_id")["value"].sum().to_dict() if len(early) else {}
    fl = res.flows.set_index("name")
    names = sorted(thr)
    return {
        "thr_bps": [float(thr[n]) for n in names],
        "loss": [float(loss[n]) for n in names],
        "srtt_s": [float(srtt.get(n, math.nan)) for n in names],
        "timeouts": [int(fl.at[n, "timeouts"]) for n in names],
        "warmup_delivered_pkts": [float(early_pkts.get(n, 0.0)) for n in names],
        "sent_pkts": float(sent.sum()),
        "dropped_pkts": float(drop.sum()),
    }


def finite_mean(xs: Iterable[float | None], *, keep_inf: bool = False) -> float:
    """The mean of ``xs`` without None, NaN and (unless ``keep_inf``) infinities; NaN when none is left."""
    v = [x for x in xs if x is not None and not math.isnan(x) and (keep_inf or math.isfinite(x))]
    return sum(v) / len(v) if v else math.nan


def per_seed(runs: list[dict[str, Any]]) -> list[dict[str, float]]:
    """Each seed's Table 1 / Table 3 statistics: the connections' means and the aggregate loss."""
    return [
        {
            "rtt_ms": 1000 * finite_mean(r["srtt_s"]),
            "loss": finite_mean(r["loss"]),
            "thr_mbps": finite_mean(r["thr_bps"]) / 1e6,
            "agg_loss": r["dropped_pkts"] / r["sent_pkts"] if r["sent_pkts"] else math.nan,
        }
        for r in runs
    ]


def pooled(runs: list[dict[str, Any]], share_bps: float, keep: tuple[str, ...] = ()) -> dict[str, Any]:
    """The connections of every seed pooled, with the share stopped (under ``STOPPED_SHARE`` of
    ``share_bps``) and the aggregate loss; only ``keep``'s keys, in its order, when given."""
    thr = [x for r in runs for x in r["thr_bps"]]
    sent, drop = sum(r["sent_pkts"] for r in runs), sum(r["dropped_pkts"] for r in runs)
    is_stopped = [x < STOPPED_SHARE * share_bps for x in thr]
    tos = [float(x) for r in runs for x in r["timeouts"]]
    early = [x for r in runs for x in r["warmup_delivered_pkts"]]
    # What the stopped and the running connections did (claim 2's explanation): RTO expiries, data before the warm-up.
    out = {
        f"{name}_{state}": finite_mean(x for x, st in zip(xs, is_stopped, strict=True) if st == pick)
        for name, xs in (("timeouts", tos), ("warmup_pkts", early))
        for state, pick in (("stopped", True), ("running", False))
    } | {
        "thr_bps": thr,
        "loss": [x for r in runs for x in r["loss"]],
        "srtt_s": [x for r in runs for x in r["srtt_s"]],
        "stopped_share": sum(is_stopped) / len(thr) if thr else math.nan,
        "agg_loss": drop / sent if sent > 0 else math.nan,
    }
    return {k: out[k] for k in keep} if keep else out


def _table1_scenario(
    ctx: Context, dur: int, warm: int, rtt: int, jitter: str, rate: float | None = None, preset: str | None = None
) -> Any:
    """Table 1's set-up, shaped at ``rate`` Mb/s (else unshaped), timers ``preset`` (else the scenario's)."""
    ov = [
        f"duration={dur}s",
        f"topology.bottleneck.delay={rtt / 2:g}ms",
        f"metrics.bin={warm}s",
        "metrics.series_interval=1s",
        'metrics.tcp_series=["ftp"]',
        f"traffic[ftp].start_jitter={jitter}",
        *([] if rate is None else [f"traffic[ftp].shaper.rate={rate:g}Mbps"]),
        *([] if preset is None else [f"traffic[ftp].tcp.preset={preset}"]),
    ]
    path = "tcp_cac/table1_unshaped.toml" if rate is None else "tcp_cac/table1_shaped.toml"
    return load(ctx.scenario_path(path), overrides=ov)


def table1(ctx: Context, dur: int, warm: int) -> dict[str, Any]:
    """Table 1: unshaped and shaped at each rate and minimum RTT (quick: unshaped and C/n at RTT 0)."""
    rates: list[float | None] = [None, *TABLE1_RATES] if not ctx.quick else [None, 1.0]
    points = []
    for rate in rates:
        for rtt in TABLE1_RTTS if not ctx.quick else [0]:
            key = f"{'none' if rate is None else f'{rate:g}Mbps'}/rtt{rtt}ms"
            sc = _table1_scenario(ctx, dur, warm, rtt, TABLE1_START, rate)
            points.append(((key, rate, rtt), f"table1_{key.replace('/', '_')}", sc))
    return {
        key: {
            "rate_mbps": rate,
            "min_rtt_ms": rtt,
            "start_jitter": TABLE1_START,
            "per_seed": per_seed(runs),
            **pooled(runs, C_BPS / 100),
        }
        for (key, rate, rtt), runs in ctx.run_grid(points, lambda _, r: greedy(r, warm, dur)).items()
    }


#: What the start patterns' table keeps of :func:`pooled`, in this order (its stopped and running means last).
_BY_STATE = tuple(f"{name}_{state}" for name in ("timeouts", "warmup_pkts") for state in ("stopped", "running"))
START_POOLED = ("stopped_share", "agg_loss", "thr_bps", *_BY_STATE)


def start_patterns(ctx: Context, dur: int, warm: int) -> dict[str, Any]:
    """Table 1's unshaped case under each start pattern and timer preset (quick: RTT 0 only)."""
    points = [
        (
            (f"{preset}/{pkey}/rtt{rtt}ms", preset, pkey, jitter, rtt),
            f"start_{preset}_{pkey}_rtt{rtt}ms",
            _table1_scenario(ctx, dur, warm, rtt, jitter, preset=preset),
        )
        for preset in TIMER_PRESETS
        for pkey, jitter, _desc in START_PATTERNS
        for rtt in (TABLE1_RTTS if not ctx.quick else [0])
    ]
    return {
        key: {"preset": preset, "start": pkey, "start_jitter": jitter, "min_rtt_ms": rtt, "warmup_s": warm}
        | pooled(runs, C_BPS / 100, START_POOLED)
        for (key, preset, pkey, jitter, rtt), runs in ctx.run_grid(points, lambda _, r: greedy(r, warm, dur)).items()
    }


def nmax(ctx: Context, dur: int, warm: int) -> dict[str, Any]:
    """Table 3: N_max shaped connections per (B, R_req) case; full runs sweep n from N_max to C / R_req."""
    points = []
    for b, r, n_max in NMAX_CASES:
        c_over_r = round(C_BPS / (r * 1e6))
        sweep = range(n_max, c_over_r + 1, max(1, (c_over_r - n_max) // 5))
        for n in [n_max] if ctx.quick else sorted({n_max, *sweep, c_over_r}):
            ov = [
                f"duration={dur}s",
                f"metrics.bin={warm}s",
                f"topology.bottleneck.queue.limit={b}pkts",
                f"traffic[ftp].shaper.rate={r:g}Mbps",
                f"traffic[ftp].flows={n}",
            ]
            key = f"B{b}_R{r:g}Mbps_n{n}"
            points.append(
                ((key, b, r, n, n_max), f"nmax_{key}", load(ctx.scenario_path("tcp_cac/nmax.toml"), overrides=ov))
            )
    return {
        key: {"buffer": b, "r_req_mbps": r, "n": n, "n_max": n_max}
        | pooled(runs, r * 1e6, ("thr_bps", "agg_loss"))
        | {"per_seed": per_seed(runs)}
        for (key, b, r, n, n_max), runs in ctx.run_grid(points, lambda _, x: greedy(x, warm, dur)).items()
    }


def table4(ctx: Context, dur: int, warm: int) -> dict[str, Any]:
    """Table 4 with TCP: each scheme over the same seeds, as many as scheme #1 needs in full runs."""
    scs = {
        s: load(ctx.scenario_path("tcp_cac/table4.toml"), overrides=[f"duration={dur}s", f"admission.scheme={s}"])
        for s in (1, 2, 3)
    }
    out: dict[str, Any] = {"1": [], "2": [], "3": []}

    def run(scheme: int, seeds: list[int]) -> None:
        batch = [(f"table4_scheme{scheme}", scs[scheme], seed) for seed in seeds]
        out[str(scheme)] += [transfers(res, warm) for res in ctx.run_many(batch)]

    seeds = list(ctx.seeds)
    run(1, seeds)
    while not ctx.quick and len(seeds) < T4_MAX_SEEDS:
        hw = Estimate.of(r["blocking"] for r in out["1"]).half_width
        if hw is not None and hw < T4_CI_TARGET:
            break
        more = list(range(len(seeds) + 1, min(len(seeds) + T4_STEP, T4_MAX_SEEDS) + 1))
        ctx.log(f"  table 4: scheme #1 blocking interval ±{100 * (hw or math.inf):.2f} points, {len(more)} more seeds")
        run(1, more)
        seeds += more
    run(2, seeds)
    run(3, seeds)
    out["seeds"] = seeds
    return out


def _detail(d: str, key: str) -> float:
    for w in str(d).split():
        if w.startswith(key):
            return float(w[len(key) :].removesuffix("bps"))
    return math.nan


def transfers(res: Any, warm: float) -> dict[str, Any]:
    """Blocking, running connections at blocking and mean transfer time of the requests after the warm-up."""
    ev = res.events
    ev = ev[ev["t_s"] >= warm]
    dec = ev[ev["kind"].isin(["admit", "reject"])]
    rej = dec[dec["kind"] == "reject"]
    fl = res.flows
    started = set(dec[dec["kind"] == "admit"]["flow_id"].astype(int))
    done = fl[fl["flow_id"].isin(started) & fl["completion_s"].notna()]
    times = done["completion_s"].astype(float).tolist()
    return {
        "requests": len(dec),
        "blocked": len(rej),
        "blocking": float(len(rej) / len(dec)) if len(dec) else math.nan,
        "mean_running_at_blocking": float(rej["detail"].map(lambda d: _detail(d, "running=")).mean())
        if len(rej)
        else math.nan,
        "mean_transfer_time_s": float(sum(times) / len(times)) if times else math.nan,
        "completed": len(times),
        "unfinished": int(len(started) - len(done)),
        "sent_bytes_per_transfer": float(done["sent_bytes"].mean()) if len(done) else math.nan,
    }
