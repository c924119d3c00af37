"""Type stub of the native module ``qoslab._core`` (crates/py). Use the
public API in :mod:`qoslab` instead; these are its building blocks."""

from collections.abc import Callable
from os import PathLike
from typing import Any, Literal, TypedDict, final

import numpy as np

# Names only the stub has (types of the values the functions return) start
# with "_", as in typeshed; `make lint` checks the rest against the module
# with mypy's stubtest.

__all__ = [
    "ConfigError",
    "ScenarioFileError",
    "SimulationError",
    "Trace",
    "cac",
    "fluid_run",
    "read_text",
    "red_replay",
    "run",
    "schema",
    "validate",
    "version",
]

_Column = np.ndarray | tuple[np.ndarray, list[str]]
"""A result column: a float64/int64/uint64/bool NumPy array, or a string column
dictionary-encoded as ``(codes, values)``: a uint8/uint16/uint32 array (the narrowest
that holds them) of indices into the list of distinct strings."""

@final
class Trace:
    """A packet trace of one link direction, written as pcapng on demand."""

    @property
    def name(self) -> str: ...
    def __len__(self) -> int: ...
    def write(self, path: str | PathLike[str]) -> None: ...
    def to_bytes(self) -> bytes: ...

class ConfigError(ValueError):
    """Invalid scenario or mechanism configuration; ``diagnostics`` lists every problem."""

    diagnostics: list[_Diagnostic]

class ScenarioFileError(OSError):
    """A scenario file, or a file it refers to, could not be read."""

class SimulationError(RuntimeError):
    """The simulation failed (a qoslab bug reported as an exception, never a crash)."""

class _Diagnostic(TypedDict):
    origin: str
    line: int | None
    path: str
    message: str

class _RunOutput(TypedDict):
    summary: str
    flows: dict[str, _Column]
    queues: dict[str, _Column]
    series: dict[str, _Column]
    events: dict[str, _Column]
    traces: dict[str, Trace]

class _RedStep(TypedDict):
    avg: float
    count: int
    verdict: Literal["queued", "early", "forced", "overlimit", "marked", "departed", "empty"]
    uniform: float | None
    qlen: int

def version() -> str: ...
def schema() -> str: ...
def validate(
    text: str,
    origin: str = "<string>",
    overrides: list[str] = ...,
    base_dir: str | PathLike[str] | None = None,
    max_memory: int | None = None,
    max_events: int | None = None,
) -> tuple[str, list[_Diagnostic]]:
    """Loads and validates a scenario (its estimated memory in bytes and events
    within the limits, default 8 GiB and 1e10); returns its echo as JSON and its
    warnings (legal input that is almost surely a mistake)."""

def read_text(path: str | PathLike[str], limit: int | None = None) -> str:
    """The UTF-8 text of the regular file ``path``, at most ``limit`` bytes (default
    16 MiB); anything else raises :class:`ScenarioFileError` saying why."""

def run(
    text: str,
    origin: str = "<string>",
    seed: int | None = None,
    overrides: list[str] = ...,
    base_dir: str | PathLike[str] | None = None,
    progress: Callable[[float], Any] | None = None,
    max_memory: int | None = None,
    max_events: int | None = None,
) -> _RunOutput:
    """Runs a scenario without the GIL; ``progress`` is called at most 10 times a second."""

def red_replay(
    config: dict[str, Any],
    link_rate_bps: int,
    ops: list[tuple[int, str, int]],
    seed: int,
) -> list[_RedStep]:
    """Drives a real RED through the counting queue with ``(t_ns, "arrive"|"arrive_ect"|"depart", size)`` ops."""

class _CacAnswer(TypedDict):
    rho: float
    rho_c_bps: float
    n_max: int
    offered_load_erl: float | None
    blocking: float | None
    target_offered_load_erl: float | None
    target_arrival_rate_per_s: float | None

def cac(
    capacity: str,
    buffer: int | str,
    iplr: float,
    rate: str,
    holding: str | None = None,
    arrival_rate: float | None = None,
    blocking: float | None = None,
) -> _CacAnswer:
    """ρ, N_max and the Erlang-B answers of seed 002 (``qoslab_core::cac::calc::calculate``)."""

def fluid_run(config_dict: dict[str, Any]) -> dict[str, Any]:
    """Fluid (ideal-rate) mode of the TCP-CAC schemes: results and a ``transfers`` dict of columns."""
