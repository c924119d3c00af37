"""The MACE reproduction's settings: the paper's testbed and sources
([MACE98], Fig. 4 and Table 1) and the run lengths of the quick and full
runs; each name is used by the runs, claims, figures and report alike. The
paper's own numbers are in ``paperdata/mace/`` (their one home)."""

from __future__ import annotations

from typing import Any

from ... import topology

LINK_BPS = 10e6
BG_SOURCE_BPS = (700 + 100 + 54) * 8 / 0.020
LOADS_FULL = [60, 80, 100, 120, 130, 140, 160]
LOADS_QUICK = [60, 100, 130, 160]
#: The load of the scenario-1 histogram kept for comparison (in both load lists).
FIG9_LOAD = 130
#: Fig. 9's own run (§5.2): "20 background traffic sources", every 20 ms, 800 B mean payload:
#: 6.83 Mb/s on the wire, 68% of the bottleneck; with the 40 testing flows (3.09 Mb/s) 99%.
FIG9_BG_SOURCES = 20
#: Host timing jitter of the testbed's senders (FreeBSD 2.2.2, HZ = 100: a 10 ms clock tick), as
#: ``send_jitter`` of every group: each packet leaves up to one tick after its ideal time.
HOST_JITTER = '{ dist = "uniform", max = "10ms" }'
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
#: The sweep's points (full runs), by their key in the results: (v, estimator window restarted on
#: admission); "0.95" is Table 2's EXP1 MBAC run, "0.95 continue" the same with the window continuing.
SWEEP_POINTS: dict[str, tuple[float, bool]] = {**{f"{v:g}": (v, True) for v in V_SWEEP}, "0.95 continue": (0.95, False)}
#: SSAC's admission table (``topology.links[router1->dst].mace.admission``).
SSAC = topology.ssac()


def mbac_admission(
    *, v: float = 0.95, sample: str = "5s", window: int = 20, restart_window: bool = True
) -> dict[str, Any]:
    """MBAC's admission table (``topology.links[router1->dst].mace.admission``, a typed override): target
    utilization ``v`` (the paper gives none; 0.95), measurement sample ``sample`` (S = 5 s) and
    estimator window ``window`` samples (T = 20), the window restarted on each admission
    (qoslab's default, as Jamin et al.; ``restart_window=False``: it continues)."""
    return topology.mbac(v=v, sample=sample, window=window, restart_window=restart_window)


ESTIMATOR_WINDOW_S = 5.0 * 20
#: The bottleneck is the fourth link of every scenario.
MACE_KEY = "topology.links[router1->dst].mace"
#: Reserved rate of a flow on each CL port (bit/s).
PORT_RATE = {5004: 77_200, 5006: 154_000}
ALLOCATION = {"cbr": 3.9e6, "poo1": 3.9e6, "exp1": 3.9e6, "poo2": 2.3e6, "poo3": 2.3e6, "exp2": 2.3e6, "mixed": 2.3e6}
RESERVE = {"cbr": 77_200, "poo1": 77_200, "exp1": 77_200, "poo3": 77_200, "poo2": 154_000, "exp2": 154_000}
#: The departures experiment: EXP1 and POO1 under MBAC (v = 0.95) with the CL
#: candidates' mean lifetimes of the paper (1000 s), ten times longer, and none (every flow
#: outlives the run). The quick run scales the estimator window (T = 4 samples, 20 s) and the
#: lifetimes by the same 1/5, so that T·S/L, which batch admission depends on, is the paper's.
DEPARTURES: dict[bool, dict[str, Any]] = {
    True: {
        "models": ["exp1"],
        "window": 4,
        "lifetimes": {"paper": 200.0, "10x": 2000.0, "none": None},
        "duration": "330s",
        "warmup_s": 100.0,
    },
    False: {
        "models": ["exp1", "poo1"],
        "window": 20,
        "lifetimes": {"paper": 1000.0, "10x": 10000.0, "none": None},
        "duration": "3100s",
        "warmup_s": 100.0,
    },
}
#: "No departures": a fixed lifetime far beyond any run.
NO_DEPARTURE_LIFETIME = "1000000s"
#: Batch-admission claim: |measured - predicted utilization| at most this, in points of μ
#: (fixed before the first run of the claim).
BATCH_TOLERANCE_PTS = 3.0
#: Figs. 7-8 (§5.1): scenario 4's CL models CBR 64 kb/s, POO1, POO3 and EXP1, five flows of each
#: on the CL port and five on a BE port, over each background load of scenario 1.
MIXED_LOSS_MODELS = ["cbr", "poo1", "poo3", "exp1"]
#: Fig. 8's background loads: the congested ones (>= 100 %) of scenario 1, where Fig. 8's cells are judged.
FIG8_LOADS = [ld for ld in LOADS_FULL if ld >= 100]
#: Figs. 12-13 (§5.2, scenario 4 with MBAC not used, ``s4_fig12_13.toml``): the testing groups by
#: peak rate, each ``<service>_<model>`` with four connections alive at a time, and the run
#: length and warm-up of scenarios 3-4 (quick: Table 2's quick run length).
FIG12_13_MODELS = {256: ["poo2", "exp2"], 64: ["cbr", "poo3", "exp1"]}
FIG12_13_RUN: dict[bool, tuple[str, float]] = {True: ("330s", 30.0), False: ("3100s", 100.0)}
IDEAL_S = {5004: 0.040, 5006: 0.010}
GROUP_PORT = {"cl": 5004, "be": 5010, "cbr": 5004, "exp1": 5004, "poo1": 5004, "poo3": 5004, "exp2": 5006, "poo2": 5006}


def bg_sources(load_pct: float) -> int:
    """Background sources for an offered load of ``load_pct`` % of the bottleneck (wire bits)."""
    return max(1, round(load_pct / 100.0 * LINK_BPS / BG_SOURCE_BPS))
