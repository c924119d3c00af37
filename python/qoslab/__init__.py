"""qoslab: a laboratory for router quality-of-service mechanisms.

::

    import qoslab
    sc = qoslab.load("scenarios/examples/red_dumbbell.toml", overrides=["duration=10s"])
    res = qoslab.run(sc, seed=1)
    res.queues[["name", "arrivals", "drops_early_random", "drops_forced"]]
    res.save("results/red_dumbbell")
    df = qoslab.sweep(sc, grid={"topology.bottleneck.queue.max_p": "0.02,0.1"}, seeds=3)

Importing qoslab is light: pandas, pyarrow and matplotlib are imported
only when a result table, a Parquet file or a figure is first needed.
"""

from __future__ import annotations

from . import admission, executor, pcn, queues, stages, sweeps, tables, topology, traffic
from ._core import version as _core_version
from .api import load, run
from .errors import (
    ClusterError,
    ConfigError,
    ReproductionError,
    ScenarioFileError,
    ScenarioWarning,
    SimulationError,
)
from .result import Result
from .scenario import Scenario
from .sweeps import sweep

__version__: str = _core_version()


def version() -> str:
    """The qoslab version."""
    return __version__


def schema() -> str:
    """The JSON Schema of the scenario format (pretty-printed JSON)."""
    from ._core import schema as _schema

    return _schema()


__all__ = [
    "ClusterError",
    "ConfigError",
    "ReproductionError",
    "Result",
    "Scenario",
    "ScenarioFileError",
    "ScenarioWarning",
    "SimulationError",
    "__version__",
    "admission",
    "executor",
    "load",
    "pcn",
    "queues",
    "run",
    "schema",
    "stages",
    "sweep",
    "sweeps",
    "tables",
    "topology",
    "traffic",
    "version",
]
