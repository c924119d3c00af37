"""Progress of a run on stderr (``qoslab run --progress bar|plain|none``).

``bar``: a rich progress bar, shown once the run has lasted ``PROGRESS_AFTER_S``,
the default on a terminal. ``plain``: one line every ``PLAIN_EVERY_S`` for logs
and pipes, the default when stderr is not a terminal. ``none``: nothing. The
core calls the object with the simulated fraction at most ten times a second.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

#: A run shows a progress bar once it has lasted this long (wall seconds).
PROGRESS_AFTER_S = 2.0
#: ``--progress plain`` writes one line this often (wall seconds).
PLAIN_EVERY_S = 5.0


def _clock_text(seconds: float) -> str:
    s = max(round(seconds), 0)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class Progress:
    """Progress of a run on stderr, by ``mode``: ``"bar"`` (a rich bar that appears once the
    run lasts over ``PROGRESS_AFTER_S``), ``"plain"`` (one line every ``PLAIN_EVERY_S``, for
    logs and pipes) or ``"none"``. Elapsed time counts from the start of the run, not from
    the moment the bar appears."""

    def __init__(
        self, mode: str, label: str, *, clock: Callable[[], float] = time.monotonic, stream: Any = None
    ) -> None:
        self.mode = mode
        self.label = label
        self.clock = clock
        self.stream = stream
        self.t0 = clock()
        self.next_line = PLAIN_EVERY_S
        self.bar: Any = None
        self.task: Any = None

    def __call__(self, frac: float) -> None:
        frac = min(max(frac, 0.0), 1.0)
        if self.mode == "plain":
            self._plain(frac)
        elif self.mode == "bar":
            self._bar(frac)

    def _plain(self, frac: float) -> None:
        elapsed = self.clock() - self.t0
        if elapsed < self.next_line:
            return
        self.next_line = (elapsed // PLAIN_EVERY_S + 1) * PLAIN_EVERY_S
        left = f", ~{_clock_text(elapsed * (1 - frac) / frac)} left" if frac > 0 else ""
        line = f"qoslab: {self.label}: {frac * 100:.0f}% simulated, {_clock_text(elapsed)} elapsed{left}\n"
        stream = self.stream if self.stream is not None else sys.stderr
        stream.write(line)
        stream.flush()

    def _bar(self, frac: float) -> None:
        if self.bar is None:
            if self.clock() - self.t0 < PROGRESS_AFTER_S:
                return
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("{task.percentage:>3.0f}%"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=_console_on(self.stream if self.stream is not None else sys.stderr),
                transient=True,
                get_time=self.clock,
            )
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=1.0)
            for t in self.bar.tasks:  # the run started at t0, before the bar appeared
                if t.id == self.task:
                    t.start_time = self.t0
        self.bar.update(self.task, completed=frac)

    def elapsed(self) -> float | None:
        """The bar's elapsed time (``None`` before the bar appears)."""
        if self.bar is None:
            return None
        elapsed: float | None = next(t.elapsed for t in self.bar.tasks if t.id == self.task)
        return elapsed

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _console_on(stream: Any) -> Any:
    from rich.console import Console

    return Console(file=stream, highlight=False, force_terminal=None if stream is sys.stderr else True)


def progress_mode(*, quiet: bool, choice: str | None) -> str:
    """``qoslab run``'s mode: none with ``--quiet``, else ``--progress``, else a bar on a
    terminal and plain lines otherwise."""
    if quiet:
        return "none"
    if choice is not None:
        return choice
    return "bar" if sys.stderr.isatty() else "plain"
