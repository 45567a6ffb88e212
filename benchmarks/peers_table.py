"""The peers section's tables (bench_peers.py), as markdown, and its figures as JSON.

Per wire: the headline figures of every peer (median [min-max] over rounds), ours over each peer
(ratios of medians, ours on the stub / ours on the authoring layer), calls/s at every level of calls
in flight, and p50 / p99 latency at 1, 8 and 64 in flight.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from benchmarks.bench_roundtrip import Series
from benchmarks.report import fmt_num, fmt_stat
from benchmarks.stats import Stat, stat_or_none


class Peer(Protocol):
    """What the tables read of a peer (bench_peers.Peer)."""

    @property
    def name(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def wires(self) -> tuple[str, ...]: ...


@dataclass
class Figures:
    """Every sample of one wire: spawn and RSS per peer, and a Series per (peer, transport, level)."""

    spawn_ms: dict[str, list[float]] = field(default_factory=dict)
    rss_mib: dict[str, list[float]] = field(default_factory=dict)
    series: dict[tuple[str, str, int], Series] = field(default_factory=dict)

    def at(self, peer: str, transport: str, level: int) -> Series:
        return self.series.setdefault((peer, transport, level), Series())


OURS = ("ours", "ours-app")
LATENCY_LEVELS = (("stdio", 1), ("stdio", 8), ("stdio", 64), ("http", 1), ("http", 8), ("http", 64))
THROUGHPUT_LEVELS = (("stdio", 1), ("stdio", 8), ("stdio", 64), ("http", 1), ("http", 8), ("http", 16), ("http", 64))
TRANSPORT = {"stdio": "stdio", "http": "HTTP"}


def _series(transport: str, level: int, attr: str) -> Callable[[Figures, str], list[float]]:
    def get(figures: Figures, peer: str) -> list[float]:
        series = figures.series.get((peer, transport, level))
        return list(getattr(series, attr)) if series else []

    return get


# (figure, unit, where its samples are)
HEADLINE: tuple[tuple[str, str, Callable[[Figures, str], list[float]]], ...] = (
    ("spawn -> first answer", "ms", lambda f, p: f.spawn_ms.get(p, [])),
    ("idle RSS after the handshake", "MiB", lambda f, p: f.rss_mib.get(p, [])),
    ("stdio calls/s, 1 in flight", "calls/s", _series("stdio", 1, "rps")),
    ("server CPU per stdio call, 1 in flight", "us", _series("stdio", 1, "cpu")),
    ("Streamable HTTP calls/s, 16 clients", "calls/s", _series("http", 16, "rps")),
    ("server CPU per HTTP call, 16 clients", "us", _series("http", 16, "cpu")),
)


def _stat(samples: list[float], unit: str) -> Stat | None:
    return stat_or_none(samples, unit)


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return [_row(header), _row(["---"] * len(header)), *(_row(r) for r in rows)]


def _ratio(ours: Stat | None, other: Stat | None) -> str:
    return f"{ours.median / other.median:.2f}" if ours and other and other.median else "-"


def _headline(peers: list[Peer], figures: Figures) -> list[str]:
    rows = []
    for figure, unit, get in HEADLINE:
        rows.append([f"{figure}, {unit}", *(fmt_stat(_stat(get(figures, p.name), unit)) for p in peers)])
    return _table(["figure", *(p.label for p in peers)], rows)


def _ratios(peers: list[Peer], figures: Figures) -> list[str]:
    others = [p for p in peers if p.name not in OURS]
    rows = []
    for figure, unit, get in HEADLINE:
        mine = [_stat(get(figures, name), unit) for name in OURS]
        cells = []
        for other in others:
            theirs = _stat(get(figures, other.name), unit)
            cells.append(" / ".join(_ratio(m, theirs) for m in mine))
        rows.append([f"{figure}", *cells])
    return _table(["ours (stub / app layer) over", *(p.label for p in others)], rows)


def _levels(
    peers: list[Peer], figures: Figures, levels: tuple[tuple[str, int], ...], cell: Callable[[str, str, int], str]
) -> list[str]:
    header = ["peer", *(f"{TRANSPORT[t]}, {n} in flight" for t, n in levels)]
    return _table(header, [[p.label, *(cell(p.name, t, n) for t, n in levels)] for p in peers])


def _median(samples: list[float]) -> float | None:
    stat = _stat(samples, "")
    return stat.median if stat else None


def render(peers: Sequence[Peer], by_wire: dict[str, Figures], settings: str, left_out: list[str]) -> str:
    out = [f"Settings: {settings}.", "", *(f"- {line}" for line in left_out)]
    for wire, figures in by_wire.items():
        here = [p for p in peers if any(k[0] == p.name for k in figures.series) or p.name in figures.spawn_ms]

        def latency(peer: str, transport: str, level: int, figures: Figures = figures) -> str:
            p50 = _median(_series(transport, level, "p50")(figures, peer))
            p99 = _median(_series(transport, level, "p99")(figures, peer))
            return "-" if p50 is None or p99 is None else f"{fmt_num(p50 / 1e3)} / {fmt_num(p99 / 1e3)}"

        def throughput(peer: str, transport: str, level: int, figures: Figures = figures) -> str:
            rps = _median(_series(transport, level, "rps")(figures, peer))
            return "-" if rps is None else fmt_num(rps)

        out += ["", f"#### Every peer at {wire}", "", *_headline(here, figures)]
        out += [
            "",
            f"Ours over each peer at {wire} (ratio of medians; above 1 is more calls/s, or more ms, MiB, us):",
            "",
        ]
        out += _ratios(here, figures)
        out += [
            "",
            f"calls/s by calls in flight at {wire}:",
            "",
            *_levels(here, figures, THROUGHPUT_LEVELS, throughput),
        ]
        out += [
            "",
            f"Latency p50 / p99 (ms) by calls in flight at {wire}:",
            "",
            *_levels(here, figures, LATENCY_LEVELS, latency),
        ]
    return "\n".join(out)


def _json(figures: Figures, peer: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, samples, unit in (
        ("spawn_ms", figures.spawn_ms.get(peer, []), "ms"),
        ("rss_mib", figures.rss_mib.get(peer, []), "MiB"),
    ):
        stat = _stat(samples, unit)
        out[key] = stat.to_json() if stat else None
    for (name, transport, level), series in figures.series.items():
        if name == peer:
            out.setdefault(transport, {})[str(level)] = {
                "calls_per_s": series.rps,
                "p50_us": series.p50,
                "p99_us": series.p99,
                "cpu_us_per_call": series.cpu,
            }
    return out


def raw(peers: Sequence[Peer], by_wire: dict[str, Figures], settings: str, left_out: list[str]) -> dict[str, Any]:
    """The section's `raw` entry of latest.json: the markdown, the peers and every per-round figure."""
    return {
        "markdown": render(peers, by_wire, settings, left_out),
        "settings": settings,
        "left_out": left_out,
        "peers": {p.name: {"label": p.label, "wires": list(p.wires)} for p in peers},
        "figures": {wire: {p.name: _json(figures, p.name) for p in peers} for wire, figures in by_wire.items()},
    }
