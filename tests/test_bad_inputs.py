"""A corpus of bad input: scenario files, command-line flags, Python API calls
and result folders of the wrong kind. Every one must give a clear error (exit 2 on the
command line; a qoslab exception from Python), with no traceback and no panic, and must
leave every result folder byte for byte as it was: nothing lost, nothing half-written,
no folder holding two kinds of result.

The command line runs in this process (``qoslab.cli.main``), so the whole corpus takes
seconds; the few runs it needs (a run, a sweep, a reproduction folder to aim at) are
made once per module."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import qoslab
from conftest import ROOT
from qoslab import _atomic, queues, traffic
from qoslab import cli as qcli

BASE = (ROOT / "tests" / "scenarios" / "small_dumbbell.toml").read_text(encoding="utf-8")

# -- the area every case runs in ----------------------------------------------


def fingerprint(root: Path) -> dict[str, str]:
    """Every path below ``root`` and the SHA-256 of each file (folders as ``dir``)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for d in dirnames:
            out[os.path.relpath(os.path.join(dirpath, d), root)] = "dir"
        for f in filenames:
            p = os.path.join(dirpath, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, root)] = hashlib.sha256(fh.read()).hexdigest()
    return out


@pytest.fixture(scope="module")
def area(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``inputs/`` (the scenario files), ``out/`` (a run, a sweep and a reproduction folder,
    and a folder of the user's) and ``work/`` (the working folder: must stay empty)."""
    root = tmp_path_factory.mktemp("corpus")
    (root / "inputs").mkdir()
    (root / "work").mkdir()
    out = root / "out"
    out.mkdir()
    base = root / "inputs" / "base.toml"
    base.write_text(BASE, encoding="utf-8")
    qoslab.run(str(base), seed=1, out=out / "run")
    qoslab.sweep(str(base), grid={"topology.bottleneck.queue.max_p": "0.1"}, seeds=1, jobs=1, out=out / "sweep")
    with _atomic.Destination(out / "repro", identity=_atomic.reproduction_identity("examples", True, [1])) as d:
        doc = {"name": "examples", "quick": True, "seeds": [1], "qoslab_version": qoslab.__version__}
        (d.tmp / "results.json").write_text(json.dumps(doc), encoding="utf-8")
        d.commit()
    (out / "mine").mkdir()
    (out / "mine" / "notes.txt").write_text("the user's own file", encoding="utf-8")
    (out / "afile.txt").write_text("a file", encoding="utf-8")
    return root


@pytest.fixture()
def inside(area: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(area / "work")
    return area


KINDS = {"run": "run", "sweep": "sweep", "repro": "reproduction"}


def untouched(area: Path, before: dict[str, str]) -> None:
    assert fingerprint(area / "out") == before, "a result folder changed"
    assert list((area / "work").iterdir()) == [], "something was written in the working folder"
    for name, kind in KINDS.items():
        assert _atomic.kind_of(area / "out" / name) == kind


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    try:
        code = qcli.main(argv)
    except SystemExit as e:  # argparse: usage errors
        code = int(e.code) if isinstance(e.code, int) else 2
    return code, capsys.readouterr().err


def refused_cleanly(argv: list[str], area: Path, capsys: pytest.CaptureFixture[str]) -> str:
    before = fingerprint(area / "out")
    code, err = run_cli(argv, capsys)
    assert code == 2, (argv, code, err)
    assert err.strip(), "no message"
    assert "Traceback" not in err and "panicked" not in err, err
    untouched(area, before)
    return err


# -- scenario files -----------------------------------------------------------

Spec = str | tuple[str, str] | list[tuple[str, str]]

# (case, the whole text, or (find, replace) pairs applied to BASE, a word the message must hold)
SCENARIOS: list[tuple[str, Spec, str]] = [
    ("name_empty", ('name = "base"', 'name = ""'), "name"),
    ("name_space", ('name = "base"', 'name = "a b"'), "name"),
    ("name_up", ('name = "base"', 'name = "../x"'), "name"),
    ("name_dot_first", ('name = "base"', 'name = ".hidden"'), "name"),
    ("name_241", ('name = "base"', f'name = "{"n" * 241}"'), "at most 240"),
    ("name_number", ('name = "base"', "name = 5"), "name"),
    ("duration_zero", ('duration = "1s"', 'duration = "0s"'), "duration"),
    ("duration_negative", ('duration = "1s"', 'duration = "-1s"'), "duration"),
    ("duration_parsecs", ('duration = "1s"', 'duration = "10 parsecs"'), "duration"),
    ("duration_number", ('duration = "1s"', "duration = 10"), "duration"),
    ("duration_missing", ('duration = "1s"\n', ""), "duration"),
    ("duration_huge", ('duration = "1s"', 'duration = "1000000h"'), "duration"),
    ("seed_negative", ('name = "base"', 'name = "base"\nseed = -1'), "seed"),
    ("seed_beyond_toml", ('name = "base"', 'name = "base"\nseed = 18446744073709551615'), "--seed"),
    ("seed_text", ('name = "base"', 'name = "base"\nseed = "x"'), "seed"),
    ("seed_float", ('name = "base"', 'name = "base"\nseed = 1.5'), "seed"),
    ("description_5000", ('name = "base"', f'name = "base"\ndescription = "{"d" * 5000}"'), "4 KiB"),
    ("unknown_top_key", ('name = "base"', 'name = "base"\nfoo = 1'), "foo"),
    ("topology_missing", ("[topology]", "[topologie]"), "topolog"),
    ("preset_ring", ('preset = "dumbbell"', 'preset = "ring"'), "preset"),
    ("sources_zero", ("sources = 2", "sources = 0"), "sources"),
    ("sources_4e9", ("sources = 2", "sources = 4000000000"), "sources"),
    ("sources_negative", ("sources = 2", "sources = -1"), "sources"),
    ("sources_fraction", ("sources = 2", "sources = 1.5"), "sources"),
    ("routers_three", ("sources = 2", "sources = 2\nrouters = 3"), "routers"),
    ("one_router_two_sinks", ("sources = 2", "sources = 2\nrouters = 1\nsinks = 2"), "sinks"),
    ("access_rate_zero", ('rate = "100Mbps"', 'rate = "0Mbps"'), "access.rate"),
    ("access_rate_words", ('rate = "100Mbps"', 'rate = "fast"'), "access.rate"),
    ("access_rate_mbit_per_s", ('rate = "100Mbps"', 'rate = "10Mbit/s"'), "access.rate"),
    ("access_rate_number", ('rate = "100Mbps"', "rate = 100"), "access.rate"),
    ("access_delay_negative", ('delay = "1ms"', 'delay = "-5ms"'), "access.delay"),
    ("queue_type_unknown", ('type = "red"', 'type = "wfq2"'), "type"),
    ("queue_limit_words", ('limit = "60pkts"', 'limit = "sixty"'), "limit"),
    ("queue_limit_two_counts", ('limit = "60pkts"', 'limit = ["60pkts", "70pkts"]'), "two packet counts"),
    ("queue_limit_two_sizes", ('limit = "60pkts"', 'limit = ["60kB", "1MB"]'), "two sizes"),
    ("queue_limit_empty_list", ('limit = "60pkts"', "limit = []"), "limit"),
    ("queue_limit_three", ('limit = "60pkts"', 'limit = ["1pkts", "2kB", "3pkts"]'), "limit"),
    ("red_min_above_max", ("min_th = 5, max_th = 15", "min_th = 15, max_th = 5"), "max_th"),
    ("red_max_p_above_one", ("max_th = 15", "max_th = 15, max_p = 1.5"), "max_p"),
    ("red_w_q_zero", ("max_th = 15", "max_th = 15, w_q = 0.0"), "w_q"),
    ("red_max_p_nan", ("max_th = 15", "max_th = 15, max_p = nan"), "max_p"),
    ("red_min_th_negative", ("min_th = 5", "min_th = -1"), "min_th"),
    ("red_unknown_key", ("max_th = 15", "max_th = 15, max_pp = 0.2"), "max_pp"),
    ("fifo_with_threshold", ('type = "red"', 'type = "fifo"'), "min_th"),
    (
        "prio_no_bands",
        (
            'queue = { type = "red", limit = "60pkts", min_th = 5, max_th = 15 }',
            'queue = { type = "prio", bands = [] }',
        ),
        "bands",
    ),
    ("group_name_missing", ('name = "cbr"\n', ""), "name"),
    ("group_name_dot", ('name = "cbr"', 'name = "c.b"'), "name"),
    ("group_name_241", ('name = "cbr"', f'name = "{"g" * 241}"'), "at most 240"),
    ("group_model_unknown", ('model = "cbr"', 'model = "bogus"'), "model"),
    ("group_flows_zero", ("flows = 2", "flows = 0"), "flows"),
    ("group_flows_2e6", ("flows = 2", "flows = 2000000"), "flows"),
    ("group_flows_negative", ("flows = 2", "flows = -3"), "flows"),
    ("group_src_unknown", ('src = "src*"', 'src = "nowhere"'), "src"),
    ("group_src_router", ('src = "src*"', 'src = "r0"'), "src"),
    ("group_dst_bad_pattern", ('dst = "sink0"', 'dst = "sink*x"'), "dst"),
    ("group_to_itself", ('src = "src*"', 'src = "sink0"'), "itself"),
    ("cbr_rate_and_interval", ('rate = "1Mbps"', 'rate = "1Mbps"\ninterval = "1ms"'), "interval"),
    ("cbr_neither", ('rate = "1Mbps"\n', ""), "rate"),
    ("cbr_rate_zero", ('rate = "1Mbps"', 'rate = "0bps"'), "rate"),
    ("size_zero", ('size = "1000B"', 'size = "0B"'), "size"),
    ("size_beyond_ip", ('size = "1000B"', 'size = "70000B"'), "size"),
    ("header_beyond_ip", ('size = "1000B"', 'size = "1000B"\nheader = "65535B"'), "header"),
    ("dscp_64", ('size = "1000B"', 'size = "1000B"\ndscp = 64'), "dscp"),
    ("start_after_end", ('size = "1000B"', 'size = "1000B"\nstart = "5s"'), "start"),
    ("stop_before_start", ('size = "1000B"', 'size = "1000B"\nstart = "0.5s"\nstop = "0.2s"'), "stop"),
    ("randomize_one", ('size = "1000B"', 'size = "1000B"\nrandomize = 1.0'), "randomize"),
    ("admitted_without_pcn", ('size = "1000B"', 'size = "1000B"\nadmitted = true'), "admitted"),
    (
        "on_off_pareto_shape",
        [
            ('model = "cbr"', 'model = "on_off"\non = "1s"\noff = "1s"\ndist = "pareto"\nshape = 0.5'),
            ('rate = "1Mbps"', 'peak = "1Mbps"'),
        ],
        "shape",
    ),
    (
        "on_off_missing_on",
        [('model = "cbr"', 'model = "on_off"\noff = "1s"'), ('rate = "1Mbps"', 'peak = "1Mbps"')],
        "on",
    ),
    ("poisson_rate_zero", [('model = "cbr"', 'model = "poisson"'), ('rate = "1Mbps"', 'rate = "0bps"')], "rate"),
    ("arrivals_unknown_process", ('size = "1000B"', 'size = "1000B"\narrivals = { process = "zipf" }'), "process"),
    (
        "arrivals_rate_negative",
        ('size = "1000B"', 'size = "1000B"\narrivals = { process = "poisson", rate = -1.0, lifetime = "1s" }'),
        "rate",
    ),
    (
        "arrivals_alive_zero",
        ('size = "1000B"', 'size = "1000B"\narrivals = { process = "keep_alive", alive = 0, lifetime = "1s" }'),
        "alive",
    ),
    (
        "replay_missing_file",
        ('size = "1000B"', 'size = "1000B"\narrivals = { process = "replay", file = "none.csv" }'),
        "none.csv",
    ),
    (
        "replay_dev_zero",
        ('size = "1000B"', 'size = "1000B"\narrivals = { process = "replay", file = "/dev/zero" }'),
        "/dev/zero",
    ),
    (
        "replay_is_a_folder",
        ('size = "1000B"', 'size = "1000B"\narrivals = { process = "replay", file = "/tmp" }'),
        "/tmp",
    ),
    (
        "replay_bad_row",
        ('size = "1000B"', 'size = "1000B"\narrivals = { process = "replay", file = "bad_row.csv" }'),
        "bad_row.csv",
    ),
    (
        "replay_long_line",
        ('size = "1000B"', 'size = "1000B"\narrivals = { process = "replay", file = "long_line.csv" }'),
        "longer than 4096 bytes",
    ),
    (
        "vtr_trace_dev_zero",
        [('model = "cbr"', 'model = "vtr"\ntrace = "/dev/zero"'), ('rate = "1Mbps"\n', "")],
        "/dev/zero",
    ),
    ("metrics_bin_zero", ('name = "base"', 'name = "base"\nmetrics = { bin = "0s" }'), "metrics.bin"),
    (
        "metrics_series_1ns",
        ('name = "base"', 'name = "base"\nmetrics = { series_interval = "1ns" }'),
        "series_interval",
    ),
    (
        "metrics_trace_flow_unknown",
        ('name = "base"', 'name = "base"\nmetrics = { trace_flows = ["nope.0"] }'),
        "trace_flows",
    ),
    (
        "metrics_trace_group_unknown",
        ('name = "base"', 'name = "base"\nmetrics = { trace_groups = ["nope"] }'),
        "trace_groups",
    ),
    ("metrics_series_unknown", ('name = "base"', 'name = "base"\nmetrics = { series = ["x->y"] }'), "metrics.series"),
    ("trace_pcap_unknown", ('name = "base"', 'name = "base"\ntrace = { pcap = ["a->b"] }'), "trace.pcap"),
    (
        "mm_app_descending",
        [('model = "cbr"', 'model = "mm_app"\nmm_app = { scales = ["2Mbps", "1Mbps"] }'), ('rate = "1Mbps"\n', "")],
        "increasing",
    ),
    (
        "mm_app_no_scales",
        [('model = "cbr"', 'model = "mm_app"\nmm_app = { scales = [] }'), ('rate = "1Mbps"\n', "")],
        "scales",
    ),
    ("dst_port_collision", ("flows = 2", "flows = 66000\ndst_port = 5004"), "dst_port"),
    ("dst_port_70000", ("flows = 2", "flows = 2\ndst_port = 70000"), "dst_port"),
    ("toml_open_quote", ('name = "base"', 'name = "base'), "TOML"),
    ("toml_duplicate_key", ('name = "base"', 'name = "base"\nname = "again"'), "TOML"),
    ("toml_table_twice", ("[topology]", "[topology]\n[topology]"), "TOML"),
    ("sweep_file", '[sweep]\nscenario = "base.toml"\nseeds = 2\n', "qoslab sweep"),
    ("empty_file", "", "name"),
    ("only_a_comment", "# nothing here\n", "name"),
    ("ftp_over_udp", ('model = "cbr"', 'model = "ftp"\ntransport = "udp"'), "transport"),
    ("pcn_edge_unknown", ('name = "base"', 'name = "base"\n[pcn]\nedges = ["nope"]'), "pcn"),
    ("traffic_not_a_list", ("[[traffic]]", "[traffic]"), "traffic"),
]


def _case_text(spec: Spec) -> str:
    if isinstance(spec, str):
        return spec
    text = BASE
    for find, replace in [spec] if isinstance(spec, tuple) else spec:
        assert find in text, find
        text = text.replace(find, replace, 1)
    return text


@pytest.fixture(scope="module")
def inputs(area: Path) -> Path:
    d = area / "inputs"
    (d / "bad_row.csv").write_text("start_s,lifetime_s\n1,2\n3,x\n", encoding="utf-8")
    (d / "long_line.csv").write_text("start_s,lifetime_s\n" + "1" * 5000 + ",2\n", encoding="utf-8")
    for case, spec, _ in SCENARIOS:
        (d / f"{case}.toml").write_text(_case_text(spec), encoding="utf-8")
    (d / "binary.toml").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    (d / "utf16.toml").write_bytes(BASE.encode("utf-16"))
    with open(d / "huge.toml", "wb") as f:  # 17 MiB: one byte a line past the limit
        f.write(b"#" * (17 << 20))
    os.mkfifo(d / "fifo.toml")
    (d / "loop.toml").symlink_to(d / "loop.toml")
    (d / "folder.toml").mkdir()
    return d


def test_the_corpus_is_large_enough():
    assert len(SCENARIOS) + len(FILE_KINDS) + len(FLAGS) + len(API) + len(FOLDERS) >= 185


@pytest.mark.parametrize(("case", "spec", "word"), SCENARIOS, ids=[c[0] for c in SCENARIOS])
def test_a_bad_scenario_is_refused_by_validate_and_run_naming_it(case, spec, word, inside, inputs, capsys):
    for cmd in ("validate", "run"):
        err = refused_cleanly([cmd, str(inputs / f"{case}.toml")], inside, capsys)
        assert word in err, (cmd, err)


# -- files that are not scenario files ---------------------------------------

FILE_KINDS = [
    ("binary", "binary.toml", "not UTF-8"),
    ("utf16", "utf16.toml", "not UTF-8"),
    ("huge", "huge.toml", "16 MiB"),
    ("fifo", "fifo.toml", "a pipe"),
    ("symlink_loop", "loop.toml", "symbolic links"),
    ("folder", "folder.toml", "a folder"),
    ("missing", "missing.toml", "No such file"),
    ("dev_zero", "/dev/zero", "a device"),
    ("dev_null", "/dev/null", "a device"),
    ("proc_dir", "/proc", "a folder"),
]


@pytest.mark.parametrize(("case", "name", "word"), FILE_KINDS, ids=[c[0] for c in FILE_KINDS])
def test_a_path_that_is_not_a_scenario_file_is_refused_without_reading_it(case, name, word, inside, inputs, capsys):
    path = name if name.startswith("/") else str(inputs / name)
    for cmd in (["validate", path], ["run", path], ["sweep", path, "--jobs", "1"]):
        err = refused_cleanly(cmd, inside, capsys)
        assert word in err, (cmd, err)
    with pytest.raises(qoslab.ScenarioFileError, match=word):
        qoslab.load(path)


# -- command-line flags -------------------------------------------------------


def _flags(area: Path) -> dict[str, list[str]]:
    base = str(area / "inputs" / "base.toml")
    run = str(area / "out" / "run")
    return {
        "run_seed_negative": ["run", base, "--seed", "-1"],
        "run_seed_words": ["run", base, "--seed", "abc"],
        "run_seed_2_64": ["run", base, "--seed", str(2**64)],
        "run_max_memory_zero": ["run", base, "--max-memory", "0"],
        "run_max_memory_unit": ["run", base, "--max-memory", "5XB"],
        "run_max_events_zero": ["run", base, "--max-events", "0"],
        "run_progress_unknown": ["run", base, "--progress", "fancy"],
        "run_out_empty": ["run", base, "--out", ""],
        "run_out_blank": ["run", base, "--out", "  "],
        "run_record_unknown_group": ["run", base, "--record-arrivals", "nope"],
        "run_unknown_flag": ["run", base, "--bogus"],
        "run_no_file": ["run"],
        "run_set_no_equals": ["run", base, "--set", "duration"],
        "run_set_unknown_path": ["run", base, "--set", "topology.nope=1"],
        "run_set_no_entry": ["run", base, "--set", "traffic.9.flows=1"],
        "run_set_into_value": ["run", base, "--set", "duration.x=1"],
        "run_set_seed_beyond_toml": ["run", base, "--set", "seed=18446744073709551615"],
        "sweep_grid_no_equals": ["sweep", base, "--grid", "k", "--jobs", "1"],
        "sweep_grid_no_key": ["sweep", base, "--grid", "=1", "--jobs", "1"],
        "sweep_grid_no_values": ["sweep", base, "--grid", "duration=", "--jobs", "1"],
        "sweep_grid_range_words": ["sweep", base, "--grid", "traffic.0.flows=1..a", "--jobs", "1"],
        "sweep_grid_range_empty": ["sweep", base, "--grid", "traffic.0.flows=5..1", "--jobs", "1"],
        "sweep_grid_empty_item": ["sweep", base, "--grid", "traffic.0.flows=1,,2", "--jobs", "1"],
        "sweep_grid_twice": ["sweep", base, "--grid", "duration=1s", "--grid", "duration=2s", "--jobs", "1"],
        "sweep_grid_unknown_path": ["sweep", base, "--grid", "topology.nope=1,2", "--jobs", "1"],
        "sweep_grid_bad_value": ["sweep", base, "--grid", "duration=1s,0s", "--jobs", "1"],
        "sweep_seeds_zero": ["sweep", base, "--seeds", "0"],
        "sweep_jobs_zero": ["sweep", base, "--jobs", "0"],
        "sweep_jobs_words": ["sweep", base, "--jobs", "x"],
        "sweep_jobs_and_scheduler": ["sweep", base, "--jobs", "1", "--scheduler", "tcp://h:1"],
        "sweep_scheduler_malformed": ["sweep", base, "--scheduler", "not an address"],
        "sweep_out_empty": ["sweep", base, "--out", "", "--jobs", "1"],
        "show_missing": ["show", "nowhere"],
        "show_unknown_flag": ["show", run, "--bogus"],
        "plot_neither": ["plot", run, "--metric", "red_avg"],
        "plot_both": ["plot", run, "--queue", "r0->sink0", "--flows", "cbr", "--metric", "x"],
        "plot_no_metric": ["plot", run, "--queue", "r0->sink0"],
        "plot_cdf_unknown": ["plot", run, "--cdf", "bogus"],
        "plot_jpeg": ["plot", run, "--flows", "cbr", "--metric", "throughput", "--out", "x.jpg"],
        "plot_queue_unknown": ["plot", run, "--queue", "nope", "--metric", "red_avg", "--out", "q.png"],
        "plot_group_unknown": ["plot", run, "--flows", "nope", "--metric", "throughput", "--out", "g.png"],
        "plot_metric_unknown": ["plot", run, "--flows", "cbr", "--metric", "nope", "--out", "m.png"],
        "plot_out_empty": ["plot", run, "--flows", "cbr", "--metric", "throughput", "--out", ""],
        "report_missing": ["report", "nowhere"],
        "report_out_user_file": ["report", run, "--out", str(area / "out" / "afile.txt")],
        "compare_missing": ["compare", run, "nowhere"],
        "reproduce_unknown": ["reproduce", "nope", "--quick"],
        "reproduce_seeds_zero": ["reproduce", "examples", "--seeds", "0"],
        "reproduce_jobs_zero": ["reproduce", "examples", "--jobs", "0"],
        "reproduce_out_empty": ["reproduce", "examples", "--out", ""],
        "cac_missing_flags": ["cac", "--capacity", "10Mbps"],
        "cac_capacity_words": ["cac", "--capacity", "x", "--buffer", "10", "--iplr", "1e-3", "--rate", "1Mbps"],
        "validate_max_events_words": ["validate", base, "--max-events", "x"],
        "completion_unknown_shell": ["completion", "tcsh"],
        "unknown_command": ["frobnicate"],
        "no_command": [],
        "testbed_no_action": ["testbed"],
    }


FLAGS = list(_flags(Path("/x")))


@pytest.mark.parametrize("case", FLAGS)
def test_a_bad_flag_is_refused_with_exit_2(case, inside, inputs, capsys):
    refused_cleanly(_flags(inside)[case], inside, capsys)


# -- the Python API -----------------------------------------------------------

QOSLAB_ERRORS = (
    qoslab.ConfigError,
    qoslab.ScenarioFileError,
    qoslab.ReproductionError,
    FileNotFoundError,
    NotADirectoryError,
)


def _store_run(out: Path) -> Path:
    """The one run in the sweep's store."""
    return next(p for p in (out / "sweep" / "runs").iterdir() if not p.name.startswith("."))


def _group() -> dict[str, Any]:
    return traffic.cbr(name="cbr", flows=2, src="src*", dst="sink0", rate="1Mbps", size=1000)


def _dumbbell(**kw: Any) -> Any:
    args: dict[str, Any] = {
        "name": "d",
        "sources": 2,
        "access_rate": "100Mbps",
        "access_delay": "1ms",
        "bottleneck_rate": "10Mbps",
        "bottleneck_delay": "5ms",
        "queue": queues.fifo(limit=50),
        "duration": "1s",
        "traffic": [_group()],
    }
    return qoslab.Scenario.dumbbell(**{**args, **kw})


def _api(area: Path) -> dict[str, Callable[[], Any]]:
    base = str(area / "inputs" / "base.toml")
    out = area / "out"

    def res() -> qoslab.Result:
        return qoslab.Result.load(out / "run")

    return {
        "load_number": lambda: qoslab.load(123),  # type: ignore[arg-type]
        "load_missing": lambda: qoslab.load("missing.toml"),
        "load_folder": lambda: qoslab.load(area / "inputs"),
        "load_dev_zero": lambda: qoslab.load("/dev/zero"),
        "load_overrides_string": lambda: qoslab.load(base, overrides="duration=2s"),  # type: ignore[arg-type]
        "load_overrides_number": lambda: qoslab.load(base, overrides=[5]),  # type: ignore[list-item]
        "load_max_memory_zero": lambda: qoslab.load(base, max_memory=0),
        "load_max_events_negative": lambda: qoslab.load(base, max_events=-1),
        "run_number": lambda: qoslab.run(5),  # type: ignore[arg-type]
        "run_seed_negative": lambda: qoslab.run(base, seed=-1),
        "run_seed_text": lambda: qoslab.run(base, seed="1"),  # type: ignore[arg-type]
        "run_seed_bool": lambda: qoslab.run(base, seed=True),
        "run_progress_number": lambda: qoslab.run(base, progress=5),  # type: ignore[arg-type]
        "run_progress_text": lambda: qoslab.run(base, progress="bar"),  # type: ignore[arg-type]
        "run_out_sweep": lambda: qoslab.run(base, out=out / "sweep", overwrite=True),
        "sweep_grid_text": lambda: qoslab.sweep(base, grid="duration=1s", jobs=1),  # type: ignore[arg-type]
        "sweep_grid_empty_values": lambda: qoslab.sweep(base, grid={"duration": []}, jobs=1),
        "sweep_grid_empty_range": lambda: qoslab.sweep(base, grid={"traffic.0.flows": "3..1"}, jobs=1),
        "sweep_seeds_zero": lambda: qoslab.sweep(base, seeds=0, jobs=1),
        "sweep_seeds_text": lambda: qoslab.sweep(base, seeds="3", jobs=1),  # type: ignore[arg-type]
        "sweep_seeds_words": lambda: qoslab.sweep(base, seeds=["a"], jobs=1),  # type: ignore[list-item]
        "sweep_jobs_zero": lambda: qoslab.sweep(base, jobs=0),
        "sweep_jobs_and_scheduler": lambda: qoslab.sweep(base, jobs=1, scheduler="tcp://h:1"),
        "sweep_out_run": lambda: qoslab.sweep(base, jobs=1, out=out / "run", overwrite=True),
        "dumbbell_one_group": lambda: _dumbbell(traffic=_group()),
        "dumbbell_group_name": lambda: _dumbbell(traffic="cbr"),
        "dumbbell_number_group": lambda: _dumbbell(traffic=[5]),
        "dumbbell_sources_zero": lambda: _dumbbell(sources=0),
        "build_empty_name": lambda: qoslab.Scenario.build(name="", duration="1s", topology={"preset": "dumbbell"}),
        "from_toml_syntax": lambda: qoslab.Scenario.from_toml("x = "),
        "result_load_file": lambda: qoslab.Result.load(out / "afile.txt"),
        "result_load_missing": lambda: qoslab.Result.load(out / "none"),
        "result_load_sweep": lambda: qoslab.Result.load(out / "sweep"),
        "result_load_repro": lambda: qoslab.Result.load(out / "repro"),
        "result_load_user_folder": lambda: qoslab.Result.load(out / "mine"),
        "save_onto_sweep": lambda: res().save(out / "sweep", overwrite=True),
        "save_onto_repro": lambda: res().save(out / "repro", overwrite=True),
        "save_onto_user_folder": lambda: res().save(out / "mine", overwrite=True),
        "save_onto_file": lambda: res().save(out / "afile.txt", overwrite=True),
        "save_inside_sweep": lambda: res().save(_store_run(out) / "x"),
        "save_inside_repro": lambda: res().save(out / "repro" / "x"),
        "save_inside_run": lambda: res().save(out / "run" / "x"),
        "plot_queue_unknown": lambda: res().plot(queue="nope", metric="red_avg", out=area / "work" / "x.png"),
        "plot_format_unknown": lambda: res().plot(flows="cbr", metric="throughput", out=area / "work" / "x.jpg"),
        "metric_unknown": lambda: res().plot(flows="cbr", metric="nope"),
    }


API = list(_api(Path("/x")))


@pytest.mark.parametrize("case", API)
def test_a_bad_api_call_raises_a_qoslab_error_and_writes_nothing(case, inside, inputs):
    before = fingerprint(inside / "out")
    call = _api(inside)[case]
    with pytest.raises(QOSLAB_ERRORS) as e:
        call()
    assert str(e.value).strip()
    untouched(inside, before)


# -- result folders of another kind -------------------------------------------


def _folders(area: Path) -> dict[str, list[str]]:
    base = str(area / "inputs" / "base.toml")
    out = area / "out"
    store_run = _store_run(out) if (out / "sweep").is_dir() else out / "sweep" / "runs" / "KEY"
    return {
        "run_onto_sweep": ["run", base, "--out", str(out / "sweep")],
        "run_onto_sweep_overwrite": ["run", base, "--out", str(out / "sweep"), "--overwrite"],
        "run_onto_repro": ["run", base, "--out", str(out / "repro")],
        "run_onto_repro_overwrite": ["run", base, "--out", str(out / "repro"), "--overwrite"],
        "run_inside_sweep_store": ["run", base, "--out", str(store_run), "--overwrite"],
        "run_inside_repro": ["run", base, "--out", str(out / "repro" / "variant")],
        "run_inside_run": ["run", base, "--out", str(out / "run" / "again")],
        "run_onto_user_folder": ["run", base, "--out", str(out / "mine"), "--overwrite"],
        "run_onto_file": ["run", base, "--out", str(out / "afile.txt"), "--overwrite"],
        "run_below_file": ["run", base, "--out", str(out / "afile.txt" / "x")],
        "sweep_onto_run": ["sweep", base, "--out", str(out / "run"), "--jobs", "1"],
        "sweep_onto_run_overwrite": ["sweep", base, "--out", str(out / "run"), "--jobs", "1", "--overwrite"],
        "sweep_onto_repro": ["sweep", base, "--out", str(out / "repro"), "--jobs", "1", "--overwrite"],
        "sweep_inside_run": ["sweep", base, "--out", str(out / "run" / "sweep"), "--jobs", "1"],
        "sweep_onto_user_folder": ["sweep", base, "--out", str(out / "mine"), "--jobs", "1"],
        "sweep_onto_file": ["sweep", base, "--out", str(out / "afile.txt"), "--jobs", "1"],
        "reproduce_inside_run": ["reproduce", "examples", "--quick", "--jobs", "1", "--out", str(out / "run")],
        "reproduce_inside_sweep": ["reproduce", "examples", "--quick", "--jobs", "1", "--out", str(out / "sweep")],
        "show_a_file": ["show", str(out / "afile.txt")],
        "show_a_sweep": ["show", str(out / "sweep")],
        "show_a_repro": ["show", str(out / "repro")],
        "show_a_user_folder": ["show", str(out / "mine")],
        "plot_a_file": ["plot", str(out / "afile.txt"), "--flows", "cbr", "--metric", "throughput"],
        "plot_a_sweep": ["plot", str(out / "sweep"), "--flows", "cbr", "--metric", "throughput"],
        "compare_a_file": ["compare", str(out / "run"), str(out / "afile.txt")],
        "compare_a_sweep": ["compare", str(out / "sweep"), str(out / "run")],
        "report_onto_a_folder": ["report", str(out / "run"), "--out", str(out / "sweep")],
        "report_a_user_folder": ["report", str(out / "mine"), "--out", str(area / "work" / "r.html")],
        "plot_onto_a_folder": [
            "plot",
            str(out / "run"),
            "--flows",
            "cbr",
            "--metric",
            "throughput",
            "--out",
            str(out / "sweep"),
        ],
        "testbed_onto_sweep": ["testbed", "run", base, "--out", str(out / "sweep"), "--overwrite"],
    }


FOLDERS = list(_folders(Path("/x")))


@pytest.mark.parametrize("case", FOLDERS)
def test_a_result_folder_is_never_replaced_or_mixed_by_another_kind(case, inside, inputs, capsys):
    argv = _folders(inside)[case]
    err = refused_cleanly(argv, inside, capsys)
    if "onto_sweep" in case or "onto_repro" in case or "onto_run" in case or "inside" in case:
        assert "qoslab never" in err, err
