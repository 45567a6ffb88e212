"""Where a server's time goes per `tools/call`: server CPU per call, and a cProfile of the server.

    .venv/bin/python -m benchmarks.profile_call                        # stdio, 2025-11-25, CPU per call
    .venv/bin/python -m benchmarks.profile_call --transport http --version 2026-07-28
    .venv/bin/python -m benchmarks.profile_call --profile --top 40     # + cProfile of the server process
    .venv/bin/python -m benchmarks.profile_call --python /tmp/base/.venv/bin/python --pythonpath A:B
    .venv/bin/python -m benchmarks.profile_call --versions 2025-11-25,2026-07-28   # both wires, one run
    .venv/bin/python -m benchmarks.profile_call --versions 2025-11-25,2026-07-28 --rounds 0 --instructions

The server is `examples/echo_server.py` (the benchmark's), driven by the benchmark driver
(`driver.py`: pre-encoded requests, one at a time). CPU is the server process's utime + stime
(/proc/<pid>/stat) over the timed calls, so other processes on the machine do not count; wall
time is reported too but is noisy on a shared machine. With `--profile` the server runs under
cProfile (which roughly doubles its CPU): read the profile for shares, the plain run for the figure.
`--pythonpath` runs another checkout's code (e.g. a `git worktree` of the previous commit) with the
same driver, so old and new can be compared in one run. `--versions` runs the same rounds at several
protocol versions (interleaved too) and gives each one's ratio to the first: what a stateless-era call
costs beside a handshake-era one, on the same load. `--instructions` (stdio) counts the server's
instructions per call under valgrind instead, which a loaded machine does not move.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import pstats
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from benchmarks import driver, procs
from benchmarks.config import PROTOCOL_LEGACY
from benchmarks.ours import REPO_ROOT, ours_python

SERVER = REPO_ROOT / "examples" / "echo_server.py"
# The same echo on the authoring layer (`App`, a decorated function), as the peers section runs it.
APP_SERVER = REPO_ROOT / "benchmarks" / "peers" / "ours_app_echo.py"

# Runs `argv[2:]` as a script; SIGUSR1 (sent after the warm-up) starts cProfile, timed by the process's
# CPU clock, so start-up is left out. Writes `argv[1]` at exit.
PROFILED = """
import cProfile, runpy, signal, sys, time
out = sys.argv[1]
sys.argv = sys.argv[2:]
profiler = cProfile.Profile(time.process_time)
signal.signal(signal.SIGUSR1, lambda *_: profiler.enable())
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
finally:
    profiler.disable()
    profiler.dump_stats(out)
"""


def _command(
    python: str, transport: str, version: str, fd: int | None, profile_out: str | None, server: str = "stub"
) -> list[str]:
    """The echo server's argv (`server`: "stub" or "app"); over HTTP it serves on the socket it
    inherits as `fd`."""
    argv = [python]
    if profile_out is not None:  # CPU time, not wall time: a server mostly waits in epoll for the driver
        argv += ["-c", PROFILED, profile_out]
    if server == "app":
        argv += [str(APP_SERVER), "--stub", version]
        return argv + (["--fd", str(fd)] if transport == "http" and fd is not None else [])
    argv += [str(SERVER), "--stub", version]
    if transport == "http" and fd is not None:
        argv += ["--transport", "http", "--fd", str(fd)]
    return argv


def _env(pythonpath: str | None, pyc: str | None) -> dict[str, str]:
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    if pyc:  # bytecode in a private tree (PYTHONDONTWRITEBYTECODE is set on these machines)
        env["PYTHONPYCACHEPREFIX"] = pyc
    return env


def run_stdio(
    argv: list[str], env: dict[str, str], version: str, calls: int, warmup: int, profiled: bool = False
) -> tuple[float, float]:
    """(server CPU seconds, wall seconds) over `calls` sequential calls after `warmup` untimed ones."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, start_new_session=True)
    try:
        client = driver.StdioClient(proc, timeout=30.0)
        driver.stdio_handshake(client, version)
        template = driver.CallTemplate(version)
        for i in range(1, warmup + 1):
            driver.check_echo(client.request(template.encode(i), i))
        if profiled:
            proc.send_signal(signal.SIGUSR1)  # start profiling now
        cpu0, wall0 = procs.cpu_seconds(proc.pid), time.perf_counter()
        for i in range(warmup + 1, warmup + calls + 1):
            client.request(template.encode(i), i)
        cpu1, wall1 = procs.cpu_seconds(proc.pid), time.perf_counter()
        assert proc.stdin is not None
        proc.stdin.close()  # end of input: the server exits and cProfile writes its file
        proc.wait(timeout=30)
        return cpu1 - cpu0, wall1 - wall0
    finally:
        procs.stop(proc)


