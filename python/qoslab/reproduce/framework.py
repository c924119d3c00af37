"""The reproduction framework: claims, replicated runs, ``cells.csv``, ``results.json``, ``report.md``; a
reproduction module's parts: docs/python.md, "Reproductions"; :func:`execute` writes ``OUT/<name>/``."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import hashlib
import json
import math
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

from .. import __version__
from .._atomic import Destination, reproduction_identity, write_file
from ..errors import ConfigError, ReproductionError
from ..executor import Executor, LocalExecutor, open_executor
from ..result import Result
from ..scenario import Scenario
from ..stats import Estimate
from ..store import Store, ValueStore, code_identity, run_key, scenario_hash, tree_bytes
from ..sweeps import Job, execute_job, execute_result_files
from . import figures
from .cells import Cell, Measured, NotMeasured, Score, cells_csv, compare, fmt_number
from .fidelity import fidelity_json, markdown, md_cell, md_table, score_text
from .paper import PaperData, load_paper, paper_dir

Log = Callable[[str], None]
#: A batch of runs: ``(variant, scenario, seed)`` each.
Runs = Sequence[tuple[str, Scenario, int]]
T = TypeVar("T")
K = TypeVar("K")


def pct(x: float, spec: str = ".2f") -> str:
    """``x`` (a fraction) as a percentage, ``n/a`` if not finite: the reproductions' one formatter."""
    return f"{format(100 * x, spec)}%" if math.isfinite(x) else "n/a"


def estimate(runs: Iterable[Mapping[str, Any]], key: str) -> Estimate:
    """The :class:`~qoslab.stats.Estimate` of ``key`` over runs' reduced values (one per seed)."""
    return Estimate.of(r[key] for r in runs)


def _reduction_name(fn: Callable[..., Any]) -> str:
    """``module.qualname`` of a reduction (of the function a :func:`functools.partial` wraps)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    return f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', type(fn).__name__)}"


#: The keys of a reproduction's ``results.json``, in order: the run's, then what it found.
_RUN_KEYS = ("name", "seed_file", "qoslab_version", "quick", "seeds", "wall_s")
RESULTS_KEYS = (*_RUN_KEYS, "score", "fidelity", "claims", "data")
#: What a :class:`Claim` is: a reproduced statement of the paper (counted) or a check (not).
CLAIM_KINDS = ("claim", "check")
#: Why a claim of the full run only is not checked in a quick run.
FULL_RUN_ONLY = "not run in a quick run (full run only)"


@dataclass(frozen=True)
class Claim:
    """One checkable statement of a paper and what qoslab measured (``holds`` ``None``: not checked)."""

    id: str
    text: str
    paper: str
    measured: str
    tolerance: str
    holds: bool | None
    explanation: str = ""
    kind: str = "claim"

    def __post_init__(self) -> None:
        if self.kind not in CLAIM_KINDS:
            raise ReproductionError(f"claim {self.id}: kind {self.kind!r}; allowed: {', '.join(CLAIM_KINDS)}")
        if self.holds is not True and not self.explanation.strip():
            state = "does not hold" if self.holds is False else "is not checked"
            raise ReproductionError(f"claim {self.id} {state} but gives no explanation")

    @classmethod
    def judged(cls, ok: bool | None, fail: str, *, unless: str = "", **fields: Any) -> Claim:
        """The claim ``fields`` judged by ``ok`` (``None``: the runs cannot decide), explained by
        ``fail`` unless it holds; not checked, for the reason ``unless``, when that is given."""
        if unless:
            return cls(holds=None, explanation=unless, **fields)
        return cls(holds=ok, explanation="" if ok else fail, **fields)

    @classmethod
    def skipped(cls, id: str, text: str) -> Claim:
        """A claim of the full run only, as a quick run (which runs nothing of it) lists it: not checked."""
        return cls(id, text, "see the full run", "not run", "", None, FULL_RUN_ONLY)

    @property
    def status(self) -> str:
        return {True: "holds", False: "fails", None: "not checked"}[self.holds]


@dataclass
class Figure:
    """A PNG written by the reproduction, with its caption for the report."""

    file: str
    caption: str


@dataclass
class Outcome:
    """What a reproduction returns (``sections`` in Markdown; ``testbed_cells``: on real packets)."""

    claims: list[Claim]
    data: dict[str, Any]
    sections: list[tuple[str, str]] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    cells: list[Measured | NotMeasured] = field(default_factory=list)
    testbed_cells: list[Measured | NotMeasured] = field(default_factory=list)

    @classmethod
    def join(cls, parts: Iterable[Outcome]) -> Outcome:
        """The parts' claims, sections, figures and cells in order, their data merged."""
        out = cls(claims=[], data={})
        for part in parts:
            out.data.update(part.data)
            for f in ("claims", "sections", "figures", "cells", "testbed_cells"):
                getattr(out, f).extend(getattr(part, f))
        return out


