"""4. Memory of a stdio server: RSS when idle after the handshake, and after 10,000 requests.

VmRSS / VmHWM from /proc/<pid>/status. The 10,000 ``tools/call`` requests are
pipelined 8 deep (bounded) to keep the run short; every response is read.
"""

from __future__ import annotations

import subprocess
import sys
import time

from benchmarks.bench_spawn import stdio_commands
from benchmarks.config import PROTOCOL_VERSIONS, Budget
from benchmarks.driver import CallTemplate, DriverError, StdioClient, stdio_handshake
from benchmarks.procs import memory_kib, spawn, stop
from benchmarks.report import Row, Section, Target, absolute_at_most, ratio_at_most
from benchmarks.setup_env import Environment
from benchmarks.stats import stat_or_none

WINDOW = 8


def _once(argv: list[str], side_env: dict[str, str], version: str, budget: Budget, log: str) -> dict[str, float]:
    proc = spawn(argv, env=side_env, log_name=log, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        client = StdioClient(proc, budget.call_timeout)
        stdio_handshake(client, version)
        time.sleep(0.5)
        idle = memory_kib(proc.pid)
        calls = CallTemplate(version)
        total = budget.mem_requests
        sent = received = 0
        while sent < min(WINDOW, total):
            sent += 1
            client.send(calls.encode(sent))
        while received < total:
            line = client.read_line()
            if b'"id"' not in line:
                continue
            if b'"result"' not in line:
                raise DriverError(f"request failed: {line[:300]!r}")
            received += 1
            if sent < total:
                sent += 1
                client.send(calls.encode(sent))
        time.sleep(0.2)
        after = memory_kib(proc.pid)
        return {
            "idle": idle["VmRSS"] / 1024,
            "after": after["VmRSS"] / 1024,
            "growth": (after["VmRSS"] - idle["VmRSS"]) / 1024,
            "hwm": after["VmHWM"] / 1024,
        }
    finally:
        stop(proc)


def run(env: Environment, budget: Budget) -> Section:
    section = Section()
    title = f"4. Memory, stdio server (VmRSS/VmHWM; {budget.mem_requests:,} requests)"
    for version in PROTOCOL_VERSIONS:
        cmds = stdio_commands(env, version)
        samples: dict[str, dict[str, list[float]]] = {p: {} for p in cmds}
        for _rep in range(budget.mem_reps):
            for peer, (argv, side) in cmds.items():
                try:
                    got = _once(argv, env.side_env(side), version, budget, f"mem-{peer}")
                except (DriverError, OSError) as exc:
                    section.notes.append(f"memory {peer} @ {version}: {exc}")
                    continue
                for k, v in got.items():
                    samples[peer].setdefault(k, []).append(v)
        print(f"  memory @ {version} done", file=sys.stderr, flush=True)

        def vals(key: str, samples: dict[str, dict[str, list[float]]] = samples) -> dict:  # noqa: ANN202
            return {p: stat_or_none(samples.get(p, {}).get(key, []), "MiB") for p in ("ours", "official", "floor")}

        section.rows += [
            Row(
                title,
                f"idle RSS after handshake, {version}",
                "MiB",
                vals("idle"),
                target=ratio_at_most(0.6),
            ),
            Row(
                title,
                f"RSS after requests, {version}",
                "MiB",
                vals("after"),
                better="info",
                target=Target("(info)"),
            ),
            Row(
                title,
                f"RSS growth over the requests, {version}",
                "MiB",
                vals("growth"),
                target=absolute_at_most(0.5, "MiB (no growth)"),
            ),
            Row(
                title,
                f"peak RSS (VmHWM), {version}",
                "MiB",
                vals("hwm"),
                better="info",
                target=Target("(info)"),
            ),
        ]
    return section
