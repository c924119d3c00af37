"""The reproduction framework: claims, replicated runs, results.json, report.md.

A reproduction is a module with ``NAME``, ``TITLE``, ``SEED_FILE`` (the paper's
key in docs/papers.md, e.g. ``"Claypool00"``; ``results.json`` keeps the field name
``seed_file``), ``PAPER`` and ``def reproduce(ctx: Context) -> Outcome``. It runs its variants through
``ctx.run(variant, scenario, seed)`` for every seed in ``ctx.seeds``, turns
the results into :class:`Claim` s, and returns them with the raw data behind
every claim and figure and its report sections. :func:`execute` does the
rest: the output folder ``OUT/<name>/`` (hyphens as underscores) holding

- ``<variant>/seed_<n>/``: the standard results of each run;
- ``cells.csv``: the paper's every number beside qoslab's, judged by the one
  verdict rule (:mod:`.cells`), for a reproduction of a paper;
- ``results.json``: ``name, seed_file, qoslab_version, quick, seeds, wall_s, score, fidelity,
  claims, data``;
- ``report.md``: the score and the paper's tables cell by cell first, then every claim and
  check, every interpretation, and the PNG figures.

A paper reproduction's numbers are ``paperdata/<folder>/`` (:func:`.cells.load_paper`), or
the folder a module names in ``PAPER_DATA``; ``PAPER_DATA = None`` says the module
reproduces no paper's tables (``examples``): it keeps its claims and reports no score. The
paper data are loaded before any run, so a malformed file fails first.

The folder is assembled under a hidden temporary name and renamed into
place at the end, so an interrupted reproduction never leaves a folder that
looks complete. Claims hold or not on the mean over seeds; the 95% CI is
shown beside it. A claim that does not hold must say why (``explanation``);
nobody tunes a model until a claim passes. A *check* (``Claim(kind="check")``:
the paper's formula against itself, qoslab's prediction of its own behaviour)
is reported apart and never counted as a reproduced claim.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from .._atomic import Destination, reproduction_identity
from ..errors import ReproductionError
from ..result import Result
from ..scenario import Scenario
from ..stats import Estimate
from .cells import Cell, Measured, NotMeasured, PaperData, Score, cells_csv, compare, load_paper, paper_dir
from .fidelity import fidelity_json, markdown, md_cell, score_text

if TYPE_CHECKING:  # pragma: no cover
    from ..executor import Executor
    from ..store import Store, ValueStore

Log = Callable[[str], None]
T = TypeVar("T")
K = TypeVar("K")


def _identity(res: Result) -> Result:
    return res


def pct(x: float, spec: str = ".2f") -> str:
    """``x`` (a fraction) as a percentage, ``n/a`` if not finite: the reproductions' one formatter."""
    return f"{format(100 * x, spec)}%" if math.isfinite(x) else "n/a"


def estimate(runs: Iterable[Mapping[str, Any]], key: str) -> Estimate:
    """The :class:`~qoslab.stats.Estimate` of ``key`` over runs' reduced values (one per seed)."""
    return Estimate.of(r[key] for r in runs)


def _reduction_name(fn: Callable[..., Any]) -> str:
    """``module.qualname`` of a reduction (of the function a :func:`functools.partial` wraps)."""
    import functools

    while isinstance(fn, functools.partial):
        fn = fn.func
    return f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', type(fn).__name__)}"


def _stored_result(store: Store, key: str) -> Result | None:
    """Run ``key``'s result from ``store``, or ``None`` if it is not there; a stored run that
    does not read (a damaged file) is removed, to be computed again."""
    import shutil

    if not store.has(key):
        return None
    try:
        return Result.from_files(store.files(key))
    except (OSError, ValueError):
        shutil.rmtree(store.path(key), ignore_errors=True)
        return None


#: The keys of a reproduction's ``results.json``, in order.
RESULTS_KEYS = (
    "name",
    "seed_file",
    "qoslab_version",
    "quick",
    "seeds",
    "wall_s",
    "score",
    "fidelity",
    "claims",
    "data",
)

