"""What a testbed run measured, as a :class:`qoslab.Result`: the same four
tables and summary as a simulation (``docs/results.md``), filled with what
the testbed measures and with NaN or 0 where it measures nothing
(``docs/testbed.md``, "Results").

- flows: sent (the generator's count), delivered and one-way delay (the
  sink's records: send and receive times on the shared CLOCK_MONOTONIC),
  dropped = sent − delivered (a packet not received by the end is lost:
  the run waits for the queue to drain); the delay columns (mean,
  percentiles from the log-bucket histogram, variance, RFC 3550 jitter)
  and the summary's totals and Jain's index computed by the simulator's
  own code (``qoslab._core.delay_columns``, ``totals``); the columns, in
  the simulator's order and types, from ``qoslab._core.names()``;
- queues: each emulated link's two directions, from its router's summary;
  the hosts' veths have no queue of their own and are not listed;
- series: the router's stats lines (backlog, probes such as ``red_avg``,
  cumulative arrivals, departures and drops) and the flows' binned
  counters and inter-arrival histograms from the records;
- events: ``flow_start`` and ``flow_end`` of each flow, an MM_APP source's
  ``mm_scale`` changes (when the generator applied them), and the router's
  admission decisions (``admit``, ``reject``);
- an MM_APP flow's ``reverse_*`` columns: its feedback packets, sent by the
  sink's receiver and read by the generator.

Times are seconds since the scenario's time 0 (the generators' shared
``t0``).
"""

from __future__ import annotations

import json
import math
from typing import Any

from .. import _core
from ..tables import DROP_REASONS
from .plan import Plan
from .runner import Collected

NAN = float("nan")
_DTYPES = {"u64": "uint64", "i64": "int64", "f64": "float64", "bool": "bool"}


