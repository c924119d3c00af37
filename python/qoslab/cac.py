"""The CAC calculator for shaped TCP [Tarasiuk05 §3-§4]: ``qoslab.cac.cac(...)``.

From a link of ``capacity`` with a ``buffer`` of B packets, a target loss
``iplr`` and a requested rate ``rate`` it gives the utilisation bound
ρ = 2B / (2B - ln IPLR) and N_max = floor(ρC / R_req). With ``holding`` (the
mean holding time, e.g. file / R_req) and ``arrival_rate`` (1/s) it adds
the Erlang-B blocking of N_max servers at offered load A = λh; with
``blocking`` it solves for the arrival rate that gives it. See
``docs/cac_calculator.md``.

Rates take the scenario format's strings (``"100Mbps"``) or ints in bit/s;
``holding`` a string (``"10s"``) or a number of seconds. Bad values raise
``qoslab.ConfigError`` naming the argument.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Real
from typing import TYPE_CHECKING, Any

from . import _units
from ._core import cac as _cac
from ._core import fluid_run as _fluid_run
from .errors import ConfigError, config_error

if TYPE_CHECKING:  # pragma: no cover
    import argparse


@dataclass(frozen=True)
class CacResult:
    """ρ, ρC (bit/s), N_max, and the optional Erlang-B answers (``None`` when not asked)."""

    rho: float
    rho_c_bps: float
    n_max: int
    offered_load_erl: float | None = None
    blocking: float | None = None
    target_offered_load_erl: float | None = None
    target_arrival_rate_per_s: float | None = None


def cac(
    capacity: _units.Quantity,
    buffer: int | str,
    iplr: float,
    rate: _units.Quantity,
    *,
    holding: _units.Quantity | None = None,
    arrival_rate: float | None = None,
    blocking: float | None = None,
) -> CacResult:
    """Computes ρ and N_max, and the blocking or arrival rate when their inputs are given."""
    d = _cac(
        _units.rate(capacity, "capacity"),
        _buffer(buffer),
        _number(iplr, "iplr"),
        _units.rate(rate, "rate"),
        holding=None if holding is None else _units.dur(holding, "holding"),
        arrival_rate=None if arrival_rate is None else _number(arrival_rate, "arrival_rate"),
        blocking=None if blocking is None else _number(blocking, "blocking"),
    )
    return CacResult(**d)


#: The largest buffer the core takes (a signed 64-bit count of packets).
MAX_BUFFER_PKTS = 2**63 - 1


def _buffer(value: object) -> int | str:
    """``buffer`` as the core takes it: an int in 1..MAX_BUFFER_PKTS, or text it parses."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise config_error("buffer", f"{value!r} is not a packet count; allowed: an integer such as 10, or '10pkts'")
    if not 1 <= value <= MAX_BUFFER_PKTS:
        raise config_error("buffer", f"({value} packets) is out of range; allowed: 1 to {MAX_BUFFER_PKTS} packets")
    return value


