"""``pcn`` admission experiments (seed 004 §3): over-admission.

- **Table 3.1** (bottleneck aggregation): the Single Link topology
  (``scenarios/pcn/single_link.toml``) at T3 (45 Mb/s), 100 Mb/s and OC3
  (155 Mb/s); CBR voice (160 B / 20 ms) and VBR voice (the same while ON,
  ON 340 ms / OFF 660 ms: 0.34 of the time); Poisson and batch (mean 5)
  call arrivals at 5× the configured-admissible-rate (half the link);
  exponential call durations of mean 60 s; per-packet CLE with weight 0.01
  against 0.5; virtual queue 5 / 15 / 20 ms. ``--quick``: T3, Poisson,
  one seed, 120 s.
Measures (seed §2.4, fixed before any run): the bottleneck's departed
bits in 50 ms samples from the warm-up (60 s; quick 30 s) to the end; the
**over-admission percentage** is their mean over the configured-admissible
rate minus 1, and the **standard-deviation ratio** their standard
deviation over the admissible rate. Claims are judged on the mean over
seeds (≥ 5 seeds, as the issue requires; a quick run does not judge them).
"""

from __future__ import annotations

import math
from typing import Any

from ...result import Result
from ...scenario import Scenario
from ..framework import Claim, Context, Outcome
from ..stats import Estimate

LINKS = {"T3": 45_000_000, "100Mbps": 100_000_000, "OC3": 155_000_000}
PACKET = 160
SPACING_S = 0.020
#: Traffic model -> (ON fraction, overrides of ``traffic.0``).
MODELS: dict[str, tuple[float, list[str]]] = {
    "CBR": (1.0, []),
    "VBR": (0.34, ['traffic.0.model="on_off"', 'traffic.0.on="340ms"', 'traffic.0.off="660ms"']),
}
ARRIVALS = ("POISSON", "BATCH")
OVERLOAD = 5.0
MEAN_CALL_S = 60.0
BATCH_MEAN = 5.0
#: Table 3.1 (worst case over T3, 100 Mb/s, OC3 at 5x): over-admission %, sd ratio.
PAPER_3_1 = {
    ("CBR", "POISSON"): (0.5, 0.005),
    ("VBR", "POISSON"): (2.5, 0.025),
    ("CBR", "BATCH"): (1.0, 0.01),
    ("VBR", "BATCH"): (3.0, 0.03),
}
#: Claim 1's tolerances (the issue's): over-admission at most this, in percent.
CLAIM_1 = {"CBR": 1.0, "VBR": 3.0}
SAMPLE_S = 0.05


def _scenario(ctx: Context, link: str, model: str, arrivals: str) -> tuple[Scenario, float]:
    rate = LINKS[link]
    admissible = rate / 2
    on, over = MODELS[model]
    mean_bps = PACKET * 8 / SPACING_S * on
    calls_per_s = OVERLOAD * admissible / mean_bps / MEAN_CALL_S
    o = [f'topology.links.1.rate="{rate}bps"', *over]
    if arrivals == "BATCH":
        o += [
            'traffic.0.arrivals.process="batch_poisson"',
            f"traffic.0.arrivals.rate={calls_per_s / BATCH_MEAN!r}",
            f"traffic.0.arrivals.batch_mean={BATCH_MEAN!r}",
        ]
    else:
        o.append(f"traffic.0.arrivals.rate={calls_per_s!r}")
    if ctx.quick:
        o.append('duration="120s"')
    sc = Scenario.load(ctx.scenario_path("pcn/single_link.toml")).with_overrides(*o)
    return sc, admissible


def _admitted(res: Result, admissible: float, warmup_s: float) -> dict[str, float]:
    """Over-admission % and the sd ratio of the bottleneck's 50 ms rate samples."""
    d = res.metric("i0->e0", "departures")
    d = d[d["t_s"] >= warmup_s - 1e-9]
    v = d["value"].to_numpy()
    rates = (v[1:] - v[:-1]) * PACKET * 8 / SAMPLE_S
    mean = float(rates.mean()) if len(rates) else math.nan
    sd = float(rates.std()) if len(rates) else math.nan
    return {"over_admission_pct": (mean / admissible - 1) * 100, "sd_ratio": sd / admissible, "mean_bps": mean}


