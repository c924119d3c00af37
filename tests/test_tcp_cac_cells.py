"""[Tarasiuk05]'s numbers as data (``paperdata/tcp_cac/``): the transcription has the paper's
shape and each reduction turns fixed measures into the cells the paper prints."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from qoslab.reproduce.cells import Measured
from qoslab.reproduce.framework import Context
from qoslab.reproduce.paper import load_paper, paper_dir
from qoslab.reproduce.tcp_cac import paper_cells, paper_scheme3, table2_cases
from qoslab.reproduce.tcp_cac.runs import per_seed

PAPER = load_paper(paper_dir("tcp_cac"))


def _cells(table: str) -> dict[tuple[str, str], tuple[str, str]]:
    return {(c.row, c.column): (c.value, c.pm) for c in PAPER.cells if c.table == table}


def test_table_1_is_three_sub_tables_of_shaping_rates_by_rtt_loss_and_throughput():
    t1 = _cells("Table 1")
    cols = ["Average RTT [ms]", "Packet loss ratio per TCP connection", "Throughput per TCP connection [Mbps]"]
    rates = ["R = 1", "R = 1.1", "R = 1.2", "R = 1.5", "R = 2"]
    want = set()
    for rtt in (0, 30, 60):
        # Min RTT 0 unshaped prints no number ("almost all TCP connections were stopped").
        rows = rates + ([] if rtt == 0 else ["No shaping"])
        want |= {(f"Min RTT = {rtt} msec / {r}", c) for r in rows for c in cols}
    assert set(t1) == want and len(t1) == 51
    assert t1[("Min RTT = 0 msec / R = 1.1", cols[1])] == ("1.5e-2", "2.0e-3")
    assert t1[("Min RTT = 60 msec / R = 1.1", cols[1])] == ("0.85e-2", "1.5e-3")
    assert t1[("Min RTT = 30 msec / No shaping", cols[2])] == ("0.933", "0.123")
    assert t1[("Min RTT = 0 msec / R = 1", cols[1])] == ("0", "")


def test_tables_2_3_4_have_the_papers_rows_and_columns():
    for table, n_cols in (("Table 2", 5), ("Table 3", 5)):
        t = _cells(table)
        rows = {r for r, _ in t}
        assert rows == {"B = 10, R_req = 1", "B = 20, R_req = 5", "B = 50, R_req = 10"}
        assert len(t) == 3 * n_cols, table
    assert _cells("Table 3")[("B = 20, R_req = 5", "Simulation results / Received rate per connection [Mbps]")] == (
        "4.998",
        "0.003",
    )
    t4 = _cells("Table 4")
    # Scheme #2's "no blocking" state at blocking is no number.
    assert len(t4) == 8 and ("Scheme#2", "Mean system state when call blocking") not in t4
    assert t4[("Scheme#3", "Mean file transfer time [sec]")] == ("3.1", "")
    assert table2_cases(PAPER) == [
        (10, 1e-3, 1.0, "0.74", 74),
        (20, 1e-3, 5.0, "0.85", 17),
        (50, 1e-3, 10.0, "0.935", 9),
    ]
    assert paper_scheme3(PAPER) == {"mean_transfer_time_s": 3.1, "blocking": 0.006, "mean_running_at_blocking": 31.0}


def test_per_seed_statistics_are_means_over_the_connections():
    run = {
        "thr_bps": [1e6, 0.5e6],
        "loss": [0.0, 0.1],
        "srtt_s": [0.5, math.nan],  # a connection with no RTT sample is left out of the mean
        "sent_pkts": 1000.0,
        "dropped_pkts": 20.0,
    }
    (s,) = per_seed([run])
    assert s == {
        "rtt_ms": pytest.approx(500.0),
        "loss": pytest.approx(0.05),
        "thr_mbps": pytest.approx(0.75),
        "agg_loss": 0.02,
    }


def _ctx(tmp_path: Path, *, quick: bool) -> Context:
    return Context(name="tcp-cac", quick=quick, seeds=[1, 2], folder=tmp_path, log=lambda _: None, paper=PAPER)


def _inputs():
    seeds = [
        {"rtt_ms": 520.0, "loss": 0.0, "thr_mbps": 1.0, "agg_loss": 0.0},
        {"rtt_ms": 530.0, "loss": 0.0, "thr_mbps": 0.998, "agg_loss": 0.0},
    ]
    t1 = {
        "1Mbps/rtt0ms": {"rate_mbps": 1.0, "min_rtt_ms": 0, "per_seed": seeds},
        "none/rtt0ms": {"rate_mbps": None, "min_rtt_ms": 0, "per_seed": seeds},
        "none/rtt30ms": {"rate_mbps": None, "min_rtt_ms": 30, "per_seed": seeds},
    }
    nm = {
        "B10_R1Mbps_n74": {"per_seed": seeds},
        "B10_R1Mbps_n100": {"per_seed": seeds},  # the sweep beyond N_max feeds no cell
    }
    t4 = {
        s: [
            {"mean_transfer_time_s": t, "mean_running_at_blocking": n, "blocking": b}
            for t, n, b in ((10.0, 74.0, 0.01), (9.9, 74.0, 0.008))
        ]
        for s in ("1", "3")
    }
    t4["3"] = [{"mean_transfer_time_s": 3.0, "mean_running_at_blocking": 30.0, "blocking": 0.005}] * 2
    t4["2"] = [{"mean_transfer_time_s": 0.25, "mean_running_at_blocking": math.nan, "blocking": 0.0}] * 2
    return t1, nm, t4


def test_reductions_turn_fixed_measures_into_the_papers_cells(tmp_path):
    out = paper_cells(_ctx(tmp_path, quick=False), *_inputs())
    assert all(isinstance(m, Measured) for m in out)
    got = {m.key: m.values for m in out if isinstance(m, Measured)}
    assert got[("Table 1", "Min RTT = 0 msec / R = 1", "Average RTT [ms]")] == [520.0, 530.0]
    assert got[("Table 1", "Min RTT = 30 msec / No shaping", "Throughput per TCP connection [Mbps]")] == [1.0, 0.998]
    assert not [k for k in got if k[1] == "Min RTT = 0 msec / No shaping"]  # the paper prints no number
    assert got[("Table 3", "B = 10, R_req = 1", "Simulation results / Packet loss ratio IPLR")] == [0.0, 0.0]
    assert got[("Table 4", "Scheme#1", "Call blocking probability")] == pytest.approx([1.0, 0.8])
    assert got[("Table 4", "Scheme#2", "Call blocking probability")] == [0.0, 0.0]
    assert ("Table 4", "Scheme#2", "Mean system state when call blocking") not in got
    assert got[("§4", "Scheme#1 against Scheme#3", "transfer time, times shorter")] == pytest.approx([10 / 3, 3.3])
    assert got[("§4", "Scheme#1 against Scheme#3", "call blocking, times lower")] == pytest.approx([2.0, 1.6])
    # Table 2 is the paper's formulas: never a measured cell.
    assert not [k for k in got if k[0] == "Table 2"]


def test_a_quick_run_measures_only_the_quick_tables(tmp_path):
    t1, nm, _ = _inputs()
    got = {m.table for m in paper_cells(_ctx(tmp_path, quick=True), t1, nm, None)}
    assert got == {t.id for t in PAPER.tables if t.quick} == {"Table 3"}
