"""The MACE reproduction's report sections (what the cells do not carry: set-up, departures,
Fig. 9's variants, Figs. 7-8, the v sweep, interpretations) and ``results.json``'s data."""

from __future__ import annotations

from typing import Any

from ..fidelity import md_table
from ..framework import Context, pct
from .claims import seed_mean
from .params import (
    DEPARTURES,
    GENERATION_PROBE_RATE,
    MIXED_LOSS_MODELS,
    S1_DURATION,
    S3_DURATION,
    SWEEP_POINTS,
    WARMUP_S,
    bg_sources,
)
from .runs import Departures, Fig9, Fig12_13, MixedLoss, Runs, Scenario1, Scenario2, Table2, Table2Run, batch_prediction


def _strip(r: Table2Run) -> dict[str, Any]:
    """A Table 2 run without its histograms and series (drawn in the figures)."""
    return {k: v for k, v in r.items() if k not in ("hist64", "hist256", "rates", "path")}


def data(ctx: Context, r: Runs) -> dict[str, Any]:
    """The raw tables behind every claim, cell and figure (results.json's ``data``)."""
    return {
        "scenario1": {"loads": r.s1["loads"], "runs": r.s1["runs"]},
        "scenario2": {k: v for k, v in r.s2.items() if k != "hist"},
        "table2": {m: {a: [_strip(x) for x in runs] for a, runs in t.items()} for m, t in r.t2.items()},
        "fig12_13": {k: v for k, v in r.f1213.items() if k != "hist"},
        "v_sweep": {v: _strip(x) for v, x in r.sweep.items()},
        "fig9": {k: v for k, v in r.f9.items() if k != "hist"},
        "departures": r.dep,
        "mixed_loss": r.mixed,
        "warmup_s": WARMUP_S[ctx.quick],
    }


def sections(ctx: Context, r: Runs) -> list[tuple[str, str]]:
    """report.md's sections after the claims."""
    return [
        ("Setup", setup_md(ctx, r.s1, r.s2)),
        ("Table 2: flows in the classifier", table2_md(r.t2)),
        ("Departures and batch admission (MBAC)", departures_md(r.dep)),
        ("Fig. 9 at the paper's load, with and without host timing jitter", fig9_md(r.f9)),
        ("Figs. 7-8: mixed CL source models", mixed_md(r.s1, r.mixed)),
        ("Figs. 12-13: the CL class's loss at the link", fig12_13_md(r.f1213)),
        *([("Sweep of v and window restart (EXP1, MBAC)", sweep_md(r.sweep))] if r.sweep else []),
        ("Interpretations", interpretations_md(r.s2)),
    ]


def _means(runs: list[dict[str, float]]) -> dict[str, float]:
    """Each measure's mean over the seeds."""
    return {k: seed_mean(runs, k) for k in runs[0]}


def table2_md(t2: Table2) -> str:
    """The classifier's count beside Table 2's flows alive (the cells and `mbac-beats-ssac`)."""
    counts = "; ".join(
        f"{m.upper()} " + ", ".join(f"{a.upper()} {seed_mean(runs, 'admitted_mean'):.1f}" for a, runs in x.items())
        for m, x in t2.items()
    )
    return (
        "Table 2's flows are admitted flows still sending; the classifier also holds ended flows until "
        f"the 30 s stale timeout. Its time-averaged count after the warm-up, mean over seeds: {counts}."
    )


def departures_md(dep: Departures) -> str:
    """Utilization and flows against the candidates' lifetime, with the batch-admission prediction."""
    named = [(f"{m.upper()} ({k})", r, m, x["none"]) for m, x in dep["runs"].items() for k, r in x.items()]
    rows = []
    for name, r, m, none in named + [(k, r, "", None) for k, r in dep["extra"].items()]:
        life = r["lifetime_s"]
        want = "-" if life is None or none is None else pct(batch_prediction(none, life, dep["window_s"], m))
        rows.append(
            f"| {name} | {'none' if life is None else f'{life:g} s'} | {r['utilization'] * 100:.1f} | "
            f"{r['alive_mean']:.1f} | {r['admitted_mean']:.1f} | {want} | {r['p95_over_mu']:.3f} |"
        )
    intro = (
        f"MBAC, v = 0.95, S = 5 s, T·S = {dep['window_s']:g} s; {dep['duration']} runs judged after "
        f"{dep['warmup_s']:g} s; ON periods packetized by the ceil rule. Predicted: "
        "u_none / (1 + (T·S/L)·r/m) with m = u_none·μ / N_none (claim `mbac-departures-batch-admission`)."
    )
    head = ["run", "mean lifetime", "%util", "flows alive", "in classifier", "predicted %util", "p95 sample / μ"]
    return md_table(head, rows, intro)


