"""Scale-out benchmark: 2026-07-28 calls/s with 1, 2 and 4 uvicorn workers, and the per-call cost of
the Redis notification bus on a notification-heavy load.

    .venv/bin/python -m benchmarks.bench_workers [--seconds 5] [--clients 16] [--json out.json]

Everything runs on 127.0.0.1: a private `redis-server` (on a Unix socket in a temporary directory,
nothing saved), the app of `tests/peers/scaleout_app.py` under `uvicorn --workers N --factory` (on a
socket bound here and inherited, `--fd`: nothing picks a port for it to bind), and the load generator, one
asyncio process speaking raw HTTP/1.1 over keep-alive connections (no client library in the way)
spread evenly over the workers (`_balanced`: as a load balancer would; left to the kernel, a burst
of connections mostly lands on one worker).
The load generator shares the machine's cores with the workers: on a 2-core machine the figures
show what 2 cores allow, not what N cores would.

* **calls/s by workers**: `clients` connections each loop over `tools/call echo` (stateless, no
  shared state touched), every answer checked (its id and the number it echoes).
* **bus overhead**: `tools/call change_tools` (each call broadcasts `notifications/tools/list_changed`)
  with 8 `subscriptions/listen` streams open, on 1 worker in memory vs 1 worker with Redis, and on
  4 workers with Redis; the per-call overhead is the difference of the mean time per call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.procs import listener

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
SECRET = "bench-workers-secret-0123456789abcdef0123456789abcdef"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
LISTENERS = 8


def start_redis(directory: str) -> tuple[subprocess.Popen[bytes], str]:
    """A private redis-server on `directory`/redis.sock (Redis cannot serve on an inherited socket; a
    Unix socket in a directory of our own has no port to pick), nothing saved: (process, its URL)."""
    exe = shutil.which("redis-server")
    if exe is None:
        sys.exit("bench_workers needs redis-server: apt-get install -y redis-server")
    path = str(Path(directory) / "redis.sock")
    command = [exe, "--port", "0", "--unixsocket", path, "--unixsocketperm", "700"]
    command += ["--save", "", "--appendonly", "no", "--dir", directory]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(0.5)
                sock.connect(path)
                sock.sendall(b"PING\r\n")
                if sock.recv(16).startswith(b"+PONG"):
                    return process, f"unix://{path}"
        except OSError:
            pass
        time.sleep(0.05)
    process.kill()
    sys.exit("redis-server did not start within 10 s")


def launch_workers(
    app: str, workers: int, redis_url: str | None, log: Path, *options: str
) -> tuple[subprocess.Popen[bytes], int]:
    """`uvicorn --factory APP:build --workers N OPTIONS` (Redis at `redis_url`, or each worker in
    memory) on a socket bound here and inherited (`--fd`), its output appended to `log`: (process,
    port). Not waited for: the caller knows what ready means for its app."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MCP_REQUEST_STATE_SECRET": SECRET}
    env.pop("MCP_REDIS_URL", None)
    if redis_url is not None:
        env["MCP_REDIS_URL"] = redis_url
    command = [sys.executable, "-m", "uvicorn", "--factory", f"{app}:build", "--workers", str(workers)]
    with listener() as sock, log.open("ab") as out:  # uvicorn's inherited copy holds the port from here
        command += ["--fd", str(sock.fileno()), *options]
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, pass_fds=(sock.fileno(),)
        )
        return process, sock.getsockname()[1]


def start_workers(workers: int, redis_url: str | None, log: Path) -> tuple[subprocess.Popen[bytes], int]:
    """The scale-out app on `workers` workers, once every one of them answers /readyz."""
    options = ("--log-level", "warning", "--no-access-log")
    process, port = launch_workers("tests.peers.scaleout_app", workers, redis_url, log, *options)
    seen: set[bytes] = set()
    deadline = time.monotonic() + 120
    while len(seen) < workers:
        if process.poll() is not None or time.monotonic() > deadline:
            sys.exit(f"{workers} workers did not start: {log.read_text()[-1500:]}")
        try:
            status, head, _ = asyncio.run(_get(port, "/readyz"))
            if status == 200:
                seen.add(head.get(b"x-worker", b""))
        except OSError:
            pass
        time.sleep(0.1)
    return process, port


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


