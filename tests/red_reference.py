"""An independent RED, written from Floyd & Jacobson 1993 (FJ93), for the
reference tests of the Rust implementation (``qoslab._core.red_replay``).

It shares no code with the Rust one and follows the paper's Fig. 2
literally, with the uniform random numbers supplied by the caller (the ones
the Rust RED drew), so both must reach the same verdicts::

    for each packet arrival:
        if the queue is non-empty:  avg <- (1 - w_q) avg + w_q q
        else:                       m <- (time - q_time) / s;  avg <- (1 - w_q)^m avg
        if min_th <= avg < max_th:
            count <- count + 1
            p_b <- max_p (avg - min_th) / (max_th - min_th)
            p_a <- p_b / (1 - count p_b)
            with probability p_a: mark the packet; count <- 0
        else if max_th <= avg: mark the packet; count <- 0
        else: count <- -1
    when the queue becomes empty: q_time <- time

Choices where the paper is silent or qoslab follows later practice (each
is a decision recorded in docs/decisions.md):

- ``s`` is the transmission time of ``mean_pkt_size`` at the link rate, in
  whole nanoseconds rounded up; ``m`` is not rounded.
- The queue "becomes empty" for RED when the link asks for a packet and
  finds none (a ``depart`` op on an empty queue), i.e. when it goes idle;
  at the start the queue has been idle since t = 0.
- The first arrival after an idle period ends it, whatever its fate (Linux
  ``red_end_of_idle_period``); later arrivals to a still-empty queue take
  the EWMA step with q = 0. (A literal reading would decay again from the
  same q_time and count the idle time twice.)
- ``p_a`` is 1 once ``count · p_b >= 1`` (the formula's domain ends there).
- Byte mode: q and the thresholds in bytes, ``p_b`` scaled by
  size / mean_pkt_size (FJ93 §4) and capped at 1 before the spacing.
- Gentle (Floyd 2000): for max_th <= avg < 2 max_th,
  ``p_b = max_p + (1 - max_p)(avg - max_th)/max_th``, spaced the same way.
- ECN: an early "mark" of an ECN-capable packet when ``ecn`` is on sets CE
  and queues it; forced marks are drops.
- The physical limit is checked after RED's decision: a packet that does
  not fit is dropped (``overlimit``) and count is reset to 0 (ns-2).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass


@dataclass
class Step:
    avg: float
    count: int
    verdict: str
    needs_uniform: bool
    qlen: int


class ReferenceRed:
    def __init__(
        self,
        *,
        link_rate_bps: int,
        min_th: float,
        max_th: float,
        limit: int | None = None,
        limit_bytes: int | None = None,
        max_p: float = 0.1,
        w_q: float = 0.002,
        gentle: bool = False,
        ecn: bool = False,
        mode: str = "packets",
        mean_pkt_size: int = 1000,
    ) -> None:
        self.min_th, self.max_th, self.max_p, self.w_q = min_th, max_th, max_p, w_q
        self.gentle, self.ecn, self.mode = gentle, ecn, mode
        self.limit, self.limit_bytes = limit, limit_bytes
        self.mean_pkt_size = mean_pkt_size
        bits_ns = mean_pkt_size * 8 * 1_000_000_000
        self.s_ns = -(-bits_ns // link_rate_bps)  # ceil
        self.avg = 0.0
        self.count = -1
        self.q_time: int | None = 0
        self.queue: deque[int] = deque()
        self.bytes = 0

    def _q(self) -> float:
        return float(len(self.queue) if self.mode == "packets" else self.bytes)

    def arrive(self, t: int, size: int, ect: bool, uniform: float | None) -> Step:
        # Average.
        if not self.queue and self.q_time is not None:
            m = (t - self.q_time) / self.s_ns
            self.avg = (1.0 - self.w_q) ** m * self.avg
        else:
            self.avg = (1.0 - self.w_q) * self.avg + self.w_q * self._q()
        self.q_time = None
        # Decision.
        needs = False
        verdict = "queued"
        p_b: float | None = None
        if self.avg < self.min_th:
            self.count = -1
        elif self.avg < self.max_th:
            p_b = self.max_p * (self.avg - self.min_th) / (self.max_th - self.min_th)
        elif self.gentle and self.avg < 2 * self.max_th:
            p_b = self.max_p + (1.0 - self.max_p) * (self.avg - self.max_th) / self.max_th
        else:
            self.count = 0
            verdict = "forced"
        if p_b is not None:
            if self.mode == "bytes":
                p_b = min(p_b * size / self.mean_pkt_size, 1.0)
            self.count += 1
            p_a = 1.0 if self.count * p_b >= 1.0 else min(p_b / (1.0 - self.count * p_b), 1.0)
            needs = True
            if uniform is None:
                raise AssertionError("the reference needs a uniform number here but the replay drew none")
            if uniform < p_a:
                self.count = 0
                verdict = "marked" if (self.ecn and ect) else "early"
        if verdict in ("early", "forced"):
            return Step(self.avg, self.count, verdict, needs, len(self.queue))
        # Physical limit.
        over = (self.limit is not None and len(self.queue) + 1 > self.limit) or (
            self.limit_bytes is not None and self.bytes + size > self.limit_bytes
        )
        if over:
            self.count = 0
            return Step(self.avg, self.count, "overlimit", needs, len(self.queue))
        self.queue.append(size)
        self.bytes += size
        return Step(self.avg, self.count, verdict, needs, len(self.queue))

    def depart(self, t: int) -> Step:
        if self.queue:
            self.bytes -= self.queue.popleft()
            return Step(self.avg, self.count, "departed", False, len(self.queue))
        if self.q_time is None:
            self.q_time = t
        return Step(self.avg, self.count, "empty", False, 0)
