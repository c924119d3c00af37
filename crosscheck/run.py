"""RED crosscheck: the [Claypool00] dumbbell in ns-2.35 and in qoslab, side by side.

    .venv/bin/python crosscheck/run.py [--seeds N] [--cases tcp,...,tcp_mm] [--markdown] [--rate MBPS]

For each case (``cases.py``) and each seed 1..N it runs ns-2
(``ns2/red_dumbbell.tcl``, which writes the bottleneck's queue trace) and
qoslab with RED's two variants (``floyd93``, the 1993 paper; ``ns2``, RED as
ns-2 runs it), then prints the seed-mean of utilization, drop fraction,
Jain's index of per-flow throughput and mean queue for each, and whether
each qoslab figure is within the issue's tolerance of ns-2's
(``metrics.TOLERANCE``), then TCP's own drop fraction, a diagnostic that
does not count in the verdict (``metrics.DIAGNOSTIC``). Exit status 0 when the ``ns2`` variant meets
every tolerance, 1 when it does not, 2 on a usage or set-up error (ns-2
missing: ``make crosscheck`` installs it). ``--rate`` changes the
bottleneck's rate on both sides, for diagnostics only (the cases and their
tolerances are at the paper's 25 Mb/s).

qoslab's ns2 variant is selected with the scenario key
``topology.links.0.queue.variant = "ns2"`` (an override, so the case's file
is the same for both variants).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import cases  # noqa: E402
import metrics  # noqa: E402

VARIANTS = ("floyd93", "ns2")


def run_ns2(case: cases.Case, seed: int, work: Path, rate_bps: int = cases.RATE_BPS) -> metrics.Metrics:
    return run_ns2_trace(case, seed, work, rate_bps)[0].metrics(case.flows)


def run_ns2_trace(
    case: cases.Case, seed: int, work: Path, rate_bps: int = cases.RATE_BPS
) -> tuple[metrics.Ns2Trace, list[tuple[float, int, int]]]:
    """ns-2's bottleneck counts and its MM_APP scale changes (none without MM_APP flows)."""
    trace = work / f"ns2_{case.name}_{seed}.tr"
    scale_log = work / f"ns2_{case.name}_{seed}.scales"
    cmd = [
        "ns",
        str(HERE / "ns2" / "red_dumbbell.tcl"),
        str(case.n_tcp),
        str(case.n_cbr),
        f"{cases.DURATION_S:g}",
        str(seed),
        str(trace),
        f"{cases.CBR_START_S:g}",
        str(case.n_late),
        f"{cases.LATE_START_S:g}",
        f"{rate_bps}",
        cases.ns2_schedule(case.cbr_rates),
        str(case.n_udp),
        cases.ns2_schedule(case.udp_rates) if case.n_udp else "-",
        str(case.n_mm),
        str(scale_log),
        str(int(case.ecn)),
        f"{case.access_delay_ms:g}ms",
        f"{case.bottleneck_delay_ms:g}ms",
        str(case.max_window),
    ]
    done = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"crosscheck: ns-2 failed ({' '.join(cmd)}): {done.stderr.strip()}")
    with trace.open() as f:
        tr = metrics.parse_ns2_trace(f, src=0, dst=1, rate_bps=rate_bps, duration_s=cases.DURATION_S)
    trace.unlink()
    changes: list[tuple[float, int, int]] = []
    if scale_log.exists():
        with scale_log.open() as f:
            changes = metrics.parse_scale_log(f)
        scale_log.unlink()
    return tr, changes


