"""Reproductions: ``qoslab reproduce NAME|all [--quick] [--seeds N] [--out DIR]``, each NAME's module in
:data:`REGISTRY` (the papers: docs/reproductions/README.md)."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from types import ModuleType

from .._atomic import Destination
from ..errors import ReproductionError
from ..executor import Executor
from .cells import Measured, NotMeasured
from .framework import Claim, Context, Figure, Outcome, Summary, execute, overall_score, paper_data, write_scores
from .framework import destination as framework_destination
from .paper import PaperData, paper_dir

#: NAME -> module implementing it.
REGISTRY: dict[str, str] = {
    "examples": "qoslab.reproduce.examples",
    "tcp-cac": "qoslab.reproduce.tcp_cac",
    "mace": "qoslab.reproduce.mace",
    "dcbt": "qoslab.reproduce.dcbt",
    "edge": "qoslab.reproduce.edge",
    "pcn": "qoslab.reproduce.pcn",
}


def names() -> list[str]:
    """Available reproductions, in registry order."""
    return list(REGISTRY)


def module(name: str) -> ModuleType:
    """The module of reproduction ``name``."""
    if name not in REGISTRY:
        raise ReproductionError(f"unknown reproduction {name!r}; available: {', '.join(REGISTRY)}, all")
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
    """Runs one reproduction and writes ``out/<name>/``; the options: :func:`framework.execute`."""
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
    """``out/<name>/`` as a :class:`~qoslab._atomic.Destination`, to hold before running."""
    return framework_destination(module(name), quick=quick, seeds=seeds, out=out, overwrite=overwrite)


__all__ = [
    "REGISTRY",
    "Claim",
    "Context",
    "Figure",
    "Measured",
    "NotMeasured",
    "Outcome",
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
