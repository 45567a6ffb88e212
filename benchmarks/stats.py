"""Small statistics helpers: every figure is a median over repeated runs with its min and max."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Stat:
    """Repeated samples of one figure (one peer, one metric)."""

    samples: list[float]
    unit: str
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def min(self) -> float:
        return min(self.samples)

    @property
    def max(self) -> float:
        return max(self.samples)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "median": self.median,
            "min": self.min,
            "max": self.max,
            "n": len(self.samples),
            "unit": self.unit,
            "samples": self.samples,
        }
        if self.extra:
            out["extra"] = self.extra
        return out


def stat_or_none(samples: list[float], unit: str, **extra: Any) -> Stat | None:
    clean = [s for s in samples if s is not None and not math.isnan(s)]
    return Stat(clean, unit, dict(extra)) if clean else None


def percentile(sorted_values: list[float], pct: float) -> float:
    """Nearest-rank percentile of an already sorted list."""
    if not sorted_values:
        return float("nan")
    rank = max(1, math.ceil(pct / 100.0 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]
