"""Curve: calls in flight. N ``tools/call sleep`` (each awaits 10 ms, so the calls really overlap) sent
at once, over one stdio pipe and over Streamable HTTP (one 2025-11-25 session, N keep-alive
connections: HTTP/1.1 has one request in flight per connection); a burst ends when all N answers are
in. Throughput is N / burst time; p50 and p95 are of the calls' latencies within a burst, medians
over bursts; peers take turns burst by burst."""

from __future__ import annotations

import asyncio
import json
import os
import select
import time

from benchmarks.config import LOOPBACK, PROTOCOL_LEGACY
from benchmarks.curves.common import call, rotated
from benchmarks.curves.model import Curve, Metric
from benchmarks.curves.servers import CurveBudget, http_servers, stdio_servers
from benchmarks.driver import DriverError, HttpClient, McpHttpSession, StdioClient
from benchmarks.procs import memory_kib
from benchmarks.setup_env import Environment
from benchmarks.stats import Stat, percentile, stat_or_none

Burst = tuple[float, float, float]  # calls/s, p50 ms, p95 ms


def run(env: Environment, budget: CurveBudget, names: list[str]) -> list[Curve]:
    return [_stdio_curve(env, budget, names), _http_curve(env, budget, names)]


def _metrics() -> tuple[Metric, Metric, Metric]:
    return (
        Metric("throughput", "calls/s"),
        Metric("p50 latency", "ms", per_unit="ms per call in flight"),
        Metric("p95 latency", "ms", per_unit="ms per call in flight"),
    )


