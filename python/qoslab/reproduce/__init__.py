"""Reproductions: ``qoslab reproduce NAME|all [--quick] [--seeds N] [--out DIR]``.

The registry maps each reproduction's name to its module (see
:mod:`qoslab.reproduce.framework` for what a module provides). Today:
``examples`` (the RED reference dumbbell), ``tcp-cac``, ``mace``, ``dcbt``
(D-CBT and ChIPS, [Claypool00]), ``edge`` [Guerin99] and ``pcn`` (admission
and termination, [Zhang07]).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING

from ..errors import ReproductionError
from .cells import Measured, NotMeasured, Score, paper_dir
from .framework import Claim, Context, Figure, Outcome, Summary, execute, overall_score, paper_data, write_scores
from .framework import destination as framework_destination

if TYPE_CHECKING:  # pragma: no cover
    from .._atomic import Destination
    from ..executor import Executor
    from .cells import PaperData

#: NAME -> module implementing it.
REGISTRY: dict[str, str] = {
    "examples": "qoslab.reproduce.examples",
    "tcp-cac": "qoslab.reproduce.tcp_cac",
    "mace": "qoslab.reproduce.mace",
    "dcbt": "qoslab.reproduce.dcbt",
    "edge": "qoslab.reproduce.edge",
    "pcn": "qoslab.reproduce.pcn",
}

#: Reproductions planned by later issues (not yet available).
PLANNED = ("mace", "dcbt", "tcp-cac", "edge", "pcn")


def names() -> list[str]:
    """Available reproductions, in registry order."""
    return list(REGISTRY)


def module(name: str) -> ModuleType:
    """The module of reproduction ``name``."""
    if name not in REGISTRY:
        later = [n for n in PLANNED if n not in REGISTRY]
        hint = f" (planned: {', '.join(later)})" if later else ""
        raise ReproductionError(f"unknown reproduction {name!r}; available: {', '.join(REGISTRY)}, all{hint}")
    return importlib.import_module(REGISTRY[name])


def paper(name: str) -> PaperData | None:
    """The paper data of reproduction ``name`` (``None`` for one of no paper), loaded and checked."""
    return paper_data(module(name))


def reproduce(
    name: str,
    *,
    quick: bool = False,
    seeds: int | None = None,
    out: os.PathLike[str] | str = "results",
    log: Callable[[str], None] = lambda _: None,
    executor: Executor | None = None,
    overwrite: bool = False,
    destination: Destination | None = None,
    testbed: bool = False,
    store: os.PathLike[str] | str | None = None,
) -> Summary:
    """Runs one reproduction and writes ``out/<name>/``; see :func:`framework.execute`.
    ``executor`` (:mod:`qoslab.executor`) runs its batches of variants and seeds. An existing
    ``out/<name>/`` of another mode or seed list is replaced only with ``overwrite``.
    ``testbed``: also its set-ups on real packets (root; ``cells_testbed.csv``). ``store``: a
    folder that keeps each run's result or reduced value, so that a run again (after an
    interruption) recomputes none it holds (the command line's ``OUT/.store``)."""
    return execute(
        module(name),
        quick=quick,
        seeds=seeds,
        out=out,
        log=log,
        executor=executor,
        overwrite=overwrite,
        dest=destination,
        testbed=testbed,
        store=store,
    )


def destination(
    name: str,
    *,
    quick: bool = False,
    seeds: int | None = None,
    out: os.PathLike[str] | str = "results",
    overwrite: bool = False,
) -> Destination:
    """``out/<name>/`` as a :class:`~qoslab._atomic.Destination`, to check and hold before running
    (see :func:`framework.destination`)."""
    return framework_destination(module(name), quick=quick, seeds=seeds, out=out, overwrite=overwrite)


__all__ = [
    "PLANNED",
    "REGISTRY",
    "Claim",
    "Context",
    "Figure",
    "Measured",
    "NotMeasured",
    "Outcome",
    "Score",
    "Summary",
    "destination",
    "execute",
    "module",
    "names",
    "overall_score",
    "paper",
    "paper_dir",
    "reproduce",
    "write_scores",
]
