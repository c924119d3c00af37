"""The MACE reproduction's claims (module docstring of :mod:`qoslab.reproduce.mace`
for the table): each is one function of the runs' measures, with the
tolerance fixed before any run."""

from __future__ import annotations

import math

from ..framework import Claim, Context
from ..stats import Estimate
from .params import (
    ALLOCATION,
    BATCH_TOLERANCE_PTS,
    ESTIMATOR_WINDOW_S,
    FIG8_BAND_PTS,
    FIG9_LOAD,
    PAPER_TABLE2,
    RESERVE,
    S3_DURATION,
    WARMUP_S,
)
from .runs import Departures, Fig9, Measures, MixedLoss, Scenario1, Table2, batch_prediction


def pct(x: float) -> str:
    """``x`` as a percentage with two decimals, ``n/a`` if not finite."""
    return f"{x * 100:.2f}%" if math.isfinite(x) else "n/a"


def seed_mean(runs: list[Measures], key: str) -> float:
    """The mean of ``key`` over the seeds' measures."""
    return Estimate.of(r[key] for r in runs).mean


def claims(ctx: Context, s1: Scenario1, t2: Table2, f9: Fig9, dep: Departures, mixed: MixedLoss) -> list[Claim]:
    """Every claim, in the report's order. The MBAC claims need three estimator windows after
    the warm-up, which both the quick and the full run give."""
    duration_s = float(S3_DURATION[ctx.quick].removesuffix("s"))
    enough = (duration_s - WARMUP_S[ctx.quick]) >= 3 * ESTIMATOR_WINDOW_S
    return [
        _cl_loss_far_below_be(s1),
        _cl_interarrivals_tight(s1, f9),
        _ssac_admits_floor(t2),
        _mbac_beats_ssac(t2, enough),
        _mbac_load_within_allocation(t2, enough),
        _mbac_cl_service_comparable(t2, enough),
        _mbac_departures_batch_admission(dep),
        _fig7_mixed_cl_loss_below_be(mixed),
        _fig8_bg_loss_lower_with_onoff_cl(s1, mixed),
    ]


def _cl_loss_far_below_be(s1: Scenario1) -> Claim:
    congested = [ld for ld in s1["loads"] if ld >= 100]
    rows, ok = [], True
    for ld in congested:
        cl = seed_mean(s1["runs"][f"mace_{ld}"], "loss_cl_class")
        be = seed_mean(s1["runs"][f"mace_{ld}"], "loss_be_group")
        be0 = seed_mean(s1["runs"][f"nomace_{ld}"], "loss_testing")
        good = cl <= 0.1 * be and be <= 1.5 * be0
        ok &= good
        rows.append(f"{ld}%: CL {pct(cl)}, BE with MACE {pct(be)}, BE without {pct(be0)}")
    return Claim(
        id="cl-loss-far-below-be",
        text="Under congestion (background >= 100%) CL packets are rarely lost, and MACE costs BE little",
        paper="Fig. 6: CL loss at most just over 1% (mostly during recognition); BE without MACE up to 30%; "
        "BE with MACE not significantly worse than without",
        measured="; ".join(rows),
        tolerance="CL class loss <= 0.1 x BE loss with MACE and BE with MACE <= 1.5 x BE without, every load >= 100%",
        holds=ok,
        explanation=""
        if ok
        else "at some load CL loss was not an order of magnitude below BE loss, or MACE "
        "raised BE loss by more than half (see the per-load figures).",
    )


