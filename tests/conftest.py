"""Shared helpers for the Python tests (run after `maturin develop --release`)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"
RED_DUMBBELL = SCENARIOS / "examples" / "red_dumbbell.toml"
DROPTAIL_DUMBBELL = SCENARIOS / "examples" / "droptail_dumbbell.toml"
BAD = ROOT / "tests" / "scenarios" / "bad"
GOOD = ROOT / "tests" / "scenarios" / "good"


def cli(*args: str, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """Runs ``python -m qoslab ARGS`` and returns the completed process (text output)."""
    env = {**os.environ, "COLUMNS": "200", "PYTHONUNBUFFERED": "1"}
    env.pop("FORCE_COLOR", None)
    return subprocess.run(
        [sys.executable, "-m", "qoslab", *args], capture_output=True, text=True, cwd=cwd, timeout=timeout, env=env
    )


def header(path: Path, key: str) -> str | None:
    """The value of a ``# key: value`` comment line at the top of a test scenario."""
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        s = line.strip()
        if not s.startswith("#"):
            if s:
                break
            continue
        body = s.lstrip("#").strip()
        if body.lower().startswith(key + ":"):
            return body.split(":", 1)[1].strip()
    return None


def files(folder: Path) -> Sequence[Path]:
    return sorted(folder.glob("*.toml")) if folder.is_dir() else []


@pytest.fixture(scope="session")
def small_scenario():
    """A 4-source RED dumbbell, 3 s simulated: fast enough for every API test."""
    from qoslab import Scenario, queues, traffic

    return Scenario.dumbbell(
        name="small",
        sources=4,
        access_rate="100Mbps",
        access_delay="5ms",
        bottleneck_rate="3Mbps",
        bottleneck_delay="20ms",
        queue=queues.red(limit=30, min_th=3, max_th=9, w_q=0.02),
        duration="3s",
        traffic=[
            traffic.cbr(name="cbr", flows=4, src="src*", dst="sink0", rate="1Mbps", size=1000, start_jitter="8ms")
        ],
    )


@pytest.fixture(scope="session")
def small_result(small_scenario):
    import qoslab

    return qoslab.run(small_scenario, seed=1)
