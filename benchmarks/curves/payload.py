"""Curve: payload. A ``resources/read`` of a text resource of 1 KB .. 10 MB over stdio (2025-11-25):
the read's time and the server's peak RSS. For each size every peer's server is started fresh (VmHWM
is a high-water mark over the process's life), holds the payload from start-up (as a file read into
memory would be), and is read in turn, peers interleaved."""

from __future__ import annotations

from benchmarks.curves.common import MIB, Ids, ms_stat, request, rotated, timed_stdio
from benchmarks.curves.model import Curve, Metric
from benchmarks.curves.servers import CurveBudget, stdio_servers
from benchmarks.driver import DriverError
from benchmarks.procs import memory_kib
from benchmarks.setup_env import Environment
from benchmarks.stats import Stat

URI = "blob://payload"


def run(env: Environment, budget: CurveBudget, names: list[str]) -> Curve:
    sizes = list(budget.payloads)
    xs = [size / MIB for size in sizes]
    timing = Metric("read time", "ms", per_unit="ms per MiB", log_y=True)
    peak = Metric("peak RSS", "MiB", per_unit="MiB per MiB")
    extra = Metric("peak RSS - idle RSS", "x payload")
    for index, size in enumerate(sizes):
        ids = Ids()
        times: dict[str, list[float]] = {p: [] for p in names}
        with stdio_servers(env, names, budget.timeout, resource_bytes=size) as running:
            idle = {p: memory_kib(r.proc.pid)["VmRSS"] for p, r in running.items()}
            for rep in range(budget.payload_reps + 1):  # the first round warms up
                for peer in rotated(names, rep):
                    req_id = ids()
                    line = request(req_id, "resources/read", {"uri": URI})
                    seconds, result = timed_stdio(running[peer].client, line, req_id, "resources/read")
                    text = result["contents"][0].get("text", "")
                    if len(text) != size:
                        raise DriverError(f"{peer}: resources/read gave {len(text)} characters, not {size}")
                    if rep:
                        times[peer].append(seconds)
            high = {p: memory_kib(r.proc.pid)["VmHWM"] for p, r in running.items()}
        for peer in names:
            timing.add(peer, index, ms_stat(times[peer]), len(xs))
            peak.add(peer, index, Stat([high[peer] / 1024], "MiB"), len(xs))
            extra.add(peer, index, Stat([(high[peer] - idle[peer]) * 1024 / size], "x"), len(xs))
    curve = Curve("payload", "Payload: resources/read of one text resource", "payload (MiB)", xs, [timing, peak, extra])
    curve.notes.append(
        "stdio, 2025-11-25; read time is the driver's wall time per read (the client's JSON decode "
        f"included, the same for every peer), {budget.payload_reps} reads per peer after one untimed; "
        "peak RSS is the server's VmHWM after them (one figure per server); the idle RSS, taken after the "
        "handshake, already holds the payload string, so the last metric is what serving it adds, in "
        "multiples of its size."
    )
    return curve