#: What a :class:`Claim` is: a reproduced statement of the paper (counted) or a check (not).
CLAIM_KINDS = ("claim", "check")


@dataclass(frozen=True)
class Claim:
    """One checkable statement of a paper and what qoslab measured.

    ``holds`` is ``True``/``False``, or ``None`` when the claim is not checked
    in this kind of run (e.g. a full-run-only claim in a quick run). Unless
    it holds, ``explanation`` must say why. ``kind`` is ``"claim"`` (a statement
    of the paper's text, counted) or ``"check"`` (an identity of the paper's own
    formulas, or qoslab's prediction of its own behaviour: reported, never counted).
    """

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
        """The claim ``fields`` judged by ``ok``, explained by ``fail`` unless it holds (``ok`` None:
        the runs could not decide it); or, when ``unless`` gives the reason this run cannot judge
        it (a quick run, too few seeds), not checked with that reason. Every reproduction's claims
        are judged this one way."""
        if unless:
            return cls(holds=None, explanation=unless, **fields)
        return cls(holds=ok, explanation="" if ok else fail, **fields)

    @property
    def status(self) -> str:
        return {True: "holds", False: "fails", None: "not checked"}[self.holds]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "text": self.text,
            "paper": self.paper,
            "measured": self.measured,
            "tolerance": self.tolerance,
            "holds": self.holds,
            "explanation": self.explanation,
            "kind": self.kind,
        }


@dataclass
class Figure:
    """A PNG written by the reproduction, with its caption for the report."""

    file: str
    caption: str


@dataclass
class Outcome:
    """What a reproduction returns: claims, raw data, report sections (Markdown), figures,
    and its values of the paper's cells (:class:`~.cells.Measured`, joined with the paper
    data and judged by :func:`execute`; :class:`~.cells.NotMeasured` for a cell of a covered
    table that qoslab cannot measure, with the reason)."""

    claims: list[Claim]
    data: dict[str, Any]
    sections: list[tuple[str, str]] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    cells: list[Measured | NotMeasured] = field(default_factory=list)
    #: Its values of the paper's cells measured on real packets (``--testbed``), judged by the
    #: same rule into ``cells_testbed.csv``; empty without the testbed.
    testbed_cells: list[Measured | NotMeasured] = field(default_factory=list)


@dataclass
class Summary:
    """What :func:`execute` reports back: the outcome and where it was written."""

    name: str
    title: str
    quick: bool
    seeds: list[int]
    wall_s: float
    outcome: Outcome
    folder: Path
    paper: PaperData | None = None
    cells: list[Cell] = field(default_factory=list)
    #: The cells measured on the testbed (``--testbed``), judged; empty without it.
    testbed_cells: list[Cell] = field(default_factory=list)

    @property
    def testbed_score(self) -> Score | None:
        """The fidelity score of the testbed's cells (``None`` without them)."""
        return Score.of(self.testbed_cells) if self.testbed_cells else None

    @property
    def counts(self) -> dict[str, int]:
        """The claims (checks apart) that hold, fail, are not checked."""
        return _status_counts(c for c in self.outcome.claims if c.kind == "claim")

    @property
    def check_counts(self) -> dict[str, int]:
        """The checks (never counted as claims) that hold, fail, are not checked."""
        return _status_counts(c for c in self.outcome.claims if c.kind == "check")

    @property
    def score(self) -> Score | None:
        """The fidelity score over the paper's cells; ``None`` for a reproduction of no paper."""
        return Score.of(self.cells) if self.paper is not None else None


def _status_counts(claims: Iterable[Claim]) -> dict[str, int]:
    c = {"holds": 0, "fails": 0, "not checked": 0}
    for cl in claims:
        c[cl.status] += 1
    return c


