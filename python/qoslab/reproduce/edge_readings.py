"""Controlled study behind the ``edge`` reproduction: claims 1-4 *together* across readings of
the paper's lost numbers.

[Guerin99]'s PDF extraction lost the numbers of Fig. 6 and most of §V (docs/decisions/reproduce-edge.md,
"`edge`: the [Guerin99] scenario"). The scenario files hold one reconstruction, fixed before any
run and not changed after seeing a result. This study asks what that reconstruction cannot
answer: *is there a reading of the lost numbers under which [Guerin99] Fig. 7 and Fig. 8
statements all hold at once?* A reading fixes every lost number the four claims depend on:

- the large and small payloads L and S (A1/A5/B1 and A2/A6/B2): the text says only that S is
  "small", counted "much larger" than it is at BUFF_SIZE = 512 B and "rapidly penalized" as
  BUFF_SIZE grows, and that BUFF_SIZE never counts an L packet larger than it is (§V.B.1-2);
  Fig. 7's largest BUFF_SIZE is L;
- A1, A3, A4 and A5's reservations (lost; A1 + A3 + A4 + A5 = 600 kb/s is stated);
- the excess streams' offered load (lost; they must have excess to share);
- Fig. 7's pool (never stated): the claims on Fig. 7 (2 and 3) are judged at every pool tried,
  and a reading passes if some pool satisfies both.

Claims 1-4 are judged with the claims' own functions (``edge.judge_*``), seeds and tolerances;
claim 5's A2/A5 order does not depend on these numbers and is studied in ``edge`` itself (the
offset-free delay difference and the host assignments).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from ..scenario import Override
from ..stats import Estimate
from .framework import Context

#: (A1, A3, A4, A5) reservations, kb/s, summing to the stated 600; the first is the files' reading.
#: A3's and A4's reservations are rendered by different glyph runs, twice each (§V.B.1-2), while
#: the extraction renders most repeated numbers alike (220 five times, 512 four times, but S two
#: ways), so decisions.md reads A3 != A4, which the glyphs do not prove: the splits with A3 == A4
#: are tried and marked.
SPLITS: dict[str, tuple[int, int, int, int]] = {
    "a": (200, 100, 200, 100),
    "b": (200, 200, 100, 100),
    "e": (100, 100, 200, 200),
    "c": (200, 150, 150, 100),
    "d": (300, 100, 100, 100),
}
#: Main family: L = 1024 B (Fig. 7 at the files' six BUFF_SIZE values).
SMALL_SIZES = (128, 160, 176, 192, 224, 256)
OFFERED = (400, 450, 500, 700)
FIG7_POOLS = (50, 60, 70, 80, 90, 100)
#: Second family: L = 1472 B (an Ethernet MTU's UDP payload), Fig. 7's sweep up to it.
LARGE_ALT = 1472
ALT_BUFF_SIZES = (128, 256, 512, 768, 1024, 1472)
ALT_SMALL_SIZES = (160, 176, 192)
ALT_OFFERED = (400, 450, 500)
ALT_SPLITS = ("a", "b", "e")
ALT_FIG7_POOLS = (80, 90, 100, 110, 120)
EXCESS = ("A3", "A4", "B1", "B2", "B3")


@dataclass(frozen=True)
class Reading:
    """One reading of the lost numbers claims 1-4 depend on."""

    large: int
    small: int
    split: str
    offered: int

    @property
    def label(self) -> str:
        return f"L {self.large}, S {self.small}, {'/'.join(map(str, SPLITS[self.split]))}, {self.offered}"

    @property
    def text_consistent(self) -> bool:
        """False where A3's and A4's reservations are equal, against the glyph reading A3 != A4
        (decisions.md, "A3's and A4's reservations differ in the text"; not proven)."""
        r = SPLITS[self.split]
        return r[1] != r[2]

    @property
    def mark(self) -> str:
        """What the report adds to a reading with A3 = A4."""
        return "" if self.text_consistent else " (A3 = A4)"


def readings() -> list[tuple[Reading, tuple[int, ...], tuple[int, ...]]]:
    """Every reading with its Fig. 7 BUFF_SIZE values and Fig. 7 pools."""
    from . import edge

    out: list[tuple[Reading, tuple[int, ...], tuple[int, ...]]] = [
        (Reading(1024, s, sp, o), edge.BUFF_SIZES, FIG7_POOLS)
        for s, sp, o in itertools.product(SMALL_SIZES, SPLITS, OFFERED)
    ]
    out += [
        (Reading(LARGE_ALT, s, sp, o), ALT_BUFF_SIZES, ALT_FIG7_POOLS)
        for s, sp, o in itertools.product(ALT_SMALL_SIZES, ALT_SPLITS, ALT_OFFERED)
    ]
    return out


def _overrides(reading: Reading) -> tuple[Override, ...]:
    """Overrides of ``fig6a_periodic`` for one reading: every stream's payload, reservation and
    packet spacing (its traffic group and its stream at the egress, selected by name)."""
    from . import edge

    res = dict(zip(("A1", "A3", "A4", "A5"), SPLITS[reading.split], strict=True))
    over = []
    for name, (size, rate) in edge.STREAMS.items():
        if size < edge.FIG8_BUFF_SIZE:
            size = reading.small
        elif size > edge.FIG8_BUFF_SIZE:
            size = reading.large
        if rate is not None:
            rate = float(res.get(name, rate))
            over.append((f"{edge.EGRESS}.queue.streams[{name}].rate", f"{rate:g}kbps"))
        kbps = reading.offered if name in EXCESS else rate
        assert kbps is not None
        over += [
            (f"traffic[{name}].size", f"{size}B"),
            (f"traffic[{name}].interval", f"{edge.interval_ns(size, kbps)}ns"),
        ]
    return tuple(over)


Plan = tuple[list[tuple[str, Any, int]], list[tuple[str, Any]]]


def _plan(ctx: Context, which: list[Reading], seeds: list[int], kind: str) -> Plan:
    from . import edge

    grid = {reading: (buffs, f7pools) for reading, buffs, f7pools in readings()}
    runs: list[tuple[str, Any, int]] = []
    keys: list[tuple[str, Any]] = []
    for reading in which:
        buffs, f7pools = grid[reading]
        over = _overrides(reading)
        tag = f"{kind}_L{reading.large}_S{reading.small}_{reading.split}_{reading.offered}"
        points = [("fig8", n, edge.FIG8_BUFF_SIZE) for n in edge.POOLS]
        points += [("fig7", n, b) for n in f7pools for b in buffs]
        for fig, n, b in points:
            sc = edge._scenario(ctx, "fig6a_periodic", buffers=n, buff_size=b, extra=over)
            for seed in seeds:
                runs.append((f"{tag}_{fig}_pool{n}_buff{b}", sc, seed))
                keys.append((kind, (reading, fig, n, b)))
    return runs, keys


def plan(ctx: Context) -> Plan:
    """The study's runs (variant, scenario, seed) and their keys (full runs of ``edge`` only)."""
    return _plan(ctx, [r for r, _, _ in readings()], ctx.seeds, "read")


