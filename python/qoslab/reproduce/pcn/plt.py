"""``pcn`` parking-lot experiments: admission [Zhang07 §3.6-3.8] and termination (§4.4, §4.4.1's expected
termination) on §2.1's parking lot. Set-up, measures, grids: docs/reproductions/pcn.md, "Parking lots"."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any, cast

from ... import pcn as pcn_api
from ... import stages, topology
from ...pcn import expected_termination
from ...result import Result
from ...scenario import Scenario
from ...stats import Estimate
from ..fidelity import md_table
from ..framework import Claim, Context, Outcome
from . import _adm_setup as S
from . import cellmap as C
from .termination import MODELS

#: Link rates (bit/s) of the scenario names (the paper's values: OC3 = 155 Mb/s, not the line rate 155.52).
RATES = S.LINK_BPS
BOTTLENECK_QUEUE = {"type": "fifo", "limit": "10000pkts"}
#: The vertical and host links: "non-limiting" ([Zhang07 §2.1]), as little serialization as possible.
EDGE_RATE = "10Gbps"
#: Every parking-lot link's propagation delay ([Zhang07 §2.1]: "set to 1ms").
LINK_DELAY = "1ms"
#: Mean payload rates (bit/s) of the traffic models (Table 2.1, §2.3.2; VTR: the synthetic trace's).
MEAN_BPS = {m: v.mean_bps for m, v in MODELS.items()}
OVERLOAD = 5.0
MEAN_CALL_S = 60.0
#: The admission runs' bottleneck per traffic model ([Zhang07 §3.3]: voice on OC3, VTR 1 Gb/s, SVD OC48).
ADM_LINK = S.AGGREGATE_LINK
ADM_DURATION_S = 80.0
ADM_WARMUP_S = 20.0
SAMPLE_S = 0.05
BIN_S = 10.0
WEIGHTS = (0.1, 0.3, 0.5, 0.7, 0.9)
CLES = (0.05, 0.15, 0.25)
BEAT_WEIGHTS = (0.1, 0.5, 0.9)
BEAT_CLE = 0.05
#: The quick run's one termination point: Table 4.7's (PLT5, CBR, long:short 2:1).
QUICK_TERMINATION = (5, "CBR", "2:1")
#: Table 4.7's columns by qoslab's figure of a row (``termination_table``).
COLUMNS_4_7 = {
    "optimal": "Optimal term",
    "expected": "Expected term",
    "actual": "Actual term",
    "a_o": "A - O",
    "a_e": "A - E",
}
#: Table 4.9's traffic types (A-O at 2:1 and 1:1).
MODELS_4_9 = ("CBR", "VTR")
#: Table 3.5's PLT grid: PLT5 for every type (Table 3.7's runs; decisions/pcn.md).
GRID_PLT = 5
#: The types §3.6's "-3 % / +2 %" covers (SVD has its own band there).
CLAIM_2_TYPES = ("CBR", "VBR", "MIX", "VTR")
T1_S = 200.0
TERM_WINDOW_S = 1.0
TERM_LINK = {"CBR": "OC3", "VBR": "OC3", "SVD": "OC12", "VTR": "1Gbps"}
EVENT_LOAD = 0.75
TERM_RATE = 0.5
#: long:short load ratios -> the long aggregate's share of a bottleneck's event load.
RATIOS = {"2:1": 2 / 3, "1:1": 1 / 2}
#: Claim 6's tolerances on |actual - expected| (points): §4.4.2's "within 1% for CBR and 3% for VBR and VTR".
CLAIM_6 = {"CBR": 1.0, "VBR": 3.0, "VTR": 3.0}
#: Claim 2's band (§3.6's text, percent).
CLAIM_2 = (-3.0, 2.0)
#: The reduced runs of the grids, per point the seeds' values: admission (PLT size, model, weight, CLE
#: threshold) and termination (PLT size, model, ratio; :func:`termination_table` per run).
AdmissionRuns = dict[tuple[int, str, float, float], list[dict[str, Any]]]
TerminationRuns = dict[tuple[int, str, str], list[dict[str, dict[str, float]]]]


def bottleneck_names(k: int) -> list[str]:
    """The bottleneck directions ``c{i}->c{i+1}``, upstream first."""
    return [f"c{i}->c{i + 1}" for i in range(k)]


def aggregates(k: int) -> list[tuple[str, str, str]]:
    """``(name, src, dst)`` of the long aggregate (``IEA1``) and the short ones (``IEA2`` …), in the
    paper's order (Table 4.7: the long first, then the short ones from upstream)."""
    return [("long", "src_long", "sink_long")] + [(f"short{i}", f"h{i}", f"h{i + 1}") for i in range(k)]


