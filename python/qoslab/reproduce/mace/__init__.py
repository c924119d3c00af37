"""The ``mace`` reproduction: MACE (measurement-based admission control for
controlled-load service), [MACE98 §3-5], in the simulator.

Topology (Fig. 4, ``scenarios/mace/*.toml``): hosts ``src0`` (testing traffic)
and ``src1`` (background) -> ``router0`` -> ``router1`` -> 10 Mb/s bottleneck
-> ``dst``; every other link 100 Mb/s; all delays 1 ms. MACE runs at
Router1's bottleneck output: a 50-packet shared two-class buffer, device
queue 1, stale timeout 30 s; 64 kb/s candidates on port 5004 reserve
77.2 kb/s and are recognized after 100 packets, 256 kb/s candidates on port
5006 reserve 154 kb/s and are recognized after 10.

Traffic (Table 1): 320 B payload + 66 B headers (12 RTP + 8 UDP + 20 IP + 26
Ethernet) every 40 ms (64 kb/s) or 10 ms (256 kb/s); ON/OFF models through
the simulator's ``on_off`` model (a packet at the start of each ON period and
every interval while strictly before its end). Background: CBR every 20 ms
of 700 B + exponential(100 B) payload and 54 B headers (341.6 kb/s per source
on the wire on average); ``load`` % of the bottleneck is
``round(load/100 * 10 Mb/s / 341.6 kb/s)`` sources (the achieved load is
reported).

Runs:

- Scenario 1 (Fig. 6): 20 CBR flows on the CL port, 20 on a BE
  port, background at each load, with MACE (SSAC, 3 Mb/s = 30% allocation)
  and without (50-packet drop-tail). Full: 200 s per run, every seed; quick:
  20 s.
- Fig. 9: scenario 1 with MACE at §5.2's 20 background sources (68%
  background, 99% in all), with exact send times and with the host timing
  jitter (``send_jitter``, one 10 ms FreeBSD tick) on every sender; the
  jittered senders at 130% too.
- Figs. 7-8: scenario 4's CL models (CBR, POO1, POO3, EXP1), five each on
  the CL and on a BE port, at scenario 1's loads and lengths.
- Scenario 2 (Figs. 10-11): POO1 record and replay. A recording run (MACE)
  starts 20 CL-port POO1 flows at random times with random lifetimes; their
  starts and lifetimes are written as a replay CSV (:func:`record_arrivals`)
  and replayed with and without MACE.
- Scenarios 3-4 (Table 2, Figs. 14-16): keep N candidates requesting
  (``keep_alive`` arrivals, exponential lifetimes of mean 1000 s) for each
  source model and for the mix, SSAC against MBAC (v = 0.95, 5 s samples,
  window 20, restart on admission), 130% background, every seed. Full:
  3100 s, judged after the 100 s warm-up; quick: 330 s of EXP1 and EXP2
  (three estimator windows after a 30 s warm-up).
- Figs. 12-13 (scenario 4, MBAC not used): four each of CBR, POO3, EXP1
  (64 kb/s) and POO2, EXP2 (256 kb/s) alive on the CL ports and four on a
  BE port, exponential lifetimes of mean 1000 s, SSAC with 3 Mb/s, 130%
  background, every seed; 3100 s after 100 s (quick: 330 s after 30 s).
- Departures (EXP1 and POO1 under MBAC): lifetimes of the paper (Table 2's
  MBAC run of the first seed), ten times longer and none; full runs add EXP1 at v = 1 without departures, over 68%
  background, and packetized at the nominal rate. Quick: EXP1 with T and
  the lifetimes scaled by 1/5.
- A sweep of v (EXP1, MBAC) in the full run (v = 0.95: Table 2's run).

The paper's numbers (``paperdata/mace/``: Table 2, Table 1's and §5.3's set-up, the numbers
§5 states for Figs. 6, 8, 9, 12, 13, 15 and 16) are judged cell by cell (:mod:`.tables` says
what each cell's value is). Claims judge what the text says without a number; checks
(``kind = "check"``) test qoslab against its own rules, never counted as reproduced claims.
Tolerances fixed before any run; never tuned to pass:

======================================  =================================================
claim or check                          holds when
======================================  =================================================
``cl-loss-far-below-be`` (full runs)    at every background load >= 100%: the CL
                                        connections' loss <= 0.1 x the BE connections'
                                        with MACE, and BE with MACE <= 1.5 x BE without
``ssac-admits-floor`` (check)           SSAC's largest concurrently admitted count after
                                        the warm-up = floor(allocation / r), every model
``mbac-beats-ssac``                     MBAC's mean flows alive and utilization of the
                                        allocation > SSAC's, every model
``mbac-load-within-allocation``         95th percentile of MBAC's 5 s CL samples after the
                                        warm-up <= allocation, every model and seed
``mbac-cl-service-comparable``          admitted CL packets' loss under MBAC <= SSAC's + 1
                                        point and (mix) 64 kb/s CL within-25% share >=
                                        SSAC's - 5 points
``mbac-departures-batch-admission``     |measured - predicted| <= 3 points of μ, predicted
(check)                                 u_none / (1 + (T·S/L)·r/m), every model and
                                        finite lifetime
``fig7-mixed-cl-loss-below-be``         mixed models, every load >= 100%: the CL
(full runs)                             connections' loss <= 0.1 x the BE connections'
======================================  =================================================

The package, by subject: :mod:`.params` (testbed, sources, run lengths),
:mod:`.measures` (what one run's result shows), :mod:`.recording` (record
and replay of arrivals), :mod:`.runs` (the scenarios), :mod:`.tables` (the
paper's cells), :mod:`.claims`, :mod:`.plots` and :mod:`.report` (sections
and results.json's data).
"""

