"""11. Every peer side by side: the no-library floor, the official Python SDK, FastMCP, the TypeScript
SDK v1 and v2 on Node, ours on the stub and on the authoring layer (issue 51, items 1 and 5).

In each of ``budget.peers_rounds`` interleaved rounds, at each wire (2025-11-25, 2026-07-28) every
peer that speaks it is measured in turn, the order rotating:

* spawn -> first answer (``initialize`` / ``server/discover``) of its stdio server, then its VmRSS
  once the handshake is done and it has sat idle for ``IDLE_SETTLE`` s;
* stdio: one server per peer, all up at once, driven in blocks (peers alternating) with 1, 8 and 64
  requests in flight on the pipe (pipelined; one call's latency is from its write to its response);
* Streamable HTTP: one server per peer on a socket the harness binds (``procs.listener``), all up at
  once, driven by 1, 8, 16 and 64 concurrent clients (each its own keep-alive connection and, where
  the server keeps sessions, its session), in blocks, peers alternating.

Per round and level: calls/s (calls / time spent driving that peer), p50 and p99 latency, and server
CPU per call (utime + stime of the server process over the level's phase / its calls). Figures are
medians over rounds with [min-max]; ratios are of medians. The tables are ``peers_table.render``'s.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from benchmarks import ours, peers_table
from benchmarks.bench_roundtrip import DRIVE_ERRORS, rotated
from benchmarks.config import (
    FASTMCP_REQUIREMENTS,
    HTTP_PATH,
    LOOPBACK,
    PEERS_DIR,
    PROTOCOL_LEGACY,
    PROTOCOL_VERSIONS,
    Budget,
    clean_env,
)
from benchmarks.driver import (
    CallTemplate,
    DriverError,
    HttpClient,
    McpHttpSession,
    StdioClient,
    check_echo,
    discover_request,
    initialize_request,
    initialized_notification,
    stdio_handshake,
)
from benchmarks.peers_table import Figures
from benchmarks.procs import cpu_seconds, listener, memory_kib, spawn, stop, wait_for_port
from benchmarks.report import Section
from benchmarks.setup_env import Environment, go_unavailable

STDIO_LEVELS = (1, 8, 64)
HTTP_LEVELS = (1, 8, 16, 64)  # 16: the figure the table and section 3 report
BLOCK = 60  # calls per peer before the driver moves on (at least two per client at 64 in flight)
BLOCK_WARM = 5  # untimed calls when the driver comes back to a peer
WARMUP = 2000  # untimed calls after a server's handshake, every peer alike: Node's JIT needs about 2,000
IDLE_SETTLE = 0.3  # seconds a spawned server sits idle after its handshake before its RSS is read


# Environment of the peers section: `PEERS_ENV`, the peers to run (names, comma-separated; default all);
# `BASELINE_ENV`, a PYTHONPATH (e.g. `<copy>/runtime:<copy>/generated` of another commit) under which
# ours runs again as "ours (stub), baseline" and "ours (app layer), baseline": an A/B in the same rounds.
PEERS_ENV = "MCP_BENCH_PEERS"
BASELINE_ENV = "MCP_BENCH_BASELINE"
FLOOR_OURS_STACK = "floor-ours-stack"

StdioCommand = Callable[[str], list[str]]  # wire -> argv
HttpCommand = Callable[[int, str], list[str]]  # (inherited socket's fd, wire) -> argv


@dataclass(frozen=True)
class Peer:
    """One server implementation: how to start it on stdio and on an inherited socket, and which wires
    it speaks (a wire it fails at is dropped with a note)."""

    name: str
    label: str
    side: str  # the bytecode side of a Python peer (Environment.side_env); "node" for the Node peers
    stdio: StdioCommand
    http: HttpCommand
    wires: tuple[str, ...] = PROTOCOL_VERSIONS
    pythonpath: str | None = None  # ours as it was (`BASELINE_ENV`): its runtime and generated code

    def env(self, env: Environment, *, write: bool = False) -> dict[str, str]:
        if self.side == "node":
            return clean_env()
        out = env.side_env(self.side, write=write)
        if self.pythonpath:
            out["PYTHONPATH"] = self.pythonpath
        return out


def _fixed(stdio: list[str], http: list[str]) -> tuple[StdioCommand, HttpCommand]:
    """Commands the wire does not change: `stdio`, and `http` + `--fd FD`."""
    return (lambda version: list(stdio)), (lambda fd, version: [*http, "--fd", str(fd)])


def _ours_app(python: str) -> tuple[StdioCommand, HttpCommand]:
    app = [python, str(PEERS_DIR / "ours_app_echo.py")]
    return (lambda v: [*app, "--stub", v]), (lambda fd, v: [*app, "--stub", v, "--fd", str(fd)])


def _ours_stub(version: str) -> list[str]:
    return list(ours.ours_stdio_server_command(version) or [])


def _ours_stub_http(fd: int, version: str) -> list[str]:
    return list(ours.ours_http_server_command(fd, version) or [])


def peers(env: Environment) -> list[Peer]:
    """Every peer this environment can run, in the tables' order."""
    python = env.official_python
    found = [
        Peer(
            "floor",
            "no-library floor",
            "floor",
            *_fixed([python, str(PEERS_DIR / "floor_stdio_echo.py")], [python, str(PEERS_DIR / "floor_http_echo.py")]),
        ),
        Peer(
            "official",
            f"official SDK {env.versions.get('mcp', '?')}",
            "official",
            *_fixed(
                [python, str(PEERS_DIR / "official_stdio_server.py")],
                [python, str(PEERS_DIR / "official_http_server.py")],
            ),
        ),
    ]
    if env.fastmcp_python:
        fastmcp = [env.fastmcp_python, str(PEERS_DIR / "fastmcp_curves_server.py")]
        found.append(
            Peer("fastmcp", f"FastMCP {FASTMCP_REQUIREMENTS[0].split('==')[-1]}", "fastmcp", *_fixed(fastmcp, fastmcp))
        )
    if env.node:
        node = env.node
        for name, server, package, wires in (
            ("ts-v1", "ts_v1_server.mjs", "@modelcontextprotocol/sdk", (PROTOCOL_LEGACY,)),  # v1 has no 2026 era
            ("ts-v2", "ts_v2_server.mjs", "@modelcontextprotocol/server", PROTOCOL_VERSIONS),
        ):
            label = f"TS SDK {name[3:]} {node.versions[package]} (Node {node.versions['node']})"
            found.append(Peer(name, label, "node", *_fixed(node.command(server), node.command(server)), wires))
    if env.ours_python:
        # The same bare-ASGI echo on ours' interpreter, i.e. on the uvicorn stack ours runs on
        # (httptools + uvloop): what "HTTP >= 0.8x the same-stack floor" is read against.
        floor = [env.ours_python, str(PEERS_DIR / "floor_http_echo.py")]
        found.append(
            Peer(
                FLOOR_OURS_STACK,
                "no-library floor, ours' stack",
                "ours",
                *_fixed([env.ours_python, str(PEERS_DIR / "floor_stdio_echo.py")], floor),
            )
        )
        found.append(Peer("ours", "ours (stub)", "ours", _ours_stub, _ours_stub_http))
        found.append(Peer("ours-app", "ours (app layer)", "ours", *_ours_app(env.ours_python)))
        baseline = os.environ.get(BASELINE_ENV)
        if baseline:  # ours as it was, beside ours as it is, in the same rounds
            found.append(
                Peer("ours-base", "ours (stub), baseline", "ours", _ours_stub, _ours_stub_http, pythonpath=baseline)
            )
            found.append(
                Peer(
                    "ours-app-base",
                    "ours (app layer), baseline",
                    "ours",
                    *_ours_app(env.ours_python),
                    pythonpath=baseline,
                )
            )
    chosen = os.environ.get(PEERS_ENV)
    if chosen:
        names = {name.strip() for name in chosen.split(",")}
        found = [peer for peer in found if peer.name in names]
    return found


