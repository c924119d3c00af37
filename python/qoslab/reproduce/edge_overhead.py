"""[Guerin99 §V.A]: the QoS extensions' share of the fast and the slow path, on the no-I/O core
path timed by the ``edge_overhead`` example (``make bins``), one repetition a cell value. The
split and the method: docs/reproductions/edge.md and docs/decisions.md, "§V.A's QoS share".
"""

from __future__ import annotations

import json
import math
import statistics
import subprocess
from typing import Any

from ..errors import ReproductionError
from ..testbed.runner import TestbedError, binary
from .cells import Measured, NotMeasured
from .fidelity import md_table

#: The paper's table and cells (paperdata/edge/cells.csv).
TABLE, COLUMN = "§V.A", "QoS share"
ROWS = {"fast": "fast path (cache hit)", "slow": "slow path"}
#: The example, and the bounds on its output, repetitions and time.
BINARY, MAX_OUTPUT, MAX_REPETITIONS, TIMEOUT_S = "edge_overhead", 1 << 20, 1000, 600.0
#: Why the router path is not part of this reproduction.
ROUTER_REASON = (
    "not measured by reproduce edge: the router's QoS time comes from its own timestamps in "
    "`make bench-router` (root, network namespaces, 3 s of traffic a forwarder), which has no "
    "slow-path (cache-miss) workload and times the classifier inside its QoS span, so it is not "
    "the same split; its fast-path figures are in docs/performance.md"
)


def run_core(repetitions: int) -> list[dict[str, Any]]:
    """Runs ``edge_overhead --shares repetitions``; its rows (``repetition, path, base, classified, qos``, ns)."""
    if isinstance(repetitions, bool) or not isinstance(repetitions, int) or not 1 <= repetitions <= MAX_REPETITIONS:
        raise ReproductionError(
            f"edge overhead: repetitions {repetitions!r}; allowed: a whole number in 1..{MAX_REPETITIONS}"
        )
    exe = binary(BINARY)
    try:
        proc = subprocess.run(
            [str(exe), "--shares", str(repetitions)], capture_output=True, timeout=TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise TestbedError(f"{exe} --shares {repetitions}: {e}") from None
    if proc.returncode != 0:
        raise TestbedError(f"{exe} --shares {repetitions} exited {proc.returncode}: {proc.stderr[:2000]!r}")
    if len(proc.stdout) > MAX_OUTPUT:
        raise TestbedError(f"{exe}: {len(proc.stdout)} bytes of output; allowed at most {MAX_OUTPUT}")
    return parse_rows(proc.stdout.decode("utf-8", "replace"), repetitions)


def parse_rows(text: str, repetitions: int) -> list[dict[str, Any]]:
    """The example's JSON lines, checked: every path once per repetition, positive times."""
    rows: list[dict[str, Any]] = []
    for n, line in enumerate(text.splitlines(), 1):
        try:
            row = json.loads(line)
            ok = (
                isinstance(row, dict)
                and row.get("path") in ROWS
                and all(
                    isinstance(row.get(k), (int, float)) and math.isfinite(row[k]) and row[k] > 0
                    for k in ("base", "classified", "qos")
                )
            )
        except json.JSONDecodeError:
            ok = False
        if not ok:
            raise TestbedError(f"{BINARY} output line {n}: {line[:200]!r}; expected a JSON row of a path's ns a packet")
        rows.append(row)
    got = sorted((r["repetition"], r["path"]) for r in rows)
    want = sorted((k, p) for k in range(1, repetitions + 1) for p in ROWS)
    if got != want:
        raise TestbedError(f"{BINARY}: rows for {got}; expected each path once per repetition 1..{repetitions}")
    return rows


def shares(rows: list[dict[str, Any]], path: str, *, classifier_is_qos: bool = False) -> list[float]:
    """``path``'s QoS share (%) per repetition, (qos - classified) / qos, or (qos - base) / qos."""
    ref = "base" if classifier_is_qos else "classified"
    return [
        100.0 * (r["qos"] - r[ref]) / r["qos"] for r in sorted(rows, key=lambda r: r["repetition"]) if r["path"] == path
    ]


def cells(repetitions: int) -> tuple[list[Measured | NotMeasured], dict[str, Any], str]:
    """The two §V.A share cells (NotMeasured with the reason without the example), the rows, the section."""
    try:
        rows = run_core(repetitions)
    except TestbedError as e:
        reason = f"the no-I/O core path was not measured: {e}"
        out: list[Measured | NotMeasured] = [NotMeasured(TABLE, ROWS[p], COLUMN, reason) for p in ROWS]
        data = {"core": None, "error": str(e), "router": ROUTER_REASON}
        return out, data, f"Not measured: {e}\n\nRouter path: {ROUTER_REASON}."
    # The report's table: per path the median ns a packet and the mean share on both splits.
    lines = []
    for p in ROWS:
        med = {k: statistics.median([r[k] for r in rows if r["path"] == p]) for k in ("base", "classified", "qos")}
        s, alt = shares(rows, p), shares(rows, p, classifier_is_qos=True)
        lines.append(
            f"| {ROWS[p]} | {med['base']:.1f} | {med['classified']:.1f} | {med['qos']:.1f} | "
            f"{sum(s) / len(s):.1f} | {sum(alt) / len(alt):.1f} |"
        )
    table = md_table(
        "| path | base ns | + classifier ns | QoS ns | QoS share % (paper's split) | share %, classifier as QoS |",
        lines,
        f"The no-I/O core path (`{BINARY} --shares {max(r['repetition'] for r in rows)}`; the method: "
        "docs/reproductions/edge.md): ns a packet are medians over the repetitions; the cells are the paper's split, "
        'the last column counts the classifier as QoS (docs/decisions.md, "§V.A\'s QoS share").',
        rule="|---|---:|---:|---:|---:|---:|",
    )
    got: list[Measured | NotMeasured] = [Measured(TABLE, ROWS[p], COLUMN, shares(rows, p)) for p in ROWS]
    return got, {"core": rows, "router": ROUTER_REASON}, f"{table}\n\nRouter path: {ROUTER_REASON}."
