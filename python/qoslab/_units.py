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
"""

from __future__ import annotations

from numbers import Integral, Real

Quantity = str | int | float

_NS = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}


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
    bps = _whole(value, "bits per second", field)
    for unit, k in (("Gbps", 10**9), ("Mbps", 10**6), ("kbps", 10**3)):
        if bps and bps % k == 0:
            return f"{bps // k}{unit}"
    return f"{bps}bps"


def dur(value: Quantity, field: str = "duration") -> str:
    """A duration: ``"20ms"`` as is, or a number of seconds (rounded to the nanosecond)."""
    if isinstance(value, str):
        return value
    ns = _nanoseconds(value, field)
    if ns == 0:
        return "0s"
    for unit, k in _NS.items():
        if ns % k == 0:
            return f"{ns // k}{unit}"
    raise AssertionError("unreachable: every integer is a multiple of 1 ns")


def size(value: Quantity, field: str = "size") -> str:
    """A size: ``"1500B"`` as is, or an int in bytes."""
    if isinstance(value, str):
        return value
    return f"{_whole(value, 'bytes', field)}B"


#: The longest duration the core holds: 2^64 - 1 ns (about 584 years).
MAX_NS = 2**64 - 1


def _nanoseconds(value: object, field: str) -> int:
    """Whole nanoseconds of a number of seconds (``object``: the builders also take NumPy numbers).
    Raises :class:`qoslab.ConfigError` naming ``field`` for a value out of range (``1e308``,
    NaN, infinite or negative)."""
    import math

    from .errors import config_error

    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f'{field}: expected a duration such as "20ms" or a number of seconds, got {value!r}')
    if isinstance(value, Integral):
        ns = int(value) * _NS["s"]
    else:
        f = float(value)
        in_range = math.isfinite(f) and 0 <= f * 1e9 <= MAX_NS
        ns = round(f * 1e9) if in_range else -1
    if not 0 <= ns <= MAX_NS:
        raise config_error(
            field, f"{value!r} s is out of range; allowed: 0 to {MAX_NS // _NS['s']} s (2^64 - 1 ns)", origin="<python>"
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


_UNIT_S = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}


def seconds(text: object) -> float:
    """Seconds of a time as a scenario echoes it (``"10s"``, ``"150ms"``, ``"2min"``).

    Raises ``ValueError`` for text that is not a number and one of those units."""
    t = str(text).strip()
    for unit in sorted(_UNIT_S, key=len, reverse=True):
        if t.endswith(unit):
            try:
                return float(t[: -len(unit)]) * _UNIT_S[unit]
            except ValueError:
                break
    raise ValueError(f'cannot read the time {text!r}; expected a number and a unit such as "2s"')
