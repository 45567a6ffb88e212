"""The authoring layer's cost: `tools/call echo` through `mcp_bindings.runtime.app` vs through the stub.

``.venv/bin/python -m benchmarks.bench_app [--quick] [--output PATH]`` (cwd = repo root).

Two measurements, each at 2025-11-25 (a handshake client of the stub's own version: the runtime's
fast path) and 2026-07-28 (a stateless request):

* ``request path``: CPU per call of the server's in-process request path (decode, classify,
  `ServerRuntime.on_request`, encode), as the message-path benchmark drives it; the stub echo of
  ``examples/echo_server.py`` vs ``examples/app_echo.py`` (the same tool as a decorated function),
  each after a ``tools/list``. Samples alternate between the two; the overhead is the median over
  pairs of samples.
* ``stdio``: round trips over stdio with ``benchmarks/driver.py`` against three servers up at once,
  driven in turn in short blocks: the stub echo, the app echo, and the official SDK's `MCPServer`
  echo (``peers/official_mcpserver_echo.py``, in the official venv when it exists); calls/s and the
  server process's CPU per call (utime + stime from /proc).

Prints a table and writes JSON (default ``benchmarks/results/app.json``).
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.config import OFFICIAL_VENV, PEERS_DIR, REPO_ROOT, RESULTS_DIR
from benchmarks.driver import CallTemplate, StdioClient, stdio_handshake
from benchmarks.ours_message_path import _complete
from benchmarks.procs import cpu_seconds, spawn, stop

VERSIONS = ("2025-11-25", "2026-07-28")
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
}


def _load(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", REPO_ROOT / "examples" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _request_path(server: Any, version: str) -> Callable[[], bytes]:
    from mcp_bindings.runtime.rpc import jsonrpc
    from mcp_bindings.runtime.rpc.session import Session
    from mcp_bindings.runtime.server.runtime import ServerRuntime

    runtime = ServerRuntime(server)
    session = Session(None, runtime)  # type: ignore[arg-type]  # no transport: frames are returned
    stateless = version == "2026-07-28"
    opening = []
    if not stateless:
        hello = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}
        opening.append(jsonrpc.encode_request(0, "initialize", hello))
    opening.append(jsonrpc.encode_request(1, "tools/list", {"_meta": META} if stateless else None))
    for frame in opening:
        request = jsonrpc.classify(jsonrpc.decode(frame))
        assert isinstance(request, jsonrpc.Request)
        _complete(runtime.on_request(request, session))
    params: dict[str, Any] = {"name": "echo", "arguments": {"text": "hello"}}
    if stateless:
        params["_meta"] = META
    wire = jsonrpc.encode_request(2, "tools/call", params)

    def path() -> bytes:
        message = jsonrpc.classify(jsonrpc.decode(wire))
        assert isinstance(message, jsonrpc.Request)
        return jsonrpc.encode_result(message.id, _complete(runtime.on_request(message, session))) + b"\n"

    return path


def _calibrate(fn: Callable[[], Any], seconds: float) -> int:
    for _ in range(50):
        fn()
    number = 16
    while True:
        start = time.process_time()
        for _ in range(number):
            fn()
        elapsed = time.process_time() - start
        if elapsed >= seconds / 4 or number >= 1 << 20:
            return max(1, int(number * seconds / max(elapsed, 1e-9)))
        number *= 4


def request_path(version: str, samples: int, seconds: float) -> dict[str, Any]:
    stub = _request_path(_load("echo_server").make_server(version), version)
    app = _request_path(_load("app_echo").make_app(version).server, version)
    assert json.loads(stub())["result"]["content"] == json.loads(app())["result"]["content"], "the same answer"
    number = _calibrate(stub, seconds)
    out: dict[str, list[float]] = {"stub": [], "app": []}
    for i in range(samples):
        for side in ("stub", "app") if i % 2 else ("app", "stub"):
            fn = stub if side == "stub" else app
            gc.collect()
            start = time.process_time()
            for _ in range(number):
                fn()
            out[side].append((time.process_time() - start) / number * 1e6)
    overheads = [100 * (a / s - 1) for a, s in zip(out["app"], out["stub"], strict=True)]
    return {
        "stub_us": statistics.median(out["stub"]),
        "app_us": statistics.median(out["app"]),
        "overhead_pct": statistics.median(overheads),
        "samples": samples,
        "calls_per_sample": number,
    }


def _servers(version: str) -> dict[str, list[str]]:
    python = str(REPO_ROOT / ".venv" / "bin" / "python")
    servers = {
        "stub": [python, str(REPO_ROOT / "examples" / "echo_server.py"), "--stub", version],
        "app": [python, str(REPO_ROOT / "examples" / "app_echo.py"), "--stub", version],
    }
    official = OFFICIAL_VENV / "bin" / "python"
    if official.exists():
        servers["official MCPServer"] = [str(official), str(PEERS_DIR / "official_mcpserver_echo.py")]
    return servers


def stdio(version: str, calls: int, block: int) -> dict[str, Any]:
    import os

    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    peers: dict[str, tuple[subprocess.Popen[bytes], StdioClient]] = {}
    out: dict[str, Any] = {}
    try:
        for name, argv in _servers(version).items():
            proc = spawn(argv, env=env, log_name=f"app-{name}", stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            client = StdioClient(proc, 30.0)
            stdio_handshake(client, version)
            peers[name] = (proc, client)
        template = CallTemplate(version)
        ids = {name: 1 for name in peers}
        busy = dict.fromkeys(peers, 0.0)
        done = dict.fromkeys(peers, 0)

        def call(name: str) -> None:
            _, client = peers[name]
            ids[name] += 1
            response = client.request(template.encode(ids[name]), ids[name])
            if "result" not in response:
                raise RuntimeError(f"{name}: {response}")

        for name in peers:
            for _ in range(200):
                call(name)
        cpu0 = {name: cpu_seconds(proc.pid) for name, (proc, _) in peers.items()}
        order = list(peers)
        for round_number in range(max(1, calls // block)):
            for name in order[round_number % len(order) :] + order[: round_number % len(order)]:
                for _ in range(20):
                    call(name)
                start = time.perf_counter()
                for _ in range(block):
                    call(name)
                busy[name] += time.perf_counter() - start
                done[name] += block
        for name, (proc, _) in peers.items():
            cpu = cpu_seconds(proc.pid) - cpu0[name]
            total = done[name] + 20 * max(1, calls // block)
            out[name] = {"calls_per_s": done[name] / busy[name], "server_cpu_us": cpu / total * 1e6}
    finally:
        for proc, _ in peers.values():
            stop(proc)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--output", default=str(RESULTS_DIR / "app.json"))
    args = parser.parse_args()
    samples, seconds, calls = (21, 0.05, 3_000) if args.quick else (41, 0.1, 10_000)
    report: dict[str, Any] = {"python": sys.version, "request_path": {}, "stdio": {}}
    for version in VERSIONS:
        report["request_path"][version] = request_path(version, samples, seconds)
        report["stdio"][version] = stdio(version, calls, 250)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(report, indent=2))
    print("request path, server CPU per tools/call (median of alternating samples)")
    print(f"{'version':<12} {'stub':>10} {'app':>10} {'overhead':>10}")
    for version, row in report["request_path"].items():
        print(f"{version:<12} {row['stub_us']:>8.1f}us {row['app_us']:>8.1f}us {row['overhead_pct']:>+9.1f}%")
    print("\nstdio round trips (one client, servers driven in turn)")
    print(f"{'version':<12} {'server':<20} {'calls/s':>10} {'server CPU/call':>16}")
    for version, rows in report["stdio"].items():
        for name, row in rows.items():
            print(f"{version:<12} {name:<20} {row['calls_per_s']:>10,.0f} {row['server_cpu_us']:>14.0f}us")
    print(f"\nwritten to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
