"""3 + 6. Sequential and concurrent ``tools/call`` round trips, with server CPU per call.

Noise control on a shared 2-core machine: within one repetition every peer's
server runs at the same time (idle while not driven) and the driver alternates
between them in short blocks (rotating the order), so load from elsewhere hits
all peers alike; each repetition starts fresh servers. When the driver comes back to a peer it
first makes a few untimed calls (``BLOCK_WARM``; one per client before a
concurrent burst), so an idle server's wake-up is not billed as latency.

stdio: one real subprocess per peer, one client (sequential calls), after the
handshake and a warm-up. Streamable HTTP: one server per peer (uvicorn on
127.0.0.1, on a socket the harness binds and passes on); first 1 client (sequential calls), then 16 concurrent
clients (each its own keep-alive connection and, at 2025-11-25, its own
session; all in one asyncio loop in the harness) driven in bursts. Latency is
per call (p50/p99 per repetition); throughput is calls / time spent driving
that peer; server CPU is the utime+stime delta in /proc/<pid>/stat over the
phase divided by its calls (10 ms tick resolution, so small figures are coarse).
"""

from __future__ import annotations

import asyncio
import math
import subprocess
import sys
import time
from dataclasses import dataclass, field

from benchmarks import ours
from benchmarks.bench_spawn import stdio_commands
from benchmarks.config import HTTP_PATH, LOOPBACK, PEERS_DIR, PROTOCOL_VERSIONS, Budget
from benchmarks.driver import (
    CallTemplate,
    DriverError,
    HttpClient,
    McpHttpSession,
    StdioClient,
    check_echo,
    stdio_handshake,
)
from benchmarks.procs import cpu_seconds, listener, spawn, stop, wait_for_port
from benchmarks.report import Row, Section, Target, ratio_at_least
from benchmarks.setup_env import Environment
from benchmarks.stats import percentile, stat_or_none

# HTTP peers besides ours / official / floor: ours forced onto uvicorn's pure-Python stack (h11 +
# asyncio, what the official server runs on), and the floor on ours' stack (httptools + uvloop).
OURS_PURE = "ours-h11"
FLOOR_OURS_STACK = "floor-ours-stack"
STDIO_BLOCK = 100  # calls per peer before switching to the next peer
HTTP_BLOCK = 50
HTTP_BURST = 10  # calls per client per concurrent burst
BLOCK_WARM = 5  # untimed calls when the driver switches back to a peer (re-warms an idle server)

DRIVE_ERRORS = (
    DriverError,
    OSError,
    RuntimeError,
    TimeoutError,
    asyncio.TimeoutError,
    asyncio.IncompleteReadError,
)


@dataclass
class Series:
    rps: list[float] = field(default_factory=list)
    p50: list[float] = field(default_factory=list)
    p99: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    def add(self, latencies_s: list[float], busy_s: float, cpu_s: float) -> None:
        if not latencies_s or busy_s <= 0:
            return
        lat = sorted(latencies_s)
        self.rps.append(len(lat) / busy_s)
        self.p50.append(percentile(lat, 50) * 1e6)
        self.p99.append(percentile(lat, 99) * 1e6)
        self.cpu.append(cpu_s / len(lat) * 1e6)


def rotated(items: list[str], k: int) -> list[str]:
    if not items:
        return items
    k %= len(items)
    return items[k:] + items[:k]


# --- stdio ------------------------------------------------------------------------------------


@dataclass
class _StdioPeer:
    proc: subprocess.Popen
    client: StdioClient
    calls: CallTemplate
    next_id: int = 1
    latencies: list[float] = field(default_factory=list)
    busy: float = 0.0

    def call(self) -> None:
        req_id = self.next_id
        self.next_id += 1
        response = self.client.request(self.calls.encode(req_id), req_id)
        if "result" not in response:
            check_echo(response)


