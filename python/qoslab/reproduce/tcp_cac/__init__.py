"""The ``tcp-cac`` reproduction: connection admission control for shaped TCP [Tarasiuk05 §2-§4].

Table 2's formulas and Table 4's schemes in fluid mode (checks), then the TCP runs (:mod:`.runs`) and
their claims. Set-up, run lengths, claims and tolerances (fixed before any run): docs/reproductions/tcp_cac.md.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

from ...cac import cac, fluid_run
from ...stats import Estimate
from .. import figures
from ..fidelity import md_table
from ..framework import Claim, Context, Figure, Outcome, pct
from ..paper import PaperData, decimals_of
from ..reduce import Cell, judged, measured, paper_of
from . import runs as tcp_runs
from .runs import IPLR, NMAX_CASES, START_PATTERNS, STOPPED_SHARE, TABLE1_START, finite_mean

NAME = "tcp-cac"
TITLE = "CAC for shaped TCP: rho, N_max, Erlang-B and the rate schemes (fluid mode)"
SEED_FILE = "Tarasiuk05"
PAPER = "Per-connection TCP shaping with connection admission control [Tarasiuk05]"

SCHEME3_TOL = 0.10
PS_TOL = 0.05
SHAPED_TOL = 0.01
SPREAD_FACTOR = 10.0
ERLANG_MIN_TOL = 0.002
LAMBDA = 5.98
#: Table 4's file size on the wire; at R_req = 1 Mb/s a transfer takes 10 s.
FILE_BITS = 10_000_000
#: Each table's measured columns: (column, the per-seed statistic of :func:`.runs.per_seed` (Tables 1
#: and 3) or measure of :func:`.runs.transfers` (Table 4), scale to the paper's unit).
COLUMNS = {
    "Table 1": [
        ("Average RTT [ms]", "rtt_ms", 1.0),
        ("Packet loss ratio per TCP connection", "loss", 1.0),
        ("Throughput per TCP connection [Mbps]", "thr_mbps", 1.0),
    ],
    "Table 3": [
        ("Simulation results / Packet loss ratio IPLR", "agg_loss", 1.0),
        ("Simulation results / Received rate per connection [Mbps]", "thr_mbps", 1.0),
    ],
    "Table 4": [
        ("Mean file transfer time [sec]", "mean_transfer_time_s", 1.0),
        ("Mean system state when call blocking", "mean_running_at_blocking", 1.0),
        ("Call blocking probability", "blocking", 100.0),
    ],
}
#: §4's ratios of scheme #1 over #3: column -> measure.
SECTION4_COLUMNS = {"transfer time, times shorter": "mean_transfer_time_s", "call blocking, times lower": "blocking"}
#: The fluid runs' measures averaged over seeds (NaN and None left out).
FLUID_KEYS = ("blocking", "blocking_ci95", "mean_transfer_time_s", "mean_running_at_blocking", "time_avg_running")


def _fluid(ctx: Context, scheme: int, seed: int) -> dict[str, Any]:
    ctx.log(f"fluid scheme #{scheme}, seed {seed}")
    duration, warmup = ("2000s", "100s") if ctx.quick else ("20000s", "200s")
    out = fluid_run(
        scheme=scheme, k=3.0, arrival_rate=LAMBDA, duration=duration, warmup=warmup, seed=seed, record_transfers=False
    )
    return {k: v for k, v in out.items() if k != "transfers"}


def table2_cases(data: PaperData) -> list[tuple[int, float, float, str, int]]:
    """Table 2's rows from the paper's data: (B, IPLR, R_req Mb/s, ρ as printed, N_max)."""
    v = {c.key: c.value for c in data.cells if c.table == "Table 2"}
    return [
        (
            int(v[("Table 2", r, "Input data for CAC / Buffer size B [packets]")]),
            float(v[("Table 2", r, "Input data for CAC / Packet loss ratio IPLR")]),
            float(v[("Table 2", r, "Input data for CAC / Requested throughput R_req = R [Mbps]")]),
            v[("Table 2", r, "CAC calculation / rho - utilization factor")],
            int(v[("Table 2", r, "CAC calculation / N_max - max. number of connections")]),
        )
        for r in dict.fromkeys(c.row for c in data.cells if c.table == "Table 2")
    ]


def paper_scheme3(data: PaperData) -> dict[str, float]:
    """Table 4's scheme #3 row: mean transfer time (s), blocking (ratio), running at blocking."""
    v = {c.column: float(c.value) for c in data.cells if c.table == "Table 4" and c.row == "Scheme#3"}
    return {
        "mean_transfer_time_s": v["Mean file transfer time [sec]"],
        "blocking": v["Call blocking probability"] / 100,
        "mean_running_at_blocking": v["Mean system state when call blocking"],
    }


