#!/usr/bin/env python3
"""Whole-run simulator benchmark: qoslab vs the bare-loop reference, same run.

Runs `scenarios/examples/red_dumbbell.toml` for 600 s simulated (release
build, one thread, every hop simulated, default metrics on), median of 5,
and prints bottleneck arrivals (drops included) per wall-second of the
event loop, events per second, peak RSS above the interpreter's own, and
the same figure for `shared/bench/bare-loop` measured in between the
qoslab runs, with the ratio. Then the same with 4,000 sources of 10 kb/s.
Also times `import qoslab` in a fresh interpreter, the RED reference as
whole processes against ns-2.35 (when `ns` is installed), the PCN cases,
and issue 11's scale cases (`benches/scale/`: 10,000 mixed flows, peak
memory; 1,000,000 CBR flows, the simulator's state per flow from
`qoslab-simbench`'s end-of-loop RSS).

Usage: python benches/run_bench.py [--reps 5] [--duration 600] [--out bench-out]
Machines are shared and noisy: only ratios taken side by side mean much.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("QOSLAB_SHARED", ROOT.parent / "shared"))
SCENARIO = ROOT / "scenarios" / "examples" / "red_dumbbell.toml"

# One qoslab run in a fresh interpreter: RSS baseline after imports, then run.
CHILD = r"""
import json, resource, sys
import qoslab
import pandas, pyarrow  # the interpreter's own working set includes the result stack
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
res = qoslab.run(sys.argv[1], seed=1, overrides=json.loads(sys.argv[2]))
s = res.summary
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
b = s["bottleneck"]
drops = b["drops"] if isinstance(b["drops"], int) else sum(b["drops"].values())
print(json.dumps({"arrivals": b["arrivals"], "drops": drops, "events": s["events"],
                  "loop_wall_s": s["loop_wall_s"], "rss_above_interpreter_mb": (peak - base) / 1024}))
"""


def build_bare_loop() -> Path:
    target = ROOT / "target" / "bare-loop"
    manifest = SHARED / "bench" / "bare-loop" / "Cargo.toml"
    if not manifest.exists():
        sys.exit(f"bench: {manifest} not found; set QOSLAB_SHARED to the shared/ folder")
    subprocess.run(
        ["cargo", "build", "--release", "-q", "--manifest-path", str(manifest), "--target-dir", str(target)], check=True
    )
    return target / "release" / "bare-loop"


def run_qoslab(overrides: list[str]) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(SCENARIO), json.dumps(overrides)], check=True, capture_output=True, text=True
    )
    r = json.loads(out.stdout.strip().splitlines()[-1])
    r["pkts_per_s"] = r["arrivals"] / r["loop_wall_s"]
    r["events_per_s"] = r["events"] / r["loop_wall_s"]
    return r


def run_bare(exe: Path, n_src: int, secs: float, src_bps: int) -> dict:
    out = subprocess.run(
        [str(exe), str(n_src), str(secs), "1", str(src_bps)], check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout)


# A whole scenario in a fresh interpreter: wall time of the process part
# that runs it, events, peak RSS above the interpreter with its result stack.
SCENARIO_CHILD = r"""
import json, resource, sys, time
import qoslab
import pandas, pyarrow
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
res = qoslab.run(sys.argv[1], seed=1)
wall = time.perf_counter() - t
s = res.summary
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"events": s["events"], "loop_wall_s": s["loop_wall_s"], "run_wall_s": wall,
                  "rss_above_interpreter_mb": (peak - base) / 1024}))
