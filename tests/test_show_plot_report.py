"""Looking at results: ``qoslab show``, ``qoslab plot`` / ``Result.plot`` and
``qoslab report`` (rendered in headless Chromium)."""

from __future__ import annotations

import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import qoslab
from conftest import RED_DUMBBELL, cli

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def red_result(tmp_path_factory) -> Path:
    """A 4 s RED reference run with the cbr group's delays traced."""
    out = tmp_path_factory.mktemp("red") / "run"
    p = cli(
        "run",
        str(RED_DUMBBELL),
        "--set",
        "duration=4s",
        "--set",
        'metrics.trace_groups=["cbr"]',
        "--out",
        str(out),
        "--quiet",
    )
    assert p.returncode == 0, p.stderr
    return out


def test_show_json_lists_every_busy_queue_group_and_admission(red_result):
    p = cli("show", str(red_result), "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    res = qoslab.Result.load(red_result)
    busy = res.queues[res.queues["arrivals"] > 0]
    assert [q["queue"] for q in doc["queues"]] == list(busy["name"])
    b = next(q for q in doc["queues"] if q["queue"] == "r0->sink0")
    row = res.queue("r0->sink0")
    assert b["arrivals"] == int(row["arrivals"]) and b["drops"] == int(row["drops"])
    assert b["drops"] == sum(b[f"drops_{r}"] for r in ("overlimit", "early_random", "forced"))
    assert b["drops_early_random"] > 0 and b["drops_forced"] > 0
    (g,) = doc["groups"]
    assert g["group"] == "cbr" and g["flows"] == 40
    f = res.flows
    assert g["loss"] == pytest.approx(int(f["dropped_pkts"].sum()) / int(f["sent_pkts"].sum()))
    assert 0.9 < g["jain"] <= 1.0 and g["delay_p50_s"] <= g["delay_p99_s"] <= g["delay_max_s"]
    assert doc["admission"] == [
        {
            "group": "cbr",
            "flows": 40,
            "admitted": 40,
            "refused": 0,
            "admit_decisions": 40,
            "reject_decisions": 0,
            "rules": "admit_all",
        }
    ]
    every = json.loads(cli("show", str(red_result), "--json", "--all").stdout)
    assert len(every["queues"]) == len(res.queues) > len(doc["queues"])


def test_show_prints_tc_like_blocks_and_tables(red_result):
    p = cli("show", str(red_result))
    assert p.returncode == 0, p.stderr
    assert "qdisc red r0->sink0" in p.stdout and "early_random" in p.stdout and "sojourn" in p.stdout
    assert "traffic groups" in p.stdout and "Jain fairness" in p.stdout and "admission" in p.stdout


def test_show_of_a_missing_folder_exits_2(tmp_path):
    p = cli("show", str(tmp_path / "nothing"))
    assert p.returncode == 2 and "not a result folder" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.parametrize(
    "args, check",
    [
        (["--queue", "r0->sink0", "--metric", "red_avg"], "png"),
        (["--flows", "cbr", "--metric", "throughput"], "svg"),
        (["--cdf", "delay", "--flows", "cbr"], "png"),
        (["--cdf", "interarrival"], "png"),
    ],
)
def test_plot_writes_png_and_svg(red_result, tmp_path, args, check):
    out = tmp_path / f"plot.{check}"
    p = cli("plot", str(red_result), *args, "--out", str(out))
    assert p.returncode == 0, p.stderr
    data = out.read_bytes()
    if check == "png":
        assert data.startswith(PNG) and len(data) > 5000
    else:
        assert ET.fromstring(data).tag.endswith("svg")


@pytest.mark.parametrize(
    "args, message",
    [
        (["--queue", "r0->nowhere", "--metric", "red_avg"], "no time series for queue"),
        (["--queue", "r0->sink0", "--metric", "nope"], "it has: arrivals"),
        (["--flows", "nope", "--metric", "throughput"], "no traffic group 'nope'"),
        (["--flows", "cbr"], "--metric"),
        (["--queue", "r0->sink0", "--flows", "cbr", "--metric", "x"], "exactly one"),
        (["--queue", "r0->sink0", "--metric", "red_avg", "--out", "x.jpg"], "allowed: a file ending in .png or .svg"),
    ],
)
def test_plot_bad_options_exit_2_and_write_nothing(red_result, tmp_path, args, message):
    if "--out" not in args:
        args = [*args, "--out", str(tmp_path / "p.png")]
    p = cli("plot", str(red_result), *args, cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    assert message in p.stderr and "Traceback" not in p.stderr
    assert list(tmp_path.iterdir()) == []


def test_result_plot_returns_a_figure_and_can_draw_on_given_axes(red_result, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res = qoslab.Result.load(red_result)
    fig = res.plot(queue="r0->sink0", metric="backlog_pkts", out=tmp_path / "b.png")
    line = fig.axes[0].lines[0]
    assert len(line.get_xdata()) == len(res.metric("r0->sink0", "backlog_pkts"))
    assert (tmp_path / "b.png").read_bytes().startswith(PNG)
    f2, ax = plt.subplots()
    assert res.plot(flows="cbr", metric="throughput", ax=ax) is f2
    # The group total is the sum of the flows' delivered bytes per bin, drawn in Mb/s (issue 27
    # §9); the run (4 s) is shorter than its one 10 s bin, so the bin is [0, 4 s] and the rate
    # is over 4 s.
    stairs = ax.patches[-1].get_data()
    s = res.series
    d = s[(s["entity_kind"] == "flow") & (s["metric"] == "delivered_bytes")].groupby("t_s")["value"].sum()
    assert list(stairs.edges) == [0.0, 4.0]
    assert list(stairs.values) == pytest.approx(list(d.to_numpy() * 8 / 4.0 / 1e6))
    assert 20 < stairs.values[0] <= 25  # the 25 Mb/s bottleneck, nearly full
    assert ax.get_ylabel() == "throughput (Mb/s)"
    plt.close("all")


# -- the HTML report, rendered by a real browser -------------------------------

CHECK = """<script>window.addEventListener('load', () => {
  const imgs = [...document.images];
  const ok = imgs.filter(i => i.complete && i.naturalWidth > 0 && i.naturalHeight > 0).length;
  const m = document.createElement('pre'); m.id = 'qoslab-check';
  m.textContent = 'IMGS ' + imgs.length + ' DECODED ' + ok + ' CLAIMS ' + document.querySelectorAll('tr.claim').length;
  document.body.appendChild(m); });</script>"""


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no headless Chromium on this machine (Debian package 'chromium'; .ci/run installs it as root)")
    raise AssertionError("unreachable")


def render(page: Path, tmp_path: Path) -> tuple[int, int, int]:
    """Loads ``page`` in headless Chromium; returns (images, images decoded, claim rows)."""
    import re

    probe = tmp_path / f"probe-{page.parent.name}.html"
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", CHECK + "</body>"), encoding="utf-8")
    p = subprocess.run(
        [
            chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'chrome-profile'}",
            "--virtual-time-budget=15000",
            "--dump-dom",
            probe.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    m = re.search(r"IMGS (\d+) DECODED (\d+) CLAIMS (\d+)", p.stdout)
    assert m, f"Chromium printed no check line; stderr: {p.stderr[-2000:]}"
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


def test_the_browser_check_detects_an_image_that_does_not_decode(tmp_path):
    page = tmp_path / "bad" / "report.html"
    page.parent.mkdir()
    page.write_text(
        '<!DOCTYPE html><html><body><img src="data:image/png;base64,iVBORw0KGgoAAAAbroken"></body></html>',
        encoding="utf-8",
    )
    assert render(page, tmp_path) == (1, 0, 0)


def test_report_of_a_run_is_self_contained_and_every_image_decodes(red_result, tmp_path):
    out = tmp_path / "run.html"
    p = cli("report", str(red_result), "--out", str(out))
    assert p.returncode == 0, p.stderr
    text = out.read_text(encoding="utf-8")
    assert 'src="http' not in text and 'href="http' not in text
    assert "r0-&gt;sink0" in text and "Traffic groups" in text and "[topology.bottleneck.queue]" in text
    n, ok, _ = render(out, tmp_path)
    assert n >= 4 and ok == n


def test_report_of_a_sweep(tmp_path):
    out = tmp_path / "sw"
    qoslab.sweep(
        RED_DUMBBELL,
        grid={"topology.bottleneck.queue.max_p": "0.02,0.1"},
        seeds=2,
        jobs=2,
        out=out,
        overrides=["duration=1s"],
    )
    p = cli("report", str(out))
    assert p.returncode == 0, p.stderr
    page = out / "report.html"
    text = page.read_text(encoding="utf-8")
    assert "topology.bottleneck.queue.max_p" in text and "throughput_bps" in text
    n, ok, _ = render(page, tmp_path)
    assert n == 3 and ok == n  # throughput, loss, delay of the one group against max_p


def test_report_of_a_reproduction_has_one_row_per_claim(tmp_path):
    p = cli("reproduce", "examples", "--quick", "--out", str(tmp_path))
    assert p.returncode == 0, p.stderr
    folder = tmp_path / "examples"
    p = cli("report", str(folder))
    assert p.returncode == 0, p.stderr
    claims = json.loads((folder / "results.json").read_text())["claims"]
    figures = list(folder.glob("*.png"))
    n, ok, rows = render(folder / "report.html", tmp_path)
    assert rows == len(claims) > 0
    assert n >= len(figures) > 0 and ok == n


def test_report_of_a_folder_that_is_none_of_the_three_exits_2(tmp_path):
    p = cli("report", str(tmp_path))
    assert p.returncode == 2 and "not a run, sweep or reproduction folder" in p.stderr
    assert list(tmp_path.iterdir()) == []