from __future__ import annotations

from ...recording import check_groups, record_arrivals, record_group
from ..framework import Context, Outcome
from . import claims, plots, report, runs, tables
from .measures import (
    Hist,
    admitted_path,
    admitted_stats,
    alive_path,
    alive_stats,
    binned_loss,
    class_counters,
    class_loss,
    generation_matches,
    group_loss,
    interarrival_hist,
    mace_events,
    mbac_path,
    percentile,
    sample_rates,
    share_at_most,
    share_within,
)
from .params import (
    ALLOCATION,
    BG_SOURCE_BPS,
    ESTIMATOR_WINDOW_S,
    FIG9_LOAD,
    LINK_BPS,
    LOADS_FULL,
    LOADS_QUICK,
    RESERVE,
    S1_DURATION,
    S2_DURATION,
    S3_DURATION,
    S3_MODELS_FULL,
    S3_MODELS_QUICK,
    WARMUP_S,
    bg_sources,
)
from .runs import batch_prediction

NAME = "mace"
TITLE = "MACE: measurement-based admission control for controlled-load service"
SEED_FILE = "MACE98"
PAPER = "the MACE paper ([MACE98 §3-5]: Fig. 4 testbed, Table 1 sources, Figs. 6, 9-16, Table 2)"


def reproduce(ctx: Context) -> Outcome:
    """Runs every scenario, then judges the claims and draws the figures (the framework's entry point)."""
    s1 = runs.scenario1(ctx)
    f9 = runs.fig9(ctx)
    mixed = runs.mixed_loss(ctx)
    s2 = runs.scenario2(ctx)
    t2 = runs.table2(ctx)
    f1213 = runs.fig12_13(ctx)
    dep = runs.departures(ctx, t2)
    sweep = runs.sweep(ctx, t2)
    found = claims.claims(ctx, s1, t2, dep, mixed)
    r = runs.Runs(s1, s2, t2, sweep, f9, dep, mixed, f1213)
    figs = plots.plots(ctx, r)
    return Outcome(
        claims=found,
        data=report.data(ctx, r),
        sections=report.sections(ctx, r),
        figures=figs,
        cells=tables.cells(ctx, s1, f9, mixed, t2, f1213),
    )


__all__ = [
    "ALLOCATION",
    "BG_SOURCE_BPS",
    "ESTIMATOR_WINDOW_S",
    "FIG9_LOAD",
    "LINK_BPS",
    "LOADS_FULL",
    "LOADS_QUICK",
    "NAME",
    "PAPER",
    "RESERVE",
    "S1_DURATION",
    "S2_DURATION",
    "S3_DURATION",
    "S3_MODELS_FULL",
    "S3_MODELS_QUICK",
    "SEED_FILE",
    "TITLE",
    "WARMUP_S",
    "Hist",
    "admitted_path",
    "admitted_stats",
    "alive_path",
    "alive_stats",
    "batch_prediction",
    "bg_sources",
    "binned_loss",
    "check_groups",
    "class_counters",
    "class_loss",
    "generation_matches",
    "group_loss",
    "interarrival_hist",
    "mace_events",
    "mbac_path",
    "percentile",
    "record_arrivals",
    "record_group",
    "reproduce",
    "sample_rates",
    "share_at_most",
    "share_within",
]
