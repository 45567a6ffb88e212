"""The scaling curves' rows in the main table of ``python -m benchmarks``: the #36 scaling targets,
read off the curves (ours / official by ratio; FastMCP's figure in the note)."""

from __future__ import annotations

from benchmarks.curves.model import Curve
from benchmarks.report import Row, absolute_at_most, ratio_at_most
from benchmarks.stats import Stat

SECTION = "10. Scaling curves"


def rows_of(curves: list[Curve]) -> list[Row]:
    by_key = {c.key: c for c in curves}
    rows: list[Row] = []
    if "sessions" in by_key:
        curve = by_key["sessions"]
        fits = curve.fits()
        values: dict[str, Stat | None] = {}
        for peer in ("ours", "official", "fastmcp"):
            found = fits.get(("RSS", peer))
            values[peer] = Stat([found.slope * 1024], "KiB") if found else None
        rows.append(
            Row(
                SECTION,
                f"RSS per idle session (slope, 1..{curve.xs[-1]:,.0f})",
                "KiB",
                values,
                target=ratio_at_most(0.25),
                note=_fastmcp(values),
            )
        )
    if "tools" in by_key:
        curve = by_key["tools"]
        listing = curve.metric("tools/list")
        last = len(curve.xs) - 1
        values = {peer: listing.series.get(peer, [None] * (last + 1))[last] for peer in ("ours", "official", "fastmcp")}
        verdicts = {peer: f.verdict for (metric, peer), f in curve.fits().items() if metric == "tools/list"}
        rows.append(
            Row(
                SECTION,
                f"tools/list of {curve.xs[-1]:,.0f} tools (ours: {verdicts.get('ours', '?')})",
                "ms",
                values,
                target=ratio_at_most(0.2),
                note=_fastmcp(values),
            )
        )
    if "payload" in by_key:
        curve = by_key["payload"]
        extra = curve.metric("peak RSS - idle RSS")
        last = len(curve.xs) - 1
        values = {peer: extra.series.get(peer, [None] * (last + 1))[last] for peer in ("ours", "official", "fastmcp")}
        rows.append(
            Row(
                SECTION,
                f"resources/read of {curve.xs[-1]:g} MiB: peak RSS over idle",
                "x size",
                values,
                target=absolute_at_most(3, "x size"),
                note=_fastmcp(values),
            )
        )
    return rows


def _fastmcp(values: dict[str, Stat | None]) -> str:
    stat = values.pop("fastmcp", None)
    return f"fastmcp {stat.median:.3g}" if stat is not None else ""
