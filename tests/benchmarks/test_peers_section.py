"""The peers section's own logic, without the peers: the tables' ratios from fixed figures, and a
peer that stops answering in a timed round leaving that round with a note instead of ending the run
(a quick run at load 25 ended in a DriverError when one spawn took over the 60 s start timeout)."""

from __future__ import annotations

import dataclasses
import sys

from benchmarks import bench_peers
from benchmarks.bench_roundtrip import Series
from benchmarks.config import PROTOCOL_LEGACY, QUICK
from benchmarks.peers_table import Figures, render
from benchmarks.setup_env import Environment

ENV = Environment(official_python=sys.executable, mixed_python=None, ours_python=None, ours_in_mixed=False)
SILENT = [sys.executable, "-c", "import time; time.sleep(60)"]  # starts, never answers


def test_the_table_gives_ours_over_each_peer() -> None:
    """Fixed figures: ours at twice the official SDK's calls/s and half its CPU reads 2.00 and 0.50."""

    class P:
        def __init__(self, name: str) -> None:
            self.name, self.label, self.wires = name, f"peer {name}", (PROTOCOL_LEGACY,)

    figures = Figures()
    for name, rps, cpu in (("official", 1000.0, 200.0), ("ours", 2000.0, 100.0), ("ours-app", 500.0, 400.0)):
        figures.series[(name, "stdio", 1)] = Series(rps=[rps], p50=[50.0], p99=[90.0], cpu=[cpu])
    table = render([P("official"), P("ours"), P("ours-app")], {PROTOCOL_LEGACY: figures}, "fixed", [])
    assert "| stdio calls/s, 1 in flight | 2.00 / 0.50 |" in table
    assert "| server CPU per stdio call, 1 in flight | 0.50 / 2.00 |" in table
    assert "| peer official | 1,000 |" in table  # calls/s by level: the stdio, 1 in flight column


def test_a_peer_that_never_answers_costs_its_samples_not_the_run() -> None:
    silent = bench_peers.Peer("silent", "silent peer", "floor", lambda v: SILENT, lambda fd, v: SILENT)
    budget = dataclasses.replace(QUICK, peers_spawns=2, server_start_timeout=0.5)
    figures, notes = Figures(), []
    bench_peers._spawns([silent], ENV, PROTOCOL_LEGACY, budget, 0, figures, notes)
    assert figures.spawn_ms == {} and figures.rss_mib == {}
    assert len(notes) == 2 and all("spawn silent @ 2025-11-25" in n and "DriverError" in n for n in notes), notes
