"""The MACE reproduction's runs (seed 000 §4-5): scenario 1 (CBR against
background load), scenario 2 (POO1 record and replay), scenarios 3-4 (Table
2: SSAC against MBAC per source model) and the sweep of v. Each runs its
variants through :meth:`Context.run` and keeps the measures the claims,
figures and ``results.json`` need."""

from __future__ import annotations

import math
from typing import TypedDict

from ...result import Result
from ...scenario import Override, Scenario
from ..framework import Context
from .measures import (
    Hist,
    admitted_stats,
    class_loss,
    generation_matches,
    group_loss,
    interarrival_hist,
    mbac_path,
    percentile,
    sample_rates,
    share_within,
)
from .params import (
    ALLOCATION,
    BG_SOURCE_BPS,
    FIG9_LOAD,
    GENERATION_PROBE_RATE,
    GROUP_PORT,
    LINK_BPS,
    LOADS_FULL,
    LOADS_QUICK,
    MACE_KEY,
    MBAC,
    S1_DURATION,
    S2_DURATION,
    S3_DURATION,
    S3_MODELS_FULL,
    S3_MODELS_QUICK,
    V_SWEEP,
    WARMUP_S,
    bg_sources,
)
from .recording import record_arrivals

#: One scenario-1 replication's measures (loss ratios, shares, source counts).
Measures = dict[str, float]


class Scenario1(TypedDict):
    """Scenario 1: ``runs["mace_130"]`` = one :data:`Measures` per seed; ``hist[variant][group]``
    the first seed's histograms at :data:`FIG9_LOAD`."""

    loads: list[int]
    runs: dict[str, list[Measures]]
    hist: dict[str, dict[str, Hist]]


class Scenario2(TypedDict):
    """Scenario 2: recorded and replayed flow counts, per-variant histograms and loss, and
    whether the generation probe's sources sent the measured runs' packets."""

    recorded_flows: int
    hist: dict[str, dict[str, Hist]]
    loss: dict[str, dict[str, float]]
    replayed_flows: int
    generation_matches: dict[str, bool]
    share40: dict[str, dict[str, float]]


class Table2Run(TypedDict):
    """One scenario-3/4 run (after the warm-up): admitted flows, utilization of the
    allocation, loss per class, inter-arrival shares, and the raw series behind them."""

    admitted_mean: float
    admitted_max: int
    utilization: float
    sample_p95_bps: float
    allocation_bps: float
    samples_after_warmup: int
    loss_cl_class: float
    loss_be_class: float
    share64: float
    share256: float
    hist64: Hist
    hist256: Hist
    rates: list[float]
    path: dict[str, list[float]]


#: Table 2: model -> {"ssac": run, "mbac": run}.
Table2 = dict[str, dict[str, Table2Run]]


def _load(ctx: Context, file: str, overrides: list[Override]) -> Scenario:
    from ...api import load

    return load(ctx.scenario_path(f"mace/{file}"), overrides=overrides)


def _s1_measures(res: Result, n: int, variant: str) -> tuple[Measures, dict[str, Hist]]:
    """One scenario-1 replication's measures, and its CL and BE histograms."""
    m: Measures = {
        "bg_sources": n,
        "offered_pct": n * BG_SOURCE_BPS / LINK_BPS * 100,
        "loss_cl_group": group_loss(res, ["cl"]),
        "loss_be_group": group_loss(res, ["be"]),
        "loss_testing": group_loss(res, ["cl", "be"]),
        "loss_bg": group_loss(res, ["bg"]),
    }
    if variant == "mace":
        m["loss_cl_class"], m["loss_be_class"] = class_loss(res)
    hists = {g: interarrival_hist(res, [g]) for g in ("cl", "be")}
    m["share40_cl"], m["share40_be"] = (share_within(hists[g], 0.040) for g in ("cl", "be"))
    return m, hists


def scenario1(ctx: Context) -> Scenario1:
    """20 CL and 20 BE CBR flows against each background load, with and without MACE, every seed
    (one batch through the executor)."""
    loads = LOADS_QUICK if ctx.quick else LOADS_FULL
    out: Scenario1 = {"loads": loads, "runs": {}, "hist": {}}
    plan: list[tuple[int, str, int]] = []
    specs: list[tuple[str, Scenario, int]] = []
    for load in loads:
        for variant in ("mace", "nomace"):
            n = bg_sources(load)
            sc = _load(ctx, f"s1_cbr_{variant}.toml", [f"duration={S1_DURATION[ctx.quick]}", f"traffic.2.flows={n}"])
            for seed in ctx.seeds:
                plan.append((load, variant, seed))
                specs.append((f"s1_{variant}_{load}", sc, seed))
    for (load, variant, seed), res in zip(plan, ctx.run_many(specs), strict=True):
        m, hists = _s1_measures(res, bg_sources(load), variant)
        if load == FIG9_LOAD and seed == ctx.seeds[0]:
            out["hist"][variant] = hists
        out["runs"].setdefault(f"{variant}_{load}", []).append(m)
    return out


