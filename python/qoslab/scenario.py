"""Scenarios: TOML text validated by the core.

A :class:`Scenario` is the text of a scenario file, where it came from
(for error messages and relative paths) and the ``--set`` style
overrides to apply. The core parses, overrides and validates it once and
holds the result (``qoslab._core.Scenario``): a run, a sweep's worker and
the testbed take that, and more overrides are applied to it, so nothing
is parsed or validated twice. :attr:`Scenario.model` is its expansion
(nodes, links, routes, flows) with numbers, from the core. Build one from
a file (:func:`qoslab.load`), from text (:meth:`Scenario.from_toml`) or
with the keyword-only builders (:meth:`Scenario.build`,
:meth:`Scenario.dumbbell`), which write TOML with tomli-w and validate it
at once.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from . import _core, _units
from ._units import Quantity
from .errors import config_error

Override = str | tuple[str, Any]


def split_override(text: str) -> tuple[str, str, str]:
    """``key.path=value`` split as :meth:`str.partition` at the first ``=`` outside a
    ``[selector]`` (``rules[stream=A2].src=x``); at the first ``=`` when a ``[`` is left open,
    so that the core's check names the bracket."""
    depth = 0
    for i, c in enumerate(text):
        if c == "[":
            depth += 1
        elif c == "]":
            depth = max(depth - 1, 0)
        elif c == "=" and depth == 0:
            return text[:i], "=", text[i + 1 :]
    return text.partition("=")


def override_value_text(pair: tuple[str, Any]) -> str:
    """The value of a ``(key, value)`` override written as TOML; refused when TOML cannot hold it."""
    value = _toml_value(pair[1])
    if value is None:
        raise config_error(
            "overrides",
            f"{pair!r}: the value must be a TOML value (number, string, bool, list, or a dict of them)",
            origin="<python>",
        )
    return value


def _override_text(o: Override) -> str:
    """``"key.path=value"`` as is; ``(key, value)`` with the value written as TOML: a dict as an
    inline table (nested as needed), a list holding dicts as an array of inline tables, every
    other value through tomli-w."""
    if isinstance(o, str):
        if "=" not in o:
            raise config_error("overrides", f"{o!r}: expected key.path=value", origin="<python>")
        return o
    if isinstance(o, tuple) and len(o) == 2 and isinstance(o[0], str):
        return f"{o[0]}={override_value_text(o)}"
    raise config_error("overrides", f"{o!r}: expected 'key.path=value' or a (key, value) pair", origin="<python>")


def _holds_table(v: Any) -> bool:
    return isinstance(v, dict) or (isinstance(v, (list, tuple)) and any(_holds_table(x) for x in v))


def _toml_value(v: Any) -> str | None:
    """``v`` as one TOML value (``None`` when TOML cannot hold it): dicts as inline tables with
    their keys quoted when not bare, lists holding dicts written item by item, the rest (and
    every leaf) by tomli-w."""
    import tomli_w

    if isinstance(v, dict):
        items = []
        for k, x in v.items():
            key, val = _toml_key(k), _toml_value(x)
            if key is None or val is None:
                return None
            items.append(f"{key} = {val}")
        return "{ " + ", ".join(items) + " }" if items else "{}"
    if isinstance(v, (list, tuple)) and _holds_table(v):
        parts = [_toml_value(x) for x in v]
        if any(p is None for p in parts):
            return None
        return "[" + ", ".join(p for p in parts if p is not None) + "]"
    try:
        text = tomli_w.dumps({"v": v}).strip()
    except TypeError:
        return None
    return text[4:] if text.startswith("v = ") else None


def _toml_key(k: Any) -> str | None:
    """A table key: bare when it can be, else a TOML string."""
    if not isinstance(k, str):
        return None
    if k and all(c.isascii() and (c.isalnum() or c in "-_") for c in k):
        return k
    return _toml_value(k)


def _override_texts(overrides: object) -> tuple[str, ...]:
    """Every override as text; a bare string (not in a list) is refused, as it would be read
    one character at a time."""
    from .errors import config_error

    if isinstance(overrides, (str, bytes)):
        raise config_error(
            "overrides",
            f"got the string {overrides!r}; allowed: a list of 'key.path=value' strings or (key, value) "
            f"pairs, e.g. [{overrides!r}]",
            origin="<python>",
        )
    try:
        items = list(overrides)  # type: ignore[call-overload]
    except TypeError:
        raise config_error(
            "overrides",
            f"got {type(overrides).__name__} {overrides!r}; allowed: a list of 'key.path=value' strings",
            origin="<python>",
        ) from None
    return tuple(_override_text(o) for o in items)


def _drop_none(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _drop_none(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [_drop_none(x) for x in v]
    return v


class Scenario:
    """A scenario: TOML text, its origin, its base directory and overrides.

    Instances are immutable; :meth:`with_overrides` returns a new one.
    """

    __slots__ = ("_base_dir", "_echo", "_held", "_max_events", "_max_memory", "_origin", "_overrides", "_text")

    def __init__(
        self,
        text: str,
        *,
        origin: str = "<string>",
        base_dir: str | os.PathLike[str] | None = None,
        overrides: Iterable[Override] = (),
        max_memory: int | None = None,
        max_events: int | None = None,
    ) -> None:
        if not isinstance(text, str):
            raise TypeError(f"scenario text must be a str, got {type(text).__name__}")
        self._text = text
        self._origin = origin
        self._base_dir = Path(base_dir) if base_dir is not None else Path.cwd()
        self._overrides = _override_texts(overrides)
        # Limits on the run's estimated peak memory (bytes) and events; None: those of
        # default_limits(), else the core's defaults.
        mem, ev = _DEFAULT_LIMITS.get()
        self._max_memory = _limit("max_memory", max_memory if max_memory is not None else mem)
        self._max_events = _limit("max_events", max_events if max_events is not None else ev)
        self._echo: dict[str, Any] | None = None
        self._held: _core.Scenario | None = None

    # -- constructors -------------------------------------------------

    @classmethod
    def from_toml(
        cls, text: str, *, origin: str = "<string>", base_dir: str | os.PathLike[str] | None = None
    ) -> Scenario:
        """Parses and validates ``text``; raises :class:`qoslab.ConfigError` listing every problem."""
        s = cls(text, origin=origin, base_dir=base_dir)
        s.validate()
        return s

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        overrides: Iterable[Override] = (),
        max_memory: int | None = None,
        max_events: int | None = None,
    ) -> Scenario:
        """Reads and validates a scenario file (see :func:`qoslab.load`)."""
        if not isinstance(path, str | os.PathLike):
            raise config_error(
                "path", f"got {type(path).__name__} {path!r}; allowed: the path of a scenario file", origin="<python>"
            )
        p = Path(path)
        text = read_text(p)
        s = cls(
            text,
            origin=str(path),
            base_dir=p.parent,
            overrides=overrides,
            max_memory=max_memory,
            max_events=max_events,
        )
        s.validate()
        return s

    @classmethod
    def build(
        cls,
        *,
        name: str,
        duration: Quantity,
        topology: dict[str, Any],
        traffic: Sequence[dict[str, Any]] = (),
        description: str | None = None,
        seed: int | None = None,
        metrics: dict[str, Any] | None = None,
        admission: dict[str, Any] | None = None,
        trace: dict[str, Any] | None = None,
        pcn: dict[str, Any] | None = None,
    ) -> Scenario:
        """A scenario from builder parts (:mod:`qoslab.topology`, :mod:`qoslab.traffic`,
        :mod:`qoslab.queues`, :mod:`qoslab.admission`), written as TOML and validated.
        ``trace``: the ``[trace]`` table, e.g. ``{"pcap": ["r0->sink0"]}`` (pcapng per direction).
        ``pcn``: the ``[pcn]`` table of a PCN domain (:func:`qoslab.pcn.domain`)."""
        import tomli_w

        doc: dict[str, Any] = {"name": name}
        if description is not None:
            doc["description"] = description
        doc["duration"] = _units.dur(duration)
        if seed is not None:
            doc["seed"] = seed
        doc["topology"] = topology
        if admission is not None:
            doc["admission"] = admission
        if metrics is not None:
            doc["metrics"] = {
                k: (_units.dur(v, f"metrics.{k}") if k in _METRIC_DURATIONS else v) for k, v in metrics.items()
            }
        groups = _groups(traffic)
        if groups:
            doc["traffic"] = groups
        if trace is not None:
            doc["trace"] = trace
        if pcn is not None:
            doc["pcn"] = pcn
        return cls.from_toml(tomli_w.dumps(_drop_none(doc)), origin=f"<scenario {name}>")

    @classmethod
    def dumbbell(
        cls,
        *,
        name: str,
        sources: int,
        access_rate: Quantity,
        access_delay: Quantity,
        bottleneck_rate: Quantity,
        bottleneck_delay: Quantity,
        queue: dict[str, Any],
        duration: Quantity,
        traffic: Sequence[dict[str, Any]] = (),
        sinks: int | None = None,
        routers: int | None = None,
        egress_rate: Quantity | None = None,
        egress_delay: Quantity | None = None,
        default_queue: dict[str, Any] | None = None,
        description: str | None = None,
        seed: int | None = None,
        metrics: dict[str, Any] | None = None,
        admission: dict[str, Any] | None = None,
    ) -> Scenario:
        """A dumbbell: ``sources`` hosts -> r0 [-> r1] -> sinks, with ``queue`` at the bottleneck.

        Example (the RED reference dumbbell)::

            Scenario.dumbbell(name="red", sources=40, access_rate="100Mbps", access_delay="5ms",
                              bottleneck_rate="25Mbps", bottleneck_delay="20ms",
                              queue=queues.red(limit=60, min_th=5, max_th=15), duration="60s",
                              traffic=[traffic.cbr(name="cbr", flows=40, src="src*", dst="sink0",
                                                   rate="1Mbps", size=1000, start_jitter="8ms")])
        """
        from . import topology as topo

        egress = None
        if egress_rate is not None or egress_delay is not None:
            egress = topo.link(
                rate=egress_rate if egress_rate is not None else access_rate,
                delay=egress_delay if egress_delay is not None else access_delay,
            )
        t = topo.dumbbell(
            sources=sources,
            sinks=sinks,
            routers=routers,
            access=topo.link(rate=access_rate, delay=access_delay),
            bottleneck=topo.link(rate=bottleneck_rate, delay=bottleneck_delay, queue=queue),
            egress=egress,
            default_queue=default_queue,
        )
        return cls.build(
            name=name,
            duration=duration,
            topology=t,
            traffic=traffic,
            description=description,
            seed=seed,
            metrics=metrics,
            admission=admission,
        )

    # -- accessors ----------------------------------------------------

    @property
    def text(self) -> str:
        """The TOML source, before overrides."""
        return self._text

    @property
    def origin(self) -> str:
        """Where the text came from (a path, or ``<string>``), as used in error messages."""
        return self._origin

    @property
    def base_dir(self) -> Path:
        """Directory that relative paths in the scenario (replay files) resolve against."""
        return self._base_dir

    @property
    def overrides(self) -> tuple[str, ...]:
        """``key.path=value`` overrides applied on top of the text."""
        return self._overrides

    def validate(self) -> dict[str, Any]:
        """Validates; returns the echo (every field, defaults filled in) as a dict."""
        if self._echo is None:
            self._echo = json.loads(self.held().echo())
        return self._echo

    def held(self, *, max_memory: int | None = None, max_events: int | None = None) -> _core.Scenario:
        """The validated scenario the core holds (what :func:`qoslab.run` runs), checked against
        other limits when they are given."""
        if self._held is None:
            self._held = _core.Scenario.load(
                self._text,
                self._origin,
                list(self._overrides),
                str(self._base_dir),
                max_memory=self._max_memory,
                max_events=self._max_events,
            )
        mem = self._max_memory if max_memory is None else max_memory
        ev = self._max_events if max_events is None else max_events
        if (mem, ev) != (self._max_memory, self._max_events):
            return self._held.with_limits(mem, ev)
        return self._held

    @property
    def model(self) -> _core._Model:
        """The scenario expanded as the simulator builds it, with numbers (rates in bit/s,
        durations in ns, sizes in bytes): nodes, links with their resolved queues, the preset's
        bottlenecks, and each traffic group's flows with their routes (``qoslab._core``)."""
        return self.held().model()

    @property
    def warnings(self) -> list[str]:
        """What validation found legal but almost surely a mistake (a RED threshold above the
        queue's limit, flows whose start jitter outlasts the run, ...), each as
        ``file:line: field.path: what; allowed (no warning): ...``. ``qoslab validate`` and
        ``qoslab run`` print them; :func:`qoslab.load` also issues them as
        :class:`qoslab.ScenarioWarning`."""
        return [_diagnostic_text(d) for d in self.held().warnings()]

    @property
    def echo(self) -> dict[str, Any]:
        """The validated scenario with defaults filled in (what ``summary.json`` echoes)."""
        return self.validate()

    @property
    def name(self) -> str:
        return str(self.echo["name"])

    @property
    def duration(self) -> str:
        return str(self.echo["duration"])

    @property
    def seed(self) -> int:
        return int(self.echo["seed"])

    def with_overrides(self, *pairs: Override) -> Scenario:
        """A copy with more overrides: ``"topology.bottleneck.queue.max_th=20"`` or
        ``("duration", "10s")``; later ones win. Applied to the validated scenario the core
        holds and validated at once."""
        more = _override_texts(pairs)
        s = Scenario(
            self._text,
            origin=self._origin,
            base_dir=self._base_dir,
            overrides=self._overrides + more,
            max_memory=self._max_memory,
            max_events=self._max_events,
        )
        s._held = self.held().with_overrides(list(more))
        s.validate()
        return s

    @property
    def limits(self) -> tuple[int | None, int | None]:
        """``(max_memory, max_events)``: the limits on the run's estimated peak memory
        (bytes) and events; ``None`` for the defaults (8 GiB, 1e10)."""
        return (self._max_memory, self._max_events)

    def to_toml(self) -> str:
        """TOML for this scenario: the source text when there are no overrides, otherwise
        the validated echo (overrides applied, defaults filled in)."""
        if not self._overrides:
            return self._text
        import tomli_w

        return tomli_w.dumps(_drop_none(self.echo))

    def run(self, **kwargs: Any) -> Any:
        """Shorthand for :func:`qoslab.run` on this scenario."""
        from .api import run

        return run(self, **kwargs)

    def __repr__(self) -> str:
        extra = f", overrides={list(self._overrides)!r}" if self._overrides else ""
        return f"Scenario(origin={self._origin!r}{extra})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Scenario):
            return NotImplemented
        return self.echo == other.echo

    __hash__ = None  # type: ignore[assignment]


_METRIC_DURATIONS = {"bin", "series_interval", "interarrival_bin", "interarrival_max"}


def _diagnostic_text(d: Any) -> str:
    """``origin:line: path: message``, as the core displays a diagnostic."""
    where = f"{d['origin']}:{d['line']}" if d.get("line") is not None else str(d["origin"])
    return f"{where}: {d['path']}: {d['message']}" if d.get("path") else f"{where}: {d['message']}"


def read_text(path: str | os.PathLike[str]) -> str:
    """The text of an input file (a scenario, a sweep file): a regular file of at most
    16 MiB, UTF-8, read with the core's bounded reader; anything else raises
    :class:`qoslab.ScenarioFileError` naming the file, what it is and what is allowed."""
    return _core.read_text(Path(path))


def _groups(traffic: object) -> list[dict[str, Any]]:
    """The ``traffic`` argument of the builders: a list of groups. One group (a dict) is
    refused with a message saying to wrap it in a list."""
    if isinstance(traffic, dict):
        name = traffic.get("name", "...")
        raise config_error(
            "traffic",
            f"got one group (a dict, {name!r}); allowed: a list of groups, e.g. traffic=[traffic.cbr(...)]",
            origin="<python>",
        )
    if isinstance(traffic, (str, bytes)) or not isinstance(traffic, Sequence | Iterable):
        raise config_error(
            "traffic",
            f"got {type(traffic).__name__} {traffic!r}; allowed: a list of groups from qoslab.traffic",
            origin="<python>",
        )
    groups = list(traffic)
    for i, g in enumerate(groups):
        if not isinstance(g, dict):
            raise config_error(
                f"traffic.{i}",
                f"got {type(g).__name__} {g!r}; allowed: a group from qoslab.traffic (a dict)",
                origin="<python>",
            )
    return groups


_DEFAULT_LIMITS: contextvars.ContextVar[tuple[int | None, int | None]] = contextvars.ContextVar(
    "qoslab_default_limits", default=(None, None)
)


@contextlib.contextmanager
def default_limits(*, max_memory: int | None = None, max_events: int | None = None) -> Iterator[None]:
    """Within the block, a :class:`Scenario` made without ``max_memory`` / ``max_events`` takes
    these (``qoslab reproduce --max-memory``: the reproductions build their own scenarios)."""
    token = _DEFAULT_LIMITS.set((_limit("max_memory", max_memory), _limit("max_events", max_events)))
    try:
        yield
    finally:
        _DEFAULT_LIMITS.reset(token)


def _limit(name: str, v: int | None) -> int | None:
    """A resource limit: ``None`` (the default) or an integer from 1 to 2^64-1."""
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v < 2**64:
        raise config_error(name, f"{v!r} is not a limit; allowed: an integer from 1 to 2^64-1", origin="<argument>")
    return v