@dataclass
class Summary:
    """What :func:`execute` reports back: the outcome, where it was written, the judged cells."""

    name: str
    title: str
    quick: bool
    seeds: list[int]
    wall_s: float
    outcome: Outcome
    folder: Path
    paper: PaperData | None = None
    cells: list[Cell] = field(default_factory=list)
    testbed_cells: list[Cell] = field(default_factory=list)

    @property
    def testbed_score(self) -> Score | None:
        return Score.of(self.testbed_cells) if self.testbed_cells else None

    @property
    def counts(self) -> dict[str, int]:
        """The claims (checks apart) that hold, fail, are not checked."""
        return self._counts("claim")

    @property
    def check_counts(self) -> dict[str, int]:
        """The checks (never counted as claims) that hold, fail, are not checked."""
        return self._counts("check")

    @property
    def score(self) -> Score | None:
        """The fidelity score over the paper's cells; ``None`` for a reproduction of no paper."""
        return Score.of(self.cells) if self.paper is not None else None

    def _counts(self, kind: str) -> dict[str, int]:
        statuses = [c.status for c in self.outcome.claims if c.kind == kind]
        return {s: statuses.count(s) for s in ("holds", "fails", "not checked")}


@dataclass(kw_only=True, eq=False, repr=False)
class Context:
    """What a reproduction sees: its mode, seeds, folder, executor, paper data and store (``None``: none)."""

    name: str
    quick: bool
    seeds: list[int]
    folder: Path
    log: Log
    executor: Executor | None = None
    paper: PaperData | None = None
    testbed: bool = False
    store: ValueStore | None = None
    #: Runs taken from the store and runs computed, so far.
    stored_runs: int = field(default=0, init=False)
    computed_runs: int = field(default=0, init=False)

    def unjudged(self, min_seeds: int = 5) -> str:
        """Why a claim judged over at least ``min_seeds`` seeds is not checked in this run ("": it is)."""
        if self.quick:
            return FULL_RUN_ONLY
        n = len(self.seeds)
        return "" if n >= min_seeds else f"judged over at least {min_seeds} seeds; this run has {n}"

    def run_many(self, runs: Runs) -> list[Result]:
        """Runs every ``(variant, scenario, seed)``, each saved as ``<variant>/seed_<seed>/``; the results in order."""
        return self.run_reduced(runs, lambda res: res)

    def run_reduced(self, runs: Runs, reduce: Callable[[Result], T], *, save: bool = True) -> list[T]:
        """As :meth:`run_many`, keeping only ``reduce(result)`` of each run as it finishes;
        ``save=False`` also leaves the runs' folders unwritten."""
        return self._run(runs, lambda _, res: reduce(res), save=save, name=_reduction_name(reduce), raw=save)

    def run_indexed(self, runs: Runs, reduce: Callable[[int, Result], T], *, save: bool = True) -> list[T]:
        """As :meth:`run_reduced`, with ``reduce(i, result)`` told the run's place in ``runs``."""
        return self._run(runs, reduce, save=save, name=_reduction_name(reduce), raw=save)

    def run_grid(
        self, points: Iterable[tuple[K, str, Scenario]], reduce: Callable[[K, Result], T], *, save: bool = True
    ) -> dict[K, list[T]]:
        """Each point ``(key, variant, scenario)`` run at every seed (innermost), reduced to
        ``reduce(key, result)``; the values grouped by key in seed order."""
        grid = list(points)
        runs = [(variant, sc, seed) for _, variant, sc in grid for seed in self.seeds]
        keys = [key for key, _, _ in grid for _ in self.seeds]
        values = self._run(runs, lambda i, res: reduce(keys[i], res), save=save, name=_reduction_name(reduce), raw=save)
        out: dict[K, list[T]] = {}
        for key, value in zip(keys, values, strict=True):
            out.setdefault(key, []).append(value)
        return out

    def _key(self, i: int, n: int, variant: str, sc: Scenario, seed: int, name: str, raw: bool) -> str:
        """A run's key in the store: :func:`qoslab.store.run_key` for a run kept ``raw``; else a hash of that,
        the code's identity, the reduction's name, the run's place and variant in its batch."""
        base = run_key(scenario_hash(sc), seed)
        if raw:
            return base
        text = "\n".join(["qoslab-reduced-v1", base, code_identity(), name, str(i), str(n), variant])
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def _run(self, runs: Runs, reduce: Callable[[int, Result], T], *, save: bool, name: str, raw: bool) -> list[T]:
        """The one run-and-reduce loop (docs/decisions/reproduce.md, "One run-and-reduce loop")."""
        store = self.store
        # A saved run keeps its result folder (``STORE/runs/KEY``), a reduced one its value.
        runs_store = Store(store.root) if store is not None and raw else None
        n = len(runs)
        keys = [self._key(i, n, v, sc, seed, name, raw) for i, (v, sc, seed) in enumerate(runs)] if store else []
        slots: dict[int, T] = {}
        todo: list[int] = []

        def finish(i: int, res: Result) -> None:
            variant, _, seed = runs[i]
            if save:
                res.save(self.folder / variant / f"seed_{seed}")
            slots[i] = reduce(i, res)

        for i in range(n):
            if runs_store is not None and runs_store.has(keys[i]):
                try:
                    res = Result.from_files(runs_store.files(keys[i]))
                except (OSError, ValueError):  # a stored run that does not read is computed again
                    shutil.rmtree(runs_store.path(keys[i]), ignore_errors=True)
                else:
                    finish(i, res)
                    continue
            elif runs_store is None and store is not None:
                hit, value = store.get(keys[i])
                if hit:
                    slots[i] = value
                    continue
            todo.append(i)
        if len(todo) < n:
            self.stored_runs += n - len(todo)
            self.log(f"  {self.name}: {n - len(todo)} of {n} runs taken from the store")
        jobs = [
            Job(
                index=i,
                key="",
                seed=runs[i][2],
                point=(),
                text=runs[i][1].text,
                origin=runs[i][1].origin,
                base_dir=str(runs[i][1].base_dir),
                overrides=runs[i][1].overrides,
                max_memory=runs[i][1].limits[0],
                max_events=runs[i][1].limits[1],
                label=f"{self.name}: {runs[i][0]}",
            )
            for i in todo
        ]
        # A run to save or keep whole comes back as its folder's files, encoded by the worker.
        as_files = raw and (save or runs_store is not None)
        work: Callable[[Job], Any] = execute_result_files if as_files else execute_job
        # A Dask cluster gets every batch, whatever its thread count.
        ex = self.executor
        done: Iterator[tuple[int, Any]]
        if ex is None or (isinstance(ex, LocalExecutor) and (ex.workers == 1 or len(jobs) < 2)):
            done = ((j, work(job)) for j, job in enumerate(jobs))
            where = "in this process"
        else:
            done = ex.map_unordered(work, jobs)
            where = ex.description
        for j, out in done:
            i = todo[j]
            variant, sc, seed = runs[i]
            *parts, wall = out  # (files, wall) or (summary, tables, wall)
            res = Result.from_files(*parts) if as_files else Result(*parts)
            if runs_store is not None:
                runs_store.put(keys[i], parts[0], {"variant": variant, "seed": seed, "reproduction": self.name})
            self.log(f"  {self.name}: {variant} seed {seed}: {sc.duration} simulated in {wall:.1f} s ({where})")
            finish(i, res)
            if store is not None and runs_store is None:
                store.put(keys[i], slots[i])
            self.computed_runs += 1
        if len(slots) != n:  # pragma: no cover - map_unordered yields every index or raises
            raise ReproductionError(f"{self.name}: {n - len(slots)} runs returned no result")
        return [slots[i] for i in range(n)]

    def scenario_path(self, relative: str) -> Path:
        """A built-in scenario (``scenarios/<relative>``); see :func:`scenarios_dir`."""
        p = scenarios_dir() / relative
        if not p.is_file():
            raise ReproductionError(f"built-in scenario {relative} not found in {scenarios_dir()}")
        return p

    def run(self, variant: str, scenario: Scenario, seed: int, *, save: bool = True) -> Result:
        """One run in this process (or from the store), saved as ``<variant>/seed_<seed>/`` unless not ``save``."""
        return self._run([(variant, scenario, seed)], lambda _, res: res, save=save, name="run", raw=True)[0]

    def run_testbed(self, variant: str, scenario: Scenario, seed: int) -> Result:
        """One run on real packets (:func:`qoslab.testbed.run`; root), saved as ``<variant>/seed_<seed>/``."""
        from .. import testbed
        from ..testbed.runner import TestbedError

        t0 = time.perf_counter()
        try:
            res: Result = testbed.run(scenario, seed=seed)
        except (ConfigError, TestbedError) as e:
            # Not root, no namespaces, a scenario the testbed refuses, a process that failed.
            raise ReproductionError(f"{self.name}: --testbed: {variant} seed {seed}: {e}") from None
        res.save(self.folder / variant / f"seed_{seed}")
        self.log(
            f"  {self.name}: {variant} seed {seed}: {scenario.duration} on real packets in "
            f"{time.perf_counter() - t0:.1f} s"
        )
        return res

    def figure(self, fig: Any, file: str, caption: str) -> Figure:
        """Writes the matplotlib ``fig`` as ``file`` (:func:`.figures.save`); its entry in the report."""
        figures.save(fig, self.folder / file)
        return Figure(file, caption)


