"""The sixth-paper skeleton (docs/reproductions/skeleton/) runs as copied: paper data loaded,
its grid through the one run-and-reduce loop, cells judged, and a second run taken from the
store."""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path

from qoslab.reproduce import execute

SKELETON = Path(__file__).resolve().parents[1] / "docs" / "reproductions" / "skeleton"


def test_the_skeleton_reproduction_runs_judges_its_cells_and_resumes(tmp_path):
    spec = importlib.util.spec_from_file_location("skeleton", SKELETON / "skeleton.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    logs: list[str] = []
    store = tmp_path / ".store"
    s = execute(module, quick=True, seeds=None, out=tmp_path, log=logs.append, store=store)
    folder = tmp_path / "skeleton"
    rows = list(csv.DictReader((folder / "cells.csv").open()))
    assert [(r["table"], r["row"], r["column"]) for r in rows] == [
        ("Table 1", "max_p 0.02", "Drop share"),
        ("Table 1", "max_p 0.1", "Drop share"),
    ]
    assert all(r["verdict"] in ("agrees", "differs", "uncertain") and r["qoslab"] for r in rows)
    doc = json.loads((folder / "results.json").read_text())
    assert doc["score"] is not None and doc["claims"][0]["id"] == "skeleton-drops-do-not-fall-with-max-p"
    assert s.outcome.claims[0].holds is not None
    # Run again: every run from the store, the same cells.
    before = (folder / "cells.csv").read_bytes()
    execute(module, quick=True, seeds=None, out=tmp_path, log=logs.append, store=store)
    assert "skeleton: 0 runs computed, 4 taken from the store" in logs[-1], logs[-1]
    assert (folder / "cells.csv").read_bytes() == before