def instructions_per_call(argv: list[str], env: dict[str, str], version: str, calls: int, warmup: int) -> float:
    """User-space instructions (callgrind's `Ir`) the stdio server `argv` executes per call over `calls`
    sequential calls after `warmup` untimed ones: its counters are zeroed after the warm-up and dumped
    after the calls (`callgrind_control -z` / `-d`). A figure the machine's load does not move; system
    calls are not counted."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        valgrind = ["valgrind", "--tool=callgrind", "--log-file=/dev/null", f"--callgrind-out-file={out}"]
        proc = subprocess.Popen(
            [*valgrind, *argv], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, start_new_session=True
        )
        try:
            client = driver.StdioClient(proc, timeout=300.0)
            driver.stdio_handshake(client, version)
            template = driver.CallTemplate(version)
            for i in range(1, warmup + 1):
                driver.check_echo(client.request(template.encode(i), i))
            subprocess.run(["callgrind_control", "-z", str(proc.pid)], check=True, capture_output=True)
            for i in range(warmup + 1, warmup + calls + 1):
                client.request(template.encode(i), i)
            subprocess.run(["callgrind_control", "-d", str(proc.pid)], check=True, capture_output=True)
            for dump in Path(tmp).glob("callgrind.out*"):  # the dump is the file with a part number
                for line in dump.read_text(errors="replace").splitlines():
                    if line.startswith(("summary:", "totals:")) and dump != out:
                        return int(line.split()[1]) / calls
            raise driver.DriverError("callgrind wrote no dump")
        finally:
            procs.stop(proc)


def _list_tools(version: str) -> bytes:
    """A `tools/list` request (id 1) of `version`, with the stateless envelope where it needs one."""
    params: dict[str, Any] = {} if version == PROTOCOL_LEGACY else {"_meta": driver.envelope(version)}
    return orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params})


def first_answer(argv: list[str], env: dict[str, str], version: str) -> tuple[float, float, float, int]:
    """Spawn a stdio server and time its first answer (`initialize`, or `server/discover` for a
    stateless version), then the `tools/list` a client sends as soon as it has it: (wall seconds to
    the first answer, to the `tools/list` answer, server CPU seconds until the first answer, VmRSS
    KiB after the handshake)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, start_new_session=True)
    try:
        client = driver.StdioClient(proc, timeout=60.0)
        driver.stdio_handshake(client, version)
        wall, cpu = time.perf_counter() - start, procs.cpu_seconds(proc.pid)
        listed = client.request(_list_tools(version), 1)
        if "result" not in listed:
            raise driver.DriverError(f"tools/list failed: {str(listed)[:300]}")
        wall_list = time.perf_counter() - start
        time.sleep(0.3)  # let deferred work (validators built after the answer) finish before reading RSS
        return wall, wall_list, cpu, procs.memory_kib(proc.pid)["VmRSS"]
    finally:
        procs.stop(proc)