@contextmanager
def control_context(name: str, *, seeds: Sequence[int], jobs: int | None) -> Iterator[Context]:
    """A full-run :class:`Context` of reproduction ``name`` for controlled runs: its paper data,
    ``seeds``, a local pool of ``jobs`` workers, a temporary folder, progress on stderr."""
    with tempfile.TemporaryDirectory() as tmp, open_executor(jobs=jobs) as ex:
        yield Context(
            name=name,
            quick=False,
            seeds=list(seeds),
            folder=Path(tmp),
            log=lambda s: print(s, file=sys.stderr, flush=True),
            executor=ex,
            paper=load_paper(paper_dir(name)),
        )


def control_parser(
    name: str, description: str, controls: Iterable[str], seeds: int, *, several: bool = False
) -> argparse.ArgumentParser:
    """The command line of ``python -m qoslab.reproduce.<name>.controls``: the control (``several``: or
    several, comma-separated), ``--list``, ``--seeds`` (default ``seeds``) and ``--jobs``."""
    ap = argparse.ArgumentParser(prog=f"python -m qoslab.reproduce.{name}.controls", description=description)
    what = "the control, or several of one family comma-separated" if several else "the control"
    ap.add_argument("name", nargs="?", help=f"{what}: {', '.join(controls)}")
    ap.add_argument("--list", action="store_true", help="list the controls and exit")
    ap.add_argument(
        "--seeds", type=int, default=seeds, metavar="N", help=f"seeds 1..N (default {seeds}, as the full run)"
    )
    ap.add_argument("--jobs", type=int, default=None, metavar="N", help="local worker processes (default: every core)")
    return ap