def _stdio_rep(
    cmds: dict,
    env: Environment,
    version: str,
    budget: Budget,
    write: bool,
    series: dict[str, Series],
    notes: list[str],
) -> None:
    peers: dict[str, _StdioPeer] = {}
    procs: list[subprocess.Popen] = []
    try:
        for name, (argv, side) in cmds.items():
            proc = spawn(
                argv,
                env=env.side_env(side, write=write),
                log_name=f"rt-stdio-{name}",
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
            procs.append(proc)
            try:
                client = StdioClient(proc, budget.call_timeout)
                stdio_handshake(client, version)
                peer = _StdioPeer(proc, client, CallTemplate(version))
                for _ in range(budget.rt_warmup):
                    peer.call()
                peers[name] = peer
            except DRIVE_ERRORS as exc:
                notes.append(f"stdio round trips {name} @ {version}: {type(exc).__name__}: {exc}")
        cpu0 = {name: cpu_seconds(p.proc.pid) for name, p in peers.items()}
        perf = time.perf_counter
        for block in range(math.ceil(budget.stdio_calls / STDIO_BLOCK)):
            for name in rotated(list(peers), block):
                peer = peers[name]
                lat = peer.latencies
                for _ in range(BLOCK_WARM):
                    peer.call()
                t0 = perf()
                for _ in range(STDIO_BLOCK):
                    s = perf()
                    peer.call()
                    lat.append(perf() - s)
                peer.busy += perf() - t0
        for name, peer in peers.items():
            series[name].add(peer.latencies, peer.busy, cpu_seconds(peer.proc.pid) - cpu0[name])
    finally:
        for proc in procs:
            stop(proc)


# --- HTTP -------------------------------------------------------------------------------------


def http_commands(env: Environment, version: str, fd: int) -> dict[str, tuple[list[str], str, str]]:
    """{peer: (argv, side, path)} of the HTTP servers that serve ``version`` on the socket they
    inherit as ``fd`` (a ``procs.listener()``)."""
    cmds: dict[str, tuple[list[str], str, str]] = {
        "official": (
            [env.official_python, str(PEERS_DIR / "official_http_server.py"), "--fd", str(fd)],
            "official",
            HTTP_PATH,
        ),
        "floor": (
            [env.official_python, str(PEERS_DIR / "floor_http_echo.py"), "--fd", str(fd)],
            "floor",
            HTTP_PATH,
        ),
    }
    if env.ours_python:
        argv = ours.ours_http_server_command(fd, version)
        if argv:
            cmds["ours"] = (list(argv), "ours", ours.OURS_HTTP_PATH)
        argv = ours.ours_http_server_command(fd, version, pure_python_http=True)
        if argv:
            cmds[OURS_PURE] = (list(argv), "ours", ours.OURS_HTTP_PATH)
        # The same bare-ASGI echo on ours' interpreter, i.e. on the uvicorn stack ours runs on.
        cmds[FLOOR_OURS_STACK] = (
            [env.ours_python, str(PEERS_DIR / "floor_http_echo.py"), "--fd", str(fd)],
            "ours",
            HTTP_PATH,
        )
    return cmds


@dataclass
class _HttpPeer:
    pid: int
    port: int
    path: str
    single: McpHttpSession | None = None
    many: list[McpHttpSession] = field(default_factory=list)
    lat1: list[float] = field(default_factory=list)
    busy1: float = 0.0
    latn: list[float] = field(default_factory=list)
    busyn: float = 0.0


async def _open_session(peer: _HttpPeer, version: str, timeout: float, warm: int) -> McpHttpSession:
    http = HttpClient(LOOPBACK, peer.port, peer.path, timeout)
    await http.connect()
    session = McpHttpSession(http, version)
    await session.handshake()
    for _ in range(warm):
        await session.call_echo()
    return session


async def _http_rep(
    peers: dict[str, _HttpPeer],
    version: str,
    budget: Budget,
    one: dict[str, Series],
    many: dict[str, Series],
    notes: list[str],
) -> None:
    timeout = budget.call_timeout
    live: dict[str, _HttpPeer] = {}
    try:
        for name, peer in peers.items():
            try:
                peer.single = await _open_session(peer, version, timeout, budget.rt_warmup)
                for _ in range(budget.http_clients):
                    peer.many.append(await _open_session(peer, version, timeout, 5))
                live[name] = peer
            except DRIVE_ERRORS as exc:
                notes.append(f"HTTP round trips {name} @ {version}: {type(exc).__name__}: {exc}")
        perf = time.perf_counter

        # Phase 1: one client, sequential calls, peers alternating by block.
        cpu0 = {n: cpu_seconds(p.pid) for n, p in live.items()}
        for block in range(math.ceil(budget.http_calls / HTTP_BLOCK)):
            for name in rotated(list(live), block):
                peer = live[name]
                assert peer.single is not None
                for _ in range(BLOCK_WARM):
                    await peer.single.call_echo()
                t0 = perf()
                for _ in range(HTTP_BLOCK):
                    s = perf()
                    await peer.single.call_echo()
                    peer.lat1.append(perf() - s)
                peer.busy1 += perf() - t0
        for name, peer in live.items():
            one[name].add(peer.lat1, peer.busy1, cpu_seconds(peer.pid) - cpu0[name])

        # Phase 2: N concurrent clients, bursts of HTTP_BURST calls per client, peers alternating.
        async def client_burst(session: McpHttpSession, sink: list[float]) -> None:
            for _ in range(HTTP_BURST):
                t = perf()
                await session.call_echo()
                sink.append(perf() - t)

        cpu0 = {n: cpu_seconds(p.pid) for n, p in live.items()}
        for burst in range(math.ceil(budget.http_calls_per_client / HTTP_BURST)):
            for name in rotated(list(live), burst):
                peer = live[name]
                await asyncio.wait_for(asyncio.gather(*(s.call_echo() for s in peer.many)), timeout)  # untimed re-warm
                t0 = perf()
                await asyncio.wait_for(
                    asyncio.gather(*(client_burst(s, peer.latn) for s in peer.many)),
                    timeout * HTTP_BURST,
                )
                peer.busyn += perf() - t0
        for name, peer in live.items():
            many[name].add(peer.latn, peer.busyn, cpu_seconds(peer.pid) - cpu0[name])
    finally:
        for peer in peers.values():
            for session in ([peer.single] if peer.single else []) + peer.many:
                await session.http.close()


def _http_rep_sync(
    env: Environment,
    version: str,
    budget: Budget,
    write: bool,
    one: dict[str, Series],
    many: dict[str, Series],
    notes: list[str],
) -> None:
    ports: dict[str, int] = {}
    procs: dict[str, subprocess.Popen] = {}
    peers: dict[str, _HttpPeer] = {}
    try:
        for name in http_commands(env, version, 0):
            with listener() as sock:  # the server's inherited copy holds the port once it is started
                argv, side, path = http_commands(env, version, sock.fileno())[name]
                ports[name] = sock.getsockname()[1]
                procs[name] = spawn(
                    argv, env=env.side_env(side, write=write), log_name=f"rt-http-{name}", pass_fds=(sock.fileno(),)
                )
            peers[name] = _HttpPeer(procs[name].pid, ports[name], path)
        for name, proc in procs.items():
            try:
                wait_for_port(proc, ports[name], budget.server_start_timeout)
            except DRIVE_ERRORS as exc:
                notes.append(f"HTTP server {name} @ {version}: {exc}")
                peers.pop(name, None)
        asyncio.run(_http_rep(peers, version, budget, one, many, notes))
    finally:
        for proc in procs.values():
            stop(proc)


# --- section ----------------------------------------------------------------------------------


def _rows(
    title: str,
    label: str,
    series: dict[str, Series],
    note: str = "",
    columns: dict[str, str] | None = None,
) -> list[Row]:
    """Rows for one measurement; ``columns`` maps a table column (ours/official/floor) to a peer."""
    columns = columns or {"ours": "ours", "official": "official", "floor": "floor"}

    def vals(attr: str, unit: str) -> dict:  # noqa: ANN202
        return {
            col: stat_or_none(getattr(series[p], attr), unit) if p in series else None for col, p in columns.items()
        }

    return [
        Row(
            title,
            f"{label}: throughput",
            "calls/s",
            vals("rps", "calls/s"),
            better="higher",
            target=ratio_at_least(2),
            note=note,
        ),
        Row(
            title,
            f"{label}: latency p50",
            "us",
            vals("p50", "us"),
            better="info",
            target=Target("(info)"),
        ),
        Row(
            title,
            f"{label}: latency p99",
            "us",
            vals("p99", "us"),
            better="info",
            target=Target("(info)"),
        ),
        Row(
            "6. Server CPU per call (utime+stime delta / calls)",
            label,
            "us/call",
            vals("cpu", "us/call"),
            better="info",
            target=Target("(info)"),
        ),
    ]


def run(env: Environment, budget: Budget, *, transports: tuple[str, ...] = ("stdio", "http")) -> Section:
    section = Section()
    title = "3. Round trips: tools/call echo, same raw driver for every server"
    cpu_rows: list[Row] = []
    rows: list[Row] = []
    for version in PROTOCOL_VERSIONS:
        if "stdio" in transports:
            cmds = stdio_commands(env, version)
            series = {peer: Series() for peer in cmds}
            for rep in range(budget.rt_reps):
                _stdio_rep(cmds, env, version, budget, rep == 0, series, section.notes)
                print(
                    f"  stdio round trips @ {version}: rep {rep + 1}/{budget.rt_reps}",
                    file=sys.stderr,
                    flush=True,
                )
            got = _rows(
                title,
                f"stdio {version}, 1 client",
                series,
                note=(
                    f"{budget.stdio_calls} sequential calls per rep, blocks of {STDIO_BLOCK},"
                    f" after {budget.rt_warmup} warm-up"
                ),
            )
            rows += got[:3]
            cpu_rows.append(got[3])
        if "http" in transports:
            names = list(http_commands(env, version, 0))
            one = {peer: Series() for peer in names}
            many = {peer: Series() for peer in names}
            for rep in range(budget.rt_reps):
                _http_rep_sync(env, version, budget, rep == 0, one, many, section.notes)
                print(
                    f"  HTTP round trips @ {version}: rep {rep + 1}/{budget.rt_reps}",
                    file=sys.stderr,
                    flush=True,
                )
            shipped = {"ours": "ours", "official": "official", "floor": FLOOR_OURS_STACK}
            pure = {"ours": OURS_PURE, "official": "official", "floor": "floor"}
            n = budget.http_clients
            for stack_label, columns, stack_note in (
                ("", shipped, "ours as shipped (uvicorn with httptools + uvloop); floor on the same stack"),
                (
                    ", all on h11+asyncio",
                    pure,
                    "ours forced onto h11 + asyncio, the official server's stack; floor likewise",
                ),
            ):
                got1 = _rows(
                    title,
                    f"HTTP {version}{stack_label}, 1 client",
                    one,
                    note=f"{budget.http_calls} sequential calls per rep; {stack_note}",
                    columns=columns,
                )
                gotn = _rows(
                    title,
                    f"HTTP {version}{stack_label}, {n} clients",
                    many,
                    note=(
                        f"{n} clients x {budget.http_calls_per_client} calls per rep,"
                        f" bursts of {HTTP_BURST}; {stack_note}"
                    ),
                    columns=columns,
                )
                rows += got1[:3] + gotn[:3]
                cpu_rows += [got1[3], gotn[3]]
    section.rows = rows + cpu_rows
    return section
