"""Plots of one result: ``qoslab plot RESULT`` and ``Result.plot(...)``.

- ``queue=NAME, metric=M``: a queue's time series (``red_avg``,
  ``backlog_pkts``, ``drops_forced``, ... : the ``series`` rows of that queue).
- ``flows=GROUP, metric=M``: a traffic group over time. ``throughput``
  (bit/s per ``metrics.bin``, from ``delivered_bytes``): the group's total,
  with each flow's line when there are at most 50; any other flow metric
  of the series (``delivered_pkts``, ``cwnd_pkts``, ``srtt_s``, ...): one
  line per flow.
- ``cdf="delay"``: the CDF of the one-way delays of traced flows (their
  ``delay_s`` samples; trace a group with ``metrics.trace_groups``), all
  traced flows or those of ``flows=GROUP``.
- ``cdf="interarrival"``: the CDF of receiver inter-arrival times, from the
  ``interarrival_count`` histograms.

Values are drawn in the units people read: bit rates in Gb/s, Mb/s, kb/s
or b/s and times in s, ms or µs (:func:`readable_unit`), without an offset
on the axis. ``out`` ending in ``.png`` or ``.svg`` writes the figure
there; without ``out`` (and without ``ax``) it is shown in a window, and
``qoslab plot`` on a machine without a display writes
:func:`default_out` instead. matplotlib is imported only here, and with the
Agg backend whenever a file is written.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import _core
from .errors import config_error

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .result import Result

FORMATS = (".png", ".svg")
#: What marks a figure as qoslab's (its ``Software`` / ``Creator`` metadata): only a
#: file holding it is ever replaced by ``out`` (``qoslab._atomic.write_file``).
SIGNATURES = {".png": b"tEXtSoftware\x00qoslab", ".svg": b"<dc:title>qoslab</dc:title>"}
_METADATA = {".png": {"Software": "qoslab"}, ".svg": {"Date": None, "Creator": "qoslab"}}
CDFS = ("delay", "interarrival")


def _seconds(text: Any) -> float:
    """Seconds of a scenario duration as echoed (``"10s"``, ``"100ms"``), read by the core."""
    try:
        return _core.parse_duration(str(text)) / 1e9
    except ValueError:
        raise config_error("metrics.bin", f"cannot read the duration {text!r}") from None


#: Units people read, by magnitude: (unit, divisor) for bit rates and for seconds.
_RATE_UNITS = (("Gb/s", 1e9), ("Mb/s", 1e6), ("kb/s", 1e3), ("b/s", 1.0))
_TIME_UNITS = (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6))


def readable_unit(metric: str, values: Any) -> tuple[str, float]:
    """``(unit, divisor)`` to show ``values`` of ``metric`` in: a bit rate (``throughput``,
    ``*_bps``) in Gb/s, Mb/s, kb/s or b/s and a time (``*_s``) in s, ms or µs, by the largest
    value; anything else as it is (``("", 1.0)``)."""
    import numpy as np

    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    top = float(np.abs(v).max()) if v.size else 0.0
    units: tuple[tuple[str, float], ...]
    if metric == "throughput" or metric.endswith("_bps"):
        units = _RATE_UNITS
    elif metric.endswith("_s"):
        units = _TIME_UNITS
    else:
        return "", 1.0
    for unit, scale in units:
        if top >= scale:
            return unit, scale
    return units[-1]


def default_out(res: Result, *, queue: str | None, flows: str | None, metric: str | None, cdf: str | None) -> Path:
    """Where ``qoslab plot`` writes when there is no display and no ``--out``: a PNG in the
    working folder named after the result and what is plotted."""
    import re

    what = "_".join(x for x in (queue, flows, metric, f"cdf_{cdf}" if cdf else None) if x)
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{res.name}_{what}").strip("._") or "plot"
    return Path(f"{name[:150]}.png")


def has_display() -> bool:
    """Whether a plot window can open: an interactive matplotlib backend chosen, or on Linux
    an X or Wayland display to open one on."""
    import sys

    backend = os.environ.get("MPLBACKEND", "").lower()
    if backend:
        return backend not in ("agg", "pdf", "ps", "svg", "cairo", "pgf", "template")
    linux = sys.platform.startswith("linux")
    return not linux or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _series(res: Result, kind: str) -> pd.DataFrame:
    s = res.series
    return s[s["entity_kind"] == kind]


def _flow_names(res: Result, group: str) -> list[str]:
    f = res.flows
    names = [str(n) for n in f.loc[f["group"] == group, "name"]]
    if not names:
        groups = ", ".join(dict.fromkeys(map(str, f["group"])))
        raise config_error("--flows", f"no traffic group {group!r}; groups: {groups}")
    return names


def queue_series(res: Result, name: str, metric: str) -> pd.DataFrame:
    """``t_s``/``value`` of one queue metric; a clear error names what exists."""
    q = _series(res, "queue")
    rows = q[q["entity_id"] == name]
    if rows.empty:
        names = sorted(set(map(str, q["entity_id"])))
        raise config_error(
            "--queue", f"no time series for queue {name!r}; queues with series: {', '.join(names) or 'none'}"
        )
    m = rows[rows["metric"] == metric]
    if m.empty:
        raise config_error(
            "--metric",
            f"queue {name} has no series {metric!r}; it has: {', '.join(sorted(set(map(str, rows['metric']))))}",
        )
    return m[["t_s", "value"]].sort_values("t_s", kind="stable").reset_index(drop=True)


def flow_series(res: Result, group: str, metric: str) -> pd.DataFrame:
    """Wide frame: ``t_s`` and one column per flow of ``group``; ``throughput`` in bit/s."""
    names = _flow_names(res, group)
    f = _series(res, "flow")
    f = f[f["entity_id"].isin(names)]
    source = "delivered_bytes" if metric == "throughput" else metric
    m = f[f["metric"] == source]
    if m.empty:
        have = sorted(set(map(str, f["metric"])) - {"delay_s", "interarrival_count"})
        raise config_error(
            "--metric", f"group {group} has no series {metric!r}; allowed: throughput, {', '.join(have)}"
        )
    wide = m.pivot_table(index="t_s", columns="entity_id", values="value", aggfunc="sum").sort_index()
    if metric == "throughput":
        # Bits over each bin's width; the last bin may be cut short by the end of the run.
        edges = bin_edges(res, wide.index)
        widths = [b - a for a, b in itertools.pairwise(edges)]
        wide = wide.mul(8.0).div(widths, axis=0)
    return wide.reset_index()


def bin_edges(res: Result, starts: Any) -> list[float]:
    """The edges of the ``metrics.bin`` bins that start at ``starts`` (the last one closed at
    its start plus one bin, or at the end of the run if sooner)."""
    bin_s = _seconds(res.scenario.get("metrics", {}).get("bin", "1s"))
    xs = [float(t) for t in starts]
    if not xs:
        return [0.0]
    end = xs[-1] + bin_s
    sim = res.summary.get("sim_time_s")
    if isinstance(sim, (int, float)) and xs[-1] < float(sim) < end:
        end = float(sim)
    return [*xs, end]


def cdf_samples(res: Result, what: str, group: str | None = None) -> tuple[Any, Any]:
    """``(x, F(x))`` of the delay or inter-arrival CDF (NumPy arrays)."""
    import numpy as np

    if what not in CDFS:
        raise config_error("--cdf", f"{what!r}; allowed: {', '.join(CDFS)}")
    f = _series(res, "flow")
    if group is not None:
        f = f[f["entity_id"].isin(_flow_names(res, group))]
    scope = f"group {group}" if group else "this result"
    if what == "delay":
        x = np.sort(f.loc[f["metric"] == "delay_s", "value"].to_numpy(dtype=float))
        if x.size == 0:
            raise config_error(
                "--cdf",
                f"no delay samples in {scope}; per-packet delays are recorded for "
                f'traced flows: set metrics.trace_groups = ["GROUP"] in the scenario',
            )
        return x, np.arange(1, x.size + 1) / x.size
    h = f[f["metric"] == "interarrival_count"].groupby("t_s")["value"].sum().sort_index()
    if h.empty or float(h.sum()) == 0:
        raise config_error("--cdf", f"no inter-arrival histogram in {scope}")
    w = h.to_numpy(dtype=float)
    return h.index.to_numpy(dtype=float), np.cumsum(w) / w.sum()


def plot(
    res: Result,
    *,
    queue: str | None = None,
    flows: str | None = None,
    metric: str | None = None,
    cdf: str | None = None,
    out: str | os.PathLike[str] | None = None,
    ax: Any = None,
) -> Any:
    """Draws one plot of ``res`` (see the module doc); returns the matplotlib Figure."""
    if out is not None and Path(out).suffix.lower() not in FORMATS:
        raise config_error(
            "--out", f"{str(out)!r}: unknown image format; allowed: a file ending in {' or '.join(FORMATS)}"
        )
    if out is not None:
        from ._atomic import check_file_replaceable

        check_file_replaceable(Path(out), SIGNATURES[Path(out).suffix.lower()])
    if cdf is None and (queue is None) == (flows is None):
        raise config_error("--queue/--flows", "give exactly one of --queue NAME and --flows GROUP (or --cdf)")
    if cdf is not None and queue is not None:
        raise config_error("--cdf", "a CDF is of flows: use it alone or with --flows GROUP, not --queue")
    if cdf is None and metric is None:
        raise config_error("--metric", "missing; e.g. --metric red_avg for a queue, --metric throughput for flows")
    # Compute before drawing, so that a bad option draws (and writes) nothing.
    if cdf is not None:
        data: Any = cdf_samples(res, cdf, flows)
    elif queue is not None:
        assert metric is not None
        data = queue_series(res, queue, metric)
    else:
        assert flows is not None and metric is not None
        data = flow_series(res, flows, metric)

    import matplotlib

    own = ax is None
    if out is not None and own:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if ax is None:
        fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    else:
        fig = ax.figure
    title = f"{res.name} (seed {res.seed})"
    if cdf is not None:
        x, y = data
        unit, scale = readable_unit("x_s", x)
        ax.step(x / scale, y, where="post")
        ax.set_xlabel(f"one-way delay ({unit})" if cdf == "delay" else f"inter-arrival time ({unit})")
        ax.set_ylabel("P(X <= x)")
        ax.set_ylim(0, 1.02)
        ax.set_title(
            f"{title}: CDF of {'delay' if cdf == 'delay' else 'inter-arrival time'}{f' ({flows})' if flows else ''}"
        )
    elif queue is not None:
        assert metric is not None
        unit, scale = readable_unit(metric, data["value"])
        ax.plot(data["t_s"], data["value"] / scale, lw=1.2)
        ax.set_xlabel("time (s)")
        ax.set_ylabel(f"{metric} ({unit})" if unit else str(metric))
        ax.set_title(f"{title}: {queue} {metric}")
    else:
        assert metric is not None
        cols = [c for c in data.columns if c != "t_s"]
        if metric == "throughput":
            # Each value is the mean over its bin [t, t + bin): drawn as stairs, so one bin still shows.
            edges = bin_edges(res, data["t_s"])
            total = data[cols].sum(axis=1)
            unit, scale = readable_unit(metric, total)
            if len(cols) <= 50:
                for c in cols:
                    ax.stairs(data[c] / scale, edges, lw=0.6, alpha=0.5, color="0.6")
            ax.stairs(total / scale, edges, lw=1.8, label=f"{flows} total")
            ax.legend(loc="best")
        else:
            unit, scale = readable_unit(metric, data[cols].to_numpy())
            for c in cols:
                ax.plot(data["t_s"], data[c] / scale, lw=0.9, label=c if len(cols) <= 10 else None)
            if len(cols) <= 10:
                ax.legend(loc="best", fontsize="small")
        ax.set_xlabel("time (s)")
        ax.set_ylabel(f"{metric} ({unit})" if unit else str(metric))
        ax.set_title(f"{title}: {flows} {metric}")
    # Plain numbers on the axes: no "1e7" offset above them (a formatter of the caller's ax may
    # not take the setting: then it stays as it is).
    with contextlib.suppress(AttributeError):
        ax.ticklabel_format(axis="y", style="plain", useOffset=False)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    if out is not None:
        import io

        from ._atomic import write_file

        fmt = Path(out).suffix.lower()
        buf = io.BytesIO()
        # A fixed salt makes SVG element ids, hence the file, the same run to run.
        with matplotlib.rc_context({"svg.hashsalt": "qoslab"}):
            fig.savefig(buf, format=fmt[1:], metadata=_METADATA[fmt])
        write_file(Path(out), buf.getvalue(), SIGNATURES[fmt])
    elif own:
        plt.show()
    return fig


__all__ = [
    "CDFS",
    "FORMATS",
    "bin_edges",
    "cdf_samples",
    "default_out",
    "flow_series",
    "has_display",
    "plot",
    "queue_series",
    "readable_unit",
]
