"""The study of readings behind ``edge`` (full runs): do claims 1-4 hold together under some reading of
[Guerin99]'s lost numbers? docs/reproductions/edge.md, "Can any reading of the lost numbers reach the claims?".
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

from ..scenario import Override, Scenario
from ..stats import Estimate
from . import edge
from .framework import Context

#: (A1, A3, A4, A5) reservations, kb/s, summing to the stated 600; "a" is the files' reading. The
#: splits with A3 == A4 are tried and marked (decisions.md reads A3 != A4 from the glyphs, unproven).
SPLITS: dict[str, tuple[int, int, int, int]] = {
    "a": (200, 100, 200, 100),
    "b": (200, 200, 100, 100),
    "e": (100, 100, 200, 200),
    "c": (200, 150, 150, 100),
    "d": (300, 100, 100, 100),
}
#: L = 1024 B (Fig. 7 at the files' BUFF_SIZE values), and L = 1472 B (an Ethernet MTU's UDP payload).
SMALL_SIZES = (128, 160, 176, 192, 224, 256)
OFFERED = (400, 450, 500, 700)
FIG7_POOLS = (50, 60, 70, 80, 90, 100)
LARGE_ALT = 1472
ALT_BUFF_SIZES = (128, 256, 512, 768, 1024, 1472)
ALT_SMALL_SIZES, ALT_OFFERED, ALT_SPLITS = (160, 176, 192), (400, 450, 500), ("a", "b", "e")
ALT_FIG7_POOLS = (80, 90, 100, 110, 120)
EXCESS = ("A3", "A4", "B1", "B2", "B3")
#: ``readings.parquet``'s columns: the reading's, then the run's (:func:`run`).
READING_COLUMNS = ("large_b", "small_b", "res_a1_kbps", "res_a3_kbps", "res_a4_kbps", "res_a5_kbps", "offered_kbps")
COLUMNS = (*READING_COLUMNS, "phase", "figure", "buffers", "buff_size_b", "seed", "stream")


@dataclasses.dataclass(frozen=True)
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
    def reservations(self) -> dict[str, int]:
        return dict(zip(("A1", "A3", "A4", "A5"), SPLITS[self.split], strict=True))

    @property
    def text_consistent(self) -> bool:
        """False where A3's and A4's reservations are equal, against the (unproven) glyph reading."""
        r = SPLITS[self.split]
        return r[1] != r[2]

    @property
    def mark(self) -> str:
        return "" if self.text_consistent else " (A3 = A4)"


def readings() -> list[tuple[Reading, tuple[int, ...], tuple[int, ...]]]:
    """Every reading with its Fig. 7 BUFF_SIZE values and Fig. 7 pools."""
    grids = (
        (1024, (SMALL_SIZES, SPLITS, OFFERED), edge.BUFF_SIZES, FIG7_POOLS),
        (LARGE_ALT, (ALT_SMALL_SIZES, ALT_SPLITS, ALT_OFFERED), ALT_BUFF_SIZES, ALT_FIG7_POOLS),
    )
    return [(Reading(large, *r), buffs, f7) for large, axes, buffs, f7 in grids for r in itertools.product(*axes)]


def _overrides(reading: Reading) -> tuple[Override, ...]:
    """Overrides of ``fig6a_periodic`` for one reading: every stream's payload, reservation and spacing."""
    res, size = reading.reservations, edge.payloads(reading.small, reading.large)
    over = []
    for name, (_, rate) in edge.STREAMS.items():
        if rate is not None:
            rate = float(res.get(name, rate))
            over.append((f"{edge.EGRESS}.queue.streams[{name}].rate", f"{rate:g}kbps"))
        kbps = reading.offered if name in EXCESS else rate
        assert kbps is not None
        over += [
            (f"traffic[{name}].size", f"{size[name]}B"),
            (f"traffic[{name}].interval", f"{edge.interval_ns(size[name], kbps)}ns"),
        ]
    return tuple(over)


Run = tuple[str, Scenario, int]


def _plan(ctx: Context, which: list[Reading], seeds: list[int], kind: str) -> list[tuple[Run, tuple[str, Any]]]:
    """The runs (variant, scenario, seed) of the readings ``which`` at ``seeds``, each with its key."""
    grid = {reading: (buffs, f7pools) for reading, buffs, f7pools in readings()}
    out: list[tuple[Run, tuple[str, Any]]] = []
    for reading in which:
        buffs, f7pools = grid[reading]
        over = _overrides(reading)
        tag = f"{kind}_L{reading.large}_S{reading.small}_{reading.split}_{reading.offered}"
        points = [("fig8", n, edge.FIG8_BUFF_SIZE) for n in edge.POOLS]
        points += [("fig7", n, b) for n in f7pools for b in buffs]
        for fig, n, b in points:
            sc = edge._scenario(ctx, "fig6a_periodic", buffers=n, buff_size=b, extra=over)
            out += [((f"{tag}_{fig}_pool{n}_buff{b}", sc, seed), (kind, (reading, fig, n, b))) for seed in seeds]
    return out