def replication_seeds(ctx: Context) -> list[int]:
    """Fresh seeds, as many as the claims use, after theirs (5 seeds 1-5: seeds 6-10)."""
    return [max(ctx.seeds) + 1 + i for i in range(len(ctx.seeds))]


def replication_plan(ctx: Context, by: dict[tuple[str, Any], list[dict[str, dict[str, float]]]]) -> Plan:
    """Every reading under which claims 1-4 hold together, run again with fresh seeds
    (:func:`replication_seeds`): a reading whose claims hold only for one set of seeds sits on
    the tolerances' edge, not in a region where the paper's statements are reached."""
    passing = [row["reading"] for row in _rows(by, "read") if row["all"]]
    return _plan(ctx, passing, replication_seeds(ctx), "rep")


def save(
    ctx: Context,
    runs: list[tuple[str, Any, int]],
    keys: list[tuple[str, Any]],
    rates: list[dict[str, dict[str, float]]],
) -> None:
    """Writes every run of the study as rows of ``readings.parquet`` in the reproduction's folder:
    the reading, the phase (``read``: the claims' seeds; ``rep``: the replication's fresh seeds),
    the figure (fig7 / fig8), pool, BUFF_SIZE, seed, stream and its IP and payload
    throughput (kb/s) and mean delay (ms). Any row can be rerun from ``fig6a_periodic`` with the
    reading's overrides (:func:`_overrides`) and its seed."""
    import pandas as pd

    rows = []
    for (_, _, seed), (kind, (reading, fig, n, b)), per_stream in zip(runs, keys, rates, strict=True):
        a1, a3, a4, a5 = SPLITS[reading.split]
        for stream, v in per_stream.items():
            rows.append(
                {
                    "large_b": reading.large,
                    "small_b": reading.small,
                    "res_a1_kbps": a1,
                    "res_a3_kbps": a3,
                    "res_a4_kbps": a4,
                    "res_a5_kbps": a5,
                    "offered_kbps": reading.offered,
                    "phase": kind,
                    "figure": fig,
                    "buffers": n,
                    "buff_size_b": b,
                    "seed": seed,
                    "stream": stream,
                    "ip_kbps": v["ip_kbps"],
                    "payload_kbps": v["payload_kbps"],
                    "delay_ms": v["delay_ms"],
                }
            )
    pd.DataFrame(rows).to_parquet(ctx.figure_path("readings.parquet"), index=False)