"""

#: Issue 13's performance cases: 100 s simulated each, target under 10 s on one core.
PCN_CASES = ("perf_oc48_svd", "perf_rtt1800_vbr")


#: Issue 11 §3's scale cases (benches/scale/): whole-process peak memory above the
#: interpreter, and for the million flows the simulator's own state per flow.
SCALE_CASES = (("mixed_10k", 10_000, "<= 500 MB"), ("cbr_1m", 1_000_000, "<= 1 KB a flow, plus output"))


def build_simbench() -> Path:
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "qoslab-sim", "--bin", "qoslab-simbench"], check=True)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return target / "release" / "qoslab-simbench"


def scale_case(name: str, flows: int, target: str, simbench: Path) -> dict:
    path = ROOT / "benches" / "scale" / f"{name}.toml"
    whole = scenario_case(path, 1)
    out = subprocess.run([str(simbench), str(path)], check=True, capture_output=True, text=True)
    sb = json.loads(out.stdout.strip().splitlines()[-1])
    return {
        **whole,
        "flows": flows,
        "target": target,
        "loop_rss_mb": sb["loop_rss_kb"] / 1024,
        "loop_bytes_per_flow": sb["loop_rss_kb"] * 1024 / flows,
    }


def pcn_case(name: str, reps: int) -> dict:
    return scenario_case(ROOT / "scenarios" / "pcn" / f"{name}.toml", reps)


def scenario_case(path: Path, reps: int) -> dict:
    name = path.stem
    runs = []
    for i in range(reps):
        out = subprocess.run(
            [sys.executable, "-c", SCENARIO_CHILD, str(path)],
            check=True,
            capture_output=True,
            text=True,
        )
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(f"  {name} rep {i + 1}/{reps}: {runs[-1]['run_wall_s']:.2f} s", flush=True)
    med = lambda k: statistics.median(r[k] for r in runs)  # noqa: E731
    return {
        "case": name,
        "events": runs[0]["events"],
        "loop_wall_s": med("loop_wall_s"),
        "run_wall_s": med("run_wall_s"),
        "events_per_s": runs[0]["events"] / med("loop_wall_s"),
        "rss_mb": max(r["rss_above_interpreter_mb"] for r in runs),
    }


def ns2_case(duration: float, reps: int) -> dict | None:
    """The RED reference dumbbell as whole processes: ns-2.35 (``benches/ns2/red_dumbbell.tcl``,
    if ``ns`` is installed) against ``qoslab run`` writing its results, interleaved."""
    import shutil
    import tempfile

    if shutil.which("ns") is None:
        print("ns-2 not installed (apt-get install ns2): the ns-2 comparison is skipped")
        return None
    tcl = ROOT / "benches" / "ns2" / "red_dumbbell.tcl"
    ns_t, q_t, ns_out = [], [], ""
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(reps):
            t = time.perf_counter()
            ns_out = subprocess.run(
                ["ns", str(tcl), f"{duration:g}", "1"], check=True, capture_output=True, text=True
            ).stdout.strip()
            ns_t.append(time.perf_counter() - t)
            t = time.perf_counter()
            subprocess.run(
                [
                    *(sys.executable, "-m", "qoslab", "run", str(SCENARIO)),
                    *("--set", f"duration={duration:g}s", "--quiet", "--overwrite", "--out", str(Path(tmp) / "r")),
                ],
                check=True,
            )
            q_t.append(time.perf_counter() - t)
            print(f"  ns-2 rep {i + 1}/{reps}: ns-2 {ns_t[-1]:.2f} s, qoslab {q_t[-1]:.2f} s", flush=True)
    return {
        "ns2_wall_s": statistics.median(ns_t),
        "qoslab_wall_s": statistics.median(q_t),
        "speedup": statistics.median(ns_t) / statistics.median(q_t),
        "ns2_counts": ns_out,
    }


def import_time() -> float:
    code = "import time; t=time.perf_counter(); import qoslab; print(time.perf_counter()-t)"
    runs = [
        float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout)
        for _ in range(5)
    ]
    return statistics.median(runs)


def case(name: str, exe: Path, reps: int, secs: float, n_src: int, src_bps: int, extra: list[str]) -> dict:
    overrides = [f"duration={int(secs)}s", *extra]
    q, b = [], []
    for i in range(reps):
        q.append(run_qoslab(overrides))
        b.append(run_bare(exe, n_src, secs, src_bps))
        print(
            f"  {name} rep {i + 1}/{reps}: qoslab {q[-1]['pkts_per_s'] / 1e6:.2f} M/s, "
            f"bare loop {b[-1]['pkts_per_s'] / 1e6:.2f} M/s",
            flush=True,
        )
    med = lambda xs, k: statistics.median(x[k] for x in xs)  # noqa: E731
    ratios = [x["pkts_per_s"] / y["pkts_per_s"] for x, y in zip(q, b, strict=True)]
    return {
        "case": name,
        "sim_seconds": secs,
        "reps": reps,
        "qoslab_pkts_per_s": med(q, "pkts_per_s"),
        "qoslab_events_per_s": med(q, "events_per_s"),
        "qoslab_loop_wall_s": med(q, "loop_wall_s"),
        "qoslab_rss_mb": max(x["rss_above_interpreter_mb"] for x in q),
        "qoslab_arrivals": q[0]["arrivals"],
        "qoslab_drops": q[0]["drops"],
        "bare_pkts_per_s": med(b, "pkts_per_s"),
        "bare_arrivals": b[0]["red_enqueued"],
        "bare_drops": b[0]["red_dropped"],
        "ratio_median": statistics.median(ratios),
        "ratios": ratios,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--duration", type=float, default=600.0, help="simulated seconds (default 600)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench-out")
    a = ap.parse_args()
    exe = build_bare_loop()
    results = {"import_qoslab_s": import_time()}
    print(f"import qoslab: {results['import_qoslab_s']:.3f} s (target < 0.5 s)")
    results["cases"] = [
        case("40x1Mbps", exe, a.reps, a.duration, 40, 1_000_000, []),
        case(
            "4000x10kbps",
            exe,
            a.reps,
            a.duration,
            4000,
            10_000,
            ["topology.sources=4000", "traffic.0.flows=4000", "traffic.0.rate=10kbps", "traffic.0.start_jitter=800ms"],
        ),
    ]
    print()
    print(
        f"{'case':<14}{'qoslab M/s':>11}{'events M/s':>11}{'bare M/s':>10}{'ratio':>7}{'RSS MB':>8}"
        f"{'arrivals':>10}{'drops':>9}{'bare drops':>11}"
    )
    for c in results["cases"]:
        print(
            f"{c['case']:<14}{c['qoslab_pkts_per_s'] / 1e6:>11.2f}{c['qoslab_events_per_s'] / 1e6:>11.2f}"
            f"{c['bare_pkts_per_s'] / 1e6:>10.2f}{c['ratio_median']:>7.2f}{c['qoslab_rss_mb']:>8.1f}"
            f"{c['qoslab_arrivals']:>10}{c['qoslab_drops']:>9}{c['bare_drops']:>11}"
        )
    big, small = results["cases"]
    print()
    met = big["qoslab_pkts_per_s"] >= 1.5e6 and big["ratio_median"] >= 0.5
    print(
        f"target >= 1.5 M/s and >= 0.5x bare loop: {big['qoslab_pkts_per_s'] / 1e6:.2f} M/s, "
        f"{big['ratio_median']:.2f}x -> {'met' if met else 'NOT met'}"
    )
    print(
        f"4,000 sources within 2x of that: {big['qoslab_pkts_per_s'] / small['qoslab_pkts_per_s']:.2f}x slower -> "
        f"{'met' if small['qoslab_pkts_per_s'] * 2 >= big['qoslab_pkts_per_s'] else 'NOT met'}"
    )
    print(f"memory <= 50 MB above the interpreter: {max(c['qoslab_rss_mb'] for c in results['cases']):.1f} MB")
    print()
    results["ns2"] = ns2_case(a.duration, max(1, min(a.reps, 3)))
    if results["ns2"]:
        n = results["ns2"]
        print(
            f"RED dumbbell {a.duration:g} s, whole process: ns-2.35 {n['ns2_wall_s']:.2f} s ({n['ns2_counts']}), "
            f"qoslab {n['qoslab_wall_s']:.2f} s: {n['speedup']:.2f}x (target >= 2x)"
        )
    print()
    results["pcn"] = [pcn_case(n, max(1, min(a.reps, 3))) for n in PCN_CASES]
    print(f"{'PCN case':<20}{'events':>12}{'events M/s':>11}{'loop s':>8}{'run s':>8}{'RSS MB':>8}  target run < 10 s")
    for c in results["pcn"]:
        ok = "met" if c["run_wall_s"] < 10 else "NOT met"
        print(
            f"{c['case']:<20}{c['events']:>12}{c['events_per_s'] / 1e6:>11.2f}{c['loop_wall_s']:>8.2f}"
            f"{c['run_wall_s']:>8.2f}{c['rss_mb']:>8.1f}  {ok}"
        )
    print()
    simbench = build_simbench()
    results["scale"] = [scale_case(n, f, t, simbench) for n, f, t in SCALE_CASES]
    print(f"{'scale case':<12}{'flows':>10}{'run s':>8}{'RSS MB':>9}{'loop RSS MB':>12}{'B/flow':>8}  target")
    for c in results["scale"]:
        print(
            f"{c['case']:<12}{c['flows']:>10}{c['run_wall_s']:>8.2f}{c['rss_mb']:>9.1f}{c['loop_rss_mb']:>12.1f}"
            f"{c['loop_bytes_per_flow']:>8.0f}  {c['target']}"
        )
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "bench.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {a.out / 'bench.json'}")


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"bench wall time {time.perf_counter() - t0:.0f} s")
