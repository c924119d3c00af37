"""What a new user ran into, one test (or more) per numbered finding; the bad
inputs of every kind are in test_bad_inputs.py, the scenario rules in
crates/scenario/tests/input_rules.rs, the installed wheel in test_packaging.py."""

from __future__ import annotations

import argparse
import io
import os
import re
import subprocess
import sys
import time
import tomllib
import warnings
from pathlib import Path

import pytest

import qoslab
from conftest import ROOT, SCENARIOS, cli
from qoslab import _atomic, queues, topology, traffic
from qoslab import cli as qcli

RED = SCENARIOS / "examples" / "red_dumbbell.toml"


def main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = qcli.main(argv)
    except SystemExit as e:
        code = int(e.code) if isinstance(e.code, int) else 0
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A run, a sweep and a reproduction folder of the 2-s RED dumbbell."""
    root = tmp_path_factory.mktemp("kinds")
    run = qoslab.run(str(RED), overrides=["duration=2s"], out=root / "run")
    qoslab.sweep(str(RED), grid={"topology.bottleneck.queue.max_p": "0.1"}, overrides=["duration=2s"], jobs=1,
                 out=root / "sweep")  # fmt: skip
    with _atomic.Destination(root / "repro", identity=_atomic.reproduction_identity("examples", True, [1])) as d:
        (d.tmp / "results.json").write_text('{"name": "examples", "quick": true, "seeds": [1]}', encoding="utf-8")
        d.commit()
    return {"run": root / "run", "sweep": root / "sweep", "repro": root / "repro", "result": run}  # type: ignore[dict-item]


def tree(p: Path) -> list[tuple[str, int]]:
    return sorted((str(f.relative_to(p)), f.stat().st_size) for f in p.rglob("*"))


# -- 1, 2: a result is replaced only by a result of its kind -----------------------------


@pytest.mark.parametrize("kind", ["sweep", "repro"])
def test_1_run_overwrite_never_replaces_a_sweep_or_a_reproduction(kind, folders, capsys):
    before = tree(folders[kind])
    code, _, err = main(["run", str(RED), "--set", "duration=2s", "--out", str(folders[kind]), "--overwrite"], capsys)
    assert code == 2, err
    assert "never replaces one kind of result by another" in err and "rm -r" in err, err
    assert "add --overwrite" not in err, "the refusal must not point at the flag that cannot help"
    assert tree(folders[kind]) == before
    with pytest.raises(qoslab.ConfigError, match="never replaces one kind"):
        folders["result"].save(folders[kind], overwrite=True)  # type: ignore[attr-defined]
    assert tree(folders[kind]) == before


def test_1_run_overwrite_still_replaces_a_run(folders, tmp_path, capsys):
    out = tmp_path / "r"
    assert main(["run", str(RED), "--set", "duration=1s", "--out", str(out), "-q"], capsys)[0] == 0
    code, _, err = main(["run", str(RED), "--set", "duration=1s", "--seed", "2", "--out", str(out), "-q"], capsys)
    assert code == 2 and "--overwrite" in err
    code, _, err = main(
        ["run", str(RED), "--set", "duration=1s", "--seed", "2", "--out", str(out), "-q", "--overwrite"], capsys
    )
    assert code == 0, err
    assert qoslab.Result.load(out).seed == 2


def test_2_sweep_out_a_run_folder_is_refused_and_leaves_no_mixed_folder(folders, capsys):
    before = tree(folders["run"])
    for extra in ([], ["--overwrite"]):
        code, _, err = main(["sweep", str(RED), "--jobs", "1", "--out", str(folders["run"]), *extra], capsys)
        assert code == 2 and "is a run result" in err, err
    assert tree(folders["run"]) == before
    assert _atomic.kind_of(folders["run"]) == "run"


# -- 3: bounded input ---------------------------------------------------------------


def test_3_dev_zero_is_refused_at_once_without_reading(tmp_path):
    t = time.monotonic()
    p = cli("run", "/dev/zero", cwd=tmp_path, timeout=60)
    assert p.returncode == 2 and "is a device, not a regular file" in p.stderr, p.stderr
    assert time.monotonic() - t < 30
    assert list(tmp_path.iterdir()) == []


def test_3_a_50_mb_description_never_reaches_summary_json(tmp_path, capsys):
    f = tmp_path / "big.toml"
    f.write_text(RED.read_text().replace('name = "red_dumbbell"', f'name = "x"\ndescription = "{"d" * (50 << 20)}"'))
    code, _, err = main(["run", str(f), "--out", str(tmp_path / "o")], capsys)
    assert code == 2 and "allowed: a file of at most 16 MiB" in err, err[:300]
    assert not (tmp_path / "o").exists()


# -- 4: the documented Python sweep, as a script ----------------------------------------


def _python_blocks(doc: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", doc.read_text(encoding="utf-8"), flags=re.S)


@pytest.mark.parametrize("doc", ["docs/python.md", "docs/sweeps.md"])
def test_4_the_docs_python_sweep_runs_as_a_script_without_a_main_guard(doc, tmp_path):
    block = next(b for b in _python_blocks(ROOT / doc) if "qoslab.sweep(" in b and "client=" not in b)
    assert "__main__" not in block
    script = tmp_path / "sweep.py"
    script.write_text(block, encoding="utf-8")
    (tmp_path / "scenarios").symlink_to(SCENARIOS)
    env = {k: v for k, v in os.environ.items() if k != "FORCE_COLOR"}
    p = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=900, env=env
    )
    assert p.returncode == 0, p.stderr[-3000:]
    assert "Traceback" not in p.stderr and "BrokenProcessPool" not in p.stderr, p.stderr[-3000:]
    out = tmp_path / "results" / "red_sweep"
    assert (out / "sweep.json").is_file() and _atomic.kind_of(out) == "sweep"


def test_4_a_sweep_that_fails_to_start_leaves_no_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(qoslab.ConfigError, match="scheduler"):
        qoslab.sweep(str(RED), overrides=["duration=1s"], scheduler="not an address", out="results/s")
    assert list(tmp_path.iterdir()) == []


# -- 5: errors that escaped ---------------------------------------------------------


def test_5_show_into_a_closed_pipe_exits_0(folders):
    p = subprocess.Popen(
        [sys.executable, "-m", "qoslab", "show", str(folders["run"]), "--all"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert p.stdout is not None and p.stderr is not None
    p.stdout.readline()
    p.stdout.close()  # what `| head -1` does
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 0, err
    assert "Traceback" not in err and "Exception ignored" not in err, err


def test_5_api_arguments_of_the_wrong_kind_name_the_argument():
    with pytest.raises(qoslab.ConfigError, match=r"^grid: "):
        qoslab.sweep(str(RED), grid="k=v")  # type: ignore[arg-type]
    with pytest.raises(qoslab.ConfigError, match=r"^progress: "):
        qoslab.run(str(RED), progress=5)  # type: ignore[arg-type]
    with pytest.raises(qoslab.ConfigError, match=r"^traffic: got one group .* a list of groups"):
        qoslab.Scenario.dumbbell(
            name="d", sources=2, access_rate="10Mbps", access_delay="1ms", bottleneck_rate="1Mbps",
            bottleneck_delay="1ms", queue=queues.fifo(limit=10), duration="1s",
            traffic=traffic.cbr(name="c", src="src*", dst="sink0", rate="1Mbps", size=100),  # type: ignore[arg-type]
        )  # fmt: skip


# -- 7: warnings, printed by validate and run ----------------------------------------


def test_7_validate_and_run_print_warnings_and_go_on(tmp_path, capsys):
    f = tmp_path / "w.toml"
    f.write_text(RED.read_text().replace("max_th = 15", "max_th = 80"), encoding="utf-8")
    code, out, err = main(["validate", str(f)], capsys)
    assert code == 0 and "valid scenario" in out
    assert re.search(r"^warning: .*w\.toml:\d+: topology\.bottleneck\.queue\.max_th: 80 is not below", err, re.M), err
    code, _, err = main(["run", str(f), "--set", "duration=1s", "--out", str(tmp_path / "o"), "-q"], capsys)
    assert code == 0 and "warning: " in err
    with pytest.warns(qoslab.ScenarioWarning, match="max_th"):
        sc = qoslab.load(f)
    assert len(sc.warnings) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert qoslab.load(RED).warnings == []


# -- 8: the command line --------------------------------------------------------------


def test_8_version_flag_help_texts_and_the_reproductions_in_help(capsys):
    code, out, _ = main(["--version"], capsys)
    assert code == 0 and out == f"qoslab {qoslab.__version__}\n"
    p = qcli.parser()
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    for name, sp in sub.choices.items():
        assert sp.description, f"qoslab {name} --help has no description"
        assert "%%" not in sp.format_help(), name
    helps = {a.dest: a.help for a in sub._choices_actions}
    assert helps["schema"] and helps["version"]
    code, out, _ = main(["reproduce", "--help"], capsys)
    assert code == 0
    for name in qoslab.reproduce.names():
        assert re.search(rf"^\s+{re.escape(name)}\s+\S", out, re.M), out


def test_8_completion_prints_shell_code_and_completes_commands(tmp_path):
    p = cli("completion", "bash")
    assert p.returncode == 0 and "complete " in p.stdout and "qoslab" in p.stdout
    # The argcomplete protocol, as the shell code drives it.
    out = tmp_path / "completions"
    env = {**os.environ, "_ARGCOMPLETE": "1", "COMP_LINE": "qoslab rep", "COMP_POINT": "10",
           "_ARGCOMPLETE_STDOUT_FILENAME": str(out), "_ARGCOMPLETE_IFS": "\n"}  # fmt: skip
    subprocess.run([sys.executable, "-m", "qoslab"], env=env, capture_output=True, timeout=120)
    assert set(out.read_text().split()) == {"report", "reproduce"}


# -- 9: show, plot, report, bins, the bar --------------------------------------------


def test_9_show_lists_the_bottleneck_first_and_folds_quiet_queues(folders, capsys):
    code, out, _ = main(["show", str(folders["run"])], capsys)
    assert code == 0
    qdiscs = re.findall(r"^qdisc \S+ (\S+)", out, re.M)
    assert qdiscs[0] == "r0->sink0", qdiscs
    assert not any(q.startswith("src") for q in qdiscs), "the 40 access queues are folded"
    assert re.search(r"^\d+ more queues without drops or marks .*--all lists them", out, re.M), out
    code, out, _ = main(["show", str(folders["run"]), "--all"], capsys)
    assert any(q.startswith("src") for q in re.findall(r"^qdisc \S+ (\S+)", out, re.M))
    # Off a terminal no record is wrapped in the middle: each qdisc record is its own lines.
    assert all(len(line) < 1000 for line in out.splitlines())


def test_9_plots_are_in_mb_s_and_ms_without_an_offset(folders, tmp_path):
    res = folders["result"]
    fig = res.plot(flows="cbr", metric="throughput", out=tmp_path / "t.png")  # type: ignore[attr-defined]
    ax = fig.axes[0]
    assert ax.get_ylabel() == "throughput (Mb/s)"
    fig.canvas.draw()
    assert ax.yaxis.get_offset_text().get_text() == ""
    assert max(ax.get_ylim()) < 1e3, "values in Mb/s, not bit/s"
    assert qoslab.plot.readable_unit("srtt_s", [0.02, 0.05]) == ("ms", 1e-3)


def test_9_plot_without_a_display_writes_a_file(folders, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "MPLBACKEND")}
    p = subprocess.run(
        [sys.executable, "-m", "qoslab", "plot", str(folders["run"]), "--flows", "cbr", "--metric", "throughput"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    written = tmp_path / p.stdout.strip()
    assert written.is_file() and written.read_bytes().startswith(b"\x89PNG")
    assert "no display" in p.stderr


def test_9_report_columns_have_one_number_format_and_sweeps_are_pivoted(folders, tmp_path):
    from qoslab.report import column_format, pivot_points

    f = column_format([2.4989800e7, 24989800.5, 1.5])
    assert [f(v) for v in (2.4989800e7, 24989800.5, 1.5)] == ["24,989,800", "24,989,800", "2"]
    g = column_format([0.0123, 0.5, float("nan")])
    assert [g(v) for v in (0.0123, 0.5, float("nan"))] == ["0.0123", "0.5000", "-"]
    assert column_format([1, 2000])(2000) == "2,000"
    import pandas as pd

    summ = pd.read_parquet(folders["sweep"] / "summary.parquet")
    table = pivot_points(summ[summ["entity_kind"] == "group"], ["topology.bottleneck.queue.max_p"], "group",
                         ["throughput_bps", "loss"])  # fmt: skip
    assert list(table.columns) == ["max_p", "group", "throughput (Mb/s)", "loss (%)"]
    assert len(table) == 1  # one row per point and group
    assert cli("report", str(folders["sweep"]), "--out", str(tmp_path / "s.html")).returncode == 0
    page = (tmp_path / "s.html").read_text(encoding="utf-8")
    assert "which no run of the sweep used" in page and "throughput (Mb/s)" in page


def test_9_a_short_run_gets_about_ten_bins_by_default(folders):
    res = folders["result"]  # 2 s, no metrics.bin in the file's override
    assert res.scenario["metrics"]["bin"] == "10s"  # the file sets it
    sc = qoslab.Scenario.dumbbell(
        name="short", sources=2, access_rate="10Mbps", access_delay="1ms", bottleneck_rate="1Mbps",
        bottleneck_delay="1ms", queue=queues.fifo(limit=10), duration="5s",
        traffic=[traffic.cbr(name="c", flows=2, src="src*", dst="sink0", rate="100kbps", size=100)],
    )  # fmt: skip
    assert sc.echo["metrics"]["bin"] == "500ms"
    s = qoslab.run(sc).series
    bins = s[(s["entity_kind"] == "flow") & (s["metric"] == "delivered_bytes")]["t_s"].nunique()
    assert bins == 10


def test_9_the_sweep_bar_fits_80_columns(monkeypatch):
    from rich.console import Console

    from qoslab.sweeps import _Reporter

    monkeypatch.setenv("COLUMNS", "80")
    r = _Reporter(1200, rich_bar=True)
    try:
        r(3, 1200, "max_p=0.02, min_th=3, max_th=15, w_q=0.002, gentle=true seed 17 in 12.3 s" * 2)
        console = Console(width=80, file=io.StringIO(), color_system=None)
        lines = console.render_lines(r.bar.get_renderable(), console.options)
        texts = ["".join(s.text for s in line) for line in lines]
        assert len(texts) == 1, texts
        # The count and the times stay whole; only the description is cut (the old bar kept
        # the description and squeezed the rest to "s…").
        assert texts[0].startswith("sweep ") and " 3/1200 " in texts[0] and "0:00:00" in texts[0], texts
        assert len(texts[0]) <= 80, texts
    finally:
        r.close()


def test_9_a_testbed_summary_speaks_of_wall_clock_time(folders):
    s = dict(folders["result"].summary)  # type: ignore[attr-defined]
    s["testbed"] = {"driver": "qoslab testbed"}
    res = qoslab.Result(s, {t: folders["result"].arrow(t) for t in ("flows", "queues", "series", "events")})  # type: ignore[attr-defined]
    from rich.console import Console

    console = Console(width=200, file=io.StringIO(), color_system=None)
    console.print(qcli._summary_table(res, Path("x")))
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "simulated" not in text and "events/s" not in text and "wall clock" in text


# -- 10: per-hop queues of the parking lot -----------------------------------------


def test_10_parking_lot_hops_take_their_own_queue():
    sc = qoslab.Scenario.build(
        name="lot",
        duration="2s",
        topology=topology.parking_lot(
            bottlenecks=2,
            access=topology.link(rate="100Mbps", delay="1ms"),
            bottleneck=topology.link(rate="2Mbps", delay="5ms"),
            hop_queues=[queues.red(limit=60, min_th=5, max_th=15), queues.fifo(limit=20)],
        ),
        traffic=[traffic.cbr(name="long", flows=2, src="src_long", dst="sink_long", rate="1.5Mbps", size=1000)],
    )
    q = qoslab.run(sc).queues.set_index("name")
    assert q.loc["r0->r1", "kind"] == "red" and q.loc["r1->r2", "kind"] == "fifo"


# -- 11: the docs say what the code does --------------------------------------------


def test_11_the_docs_match_the_code():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == ">=3.11"
    assert "Python ≥ 3.11" in (ROOT / "README.md").read_text()
    assert all(not re.search(r"==", d) for d in project["dependencies"]), "ranges, not pins"
    assert not any(d.startswith(("dask", "distributed")) for d in project["dependencies"])
    assert "dask" in project["optional-dependencies"]
    cli_md = (ROOT / "docs" / "cli.md").read_text()
    sub = next(a for a in qcli.parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert "thirteen commands" in cli_md and len(sub.choices) == 13
    for name in sub.choices:
        assert f"`{name}`" in cli_md, name
    assert "come with their issues" not in cli_md
    scen_md = (ROOT / "docs" / "scenarios.md").read_text()
    assert "64,512" in scen_md and "n mod 64512" in scen_md
    # The unit forms the docs call accepted are, and those they call refused are refused.
    for ok in ('"10 Mbps"', '"5 ms"', '"1 h"', "10_000kbps"):
        assert ok in scen_md, ok
    for rate in ("10 Mbps", " 25Mbps ", "10_000kbps"):
        qoslab.load(RED, overrides=[f'topology.bottleneck.rate="{rate}"'])
    for dur in ("5 ms", "1 h"):
        qoslab.load(RED, overrides=[f'topology.bottleneck.delay="{dur}"'])
    for bad in ('"10Mbit/s"', '"1e7bps"', '"10MBps"'):
        assert bad in scen_md, bad
        with pytest.raises(qoslab.ConfigError):
            qoslab.load(RED, overrides=[f"topology.bottleneck.rate={bad}"])


# -- 12: a reproduction that cannot find its scenarios leaves nothing -------------------


def test_12_a_reproduction_without_its_scenarios_leaves_no_folder(tmp_path):
    env_dir = tmp_path / "none"
    env_dir.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "QOSLAB_SCENARIOS": str(env_dir)}
    p = subprocess.run(
        [sys.executable, "-m", "qoslab", "reproduce", "examples", "--quick", "--jobs", "1"],
        cwd=work, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr
    assert list(work.iterdir()) == [], "not even an empty results/"
