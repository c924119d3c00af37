"""A content-addressed store of run results, so that sweeps resume.

A run's key is the SHA-256 (first 32 hex digits) of

- the **normalized scenario**: its validated echo (every override applied,
  every default filled in) as canonical JSON (sorted keys, no spaces),
  without its ``seed`` field, plus the SHA-256 of every file it refers to
  (replay CSVs, MACE descriptor files), since the echo holds only their names;
- the **seed** of the run;
- the **build identity**: the git commit of the checkout the package was
  built from (when it was), the SHA-256 of the native module file
  ``qoslab._core`` and the qoslab version. Any change of the simulator's
  code changes the native module, so a result is never reused across builds.

Layout of a store folder::

    runs/<key>/summary.json, flows.parquet, ... (a normal result folder)
    runs/<key>/metrics.parquet   the run's long-form metrics (qoslab.tables.run_metrics)
    runs/<key>/meta.json         key, seed, grid point, scenario hash, build identity
    runs.log                     one line per run stored: its key

Each run folder is written under a hidden temporary name and renamed into
place once complete (:func:`qoslab._atomic.atomic_dir`), so a folder that
exists is a finished run; a sweep killed at any moment loses only the runs
that were still executing.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._atomic import atomic_dir

if TYPE_CHECKING:  # pragma: no cover
    from .result import Result
    from .scenario import Scenario

#: Bumped when the meaning of a key changes (then every old run is a miss).
KEY_VERSION = "qoslab-run-v1"

#: Keys of the scenario echo whose string values name files beside the scenario.
_FILE_KEYS = frozenset({"file", "descriptors"})


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@functools.cache
def build_identity() -> dict[str, str]:
    """``git_commit`` (empty when the package is not in a git checkout), ``native_sha256``
    and ``qoslab_version`` of the running build."""
    from . import _core

    native = Path(str(_core.__file__))
    here = Path(__file__).resolve().parent
    commit = ""
    try:
        p = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=False
        )
        if p.returncode == 0:
            commit = p.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return {"git_commit": commit, "native_sha256": _sha256_file(native), "qoslab_version": _core.version()}


def _referenced_files(echo: Any, base: Path, found: dict[str, str]) -> None:
    if isinstance(echo, Mapping):
        for k, v in echo.items():
            if k in _FILE_KEYS and isinstance(v, str) and v:
                p = Path(v) if Path(v).is_absolute() else base / v
                if p.is_file():
                    found[v] = _sha256_file(p)
            else:
                _referenced_files(v, base, found)
    elif isinstance(echo, list):
        for v in echo:
            _referenced_files(v, base, found)


def scenario_hash(scenario: Scenario) -> str:
    """SHA-256 of the normalized scenario (see the module doc)."""
    echo = dict(scenario.echo)
    echo.pop("seed", None)
    files: dict[str, str] = {}
    _referenced_files(echo, scenario.base_dir, files)
    doc = {"scenario": echo, "files": files}
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def run_key(scenario_sha: str, seed: int, build: Mapping[str, str] | None = None) -> str:
    """The store key of one run."""
    b = build if build is not None else build_identity()
    text = "\n".join([KEY_VERSION, scenario_sha, str(seed), b["git_commit"], b["native_sha256"], b["qoslab_version"]])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def run_files(result: Result) -> dict[str, bytes]:
    """What the store keeps of a run: the files of :meth:`Result.save` and ``metrics.parquet``
    (:func:`qoslab.tables.run_metrics`), as bytes."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    from .result import PARQUET_OPTIONS
    from .tables import run_metrics

    files = result.to_files()
    sink = pa.BufferOutputStream()
    table = pa.Table.from_pandas(run_metrics(result), preserve_index=False).replace_schema_metadata(None)
    pq.write_table(table, sink, **PARQUET_OPTIONS)
    files["metrics.parquet"] = sink.getvalue().to_pybytes()
    return files