def evaluate(by: dict[tuple[str, Any], list[dict[str, dict[str, float]]]]) -> dict[str, Any]:
    """Claims 1-4 for every reading, judged as ``edge`` judges them, and for the passing ones
    again with fresh seeds (when their runs are in ``by``); a text section and data."""
    rows = _rows(by, "read")
    rep = _rows(by, "rep")
    return {"data": {**_data(rows), "replication": _data(rep)}, "text": _text(rows, rep)}


def _rows(by: dict[tuple[str, Any], list[dict[str, dict[str, float]]]], kind: str) -> list[dict[str, Any]]:
    """One row per reading with runs of ``kind`` in ``by``: claims 1-4 and their margins."""
    from . import edge

    def tput(reading: Reading, fig: str, n: int, b: int) -> dict[str, float]:
        runs = by[(kind, (reading, fig, n, b))]
        return {s: Estimate.of([r[s]["ip_kbps"] for r in runs]).mean for s in edge.STREAMS}

    def seeds(reading: Reading) -> int:
        return len(by[(kind, (reading, "fig8", edge.POOLS[0], edge.FIG8_BUFF_SIZE))])

    rows: list[dict[str, Any]] = []
    for reading, buffs, f7pools in readings():
        if (kind, (reading, "fig8", edge.POOLS[0], edge.FIG8_BUFF_SIZE)) not in by:
            continue
        res: dict[str, float | None] = {s: r for s, (_, r) in edge.STREAMS.items()}
        res.update(dict(zip(("A1", "A3", "A4", "A5"), map(float, SPLITS[reading.split]), strict=True)))
        fig8 = {n: tput(reading, "fig8", n, edge.FIG8_BUFF_SIZE) for n in edge.POOLS}
        c1, worst, worst_stream, _ = edge.judge_conformant(fig8, res)
        shares = edge.excess_shares(fig8[edge.POOLS[-1]], res, small=reading.small, large=reading.large)
        c4 = edge.judge_sharing(shares)
        pools: dict[int, dict[str, Any]] = {}
        for n in f7pools:
            fig7 = {b: tput(reading, "fig7", n, b) for b in buffs}
            c2, spreads = edge.judge_fig7a(fig7)
            lo, hi = min(buffs), max(buffs)
            pools[n] = {
                "c2": c2,
                "c3": edge.judge_fig7c(fig7),
                "spread": max(spreads.values()),
                "a2_loss": 1 - fig7[hi]["A2"] / fig7[lo]["A2"],
            }
        both = [n for n, p in pools.items() if p["c2"] and p["c3"]]
        rows.append(
            {
                "reading": reading,
                "c1": c1,
                "c1_worst": worst,
                "c1_stream": worst_stream,
                "c4": c4,
                "shares": shares,
                "pools": pools,
                "c23_pools": both,
                "all": c1 and c4 and bool(both),
                "n_seeds": seeds(reading),
            }
        )
    return rows


def _held(row: dict[str, Any]) -> int:
    """How many of claims 1-4 hold under a reading (2 and 3 at its best Fig. 7 pool)."""
    best = max(int(p["c2"]) + int(p["c3"]) for p in row["pools"].values())
    return int(row["c1"]) + int(row["c4"]) + best


def _cell(row: dict[str, Any]) -> str:
    c23 = ",".join(map(str, row["c23_pools"])) or "–"
    c2 = ",".join(str(n) for n, p in row["pools"].items() if p["c2"]) or "–"
    c3 = ",".join(str(n) for n, p in row["pools"].items() if p["c3"]) or "–"
    mark = "**ALL**" if row["all"] else f"{_held(row)}/4"
    return (
        f"{mark}: 1 {'✓' if row['c1'] else '✗'} ({row['c1_stream']} {100 * row['c1_worst']:.0f} %), "
        f"4 {'✓' if row['c4'] else '✗'} (max {max(row['shares'].values()):.0f}, "
        f"min {min(row['shares'].values()):.0f}); 2 at {c2}; 3 at {c3}; 2+3 at {c23}"
    )


