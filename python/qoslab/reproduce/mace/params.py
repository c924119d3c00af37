"""The MACE reproduction's settings: the paper's testbed and sources
(seed 000, Fig. 4 and Table 1), the run lengths of the quick and full runs
and the paper's Table 2; each name is used by the runs, claims, figures and
report alike."""

from __future__ import annotations

LINK_BPS = 10e6
BG_SOURCE_BPS = (700 + 100 + 54) * 8 / 0.020
LOADS_FULL = [60, 80, 100, 120, 130, 140, 160]
LOADS_QUICK = [60, 100, 130, 160]
#: The load of the Fig. 9 histogram (in both load lists).
FIG9_LOAD = 130
S1_DURATION = {True: "20s", False: "200s"}
S2_DURATION = {True: "20s", False: "200s"}
S3_DURATION = {True: "330s", False: "3100s"}
WARMUP_S = {True: 30.0, False: 100.0}
S3_MODELS_FULL = ["poo1", "poo2", "poo3", "exp1", "exp2", "mixed"]
S3_MODELS_QUICK = ["exp1", "exp2"]
#: Bottleneck rate of scenario 2's generation probe (see :func:`runs.scenario2`).
GENERATION_PROBE_RATE = "10Gbps"
#: Fig. 14's model: POO1 as the paper's text says, EXP1 (the other smooth model) in quick runs.
FIG14_MODELS = ["poo1", "exp1"]
V_SWEEP = [0.85, 0.9, 0.95, 1.0]
MBAC = '{ type = "mbac", v = %g, sample = "5s", window = 20, restart_window = true }'
ESTIMATOR_WINDOW_S = 5.0 * 20
#: The bottleneck is the fourth link of every scenario.
MACE_KEY = "topology.links.3.mace"
#: Reserved rate of a flow on each CL port (bit/s).
PORT_RATE = {5004: 77_200, 5006: 154_000}
ALLOCATION = {"cbr": 3.9e6, "poo1": 3.9e6, "exp1": 3.9e6, "poo2": 2.3e6, "poo3": 2.3e6, "exp2": 2.3e6, "mixed": 2.3e6}
RESERVE = {"cbr": 77_200, "poo1": 77_200, "exp1": 77_200, "poo3": 77_200, "poo2": 154_000, "exp2": 154_000}
#: Paper Table 2: (SSAC %util, flows, MBAC %util, flows).
PAPER_TABLE2 = {
    "poo1": (44.5, 50, 72.5, 83),
    "poo2": (31, 15, 61, 27),
    "poo3": (16, 29, 46, 91),
    "exp1": (49, 50, 89.6, 93),
    "exp2": (29, 14, 93, 47),
    "mixed": (36, 19, 74, 34),
}
IDEAL_S = {5004: 0.040, 5006: 0.010}
GROUP_PORT = {"cl": 5004, "be": 5010, "cbr": 5004, "exp1": 5004, "poo1": 5004, "poo3": 5004, "exp2": 5006, "poo2": 5006}


def bg_sources(load_pct: float) -> int:
    """Background sources for an offered load of ``load_pct`` % of the bottleneck (wire bits)."""
    return max(1, round(load_pct / 100.0 * LINK_BPS / BG_SOURCE_BPS))
