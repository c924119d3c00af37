"""Controlled study behind the ``edge`` reproduction: its claims across readings of the seed's
lost numbers.

Seed 003's PDF extraction lost the numbers of Fig. 6 and most of §V (docs/decisions.md,
"`edge`: the seed-003 scenario"). The scenario files hold one reconstruction, fixed before any
run and not changed after seeing a result. This study asks the question that reconstruction
cannot answer: *is there any reading of the lost numbers under which a claim holds?* It varies,
one family at a time, the lost numbers each claim depends on, over the range the text admits:

- the small packet size S (payload bytes of A2, A6 and B2): the text says only that S is
  "small", that BUFF_SIZE = 512 B counts it "much larger" than it is, and that its streams are
  "rapidly penalized" as BUFF_SIZE grows (§V.B.1-2); 128 to 256 B;
- Fig. 7's pool (never stated): 30, 50 and 80 buffers;
- A1, A3, A4 and A5's reservations (lost; A1 + A3 + A4 + A5 = 600 kb/s is stated);
- the excess streams' offered load (lost; they must have excess to share): 400 to 700 kb/s
  of IP each (1,000 overloads the access E1s in the scenario's host assignment).

Claims 1, 3 and 4 are judged exactly as in ``edge`` (same runs, same seeds, same tolerances);
claim 5's A2/A5 order does not depend on these numbers and is studied in ``edge`` itself
(the offset-free delay difference and the host assignments).
"""

from __future__ import annotations

import math
from typing import Any

from .framework import Context
from .stats import Estimate

#: Payload bytes of the small packets (A2, A6, B2) tried; the scenario files' reading is 128 B.
SMALL_SIZES = (128, 160, 192, 224, 256)
#: Fig. 7's pool (packet buffers) tried for claim 3; the scenario files' reading is 80.
FIG7_POOLS = (30, 50, 80)
#: (A1, A3, A4, A5) reservations, kb/s, summing to the stated 600; the first is the files' reading.
SPLITS = ((200, 100, 200, 100), (200, 200, 100, 100), (200, 150, 150, 100), (300, 100, 100, 100))
#: The excess streams' offered load (kb/s of IP each); the files' reading is 500.
OFFERED = (400, 500, 700)
EXCESS = ("A3", "A4", "B1", "B2", "B3")


def _overrides(small: int, split: tuple[int, int, int, int], offered: int) -> tuple[str, ...]:
    """Overrides of ``fig6a_periodic`` for one reading: every stream's payload, reservation and
    packet spacing (traffic and the egress's streams follow ``edge.STREAMS``' order in the file)."""
    from . import edge

    res = dict(zip(("A1", "A3", "A4", "A5"), split, strict=True))
    over = []
    for i, (name, (size, rate)) in enumerate(edge.STREAMS.items()):
        if size < edge.FIG8_BUFF_SIZE:
            size = small
        if rate is not None:
            rate = float(res.get(name, rate))
            over.append(f'topology.links.6.queue.streams.{i}.rate="{rate:g}kbps"')
        kbps = offered if name in EXCESS else rate
        assert kbps is not None
        over += [f'traffic.{i}.size="{size}B"', f'traffic.{i}.interval="{edge.interval_ns(size, kbps)}ns"']
    return tuple(over)


def plan(ctx: Context) -> tuple[list[tuple[str, Any, int]], list[tuple[str, Any]]]:
    """The study's runs (variant, scenario, seed) and their keys (full runs of ``edge`` only)."""
    from . import edge

    runs: list[tuple[str, Any, int]] = []
    keys: list[tuple[str, Any]] = []
    base_split, base_offered = SPLITS[0], 500

    def add(
        tag: str, key: Any, buffers: int, buff: int, small: int, split: tuple[int, int, int, int], offered: int
    ) -> None:
        over = _overrides(small, split, offered)
        sc = edge._scenario(ctx, "fig6a_periodic", buffers=buffers, buff_size=buff, extra=over)
        for seed in ctx.seeds:
            runs.append((f"read_{tag}", sc, seed))
            keys.append(("read", key))

    for s in SMALL_SIZES:
        for n in edge.POOLS:
            add(f"c1_s{s}_pool{n}", ("c1", s, n), n, edge.FIG8_BUFF_SIZE, s, base_split, base_offered)
        for n in FIG7_POOLS:
            for b in (edge.BUFF_SIZES[0], edge.BUFF_SIZES[-1]):
                add(f"c3_s{s}_pool{n}_buff{b}", ("c3", s, n, b), n, b, s, base_split, base_offered)
        for split in SPLITS:
            for kbps in OFFERED:
                tag = f"c4_s{s}_{'-'.join(map(str, split))}_off{kbps}"
                add(tag, ("c4", s, split, kbps), edge.POOLS[-1], edge.FIG8_BUFF_SIZE, s, split, kbps)
    return runs, keys


