"""The MACE reproduction's runs [MACE98 §4-5], a function per scenario or experiment (docs/reproductions/mace.md,
Setup), each keeping the measures the claims, cells, figures and ``results.json`` need."""

from __future__ import annotations

import math
import shutil
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, NamedTuple, TypedDict

from ...errors import warn_scenario
from ...recording import record_arrivals
from ...result import Result
from ...scenario import Override, Scenario, read_text
from ..framework import Context
from .measures import (
    Hist,
    admitted_path,
    alive_path,
    binned_loss,
    class_loss,
    delay_sd_ms,
    generation_matches,
    group_loss,
    interarrival_hist,
    mbac_path,
    offered_bps,
    path_stats,
    percentile,
    sample_rates,
    share_at_most,
    share_within,
)
from .params import (
    ADMISSIONS,
    ALLOCATION,
    BG_SOURCE_BPS,
    DEPARTURES,
    DEPARTURES_WARMUP_S,
    FIG9_BG_SOURCES,
    FIG9_LOAD,
    FIG12_13_MODELS,
    GENERATION_PROBE_RATE,
    GROUP_PORT,
    HOST_JITTER,
    LINK_BPS,
    LOADS_FULL,
    LOADS_QUICK,
    MACE_KEY,
    MIXED_LOSS_MODELS,
    NO_DEPARTURE_LIFETIME,
    RESERVE,
    S1_DURATION,
    S3_DURATION,
    S3_MODELS_FULL,
    S3_MODELS_QUICK,
    SWEEP_POINTS,
    WARMUP_S,
    bg_sources,
    mbac_admission,
)

#: One scenario-1 replication's measures (loss ratios, shares, source counts).
Measures = dict[str, float]


class Scenario1(TypedDict):
    """``runs["mace_130"]``: :data:`Measures` per seed; ``hist[variant][group]``: the first seed's at 130%."""

    loads: list[int]
    runs: dict[str, list[Measures]]
    hist: dict[str, dict[str, Hist]]


class Scenario2(TypedDict):
    """Flows recorded and replayed, histograms, loss; whether the generation probe sent the runs' packets."""

    recorded_flows: int
    hist: dict[str, dict[str, Hist]]
    loss: dict[str, dict[str, float]]
    replayed_flows: int
    generation_matches: dict[str, bool]
    share40: dict[str, dict[str, float]]


class Table2Run(TypedDict):
    """One scenario-3/4 run's measures after the warm-up, and the raw series behind them."""

    admitted_mean: float
    admitted_max: int
    alive_mean: float
    utilization: float
    sample_p95_bps: float
    allocation_bps: float
    samples_after_warmup: int
    loss_cl_class: float
    loss_be_class: float
    loss_conn: float
    share64: float
    share256: float
    share256_10ms: float
    hist64: Hist
    hist256: Hist
    rates: list[float]
    path: dict[str, list[float]]


#: Table 2: model -> {"ssac": [run per seed], "mbac": [run per seed]}.
Table2 = dict[str, dict[str, list[Table2Run]]]


def _load(ctx: Context, file: str, overrides: list[Override]) -> Scenario:
    from ...api import load

    return load(ctx.scenario_path(f"mace/{file}"), overrides=overrides)


#: The MACE scenarios' descriptor file (``topology.links[router1->dst].mace.descriptors``), beside them.
DESCRIPTORS = "cl_ports.descriptors"


def _load_replay(ctx: Context, file: str, overrides: list[Override]) -> Scenario:
    """A scenario-2 replay file whose relative paths (the recording and the descriptors) resolve
    against the reproduction's folder, so that its hash and results name them as the file does."""
    copy = ctx.folder / DESCRIPTORS
    if not copy.exists():
        shutil.copyfile(ctx.scenario_path(f"mace/{DESCRIPTORS}"), copy)
    path = ctx.scenario_path(f"mace/{file}")
    sc = Scenario(read_text(path), origin=str(path), base_dir=ctx.folder, overrides=overrides)
    sc.validate()
    warn_scenario(sc)
    return sc


def _s1_measures(res: Result, n: int, variant: str) -> tuple[Measures, dict[str, Hist]]:
    """One scenario-1 replication's measures, and its CL and BE histograms."""
    m: Measures = {
        "bg_sources": n,
        "loss_cl_group": group_loss(res, ["cl"]),
        "loss_be_group": group_loss(res, ["be"]),
        "loss_testing": group_loss(res, ["cl", "be"]),
        "loss_bg": group_loss(res, ["bg"]),
    }
    if variant == "mace":
        m["loss_cl_class"], m["loss_be_class"] = class_loss(res)
    m["testing_offered_bps"] = offered_bps(res, ["cl", "be"])
    m["delay_sd_cl_ms"], m["delay_sd_be_ms"] = delay_sd_ms(res, ["cl"]), delay_sd_ms(res, ["be"])
    hists = {g: interarrival_hist(res, [g]) for g in ("cl", "be")}
    m["share40_cl"], m["share40_be"] = (share_within(hists[g], 0.040) for g in ("cl", "be"))
    return m, hists


