"""The MACE reproduction's figures: the paper's Figs. 6, 9-16 and Table 2 analogues, one function
each, written beside ``report.md``."""

from __future__ import annotations

from itertools import accumulate
from typing import Any

from ...stats import Estimate
from .. import figures
from ..framework import Context, Figure, pct
from .claims import seed_mean
from .measures import Hist, share_within
from .params import ALLOCATION, FIG14_MODELS, SWEEP_POINTS, WARMUP_S
from .runs import Departures, Fig9, Fig12_13, MixedLoss, Runs, Scenario1, Scenario2, Table2, Table2Run, batch_prediction

LOAD_AXIS = "background offered load (% of 10 Mb/s)"
INTERARRIVAL_AXIS = "inter-arrival time (ms), < 80 ms"


def plots(ctx: Context, r: Runs) -> list[Figure]:
    """Draws every figure the runs allow (the mixed CDFs need the mixed model, the v sweep a full run)."""
    one = {m: {k: runs[0] for k, runs in x.items()} for m, x in r.t2.items()}  # the first seed's runs
    model = next((m for m in FIG14_MODELS if m in one), None)
    return [
        fig6(ctx, r.s1),
        fig7_8(ctx, r.s1, r.mixed),
        fig9(ctx, r.f9),
        fig12_13(ctx, r.f1213),
        departures(ctx, r.dep),
        fig10_11(ctx, r.s2),
        cdf_poo1_replay(ctx, r.s2),
        *([cdf_mixed(ctx, one["mixed"])] if "mixed" in one else []),
        *([fig14(ctx, model, one[model])] if model else []),
        table2_utilization(ctx, r.t2),
        *([v_sweep(ctx, r.sweep)] if r.sweep else []),
    ]


def _share_bars(ax: Any, hist: Hist, label: str, suffix: str = "", **style: Any) -> None:
    """A histogram as bars of its packets' share (%), labelled with its share within 25% of 40 ms."""
    tot = sum(hist.values()) or 1.0
    xs, ys = [t * 1000 for t in hist], [n / tot * 100 for n in hist.values()]
    ax.bar(xs, ys, width=1.0, align="edge", label=f"{label}: {pct(share_within(hist, 0.040))}{suffix}", **style)


def fig6(ctx: Context, s1: Scenario1) -> Figure:
    fig, ax = figures.new_axes(7.0, 4.5)
    loads = s1["loads"]
    for variant, key, style, label in (
        ("mace", "loss_cl_group", "o-", "CL with MACE"),
        ("mace", "loss_be_group", "s-", "BE with MACE"),
        ("nomace", "loss_testing", "^-", "BE without MACE"),
    ):
        ax.plot(loads, [seed_mean(s1["runs"][f"{variant}_{ld}"], key) * 100 for ld in loads], style, label=label)
    ax.set(xlabel=LOAD_AXIS, ylabel="packet loss (%)", title="Fig. 6 analogue: CBR 64 kb/s loss vs background load")
    ax.legend(fontsize=8)
    return ctx.figure(
        fig,
        "fig6_loss_vs_load.png",
        "Loss of 20 CL CBR connections (every packet they sent), 20 BE CBR connections with "
        "MACE and the 40 connections without MACE, against background load, mean over seeds.",
    )


def fig9(ctx: Context, f9: Fig9) -> Figure:
    fig, axes = figures.new_axes(10.0, 4.5, 1, 2, sharey=True)
    panels = {"exact": "exact send times", "jitter": "host timing jitter (10 ms tick)"}
    for ax, (variant, title) in zip(axes, panels.items(), strict=True):
        for g, lab in (("cl", "CL"), ("be", "BE")):
            _share_bars(ax, f9["hist"][variant][g], lab, " within 25%", alpha=0.6)
        ax.set(yscale="log", xlabel=INTERARRIVAL_AXIS, title=title)
        ax.legend(fontsize=8)
    axes[0].set_ylabel("packets (%)")
    fig.suptitle(f"Fig. 9 analogue: CBR 64 kb/s inter-arrivals, {f9['bg_sources']} background sources")
    return ctx.figure(
        fig,
        "fig9_interarrival.png",
        f"Aggregate inter-arrival histograms of the CL and BE CBR flows (scenario 1 with MACE, "
        f"{f9['bg_sources']} background sources: {f9['background_pct']:.0f}% background, "
        f"{f9['total_pct']:.0f}% in all), with exact send times and with the host timing jitter.",
    )


