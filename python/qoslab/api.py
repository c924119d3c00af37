"""The two calls most users need: :func:`load` and :func:`run`."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from . import _core
from .errors import config_error, warn_scenario
from .result import Result
from .scenario import Override, Scenario, _limit, _override_texts


def load(
    path: str | os.PathLike[str],
    *,
    overrides: Iterable[Override] = (),
    max_memory: int | None = None,
    max_events: int | None = None,
) -> Scenario:
    """Reads and validates a scenario file.

    ``overrides`` are ``"key.path=value"`` strings (as ``qoslab run --set``)
    or ``(key, value)`` pairs. Raises :class:`qoslab.ScenarioFileError` if the
    file cannot be read (it must be a regular file of at most 16 MiB) and
    :class:`qoslab.ConfigError` (with every problem in ``.diagnostics``) if it
    is invalid. Input that is valid but almost surely a mistake is issued as
    :class:`qoslab.ScenarioWarning` (see :attr:`Scenario.warnings`). ``max_memory`` (bytes) and
    ``max_events`` set the limits on the run's estimated peak memory and
    events (default 8 GiB and 1e10), checked by validation.
    """
    sc = Scenario.load(path, overrides=overrides, max_memory=max_memory, max_events=max_events)
    warn_scenario(sc)
    return sc


def run(
    scenario: Scenario | str | os.PathLike[str],
    *,
    seed: int | None = None,
    overrides: Iterable[Override] = (),
    progress: Callable[[float], Any] | None = None,
    out: str | os.PathLike[str] | None = None,
    overwrite: bool = False,
    max_memory: int | None = None,
    max_events: int | None = None,
) -> Result:
    """Runs a scenario (a :class:`Scenario` or a path to a TOML file).

    - ``seed``: overrides the scenario's seed; every random choice derives from it.
    - ``overrides``: more ``key.path=value`` overrides, applied after the scenario's own.
    - ``progress``: called with the fraction of simulated time done, at most
      ten times per second of wall time, from the thread that called ``run``
      (an exception it raises stops the run and propagates).
    - ``out``: if given, the result folder is written there (see :meth:`Result.save`;
      ``overwrite`` replaces a result of another seed or scenario there).
    - ``max_memory`` (bytes), ``max_events``: raise (or lower) the limits on the run's
      estimated peak memory and events (default 8 GiB and 1e10; a scenario beyond
      them is refused with :class:`qoslab.ConfigError` naming the field that drives
      the estimate). Default: the scenario's own (see :meth:`Scenario.load`).

    The simulation runs without the GIL; Ctrl-C stops it with ``KeyboardInterrupt``.
    """
    if progress is not None and not callable(progress):
        raise config_error(
            "progress",
            f"got {type(progress).__name__} {progress!r}; allowed: None or a function called with the "
            "fraction of the run done (0 to 1)",
            origin="<python>",
        )
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64):
        raise config_error("seed", f"{seed!r}; allowed: an integer from 0 to 2^64-1", origin="<python>")
    if not isinstance(scenario, Scenario):
        if not isinstance(scenario, str | os.PathLike):
            raise config_error(
                "scenario",
                f"got {type(scenario).__name__} {scenario!r}; allowed: a Scenario or the path of a scenario file",
                origin="<python>",
            )
        scenario = Scenario.load(scenario, overrides=overrides, max_memory=max_memory, max_events=max_events)
        warn_scenario(scenario)
    elif overrides:
        scenario = scenario.with_overrides(*_override_texts(overrides))
    mem, ev = scenario.limits
    mem = mem if max_memory is None else _limit("max_memory", max_memory)
    ev = ev if max_events is None else _limit("max_events", max_events)
    raw = _core.run(scenario.held(max_memory=mem, max_events=ev), seed, progress)
    result = Result._from_core(raw)
    if progress is not None:
        progress(1.0)
    if out is not None:
        result.save(Path(out), overwrite=overwrite)
    return result
