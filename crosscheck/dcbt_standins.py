"""Table 1's TCP drop rate under D-CBT, with the tagged class's MM_APP replaced
by constant-rate stand-ins (issue 10 §2: one knob, the tagged sources).

    .venv/bin/python crosscheck/dcbt_standins.py [--seeds N] [--markdown]

For D-CBT and D-CBT+ChIPS, on ``scenarios/dcbt/paper.toml`` and seeds 1..N
(default 5, the reproduction's), it runs:

- ``mm_app``: the scenario as it is (10 MM_APP flows, tagged);
- ``cbr_sent``: the 10 MM_APP flows replaced by 10 constant-rate UDP flows
  (tagged, 1000 B packets) whose rate in each 10 s period is the per-flow
  rate the MM_APP flows *sent* in that period in the ``mm_app`` runs: the
  same offered load, without the MM_APP's scale changes;
- ``cbr_delivered``: the same at the rates the MM_APP flows got *delivered*.

Every other flow, the queue and the seeds are the same. The stand-ins'
rates are measured from this script's own ``mm_app`` runs (seed mean,
rounded to 1 kb/s), not written in. It prints Table 1 (TCP packets
delivered, drop rate, throughput) and Table 2 (tagged packets delivered,
drop rate) for each, beside the paper's, and TCP's drop rate per 10 s
period (from the flows' sent and dropped packets per 10 s bin).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import cases  # noqa: E402
import metrics  # noqa: E402

SCENARIO = ROOT / "scenarios" / "dcbt" / "paper.toml"
VARIANTS = {
    "dcbt": ["topology.links.0.queue.type=dcbt"],
    "dcbt_chips": ["topology.links.0.queue.type=dcbt", "topology.links.0.queue.chips=true"],
}
#: The paper's Tables 1-2 [Claypool00 §6].
PAPER = {
    "dcbt": (66_648, 0.0446, 17_773, 21_126, 0.1185),
    "dcbt_chips": (66_386, 0.0444, 17_703, 21_519, 0.1295),
}
PERIODS = (0.0, 10.0, 20.0)
DURATION_S = 30.0


def standin_toml(text: str, rates: cases.Schedule) -> str:
    """``paper.toml``'s text with its ``mm`` group replaced by constant-rate
    tagged UDP flows following ``rates`` on the same hosts (``mm_p0``,
    ``mm_p1``, ... one group per period, ``cases._udp_groups``)."""
    a = text.index('[[traffic]]\nname = "mm"')
    b = text.index("[[traffic]]", a + 1)
    groups = "\n".join(cases._udp_groups("mm", 10, 0.0, rates, 1)).strip() + "\n\n"
    out = text[:a] + groups + text[b:]
    # The MM_APP's delay trace (metrics.trace_groups) names a group that is gone.
    return out.replace('trace_groups = ["mm", "cbr", "tcp_a"]', 'trace_groups = ["cbr", "tcp_a"]')


def measure(res: Any) -> dict[str, Any]:
    """Table 1-2 counts, TCP's sent and dropped packets per period, and the
    tagged flows' per-flow sent and delivered rate per period (bit/s)."""
    f = res.flows
    tcp, tagged = f[f["class"] == 0], f[f["class"] == 1]
    s = res.series
    s = s[s["entity_kind"] == "flow"]
    out: dict[str, Any] = {
        "tcp_delivered": float(tcp["delivered_pkts"].sum()),
        "tcp_drop": float(tcp["dropped_pkts"].sum() / tcp["sent_pkts"].sum()),
        "tcp_kbps": float(tcp["delivered_bytes"].sum()) * 8 / DURATION_S / 1e3,
        "tagged_delivered": float(tagged["delivered_pkts"].sum()),
        "tagged_drop": float(tagged["dropped_pkts"].sum() / tagged["sent_pkts"].sum()),
    }
    for who, names in (("tcp", set(tcp["name"])), ("tagged", set(tagged["name"]))):
        x = s[s["entity_id"].isin(names)]
        for k, t in enumerate(PERIODS):
            y = x[(x["t_s"] - t).abs() < 1e-6]
            for m in ("sent_pkts", "dropped_pkts", "delivered_bytes"):
                out[f"{who}_{m}_{k}"] = float(y.loc[y["metric"] == m, "value"].sum())
    n = len(set(map(cases.logical_flow, tagged["name"])))  # a stand-in is one flow per group
    out["sent_bps"] = [out[f"tagged_sent_pkts_{k}"] * 8000 / 10 / n for k in range(3)]
    out["delivered_bps"] = [out[f"tagged_delivered_bytes_{k}"] * 8 / 10 / n for k in range(3)]
    return out


