"""Record of flow arrivals (MACE scenario 2, ``qoslab run --record-arrivals GROUP``): a run's flows
of one traffic group as the CSV that ``arrivals = { process = "replay", file = ... }`` reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import _units
from .errors import ReproductionError
from .result import Result


def record_arrivals(res: Result, group: str, path: Path, group_start_s: float = 0.0) -> Path:
    """Writes the flows of ``group`` as a replay CSV (``start_s,lifetime_s``, starts relative to the
    group's ``start``; a lifetime is end minus start: docs/cli.md, ``--record-arrivals``)."""
    f = res.flows
    f = f[f["group"] == group]
    if f.empty:
        raise ReproductionError(f"{res.name}: no flows of group {group!r} to record")
    lines = [f"# recorded from {res.name} seed {res.seed}, group {group}", "start_s,lifetime_s"]
    for s, e in sorted(zip(f["start_s"], f["end_s"], strict=True)):
        life = float(e) - float(s)
        if life > 0:
            lines.append(f"{float(s) - group_start_s:.9f},{life:.9f}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def check_groups(echo: dict[str, Any], wanted: list[str]) -> None:
    """Refuses a ``--record-arrivals`` group the scenario does not have (before the run)."""
    groups = [t.get("name") for t in echo.get("traffic", [])]
    if missing := [g for g in wanted if g not in groups]:
        raise ReproductionError(
            f"--record-arrivals: no traffic group {missing[0]!r}; groups: {', '.join(map(str, groups))}"
        )


def record_group(res: Result, echo: dict[str, Any], group: str, folder: Path) -> Path:
    """``qoslab run --record-arrivals GROUP``: writes ``folder/arrivals_<group>.csv``
    (see :func:`record_arrivals`), starts relative to the group's ``start``."""
    check_groups(echo, [group])
    traffic = next(t for t in echo["traffic"] if t.get("name") == group)
    try:
        start = _units.seconds(traffic.get("start", "0s"))
    except ValueError as e:
        raise ReproductionError(str(e)) from None
    folder.mkdir(parents=True, exist_ok=True)
    return record_arrivals(res, group, folder / f"arrivals_{group}.csv", group_start_s=start)