def _cl_interarrivals_tight(s1: Scenario1, f9: Fig9) -> Claim:
    """Judged at the paper's Fig. 9 load with the testbed's host timing jitter; the exact-time
    sources and scenario 1's loads are reported beside it."""
    share = {v: (seed_mean(r, "share40_cl"), seed_mean(r, "share40_be")) for v, r in f9["runs"].items()}
    cl_s, be_s = share["jitter"]
    ok = cl_s >= 0.95 and be_s <= cl_s - 0.10
    ex_cl, ex_be = share["exact"]
    others = ", ".join(
        f"{ld}% {pct(seed_mean(s1['runs'][f'mace_{ld}'], 'share40_cl'))} / "
        f"{pct(seed_mean(s1['runs'][f'mace_{ld}'], 'share40_be'))}"
        for ld in s1["loads"]
    )
    why = ""
    if not ok:
        sd = {v: seed_mean(r, "delay_sd_be_ms") for v, r in f9["runs"].items()}
        j130 = f9["runs"].get(f"jitter_{FIG9_LOAD}")
        e130 = s1["runs"].get(f"mace_{FIG9_LOAD}")
        overload = (
            f" At {FIG9_LOAD}% background (overload) the jitter moves BE from "
            f"{pct(seed_mean(e130, 'share40_be'))} to {pct(seed_mean(j130, 'share40_be'))} while the BE delay's "
            f"standard deviation stays {seed_mean(e130, 'delay_sd_be_ms'):.1f} -> "
            f"{seed_mean(j130, 'delay_sd_be_ms'):.1f} ms: with exact periodic sources consecutive BE packets of a "
            "flow meet nearly the same queue, because its state repeats every 40 ms (the periodicity the "
            "paper's Fig. 5 warns of), so their delays differ little even where the delay itself varies."
            if j130 and e130
            else ""
        )
        lost = max(seed_mean(f9["runs"]["jitter"], k) for k in ("loss_be_group", "loss_bg"))
        why = (
            (
                f"BE stays within 10 points of CL at Fig. 9's load with and without the jitter. Measured: at 99% "
                f"load the BE flows' one-way delay hardly varies (standard deviation {sd['exact']:.2f} ms with "
                f"exact send times, {sd['jitter']:.2f} ms with the jitter; BE and background loss at most "
                f"{pct(lost)}), far inside the "
                "band of ±10 ms, and the jitter, at most one 10 ms tick per packet, keeps an inter-arrival "
                "inside 30-50 ms by itself." + overload + " The paper's 58% needs BE delays that vary by "
                "tens of ms at this load, which neither the model's queue nor a one-tick timer produces."
            )
            if cl_s >= 0.95
            else "CL misses its 95% bound: see the Fig. 9 section."
        )
    return Claim(
        id="cl-interarrivals-tight",
        text="CL CBR packets arrive close to their 40 ms spacing; BE packets do not",
        paper="Fig. 9 (§5.2: 20 background sources, about 68% background load, 99% in all): 99% of CL and "
        "58% of BE inter-arrivals within 25% of 40 ms (gaps >= 80 ms left out)",
        measured=f"{f9['bg_sources']} background sources ({f9['background_pct']:.0f}% background, "
        f"{f9['total_pct']:.0f}% in all), with host timing jitter (10 ms): CL {pct(cl_s)}, BE {pct(be_s)}; "
        f"exact send times: CL {pct(ex_cl)}, BE {pct(ex_be)} (scenario 1's loads, exact, CL / BE: {others}; "
        + (
            f"{FIG9_LOAD}% with the jitter: {pct(share[f'jitter_{FIG9_LOAD}'][0])} / "
            f"{pct(share[f'jitter_{FIG9_LOAD}'][1])})"
            if f"jitter_{FIG9_LOAD}" in share
            else ")"
        ),
        tolerance="with host timing jitter at Fig. 9's load: CL >= 95% and BE at least 10 points below CL",
        holds=ok,
        explanation=why,
    )


def _ssac_admits_floor(t2: Table2) -> Claim:
    single = [m for m in t2 if m != "mixed"]
    rows, ok = [], True
    for m in single:
        want = math.floor(ALLOCATION[m] / RESERVE[m] + 1e-9)
        got = t2[m]["ssac"]["admitted_max"]
        ok &= got == want
        rows.append(f"{m.upper()} {got} (floor {want})")
    return Claim(
        id="ssac-admits-floor",
        text="SSAC admits exactly floor(allocation / r) concurrent flows",
        paper="Table 2 SSAC flows: "
        + ", ".join(f"{m.upper()} {PAPER_TABLE2[m][1]}" for m in single if m in PAPER_TABLE2),
        measured="largest concurrently admitted count after the warm-up: " + ", ".join(rows),
        tolerance="equal, every single-model run",
        holds=ok,
        explanation=""
        if ok
        else "some model's SSAC peak differs from the floor: candidates did not keep "
        "the allocation full, or the stale timeout freed reservations late.",
    )


