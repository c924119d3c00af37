"""Two results side by side (``qoslab compare A B``): per traffic group and
per queue, throughput, loss, delay (mean and percentiles) and drops by
reason, with the differences and a flag on those outside the testbed
issue's tolerances:

==============  ===========================================
throughput      B within ±5 % of A
loss            B within ±1 percentage point of A
mean delay      B within ±(1 ms + 10 % of A)
==============  ===========================================

A is the reference (typically the simulation), B the one checked
(typically the testbed). Any two results compare: simulation against
simulation, testbed against testbed. Percentiles, drops by reason and
counts are shown without a tolerance (their spread is not one the issue
fixes). A queue present in only one result (the testbed records only the
emulated link's) is listed as such, not flagged.

Group figures: throughput is the group's delivered wire bits over the
run's duration (the summary's ``groups``); goodput (TCP groups) its
in-order payload bits over the duration, with throughput's tolerance; loss is dropped / sent over the
group's flows; mean delay is the mean over every delivered packet (flows'
means weighted by their deliveries); p50 and p99 are the delivered-weighted
means of the flows' percentiles (a summary, not a percentile of the union).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

THROUGHPUT_REL = 0.05
LOSS_POINTS = 0.01
DELAY_ABS_S = 0.001
DELAY_REL = 0.10

TOLERANCES = {
    "throughput_bps": f"±{THROUGHPUT_REL:.0%} of A",
    "goodput_bps": f"±{THROUGHPUT_REL:.0%} of A",
    "loss": f"±{LOSS_POINTS * 100:g} percentage point",
    "delay_mean_s": f"±({DELAY_ABS_S * 1e3:g} ms + {DELAY_REL:.0%} of A)",
}


@dataclass
class Line:
    """One compared figure."""

    metric: str
    a: float
    b: float
    within: bool | None  # None: no tolerance for this figure

    @property
    def diff(self) -> float:
        return self.b - self.a

    def as_json(self) -> dict[str, Any]:
        def num(x: float) -> float | None:
            return None if x is None or (isinstance(x, float) and math.isnan(x)) else x

        return {"a": num(self.a), "b": num(self.b), "diff": num(self.diff), "within": self.within}


def within(metric: str, a: float, b: float) -> bool | None:
    """Is ``b`` within the tolerance of ``metric`` around ``a``? ``None`` if the metric has none;
    two NaNs (no sample either side) agree, one NaN does not."""
    if metric not in TOLERANCES:
        return None
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if metric in ("throughput_bps", "goodput_bps"):
        return abs(b - a) <= THROUGHPUT_REL * abs(a) + 1e-9
    if metric == "loss":
        return abs(b - a) <= LOSS_POINTS + 1e-12
    return abs(b - a) <= DELAY_ABS_S + DELAY_REL * abs(a) + 1e-12


def _group_figures(res: Any) -> dict[str, dict[str, float]]:
    f = res.flows
    duration = float(res.summary.get("sim_time_s") or 0) or float("nan")
    out: dict[str, dict[str, float]] = {}
    for g in sorted(set(f["group"]), key=str):
        rows = f[f["group"] == g]
        sent, dlv = float(rows["sent_pkts"].sum()), float(rows["delivered_pkts"].sum())
        drp = float(rows["dropped_pkts"].sum())
        w = rows["delivered_pkts"].astype(float)
        ok = w > 0

        def wmean(col: str, rows: Any = rows, w: Any = w, ok: Any = ok) -> float:
            has = ok & rows[col].notna()
            return float((rows[col][has] * w[has]).sum() / w[has].sum()) if has.any() else float("nan")

        # A TCP group's delays where nothing measured them (the testbed's kernel TCP) are left out,
        # not compared as missing.
        no_delay = bool((rows["proto"] == "tcp").all() and rows["delay_mean_s"].isna().all())
        out[str(g)] = {
            "throughput_bps": float(rows["delivered_bytes"].sum()) * 8 / duration,
            "loss": drp / sent if sent else float("nan"),
            "delay_mean_s": wmean("delay_mean_s"),
            "delay_p50_s": wmean("delay_p50_s"),
            "delay_p99_s": wmean("delay_p99_s"),
            "delay_max_s": float(rows["delay_max_s"].max()) if ok.any() else float("nan"),
            "no_delay": float(no_delay),
            **(
                {"goodput_bps": float(rows["goodput_bytes"].sum()) * 8 / duration}
                if (rows["proto"] == "tcp").any()
                else {}
            ),
            "sent_pkts": sent,
            "delivered_pkts": dlv,
            "dropped_pkts": drp,
            "flows": float(len(rows)),
            # Admission's outcome (a PCN domain, admission control): the same columns in both worlds.
            "admitted": float(rows["admitted"].sum()),
            "refused": float(rows["refused"].sum()),
            "terminated": float(rows["terminated"].sum()),
        }
    return out


def _queue_figures(res: Any) -> dict[str, dict[str, float]]:
    q = res.queues
    duration = float(res.summary.get("sim_time_s") or 0) or float("nan")
    out: dict[str, dict[str, float]] = {}
    for _, r in q.iterrows():
        arr = float(r["arrivals"])
        if arr == 0:
            continue
        fig = {
            "throughput_bps": float(r["departure_bytes"]) * 8 / duration,
            "loss": float(r["drops"]) / arr,
            "delay_mean_s": float(r["sojourn_mean_s"]),
            "delay_max_s": float(r["sojourn_max_s"]),
            "arrivals": arr,
            "departures": float(r["departures"]),
            "drops": float(r["drops"]),
            "backlog_mean_pkts": float(r["backlog_mean_pkts"]),
        }
        for c in q.columns:
            if c.startswith("drops_") and c != "drops":
                fig[c] = float(r[c])
        out[str(r["name"])] = fig
    return out


def _lines(a: dict[str, float], b: dict[str, float], *, all_reasons: bool) -> list[Line]:
    lines = []
    skip_delay = bool(a.get("no_delay") or b.get("no_delay"))
    for m in a:
        if m not in b or m == "no_delay" or (skip_delay and m.startswith("delay_")):
            continue
        if m.startswith("drops_") and not all_reasons and a[m] == 0 and b[m] == 0:
            continue
        lines.append(Line(m, a[m], b[m], within(m, a[m], b[m])))
    return lines


def compare(a: Any, b: Any) -> dict[str, Any]:
    """The comparison of results ``a`` (reference) and ``b`` as a JSON-ready dict:
    ``groups`` and ``queues`` (each figure with ``a``, ``b``, ``diff``, ``within``),
    ``only_in_a`` / ``only_in_b`` (queues and groups), ``outside`` (every flagged figure,
    as ``kind:name:metric``) and ``within`` (no figure flagged)."""
    ga, gb = _group_figures(a), _group_figures(b)
    qa, qb = _queue_figures(a), _queue_figures(b)
    out: dict[str, Any] = {"tolerances": TOLERANCES, "groups": {}, "queues": {}, "outside": []}
    for kind, xa, xb in (("groups", ga, gb), ("queues", qa, qb)):
        for name in [n for n in xa if n in xb]:
            lines = _lines(xa[name], xb[name], all_reasons=False)
            out[kind][name] = {ln.metric: ln.as_json() for ln in lines}
            out["outside"] += [f"{kind}:{name}:{ln.metric}" for ln in lines if ln.within is False]
        out.setdefault("only_in_a", {})[kind] = [n for n in xa if n not in xb]
        out.setdefault("only_in_b", {})[kind] = [n for n in xb if n not in xa]
    out["within"] = not out["outside"]
    return out


_SCALE = {"_bps": (1e-6, "Mb/s"), "_s": (1e3, "ms"), "loss": (100.0, "%")}


def _fmt(metric: str, v: float | None) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    for suffix, (k, unit) in _SCALE.items():
        if metric.endswith(suffix):
            return f"{v * k:,.3f} {unit}"
    return f"{v:,.0f}"


def renderables(cmp: dict[str, Any], label_a: str, label_b: str) -> list[Any]:
    """Rich tables of a :func:`compare` result, one per group and queue."""
    from rich.table import Table

    out: list[Any] = []
    for kind in ("groups", "queues"):
        for name, figs in cmp[kind].items():
            t = Table(title=f"{kind[:-1]} {name}", title_justify="left")
            t.add_column("metric")
            t.add_column(f"A: {label_a}", justify="right")
            t.add_column(f"B: {label_b}", justify="right")
            t.add_column("B − A", justify="right")
            t.add_column("tolerance")
            for m, v in figs.items():
                flag = {True: "ok", False: "[bold red]OUTSIDE[/]", None: ""}[v["within"]]
                tol = f"{TOLERANCES[m]} {flag}" if m in TOLERANCES else ""
                t.add_row(m, _fmt(m, v["a"]), _fmt(m, v["b"]), _fmt(m, v["diff"]), tol)
            out.append(t)
    for side, label in (("only_in_a", label_a), ("only_in_b", label_b)):
        for kind, names in cmp.get(side, {}).items():
            if names:
                out.append(f"{kind} only in {label}: {', '.join(names)}")
    out.append("all within tolerance" if cmp["within"] else f"outside tolerance: {', '.join(cmp['outside'])}")
    return out