def run_qoslab(
    case: cases.Case, variant: str, seed: int, work: Path, rate_bps: int = cases.RATE_BPS
) -> metrics.Metrics:
    import qoslab

    path = work / f"{case.name}_{rate_bps}.toml"
    if not path.exists():
        path.write_text(cases.qoslab_toml(case, rate_bps))
    res = qoslab.run(path, seed=seed, overrides=[f"topology.links.0.queue.variant={variant}"])
    q = res.queues
    row = q[q["name"] == "r0->r1"].iloc[0]
    f = res.flows
    # A flow whose rate changes is one qoslab group per rate (cases.py): joined back for Jain's index.
    delivered = f.groupby(f["name"].map(cases.logical_flow), sort=False)["delivered_bytes"].sum()
    tcp = f[f["proto"] == "tcp"]
    return metrics.qoslab_metrics(
        row,
        delivered,
        cases.DURATION_S,
        tcp_sent=float(tcp["sent_pkts"].sum()),
        tcp_dropped=float(tcp["dropped_pkts"].sum()),
    )


def fmt(metric: str, v: float) -> str:
    if metric in ("utilization", "drop_fraction", "tcp_drop_fraction", "mark_fraction"):
        return f"{100 * v:.2f} %"
    if metric == "jain":
        return f"{v:.3f}"
    return f"{v:.2f}"


def tol_text(metric: str) -> str:
    if metric in metrics.DIAGNOSTIC:
        return f"±{100 * metrics.DIAGNOSTIC[metric]:g} pt (diagnostic)"
    t = metrics.TOLERANCE[metric]
    if metric == "mean_queue":
        return f"±{100 * t:.0f} %"
    if metric == "jain":
        return f"±{t:.2f}"
    return f"±{100 * t:g} pt"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=3, help="seeds 1..N per case and simulator (default 3)")
    ap.add_argument("--cases", default=",".join(cases.CASES), help="comma-separated: " + ", ".join(cases.CASES))
    ap.add_argument("--markdown", action="store_true", help="print Markdown tables (for docs/validation.md)")
    ap.add_argument(
        "--rate",
        type=float,
        default=cases.RATE_BPS / 1e6,
        help="bottleneck Mb/s on both sides (diagnostics; default 25)",
    )
    a = ap.parse_args(argv)
    if a.seeds < 1:
        ap.error("--seeds must be at least 1")
    if not a.rate > 0:
        ap.error("--rate must be a positive number of Mb/s")
    rate_bps = round(a.rate * 1e6)
    names = [c for c in a.cases.split(",") if c]
    unknown = [c for c in names if c not in cases.CASES]
    if unknown:
        ap.error(f"--cases: unknown {', '.join(unknown)}; allowed: {', '.join(cases.CASES)}")
    if metrics.ns_missing():
        return 2
    seeds = range(1, a.seeds + 1)
    ok = True
    with tempfile.TemporaryDirectory(prefix="qoslab-crosscheck-") as tmp:
        work = Path(tmp)
        for name in names:
            case = cases.CASES[name]
            ns2 = metrics.mean([run_ns2(case, s, work, rate_bps) for s in seeds])
            ours = {v: metrics.mean([run_qoslab(case, v, s, work, rate_bps) for s in seeds]) for v in VARIANTS}
            title = f"{case.name}: {case.description}, {cases.DURATION_S:g} s, mean of seeds 1-{a.seeds}"
            if rate_bps != cases.RATE_BPS:
                title += f", bottleneck {rate_bps / 1e6:g} Mb/s (diagnostic)"
            rows = []
            shown = [m for m in (*metrics.TOLERANCE, *metrics.DIAGNOSTIC) if case.ecn or m not in metrics.ECN_ONLY]
            for m in shown:
                ref = ns2.as_dict()[m]
                cells = [fmt(m, ref)]
                for v in VARIANTS:
                    val = ours[v].as_dict()[m]
                    good = metrics.within(m, ref, val)
                    if v == "ns2" and m in metrics.TOLERANCE:
                        ok &= good
                    cells.append(f"{fmt(m, val)} {'ok' if good else 'OUT'}")
                rows.append((m, tol_text(m), *cells))
            head = ("figure", "tolerance", "ns-2.35", "qoslab floyd93", "qoslab ns2")
            metrics.print_table(title, head, rows, markdown=a.markdown)
    print("\nqoslab ns2 variant within every tolerance of ns-2.35:", "yes" if ok else "NO")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
