"""Human units for the builders: Python numbers to the scenario format's strings.

The scenario format spells quantities with units (``"25Mbps"``, ``"20ms"``,
``"1000B"``, ``"60pkts"``) and the core parses them. The builders accept
either those strings (passed through unchanged, so the core reports any
mistake with the field's path) or plain numbers in base units:

========  ======================  ===========================
kind      number means            example
========  ======================  ===========================
rate      bits per second (int)   ``25_000_000`` -> "25Mbps"
duration  seconds (int or float)  ``0.02`` -> "20ms"
size      bytes (int)             ``1000`` -> "1000B"
limit     packets (int)           ``60`` -> "60pkts"
========  ======================  ===========================

The units themselves (their names, how a number is written with one and
read back) are the core's: ``qoslab._core.format_rate`` and friends
(``qoslab_core::units``), not a table here.
"""

from __future__ import annotations

from numbers import Integral, Real

from . import _core

Quantity = str | int | float

#: Nanoseconds in a second (the core's durations are integer ns).
NS_PER_S = 1_000_000_000


def _whole(value: object, what: str, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{field}: expected a {what} as a string with a unit or a number, got {value!r}")
    if isinstance(value, Integral):
        return int(value)
    f = float(value)
    if not f.is_integer():
        raise ValueError(f"{field}: {value!r} is not a whole number of {what}")
    return int(f)


def rate(value: Quantity, field: str = "rate") -> str:
    """A rate: ``"25Mbps"`` as is, or an int in bit/s."""
    if isinstance(value, str):
        return value
    return _core.format_rate(_in_range(_whole(value, "bits per second", field), field, "bit/s"))


def dur(value: Quantity, field: str = "duration") -> str:
    """A duration: ``"20ms"`` as is, or a number of seconds (rounded to the nanosecond)."""
    if isinstance(value, str):
        return value
    return _core.format_duration(_nanoseconds(value, field))


def size(value: Quantity, field: str = "size") -> str:
    """A size: ``"1500B"`` as is, or an int in bytes."""
    if isinstance(value, str):
        return value
    return _core.format_size(_in_range(_whole(value, "bytes", field), field, "bytes"))


#: The longest duration the core holds: 2^64 - 1 ns (about 584 years).
MAX_NS = 2**64 - 1


def _in_range(v: int, field: str, unit: str) -> int:
    """``v`` if the core's 64-bit quantities hold it, else a :class:`qoslab.ConfigError` naming ``field``."""
    from .errors import config_error

    if not 0 <= v <= MAX_NS:
        raise config_error(field, f"{v} {unit} is out of range; allowed: 0 to 2^64 - 1", origin="<python>")
    return v


def _nanoseconds(value: object, field: str) -> int:
    """Whole nanoseconds of a number of seconds (``object``: the builders also take NumPy numbers).
    Raises :class:`qoslab.ConfigError` naming ``field`` for a value out of range (``1e308``,
    NaN, infinite or negative)."""
    import math

    from .errors import config_error

    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f'{field}: expected a duration such as "20ms" or a number of seconds, got {value!r}')
    if isinstance(value, Integral):
        ns = int(value) * NS_PER_S
    else:
        f = float(value)
        in_range = math.isfinite(f) and 0 <= f * 1e9 <= MAX_NS
        ns = round(f * 1e9) if in_range else -1
    if not 0 <= ns <= MAX_NS:
        raise config_error(
            field, f"{value!r} s is out of range; allowed: 0 to {MAX_NS // NS_PER_S} s (2^64 - 1 ns)", origin="<python>"
        )
    return ns


def limit(value: Quantity | tuple[Quantity, ...] | list[Quantity], field: str = "limit") -> str | list[str]:
    """A queue limit: ``"60pkts"``/``"64kB"`` as is, an int in packets, or a pair of both."""
    if isinstance(value, (tuple, list)):
        return [_limit_one(v, field) for v in value]
    return _limit_one(value, field)


def _limit_one(value: Quantity, field: str) -> str:
    if isinstance(value, str):
        return value
    return f"{_whole(value, 'packets', field)}pkts"


def seconds(text: object) -> float:
    """Seconds of a time as a scenario echoes it (``"10s"``, ``"150ms"``, ``"2min"``), read by the
    core (``qoslab._core.parse_duration``).

    Raises ``ValueError`` for text that is not a duration. (Kept for callers that still hold echo
    text, such as ``recording.py``; new code reads ``Scenario.model``, whose
    durations are already numbers.)"""
    try:
        return _core.parse_duration(str(text)) / NS_PER_S
    except ValueError:
        raise ValueError(f'cannot read the time {text!r}; expected a number and a unit such as "2s"') from None