def run(path: Path, variant: str, seeds: range) -> dict[str, Any]:
    import qoslab

    ms = [measure(qoslab.run(path, seed=s, overrides=VARIANTS[variant])) for s in seeds]
    mean: dict[str, Any] = {}
    for k, v in ms[0].items():
        if isinstance(v, list):
            mean[k] = [sum(m[k][i] for m in ms) / len(ms) for i in range(len(v))]
        else:
            mean[k] = sum(m[k] for m in ms) / len(ms)
    return mean


def schedule(bps: list[float]) -> cases.Schedule:
    return tuple((t, round(r / 1000) * 1000) for t, r in zip(PERIODS, bps, strict=True))


def main(argv: list[str] | None = None) -> int:
    a = metrics.seeds_args(__doc__, argv, markdown_help="print a Markdown table")
    seeds = range(1, a.seeds + 1)
    text = SCENARIO.read_text()
    head = (
        "variant",
        "tagged sources",
        "TCP delivered",
        "TCP drop rate",
        "TCP kb/s",
        "tagged delivered",
        "tagged drop rate",
        "TCP drop rate 0-10 / 10-20 / 20-30 s",
    )
    rows: list[tuple[str, ...]] = []
    with tempfile.TemporaryDirectory(prefix="qoslab-dcbt-standins-") as tmp:
        for v in VARIANTS:
            base = run(SCENARIO, v, seeds)
            runs = {"mm_app (as modelled)": base}
            for kind in ("sent", "delivered"):
                rates = schedule(base[f"{kind}_bps"])
                path = Path(tmp) / f"{v}_{kind}.toml"
                path.write_text(standin_toml(text, rates))
                label = f"cbr at MM_APP's {kind} rates ({' / '.join(f'{r // 1000}' for _, r in rates)} kb/s)"
                runs[label] = run(path, v, seeds)
            p = PAPER[v]
            for label, m in runs.items():
                per = " / ".join(f"{100 * m[f'tcp_dropped_pkts_{k}'] / m[f'tcp_sent_pkts_{k}']:.2f}" for k in range(3))
                rows.append(
                    (
                        v,
                        label,
                        f"{m['tcp_delivered']:,.0f} ({m['tcp_delivered'] / p[0] - 1:+.1%})",
                        f"{100 * m['tcp_drop']:.2f} % ({m['tcp_drop'] / p[1] - 1:+.1%})",
                        f"{m['tcp_kbps']:,.0f} ({m['tcp_kbps'] / p[2] - 1:+.1%})",
                        f"{m['tagged_delivered']:,.0f}",
                        f"{100 * m['tagged_drop']:.2f} %",
                        per,
                    )
                )
            rows.append(
                (
                    v,
                    "paper (Tables 1-2)",
                    f"{p[0]:,}",
                    f"{100 * p[1]:.2f} %",
                    f"{p[2]:,}",
                    f"{p[3]:,}",
                    f"{100 * p[4]:.2f} %",
                    "",
                )
            )
    title = f"D-CBT's Tables 1-2 with the MM_APP replaced by constant-rate stand-ins, seeds 1-{a.seeds} (mean)"
    metrics.print_table(title, head, rows, markdown=a.markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