class Context:
    """What a reproduction sees: mode, seeds, where to write, how to run, the paper's data.

    :meth:`run_many` hands a batch of runs (variants × seeds) to the
    executor (:mod:`qoslab.executor`: a local pool on every core by default,
    or Dask); :meth:`run` is one run in this process.
    """

    def __init__(
        self,
        *,
        name: str,
        quick: bool,
        seeds: list[int],
        folder: Path,
        log: Log,
        executor: Executor | None = None,
        paper: PaperData | None = None,
        testbed: bool = False,
        store: ValueStore | None = None,
    ) -> None:
        self.name = name
        self.quick = quick
        #: Also run the reproduction's testbed set-ups on real packets (``--testbed``).
        self.testbed = testbed
        self.seeds = seeds
        self.folder = folder
        self.log = log
        self.executor = executor
        #: The paper's numbers (``None`` for a reproduction of no paper): which cells and tables exist.
        self.paper = paper
        #: Where each run's result (or reduced value) is kept by key, so that a reproduction run
        #: again takes what it already has (``None``: nothing kept).
        self.store = store
        #: Runs taken from the store and runs computed, so far.
        self.stored_runs = 0
        self.computed_runs = 0

    def run_many(self, runs: Sequence[tuple[str, Scenario, int]]) -> list[Result]:
        """Runs every ``(variant, scenario, seed)`` through the executor, saves each as
        ``<variant>/seed_<seed>/`` as it finishes, and returns the results in the order given
        (the same bytes as one by one: each run depends on its scenario and seed alone)."""
        return self.run_reduced(runs, _identity)

    def run_reduced(
        self, runs: Sequence[tuple[str, Scenario, int]], reduce: Callable[[Result], T], *, save: bool = True
    ) -> list[T]:
        """As :meth:`run_many`, but keeps only ``reduce(result)`` of each run, as it finishes: a
        study of thousands of runs would otherwise hold every result's tables in memory (about
        1 MB a run). ``save=False`` also leaves the runs' folders unwritten; the caller then saves
        what it kept (each run can be redone from its scenario and seed)."""
        return self._run(runs, lambda _, res: reduce(res), save=save, name=_reduction_name(reduce), raw=save)

    def run_indexed(
        self, runs: Sequence[tuple[str, Scenario, int]], reduce: Callable[[int, Result], T], *, save: bool = True
    ) -> list[T]:
        """As :meth:`run_reduced`, with ``reduce(i, result)`` told the run's place in ``runs`` (a
        grid's reduction that depends on the grid point)."""
        return self._run(runs, reduce, save=save, name=_reduction_name(reduce), raw=save)

    def run_grid(
        self, points: Iterable[tuple[K, str, Scenario]], reduce: Callable[[K, Result], T], *, save: bool = True
    ) -> dict[K, list[T]]:
        """A reproduction's grid: each point ``(key, variant, scenario)`` run at every seed (the
        seeds innermost), each run reduced to ``reduce(key, result)`` as it finishes, the values
        grouped by key in seed order (a key given twice gathers both points' runs). Saves as
        :meth:`run_many` unless not ``save``; the runs go through the one run-and-reduce loop."""
        grid = list(points)
        runs = [(variant, sc, seed) for _, variant, sc in grid for seed in self.seeds]
        keys = [key for key, _, _ in grid for _ in self.seeds]
        values = self._run(runs, lambda i, res: reduce(keys[i], res), save=save, name=_reduction_name(reduce), raw=save)
        out: dict[K, list[T]] = {}
        for key, value in zip(keys, values, strict=True):
            out.setdefault(key, []).append(value)
        return out

    def _key(self, i: int, n: int, variant: str, sc: Scenario, seed: int, name: str, raw: bool) -> str:
        """A run's key in the store. A run kept ``raw`` (a saved one) keeps its result, under
        the sweep store's key (scenario, seed, build: :func:`qoslab.store.run_key`); the others
        keep their reduced value, under that key with the Python code's identity, the
        reduction's name and the run's place and variant in its batch (what the reduction may
        read besides the result)."""
        import hashlib

        from ..store import code_identity, run_key, scenario_hash

        base = run_key(scenario_hash(sc), seed)
        if raw:
            return base
        text = "\n".join(["qoslab-reduced-v1", base, code_identity(), name, str(i), str(n), variant])
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def _run(
        self,
        runs: Sequence[tuple[str, Scenario, int]],
        reduce: Callable[[int, Result], T],
        *,
        save: bool,
        name: str,
        raw: bool,
    ) -> list[T]:
        """The one run-and-reduce loop. Runs found in the store are taken from it; every other run
        goes to the executor at once (no batch waits for its slowest run; in this process without
        a pool to gain from), is reduced as it finishes and kept in the store."""
        from ..executor import LocalExecutor
        from ..store import Store
        from ..sweeps import Job, execute_job, execute_result_files

        store = self.store
        # A saved run keeps its result folder in the sweep engine's store (``STORE/runs/KEY``,
        # the same Parquet files as its folder under OUT); a reduced one its value.
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
            if runs_store is not None:
                res = _stored_result(runs_store, keys[i])
                if res is None:
                    todo.append(i)
                else:
                    finish(i, res)
                continue
            got: tuple[bool, Any] = store.get(keys[i]) if store is not None else (False, None)
            hit, value = got
            if hit:
                slots[i] = value
            else:
                todo.append(i)
        if len(todo) < len(runs):
            self.stored_runs += len(runs) - len(todo)
            self.log(f"  {self.name}: {len(runs) - len(todo)} of {len(runs)} runs taken from the store")
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
        # A Dask cluster gets every batch, whatever its thread count (the runs are the
        # cluster's, not this machine's).
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
            if as_files:
                files, wall = out
                res = Result.from_files(files)
                if runs_store is not None:
                    runs_store.put(keys[i], files, {"variant": variant, "seed": seed, "reproduction": self.name})
            else:
                summary, tables, wall = out
                res = Result(summary, tables)
            self.log(f"  {self.name}: {variant} seed {seed}: {sc.duration} simulated in {wall:.1f} s ({where})")
            finish(i, res)
            if store is not None and runs_store is None:
                store.put(keys[i], slots[i])
            self.computed_runs += 1
        if len(slots) != len(runs):  # pragma: no cover - map_unordered yields every index or raises
            raise ReproductionError(f"{self.name}: {len(runs) - len(slots)} runs returned no result")
        return [slots[i] for i in range(len(runs))]

    def scenario_path(self, relative: str) -> Path:
        """A built-in scenario (``scenarios/<relative>``); see :func:`scenarios_dir`."""
        p = scenarios_dir() / relative
        if not p.is_file():
            raise ReproductionError(f"built-in scenario {relative} not found in {scenarios_dir()}")
        return p

    def run(self, variant: str, scenario: Scenario, seed: int, *, save: bool = True) -> Result:
        """Runs one replication in this process (or takes it from the store) and saves it as
        ``<variant>/seed_<seed>/`` (unless not ``save``)."""
        return self._run([(variant, scenario, seed)], lambda _, res: res, save=save, name="run", raw=True)[0]

    def run_testbed(self, variant: str, scenario: Scenario, seed: int) -> Result:
        """Runs one replication on real packets (:func:`qoslab.testbed.run`: network namespaces,
        qoslab-router, the traffic generators; root) and saves it as ``<variant>/seed_<seed>/``."""
        from .. import testbed
        from ..errors import ConfigError
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

    def figure_path(self, file: str) -> Path:
        return self.folder / file