def run(ctx: Context) -> Outcome:
    """Table 3.1 (and, as they are built, Tables 3.2-3.6 and §3.4-3.5)."""
    links = ["T3"] if ctx.quick else list(LINKS)
    arrivals = ["POISSON"] if ctx.quick else list(ARRIVALS)
    warmup = 30.0 if ctx.quick else 60.0
    plan: list[tuple[str, Scenario, int]] = []
    keys: list[tuple[str, str, str, float]] = []
    for link in links:
        for model in MODELS:
            for arr in arrivals:
                sc, adm = _scenario(ctx, link, model, arr)
                for seed in ctx.seeds:
                    plan.append((f"t3_1_{link}_{model}_{arr}".lower(), sc, seed))
                    keys.append((link, model, arr, adm))
    ctx.log(f"pcn: {len(plan)} runs")
    results = ctx.run_many(plan)
    cells: dict[tuple[str, str, str], list[dict[str, float]]] = {}
    for (link, model, arr, adm), res in zip(keys, results, strict=True):
        cells.setdefault((link, model, arr), []).append(_admitted(res, adm, warmup))
    est = {
        k: {m: Estimate.of(r[m] for r in runs) for m in ("over_admission_pct", "sd_ratio")} for k, runs in cells.items()
    }
    judged = len(ctx.seeds) >= 5
    claims: list[Claim] = []
    for model, tol in CLAIM_1.items():
        vals = {link: est[(link, model, "POISSON")]["over_admission_pct"] for link in links}
        worst_link = max(vals, key=lambda k: vals[k].mean)
        worst = vals[worst_link]
        ok = worst.mean <= tol
        claims.append(
            Claim(
                id=f"table3.1-{model.lower()}-poisson",
                text=f"single link, {model} voice, Poisson calls at 5x, T3-OC3: over-admission <= {tol:g} % "
                "(Table 3.1)",
                paper=f"{PAPER_3_1[(model, 'POISSON')][0]:g} % (worst of T3, 100 Mb/s, OC3)",
                measured=", ".join(f"{k} {v.fmt('.2f')} %" for k, v in vals.items()),
                tolerance=f"<= {tol:g} % on every link (mean over seeds)",
                holds=(ok if judged else None),
                explanation=""
                if judged and ok
                else (
                    f"{worst_link}: {worst.mean:.2f} % > {tol:g} %"
                    if judged
                    else "judged over at least 5 seeds (the issue's rule); this run has "
                    f"{len(ctx.seeds)} and covers {', '.join(links)} only"
                ),
            )
        )
    claims.append(
        Claim(
            id="table3.5-grid",
            text="Table 3.5: CBR, VBR, MIX, VTR within -3 % / +2 % over the weight x CLE grid",
            paper="see docs/reproductions/pcn.md",
            measured="not run",
            tolerance="the issue's",
            holds=None,
            explanation="not built yet: needs VTR traffic and the RTT and parking-lot grids "
            "(issue 13 remains open; docs/reproductions/pcn.md lists what is missing)",
        )
    )
    rows = []
    for (link, model, arr), m in sorted(est.items()):
        p = PAPER_3_1[(model, arr)]
        rows.append(
            f"| {link} | {model} | {arr} | {m['over_admission_pct'].fmt('.2f')} % | {m['sd_ratio'].fmt('.4f')} | "
            f"{p[0]:g} % | {p[1]:g} |"
        )
    table = "\n".join(
        [
            "Over-admission percentage and the standard-deviation ratio of the 50 ms rate samples, mean over "
            f"seeds {', '.join(map(str, ctx.seeds))} (± 95 % CI); the seed gives the worst case over T3, "
            "100 Mb/s and OC3.",
            "",
            "| link | traffic | arrivals | over-admission | sd / admissible | seed: over-admission | seed: sd ratio |",
            "|---|---|---|---|---|---|---|",
            *rows,
        ]
    )
    data: dict[str, Any] = {
        "table3_1": {
            f"{link}/{model}/{arr}": {k: v.to_json() for k, v in m.items()} for (link, model, arr), m in est.items()
        },
    }
    return Outcome(claims=claims, data=data, sections=[("Table 3.1: single link at 5x overload", table)])
