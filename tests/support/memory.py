"""A server's RSS under a few hundred large answers, checked for growth: the probes of
`benchmarks/stdio_memory.py` (a stdio or Streamable HTTP `echo` server in a subprocess, 8 calls in
flight, VmRSS from /proc) run in two halves, and the second half must not keep adding what the first
did. Generous margins, no timing: RSS is read once the load has settled (`settled_rss`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from benchmarks.stdio_memory import HttpEchoProbe, StdioEchoProbe

needs_proc = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads RSS from /proc")


@dataclass(frozen=True)
class Growth:
    """RSS (MiB) at the start, after the first half of the calls and after all of them."""

    start: float
    middle: float
    end: float

    def check(self, bound_mb: float, second_half_mb: float) -> None:
        """Within `bound_mb` of the start after all the calls, and the second half adding at most
        `second_half_mb` or half what the first added (memory that keeps growing fails both)."""
        first, second = self.middle - self.start, self.end - self.middle
        figures = f"RSS start {self.start:.1f}, half way {self.middle:.1f}, end {self.end:.1f} MiB"
        assert second <= max(second_half_mb, first / 2), f"the second half added {second:.1f} MiB: {figures}"
        assert self.end - self.start <= bound_mb, f"{self.end - self.start:.1f} MiB over the start: {figures}"


def growth(probe: StdioEchoProbe | HttpEchoProbe, calls: int, size: int, bound_mb: float) -> Growth:
    """`calls` echo calls of `size` bytes on a started probe, in two halves, with settled RSS figures
    (each read once at or under start + `bound_mb`, or after a few seconds)."""
    start = probe.settled_rss()
    probe.run(calls // 2, size)
    middle = probe.settled_rss(start + bound_mb)
    probe.run(calls - calls // 2, size)
    return Growth(start, middle, probe.settled_rss(start + bound_mb))