def plt_scenario(
    k: int, link: str, meter: dict[str, Any], edge_rate: str = EDGE_RATE, delay: str = LINK_DELAY, **build: Any
) -> Scenario:
    """A parking lot of ``k`` bottlenecks with ``meter`` on each, the vertical and host links at ``edge_rate``
    and every link's propagation ``delay``; ``build``: the rest of :meth:`Scenario.build`'s fields."""
    topo = topology.pcn_parking_lot(
        bottlenecks=k, rate=link, stages=[meter], queue=BOTTLENECK_QUEUE, edge_rate=edge_rate, delay=delay
    )
    # No per-flow histograms: nothing reads them, and they cost about a fifth of the CPU (docs/performance.md).
    build["metrics"] = {**build["metrics"], "flow_histograms": False}
    return Scenario.build(topology=topo, **build)


def admission_scenario(
    *,
    bottlenecks: int,
    model: str,
    weight: float,
    cle: float,
    duration_s: float,
    link: str | None = None,
    link_delay: str | None = None,
) -> Scenario:
    """§3.6-3.8's set-up: every aggregate offered 2.5× its bottleneck's admissible rate (5× in all).
    ``link`` (default :data:`ADM_LINK`) and ``link_delay`` (default 1 ms) are for the controls."""
    link = link if link is not None else ADM_LINK[model]
    calls = OVERLOAD / 2 * (RATES[link] / 2) / MEAN_BPS[model] / MEAN_CALL_S
    edges = topology.pcn_parking_lot_edges(bottlenecks=bottlenecks)
    return plt_scenario(
        bottlenecks,
        link,
        stages.pcn_admission(),
        delay=link_delay if link_delay is not None else LINK_DELAY,
        name=f"pcn_plt{bottlenecks}_admission",
        duration=f"{duration_s:g}s",
        traffic=[g for n, s, d in aggregates(bottlenecks) for g in S.groups(model, n, s, d, calls_per_s=calls)],
        pcn=pcn_api.domain(edges=edges, cle="per_interval", cle_weight=weight, cle_threshold=cle),
        metrics={"series": bottleneck_names(bottlenecks), "series_interval": f"{SAMPLE_S * 1000:g}ms", "bin": "10s"},
    )


def event_flows(*, bottlenecks: int, model: str, ratio: str) -> dict[str, int]:
    """Flows per aggregate at the failure event: 3/4 of the link on every bottleneck, split by ``ratio``."""
    per_link = EVENT_LOAD * RATES[TERM_LINK[model]] / MEAN_BPS[model]
    n_long, n_short = round(RATIOS[ratio] * per_link), round((1 - RATIOS[ratio]) * per_link)
    return {n: (n_long if n == "long" else n_short) for n, _, _ in aggregates(bottlenecks)}


def resident_flows(*, bottlenecks: int, model: str, ratio: str) -> dict[str, int]:
    """Resident flows per aggregate (2/3 of its event load: its share of the termination rate),
    rounded down so that no bottleneck's resident load exceeds the termination rate."""
    at_rate = math.floor(TERM_RATE * RATES[TERM_LINK[model]] / MEAN_BPS[model])
    n_long, n_short = math.floor(RATIOS[ratio] * at_rate), math.floor((1 - RATIOS[ratio]) * at_rate)
    return {n: (n_long if n == "long" else n_short) for n, _, _ in aggregates(bottlenecks)}