def scenario2(ctx: Context) -> Scenario2:
    """POO1 record and replay: a recording run, its CL flows replayed with and without MACE, and the
    generation probe (the same replay over a bottleneck where no packet waits)."""
    dur = S2_DURATION[ctx.quick]
    seed = ctx.seeds[0]
    rec = ctx.run("s2_record", _load(ctx, "s2_poo1_record.toml", [f"duration={dur}"]), seed)
    csv = record_arrivals(rec, "cl", ctx.folder / "s2_poo1_flows.csv", group_start_s=2.0)
    replay: Override = ("traffic.0.arrivals.file", str(csv.resolve()))
    hist: dict[str, dict[str, Hist]] = {}
    loss: dict[str, dict[str, float]] = {}
    runs: dict[str, Result] = {}
    for variant in ("mace", "nomace"):
        sc = _load(ctx, f"s2_poo1_{variant}.toml", [f"duration={dur}", replay])
        res = runs[variant] = ctx.run(f"s2_{variant}", sc, seed)
        hist[variant] = {g: interarrival_hist(res, [g]) for g in ("cl", "be")}
        loss[variant] = {g: group_loss(res, [g]) for g in ("cl", "be", "bg")}
    # Figs. 10-11 need the senders' generation inter-times, which the
    # simulator does not record per packet. The same replay with a
    # bottleneck so fast (10 Gb/s) that no packet of the POO1 flows waits
    # anywhere delivers each packet a fixed delay after it was generated, so
    # its receiver inter-arrivals are the generation inter-times (to within
    # one 386 B packet time at 100 Mb/s, 31 µs, far below the 1 ms bins).
    # The sources are the same iff every flow sent the same packets.
    probe_sc = _load(
        ctx,
        "s2_poo1_nomace.toml",
        [f"duration={dur}", replay, f"topology.links.3.rate={GENERATION_PROBE_RATE}"],
    )
    probe = ctx.run("s2_generation", probe_sc, seed)
    hist["generation"] = {g: interarrival_hist(probe, [g]) for g in ("cl", "be")}
    return {
        "recorded_flows": int((rec.flows["group"] == "cl").sum()),
        "hist": hist,
        "loss": loss,
        "replayed_flows": int((runs["mace"].flows["group"] == "cl").sum()),
        "generation_matches": {v: generation_matches(probe, r, ["cl", "be"]) for v, r in runs.items()},
        "share40": {k: {g: share_within(h[g], 0.040) for g in ("cl", "be")} for k, h in hist.items()},
    }


def table2_spec(ctx: Context, model: str, admission: str, variant: str) -> tuple[str, Scenario, int]:
    """The scenario-3/4 run of ``model`` under ``admission``, to be saved as ``s3_<model>_<variant>``."""
    file = "s4_mixed.toml" if model == "mixed" else f"s3_{model}.toml"
    sc = _load(ctx, file, [f"duration={S3_DURATION[ctx.quick]}", f"{MACE_KEY}.admission={admission}"])
    return (f"s3_{model}_{variant}", sc, ctx.seeds[0])


def table2_run(ctx: Context, model: str, admission: str, variant: str) -> Table2Run:
    """One scenario-3/4 run of ``model`` under ``admission``, saved as ``s3_<model>_<variant>``."""
    return table2_measures(ctx, model, ctx.run(*table2_spec(ctx, model, admission, variant)))


def table2_measures(ctx: Context, model: str, res: Result) -> Table2Run:
    """Table 2's measures of one scenario-3/4 run of ``model``."""
    warm = WARMUP_S[ctx.quick]
    end = float(res.summary.get("sim_time_s") or S3_DURATION[ctx.quick].removesuffix("s"))
    mean_n, peak_n = admitted_stats(res, warm, end)
    rates = sample_rates(res, warm)
    mu = ALLOCATION[model]
    groups = sorted(set(res.flows["group"]) - {"bg"})
    cl_loss, be_loss = class_loss(res, warm)
    hist64 = interarrival_hist(res, [g for g in groups if GROUP_PORT.get(g) == 5004])
    hist256 = interarrival_hist(res, [g for g in groups if GROUP_PORT.get(g) == 5006])
    return {
        "admitted_mean": mean_n,
        "admitted_max": peak_n,
        "utilization": (sum(rates) / len(rates) / mu) if rates else math.nan,
        "sample_p95_bps": percentile(rates, 0.95),
        "allocation_bps": mu,
        "samples_after_warmup": len(rates),
        "loss_cl_class": cl_loss,
        "loss_be_class": be_loss,
        "share64": share_within(hist64, 0.040) if hist64 else math.nan,
        "share256": share_within(hist256, 0.010) if hist256 else math.nan,
        "hist64": hist64,
        "hist256": hist256,
        "rates": rates,
        "path": mbac_path(res),
    }


def table2(ctx: Context) -> Table2:
    """Scenarios 3-4: every source model (quick: EXP1, EXP2) under SSAC and under MBAC (v = 0.95),
    one batch through the executor."""
    models = S3_MODELS_QUICK if ctx.quick else S3_MODELS_FULL
    plan = [(m, kind, adm) for m in models for kind, adm in (("ssac", '{ type = "ssac" }'), ("mbac", MBAC % 0.95))]
    results = ctx.run_many([table2_spec(ctx, m, adm, kind) for m, kind, adm in plan])
    out: Table2 = {}
    for (model, kind, _), res in zip(plan, results, strict=True):
        out.setdefault(model, {})[kind] = table2_measures(ctx, model, res)
    return out


def sweep(ctx: Context) -> dict[str, Table2Run]:
    """EXP1 under MBAC for each v of :data:`V_SWEEP`, and v = 0.95 with the window continuing (full
    runs only), one batch through the executor."""
    if ctx.quick:
        return {}
    plan = [(f"{v:g}", MBAC % v, f"mbac_v{v:g}") for v in V_SWEEP]
    # The estimator's window on admission (not in the paper): restart (default) against continue.
    cont = (MBAC % 0.95).replace("restart_window = true", "restart_window = false")
    plan.append(("0.95 continue", cont, "mbac_v0.95_continue"))
    results = ctx.run_many([table2_spec(ctx, "exp1", adm, variant) for _, adm, variant in plan])
    return {key: table2_measures(ctx, "exp1", res) for (key, _, _), res in zip(plan, results, strict=True)}