def fig7_8(ctx: Context, s1: Scenario1, mixed: MixedLoss) -> Figure:
    fig, (a7, a8) = figures.new_axes(10.0, 4.5, 1, 2)
    loads, runs = mixed["loads"], mixed["runs"]
    for key, style, label in (
        ("loss_cl_class", "o-", "CL (class)"),
        ("loss_cl_group", "x--", "CL-port flows"),
        ("loss_be_group", "s-", "BE-port flows"),
    ):
        a7.plot(loads, [seed_mean(runs[str(ld)], key) * 100 for ld in loads], style, label=label)
    cbr = [seed_mean(s1["runs"][f"mace_{ld}"], "loss_bg") * 100 for ld in loads]
    a8.plot(loads, cbr, "o-", label="CBR CL (scen. 1)")
    a8.plot(loads, [seed_mean(runs[str(ld)], "loss_bg") * 100 for ld in loads], "s-", label="mixed ON/OFF CL")
    for ax, title in ((a7, "Fig. 7: mixed CL models, CL vs BE loss"), (a8, "Fig. 8: background loss")):
        ax.set(xlabel=LOAD_AXIS, title=title)
        ax.legend(fontsize=8)
    a7.set_ylabel("packet loss (%)")
    return ctx.figure(
        fig,
        "fig7_8_mixed_loss.png",
        "Figs. 7-8 analogue: loss of the CL and BE flows of scenario 4's mixed models (CBR, POO1, POO3, "
        "EXP1) with MACE, and the background's loss with them against scenario 1's CBR CL flows.",
    )


def _cdf_panels(axes: Any, panels: dict[str, list[tuple[Hist, str]]], xlabel: str = INTERARRIVAL_AXIS) -> None:
    """Inter-arrival CDFs, a panel per title with its (histogram, label) lines; "CDF" on the first's y axis."""
    for ax, (title, hists) in zip(axes, panels.items(), strict=True):
        for hist, label in hists:
            total = sum(hist.values()) or 1.0
            ax.plot([(t + 0.001) * 1000 for t in hist], [n / total for n in accumulate(hist.values())], label=label)
        ax.set(title=title, xlabel=xlabel)
        ax.legend(fontsize=8)
    axes[0].set_ylabel("CDF")


def fig12_13(ctx: Context, f1213: Fig12_13) -> Figure:
    fig, axes = figures.new_axes(10.0, 4.5, 1, 2, sharey=True)
    panels = {f"{k} kb/s connections": [(f1213["hist"][g][k], g.upper()) for g in ("cl", "be")] for k in ("256", "64")}
    _cdf_panels(axes, panels)
    fig.suptitle("Figs. 12-13 analogue: mixed source models, CL against BE")
    return ctx.figure(
        fig,
        "fig12_13_interarrival_cdf.png",
        "Inter-arrival CDFs of the 256 kb/s (POO2, EXP2) and 64 kb/s (CBR, POO3, EXP1) connections under CL "
        f"and BE (scenario 4, SSAC with enough allocation, 130% background; first seed, {f1213['duration']}).",
    )


def departures(ctx: Context, dep: Departures) -> Figure:
    fig, ax = figures.new_axes(7.0, 4.5)
    for i, (m, runs) in enumerate(dep["runs"].items()):
        none = runs["none"]
        finite = [r for r in runs.values() if r["lifetime_s"] is not None]
        xs = [float(r["lifetime_s"] or 0.0) for r in finite]
        ax.plot(xs, [r["utilization"] * 100 for r in finite], "o", color=f"C{i}", label=f"{m.upper()} measured")
        want = [batch_prediction(none, x, dep["window_s"], m) * 100 for x in xs]
        ax.plot(xs, want, "x--", color=f"C{i}", label=f"{m.upper()} predicted (batch admission)")
        ax.axhline(none["utilization"] * 100, color=f"C{i}", lw=0.8, ls=":", label=f"{m.upper()} no departures")
    ax.set(xscale="log", xlabel="mean flow lifetime L (s)", ylabel="utilization of the CL allocation (%)")
    ax.set_title(f"MBAC with departures (T·S = {dep['window_s']:g} s)")
    ax.legend(fontsize=7)
    return ctx.figure(
        fig,
        "departures.png",
        "MBAC's utilization against the candidates' mean lifetime, measured and as batch admission predicts "
        "from the run without departures (dotted).",
    )


def fig10_11(ctx: Context, s2: Scenario2) -> Figure:
    fig, axes = figures.new_axes(9.0, 4.0, 1, 2, sharey=True)
    gen, rec = s2["hist"]["generation"], s2["hist"]["mace"]
    for ax, g, title in ((axes[0], "be", "Fig. 10: BE-port POO1"), (axes[1], "cl", "Fig. 11: CL-port POO1 (replayed)")):
        _share_bars(ax, gen[g], "generated (sender)", fill=False, edgecolor="k", lw=1.2)
        _share_bars(ax, rec[g], "arrived (receiver, MACE)", alpha=0.5)
        ax.set(yscale="log", xlabel="inter-time (ms), < 80 ms", title=title)
        ax.legend(fontsize=7, title="within 25% of 40 ms", title_fontsize=7)
    axes[0].set_ylabel("packets (%)")
    same = all(s2["generation_matches"].values())
    return ctx.figure(
        fig,
        "fig10_11_generation_vs_arrival.png",
        "Figs. 10-11 analogue: generation inter-times at the senders against inter-arrival times at "
        "the receiver (scenario 2 with MACE), BE-port and replayed CL-port POO1 flows. Generation "
        "times come from the same replay over a 10 Gb/s bottleneck, where no packet waits; "
        + ("its flows sent exactly the packets of" if same else "WARNING: its flows did not send the same packets as")
        + " the measured runs.",
    )