def termination_scenario(
    *, bottlenecks: int, model: str, ratio: str, t1_s: float = T1_S, edge_rate: str = EDGE_RATE
) -> Scenario:
    """§4.4's failure event on a parking lot; ``edge_rate``: the vertical and host links (a control)."""
    flows = event_flows(bottlenecks=bottlenecks, model=model, ratio=ratio)
    residents = resident_flows(bottlenecks=bottlenecks, model=model, ratio=ratio)
    groups: list[dict[str, Any]] = []
    for n, s, d in aggregates(bottlenecks):
        res = S.groups(model, f"{n}_res", s, d, flows=residents[n], start=f"{t1_s - 20:g}s")
        # The rerouted flows were admitted on the failed path: they start without asking their ingress,
        # within one packet spacing (VTR: one 40 ms frame).
        rr = S.groups(model, f"{n}_rr", s, d, flows=flows[n] - residents[n], start=f"{t1_s:g}s")
        groups += [{**g, "start_jitter": "10s"} for g in res]
        groups += [{**g, "start_jitter": f"{MODELS[model].spacing_s * 1000:g}ms", "admitted": True} for g in rr]
    end = f"{t1_s + TERM_WINDOW_S:g}s"
    return plt_scenario(
        bottlenecks,
        TERM_LINK[model],
        stages.pcn_termination(packet_size=MODELS[model].packet),
        edge_rate,
        name=f"pcn_plt{bottlenecks}_termination",
        duration=end,
        traffic=groups,
        pcn=pcn_api.domain(edges=topology.pcn_parking_lot_edges(bottlenecks=bottlenecks), cle="per_interval"),
        metrics={"series": bottleneck_names(bottlenecks), "series_interval": "1s", "bin": end},
    )


def over_admission(res: Result, *, bottlenecks: int, rate_bps: float, warmup_s: float) -> list[float]:
    """Each bottleneck's over-admission %: the mean of its utilization samples from ``warmup_s`` on,
    times the link rate, over the admissible rate (half the link), minus 1."""
    s = res.series[(res.series["metric"] == "utilization") & (res.series["t_s"] > warmup_s + 1e-9)]
    samples = [s.loc[s["entity_id"] == b, "value"].to_numpy() for b in bottleneck_names(bottlenecks)]
    return [(float(u.mean()) * rate_bps / (rate_bps / 2) - 1) * 100 if len(u) else math.nan for u in samples]


def beat_down(res: Result, *, bottlenecks: int) -> list[float]:
    """The beat-down ratio per bin of the run's metrics (Table 3.8: 10 s): the mean short aggregate's
    delivered bytes over the long aggregate's."""
    f = res.flows[["name", "src", "dst"]]
    ids = dict(zip(f["name"], zip(f["src"], f["dst"], strict=True), strict=True))
    s = res.series[(res.series["entity_kind"] == "flow") & (res.series["metric"] == "delivered_bytes")]
    agg = {(src, dst): n for n, src, dst in aggregates(bottlenecks)}
    key = s["entity_id"].map(lambda e: agg.get(ids.get(e, ("", "")), ""))
    tab = s.assign(agg=key).groupby(["t_s", "agg"])["value"].sum()
    bins: dict[float, dict[str, float]] = {}
    for idx, v in tab.items():
        t_s, name = cast(tuple[float, str], idx)
        bins.setdefault(float(t_s), {})[str(name)] = float(v)
    return beat_down_ratio(bins, bottlenecks=bottlenecks)


def beat_down_ratio(bins: dict[float, dict[str, float]], *, bottlenecks: int) -> list[float]:
    """``bins``: bin start -> aggregate name -> delivered bytes. Returns, for each full bin in order,
    the mean of the short aggregates' bytes over the long one's (nan if the long delivered none)."""
    short = {t: sum(row.get(f"short{i}", 0.0) for i in range(bottlenecks)) / bottlenecks for t, row in bins.items()}
    return [short[t] / bins[t]["long"] if bins[t].get("long", 0.0) > 0 else math.nan for t in sorted(bins)]