def paper_cells(ctx: Context, t1: dict[str, Any], nm: dict[str, Any], t4: dict[str, Any] | None) -> list[Cell]:
    """Every cell of ``paperdata/tcp_cac/cells.csv`` this run measures, one value per seed in the paper's unit;
    Table 2's formulas (3)-(4) are the check ``rho-n-max``, not cells (docs/reproductions/tcp_cac.md)."""
    known = set(paper_of(ctx, "tcp_cac").keys())
    rows = []  # (table, row, per-seed measures); Tables 2-3 have no row labels: the inputs B and R_req
    for v in t1.values():
        shaping = "No shaping" if v["rate_mbps"] is None else f"R = {v['rate_mbps']:g}"
        rows.append(("Table 1", f"Min RTT = {v['min_rtt_ms']} msec / {shaping}", v["per_seed"]))
    for b, r, n_max in NMAX_CASES:
        if (v := nm.get(f"B{b}_R{r:g}Mbps_n{n_max}")) is not None:
            rows.append(("Table 3", f"B = {b}, R_req = {r:g}", v["per_seed"]))
    rows += [("Table 4", f"Scheme#{s}", t4[s]) for s in ("1", "2", "3")] if t4 else []
    out: list[Cell] = []
    for table, row, seeds in rows:
        # Not in known: what the paper prints no number for (min RTT 0 unshaped, scheme #2's state at blocking).
        for column, key, scale in COLUMNS[table] if judged(ctx, "tcp_cac", table) else []:
            if (table, row, column) in known:
                out += measured(ctx, table, row, column, [scale * s[key] for s in seeds])
    if judged(ctx, "tcp_cac", "§4") and t4:
        pairs = list(zip(t4["1"], t4["3"], strict=True))
        for column, key in SECTION4_COLUMNS.items():
            ratios = [a[key] / b[key] if b[key] > 0 else math.nan for a, b in pairs]
            out += measured(ctx, "§4", "Scheme#1 against Scheme#3", column, ratios)
    return out