def control_main(
    a: argparse.Namespace,
    controls: Mapping[str, T],
    listing: Callable[[T], str],
    body: Callable[[list[T], list[int]], None],
    *,
    several: bool = False,
) -> int:
    """Runs ``body(the controls named, seeds 1..N)`` (``--list``: prints ``listing`` of each control); a
    :class:`ReproductionError` (a bad argument) is printed on stderr, exit status 2."""
    if a.list:
        print("\n".join(map(listing, controls.values())))
        return 0
    try:
        names = [n.strip() for n in (a.name or "").split(",") if n.strip()] if several else [a.name]
        if not names or any(n not in controls for n in names):
            raise ReproductionError(f"control: {a.name!r}; allowed: {', '.join(controls)}")
        if a.seeds < 1:
            raise ReproductionError(f"--seeds: {a.seeds}; allowed: an integer >= 1")
        body([controls[n] for n in names], list(range(1, a.seeds + 1)))
    except ReproductionError as e:
        print(f"qoslab: {e}", file=sys.stderr)
        return 2
    return 0


def control_md(
    control: Any, seeds: Sequence[int], note: str, before: Sequence[Cell], after: Sequence[Cell], columns: Sequence[str]
) -> str:
    """A control's before/after table: its knob and why, then per cell of ``after`` its ``columns``, the
    paper's number and qoslab's ``mean [ci_low, ci_high] verdict`` (2 decimals) before and after."""

    def text(c: Cell | None) -> str:
        if c is None or c.qoslab is None or c.ci_low is None or c.ci_high is None:
            return "not run"
        lo, hi = fmt_number(round(c.ci_low, 2)), fmt_number(round(c.ci_high, 2))
        return f"{fmt_number(round(c.qoslab, 2))} [{lo}, {hi}] {c.verdict}"

    b = {c.key: c for c in before}
    intro = f"Control `{control.name}`: {control.knob} (seeds {', '.join(map(str, seeds))}{note}).\n"
    rows = (
        f"| {' | '.join(getattr(c, k) for k in columns)} | {c.paper} | {text(b.get(c.key))} | {text(c)} |"
        for c in after
    )
    return md_table([*columns, "paper", "before", "after"], rows, f"{intro}Why this value: {control.why}.") + "\n"


