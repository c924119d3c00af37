"""The exceptions qoslab raises.

``ConfigError``, ``ScenarioFileError`` and ``SimulationError`` are defined by
the native module (so Rust raises exactly these classes); this module
re-exports them and adds the pure-Python ones.
"""

from __future__ import annotations

from ._core import ConfigError, ScenarioFileError, SimulationError


def config_error(path: str, message: str, *, origin: str = "<command line>") -> ConfigError:
    """A :class:`ConfigError` raised by Python code (sweep grids, plot and report
    options), shaped like the core's: ``str()`` is ``path: message``, and
    ``.diagnostics`` holds the one problem."""
    err = ConfigError(f"{path}: {message}" if path else message)
    err.diagnostics = [{"origin": origin, "line": None, "path": path, "message": message}]
    return err


class ScenarioWarning(UserWarning):
    """A scenario that is valid but almost surely not what was meant (a RED threshold
    above the queue's limit, flows whose start jitter outlasts the run, a TCP group
    without header bytes, ...): issued by :func:`qoslab.load` and :func:`qoslab.run`
    for each of :attr:`qoslab.Scenario.warnings`."""


def warn_scenario(scenario: object) -> None:
    """Issues each of a scenario's warnings as a :class:`ScenarioWarning`."""
    import warnings

    for w in getattr(scenario, "warnings", []):
        warnings.warn(w, ScenarioWarning, stacklevel=3)


class ReproductionError(RuntimeError):
    """A reproduction could not run: an unknown name, a missing built-in
    scenario, a claim without an explanation, a result it cannot read."""


class ClusterError(RuntimeError):
    """The Dask cluster failed under a sweep or reproduction: the scheduler was lost, no
    usable worker remained, or a run killed its workers. ``str()`` is one line that names the
    scheduler and says how to resume; every run finished before it is kept.

    ``cause`` says what happened, ``remedy`` what to do; ``item`` is the index of the job
    concerned, when one is (a run that killed its workers)."""

    def __init__(self, cause: str, remedy: str = "", *, item: int | None = None) -> None:
        super().__init__(f"{cause}; {remedy}" if remedy else cause)
        self.cause = cause
        self.remedy = remedy
        self.item = item


__all__ = [
    "ClusterError",
    "ConfigError",
    "ReproductionError",
    "ScenarioFileError",
    "ScenarioWarning",
    "SimulationError",
    "config_error",
    "warn_scenario",
]