def reproduce(ctx: Context) -> Outcome:
    data_p = paper_of(ctx, "tcp_cac")
    # Table 2, the paper's formulas (3)-(4) evaluated; then Table 4 in fluid mode.
    rows: list[dict[str, Any]] = []
    for b, iplr, rate, rho_p, n_p in table2_cases(data_p):
        r = cac("100Mbps", b, iplr, f"{rate:g}Mbps")
        got = {"buffer": b, "iplr": iplr, "rate": f"{rate:g}Mbps", "rho": r.rho, "n_max": r.n_max}
        rows.append(got | {"paper_rho": rho_p, "paper_n_max": n_p})
    # ρ to the decimals Table 2 prints (0.74, 0.85, 0.935).
    ok = all(round(x["rho"], decimals_of(x["paper_rho"])) == float(x["paper_rho"]) for x in rows)
    ok &= all(x["n_max"] == x["paper_n_max"] for x in rows)
    erlang = cac("100Mbps", 10, 1e-3, "1Mbps", holding="10s", arrival_rate=LAMBDA).blocking or math.nan
    runs = {scheme: [_fluid(ctx, scheme, seed) for seed in ctx.seeds] for scheme in (1, 2, 3)}
    m = {
        s: {k: finite_mean((r[k] for r in v), keep_inf=True) for k in FLUID_KEYS}
        | {"blocked": float(sum(r["blocked"] for r in v))}
        for s, v in runs.items()
    }

    b1, ci1 = m[1]["blocking"], m[1]["blocking_ci95"]
    ps = FILE_BITS / (tcp_runs.C_BPS - LAMBDA * FILE_BITS)
    t2 = m[2]["mean_transfer_time_s"]
    paper3 = paper_scheme3(data_p)
    got3 = {k: m[3][k] for k in paper3}
    within = {k: abs(got3[k] - p) <= SCHEME3_TOL * p for k, p in paper3.items()}
    check = partial(Claim.judged, kind="check")  # Table 2's formulas and the fluid runs: checks, not counted
    claims = [
        check(
            ok,
            "the formula does not give the paper's table",
            id="rho-n-max",
            text="rho = 2B/(2B - ln IPLR) and N_max = floor(rho C / R_req) give Table 2",
            paper=", ".join(f"{x['paper_rho']}/{x['paper_n_max']}" for x in rows),
            measured=", ".join(f"{x['rho']:.4f}/{x['n_max']}" for x in rows),
            tolerance="exact (rho to the decimals printed)",
        ),
        check(
            abs(b1 - erlang) <= max(ci1 if math.isfinite(ci1) else 0.0, ERLANG_MIN_TOL),
            "blocking outside the Erlang-B interval",
            id="fluid-scheme1-erlang-b",
            text="fluid scheme #1 blocking matches Erlang-B(74, 59.8 erl)",
            paper=f"1% by construction (lambda = {LAMBDA}/s); Erlang-B gives {100 * erlang:.3f}%",
            measured=f"{100 * b1:.3f}% ± {100 * ci1:.3f}%",
            tolerance=f"|B - Erlang-B| <= max(CI, {ERLANG_MIN_TOL})",
        ),
        check(
            m[2]["blocked"] == 0 and abs(t2 - ps) <= PS_TOL * ps,
            "blocked requests or transfer time away from processor sharing",
            id="fluid-scheme2-ps",
            text="fluid scheme #2 never blocks; mean transfer time is processor sharing's (judged against "
            "processor sharing, not the paper's 0.319 s)",
            paper=f"no blocking; fastest transfers (the paper's 0.319 s is not judged: processor sharing gives "
            f"{ps:.3f} s)",
            measured=f"{int(m[2]['blocked'])} blocked, {t2:.3f} s (PS {ps:.3f} s)",
            tolerance=f"0 blocked and within ±{PS_TOL:.0%} of file/(C - lambda file)",
        ),
        check(
            all(within.values()),
            "outside ±10%: " + ", ".join(k for k, v in within.items() if not v),
            unless="quick run: 2000 s sees too few blockings for ±10%; judged in full runs" if ctx.quick else "",
            id="fluid-scheme3-paper",
            text="fluid scheme #3 (k = 3): transfer time, blocking, running at blocking (the fluid idealisation "
            "beside the paper; Table 4's cells judge the paper's numbers with TCP)",
            paper=f"{paper3['mean_transfer_time_s']:g} s, {100 * paper3['blocking']:g}%, "
            f"{paper3['mean_running_at_blocking']:g}",
            measured=f"{got3['mean_transfer_time_s']:.2f} s, {100 * got3['blocking']:.2f}%, "
            f"{got3['mean_running_at_blocking']:.1f}",
            tolerance=f"each within ±{SCHEME3_TOL:.0%}",
        ),
    ]

    rl = tcp_runs.runlen(ctx.quick)
    t1 = tcp_runs.table1(ctx, *rl["table1"])
    sp = tcp_runs.start_patterns(ctx, *rl["table1"])
    nm = tcp_runs.nmax(ctx, *rl["nmax"])
    # Table 4 with TCP: full runs only (a quick run's few hundred seconds see too few blockings).
    t4 = None if ctx.quick else tcp_runs.table4(ctx, *rl["table4"])
    tc = tcp_claims(ctx, t1, sp, nm, t4)

    data = {
        "table2": rows,
        "erlang_b_scheme1": erlang,
        "ps_mean_transfer_time_s": ps,
        "fluid": {str(s): v for s, v in runs.items()},
        "fluid_mean": {str(s): v for s, v in m.items()},
        "run_lengths_s": {k: {"duration": d, "warmup": w} for k, (d, w) in rl.items()},
        "table1": t1,
        "start_patterns": sp,
        "nmax": nm,
        "table4_tcp": t4,
    }
    (d1, w1), (dn, wn), (d4, w4) = rl["table1"], rl["nmax"], rl["table4"]
    t4_run = "not run (too few blockings in a quick run)" if ctx.quick else f"{d4} s per scheme after {w4} s"
    fluid = "2000 s after 100 s" if ctx.quick else "20 000 s after 200 s"
    setup = (
        f"This run's lengths (the set-up: docs/reproductions/tcp_cac.md): fluid mode {fluid} of warm-up; Table 1 and "
        f"the start patterns {d1} s after {w1} s; Tables 2-3 {dn} s after {wn} s; Table 4 with TCP {t4_run}."
    )
    sections = [
        ("Setup", setup),
        ("Table 1 (TCP)", _table1_md(t1)),
        ("Unshaped connections stopped, by start pattern and timers", _start_patterns_md(sp)),
    ]
    figs = [_figure(ctx, m, erlang, ps, paper3)]
    return Outcome(claims=claims + tc, data=data, sections=sections, figures=figs, cells=paper_cells(ctx, t1, nm, t4))