def evaluate(by: dict[tuple[str, Any], list[dict[str, dict[str, float]]]]) -> dict[str, Any]:
    """Claims 1, 3 and 4 for every reading, as ``edge`` judges them; a text section and data."""
    from . import edge

    def mean(key: Any, stream: str, field: str) -> float:
        return Estimate.of([r[stream][field] for r in by[("read", key)]]).mean

    res0 = {s: r for s, (_, r) in edge.STREAMS.items()}
    c1: dict[int, dict[str, Any]] = {}
    for s in SMALL_SIZES:
        worst = min(
            (mean(("c1", s, n), a, "ip_kbps") / (res0[a] or math.nan), a, n)
            for n in edge.POOLS
            for a in edge.CONFORMANT_AF
        )
        c1[s] = {"worst": worst[0], "stream": worst[1], "buffers": worst[2], "holds": worst[0] >= 0.95}
    c3: dict[str, dict[str, Any]] = {}
    lo, hi = edge.BUFF_SIZES[0], edge.BUFF_SIZES[-1]
    for s in SMALL_SIZES:
        for n in FIG7_POOLS:
            kb = {a: (mean(("c3", s, n, lo), a, "ip_kbps"), mean(("c3", s, n, hi), a, "ip_kbps")) for a in edge.SMALL}
            c3[f"{s}/{n}"] = {"kbps": kb, "holds": all(edge.loses(low, h) for low, h in kb.values())}
    c4: dict[str, dict[str, Any]] = {}
    for s in SMALL_SIZES:
        for split in SPLITS:
            res = dict(res0, **dict(zip(("A1", "A3", "A4", "A5"), split, strict=True)))
            for kbps in OFFERED:
                key = ("c4", s, split, kbps)
                sh = edge.excess_shares({a: mean(key, a, "ip_kbps") for a in edge.STREAMS}, res, small=s)
                ok = all(abs(x - edge.EXCESS_SHARE) <= 0.2 * edge.EXCESS_SHARE for x in sh.values())
                c4[f"{s}/{'-'.join(map(str, split))}/{kbps}"] = {"shares": sh, "holds": ok}

    lines = [
        "Each reading changes the lost numbers named in its row and nothing else; claims judged as above "
        "(same seeds, same tolerances). The scenario files' reading: S = 128 B, Fig. 7 at 80 buffers, "
        "A1/A3/A4/A5 = 200/100/200/100 kb/s, excess streams at 500 kb/s.",
        "",
        "Claim 1 (`conformant-af`, Fig. 8's pools, BUFF_SIZE 512 B) against the small packet size S:",
        "",
        "| S (payload B) | lowest conformant stream, % of its reservation | holds |",
        "|---|---|---|",
    ]
    for s, v in c1.items():
        lines.append(
            f"| {s} | {v['stream']} {100 * v['worst']:.1f} % ({v['buffers']} buffers) | "
            f"{'yes' if v['holds'] else 'no'} |"
        )
    lines += [
        "",
        f"Claim 3 (`fig7c-small`): IP kb/s of A2, A6, B2 at BUFF_SIZE {lo} → {hi} B, against S and Fig. 7's pool:",
        "",
        "| S / pool | A2 | A6 | B2 | holds |",
        "|---|---|---|---|---|",
    ]
    for k, v in c3.items():
        cells = " | ".join(f"{a:.1f} → {b:.1f}" for a, b in v["kbps"].values())
        lines.append(f"| {k} | {cells} | {'yes' if v['holds'] else 'no'} |")
    lines += [
        "",
        f"Claim 4 (`excess-sharing`, {edge.POOLS[-1]} buffers, payload kb/s, {edge.EXCESS_SHARE:.0f} ± 20 %) "
        "against S, the reservations A1/A3/A4/A5 and the excess streams' offered load (kb/s of IP):",
        "",
        "| S / A1-A3-A4-A5 / offered | A3 | A4 | B1 | B3 | B2 × 512/S | holds |",
        "|---|---|---|---|---|---|---|",
    ]
    for k, v in c4.items():
        cells = " | ".join(f"{x:.0f}" for x in v["shares"].values())
        lines.append(f"| {k} | {cells} | {'yes' if v['holds'] else 'no'} |")
    joint = [
        s
        for s in SMALL_SIZES
        if c1[s]["holds"]
        and any(c3[f"{s}/{n}"]["holds"] for n in FIG7_POOLS)
        and any(v["holds"] for k, v in c4.items() if k.startswith(f"{s}/"))
    ]
    lines += [
        "",
        "Small packet sizes at which claims 1, 3 and 4 can all hold (each with some Fig. 7 pool, "
        f"reservation split and offered load above): {', '.join(f'{s} B' for s in joint) or 'none'}.",
    ]
    return {"data": {"c1": c1, "c3": c3, "c4": c4, "joint_small_sizes": joint}, "text": "\n".join(lines)}
