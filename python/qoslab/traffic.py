"""Traffic-group builders: each returns one ``[[traffic]]`` table.

A group is one or more flows of one model between the same endpoints
(``src``/``dst`` may be patterns such as ``"src*"``, whose matches the
flows take in turn). Rates count payload bits; ``header`` bytes are added
on the wire. Flow arrivals (``arrivals=``) replace the fixed ``flows``::

    from qoslab import traffic
    cbr = traffic.cbr(name="cbr", flows=40, src="src*", dst="sink0", rate="1Mbps", size=1000)
    calls = traffic.on_off(name="voice", src="src0", dst="sink0", interval="20ms", on="1s",
                           off="1.35s", size=160, arrivals=traffic.poisson_arrivals(rate=0.5, lifetime="60s"))

Every value is checked by the core when the scenario is validated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import _units
from ._units import Quantity

Size = Quantity | dict[str, Any]


def random_size(*, base: Quantity, exp_mean: Quantity) -> dict[str, Any]:
    """Payload of ``base`` bytes plus an exponential offset of mean ``exp_mean`` (rounded to bytes)."""
    return {"base": _units.size(base, "size.base"), "exp_mean": _units.size(exp_mean, "size.exp_mean")}


def _group(
    model: dict[str, Any],
    *,
    name: str,
    src: str,
    dst: str,
    size: Size,
    flows: int | None,
    header: Quantity | None,
    class_: int | None,
    dscp: int | None,
    ecn: bool | None,
    start: Quantity | None,
    stop: Quantity | None,
    start_jitter: Quantity | None,
    arrivals: dict[str, Any] | None,
    reserve: Quantity | None,
) -> dict[str, Any]:
    g: dict[str, Any] = {"name": name, **model, "src": src, "dst": dst}
    g["size"] = size if isinstance(size, dict) else _units.size(size)
    if flows is not None:
        g["flows"] = flows
    if header is not None:
        g["header"] = _units.size(header, "header")
    if class_ is not None:
        g["class"] = class_
    if dscp is not None:
        g["dscp"] = dscp
    if ecn is not None:
        g["ecn"] = ecn
    for key, value in (("start", start), ("stop", stop), ("start_jitter", start_jitter)):
        if value is not None:
            g[key] = _units.dur(value, key)
    if arrivals is not None:
        g["arrivals"] = arrivals
    if reserve is not None:
        g["reserve"] = _units.rate(reserve, "reserve")
    return g


def cbr(
    *,
    name: str,
    src: str,
    dst: str,
    size: Size,
    flows: int | None = None,
    rate: Quantity | None = None,
    interval: Quantity | None = None,
    header: Quantity | None = None,
    class_: int | None = None,
    dscp: int | None = None,
    ecn: bool | None = None,
    start: Quantity | None = None,
    stop: Quantity | None = None,
    start_jitter: Quantity | None = None,
    arrivals: dict[str, Any] | None = None,
    reserve: Quantity | None = None,
) -> dict[str, Any]:
    """Constant bit rate: one packet every ``interval``, or every payload*8/``rate`` (give one)."""
    model: dict[str, Any] = {"model": "cbr"}
    if rate is not None:
        model["rate"] = _units.rate(rate)
    if interval is not None:
        model["interval"] = _units.dur(interval, "interval")
    return _group(model, name=name, src=src, dst=dst, size=size, flows=flows, header=header, class_=class_,
                  dscp=dscp, ecn=ecn, start=start, stop=stop, start_jitter=start_jitter, arrivals=arrivals,
                  reserve=reserve)


def poisson(
    *,
    name: str,
    src: str,
    dst: str,
    size: Size,
    rate: Quantity,
    flows: int | None = None,
    header: Quantity | None = None,
    class_: int | None = None,
    dscp: int | None = None,
    ecn: bool | None = None,
    start: Quantity | None = None,
    stop: Quantity | None = None,
    start_jitter: Quantity | None = None,
    arrivals: dict[str, Any] | None = None,
    reserve: Quantity | None = None,
) -> dict[str, Any]:
    """Poisson packet arrivals at a mean payload ``rate``."""
    model = {"model": "poisson", "rate": _units.rate(rate)}
    return _group(model, name=name, src=src, dst=dst, size=size, flows=flows, header=header, class_=class_,
                  dscp=dscp, ecn=ecn, start=start, stop=stop, start_jitter=start_jitter, arrivals=arrivals,
                  reserve=reserve)


def on_off(
    *,
    name: str,
    src: str,
    dst: str,
    size: Size,
    on: Quantity,
    off: Quantity,
    peak: Quantity | None = None,
    interval: Quantity | None = None,
    dist: str | None = None,
    shape: float | None = None,
    flows: int | None = None,
    header: Quantity | None = None,
    class_: int | None = None,
    dscp: int | None = None,
    ecn: bool | None = None,
    start: Quantity | None = None,
    stop: Quantity | None = None,
    start_jitter: Quantity | None = None,
    arrivals: dict[str, Any] | None = None,
    reserve: Quantity | None = None,
) -> dict[str, Any]:
    """ON/OFF: CBR at ``peak`` (or every ``interval``) during ON periods of mean ``on``,
    silent for OFF periods of mean ``off``; ``dist`` ``"exponential"`` (default) or
    ``"pareto"`` with ``shape`` (default 1.5)."""
    model: dict[str, Any] = {"model": "on_off", "on": _units.dur(on, "on"), "off": _units.dur(off, "off")}
    if peak is not None:
        model["peak"] = _units.rate(peak, "peak")
    if interval is not None:
        model["interval"] = _units.dur(interval, "interval")
    if dist is not None:
        model["dist"] = dist
    if shape is not None:
        model["shape"] = shape
    return _group(model, name=name, src=src, dst=dst, size=size, flows=flows, header=header, class_=class_,
                  dscp=dscp, ecn=ecn, start=start, stop=stop, start_jitter=start_jitter, arrivals=arrivals,
                  reserve=reserve)


def _lifetime(process: str, lifetime: Quantity, lifetime_dist: str | None, max_flows: int | None,
              **extra: Any) -> dict[str, Any]:
    a: dict[str, Any] = {"process": process, **extra, "lifetime": _units.dur(lifetime, "lifetime")}
    if lifetime_dist is not None:
        a["lifetime_dist"] = lifetime_dist
    if max_flows is not None:
        a["max_flows"] = max_flows
    return a


def poisson_arrivals(*, rate: float, lifetime: Quantity, lifetime_dist: str | None = None,
                     max_flows: int | None = None) -> dict[str, Any]:
    """New flows as a Poisson process of ``rate`` per second, each living ``lifetime``
    (exponential by default, or ``lifetime_dist="fixed"``)."""
    return _lifetime("poisson", lifetime, lifetime_dist, max_flows, rate=rate)


def batch_poisson_arrivals(*, rate: float, batch_mean: float, lifetime: Quantity,
                           lifetime_dist: str | None = None, max_flows: int | None = None) -> dict[str, Any]:
    """Batches of a geometric number of flows (mean ``batch_mean``) as a Poisson process of ``rate`` per second."""
    return _lifetime("batch_poisson", lifetime, lifetime_dist, max_flows, rate=rate, batch_mean=batch_mean)


def keep_alive(*, alive: int, lifetime: Quantity, lifetime_dist: str | None = None,
               max_flows: int | None = None) -> dict[str, Any]:
    """Keep ``alive`` flows running: when one ends, the next starts."""
    return _lifetime("keep_alive", lifetime, lifetime_dist, max_flows, alive=alive)


def replay(*, file: str) -> dict[str, Any]:
    """Replay recorded flow start times and lifetimes from a CSV file with columns
    ``start_s,lifetime_s`` (relative to the scenario's directory)."""
    return {"process": "replay", "file": file}


__all__: Sequence[str] = (
    "cbr", "poisson", "on_off", "random_size", "poisson_arrivals", "batch_poisson_arrivals", "keep_alive", "replay",
)
