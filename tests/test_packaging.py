"""The installable package: ``make dist`` builds the wheel, ``pip install``
puts it into a fresh virtual environment (no source tree anywhere on its path), and
``qoslab`` works there from an empty folder: a scenario run, the built-in scenarios and
binaries found inside the package, ``qoslab reproduce examples --quick``.

It builds a wheel and installs its dependencies, so it runs under ``make test-package``
(``QOSLAB_TEST_PACKAGE=1``, part of ``.ci/run``), not in ``make test``. The dependencies
come from pip's cache or PyPI, constrained to ``requirements.txt`` (the versions ``make``
installed, which pip has cached)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT

pytestmark = pytest.mark.skipif(
    os.environ.get("QOSLAB_TEST_PACKAGE") != "1",
    reason="builds and installs the wheel: run it with make test-package (part of .ci/run)",
)


def _clean_env(venv: Path) -> dict[str, str]:
    """The environment of a user who installed the wheel: its venv first on PATH, nothing of
    the source tree (no editable install, no target/, no QOSLAB_* overrides)."""
    keep = {k: v for k, v in os.environ.items() if k in ("HOME", "LANG", "LC_ALL", "TMPDIR", "USER")}
    path = [p for p in os.environ.get("PATH", "").split(os.pathsep) if str(ROOT) not in p]
    return {**keep, "PATH": os.pathsep.join([str(venv / "bin"), *path]), "COLUMNS": "120"}


def _run(args: list[str], *, cwd: Path, env: dict[str, str], timeout: float = 900) -> subprocess.CompletedProcess:
    p = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, (args, p.stdout[-2000:], p.stderr[-4000:])
    assert "Traceback" not in p.stderr, p.stderr
    return p


def test_the_wheel_installs_in_a_fresh_venv_and_runs_from_an_empty_folder(tmp_path: Path) -> None:
    timings = {}
    t = time.monotonic()
    dist = tmp_path / "dist"
    p = subprocess.run(["make", "-s", "dist", f"DIST={dist}"], cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert p.returncode == 0, p.stderr[-4000:]
    assert not (ROOT / "python" / "qoslab" / "_data").exists(), "the staged files are removed after the build"
    wheels, sdists = sorted(dist.glob("qoslab-*.whl")), sorted(dist.glob("qoslab-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, list(dist.iterdir())
    timings["make dist"] = time.monotonic() - t

    import tarfile
    import zipfile

    names = zipfile.ZipFile(wheels[0]).namelist()
    assert "qoslab/_data/scenarios/examples/red_dumbbell.toml" in names
    assert {
        "qoslab/_data/bin/qoslab-router",
        "qoslab/_data/bin/qoslab-traffic",
        "qoslab/_data/bin/edge_overhead",
    } <= set(names)
    with tarfile.open(sdists[0]) as tar:
        assert any(n.endswith("/scenarios/examples/red_dumbbell.toml") for n in tar.getnames())

    t = time.monotonic()
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    env = _clean_env(venv)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    _run([*pip, str(wheels[0]), "-c", str(ROOT / "requirements.txt")], cwd=tmp_path, env=env, timeout=1800)
    timings["pip install"] = time.monotonic() - t
    # dask is an extra: a plain install does not pull it in.
    missing = subprocess.run([str(venv / "bin" / "python"), "-c", "import distributed"], env=env, capture_output=True)
    assert missing.returncode != 0

    empty = tmp_path / "empty"
    empty.mkdir()
    qoslab = str(venv / "bin" / "qoslab")
    v = _run([qoslab, "--version"], cwd=empty, env=env)
    assert v.stdout.startswith("qoslab ")
    where = _run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import qoslab, qoslab.reproduce.framework as f, qoslab.testbed.runner as r;"
            "print(qoslab.__file__); print(f.scenarios_dir()); print(r.binary('qoslab-router'))",
        ],
        cwd=empty,
        env=env,
    ).stdout.split()
    assert all(str(venv) in w for w in where), where  # the package, its scenarios, its binaries
    scenario = Path(where[1]) / "examples" / "red_dumbbell.toml"

    t = time.monotonic()
    _run([qoslab, "run", str(scenario), "--set", "duration=2s", "--out", "red", "-q"], cwd=empty, env=env)
    shown = _run([qoslab, "show", "red"], cwd=empty, env=env)
    assert "r0->sink0" in shown.stdout
    timings["run"] = time.monotonic() - t

    t = time.monotonic()
    r = _run([qoslab, "reproduce", "examples", "--quick"], cwd=empty, env=env, timeout=1800)
    assert (empty / "results" / "examples" / "report.md").is_file(), r.stdout
    assert "overall" in r.stdout
    timings["reproduce examples --quick"] = time.monotonic() - t
    print("test-package timings (s): " + ", ".join(f"{k} {v:.0f}" for k, v in timings.items()))