@contextmanager
def control_context(name: str, *, seeds: Sequence[int], jobs: int | None) -> Iterator[Context]:
    """A full-run :class:`Context` of reproduction ``name`` for controlled runs: its paper data,
    ``seeds``, a local pool of ``jobs`` workers (every core by default), runs in a temporary
    folder removed on exit, progress on stderr."""
    import sys
    import tempfile

    from ..executor import open_executor

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


def scenarios_dir() -> Path:
    """Where the built-in scenarios are: ``$QOSLAB_SCENARIOS``, else the
    ``scenarios/`` folder of the source tree this package sits in, else the
    copy an installed wheel carries (``qoslab/_data/scenarios``), else
    ``./scenarios``."""
    env = os.environ.get("QOSLAB_SCENARIOS")
    if env:
        return Path(env)
    here = Path(__file__).resolve()
    for parent in here.parents:
        cand = parent / "scenarios"
        if (cand / "examples").is_dir():
            return cand
    packaged = here.parents[1] / "_data" / "scenarios"
    if (packaged / "examples").is_dir():
        return packaged
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
    lines = [
        "| claim | paper / reference | qoslab | tolerance | holds |",
        "|---|---|---|---|---|",
    ]
    mark = {True: "yes", False: "**no**", None: "not checked"}
    for c in claims:
        lines.append(
            f"| `{c.id}`: {md_cell(c.text)} | {md_cell(c.paper)} | {md_cell(c.measured)} | "
            f"{md_cell(c.tolerance)} | {mark[c.holds]} |"
        )
    explained = [c for c in claims if c.explanation]
    if explained:
        lines += ["", f"### Notes on the {what}", ""]
        for c in explained:
            lines.append(f"- `{c.id}` ({c.status}): {c.explanation}")
    return lines