def _s1_load(ctx: Context, file: str, sources: int, extra: Sequence[Override] = ()) -> Scenario:
    """Scenario 1's length with ``sources`` background sources and the ``extra`` overrides (Figs. 6-9)."""
    return _load(ctx, file, [f"duration={S1_DURATION[ctx.quick]}", f"traffic[bg].flows={sources}", *extra])


def scenario1(ctx: Context) -> Scenario1:
    """20 CL and 20 BE CBR flows against each background load, with and without MACE, every seed."""
    loads = LOADS_QUICK if ctx.quick else LOADS_FULL
    points = [
        ((load, variant), f"s1_{variant}_{load}", _s1_load(ctx, f"s1_cbr_{variant}.toml", bg_sources(load)))
        for load in loads
        for variant in ("mace", "nomace")
    ]
    grid = ctx.run_grid(points, lambda key, res: _s1_measures(res, bg_sources(key[0]), key[1]))
    return {
        "loads": loads,
        "runs": {f"{variant}_{load}": [m for m, _ in runs] for (load, variant), runs in grid.items()},
        "hist": {variant: runs[0][1] for (load, variant), runs in grid.items() if load == FIG9_LOAD},
    }


def scenario2(ctx: Context) -> Scenario2:
    """POO1 record and replay: a recording run, its CL flows replayed with and without MACE, and the
    generation probe (the same replay over a bottleneck where no packet waits)."""
    dur = S1_DURATION[ctx.quick]
    seed = ctx.seeds[0]
    rec = ctx.run("s2_record", _load(ctx, "s2_poo1_record.toml", [f"duration={dur}"]), seed)
    record_arrivals(rec, "cl", ctx.folder / "s2_poo1_flows.csv", group_start_s=2.0)
    runs = {
        v: ctx.run(f"s2_{v}", _load_replay(ctx, f"s2_poo1_{v}.toml", [f"duration={dur}"]), seed)
        for v in ("mace", "nomace")
    }
    # Figs. 10-11's generation inter-times: why a 10 Gb/s replay gives them, docs/decisions/reproduce-mace.md.
    probe_sc = _load_replay(
        ctx, "s2_poo1_nomace.toml", [f"duration={dur}", f"topology.links[router1->dst].rate={GENERATION_PROBE_RATE}"]
    )
    probe = ctx.run("s2_generation", probe_sc, seed)
    hist = {k: {g: interarrival_hist(r, [g]) for g in ("cl", "be")} for k, r in {**runs, "generation": probe}.items()}
    return {
        "recorded_flows": int((rec.flows["group"] == "cl").sum()),
        "hist": hist,
        "loss": {v: {g: group_loss(r, [g]) for g in ("cl", "be", "bg")} for v, r in runs.items()},
        "replayed_flows": int((runs["mace"].flows["group"] == "cl").sum()),
        "generation_matches": {v: generation_matches(probe, r, ["cl", "be"]) for v, r in runs.items()},
        "share40": {k: {g: share_within(h[g], 0.040) for g in ("cl", "be")} for k, h in hist.items()},
    }


def table2_spec(
    ctx: Context, model: str, admission: dict[str, Any], variant: str, seed: int, extra: Sequence[Override] = ()
) -> tuple[str, Scenario, int]:
    """Scenario 3/4's run of ``model`` under ``admission`` (and a control's ``extra``), as ``s3_<model>_<variant>``."""
    file = "s4_mixed.toml" if model == "mixed" else f"s3_{model}.toml"
    sc = _load(ctx, file, [f"duration={S3_DURATION[ctx.quick]}", (f"{MACE_KEY}.admission", admission), *extra])
    return (f"s3_{model}_{variant}", sc, seed)


