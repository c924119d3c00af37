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
    "Scenario",
    "ScenarioFileError",
    "SimulationError",
    "Trace",
    "cac",
    "delay_columns",
    "fluid_run",
    "format_duration",
    "format_rate",
    "format_size",
    "jain_index",
    "names",
    "parse_duration",
    "parse_packets",
    "parse_rate",
    "parse_size",
    "read_text",
    "red_replay",
    "run",
    "schema",
    "totals",
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
def read_text(path: str | PathLike[str], limit: int | None = None) -> str:
    """The UTF-8 text of the regular file ``path``, at most ``limit`` bytes (default
    16 MiB); anything else raises :class:`ScenarioFileError` saying why."""

class _Node(TypedDict):
    name: str
    kind: Literal["host", "router"]
    addr: str

class _Link(TypedDict):
    """A duplex link of the expansion; numbers in the core's units (bit/s, ns, bytes)."""

    a: str
    b: str
    path: str
    field: str
    rate_bps: int
    delay_ns: int
    loss: float
    reverse_loss: float
    queue: dict[str, Any]
    queue_path: str
    reverse_queue: dict[str, Any]
    reverse_queue_path: str
    stages: list[dict[str, Any]]
    reverse_stages: list[dict[str, Any]]
    mace: dict[str, Any] | None
    given: dict[str, Any]

class _Flow(TypedDict):
    index: int
    name: str
    src: str
    dst: str
    stream: int
    route: list[int]
    hops: list[str]
    delay_ns: int
    reverse_delay_ns: int | None

# Functional form: the key "class" is not an identifier.
_Group = TypedDict(
    "_Group",
    {
        "index": int,
        "name": str,
        "model": str,
        "proto": Literal["udp", "tcp"],
        "src_choice": str,
        "srcs": list[str],
        "dsts": list[str],
        "fixed_flows": int | None,
        "start_ns": int,
        "stop_ns": int,
        "start_jitter_ns": int,
        "randomize": float,
        "send_jitter_max_ns": int,
        "class": int,
        "dscp": int,
        "header_bytes": int,
        "payload_mean_bytes": float,
        "mean_wire_bps": float,
        "spec": dict[str, Any],
        "source": dict[str, Any],
        "flows": list[_Flow],
    },
)

class _Model(TypedDict):
    """The scenario expanded as the simulator builds it (``Scenario.model``)."""

    name: str
    seed: int
    duration_ns: int
    metrics: dict[str, Any]
    nodes: list[_Node]
    links: list[_Link]
    bottlenecks: list[int]
    default_queue: dict[str, Any]
    groups: list[_Group]

@final
class Scenario:
    """A validated scenario held by the core, from loading to running."""

    @staticmethod
    def load(
        text: str,
        origin: str = "<string>",
        overrides: list[str] = ...,
        base_dir: str | PathLike[str] | None = None,
        max_memory: int | None = None,
        max_events: int | None = None,
    ) -> Scenario:
        """Parses, overrides and validates a scenario (its estimated memory in bytes and events
        within the limits, default 8 GiB and 1e10)."""

    def with_overrides(self, overrides: list[str]) -> Scenario: ...
    def with_limits(self, max_memory: int | None = None, max_events: int | None = None) -> Scenario: ...
    def echo(self) -> str:
        """The scenario with defaults filled in, as JSON (units as text)."""

    def model(self) -> _Model: ...
    def warnings(self) -> list[_Diagnostic]:
        """What validation found legal but almost surely a mistake."""

    def router_link(self, index: int, delay_ns: int, addrs: dict[str, str] | None = None) -> str:
        """The ``[link]`` TOML of a router emulating link ``index``, its delay ``delay_ns``."""

    @property
    def name(self) -> str: ...
    @property
    def seed(self) -> int: ...
    @property
    def origin(self) -> str: ...
    @property
    def base_dir(self) -> str: ...
    @property
    def overrides(self) -> list[str]: ...
    @property
    def limits(self) -> tuple[int, int]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]: ...
    @staticmethod
    def _restore(
        text: str,
        origin: str,
        overrides: list[str],
        base_dir: str | PathLike[str],
        max_memory: int,
        max_events: int,
        version: str,
        echo: str,
    ) -> Scenario: ...

def run(scenario: Scenario, seed: int | None = None, progress: Callable[[float], Any] | None = None) -> _RunOutput:
    """Runs a validated scenario without the GIL; ``progress`` is called at most 10 times a second."""

def parse_rate(text: str) -> int: ...
def parse_duration(text: str) -> int: ...
def parse_size(text: str) -> int: ...
def parse_packets(text: str) -> int: ...
def format_rate(bps: int) -> str: ...
def format_duration(ns: int) -> str: ...
def format_size(bytes: int) -> str: ...

class _Names(TypedDict):
    drop_reasons: list[str]
    mark_reasons: list[str]
    event_kinds: list[str]
    queue_types: list[str]
    topology_presets: list[str]
    traffic_models: list[str]
    arrival_processes: list[str]
    admission_types: list[str]
    mace_admission_types: list[str]
    tables: dict[str, list[tuple[str, str]]]

def names() -> _Names:
    """Reasons, event kinds, type names and each result table's ``(column, type)`` list."""

def delay_columns(delays_ns: list[int]) -> list[tuple[str, float]]:
    """A flow's delay columns from its one-way delays (ns, arrival order), as the simulator computes them."""

def jain_index(xs: list[float]) -> float: ...
def totals(flows: list[tuple[int, int, int, int, int, int, float]], duration_s: float) -> str:
    """The summary's totals over flows (sent, delivered, dropped packets and bytes, throughput), as JSON."""

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
    """ρ, N_max and the Erlang-B answers of [Tarasiuk05] (``qoslab_core::admission::cac::calc::calculate``)."""

def fluid_run(config_dict: dict[str, Any]) -> dict[str, Any]:
    """Fluid (ideal-rate) mode of the TCP-CAC schemes: results and a ``transfers`` dict of columns."""