def _columns(table: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """``rows`` as the columns of result table ``table``, in the simulator's order and types (the
    core's list); a column a row does not set is one the testbed does not measure: 0 (counts),
    NaN or false."""
    import numpy as np

    out: dict[str, Any] = {}
    for name, kind in _core.names()["tables"][table]:
        if kind == "str":
            out[name] = [str(r.get(name, "")) for r in rows]
        else:
            missing = NAN if kind == "f64" else 0
            out[name] = np.array([r.get(name, missing) for r in rows], dtype=_DTYPES[kind])
    return out


def _flows(plan: Plan, c: Collected, recs: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    import numpy as np

    per_flow = []
    order = np.argsort(recs["flow"], kind="stable")
    by_flow = np.split(recs[order], np.flatnonzero(np.diff(recs["flow"][order])) + 1) if len(recs) else []
    found = {int(r["flow"][0]): r for r in by_flow if len(r)}
    for f in plan.flows:
        g = c.gen.get(f.id, {})
        if f.tcp is not None:
            adm = _admission(f, g, c)
            row = _tcp_row(f, g, c, adm)
            per_flow.append({"plan": f, "records": recs[:0], "row": row, "admission": adm})
            continue
        r = found.get(f.id, recs[:0])
        # Duplicates (never expected on veth) are counted once.
        _, first = np.unique(r["seq"], return_index=True)
        r = r[np.sort(first)]
        sent = int(g.get("sent_pkts", 0))
        sent_bytes = int(g.get("sent_bytes", 0))
        dlv, dlv_bytes = len(r), int(r["wire"].sum()) if len(r) else 0
        start_s = (int(g["first_tx_ns"]) - c.t0_ns) / 1e9 if sent else NAN
        end_s = min(f.spec["stop_ns"], plan.duration_ns) / 1e9
        adm = _admission(f, g, c)
        if adm["asked"]:
            # As the simulator's row: a flow starts at its decision; a refused one ends there.
            start_s = adm["decided_s"] if adm["admitted"] else adm["asked_s"]
            end_s = adm["terminated_s"] if adm["terminated"] else (end_s if adm["admitted"] else start_s)
        delays = np.maximum(r["recv_ns"].astype(np.int64) - r["send_ns"].astype(np.int64), 0)
        row = {
            "flow_id": f.id,
            "name": f.name,
            "group": f.group,
            "class": 0,
            "src": f.src,
            "dst": f.dst,
            "proto": "udp",
            "start_s": start_s,
            "end_s": end_s,
            "first_tx_s": start_s,
            "last_rx_s": (int(r["recv_ns"][-1]) - c.t0_ns) / 1e9 if dlv else NAN,
            "admitted": adm["admitted"],
            "refused": adm["refused"],
            "terminated": adm["terminated"],
            "sent_pkts": sent,
            "sent_bytes": sent_bytes,
            "delivered_pkts": dlv,
            "delivered_bytes": dlv_bytes,
            "dropped_pkts": max(0, sent - dlv),
            "dropped_bytes": max(0, sent_bytes - dlv_bytes),
            "in_flight_pkts": 0,
            "throughput_bps": dlv_bytes * 8 / (end_s - start_s) if sent and end_s > start_s else NAN,
            # The simulator's delay columns (its log-bucket percentiles, RFC 3550 jitter) of these delays.
            **dict(_core.delay_columns(delays.tolist())),
        }
        mm = g.get("mm")
        if mm is not None:
            # MM_APP's feedback: sent by the sink's receiver, read by the generator.
            # The simulator's receiver stops at the flow's end; the sink's, which does not know
            # it, is counted up to it.
            rx = c.mm_received.get(f.id, {})
            stop_ns = c.t0_ns + min(f.spec["stop_ns"], plan.duration_ns)
            fb_sent = sum(1 for t in rx.get("sent_ns", []) if t < stop_ns)
            each = int(rx.get("feedback_bytes", 0)) // max(1, int(rx.get("feedback_pkts", 0)))
            row |= {
                "reverse_sent_pkts": fb_sent,
                "reverse_sent_bytes": fb_sent * each,
                "reverse_delivered_pkts": int(mm["feedback_pkts"]),
                "reverse_dropped_pkts": max(0, fb_sent - int(mm["feedback_pkts"])),
            }
        per_flow.append({"plan": f, "records": r, "row": row, "admission": adm, "mm": mm})
    return _columns("flows", [pf["row"] for pf in per_flow]), per_flow


def _admission(f: Any, g: dict[str, Any], c: Collected) -> dict[str, Any]:
    """What became of a flow that asked a PCN ingress or a shaping CAC (its generator's
    ``admission`` report, ``crates/traffic/src/admission.rs``): asked, decided (admitted or
    refused; ``unanswered`` is neither), terminated, with the times in run seconds and what the
    answer carried (the CLE, or the CAC's shaping rate). A flow that does not ask is admitted
    (``admit_all``)."""
    rep = g.get("admission") or {}
    decision = rep.get("decision", "")
    asked = bool(f.spec.get("admission")) and decision not in ("", "not_asked")

    def s(key: str) -> float:
        ns = int(rep.get(key) or 0)
        return (ns - c.t0_ns) / 1e9 if ns else NAN

    return {
        "asked": asked,
        "decision": decision,
        "admitted": decision == "admitted" if asked else not f.spec.get("admission"),
        "refused": asked and decision == "refused",
        "terminated": asked and bool(rep.get("terminated_ns")),
        "asked_s": s("asked_ns"),
        "decided_s": s("answered_ns"),
        "terminated_s": s("terminated_ns"),
        "cle": float(rep.get("cle") or 0.0),
        "cac": bool((f.spec.get("admission") or {}).get("cac")),
        "assigned_bps": float(rep.get("assigned_bps") or 0.0),
    }


def _tcp_row(f: Any, g: dict[str, Any], c: Collected, adm: dict[str, Any]) -> dict[str, Any]:
    """A kernel TCP flow's row: counts from TCP_INFO at the sender and the receiver's byte count.
    Segments delivered are estimated as received bytes / MSS, each on the wire as MSS + 54 bytes
    (TCP/IPv4 without options, Ethernet); drops as the sender's retransmissions. A flow that asked
    (the shaping CAC) and was refused starts and ends at its request, as the simulator's row."""
    from .plan import TCP_OVERHEAD

    mss = int(f.tcp["mss"])
    info = g.get("tcp") or {}
    rcv = c.tcp_received.get(f.id, {})
    segs, retrans = int(info.get("data_segs_out", 0)), int(info.get("total_retrans", 0))
    got = int(rcv.get("bytes", 0))
    dlv = -(-got // mss)
    start_s = (int(g["first_tx_ns"]) - c.t0_ns) / 1e9 if g.get("first_tx_ns") else NAN
    end_s = f.spec["stop_ns"] / 1e9
    done = int(info.get("completed_ns", 0))
    if done:
        end_s = (done - c.t0_ns) / 1e9
    if adm["asked"] and not adm["admitted"]:
        start_s = end_s = adm["asked_s"]
    span = end_s - start_s if end_s > start_s else NAN
    return {
        "flow_id": f.id,
        "name": f.name,
        "group": f.group,
        "class": 0,
        "src": f.src,
        "dst": f.dst,
        "proto": "tcp",
        "start_s": start_s,
        "end_s": end_s,
        "first_tx_s": start_s,
        "last_rx_s": (int(rcv["last_ns"]) - c.t0_ns) / 1e9 if got else NAN,
        "admitted": adm["admitted"],
        "refused": adm["refused"],
        "terminated": False,
        "sent_pkts": segs,
        "sent_bytes": segs * (mss + TCP_OVERHEAD),
        "delivered_pkts": dlv,
        "delivered_bytes": dlv * (mss + TCP_OVERHEAD),
        "dropped_pkts": retrans,
        "dropped_bytes": retrans * (mss + TCP_OVERHEAD),
        "in_flight_pkts": 0,
        "throughput_bps": dlv * (mss + TCP_OVERHEAD) * 8 / span,
        "goodput_bps": got * 8 / span,
        "goodput_bytes": got,
        "retransmits": retrans,
        "timeouts": 0,
        "fast_retransmits": 0,
        "completion_s": (done - c.t0_ns) / 1e9 - start_s if done else NAN,
    }


def _queues(plan: Plan, c: Collected, duration_s: float) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    for bump, router in zip(plan.bumps, c.routers, strict=True):
        names = {"a->b": bump.direction, "b->a": bump.reverse}
        link = f"{bump.link.a}<->{bump.link.b}"
        for q in router.get("queues", []):
            rows.append(_queue_row(q, len(rows), names, link, bump.link.rate, duration_s))
    return _columns("queues", rows)


def _queue_row(
    q: dict[str, Any], i: int, names: dict[str, str], link: str, rate: int, duration_s: float
) -> dict[str, Any]:
    """One direction of an emulated link, from its router's summary (which writes the queues
    table's counters under the table's names)."""
    row: dict[str, Any] = {"queue_id": i, "name": names.get(q["name"], q["name"]), "link": link, "kind": q["kind"]}
    row["parent"] = ""
    for name, kind in _core.names()["tables"]["queues"]:
        if name in row or name not in q:
            continue
        v = q[name]
        row[name] = (float(v) if v is not None else NAN) if kind == "f64" else int(v or 0)
    row["drop_bytes"] = max(0, row.get("arrival_bytes", 0) - row.get("departure_bytes", 0)) if row.get("drops") else 0
    row["link_rate_bps"] = int(q.get("link_rate_bps") or rate)
    departed = row.get("departure_bytes", 0)
    row["utilization"] = departed * 8 / (row["link_rate_bps"] * duration_s) if duration_s else NAN
    return row


def _series(plan: Plan, c: Collected, per_flow: list[dict[str, Any]]) -> dict[str, Any]:
    import numpy as np

    t_s: list[float] = []
    kind: list[str] = []
    ent: list[str] = []
    metric: list[str] = []
    value: list[float] = []

    def add(t: float, k: str, e: str, m: str, v: float) -> None:
        t_s.append(t)
        kind.append(k)
        ent.append(e)
        metric.append(m)
        value.append(float(v))

    for bump, stats, start_ns in zip(plan.bumps, c.stats, c.router_start_ns, strict=True):
        names = {"a->b": bump.direction, "b->a": bump.reverse}
        shift = (start_ns - c.t0_ns) / 1e9
        # Each emulated link's forward queue, and the reverse one if anything crossed it.
        dirs = ["a->b"] + (
            ["b->a"]
            if any(int(d.get("rx_pkts", 0)) for s in stats[-1:] for d in s["dirs"] if d["dir"] == "b->a")
            else []
        )
        final = {d["dir"]: d for d in (stats[-1]["dirs"] if stats else [])}
        for d in dirs:
            nonzero = [r for r in DROP_REASONS if int(final.get(d, {}).get("drops", {}).get(r, 0))]
            for s in stats:
                t = s["t_s"] + shift
                if t < 0:
                    continue
                row = next(x for x in s["dirs"] if x["dir"] == d)
                q = names[d]
                add(t, "queue", q, "backlog_pkts", row["backlog_pkts"])
                add(t, "queue", q, "backlog_bytes", row["backlog_bytes"])
                for name, v in sorted(row.get("probes", {}).items()):
                    add(t, "queue", q, name, v)
                add(t, "queue", q, "arrivals", row["rx_pkts"])
                add(t, "queue", q, "departures", row["tx_pkts"])
                for r in nonzero:
                    add(t, "queue", q, f"drops_{r}", row["drops"].get(r, 0))
    metrics = plan.model["metrics"]
    bin_ns, ia_bin, ia_max = metrics["bin"], metrics["interarrival_bin"], metrics["interarrival_max"]
    for pf in per_flow:
        f, r = pf["plan"], pf["records"]
        name = f.name
        recv = r["recv_ns"].astype(np.int64) - c.t0_ns
        send = r["send_ns"].astype(np.int64) - c.t0_ns
        nbins = max(1, math.ceil(plan.duration_ns / bin_ns))
        sent = int(pf["row"]["sent_pkts"])
        dl = np.bincount(np.clip(recv // bin_ns, 0, nbins - 1), minlength=nbins) if len(r) else np.zeros(nbins, int)
        dlb = (
            np.bincount(np.clip(recv // bin_ns, 0, nbins - 1), weights=r["wire"], minlength=nbins)
            if len(r)
            else np.zeros(nbins)
        )
        # Sent per bin is known only for received packets (their send times) plus the losses, spread by sequence.
        sb = np.bincount(np.clip(send // bin_ns, 0, nbins - 1), minlength=nbins) if len(r) else np.zeros(nbins, int)
        for b in range(nbins):
            if dl[b] or sb[b]:
                add(b * bin_ns / 1e9, "flow", name, "delivered_pkts", dl[b])
                add(b * bin_ns / 1e9, "flow", name, "delivered_bytes", dlb[b])
        if sent == 0:
            continue
        if ia_bin and len(r) > 1:
            gaps = np.diff(r["recv_ns"].astype(np.int64))
            k = np.minimum(gaps // ia_bin, ia_max // ia_bin)
            counts = np.bincount(k)
            for i in np.flatnonzero(counts):
                add(i * ia_bin / 1e9, "flow", name, "interarrival_count", counts[i])
    return {
        "t_s": np.array(t_s, dtype=np.float64),
        "entity_kind": kind,
        "entity_id": ent,
        "metric": metric,
        "value": np.array(value, dtype=np.float64),
    }


def _events(plan: Plan, c: Collected, per_flow: list[dict[str, Any]]) -> dict[str, Any]:
    """Flow starts and ends, and the router's admission decisions (its latest 256 mechanism
    events: ``admit``, ``reject``). The router knows a flow by its 5-tuple, not by name, so a
    decision's ``flow_id`` is -1 and its ``detail`` the router's flow number."""
    import numpy as np

    rows: list[tuple[float, str, int, str, str, float, float, str]] = []
    for pf in per_flow:
        row, f, adm = pf["row"], pf["plan"], pf.get("admission")
        if adm is not None and adm["asked"]:
            # The simulator's order: the flow starts (asks) at its arrival, the decision follows,
            # an admitted flow ends by its lifetime, the run's end or termination.
            rows.append((adm["asked_s"], "flow_start", f.id, f.name, "", NAN, NAN, f"{f.src}->{f.dst}"))
            if adm["decision"] in ("admitted", "refused"):
                kind = "admit" if adm["admitted"] else "reject"
                if adm["cac"]:
                    rows.append(
                        (adm["decided_s"], kind, f.id, f.name, "shaping_cac", adm["assigned_bps"], NAN, "assigned bps")
                    )
                else:
                    rows.append((adm["decided_s"], kind, f.id, f.name, "pcn_ingress", adm["cle"], NAN, "pcn cle"))
            if adm["admitted"]:
                reason = (
                    "terminated"
                    if adm["terminated"]
                    else ("run_end" if f.spec["stop_ns"] >= plan.duration_ns else "lifetime")
                )
                rows.append((row["end_s"], "flow_end", f.id, f.name, "", NAN, NAN, reason))
        elif row["sent_pkts"]:
            rows.append((row["start_s"], "flow_start", f.id, f.name, "", NAN, NAN, f"{f.src}->{f.dst}"))
            rows.append((row["end_s"], "flow_end", f.id, f.name, "", NAN, NAN, "stop"))
        # An MM_APP source's changes of scale, when it applied them (the simulator's ``mm_scale``).
        for t_ns, scale in (pf.get("mm") or {}).get("changes", []):
            rows.append(((t_ns - c.t0_ns) / 1e9, "mm_scale", f.id, f.name, "", NAN, NAN, f"scale={scale}"))
    for bump, router, start_ns in zip(plan.bumps, c.routers, c.router_start_ns, strict=True):
        shift = (start_ns - c.t0_ns) / 1e9
        for e in router.get("mechanism_events", []):
            if e.get("kind") in ("admit", "reject"):
                est, thr = e.get("estimate"), e.get("threshold")
                rows.append(
                    (
                        float(e["t_s"]) + shift,
                        e["kind"],
                        -1,
                        bump.direction,
                        str(e.get("rule") or ""),
                        NAN if est is None else float(est),
                        NAN if thr is None else float(thr),
                        f"router flow {e.get('flow')}",
                    )
                )
    rows.sort(key=lambda x: (x[0], x[2], x[1] != "flow_start"))
    return {
        "t_s": np.array([r[0] for r in rows], dtype=np.float64),
        "kind": [r[1] for r in rows],
        "flow_id": np.array([r[2] for r in rows], dtype=np.int64),
        "entity": [r[3] for r in rows],
        "rule": [r[4] for r in rows],
        "estimate": np.array([r[5] for r in rows], dtype=np.float64),
        "threshold": np.array([r[6] for r in rows], dtype=np.float64),
        "detail": [r[7] for r in rows],
    }


def _totals(rows: list[dict[str, Any]], duration_s: float) -> dict[str, Any]:
    """The summary's totals over flows, by the simulator's own code (``qoslab._core.totals``)."""
    flows = [
        (
            int(r["sent_pkts"]),
            int(r["sent_bytes"]),
            int(r["delivered_pkts"]),
            int(r["delivered_bytes"]),
            int(r["dropped_pkts"]),
            int(r["dropped_bytes"]),
            float(r["throughput_bps"]),
        )
        for r in rows
    ]
    totals: dict[str, Any] = json.loads(_core.totals(flows, duration_s))
    return totals


def health(c: Collected, rows: list[dict[str, Any]], duration_s: float) -> dict[str, Any]:
    """Did the run keep its schedule (docs/testbed.md, "Run health")? The generators' lateness
    behind their schedules (each UDP send; a 1 ms tick while only TCP senders run), the packets
    lost outside the emulated links' queues (the routers' sockets' kernel drops, which the queue
    table counts as the link's, transmit errors, an exhausted frame pool, the generators' send
    errors; for UDP only, sent minus delivered minus the routers' drops: lost in a veth or a
    sink's socket), the routers' lateness behind their own timers (each wake of a router's loop
    at or after the timer it slept for: the delay line's releases, the pacers' packets), the link
    time the routers lost to wakes later than their pacers' catch-up (a frame waiting while its
    bucket was full), and the run's wall time (set-up included) with its duration. Measured, not
    judged: the bound is the caller's (``unhealthy`` in ``tests/test_testbed_netns.py``)."""
    last = [s[-1] for s in c.stats if s]
    wakes = [r.get("router", {}).get("wake") or {} for r in c.routers]
    router_wakes = sum(int(w.get("wakes") or 0) for w in wakes)
    dirs = [d for s in last for d in s.get("dirs", [])]
    router_drops = sum(int(q.get("drops") or 0) for r in c.routers for q in r.get("queues", []))
    # What lossy emulated links lost (link.loss) is the scenario's loss, not the host's.
    link_lost = sum(int(d.get("link_lost") or 0) for d in dirs)
    udp = [r for r in rows if r.get("proto") == "udp"]
    lost = None
    if len(udp) == len(rows):
        lost = int(sum(r["sent_pkts"] - r["delivered_pkts"] for r in udp)) - router_drops - link_lost
    return {
        "realtime": c.realtime,
        "cpu_steal_share": c.cpu_steal_share,
        "cpu_busy_share": c.cpu_busy_share,
        "generator_late_p99_s": c.gen_late_p99_ns / 1e9,
        "generator_late_max_s": c.gen_late_max_ns / 1e9,
        "generator_points": c.gen_sends,
        "generator_late_over_1ms_share": c.gen_late_over_1ms / c.gen_sends if c.gen_sends else 0.0,
        "router_late_p99_s": max((int(w.get("late_p99_ns") or 0) for w in wakes), default=0) / 1e9,
        "router_late_max_s": max((int(w.get("late_max_ns") or 0) for w in wakes), default=0) / 1e9,
        "router_wakes": router_wakes,
        "router_late_over_1ms_share": (
            sum(int(w.get("late_over_1ms") or 0) for w in wakes) / router_wakes if router_wakes else 0.0
        ),
        "router_service_lost_s": sum(float(d.get("service_lost_s") or 0.0) for d in dirs),
        "kernel_drops": sum(int(d.get("kernel_drops") or 0) for d in dirs),
        "router_tx_errors": sum(int(d.get("tx_errors") or 0) for d in dirs),
        "router_pool_exhausted": sum(int(d.get("pool_exhausted") or 0) for d in dirs),
        "send_errors": sum(int(g.get("send_errors") or 0) for g in c.gen.values()),
        "lost_outside_queues_pkts": lost,
        "wall_s": c.wall_s,
        "duration_s": duration_s,
    }


def build(plan: Plan, c: Collected, *, seed: int, version: str) -> Any:
    """The :class:`qoslab.Result` of a testbed run."""
    from ..result import Result

    duration_s = plan.duration_ns / 1e9
    flows, per_flow = _flows(plan, c, c.records)
    queues = _queues(plan, c, duration_s)
    rows = [pf["row"] for pf in per_flow]
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(r["group"], []).append(r)
    fwd: dict[str, Any] = next((q for q in c.routers[0].get("queues", []) if q["name"] == "a->b"), {})
    summary = {
        "bottleneck": {
            "arrivals": int(fwd.get("arrivals") or 0),
            "drops": {r: int(fwd.get(f"drops_{r}") or 0) for r in sorted(DROP_REASONS)},
            "name": plan.direction,
            "utilization": int(fwd.get("departure_bytes") or 0) * 8 / (plan.link.rate * duration_s),
        },
        "classes": {"0": _totals(rows, duration_s)},
        "events": len(c.records),
        "flows": {
            "admitted": sum(bool(r["admitted"]) for r in rows),
            "count": len(rows),
            "refused": sum(bool(r["refused"]) for r in rows),
        },
        "groups": {g: _totals(rs, duration_s) for g, rs in sorted(groups.items())},
        "loop_wall_s": c.wall_s,
        "packets": {
            "delivered": int(sum(r["delivered_pkts"] for r in rows)),
            "dropped": int(sum(r["dropped_pkts"] for r in rows)),
            "sent": int(sum(r["sent_pkts"] for r in rows)),
        },
        "qoslab_version": version,
        "queues": {
            q["name"]: {
                "arrivals": int(q.get("arrivals") or 0),
                "backlog_mean_pkts": q.get("backlog_mean_pkts"),
                "drops": int(q.get("drops") or 0),
                "marks": 0,
            }
            for q in (
                {**q, "name": {"a->b": bump.direction, "b->a": bump.reverse}[q["name"]]}
                for bump, router in zip(plan.bumps, c.routers, strict=True)
                for q in router.get("queues", [])
            )
            if int(q.get("arrivals") or 0)
        },
        "scenario": plan.echo,
        "seed": seed,
        "sim_time_s": duration_s,
        "testbed": {
            "driver": "qoslab testbed",
            "prefix": c.prefix,
            "emulated_link": plan.direction,
            "router_delay_s": plan.router_delay_ns / 1e9,
            "emulated_links": [
                {
                    "link": b.direction,
                    "why": b.why,
                    "router_delay_s": b.delay_ns / 1e9,
                    # The router's time in its forwarding loop (not in ppoll): it must not spin.
                    "router_loop_wall_s": r.get("loop_wall_s"),
                    "router_life_s": r.get("sim_time_s"),
                    "router": r.get("router", {}),
                }
                for b, r in zip(plan.bumps, c.routers, strict=True)
            ],
            "hosts": {h: plan.side[h] for h in plan.hosts},
            "segments": {h: plan.segment[h] for h in plan.hosts},
            "generator_late_mean_s": c.gen_late_mean_ns / 1e9,
            "generator_late_max_s": c.gen_late_max_ns / 1e9,
            "health": health(c, rows, duration_s),
            "router": c.routers[0].get("router", {}),
            "not_measured": [
                "queues other than the emulated links'",
                "link utilization series",
                "flow sent_pkts/dropped_pkts series",
                "delay_s traces",
                "TCP columns",
            ],
        },
    }
    tables = {
        "flows": flows,
        "queues": queues,
        "series": _series(plan, c, per_flow),
        "events": _events(plan, c, per_flow),
    }
    return Result(summary, tables)