def marking_share(res: Result, *, bottlenecks: int, warmup_s: float) -> tuple[float, float]:
    """§3.8's diagnostic: the share of samples (after ``warmup_s``) in which at least one bottleneck
    admission-marked a packet, and the mean share of a single bottleneck."""
    s = res.series[res.series["metric"] == "threshold_marked"]
    per: list[list[bool]] = []
    for b in bottleneck_names(bottlenecks):
        d = s[s["entity_id"] == b].sort_values("t_s")
        v, t = d["value"].to_numpy(), d["t_s"].to_numpy()
        per.append([bool(x) for x, tt in zip(v[1:] > v[:-1], t[1:], strict=True) if tt > warmup_s + 1e-9])
    return any_and_mean(per)


def any_and_mean(per: Sequence[Sequence[bool]]) -> tuple[float, float]:
    """``per``: one boolean sequence per link (marking in each sample). Returns the share of samples
    with at least one link marking and the mean over links of each link's share."""
    n = min((len(p) for p in per), default=0)
    if n == 0:
        return math.nan, math.nan
    return sum(1 for i in range(n) if any(p[i] for p in per)) / n, sum(sum(p[:n]) / n for p in per) / len(per)


def termination_table(
    flows: dict[str, int], terminated: dict[str, int], *, bottlenecks: int, mean_bps: float, rate_bps: float
) -> dict[str, dict[str, float]]:
    """Actual, optimal and expected termination per aggregate (``IEA1`` long, ``IEA2`` … short, from
    upstream) and per bottleneck (``BN1`` …), with A-O and A-E in points, from each aggregate's
    (``long``, ``short0`` …) ``flows`` at the event and ``terminated`` flows of ``mean_bps`` each."""
    k = bottlenecks
    t_rate = TERM_RATE * rate_bps
    load = {n: flows[n] * mean_bps for n in flows}
    shorts = [f"short{i}" for i in range(k)]
    bn_load = [load["long"] + load[s] for s in shorts]
    opt_bn = [max(0.0, (x - t_rate) / x) for x in bn_load]
    exp = expected_termination(k, load["long"], [load[s] for s in shorts], t_rate)
    act = {n: terminated[n] / flows[n] for n in flows}
    act_bn = [(terminated["long"] + terminated[s]) / (flows["long"] + flows[s]) for s in shorts]
    rows: dict[str, tuple[float, float, float]] = {f"IEA1 ({k}H)": (max(opt_bn), exp["long"], act["long"])}
    rows |= {f"IEA{i + 2} (1H)": (opt_bn[i], exp["short"][i], act[s]) for i, s in enumerate(shorts)}
    rows |= {f"BN{i + 1}": (opt_bn[i], exp["bottlenecks"][i], act_bn[i]) for i in range(k)}
    return {
        r: {"optimal": o, "expected": e, "actual": a, "a_o": (a - o) * 100, "a_e": (a - e) * 100}
        for r, (o, e, a) in rows.items()
    }


def terminations(
    res: Result, *, bottlenecks: int, t1_s: float, window_s: float
) -> tuple[dict[str, int], dict[str, int]]:
    """Flows per aggregate at the event (all but those terminated before ``t1``) and those terminated
    in ``[t1, t1 + window]``, timed by the events table (a terminated flow's ``end_s`` is the run's end)."""
    f = res.flows
    agg = {(s, d): n for n, s, d in aggregates(bottlenecks)}
    by_id = {fid: agg.get((s, d), "") for fid, s, d in zip(f["flow_id"], f["src"], f["dst"], strict=True)}
    ev = res.events[res.events["kind"] == "terminate"].drop_duplicates("flow_id")
    before = set(ev.loc[ev["t_s"] < t1_s - 1e-9, "flow_id"])
    within = ev[(ev["t_s"] >= t1_s - 1e-9) & (ev["t_s"] <= t1_s + window_s + 1e-9)]
    present = Counter(a for fid, a in by_id.items() if fid not in before)
    cut = Counter(by_id.get(fid, "") for fid in within["flow_id"])
    return {n: present[n] for n, _, _ in aggregates(bottlenecks)}, {n: cut[n] for n, _, _ in aggregates(bottlenecks)}


