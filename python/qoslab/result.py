"""Run results: a JSON summary and four tables, in memory and on disk.

A :class:`Result` holds what one run produced (see ``docs/results.md`` for
every column). Tables are kept as Apache Arrow tables with explicit
schemas and turned into pandas DataFrames only when asked for
(``result.flows`` etc.), so pandas and pyarrow are imported on first use,
never by ``import qoslab``.

On disk (:meth:`Result.save`) a result is a folder::

    summary.json      the core's summary, in its key order, indented by 2
    flows.parquet     one row per flow
    queues.parquet    one row per queue
    series.parquet    long form: t_s, entity_kind, entity_id, metric, value
    events.parquet    flow start/end, admission decisions
    pcap/<from>_to_<to>.pcapng   packet traces of the directions in ``[trace] pcap``, if any

The writer options are fixed and no timestamp is written, so the same run
gives byte-identical files. The folder is written under a hidden temporary
name beside the target and renamed into place only once complete.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from ._atomic import atomic_dir, run_identity

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import pyarrow as pa  # type: ignore[import-untyped]  # pyarrow ships no type stubs

    from . import _core

TABLES = ("flows", "queues", "series", "events")

#: The largest ``summary.json`` :meth:`Result.load` reads (bytes): far above any run's.
SUMMARY_MAX = 256 << 20

#: Parquet writer options: fixed so that output is byte-identical run to run.
PARQUET_OPTIONS: Mapping[str, Any] = {
    "version": "2.6",
    "compression": "zstd",
    "compression_level": 3,
    "use_dictionary": True,
    "write_statistics": True,
    "data_page_version": "1.0",
    "store_schema": True,
}


def _arrow_table(columns: Mapping[str, Any]) -> pa.Table:
    """An Arrow table from the core's columns, typed by their NumPy dtypes
    (``<f8`` float64, ``<i8`` int64, ``<u8`` uint64, ``|b1`` bool); a string
    column comes dictionary-encoded as ``(codes, values)`` and stays so: an
    Arrow ``dictionary<int32, string>`` array (a list of ``str`` is accepted
    too, and encoded)."""
    import numpy as np
    import pyarrow as pa

    # The arrays are built from buffers: `pa.array(...)` would import pandas
    # (0.17 s) only to check whether its argument is a pandas object, and
    # the command line never needs pandas (docs/performance.md).
    fields, arrays = [], []
    for name, col in columns.items():
        if isinstance(col, np.ndarray):
            typ = {"f": pa.float64(), "i": pa.int64(), "u": pa.uint64(), "b": pa.bool_()}.get(col.dtype.kind)
            if typ is None or (col.dtype.kind != "b" and col.dtype.itemsize != 8):
                raise TypeError(f"column {name}: unsupported dtype {col.dtype}")
            if col.dtype.kind == "b":
                data = np.packbits(col.astype(np.bool_, copy=False), bitorder="little")
            else:
                data = np.ascontiguousarray(col, dtype=col.dtype.newbyteorder("<"))
            arr = pa.Array.from_buffers(typ, len(col), [None, pa.py_buffer(data)])
        else:
            arr = _dictionary_array(col)
            typ = arr.type
        fields.append(pa.field(name, typ, nullable=False))
        arrays.append(arr)
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def _dictionary_array(col: Any) -> pa.Array:
    """A dictionary-encoded string array from the core's ``(codes, values)``
    pair, or from a list of ``str`` (encoded here, in first-seen order)."""
    import numpy as np
    import pyarrow as pa

    if isinstance(col, tuple):
        codes, values = col
    else:
        index: dict[str, int] = {}
        codes = np.fromiter((index.setdefault(v, len(index)) for v in col), dtype=np.uint32, count=len(col))
        values = list(index)
    indices = np.ascontiguousarray(codes, dtype="<i4")
    ind = pa.Array.from_buffers(pa.int32(), len(indices), [None, pa.py_buffer(indices)])
    return pa.DictionaryArray.from_arrays(ind, _string_array(values))


def _plain_strings(table: pa.Table) -> pa.Table:
    """``table`` with its dictionary columns decoded to plain strings: what
    pandas users get (string columns, not categoricals)."""
    import pyarrow as pa

    fields = [
        pa.field(f.name, pa.string(), nullable=f.nullable) if pa.types.is_dictionary(f.type) else f
        for f in table.schema
    ]
    if all(f.type == g.type for f, g in zip(fields, table.schema, strict=True)):
        return table
    return table.cast(pa.schema(fields, metadata=table.schema.metadata))


def _string_array(values: Any) -> pa.Array:
    """A string array from Python strings, built from its offsets and bytes."""
    import numpy as np
    import pyarrow as pa

    encoded = [v.encode("utf-8") for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    if offsets[-1] >= 2**31:
        return pa.array(values, type=pa.string())
    data = b"".join(encoded)
    return pa.Array.from_buffers(
        pa.string(), len(encoded), [None, pa.py_buffer(offsets.astype("<i4")), pa.py_buffer(data)]
    )


def write_files(folder: Path, files: Mapping[str, bytes]) -> None:
    """Writes ``{name: bytes}`` into ``folder`` and syncs each file."""
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        with open(folder / name, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())


class Result:
    """What one run produced: ``summary`` (dict) and the tables ``flows``,
    ``queues``, ``series``, ``events`` (pandas DataFrames, built on first use)."""

    __slots__ = ("_arrow", "_files", "_frames", "_path", "_raw", "_summary", "_traces")

    def __init__(
        self,
        summary: Mapping[str, Any],
        tables: Mapping[str, Any],
        *,
        path: Path | None = None,
        traces: Mapping[str, TraceData] | None = None,
    ) -> None:
        missing = [t for t in TABLES if t not in tables]
        if missing:
            raise ValueError(f"result is missing tables: {', '.join(missing)}")
        self._summary = dict(summary)
        # Each table is either the core's columns (a dict) or an Arrow table.
        self._raw = {t: tables[t] for t in TABLES}
        self._arrow: dict[str, pa.Table] = {}
        self._frames: dict[str, pd.DataFrame] = {}
        self._path = path
        self._traces = dict(traces or {})
        # The files of :meth:`to_files` when this result was made from them (:meth:`from_files`).
        self._files: dict[str, bytes] | None = None

    @classmethod
    def from_files(cls, files: Mapping[str, bytes]) -> Result:
        """The result whose :meth:`to_files` are ``files`` (``summary.json``, the four Parquet
        tables, the ``pcap/`` traces the scenario lists): what a worker encoded, or a store
        read back. :meth:`save` writes these same bytes again, without encoding anew.
        Raises :class:`ValueError` if a file is missing or does not read."""
        import pyarrow as pa
        import pyarrow.parquet as pq  # type: ignore[import-untyped]

        try:
            summary = json.loads(files["summary.json"])
            tables = {t: pq.read_table(pa.BufferReader(files[f"{t}.parquet"])) for t in TABLES}
            traced = summary.get("scenario", {}).get("trace", {}).get("pcap", [])
            traces: dict[str, TraceData] = {d: files[f"pcap/{trace_file_name(d)}"] for d in traced}
        except KeyError as e:
            raise ValueError(f"result files: {e.args[0]} is missing") from None
        except (pa.ArrowException, json.JSONDecodeError, UnicodeDecodeError, AttributeError) as e:
            raise ValueError(f"result files do not read ({type(e).__name__}: {e})") from None
        res = cls(summary, tables, traces=traces)
        res._files = dict(files)
        return res

    @classmethod
    def _from_core(cls, out: Mapping[str, Any]) -> Result:
        return cls(json.loads(out["summary"]), {t: out[t] for t in TABLES}, traces=out.get("traces"))

    # -- summary ------------------------------------------------------

    @property
    def summary(self) -> dict[str, Any]:
        """``summary.json`` as a dict, in the core's key order."""
        return self._summary

    @property
    def scenario(self) -> dict[str, Any]:
        """The scenario echo (defaults filled in)."""
        return dict(self._summary.get("scenario", {}))

    @property
    def name(self) -> str:
        return str(self.scenario.get("name", ""))

    @property
    def seed(self) -> int | None:
        s = self._summary.get("seed")
        return int(s) if s is not None else None

    @property
    def traces(self) -> dict[str, bytes]:
        """Packet traces as pcapng bytes, by link direction (``"r0->r1"``); see ``[trace] pcap``.
        Built (or read) when asked for: :meth:`save` streams them to their files instead."""
        return {d: _trace_bytes(t) for d, t in self._traces.items()}

    def trace_path(self, direction: str) -> Path:
        """Where :meth:`save` wrote (or will write) the pcapng trace of ``direction``."""
        if direction not in self._traces:
            known = ", ".join(self._traces) or "none (set [trace] pcap in the scenario)"
            raise KeyError(f"no trace of {direction!r}; traced directions: {known}")
        base = self._path if self._path is not None else Path(".")
        return base / "pcap" / trace_file_name(direction)

    @property
    def path(self) -> Path | None:
        """The folder this result was saved to or loaded from, if any."""
        return self._path

    @property
    def bottleneck(self) -> str | None:
        """Name of the topology preset's bottleneck queue (e.g. ``r0->sink0``), if it has one."""
        b = self._summary.get("bottleneck")
        if isinstance(b, str):
            return b
        if isinstance(b, Mapping):
            for key in ("name", "queue"):
                if isinstance(b.get(key), str):
                    return str(b[key])
        return None

    # -- tables -------------------------------------------------------

    def arrow(self, table: str) -> pa.Table:
        """One table as a ``pyarrow.Table`` with its explicit schema."""
        if table not in TABLES:
            raise KeyError(f"no table {table!r}; tables: {', '.join(TABLES)}")
        if table not in self._arrow:
            raw = self._raw[table]
            self._arrow[table] = raw if not isinstance(raw, Mapping) else _arrow_table(raw)
        return self._arrow[table]

    def table(self, table: str) -> pd.DataFrame:
        """One table as a pandas DataFrame (cached; do not modify it in place).

        String columns are pandas' string columns, not categoricals (the Arrow
        tables and Parquet files hold them dictionary-encoded)."""
        if table not in self._frames:
            self._frames[table] = _plain_strings(self.arrow(table)).to_pandas()
        return self._frames[table]

    @property
    def flows(self) -> pd.DataFrame:
        """One row per flow."""
        return self.table("flows")

    @property
    def queues(self) -> pd.DataFrame:
        """One row per queue (classful children included)."""
        return self.table("queues")

    @property
    def series(self) -> pd.DataFrame:
        """Sampled time series, long form: ``t_s``, ``entity_kind``, ``entity_id``, ``metric``, ``value``."""
        return self.table("series")

    @property
    def events(self) -> pd.DataFrame:
        """Flow start/end and admission decisions."""
        return self.table("events")

    def metric(
        self, entity_id: str, metric: str, entity_kind: str | None = None, *, allow_missing: bool = False
    ) -> pd.DataFrame:
        """The ``t_s``/``value`` rows of one series, in time order.

        An entity or metric that the series do not hold raises ``KeyError`` listing those
        that exist, closest matches first; with ``allow_missing`` an absent series is an
        empty frame (a counter recorded only once it moves, such as ``drops_overlimit``)."""
        s = self.series
        rows = s
        if entity_kind is not None:
            rows = s[s["entity_kind"] == entity_kind]
            if rows.empty and not allow_missing:
                raise KeyError(
                    f"no series of entity kind {entity_kind!r}; kinds: {_listing(entity_kind, s['entity_kind'])}"
                )
        rows = rows[rows["entity_id"] == entity_id]
        if rows.empty and not allow_missing:
            pool = s if entity_kind is None else s[s["entity_kind"] == entity_kind]
            what = "entity" if entity_kind is None else f"{entity_kind}"
            raise KeyError(f"no {what} {entity_id!r} in the series; entities: {_listing(entity_id, pool['entity_id'])}")
        rows = rows[rows["metric"] == metric]
        if rows.empty and not allow_missing:
            pool = s[s["entity_id"] == entity_id]
            if entity_kind is not None:
                pool = pool[pool["entity_kind"] == entity_kind]
            raise KeyError(
                f"no metric {metric!r} for {entity_id!r} in the series; its metrics: {_listing(metric, pool['metric'])}"
            )
        return rows[["t_s", "value"]].sort_values("t_s", kind="stable").reset_index(drop=True)

    def queue(self, name: str) -> pd.Series:
        """The ``queues`` row of the queue called ``name``."""
        q = self.queues
        rows = q[q["name"] == name]
        if len(rows) != 1:
            raise KeyError(f"no queue named {name!r}; queues: {', '.join(map(str, q['name']))}")
        return rows.iloc[0]

    # -- looking at it ------------------------------------------------

    def plot(
        self,
        *,
        queue: str | None = None,
        flows: str | None = None,
        metric: str | None = None,
        cdf: str | None = None,
        out: str | os.PathLike[str] | None = None,
        ax: Any = None,
    ) -> Any:
        """One plot (a matplotlib Figure), as ``qoslab plot``: ``queue="r0->sink0", metric="red_avg"``,
        ``flows="cbr", metric="throughput"``, ``cdf="delay"`` or ``cdf="interarrival"``; saved to
        ``out`` (``.png``/``.svg``), drawn on ``ax``, or shown in a window. See :mod:`qoslab.plot`."""
        from .plot import plot

        return plot(self, queue=queue, flows=flows, metric=metric, cdf=cdf, out=out, ax=ax)

    # -- disk ---------------------------------------------------------

    def identity(self) -> dict[str, Any]:
        """What this result's folder holds (scenario and seed): a folder of another identity is
        replaced only with ``overwrite`` (see :mod:`qoslab._atomic`)."""
        return run_identity(self.scenario, self.seed if self.seed is not None else 0)

    def save(self, directory: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
        """Writes the result folder atomically; replaces an existing one only once the new one is
        complete. Returns the folder's path.

        An existing folder is replaced only if qoslab wrote it, and, unless ``overwrite``, only
        if it holds this same scenario and seed (a rerun): a result of another seed or scenario
        raises :class:`qoslab.ConfigError`. Another process saving to the same folder at the
        same time makes this call raise too (it never waits)."""
        target = Path(directory)
        with atomic_dir(
            target,
            option="directory",
            identity=self.identity(),
            overwrite=overwrite,
            wait=False,
            overwrite_hint="overwrite=True",
        ) as tmp:
            self.write_into(tmp)
        self._path = target
        return target

    def to_files(self, *, traces: bool = True) -> dict[str, bytes]:
        """The files of :meth:`save` as ``{name: bytes}``: ``summary.json``, the four Parquet
        tables and (with ``traces``) the ``pcap/`` traces (a sweep's worker builds them, so the
        process that stores them only writes)."""
        if self._files is not None:
            return {k: v for k, v in self._files.items() if traces or not k.startswith("pcap/")}
        import pyarrow as pa
        import pyarrow.parquet as pq

        text = json.dumps(self._summary, indent=2, ensure_ascii=False, allow_nan=True) + "\n"
        files = {"summary.json": text.encode("utf-8")}
        for t in TABLES:
            sink = pa.BufferOutputStream()
            pq.write_table(self.arrow(t), sink, **PARQUET_OPTIONS)
            files[f"{t}.parquet"] = sink.getvalue().to_pybytes()
        if traces:
            for direction, trace in self._traces.items():
                files[f"pcap/{trace_file_name(direction)}"] = _trace_bytes(trace)
        return files

    def write_into(self, folder: Path) -> None:
        """Writes ``summary.json``, the four tables and the traces into an existing folder and
        syncs them (the files of :meth:`save`, without its atomic swap: for callers that own one).
        A trace from a run is streamed to its file by the core, never held whole in memory."""
        write_files(folder, self.to_files(traces=False))
        for direction, t in self._traces.items():
            path = folder / "pcap" / trace_file_name(direction)
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(t, bytes | Path):
                write_files(path.parent, {path.name: _trace_bytes(t)})
            else:
                t.write(path)

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> Result:
        """Reads a result folder written by :meth:`save` (or by ``qoslab run``)."""
        import pyarrow.parquet as pq

        from ._atomic import KINDS, kind_of

        d = Path(directory)
        if d.exists() and not d.is_dir():
            raise NotADirectoryError(
                errno.ENOTDIR, f"{d}: is a file, not a result folder (allowed: a folder written by qoslab run)", str(d)
            )
        kind = kind_of(d)
        if kind is not None and kind != "run":
            hint = " (a run inside it: runs/KEY)" if kind == "sweep" else ""
            raise FileNotFoundError(
                errno.ENOENT,
                f"{d}: is {KINDS[kind]}, not a run result; allowed: a run's folder{hint}, or `qoslab report {d}` "
                "for the whole folder",
                str(d),
            )
        from . import _core

        try:
            try:
                summary = json.loads(_core.read_text(d / "summary.json", SUMMARY_MAX))
            except OSError as e:
                if e.errno == errno.ENOENT:
                    raise FileNotFoundError(errno.ENOENT, "missing", str(d / "summary.json")) from None
                raise
            tables = {t: pq.read_table(d / f"{t}.parquet") for t in TABLES}
            traced = summary.get("scenario", {}).get("trace", {}).get("pcap", [])
            traces: dict[str, TraceData] = {}
            for name in traced:
                file = d / "pcap" / trace_file_name(name)
                if not file.is_file():
                    raise FileNotFoundError(errno.ENOENT, str(file), str(file))
                traces[name] = file  # read when asked for
        except FileNotFoundError as e:
            raise FileNotFoundError(
                e.errno, f"{d}: not a complete result folder ({e.filename} is missing)", e.filename
            ) from None
        except (ValueError, OSError) as e:  # a damaged summary.json or Parquet file
            raise FileNotFoundError(
                errno.EIO, f"{d}: not a readable result folder ({type(e).__name__}: {e})", str(d)
            ) from None
        return cls(summary, tables, path=d, traces=traces)

    def __repr__(self) -> str:
        where = f", path={str(self._path)!r}" if self._path else ""
        return f"Result(name={self.name!r}, seed={self.seed!r}{where})"


TraceData = Union["_core.Trace", bytes, Path]
"""A trace as the core returned it (written on demand), as bytes, or as a saved file."""


def _trace_bytes(t: TraceData) -> bytes:
    if isinstance(t, bytes):
        return t
    if isinstance(t, Path):
        return t.read_bytes()
    return t.to_bytes()


def _listing(wanted: str, values: Any, *, most: int = 20) -> str:
    """The distinct ``values``, closest to ``wanted`` first (difflib), then the rest in order;
    at most ``most`` of them, with a count of those left out."""
    import difflib

    names = list(dict.fromkeys(str(v) for v in values))
    if not names:
        return "none"
    close = difflib.get_close_matches(wanted, names, n=len(names), cutoff=0.5)
    ordered = close + [n for n in names if n not in close]
    shown = ", ".join(ordered[:most])
    return shown + (f" ({len(ordered) - most} more)" if len(ordered) > most else "")


def trace_file_name(direction: str) -> str:
    """The file name of a direction's trace: ``r0->r1`` → ``r0_to_r1.pcapng``."""
    return direction.replace("->", "_to_").replace("/", "_") + ".pcapng"
