"""Deterministic PNG figures for reports (matplotlib, Agg, no pyplot state): a fixed size and DPI,
the bundled DejaVu fonts and no ``Software`` metadata, so the same data give the same bytes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

DPI = 100


def new_figure(width: float = 8.0, height: float = 4.5, **kwargs: Any) -> Any:
    """A matplotlib ``Figure`` attached to an Agg canvas (no GUI, no global state)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained", **kwargs)
    FigureCanvasAgg(fig)
    return fig


def new_axes(width: float, height: float, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """A :func:`new_figure` and its axes, ``fig.subplots(*args, **kwargs)``."""
    fig = new_figure(width, height)
    return fig, fig.subplots(*args, **kwargs)


def save(fig: Any, path: Path) -> Path:
    """Writes ``fig`` as a PNG with fixed DPI and no variable metadata."""
    fig.savefig(path, format="png", dpi=DPI, metadata={"Software": None})
    return path