def _mbac_beats_ssac(t2: Table2, enough: bool) -> Claim:
    rows, ok = [], True
    for m in t2:
        s, b = t2[m]["ssac"], t2[m]["mbac"]
        good = b["alive_mean"] > s["alive_mean"] and b["utilization"] > s["utilization"]
        ok &= good
        rows.append(
            f"{m.upper()} SSAC {pct(s['utilization'])} / {s['alive_mean']:.1f} flows, "
            f"MBAC {pct(b['utilization'])} / {b['alive_mean']:.1f} flows"
        )
    return Claim(
        id="mbac-beats-ssac",
        text="MBAC admits more flows and uses more of the CL allocation than SSAC, for every source model",
        paper="Table 2 (%util / flows, SSAC -> MBAC): "
        + "; ".join(f"{m.upper()} {p[0]}/{p[1]} -> {p[2]}/{p[3]}" for m, p in PAPER_TABLE2.items()),
        measured="; ".join(rows),
        tolerance="MBAC > SSAC in time-averaged admitted flows alive and in mean utilization, every model run",
        holds=ok if enough else None,
        explanation=""
        if ok and enough
        else (
            "needs three estimator windows after the warm-up"
            if not enough
            else "for some model MBAC did not exceed SSAC: see the Table 2 figure."
        ),
    )


def _mbac_load_within_allocation(t2: Table2, enough: bool) -> Claim:
    rows, ok = [], True
    for m in t2:
        b = t2[m]["mbac"]
        good = b["sample_p95_bps"] <= b["allocation_bps"]
        ok &= good
        rows.append(f"{m.upper()} p95 {b['sample_p95_bps'] / 1e6:.3f} of {b['allocation_bps'] / 1e6:.1f} Mb/s")
    return Claim(
        id="mbac-load-within-allocation",
        text="Under MBAC the measured CL load stays within its allocation",
        paper="§4.2: a properly working MBAC bounds CL usage under the allotted amount (Fig. 14)",
        measured="; ".join(rows),
        tolerance="95th percentile of the 5 s samples after the warm-up <= allocation, every model",
        holds=ok if enough else None,
        explanation=""
        if ok and enough
        else (
            "needs three estimator windows after the warm-up"
            if not enough
            else "some model's CL load exceeded the allocation in more than 5% of the samples: the estimate "
            "(window maximum) lagged a rise of the admitted flows' activity."
        ),
    )


def _mbac_cl_service_comparable(t2: Table2, enough: bool) -> Claim:
    rows, ok = [], True
    for m in t2:
        s, b = t2[m]["ssac"], t2[m]["mbac"]
        ls, lb = s["loss_cl_class"], b["loss_cl_class"]
        good = (lb <= ls + 0.01) if math.isfinite(lb) and math.isfinite(ls) else False
        if m == "mixed":
            good &= b["share64"] >= s["share64"] - 0.05
            rows.append(
                f"MIXED CL loss {pct(ls)} -> {pct(lb)}, 64 kb/s within 25%: {pct(s['share64'])} -> "
                f"{pct(b['share64'])}, 256 kb/s: {pct(s['share256'])} -> {pct(b['share256'])}"
            )
        else:
            rows.append(f"{m.upper()} CL loss {pct(ls)} -> {pct(lb)}")
        ok &= good
    return Claim(
        id="mbac-cl-service-comparable",
        text="MBAC's higher utilization leaves CL loss and delay variation comparable to SSAC's",
        paper="Figs. 15-16: inter-arrival CDFs almost identical for the 256 kb/s flows (8% more within 10 ms "
        "under SSAC), slightly worse for 64 kb/s; loss of CL just under 1%",
        measured="SSAC -> MBAC: " + "; ".join(rows),
        tolerance="CL class loss MBAC <= SSAC + 1 point; (mix) 64 kb/s within-25% share MBAC >= SSAC - 5 points",
        holds=ok if enough else None,
        explanation=""
        if ok and enough
        else (
            "needs three estimator windows after the warm-up"
            if not enough
            else "MBAC's CL service was measurably worse than SSAC's beyond the tolerance."
        ),
    )