def run_http(
    argv: list[str],
    env: dict[str, str],
    version: str,
    sock: socket.socket,
    calls: int,
    warmup: int,
    profiled: bool = False,
) -> tuple[float, float]:
    """As `run_stdio`, over Streamable HTTP: `argv` serves on `sock` (a `procs.listener()`), which it
    inherits; this process's copy is closed once the server is started."""
    port = sock.getsockname()[1]
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, env=env, start_new_session=True, pass_fds=(sock.fileno(),))
    sock.close()
    try:
        procs.wait_for_port(proc, port, 60.0)

        async def drive() -> tuple[float, float]:
            http = driver.HttpClient("127.0.0.1", port, "/mcp", 30.0)
            await http.connect()
            session = driver.McpHttpSession(http, version)
            await session.handshake()
            for _ in range(warmup):
                await session.call_echo()
            if profiled:
                proc.send_signal(signal.SIGUSR1)
            cpu0, wall0 = procs.cpu_seconds(proc.pid), time.perf_counter()
            for _ in range(calls):
                await session.call_echo()
            cpu1, wall1 = procs.cpu_seconds(proc.pid), time.perf_counter()
            await http.close()
            return cpu1 - cpu0, wall1 - wall0

        result = asyncio.run(drive())
        proc.send_signal(signal.SIGINT)  # uvicorn shuts down cleanly and cProfile writes its file
        proc.wait(timeout=30)
        return result
    finally:
        procs.stop(proc)


def _instructions(args: Any, envs: dict[str, dict[str, str]], versions: list[str]) -> None:
    counted: dict[tuple[str, str], float] = {}
    for name, run_env in envs.items():
        for version in versions:
            argv = _command(args.python, "stdio", version, None, None, args.server)
            counted[name, version] = instructions_per_call(argv, run_env, version, args.calls, args.warmup)
            label = f" {name}" if name else ""
            print(f"stdio {version}{label}: {counted[name, version] / 1000:.1f} k instructions per call (valgrind)")
    for name in envs:
        for version in versions[1:]:
            ratio = counted[name, version] / counted[name, versions[0]]
            print(f"{version}/{versions[0]} instructions per call{f' ({name})' if name else ''}: {ratio:.3f}")


# Where a function's own time goes in the breakdown: the first group whose marker is in its file
# name (or, for built-ins, its name).
GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("anyio (cancel scopes, locks, task groups)", ("/anyio/",)),
    ("syscalls (epoll, read, write)", ("select.epoll", "posix.write", "posix.read", "'recv", "'send'", "sendmsg")),
    ("event loop (asyncio or uvloop)", ("/asyncio/", "selectors.py", "uvloop", "_contextvars.Context", "runners.py")),
    ("HTTP server (uvicorn, httptools/h11, starlette)", ("/uvicorn/", "httptools", "/h11/", "/starlette/")),
    (
        "transport + session",
        (
            "runtime/rpc/transport.py",
            "runtime/rpc/pipes.py",
            "runtime/rpc/session.py",
            "runtime/rpc/eager.py",
            "runtime/stdio/serve.py",
            "runtime/rpc/calls.py",
            "runtime/http/",
            "runtime/protocol/headers.py",
        ),
    ),
    (
        "dispatch (server, plan, view, context, bridge, result stamping)",
        (
            "runtime/server/runtime.py",
            "runtime/server/context.py",
            "runtime/server/calls.py",
            "runtime/server/peer.py",
            "tool_schemas.py",
            "<json-schema fast check>",
            "runtime/server/bridge.py",
            "runtime/server/results_out.py",
            "runtime/rpc/around.py",
            "runtime/tasks/server/",
            "notifications.py",
            "runtime/server/extensions.py",
        ),
    ),
    ("the authoring layer (app: serving, access, arguments, entries)", ("runtime/app/",)),
    ("JSON-RPC framing (orjson)", ("runtime/rpc/jsonrpc.py", "orjson")),
    (
        "validation + serialisation (pydantic)",
        (
            "/pydantic",
            "runtime/protocol/versions.py",
            "runtime/protocol/result_checks.py",
            "SchemaValidator",
            "SchemaSerializer",
            "/_base.py",
            "<frozen abc>",
            "_abc_instancecheck",
        ),
    ),
    ("the handler (echo tool: builds its result models)", ("echo_server.py", "app_echo.py")),
)


