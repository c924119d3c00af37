"""Per-queue, per-group and admission tables of one result: what ``qoslab show``
prints, what ``qoslab report`` renders and what a sweep stores per run.

- :func:`queue_table`: one row per queue, like ``tc -s qdisc``: arrivals,
  sent, drops by reason, marks by reason, backlog (time average, peak, at
  the end), sojourn time, utilization.
- :func:`group_table`: one row per traffic group: flows, packets sent,
  delivered and dropped, loss ratio, aggregate throughput and Jain's index
  (the core's, ``summary.json`` ``groups``), delay (mean
  weighted by delivered packets, median of the flows' medians, worst
  flow's p99, maximum).
- :func:`admission_table`: admitted and refused flows per group, and the
  admission decisions (``admit``/``reject`` events) per rule.
- :func:`run_metrics`: all of it in long form (``entity_kind``, ``entity``,
  ``metric``, ``value``), the rows a sweep stores for each run.

Percentiles of a group are built from the flows' own (a log-bucket
histogram per flow, ``docs/results.md``); the result keeps no group-wide
histogram, so a group's p50 is the median of its flows' p50 and its p99 the
largest flow p99 (the worst flow), not a pooled percentile.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from . import _core

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .result import Result

#: The reasons a queue drops or marks a packet, in the core's order (``qoslab_core::qdisc``).
DROP_REASONS: tuple[str, ...] = tuple(_core.names()["drop_reasons"])
MARK_REASONS: tuple[str, ...] = tuple(_core.names()["mark_reasons"])


def jain(values: list[float]) -> float:
    """Jain's fairness index (sum x)^2 / (n sum x^2) of the finite values, by the core
    (``qoslab_core::stats::jain_index``): NaN for no values, 1 for all zeros."""
    return _core.jain_index([v for v in values if math.isfinite(v)])


def _number(v: Any, fallback: float) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else fallback


def queue_table(res: Result, *, idle: bool = False) -> pd.DataFrame:
    """One row per queue (``idle=False``: only queues that saw a packet)."""
    import numpy as np
    import pandas as pd

    q = res.queues
    if not idle:
        q = q[q["arrivals"] > 0]
    n = len(q)

    def col(name: str) -> Any:
        return q[name].to_numpy(dtype=np.int64) if name in q.columns else np.zeros(n, dtype=np.int64)

    arrivals = col("arrivals").astype(float)
    out: dict[str, Any] = {
        "queue": q["name"].astype(str).to_numpy(),
        "kind": q["kind"].astype(str).to_numpy(),
        "parent": q["parent"].astype(str).to_numpy(),
        "arrivals": col("arrivals"),
        "sent_pkts": col("departures"),
        "sent_bytes": col("departure_bytes"),
        "drops": col("drops"),
        "drop_ratio": np.divide(col("drops").astype(float), arrivals, out=np.full(n, np.nan), where=arrivals > 0),
    }
    for reason in DROP_REASONS:
        out[f"drops_{reason}"] = col(f"drops_{reason}")
    out["marks"] = sum((col(f"marks_{r}") for r in MARK_REASONS), np.zeros(n, dtype=np.int64))
    for reason in MARK_REASONS:
        out[f"marks_{reason}"] = col(f"marks_{reason}")
    out.update(
        {
            "backlog_mean_pkts": q["backlog_mean_pkts"].to_numpy(dtype=float),
            "backlog_max_pkts": col("backlog_max_pkts"),
            "backlog_end_pkts": col("backlog_end_pkts"),
            "sojourn_mean_s": q["sojourn_mean_s"].to_numpy(dtype=float),
            "sojourn_max_s": q["sojourn_max_s"].to_numpy(dtype=float),
            "utilization": q["utilization"].to_numpy(dtype=float),
        }
    )
    return pd.DataFrame(out, columns=_QUEUE_COLUMNS)


_QUEUE_COLUMNS = [
    "queue",
    "kind",
    "parent",
    "arrivals",
    "sent_pkts",
    "sent_bytes",
    "drops",
    "drop_ratio",
    *(f"drops_{r}" for r in DROP_REASONS),
    "marks",
    *(f"marks_{r}" for r in MARK_REASONS),
    "backlog_mean_pkts",
    "backlog_max_pkts",
    "backlog_end_pkts",
    "sojourn_mean_s",
    "sojourn_max_s",
    "utilization",
]


def group_table(res: Result) -> pd.DataFrame:
    """One row per traffic group, in the order the groups appear in the flows table."""
    import pandas as pd

    f = res.flows
    rows: list[dict[str, Any]] = []
    for group in dict.fromkeys(map(str, f["group"])):
        g = f[f["group"] == group]
        active = g[~g["refused"]]
        sent = int(g["sent_pkts"].sum())
        delivered = int(g["delivered_pkts"].sum())
        dropped = int(g["dropped_pkts"].sum())
        weights = active["delivered_pkts"].astype(float)
        delays = active["delay_mean_s"].astype(float)
        ok = delays.notna() & (weights > 0)
        mean_delay = float((delays[ok] * weights[ok]).sum() / weights[ok].sum()) if ok.any() else math.nan
        p50 = active["delay_p50_s"].dropna()
        p99 = active["delay_p99_s"].dropna()
        dmax = active["delay_max_s"].dropna()
        thr = [float(x) for x in active["throughput_bps"]]
        goodput = active["goodput_bps"].dropna() if "goodput_bps" in active else active["throughput_bps"][:0]
        core = res.summary.get("groups", {}).get(group, {})
        total = _number(core.get("throughput_bps"), float(sum(thr)))
        fairness = _number(core.get("fairness_jain"), jain(thr))
        rows.append(
            {
                "group": group,
                "flows": len(g),
                "admitted": int(g["admitted"].sum()),
                "refused": int(g["refused"].sum()),
                "sent_pkts": sent,
                "delivered_pkts": delivered,
                "dropped_pkts": dropped,
                "loss": dropped / sent if sent else math.nan,
                "throughput_bps": total,
                "throughput_per_flow_bps": float(sum(thr) / len(thr)) if thr else math.nan,
                "goodput_bps": float(goodput.sum()) if len(goodput) else math.nan,
                "delay_mean_s": mean_delay,
                "delay_p50_s": float(p50.median()) if len(p50) else math.nan,
                "delay_p99_s": float(p99.max()) if len(p99) else math.nan,
                "delay_max_s": float(dmax.max()) if len(dmax) else math.nan,
                "jain": fairness,
            }
        )
    return pd.DataFrame(rows, columns=_GROUP_COLUMNS)


_GROUP_COLUMNS = [
    "group",
    "flows",
    "admitted",
    "refused",
    "sent_pkts",
    "delivered_pkts",
    "dropped_pkts",
    "loss",
    "throughput_bps",
    "throughput_per_flow_bps",
    "goodput_bps",
    "delay_mean_s",
    "delay_p50_s",
    "delay_p99_s",
    "delay_max_s",
    "jain",
]


def admission_table(res: Result) -> pd.DataFrame:
    """Per group: flows admitted and refused, and the ``admit``/``reject`` decisions by rule."""
    import pandas as pd

    f = res.flows
    e = res.events
    decisions = e[e["kind"].isin(["admit", "reject"])]
    rows: list[dict[str, Any]] = []
    for group in dict.fromkeys(map(str, f["group"])):
        g = f[f["group"] == group]
        names = set(map(str, g["name"]))
        d = decisions[decisions["entity"].isin(names)]
        rules = sorted(set(map(str, d["rule"])) - {""})
        rows.append(
            {
                "group": group,
                "flows": len(g),
                "admitted": int(g["admitted"].sum()),
                "refused": int(g["refused"].sum()),
                "admit_decisions": int((d["kind"] == "admit").sum()),
                "reject_decisions": int((d["kind"] == "reject").sum()),
                "rules": ", ".join(rules),
            }
        )
    return pd.DataFrame(
        rows, columns=["group", "flows", "admitted", "refused", "admit_decisions", "reject_decisions", "rules"]
    )


def run_metrics(res: Result) -> pd.DataFrame:
    """Every number of the three tables in long form: ``entity_kind`` (``run``, ``group``,
    ``queue``), ``entity``, ``metric``, ``value`` (float64)."""
    import pandas as pd

    rows: list[tuple[str, str, str, float]] = []
    s = res.summary
    for key in ("sim_time_s", "events", "loop_wall_s"):
        if isinstance(s.get(key), (int, float)):
            rows.append(("run", "", key, float(s[key])))
    parts = [pd.DataFrame(rows, columns=["entity_kind", "entity", "metric", "value"])]
    for kind, table, name in (("group", group_table(res), "group"), ("queue", queue_table(res), "queue")):
        numeric = [c for c in table.columns if c not in ("group", "queue", "kind", "parent")]
        long = table.melt(id_vars=[name], value_vars=numeric, var_name="metric", value_name="value")
        long = long.rename(columns={name: "entity"})
        long.insert(0, "entity_kind", kind)
        long["value"] = long["value"].astype(float)
        # Entity by entity, in table order, as the tables read.
        order = {e: i for i, e in enumerate(dict.fromkeys(table[name]))}
        long = long.sort_values("entity", key=lambda c: c.map(order), kind="stable")
        parts.append(long[["entity_kind", "entity", "metric", "value"]])
    return pd.concat(parts, ignore_index=True)


__all__ = ["admission_table", "group_table", "jain", "queue_table", "run_metrics"]
