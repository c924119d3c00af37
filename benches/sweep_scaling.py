"""Sweep scaling: the same sweep on 1 and on N local processes, fresh stores each time.

    .venv/bin/python benches/sweep_scaling.py [--jobs 2] [--reps 2] [--duration 40s]

Runs ``scenarios/examples/red_dumbbell.toml`` over max_p = 0.02, 0.05, 0.1,
0.2 × 4 seeds (16 runs), alternating 1 process and N processes ``--reps``
times, and prints the wall times (whole sweep: pool start-up, runs,
storing, combining), the median speed-up and the load average before and
after, and writes ``bench-out/sweep_scaling.json``. The machine's other
load is part of the figure: read the load average beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

import qoslab  # noqa: E402
from qoslab import sweeps  # noqa: E402
from qoslab.executor import LocalExecutor  # noqa: E402


def _cpu() -> float:
    """User + system CPU seconds of this process and its reaped children (the pool's workers)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def one(jobs: int, duration: str, tmp: Path) -> tuple[float, float]:
    out = tmp / f"sw{jobs}-{time.monotonic_ns()}"
    p = sweeps.plan(
        ROOT / "scenarios/examples/red_dumbbell.toml",
        grid={"topology.bottleneck.queue.max_p": "0.02,0.05,0.1,0.2"},
        seeds=4,
        overrides=[f"duration={duration}"],
    )
    t0, c0 = time.perf_counter(), _cpu()
    with LocalExecutor(jobs) as ex:
        o = sweeps.run_plan(p, out=out, executor=ex)
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    assert o.executed == 16 and o.reused == 0
    shutil.rmtree(out)
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--duration", default="40s")
    a = ap.parse_args()
    load0 = os.getloadavg()
    walls: dict[int, list[float]] = {1: [], a.jobs: []}
    cpus: dict[int, list[float]] = {1: [], a.jobs: []}
    with tempfile.TemporaryDirectory() as d:
        for _ in range(a.reps):
            for jobs in (1, a.jobs):
                w, c = one(jobs, a.duration, Path(d))
                walls[jobs].append(w)
                cpus[jobs].append(c)
                print(f"jobs={jobs}: {w:.2f} s wall, {c:.2f} s CPU (load {os.getloadavg()[0]:.2f})", flush=True)
    load1 = os.getloadavg()
    t1, tn = statistics.median(walls[1]), statistics.median(walls[a.jobs])
    c1, cn = statistics.median(cpus[1]), statistics.median(cpus[a.jobs])
    doc = {
        "qoslab_version": qoslab.__version__,
        "runs": 16,
        "duration": a.duration,
        "jobs": a.jobs,
        "cores": len(os.sched_getaffinity(0)),
        "wall_s": {str(k): v for k, v in walls.items()},
        "cpu_s": {str(k): v for k, v in cpus.items()},
        "cpu_ratio": c1 / cn,
        "speedup": t1 / tn,
        "target": 0.85 * a.jobs,
        "loadavg_before": load0,
        "loadavg_after": load1,
    }
    Path("bench-out").mkdir(exist_ok=True)
    Path("bench-out/sweep_scaling.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    print(
        f"speed-up on {a.jobs} processes: {t1 / tn:.2f} (target >= {0.85 * a.jobs:.2f}); median walls "
        f"{t1:.2f} s vs {tn:.2f} s; CPU {c1:.2f} s vs {cn:.2f} s (the pool's work is {c1 / cn:.2f} of "
        f"one process's, so an idle machine bounds the speed-up at {a.jobs * c1 / cn:.2f}); load average "
        f"before {load0[0]:.2f}, after {load1[0]:.2f}"
    )


if __name__ == "__main__":
    main()