def _text(rows: list[dict[str, Any]], rep: list[dict[str, Any]]) -> str:
    from . import edge

    n_all = [r for r in rows if r["all"]]
    consistent = [r for r in rows if r["reading"].text_consistent]
    offers = sorted({r["reading"].offered for r in rows})
    lines = [
        f"{len(rows)} readings: each fixes L, S, the A1/A3/A4/A5 reservations and the excess streams' "
        "offered load (kb/s of IP), and changes nothing else in `fig6a_periodic`. Claims 1 and 4 are judged "
        f"at Fig. 8's pools (BUFF_SIZE {edge.FIG8_BUFF_SIZE} B), claims 2 and 3 at each Fig. 7 pool tried; "
        "same seeds, tolerances and code (`edge.judge_*`) as the claims above. The scenario files' reading: "
        f"L 1024, S {edge.STREAMS['A2'][0]}, 200/100/200/100, 500 kb/s, Fig. 7 at {edge.FIG7_BUFFERS} buffers.",
        "",
        f"**Claims 1-4 hold together under {len(n_all)} of the {len(rows)} readings**"
        + (": " + "; ".join(f"{r['reading'].label} (Fig. 7 at {r['c23_pools']})" for r in n_all) if n_all else "")
        + f"; {sum(1 for r in n_all if not r['reading'].text_consistent)} of them with A3 = A4 "
        f"({len(rows) - len(consistent)} readings have A3 = A4; the glyph runs of A3's and A4's "
        "reservations differ, which docs/decisions.md reads as A3 ≠ A4 without proof).",
        "",
        "Each cell: how many of claims 1-4 hold (2 and 3 at the best Fig. 7 pool); claim 1's lowest "
        "conformant stream (% of its reservation); claim 4's largest and smallest share (payload kb/s, "
        f"{edge.EXCESS_SHARE:.0f} ± 20 % allowed); the Fig. 7 pools at which claims 2, 3, and both hold.",
        "",
        "| L, S, A1/A3/A4/A5 | " + " | ".join(f"{o} kb/s" for o in offers) + " |",
        "|---|" + "---|" * len(offers),
    ]
    groups: dict[tuple[int, int, str], dict[int, dict[str, Any]]] = {}
    for r in rows:
        g = r["reading"]
        groups.setdefault((g.large, g.small, g.split), {})[g.offered] = r
    for (large, small, split), by_off in groups.items():
        mark = next(iter(by_off.values()))["reading"].mark
        label = f"{large}, {small}, {'/'.join(map(str, SPLITS[split]))}{mark}"
        lines.append(f"| {label} | " + " | ".join(_cell(by_off[o]) if o in by_off else "" for o in offers) + " |")
    if n_all:
        again = {row["reading"]: row for row in rep}
        robust = [r for r in n_all if r["reading"] in again and again[r["reading"]]["all"]]
        lines += [
            "",
            "**Replication.** The readings under which claims 1-4 hold together, run again with fresh seeds "
            f"({rep[0]['n_seeds'] if rep else 0} seeds after the claims' own; same code and tolerances). "
            f"Claims 1-4 hold again under {len(robust)} of them"
            + (": " + "; ".join(r["reading"].label + r["reading"].mark for r in robust) if robust else "")
            + ".",
            "",
            "| reading | claims' seeds | fresh seeds |",
            "|---|---|---|",
        ]
        for row in n_all:
            g, fresh = row["reading"], again.get(row["reading"])
            lines.append(f"| {g.label}{g.mark} | {_cell(row)} | {_cell(fresh) if fresh else 'not run'} |")
    return "\n".join(lines)


def _data(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out = []
    for r in rows:
        g = r["reading"]
        out.append(
            {
                "large": g.large,
                "small": g.small,
                "reservations": SPLITS[g.split],
                "offered_kbps": g.offered,
                "text_consistent": g.text_consistent,
                "conformant_af": {"holds": r["c1"], "lowest": r["c1_worst"], "stream": r["c1_stream"]},
                "excess_sharing": {"holds": r["c4"], "shares": r["shares"]},
                "fig7_pools": {
                    str(n): {
                        "fig7a_large": p["c2"],
                        "fig7c_small": p["c3"],
                        "spread": p["spread"],
                        "a2_loss": p["a2_loss"],
                    }
                    for n, p in r["pools"].items()
                },
                "all_hold": r["all"],
            }
        )
    return {"readings": out, "all_hold": sum(1 for r in rows if r["all"])}
