"""Claim 6's control (Tables 4.8-4.9): the parking-lot termination cells with the edge links at another rate.

Prints per cell the long aggregate's A - E (mean, sd over the seeds) and every row's mean A - E; ``--edge-rate
link`` (default): the edges at the bottleneck's rate. Figures: docs/reproductions/pcn.md ("Every cell again")."""

from __future__ import annotations

import argparse
import statistics
from concurrent.futures import ProcessPoolExecutor

from ...errors import ConfigError
from . import plt

Cell = tuple[int, str, str]


def _cell_table(job: tuple[Cell, int, str]) -> dict[str, dict[str, float]]:
    """One run of the cell (bottlenecks, model, ratio) at the seed with the edges at the rate
    (``link``: the bottleneck's): its Table 4.7-4.9 rows."""
    (k, model, ratio), seed, edge_rate = job
    rate = plt.TERM_LINK[model] if edge_rate == "link" else edge_rate
    res = plt.termination_scenario(bottlenecks=k, model=model, ratio=ratio, edge_rate=rate).run(seed=seed)
    return plt.reduce_termination(job[0], res)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--edge-rate", default="link", help="a rate (e.g. 10Gbps) or 'link' (default)")
    ap.add_argument("--models", default="CBR,VBR", help="comma-separated, of CBR, VBR, VTR, SVD")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args(argv)
    models = [m.strip() for m in a.models.split(",")]
    bad = [m for m in models if m not in plt.TERM_LINK]
    if bad:
        ap.error(f"--models: unknown {', '.join(bad)}; allowed: {', '.join(plt.TERM_LINK)}")
    if a.seeds < 2 or a.jobs < 1:
        ap.error("--seeds: at least 2; --jobs: at least 1")
    cells: list[Cell] = [(k, m, r) for r in plt.RATIOS for m in models for k in (2, 3, 5)]
    if a.edge_rate != "link":
        try:  # a bad rate is reported here, not from a worker
            plt.termination_scenario(bottlenecks=2, model=models[0], ratio="2:1", edge_rate=a.edge_rate)
        except ConfigError as e:
            ap.error(f"--edge-rate {a.edge_rate!r}: {str(e).splitlines()[0]}")
    jobs = [(c, s, a.edge_rate) for c in cells for s in range(1, a.seeds + 1)]
    with ProcessPoolExecutor(a.jobs) as ex:
        tables = list(zip(jobs, ex.map(_cell_table, jobs), strict=True))
    for k, model, ratio in cells:
        runs = [t for (cell, _, _), t in tables if cell == (k, model, ratio)]
        long = [r[f"IEA1 ({k}H)"]["a_e"] for r in runs]
        rows = " ".join(f"{row.split()[0]} {statistics.mean(r[row]['a_e'] for r in runs):+.2f}" for row in runs[0])
        print(
            f"{model} PLT{k} {ratio}: long A-E {statistics.mean(long):+.2f} (sd {statistics.stdev(long):.2f}); {rows}",
            flush=True,
        )


if __name__ == "__main__":
    main()
