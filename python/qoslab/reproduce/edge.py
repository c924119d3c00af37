"""The ``edge`` reproduction [Guerin99]: Figs. 7-9 (§V.B), Table I (§V.C), §V.A (:mod:`.edge_overhead`), the study
of readings (:mod:`.edge_readings`). Set-up, runs, claims: docs/reproductions/edge.md, docs/decisions/reproduce-edge.md.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from ..errors import ReproductionError
from ..result import Result
from ..scenario import Override, Scenario
from ..stats import Estimate
from . import edge_overhead, edge_readings, figures
from .cells import Measured, NotMeasured
from .fidelity import md_table
from .framework import Claim, Context, Figure, Outcome, folder_name
from .paper import PaperData, load_paper

NAME = "edge"
TITLE = "Edge-router QoS: SCFQ between EF and AF/BE, rate guarantees by buffer management"
SEED_FILE = "Guerin99"
#: ``--testbed``: Table I's two set-ups also run on real packets (:func:`_testbed_table1`).
TESTBED = True
PAPER = "QoS in edge devices: a software implementation on an access router [Guerin99]"
FULL_SEEDS = 5

HEADER = 28
#: Stream -> (payload bytes, reservation kb/s or None for BE) of Fig. 6(a).
STREAMS: dict[str, tuple[int, float | None]] = {
    "A1": (1024, 200),
    "A2": (128, 100),
    "B1": (1024, None),
    "A3": (512, 100),
    "A4": (512, 200),
    "A5": (1024, 100),
    "A6": (128, 200),
    "B2": (128, None),
    "B3": (512, None),
}
LARGE, MEDIUM, SMALL = ("A1", "A5", "B1"), ("A3", "A4", "B3"), ("A2", "A6", "B2")
CONFORMANT_AF = ("A1", "A2", "A5", "A6")
#: Fig. 6(b): A2 and A5 moved to the EF queue.
EF_NAMES = {"A2": "E1", "A5": "E2"}
BUFF_SIZES = (128, 256, 384, 512, 768, 1024)
POOLS = (50, 80, 100, 150, 200, 300, 500)
QUICK_BUFF_SIZES, QUICK_POOLS = (128, 512, 1024), (50, 500)
TABLE1_BUFFERS, TABLE1_BUFF_SIZE, FIG8_BUFF_SIZE, FIG7_BUFFERS = 80, 512, 512, 80
TABLE1_COLUMNS = ("Delay in AF queue", "Delay in EF queue")
#: "by a factor of more than [lost]" (§V.C); Table I's 180/44 and 169/49 admit at most 3.
EF_FACTOR = 3.0
LINK_KBPS, RESERVED_KBPS = 2000.0, 900.0
#: Fig. 6(b)'s reservations by service (kb/s of IP): EF (E1 + E2) and AF (A1, A3, A4, A6).
EF_RESERVED_KBPS, AF_RESERVED_6B_KBPS = 200, 700


def derived_ef_rate_bps() -> int:
    """The EF queue's SCFQ rate in Fig. 6(b), 2 Mb/s x 200/900 in b/s rounded down [Guerin99 §III]
    (docs/decisions/reproduce-edge.md, "edge: the EF queue's scheduler rate follows §III")."""
    return int(LINK_KBPS * 1000) * EF_RESERVED_KBPS // (EF_RESERVED_KBPS + AF_RESERVED_6B_KBPS)


#: Table I's control: the EF queue at the sum of the EF reservations, one knob.
EF_RATE_SUM = f"{EF_RESERVED_KBPS}kbps"
EXCESS_SHARE = (LINK_KBPS - RESERVED_KBPS) / 5
WARMUP_S = 5.0
#: Full runs' controlled runs: Table I against the pool, the sharing against the offered load (kb/s, IP).
SENS_POOLS, SENS_OFFERED = (80, 120, 160, 200), (500, 700)
#: The excess streams' traffic groups and payloads in the scenario files.
EXCESS_GROUPS = (("B1", 1024), ("A3", 512), ("A4", 512), ("B2", 128), ("B3", 512))
#: The sharing at the largest pool, one knob each: "as_be" (A3, A4 without reservations) and
#: "exact" (every packet counted at its size, the pool kept in bytes).
EXACT_BUFF_SIZE, SHARE_KNOBS = 128, ("baseline", "as_be", "exact")
#: Table I: the hosts A2 and A5 may start from (Fig. 5's sources; the assignment is lost).
HOSTS = ("sea", "sky", "land")
#: The AF/BE queue of McKinley's egress (SCFQ's second child); its slots follow STREAMS in Fig. 6(a).
AF_QUEUE = "mckinley->alps/band1"
#: McKinley's egress link in the scenario files.
EGRESS = "topology.links[mckinley->alps]"


def interval_ns(payload: int, kbps: float) -> int:
    """MGEN PERIODIC's packet spacing (ns) for ``payload`` bytes at ``kbps`` of IP (payload + HEADER)."""
    return round((payload + HEADER) * 8e6 / kbps)


def _scenario(
    ctx: Context,
    file: str,
    *,
    buffers: int = TABLE1_BUFFERS,
    buff_size: int = TABLE1_BUFF_SIZE,
    offered_kbps: int | None = None,
    extra: tuple[Override, ...] = (),
    full_length: bool = False,
) -> Scenario:
    """``file`` with the pool, BUFF_SIZE (Table I's by default) and ``extra``; 25 s if quick but ``full_length``."""
    sc = Scenario.load(ctx.scenario_path(f"edge/{file}.toml"))
    over: list[Override] = [(f"{EGRESS}.queue.buffers", buffers), (f"{EGRESS}.queue.buff_size", f"{buff_size}B")]
    over += extra
    if file == "fig6b_periodic":
        # The EF pool: the EF reservations' share of the pool (a lost number; decisions.md).
        over.append((f"{EGRESS}.queue.ef_buffers", round(buffers * EF_RESERVED_KBPS / LINK_KBPS)))
    if offered_kbps is not None:
        over += [(f"traffic[{name}].interval", f"{interval_ns(size, offered_kbps)}ns") for name, size in EXCESS_GROUPS]
    if ctx.quick and not full_length:
        over.append(("duration", "25s"))
    return sc.with_overrides(*over)


#: A point of the grid: (the key its runs are gathered under, variant, scenario).
Point = tuple[tuple[str, Any], str, Scenario]
FIG6A, FIG6B = "fig6a_periodic", "fig6b_periodic"


