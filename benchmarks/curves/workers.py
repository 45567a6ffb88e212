"""Curve: workers. Ours' stateless (2026-07-28) ``tools/call echo`` throughput with 1, 2 and 4 uvicorn
workers sharing a private Redis, through ``bench_workers.py``'s load generator (keep-alive connections
spread evenly over the workers, every answer checked). Ours only: neither the official SDK nor
FastMCP shares sessions or notifications between worker processes."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from pathlib import Path

from benchmarks import bench_workers
from benchmarks.curves.model import Curve, Metric
from benchmarks.curves.servers import CurveBudget
from benchmarks.setup_env import Environment
from benchmarks.stats import stat_or_none

ROUNDS = 3  # measured windows per worker count, interleaved


def run(env: Environment, budget: CurveBudget, names: list[str]) -> Curve | None:
    if "ours" not in names or shutil.which("redis-server") is None:
        return None
    levels = list(budget.workers)
    rate = Metric("throughput", "calls/s", per_unit="calls/s per worker")
    per_call = Metric("1 / throughput", "ms")
    rates: dict[int, list[float]] = {w: [] for w in levels}
    with tempfile.TemporaryDirectory(prefix="bench-curves-workers-") as tmp:
        redis, url = bench_workers.start_redis(tmp)
        try:
            running = {w: bench_workers.start_workers(w, url, Path(tmp) / f"workers-{w}.log") for w in levels}
            try:
                for _ in range(ROUNDS):
                    for workers in levels:
                        _, port = running[workers]
                        result = asyncio.run(
                            bench_workers._load(port, workers, "echo", budget.worker_clients, budget.worker_seconds, 0)  # noqa: SLF001
                        )
                        if result["lost"] or result["crossed"]:
                            raise RuntimeError(
                                f"{workers} workers: {result['lost']} lost, {result['crossed']} crossed answers"
                            )
                        rates[workers].append(result["calls_per_s"])
            finally:
                for process, _ in running.values():
                    bench_workers.stop(process)
        finally:
            bench_workers.stop(redis)
    for index, workers in enumerate(levels):
        rate.add("ours", index, stat_or_none(rates[workers], "calls/s"), len(levels))
        per_call.add("ours", index, stat_or_none([1000 / r for r in rates[workers] if r], "ms"), len(levels))
    curve = Curve(
        "workers",
        "Workers on Redis: stateless tools/call throughput (ours)",
        "uvicorn workers",
        [float(w) for w in levels],
        [rate, per_call],
    )
    curve.notes.append(
        f"{budget.worker_clients} clients, {budget.worker_seconds:g} s measured per window (after 3 s of warm-up), "
        f"{ROUNDS} windows per worker count, worker counts in turn; all workers of every count stay up meanwhile "
        f"(idle when not measured). This machine has {os.cpu_count()} CPUs, shared by the load generator, "
        "Redis and the workers: it can show the cost of sharing state and whether a second worker helps "
        "at all, not how throughput scales on more cores (4 workers on 2 CPUs only add contention)."
    )
    return curve