def tcp_claims(
    ctx: Context, t1: dict[str, Any], sp: dict[str, Any], nm: dict[str, Any], t4: dict[str, Any] | None
) -> list[Claim]:
    """The TCP claims (claims 2, 3 and 5) from the runs of :mod:`.runs`; the paper's numbers of
    Tables 1, 3 and 4 are judged as cells (:func:`paper_cells`)."""
    share = tcp_runs.C_BPS / 100
    # Claim 2: shaped at C/n = 1 Mb/s against unshaped.
    shaped = {k: v for k, v in t1.items() if v["rate_mbps"] == 1.0}
    unshaped = {k: v for k, v in t1.items() if v["rate_mbps"] is None}
    worst_dev = max(max(abs(x - share) / share for x in v["thr_bps"]) for v in shaped.values())
    worst_loss = max(v["agg_loss"] for v in shaped.values())

    spreads = {k: float(max(v["thr_bps"]) - min(v["thr_bps"])) / share for k, v in (shaped | unshaped).items()}
    s_spread, u_spread = max(spreads[k] for k in shaped), min(spreads[k] for k in unshaped)
    u0 = unshaped.get("none/rtt0ms")
    stopped = u0["stopped_share"] if u0 else math.nan
    t0 = sp.get("qoslab/t0/rtt0ms", {})
    checks = [
        (worst_dev <= SHAPED_TOL, f"a shaped connection is {100 * worst_dev:.2f}% from C/n"),
        (worst_loss <= IPLR, f"shaped loss {worst_loss:.2e} above 1e-3"),
        (u_spread >= SPREAD_FACTOR * max(s_spread, 1e-9), "the unshaped spread is not 10x the shaped one"),
        (
            stopped >= 0.5,
            f"only {pct(stopped, '.0f')} of unshaped connections at min RTT 0 under 10% of C/n with starts spread over "
            f"{TABLE1_START}. Measured cause: the start pattern, not the RTO settings (the start-pattern table). "
            "With every connection starting at t = 0 (qoslab timers, min RTT 0) the stopped connections had "
            f"{t0.get('timeouts_stopped', math.nan):.1f} timeouts each on average and delivered "
            f"{t0.get('warmup_pkts_stopped', math.nan):.0f} packets in the first {t0.get('warmup_s', math.nan):g} s "
            f"(the running ones: "
            f"{t0.get('timeouts_running', math.nan):.0f} timeouts, {t0.get('warmup_pkts_running', math.nan):.0f} "
            "packets): their first segments, sent at the same instant, lose at the 20-packet buffer, and the "
            "retries of the backed-off initial RTO (3, 9, 21, 45 s) stay synchronized and lose again",
        ),
    ]
    why = [w for ok, w in checks if not ok]
    claim2 = Claim.judged(
        not why,
        "; ".join(why),
        id="shaped-c-over-n",
        text="shaped at R = C/n every connection within 1% of C/n with loss <= 1e-3; unshaped the spread is far "
        "wider and at min RTT 0 at least half get under 10% of C/n (Table 1)",
        paper="shaped: 1 Mb/s each, no loss; unshaped at RTT 0: almost all stopped",
        measured=f"shaped (RTT {', '.join(str(v['min_rtt_ms']) for v in shaped.values())} ms): worst "
        f"{100 * worst_dev:.3f}% from C/n, loss {worst_loss:.1e}, spread {100 * s_spread:.2f}% of C/n; "
        f"unshaped (starts over {TABLE1_START}): spread >= {100 * u_spread:.0f}% of C/n, "
        f"{pct(stopped, '.0f')} under 10% at RTT 0",
        tolerance="each shaped connection within ±1% of C/n, aggregate loss <= 1e-3; unshaped max-min spread "
        f">= 10x the shaped one; >= 50% of unshaped connections < {STOPPED_SHARE:g} C/n at min RTT 0 "
        f"(starts spread over {TABLE1_START})",
    )

    # Claim 3: N_max shaped connections.
    at_max = [v for v in nm.values() if v["n"] == v["n_max"]]
    devs = [max(abs(x - v["r_req_mbps"] * 1e6) / (v["r_req_mbps"] * 1e6) for x in v["thr_bps"]) for v in at_max]
    rows3 = [
        f"B={v['buffer']}, {v['r_req_mbps']:g} Mb/s x {v['n']}: loss {v['agg_loss']:.1e}, worst {100 * dev:.2f}%"
        for v, dev in zip(at_max, devs, strict=True)
    ]
    ok3 = all(v["agg_loss"] <= IPLR and dev <= SHAPED_TOL for v, dev in zip(at_max, devs, strict=True))
    if not ctx.quick:  # the full run's sweep beyond N_max
        first = {
            buf: min((v["n"] for v in nm.values() if v["buffer"] == buf and v["agg_loss"] > IPLR), default=None)
            for buf, _r, _n_max in NMAX_CASES
        }
        at = ", ".join(f"B{b}: {'never (up to C/R_req)' if n is None else n}" for b, n in first.items())
        rows3.append(f"loss first above IPLR at n = {at}")
    claim3 = Claim.judged(
        ok3,
        "loss above IPLR or a connection more than 1% from R_req",
        id="n-max-loss",
        text="N_max shaped greedy connections: loss <= IPLR and each within 1% of R_req (Tables 2-3)",
        paper="loss below IPLR = 1e-3 at N_max = 74, 17, 9",
        measured="; ".join(rows3),
        tolerance="aggregate loss <= 1e-3 and every connection within ±1% of R_req",
    )

    # Claim 5 and Table 4 against the paper: TCP transfers through the CAC.
    t4_text = (
        "TCP mode: scheme #1 blocking = Erlang-B(74, lambda x measured holding); "
        "ordering #2 < #3 < #1 in transfer time and blocking (Table 4)"
    )
    if t4 is None:
        return [claim2, claim3, Claim.skipped("tcp-schemes", t4_text)]
    keys = ("blocking", "mean_transfer_time_s", "mean_running_at_blocking")
    m4 = {s: {k: Estimate.of(r[k] for r in t4[s]) for k in keys} for s in ("1", "2", "3")}
    hold1 = h if math.isfinite(h := m4["1"]["mean_transfer_time_s"].mean) else FILE_BITS / 1e6
    eb = cac("100Mbps", 10, 1e-3, "1Mbps", holding=f"{round(hold1 * 1e6)}us", arrival_rate=LAMBDA).blocking or math.nan
    b = {s: m4[s]["blocking"].mean for s in m4}
    t = {s: m4[s]["mean_transfer_time_s"].mean for s in m4}
    ci = m4["1"]["blocking"].half_width
    tol = max(ci if ci is not None else 0.0, ERLANG_MIN_TOL)
    checks = [
        (abs(b["1"] - eb) <= tol, f"scheme #1 blocking {100 * b['1']:.2f}% vs Erlang-B {100 * eb:.2f}%"),
        (t["2"] < t["3"] < t["1"], "transfer times not ordered #2 < #3 < #1"),
        (b["2"] <= b["3"] < b["1"], "blocking not ordered #2 <= #3 < #1"),
    ]
    failed = [why for ok, why in checks if not ok]
    claim5 = Claim.judged(
        not failed,
        "; ".join(failed),
        id="tcp-schemes",
        text=t4_text,
        paper="§4: scheme #2 the ideal, #3 much better than #1 (Table 4's numbers are its cells)",
        measured="; ".join(
            f"#{s}: {m4[s]['mean_transfer_time_s'].fmt('.2f')} s, {m4[s]['blocking'].fmt('.2f', scale=100)}% blocked, "
            f"running at blocking {m4[s]['mean_running_at_blocking'].fmt('.1f')}"
            for s in ("1", "2", "3")
        )
        + f" ({len(t4['seeds'])} seeds); Erlang-B(74, {LAMBDA} x {hold1:.2f} s) = {100 * eb:.2f}%",
        tolerance=f"|B1 - Erlang-B| <= max(95% CI, {ERLANG_MIN_TOL}); T2 < T3 < T1 and B2 <= B3 < B1",
    )
    return [claim2, claim3, claim5]


