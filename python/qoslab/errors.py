"""The exceptions qoslab raises.

``ConfigError``, ``ScenarioFileError`` and ``SimulationError`` are defined by
the native module (so Rust raises exactly these classes); this module
re-exports them and adds the pure-Python ones.
"""

from __future__ import annotations

from ._core import ConfigError, ScenarioFileError, SimulationError


class ReproductionError(RuntimeError):
    """A reproduction could not run: an unknown name, a missing built-in
    scenario, a claim without an explanation, a result it cannot read."""


__all__ = ["ConfigError", "ReproductionError", "ScenarioFileError", "SimulationError"]