def run(ctx: Context, by: edge.By) -> None:
    """Every reading at the claims' seeds (``read``), then the passing ones with fresh seeds (``rep``);
    each run's rates into ``by`` and ``readings.parquet`` (:data:`COLUMNS`)."""
    import pandas as pd

    rows = []
    for kind in ("read", "rep"):
        if kind == "read":
            which, seeds = [r for r, _, _ in readings()], ctx.seeds
        else:
            which = [row["reading"] for row in _rows(by, "read") if row["all"]]
            seeds = [max(ctx.seeds) + 1 + i for i in range(len(ctx.seeds))]
        plan = _plan(ctx, which, seeds, kind)
        ctx.log(f"edge: {len(plan)} runs of the study of readings ({kind})")
        got = ctx.run_reduced([r for r, _ in plan], edge._rates, save=False)
        for ((_, _, seed), key), rates in zip(plan, got, strict=True):
            by.setdefault(key, []).append(rates)
            g, fig, n, b = key[1]
            head = (g.large, g.small, *SPLITS[g.split], g.offered, kind, fig, n, b, seed)
            rows += [
                dict(zip(COLUMNS, (*head, s), strict=True)) | {k: v[k] for k in edge.RATE_KEYS}
                for s, v in rates.items()
            ]
    pd.DataFrame(rows).to_parquet(ctx.folder / "readings.parquet", index=False)


def evaluate(by: edge.By) -> tuple[dict[str, Any], str]:
    """Claims 1-4 for every reading and, again with fresh seeds, the passing ones: data and text."""
    rows, rep = _rows(by, "read"), _rows(by, "rep")
    return {**_data(rows), "replication": _data(rep)}, _text(rows, rep)


def _rows(by: edge.By, kind: str) -> list[dict[str, Any]]:
    """One row per reading with runs of ``kind`` in ``by``: claims 1-4 and their margins."""

    def tput(reading: Reading, fig: str, n: int, b: int) -> dict[str, float]:
        runs = by[(kind, (reading, fig, n, b))]
        return {s: Estimate.of([r[s]["ip_kbps"] for r in runs]).mean for s in edge.STREAMS}

    rows: list[dict[str, Any]] = []
    for reading, buffs, f7pools in readings():
        first = (kind, (reading, "fig8", edge.POOLS[0], edge.FIG8_BUFF_SIZE))
        if first not in by:
            continue
        res = {s: r for s, (_, r) in edge.STREAMS.items()} | {s: float(r) for s, r in reading.reservations.items()}
        fig8 = {n: tput(reading, "fig8", n, edge.FIG8_BUFF_SIZE) for n in edge.POOLS}
        c1, worst, worst_stream, _ = edge.judge_conformant(fig8, res)
        shares = edge.excess_shares(fig8[edge.POOLS[-1]], res, small=reading.small, large=reading.large)
        c4 = edge.judge_sharing(shares)
        pools: dict[int, dict[str, Any]] = {}
        for n in f7pools:
            fig7 = {b: tput(reading, "fig7", n, b) for b in buffs}
            c2, spreads = edge.judge_fig7a(fig7)
            a2_loss = 1 - fig7[max(buffs)]["A2"] / fig7[min(buffs)]["A2"]
            pools[n] = {"c2": c2, "c3": edge.judge_fig7c(fig7), "spread": max(spreads.values()), "a2_loss": a2_loss}
        both = [n for n, p in pools.items() if p["c2"] and p["c3"]]
        row = {"reading": reading, "c1": c1, "c1_worst": worst, "c1_stream": worst_stream, "c4": c4, "shares": shares}
        rows.append(
            row | {"pools": pools, "c23_pools": both, "all": c1 and c4 and bool(both), "n_seeds": len(by[first])}
        )
    return rows


def _cell(row: dict[str, Any]) -> str:
    c23 = ",".join(map(str, row["c23_pools"])) or "–"
    c2 = ",".join(str(n) for n, p in row["pools"].items() if p["c2"]) or "–"
    c3 = ",".join(str(n) for n, p in row["pools"].items() if p["c3"]) or "–"
    # How many of claims 1-4 hold (2 and 3 at the best Fig. 7 pool).
    best = max(int(p["c2"]) + int(p["c3"]) for p in row["pools"].values())
    mark = "**ALL**" if row["all"] else f"{int(row['c1']) + int(row['c4']) + best}/4"
    return (
        f"{mark}: 1 {'✓' if row['c1'] else '✗'} ({row['c1_stream']} {100 * row['c1_worst']:.0f} %), "
        f"4 {'✓' if row['c4'] else '✗'} (max {max(row['shares'].values()):.0f}, "
        f"min {min(row['shares'].values()):.0f}); 2 at {c2}; 3 at {c3}; 2+3 at {c23}"
    )


def _text(rows: list[dict[str, Any]], rep: list[dict[str, Any]]) -> str:
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
    # One table row per reading but its offered load (set to 0 in the key).
    groups: dict[Reading, dict[int, dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(dataclasses.replace(r["reading"], offered=0), {})[r["reading"].offered] = r
    for g, by_off in groups.items():
        label = f"{g.large}, {g.small}, {'/'.join(map(str, SPLITS[g.split]))}{g.mark}"
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
    out = [
        {
            "large": r["reading"].large,
            "small": r["reading"].small,
            "reservations": SPLITS[r["reading"].split],
            "offered_kbps": r["reading"].offered,
            "text_consistent": r["reading"].text_consistent,
            "conformant_af": {"holds": r["c1"], "lowest": r["c1_worst"], "stream": r["c1_stream"]},
            "excess_sharing": {"holds": r["c4"], "shares": r["shares"]},
            "fig7_pools": {
                str(n): {"fig7a_large": p["c2"], "fig7c_small": p["c3"], "spread": p["spread"], "a2_loss": p["a2_loss"]}
                for n, p in r["pools"].items()
            },
            "all_hold": r["all"],
        }
        for r in rows
    ]
    return {"readings": out, "all_hold": sum(1 for r in rows if r["all"])}