def render_report(module: ModuleType, s: Summary) -> str:
    """report.md: header, the score and the paper's tables cell by cell, claims, checks,
    explanations, sections, figures."""
    from .. import __version__

    o = s.outcome
    mode = "quick" if s.quick else "full"
    lines = [
        f"# {module.TITLE}",
        "",
        f"Reproduction `{s.name}` of {module.PAPER} (`[{module.SEED_FILE}]` in docs/papers.md), "
        f"qoslab {__version__}, {mode} run, seeds {', '.join(map(str, s.seeds))}.",
        "",
        "## The paper's numbers, cell by cell",
        "",
    ]
    if s.paper is None:
        lines.append(score_text(None))
    else:
        lines.append(markdown(s.cells, s.paper.tables, s.paper.causes, level=3).rstrip())
    if s.testbed_cells and s.paper is not None:
        lines += [
            "",
            "## The paper's numbers on real packets (`--testbed`, `cells_testbed.csv`)",
            "",
            markdown(s.testbed_cells, s.paper.tables, s.paper.causes, level=3).rstrip(),
        ]
    claims = [c for c in o.claims if c.kind == "claim"]
    checks = [c for c in o.claims if c.kind == "check"]
    lines += [
        "",
        "## Claims",
        "",
        "Measured values are means over the seeds, ± the half-width of their 95% confidence interval "
        "(Student t) when there is more than one seed.",
        "",
    ]
    lines += _claims_md(claims, "claims") if claims else ["No claims."]
    if checks:
        lines += [
            "",
            "## Checks (not counted as reproduced claims)",
            "",
            "Identities of the paper's own formulas and qoslab's predictions of its own behaviour: they test "
            "the implementation, not the paper's results.",
            "",
            *_claims_md(checks, "checks"),
        ]
    for title, body in o.sections:
        lines += ["", f"## {title}", "", body.strip()]
    if o.figures:
        lines += ["", "## Figures", ""]
        for f in o.figures:
            lines += [f"![{f.caption}]({f.file})", "", f"*{f.caption}*", ""]
    return "\n".join(lines).rstrip() + "\n"


#: Seeds of a quick run. A cell judged on one seed is ``uncertain`` by the rule; with two the
#: 95 % interval is mean ± 12.7 s/sqrt(2) (t with 1 degree of freedom), so a cell agrees only when
#: its two seeds lie within 0.16 tol of each other; with three, ± 4.30 s/sqrt(3), within about
#: 0.8 tol. Three seeds let a quick run's tables agree at all (docs/decisions.md).
QUICK_SEEDS = 3


def paper_data(module: ModuleType) -> PaperData | None:
    """The paper's numbers of a reproduction module: its ``PAPER_DATA`` folder when it names
    one (``None``: no paper, no score), else ``paperdata/<folder>/`` when that exists."""
    if hasattr(module, "PAPER_DATA"):
        where = module.PAPER_DATA
        return None if where is None else load_paper(Path(where))
    d = paper_dir(folder_name(module.NAME))
    return load_paper(d) if d.is_dir() else None