def reduce_termination(key: tuple[int, str, str], res: Result) -> dict[str, dict[str, float]]:
    """A termination run of ``key`` (PLT size, model, ratio) as :func:`termination_table`'s rows."""
    k, m, _ = key
    flows, term = terminations(res, bottlenecks=k, t1_s=T1_S, window_s=TERM_WINDOW_S)
    return termination_table(flows, term, bottlenecks=k, mean_bps=MEAN_BPS[m], rate_bps=RATES[TERM_LINK[m]])


def _admission_plan(ctx: Context) -> list[tuple[int, str, float, float]]:
    """``(PLT size, model, weight, CLE threshold)`` of every admission grid point."""
    if ctx.quick:
        return []
    grid = [(GRID_PLT, model, w, c) for model in S.TRAFFIC for w in WEIGHTS for c in CLES]
    return grid + [(k, "CBR", w, BEAT_CLE) for k in (2, 3) for w in BEAT_WEIGHTS]


def run(ctx: Context) -> Outcome:
    """§4.4.1's PLT2 example, Tables 3.5 (PLT), 3.7, 3.8 and 4.7-4.9."""
    apts = _admission_plan(ctx)
    ctx.log(f"pcn plt: {len(apts) * len(ctx.seeds)} admission runs")

    def reduce_adm(key: tuple[int, str, float, float], res: Result) -> dict[str, Any]:
        k, m = key[0], key[1]
        return {
            "over": over_admission(res, bottlenecks=k, rate_bps=RATES[ADM_LINK[m]], warmup_s=ADM_WARMUP_S),
            "ratio": beat_down(res, bottlenecks=k),
            "marking": marking_share(res, bottlenecks=k, warmup_s=ADM_WARMUP_S),
        }

    agrid: list[tuple[tuple[int, str, float, float], str, Scenario]] = []
    for k, m, w, c in apts:
        sc = admission_scenario(bottlenecks=k, model=m, weight=w, cle=c, duration_s=ADM_DURATION_S)
        agrid.append(((k, m, w, c), f"plt{k}_adm_{m}_w{w:g}_cle{c:g}".lower(), sc))
    cells = ctx.run_grid(agrid, reduce_adm, save=False)
    tpts = [QUICK_TERMINATION] if ctx.quick else [(k, m, r) for r in RATIOS for m in TERM_LINK for k in (2, 3, 5)]
    ctx.log(f"pcn plt: {len(tpts) * len(ctx.seeds)} termination runs")
    tgrid: list[tuple[tuple[int, str, str], str, Scenario]] = []
    for k, m, r in tpts:
        sc = termination_scenario(bottlenecks=k, model=m, ratio=r)
        tgrid.append(((k, m, r), f"plt{k}_term_{m}_{r.replace(':', 'to')}".lower(), sc))
    tcells = ctx.run_grid(tgrid, reduce_termination, save=False)
    # §4.4.1's PLT2 example (long 3/7, short 1/3 and 1/7, bottlenecks 25/63 and 1/3) against qoslab's
    # generalized formula: a check of the formula (the paper's own arithmetic), not a reproduced result.
    e = expected_termination(2, 0.5, 0.25, 0.5)
    want = {"long": 3 / 7, "short": [1 / 3, 1 / 7], "bottlenecks": [25 / 63, 1 / 3]}
    check = Claim.judged(
        all(e[k] == v for k, v in want.items()),
        "the generalized formula does not give the paper's example",
        id="expected-termination-plt2",
        text="§4.4.1's expected termination reproduces the PLT2 example exactly",
        paper="long 3/7; short 1/3, 1/7; bottlenecks 25/63, 1/3",
        measured=f"long {e['long']:.6f}; short {', '.join(f'{x:.6f}' for x in e['short'])}; "
        f"bottlenecks {', '.join(f'{x:.6f}' for x in e['bottlenecks'])}",
        tolerance="exact (nearest float)",
        kind="check",
    )
    out = Outcome(claims=[check], data={"expected_termination_plt2": e})
    if ctx.quick:
        out.claims += [Claim.skipped(*c) for c in ADMISSION_CLAIMS]
    else:
        _admission_outcome(ctx, out, cells)
    _termination_outcome(ctx, out, tcells)
    return out


