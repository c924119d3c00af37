"""Replication statistics: mean and a 95% confidence interval (Student t), the t table embedded
(no SciPy); why: docs/decisions/reproduce.md, "The reproduction framework"."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

#: Two-sided 95% Student t quantiles t(0.975, df), df = 1..30 (exact to three decimals), ten a row.
# fmt: off
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)
# fmt: on
#: Above 30 degrees of freedom, the next lower tabulated value (slightly wider: conservative).
_T975_LARGE = ((121, 1.960), (120, 1.980), (60, 2.000), (40, 2.021), (31, 2.042))


def t975(df: int) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom (df >= 1)."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    return _T975[df - 1] if df <= 30 else next(t for d, t in _T975_LARGE if df >= d)


@dataclass(frozen=True)
class Estimate:
    """A measure over replications: its values, mean and 95% CI half-width."""

    values: tuple[float, ...]

    @classmethod
    def of(cls, values: Iterable[float]) -> Estimate:
        return cls(tuple(float(v) for v in values))

    @property
    def finite(self) -> tuple[float, ...]:
        return tuple(v for v in self.values if math.isfinite(v))

    @property
    def mean(self) -> float:
        v = self.finite
        return sum(v) / len(v) if v else math.nan

    @property
    def sd(self) -> float:
        v, m = self.finite, self.mean
        return math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else math.nan

    @property
    def half_width(self) -> float | None:
        """95% CI half-width, or ``None`` with fewer than two finite values."""
        n = len(self.finite)
        return t975(n - 1) * self.sd / math.sqrt(n) if n > 1 else None

    def fmt(self, spec: str = ".3f", *, scale: float = 1.0, unit: str = "") -> str:
        """``"0.375 ± 0.002"`` (mean ± 95% CI half-width); ``"0.375"`` with one value; ``"n/a"`` with none."""
        if not self.finite:
            return "n/a"
        hw = self.half_width
        ci = f" ± {format(hw * scale, spec)}" if hw is not None else ""
        return f"{format(self.mean * scale, spec)}{ci}{unit}"

    def to_json(self) -> dict[str, float | list[float | None] | None]:
        return {"mean": _num(self.mean), "ci95": _num(self.half_width), "values": [_num(v) for v in self.values]}


def _num(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def cv(values: Iterable[float]) -> float:
    """Coefficient of variation (population standard deviation over the mean); NaN if the mean is 0."""
    v = [float(x) for x in values if math.isfinite(x)]
    m = sum(v) / len(v) if v else 0.0
    return math.sqrt(sum((x - m) ** 2 for x in v) / len(v)) / m if m else math.nan