# --- spawn and idle memory ---------------------------------------------------------------------


def spawn_once(
    peer: Peer, env: Environment, version: str, timeout: float, *, write: bool = False
) -> tuple[float, float]:
    """(ms from spawn to the first answer, VmRSS in MiB once idle after the handshake) of one stdio server."""
    legacy = version == PROTOCOL_LEGACY
    first = initialize_request(0, version) if legacy else discover_request(0, version)
    start = time.perf_counter()
    proc = spawn(
        peer.stdio(version),
        env=peer.env(env, write=write),
        log_name=f"peers-spawn-{peer.name}",
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        client = StdioClient(proc, timeout)
        response = client.request(first, 0)
        elapsed_ms = (time.perf_counter() - start) * 1e3
        if "result" not in response:
            raise DriverError(f"first request failed: {str(response)[:300]}")
        if legacy:
            client.send(initialized_notification())
        time.sleep(IDLE_SETTLE)
        return elapsed_ms, memory_kib(proc.pid)["VmRSS"] / 1024
    finally:
        stop(proc)


def _left_out(live: dict[str, Any], name: str, what: str, exc: BaseException, notes: list[str]) -> None:
    """A peer that failed in a round (a timeout on a machine under load) leaves it, with a note; the
    run goes on with the others."""
    live.pop(name, None)
    notes.append(f"peers: {what} {name}: {type(exc).__name__}: {exc} (left out for the rest of the round)")


def _spawns(
    live: list[Peer], env: Environment, version: str, budget: Budget, rnd: int, figures: Figures, notes: list[str]
) -> None:
    for rep in range(budget.peers_spawns):
        for name in rotated([p.name for p in live], rnd + rep):
            peer = next(p for p in live if p.name == name)
            try:
                ms, rss = spawn_once(peer, env, version, budget.server_start_timeout)
            except DRIVE_ERRORS as exc:
                notes.append(f"peers: spawn {name} @ {version}, round {rnd + 1}: {type(exc).__name__}: {exc}")
                continue
            figures.spawn_ms.setdefault(name, []).append(ms)
            figures.rss_mib.setdefault(name, []).append(rss)


# --- stdio ------------------------------------------------------------------------------------


class Pipe:
    """A stdio server driven with up to `depth` `tools/call echo` requests in flight on its pipe."""

    def __init__(self, proc: subprocess.Popen, version: str, timeout: float) -> None:
        self.proc = proc
        self.client = StdioClient(proc, timeout)
        self.calls = CallTemplate(version)
        self.next_id = 1
        stdio_handshake(self.client, version)

    def run(self, calls: int, depth: int, sink: list[float] | None = None) -> float:
        """Make `calls` calls keeping `depth` in flight; their latencies go to `sink`; returns the time taken."""
        perf = time.perf_counter
        sent: dict[int, float] = {}
        issued = done = 0
        t0 = perf()
        while done < calls:
            while issued < calls and len(sent) < depth:
                sent[self.next_id] = perf()
                self.client.send(self.calls.encode(self.next_id))
                self.next_id += 1
                issued += 1
            msg = json.loads(self.client.read_line())
            began = sent.pop(msg.get("id"), None)
            if began is None:
                continue  # a notification, or an answer to nothing of ours
            if sink is not None:
                sink.append(perf() - began)
            done += 1
            check_echo(msg)
        return perf() - t0


@contextmanager
def _stdio_servers(
    live: list[Peer], env: Environment, version: str, timeout: float, notes: list[str]
) -> Iterator[dict[str, Pipe]]:
    procs: list[subprocess.Popen] = []
    pipes: dict[str, Pipe] = {}
    try:
        for peer in live:
            proc = spawn(
                peer.stdio(version),
                env=peer.env(env),
                log_name=f"peers-stdio-{peer.name}",
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
            procs.append(proc)
            try:
                pipe = Pipe(proc, version, timeout)
                pipe.run(WARMUP, 1)
                pipes[peer.name] = pipe
            except DRIVE_ERRORS as exc:
                notes.append(f"peers: stdio {peer.name} @ {version}: {type(exc).__name__}: {exc}")
        yield pipes
    finally:
        for proc in procs:
            stop(proc)


def _stdio_round(
    live: list[Peer], env: Environment, version: str, budget: Budget, rnd: int, figures: Figures, notes: list[str]
) -> None:
    with _stdio_servers(live, env, version, budget.call_timeout, notes) as pipes:
        for level in STDIO_LEVELS:
            block = max(BLOCK, 2 * level)
            cpu0 = {name: cpu_seconds(pipe.proc.pid) for name, pipe in pipes.items()}
            lat: dict[str, list[float]] = {name: [] for name in pipes}
            busy = dict.fromkeys(pipes, 0.0)
            for b in range(math.ceil(budget.peers_calls / block)):
                for name in rotated(list(pipes), rnd + b):
                    try:
                        pipes[name].run(BLOCK_WARM, 1)
                        busy[name] += pipes[name].run(block, level, lat[name])
                    except DRIVE_ERRORS as exc:
                        _left_out(pipes, name, f"stdio @ {version}, {level} in flight:", exc, notes)
            for name, pipe in pipes.items():
                figures.at(name, "stdio", level).add(lat[name], busy[name], cpu_seconds(pipe.proc.pid) - cpu0[name])


# --- Streamable HTTP --------------------------------------------------------------------------


@dataclass
class _HttpServer:
    pid: int
    port: int
    sessions: list[McpHttpSession] = field(default_factory=list)


async def _open(server: _HttpServer, version: str, count: int, timeout: float) -> None:
    for _ in range(count):
        http = HttpClient(LOOPBACK, server.port, HTTP_PATH, timeout)
        await http.connect()
        session = McpHttpSession(http, version)
        server.sessions.append(session)
        await session.handshake()
    await _clients(server.sessions, max(1, WARMUP // count), [], timeout)  # untimed, spread over the clients


async def _clients(sessions: list[McpHttpSession], calls: int, sink: list[float], timeout: float) -> float:
    """`calls` sequential calls on each session, all sessions at once; returns the time taken."""
    perf = time.perf_counter

    async def one(session: McpHttpSession) -> None:
        for _ in range(calls):
            began = perf()
            await session.call_echo()
            sink.append(perf() - began)

    t0 = perf()
    await asyncio.wait_for(asyncio.gather(*(one(s) for s in sessions)), timeout * calls)
    return perf() - t0


async def _http_levels(
    servers: dict[str, _HttpServer], version: str, budget: Budget, rnd: int, figures: Figures, notes: list[str]
) -> None:
    live: dict[str, _HttpServer] = {}
    try:
        for name, server in servers.items():
            try:
                await _open(server, version, max(HTTP_LEVELS), budget.call_timeout)
                live[name] = server
            except DRIVE_ERRORS as exc:
                notes.append(f"peers: HTTP {name} @ {version}: {type(exc).__name__}: {exc}")
        for level in HTTP_LEVELS:
            per_client = max(1, max(BLOCK, 2 * level) // level)
            cpu0 = {name: cpu_seconds(s.pid) for name, s in live.items()}
            lat: dict[str, list[float]] = {name: [] for name in live}
            busy = dict.fromkeys(live, 0.0)
            for b in range(math.ceil(budget.peers_calls / (per_client * level))):
                for name in rotated(list(live), rnd + b):
                    sessions = live[name].sessions[:level]
                    try:
                        await _clients(sessions, 1, [], budget.call_timeout)  # untimed: re-warm every client
                        busy[name] += await _clients(sessions, per_client, lat[name], budget.call_timeout)
                    except DRIVE_ERRORS as exc:
                        _left_out(live, name, f"HTTP @ {version}, {level} clients:", exc, notes)
            for name, server in live.items():
                figures.at(name, "http", level).add(lat[name], busy[name], cpu_seconds(server.pid) - cpu0[name])
    finally:
        for server in servers.values():
            for session in server.sessions:
                await session.http.close()


def _http_round(
    live: list[Peer], env: Environment, version: str, budget: Budget, rnd: int, figures: Figures, notes: list[str]
) -> None:
    procs: dict[str, subprocess.Popen] = {}
    servers: dict[str, _HttpServer] = {}
    try:
        for peer in live:
            with listener() as sock:  # the server's inherited copy holds the port from here on
                port = sock.getsockname()[1]
                procs[peer.name] = spawn(
                    peer.http(sock.fileno(), version),
                    env=peer.env(env),
                    log_name=f"peers-http-{peer.name}",
                    pass_fds=(sock.fileno(),),
                )
            servers[peer.name] = _HttpServer(procs[peer.name].pid, port)
        for name, proc in procs.items():
            try:
                wait_for_port(proc, servers[name].port, budget.server_start_timeout)
            except DRIVE_ERRORS as exc:
                notes.append(f"peers: HTTP server {name} @ {version}: {exc}")
                servers.pop(name)
        asyncio.run(_http_levels(servers, version, budget, rnd, figures, notes))
    finally:
        for proc in procs.values():
            stop(proc)


# --- section ----------------------------------------------------------------------------------


def _speakers(all_peers: list[Peer], env: Environment, version: str, budget: Budget, notes: list[str]) -> list[Peer]:
    """The peers that answer at `version`: one untimed spawn each (which also fills its bytecode tree)."""
    live: list[Peer] = []
    for peer in all_peers:
        if version not in peer.wires:
            notes.append(f"peers: {peer.label} does not speak {version}: left out at that wire")
            continue
        try:
            spawn_once(peer, env, version, budget.server_start_timeout, write=True)
            live.append(peer)
        except DRIVE_ERRORS as exc:
            notes.append(f"peers: {peer.label} @ {version} left out: {type(exc).__name__}: {exc}")
    return live


def run(env: Environment, budget: Budget) -> Section:
    section = Section()
    all_peers = peers(env)
    by_wire: dict[str, Figures] = {}
    for version in PROTOCOL_VERSIONS:
        live = _speakers(all_peers, env, version, budget, section.notes)
        figures = by_wire[version] = Figures()
        for rnd in range(budget.peers_rounds):
            _spawns(live, env, version, budget, rnd, figures, section.notes)
            _stdio_round(live, env, version, budget, rnd, figures, section.notes)
            _http_round(live, env, version, budget, rnd, figures, section.notes)
            print(f"  peers @ {version}: round {rnd + 1}/{budget.peers_rounds}", file=sys.stderr, flush=True)
    settings = (
        f"{budget.name}: {budget.peers_rounds} interleaved rounds; per round, peer, transport and level "
        f"{budget.peers_calls} calls (blocks of {BLOCK}, or 2 per client, peers alternating) after {WARMUP} "
        f"warm-up; {budget.peers_spawns} spawn(s) per peer and wire per round"
    )
    left_out = (
        [go_unavailable()] if env.node else [go_unavailable(), "TypeScript SDK peers: not set up (see the notes)"]
    )
    section.raw = peers_table.raw(all_peers, by_wire, settings, left_out)
    return section
