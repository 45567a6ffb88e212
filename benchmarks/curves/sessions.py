"""Curve: idle sessions. Streamable HTTP at 2025-11-25, every peer's server up at once: sessions are
opened (``initialize`` + ``notifications/initialized``, 8 connections at a time) up to each count and
left idle; then the server's RSS is read and ``tools/call echo`` timed on sessions spread over all those
open (peers in turn, in blocks). RSS per idle session is the slope of RSS against sessions."""

from __future__ import annotations

import asyncio
import statistics
import time

from benchmarks.config import LOOPBACK, PROTOCOL_LEGACY
from benchmarks.curves.common import call, rotated
from benchmarks.curves.model import Curve, Metric
from benchmarks.curves.servers import CurveBudget, HttpPeer, http_servers
from benchmarks.driver import DriverError, HttpClient, McpHttpSession
from benchmarks.procs import memory_kib
from benchmarks.setup_env import Environment
from benchmarks.stats import Stat, stat_or_none

OPENERS = 8  # connections opening sessions at once, per peer
PROBE_BLOCK = 10


def run(env: Environment, budget: CurveBudget, names: list[str]) -> Curve:
    levels = list(budget.sessions)
    rss = Metric("RSS", "MiB", per_unit="KiB per session", per_unit_scale=1024.0)
    latency = Metric("tools/call latency", "ms", per_unit="us per session", per_unit_scale=1000.0)
    opening = Metric("initialize latency", "ms")
    with http_servers(env, names, budget.timeout) as running:
        asyncio.run(_levels(running, names, levels, budget, (rss, latency, opening)))
    curve = Curve(
        "sessions",
        "Idle sessions: server RSS and latency (Streamable HTTP, 2025-11-25)",
        "idle sessions",
        [float(x) for x in levels],
        [rss, latency, opening],
    )
    curve.notes.append(
        "RSS: VmRSS of the server process, median of 3 readings 0.3 s apart once the sessions are open; "
        f"tools/call latency: {budget.session_probes} sequential echo calls per peer over one keep-alive "
        f"connection, on sessions spread over all those open, peers in turn every {PROBE_BLOCK} calls; "
        "initialize latency: median time of the initialize requests that opened the sessions of that step."
    )
    return curve


async def _levels(
    running: dict[str, HttpPeer],
    names: list[str],
    levels: list[int],
    budget: CurveBudget,
    metrics: tuple[Metric, Metric, Metric],
) -> None:
    rss, latency, opening = metrics
    sessions: dict[str, list[str]] = {p: [] for p in names}
    for index, level in enumerate(levels):
        for peer in names:
            opened = await _open(running[peer].port, level - len(sessions[peer]), budget)
            sessions[peer] += [sid for sid, _ in opened]
            opening.add(peer, index, stat_or_none([s * 1000 for _, s in opened], "ms"), len(levels))
        await asyncio.sleep(0.5)
        for peer in names:
            rss.add(peer, index, _rss(running[peer]), len(levels))
        probes = await _probe(running, names, sessions, budget)
        for peer in names:
            latency.add(peer, index, probes[peer], len(levels))


def _rss(server: HttpPeer) -> Stat:
    readings = []
    for _ in range(3):
        readings.append(memory_kib(server.proc.pid)["VmRSS"] / 1024)
        time.sleep(0.3)
    return Stat([statistics.median(readings)], "MiB", {"readings": readings})


async def _open(port: int, count: int, budget: CurveBudget) -> list[tuple[str, float]]:
    """Open `count` sessions; returns (session id, initialize seconds) of each."""
    if count <= 0:
        return []
    shares = [count // OPENERS + (1 if i < count % OPENERS else 0) for i in range(OPENERS)]

    async def opener(share: int) -> list[tuple[str, float]]:
        http = HttpClient(LOOPBACK, port, "/mcp", budget.timeout)
        await http.connect()
        out: list[tuple[str, float]] = []
        try:
            for _ in range(share):
                session = McpHttpSession(http, PROTOCOL_LEGACY)
                started = time.perf_counter()
                await session.handshake()
                if session.session_id is None:
                    raise DriverError("initialize gave no Mcp-Session-Id")
                out.append((session.session_id, time.perf_counter() - started))
        finally:
            await http.close()
        return out

    results = await asyncio.gather(*(opener(share) for share in shares if share))
    return [item for chunk in results for item in chunk]


async def _probe(
    running: dict[str, HttpPeer], names: list[str], sessions: dict[str, list[str]], budget: CurveBudget
) -> dict[str, Stat | None]:
    clients: dict[str, HttpClient] = {}
    times: dict[str, list[float]] = {p: [] for p in names}
    try:
        for peer in names:
            clients[peer] = HttpClient(LOOPBACK, running[peer].port, "/mcp", budget.timeout)
            await clients[peer].connect()
        blocks = -(-budget.session_probes // PROBE_BLOCK)
        for block in range(blocks + 1):  # the first block warms up
            for peer in rotated(names, block):
                ids = sessions[peer]
                for k in range(PROBE_BLOCK):
                    n = block * PROBE_BLOCK + k
                    sid = ids[(n * 7919) % len(ids)]
                    head = f"MCP-Protocol-Version: {PROTOCOL_LEGACY}\r\nMcp-Session-Id: {sid}\r\n".encode()
                    started = time.perf_counter()
                    status, _, data = await clients[peer].post(call(n + 1, "echo", {"text": "hi"}), head)
                    elapsed = time.perf_counter() - started
                    if status != 200 or b'"result"' not in data:
                        raise DriverError(f"{peer}: tools/call on an idle session: HTTP {status}: {data[:200]!r}")
                    if block:
                        times[peer].append(elapsed * 1000)
    finally:
        for client in clients.values():
            await client.close()
    return {p: stat_or_none(v, "ms") for p, v in times.items()}