def _figure(ctx: Context, m: dict[int, dict[str, float]], erlang: float, ps: float, paper3: dict[str, float]) -> Figure:
    fig = figures.new_figure(8.0, 4.0)
    x = [0, 1, 2]
    for ax, ours, theirs, label, ylabel in zip(
        fig.subplots(1, 2),
        ([100 * m[s]["blocking"] for s in (1, 2, 3)], [m[s]["mean_transfer_time_s"] for s in (1, 2, 3)]),
        ([100 * erlang, 0.0, 100 * paper3["blocking"]], [10.0, ps, paper3["mean_transfer_time_s"]]),
        ("paper / Erlang-B", "paper / analytic"),
        ("blocking (%)", "mean transfer time (s)"),
        strict=True,
    ):
        ax.bar([i - 0.2 for i in x], ours, width=0.4, label="qoslab (fluid)")
        ax.bar([i + 0.2 for i in x], theirs, width=0.4, label=label)
        ax.set_xticks(x, ["#1", "#2", "#3"])
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=8)
    caption = (
        "Table 4 in fluid mode: blocking and mean transfer time per scheme, qoslab against the paper (#3), "
        "Erlang-B (#1 blocking), file/R_req (#1 time) and processor sharing (#2 time)."
    )
    return ctx.figure(fig, "schemes.png", caption)