#: The admission claims (the text's statements; the tables' numbers are cells), in report order.
ADMISSION_CLAIMS = (
    ("table3.5-grid-plt", "§3.6, PLT: CBR, VBR, MIX and VTR within -3 % / +2 % over the weight x CLE grid"),
    ("table3.8-beat-down", "§3.8.2: the long-haul aggregate loses bandwidth in time, the more so the more bottlenecks"),
)


def _admission_outcome(ctx: Context, out: Outcome, cells: AdmissionRuns) -> None:
    """Tables 3.5 (PLT rows), 3.7 and 3.8 and §3.8.2's marking share as cells (one value per seed), the
    text's two statements as claims, and §3.8's marking shares per run as a section."""
    n = len(ctx.seeds)
    # Each type's PLT5 runs, per (weight, CLE) point in order (models in sorted order).
    plt5 = {m: [r for (k, mm, _, _), r in sorted(cells.items()) if (k, mm) == (GRID_PLT, m)] for m in sorted(S.TRAFFIC)}
    # Table 3.5, PLT rows: per run the worst bottleneck (§3.6: "the maximum of the N"); per seed the
    # four statistics over the 15 points.
    grid = {m: [[max(r["over"]) for r in runs] for runs in pts] for m, pts in plt5.items()}
    for m, pts in grid.items():
        out.cells += C.table_3_5(ctx.log, f"{m} / {C.TOPO_35['plt']}", pts)[0]
    means = {m: [sum(p) / len(p) for p in pts] for m, pts in grid.items() if m in CLAIM_2_TYPES}
    spans = [f"{m} (PLT{GRID_PLT}) {min(v):.2f} … {max(v):.2f} %" for m, v in means.items()]
    fails = [
        f"{m}: {min(v):.2f} … {max(v):.2f} %" for m, v in means.items() if min(v) < CLAIM_2[0] or max(v) > CLAIM_2[1]
    ]
    out.claims.append(
        Claim.judged(
            not fails,
            "outside: " + "; ".join(fails),
            unless=ctx.unjudged(5),
            id="table3.5-grid-plt",
            text="§3.6, PLT: CBR, VBR, MIX and VTR stay within -3 % / +2 % over the weight x CLE grid (worst "
            "bottleneck of each run, mean over seeds)",
            paper="'the admitted load staying within -3%+2% range of the desired admission threshold'",
            measured="; ".join(spans),
            tolerance="every grid point's seed mean in [-3 %, +2 %]",
        )
    )
    # Table 3.7: PLT5, every type, per seed each bottleneck's mean over the 15 settings.
    per_bn = {
        m: [[sum(r[s]["over"][b] for r in plt5[m]) / len(plt5[m]) for s in range(n)] for b in range(GRID_PLT)]
        for m in S.TRAFFIC
    }
    for m, bns in per_bn.items():
        out.cells += C.cells(ctx.log, "Table 3.7", m, ((f"Bottleneck LinkId / {b + 1}", v) for b, v in enumerate(bns)))
    # Table 3.8 and the marking share (CBR, CLE 0.05, the three weights).
    beat: dict[tuple[int, float], list[list[float]]] = {}
    share: dict[tuple[int, float], tuple[Estimate, Estimate]] = {}
    for (k, m, w, c), runs in cells.items():
        if m == "CBR" and c == BEAT_CLE and w in BEAT_WEIGHTS:
            beat[(k, w)] = [[r["ratio"][i] for r in runs] for i in range(min(len(r["ratio"]) for r in runs))]
            share[(k, w)] = (Estimate.of(r["marking"][0] for r in runs), Estimate.of(r["marking"][1] for r in runs))
            cols = ((f"Simulation Time (s) / {round(BIN_S * (i + 1))}", v) for i, v in enumerate(beat[(k, w)][:8]))
            out.cells += C.cells(ctx.log, "Table 3.8", f"PLT{k} / {w:g}", cols)
    # §3.8.2's "fraction of time when at least one of the links was marking packets": per seed the mean over
    # the 15 PLT5 CBR settings.
    any5 = [100 * sum(r[s]["marking"][0] for r in plt5["CBR"]) / len(plt5["CBR"]) for s in range(n)]
    out.cells += C.cells(ctx.log, "§3.8.2", "PLT5, 5x", (("share of time at least one link marks", any5),))
    # §3.8.2's statement: ratio(80 s) > ratio(10 s) everywhere, PLT5's 80 s ratio the largest at each weight.
    mean = {kw: [sum(v) / len(v) for v in b] for kw, b in beat.items()}
    if all((k, w) in mean and len(mean[(k, w)]) >= 8 for k in (2, 3, 5) for w in BEAT_WEIGHTS):
        rising = [f"PLT{k} w {w:g}" for (k, w), v in mean.items() if not v[7] > v[0]]
        order = [f"w {w:g}" for w in BEAT_WEIGHTS if not mean[(5, w)][7] > max(mean[(2, w)][7], mean[(3, w)][7])]
        why = {"not rising from 10 s to 80 s": rising, "PLT5 not the largest at 80 s": order}
        ok3: bool | None = not rising and not order
        expl3 = "; ".join(f"{k}: {', '.join(v)}" for k, v in why.items() if v)
    else:
        ok3, expl3 = None, "needs the nine 80 s runs (PLT2, 3, 5 x weights 0.1, 0.5, 0.9)"
    out.claims.append(
        Claim.judged(
            ok3,
            expl3,
            unless=ctx.unjudged(5),
            id="table3.8-beat-down",
            text="§3.8.2: the long-haul aggregate consistently loses bandwidth in time (ratio at 80 s above that at "
            "10 s for every PLT and weight), the more so the more bottlenecks it crosses (PLT5's ratio at 80 s the "
            "largest at each weight)",
            paper="'the long-haul flow consistently loses bandwidth as a function of time, and this effect is the "
            "more pronounced the more bottlenecks are traversed' (Table 3.8's numbers are cells)",
            measured="80 s: "
            + ", ".join(f"PLT{k} w {w:g} {v[7]:.2f}" for (k, w), v in sorted(mean.items()) if len(v) >= 8),
            tolerance="seed means; both orderings at every weight",
        )
    )
    shares = [
        f"| PLT{k} | {w:g} | {a.fmt('.3f')} | {m.fmt('.3f')} |"
        for (k, w), (a, m) in sorted(share.items(), key=lambda x: (-x[0][0], x[0][1]))
    ]
    text = md_table(
        "| topology | weight | at least one link marking | one link (mean) |",
        shares,
        "§3.8's diagnostic (CBR, 5x, CLE threshold 0.05; Tables 3.5, 3.7 and 3.8 are in the cells above): the "
        "share of 50 ms samples (after the warm-up) in which at least one bottleneck admission-marked a packet, "
        "and a single bottleneck's mean share.",
    )
    out.sections.append(("§3.8: the share of time marking (CBR, 5x)", text))
    out.data["table3_5_plt"] = {m: [Estimate.of(p).to_json() for p in pts] for m, pts in grid.items()}
    out.data["table3_7"] = {m: [Estimate.of(v).to_json() for v in bns] for m, bns in per_bn.items()}
    out.data["table3_8"] = {f"PLT{k}/w{w:g}": [Estimate.of(v).to_json() for v in est] for (k, w), est in beat.items()}
    out.data["marking_share"] = {
        f"PLT{k}/w{w:g}": {"any": a.to_json(), "one": m.to_json()} for (k, w), (a, m) in share.items()
    }


