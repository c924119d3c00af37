"""qoslab's MM_APP against the MmApp its author published for ns-2.

    .venv/bin/python crosscheck/mm_app.py [--seeds N] [--markdown]

Runs the ``tcp_mm`` case (``cases.py``: the [Claypool00] mix under plain RED,
25 + 30 Reno, 10 MM_APP, 2 CBR at 5 Mb/s) for seeds 1..N in ns-2.35
(``ns2/red_dumbbell.tcl``, whose OTcl MM_APP follows the published MmApp's
rules) and in qoslab (RED variant ``ns2``), and prints for each simulator
the seed-mean and range of: the bottleneck's utilization and drop fraction,
TCP's and the MM_APP's drop fractions (packets dropped / sent to the
bottleneck), the MM_APP's mean throughput per flow, its scale cuts per
second per flow, and the share of cuts with at least
``metrics.SYNC_OTHERS`` other MM_APP flows cutting within
``metrics.SYNC_WINDOW_S``. A measurement, not a verdict: exit 0 once both
sides ran, 2 on a usage or set-up error (ns-2 missing).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import cases  # noqa: E402
import metrics  # noqa: E402
import run  # noqa: E402

CASE = cases.CASES["tcp_mm"]
FIGURES = (
    ("utilization", "utilization"),
    ("drop_fraction", "drop fraction (all)"),
    ("tcp_drop_fraction", "TCP drop fraction"),
    ("mm_drop_fraction", "MM_APP drop fraction"),
    ("mm_kbps", "MM_APP throughput per flow"),
    ("cuts_per_s", "MM_APP cuts per second per flow"),
    ("sync_share", "cuts with >= 5 others within 65 ms"),
)


def ns2_figures(seed: int, work: Path) -> dict[str, float]:
    tr, changes = run.run_ns2_trace(CASE, seed, work)
    m = tr.metrics(CASE.flows)
    fa, fd, rx = tr.flow_arrivals or {}, tr.flow_drops or {}, tr.received or {}
    mm = CASE.mm_flows
    offered = sum(fa.get(f, 0) for f in mm)
    cuts = metrics.scale_cuts(changes)
    rate, share = metrics.cut_figures(cuts, CASE.n_mm, cases.DURATION_S)
    return {
        "utilization": m.utilization,
        "drop_fraction": m.drop_fraction,
        "tcp_drop_fraction": m.tcp_drop_fraction,
        "mm_drop_fraction": sum(fd.get(f, 0) for f in mm) / offered if offered else 0.0,
        "mm_kbps": sum(rx.get(f, 0) for f in mm) * 8 / cases.DURATION_S / CASE.n_mm / 1e3,
        "cuts_per_s": rate,
        "sync_share": share,
    }


def qoslab_figures(seed: int, work: Path) -> dict[str, float]:
    import qoslab

    path = work / "tcp_mm.toml"
    if not path.exists():
        path.write_text(cases.qoslab_toml(CASE))
    res: Any = qoslab.run(path, seed=seed, overrides=["topology.links.0.queue.variant=ns2"])
    q = res.queues
    row = q[q["name"] == "r0->r1"].iloc[0]
    f = res.flows
    tcp, mm = f[f["proto"] == "tcp"], f[f["group"] == "mm"]
    m = metrics.qoslab_metrics(
        row,
        f["delivered_bytes"],
        cases.DURATION_S,
        tcp_sent=float(tcp["sent_pkts"].sum()),
        tcp_dropped=float(tcp["dropped_pkts"].sum()),
    )
    e = res.events
    e = e[e["kind"] == "mm_scale"]
    changes = [
        (float(t), int(fid), int(str(d).removeprefix("scale=")))
        for t, fid, d in zip(e["t_s"], e["flow_id"], e["detail"], strict=True)
    ]
    rate, share = metrics.cut_figures(metrics.scale_cuts(changes), CASE.n_mm, cases.DURATION_S)
    sent = float(mm["sent_pkts"].sum())
    return {
        "utilization": m.utilization,
        "drop_fraction": m.drop_fraction,
        "tcp_drop_fraction": m.tcp_drop_fraction,
        "mm_drop_fraction": float(mm["dropped_pkts"].sum()) / sent if sent else 0.0,
        "mm_kbps": float(mm["delivered_bytes"].sum()) * 8 / cases.DURATION_S / CASE.n_mm / 1e3,
        "cuts_per_s": rate,
        "sync_share": share,
    }


def cell(key: str, xs: list[float]) -> str:
    mean = sum(xs) / len(xs)
    if key in ("mm_kbps", "cuts_per_s"):
        return f"{mean:.2f} ({min(xs):.2f}-{max(xs):.2f})"
    return f"{100 * mean:.2f} % ({100 * min(xs):.2f}-{100 * max(xs):.2f})"


def main(argv: list[str] | None = None) -> int:
    a = metrics.seeds_args(__doc__, argv, markdown_help="print a Markdown table (for docs/validation.md)")
    if metrics.ns_missing():
        return 2
    seeds = range(1, a.seeds + 1)
    with tempfile.TemporaryDirectory(prefix="qoslab-mm-") as tmp:
        work = Path(tmp)
        ns2 = [ns2_figures(s, work) for s in seeds]
        ours = [qoslab_figures(s, work) for s in seeds]
    title = f"{CASE.name}: {CASE.description}, plain RED, {cases.DURATION_S:g} s, seeds 1-{a.seeds}: mean (range)"
    head = ("figure", "ns-2.35 (published MmApp)", "qoslab (RED ns2)")
    rows = [(label, cell(k, [r[k] for r in ns2]), cell(k, [r[k] for r in ours])) for k, label in FIGURES]
    metrics.print_table(title, head, rows, markdown=a.markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
