"""``qoslab report DIR``: one self-contained HTML page for a run, a sweep or a reproduction.

Which one ``DIR`` is follows from what it holds:

- ``results.json``: a reproduction (``qoslab reproduce``): the score and each
  of the paper's tables as it prints it, qoslab's value, interval and verdict
  in each cell (coloured by verdict), the causes of differing cells; its
  claims, one table row each (``<tr class="claim">``), its checks apart, its
  report sections, its figures, and the scenario of every variant;
- ``sweep.json``: a sweep (``qoslab sweep``): grid, seeds, build, the
  per-point means and 95 % CIs of every group, plots of each group's
  throughput, loss and delay against the first grid key, and the scenario;
- ``summary.json``: one run: queues, groups, admission (the tables of
  ``qoslab show``), plots (router queue backlogs, RED averages, group
  throughput, the delay and inter-arrival CDFs when recorded) and the
  scenario with its defaults filled in.

Everything is inline: CSS in a ``<style>``, plots as PNG ``data:`` URIs, so
the file can be mailed or archived alone. It is written atomically
(temporary name, then rename).
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import numbers
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import config_error

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .result import Result

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 2em; }
table { border-collapse: collapse; margin: .8em 0; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: .25em .6em; text-align: right; vertical-align: top; }
th { background: #f3f3f3; } td.l, th.l { text-align: left; }
tr.claim td { text-align: left; } .holds { color: #176f2c; font-weight: bold; }
.fails { color: #b00020; font-weight: bold; } .unchecked { color: #8a6d00; font-weight: bold; }
pre { background: #f7f7f7; padding: .8em; overflow-x: auto; font-size: 12px; }
figure { margin: 1em 0; } figcaption { color: #555; font-size: 13px; }
img { max-width: 100%; } .meta { color: #555; } .wide { overflow-x: auto; }
td.l { white-space: nowrap; } tr.claim td { white-space: normal; } details { margin: .8em 0; }
table.cells td { text-align: left; white-space: nowrap; } td .paper { color: #555; } td .verdict { font-weight: bold; }
td.v-agrees { background: #e3f4e6; } td.v-differs { background: #fbdcdc; } td.v-uncertain { background: #fff3c4; }
td.v-not-run, td.v-lost, td.v-input { background: #f1f1f1; color: #666; } .score { font-size: 1.15em; }
"""


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _num(v: Any) -> str:
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        if not math.isfinite(v):
            return "-"
        if v == int(v) and abs(v) < 1e15:
            return f"{int(v):,}"
        return f"{v:.4g}"
    return str(v)


def _number(v: object) -> float | None:
    """``v`` as a float if it is a number (not a boolean), else ``None``."""
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        return None
    return float(v)


def column_format(values: Sequence[Any]) -> Callable[[Any], str]:
    """One number format for a whole column, so that its numbers line up and read alike
    (never ``2.499e+07`` above ``24,989,800``): whole numbers with thousands separators;
    other numbers with the decimals that give about four significant digits to the
    column's largest value (thousands separators from 1,000 up), or, for a column whose
    largest value is below 0.001, in scientific notation; text and booleans as they are."""
    nums = [x for x in map(_number, values) if x is not None and math.isfinite(x)]
    if not nums:
        return _num
    if all(v == int(v) and abs(v) < 1e15 for v in nums):
        spec = ",.0f"
    else:
        top = max(abs(v) for v in nums)
        if 0 < top < 1e-3:
            spec = ".3e"
        else:
            decimals = 0 if top == 0 else max(0, min(6, 3 - math.floor(math.log10(top))))
            spec = f",.{decimals}f"

    def fmt(v: Any) -> str:
        x = _number(v)
        if x is None:
            return str(v)
        return format(x, spec) if math.isfinite(x) else "-"

    return fmt


def table_html(df: pd.DataFrame, *, left: Sequence[str] = (), row_class: str | None = None) -> str:
    cols = list(df.columns)
    head = "".join(f'<th class="l">{_e(c)}</th>' if c in left else f"<th>{_e(c)}</th>" for c in cols)
    fmts = [column_format(df[c].tolist()) if c not in left else _num for c in cols]
    rows = []
    for rec in df.itertuples(index=False):
        cells = "".join(
            f'<td class="l">{_e(f(v))}</td>' if c in left else f"<td>{_e(f(v))}</td>"
            for c, v, f in zip(cols, rec, fmts, strict=True)
        )
        cls = f' class="{row_class}"' if row_class else ""
        rows.append(f"<tr{cls}>{cells}</tr>")
    return f'<div class="wide"><table><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'