def _mbac_departures_batch_admission(dep: Departures) -> Claim:
    rows, ok = [], True
    w = dep["window_s"]
    for m, runs in dep["runs"].items():
        none = runs["none"]
        parts = [f"{m.upper()} none {pct(none['utilization'])} ({none['alive_mean']:.1f} flows)"]
        for r in runs.values():
            if r["lifetime_s"] is None:
                continue
            want = batch_prediction(none, r["lifetime_s"], w, m)
            good = abs(r["utilization"] - want) * 100 <= BATCH_TOLERANCE_PTS
            ok &= good
            parts.append(
                f"L = {r['lifetime_s']:g} s: {pct(r['utilization'])} ({r['alive_mean']:.1f} flows) against "
                f"predicted {pct(want)}"
            )
        rows.append(", ".join(parts))
    return Claim(
        id="mbac-departures-batch-admission",
        text="With departures MBAC admits in one batch per estimator window, so its utilization falls "
        "below the no-departure level as u_none / (1 + (T·S/L)·r/m) predicts",
        paper="Table 2 (EXP1 89.6% / 93 flows, POO1 72.5% / 83, lifetimes exp(1000 s)); the paper does not "
        "discuss departures",
        measured=f"MBAC v = 0.95, T·S = {w:g} s, after {dep['warmup_s']:g} s of {dep['duration']}: " + "; ".join(rows),
        tolerance=f"|measured - predicted| <= {BATCH_TOLERANCE_PTS:g} points of μ for every model and finite "
        "lifetime (m = u_none·μ / N_none, the per-flow load of the run without departures)",
        holds=ok,
        explanation=""
        if ok
        else "the measured utilization differs from the batch-admission prediction by more than the "
        "tolerance for some model or lifetime: the prediction ignores the noise headroom's change with N "
        "and the flows that leave during a batch (see the departures section).",
    )


def _fig7_mixed_cl_loss_below_be(mixed: MixedLoss) -> Claim:
    congested = [ld for ld in mixed["loads"] if ld >= 100]
    rows, ok = [], True
    for ld in congested:
        runs = mixed["runs"][str(ld)]
        cl, be = seed_mean(runs, "loss_cl_class"), seed_mean(runs, "loss_be_group")
        good = math.isfinite(cl) and math.isfinite(be) and cl <= 0.1 * be
        ok &= good
        rows.append(f"{ld}%: CL {pct(cl)} (CL-port flows {pct(seed_mean(runs, 'loss_cl_group'))}), BE {pct(be)}")
    return Claim(
        id="fig7-mixed-cl-loss-below-be",
        text="With mixed CL source models (CBR, POO1, POO3, EXP1) CL packets are rarely lost against BE",
        paper="Fig. 7 (§5.1): traffic under CL service experiences lower loss than under BE service",
        measured="; ".join(rows),
        tolerance="CL class loss <= 0.1 x the BE-port flows' loss at every background load >= 100%",
        holds=ok,
        explanation=""
        if ok
        else "at some load the mixed CL class lost more than a tenth of the BE-port flows' loss (see the "
        "Figs. 7-8 section).",
    )


def _fig8_bg_loss_lower_with_onoff_cl(s1: Scenario1, mixed: MixedLoss) -> Claim:
    lo, hi = FIG8_BAND_PTS
    congested = [ld for ld in mixed["loads"] if ld >= 100 and f"mace_{ld}" in s1["runs"]]
    rows, ok = [], True
    for ld in congested:
        cbr = seed_mean(s1["runs"][f"mace_{ld}"], "loss_bg")
        onoff = seed_mean(mixed["runs"][str(ld)], "loss_bg")
        d = (cbr - onoff) * 100
        good = lo <= d <= hi
        ok &= good
        rows.append(f"{ld}%: {pct(cbr)} -> {pct(onoff)} ({d:+.1f} points lower)")
    return Claim(
        id="fig8-bg-loss-lower-with-onoff-cl",
        text="Background loss is lower with ON/OFF CL sources than with CBR ones",
        paper="Fig. 8 (§5.1): background loss with the mixed ON/OFF CL sources lower than in scenario 1 "
        "(CBR CL sources) by around 5% to 10%",
        measured="background loss, scenario 1 (CBR) -> mixed: " + "; ".join(rows),
        tolerance=f"lower by {lo:g} to {hi:g} points at every background load >= 100%",
        holds=ok,
        explanation=""
        if ok
        else "the difference follows the testing flows' offered load, which the ON/OFF duty cycles lower: "
        + "; ".join(
            f"{ld}%: 40 CBR flows {seed_mean(s1['runs'][f'mace_{ld}'], 'testing_offered_bps') / 1e6:.2f} Mb/s, "
            f"mixed {seed_mean(mixed['runs'][str(ld)], 'testing_offered_bps') / 1e6:.2f} Mb/s"
            for ld in congested
        )
        + "; the same difference of offered load is a larger share of the loss where the overload is "
        "smaller, so the gap shrinks as the background load grows and leaves the paper's band at some load.",
    )
