"""Scenarios and measure of the ``pcn`` admission experiments [Zhang07 §2-3]: the single link
(Fig. 2.1) and the RTT topology (Fig. 2.2), the admission meter alone on the bottleneck; the
over-admission % and sd ratio of the bottleneck's 50 ms rate samples [Zhang07 §2.4]. Set-up and
why: docs/reproductions/pcn.md ("Admission", "Set-up")."""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from typing import Any

import tomli_w

from ... import pcn as pcn_builder
from ... import stages, topology, traffic
from ..._core import parse_rate
from ...result import Result
from ...scenario import Scenario

#: Link names of the paper and their rates (qoslab's named rates, `crates/core/src/units.rs`).
LINK_BPS = {n: parse_rate(n) for n in ("1Mbps", "T1", "10Mbps", "T3", "100Mbps", "OC3", "OC12", "1Gbps", "OC48")}
#: Mean rate of one flow of each traffic model, bit/s ([Zhang07 §2.3]; MIX: the six codecs' mean).
MEAN_BPS = {
    "CBR": 64_000.0,
    "VBR": 21_760.0,
    "MIX": (80_000 + 32_000 + 96_000 + 38_400 + 24_000 + 9_600) / 6,
    "VTR": 769_000.0,
    "SVD": 4_000_000.0,
}
TRAFFIC = tuple(MEAN_BPS)
#: The link each traffic model runs on at "sufficient aggregation" ([Zhang07 §3.3]: voice and the
#: mix on OC3, VTR on 1 Gb/s, SVD on OC48).
AGGREGATE_LINK = {"CBR": "OC3", "VBR": "OC3", "MIX": "OC3", "VTR": "1Gbps", "SVD": "OC48"}
MEAN_CALL_S = 60.0
#: Traffic whose calls draw their ingress of the RTT topology at random (the MIX's six groups would
#: otherwise reach each ingress in bursts; docs/reproductions/pcn.md, Table 3.6).
RANDOM_SOURCES = frozenset({"MIX"})
BATCH_MEAN = 5.0
SAMPLE_S = 0.05


def calls_per_s(model: str, admissible_bps: float, overload: float) -> float:
    """Call rate whose offered load is ``overload`` × the admissible rate ([Zhang07 §3.2]'s demand overload)."""
    return overload * admissible_bps / MEAN_BPS[model] / MEAN_CALL_S


def rtt_delays_ms(n: int) -> list[float]:
    """Access delays of ``n`` ingresses spread evenly over 1-100 ms (the paper's RTT topology)."""
    return [1.0] if n == 1 else [round(1.0 + 99.0 * k / (n - 1), 3) for k in range(n)]


def build(
    *,
    name: str,
    model: str,
    link: str,
    overload: float,
    duration_s: float,
    cle: dict[str, Any],
    ingresses: int | None = None,
    delays_ms: Sequence[float] | None = None,
    arrivals: str = "POISSON",
    vq: tuple[float, float, float] | None = None,
    marking: str = "ramp",
) -> tuple[Scenario, str]:
    """A PCN admission scenario and its bottleneck direction: the single link (``ingresses`` None) or the RTT
    topology; calls at ``overload`` x the admissible rate, Poisson or in batches of mean 5; the meter a ramp
    (``vq``: min, max, upper limit in ms; 5, 15, 20 by default) or a step at the max (§3.4.1)."""
    lo, hi, cap = vq if vq is not None else (5.0, 15.0, 20.0)
    if marking == "step":
        meter = stages.pcn_admission(marking="step", threshold=f"{hi:g}ms", upper_limit=f"{cap:g}ms")
    else:
        meter = stages.pcn_admission(min_threshold=f"{lo:g}ms", max_threshold=f"{hi:g}ms", upper_limit=f"{cap:g}ms")
    queue = {"type": "fifo", "limit": "100000pkts"}
    bottleneck = topology.link(rate=link, delay="10ms", queue=queue, stages=[meter])
    edge = topology.link(rate="10Gbps", delay="0s")
    if ingresses is None:
        topo = topology.explicit(
            nodes=[
                topology.node(name=n, kind=k)
                for n, k in (("s0", "host"), ("i0", "router"), ("e0", "router"), ("d0", "host"))
            ],
            links=[
                {"a": a, "b": b, **lk}
                for a, b, lk in (("s0", "i0", edge), ("i0", "e0", bottleneck), ("e0", "d0", edge))
            ],
        )
        edges, src, dst, direction = ["i0", "e0"], "s0", "d0", "i0->e0"
    else:
        delays = list(delays_ms) if delays_ms is not None else rtt_delays_ms(ingresses)
        topo = {
            "preset": "star",
            "ingresses": ingresses,
            "ingress_routers": True,
            "access": topology.link(rate="10Gbps", delay="1ms"),
            "ingress_delays": [f"{d:g}ms" for d in delays],
            "bottleneck": bottleneck,
            "egress": edge,
        }
        edges, src, dst, direction = ["in*", "r1"], "src*", "sink0", "r0->r1"
    calls = calls_per_s(model, LINK_BPS[link] / 2, overload)
    how: dict[str, Any] = {"calls_per_s": calls}
    if arrivals == "BATCH":
        per_group = calls / len(traffic.VOICE_MIX) if model == "MIX" else calls
        batch = traffic.batch_poisson_arrivals(
            rate=per_group / BATCH_MEAN, batch_mean=BATCH_MEAN, lifetime=f"{MEAN_CALL_S:g}s"
        )
        how = {"arrivals": batch}
    if ingresses is not None and model in RANDOM_SOURCES:
        how["src_choice"] = "random"
    sc = Scenario.build(
        name=name,
        duration=f"{duration_s:g}s",
        topology=topo,
        traffic=groups(model, model.lower() if model in ("SVD", "VTR") else "voice", src, dst, **how),
        pcn=pcn_builder.domain(edges=edges, **cle),
        # Only what is read: the bottleneck, one per-flow bin, no per-flow histograms.
        metrics={
            "series_interval": f"{SAMPLE_S * 1000:g}ms",
            "series": [direction],
            "bin": f"{duration_s:g}s",
            "interarrival_bin": "100ms",
            "interarrival_max": "200ms",
            "flow_histograms": False,
        },
    )
    return sc, direction