def breakdown(path: str, calls: int) -> list[tuple[str, float]]:
    """Own time per group, in microseconds per call, from a cProfile file."""
    stats = pstats.Stats(path).stats  # type: ignore[attr-defined]
    totals: dict[str, float] = {}
    for (filename, _line, name), (_cc, _ncalls, tottime, _ct, _callers) in stats.items():
        where = f"{filename} {name}"
        group = next((g for g, markers in GROUPS if any(m in where for m in markers)), "other")
        totals[group] = totals.get(group, 0.0) + tottime
    return sorted(((g, t / calls * 1e6) for g, t in totals.items()), key=lambda item: -item[1])


def others(path: str, calls: int, top: int = 12) -> list[tuple[str, float]]:
    """The biggest functions of the "other" group (built-ins called from everywhere, mostly)."""
    stats = pstats.Stats(path).stats  # type: ignore[attr-defined]
    rows: list[tuple[str, float]] = []
    for (filename, line, name), (_cc, _ncalls, tottime, _ct, _callers) in stats.items():
        where = f"{filename} {name}"
        if not any(m in where for _, markers in GROUPS for m in markers):
            rows.append((f"{Path(filename).name}:{line}({name})", tottime / calls * 1e6))
    return sorted(rows, key=lambda item: -item[1])[:top]


