"""The MACE reproduction's settings: the testbed and sources of [MACE98] (Fig. 4, Table 1) and
the quick and full runs' lengths. The paper's own numbers are in ``paperdata/mace/``."""

from __future__ import annotations

from functools import partial
from typing import Any

from ... import topology

LINK_BPS = 10e6
BG_SOURCE_BPS = (700 + 100 + 54) * 8 / 0.020
LOADS_FULL = [60, 80, 100, 120, 130, 140, 160]
LOADS_QUICK = [60, 100, 130, 160]
#: The load of the scenario-1 histogram kept for comparison (in both load lists).
FIG9_LOAD = 130
#: Fig. 9's own run (§5.2): "20 background traffic sources" (68% of the bottleneck, 99% in all).
FIG9_BG_SOURCES = 20
#: Host timing jitter of the testbed's senders (FreeBSD 2.2.2, HZ = 100: one 10 ms clock tick).
HOST_JITTER = '{ dist = "uniform", max = "10ms" }'
#: Scenarios 1 and 2, Figs. 7-9: run length.
S1_DURATION = {True: "20s", False: "200s"}
#: Scenarios 3-4 (Table 2) and Figs. 12-13: run length and warm-up.
S3_DURATION = {True: "330s", False: "3100s"}
WARMUP_S = {True: 30.0, False: 100.0}
S3_MODELS_FULL = ["poo1", "poo2", "poo3", "exp1", "exp2", "mixed"]
S3_MODELS_QUICK = ["exp1", "exp2"]
#: Bottleneck rate of scenario 2's generation probe (see :func:`runs.scenario2`).
GENERATION_PROBE_RATE = "10Gbps"
#: Fig. 14's model: POO1 as the paper's text says, EXP1 (the other smooth model) in quick runs.
FIG14_MODELS = ["poo1", "exp1"]
V_SWEEP = [0.85, 0.9, 0.95, 1.0]
#: The sweep's points (full runs) by key: (v, window restarted on admission); "0.95" is Table 2's run.
SWEEP_POINTS: dict[str, tuple[float, bool]] = {**{f"{v:g}": (v, True) for v in V_SWEEP}, "0.95 continue": (0.95, False)}
SSAC = topology.ssac()
#: MBAC's admission table (a typed override of ``MACE_KEY.admission``): v (the paper gives none),
#: S = 5 s, T = 20 samples, the window restarted on admission as Jamin et al. do.
mbac_admission = partial(topology.mbac, v=0.95, sample="5s", window=20, restart_window=True)
#: Table 2's admission schemes.
ADMISSIONS: dict[str, dict[str, Any]] = {"ssac": SSAC, "mbac": mbac_admission()}
ESTIMATOR_WINDOW_S = 5.0 * 20
MACE_KEY = "topology.links[router1->dst].mace"
ALLOCATION = {"cbr": 3.9e6, "poo1": 3.9e6, "exp1": 3.9e6, "poo2": 2.3e6, "poo3": 2.3e6, "exp2": 2.3e6, "mixed": 2.3e6}
RESERVE = {"cbr": 77_200, "poo1": 77_200, "exp1": 77_200, "poo3": 77_200, "poo2": 154_000, "exp2": 154_000}
#: The departures experiment (MBAC, v = 0.95): the paper's mean lifetimes, ten times longer and
#: none. Quick runs scale T and the lifetimes by 1/5, keeping the paper's T·S/L.
DEPARTURES: dict[bool, dict[str, Any]] = {
    True: {"models": ["exp1"], "window": 4, "lifetimes": {"paper": 200.0, "10x": 2000.0, "none": None}},
    False: {"models": ["exp1", "poo1"], "window": 20, "lifetimes": {"paper": 1000.0, "10x": 10000.0, "none": None}},
}
DEPARTURES_WARMUP_S = 100.0
#: "No departures": a fixed lifetime far beyond any run.
NO_DEPARTURE_LIFETIME = "1000000s"
#: Batch-admission check: |measured - predicted utilization| at most this, in points of μ.
BATCH_TOLERANCE_PTS = 3.0
#: Figs. 7-8 (§5.1): five flows of each on the CL port and on a BE port.
MIXED_LOSS_MODELS = ["cbr", "poo1", "poo3", "exp1"]
#: Figs. 12-13 (§5.2): the testing groups by peak rate (kb/s), each ``<service>_<model>``.
FIG12_13_MODELS = {256: ["poo2", "exp2"], 64: ["cbr", "poo3", "exp1"]}
GROUP_PORT = {"cl": 5004, "be": 5010, "cbr": 5004, "exp1": 5004, "poo1": 5004, "poo3": 5004, "exp2": 5006, "poo2": 5006}


def bg_sources(load_pct: float) -> int:
    """Background sources for an offered load of ``load_pct`` % of the bottleneck (wire bits)."""
    return max(1, round(load_pct / 100.0 * LINK_BPS / BG_SOURCE_BPS))