def groups(model: str, name: str, src: str, dst: str, **kw: Any) -> list[dict[str, Any]]:
    """A traffic model's group(s) ([Zhang07 §2.3]): voice (CBR, VBR, the MIX's six codecs), SVD or VTR."""
    if model in ("SVD", "VTR"):
        return [(traffic.svd if model == "SVD" else traffic.vtr)(name=name, src=src, dst=dst, **kw)]
    return traffic.voice(name=name, src=src, dst=dst, codec=model.lower(), **kw)


def per_packet() -> dict[str, Any]:
    """The CLE of §3.2-3.3: per packet, weight 0.01, threshold 0.5."""
    return {"cle": "per_packet", "cle_weight": 0.01, "cle_threshold": 0.5}


def per_interval(weight: float, threshold: float) -> dict[str, Any]:
    """The CLE of §3.6 on: per 100 ms interval."""
    return {"cle": "per_interval", "cle_weight": weight, "cle_threshold": threshold, "cle_interval": "100ms"}


def over_admission(res: Result, direction: str, link_bps: float, warmup_s: float) -> dict[str, float]:
    """Over-admission % and the sd ratio of the bottleneck's 50 ms rate samples after the warm-up."""
    u = res.metric(direction, "utilization")
    u = u[u["t_s"] >= warmup_s - 1e-9]
    rates, admissible = u["value"].to_numpy() * link_bps, link_bps / 2
    if len(rates) == 0:
        return {"over_admission_pct": math.nan, "sd_ratio": math.nan}
    return {
        "over_admission_pct": (float(rates.mean()) / admissible - 1) * 100,
        "sd_ratio": float(rates.std()) / admissible,
    }


@functools.lru_cache(maxsize=8)
def _ingress_of_source(topology_json: str) -> dict[str, int]:
    """Each source host's ingress ``k`` (the k-th of ``ingress_delays``) in a run's star, from the core's expansion:
    a host's access link leads to its ingress router, whose own access links to the hub come in ingress order."""
    doc = {"name": "ingresses", "duration": "1s", "topology": json.loads(topology_json)}
    model = Scenario(tomli_w.dumps(doc), origin="<the run's topology>").model
    hosts = {n["name"] for n in model["nodes"] if n["kind"] == "host"}
    access = [link for link in model["links"] if link["field"] == "topology.access"]
    order = [link["a"] for link in access if link["a"] not in hosts]
    return {link["a"]: order.index(link["b"]) for link in access if link["a"] in hosts}


def admitted_share_by_rtt(res: Result, delays_ms: Sequence[float], split_ms: float = 50.0) -> dict[str, float]:
    """Admitted fraction of the calls from ingresses with access delay below / at or above
    ``split_ms`` (each call's ingress: its source host's, from the run's topology)."""
    f = res.flows
    ingress = _ingress_of_source(json.dumps(res.scenario["topology"], sort_keys=True))
    far = f["src"].map(lambda src: delays_ms[ingress[src]] >= split_ms)
    asked = f["admitted"] | f["refused"]
    out = {}
    for key, sel in (("near", ~far), ("far", far)):
        n = int((asked & sel).sum())
        out[f"admitted_{key}"] = float((f["admitted"] & sel).sum()) / n if n else math.nan
    return out
