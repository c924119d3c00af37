"""A real Dask cluster for the tests: ``dask scheduler`` and ``dask worker`` as separate
processes on 127.0.0.1, as a user starts them.

Ports: the scheduler takes a free one (``--port 0``) and tells it through its scheduler file,
the workers and nannies take free ones, so tests running at once never collide. Clean-up:
each process leads its own process group (the nanny's worker process is in it), which
:meth:`Cluster.close` kills; each also gets SIGKILL if the test process dies
(``PR_SET_PDEATHSIG``), and a worker whose scheduler is gone stops after ``--death-timeout``
(:data:`DEATH_TIMEOUT_S`).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

DASK = str(Path(sys.executable).with_name("dask"))
#: How long a process may take to come up on a loaded 2-core machine (seconds).
START_TIMEOUT_S = 90.0
#: A worker (and a nanny's worker process) gives up after this long without its scheduler
#: (seconds): long enough to start on a loaded machine, short enough to clean up after itself.
DEATH_TIMEOUT_S = 60


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    os.setsid()
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class Cluster:
    """A scheduler and workers in ``folder`` (scheduler file, logs)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.address = ""
        self._client = None
        self._killed: set[str] = set()

    def _spawn(self, name: str, args: list[str], env: Mapping[str, str] | None = None) -> subprocess.Popen[bytes]:
        log = open(self.folder / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process
        full_env = {**os.environ, **(env or {})}
        p = subprocess.Popen(
            args, stdout=log, stderr=subprocess.STDOUT, env=full_env, preexec_fn=_die_with_parent, cwd=self.folder
        )
        log.close()
        self.procs[name] = p
        return p

    def start_scheduler(self, name: str = "scheduler") -> str:
        sf = self.folder / f"{name}.json"
        sf.unlink(missing_ok=True)
        self._close_client()
        self._spawn(
            name,
            [DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", str(sf)],
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError, ValueError):
                self.address = json.loads(sf.read_text())["address"]
                return self.address
            self._check_alive(name)
            time.sleep(0.1)
        raise TimeoutError(f"the Dask scheduler did not start within {START_TIMEOUT_S:g} s: {self.log(name)}")

    def start_worker(
        self, name: str, env: Mapping[str, str] | None = None, *, wait: bool = True, nanny: bool = False
    ) -> None:
        """A ``dask worker`` of one thread named ``name`` (without a nanny unless ``nanny``: a
        killed worker stays dead, and one process starts faster than two)."""
        self._spawn(
            name,
            [
                DASK,
                "worker",
                self.address,
                "--host",
                "127.0.0.1",
                "--nthreads",
                "1",
                "--name",
                name,
                "--no-dashboard",
                "--death-timeout",
                str(DEATH_TIMEOUT_S),
                "--nanny" if nanny else "--no-nanny",
            ],
            env,
        )
        if wait:
            self.wait_for(lambda names: name in names, f"worker {name}", watch=[name])

    def ensure(self, workers: int) -> None:
        """The scheduler running (started again if a test killed it: the workers of the old
        one stop by themselves) and at least ``workers`` workers connected."""
        sched = [n for n in self.procs if n.startswith("scheduler")]
        if not sched or self.procs[sched[-1]].poll() is not None:
            self.start_scheduler(f"scheduler{len(sched) + 1}")
        have = len(self.workers())
        names = [f"w{len(self.procs) + k}" for k in range(max(0, workers - have))]
        for n in names:
            self.start_worker(n, wait=False)
        if names:
            self.wait_for(lambda connected: set(names) <= connected, f"workers {names}", watch=names)

    def workers(self) -> dict[str, str]:
        """Connected workers: name -> address."""
        info = self.client().scheduler_info(n_workers=-1)["workers"]
        return {str(w["name"]): a for a, w in info.items()}

    def wait_for(self, ok, what: str, timeout: float = START_TIMEOUT_S, watch: list[str] | None = None) -> None:
        """Waits until ``ok(names of the connected workers)``; fails early if a process of
        ``watch`` (default: all) exits."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ok(set(self.workers())):
                return
            for n in self.procs if watch is None else watch:
                self._check_alive(n)
            time.sleep(0.1)
        raise TimeoutError(f"{what}: not within {timeout:g} s; workers {sorted(self.workers())}")

    def client(self):
        if self._client is None:
            from distributed import Client

            self._client = Client(self.address, timeout="30s", set_as_default=False)
        return self._client

    def _check_alive(self, name: str) -> None:
        p = self.procs.get(name)
        if p is not None and p.poll() is not None and name not in self._killed:
            raise RuntimeError(f"{name} exited with {p.returncode}: {self.log(name)}")

    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        """Kills ``name``'s process group (a worker: its nanny and worker process) and waits."""
        self._killed.add(name)
        if name.startswith("scheduler"):
            self._close_client()  # not to watch it reconnect in vain
        p = self.procs[name]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, sig)
        p.wait(timeout=30)

    def log(self, name: str) -> str:
        try:
            return (self.folder / f"{name}.log").read_text(errors="replace")[-3000:]
        except OSError:
            return ""

    def _close_client(self) -> None:
        if self._client is not None:
            with contextlib.suppress(Exception):
                self._client.close(timeout=5)
            self._client = None

    def close(self) -> None:
        self._close_client()
        for name, p in self.procs.items():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(timeout=30)
            self._killed.add(name)


@contextlib.contextmanager
def cluster(folder: Path, workers: int = 2) -> Iterator[Cluster]:
    """A scheduler and ``workers`` workers, all killed on exit."""
    c = Cluster(folder)
    try:
        c.ensure(workers)
        yield c
    finally:
        c.close()


def group_alive(pid: int, wait: float = 15.0) -> bool:
    """Whether a process of the process group ``pid`` is still there after ``wait`` seconds (a
    killed nanny's worker process is reaped by init a moment after the nanny)."""
    deadline = time.monotonic() + wait
    while True:
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            return False
        if time.monotonic() >= deadline:
            return True
        time.sleep(0.05)