def _number(value: object, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise config_error(field, f"{value!r} is not a number")
    return float(value)


def fluid_run(
    *,
    scheme: int = 1,
    k: float = 3.0,
    share: str = "capacity",
    capacity: _units.Quantity = "100Mbps",
    rate: _units.Quantity = "1Mbps",
    buffer: int | None = None,
    iplr: float | None = None,
    rho: float | None = None,
    file_size_bits: int = 10_000_000,
    arrival_rate: float = 5.98,
    duration: _units.Quantity = "20000s",
    warmup: _units.Quantity = "200s",
    seed: int = 1,
    batches: int = 20,
    record_transfers: bool = True,
) -> dict[str, Any]:
    """Runs the ideal-rate (fluid) mode of the TCP-CAC schemes ([Tarasiuk05], Table 4).

    Defaults are the paper's Table 4 set-up (ρ from B = 10, IPLR = 1e-3 unless
    ``rho`` is given). Returns the results dict of ``qoslab._core.fluid_run``
    with ``transfers`` turned into a pandas DataFrame (one row per request).
    See ``docs/mechanisms/fluid_mode.md``.
    """
    import pandas as pd

    cfg: dict[str, Any] = {
        "scheme": scheme,
        "k": float(k),
        "share": share,
        "capacity": _units.rate(capacity, "capacity"),
        "rate": _units.rate(rate, "rate"),
        "buffer": buffer,
        "iplr": iplr,
        "rho": rho,
        "file_size_bits": file_size_bits,
        "arrival_rate": float(arrival_rate),
        "duration": _units.dur(duration, "duration"),
        "warmup": _units.dur(warmup, "warmup"),
        "seed": seed,
        "batches": batches,
        "record_transfers": record_transfers,
    }
    out = _fluid_run(cfg)
    out["transfers"] = pd.DataFrame(out["transfers"])
    return out


#: ``qoslab cac``'s flags by the argument names of ``qoslab.cac.cac`` (its errors name those).
_CAC_FLAGS = {
    "capacity": "--capacity",
    "buffer": "--buffer",
    "iplr": "--iplr",
    "rate": "--rate",
    "holding": "--holding",
    "arrival_rate": "--arrival-rate",
    "blocking": "--blocking",
}


def _cac_number(text: str | None, flag: str, allowed: str) -> float | None:
    import math

    if text is None:
        return None
    try:
        v = float(text)
    except ValueError:
        raise config_error(flag, f"{text!r} is not a number; allowed: {allowed}") from None
    if not math.isfinite(v):
        raise config_error(flag, f"{text!r} is not finite; allowed: {allowed}")
    return v


def answer_for_flags(a: argparse.Namespace) -> CacResult:
    """``qoslab cac``: :func:`cac` of the command's flags (text as typed); every error is a
    ``ConfigError`` that names the flag it comes from."""
    import re

    iplr = _cac_number(a.iplr, "--iplr", "a probability in (0, 1), e.g. 1e-3")
    assert iplr is not None  # a required flag
    arrival = _cac_number(a.arrival_rate, "--arrival-rate", "connection requests per second, >= 0, e.g. 5.98")
    blocking = _cac_number(a.blocking, "--blocking", "a probability in (0, 1), e.g. 0.01")
    m = re.fullmatch(r"\s*(\d+)\s*", a.buffer)
    buffer: int | str = a.buffer
    if m is not None:
        buffer = int(m.group(1))
        if not 1 <= buffer <= MAX_BUFFER_PKTS:
            raise config_error("--buffer", f"{a.buffer} is out of range; allowed: 1 to {MAX_BUFFER_PKTS} packets")

    def flagged(e: ConfigError) -> ConfigError:
        diag = (getattr(e, "diagnostics", None) or [{}])[0]
        field = str(diag.get("path") or "")
        message = str(diag.get("message") or e)
        if field in _CAC_FLAGS:
            return config_error(_CAC_FLAGS[field], message)
        return config_error("qoslab cac", str(e))

    try:
        base = cac(a.capacity, buffer, iplr, a.rate)
    except ConfigError as e:
        raise flagged(e) from None
    try:
        return cac(a.capacity, buffer, iplr, a.rate, holding=a.holding, arrival_rate=arrival, blocking=blocking)
    except ConfigError as e:
        diag = (getattr(e, "diagnostics", None) or [{}])[0]
        if diag.get("path") != "servers":
            raise flagged(e) from None
        flag = "--blocking" if blocking is not None else "--arrival-rate"
        why = (
            f"--rate {a.rate} is above rho*C = {base.rho_c_bps / 1e6:.6g} Mb/s, so no connection fits"
            if base.n_max == 0
            else f"Erlang-B is computed for at most 10000000 servers ({diag.get('message')})"
        )
        raise config_error(
            flag,
            f"N_max = {base.n_max} connections from --capacity {a.capacity}, --buffer {a.buffer}, --iplr "
            f"{a.iplr} and --rate {a.rate}: {why}; allowed: a --capacity/--rate pair giving N_max from 1 to "
            "10000000, or no " + flag,
        ) from None


__all__ = ["CacResult", "answer_for_flags", "cac", "fluid_run"]