def fig9_md(f9: Fig9) -> str:
    """Fig. 9's variants (the cells are the jitter run's shares), mean over seeds."""
    rows = []
    for v, runs in f9["runs"].items():
        label = {"exact": "exact", "jitter": "jitter"}.get(v, v.replace("jitter_", "jitter, ") + "% background")
        m = _means(runs)
        rows.append(
            f"| {label} | {pct(m['share40_cl'])} | {pct(m['share40_be'])} | {m['delay_sd_cl_ms']:.2f} / "
            f"{m['delay_sd_be_ms']:.2f} | {pct(m['loss_cl_class'])} | {pct(m['loss_be_group'])} | {pct(m['loss_bg'])} |"
        )
    intro = (
        f"Scenario 1 with MACE, {f9['bg_sources']} background sources ({f9['background_pct']:.0f}% of the "
        f"bottleneck in background, {f9['total_pct']:.0f}% with the 40 testing flows); host timing jitter on "
        "the CL, BE and background senders."
    )
    head = ["send times (20 sources unless said)", "CL within 25%", "BE within 25%", "delay s.d. CL / BE (ms)"]
    return md_table([*head, "CL class loss", "BE-port loss", "background loss"], rows, intro)


def mixed_md(s1: Scenario1, mixed: MixedLoss) -> str:
    """Figs. 7-8 per load: CL and BE loss with the mixed models; background loss against scenario 1."""
    rows = []
    for ld in mixed["loads"]:
        m, ref = _means(mixed["runs"][str(ld)]), _means(s1["runs"][f"mace_{ld}"])
        rows.append(
            f"| {ld}% | {pct(m['loss_cl_class'])} | {pct(m['loss_cl_group'])} | {pct(m['loss_be_group'])} | "
            f"{pct(m['loss_bg'])} | {pct(ref['loss_bg'])} | {m['testing_offered_bps'] / 1e6:.2f} / "
            f"{ref['testing_offered_bps'] / 1e6:.2f} |"
        )
    intro = (
        f"Five flows each of {', '.join(m.upper() for m in MIXED_LOSS_MODELS)} on the CL port (5004) and on a "
        "BE port (5010), MACE with SSAC (3 Mb/s), scenario 1's run length (`s4_mixed_loss.toml`)."
    )
    head = ["background", "CL class loss", "CL-port flows' loss", "BE-port flows' loss", "background loss"]
    head += ["background loss, scenario 1 (CBR CL)", "testing flows' offered load, mixed / scenario 1 (Mb/s)"]
    return md_table(head, rows, intro)


def fig12_13_md(f1213: Fig12_13) -> str:
    """The CL and BE classes' loss at the MACE link beside Figs. 12-13's cells (the connections')."""
    runs = f1213["runs"]
    return (
        f"Mean over seeds, after {f1213['warmup_s']:g} s: CL {pct(seed_mean(runs, 'loss_cl_class'))}, "
        f"BE {pct(seed_mean(runs, 'loss_be_class'))}."
    )


def sweep_md(sweep: dict[str, Table2Run]) -> str:
    """The v sweep and the window-restart variant (full runs)."""
    rows = [
        f"| {SWEEP_POINTS[k][0]:g} | {'restart' if SWEEP_POINTS[k][1] else 'continue'} | "
        f"{r['utilization'] * 100:.1f} | {r['admitted_mean']:.1f} | "
        f"{r['sample_p95_bps'] / r['allocation_bps']:.3f} | {pct(r['loss_cl_class'])} |"
        for k, r in sweep.items()
    ]
    return md_table(["v", "window on admission", "%util", "flows", "p95 sample / μ", "CL loss"], rows)


def setup_md(ctx: Context, s1: Scenario1, s2: Scenario2) -> str:
    """This run's lengths and counts (the full set-up: docs/reproductions/mace.md, "Setup")."""
    q, d = ctx.quick, DEPARTURES[ctx.quick]
    rows = [
        f"| scenario 1, Fig. 9, Figs. 7-8 | {S1_DURATION[q]}; loads {s1['loads']}% "
        f"({', '.join(str(bg_sources(ld)) for ld in s1['loads'])} background sources) |",
        f"| scenario 2 | {s2['recorded_flows']} POO1 flows recorded, {s2.get('replayed_flows')} replayed; "
        f"{S1_DURATION[q]} |",
        f"| scenarios 3-4, Figs. 12-13 | {S3_DURATION[q]}, warm-up {WARMUP_S[q]:g} s |",
        f"| departures | {', '.join(m.upper() for m in d['models'])}, T = {d['window']}, lifetimes "
        f"{', '.join('none' if v is None else f'{v:g} s' for v in d['lifetimes'].values())}; "
        f"{S3_DURATION[q]}, warm-up 100 s |",
    ]
    return md_table(
        ["", ""], rows, "Topology, MACE, sources and every run: docs/reproductions/mace.md, Setup. This run:"
    )


def interpretations_md(s2: Scenario2) -> str:
    """The interpretations measured in this run (every one: docs/decisions/reproduce-mace.md)."""
    return (
        "Recorded with their reasons in docs/decisions/reproduce-mace.md. Measured here:\n\n"
        "- **v = 0.95** (the paper gives none) and **130% background in scenario 3**: the departures table's "
        "EXP1 rows (full runs: also `exp1 v=1 none` and `exp1 68% background`).\n"
        f"- **Generation times (Figs. 10-11)** from the replay over a {GENERATION_PROBE_RATE} bottleneck; "
        f"the flows sent identical packets there: {s2['generation_matches']}."
    )
