"""Worker processes that do not run the user's script again.

A ``spawn`` worker (:mod:`multiprocessing`) starts a fresh interpreter and,
before it takes any job, imports the parent's main module again as
``__mp_main__``, so that functions defined there can be unpickled. A script
that calls :func:`qoslab.sweep` at its top level, without an
``if __name__ == "__main__":`` guard (as a notebook cell pasted into a file
does), would then start the sweep once more in every worker: each worker
finds the sweep folder locked by its parent and dies, and the parent sees a
``BrokenProcessPool``.

qoslab's own jobs (:func:`qoslab.sweeps.execute_to_files`, the
reproductions' runs) are functions of the qoslab package: their workers
need nothing from the main module. :func:`context` returns a ``spawn``
context whose workers skip that import when the job function is not defined
in ``__main__``; a job function that is (a user's own function given to
:meth:`qoslab.executor.LocalExecutor.map_unordered`) gets the standard
``spawn`` context, which imports it.

How: :func:`multiprocessing.spawn.get_preparation_data` decides what a new
worker imports; while a worker of this context is launched (under a lock,
for that one call) it is wrapped to leave the main module out. Everything
else about the workers (``sys.path``, the working folder, the start method)
is the standard ``spawn``'s.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.context
import multiprocessing.popen_spawn_posix
import multiprocessing.spawn
import threading
from collections.abc import Callable
from typing import Any

_LOCK = threading.Lock()
#: What a worker's preparation data uses to import the main module again.
_MAIN_KEYS = ("init_main_from_name", "init_main_from_path")


class _Popen(multiprocessing.popen_spawn_posix.Popen):
    """The standard ``spawn`` launch, with the main module left out of the worker's preparation."""

    def _launch(self, process_obj: Any) -> None:
        with _LOCK:
            standard = multiprocessing.spawn.get_preparation_data

            def without_main(name: str) -> dict[str, Any]:
                data: dict[str, Any] = standard(name)
                for key in _MAIN_KEYS:
                    data.pop(key, None)
                return data

            multiprocessing.spawn.get_preparation_data = without_main
            try:
                super()._launch(process_obj)  # type: ignore[misc]  # a private method typeshed leaves out
            finally:
                multiprocessing.spawn.get_preparation_data = standard


class _Process(multiprocessing.context.SpawnProcess):
    _start_method = "spawn"

    @staticmethod
    def _Popen(process_obj: Any) -> Any:
        return _Popen(process_obj)


class _NoMainContext(multiprocessing.context.SpawnContext):
    Process = _Process


def needs_main(fn: Callable[..., Any]) -> bool:
    """Whether workers running ``fn`` need the main module (``fn`` is defined there, or its
    module is unknown, as for a ``functools.partial``)."""
    module = getattr(fn, "__module__", None)
    return module is None or module in ("__main__", "__mp_main__")


def context(fn: Callable[..., Any]) -> multiprocessing.context.BaseContext:
    """The ``spawn`` context for workers that run ``fn`` (see the module doc)."""
    if needs_main(fn):
        return multiprocessing.get_context("spawn")
    return _NoMainContext()


__all__ = ["context", "needs_main"]
