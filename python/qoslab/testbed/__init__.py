"""The testbed: a scenario run on real packets across network namespaces
(``qoslab testbed run``), written as the same result a simulation writes,
to be compared with it (``qoslab compare``). See ``docs/testbed.md``.

- :mod:`.plan`: the scenario's topology (a tree, read from the core's model
  of the scenario: nodes, links, routes, flows) mapped onto bridges, one
  per segment, and a ``qoslab-router`` per emulated link; what is not
  supported yet is refused by name;
- :mod:`.net`: namespaces, bridges and veth pairs under a run-unique
  prefix, torn down on every way out; stale ones removed by :func:`clean`;
- :mod:`.runner`: the routers (:func:`.runner.standing`: a testbed with its
  routers up), sinks and generators, started against one instant of
  CLOCK_MONOTONIC;
- :mod:`.results`: what they measured, as a :class:`qoslab.Result`, with the
  simulator's columns and metric code.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .net import clean, skip_reason, testbeds
from .plan import Problem, make_plan, unsupported
from .runner import TestbedError

__all__ = ["Problem", "TestbedError", "clean", "make_plan", "run", "skip_reason", "testbeds", "unsupported"]


def _refuse(problems: list[Problem], origin: str) -> Exception:
    from ..errors import ConfigError

    lines = [f"{origin}: {p}" for p in problems]
    err = ConfigError("\n".join(lines))
    err.diagnostics = [{"origin": origin, "line": None, "path": p.path, "message": p.message} for p in problems]
    return err


def run(scenario: Any, *, seed: int | None = None, keep: str | os.PathLike[str] | None = None) -> Any:
    """Runs a :class:`qoslab.Scenario` on the testbed; returns its :class:`qoslab.Result`.

    Raises :class:`qoslab.ConfigError` (nothing built) when the scenario uses something the
    testbed does not support, or when this machine cannot build namespaces (not root, no
    ``ip netns``); :class:`TestbedError` when a process fails. Stale testbeds of killed runs
    are removed first."""
    from .. import _core
    from .results import build
    from .runner import execute

    if seed is not None and seed != scenario.seed:
        # The seed decides the traffic's draws the plan fixes (arrivals, lifetimes, streams).
        scenario = scenario.with_overrides(("seed", seed))
    plan, problems = make_plan(scenario)
    if problems or plan is None:
        raise _refuse(problems, scenario.origin)
    why = skip_reason()
    if why is not None:
        raise _refuse([Problem("testbed", f"cannot run here: {why}")], scenario.origin)
    clean(only_dead=True)
    s = seed if seed is not None else scenario.seed
    collected = execute(plan, seed=s, keep=Path(keep) if keep else None)
    return build(plan, collected, seed=s, version=_core.version())