def _table1_md(t1: dict[str, Any]) -> str:
    rows = [
        f"| {'none' if v['rate_mbps'] is None else format(v['rate_mbps'], 'g') + ' Mb/s'} | {v['min_rtt_ms']} ms | "
        f"{Estimate.of(v['srtt_s']).fmt('.3g')} | {Estimate.of(v['loss']).fmt('.3g')} | {pct(v['agg_loss'], '.2f')} | "
        f"{pct(v['stopped_share'], '.0f')} | {Estimate.of(x / 1e6 for x in v['thr_bps']).fmt('.3f')} |"
        for v in t1.values()
    ]
    head = (
        "| shaping R | min RTT | avg RTT (s) | loss ratio (mean of per-connection ratios) | aggregate loss | "
        "stopped (< 0.1 C/n) | throughput per connection (Mb/s) |"
    )
    return (
        md_table(head, rows)
        + "\n\nMean ± 95% interval across connections (all seeds pooled); aggregate: all dropped / sent."
    )


def _start_patterns_md(sp: dict[str, Any]) -> str:
    rtts = sorted({v["min_rtt_ms"] for v in sp.values()})
    head = " | ".join(f"stopped at {r} ms | agg. loss at {r} ms" for r in rtts)
    rows = []
    for preset in ("qoslab", "ns2"):
        for pkey, _j, desc in START_PATTERNS:
            cells = []
            for r in rtts:
                v = sp.get(f"{preset}/{pkey}/rtt{r}ms")
                cells += [pct(v["stopped_share"], ".0f"), pct(v["agg_loss"], ".2f")] if v else ["n/a", "n/a"]
            rows.append(f"| {preset} | {desc} | {' | '.join(cells)} |")
    return md_table(f"| timers | start pattern | {head} |", rows) + "\n\nTable 1's unshaped case, all seeds pooled."
