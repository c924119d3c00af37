"""The MACE reproduction's claims (module docstring of :mod:`qoslab.reproduce.mace`
for the table): each is one function of the runs' measures, with the
tolerance fixed before any run."""

from __future__ import annotations

import math

from ..framework import Claim, Context
from ..stats import Estimate
from .measures import share_within
from .params import ALLOCATION, ESTIMATOR_WINDOW_S, FIG9_LOAD, PAPER_TABLE2, RESERVE, S3_DURATION, WARMUP_S
from .runs import Measures, Scenario1, Table2


def pct(x: float) -> str:
    """``x`` as a percentage with two decimals, ``n/a`` if not finite."""
    return f"{x * 100:.2f}%" if math.isfinite(x) else "n/a"


def seed_mean(runs: list[Measures], key: str) -> float:
    """The mean of ``key`` over the seeds' measures."""
    return Estimate.of(r[key] for r in runs).mean


def claims(ctx: Context, s1: Scenario1, t2: Table2) -> list[Claim]:
    """Every claim, in the report's order. The MBAC claims need three estimator windows after
    the warm-up, which both the quick and the full run give."""
    duration_s = float(S3_DURATION[ctx.quick].removesuffix("s"))
    enough = (duration_s - WARMUP_S[ctx.quick]) >= 3 * ESTIMATOR_WINDOW_S
    return [
        _cl_loss_far_below_be(s1),
        _cl_interarrivals_tight(s1),
        _ssac_admits_floor(t2),
        _mbac_beats_ssac(t2, enough),
        _mbac_load_within_allocation(t2, enough),
        _mbac_cl_service_comparable(t2, enough),
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


def _cl_interarrivals_tight(s1: Scenario1) -> Claim:
    h = s1["hist"]["mace"]
    cl_s, be_s = share_within(h["cl"], 0.040), share_within(h["be"], 0.040)
    ok = cl_s >= 0.95 and be_s <= cl_s - 0.10
    return Claim(
        id="cl-interarrivals-tight",
        text="CL CBR packets arrive close to their 40 ms spacing; BE packets do not",
        paper="Fig. 9: 99% of CL and 58% of BE inter-arrivals within 25% of 40 ms (gaps >= 80 ms left out)",
        measured=f"at {FIG9_LOAD}% background: CL {pct(cl_s)}, BE {pct(be_s)} (other loads, CL / BE: "
        + ", ".join(
            f"{ld}% {pct(seed_mean(s1['runs'][f'mace_{ld}'], 'share40_cl'))} / "
            f"{pct(seed_mean(s1['runs'][f'mace_{ld}'], 'share40_be'))}"
            for ld in s1["loads"]
        )
        + ")",
        tolerance="CL >= 95% and BE at least 10 points below CL",
        holds=ok,
        explanation=""
        if ok
        else (
            "CL meets its bound; BE" + (" stays close to CL" if be_s > cl_s - 0.10 else " misses") + ": under "
            "persistent overload the 50-packet drop-tail BE share of the buffer stays almost full, so a BE "
            "packet's queueing delay is nearly constant and surviving BE packets keep close to their 40 ms "
            "spacing (losses make >= 80 ms gaps, which are left out). The paper's 58% reflects a testbed "
            "whose BE delay varied more; see the shares at the other loads."
        ),
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
        good = b["admitted_mean"] > s["admitted_mean"] and b["utilization"] > s["utilization"]
        ok &= good
        rows.append(
            f"{m.upper()} SSAC {pct(s['utilization'])} / {s['admitted_mean']:.1f} flows, "
            f"MBAC {pct(b['utilization'])} / {b['admitted_mean']:.1f} flows"
        )
    return Claim(
        id="mbac-beats-ssac",
        text="MBAC admits more flows and uses more of the CL allocation than SSAC, for every source model",
        paper="Table 2 (%util / flows, SSAC -> MBAC): "
        + "; ".join(f"{m.upper()} {p[0]}/{p[1]} -> {p[2]}/{p[3]}" for m, p in PAPER_TABLE2.items()),
        measured="; ".join(rows),
        tolerance="MBAC > SSAC in time-averaged admitted flows and in mean utilization, every model run",
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
