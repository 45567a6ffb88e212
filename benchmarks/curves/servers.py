"""Starting the three peers' curve servers (``ours_server.py`` and its two twins in ``peers/``) over
stdio or Streamable HTTP, each in its own venv and bytecode tree, and the budgets of a curves run."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from benchmarks.config import BENCH_DIR, PEERS_DIR, PROTOCOL_LEGACY
from benchmarks.driver import StdioClient, stdio_handshake
from benchmarks.procs import listener, spawn, stop, wait_for_port
from benchmarks.setup_env import Environment

SCRIPTS = {
    "ours": BENCH_DIR / "curves" / "ours_server.py",
    "official": PEERS_DIR / "official_curves_server.py",
    "fastmcp": PEERS_DIR / "fastmcp_curves_server.py",
}
ALL_PEERS: tuple[str, ...] = ("ours", "official", "fastmcp")


@dataclass(frozen=True)
class CurveBudget:
    name: str
    sessions: tuple[int, ...]
    session_probes: int  # tools/call round trips timed at each session count
    tools: tuple[int, ...]
    tool_reps: int  # tools/list per point (interleaved over the peers)
    tool_calls: int  # tools/call per point
    payloads: tuple[int, ...]  # bytes
    payload_reps: int
    inflight: tuple[int, ...]
    inflight_calls: int  # at least this many calls per point (whole bursts)
    inflight_sleep_ms: float
    workers: tuple[int, ...]
    worker_seconds: float
    worker_clients: int
    timeout: float = 120.0
    catalog: tuple[int, ...] = (10, 100, 1000, 5000, 10_000)  # tools (catalog.py)
    catalog_reps: int = 5  # tools/list per point (and 4x as many calls)
    catalog_searches: int = 100  # searches timed per point, after the first


FULL_CURVES = CurveBudget(
    name="full",
    sessions=(1, 10, 100, 1000, 10_000),
    session_probes=200,
    tools=(10, 100, 1000, 5000),
    tool_reps=7,
    tool_calls=300,
    payloads=(1024, 100 * 1024, 1024 * 1024, 10 * 1024 * 1024),
    payload_reps=5,
    inflight=(1, 10, 100, 1000),
    inflight_calls=500,
    inflight_sleep_ms=10.0,
    workers=(1, 2, 4),
    worker_seconds=5.0,
    worker_clients=16,
)

QUICK_CURVES = CurveBudget(
    name="quick",
    sessions=(1, 10, 100),
    session_probes=30,
    tools=(10, 100, 500),
    tool_reps=3,
    tool_calls=50,
    payloads=(1024, 100 * 1024, 1024 * 1024),
    payload_reps=3,
    inflight=(1, 10, 100),
    inflight_calls=100,
    inflight_sleep_ms=10.0,
    workers=(1, 2),
    worker_seconds=1.0,
    worker_clients=4,
    catalog=(10, 1000, 5000),
    catalog_reps=3,
    catalog_searches=50,
)


# The test suite's smoke run (tests/benchmarks/test_curves_smoke.py): a small fixed input that goes
# through every curve, peer and output file (two points per curve, enough for a fit and its verdict);
# its figures mean nothing. Its time is the servers' start-ups, a few per point.
SMOKE_CURVES = CurveBudget(
    name="smoke",
    sessions=(1, 4),
    session_probes=3,
    tools=(1, 10),
    tool_reps=1,
    tool_calls=3,
    payloads=(1024, 16 * 1024),
    payload_reps=1,
    inflight=(1, 4),
    inflight_calls=4,
    inflight_sleep_ms=1.0,
    workers=(1, 2),
    worker_seconds=0.3,
    worker_clients=2,
    catalog=(5, 20),
    catalog_reps=1,
    catalog_searches=3,
)


def peers(env: Environment) -> list[str]:
    """The peers this environment can run (ours needs mcp_bindings, FastMCP its venv)."""
    return [p for p in ALL_PEERS if python_of(env, p) is not None]


def python_of(env: Environment, peer: str) -> str | None:
    return {"ours": env.ours_python, "official": env.official_python, "fastmcp": env.fastmcp_python}[peer]


def command(env: Environment, peer: str, *, fd: int | None = None, **options: int | bool) -> list[str]:
    """The peer's curve server over stdio, or over Streamable HTTP on the socket it inherits as `fd`."""
    python = python_of(env, peer)
    assert python is not None
    argv = [python, str(SCRIPTS[peer])]
    if fd is not None:
        argv += ["--fd", str(fd)]
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            argv.append(flag)
        elif value is not False:
            argv += [flag, str(value)]
    return argv


@dataclass
class StdioPeer:
    peer: str
    proc: subprocess.Popen
    client: StdioClient


@contextlib.contextmanager
def stdio_servers(
    env: Environment, names: list[str], timeout: float, **options: int | bool
) -> Iterator[dict[str, StdioPeer]]:
    """One stdio server per peer, all up at once, each past its 2025-11-25 handshake."""
    started: dict[str, StdioPeer] = {}
    try:
        for peer in names:
            proc = spawn(
                command(env, peer, **options),
                env=env.side_env(peer),
                log_name=f"curves-{peer}",
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
            client = StdioClient(proc, timeout)
            started[peer] = StdioPeer(peer, proc, client)
            stdio_handshake(client, PROTOCOL_LEGACY)
        yield started
    finally:
        for running in started.values():
            stop(running.proc)


@dataclass
class HttpPeer:
    peer: str
    proc: subprocess.Popen
    port: int


@contextlib.contextmanager
def http_servers(
    env: Environment, names: list[str], timeout: float, **options: int | bool
) -> Iterator[dict[str, HttpPeer]]:
    started: dict[str, HttpPeer] = {}
    try:
        for peer in names:
            with listener() as sock:  # the server's inherited copy holds the port once it is started
                argv = command(env, peer, fd=sock.fileno(), **options)
                proc = spawn(argv, env=env.side_env(peer), log_name=f"curves-{peer}-http", pass_fds=(sock.fileno(),))
                started[peer] = HttpPeer(peer, proc, sock.getsockname()[1])
            wait_for_port(proc, started[peer].port, timeout)
        yield started
    finally:
        for running in started.values():
            stop(running.proc)


def script_path(peer: str) -> Path:
    return SCRIPTS[peer]
