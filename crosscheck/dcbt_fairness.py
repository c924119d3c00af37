"""D-CBT's class fairness, one knob at a time.

    .venv/bin/python crosscheck/dcbt_fairness.py [--seeds N] [--variant V] [--only LABEL ...] [--markdown]

On ``scenarios/dcbt/paper.toml`` under D-CBT (``--variant``: ``dcbt``, the
default, ``dcbt_chips``, ``cbt`` or ``red``) and seeds 1..N (default 5, the
reproduction's), each row changes one thing:

- ``paper``: the scenario as it is (the reproduction's run);
- ``standins``: the 10 MM_APP replaced by constant-rate tagged flows sending,
  period by period, what the MM_APP sent in this script's own runs of the
  scenario under the same variant (``dcbt_standins.standin_toml``: the same
  offered load without the MM_APP's scale changes);
- ``flow_interval=100ms`` / ``flow_interval=3s``: the active-flow counter's
  interval (the paper's §3.1: 300 ms);
- ``--set KEY=VALUE``: any other setting of the bottleneck queue (e.g.
  ``w_q=0.004``: RED's weight, which the class averages share), or any
  scenario key starting ``traffic.`` or ``topology.`` (e.g.
  ``traffic.2.start_jitter=0s``: the two CBR flows start together).

For each, in 10-20 s and 20-30 s: each class's per-flow throughput over the
fair share (the reproduction's ``dcbt.measure``), the tagged and untagged
per-flow throughput (kb/s), Jain's index, and the decomposition of the
untagged class's throughput: its share of the queue over its share of the
active flows (the time averages of the probes ``untagged_avg / red_avg``
over ``N_untagged / N``, what the class thresholds regulate) and its
packets' mean wait in the queue against the first 25 TCP flows' (traced
packets' delay minus the smallest delay of any); under D-CBT, the share of
the probe samples (every ``metrics.series_interval``, 100 ms) at which the
untagged class test would let a CBR packet in (test off, or the untagged
average at or under its threshold) and the queue's length at those samples
and at the others; Table 2's tagged drop rate.
By Little's law the throughput ratio is about the queue-share ratio times
TCP's wait over the untagged wait.

The D-CBT rules themselves (the untagged allowance, the class averages'
idle decay and synchronisation, the class test's gate) were screened with a
build carrying switches that are not part of qoslab:
``git apply crosscheck/dcbt_screening.patch`` then ``make .venv/.qoslab-ext``,
and ``DCBT_KNOB=<switch> .venv/bin/python crosscheck/dcbt_fairness.py
--only paper`` with ``<switch>`` one of ``no_allowance``, ``no_idle``,
``unsync``, ``test_always``, ``test_never`` (then ``git checkout
crates/core/src/qdisc/cbt/dcbt.rs`` and rebuild).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import dcbt_standins  # noqa: E402

#: The bottleneck queue of each variant (``dcbt_standins.VARIANTS`` and CBT).
VARIANTS = {"red": [], "cbt": ["topology.links.0.queue.type=cbt"], **dcbt_standins.VARIANTS}
LABELS = ("paper", "standins", "flow_interval=100ms", "flow_interval=3s")


def fairness(res: Any) -> dict[str, float]:
    """The figures of one run (see the module's docstring)."""
    from qoslab.reproduce import dcbt

    m = dcbt.measure(res)
    s = res.series
    q = s[(s["entity_kind"] == "queue") & (s["entity_id"] == dcbt.BOTTLENECK)]
    tr = s[(s["entity_kind"] == "flow") & (s["metric"] == "delay_s")]
    tr = tr.merge(res.flows[["name", "class"]], left_on="entity_id", right_on="name")
    base = float(tr["value"].min())  # propagation and serialization: every packet is 1000 B
    first = m["periods"][0]["classes"]
    out: dict[str, float] = {
        "tagged drop %": 100 * m["tagged"]["drop_rate"],
        "tagged over tcp % 0-10": 100 * (first["tagged"]["per_flow_bps"] / first["tcp"]["per_flow_bps"] - 1),
    }
    for k, (a, b) in ((1, (10.0, 20.0)), (2, (20.0, 30.0))):
        per = m["periods"][k]
        cls = per["classes"]
        w = f"{a:.0f}-{b:.0f}"
        out[f"untagged {w}"] = cls["untagged"]["ratio_to_fair"]
        out[f"untagged kb/s {w}"] = cls["untagged"]["per_flow_bps"] / 1e3
        out[f"tagged {w}"] = cls["tagged"]["ratio_to_fair"]
        out[f"tagged kb/s {w}"] = cls["tagged"]["per_flow_bps"] / 1e3
        out[f"tcp {w}"] = cls["tcp"]["ratio_to_fair"]
        out[f"jain {w}"] = per["jain"]
        qw = q[(q["t_s"] >= a) & (q["t_s"] < b)]
        probe = {str(n): float(g["value"].mean()) for n, g in qw.groupby("metric")}
        flow_share = cls["untagged"]["flows"] / per["active_flows"]
        if "untagged_avg" in probe:  # not under RED
            out[f"untagged queue share / flow share {w}"] = probe["untagged_avg"] / probe["red_avg"] / flow_share
        x = tr[(tr["t_s"] >= a) & (tr["t_s"] < b)]
        for c, name in ((2, "untagged"), (0, "tcp")):
            out[f"{name} wait ms {w}"] = 1e3 * float((x.loc[x["class"] == c, "value"] - base).mean())
        if "threshold_test_on" in probe:
            out[f"class test on {w}"] = probe["threshold_test_on"]
            # The untagged gate at each probe sample (every metrics.series_interval): open when the
            # test is off or the untagged average is at or under its threshold; the queue then.
            g = qw.pivot_table(index="t_s", columns="metric", values="value")
            gate = (g["threshold_test_on"] == 0) | (g["untagged_avg"] <= g["untagged_th"])
            out[f"untagged gate open share {w}"] = float(gate.mean())
            out[f"queue pkts, gate open {w}"] = float(g.loc[gate, "backlog_pkts"].mean())
            out[f"queue pkts, gate closed {w}"] = float(g.loc[~gate, "backlog_pkts"].mean())
    return out


def run(path: Path, overrides: list[str], seeds: range) -> dict[str, tuple[float, float]]:
    """Mean and sample standard deviation over ``seeds`` of :func:`fairness`."""
    import qoslab

    rows = [fairness(qoslab.run(path, seed=s, overrides=overrides)) for s in seeds]
    out: dict[str, tuple[float, float]] = {}
    for k in rows[0]:
        xs = [r[k] for r in rows]
        mean = sum(xs) / len(xs)
        sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0
        out[k] = (mean, sd)
    return out


def sent_bps(path: Path, overrides: list[str], seeds: range) -> list[float]:
    """The MM_APP flows' per-flow sent rate per period, mean over ``seeds`` (``dcbt_standins.measure``)."""
    import qoslab

    ms = [dcbt_standins.measure(qoslab.run(path, seed=s, overrides=overrides))["sent_bps"] for s in seeds]
    return [sum(m[k] for m in ms) / len(ms) for k in range(3)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5, help="seeds 1..N (default 5)")
    ap.add_argument("--variant", choices=list(VARIANTS), default="dcbt", help="the bottleneck queue (default dcbt)")
    ap.add_argument("--only", nargs="+", choices=LABELS, default=list(LABELS), help="the rows to run")
    ap.add_argument(
        "--set",
        nargs="+",
        default=[],
        metavar="KEY=VALUE",
        help="extra rows, each one bottleneck-queue setting changed (e.g. w_q=0.004), or any scenario "
        "key from traffic. or topology. (e.g. traffic.2.start_jitter=0s)",
    )
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    a = ap.parse_args(argv)
    if a.seeds < 1:
        ap.error("--seeds must be at least 1")
    for kv in a.set:
        if "=" not in kv.strip("="):
            ap.error(f"--set {kv}: expected KEY=VALUE, a setting of the bottleneck queue (e.g. w_q=0.004)")
    seeds = range(1, a.seeds + 1)
    variant = a.variant
    base = VARIANTS[variant]
    scenario = dcbt_standins.SCENARIO
    rows: dict[str, dict[str, tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="qoslab-dcbt-fairness-") as tmp:
        for label in a.only:
            if label == "standins":
                rates = dcbt_standins.schedule(sent_bps(scenario, base, seeds))
                path = Path(tmp) / "standins.toml"
                path.write_text(dcbt_standins.standin_toml(scenario.read_text(), rates))
                label = f"standins ({' / '.join(str(r // 1000) for _, r in rates)} kb/s)"
                rows[label] = run(path, base, seeds)
            elif label.startswith("flow_interval="):
                rows[label] = run(scenario, [*base, f"topology.links.0.queue.{label}"], seeds)
            else:
                rows[label] = run(scenario, base, seeds)
        for kv in a.set:
            key = kv if kv.startswith(("traffic.", "topology.")) else f"topology.links.0.queue.{kv}"
            rows[kv] = run(scenario, [*base, key], seeds)
    knob = os.environ.get("DCBT_KNOB", "")
    title = f"{variant}, seeds 1-{a.seeds}, mean ± sample s.d. over seeds" + (f", DCBT_KNOB={knob}" if knob else "")
    keys = list(next(iter(rows.values())))
    if a.markdown:
        print(f"{title}\n\n| run | " + " | ".join(keys) + " |")
        print("|---" * (len(keys) + 1) + "|")
        for label, r in rows.items():
            print(f"| {label} | " + " | ".join(f"{r[k][0]:.3g} ± {r[k][1]:.2g}" for k in keys) + " |")
    else:
        print(title)
        for label, r in rows.items():
            print(label)
            for k in keys:
                print(f"  {k:36s} {r[k][0]:8.3f} (sd {r[k][1]:.3f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
