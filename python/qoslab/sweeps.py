"""Sweeps: a scenario run over a Cartesian grid of overrides × seeds.

::

    df = qoslab.sweep("scenarios/examples/red_dumbbell.toml",
                      grid={"topology.bottleneck.queue.max_p": ["0.02", "0.1"],
                            "topology.bottleneck.queue.min_th": "3..5"},
                      seeds=3, jobs=2, out="results/red_sweep")

- **The grid.** Each key is a ``--set`` key path; its values are a list, a
  comma list (``"1e-4,1e-3"``, ``"5ms,10ms"``) or an inclusive integer
  range ``"a..b"``. Every point of the grid is validated before anything
  runs or is written; seeds are 1..N.
- **Execution.** Each run is a job of :mod:`qoslab.executor` (a local
  process pool on every core, or Dask). Its result comes back to this
  process and is stored at once in the content-addressed store
  (:mod:`qoslab.store`) under ``OUT/runs/``; a run already there is not run
  again, so an interrupted sweep resumes where it stopped.
- **Combined results** (written when every run is in the store):

  - ``OUT/dataset/``: one Parquet dataset, hive-partitioned by the grid
    keys, long form: the grid keys, ``seed``, ``run_key``, ``entity_kind``
    (``run``, ``group``, ``queue``), ``entity``, ``metric``, ``value``
    (the rows of :func:`qoslab.tables.run_metrics` of every run);
  - ``OUT/summary.parquet`` and ``OUT/summary.csv``: per grid point,
    entity and metric, ``n``, ``mean``, ``std`` and ``ci95`` (the half-width
    of the Student-t 95 % interval over seeds);
  - ``OUT/sweep.json``: scenario, grid, seeds, build identity, every run's
    key, and how many runs were executed and how many came from the store;
  - ``OUT/scenario.toml``: the scenario as given.

A sweep file (TOML) holds what the command line would say::

    [sweep]
    scenario = "../examples/red_dumbbell.toml"   # relative to the sweep file
    seeds = 3
    set = ["duration=20s"]                        # fixed overrides (optional)

    [sweep.grid]
    "topology.bottleneck.queue.max_p" = [0.02, 0.05, 0.1]
    "topology.bottleneck.queue.min_th" = "3..7"

A ``[sweep]`` table inside a scenario file is refused: the scenario format
refuses unknown keys (``docs/decisions/python.md#sweeps-the-result-store-show-plot-report-and-pcap``).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import SimulationError, config_error
from .scenario import Scenario, override_value_text, split_override

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from . import _core
    from .executor import Executor

GridValues = Sequence[Any] | str
Progress = Callable[[int, int, str], None]


# -- the grid ----------------------------------------------------------


def parse_values(key: str, spec: GridValues, *, origin: str = "--grid") -> list[str]:
    """The override values of one grid key: ``"a..b"`` (inclusive integers), a comma list,
    or a list of TOML values (numbers, strings, booleans)."""
    if isinstance(spec, str):
        text = spec.strip()
        if ".." in text and "," not in text:
            lo, _, hi = text.partition("..")
            try:
                a, b = int(lo), int(hi)
            except ValueError:
                raise config_error(
                    origin,
                    f"{key}: range {text!r} is not a..b with integers a <= b; allowed: e.g. 1..10",
                    origin=origin,
                ) from None
            if b < a:
                raise config_error(
                    origin, f"{key}: range {text!r} is empty (b < a); allowed: a..b with a <= b", origin=origin
                )
            return [str(v) for v in range(a, b + 1)]
        values = [v.strip() for v in text.split(",")]
        if not any(values):
            raise config_error(
                origin,
                f"{key}: no values; allowed: a comma list (1e-4,1e-3 or 5ms,10ms) or an integer range a..b",
                origin=origin,
            )
        if not all(values):
            raise config_error(
                origin, f"{key}: empty value in {text!r}; allowed: a comma list without empty items", origin=origin
            )
        return values
    if isinstance(spec, Sequence) and not isinstance(spec, (bytes, bytearray)):
        if len(spec) == 0:
            raise config_error(origin, f"{key}: no values; allowed: a non-empty list", origin=origin)
        return [override_value_text((key, v)) for v in spec]
    raise config_error(origin, f"{key}: {spec!r} is not a list of values, a comma list or a range a..b", origin=origin)


def parse_grid_option(text: str) -> tuple[str, list[str]]:
    """One ``--grid key.path=v1,v2,...`` (or ``key.path=a..b``) option."""
    key, eq, values = split_override(text)
    key = key.strip()
    if not eq or not key:
        raise config_error(
            "--grid",
            f"{text!r} is not key.path=values; allowed: e.g. "
            f"topology.bottleneck.queue.max_p=0.02,0.1 or traffic.0.flows=1..10",
        )
    return key, parse_values(key, values)


def _column_value(text: str) -> Any:
    """A grid value as it appears in the combined tables: int, float, bool or string."""
    t = text.strip()
    for conv in (int, float):
        try:
            return conv(t)
        except ValueError:
            pass
    if t in ("true", "false"):
        return t == "true"
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "\"'":
        return t[1:-1]
    return t


def _column_type(values: Sequence[Any]) -> type:
    kinds = {type(v) for v in values}
    if kinds <= {int}:
        return int
    if kinds <= {int, float}:
        return float
    if kinds <= {bool}:
        return bool
    return str


# -- the plan ----------------------------------------------------------


@dataclass(frozen=True)
class Job:
    """One run: what a worker needs (all picklable), and where it goes."""

    index: int
    key: str
    seed: int
    point: tuple[tuple[str, str], ...]
    #: The point's validated scenario as the core holds it: pickled to a worker as its echo and
    #: read back there without being parsed or validated again.
    scenario: _core.Scenario | None = None
    #: Where the scenario came from and its overrides (the store's metadata). A job made without
    #: ``scenario`` (``reproduce/framework.py`` still makes them from ``text``) is loaded and
    #: validated where it runs.
    origin: str = "<string>"
    overrides: tuple[str, ...] = ()
    text: str = ""
    base_dir: str = "."
    #: The limits on the run's estimated peak memory (bytes) and events (None: the defaults, or
    #: the held scenario's own), checked again where the job runs (:meth:`Scenario.limits`).
    max_memory: int | None = None
    max_events: int | None = None
    #: What the run is called in an error (a reproduction's variant; a sweep's point if empty).
    label: str = ""

    def held(self) -> _core.Scenario:
        """The scenario to run, within the job's limits: the held one when they are its own
        (nothing validated again), else checked against them."""
        if self.scenario is not None:
            want = (self.max_memory, self.max_events)
            if all(w is None or w == h for w, h in zip(want, self.scenario.limits, strict=True)):
                return self.scenario
            return self.scenario.with_limits(self.max_memory, self.max_events)
        from . import _core

        return _core.Scenario.load(
            self.text,
            self.origin,
            list(self.overrides),
            self.base_dir,
            max_memory=self.max_memory,
            max_events=self.max_events,
        )


@dataclass
class Plan:
    """A validated sweep: the scenario, the grid, the seeds, every job."""

    scenario: Scenario
    grid: dict[str, list[str]]
    seeds: list[int]
    jobs: list[Job] = field(default_factory=list)
    build: dict[str, str] = field(default_factory=dict)

    @property
    def keys(self) -> list[str]:
        return list(self.grid)


def load_sweep_file(path: str | os.PathLike[str]) -> tuple[Path, dict[str, Any]] | None:
    """``(scenario path, [sweep] table)`` if ``path`` is a sweep file, ``None`` if it is a
    scenario. A scenario with a ``[sweep]`` table is refused (see the module doc)."""
    import tomllib

    from .errors import ScenarioFileError
    from .scenario import read_text

    p = Path(path)
    try:
        doc = tomllib.loads(read_text(p))
    except (ScenarioFileError, tomllib.TOMLDecodeError):
        return None  # not ours to report: the scenario loader says what is wrong with it
    if "sweep" not in doc:
        return None
    origin = str(p)
    if set(doc) != {"sweep"}:
        raise config_error(
            "sweep",
            "a [sweep] table cannot sit in a scenario file (the scenario format refuses "
            "unknown keys); allowed: a sweep file holding only [sweep], with "
            'scenario = "path/to/scenario.toml"',
            origin=origin,
        )
    table = doc["sweep"]
    if not isinstance(table, dict):
        raise config_error("sweep", "must be a table", origin=origin)
    unknown = set(table) - {"scenario", "seeds", "set", "grid"}
    if unknown:
        raise config_error(
            "sweep", f"unknown key(s) {', '.join(sorted(unknown))}; allowed: scenario, seeds, set, grid", origin=origin
        )
    sc = table.get("scenario")
    if not isinstance(sc, str) or not sc:
        raise config_error(
            "sweep.scenario", "missing; allowed: the path of a scenario file, relative to the sweep file", origin=origin
        )
    return (p.parent / sc, table)


def plan(
    scenario: Scenario | str | os.PathLike[str],
    *,
    grid: Mapping[str, GridValues] | None = None,
    seeds: int | Sequence[int] | None = None,
    overrides: Iterable[str] = (),
    max_memory: int | None = None,
    max_events: int | None = None,
) -> Plan:
    """Validates a sweep without running it: every grid point is loaded by the core, so a bad
    key path or value is a :class:`qoslab.ConfigError` naming it, before anything is written.
    ``max_memory`` (bytes) and ``max_events`` replace the limits on each run's estimated peak
    memory and events (default 8 GiB and 1e10, or a :class:`Scenario`'s own)."""
    from .store import build_identity, run_key, scenario_hash

    if grid is not None and not isinstance(grid, Mapping):
        raise config_error(
            "grid",
            f"got {type(grid).__name__} {grid!r}; allowed: a dict of key path to values, e.g. "
            '{"topology.bottleneck.queue.max_p": "0.02,0.1"}',
            origin="<python>",
        )
    if (seeds is not None and not isinstance(seeds, int | Sequence)) or isinstance(seeds, str):
        raise config_error("seeds", f"got {type(seeds).__name__} {seeds!r}; allowed: N (seeds 1..N) or a list of seeds")
    file_table: dict[str, Any] = {}
    if not isinstance(scenario, Scenario):
        sweep_file = load_sweep_file(scenario)
        if sweep_file is not None:
            path, file_table = sweep_file
            extra = file_table.get("set", [])
            if not isinstance(extra, list) or not all(isinstance(x, str) for x in extra):
                raise config_error("sweep.set", 'must be a list of "key.path=value" strings', origin=str(scenario))
            scenario = Scenario.load(path, overrides=[*extra, *overrides], max_memory=max_memory, max_events=max_events)
        else:
            scenario = Scenario.load(scenario, overrides=overrides, max_memory=max_memory, max_events=max_events)
    else:
        if max_memory is not None or max_events is not None:
            mem, ev = scenario.limits
            scenario = Scenario(
                scenario.text,
                origin=scenario.origin,
                base_dir=scenario.base_dir,
                overrides=scenario.overrides,
                max_memory=mem if max_memory is None else max_memory,
                max_events=ev if max_events is None else max_events,
            )
            if not overrides:
                scenario.validate()
        if overrides:
            scenario = scenario.with_overrides(*overrides)

    full: dict[str, list[str]] = {}
    file_grid = file_table.get("grid", {})
    if not isinstance(file_grid, dict):
        raise config_error("sweep.grid", "must be a table of key.path = [values]")
    for k, v in file_grid.items():
        full[str(k)] = parse_values(str(k), v, origin="sweep.grid")
    for k, v in (grid or {}).items():
        full[k] = parse_values(k, v)

    if seeds is None:
        seeds = file_table.get("seeds", 1)
    if isinstance(seeds, bool):
        raise config_error("--seeds", f"{seeds!r}; allowed: an integer >= 1 or a list of seeds")
    if isinstance(seeds, int):
        if seeds < 1:
            raise config_error("--seeds", f"{seeds} is too small; allowed: an integer >= 1")
        seed_list = list(range(1, seeds + 1))
    else:
        try:
            seed_list = [int(s) for s in seeds]
        except (TypeError, ValueError):
            raise config_error("--seeds", f"{seeds!r}; allowed: distinct integers in [0, 2^64)") from None
        if not seed_list or len(set(seed_list)) != len(seed_list) or not all(0 <= s < 2**64 for s in seed_list):
            raise config_error("--seeds", f"{list(seeds)!r}; allowed: distinct integers in [0, 2^64)")

    build = build_identity()
    p = Plan(scenario=scenario, grid=full, seeds=seed_list, build=build)
    keys = list(full)
    index = 0
    for combo in itertools.product(*(full[k] for k in keys)):
        point = tuple(zip(keys, combo, strict=True))
        sc = scenario.with_overrides(*(f"{k}={v}" for k, v in point)) if point else scenario
        sha = scenario_hash(sc)
        for seed in seed_list:
            p.jobs.append(
                Job(
                    index=index,
                    key=run_key(sha, seed, build),
                    seed=seed,
                    point=point,
                    scenario=sc.held(),
                    origin=sc.origin,
                    overrides=sc.overrides,
                    max_memory=sc.limits[0],
                    max_events=sc.limits[1],
                )
            )
            index += 1
    return p


# -- running -----------------------------------------------------------


def _run_core(job: Job) -> Any:
    """The core's raw result of ``job``; a failed run's error names the run (``--jobs`` runs many
    at once, and a message alone would not say which one failed)."""
    from . import _core

    try:
        return _core.run(job.held(), job.seed)
    except SimulationError as e:
        raise SimulationError(f"{job.label + ' ' if job.label else ''}{_describe(job)}: {e}") from None


def execute_job(job: Job) -> tuple[dict[str, Any], dict[str, Any], float]:
    """Runs one job (in a worker process or on a Dask worker): ``(summary, Arrow tables, wall s)``."""
    from .result import TABLES, Result

    t0 = time.perf_counter()
    raw = _run_core(job)
    res = Result._from_core(raw)
    return res.summary, {t: res.arrow(t) for t in TABLES}, time.perf_counter() - t0


def execute_to_files(job: Job) -> tuple[dict[str, bytes], float]:
    """Runs one job and builds its stored files (:func:`qoslab.store.run_files`) where it ran,
    so the encoding work is parallel too and the storing process only writes bytes."""
    from .result import Result
    from .store import run_files

    summary, tables, wall = execute_job(job)
    return run_files(Result(summary, tables)), wall


def execute_result_files(job: Job) -> tuple[dict[str, bytes], float]:
    """Runs one job and encodes its result folder's files (:meth:`qoslab.Result.to_files`,
    traces included) where it ran: ``(files, wall s)``. A reproduction's saved run goes to
    its folder and its store as these bytes, encoded once and in parallel."""
    from .result import Result

    t0 = time.perf_counter()
    files = Result._from_core(_run_core(job)).to_files()
    return files, time.perf_counter() - t0


class _Reporter:
    """Progress over runs: a rich bar on a terminal, plain lines on stderr otherwise."""

    def __init__(self, total: int, *, rich_bar: bool) -> None:
        self.total = total
        self.t0 = time.monotonic()
        self.bar: Any = None
        self.task: Any = None
        self.room = 80
        if rich_bar:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            console = Console(stderr=True, highlight=False)
            self.bar = Progress(
                TextColumn("sweep"),
                BarColumn(bar_width=20),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                TextColumn("{task.description}"),
                console=console,
                transient=False,
            )
            # What is left of the line for the description: the columns before it take
            # 5 + 20 + 2 x len(total) + 1 + 7 + 7 characters and a space between each.
            self.room = max(10, console.width - (5 + 20 + 2 * len(str(total)) + 1 + 7 + 7 + 6) - 1)
            self.bar.start()
            self.task = self.bar.add_task("", total=total)

    def __call__(self, done: int, total: int, what: str) -> None:
        if self.bar is not None:
            # The bar fits its line (80 columns too): a long description is cut, not wrapped.
            if len(what) > self.room:
                what = what[: self.room - 1] + "…"
            self.bar.update(self.task, completed=done, description=what)
        else:
            sys.stderr.write(f"sweep: {done}/{total} runs ({time.monotonic() - self.t0:.1f} s): {what}\n")
            sys.stderr.flush()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def console_progress(total: int) -> _Reporter:
    """The progress reporter of ``qoslab sweep``: rich on a terminal, plain lines off one."""
    return _Reporter(total, rich_bar=sys.stderr.isatty())


def _describe(job: Job) -> str:
    where = ", ".join(f"{k.rsplit('.', 1)[-1]}={v}" for k, v in job.point)
    return f"{where + ' ' if where else ''}seed {job.seed}"


@dataclass
class Outcome:
    """What :func:`run_plan` did: the combined frame, counts and where it is."""

    frame: pd.DataFrame
    summary: pd.DataFrame
    executed: int
    reused: int
    wall_s: float
    out: Path
    executor: str


def run_plan(p: Plan, *, out: str | os.PathLike[str], executor: Executor, progress: Progress | None = None) -> Outcome:
    """Runs the jobs of ``p`` missing from the store ``out``; writes the combined results.
    A :class:`qoslab.ClusterError` (the Dask cluster failed) is raised again with how many
    runs the store keeps and how to resume."""
    from .errors import ClusterError
    from .store import Store

    t0 = time.perf_counter()
    out = Path(out)
    store = Store(out)
    store.runs.mkdir(parents=True, exist_ok=True)
    store.clean_partial()
    todo = [j for j in p.jobs if not store.has(j.key)]
    # Two grid points that normalize to the same scenario share a key: run it once.
    unique = list({j.key: j for j in todo}.values())
    reused = len(p.jobs) - len(todo)
    done = reused
    total = len(p.jobs)
    try:
        where = executor.description
        if progress is not None:
            progress(done, total, f"{reused} from the store, {len(unique)} to run on {where}")
        for i, (files, wall) in executor.map_unordered(execute_to_files, unique):
            job = unique[i]
            store.put(
                job.key,
                files,
                {
                    "seed": job.seed,
                    "point": dict(job.point),
                    "origin": job.origin,
                    "overrides": list(job.overrides),
                    "build": p.build,
                    "wall_s": round(wall, 3),
                },
            )
            done += sum(1 for j in todo if j.key == job.key)
            if progress is not None:
                progress(done, total, f"{_describe(job)} in {wall:.1f} s")
    except ClusterError as e:
        cause = e.cause if e.item is None else f"{e.cause} [{_describe(unique[e.item])}]"
        raise ClusterError(
            cause, f"{done} of {total} runs are kept in {out}; {e.remedy} to resume", item=e.item
        ) from None
    frame = combine(p, store)
    summ = point_summary(frame, p.keys)
    executed = len(unique)
    _write_outputs(
        p,
        out,
        frame,
        summ,
        executed=executed,
        reused=reused,
        wall=time.perf_counter() - t0,
        executor=where,
    )
    return Outcome(
        frame=frame,
        summary=summ,
        executed=executed,
        reused=reused,
        wall_s=time.perf_counter() - t0,
        out=out,
        executor=where,
    )


def combine(p: Plan, store: Any) -> pd.DataFrame:
    """The long-form metrics of every run of ``p``, with the grid keys (typed), ``seed`` and
    ``run_key`` as leading columns, in plan order."""
    import pandas as pd

    typed = {k: [_column_value(v) for v in vs] for k, vs in p.grid.items()}
    types = {k: _column_type(vs) for k, vs in typed.items()}
    parts = []
    for job in p.jobs:
        m = store.metrics(job.key)
        lead: dict[str, Any] = {}
        for k, v in job.point:
            val = _column_value(v)
            lead[k] = types[k](val) if types[k] is not str else str(val)
        lead["seed"] = job.seed
        lead["run_key"] = job.key
        for i, (k, v) in enumerate(lead.items()):
            m.insert(i, k, v)
        parts.append(m)
    frame: pd.DataFrame = pd.concat(parts, ignore_index=True)
    for k, t in types.items():
        dtype: Any = {int: "int64", float: "float64", bool: "bool", str: "object"}[t]
        frame[k] = frame[k].astype(dtype)
    frame["seed"] = frame["seed"].astype("uint64")
    frame.attrs["grid_keys"] = list(p.grid)
    return frame


def point_summary(frame: pd.DataFrame, keys: Sequence[str] | None = None) -> pd.DataFrame:
    """Per grid point, entity and metric: ``n``, ``mean``, ``std`` (ddof 1) and ``ci95``, the
    half-width of the Student-t 95 % confidence interval over seeds (NaN for one seed)."""
    from .stats import t975

    keys = list(keys if keys is not None else frame.attrs.get("grid_keys", []))
    by = [*keys, "entity_kind", "entity", "metric"]
    finite = frame[by].copy()
    finite["value"] = frame["value"].astype(float).where(lambda v: v.abs() != math.inf)
    g = finite.groupby(by, sort=False, dropna=False)["value"]
    out = g.agg(n="count", mean="mean", std="std").reset_index()
    n = out["n"].astype(int)
    t = n.map(lambda k: t975(k - 1) if k > 1 else math.nan)
    out["ci95"] = t * out["std"] / n.clip(lower=1).pow(0.5)
    out.loc[n < 2, ["std", "ci95"]] = math.nan
    out["n"] = n
    return out[[*by, "n", "mean", "std", "ci95"]]


def _write_outputs(
    p: Plan,
    out: Path,
    frame: pd.DataFrame,
    summ: pd.DataFrame,
    *,
    executed: int,
    reused: int,
    wall: float,
    executor: str,
) -> None:
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.dataset as ds  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    from ._atomic import atomic_dir
    from .result import PARQUET_OPTIONS

    table = pa.Table.from_pandas(frame, preserve_index=False).replace_schema_metadata(None)
    with atomic_dir(out / "dataset") as tmp:
        if p.keys:
            ds.write_dataset(
                table,
                tmp,
                format="parquet",
                partitioning=p.keys,
                partitioning_flavor="hive",
                basename_template="part-{i}.parquet",
                existing_data_behavior="overwrite_or_ignore",
            )
        else:
            pq.write_table(table, tmp / "part-0.parquet", **PARQUET_OPTIONS)
    stable = pa.Table.from_pandas(summ, preserve_index=False).replace_schema_metadata(None)
    _atomic_file(out / "summary.parquet", lambda path: pq.write_table(stable, path, **PARQUET_OPTIONS))
    _atomic_file(out / "summary.csv", lambda path: summ.to_csv(path, index=False))
    _atomic_file(out / "scenario.toml", lambda path: Path(path).write_text(p.scenario.to_toml(), encoding="utf-8"))
    from . import __version__
    from ._atomic import scenario_digest

    doc = {
        "qoslab_version": __version__,
        "scenario": p.scenario.origin,
        "scenario_sha256": scenario_digest(p.scenario.echo),
        "name": p.scenario.name,
        "overrides": list(p.scenario.overrides),
        "grid": p.grid,
        "grid_types": {k: str(frame[k].dtype) for k in p.keys},
        "seeds": p.seeds,
        "build": p.build,
        "executor": executor,
        "runs": [{"key": j.key, "seed": j.seed, "point": dict(j.point)} for j in p.jobs],
        "executed": executed,
        "reused": reused,
        "wall_s": round(wall, 3),
    }
    _atomic_file(
        out / "sweep.json", lambda path: Path(path).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    )


def sweep_identity(p: Plan) -> dict[str, Any]:
    """What a sweep folder holds: the name and digest of its base scenario (every ``--set``
    applied, the grid not). Other grids and seeds of the same scenario share its store."""
    from ._atomic import scenario_digest

    return {"kind": "sweep", "name": p.scenario.name, "scenario": scenario_digest(p.scenario.echo)}


def _sweep_identity_of(out: Path) -> dict[str, Any] | None:
    """The identity of the sweep in ``out``: its ``sweep.json``'s, else its marker's (a sweep
    that stopped before writing ``sweep.json``)."""
    from ._atomic import MARKER

    try:
        doc = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        doc = None
    if isinstance(doc, dict) and "scenario_sha256" in doc:
        return {"kind": "sweep", "name": doc.get("name"), "scenario": doc["scenario_sha256"]}
    try:
        mark = json.loads((out / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    ident = mark.get("identity") if isinstance(mark, dict) else None
    if isinstance(ident, dict) and ident.get("kind") == "sweep" and "scenario" in ident:
        return {"kind": "sweep", "name": ident.get("name"), "scenario": ident["scenario"]}
    return None


@contextlib.contextmanager
def sweep_folder(p: Plan, out: str | os.PathLike[str], *, overwrite: bool = False) -> Iterator[Path]:
    """Checks and locks the sweep folder ``out`` before anything runs (held until the sweep is
    written): refused (``ConfigError`` naming ``--out``) if it is a path qoslab did not write,
    another kind of result (a run, a reproduction) or inside one, cannot be written, is being
    written by another sweep, or holds a sweep of another base scenario (unless
    ``overwrite``). A sweep of the same scenario resumes from its store. A new folder is
    marked as a sweep's at once (:data:`qoslab._atomic.MARKER`); if the sweep fails before it
    stored any run, the folder it created is removed again."""
    from ._atomic import (
        MARKER,
        _absolute,
        _acquire,
        _missing_folders,
        _release,
        _written_by_qoslab,
        check_kind,
        lock_path,
    )
    from .store import Store

    if not str(out).strip():
        raise config_error("--out", "is empty; allowed: a folder name, e.g. results/sweep_NAME")
    target = _absolute(Path(out), "--out")
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise config_error("--out", f"{str(out)!r} exists and is not a folder; choose another --out")
    check_kind(target, "sweep", shown=Path(out))
    if target.is_dir() and any(target.iterdir()) and not _written_by_qoslab(target):
        raise config_error(
            "--out",
            f"{str(out)!r} exists and is not a sweep folder qoslab wrote; qoslab never writes into a "
            "folder it did not create: choose a new folder",
        )
    made = _missing_folders(target)  # the folder and its parents this sweep creates
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        lock = lock_path(target)
        fd = _acquire(lock, wait=False, target=Path(out), option="--out")
    except OSError as e:
        raise config_error("--out", f"{str(out)!r} cannot be written: {e.strerror or e}") from None
    failed = False
    try:
        check_kind(target, "sweep", shown=Path(out))  # again, now that we hold the lock
        old = _sweep_identity_of(target)
        new = sweep_identity(p)
        if old is not None and old != new and not overwrite:
            raise config_error(
                "--out",
                f"{str(out)!r} holds a sweep of scenario {old['name']!r} (digest {str(old['scenario'])[:12]}); "
                f"this sweep is of {new['name']!r} (digest {new['scenario'][:12]}). qoslab does not replace a "
                "sweep of another scenario: add --overwrite to write it there anyway (the store keeps both "
                "scenarios' runs), or choose another --out",
            )
        if not (target / MARKER).is_file():
            from . import __version__

            try:
                target.mkdir(exist_ok=True)
                marker = {"qoslab_version": __version__, "identity": new}
                _atomic_file(
                    target / MARKER,
                    lambda path: Path(path).write_text(json.dumps(marker) + "\n", encoding="utf-8"),
                )
            except OSError as e:
                raise config_error("--out", f"{str(out)!r} cannot be written: {e.strerror or e}") from None
        yield target
    except BaseException:
        failed = True
        raise
    finally:
        _release(lock, fd)
        # A failed start (no run stored) leaves no folder behind that it created.
        if failed and made and not Store(target).stored():
            import shutil

            shutil.rmtree(target, ignore_errors=True)
            for d in made[1:]:
                with contextlib.suppress(OSError):
                    d.rmdir()


def _atomic_file(target: Path, write: Callable[[Path], Any]) -> None:
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    try:
        write(tmp)
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()


def read_dataset(out: str | os.PathLike[str]) -> pd.DataFrame:
    """The combined long-form frame of a finished sweep folder (``OUT/dataset``)."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    meta = json.loads((Path(out) / "sweep.json").read_text(encoding="utf-8"))
    keys = list(meta["grid"])
    arrow = {"int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_()}
    part = (
        ds.partitioning(pa.schema([(k, arrow.get(meta["grid_types"][k], pa.string())) for k in keys]), flavor="hive")
        if keys
        else None
    )
    d = ds.dataset(Path(out) / "dataset", format="parquet", partitioning=part)
    frame: pd.DataFrame = d.to_table().to_pandas()
    lead = [*keys, "seed", "run_key"]
    frame = frame[lead + [c for c in frame.columns if c not in lead]]
    frame.attrs["grid_keys"] = keys
    return frame


def sweep(
    scenario: Scenario | str | os.PathLike[str],
    *,
    grid: Mapping[str, GridValues] | None = None,
    seeds: int | Sequence[int] | None = None,
    overrides: Iterable[str] = (),
    jobs: int | None = None,
    scheduler: str | None = None,
    client: Any = None,
    out: str | os.PathLike[str] | None = None,
    progress: bool | Progress = False,
    overwrite: bool = False,
    max_memory: int | None = None,
    max_events: int | None = None,
) -> pd.DataFrame:
    """Runs ``scenario`` over ``grid`` × ``seeds`` and returns the combined long-form DataFrame.

    - ``grid``: ``{key.path: values}``; values a list, a comma list or ``"a..b"``.
    - ``seeds``: N (seeds 1..N) or a list of seeds; default: the sweep file's, else 1.
    - ``jobs`` (local processes, default every core), ``scheduler`` (a Dask scheduler address)
      or ``client`` (a :class:`distributed.Client`): at most one.
    - ``out``: the sweep folder (default ``results/sweep_<scenario name>``); runs already in
      its store are not run again. A folder holding a sweep of another base scenario is
      refused unless ``overwrite`` (see :func:`sweep_folder`).
    - ``progress``: ``True`` for the command line's reporter, or a callable
      ``(done, total, what)``.
    - ``max_memory`` (bytes), ``max_events``: the limits on each run's estimated peak memory
      and events (default 8 GiB and 1e10); a run beyond them is refused before anything runs.

    A failure of the Dask cluster (scheduler lost, no usable worker) raises
    :class:`qoslab.ClusterError`; the runs finished before it are kept, and the same call
    resumes from them.

    The per-point means and confidence intervals: :func:`point_summary` of the frame, also
    written to ``OUT/summary.parquet``.
    """
    from .executor import open_executor

    p = plan(scenario, grid=grid, seeds=seeds, overrides=overrides, max_memory=max_memory, max_events=max_events)
    folder = Path(out) if out is not None else default_out(p)
    with (
        sweep_folder(p, folder, overwrite=overwrite),
        open_executor(jobs=jobs, scheduler=scheduler, client=client) as ex,
    ):
        reporter: _Reporter | None = None
        cb: Progress | None
        if progress is True:
            reporter = console_progress(len(p.jobs))
            cb = reporter
        else:
            cb = progress or None
        try:
            o = run_plan(p, out=folder, executor=ex, progress=cb)
        finally:
            if reporter is not None:
                reporter.close()
    return o.frame


def default_out(p: Plan) -> Path:
    import re

    return Path("results") / ("sweep_" + (re.sub(r"[^A-Za-z0-9._-]+", "_", p.scenario.name).lstrip(".") or "x"))


__all__ = [
    "Job",
    "Outcome",
    "Plan",
    "combine",
    "default_out",
    "execute_job",
    "execute_to_files",
    "load_sweep_file",
    "parse_grid_option",
    "parse_values",
    "plan",
    "point_summary",
    "read_dataset",
    "run_plan",
    "sweep",
    "sweep_folder",
    "sweep_identity",
]