def _controlled_points(ctx: Context) -> list[Point]:
    """The full run's controlled runs, one knob each (docs/reproductions/edge.md)."""
    files = (("sens_af", FIG6A), ("sens_ef", FIG6B))
    exact = TABLE1_BUFFERS * TABLE1_BUFF_SIZE // EXACT_BUFF_SIZE
    points: list[Point] = [((v, n), f"{v}_pool{n}", _scenario(ctx, f, buffers=n)) for n in SENS_POOLS for v, f in files]
    points += [
        ((v, "exact"), f"{v}_exact", _scenario(ctx, f, buffers=exact, buff_size=EXACT_BUFF_SIZE)) for v, f in files
    ]
    for kbps in SENS_OFFERED:
        sc = _scenario(ctx, FIG6A, buffers=POOLS[-1], buff_size=FIG8_BUFF_SIZE, offered_kbps=kbps)
        points.append((("sens_offered", kbps), f"sens_offered{kbps}", sc))
    links = Scenario.load(ctx.scenario_path(f"edge/{FIG6A}.toml")).echo["topology"]["links"]
    (queue,) = [x["queue"] for x in links if (x["a"], x["b"]) == ("mckinley", "alps")]
    if [x["service"] for x in queue["streams"] if x["name"] in ("A3", "A4")] != ["af", "af"]:
        raise ReproductionError(f"edge: {FIG6A} no longer has A3 and A4 as AF streams; update the controlled run")
    as_be = tuple((f"{EGRESS}.queue.streams[{s}]", {"name": s, "service": "be"}) for s in ("A3", "A4"))
    shared = {
        "as_be": (POOLS[-1], FIG8_BUFF_SIZE, as_be),
        "exact": (POOLS[-1] * FIG8_BUFF_SIZE // EXACT_BUFF_SIZE, EXACT_BUFF_SIZE, ()),
    }
    for knob, (n, b, x) in shared.items():
        points.append(
            (("sens_share", knob), f"sens_share_{knob}", _scenario(ctx, FIG6A, buffers=n, buff_size=b, extra=x))
        )
    rules = f"{EGRESS}.stages[type=classifier].rules"
    for a2, a5 in itertools.product(HOSTS, HOSTS):
        # A2 from host a2 and A5 from a5: their traffic and their classifier rules.
        over = tuple(
            o for s, h in (("A2", a2), ("A5", a5)) for o in ((f"traffic[{s}].src", h), (f"{rules}[stream={s}].src", h))
        )
        points.append((("sens_hosts", (a2, a5)), f"sens_hosts_{a2}_{a5}", _scenario(ctx, FIG6A, extra=over)))
    return points


#: One run's readings per stream (:func:`_rates`, :func:`_occupancy`); the runs of each key.
Rates = dict[str, dict[str, float]]
By = dict[tuple[str, Any], list[Rates]]
RATE_KEYS = ("ip_kbps", "payload_kbps", "delay_ms")


def _rates(res: Result) -> Rates:
    """Per stream: IP and payload throughput (kb/s) from WARMUP_S on, and mean delay (ms)."""
    s = res.series
    bins = s[(s["entity_kind"] == "flow") & (s["t_s"] >= WARMUP_S)]
    out: Rates = {}
    for _, f in res.flows.iterrows():
        name = str(f["group"])
        rows = bins[bins["entity_id"] == f["name"]]
        ip_bytes = float(rows.loc[rows["metric"] == "delivered_bytes", "value"].sum())
        pkts = float(rows.loc[rows["metric"] == "delivered_pkts", "value"].sum())
        # Each bin's t_s is its start: the last bin ends one bin later.
        starts = sorted(set(rows["t_s"].tolist()))
        secs = starts[-1] + (starts[-1] - starts[-2]) - WARMUP_S if len(starts) > 1 else math.nan
        out[name] = {
            "ip_kbps": ip_bytes * 8 / secs / 1e3,
            "payload_kbps": (ip_bytes - HEADER * pkts) * 8 / secs / 1e3,
            "delay_ms": float(f["delay_mean_s"]) * 1e3,
            "dropped_pkts": float(f["dropped_pkts"]),
        }
    return out


def _occupancy(res: Result) -> Rates:
    """Per stream of Fig. 6(a): time-averaged real and counted bytes in the AF/BE queue from WARMUP_S on."""
    s = res.series
    q = s[(s["entity_kind"] == "queue") & (s["entity_id"] == AF_QUEUE) & (s["t_s"] >= WARMUP_S)]
    out: Rates = {}
    for k, name in enumerate(STREAMS):
        real = q.loc[q["metric"] == f"slot{k}_bytes", "value"]
        counted = q.loc[q["metric"] == f"slot{k}_counted", "value"]
        if real.empty:
            raise ReproductionError(f"edge: no occupancy probe slot{k}_bytes for {name} in {AF_QUEUE}")
        out[name] = {"bytes": float(real.mean()), "counted": float(counted.mean())}
    return out


def payloads(small: int = 128, large: int = 1024) -> dict[str, int]:
    """Each stream's payload (B) with the S and L packets of ``small`` and ``large`` bytes."""
    return {s: small if n < FIG8_BUFF_SIZE else large if n > FIG8_BUFF_SIZE else n for s, (n, _) in STREAMS.items()}


def excess_shares(
    ip: dict[str, float], res: dict[str, float | None], *, small: int = 128, large: int = 1024
) -> dict[str, float]:
    """Claim 4's shares of the unreserved bandwidth in payload kb/s (Fig. 8(c)) from IP throughputs
    ``ip`` and reservations ``res``: A3's and A4's excess, B1's and B3's whole, B2's scaled by
    BUFF_SIZE / its payload [Guerin99 §V.B.2]; ``small``, ``large``: the S and L payloads."""
    size = payloads(small, large)
    frac = {s: n / (n + HEADER) for s, n in size.items()}
    out = {s: (ip[s] - (res[s] or 0.0)) * frac[s] for s in ("A3", "A4")} | {s: ip[s] * frac[s] for s in ("B1", "B3")}
    return out | {"B2": ip["B2"] * frac["B2"] * FIG8_BUFF_SIZE / size["B2"]}


#: Claim 3's noise floor: a stream "loses" when its throughput falls by more than this fraction.
LOSS_FLOOR = 0.01


def loses(before: float, after: float) -> bool:
    """Claim 3's test: ``after`` is lower than ``before`` by more than LOSS_FLOOR of it."""
    return after < (1.0 - LOSS_FLOOR) * before


def offset_free_ms(t1: dict[str, tuple[float, float]]) -> float:
    """Table I's (AF2 - AF5) - (EF2 - EF5) (ms) from stream -> (AF, EF) delay: offset-free."""
    return (t1["A2"][0] - t1["A5"][0]) - (t1["A2"][1] - t1["A5"][1])


# The claims' tests on mean IP kb/s per stream (edge_readings judges every reading with them too).
Tput = dict[str, float]


def judge_conformant(
    by_x: dict[int, Tput], res: dict[str, float | None], streams: tuple[str, ...] = CONFORMANT_AF, least: float = 0.95
) -> tuple[bool, float, str, int]:
    """Claim 1 (Fig. 7(b)'s "well in excess" with A3, A4 and WELL_IN_EXCESS): each of ``streams`` gets
    at least ``least`` x its reservation at every point; (holds, lowest multiple, stream, point)."""
    worst = min((t[s] / (res[s] or math.nan), s, x) for x, t in by_x.items() for s in streams)
    return worst[0] >= least, *worst


def spread(by_x: dict[int, Tput], stream: str) -> float:
    """(max - min)/mean of ``stream``'s throughput across a sweep's points."""
    v = [t[stream] for t in by_x.values()]
    return (max(v) - min(v)) / (sum(v) / len(v))


def judge_fig7a(by_buff: dict[int, Tput]) -> tuple[bool, dict[str, float]]:
    """Claim 2: A1's and A5's spreads <= 5 % and B1 higher at the largest BUFF_SIZE; (holds, spreads)."""
    spreads = {s: spread(by_buff, s) for s in ("A1", "A5")}
    lo, hi = min(by_buff), max(by_buff)
    return all(v <= 0.05 for v in spreads.values()) and by_buff[hi]["B1"] > by_buff[lo]["B1"], spreads


def judge_fig7c(by_buff: dict[int, Tput]) -> bool:
    """Claim 3: A2, A6 and B2 each lose (:func:`loses`) from the smallest to the largest BUFF_SIZE."""
    lo, hi = min(by_buff), max(by_buff)
    return all(loses(by_buff[lo][s], by_buff[hi][s]) for s in SMALL)


def judge_sharing(shares: dict[str, float]) -> bool:
    """Claim 4: every excess share (:func:`excess_shares`) within 20 % of 1,100/5 kb/s."""
    return all(abs(v - EXCESS_SHARE) <= 0.2 * EXCESS_SHARE for v in shares.values())


# Fig. 7(b) and Fig. 9 (docs/decisions/reproduce-edge.md, "edge: Fig. 7(b) and Fig. 9 as claims")
# on per-seed IP kb/s: point -> stream -> one value per seed.
PerSeed = dict[int, dict[str, list[float]]]
#: "a slight decrease" at most, "well in excess" at least (x the reservation); Fig. 7(b)'s steps.
SLIGHT, WELL_IN_EXCESS = 0.10, 1.5
FIRST_STEP, MEDIUM_BUFF = (128, 256), 512


def direction(before: list[float], after: list[float]) -> int:
    """+1 (-1) when ``after`` is above (below) ``before`` beyond the seeds' noise (the 95 % interval
    of the per-seed differences excludes 0 and the change is >= LOSS_FLOOR), else 0."""
    if len(before) != len(after) or len(before) < 2:
        raise ReproductionError(
            f"edge: a change needs the same >= 2 seeds at both points, got {len(before)}, {len(after)}"
        )
    d = Estimate.of(a - b for a, b in zip(after, before, strict=True))
    hw = d.half_width
    if hw is None or abs(d.mean) <= hw or abs(d.mean) < LOSS_FLOOR * Estimate.of(before).mean:
        return 0
    return 1 if d.mean > 0 else -1


def rel_change(before: list[float], after: list[float]) -> float:
    """The change of the means, as a fraction of the mean before."""
    b = Estimate.of(before).mean
    return (Estimate.of(after).mean - b) / b


def judge_fig7b_sensitive(by_buff: dict[int, Tput]) -> tuple[bool, dict[str, float]]:
    """Fig. 7(b): A3's and A4's spreads across BUFF_SIZE each above A1's and A5's; (holds, spreads)."""
    spreads = {s: spread(by_buff, s) for s in ("A1", "A5", "A3", "A4")}
    return min(spreads["A3"], spreads["A4"]) > max(spreads["A1"], spreads["A5"]), spreads


def judge_steps(
    by_x: PerSeed, streams: tuple[str, ...], lo: int, hi: int, want: int, most: float | None = None
) -> tuple[bool, dict[str, tuple[int, float]]]:
    """Fig. 7(b)'s and Fig. 9's steps: each of ``streams`` from point ``lo`` to ``hi`` in direction ``want``
    (:func:`direction`; 0: within the noise), by at most ``most`` of its mean at ``lo`` if given;
    (holds, stream -> (direction, relative change))."""
    steps = {s: (direction(by_x[lo][s], by_x[hi][s]), rel_change(by_x[lo][s], by_x[hi][s])) for s in streams}
    return all(d == want and (most is None or want * c <= most) for d, c in steps.values()), steps


def judge_fig7b_b3(by_buff: PerSeed) -> tuple[bool, dict[str, dict[str, tuple[int, float]]]]:
    """Fig. 7(b): B3 rises 128 -> 256 B and falls from 512 B on beyond the noise, less than A3 and A4."""
    rise = judge_steps(by_buff, MEDIUM, *FIRST_STEP, 1)[1]
    fall = judge_steps(by_buff, MEDIUM, MEDIUM_BUFF, max(by_buff), -1)[1]
    less = all(abs(st["B3"][1]) < abs(st[s][1]) for st in (rise, fall) for s in ("A3", "A4"))
    return rise["B3"][0] == 1 and fall["B3"][0] == -1 and less, {"rise": rise, "fall": fall}


def paper_table1(paper: PaperData | None = None) -> dict[str, tuple[float, float]]:
    """Table I from ``paper`` (by default paperdata/edge/cells.csv): stream -> (AF, EF) delay, ms."""
    if paper is None:
        paper = load_paper(folder_name(NAME))
    got = {c.key: c.number for c in paper.cells if c.table == "Table I"}
    out = {}
    for s in ("A2", "A5"):
        af, ef = (got.get(("Table I", s, col)) for col in TABLE1_COLUMNS)
        if af is None or ef is None:
            raise ReproductionError(f"edge: {paper.path}/cells.csv has no Table I delays of {s}")
        out[s] = (af, ef)
    return out


def paper_cells(af: list[Rates], ef: list[Rates]) -> list[Measured | NotMeasured]:
    """Table I's cells: A2's and A5's mean delay (ms) per seed in the Fig. 6(a) and 6(b) runs."""
    return [
        Measured(table="Table I", row=s, column=col, values=[r[s]["delay_ms"] for r in runs])
        for s in ("A2", "A5")
        for col, runs in zip(TABLE1_COLUMNS, (af, ef), strict=True)
    ]


def _fig6a_names(rates: Rates) -> Rates:
    """A Fig. 6(b) run's rates with A2 and A5 (E1 and E2 there) under their Fig. 6(a) names."""
    for a, e in EF_NAMES.items():
        rates[a] = rates.pop(e)
    return rates


def _mean(runs: list[Rates], stream: str, key: str) -> Estimate:
    return Estimate.of([r[stream][key] for r in runs])


def _fmt(e: Estimate) -> str:
    return e.fmt(".0f")


def reproduce(ctx: Context) -> Outcome:
    buff_sizes = QUICK_BUFF_SIZES if ctx.quick else BUFF_SIZES
    pools = QUICK_POOLS if ctx.quick else POOLS
    # The grid: (key its runs are gathered under, variant, scenario), each run at every seed.
    points: list[Point] = [
        (("fig7", b), f"fig7_buff{b}", _scenario(ctx, FIG6A, buffers=FIG7_BUFFERS, buff_size=b)) for b in buff_sizes
    ]
    points += [
        ((fig, n), f"{fig}_pool{n}", _scenario(ctx, file, buffers=n, buff_size=FIG8_BUFF_SIZE))
        for fig, file in (("fig8", "fig6a_periodic"), ("fig9", "fig6a_poisson"))
        for n in pools
    ]
    # Table I, and its control (quick runs too): the EF rate at the sum of the EF reservations.
    ef_sum = ((f"{EGRESS}.queue.ef_rate", EF_RATE_SUM),)
    points += [
        ((v, None), v, _scenario(ctx, f, extra=x, full_length=True))
        for v, f, x in (("table1_af", FIG6A, ()), ("table1_ef", FIG6B, ()), ("table1_ef_sum", FIG6B, ef_sum))
    ]
    if not ctx.quick:
        points += _controlled_points(ctx)
    ctx.log(f"edge: {len(points) * len(ctx.seeds)} runs")

    def reduce(key: tuple[str, Any], res: Result) -> tuple[Rates, Rates | None]:
        """A run's rates (Fig. 6(b)'s E1/E2 as A2/A5), and its occupancy where a full run's tables read it."""
        rates = _fig6a_names(_rates(res)) if key[0] in ("table1_ef", "table1_ef_sum", "sens_ef") else _rates(res)
        kept = not ctx.quick and (key[0] == "sens_share" or key == ("fig8", pools[-1]))
        return rates, _occupancy(res) if kept else None

    grid = ctx.run_grid(points, reduce)
    by: By = {k: [rates for rates, _ in runs] for k, runs in grid.items()}
    occ: By = {k: [o for _, o in runs if o is not None] for k, runs in grid.items() if runs[0][1] is not None}
    del grid
    if not ctx.quick:
        edge_readings.run(ctx, by)
        # The sharing knobs' baseline is Fig. 8's largest pool.
        by[("sens_share", "baseline")] = by[("fig8", pools[-1])]
        occ[("sens_share", "baseline")] = occ[("fig8", pools[-1])]

    data: dict[str, Any] = {
        fig: {str(x): {s: {k: _mean(by[(fig, x)], s, k).mean for k in RATE_KEYS} for s in STREAMS} for x in xs}
        for fig, xs in (("fig7", buff_sizes), ("fig8", pools), ("fig9", pools))
    }
    # Claims 1-4: the conformant AF streams at Fig. 8's pools, Fig. 7(a) and 7(c), the sharing.
    reservations = {s: r for s, (_, r) in STREAMS.items()}
    fig7, fig8 = (
        {int(x): {s: v["ip_kbps"] for s, v in t.items()} for x, t in data[k].items()} for k in ("fig7", "fig8")
    )
    ok1, w_frac, w_stream, w_pool = judge_conformant(fig8, reservations)
    lo_b, hi_b = buff_sizes[0], buff_sizes[-1]
    ok2, spreads = judge_fig7a(fig7)
    edges = {s: tuple(_mean(by[("fig7", b)], s, "ip_kbps") for b in (lo_b, hi_b)) for s in (*SMALL, "B1")}
    shares = excess_shares(fig8[pools[-1]], reservations)
    ok4 = judge_sharing(shares)
    shares["B2 × 512/128"] = shares.pop("B2")
    # Claim 5, Table I: its four delays are cells (paper_cells); the claim judges the factor and the order.
    af, ef = by[("table1_af", None)], by[("table1_ef", None)]
    t1 = {s: (_mean(af, s, "delay_ms"), _mean(ef, s, "delay_ms")) for s in ("A2", "A5")}
    m1 = {s: (a.mean, e.mean) for s, (a, e) in t1.items()}
    data["table1"] = {s: {"af_ms": a, "ef_ms": e} for s, (a, e) in m1.items()}
    factor = all(a >= EF_FACTOR * e for a, e in m1.values())
    order = m1["A2"][1] < m1["A5"][1] and m1["A2"][0] > m1["A5"][0]
    offset_free, paper_offset_free = offset_free_ms(m1), offset_free_ms(paper_table1(ctx.paper))
    data["table1_offset_free_ms"] = {"qoslab": offset_free, "paper": paper_offset_free}
    why = [] if factor else [f"EF delays not {EF_FACTOR:g}x lower"]
    why += [] if order else ["the A2/A5 order differs from the paper's"]
    claims = [
        Claim.judged(
            ok1,
            f"{w_stream} gets {w_frac * 100:.1f}% of its reservation with {w_pool} buffers; "
            "see docs/reproductions/edge.md",
            id="conformant-af",
            text="every conformant AF stream (A1, A2, A5, A6) gets >= 95% of its reservation (Fig. 8 pools, "
            "BUFF_SIZE 512 B, IP bytes)",
            paper="reserved streams essentially at or above their reservations (§V.B.2)",
            measured=f"lowest: {w_stream} at {w_frac * 100:.1f}% with {w_pool} buffers",
            tolerance=">= 95% of the reservation",
        ),
        Claim.judged(
            ok2,
            "see the Fig. 7 table in the report",
            id="fig7a-large",
            text="Fig. 7(a): A1 and A5 vary by <= 5% across BUFF_SIZE; best-effort B1 gains as BUFF_SIZE grows",
            paper="A1, A5 little sensitivity; B1 substantial improvement",
            measured=f"A1 {spreads['A1'] * 100:.1f}%, A5 {spreads['A5'] * 100:.1f}%; B1 {_fmt(edges['B1'][0])} -> "
            f"{_fmt(edges['B1'][1])} kb/s ({lo_b} -> {hi_b} B)",
            tolerance="spread <= 5%; B1 higher at the largest BUFF_SIZE",
        ),
        Claim.judged(
            judge_fig7c(fig7),
            "see the Fig. 7 table in the report",
            id="fig7c-small",
            text="Fig. 7(c): A2, A6 and B2 (156 B packets) lose throughput as BUFF_SIZE grows past their size",
            paper="streams with small packets get rapidly penalized; A6 more than A2",
            measured="; ".join(f"{s} {_fmt(edges[s][0])} -> {_fmt(edges[s][1])} kb/s" for s in SMALL),
            tolerance=f"at least {LOSS_FLOOR:.0%} lower at {hi_b} B than at {lo_b} B",
        ),
        Claim.judged(
            ok4,
            "A3's and A4's allocations are worth more than their reservations when the queue holds fewer real "
            "bytes than its pool; see the controlled runs (and the readings of the lost numbers) in the report and "
            "docs/reproductions/edge.md",
            id="excess-sharing",
            text=f"the 1,100 kb/s left by the reservations is shared about equally by A3, A4, B1, B2, B3 "
            f"({pools[-1]} buffers)",
            paper="about 220 kb/s each (B2 once its packet size against BUFF_SIZE is accounted for)",
            measured=", ".join(f"{k} {v:.0f}" for k, v in shares.items()) + " kb/s of payload",
            tolerance="220 kb/s ± 20%, payload as Fig. 8(c)",
        ),
        Claim.judged(
            factor and order,
            "; ".join(why) + "; see docs/reproductions/edge.md",
            id="table1-delay",
            text=f"Table I: EF delays more than {EF_FACTOR:g}x lower than AF delays (the factor's digit is lost; "
            f"{EF_FACTOR:g} read from Table I); A2 below A5 in EF, above in AF",
            paper="A2 180 -> 44 ms, A5 169 -> 49 ms (the four delays are judged as cells of Table I)",
            measured=f"A2 {_fmt(t1['A2'][0])} -> {_fmt(t1['A2'][1])} ms, A5 {_fmt(t1['A5'][0])} -> "
            f"{_fmt(t1['A5'][1])} ms; offset-free (AF2 - AF5) - (EF2 - EF5) {offset_free:.1f} ms "
            f"(paper {paper_offset_free:.0f})",
            tolerance=f"EF <= AF/{EF_FACTOR:g}; the order",
        ),
        # 6-12. Fig. 7(b) and Fig. 9 (judged in full runs only).
        *_fig7b_fig9_claims(ctx.quick, by, buff_sizes, pools, reservations),
    ]
    data["table1_ef_rates"], text = _ef_rates(by)
    sections = [("Table I at both EF rates", text)]
    if not ctx.quick:
        data["sensitivity"], text = _sensitivity(by, occ)
        sections.append(("Controlled runs behind the failing claims", text))
        data["readings"], text = edge_readings.evaluate(by)
        sections.append(("The claims across readings of the paper's lost numbers", text))
    sections += [
        ("Fig. 7: throughput against BUFF_SIZE (80 buffers, PERIODIC)", _table(data["fig7"], "BUFF_SIZE (B)")),
        ("Fig. 8: throughput against the pool (BUFF_SIZE 512 B, PERIODIC)", _table(data["fig8"], "buffers")),
        ("Fig. 9: throughput against the pool (BUFF_SIZE 512 B, POISSON)", _table(data["fig9"], "buffers")),
    ]
    tb_cells = _testbed_table1(ctx) if ctx.testbed else []
    # §V.A: the QoS share of the fast and slow path, one repetition per seed (edge_overhead).
    overhead_cells, data["overhead"], text = edge_overhead.cells(len(ctx.seeds))
    sections.append(("§V.A: the QoS share of the fast and the slow path", text))
    figs = [
        _plot(ctx, data[k], k, xlabel, f"Fig. {k[-1]}: IP throughput {what}")
        for k, xlabel, what in (
            ("fig7", "BUFF_SIZE (bytes)", "of the large, medium and small-packet streams against BUFF_SIZE"),
            ("fig8", "packet buffers", "against the total number of packet buffers (PERIODIC)"),
            ("fig9", "packet buffers", "against the total number of packet buffers (POISSON)"),
        )
    ]
    return Outcome(
        claims=claims,
        data=data,
        sections=sections,
        figures=figs,
        cells=[*paper_cells(af, ef), *overhead_cells],
        testbed_cells=tb_cells,
    )


_DIRECTION = {1: "rise", -1: "fall", 0: "within the noise"}
#: Why a quick run judges none of the claims of Fig. 7(b) and Fig. 9.
QUICK_NOT_JUDGED = (
    "not judged in --quick (3 seeds of 25 s; BUFF_SIZE 128, 512, 1024 B; pools 50 and 500): the full run judges it"
)


def _words(steps: dict[str, tuple[int, float]]) -> str:
    """Steps of :func:`judge_steps` as ``A3 +4.1% (rise), A4 ...``."""
    return ", ".join(f"{s} {c * 100:+.1f}% ({_DIRECTION[d]})" for s, (d, c) in steps.items())


def _fig7b_fig9_claims(
    quick: bool, by: By, buff_sizes: tuple[int, ...], pools: tuple[int, ...], res: dict[str, float | None]
) -> list[Claim]:
    """The claims of Fig. 7(b) and Fig. 9 [Guerin99 §V.B.1-2], judged in full runs only
    (docs/decisions/reproduce-edge.md, "edge: Fig. 7(b) and Fig. 9 as claims")."""
    f7: PerSeed = {b: {s: [r[s]["ip_kbps"] for r in by[("fig7", b)]] for s in STREAMS} for b in buff_sizes}
    f9: PerSeed = {n: {s: [r[s]["ip_kbps"] for r in by[("fig9", n)]] for s in STREAMS} for n in pools}
    m7 = {b: {s: Estimate.of(v).mean for s, v in t.items()} for b, t in f7.items()}
    # A quick run has no 256 B point for the first step.
    first = all(b in f7 for b in FIRST_STEP)
    no_first = f"no {FIRST_STEP[1]} B point in --quick"
    hi_b, lo_n, hi_n = buff_sizes[-1], pools[0], pools[-1]
    # A step is judged against the seeds' noise: with one seed (--seeds 1) there is none to judge by.
    seeds = min(len(v) for t in (*f7.values(), *f9.values()) for v in t.values())
    steps = seeds >= 2
    few = f"a step is judged against the seeds' noise, over at least 2 seeds; this run has {seeds}"
    ok_s, spreads = judge_fig7b_sensitive(m7)
    ok_r, rise = judge_steps(f7, ("A3", "A4"), *FIRST_STEP, 1) if first and steps else (None, {})
    ok_d, fall = judge_steps(f7, ("A3", "A4"), MEDIUM_BUFF, hi_b, -1, SLIGHT) if steps else (None, {})
    ok_x, multiple, w_stream, w_buff = judge_conformant(m7, res, ("A3", "A4"), WELL_IN_EXCESS)
    ok_b3, b3 = judge_fig7b_b3(f7) if first and steps else (None, {})
    ok_g, gain = judge_steps(f9, SMALL + MEDIUM, lo_n, hi_n, 1) if steps else (None, {})
    ok_l, flat = judge_steps(f9, LARGE, lo_n, hi_n, 0) if steps else (None, {})
    # (holds, id, text, paper, measured, tolerance)
    rows = [
        (
            ok_s,
            "fig7b-sensitive",
            "Fig. 7(b): A3 and A4 (medium packets) more sensitive to BUFF_SIZE than A1 and A5 (large)",
            "greater sensitivity of the AF flows to the value of BUFF_SIZE (§V.B.1)",
            ", ".join(f"{s} {v * 100:.1f}%" for s, v in spreads.items()) + " ((max - min)/mean across BUFF_SIZE)",
            "A3's and A4's spread each above A1's and A5's",
        ),
        (
            ok_r,
            "fig7b-first-rise",
            f"Fig. 7(b): A3 and A4 rise when BUFF_SIZE first increases from {FIRST_STEP[0]} to {FIRST_STEP[1]} B",
            "both streams also experience an increase in throughput when BUFF_SIZE first increases (§V.B.1)",
            _words(rise) + f" ({FIRST_STEP[0]} -> {FIRST_STEP[1]} B)" if first else no_first,
            "a rise beyond the seeds' noise (95% interval of the per-seed change excludes 0, and >= 1%)",
        ),
        (
            ok_d,
            "fig7b-slight-decrease",
            f"Fig. 7(b): A3 and A4 decrease slightly after BUFF_SIZE exceeds their packet size ({MEDIUM_BUFF} B)",
            "A3 and A4 experience a slight decrease in throughput after BUFF_SIZE increases beyond it (§V.B.1)",
            _words(fall) + f" ({MEDIUM_BUFF} -> {hi_b} B)",
            f"a fall beyond the seeds' noise and at most {SLIGHT:.0%} of the throughput at {MEDIUM_BUFF} B",
        ),
        (
            ok_x,
            "fig7b-well-in-excess",
            "Fig. 7(b): A3 and A4 get throughputs well in excess of their reservations (100 and 200 kb/s)",
            "they actually achieve throughputs well in excess of their reservations (§V.B.1)",
            f"lowest: {w_stream} at {multiple:.2f}x its reservation (BUFF_SIZE {w_buff} B); "
            + ", ".join(
                f"{s} {min(m7[b][s] for b in m7):.0f}-{max(m7[b][s] for b in m7):.0f} kb/s" for s in ("A3", "A4")
            ),
            f">= {WELL_IN_EXCESS:g}x the reservation at every BUFF_SIZE",
        ),
        (
            ok_b3,
            "fig7b-b3",
            "Fig. 7(b): best-effort B3 follows A3's and A4's trend (rise 128 -> 256 B, fall after 512 B), "
            "less pronounced",
            "B3 sees a similar trend in throughput variations, but somewhat less pronounced (§V.B.1)",
            "; ".join(f"{name} {_words(step)}" for name, step in b3.items()) if first else no_first,
            "each B3 change beyond the seeds' noise in the stated direction and smaller in size than A3's and A4's",
        ),
        (
            ok_g,
            "fig9-small-medium",
            "Fig. 9 (POISSON): the small- and medium-packet streams (A2, A6, B2, A3, A4, B3) gain from a larger pool",
            "for flows with small and medium sized packets, there is some benefit to increasing the total buffer "
            "size (§V.B.2)",
            _words(gain) + f" ({lo_n} -> {hi_n} buffers)",
            "each a rise beyond the seeds' noise",
        ),
        (
            ok_l,
            "fig9-large",
            "Fig. 9 (POISSON): the large-packet streams (A1, A5, B1) show no significant change with a larger pool",
            "for flows with large packets, there does not seem to be any significant improvement in throughput "
            "(§V.B.2)",
            _words(flat) + f" ({lo_n} -> {hi_n} buffers)",
            "each change within the seeds' noise band (two-sided)",
        ),
    ]
    why = "see the Fig. 7 and Fig. 9 tables in the report and docs/reproductions/edge.md"
    # The rows that judge steps: all but the sensitivity and the multiple of the reservation.
    stepped = {"fig7b-first-rise", "fig7b-slight-decrease", "fig7b-b3", "fig9-small-medium", "fig9-large"}
    return [
        Claim.judged(
            ok,
            why,
            unless=QUICK_NOT_JUDGED if quick else few if i in stepped and not steps else "",
            id=i,
            text=t,
            paper=p,
            measured=m,
            tolerance=tol,
        )
        for ok, i, t, p, m, tol in rows
    ]


def _testbed_table1(ctx: Context) -> list[Measured | NotMeasured]:
    """Table I's cells on the testbed at every seed (docs/testbed.md, "The edge egress on real packets")."""
    runs = {
        key: [
            _rates(ctx.run_testbed(f"table1_{key}_testbed", _scenario(ctx, file, full_length=True), seed))
            for seed in ctx.seeds
        ]
        for key, file in (("af", "fig6a_periodic"), ("ef", "fig6b_periodic"))
    }
    return paper_cells(runs["af"], [_fig6a_names(r) for r in runs["ef"]])


def _row(*cells: object) -> str:
    return "| " + " | ".join(map(str, cells)) + " |"


def _ef_rates(by: By) -> tuple[dict[str, Any], str]:
    """Table I at the derived EF rate and at the control (the sum of the EF reservations), one knob."""
    af = by[("table1_af", None)]
    settings = {
        f"derived, {derived_ef_rate_bps() / 1e3:.1f} kb/s (the reproduction's)": by[("table1_ef", None)],
        f"sum of the EF reservations, {EF_RESERVED_KBPS} kb/s (control)": by[("table1_ef_sum", None)],
    }
    out: dict[str, Any] = {}
    rows = []
    for label, runs in settings.items():
        t1 = {s: (_mean(af, s, "delay_ms").mean, _mean(runs, s, "delay_ms").mean) for s in ("A2", "A5")}
        v = {
            s: {"af_ms": a, "ef_ms": e, "factor": a / e, "ef_drops": sum(r[s]["dropped_pkts"] for r in runs)}
            for s, (a, e) in t1.items()
        }
        seeds = [
            offset_free_ms({s: (a[s]["delay_ms"], e[s]["delay_ms"]) for s in t1}) for a, e in zip(af, runs, strict=True)
        ]
        out[label] = v | {"offset_free_ms": offset_free_ms(t1), "offset_free_ms_per_seed": seeds}
        cells = [f"{v[s][k]:.1f}" for s in t1 for k in ("af_ms", "ef_ms")] + [f"{v[s]['factor']:.1f}" for s in t1]
        free = f"{offset_free_ms(t1):.1f} ({min(seeds):.1f}-{max(seeds):.1f})"
        rows.append(_row(label, *cells, *(f"{v[s]['ef_drops']:.0f}" for s in t1), free))
    text = md_table(
        "| r_EF | A2 AF | A2 EF | A5 AF | A5 EF | A2 AF/EF | A5 AF/EF | E1 drops | E2 drops | offset-free (range) |",
        rows,
        f"Table I's EF column at two EF rates (`ef_rate`, one knob), the same {len(af)} seed(s), {TABLE1_BUFFERS} "
        f"buffers (EF pool {round(TABLE1_BUFFERS * EF_RESERVED_KBPS / LINK_KBPS)}), BUFF_SIZE {TABLE1_BUFF_SIZE} B; "
        "the AF column is Fig. 6(a)'s runs for both. Delays: mean over the seeds (ms); drops: summed over the seeds; "
        "offset-free: (AF2 − AF5) − (EF2 − EF5) of the means (its range over the seeds). The derivation: "
        'docs/decisions.md, "edge: the EF queue\'s scheduler rate follows §III".',
    )
    return out, text


def _excess(runs: list[Rates], res: dict[str, float], counted: int, b2: str) -> dict[str, float]:
    """The controlled runs' excess shares (kb/s, IP): A3's and A4's beyond ``res``, B1's and B3's
    whole, B2's (key ``b2``) scaled by ``counted`` / its 156 B on the wire."""
    out = {s: _mean(runs, s, "ip_kbps").mean - res.get(s, 0.0) for s in ("A3", "A4", "B1", "B3")}
    return out | {b2: _mean(runs, "B2", "ip_kbps").mean * counted / (128 + HEADER)}


def _sensitivity(by: By, occ: By) -> tuple[dict[str, Any], str]:
    """The full run's controlled runs, one knob at a time (docs/reproductions/edge.md)."""

    def delays(n: int | str) -> dict[str, dict[str, float]]:
        af, ef = by[("sens_af", n)], by[("sens_ef", n)]
        return {
            s: {"af_ms": _mean(af, s, "delay_ms").mean, "ef_ms": _mean(ef, s, "delay_ms").mean} for s in ("A2", "A5")
        }

    pools, exact = {n: delays(n) for n in SENS_POOLS}, delays("exact")
    reserved = {"A3": 100.0, "A4": 200.0}
    offered = {k: _excess(by[("sens_offered", k)], reserved, FIG8_BUFF_SIZE, "B2 scaled") for k in SENS_OFFERED}
    exact_label = (
        f"{TABLE1_BUFFERS * TABLE1_BUFF_SIZE // EXACT_BUFF_SIZE} of {EXACT_BUFF_SIZE} B (the pool of "
        f"{TABLE1_BUFFERS} in bytes, every packet counted at its size)"
    )
    pool_rows = [
        _row(
            n,
            *(f"{p[s][k]:.0f} ms" for s in p for k in ("af_ms", "ef_ms")),
            f"{offset_free_ms({s: (p[s]['af_ms'], p[s]['ef_ms']) for s in p}):.1f} ms",
        )
        for n, p in [*pools.items(), (exact_label, exact)]
    ]
    hosts = {
        f"{a2}/{a5}": {s + "_ms": _mean(by[("sens_hosts", (a2, a5))], s, "delay_ms").mean for s in ("A2", "A5")}
        for a2 in HOSTS
        for a5 in HOSTS
    }
    cell = {k: f"{v['A2_ms']:.1f} / {v['A5_ms']:.1f}" for k, v in hosts.items()}
    occupancy, sharing, sharing_text = _sharing(by, occ)
    text = [
        md_table(
            "| buffers | A2 AF | A2 EF | A5 AF | A5 EF | (AF2 − AF5) − (EF2 − EF5) |",
            pool_rows,
            "Table I's delays against the egress pool (BUFF_SIZE 512 B unless stated, PERIODIC; the rest as in "
            "Table I). The last column is offset-free (a constant offset between A2's and A5's measurements "
            "cancels); [Guerin99] Table I gives 16 ms.",
        ),
        md_table(
            "| offered (kb/s) | A3 | A4 | B1 | B3 | B2 × 512/156 |",
            [_row(kbps, *(f"{x:.0f}" for x in v.values())) for kbps, v in offered.items()],
            f"Excess over the reservation (kb/s, IP) at {POOLS[-1]} buffers against the excess streams' offered load:",
        ),
        sharing_text,
        md_table(
            ["A2 from ↓ / A5 from →", *HOSTS],
            [_row(a2, *(cell[f"{a2}/{a5}"] for a5 in HOSTS)) for a2 in HOSTS],
            f"Table I's AF delays (Fig. 6(a), {TABLE1_BUFFERS} buffers, BUFF_SIZE 512 B) against the hosts A2 and A5 "
            "start from (the scenario files: A2 from sea, A5 from sky); cells: A2 / A5 mean delay, ms.",
        ),
    ]
    data = {"pools": pools, "pool_exact": exact, "offered": offered, "occupancy": occupancy, "sharing": sharing}
    return data | {"hosts": hosts}, "\n\n".join(text)


def _sharing(by: By, occ: By) -> tuple[dict[str, Any], dict[str, Any], str]:
    """Fig. 8's largest pool: the AF/BE queue's occupancy per stream, and the excess shares under each sharing knob."""
    runs, rates = occ[("sens_share", "baseline")], by[("sens_share", "baseline")]
    pool = (POOLS[-1] - 1) * FIG8_BUFF_SIZE
    rows = {
        s: {
            "alloc": math.floor(pool * (res or 0) / LINK_KBPS),
            "counted": _mean(runs, s, "counted").mean,
            "bytes": _mean(runs, s, "bytes").mean,
            "kbps": _mean(rates, s, "ip_kbps").mean,
        }
        for s, (_, res) in STREAMS.items()
    }
    q, total = sum(r["bytes"] for r in rows.values()), sum(r["kbps"] for r in rows.values())
    lines = [
        _row(
            s,
            _reservation(STREAMS[s][1]),
            f"{r['alloc']} B",
            f"{r['counted']:.0f} B",
            f"{r['bytes']:.0f} B",
            f"{100 * r['bytes'] / q:.1f} %",
            f"{100 * r['kbps'] / total:.1f} %",
        )
        for s, r in rows.items()
    ]
    inflation = sum(r["counted"] - r["bytes"] for r in rows.values())
    unused = sum(max(0.0, r["alloc"] - r["counted"]) for r in rows.values())
    occupancy = md_table(
        "| stream | reservation | allocation b_i | counted q_i | real bytes | share of real bytes | share of link |",
        lines,
        f"Occupancy of the AF/BE queue at {POOLS[-1]} buffers (BUFF_SIZE 512 B, PERIODIC): time-averaged bytes "
        "each stream holds from 5 s on, mean over the seeds; a stream's share of the link is its share of the real "
        "bytes (Little's law, docs/reproductions/edge.md).",
    )
    occupancy += (
        f"\n\nB = {pool} B, Q = {q:.0f} B: B/Q = {pool / q:.2f}, what a whole allocation b_i = B r_i / C is "
        f"worth in reservations. B − Q: {inflation:.0f} B counted but not there (packets below BUFF_SIZE), about "
        f"{unused:.0f} B of allocations left empty, about {pool - q - inflation - unused:.0f} B of shared buffers "
        "left free (the holes)."
    )
    labels = {
        "baseline": f"baseline: BUFF_SIZE 512 B, {POOLS[-1]} buffers",
        "as_be": "A3 and A4 without reservations (BE)",
        "exact": f"every packet counted at its size: BUFF_SIZE {EXACT_BUFF_SIZE} B, "
        f"{POOLS[-1] * FIG8_BUFF_SIZE // EXACT_BUFF_SIZE} buffers (the same pool in bytes)",
    }
    data, lines = {}, []
    for knob in SHARE_KNOBS:
        rates, runs = by[("sens_share", knob)], occ[("sens_share", knob)]
        bs = EXACT_BUFF_SIZE if knob == "exact" else FIG8_BUFF_SIZE
        res = {"A3": 0.0, "A4": 0.0} if knob == "as_be" else {s: float(STREAMS[s][1] or 0) for s in ("A3", "A4")}
        # The AF/BE queue's pool (bytes) less the EF child's one buffer, over its real bytes.
        b_q = (POOLS[-1] * FIG8_BUFF_SIZE // bs - 1) * bs / sum(_mean(runs, s, "bytes").mean for s in STREAMS)
        ex = _excess(rates, res, max(bs, 128 + HEADER), "B2 counted")
        data[knob] = {"B/Q": b_q, **ex, "A6": _mean(rates, "A6", "ip_kbps").mean}
        lines.append(_row(labels[knob], f"{b_q:.2f}", *(f"{x:.0f}" for k, x in data[knob].items() if k != "B/Q")))
    sharing = md_table(
        "| run | B/Q | A3 | A4 | B1 | B3 | B2 counted | A6 (IP kb/s) |",
        lines,
        f"The excess shares (kb/s, IP, beyond each run's reservations; the claim's {EXCESS_SHARE:.0f} ± 20 %) "
        "with one knob turned at the largest pool; B2's scaled by max(BUFF_SIZE, 156)/156, the rate its buffers "
        "are counted at.",
    )
    return {"pool": pool, "q": q, "streams": rows}, data, f"{occupancy}\n\n{sharing}"


def _reservation(res: float | None) -> str:
    return "BE" if res is None else f"{res:.0f} kb/s"


def _table(d: dict[str, Any], xlabel: str) -> str:
    xs = list(d)
    rows = [
        f"| {s} ({size}, {_reservation(res)}) | "
        + " | ".join(f"{d[x][s]['ip_kbps']:.0f} ({d[x][s]['payload_kbps']:.0f})" for x in xs)
        + " |"
        for s, (size, res) in STREAMS.items()
    ]
    head = f"| {xlabel} → / stream (payload B, reservation) | " + " | ".join(xs) + " |"
    return md_table(head, rows, "IP throughput in kb/s (payload kb/s in brackets), mean over the seeds, from 5 s on.")


def _plot(ctx: Context, d: dict[str, Any], name: str, xlabel: str, caption: str) -> Figure:
    fig, axes = figures.new_axes(12.0, 3.8, 1, 3, sharey=False)
    xs = [int(x) for x in d]
    for ax, (title, group) in zip(
        axes, (("(a) large packets", LARGE), ("(b) medium packets", MEDIUM), ("(c) small packets", SMALL)), strict=True
    ):
        for s in group:
            ax.plot(xs, [d[str(x)][s]["ip_kbps"] for x in xs], marker="o", label=s)
            res = STREAMS[s][1]
            if res is not None:
                ax.axhline(res, linestyle=":", linewidth=0.8, color=ax.lines[-1].get_color())
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("kb/s (IP)")
        ax.legend(fontsize=8)
    return ctx.figure(fig, f"{name}.png", caption)