def readable_unit(name: str) -> tuple[str, float]:
    """How a column of ``name`` reads: ``(label, factor)``, e.g. ``throughput_bps`` is
    ``("throughput (Mb/s)", 1e-6)``, ``delay_mean_s`` ``("delay_mean (ms)", 1e3)``, ``loss``
    ``("loss (%)", 100)``; other columns keep their name and values."""
    if name.endswith("_bps"):
        return f"{name.removesuffix('_bps')} (Mb/s)", 1e-6
    if name.endswith("_s") and name != "t_s":
        return f"{name.removesuffix('_s')} (ms)", 1e3
    if name in ("loss", "drop_ratio"):
        return f"{name} (%)", 100.0
    return name, 1.0


def readable_columns(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with its columns in the units people read (:func:`readable_unit`), each renamed
    to say so."""
    out = df.copy()
    renames = {}
    for c in df.columns:
        label, factor = readable_unit(str(c))
        if label != str(c):
            out[c] = df[c].astype(float) * factor
            renames[c] = label
    return out.rename(columns=renames)


def _png_uri(data: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def _fig_uri(fig: Any) -> str:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, metadata={"Software": None})
    plt.close(fig)
    return _png_uri(buf.getvalue())


def _figure(uri: str, caption: str) -> str:
    return f'<figure><img src="{uri}" alt="{_e(caption)}"><figcaption>{_e(caption)}</figcaption></figure>'


def _page(title: str, body: list[str]) -> str:
    from . import __version__

    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="generator" content="qoslab {__version__}">'
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body>"
        f"<h1>{_e(title)}</h1>{''.join(body)}"
        f'<p class="meta">Written by qoslab {__version__} (<code>qoslab report</code>).</p></body></html>\n'
    )


def _scenario_html(echo: dict[str, Any]) -> str:
    import tomli_w

    from .scenario import _drop_none

    try:
        text = tomli_w.dumps(_drop_none(echo))
    except (TypeError, ValueError):
        text = json.dumps(echo, indent=2)
    return f"<pre>{_e(text)}</pre>"


def _agg() -> None:
    import matplotlib

    matplotlib.use("Agg")


# -- one run ------------------------------------------------------------


def _run_plots(res: Result) -> list[str]:
    import matplotlib.pyplot as plt

    from .plot import bin_edges, cdf_samples, flow_series, queue_series

    out: list[str] = []
    s = res.series
    qs = s[s["entity_kind"] == "queue"]
    for name in dict.fromkeys(map(str, qs["entity_id"])):
        metrics = set(map(str, qs.loc[qs["entity_id"] == name, "metric"]))
        for metric in ("backlog_pkts", "red_avg"):
            if metric in metrics:
                fig, ax = plt.subplots(figsize=(8, 3.2))
                d = queue_series(res, name, metric)
                ax.plot(d["t_s"], d["value"], lw=1)
                ax.set_xlabel("time (s)")
                ax.set_ylabel(metric)
                ax.grid(True, alpha=0.3)
                fig.tight_layout()
                out.append(_figure(_fig_uri(fig), f"queue {name}: {metric}"))
    for group in dict.fromkeys(map(str, res.flows["group"])):
        try:
            d = flow_series(res, group, "throughput")
        except ValueError:
            continue
        fig, ax = plt.subplots(figsize=(8, 3.2))
        cols = [c for c in d.columns if c != "t_s"]
        ax.stairs(d[cols].sum(axis=1) / 1e6, bin_edges(res, d["t_s"]))
        ax.set_xlabel("time (s)")
        ax.set_ylabel("throughput (Mb/s)")
        ax.grid(True, alpha=0.3)
        fig.tight_layout()
        out.append(_figure(_fig_uri(fig), f"group {group}: throughput per metrics.bin (all its flows)"))
    for what in ("delay", "interarrival"):
        try:
            x, y = cdf_samples(res, what)
        except ValueError:
            continue
        fig, ax = plt.subplots(figsize=(6, 3.2))
        ax.step(x, y, where="post")
        ax.set_xlabel("one-way delay (s)" if what == "delay" else "inter-arrival time (s)")
        ax.set_ylabel("CDF")
        ax.grid(True, alpha=0.3)
        fig.tight_layout()
        out.append(_figure(_fig_uri(fig), f"CDF of {what.replace('interarrival', 'inter-arrival time')}"))
    return out


def run_html(res: Result) -> str:
    from .tables import admission_table, group_table, queue_table

    _agg()
    s = res.summary
    body = [
        f'<p class="meta">seed {_e(res.seed)}, {_e(s.get("sim_time_s"))} s simulated, '
        f"{_e(_num(s.get('events', 0)))} events, qoslab {_e(s.get('qoslab_version', '?'))}</p>"
    ]
    q = queue_table(res)
    shown = [
        "queue",
        "kind",
        "arrivals",
        "sent_pkts",
        "drops",
        "drop_ratio",
        "marks",
        "backlog_mean_pkts",
        "backlog_max_pkts",
        "sojourn_mean_s",
        "utilization",
    ]
    reasons = [c for c in q.columns if c.startswith(("drops_", "marks_")) and int(q[c].sum()) > 0]
    if q["parent"].astype(bool).any():
        shown.insert(2, "parent")
    q = q[shown[:6] + reasons + shown[6:]]
    # Router output queues (those with time series) first; the hosts' own queues folded away.
    series = res.series
    routers = set(map(str, series.loc[series["entity_kind"] == "queue", "entity_id"]))
    main = q[q["queue"].isin(routers) | (q["drops"] > 0)]
    rest = q[~q.index.isin(main.index)]
    # One row per group and per queue, so that each column holds one quantity in one unit.
    groups = readable_columns(group_table(res))
    body += ["<h2>Traffic groups</h2>", table_html(groups, left=("group",))]
    body += ["<h2>Queues</h2>", table_html(readable_columns(main), left=("queue", "kind", "parent"))]
    if len(rest):
        body.append(
            f"<details><summary>{len(rest)} more queues without drops (hosts' own queues)</summary>"
            f"{table_html(readable_columns(rest), left=('queue', 'kind', 'parent'))}</details>"
        )
    body += ["<h2>Admission</h2>", table_html(admission_table(res), left=("group", "rules"))]
    body += ["<h2>Plots</h2>", *_run_plots(res)]
    body += ["<h2>Scenario</h2>", _scenario_html(res.scenario)]
    return _page(f"qoslab run: {res.name}", body)


# -- a sweep ------------------------------------------------------------


def sweep_html(folder: Path) -> str:
    import matplotlib.pyplot as plt
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    _agg()
    meta = json.loads((folder / "sweep.json").read_text(encoding="utf-8"))
    summ = pq.read_table(folder / "summary.parquet").to_pandas()
    keys = list(meta["grid"])
    body = [
        f'<p class="meta">{len(meta["runs"])} runs: grid '
        + ", ".join(f"<code>{_e(k)}</code> = {_e(', '.join(v))}" for k, v in meta["grid"].items())
        + f"; seeds {_e(', '.join(map(str, meta['seeds'])))}; {meta['executed']} executed, "
        f"{meta['reused']} from the store, {meta['wall_s']} s on {_e(meta['executor'])}; build "
        f"<code>{_e(meta['build'].get('git_commit', '')[:12] or 'no git')}</code> / native "
        f"<code>{_e(meta['build']['native_sha256'][:12])}</code></p>"
    ]
    g = summ[summ["entity_kind"] == "group"]
    wanted = ["throughput_bps", "loss", "delay_mean_s", "jain"]
    n_seeds = len(meta["seeds"])
    body += [
        f"<h2>Per point (mean{' ± 95 % CI half-width' if n_seeds > 1 else ''} over {n_seeds} "
        f"seed{'s' if n_seeds != 1 else ''})</h2>",
        table_html(pivot_points(g, keys, "group", wanted), left=("group",)),
    ]
    q = summ[(summ["entity_kind"] == "queue") & summ["metric"].isin(["drops", "backlog_mean_pkts", "utilization"])]
    # The queues that matter: those that dropped at some point, or were busy more than half the time.
    peak = q.pivot_table(index="entity", columns="metric", values="mean", aggfunc="max")
    busy = [
        str(n) for n, r in peak.iterrows() if float(r.get("drops", 0.0)) > 0 or float(r.get("utilization", 0.0)) > 0.5
    ]
    q = q[q["entity"].isin(busy)]
    if len(q):
        body += [
            "<h2>Queues that dropped or were busy (> 50 %)</h2>",
            table_html(pivot_points(q, keys, "queue", ["drops", "backlog_mean_pkts", "utilization"]), left=("queue",)),
        ]
    body.append("<h2>Plots</h2>")
    if keys:
        x = keys[0]
        others = keys[1:]
        for group in dict.fromkeys(map(str, g["entity"])):
            for metric in ("throughput_bps", "loss", "delay_mean_s"):
                d = g[(g["entity"] == group) & (g["metric"] == metric)]
                if d.empty:
                    continue
                fig, ax = plt.subplots(figsize=(7, 3.4))
                series = d.groupby(others, sort=False) if others else [((), d)]
                for label, part in series:
                    part = part.sort_values(x)
                    xs = part[x]
                    if not all(isinstance(v, (int, float)) for v in xs):
                        xs = [str(v) for v in xs]
                    err = part["ci95"].fillna(0.0)
                    lab = ", ".join(
                        f"{k.rsplit('.', 1)[-1]}={v}"
                        for k, v in zip(others, label if isinstance(label, tuple) else (label,), strict=True)
                    )
                    ax.errorbar(xs, part["mean"], yerr=err, marker="o", capsize=3, label=lab or None)
                ax.set_xlabel(x)
                ax.set_ylabel(metric)
                ax.grid(True, alpha=0.3)
                if others:
                    ax.legend(fontsize="small")
                fig.tight_layout()
                body.append(_figure(_fig_uri(fig), f"group {group}: {metric} against {x} (mean ± 95 % CI)"))
    scen = folder / "scenario.toml"
    if scen.is_file():
        body.append("<h2>Scenario</h2>")
        if keys:
            swept = ", ".join(f"<code>{_e(k)}</code> ({_e(', '.join(v))})" for k, v in meta["grid"].items())
            body.append(
                f"<p>The grid sets {swept} at each point: the values of these keys below are the base "
                "scenario's, which no run of the sweep used.</p>"
            )
        body.append(f"<pre>{_e(scen.read_text(encoding='utf-8'))}</pre>")
        if meta.get("overrides"):
            body.append(f"<p>with overrides {_e(', '.join(meta['overrides']))}</p>")
    return _page(f"qoslab sweep: {meta.get('name', folder.name)}", body)


def pivot_points(summ: pd.DataFrame, keys: Sequence[str], entity: str, metrics: Sequence[str]) -> pd.DataFrame:
    """The per-point summary pivoted: one row per grid point and entity (``entity``: the
    name of that column, ``group`` or ``queue``), one column per metric in readable units
    (:func:`readable_unit`), followed by its 95 % CI half-width (``±``) when some point has
    more than one seed."""
    import pandas as pd

    rows: list[dict[str, Any]] = []
    d = summ[summ["metric"].isin(metrics)]
    for key, part in d.groupby([*keys, "entity"], sort=False, dropna=False):
        vals = key if isinstance(key, tuple) else (key,)
        row: dict[str, Any] = {k.rsplit(".", 1)[-1]: v for k, v in zip(keys, vals[:-1], strict=True)}
        row[entity] = vals[-1]
        for m in metrics:
            r = part[part["metric"] == m]
            label, factor = readable_unit(m)
            if len(r):
                row[label] = float(r["mean"].iloc[0]) * factor
                row[f"{label} ±"] = float(r["ci95"].iloc[0]) * factor
        rows.append(row)
    out = pd.DataFrame(rows)
    no_ci = [c for c in out.columns if str(c).endswith(" ±") and not out[c].notna().any()]
    return out.drop(columns=no_ci)


# -- a reproduction -----------------------------------------------------


_IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)\s]+)\)")


def _claims_html(claims: Sequence[dict[str, Any]]) -> str:
    word = {True: ("holds", "holds"), False: ("fails", "fails"), None: ("not checked", "unchecked")}
    rows = []
    for c in claims:
        text, cls = word[c.get("holds")]
        rows.append(
            f'<tr class="claim"><td><code>{_e(c["id"])}</code><br>{_e(c["text"])}</td>'
            f"<td>{_e(c['paper'])}</td><td>{_e(c['measured'])}</td><td>{_e(c['tolerance'])}</td>"
            f'<td class="{cls}">{text}</td><td>{_e(c.get("explanation", ""))}</td></tr>'
        )
    head = "".join(
        f'<th class="l">{h}</th>' for h in ("claim", "paper / reference", "qoslab", "tolerance", "holds", "why")
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def cells_html(folder: Path, doc: dict[str, Any]) -> list[str]:
    """The paper's numbers cell by cell: the score, each table as the paper prints it (its
    rows × its columns) with the paper's number, qoslab's mean ± the half-width of its 95 %
    interval and the verdict in each cell, coloured by verdict, and the causes below."""
    from .reproduce.cells import Score, read_cells
    from .reproduce.fidelity import (
        LEGEND,
        by_table,
        counts_text,
        from_json,
        grid,
        interval_text,
        not_run_reasons,
        score_text,
        unit_note,
    )
    from .reproduce.fidelity import value_text as qoslab_text

    out = ["<h2>The paper's numbers, cell by cell</h2>"]
    if not doc.get("fidelity"):
        return [*out, f"<p>{_e(score_text(None))}</p>"]
    tables, causes = from_json(doc["fidelity"])
    cells = read_cells(folder / "cells.csv")
    out += [
        f'<p class="score">{_e(score_text(Score.of(cells)).replace("**", ""))}</p>',
        f'<p class="meta">{_e(LEGEND.replace("`", ""))}</p>',
    ]
    for t, tc in by_table(cells, tables):
        rows, cols, at = grid(tc)
        tol = f"; tolerance ±{t.tolerance:g} for every cell: {t.tolerance_reason}" if t.tolerance is not None else ""
        head = '<th class="l"></th>' + "".join(f'<th class="l">{_e(c)}</th>' for c in cols)
        body = []
        for r in rows:
            tds = [f'<th class="l">{_e(r)}</th>']
            for col in cols:
                c = at.get((r, col))
                if c is None:
                    tds.append("<td></td>")
                    continue
                title = f"tolerance {c.tolerance:g} {c.unit}" if c.tolerance is not None else c.unit
                if c.cause:
                    title += f"; {c.cause}"
                ours = f"<br>{_e(qoslab_text(c))}" if c.qoslab is not None else ""
                tds.append(
                    f'<td class="v-{c.verdict.replace(" ", "-")}" title="{_e(title)}">'
                    f'<span class="paper">{_e(c.paper)}</span>{ours}<br>'
                    f'<span class="verdict">{_e(c.verdict)}</span></td>'
                )
            body.append(f"<tr>{''.join(tds)}</tr>")
        out += [
            f"<h3>{_e(t.id)}: {_e(t.title)} ({_e(t.section)})</h3>",
            f'<p class="meta">{_e(unit_note(tc))}; {_e(counts_text(Score.of(tc)))}{_e(tol)}</p>',
            f'<div class="wide"><table class="cells"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>",
        ]
        for reason, which in not_run_reasons(tc):
            out.append(f'<p class="meta">Not run{" (" + _e(which) + ")" if which else ""}: {_e(reason)}</p>')
    differing = [c for c in cells if c.verdict == "differs"]
    out.append("<h3>Differing cells and their causes</h3>")
    if not differing:
        return [*out, "<p>No cell differs.</p>"]
    runs = {c.text: c.run for c in causes}
    items = []
    for c in differing:
        run = runs.get(c.cause)
        rerun = f" (rerun: <code>{_e(run)}</code>)" if run else ""
        items.append(
            f"<li>{_e(c.table)}, {_e(c.row)}, {_e(c.column)}: paper {_e(c.paper)} {_e(c.unit)}, qoslab "
            f"{_e(interval_text(c))}, tolerance {c.tolerance:g}: {_e(c.cause)}{rerun}</li>"
        )
    return [*out, f"<ul>{''.join(items)}</ul>"]


#: The sections of report.md the page renders itself (the rest is kept as Markdown).
_OWN_SECTIONS = ("Claims", "Checks", "The paper's numbers, cell by cell")


def reproduction_html(folder: Path) -> str:
    from markdown_it import MarkdownIt

    doc = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    claims = [c for c in doc.get("claims", []) if c.get("kind", "claim") == "claim"]
    checks = [c for c in doc.get("claims", []) if c.get("kind") == "check"]
    body = [
        f'<p class="meta">paper <code>{_e(doc.get("seed_file", ""))}</code>, qoslab '
        f"{_e(doc.get('qoslab_version', '?'))}, {'quick' if doc.get('quick') else 'full'} run, seeds "
        f"{_e(', '.join(map(str, doc.get('seeds', []))))}, {_e(doc.get('wall_s', '?'))} s</p>",
        *cells_html(folder, doc),
        "<h2>Claims</h2>",
        _claims_html(claims),
    ]
    if checks:
        body += [
            "<h2>Checks (not counted as reproduced claims)</h2>",
            "<p>Identities of the paper's own formulas and qoslab's predictions of its own behaviour.</p>",
            _claims_html(checks),
        ]
    md_path = folder / "report.md"
    if md_path.is_file():
        md = md_path.read_text(encoding="utf-8")
        # The cells, claims and checks are above; keep the report's other sections, with its figures inlined.
        parts = re.split(r"(?m)^## ", md)
        kept = [p for p in parts[1:] if not p.startswith(_OWN_SECTIONS)]

        def inline(m: re.Match[str]) -> str:
            p = folder / m.group(2)
            if p.suffix.lower() == ".png" and p.is_file():
                return f"![{m.group(1)}]({_png_uri(p.read_bytes())})"
            return m.group(0)

        text = "\n".join("## " + _IMAGE.sub(inline, p) for p in kept)
        body.append(MarkdownIt("commonmark").enable("table").render(text))
    variants = sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    scen = []
    for v in variants:
        runs = sorted(v.glob("seed_*/summary.json"))
        if runs:
            echo = json.loads(runs[0].read_text(encoding="utf-8")).get("scenario", {})
            scen.append(f"<details><summary>{_e(v.name)}</summary>{_scenario_html(echo)}</details>")
    if scen:
        body += ["<h2>Scenarios of the variants</h2>", *scen]
    return _page(f"qoslab reproduction: {doc.get('name', folder.name)}", body)


# -- entry --------------------------------------------------------------


def kind_of(folder: Path) -> str:
    """``reproduction``, ``sweep`` or ``run``, from the files ``folder`` holds."""
    if (folder / "results.json").is_file():
        return "reproduction"
    if (folder / "sweep.json").is_file():
        return "sweep"
    if (folder / "summary.json").is_file():
        return "run"
    raise config_error(
        "DIR", f"{folder}: not a run, sweep or reproduction folder (no summary.json, sweep.json or results.json)"
    )


def render(folder: str | os.PathLike[str]) -> str:
    """The HTML page of a run, sweep or reproduction folder."""
    from .result import Result

    d = Path(folder)
    kind = kind_of(d)
    if kind == "reproduction":
        return reproduction_html(d)
    if kind == "sweep":
        return sweep_html(d)
    return run_html(Result.load(d))


#: The mark a report carries in its head: only a file holding it is ever replaced.
SIGNATURE = b'<meta name="generator" content="qoslab '


def write_report(folder: str | os.PathLike[str], *, out: str | os.PathLike[str] | None = None) -> Path:
    """Writes the page (default ``DIR/report.html``) atomically; returns its path.

    An existing ``out`` is replaced only if it is a report qoslab wrote (its
    ``generator`` meta tag); anything else is refused with a ``ConfigError``
    before the page is rendered (``qoslab._atomic.write_file``)."""
    from ._atomic import check_file_replaceable, write_file

    d = Path(folder)
    if not d.is_dir():
        raise config_error("DIR", f"{d}: no such folder")
    target = Path(out) if out is not None else d / "report.html"
    check_file_replaceable(target, SIGNATURE)
    page = render(d)
    return write_file(target, page.encode("utf-8"), SIGNATURE)


__all__ = [
    "cells_html",
    "kind_of",
    "render",
    "reproduction_html",
    "run_html",
    "sweep_html",
    "table_html",
    "write_report",
]
