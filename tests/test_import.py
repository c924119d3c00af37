"""`import qoslab` stays light: well under 0.5 s, and no heavy dependency imported."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ["pandas", "pyarrow", "matplotlib", "numpy", "rich", "tomli_w"]

CODE = f"""
import json, sys, time
t = time.perf_counter()
import qoslab
dt = time.perf_counter() - t
print(json.dumps({{"s": dt, "heavy": [m for m in {HEAVY!r} if m in sys.modules]}}))
"""


def test_import_is_fast_and_light():
    runs = []
    for _ in range(3):
        p = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        runs.append(json.loads(p.stdout))
    assert all(r["heavy"] == [] for r in runs), runs
    best = min(r["s"] for r in runs)
    assert best < 0.5, f"import qoslab took {best:.3f} s"
