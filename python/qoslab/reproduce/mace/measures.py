"""What the MACE reproduction measures in one run's :class:`~qoslab.result.Result` (pure functions): the MACE
link's sample rows (per-class counters, MBAC's estimate), loss, inter-arrival histograms, admitted-flow paths."""

from __future__ import annotations

import math
from collections.abc import Iterable
from itertools import accumulate
from typing import TYPE_CHECKING

from ...result import Result

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: An inter-arrival histogram: 1 ms bin's lower edge (s) -> packets.
Hist = dict[float, float]


def mace_events(res: Result, kind: str) -> pd.DataFrame:
    """MACE's rows of ``kind``, those whose ``detail`` names the link (docs/mechanisms/mace.md)."""
    ev = res.events
    return ev[(ev["kind"] == kind) & ev["detail"].str.startswith("link=")]


def class_counters(res: Result) -> list[dict[str, float]]:
    """The MACE link's cumulative per-class packet counters at each sample row."""
    out = []
    for t, rate, detail in zip(*(mace_events(res, "sample")[c] for c in ("t_s", "estimate", "detail")), strict=True):
        row: dict[str, float] = {"t_s": float(t), "rate_bps": float(rate)}
        for part in str(detail).split()[1:]:
            k, _, v = part.partition("=")
            row[k] = float(v)
        out.append(row)
    return out


def mbac_path(res: Result) -> dict[str, list[float]]:
    """Fig. 14's sample path: time (s), the CL load sample, MBAC's ν̂ after it and v·μ (bit/s;
    ν̂ and v·μ NaN under SSAC)."""
    rows = class_counters(res)
    return {
        "t_s": [r["t_s"] for r in rows],
        "sample_bps": [r["rate_bps"] for r in rows],
        "nu_hat_bps": [r.get("nu_hat_bps", math.nan) for r in rows],
        "v_mu_bps": [r.get("v_mu_bps", math.nan) for r in rows],
    }


def generation_matches(probe: Result, res: Result, groups: list[str]) -> bool:
    """Whether every flow of ``groups`` sent the same packets (count and bytes) in ``probe`` as in
    ``res``, so that the probe's inter-arrivals stand for ``res``'s generation times."""

    def sent(r: Result) -> list[tuple[str, int, int]]:
        f = r.flows[r.flows["group"].isin(groups)]
        return sorted(zip(f["name"], f["sent_pkts"].astype(int), f["sent_bytes"].astype(int), strict=True))

    a = sent(probe)
    return bool(a) and a == sent(res)


def class_loss(res: Result, after_s: float = 0.0) -> tuple[float, float]:
    """(CL, BE) packet loss at the MACE link from the last sample at or before ``after_s`` (or the
    start) to the last sample."""
    rows = class_counters(res)
    if not rows:
        return (math.nan, math.nan)
    before = [r for r in rows if r["t_s"] <= after_s]
    b = before[-1] if before else {"cl_arrived": 0, "cl_dropped": 0, "be_arrived": 0, "be_dropped": 0}
    e = rows[-1]

    def ratio(c: str) -> float:
        a = e[f"{c}_arrived"] - b[f"{c}_arrived"]
        return (e[f"{c}_dropped"] - b[f"{c}_dropped"]) / a if a > 0 else math.nan

    return (ratio("cl"), ratio("be"))


def _flows(res: Result, groups: list[str]) -> pd.DataFrame:
    return res.flows[res.flows["group"].isin(groups)]


def group_loss(res: Result, groups: list[str]) -> float:
    """Packet loss of the flows of ``groups`` (dropped / sent), over the run."""
    f = _flows(res, groups)
    sent = float(f["sent_pkts"].sum())
    return float(f["dropped_pkts"].sum()) / sent if sent else math.nan


def binned_loss(res: Result, groups: list[str], after_s: float) -> float:
    """End-to-end packet loss (dropped / sent) of the flows of ``groups`` from ``after_s`` on, from the
    per-flow counter bins that start at or after it (``metrics.bin`` must divide it)."""
    s = res.series
    names = set(_flows(res, groups)["name"])
    s = s[(s["entity_kind"] == "flow") & s["entity_id"].isin(names) & (s["t_s"] >= after_s - 1e-9)]
    sent = float(s[s["metric"] == "sent_pkts"]["value"].sum())
    dropped = float(s[s["metric"] == "dropped_pkts"]["value"].sum())
    return dropped / sent if sent else math.nan