def _spawns(
    python: str, envs: dict[str, dict[str, str]], versions: list[str], count: int, server: str = "stub"
) -> None:
    """Time `count` spawns of each tree and version to the first answer and the first `tools/list`
    (interleaved), and print their medians."""
    runs: dict[tuple[str, str], list[tuple[float, float, float, int]]] = {}
    for _ in range(count):
        for version in versions:
            for name, run_env in envs.items():
                argv = _command(python, "stdio", version, None, None, server)
                runs.setdefault((name, version), []).append(first_answer(argv, run_env, version))
    for (name, version), found in runs.items():
        mid = len(found) // 2
        wall, wall_list = sorted(r[0] for r in found)[mid], sorted(r[1] for r in found)[mid]
        cpu, rss = sorted(r[2] for r in found)[mid], sorted(r[3] for r in found)[mid]
        label = f" {name}" if name else ""
        print(
            f"{version}{label} spawn -> first answer: {wall * 1e3:.0f} ms wall, {cpu * 1e3:.0f} ms server CPU; "
            f"-> first tools/list answered: {wall_list * 1e3:.0f} ms (medians of {len(found)}); "
            f"idle RSS {rss / 1024:.1f} MB"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument(
        "--server",
        choices=["stub", "app"],
        default="stub",
        help="the echo on a generated stub (examples/echo_server.py) or on the authoring layer "
        "(benchmarks/peers/ours_app_echo.py)",
    )
    parser.add_argument("--version", default=PROTOCOL_LEGACY, help="protocol version the driver speaks")
    parser.add_argument(
        "--versions",
        default=None,
        metavar="V1,V2",
        help="interleave rounds at each of these versions (instead of --version) and report each one's "
        "CPU per call over the first's",
    )
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--warmup", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3, help="plain runs (medians are reported)")
    parser.add_argument("--pyc", default=None, help="PYTHONPYCACHEPREFIX of the server (filled first)")
    parser.add_argument("--spawns", type=int, default=0, help="also time N spawns to the first answer")
    parser.add_argument("--profile", action="store_true", help="also run once under cProfile and print the top")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="stdio: also count the server's instructions per call under valgrind (once per tree and version)",
    )
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--sort", default="tottime", choices=["tottime", "cumulative"])
    parser.add_argument("--python", default=ours_python(), help="interpreter of the server")
    parser.add_argument("--pythonpath", default=None, help="PYTHONPATH of the server (another checkout)")
    parser.add_argument(
        "--compare",
        default=None,
        metavar="PYTHONPATH",
        help="A/B: alternate rounds of the server with this PYTHONPATH (A, e.g. a copy of the old runtime) "
        "and with --pythonpath (B), and report both and their ratio",
    )
    args = parser.parse_args()
    versions = args.versions.split(",") if args.versions else [args.version]
    args.version = versions[0]
    env = _env(args.pythonpath, args.pyc)
    if args.pyc:  # fill the bytecode tree once, untimed
        first_answer(
            _command(args.python, "stdio", args.version, None, None, args.server),
            {**env, "PYTHONDONTWRITEBYTECODE": ""},
            args.version,
        )
    envs = {"": env}
    if args.compare is not None:
        envs = {"A": _env(args.compare, args.pyc and args.pyc + "-a"), "B": env}
        if args.pyc:
            first_answer(
                _command(args.python, "stdio", args.version, None, None, args.server),
                {**envs["A"], "PYTHONDONTWRITEBYTECODE": ""},
                args.version,
            )

    def once(
        profile_out: str | None, run_env: dict[str, str] = env, version: str = args.version
    ) -> tuple[float, float]:
        profiled = profile_out is not None
        if args.transport == "stdio":
            argv = _command(args.python, "stdio", version, None, profile_out, args.server)
            return run_stdio(argv, run_env, version, args.calls, args.warmup, profiled)
        with procs.listener() as sock:
            argv = _command(args.python, "http", version, sock.fileno(), profile_out, args.server)
            return run_http(argv, run_env, version, sock, args.calls, args.warmup, profiled)

    runs = [(name, version) for version in versions for name in envs]
    cpu_us: dict[tuple[str, str], list[float]] = {run: [] for run in runs}
    wall_us: dict[tuple[str, str], list[float]] = {run: [] for run in runs}
    for _ in range(args.rounds):
        for name, version in runs:  # alternating: every tree and version sees the same load on the machine
            cpu, wall = once(None, envs[name], version)
            cpu_us[name, version].append(cpu / args.calls * 1e6)
            wall_us[name, version].append(wall / args.calls * 1e6)
    medians: dict[tuple[str, str], float] = {}
    for name, version in runs if args.rounds else []:
        cpus, walls = sorted(cpu_us[name, version]), sorted(wall_us[name, version])
        mid = len(cpus) // 2
        medians[name, version] = cpus[mid]
        label = f" {name}" if name else ""
        print(
            f"{args.transport} {version}{label}: server CPU {cpus[mid]:.1f} us/call "
            f"[{cpus[0]:.1f}-{cpus[-1]:.1f}], wall {walls[mid]:.1f} us/call ({1e6 / walls[mid]:.0f} calls/s)"
        )
    for version in versions if args.rounds else []:
        if args.compare is not None:
            ratio = medians["B", version] / medians["A", version]
            print(f"B/A server CPU per call at {version}: {ratio:.2f} (medians of {args.rounds})")
    for name in envs if args.rounds else []:
        for version in versions[1:]:
            label = f" ({name})" if name else ""
            ratio = medians[name, version] / medians[name, versions[0]]
            print(f"{version}/{versions[0]} server CPU per call{label}: {ratio:.2f} (medians of {args.rounds})")
    if args.instructions and args.transport == "stdio":
        _instructions(args, envs, versions)
    if args.spawns and args.transport == "stdio":
        _spawns(args.python, envs, versions, args.spawns, args.server)
    if args.profile:
        with tempfile.TemporaryDirectory() as tmp:
            out = str(Path(tmp) / "server.prof")
            once(out)
            groups = breakdown(out, args.calls)
            total = sum(t for _, t in groups)
            print(f"\nown time per call under cProfile ({total:.0f} us; the profiler inflates small calls):")
            for group, us in groups:
                print(f"  {us:7.1f} us  {us / total:6.1%}  {group}")
            print("largest in other:", ", ".join(f"{name} {us:.1f}" for name, us in others(out, args.calls)))
            print()
            stats = pstats.Stats(out, stream=sys.stdout)
            stats.strip_dirs().sort_stats(args.sort).print_stats(args.top)


if __name__ == "__main__":
    main()