class Store:
    """Run results under ``root``, addressed by :func:`run_key`."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.runs = self.root / "runs"

    def path(self, key: str) -> Path:
        return self.runs / key

    def has(self, key: str) -> bool:
        """A finished run is a folder with its ``meta.json`` (folders appear only complete)."""
        return (self.runs / key / "meta.json").is_file()

    def stored(self) -> list[str]:
        if not self.runs.is_dir():
            return []
        return sorted(p.name for p in self.runs.iterdir() if not p.name.startswith(".") and self.has(p.name))

    def clean_partial(self) -> int:
        """Removes the temporary folders of runs that a killed sweep was writing (those of a
        writer that no longer runs; see :func:`qoslab._atomic.clean_dead_writers`); returns how
        many. A concurrent sweep's folders in progress are left alone."""
        if not self.runs.is_dir():
            return 0
        from ._atomic import clean_dead_writers

        n = 0
        pattern = re.compile(r"\.([0-9a-f]{32})\.(tmp|old)-\d+-[0-9a-f]{12}")
        for key in {m.group(1) for p in self.runs.iterdir() if (m := pattern.fullmatch(p.name))}:
            n += len(clean_dead_writers(self.runs / key))
        return n

    def put(self, key: str, files: Mapping[str, bytes], meta: Mapping[str, Any]) -> Path:
        """Stores one run atomically (``files``: the result folder's files and ``metrics.parquet``,
        see :func:`run_files`; then ``meta.json``) and logs its key."""
        from .result import write_files

        target = self.runs / key
        with atomic_dir(target) as tmp:
            write_files(tmp, files)
            with open(tmp / "meta.json", "w", encoding="utf-8") as f:
                json.dump({"key": key, **meta}, f, indent=2, ensure_ascii=False)
                f.write("\n")
                f.flush()
                os.fsync(f.fileno())
        with open(self.root / "runs.log", "a", encoding="utf-8") as log:
            log.write(key + "\n")
        return target

    #: The largest file :meth:`files` reads back (bytes).
    MAX_FILE_BYTES = 1 << 30

    def files(self, key: str) -> dict[str, bytes]:
        """The stored files of run ``key`` as ``{name: bytes}`` (``meta.json`` and the folder's
        own dot-files apart), each read
        with a bound of :attr:`MAX_FILE_BYTES`. Raises :class:`OSError` if the run is not
        stored, or :class:`ValueError` if a file is larger than the bound."""
        root = self.runs / key
        out: dict[str, bytes] = {}
        for p in sorted(root.rglob("*")):
            name = p.relative_to(root).as_posix()
            if not p.is_file() or name == "meta.json" or name.startswith("."):
                continue
            with open(p, "rb") as f:
                data = f.read(self.MAX_FILE_BYTES + 1)
            if len(data) > self.MAX_FILE_BYTES:
                raise ValueError(f"{p}: larger than {self.MAX_FILE_BYTES} bytes")
            out[name] = data
        return out

    def meta(self, key: str) -> dict[str, Any]:
        with open(self.runs / key / "meta.json", encoding="utf-8") as f:
            doc: dict[str, Any] = json.load(f)
        return doc

    def metrics(self, key: str) -> Any:
        """The run's long-form metrics (a pandas DataFrame)."""
        import pyarrow.parquet as pq

        return pq.read_table(self.runs / key / "metrics.parquet").to_pandas()


@functools.cache
def code_identity() -> str:
    """SHA-256 of the qoslab package's Python sources (paths and bytes, in path order): a value
    computed by Python code from runs is reused only by the same code, committed or not."""
    here = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for p in sorted(here.rglob("*.py")):
        h.update(str(p.relative_to(here)).encode() + b"\0")
        h.update(_sha256_file(p).encode())
    return h.hexdigest()


class ValueStore:
    """Python values under ``root``, addressed by key: what a reproduction kept of each run (its
    result, or the numbers its reduction took from it), so that an interrupted reproduction,
    run again, recomputes none of them.

    Each value is a gzip-compressed pickle ``values/<key[:2]>/<key>.pkl.gz``, written to a
    temporary name and renamed into place, so a file that exists is complete. The store is the
    user's own output (pickles are code: a store of unknown origin must not be read). A file
    larger than :attr:`MAX_BYTES` (packed or unpacked), or one that does not unpickle, is a miss:
    it is removed and its value computed again."""

    #: The largest value read back (bytes, packed and unpacked).
    MAX_BYTES = 1 << 30

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.values = self.root / "values"

    def path(self, key: str) -> Path:
        if not re.fullmatch(r"[0-9a-f]{32,64}", key):
            raise ValueError(f"store key {key!r}: expected 32 to 64 lowercase hex digits")
        return self.values / key[:2] / f"{key}.pkl.gz"

    def get(self, key: str) -> tuple[bool, Any]:
        """``(True, value)`` when ``key`` is stored and readable, else ``(False, None)``."""
        import gzip
        import pickle

        p = self.path(key)
        try:
            if p.stat().st_size > self.MAX_BYTES:
                raise ValueError("too large")
            with gzip.open(p, "rb") as f:
                data = f.read(self.MAX_BYTES + 1)
            if len(data) > self.MAX_BYTES:
                raise ValueError("too large")
            # The user's own store (see the class doc).
            return True, pickle.loads(data)
        except FileNotFoundError:
            return False, None
        except Exception:  # any unreadable value is a miss, computed again
            p.unlink(missing_ok=True)
            return False, None

    def put(self, key: str, value: Any) -> None:
        """Stores ``value`` under ``key`` atomically (a concurrent reader sees it whole or not at all)."""
        import gzip
        import pickle

        p = self.path(key)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(f".{p.name}.tmp-{os.getpid()}")
        try:
            with open(tmp, "wb") as f:
                f.write(gzip.compress(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL), compresslevel=1))
            os.replace(tmp, p)
        finally:
            tmp.unlink(missing_ok=True)

    def size(self) -> int:
        """Bytes held by the stored values."""
        if not self.values.is_dir():
            return 0
        return sum(f.stat().st_size for f in self.values.rglob("*.pkl.gz"))


def tree_bytes(root: str | os.PathLike[str]) -> int:
    """Bytes held by the files under ``root`` (0 if it does not exist)."""
    r = Path(root)
    return sum(f.stat().st_size for f in r.rglob("*") if f.is_file()) if r.is_dir() else 0


__all__ = [
    "KEY_VERSION",
    "Store",
    "ValueStore",
    "build_identity",
    "code_identity",
    "run_files",
    "run_key",
    "scenario_hash",
    "tree_bytes",
]
