"""``qoslab show RESULT``: every queue (like ``tc -s qdisc``), every traffic group and
the admission counts of one result folder, as rich tables or JSON (``--json``).

The numbers are those of :mod:`qoslab.tables`; this module only lays them out.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .tables import DROP_REASONS, MARK_REASONS, admission_table, group_table, queue_table

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .result import Result


def _clean(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if hasattr(v, "item") and callable(v.item):
        return _clean(v.item())
    return v


def ordered_queues(res: Result, *, idle: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(shown, folded)``: the queues in the order that matters (the preset's bottleneck
    first, then those that dropped or marked, most drops first, then the rest in their
    order) and, unless ``idle`` (``--all``), the quiet ones folded away: queues that
    dropped and marked nothing and are not the bottleneck (a dumbbell's access queues)."""
    q = queue_table(res, idle=idle)
    bottleneck = res.bottleneck
    first = q["queue"] == bottleneck
    busy = ~first & ((q["drops"] > 0) | (q["marks"] > 0))
    quiet = ~first & ~busy
    import pandas as pd

    ordered = [q[first], q[busy].sort_values("drops", ascending=False, kind="stable"), q[quiet]]
    if idle:
        return pd.concat(ordered), q.iloc[0:0]
    return pd.concat(ordered[:2]), ordered[2]


def as_json(res: Result, *, idle: bool = False) -> dict[str, Any]:
    """What ``qoslab show --json`` prints: run facts, ``queues``, ``groups``, ``admission``
    (lists of row objects; NaN as null)."""

    def rows(df: Any) -> list[dict[str, Any]]:
        return [{k: _clean(v) for k, v in r.items()} for r in df.to_dict(orient="records")]

    s = res.summary
    return {
        "name": res.name,
        "seed": res.seed,
        "sim_time_s": s.get("sim_time_s"),
        "events": s.get("events"),
        "qoslab_version": s.get("qoslab_version"),
        "queues": rows(queue_table(res, idle=idle)),
        "groups": rows(group_table(res)),
        "admission": rows(admission_table(res)),
    }


def _rate(bps: float) -> str:
    if not math.isfinite(bps):
        return "-"
    for unit, scale in (("Gb/s", 1e9), ("Mb/s", 1e6), ("kb/s", 1e3)):
        if abs(bps) >= scale:
            return f"{bps / scale:.3f} {unit}"
    return f"{bps:.0f} b/s"


def _time(s: float) -> str:
    if not math.isfinite(s):
        return "-"
    if s >= 1:
        return f"{s:.3f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} us"


def _pct(x: float) -> str:
    return "-" if not math.isfinite(x) else f"{100 * x:.2f} %"


def renderables(res: Result, *, idle: bool = False) -> list[Any]:
    """The rich tables of ``qoslab show``: queues, groups, admission."""
    from rich.table import Table

    out: list[Any] = []
    s = res.summary
    head = Table.grid(padding=(0, 2))
    head.add_row(
        f"[bold]{res.name}[/]",
        f"seed {res.seed}",
        f"{s.get('sim_time_s', '?')} s simulated",
        f"{int(s.get('events', 0)):,} events",
        f"qoslab {s.get('qoslab_version', '?')}",
    )
    out.append(head)

    q, folded = ordered_queues(res, idle=idle)
    from rich.text import Text

    rates = {str(n): int(r) for n, r in zip(res.queues["name"], res.queues["link_rate_bps"], strict=True)}
    lines = Text(no_wrap=True, overflow="ignore")
    what = "bottleneck first, then those that dropped or marked"
    lines.append(f"queues ({what}{'' if idle else '; --all for every one'})\n", style="italic")
    for _, r in q.iterrows():
        reasons = ", ".join(f"{x} {int(r[f'drops_{x}']):,}" for x in DROP_REASONS if int(r[f"drops_{x}"]))
        marks = ", ".join(f"{x} {int(r[f'marks_{x}']):,}" for x in MARK_REASONS if int(r[f"marks_{x}"]))
        parent = f" parent {r['parent']}" if r["parent"] else ""
        lines.append(f"qdisc {r['kind']} {r['queue']}{parent}", style="bold")
        lines.append(f"  link {_rate(float(rates.get(str(r['queue']), 0)))}\n")
        lines.append(
            f" arrivals {int(r['arrivals']):,} pkt  sent {int(r['sent_pkts']):,} pkt "
            f"({int(r['sent_bytes']):,} bytes)  dropped {int(r['drops']):,} "
            f"({_pct(float(r['drop_ratio']))})  marked {int(r['marks']):,}\n"
        )
        if reasons or marks:
            lines.append(f" drops: {reasons or '-'}   marks: {marks or '-'}\n")
        lines.append(
            f" backlog {float(r['backlog_mean_pkts']):.2f} pkt avg, {int(r['backlog_max_pkts'])} max, "
            f"{int(r['backlog_end_pkts'])} at end  util {float(r['utilization']):.3f}\n"
            f" sojourn {_time(float(r['sojourn_mean_s']))} avg, {_time(float(r['sojourn_max_s']))} max\n"
        )
    if len(folded):
        names = [str(n) for n in folded["queue"]]
        shown = ", ".join(names[:4]) + (f", ... ({len(names) - 4} more)" if len(names) > 4 else "")
        lines.append(
            f"{len(names)} more queue{'s' if len(names) != 1 else ''} without drops or marks "
            f"(busiest {float(folded['utilization'].max()):.3f} utilized): {shown}; --all lists them\n",
            style="italic",
        )
    out.append(lines)

    g = group_table(res)
    t = Table(title="traffic groups", title_justify="left")
    t.add_column("", style="bold")
    for name in g["group"]:
        t.add_column(str(name), justify="right")
    fmt: list[tuple[str, str, Any]] = [
        ("flows", "flows", lambda v: f"{int(v):,}"),
        ("sent_pkts", "sent (pkt)", lambda v: f"{int(v):,}"),
        ("delivered_pkts", "delivered (pkt)", lambda v: f"{int(v):,}"),
        ("dropped_pkts", "dropped (pkt)", lambda v: f"{int(v):,}"),
        ("loss", "loss", _pct),
        ("throughput_bps", "throughput", _rate),
        ("throughput_per_flow_bps", "per flow", _rate),
        ("goodput_bps", "goodput (TCP)", _rate),
        ("delay_mean_s", "delay mean", _time),
        ("delay_p50_s", "delay p50 (median flow)", _time),
        ("delay_p99_s", "delay p99 (worst flow)", _time),
        ("delay_max_s", "delay max", _time),
        ("jain", "Jain fairness", lambda v: "-" if not math.isfinite(v) else f"{v:.4f}"),
    ]
    for col, label, f in fmt:
        t.add_row(label, *(f(float(v)) for v in g[col]))
    out.append(t)

    a = admission_table(res)
    t = Table(title="admission", title_justify="left")
    for col in ("group", "flows", "admitted", "refused", "admit decisions", "reject decisions", "rules"):
        t.add_column(col, justify="left" if col in ("group", "rules") else "right")
    for _, r in a.iterrows():
        t.add_row(
            str(r["group"]),
            str(int(r["flows"])),
            str(int(r["admitted"])),
            str(int(r["refused"])),
            str(int(r["admit_decisions"])),
            str(int(r["reject_decisions"])),
            str(r["rules"]) or "-",
        )
    out.append(t)
    return out


__all__ = ["as_json", "ordered_queues", "renderables"]