def interarrival_hist(res: Result, groups: list[str]) -> Hist:
    """Aggregate receiver inter-arrival histogram of ``groups``, inter-arrivals of 80 ms or more left out."""
    s = res.series
    names = set(_flows(res, groups)["name"])
    s = s[(s["metric"] == "interarrival_count") & s["entity_id"].isin(names) & (s["t_s"] < 0.080 - 1e-9)]
    out: Hist = {}
    for t, v in zip(s["t_s"], s["value"], strict=True):
        k = round(float(t), 4)
        out[k] = out.get(k, 0.0) + float(v)
    return dict(sorted(out.items()))


def share_within(hist: Hist, ideal_s: float, tol: float = 0.25, bin_s: float = 0.001) -> float:
    """Share of inter-arrivals whose 1 ms bin lies inside ``ideal ± tol·ideal``."""
    total = sum(hist.values())
    lo, hi = ideal_s * (1 - tol), ideal_s * (1 + tol)
    inside = sum(n for t, n in hist.items() if t >= lo - 1e-9 and t + bin_s <= hi + 1e-9)
    return inside / total if total else math.nan


def share_at_most(hist: Hist, limit_s: float) -> float:
    """Share of inter-arrivals of ``limit_s`` or less: every bin whose lower edge is at most
    ``limit_s`` (an inter-arrival of exactly 10 ms lies in the bin [10, 11) ms)."""
    total = sum(hist.values())
    return sum(n for t, n in hist.items() if t <= limit_s + 1e-9) / total if total else math.nan


def _path(steps: Iterable[tuple[float, int]]) -> list[tuple[float, int]]:
    """The running count after each (time, +1/-1) step, in time order."""
    ordered = sorted(steps)
    return list(zip([t for t, _ in ordered], accumulate(d for _, d in ordered), strict=True))


def admitted_path(res: Result) -> list[tuple[float, int]]:
    """(time, flows in the classifier) after each admission or stale departure."""
    return _path(
        [(float(t), 1) for t in mace_events(res, "admit")["t_s"]]
        + [(float(t), -1) for t in mace_events(res, "stale")["t_s"]]
    )


def alive_path(res: Result) -> list[tuple[float, int]]:
    """(time, admitted flows still sending) after each change: an admission counts until the flow
    ends or goes stale, whichever is first (the classifier also holds ended flows until stale)."""
    adm = mace_events(res, "admit")
    adm = adm[adm["rule"] != "already_admitted"] if "rule" in adm else adm
    st = mace_events(res, "stale")
    ends = dict(zip(res.flows["name"], res.flows["end_s"].astype(float), strict=True))
    stale_at: dict[str, list[float]] = {}
    for t, e in zip(st["t_s"], st["entity"], strict=True):
        stale_at.setdefault(str(e), []).append(float(t))
    steps: list[tuple[float, int]] = []
    for t, e in zip(adm["t_s"], adm["entity"], strict=True):
        t, e = float(t), str(e)
        gone = min([s for s in stale_at.get(e, []) if s > t] + [ends.get(e, math.inf)])
        steps.append((t, 1))
        if math.isfinite(gone):
            steps.append((max(gone, t), -1))
    return _path(steps)


def path_stats(path: list[tuple[float, int]], start_s: float, end_s: float) -> tuple[float, int]:
    """Time-average and maximum over [start_s, end_s] of a step path of (time, count)."""
    n = next((k for t, k in reversed(path) if t <= start_s), 0)
    area, last, peak = 0.0, start_s, n
    for t, k in path:
        if start_s < t <= end_s:
            area += n * (t - last)
            last, n = t, k
            peak = max(peak, n)
    area += n * (end_s - last)
    return (area / (end_s - start_s) if end_s > start_s else math.nan, peak)


def sample_rates(res: Result, after_s: float) -> list[float]:
    """The MACE link's CL load samples (bit/s) after ``after_s``."""
    return [r["rate_bps"] for r in class_counters(res) if r["t_s"] > after_s]


def percentile(xs: list[float], q: float) -> float:
    """The ``q`` quantile of ``xs`` by linear interpolation between order statistics; NaN if empty."""
    if not xs:
        return math.nan
    s = sorted(xs)
    k = (len(s) - 1) * q
    lo = math.floor(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def offered_bps(res: Result, groups: list[str]) -> float:
    """The wire bit rate the flows of ``groups`` sent, each over its own lifetime, summed."""
    f = _flows(res, groups)
    return float((f["sent_bytes"] * 8 / (f["end_s"] - f["start_s"]).clip(lower=1e-9)).sum())


def delay_sd_ms(res: Result, groups: list[str]) -> float:
    """The flows of ``groups``' one-way delay standard deviation (ms), averaged over the flows."""
    sd = _flows(res, groups)["delay_var_s2"].clip(lower=0.0) ** 0.5 * 1000
    return float(sd.mean()) if len(sd) else math.nan