def _termination_outcome(ctx: Context, out: Outcome, tcells: TerminationRuns) -> None:
    """Tables 4.7-4.9 as cells (one value per seed; quick: Table 4.7 only), the text's "within 1 % for
    CBR and 3 % for VBR and VTR" as a claim, and one section with every other parking lot's rows."""
    for (k, m, ratio), runs in sorted(tcells.items()):
        for r in runs[0]:
            vals = {c: [run[r][c] for run in runs] for c in COLUMNS_4_7}
            if (k, m, ratio) == QUICK_TERMINATION:
                out.cells += C.cells(ctx.log, "Table 4.7", r, ((COLUMNS_4_7[c], v) for c, v in vals.items()))
            row = f"PLT{k} / {r.replace(' ', '')}"
            if not ctx.quick and ratio == "2:1":
                cols = ((f"{m} / A-O", vals["a_o"]), (f"{m} / A-E", vals["a_e"]))
                out.cells += C.cells(ctx.log, "Table 4.8", row, cols)
            if not ctx.quick and m in MODELS_4_9:
                out.cells += C.cells(ctx.log, "Table 4.9", row, ((f"{m} / {ratio}", vals["a_o"]),))
    mean = {
        key: {r: {c: Estimate.of(run[r][c] for run in runs) for c in COLUMNS_4_7} for r in runs[0]}
        for key, runs in tcells.items()
    }
    ae = {(k, m, ratio): t[f"IEA1 ({k}H)"]["a_e"].mean for (k, m, ratio), t in sorted(mean.items()) if m in CLAIM_6}
    checks = [f"{m} PLT{k} {ratio}: {v:+.2f}" for (k, m, ratio), v in ae.items()]
    fails = [
        f"{m} PLT{k} {ratio}: |{v:.2f}| > {CLAIM_6[m]:g}" for (k, m, ratio), v in ae.items() if abs(v) > CLAIM_6[m]
    ]
    out.claims.append(
        Claim.judged(
            not fails if checks else None,
            "; ".join(fails) + ". Measured cause (docs/reproductions/pcn.md): a downstream token bucket marks the "
            "short aggregates' packets, bunched by the fast edge links, more than the long one's, spaced by the "
            "upstream bottleneck; §4.4.1's uniform marking does not hold",
            unless=ctx.unjudged(5),
            id="tables4.8-4.9-plt",
            text="Tables 4.8-4.9: the long aggregate's |actual - expected| termination <= 1 point (CBR), "
            "<= 3 points (VBR, VTR) on PLT2, PLT3 and PLT5",
            paper="IEA1 A-E: CBR -0.71, -0.85, 0.14; VBR 1.06, 1.18, 0.91; VTR 1.26, 0.87, 1.82 (PLT2, 3, 5; 2:1)",
            measured="IEA1 A-E (points): " + "; ".join(checks) if checks else "not run",
            tolerance="|A-E| of the long aggregate, mean over seeds: <= 1 (CBR), <= 3 (VBR, VTR)",
        )
    )
    rows = [
        f"| PLT{k} {m} {ratio} | {r} | {c['optimal'].mean:.4f} | {c['expected'].mean:.4f} | {c['actual'].mean:.4f} | "
        f"{c['a_o'].fmt('.2f')} | {c['a_e'].fmt('.2f')} |"
        for (k, m, ratio), t in sorted(mean.items(), key=lambda x: (x[0][2], x[0][1], x[0][0]))
        if (k, m, ratio) != QUICK_TERMINATION
        for r, c in t.items()
    ]
    if rows:
        links = ", ".join(f"{m} {v}" for m, v in TERM_LINK.items())
        note = (
            f"Means over seeds {', '.join(map(str, ctx.seeds))} (± 95 % CI on A-O and A-E, points) at every parking "
            f"lot but Table 4.7's; links {links}; terminations in [t1, t1 + {TERM_WINDOW_S:g} s]."
        )
        header = "| parking lot, long:short | | optimal | expected | actual | A-O | A-E |"
        out.sections.append(("Tables 4.7-4.9: the other parking lots", md_table(header, rows, note)))
    out.data["tables4_7_4_9"] = {
        f"PLT{k}/{m}/{ratio}": {r: {c: e.to_json() for c, e in cols.items()} for r, cols in t.items()}
        for (k, m, ratio), t in mean.items()
    }
