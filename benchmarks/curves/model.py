"""What a curve is (points per series, per metric) and how its growth is judged: a least-squares line
per series, its R², and a verdict (flat, linear, or not, and which way)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchmarks.stats import Stat


@dataclass
class Fit:
    slope: float  # per unit of x
    intercept: float
    r2: float
    verdict: str

    def to_json(self) -> dict[str, Any]:
        return {"slope": self.slope, "intercept": self.intercept, "r2": self.r2, "verdict": self.verdict}


@dataclass
class Metric:
    """One measured quantity of a curve (e.g. RSS), one series per peer, one point per x."""

    name: str
    unit: str
    series: dict[str, list[Stat | None]] = field(default_factory=dict)
    per_unit: str = ""  # how the fitted slope is named (e.g. "KiB per session"); empty: no fit shown
    per_unit_scale: float = 1.0  # slope * scale, in per_unit's unit
    log_y: bool = False

    def add(self, peer: str, index: int, stat: Stat | None, points: int) -> None:
        self.series.setdefault(peer, [None] * points)[index] = stat


@dataclass
class Curve:
    key: str  # file stem, e.g. "sessions"
    title: str
    x_label: str
    xs: list[float]
    metrics: list[Metric]
    notes: list[str] = field(default_factory=list)

    def metric(self, name: str) -> Metric:
        return next(m for m in self.metrics if m.name == name)

    def fits(self) -> dict[tuple[str, str], Fit]:
        out: dict[tuple[str, str], Fit] = {}
        for metric in self.metrics:
            if not metric.per_unit:
                continue
            for peer, stats in metric.series.items():
                points = [(x, s.median) for x, s in zip(self.xs, stats, strict=True) if s is not None]
                found = fit(points)
                if found is not None:
                    out[(metric.name, peer)] = found
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "x_label": self.x_label,
            "xs": self.xs,
            "metrics": {
                m.name: {
                    "unit": m.unit,
                    "series": {p: [s.to_json() if s else None for s in v] for p, v in m.series.items()},
                }
                for m in self.metrics
            },
            "fits": {f"{metric} / {peer}": f.to_json() for (metric, peer), f in self.fits().items()},
            "notes": self.notes,
        }


FLAT = 1.25  # growth over the range below 25 % of the mean: no growth to speak of


def fit(points: list[tuple[float, float]]) -> Fit | None:
    """Least squares y = a + b x, and a verdict. With x spread over decades the line is set by the
    large points, so linearity is judged on the last two segments (where the increments are well
    above the noise): the same slope on both (within 1.5x) is linear; a steeper last segment is
    super-linear; a flatter one sub-linear (a saturation, or a cost that stops growing)."""
    if len(points) < 2:
        return None
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if sxx == 0:
        return None
    slope = sum((x - mx) * (y - my) for x, y in points) / sxx
    intercept = my - slope * mx
    ss_tot = sum((y - my) ** 2 for _, y in points)
    ss_res = sum((y - (intercept + slope * x)) ** 2 for x, y in points)
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0
    return Fit(slope, intercept, r2, verdict(points, slope, my))


def verdict(points: list[tuple[float, float]], slope: float, mean: float) -> str:
    """flat when the fitted line rises by less than a quarter of the mean over the whole range and the
    last step by less than a tenth (noise at one point does not make a flat cost "growing", and a
    per-unit cost on top of a large base is still judged); else judged on the last two segments."""
    span = points[-1][0] - points[0][0]
    last_step = abs(points[-1][1] - points[-2][1])
    if mean > 0 and abs(slope * span) < (FLAT - 1) * mean and last_step < 0.1 * abs(points[-2][1]):
        return "flat"
    if slope < 0:
        return "falling"
    if len(points) < 3:
        return "linear" if points[-1][1] >= points[0][1] else "falling"
    (xa, ya), (xb, yb), (xc, yc) = points[-3:]
    before = (yb - ya) / (xb - xa)
    last = (yc - yb) / (xc - xb)
    if last <= 0 and before <= 0:
        return "falling"
    if before <= 0:
        return "super-linear" if last > 0 else "flat"
    ratio = last / before
    if ratio > 1.5:
        return "super-linear"
    if ratio < 1 / 1.5:
        return "sub-linear"
    return "linear"