def table2_measures(ctx: Context, model: str, res: Result) -> Table2Run:
    """Table 2's measures of one scenario-3/4 run of ``model``."""
    warm = WARMUP_S[ctx.quick]
    end = float(res.summary.get("sim_time_s") or S3_DURATION[ctx.quick].removesuffix("s"))
    mean_n, peak_n = path_stats(admitted_path(res), warm, end)
    rates = sample_rates(res, warm)
    mu = ALLOCATION[model]
    groups = sorted(set(res.flows["group"]) - {"bg"})
    cl_loss, be_loss = class_loss(res, warm)
    hist64 = interarrival_hist(res, [g for g in groups if GROUP_PORT.get(g) == 5004])
    hist256 = interarrival_hist(res, [g for g in groups if GROUP_PORT.get(g) == 5006])
    return {
        "admitted_mean": mean_n,
        "admitted_max": peak_n,
        "alive_mean": path_stats(alive_path(res), warm, end)[0],
        "utilization": (sum(rates) / len(rates) / mu) if rates else math.nan,
        "sample_p95_bps": percentile(rates, 0.95),
        "allocation_bps": mu,
        "samples_after_warmup": len(rates),
        "loss_cl_class": cl_loss,
        "loss_be_class": be_loss,
        # Every packet the connections sent, from the 100 s bins that start at or after the warm-up.
        "loss_conn": binned_loss(res, groups, warm),
        "share64": share_within(hist64, 0.040) if hist64 else math.nan,
        "share256": share_within(hist256, 0.010) if hist256 else math.nan,
        "share256_10ms": share_at_most(hist256, 0.010) if hist256 else math.nan,
        "hist64": hist64,
        "hist256": hist256,
        "rates": rates,
        "path": mbac_path(res),
    }


def table2(
    ctx: Context,
    models: Sequence[str] = (),
    admissions: dict[str, dict[str, Any]] = ADMISSIONS,
    extra: Callable[[str], Sequence[Override]] = lambda model: (),
    *,
    save: bool = True,
) -> Table2:
    """Scenarios 3-4: every source model (quick: EXP1, EXP2) under SSAC and MBAC, every seed; a batch per model,
    each run reduced as it finishes (3100 s runs). :mod:`.controls` gives models, admissions, ``extra``."""
    out: Table2 = {}
    for model in models or (S3_MODELS_QUICK if ctx.quick else S3_MODELS_FULL):
        plan = [(kind, seed) for kind in admissions for seed in ctx.seeds]
        specs = [table2_spec(ctx, model, admissions[kind], kind, seed, extra(model)) for kind, seed in plan]
        got = ctx.run_reduced(specs, partial(table2_measures, ctx, model), save=save)
        for (kind, _), run in zip(plan, got, strict=True):
            out.setdefault(model, {}).setdefault(kind, []).append(run)
    return out


def sweep(ctx: Context, t2: Table2) -> dict[str, Table2Run]:
    """EXP1 under MBAC for each v of :data:`V_SWEEP`, and v = 0.95 with the window continuing (full
    runs only; the first seed); v = 0.95 is Table 2's EXP1 MBAC run, not run again."""
    if ctx.quick:
        return {}
    plan = {k: mbac_admission(v=v, restart_window=restart) for k, (v, restart) in SWEEP_POINTS.items() if k != "0.95"}
    specs = [table2_spec(ctx, "exp1", adm, f"mbac_v{k.replace(' ', '_')}", ctx.seeds[0]) for k, adm in plan.items()]
    got = dict(zip(plan, [table2_measures(ctx, "exp1", res) for res in ctx.run_many(specs)], strict=True))
    return {k: t2["exp1"]["mbac"][0] if k == "0.95" else got[k] for k in SWEEP_POINTS}


class Fig9(TypedDict):
    """``runs[variant]`` a :data:`Measures` per seed, ``hist[variant][group]`` the first seed's."""

    bg_sources: int
    background_pct: float
    total_pct: float
    runs: dict[str, list[Measures]]
    hist: dict[str, dict[str, Hist]]


#: Fig. 9's variants (background sources, overrides): exact send times and the host timing jitter on
#: every sender, at 20 background sources; and jittered at :data:`FIG9_LOAD` (130%), beside scenario 1's exact run.
_JITTER = [f"traffic[{g}].send_jitter={HOST_JITTER}" for g in ("cl", "be", "bg")]
FIG9_VARIANTS: dict[str, tuple[int, list[str]]] = {
    "exact": (FIG9_BG_SOURCES, []),
    "jitter": (FIG9_BG_SOURCES, _JITTER),
    f"jitter_{FIG9_LOAD}": (bg_sources(FIG9_LOAD), _JITTER),
}


