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
  scheduler address (see ``docs/sweeps.md``). ``dask`` and ``distributed``
  are imported only on this path.

``fn`` must be a module-level function and ``items`` picklable; both go to
other processes (or machines) unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from types import TracebackType
from typing import Any, Protocol, TypeVar

from .errors import config_error

T = TypeVar("T")
R = TypeVar("R")

#: How long a Dask client waits for its scheduler before giving up (seconds);
#: ``QOSLAB_SCHEDULER_TIMEOUT_S`` in the environment replaces it.
CONNECT_TIMEOUT_S = 10.0


def _connect_timeout() -> float:
    text = os.environ.get("QOSLAB_SCHEDULER_TIMEOUT_S", "")
    try:
        v = float(text)
    except ValueError:
        return CONNECT_TIMEOUT_S
    return v if v > 0 else CONNECT_TIMEOUT_S


class Executor(Protocol):
    """What sweeps and reproductions need from an executor."""

    @property
    def workers(self) -> int:
        """How many jobs run at once (for progress messages and scaling)."""
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
    or to an existing :class:`distributed.Client` (``client=``)."""

    def __init__(self, address: str | None = None, *, client: Any = None, timeout_s: float | None = None) -> None:
        if (address is None) == (client is None):
            raise ValueError("give exactly one of address and client")
        self._own = client is None
        if client is None:
            assert address is not None
            client = connect(address, timeout_s=timeout_s)
        self._client = client
        self._address = str(client.scheduler.address) if address is None else address

    @property
    def workers(self) -> int:
        info = self._client.scheduler_info()
        threads = sum(int(w.get("nthreads", 1)) for w in info.get("workers", {}).values())
        return max(1, threads)

    @property
    def description(self) -> str:
        return f"dask scheduler {self._address} ({self.workers} worker threads)"

    def map_unordered(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[tuple[int, R]]:
        import distributed

        as_completed: Any = distributed.as_completed  # distributed is untyped
        if not items:
            return
        # pure=False: two equal items are still two jobs (each run is stored once by the caller).
        pending: dict[str, tuple[int, Any]] = {}
        for i, item in enumerate(items):
            f = self._client.submit(fn, item, pure=False, key=f"qoslab-{i}-{os.urandom(6).hex()}")
            pending[f.key] = (i, f)
        try:
            for fut in as_completed([f for _, f in pending.values()]):
                # Release each result once read: the cluster keeps a result while a future
                # refers to it.
                i, _ = pending.pop(fut.key)
                res = fut.result()
                fut.release()
                yield i, res
        finally:
            self._client.cancel([f for _, f in pending.values()])

    def close(self) -> None:
        if self._own:
            self._client.close()


def connect(address: str, *, timeout_s: float | None = None) -> Any:
    """A :class:`distributed.Client` for the scheduler at ``address``; an unreachable or
    malformed address is a :class:`qoslab.ConfigError` naming it (exit 2 on the command line)."""
    try:
        import distributed
    except ImportError as e:  # dask is an extra: pip install 'qoslab[dask]'
        raise config_error(
            "--scheduler",
            f"{address}: the 'distributed' package is not installed ({e}); allowed: install the Dask extra, "
            "pip install 'qoslab[dask]', or run on this machine's cores (--jobs N)",
        ) from None
    if timeout_s is None:
        timeout_s = _connect_timeout()
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


__all__ = ["CONNECT_TIMEOUT_S", "DaskExecutor", "Executor", "LocalExecutor", "connect", "cores", "open_executor"]