def cdf_poo1_replay(ctx: Context, s2: Scenario2) -> Figure:
    fig, ax = figures.new_axes(7.0, 4.5)
    lines = [
        (s2["hist"][v]["cl"], f"replayed CL-port POO1 flows, {lab}")
        for v, lab in (("mace", "with MACE"), ("nomace", "without MACE"))
    ]
    _cdf_panels([ax], {"Figs. 10-11 analogue: POO1 record and replay": lines})
    return ctx.figure(
        fig, "cdf_poo1_replay.png", "Inter-arrival CDF of the same recorded POO1 flows replayed with and without MACE."
    )


def cdf_mixed(ctx: Context, mixed: dict[str, Table2Run]) -> Figure:
    fig, axes = figures.new_axes(9.0, 4.0, 1, 2)
    ssac, mbac = mixed["ssac"], mixed["mbac"]
    panels = {
        "256 kb/s CL (POO2, EXP2)": [(ssac["hist256"], "SSAC"), (mbac["hist256"], "MBAC")],
        "64 kb/s CL (CBR, POO3, EXP1)": [(ssac["hist64"], "SSAC"), (mbac["hist64"], "MBAC")],
    }
    _cdf_panels(axes, panels, "inter-arrival (ms), < 80 ms")
    return ctx.figure(
        fig,
        "cdf_mixed_ssac_mbac.png",
        "Figs. 12-13, 15-16 analogue: inter-arrival CDFs of the mixed CL flows under SSAC and MBAC.",
    )


def fig14(ctx: Context, model: str, runs: dict[str, Table2Run]) -> Figure:
    fig, ax = figures.new_axes(8.0, 4.5)
    p, q = runs["mbac"]["path"], runs["ssac"]["path"]
    mbps = {k: [x / 1e6 for x in p[k]] for k in ("sample_bps", "nu_hat_bps", "v_mu_bps")}
    ax.plot(p["t_s"], mbps["sample_bps"], ".-", ms=3, lw=0.8, label="MBAC: measured CL load (5 s samples)")
    ax.plot(p["t_s"], mbps["nu_hat_bps"], drawstyle="steps-post", label="MBAC: estimate ν̂")
    ax.plot(p["t_s"], mbps["v_mu_bps"], "--", label="v·μ (admission limit)")
    ax.plot(q["t_s"], [x / 1e6 for x in q["sample_bps"]], lw=0.8, alpha=0.6, label="SSAC: measured CL load")
    ax.axhline(ALLOCATION[model] / 1e6, color="k", lw=0.8, label="allocation μ")
    ax.axvline(WARMUP_S[ctx.quick], color="grey", lw=0.6, ls=":")
    ax.set(xlabel="time (s)", ylabel="Mb/s")
    ax.set_title(f"Fig. 14 analogue: {model.upper()} CL bandwidth under MBAC and SSAC")
    ax.legend(fontsize=7)
    return ctx.figure(
        fig,
        "fig14_mbac_sample_path.png",
        f"{model.upper()} (scenario 3): the MACE link's 5 s CL load samples, MBAC's estimate ν̂ "
        "after each sample and v·μ, from the events table's sample rows, with SSAC's samples "
        "for comparison (dotted: end of the warm-up).",
    )


def table2_utilization(ctx: Context, t2: Table2) -> Figure:
    fig, ax = figures.new_axes(8.0, 4.0)
    ms, xs = list(t2), range(len(t2))
    for dx, adm in ((-0.2, "ssac"), (0.2, "mbac")):
        u = [Estimate.of(r["utilization"] * 100 for r in t2[m][adm]).mean for m in ms]
        ax.bar([x + dx for x in xs], u, width=0.4, label=adm.upper())
    ax.set_xticks(list(xs), [m.upper() for m in ms])
    ax.set(ylabel="utilization of the CL allocation (%)", title="Table 2 analogue")
    ax.legend(fontsize=8)
    return ctx.figure(
        fig,
        "table2_utilization.png",
        "Mean CL load over the allocation after the warm-up, SSAC vs MBAC, mean over seeds.",
    )


def v_sweep(ctx: Context, sweep: dict[str, Table2Run]) -> Figure:
    fig, ax = figures.new_axes(7.0, 4.0)
    keys = [k for k in sweep if SWEEP_POINTS[k][1]]
    vs = [SWEEP_POINTS[k][0] for k in keys]
    ax.plot(vs, [sweep[v]["utilization"] * 100 for v in keys], "o-", label="utilization (%)")
    ax.plot(vs, [sweep[v]["admitted_mean"] for v in keys], "s-", label="admitted flows")
    c = sweep["0.95 continue"]
    ax.plot([0.95], [c["utilization"] * 100], "x", color="C0", label="utilization, window continues")
    ax.plot([0.95], [c["admitted_mean"]], "x", color="C1", label="flows, window continues")
    ax.set(xlabel="target utilization v", title="EXP1 under MBAC: sweep of v")
    ax.legend(fontsize=8)
    return ctx.figure(
        fig, "v_sweep.png", "EXP1 under MBAC: utilization of the allocation and admitted flows against v."
    )