def fig9(ctx: Context) -> Fig9:
    """Scenario 1 with MACE at Fig. 9's load, with exact and with jittered send times, every seed."""
    n = FIG9_BG_SOURCES
    points = [(v, f"fig9_{v}", _s1_load(ctx, "s1_cbr_mace.toml", k, jit)) for v, (k, jit) in FIG9_VARIANTS.items()]
    grid = ctx.run_grid(points, lambda v, res: _s1_measures(res, FIG9_VARIANTS[v][0], "mace"))
    return {
        "bg_sources": n,
        "background_pct": n * BG_SOURCE_BPS / LINK_BPS * 100,
        "total_pct": (n * BG_SOURCE_BPS + 40 * 386 * 8 / 0.040) / LINK_BPS * 100,
        "runs": {v: [m for m, _ in runs] for v, runs in grid.items()},
        "hist": {v: runs[0][1] for v, runs in grid.items()},
    }


class DepartureRun(TypedDict):
    """One run of the departures experiment, after its warm-up."""

    lifetime_s: float | None
    utilization: float
    alive_mean: float
    admitted_mean: float
    p95_over_mu: float
    loss_cl_class: float


class Departures(TypedDict):
    """``runs[model][lifetime key]``; ``window_s`` = T·S; ``extra`` (full runs): EXP1 without
    departures at v = 1.0, over 68% background, and packetized at the nominal rate."""

    window_s: float
    warmup_s: float
    duration: str
    runs: dict[str, dict[str, DepartureRun]]
    extra: dict[str, DepartureRun]


def lifetime_overrides(lifetime_s: float | None, group: str = "cl") -> list[Override]:
    """``group``'s candidates' mean lifetime; ``None``: none (a fixed lifetime beyond any run)."""
    if lifetime_s is None:
        return [
            f"traffic[{group}].arrivals.lifetime={NO_DEPARTURE_LIFETIME}",
            (f"traffic[{group}].arrivals.lifetime_dist", "fixed"),
        ]
    return [f"traffic[{group}].arrivals.lifetime={lifetime_s:g}s"]


def departures(ctx: Context, t2: Table2) -> Departures:
    """EXP1 and POO1 (quick: EXP1) under MBAC with the paper's lifetimes, ten times longer and none (the first
    seed, one batch); full runs take the paper's lifetimes from Table 2's MBAC run (the same scenario and seed)."""
    p, dur, warm = DEPARTURES[ctx.quick], S3_DURATION[ctx.quick], DEPARTURES_WARMUP_S
    reused = [m for m in p["models"] if not ctx.quick and m in t2]

    def mbac(v: float) -> list[Override]:
        return [f"duration={dur}", (f"{MACE_KEY}.admission", mbac_admission(v=v, window=p["window"]))]

    # (where in the result: a model or "extra", its key there, model, variant, lifetime, overrides)
    plan: list[tuple[str, str, str, str, float | None, list[Override]]] = [
        (m, key, m, f"{m}_{key}", lifetime, mbac(0.95) + lifetime_overrides(lifetime))
        for m in p["models"]
        for key, lifetime in p["lifetimes"].items()
        if not (key == "paper" and m in reused)
    ]
    if not ctx.quick:
        extras: dict[str, tuple[str, float | None, list[Override]]] = {
            "exp1 v=1 none": ("v1_none", None, mbac(1.0) + lifetime_overrides(None)),
            "exp1 68% background": ("bg68", 1000.0, [*mbac(0.95), f"traffic[bg].flows={FIG9_BG_SOURCES}"]),
            "exp1 nominal packetization": ("nominal", 1000.0, [*mbac(0.95), ("traffic[cl].packetization", "nominal")]),
        }
        plan += [("extra", key, "exp1", f"exp1_{v}", life, o) for key, (v, life, o) in extras.items()]
    specs = [(f"departures_{v}", _load(ctx, f"s3_{model}.toml", o), ctx.seeds[0]) for _, _, model, v, _, o in plan]
    got = {m: {"paper": _from_table2(t2[m]["mbac"][0], m, p["lifetimes"]["paper"])} for m in reused}
    for (where, key, model, _, lifetime, _), res in zip(plan, ctx.run_many(specs), strict=True):
        got.setdefault(where, {})[key] = departure_measures(res, model, lifetime, warm, float(dur.removesuffix("s")))
    return {
        "window_s": 5.0 * p["window"],
        "warmup_s": warm,
        "duration": dur,
        "runs": {m: {k: got[m][k] for k in p["lifetimes"]} for m in p["models"]},
        "extra": got.get("extra", {}),
    }


def _from_table2(r: Table2Run, model: str, lifetime_s: float | None) -> DepartureRun:
    """A Table 2 run's measures as a departures run (the same warm-up and window)."""
    return {
        "lifetime_s": lifetime_s,
        "utilization": r["utilization"],
        "alive_mean": r["alive_mean"],
        "admitted_mean": r["admitted_mean"],
        "p95_over_mu": r["sample_p95_bps"] / ALLOCATION[model],
        "loss_cl_class": r["loss_cl_class"],
    }