def seed_list(module: ModuleType, *, quick: bool, seeds: int | None) -> list[int]:
    """Seeds 1..N: ``seeds``, else the module's ``QUICK_SEEDS`` (default :data:`QUICK_SEEDS`,
    at least 2) for a quick run, else its ``FULL_SEEDS`` (default 3)."""
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
    """The :class:`~qoslab._atomic.Destination` of ``OUT/<name>/`` (not yet entered): entering it
    checks, locks and prepares the folder, and refuses one holding another mode's or seed
    list's reproduction unless ``overwrite``."""
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
    """Runs one reproduction module and writes ``OUT/<name>/`` atomically; its batches of
    runs go to ``executor`` (default: one run at a time in this process). ``dest``: the
    folder's :func:`destination`, already entered (the command line enters every
    reproduction's before the first runs); by default it is entered here. ``testbed``: also
    its set-ups on real packets (a module with ``TESTBED = True``), their cells judged into
    ``cells_testbed.csv``. ``store``: a folder that keeps every saved run's result folder
    (``runs/KEY``, :class:`qoslab.store.Store`) and every other run's reduced value
    (``values/``, :class:`qoslab.store.ValueStore`), so that the reproduction run again (after an
    interruption, say) recomputes none of the runs it holds."""
    if testbed and not getattr(module, "TESTBED", False):
        raise ReproductionError(
            f"{module.NAME}: --testbed: this reproduction has no set-up on real packets yet; allowed: "
            "--testbed with edge"
        )
    if dest is None:
        with destination(module, quick=quick, seeds=seeds, out=out, overwrite=overwrite) as d:
            return execute(
                module,
                quick=quick,
                seeds=seeds,
                out=out,
                log=log,
                executor=executor,
                dest=d,
                testbed=testbed,
                store=store,
            )
    name = module.NAME
    seed_list_ = seed_list(module, quick=quick, seeds=seeds)
    target = Path(out) / folder_name(name)
    t0 = time.perf_counter()
    tmp = dest.tmp
    paper = paper_data(module)
    from ..store import ValueStore, tree_bytes

    ctx = Context(
        name=name,
        quick=quick,
        seeds=seed_list_,
        folder=tmp,
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
    summary = Summary(
        name=name,
        title=module.TITLE,
        quick=quick,
        seeds=seed_list_,
        wall_s=wall,
        outcome=outcome,
        folder=target,
        paper=paper,
        cells=cells,
        testbed_cells=testbed_cells,
    )
    from .. import __version__

    score = summary.score
    doc: dict[str, Any] = {
        "name": name,
        "seed_file": module.SEED_FILE,
        "qoslab_version": __version__,
        "quick": quick,
        "seeds": seed_list_,
        "wall_s": round(wall, 3),
        "score": score.to_json() if score is not None else None,
        **({"testbed_score": tb.to_json()} if (tb := summary.testbed_score) is not None else {}),
        "fidelity": fidelity_json(paper) if paper is not None else None,
        "claims": [c.to_json() for c in outcome.claims],
        "data": _clean(outcome.data),
    }
    if paper is not None:
        with open(tmp / "cells.csv", "w", encoding="utf-8", newline="") as f:
            f.write(cells_csv(cells))
    if testbed_cells:
        with open(tmp / "cells_testbed.csv", "w", encoding="utf-8", newline="") as f:
            f.write(cells_csv(testbed_cells))
    with open(tmp / "results.json", "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2, ensure_ascii=False, allow_nan=False)
        f.write("\n")
    with open(tmp / "report.md", "w", encoding="utf-8") as f:
        f.write(render_report(module, summary))
    dest.commit()
    return summary


def overall_score(summaries: Iterable[Summary]) -> Score | None:
    """The cells of every paper pooled (``None`` when no summary is of a paper): agrees over all
    the cells compared, so each cell weighs the same whichever paper it is from."""
    scores = [s.score for s in summaries if s.score is not None]
    if not scores:
        return None
    total = Score()
    for sc in scores:
        total = total + sc
    return total


#: The first bytes of ``OUT/scores.json``: only a file holding them is ever replaced.
SCORES_SIGNATURE = b'{\n  "generator": "qoslab reproduce'


def write_scores(out: os.PathLike[str] | str, summaries: Sequence[Summary], *, quick: bool) -> Path:
    """``OUT/scores.json`` (atomically): every reproduction's score (``null`` for one of no paper)
    and the overall score over the papers' cells pooled."""
    from .. import __version__
    from .._atomic import write_file

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