def scenarios_dir() -> Path:
    """The built-in scenarios: ``$QOSLAB_SCENARIOS``, the source tree's, a wheel's, else ``./scenarios``."""
    if env := os.environ.get("QOSLAB_SCENARIOS"):
        return Path(env)
    here = Path(__file__).resolve()
    for cand in [*(parent / "scenarios" for parent in here.parents), here.parents[1] / "_data" / "scenarios"]:
        if (cand / "examples").is_dir():
            return cand
    return Path.cwd() / "scenarios"


def folder_name(name: str) -> str:
    return name.replace("-", "_")


def _clean(v: Any) -> Any:
    """JSON-safe: NaN and infinities become null, tuples lists."""
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return {str(k): _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    if hasattr(v, "item") and callable(v.item):  # NumPy scalars
        return _clean(v.item())
    return v


def _claims_md(claims: Sequence[Claim], what: str) -> list[str]:
    mark = {True: "yes", False: "**no**", None: "not checked"}
    lines = ["| claim | paper / reference | qoslab | tolerance | holds |", "|---|---|---|---|---|"]
    lines += [
        f"| `{c.id}`: {md_cell(c.text)} | {md_cell(c.paper)} | {md_cell(c.measured)} | "
        f"{md_cell(c.tolerance)} | {mark[c.holds]} |"
        for c in claims
    ]
    explained = [f"- `{c.id}` ({c.status}): {c.explanation}" for c in claims if c.explanation]
    return lines + (["", f"### Notes on the {what}", "", *explained] if explained else [])


def render_report(module: ModuleType, s: Summary) -> str:
    """report.md: header, the score and the paper's tables, claims, checks, sections, figures."""

    def part(title: str, *body: str) -> list[str]:
        return ["", f"## {title}", "", *body]

    lines = [
        f"# {module.TITLE}",
        "",
        f"Reproduction `{s.name}` of {module.PAPER} (`[{module.SEED_FILE}]` in docs/papers.md), "
        f"qoslab {__version__}, {'quick' if s.quick else 'full'} run, seeds {', '.join(map(str, s.seeds))}.",
        *part(
            "The paper's numbers, cell by cell",
            score_text(None) if s.paper is None else markdown(s.cells, s.paper.tables, s.paper.causes).rstrip(),
        ),
    ]
    if s.testbed_cells and s.paper is not None:
        lines += part(
            "The paper's numbers on real packets (`--testbed`, `cells_testbed.csv`)",
            markdown(s.testbed_cells, s.paper.tables, s.paper.causes).rstrip(),
        )
    claims = [c for c in s.outcome.claims if c.kind == "claim"]
    checks = [c for c in s.outcome.claims if c.kind == "check"]
    lines += part(
        "Claims",
        "Measured values are means over the seeds, ± the half-width of their 95% confidence interval "
        "(Student t) when there is more than one seed.",
        "",
        *(_claims_md(claims, "claims") if claims else ["No claims."]),
    )
    if checks:
        lines += part(
            "Checks (not counted as reproduced claims)",
            "Identities of the paper's own formulas and qoslab's predictions of its own behaviour: they test "
            "the implementation, not the paper's results.",
            "",
            *_claims_md(checks, "checks"),
        )
    for title, body in s.outcome.sections:
        lines += part(title, body.strip())
    if s.outcome.figures:
        lines += part("Figures", *(f"![{f.caption}]({f.file})\n\n*{f.caption}*\n" for f in s.outcome.figures))
    return "\n".join(lines).rstrip() + "\n"


#: Seeds of a quick run: three let a cell agree at all (docs/reproductions/README.md, "Quick runs").
QUICK_SEEDS = 3


def paper_data(module: ModuleType) -> PaperData | None:
    """A module's paper data: its ``PAPER_DATA`` folder (``None``: no paper), else ``paperdata/<folder>/`` if any."""
    if hasattr(module, "PAPER_DATA"):
        return None if module.PAPER_DATA is None else load_paper(Path(module.PAPER_DATA))
    d = paper_dir(folder_name(module.NAME))
    return load_paper(d) if d.is_dir() else None


def seed_list(module: ModuleType, *, quick: bool, seeds: int | None) -> list[int]:
    """Seeds 1..N: ``seeds``, else the module's ``QUICK_SEEDS`` or ``FULL_SEEDS`` (defaults 3)."""
    quick_default = getattr(module, "QUICK_SEEDS", QUICK_SEEDS)
    if quick_default < 2:
        raise ReproductionError(
            f"{module.NAME}: QUICK_SEEDS = {quick_default}; allowed: 2 or more (a quick run judges tables)"
        )
    n = seeds if seeds is not None else (quick_default if quick else getattr(module, "FULL_SEEDS", 3))
    if n < 1:
        raise ReproductionError(f"--seeds must be at least 1, got {n}")
    return list(range(1, n + 1))


def destination(
    module: ModuleType, *, quick: bool, seeds: int | None, out: os.PathLike[str] | str, overwrite: bool = False
) -> Destination:
    """``OUT/<name>/`` as a :class:`~qoslab._atomic.Destination`, not yet entered: entering it refuses a
    folder of another mode's or seed list's reproduction unless ``overwrite``."""
    ident = reproduction_identity(module.NAME, quick, seed_list(module, quick=quick, seeds=seeds))
    return Destination(Path(out) / folder_name(module.NAME), option="--out", identity=ident, overwrite=overwrite)


def execute(
    module: ModuleType,
    *,
    quick: bool,
    seeds: int | None,
    out: os.PathLike[str] | str,
    log: Log,
    executor: Executor | None = None,
    overwrite: bool = False,
    dest: Destination | None = None,
    testbed: bool = False,
    store: os.PathLike[str] | str | None = None,
) -> Summary:
    """Runs one reproduction module and writes ``OUT/<name>/`` atomically; ``dest``: its :func:`destination`,
    entered; ``testbed``: also its set-ups on real packets; ``store``: runs kept (:mod:`qoslab.store`)."""
    if testbed and not getattr(module, "TESTBED", False):
        raise ReproductionError(
            f"{module.NAME}: --testbed: this reproduction has no set-up on real packets yet; allowed: "
            "--testbed with edge"
        )
    held = destination(module, quick=quick, seeds=seeds, out=out, overwrite=overwrite) if dest is None else None
    with held or nullcontext(dest) as d:
        assert d is not None
        name = module.NAME
        seed_list_ = seed_list(module, quick=quick, seeds=seeds)
        t0 = time.perf_counter()
        paper = paper_data(module)
        ctx = Context(
            name=name,
            quick=quick,
            seeds=seed_list_,
            folder=d.tmp,
            log=log,
            executor=executor,
            paper=paper,
            testbed=testbed,
            store=ValueStore(store) if store is not None else None,
        )
        outcome = module.reproduce(ctx)
        if ctx.store is not None:
            log(
                f"{name}: {ctx.computed_runs} runs computed, {ctx.stored_runs} taken from the store "
                f"{ctx.store.root} ({tree_bytes(ctx.store.root) / 1e6:.1f} MB)"
            )
        if paper is None and outcome.cells:
            raise ReproductionError(
                f"{name}: the reproduction returned {len(outcome.cells)} cells but has no paper data "
                f"({paper_dir(folder_name(name))} or PAPER_DATA)"
            )
        cells = compare(paper, outcome.cells) if paper is not None else []
        testbed_cells = compare(paper, outcome.testbed_cells) if paper is not None and outcome.testbed_cells else []
        wall = time.perf_counter() - t0
        folder = Path(out) / folder_name(name)
        summary = Summary(name, module.TITLE, quick, seed_list_, wall, outcome, folder, paper, cells, testbed_cells)
        run = (name, module.SEED_FILE, __version__, quick, seed_list_, round(wall, 3))
        doc: dict[str, Any] = {
            **dict(zip(_RUN_KEYS, run, strict=True)),
            "score": score.to_json() if (score := summary.score) is not None else None,
            **({"testbed_score": tb.to_json()} if (tb := summary.testbed_score) is not None else {}),
            "fidelity": fidelity_json(paper) if paper is not None else None,
            "claims": [dataclasses.asdict(c) for c in outcome.claims],
            "data": _clean(outcome.data),
        }
        if paper is not None:
            (d.tmp / "cells.csv").write_text(cells_csv(cells), encoding="utf-8", newline="")
        if testbed_cells:
            (d.tmp / "cells_testbed.csv").write_text(cells_csv(testbed_cells), encoding="utf-8", newline="")
        text = json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        (d.tmp / "results.json").write_text(text, encoding="utf-8")
        (d.tmp / "report.md").write_text(render_report(module, summary), encoding="utf-8")
        d.commit()
        return summary


def overall_score(summaries: Iterable[Summary]) -> Score | None:
    """The cells of every paper pooled (``None`` when no summary is of a paper)."""
    scores = [s.score for s in summaries if s.score is not None]
    return sum(scores, Score()) if scores else None


#: The first bytes of ``OUT/scores.json``: only a file holding them is ever replaced.
SCORES_SIGNATURE = b'{\n  "generator": "qoslab reproduce'


def write_scores(out: os.PathLike[str] | str, summaries: Sequence[Summary], *, quick: bool) -> Path:
    """``OUT/scores.json`` (atomically): each reproduction's score (``null``: no paper) and the overall one."""
    overall = overall_score(summaries)
    doc = {
        "generator": f"qoslab reproduce {__version__}",
        "quick": quick,
        "reproductions": {
            s.name: {"seeds": s.seeds, "score": sc.to_json() if (sc := s.score) is not None else None}
            for s in summaries
        },
        "overall": overall.to_json() if overall is not None else None,
    }
    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    return write_file(Path(out) / "scores.json", text.encode("utf-8"), SCORES_SIGNATURE)