def _bursts(budget: CurveBudget, n: int) -> int:
    return max(5, -(-budget.inflight_calls // n))


def _record(metrics: tuple[Metric, Metric, Metric], peer: str, index: int, points: int, bursts: list[Burst]) -> None:
    for metric, column in zip(metrics, range(3), strict=True):
        metric.add(peer, index, stat_or_none([b[column] for b in bursts], metric.unit), points)


def _summary(n: int, elapsed: float, latencies: list[float]) -> Burst:
    ordered = sorted(latencies)
    return n / elapsed, percentile(ordered, 50) * 1000, percentile(ordered, 95) * 1000


def _stdio_curve(env: Environment, budget: CurveBudget, names: list[str]) -> Curve:
    levels = list(budget.inflight)
    metrics = _metrics()
    # The server's high-water RSS once each level has run (levels rise, so it is that level's peak).
    peak = Metric("peak RSS", "MiB", per_unit="MiB per call in flight")
    with stdio_servers(env, names, budget.timeout) as running:
        for index, n in enumerate(levels):
            got: dict[str, list[Burst]] = {p: [] for p in names}
            for burst in range(_bursts(budget, n) + 1):  # the first burst warms up
                for peer in rotated(names, burst):
                    result = _stdio_burst(running[peer].client, n, budget)
                    if burst:
                        got[peer].append(result)
            for peer in names:
                _record(metrics, peer, index, len(levels), got[peer])
                high = memory_kib(running[peer].proc.pid)["VmHWM"] / 1024
                peak.add(peer, index, Stat([high], "MiB"), len(levels))
    curve = Curve(
        "inflight_stdio",
        "Calls in flight over one stdio pipe",
        "calls in flight",
        [float(x) for x in levels],
        [*metrics, peak],
    )
    curve.notes.append(
        f"stdio, 2025-11-25, tools/call sleep ({budget.inflight_sleep_ms:g} ms) x N written at once on one pipe; "
        "latency from the write of the burst to each answer; peak RSS is the server's VmHWM after each level "
        "(the levels rise, so it is that level's high-water mark), its slope the memory one call in flight holds."
    )
    return curve


def _stdio_burst(client: StdioClient, n: int, budget: CurveBudget) -> Burst:
    """Write N requests while reading answers (never blocking on a full pipe either way)."""
    arguments = {"ms": budget.inflight_sleep_ms}
    pending = memoryview(b"".join(call(i, "sleep", arguments) + b"\n" for i in range(1, n + 1)))
    fd_in, fd_out = client.proc.stdin.fileno(), client.proc.stdout.fileno()  # type: ignore[union-attr]
    buffer = b""
    latencies: list[float] = []
    started = time.perf_counter()
    deadline = started + budget.timeout
    os.set_blocking(fd_in, False)
    try:
        while len(latencies) < n:
            if time.perf_counter() > deadline:
                raise DriverError(f"{n} calls in flight: {len(latencies)} answers within {budget.timeout}s")
            ready_out, ready_in, _ = select.select([fd_out], [fd_in] if pending else [], [], 1.0)
            if ready_in:
                try:
                    pending = pending[os.write(fd_in, pending) :]
                except BlockingIOError:
                    pass
            if ready_out:
                chunk = os.read(fd_out, 1 << 20)
                if not chunk:
                    raise DriverError("server closed stdout")
                now = time.perf_counter()
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    message = json.loads(line)
                    if "id" in message:
                        if "result" not in message:
                            raise DriverError(f"sleep failed: {str(message)[:300]}")
                        latencies.append(now - started)
    finally:
        os.set_blocking(fd_in, True)
    return _summary(n, time.perf_counter() - started, latencies)


def _http_curve(env: Environment, budget: CurveBudget, names: list[str]) -> Curve:
    levels = list(budget.inflight)
    metrics = _metrics()
    with http_servers(env, names, budget.timeout) as running:
        for index, n in enumerate(levels):
            got = asyncio.run(_http_level(running, names, n, budget))
            for peer in names:
                _record(metrics, peer, index, len(levels), got[peer])
    curve = Curve(
        "inflight_http",
        "Calls in flight over Streamable HTTP",
        "calls in flight",
        [float(x) for x in levels],
        list(metrics),
    )
    curve.notes.append(
        f"Streamable HTTP, 2025-11-25, one session, N keep-alive connections each with one tools/call sleep "
        f"({budget.inflight_sleep_ms:g} ms) in flight; JSON answers (every peer configured so)."
    )
    return curve


async def _http_level(running: dict, names: list[str], n: int, budget: CurveBudget) -> dict[str, list[Burst]]:
    pools: dict[str, tuple[McpHttpSession, list[HttpClient]]] = {}
    try:
        for peer in names:
            port = running[peer].port
            first = HttpClient(LOOPBACK, port, "/mcp", budget.timeout)
            await first.connect()
            session = McpHttpSession(first, PROTOCOL_LEGACY)
            await session.handshake()
            clients = [first]
            for _ in range(n - 1):
                client = HttpClient(LOOPBACK, port, "/mcp", budget.timeout)
                await client.connect()
                clients.append(client)
            pools[peer] = (session, clients)
        got: dict[str, list[Burst]] = {p: [] for p in names}
        for burst in range(_bursts(budget, n) + 1):
            for peer in rotated(names, burst):
                session, clients = pools[peer]
                result = await _http_burst(session, clients, budget)
                if burst:
                    got[peer].append(result)
        return got
    finally:
        for _, clients in pools.values():
            await asyncio.gather(*(c.close() for c in clients), return_exceptions=True)


async def _http_burst(session: McpHttpSession, clients: list[HttpClient], budget: CurveBudget) -> Burst:
    headers = session._headers("tools/call", "sleep")  # noqa: SLF001 - the driver's own header builder
    arguments = {"ms": budget.inflight_sleep_ms}
    started = time.perf_counter()

    async def one(client: HttpClient, req_id: int) -> float:
        status, _, data = await client.post(call(req_id, "sleep", arguments), headers)
        if status != 200 or b'"result"' not in data:
            raise DriverError(f"sleep: HTTP {status}: {data[:300]!r}")
        return time.perf_counter() - started

    latencies = await asyncio.gather(*(one(c, i + 1) for i, c in enumerate(clients)))
    return _summary(len(clients), time.perf_counter() - started, list(latencies))