def departure_measures(res: Result, model: str, lifetime_s: float | None, warm: float, end: float) -> DepartureRun:
    """Utilization of the allocation, flows alive and in the classifier, after ``warm``."""
    rates = sample_rates(res, warm)
    return {
        "lifetime_s": lifetime_s,
        "utilization": (sum(rates) / len(rates) / ALLOCATION[model]) if rates else math.nan,
        "alive_mean": path_stats(alive_path(res), warm, end)[0],
        "admitted_mean": path_stats(admitted_path(res), warm, end)[0],
        "p95_over_mu": percentile(rates, 0.95) / ALLOCATION[model],
        "loss_cl_class": class_loss(res, warm)[0],
    }


def batch_prediction(none: DepartureRun, lifetime_s: float, window_s: float, model: str) -> float:
    """Batch admission's utilization for mean lifetime ``lifetime_s`` from the run without departures:
    ``u_none / (1 + (T·S/L)·r/m)``, ``m = u_none · μ / N_none`` (docs/reproductions/mace.md, "What is measured")."""
    m = none["utilization"] * ALLOCATION[model] / none["alive_mean"]
    return none["utilization"] / (1.0 + window_s / lifetime_s * RESERVE[model] / m)


class MixedLoss(TypedDict):
    """Figs. 7-8: ``runs["130"]`` one :data:`Measures` per seed at each background load."""

    loads: list[int]
    runs: dict[str, list[Measures]]


def mixed_loss(ctx: Context) -> MixedLoss:
    """Scenario 4's mixed CL models (CBR, POO1, POO3, EXP1), five each on the CL and on a BE port,
    with MACE (SSAC, 3 Mb/s) over each background load of scenario 1, every seed."""
    loads = LOADS_QUICK if ctx.quick else LOADS_FULL
    cl, be = ([f"{svc}_{m}" for m in MIXED_LOSS_MODELS] for svc in ("cl", "be"))
    points = [(load, f"s4_mixed_loss_{load}", _s1_load(ctx, "s4_mixed_loss.toml", bg_sources(load))) for load in loads]

    def measures(load: int, res: Result) -> Measures:
        cl_class, be_class = class_loss(res)
        return {
            "bg_sources": bg_sources(load),
            "loss_cl_class": cl_class,
            "loss_be_class": be_class,
            "loss_cl_group": group_loss(res, cl),
            "loss_be_group": group_loss(res, be),
            "loss_bg": group_loss(res, ["bg"]),
            "testing_offered_bps": offered_bps(res, cl + be),
        }

    return {"loads": loads, "runs": {str(load): runs for load, runs in ctx.run_grid(points, measures).items()}}


class Fig12_13(TypedDict):
    """Figs. 12-13: ``runs`` :data:`Measures` per seed, ``hist[service][kbps]`` the first seed's histograms."""

    duration: str
    warmup_s: float
    runs: list[Measures]
    hist: dict[str, dict[str, Hist]]


def fig12_13(ctx: Context) -> Fig12_13:
    """Scenario 4's mixed models with MACE (SSAC, enough allocation), four connections of each model
    alive on the CL ports and four on a BE port, 130% background; every seed, one batch."""
    dur, warm = S3_DURATION[ctx.quick], WARMUP_S[ctx.quick]
    sc = _load(ctx, "s4_fig12_13.toml", [f"duration={dur}", f"metrics.bin={warm:g}s"])
    out: Fig12_13 = {"duration": dur, "warmup_s": warm, "runs": [], "hist": {}}
    for seed, res in zip(ctx.seeds, ctx.run_many([("s4_fig12_13", sc, seed) for seed in ctx.seeds]), strict=True):
        m: Measures = {}
        for svc in ("cl", "be"):
            for kbps, models in FIG12_13_MODELS.items():
                groups = [f"{svc}_{x}" for x in models]
                m[f"loss_{svc}{kbps}"] = binned_loss(res, groups, warm)
                if seed == ctx.seeds[0]:
                    out["hist"].setdefault(svc, {})[str(kbps)] = interarrival_hist(res, groups)
        m["loss_cl_class"], m["loss_be_class"] = class_loss(res, warm)
        out["runs"].append(m)
    return out


class Runs(NamedTuple):
    """Every scenario's reduced runs, as :func:`qoslab.reproduce.mace.reproduce` hands them to the report."""

    s1: Scenario1
    s2: Scenario2
    t2: Table2
    sweep: dict[str, Table2Run]
    f9: Fig9
    dep: Departures
    mixed: MixedLoss
    f1213: Fig12_13
