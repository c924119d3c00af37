"""One interface for running many independent jobs: a local process pool or Dask.

Sweeps (:func:`qoslab.sweep`) and reproductions hand their runs to an
:class:`Executor` and receive each result as soon as it is ready, in
completion order, so the caller can store it at once::

    with qoslab.executor.open_executor(jobs=4) as ex:            # local, 4 processes
        for index, value in ex.map_unordered(fn, items):
            ...
    with qoslab.executor.open_executor(scheduler="tcp://head:8786") as ex:   # Dask distributed
        ...

- :class:`LocalExecutor`: :class:`concurrent.futures.ProcessPoolExecutor`
  with the ``spawn`` start method (a fork of a process that holds threads,
  rich's or Dask's, is unsafe; workers of qoslab's own jobs do not import
  the user's script again, :mod:`qoslab._spawn`), ``jobs`` worker processes, by default one
  per core this process may run on. ``jobs=1`` runs in this process, with no
  pool at all (the same results; simpler tracebacks when debugging).
- :class:`DaskExecutor`: a :class:`distributed.Client` connected to a
  running scheduler. Dask is the engine for everything beyond one machine:
  a SLURM or PBS cluster started with dask-jobqueue is used by passing its
  scheduler address (see ``docs/sweeps.md``). Its workers are checked
  before they get a job (qoslab importable, the client's build), and a
  failure of the cluster is one :class:`qoslab.ClusterError`. ``dask`` and
  ``distributed`` (the extra ``qoslab[dask]``) are imported only on this path.

``fn`` must be a module-level function and ``items`` picklable; both go to
other processes (or machines) unchanged.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from types import TracebackType
from typing import Any, Protocol, TypeVar

from .errors import ClusterError, config_error

T = TypeVar("T")
R = TypeVar("R")

#: How long a Dask client waits for its scheduler before giving up (seconds);
#: ``QOSLAB_SCHEDULER_TIMEOUT_S`` in the environment replaces it.
CONNECT_TIMEOUT_S = 10.0
#: How long a sweep waits with no usable Dask worker before it stops with a
#: :class:`qoslab.ClusterError` (seconds); ``QOSLAB_NO_WORKERS_TIMEOUT_S`` replaces it.
NO_WORKERS_TIMEOUT_S = 30.0
#: How often the Dask executor asks the scheduler which workers are connected (seconds).
CHECK_EVERY_S = 1.0
#: Times a job whose finished result died with its worker is run again before the sweep stops.
MAX_LOST = 3
#: How often it looks at its jobs' futures (seconds).
POLL_S = 0.05
#: How long closing a Dask client may take (seconds).
CLOSE_TIMEOUT_S = 5.0


def _env_seconds(name: str, default: float) -> float:
    """A positive number of seconds from the environment variable ``name``, else ``default``."""
    try:
        v = float(os.environ.get(name, ""))
    except ValueError:
        return default
    return v if v > 0 else default


class Executor(Protocol):
    """What sweeps and reproductions need from an executor."""

    @property
    def workers(self) -> int:
        """How many jobs run at once (for progress messages and scaling); 0 for a Dask
        cluster that has no usable worker at the moment."""
        ...

    @property
    def description(self) -> str:
        """One line for logs: ``local pool of 2 processes``, ``dask tcp://...``."""
        ...

    def map_unordered(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[tuple[int, R]]:
        """Runs ``fn(item)`` for every item; yields ``(index, result)`` as each finishes.
        An exception raised by ``fn`` propagates (the remaining jobs are cancelled)."""
        ...

    def close(self) -> None: ...

    def __enter__(self) -> Executor: ...

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None: ...


def cores() -> int:
    """Cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class _Base:
    def close(self) -> None:  # pragma: no cover - overridden
        pass

    def __enter__(self: Any) -> Any:
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


class LocalExecutor(_Base):
    """A pool of ``jobs`` local processes (``spawn``); ``jobs=1`` runs in this process."""

    def __init__(self, jobs: int | None = None) -> None:
        if jobs is None:
            jobs = cores()
        if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
            raise config_error("--jobs", f"{jobs!r} is not allowed; allowed: an integer >= 1 (default: every core)")
        self._jobs = jobs
        self._pool: Any = None

    @property
    def workers(self) -> int:
        return self._jobs

    @property
    def description(self) -> str:
        return "this process" if self._jobs == 1 else f"local pool of {self._jobs} processes"

    def map_unordered(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[tuple[int, R]]:
        if self._jobs == 1:
            for i, item in enumerate(items):
                yield i, fn(item)
            return
        import concurrent.futures as cf

        from ._spawn import context

        if self._pool is None:
            # Workers of qoslab's own jobs do not run the user's script again (qoslab._spawn).
            self._pool = cf.ProcessPoolExecutor(max_workers=self._jobs, mp_context=context(fn))
        futures = {self._pool.submit(fn, item): i for i, item in enumerate(items)}
        try:
            for fut in cf.as_completed(futures):
                # A finished future keeps its result: drop it before yielding, or a batch of
                # thousands of runs holds every run's tables at once (about 1 MB each).
                yield futures.pop(fut), fut.result()
        finally:
            for fut in futures:
                fut.cancel()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


class DaskExecutor(_Base):
    """Jobs submitted to a Dask distributed scheduler at ``address`` (``tcp://host:8786``),
    or through an existing :class:`distributed.Client` (``client=``; it need not be the
    default client).

    - **Workers are checked before they get a job**: each worker, on connect and whenever
      one joins, runs :func:`worker_build` once; a worker where qoslab is not importable, or
      whose build identity (:func:`qoslab.store.build_identity`, what the run keys use)
      differs from this process's, is refused by name (one line through ``log``) and never
      given a job: every job is submitted with ``workers=`` the accepted ones.
    - **At most two jobs per accepted worker thread are submitted at a time**, so a worker
      that joins mid-sweep gets jobs at once, and a job whose accepted workers have all gone
      is submitted again to the ones that remain.
    - **Faults are one :class:`qoslab.ClusterError`**: the scheduler lost (at once), no
      accepted worker for ``no_workers_timeout_s`` (``QOSLAB_NO_WORKERS_TIMEOUT_S``, default
      30 s), or a job that killed ``distributed.scheduler.allowed-failures`` workers. A worker
      that dies is survived: Dask gives its jobs to the others. When qoslab made the client
      (``address``), Dask's own log lines and tracebacks about these faults are kept off
      stderr while the executor is open (after a lost scheduler, for the rest of the process:
      the client's reconnection attempts end, with tracebacks, after it is closed); a client
      passed in keeps its logging as it is.
    """

    def __init__(
        self,
        address: str | None = None,
        *,
        client: Any = None,
        timeout_s: float | None = None,
        no_workers_timeout_s: float | None = None,
        log: Callable[[str], None] | None = None,
    ) -> None:
        if (address is None) == (client is None):
            raise ValueError("give exactly one of address and client")
        self._own = client is None
        self._quiet: _QuietDask | None = None
        if client is None:
            assert address is not None
            _import_distributed(address)  # first: importing it sets its loggers' levels
            self._quiet = _QuietDask()
            try:
                client = connect(address, timeout_s=timeout_s)
            except BaseException:
                self._quiet.restore()
                raise
        self._client = client
        self._address = str(client.scheduler.address) if address is None else address
        self._no_workers_s = (
            no_workers_timeout_s
            if no_workers_timeout_s is not None
            else _env_seconds("QOSLAB_NO_WORKERS_TIMEOUT_S", NO_WORKERS_TIMEOUT_S)
        )
        self._log = log if log is not None else _stderr_line
        from .store import build_identity

        self._build = build_identity()
        #: Every worker seen (address and server id: a worker restarted on the same port is
        #: checked again): None if accepted, else why it was refused, in a few words.
        self._verdict: dict[tuple[str, str], str | None] = {}
        self._names: dict[tuple[str, str], str] = {}
        #: The accepted workers now connected, with their thread counts.
        self._live: dict[str, int] = {}
        self._connected: set[tuple[str, str]] = set()
        self._scheduler_lost = False
        try:
            self._refresh()
        except BaseException:
            self.close()
            raise

    # -- the workers ------------------------------------------------------

    def _refresh(self) -> dict[str, int]:
        """Checks the workers not seen before; returns the accepted ones now connected
        (address -> threads). A lost scheduler raises :class:`ClusterError`."""
        self._check_scheduler()
        try:
            workers: dict[str, Any] = self._client.scheduler_info(n_workers=-1).get("workers", {})
        except Exception as e:  # any failure to ask the scheduler is its loss
            self._check_scheduler()
            raise self._lost(f"{type(e).__name__}: {e}") from None
        ids = {a: (a, str(w.get("id", ""))) for a, w in workers.items()}
        new = [a for a in workers if ids[a] not in self._verdict]
        if new:
            try:
                answers = self._client.run(worker_build, workers=new, on_error="return")
            except Exception as e:  # as above
                self._check_scheduler()
                raise self._lost(f"{type(e).__name__}: {e}") from None
            for a in new:
                name = str(workers[a].get("name", a))
                self._names[ids[a]] = a if name == a else f"{name!r} ({a})"
                # A worker that left between the two calls has no answer: asked again if it returns.
                if a not in answers:
                    continue
                refusal = _refusal(answers[a], self._build)
                self._verdict[ids[a]] = refusal[0] if refusal else None
                if refusal:
                    self._log(f"qoslab: Dask worker {self._names[ids[a]]} refused: {refusal[1]}")
        self._connected = set(ids.values())
        accepted = {a for a in workers if ids[a] in self._verdict and self._verdict[ids[a]] is None}
        self._live = {a: int(workers[a].get("nthreads", 1)) for a in accepted}
        return self._live

    def _refused(self) -> list[str]:
        """The refused workers now connected, each with why in a few words."""
        return [f"{self._names[k]} ({r})" for k, r in self._verdict.items() if r and k in self._connected]

    def _check_scheduler(self) -> None:
        status = str(self._client.status)
        if status not in ("running", "newly-created"):
            raise self._lost("connection lost" if status == "connecting" else f"client {status}")

    def _lost(self, how: str) -> ClusterError:
        # The client's reconnection attempts end after close() returns, each with a traceback:
        # Dask stays quiet for the rest of this process (see close()).
        self._scheduler_lost = True
        return ClusterError(
            f"lost the Dask scheduler {self._address} ({how})",
            "start it again (and its workers), then rerun the same command",
        )

    def _no_workers(self, waited: float) -> ClusterError:
        refused = self._refused()
        if refused:
            more = f" and {len(refused) - 3} more" if len(refused) > 3 else ""
            why = f"{len(refused)} connected, all refused: " + ", ".join(refused[:3]) + more
        else:
            why = "none connected"
        return ClusterError(
            f"no usable Dask worker at {self._address} for {waited:.0f} s ({why})",
            f"start workers with the same qoslab build (dask worker {self._address}), then rerun the same command",
        )

    @property
    def workers(self) -> int:
        """Threads of the accepted workers now connected (0 when there are none)."""
        return sum(self._refresh().values())

    @property
    def description(self) -> str:
        live = self._refresh()
        n, threads, refused = len(live), sum(live.values()), len(self._refused())
        text = f"dask scheduler {self._address} ({_count(n, 'worker')}, {_count(threads, 'thread')}"
        return text + (f", {refused} refused)" if refused else ")")

    # -- running ------------------------------------------------------------

    def map_unordered(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[tuple[int, R]]:
        if not items:
            return
        import distributed

        queue = list(range(len(items)))[::-1]  # a stack: pop() gives the lowest index first
        inflight: dict[Any, tuple[int, frozenset[str]]] = {}
        lost: dict[int, int] = {}  # times a job's result was lost with its worker
        # Dask fetches each finished job's result in the background (on the client's loop):
        # a result whose worker died is computed again, so fetching it may wait, and this loop
        # goes on watching the cluster meanwhile.
        as_completed: Any = distributed.as_completed  # distributed is untyped
        fetched = as_completed(loop=self._client.loop, with_results=True, raise_errors=False)
        live = self._live
        last_check = time.monotonic()
        idle_since: float | None = None if live else last_check
        try:
            while queue or inflight:
                now = time.monotonic()
                if now - last_check >= CHECK_EVERY_S:
                    live = self._refresh()
                    last_check = now
                    for f, (i, allowed) in list(inflight.items()):
                        if live and not allowed & live.keys() and f.status in ("pending", "lost"):
                            # Its workers are gone: Dask would hold it for them forever.
                            del inflight[f]
                            f.cancel()
                            queue.append(i)
                else:
                    self._check_scheduler()
                if live:
                    idle_since = None
                elif idle_since is None:
                    idle_since = now
                elif now - idle_since >= self._no_workers_s:
                    raise self._no_workers(now - idle_since)
                window = 2 * sum(live.values())
                while queue and len(inflight) < window:
                    i = queue.pop()
                    allowed = frozenset(live)
                    # pure=False: two equal items are still two jobs (the caller stores each once).
                    f = self._client.submit(
                        fn,
                        items[i],
                        pure=False,
                        key=f"qoslab-{i}-{os.urandom(6).hex()}",
                        workers=sorted(allowed),
                        allow_other_workers=False,
                    )
                    inflight[f] = (i, allowed)
                    fetched.add(f)
                batch = fetched.next_batch(block=False) if fetched.has_ready() else []
                if not batch:
                    time.sleep(POLL_S)
                    continue
                for f, res in batch:
                    if f not in inflight:  # cancelled here, to be submitted again
                        continue
                    i, _ = inflight.pop(f)
                    if f.status == "lost" and lost.get(i, 0) < MAX_LOST:
                        # Its worker died with the result before this client fetched it, and
                        # the scheduler lives on: the job runs again (the store keeps each
                        # result once); a job lost MAX_LOST times is the cluster's failure.
                        self._check_scheduler()
                        lost[i] = lost.get(i, 0) + 1
                        f.release()
                        queue.append(i)
                        continue
                    yield i, self._result(f, i, res)
        finally:
            if inflight and str(self._client.status) == "running":
                with contextlib.suppress(Exception):
                    self._client.cancel(list(inflight))

    def _result(self, f: Any, i: int, res: Any) -> Any:
        """``res``, the result of job ``i``'s future ``f`` (released: the cluster keeps a result
        while a future refers to it); the job's own exception if it raised one."""
        if f.status == "finished":
            f.release()
            return res
        if f.status == "error":
            from distributed import KilledWorker

            if isinstance(res, KilledWorker):
                tries = getattr(res, "allowed_failures", None)
                last = getattr(getattr(res, "last_worker", None), "address", "?")
                raise ClusterError(
                    f"job {i} was on {'' if tries is None else f'{tries + 1} '}Dask workers that all died "
                    f"while running it (the last: {last})",
                    "see the workers' logs (memory?), then rerun the same command",
                    item=i,
                ) from None
            f.result()  # raises the job's own exception, with its traceback
        self._check_scheduler()
        raise self._lost(f"job {i} was {f.status} by the cluster")

    def close(self) -> None:
        try:
            if self._own:
                with contextlib.suppress(Exception):
                    self._client.close(timeout=CLOSE_TIMEOUT_S)
        finally:
            if self._quiet is not None and not self._scheduler_lost:
                self._quiet.restore()
                self._quiet = None


def worker_build() -> dict[str, str]:
    """Runs on each Dask worker before it is given a job: the worker's build identity. It is
    pickled by reference, so a worker without qoslab fails to load it (and is refused)."""
    from .store import build_identity

    return dict(build_identity())


def _refusal(answer: Any, build: dict[str, str]) -> tuple[str, str] | None:
    """Why a worker that answered ``answer`` to :func:`worker_build` is refused, in a few words
    and in full; None if it is not."""
    if isinstance(answer, BaseException):
        # Dask wraps an error raised while loading the function in a plain Exception.
        inner = answer.args[0] if type(answer) is Exception and answer.args else answer
        err = inner if isinstance(inner, BaseException) else answer
        return "qoslab not importable", f"qoslab is not importable there ({type(err).__name__}: {err})"
    if not isinstance(answer, dict):
        return "qoslab check failed", f"its qoslab check answered {answer!r}"
    diff = [k for k in sorted(build) if answer.get(k) != build[k]]
    if not diff:
        return None
    shown = ", ".join(
        f"{k} {str(answer.get(k))[:12] or '(none)'} there, {build[k][:12] or '(none)'} here" for k in diff
    )
    return "another qoslab build", (
        f"its qoslab build is not this one ({shown}); every worker needs the build the client runs, "
        "which the run keys name"
    )


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'s' if n != 1 else ''}"


def _stderr_line(text: str) -> None:
    sys.stderr.write(text.rstrip("\n") + "\n")
    sys.stderr.flush()


class _QuietDask:
    """Keeps Dask's client-side log lines (tracebacks of a lost scheduler, reconnection
    attempts) off stderr until :meth:`restore`: qoslab says what happened in one line.
    Dask gives some of its loggers their own level (``distributed.client``), so each
    existing logger of these families is raised, and new ones inherit from the roots."""

    ROOTS = ("distributed", "tornado", "asyncio")

    def __init__(self) -> None:
        import logging

        manager = logging.Logger.manager
        names = [n for n in manager.loggerDict if n in self.ROOTS or n.startswith(tuple(f"{r}." for r in self.ROOTS))]
        self._levels: dict[str, int] = {}
        for n in {*self.ROOTS, *names}:
            logger = logging.getLogger(n)
            self._levels[n] = logger.level
            logger.setLevel(logging.CRITICAL + 1)

    def restore(self) -> None:
        import logging

        for n, level in self._levels.items():
            logging.getLogger(n).setLevel(level)


def _import_distributed(address: str) -> Any:
    try:
        import distributed
    except ImportError as e:
        raise config_error(
            "--scheduler",
            f"{address}: the 'distributed' package is not installed ({e}); "
            "allowed: install qoslab's Dask extra (pip install 'qoslab[dask]')",
        ) from None
    return distributed


def connect(address: str, *, timeout_s: float | None = None) -> Any:
    """A :class:`distributed.Client` for the scheduler at ``address``; an unreachable or
    malformed address is a :class:`qoslab.ConfigError` naming it (exit 2 on the command line)."""
    distributed = _import_distributed(address)
    if timeout_s is None:
        timeout_s = _env_seconds("QOSLAB_SCHEDULER_TIMEOUT_S", CONNECT_TIMEOUT_S)
    if not isinstance(address, str) or not address.strip():
        raise config_error("--scheduler", "empty address; allowed: a Dask scheduler address such as tcp://host:8786")
    from distributed.comm.registry import backends

    scheme, sep, rest = address.partition("://")
    if (sep and (scheme not in backends or not rest)) or (not sep and ":" not in address):
        raise config_error(
            "--scheduler",
            f"{address!r} is not a scheduler address; allowed: "
            f"SCHEME://HOST:PORT with SCHEME one of {', '.join(sorted(backends))}, "
            f"or HOST:PORT (tcp)",
        )
    client: Any = distributed.Client  # distributed is untyped
    try:
        return client(address, timeout=f"{timeout_s}s", set_as_default=False)
    except (OSError, TimeoutError, ValueError) as e:
        raise config_error(
            "--scheduler",
            f"{address}: cannot reach a Dask scheduler within {timeout_s:g} s "
            f"({type(e).__name__}: {e}); allowed: the address of a running scheduler, "
            f"e.g. tcp://host:8786",
        ) from None


def open_executor(*, jobs: int | None = None, scheduler: str | None = None, client: Any = None) -> Executor:
    """The executor for ``jobs`` local processes (default: every core), a Dask scheduler
    address, or an existing Dask client. At most one of the three."""
    given = [x is not None for x in (jobs, scheduler, client)]
    if sum(given) > 1:
        raise config_error("--jobs/--scheduler", "alternatives; give at most one")
    if scheduler is not None:
        return DaskExecutor(scheduler)
    if client is not None:
        return DaskExecutor(client=client)
    return LocalExecutor(jobs)


__all__ = [
    "CONNECT_TIMEOUT_S",
    "NO_WORKERS_TIMEOUT_S",
    "DaskExecutor",
    "Executor",
    "LocalExecutor",
    "connect",
    "cores",
    "open_executor",
    "worker_build",
]
