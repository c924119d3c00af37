"""Traffic-group builders: each returns one ``[[traffic]]`` table.

A group is one or more flows of one model between the same endpoints
(``src``/``dst`` may be patterns such as ``"src*"``, whose matches the
flows take in turn). Rates count payload bits; ``header`` bytes are added
on the wire. Flow arrivals (``arrivals=``) replace the fixed ``flows``::

    from qoslab import traffic
    cbr = traffic.cbr(name="cbr", flows=40, src="src*", dst="sink0", rate="1Mbps", size=1000)
    calls = traffic.on_off(name="voice", src="src0", dst="sink0", interval="20ms", on="1s",
                           off="1.35s", size=160, arrivals=traffic.poisson_arrivals(rate=0.5, lifetime="60s"))
    bulk = traffic.ftp(name="ftp", flows=4, src="src*", dst="sink0", size=1460, header=40,
                       tcp=traffic.tcp_options(variant="newreno", max_window=44))
    files = traffic.transfer(name="file", bytes=1_250_000, src="src*", dst="sink0", size=1460,
                             shaper=traffic.shaper(depth="1pkts"))

TCP groups (``ftp``, ``transfer``) send segments of ``size`` payload bytes
(the MSS); their ACKs travel the reverse path. ``shaper=`` puts a per-flow
token bucket at each flow's network entry (:func:`shaper`); ``dst_port=``
fixes the destination port (an application port MACE may list); ``src_choice="random"``
draws each flow's source among the matches of ``src`` (default ``"round_robin"``: in turn).

Every value is checked by the core when the scenario is validated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from . import _units
from ._units import Quantity
from .errors import config_error

Size = Quantity | dict[str, Any]
#: How a group's flows take their sources among the matches of ``src``: in turn (the default)
#: or a uniform draw per flow from the group's own stream (docs/scenarios.md, "Traffic").
SrcChoice = Literal["round_robin", "random"]


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
    dst_port: int | None,
    shaper: dict[str, Any] | None,
    randomize: float | None = None,
    send_jitter: dict[str, Any] | None = None,
    packetization: str | None = None,
    admitted: bool | None = None,
    src_choice: SrcChoice | None = None,
) -> dict[str, Any]:
    g: dict[str, Any] = {"name": name, **model, "src": src, "dst": dst}
    if src_choice is not None:
        g["src_choice"] = src_choice
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
    if dst_port is not None:
        g["dst_port"] = dst_port
    if shaper is not None:
        g["shaper"] = shaper
    if randomize is not None:
        g["randomize"] = randomize
    if send_jitter is not None:
        g["send_jitter"] = send_jitter
    if packetization is not None:
        g["packetization"] = packetization
    if admitted is not None:
        g["admitted"] = admitted
    return g


def uniform_jitter(*, max: Quantity) -> dict[str, Any]:
    """Host send-time jitter for ``send_jitter=``: each packet after a flow's first leaves a uniform
    delay in [0, ``max``] after its ideal time (a sender whose timer fires on the next tick of a
    ``max`` clock: FreeBSD 2.2.2's is 10 ms). ``max`` is at most the flow's packet spacing."""
    return {"dist": "uniform", "max": _units.dur(max, "send_jitter.max")}


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
    dst_port: int | None = None,
    shaper: dict[str, Any] | None = None,
    src_choice: SrcChoice | None = None,
    randomize: float | None = None,
    send_jitter: dict[str, Any] | None = None,
    admitted: bool | None = None,
) -> dict[str, Any]:
    """Constant bit rate: one packet every ``interval``, or every payload*8/``rate`` (give one).
    ``randomize``: each packet leaves up to that fraction of the spacing late [Zhang07 §2.3.4];
    ``send_jitter``: host timing jitter of the send times (:func:`uniform_jitter`);
    ``admitted``: the flows were admitted elsewhere (rerouted, [Zhang07 §4]) and start without
    asking their PCN ingress."""
    model: dict[str, Any] = {"model": "cbr"}
    if rate is not None:
        model["rate"] = _units.rate(rate)
    if interval is not None:
        model["interval"] = _units.dur(interval, "interval")
    return _group(
        model,
        name=name,
        src=src,
        dst=dst,
        size=size,
        flows=flows,
        header=header,
        class_=class_,
        dscp=dscp,
        ecn=ecn,
        start=start,
        stop=stop,
        start_jitter=start_jitter,
        arrivals=arrivals,
        reserve=reserve,
        dst_port=dst_port,
        shaper=shaper,
        randomize=randomize,
        send_jitter=send_jitter,
        admitted=admitted,
        src_choice=src_choice,
    )


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
    dst_port: int | None = None,
    shaper: dict[str, Any] | None = None,
    src_choice: SrcChoice | None = None,
) -> dict[str, Any]:
    """Poisson packet arrivals at a mean payload ``rate``."""
    model = {"model": "poisson", "rate": _units.rate(rate)}
    return _group(
        model,
        name=name,
        src=src,
        dst=dst,
        size=size,
        flows=flows,
        header=header,
        class_=class_,
        dscp=dscp,
        ecn=ecn,
        start=start,
        stop=stop,
        start_jitter=start_jitter,
        arrivals=arrivals,
        reserve=reserve,
        dst_port=dst_port,
        shaper=shaper,
        src_choice=src_choice,
    )


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
    dst_port: int | None = None,
    shaper: dict[str, Any] | None = None,
    src_choice: SrcChoice | None = None,
    randomize: float | None = None,
    send_jitter: dict[str, Any] | None = None,
    packetization: Literal["ceil", "nominal"] | None = None,
    admitted: bool | None = None,
) -> dict[str, Any]:
    """ON/OFF: CBR at ``peak`` (or every ``interval``) during ON periods of mean ``on``,
    silent for OFF periods of mean ``off``; ``dist`` ``"exponential"`` (default) or
    ``"pareto"`` with ``shape`` (default 1.5). ``packetization``: ``"ceil"`` (default,
    ⌈L / interval⌉ packets per ON period) or ``"nominal"`` (the packet clock runs only while
    ON and keeps its phase, so the mean rate is exactly nominal); ``send_jitter``: host timing
    jitter of the send times (:func:`uniform_jitter`); ``admitted``: as for :func:`cbr`."""
    model: dict[str, Any] = {"model": "on_off", "on": _units.dur(on, "on"), "off": _units.dur(off, "off")}
    if peak is not None:
        model["peak"] = _units.rate(peak, "peak")
    if interval is not None:
        model["interval"] = _units.dur(interval, "interval")
    if dist is not None:
        model["dist"] = dist
    if shape is not None:
        model["shape"] = shape
    return _group(
        model,
        name=name,
        src=src,
        dst=dst,
        size=size,
        flows=flows,
        header=header,
        class_=class_,
        dscp=dscp,
        ecn=ecn,
        start=start,
        stop=stop,
        start_jitter=start_jitter,
        arrivals=arrivals,
        reserve=reserve,
        dst_port=dst_port,
        shaper=shaper,
        randomize=randomize,
        send_jitter=send_jitter,
        packetization=packetization,
        admitted=admitted,
        src_choice=src_choice,
    )


def tcp_options(
    *,
    variant: Literal["reno", "newreno"] | None = None,
    preset: Literal["qoslab", "ns2", "rfc6298", "linux"] | None = None,
    limited_transmit: bool | None = None,
    max_window: int | str | None = None,
    init_window: int | None = None,
    rwnd: int | str | None = None,
    delayed_ack: bool | None = None,
    ack_delay: Quantity | None = None,
    min_rto: Quantity | None = None,
    initial_rto: Quantity | None = None,
    max_rto: Quantity | None = None,
    granularity: Quantity | None = None,
    stack: Literal["rfc", "ns2"] | None = None,
) -> dict[str, Any]:
    """The ``tcp`` table of an :func:`ftp` or :func:`transfer` group.

    ``max_window`` and ``rwnd`` are segments (``20`` or ``"20pkts"``) or a byte size
    (``"64kB"``: the whole segments of the group's ``size`` that fit in it).

    Defaults (ns-2 of 2000, ``docs/mechanisms/tcp.md``): ``variant`` ``"reno"`` (or
    ``"newreno"``), ``max_window`` 20, ``init_window`` 1, no ``rwnd``, no delayed ACKs
    (``ack_delay`` 100 ms when on), ``min_rto`` 200 ms, ``initial_rto`` 3 s, ``max_rto`` 60 s,
    ``granularity`` 100 ms (``"0s"`` for none), ``stack`` ``"rfc"``. ``preset`` sets the four
    timers and ``init_window`` at once (``"ns2"``: ns-2 of 2005, ``"rfc6298"``, ``"linux"``; keys
    given beside it win); ``limited_transmit`` turns on RFC 3042 (default off). ``stack="ns2"``
    follows ns-2.35's Agent/TCP where it departs from the RFCs (window cut from cwnd, a second
    fast retransmit only past ``recover``, RTTs counted in ticks of ``granularity``).
    """
    t: dict[str, Any] = {}
    plain = {
        "variant": variant,
        "preset": preset,
        "limited_transmit": limited_transmit,
        "max_window": max_window,
        "init_window": init_window,
        "rwnd": rwnd,
        "delayed_ack": delayed_ack,
        "stack": stack,
    }
    t.update({k: v for k, v in plain.items() if v is not None})
    durations = {
        "ack_delay": ack_delay,
        "min_rto": min_rto,
        "initial_rto": initial_rto,
        "max_rto": max_rto,
        "granularity": granularity,
    }
    t.update({k: _units.dur(v, f"tcp.{k}") for k, v in durations.items() if v is not None})
    return t


def mm_app_options(
    *, scales: Sequence[Quantity] | None = None, feedback_size: Quantity | None = None
) -> dict[str, Any]:
    """The ``mm_app`` table of an :func:`mm_app` group: the scales' payload rates, lowest first
    (default 300, 500, 700, 900, 1100 kb/s), and the feedback packet's wire size (default 40 B)."""
    t: dict[str, Any] = {}
    if scales is not None:
        if isinstance(scales, (str, bytes)):
            raise TypeError(f'mm_app.scales: expected a list of rates such as ["300kbps", "500kbps"], got {scales!r}')
        t["scales"] = [_units.rate(r, "mm_app.scales") for r in scales]
    if feedback_size is not None:
        t["feedback_size"] = _units.size(feedback_size, "mm_app.feedback_size")
    return t


def shaper(*, rate: Quantity | None = None, depth: Any = None, buffer: Any = None) -> dict[str, Any]:
    """A per-flow token-bucket shaper at the network entry [Tarasiuk05 §2], for a group's ``shaper=``.

    ``rate``: wire bit/s (required unless the scenario's admission is ``shaping_cac``, which
    assigns it); ``depth``: ``"1pkts"`` (default; int = packets) or bytes such as ``"1500B"``;
    ``buffer``: a queue limit (packets, ``"64kB"`` or both); without one the shaper never drops.
    """
    t: dict[str, Any] = {}
    if rate is not None:
        t["rate"] = _units.rate(rate, "shaper.rate")
    if depth is not None:
        t["depth"] = _units.limit(depth, "shaper.depth")
    if buffer is not None:
        t["buffer"] = _units.limit(buffer, "shaper.buffer")
    return t


def ftp(
    *,
    name: str,
    src: str,
    dst: str,
    size: Quantity,
    tcp: dict[str, Any] | None = None,
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
    dst_port: int | None = None,
    shaper: dict[str, Any] | None = None,
    src_choice: SrcChoice | None = None,
) -> dict[str, Any]:
    """Greedy bulk TCP (infinite data) in segments of ``size`` payload bytes (the MSS);
    ``tcp``: :func:`tcp_options` (every key optional)."""
    model: dict[str, Any] = {"model": "ftp"}
    if tcp is not None:
        model["tcp"] = tcp
    return _group(
        model,
        name=name,
        src=src,
        dst=dst,
        size=size,
        flows=flows,
        header=header,
        class_=class_,
        dscp=dscp,
        ecn=ecn,
        start=start,
        stop=stop,
        start_jitter=start_jitter,
        arrivals=arrivals,
        reserve=reserve,
        dst_port=dst_port,
        shaper=shaper,
        src_choice=src_choice,
    )


def transfer(
    *,
    name: str,
    src: str,
    dst: str,
    size: Quantity,
    bytes: Quantity,
    tcp: dict[str, Any] | None = None,
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
    dst_port: int | None = None,
    shaper: dict[str, Any] | None = None,
    src_choice: SrcChoice | None = None,
) -> dict[str, Any]:
    """A finite TCP transfer of ``bytes`` of payload per flow (int = bytes) in segments of
    ``size``; the flow ends when its last byte is acknowledged (``completion_s`` in the flows
    table). ``tcp``: :func:`tcp_options`."""
    model: dict[str, Any] = {"model": "transfer", "bytes": _units.size(bytes, "bytes")}
    if tcp is not None:
        model["tcp"] = tcp
    return _group(
        model,
        name=name,
        src=src,
        dst=dst,
        size=size,
        flows=flows,
        header=header,
        class_=class_,
        dscp=dscp,
        ecn=ecn,
        start=start,
        stop=stop,
        start_jitter=start_jitter,
        arrivals=arrivals,
        reserve=reserve,
        dst_port=dst_port,
        shaper=shaper,
        src_choice=src_choice,
    )


def mm_app(
    *,
    name: str,
    src: str,
    dst: str,
    size: Size,
    scales: Sequence[Quantity] | None = None,
    feedback_size: Quantity | None = None,
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
    dst_port: int | None = None,
    shaper: dict[str, Any] | None = None,
    src_choice: SrcChoice | None = None,
) -> dict[str, Any]:
    """MM_APP ([Claypool00 §2], §5): media-scaling UDP whose receiver feeds losses back; ``scales``
    and ``feedback_size`` as in :func:`mm_app_options` (omitted: the paper's defaults)."""
    model: dict[str, Any] = {"model": "mm_app"}
    options = mm_app_options(scales=scales, feedback_size=feedback_size)
    if options:
        model["mm_app"] = options
    return _group(
        model,
        name=name,
        src=src,
        dst=dst,
        size=size,
        flows=flows,
        header=header,
        class_=class_,
        dscp=dscp,
        ecn=ecn,
        start=start,
        stop=stop,
        start_jitter=start_jitter,
        arrivals=arrivals,
        reserve=reserve,
        dst_port=dst_port,
        shaper=shaper,
        src_choice=src_choice,
    )


def _lifetime(
    process: str, lifetime: Quantity, lifetime_dist: str | None, max_flows: int | None, **extra: Any
) -> dict[str, Any]:
    a: dict[str, Any] = {"process": process, **extra, "lifetime": _units.dur(lifetime, "lifetime")}
    if lifetime_dist is not None:
        a["lifetime_dist"] = lifetime_dist
    if max_flows is not None:
        a["max_flows"] = max_flows
    return a


def poisson_arrivals(
    *, rate: float, lifetime: Quantity, lifetime_dist: str | None = None, max_flows: int | None = None
) -> dict[str, Any]:
    """New flows as a Poisson process of ``rate`` per second, each living ``lifetime``
    (exponential by default, or ``lifetime_dist="fixed"``)."""
    return _lifetime("poisson", lifetime, lifetime_dist, max_flows, rate=rate)


def batch_poisson_arrivals(
    *,
    rate: float,
    batch_mean: float,
    lifetime: Quantity,
    lifetime_dist: str | None = None,
    max_flows: int | None = None,
) -> dict[str, Any]:
    """Batches of a geometric number of flows (mean ``batch_mean``) as a Poisson process of ``rate`` per second."""
    return _lifetime("batch_poisson", lifetime, lifetime_dist, max_flows, rate=rate, batch_mean=batch_mean)


def keep_alive(
    *, alive: int, lifetime: Quantity, lifetime_dist: str | None = None, max_flows: int | None = None
) -> dict[str, Any]:
    """Keep ``alive`` flows running: when one ends, the next starts."""
    return _lifetime("keep_alive", lifetime, lifetime_dist, max_flows, alive=alive)


def replay(*, file: str) -> dict[str, Any]:
    """Replay recorded flow start times and lifetimes from a CSV file with columns
    ``start_s,lifetime_s`` (relative to the scenario's directory)."""
    return {"process": "replay", "file": file}


__all__: Sequence[str] = (
    "batch_poisson_arrivals",
    "cbr",
    "ftp",
    "keep_alive",
    "mm_app",
    "mm_app_options",
    "on_off",
    "poisson",
    "poisson_arrivals",
    "random_size",
    "replay",
    "shaper",
    "tcp_options",
    "transfer",
    "uniform_jitter",
)


def _paper(model: dict[str, Any], *, name: str, src: str, dst: str, **fields: Any) -> dict[str, Any]:
    """A group of a paper model (``model = "voice"`` ...): the core expands it into the primitive
    group(s) it stands for and checks every parameter (``docs/scenarios.md``, "Paper models")."""
    g: dict[str, Any] = {"name": name, **model, "src": src, "dst": dst}
    for key, value in fields.items():
        if value is None:
            continue
        if key in ("start", "stop", "start_jitter", "mean_duration"):
            value = _units.dur(value, key)
        elif key in ("size", "header"):
            value = _units.size(value, key)
        g[key] = value
    return g


def mgen_periodic(
    *,
    name: str,
    src: str,
    dst: str,
    size: Quantity,
    pps: float,
    header: Quantity | None = None,
    dst_port: int | None = None,
    start: Quantity | None = None,
    stop: Quantity | None = None,
    dscp: int | None = None,
) -> dict[str, Any]:
    """An MGEN 3.0 ``PERIODIC`` UDP flow [Guerin99 §IV]: ``pps`` packets a second of ``size``
    payload bytes, evenly spaced, from ``start`` to ``stop``; ``header`` (default 28 B of
    IP/UDP) is added on the wire. The core makes it a ``cbr`` group with ``interval`` = 1/``pps``
    (``model = "mgen_periodic"``)."""
    return _paper(
        {"model": "mgen_periodic"},
        name=name,
        src=src,
        dst=dst,
        size=size,
        pps=pps,
        header=header,
        dst_port=dst_port,
        start=start,
        stop=stop,
        dscp=dscp,
    )


def mgen_poisson(
    *,
    name: str,
    src: str,
    dst: str,
    size: Quantity,
    pps: float,
    header: Quantity | None = None,
    dst_port: int | None = None,
    start: Quantity | None = None,
    stop: Quantity | None = None,
    dscp: int | None = None,
) -> dict[str, Any]:
    """An MGEN 3.0 ``POISSON`` UDP flow [Guerin99 §IV]: packets of ``size`` payload bytes at a
    mean of ``pps`` a second with exponential gaps; ``header`` (default 28 B) is added on the
    wire. The core makes it a ``poisson`` group at ``pps`` × ``size`` × 8 bit/s of payload
    (``model = "mgen_poisson"``)."""
    return _paper(
        {"model": "mgen_poisson"},
        name=name,
        src=src,
        dst=dst,
        size=size,
        pps=pps,
        header=header,
        dst_port=dst_port,
        start=start,
        stop=stop,
        dscp=dscp,
    )


#: [Zhang07] Table 2.1: codec -> (payload bytes, spacing in ms, ON fraction), for the reproductions'
#: arithmetic; the expansion itself is the core's (``model = "voice"``; tests check they agree).
VOICE_CODECS: dict[str, tuple[int, int, float]] = {
    "cbr": (160, 20, 1.0),
    "vbr": (160, 20, 0.34),
    "g711_cbr_20": (200, 20, 1.0),
    "g711_vbr_20": (200, 20, 0.4),
    "g711_cbr_10": (120, 10, 1.0),
    "g711_vbr_10": (120, 10, 0.4),
    "g729_cbr": (60, 20, 1.0),
    "g729_vbr": (60, 20, 0.4),
}
#: The paper's primary MIX: the six G.711/G.729 codecs in equal proportion.
VOICE_MIX = ("g711_cbr_20", "g711_vbr_20", "g711_cbr_10", "g711_vbr_10", "g729_cbr", "g729_vbr")
#: Mean ON + OFF of a VBR voice flow (a talk spurt and a silence, about 1 s: Brady's model);
#: the paper gives only the ON fraction (see docs/decisions.md, "PCN traffic").
VOICE_CYCLE_MS = 1000


def _calls(
    calls_per_s: float | None, flows: int | None, arrivals: dict[str, Any] | None, mean_duration: Quantity
) -> dict[str, Any]:
    if calls_per_s is not None:
        return {"calls_per_s": calls_per_s, "mean_duration": mean_duration}
    return {"flows": flows, "arrivals": arrivals}


def voice(
    *,
    name: str,
    src: str,
    dst: str,
    codec: str = "cbr",
    calls_per_s: float | None = None,
    flows: int | None = None,
    arrivals: dict[str, Any] | None = None,
    mean_duration: Quantity = "60s",
    randomize: float | None = None,
    start: Quantity | None = None,
    stop: Quantity | None = None,
    start_jitter: Quantity | None = None,
    admitted: bool | None = None,
    src_choice: SrcChoice | None = None,
) -> list[dict[str, Any]]:
    """Voice calls of [Zhang07] Table 2.1 (``docs/mechanisms/pcn.md``; ``model = "voice"``):
    ``codec`` one of :data:`VOICE_CODECS` or ``"mix"`` (the six G.711/G.729 codecs in equal
    proportion, one group each, named ``name_<codec>``, at ``calls_per_s / 6``). CBR codecs send
    a packet every spacing; VBR ones do so during exponential ON periods of mean ON fraction × 1 s,
    silent during OFF periods of the rest. Calls arrive as a Poisson process of ``calls_per_s``
    with exponential durations of mean ``mean_duration`` (the paper's §2.3), or by ``arrivals`` (each
    codec's group of a mix gets it as it is), or ``flows`` fixed calls (starting at ``start``
    plus up to ``start_jitter``): give exactly one. ``admitted``: the calls were admitted
    elsewhere (rerouted, [Zhang07 §4]) and start without asking their PCN ingress.
    ``src_choice="random"``: each call's source is drawn among the matches of ``src`` (default:
    in turn; the six groups of the mix at the same call rate then hand their calls to the
    sources together, in bursts). Returns the group as a list of one, to extend a list of
    groups with; the core expands it (and checks every parameter) when the scenario loads."""
    return [
        _paper(
            {"model": "voice", "codec": codec},
            name=name,
            src=src,
            dst=dst,
            src_choice=src_choice,
            **_calls(calls_per_s, flows, arrivals, mean_duration),
            randomize=randomize,
            start=start,
            stop=stop,
            start_jitter=start_jitter,
            admitted=admitted,
        )
    ]


def svd(
    *,
    name: str,
    src: str,
    dst: str,
    calls_per_s: float | None = None,
    flows: int | None = None,
    arrivals: dict[str, Any] | None = None,
    mean_duration: Quantity = "60s",
    randomize: float | None = None,
    start: Quantity | None = None,
    stop: Quantity | None = None,
    start_jitter: Quantity | None = None,
    admitted: bool | None = None,
    src_choice: SrcChoice | None = None,
) -> dict[str, Any]:
    """[Zhang07 §2.3.2]'s synthetic video (SVD; ``model = "svd"``): ON/OFF with exponential
    periods of mean 340 ms ON (1500 B packets every 1 ms, 12 Mb/s) and 660 ms OFF, 4 Mb/s on
    average. Calls, ``start_jitter``, ``admitted`` and ``src_choice`` as for :func:`voice`."""
    return _paper(
        {"model": "svd"},
        name=name,
        src=src,
        dst=dst,
        src_choice=src_choice,
        **_calls(calls_per_s, flows, arrivals, mean_duration),
        randomize=randomize,
        start=start,
        stop=stop,
        start_jitter=start_jitter,
        admitted=admitted,
    )


#: Mean rate of the paper's VTR traffic (§2.3.3), the synthetic trace's default.
VTR_MEAN_RATE = "769kbps"


def synthetic_trace(
    *,
    seed: int = 1,
    frames: int | None = None,
    frame_interval: Quantity | None = None,
    mean_rate: Quantity | None = None,
) -> dict[str, Any]:
    """The built-in synthetic MPEG-4-like frame trace for :func:`vtr` (``docs/mechanisms/vtr.md``):
    GOPs ``IBBPBBPBBPBB`` at ``frame_interval`` (default 40 ms, 25 frames/s), lognormal frame sizes
    per type and scene, scaled to ``mean_rate`` (default 769 kb/s) over its ``frames`` (default
    180000, two hours). Deterministic from ``seed``."""
    s: dict[str, Any] = {"seed": seed}
    if frames is not None:
        s["frames"] = frames
    if frame_interval is not None:
        s["frame_interval"] = _units.dur(frame_interval, "trace.synthetic.frame_interval")
    if mean_rate is not None:
        s["mean_rate"] = _units.rate(mean_rate, "trace.synthetic.mean_rate")
    return {"synthetic": s}


def vtr(
    *,
    name: str,
    src: str,
    dst: str,
    trace: str | dict[str, Any] | None = None,
    size: Quantity = 1500,
    interval: Quantity = "1ms",
    calls_per_s: float | None = None,
    flows: int | None = None,
    mean_duration: Quantity = "60s",
    arrivals: dict[str, Any] | None = None,
    randomize: float | None = None,
    header: Quantity | None = None,
    start: Quantity | None = None,
    stop: Quantity | None = None,
    src_choice: SrcChoice | None = None,
) -> dict[str, Any]:
    """Video traces (VTR) of [Zhang07 §2.3.3]: each flow plays ``trace`` (a frame-trace file of rows
    ``time_s size_bytes``, relative to the scenario's folder, or :func:`synthetic_trace`, the
    default) from a random frame on; a frame is cut into packets of ``size`` bytes (the last one
    the remainder) ``interval`` apart. Calls arrive as a Poisson process of ``calls_per_s`` with
    exponential durations of mean ``mean_duration``, or ``arrivals=`` another process, or
    ``flows`` fixed flows (give exactly one). ``src_choice``: as for :func:`voice`."""
    if sum(x is not None for x in (calls_per_s, flows, arrivals)) != 1:
        raise config_error(f"traffic.{name}", "give exactly one of calls_per_s, flows and arrivals")
    if calls_per_s is not None:
        arrivals = poisson_arrivals(rate=calls_per_s, lifetime=mean_duration)
    if trace is None:
        trace = synthetic_trace()
    elif not isinstance(trace, (str, dict)):
        raise config_error(
            f"traffic.{name}.trace",
            f"{trace!r} is not a trace; allowed: a file name or traffic.synthetic_trace(...)",
        )
    model = {"model": "vtr", "trace": trace, "interval": _units.dur(interval, "interval")}
    return _group(
        model,
        name=name,
        src=src,
        dst=dst,
        size=size,
        flows=flows,
        header=header,
        class_=None,
        dscp=None,
        ecn=None,
        start=start,
        stop=stop,
        start_jitter=None,
        arrivals=arrivals,
        reserve=None,
        dst_port=None,
        shaper=None,
        randomize=randomize,
        src_choice=src_choice,
    )
