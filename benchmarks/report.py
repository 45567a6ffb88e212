"""Result rows, the printed table and the JSON file."""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.config import PEERS
from benchmarks.stats import Stat

Check = Callable[[float | None, float | None, float | None], bool | None]


@dataclass
class Target:
    text: str
    check: Check | None = None


def ratio_at_most(x: float, floor_x: float | None = None) -> Target:
    """ours <= x * official (and, if given, ours <= floor_x * floor) - for lower-is-better figures."""

    def check(ours: float | None, official: float | None, floor: float | None) -> bool | None:
        if ours is None or official is None:
            return None
        ok = ours <= x * official
        if floor_x is not None and floor is not None:
            ok = ok and ours <= floor_x * floor
        return ok

    text = f"<= {x:.2g}x official" + (f", <= {floor_x:g}x floor" if floor_x is not None else "")
    return Target(text, check)


def ratio_at_least(x: float) -> Target:
    def check(ours: float | None, official: float | None, floor: float | None) -> bool | None:
        if ours is None or official is None:
            return None
        return ours >= x * official

    return Target(f">= {x:g}x official", check)


def absolute_at_most(limit: float, unit: str) -> Target:
    def check(ours: float | None, official: float | None, floor: float | None) -> bool | None:
        return None if ours is None else ours <= limit

    return Target(f"<= {limit:g} {unit}", check)


@dataclass
class Row:
    section: str
    metric: str
    unit: str
    values: dict[str, Stat | None]
    better: str = "lower"  # "lower" | "higher" | "info"
    target: Target | None = None
    note: str = ""

    def median(self, peer: str) -> float | None:
        stat = self.values.get(peer)
        return stat.median if stat else None

    @property
    def ratio(self) -> float | None:
        return _ratio(self.median("ours"), self.median("official"))

    @property
    def met(self) -> bool | None:
        if not self.target or not self.target.check:
            return None
        return self.target.check(self.median("ours"), self.median("official"), self.median("floor"))

    def to_json(self) -> dict[str, Any]:
        return {
            "section": self.section,
            "metric": self.metric,
            "unit": self.unit,
            "better": self.better,
            "values": {p: _json_or_none(self.values.get(p)) for p in PEERS},
            "ratio_ours_over_official": self.ratio,
            "ratio_ours_over_floor": _ratio(self.median("ours"), self.median("floor")),
            "ratio_official_over_floor": _ratio(self.median("official"), self.median("floor")),
            "target": self.target.text if self.target else None,
            "target_met": self.met,
            "note": self.note,
        }


def _json_or_none(stat: Stat | None) -> dict[str, Any] | None:
    return stat.to_json() if stat is not None else None


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def fmt_num(x: float) -> str:
    ax = abs(x)
    if ax >= 1000:
        return f"{x:,.0f}"
    if ax >= 100:
        return f"{x:.0f}"
    if ax >= 10:
        return f"{x:.1f}"
    if ax >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def fmt_stat(stat: Stat | None) -> str:
    if stat is None:
        return "-"
    if len(stat.samples) == 1:
        return fmt_num(stat.median)
    return f"{fmt_num(stat.median)} [{fmt_num(stat.min)}-{fmt_num(stat.max)}]"


def render_table(rows: list[Row]) -> str:
    header = ["metric", "ours", "official", "floor", "ours/official", "target"]
    body: list[list[str] | str] = []
    section = None
    for row in rows:
        if row.section != section:
            section = row.section
            body.append(section)
        ratio = f"{row.ratio:.2f}x" if row.ratio is not None else "-"
        target = row.target.text if row.target else ""
        if row.met is not None:
            target += "  [met]" if row.met else "  [MISSED]"
        body.append(
            [
                f"  {row.metric} ({row.unit})",
                fmt_stat(row.values.get("ours")),
                fmt_stat(row.values.get("official")),
                fmt_stat(row.values.get("floor")),
                ratio,
                target,
            ]
        )
    widths = [len(h) for h in header]
    for line in body:
        if isinstance(line, list):
            widths = [max(w, len(c)) for w, c in zip(widths, line, strict=True)]
    sep = "-+-".join("-" * w for w in widths)
    out = [" | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)), sep]
    for line in body:
        if isinstance(line, str):
            out.append(f"{line}")
        else:
            cells = [line[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(line[1:5], widths[1:5], strict=True)]
            cells.append(line[5].ljust(widths[5]))
            out.append(" | ".join(cells).rstrip())
    return "\n".join(out)


def machine_info() -> dict[str, Any]:
    info: dict[str, Any] = {"platform": platform.platform(), "nproc": os.cpu_count()}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/loadavg") as f:
            info["loadavg_at_end"] = f.read().split()[:3]
    except OSError:
        pass
    return info


def write_json(path: Path, rows: list[Row], meta: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": machine_info(),
        **meta,
        "rows": [row.to_json() for row in rows],
    }
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1, default=str))
    tmp.replace(path)


@dataclass
class Section:
    """What one measurement module hands back."""

    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)
