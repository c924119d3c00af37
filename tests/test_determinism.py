"""Same scenario and seed twice: byte-identical files (wall time aside). Different seeds differ."""

from __future__ import annotations

import json
from pathlib import Path

import qoslab
from conftest import RED_DUMBBELL
from qoslab.reproduce import figures

TABLES = ("flows", "queues", "series", "events")


def _run(seed: int, out: Path) -> Path:
    return qoslab.run(RED_DUMBBELL, seed=seed, overrides=["duration=4s"], out=out).path  # type: ignore[return-value]


def _summary_without_wall(path: Path) -> dict:
    s = json.loads((path / "summary.json").read_text())
    s.pop("loop_wall_s")
    return s


def test_same_seed_gives_byte_identical_results(tmp_path):
    a, b = _run(7, tmp_path / "a"), _run(7, tmp_path / "b")
    for t in TABLES:
        assert (a / f"{t}.parquet").read_bytes() == (b / f"{t}.parquet").read_bytes(), t
    assert _summary_without_wall(a) == _summary_without_wall(b)
    wall_a = json.loads((a / "summary.json").read_text())["loop_wall_s"]
    text_a = (a / "summary.json").read_text().replace(json.dumps(wall_a), "W")
    wall_b = json.loads((b / "summary.json").read_text())["loop_wall_s"]
    text_b = (b / "summary.json").read_text().replace(json.dumps(wall_b), "W")
    assert text_a == text_b


def test_different_seeds_give_different_results(tmp_path):
    a, b = _run(1, tmp_path / "a"), _run(2, tmp_path / "b")
    differing = [t for t in TABLES if (a / f"{t}.parquet").read_bytes() != (b / f"{t}.parquet").read_bytes()]
    assert differing, "seeds 1 and 2 gave identical tables"
    sa, sb = _summary_without_wall(a), _summary_without_wall(b)
    assert sa.pop("seed") == 1 and sb.pop("seed") == 2


def test_parquet_files_carry_no_variable_metadata(tmp_path):
    import pyarrow.parquet as pq

    a = _run(3, tmp_path / "a")
    for t in TABLES:
        md = pq.read_metadata(a / f"{t}.parquet")
        assert md.created_by.startswith("parquet-cpp-arrow")
        keys = set((md.metadata or {}).keys())
        assert keys <= {b"ARROW:schema"}, keys


def _figure(path: Path) -> bytes:
    fig = figures.new_figure(4, 3)
    ax = fig.subplots()
    ax.plot([0, 1, 2, 3], [1, 3, 2, 4], label="x")
    ax.bar([0, 1], [2, 1])
    ax.legend()
    ax.set_title("determinism")
    figures.save(fig, path)
    return path.read_bytes()


def test_figures_are_byte_identical_and_carry_no_software_tag(tmp_path):
    one, two = _figure(tmp_path / "a.png"), _figure(tmp_path / "b.png")
    assert one == two
    assert b"matplotlib" not in one.lower()