# -- a minimal HTTP/1.1 client --------------------------------------------------------------------


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, dict[bytes, bytes]]:
    raw = await reader.readuntil(b"\r\n\r\n")
    lines = raw.split(b"\r\n")
    status = int(lines[0].split()[1])
    head: dict[bytes, bytes] = {}
    for line in lines[1:]:
        if b":" in line:
            name, value = line.split(b":", 1)
            head[name.strip().lower()] = value.strip()
    return status, head


async def _read_body(reader: asyncio.StreamReader, head: dict[bytes, bytes]) -> bytes:
    if b"content-length" in head:
        return await reader.readexactly(int(head[b"content-length"]))
    body = bytearray()  # chunked
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
        if size == 0:
            await reader.readuntil(b"\r\n")
            return bytes(body)
        body += await reader.readexactly(size)
        await reader.readexactly(2)


async def _get(port: int, path: str) -> tuple[int, dict[bytes, bytes], bytes]:
    reader, writer = await asyncio.open_connection(HOST, port)
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\n\r\n".encode())
        status, head = await _read_head(reader)
        return status, head, await reader.read()
    finally:
        writer.close()


def _post(port: int, body: dict[str, Any], name: str | None, method: str = "tools/call") -> bytes:
    data = json.dumps(body).encode()
    lines = [
        "POST /mcp HTTP/1.1",
        f"Host: {HOST}:{port}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        "MCP-Protocol-Version: 2026-07-28",
        f"Mcp-Method: {method}",
        f"Content-Length: {len(data)}",
    ]
    if name is not None:
        lines.append(f"Mcp-Name: {name}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


class Tally:
    def __init__(self) -> None:
        self.calls = 0
        self.lost = 0
        self.crossed = 0
        self.workers: set[bytes] = set()


async def _balanced(port: int, clients: int, workers: int) -> list[tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
    """`clients` keep-alive connections spread evenly over the workers, as a load balancer would:
    the kernel hands a burst of connections to whichever worker accepts first, so a connection
    landing on a worker that has its share already is closed and opened again (bounded)."""
    share = -(-clients // workers)
    held: dict[bytes, int] = {}
    connections: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
    spare: list[asyncio.StreamWriter] = []
    for _ in range(clients):
        for attempt in range(50):
            reader, writer = await asyncio.open_connection(HOST, port)
            writer.write(f"GET /healthz HTTP/1.1\r\nHost: {HOST}\r\n\r\n".encode())
            _, head = await _read_head(reader)
            await _read_body(reader, head)
            worker = head.get(b"x-worker", b"")
            if held.get(worker, 0) < share or attempt == 49:
                held[worker] = held.get(worker, 0) + 1
                connections.append((reader, writer))
                break
            spare.append(writer)  # kept open meanwhile, so the next connection goes elsewhere
    for writer in spare:
        writer.close()
    return connections


async def _client(
    connection: tuple[asyncio.StreamReader, asyncio.StreamWriter],
    port: int,
    tool: str,
    number: int,
    until: float,
    tally: Tally,
    counting: asyncio.Event,
) -> None:
    reader, writer = connection
    try:
        sequence = 0
        while time.monotonic() < until:
            sequence += 1
            n = number * 10_000_000 + sequence
            body: dict[str, Any] = {"jsonrpc": "2.0", "id": n, "method": "tools/call"}
            body["params"] = {"name": tool, "arguments": {"n": n}, "_meta": META}
            writer.write(_post(port, body, tool))
            status, head = await _read_head(reader)
            answer = json.loads(await _read_body(reader, head))
            if status != 200 or "result" not in answer:
                tally.lost += 1
                continue
            if answer["id"] != n or (tool == "echo" and not answer["result"]["content"][0]["text"].startswith(f"{n} ")):
                tally.crossed += 1
            if counting.is_set():
                tally.calls += 1
                tally.workers.add(head.get(b"x-worker", b""))
    finally:
        writer.close()


async def _listener(port: int, number: int, received: list[int], ready: asyncio.Event) -> None:
    reader, writer = await asyncio.open_connection(HOST, port)
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": f"sub-{number}", "method": "subscriptions/listen"}
    body["params"] = {"notifications": {"toolsListChanged": True}, "_meta": META}
    writer.write(_post(port, body, None, "subscriptions/listen"))
    try:
        await _read_head(reader)
        acknowledged = False
        while True:
            chunk = await reader.read(65536)
            if not chunk:
                return
            if not acknowledged and b"acknowledged" in chunk:
                acknowledged = True
                ready.set()
            received[0] += chunk.count(b"list_changed")
    finally:
        writer.close()


async def _load(port: int, workers: int, tool: str, clients: int, seconds: float, listeners: int) -> dict[str, Any]:
    received = [0]
    streams: list[asyncio.Task[None]] = []
    for number in range(listeners):
        ready = asyncio.Event()
        streams.append(asyncio.create_task(_listener(port, number, received, ready)))
        await asyncio.wait_for(ready.wait(), 10)
    tally = Tally()
    counting = asyncio.Event()
    warmup = 3.0  # every worker past its first calls (lazy imports)
    connections = await _balanced(port, clients, workers)
    until = time.monotonic() + warmup + seconds
    tasks = [
        asyncio.create_task(_client(connection, port, tool, n, until, tally, counting))
        for n, connection in enumerate(connections)
    ]
    await asyncio.sleep(warmup)
    counting.set()
    started = time.monotonic()
    await asyncio.gather(*tasks)
    elapsed = time.monotonic() - started
    await asyncio.sleep(0.5)  # the last notifications in flight
    for stream in streams:
        stream.cancel()
    rate = tally.calls / elapsed
    return {
        "calls_per_s": round(rate, 1),
        "ms_per_call": round(1000 / rate, 3) if rate else None,
        "lost": tally.lost,
        "crossed": tally.crossed,
        "workers_answering": len(tally.workers),
        "notifications_received": received[0],
    }


def run(seconds: float, clients: int) -> dict[str, Any]:
    results: dict[str, Any] = {"cpus": os.cpu_count(), "seconds": seconds, "clients": clients}
    with tempfile.TemporaryDirectory(prefix="bench-workers-") as tmp:
        redis, url = start_redis(tmp)
        try:
            for workers in (1, 2, 4):
                process, port = start_workers(workers, url, Path(tmp) / f"echo-{workers}.log")
                try:
                    results[f"echo_{workers}_workers_redis"] = asyncio.run(
                        _load(port, workers, "echo", clients, seconds, 0)
                    )
                finally:
                    stop(process)
                print(f"echo, {workers} worker(s): {results[f'echo_{workers}_workers_redis']}", flush=True)
            for label, workers, backend in (("memory", 1, None), ("redis", 1, url), ("redis", 4, url)):
                process, port = start_workers(workers, backend, Path(tmp) / f"bus-{label}-{workers}.log")
                try:
                    key = f"broadcast_{workers}_workers_{label}"
                    results[key] = asyncio.run(_load(port, workers, "change_tools", clients, seconds, LISTENERS))
                finally:
                    stop(process)
                print(f"broadcast, {workers} worker(s), {label}: {results[key]}", flush=True)
        finally:
            redis.terminate()
            redis.wait(5)
    memory, redis_one = results["broadcast_1_workers_memory"], results["broadcast_1_workers_redis"]
    if memory["ms_per_call"] and redis_one["ms_per_call"]:
        results["bus_overhead_ms_per_call"] = round(redis_one["ms_per_call"] - memory["ms_per_call"], 3)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="measured seconds per configuration")
    parser.add_argument("--clients", type=int, default=16, help="concurrent client connections")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    results = run(args.seconds, args.clients)
    print(json.dumps(results, indent=2))
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
