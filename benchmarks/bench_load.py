"""8. Memory and correctness under load: 64 clients of mixed traffic, a heavy session, a stuck legacy client.

Servers: ours is ``benchmarks/load_server.py`` (the 2025-11-25 stub, default ``HttpOptions``); the
official one is ``peers/official_load_server.py`` (mcp 2.3.0, ``streamable_http_app()`` with its
defaults plus its legacy ``SseServerTransport``). Same three tools; each runs alone on a free
127.0.0.1 port, and its RSS is VmRSS from /proc/<pid>/status.

* **Mixed load** (``LOAD_SECONDS`` per mode, 64 clients in one asyncio loop in the harness, each
  its own handshake session at 2025-11-25 and its own keep-alive connection): every client loops
  over a seeded random mix of ``echo`` calls (60 %), calls reporting progress (20 %), calls
  cancelled with ``notifications/cancelled`` after their first progress (10 %), and calls whose
  connection the client drops after the first progress (10 %; it resumes the stream with
  GET + ``Last-Event-ID`` where the server numbered its events, and must then get the response);
  now and then a client deletes its session and opens a new one. Every response is checked: a
  request that should have been answered and was not is *lost*, a message for another request or
  another client (id, echoed tag or progress token) is *crossed*, a second response for one id is
  *duplicated*. Latency is per call (echo; progress calls apart), p50 / p99 over the run. RSS is
  sampled every second: idle before, peak and last during the load, and 3 s after every client
  deleted its session (the RSS curve is in ``latest.json``, ``raw.load``).
* **Heavy session**: one session, 150 results of 1 MiB each reported with progress first (so an SSE
  stream, which a resumable server logs for replay); RSS peak, then RSS after DELETE.
* **Stuck legacy client**: GET ``/sse``, read the ``endpoint`` event, then read nothing while up to
  200 results of 1 MiB are POSTed for it; RSS peak, and RSS after the client has left.
"""

from __future__ import annotations

import asyncio
import json
import random
import select
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from benchmarks.config import BENCH_DIR, LOOPBACK, PEERS_DIR, PROTOCOL_LEGACY, Budget
from benchmarks.procs import listener, memory_kib, spawn, stop
from benchmarks.report import Row, Section, Target, absolute_at_most
from benchmarks.setup_env import Environment
from benchmarks.stats import percentile, stat_or_none

LOAD_SECONDS = {"full": 60.0, "quick": 15.0}
CLIENTS = 64
SAMPLE_SECONDS = 1.0
SETTLE_SECONDS = 3.0
MIB = 1024 * 1024
MIX = (("call", 60), ("progress", 20), ("cancel", 10), ("disconnect", 10))
REUSE_SECONDS = 2.0  # reopen a connection idle longer than this (uvicorn closes idle ones after 5 s)
CHURN = 0.02  # chance per operation that a client deletes its session and opens a new one
VERSION = PROTOCOL_LEGACY  # handshake sessions: what the replay log and legacy bounds are about


class LoadError(RuntimeError):
    pass


# -- a minimal streaming HTTP/1.1 client (stdlib only, identical for every peer) ------------------


class Conn:
    """One keep-alive connection; a response's body can be read whole or as SSE events."""

    def __init__(self, port: int, timeout: float) -> None:
        self.port = port
        self.timeout = timeout
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self._framing: tuple[str, int] = ("none", 0)
        self._used = 0.0  # when the last response ended (an idle keep-alive connection is closed by the server)

    async def open(self) -> Conn:
        self.reader, self.writer = await asyncio.wait_for(
            asyncio.open_connection(LOOPBACK, self.port, limit=1 << 24), self.timeout
        )
        return self

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    async def request(
        self, method: str, path: str, headers: dict[str, str], body: bytes = b""
    ) -> tuple[int, dict[str, str]]:
        if self.writer is not None and time.monotonic() - self._used > REUSE_SECONDS:
            self.close()  # the server may be closing it as idle: do not race it
        fresh = self.writer is None
        if fresh:
            await self.open()
        assert self.reader is not None and self.writer is not None
        head = [f"{method} {path} HTTP/1.1", f"Host: {LOOPBACK}:{self.port}"]
        head += [f"{k}: {v}" for k, v in headers.items()]
        if body or method == "POST":
            head += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
        self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
        try:
            raw = await asyncio.wait_for(self.reader.readuntil(b"\r\n\r\n"), self.timeout)
        except (asyncio.IncompleteReadError, ConnectionResetError):
            if fresh:
                raise
            self.close()  # a kept-alive connection the server had closed: once more on a new one
            return await self.request(method, path, headers, body)
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        hdrs: dict[str, str] = {}
        for line in lines[1:]:
            if line:
                k, _, v = line.partition(":")
                hdrs[k.strip().lower()] = v.strip()
        if "content-length" in hdrs:
            self._framing = ("length", int(hdrs["content-length"]))
        elif hdrs.get("transfer-encoding", "").lower() == "chunked":
            self._framing = ("chunked", 0)
        else:
            self._framing = ("close", 0)
        return status, hdrs

    async def chunks(self) -> AsyncIterator[bytes]:
        async for chunk in self._chunks():
            yield chunk
        self._used = time.monotonic()

    async def _chunks(self) -> AsyncIterator[bytes]:
        assert self.reader is not None
        kind, length = self._framing
        if kind == "length":
            if length:
                yield await asyncio.wait_for(self.reader.readexactly(length), self.timeout)
        elif kind == "chunked":
            while True:
                size = int((await asyncio.wait_for(self.reader.readuntil(b"\r\n"), self.timeout)).split(b";")[0], 16)
                if size == 0:
                    await self.reader.readuntil(b"\r\n")
                    return
                data = await asyncio.wait_for(self.reader.readexactly(size + 2), self.timeout)
                yield data[:-2]
        else:
            while data := await asyncio.wait_for(self.reader.read(1 << 16), self.timeout):
                yield data
            self.close()

    async def body(self) -> bytes:
        return b"".join([chunk async for chunk in self.chunks()])

    async def events(self) -> AsyncIterator[dict[str, str]]:
        """SSE events of the body: {"id"?, "data", "event"?}."""
        buffer = b""
        async for chunk in self.chunks():
            buffer += chunk.replace(b"\r\n", b"\n")
            while b"\n\n" in buffer:
                block, buffer = buffer.split(b"\n\n", 1)
                fields: dict[str, str] = {}
                for line in block.decode().split("\n"):
                    if line.startswith(":"):
                        continue
                    name, _, value = line.partition(":")
                    value = value.removeprefix(" ")
                    fields[name] = fields[name] + "\n" + value if name in fields else value
                if fields:
                    yield fields


# -- one simulated client -------------------------------------------------------------------------


@dataclass
class Tally:
    ops: dict[str, int] = field(default_factory=dict)
    call_latency: list[float] = field(default_factory=list)
    progress_latency: list[float] = field(default_factory=list)
    lost: int = 0
    crossed: int = 0
    duplicated: int = 0
    http_errors: int = 0
    cancelled_answered: int = 0  # a cancelled call answered anyway (the cancel came too late), or with an error
    unresumable: int = 0  # a dropped connection whose stream the server did not number (no replay offered)
    resumed: int = 0
    gone: int = 0  # resumption answered 410 (the replay log no longer held it)
    examples: list[str] = field(default_factory=list)

    def fault(self, kind: str, detail: str) -> None:
        setattr(self, kind, getattr(self, kind) + 1)
        if len(self.examples) < 10:
            self.examples.append(f"{kind}: {detail[:200]}")


class Client:
    def __init__(self, number: int, port: int, tally: Tally, timeout: float, seed: int) -> None:
        self.number = number
        self.port = port
        self.tally = tally
        self.timeout = timeout
        self.random = random.Random(seed)
        self.conn = Conn(port, timeout)
        self.control = Conn(port, timeout)
        self.session: str | None = None
        self.next_id = 1
        self.answered: set[int] = set()

    def headers(self, accept: str = "application/json, text/event-stream") -> dict[str, str]:
        out = {"Accept": accept, "MCP-Protocol-Version": VERSION}
        if self.session:
            out["Mcp-Session-Id"] = self.session
        return out

    async def open_session(self) -> None:
        self.session = None
        self.answered.clear()
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "load", "version": "1"}},
        }
        status, hdrs = await self.conn.request("POST", "/mcp", self.headers(), json.dumps(init).encode())
        await self.read_answer(0, None, hdrs)
        if status != 200 or "mcp-session-id" not in hdrs:
            raise LoadError(f"initialize: HTTP {status}")
        self.session = hdrs["mcp-session-id"]
        note = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
        await self.conn.request("POST", "/mcp", self.headers(), note)
        await self.conn.body()

    async def close_session(self) -> None:
        if self.session:
            await self.conn.request("DELETE", "/mcp", self.headers())
            await self.conn.body()
            self.session = None

    def call(self, tool: str, arguments: dict[str, Any], token: str | None = None) -> tuple[int, bytes]:
        request_id = self.next_id
        self.next_id += 1
        params: dict[str, Any] = {"name": tool, "arguments": arguments}
        if token is not None:
            params["_meta"] = {"progressToken": token}
        body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
        return request_id, json.dumps(body).encode()

    def check(self, message: dict[str, Any], request_id: int, tag: str | None, token: str | None) -> str | None:
        """'response' / 'progress' / None (something else that belongs here); counts what is crossed."""
        if "id" in message and ("result" in message or "error" in message):
            if message["id"] != request_id:
                self.tally.fault("crossed", f"client {self.number} got id {message['id']} waiting for {request_id}")
                return None
            if message["id"] in self.answered:
                self.tally.fault("duplicated", f"client {self.number} id {request_id} answered twice")
                return None
            self.answered.add(request_id)
            if tag is not None and "result" in message:
                text = message["result"]["content"][0]["text"]
                if text != tag:
                    self.tally.fault("crossed", f"client {self.number} id {request_id}: {text!r} for {tag!r}")
            return "response"
        if message.get("method") == "notifications/progress":
            if message.get("params", {}).get("progressToken") != token:
                self.tally.fault("crossed", f"client {self.number}: progress {message.get('params')} for {token}")
            return "progress"
        return None

    async def read_answer(
        self, request_id: int, tag: str | None, hdrs: dict[str, str], conn: Conn | None = None
    ) -> tuple[dict[str, Any] | None, int, str | None]:
        """(the response, progress seen, last event id) of a POST's or resumed GET's body."""
        conn = conn or self.conn
        if not hdrs.get("content-type", "").startswith("text/event-stream"):
            body = await conn.body()
            message = json.loads(body) if body else None
            if message is not None and self.check(message, request_id, tag, None) == "response":
                return message, 0, None
            return None, 0, None
        response, progress, last_id = None, 0, None
        async for event in conn.events():
            last_id = event.get("id", last_id)
            if not event.get("data", "").strip():
                continue
            kind = self.check(json.loads(event["data"]), request_id, tag, f"t{self.number}-{request_id}")
            progress += kind == "progress"
            if kind == "response":
                response = json.loads(event["data"])
        return response, progress, last_id

    async def op_call(self) -> None:
        tag = f"c{self.number}-{self.next_id}"
        request_id, body = self.call("echo", {"text": tag})
        started = time.perf_counter()
        status, hdrs = await self.conn.request("POST", "/mcp", self.headers(), body)
        response, _, _ = await self.read_answer(request_id, tag, hdrs)
        if status != 200:
            self.tally.fault("http_errors", f"echo: HTTP {status}")
        elif response is None or "result" not in response:
            self.tally.fault("lost", f"client {self.number} echo {request_id}: {response}")
        else:
            self.tally.call_latency.append(time.perf_counter() - started)

    async def op_progress(self) -> None:
        tag = f"p{self.number}-{self.next_id}"
        request_id, body = self.call("steps", {"steps": 3, "delay_ms": 5, "tag": tag}, f"t{self.number}-{self.next_id}")
        started = time.perf_counter()
        status, hdrs = await self.conn.request("POST", "/mcp", self.headers(), body)
        response, progress, _ = await self.read_answer(request_id, tag, hdrs)
        if status != 200:
            self.tally.fault("http_errors", f"steps: HTTP {status}")
        elif response is None or "result" not in response or progress != 3:
            self.tally.fault("lost", f"client {self.number} steps {request_id}: {progress} progress, {response}")
        else:
            self.tally.progress_latency.append(time.perf_counter() - started)

    async def op_cancel(self) -> None:
        tag = f"x{self.number}-{self.next_id}"
        token = f"t{self.number}-{self.next_id}"
        request_id, body = self.call("steps", {"steps": 40, "delay_ms": 10, "tag": tag}, token)
        status, hdrs = await self.conn.request("POST", "/mcp", self.headers(), body)
        if status != 200 or not hdrs.get("content-type", "").startswith("text/event-stream"):
            self.tally.fault("http_errors", f"cancel: HTTP {status} {hdrs.get('content-type')}")
            await self.conn.body()
            return
        response = None
        cancelled = False
        async for event in self.conn.events():
            if not event.get("data", "").strip():
                continue
            message = json.loads(event["data"])
            kind = self.check(message, request_id, tag, token)
            if kind == "response":
                response = message
            elif kind == "progress" and not cancelled:
                cancelled = True
                cancel = {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": request_id, "reason": "load test"},
                }
                await self.control.request("POST", "/mcp", self.headers(), json.dumps(cancel).encode())
                await self.control.body()
        if response is not None:
            self.tally.cancelled_answered += 1

    async def op_disconnect(self) -> None:
        tag = f"d{self.number}-{self.next_id}"
        token = f"t{self.number}-{self.next_id}"
        request_id, body = self.call("steps", {"steps": 10, "delay_ms": 20, "tag": tag}, token)
        conn = await Conn(self.port, self.timeout).open()
        last_id: str | None = None
        try:
            status, hdrs = await conn.request("POST", "/mcp", self.headers(), body)
            if status != 200 or not hdrs.get("content-type", "").startswith("text/event-stream"):
                self.tally.fault("http_errors", f"disconnect: HTTP {status}")
                return
            async for event in conn.events():
                last_id = event.get("id", last_id)
                if event.get("data", "").strip():
                    kind = self.check(json.loads(event["data"]), request_id, tag, token)
                    if kind == "response":
                        return  # answered before we could leave
                    if kind == "progress":
                        break
        finally:
            conn.close()  # mid-request: the request goes on, its stream is lost to this connection
        if last_id is None:
            self.tally.unresumable += 1  # the server offers no replay: the response cannot be had
            return
        resume = {**self.headers("text/event-stream"), "Last-Event-ID": last_id}
        status, hdrs = await self.conn.request("GET", "/mcp", resume)
        if status == 410:
            await self.conn.body()
            self.tally.gone += 1
            return
        response, _, _ = await self.read_answer(request_id, tag, hdrs)
        if status != 200 or response is None or "result" not in response:
            self.tally.fault("lost", f"client {self.number} resumed {request_id}: HTTP {status}, {response}")
        else:
            self.tally.resumed += 1

    async def run(self, until: float) -> None:
        ops = [name for name, weight in MIX for _ in range(weight)]
        await self.open_session()
        while time.monotonic() < until:
            if self.random.random() < CHURN:
                await self.close_session()
                await self.open_session()
            name = self.random.choice(ops)
            self.tally.ops[name] = self.tally.ops.get(name, 0) + 1
            await asyncio.wait_for(getattr(self, f"op_{name}")(), self.timeout)
        await self.close_session()
        self.conn.close()
        self.control.close()


# -- a peer's server ------------------------------------------------------------------------------


def rss_mib(pid: int) -> float:
    return memory_kib(pid)["VmRSS"] / 1024


def start_server(argv: list[str], side_env: dict[str, str], log: str, timeout: float, fd: int) -> subprocess.Popen:
    """`argv` serving on the socket `fd` it inherits; returns once it says READY."""
    proc = spawn(argv, env=side_env, log_name=log, stdout=subprocess.PIPE, pass_fds=(fd,))
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    if not ready or not proc.stdout.readline().startswith(b"READY"):
        stop(proc)
        raise LoadError(f"{argv[1]} did not start (see .cache/bench/logs/{log}.log)")
    return proc


def load_commands(env: Environment, fd: int) -> dict[str, tuple[list[str], str]]:
    """{peer: (argv, side)} of the load servers, each serving on the socket it inherits as `fd`."""
    serve = ["--fd", str(fd)]
    cmds = {"official": ([env.official_python, str(PEERS_DIR / "official_load_server.py"), *serve], "official")}
    if env.ours_python:
        cmds["ours"] = ([env.ours_python, str(BENCH_DIR / "load_server.py"), *serve], "ours")
    return cmds


async def _mixed_load(port: int, pid: int, seconds: float, timeout: float) -> dict[str, Any]:
    tally = Tally()
    curve: list[tuple[float, float]] = []
    start = time.monotonic()
    stop_sampling = asyncio.Event()

    async def sample() -> None:
        while not stop_sampling.is_set():
            curve.append((round(time.monotonic() - start, 1), round(rss_mib(pid), 1)))
            try:
                await asyncio.wait_for(stop_sampling.wait(), SAMPLE_SECONDS)
            except TimeoutError:
                pass

    sampler = asyncio.ensure_future(sample())
    clients = [Client(n, port, tally, timeout, seed=n) for n in range(CLIENTS)]
    until = time.monotonic() + seconds
    results = await asyncio.gather(*(c.run(until) for c in clients), return_exceptions=True)
    busy = time.monotonic() - start
    failures = [r for r in results if isinstance(r, BaseException)]
    for failure in failures:
        tally.fault("lost", f"client failed: {type(failure).__name__}: {failure}")
    end_rss = rss_mib(pid)
    await asyncio.sleep(SETTLE_SECONDS)
    stop_sampling.set()
    await sampler
    return {"tally": tally, "curve": curve, "busy": busy, "end": end_rss, "released": rss_mib(pid)}


def _heavy_session(port: int, pid: int, timeout: float) -> dict[str, float]:
    async def run() -> dict[str, float]:
        client = Client(0, port, Tally(), timeout, seed=0)
        await client.open_session()
        idle = rss_mib(pid)
        peak = idle
        for _ in range(150):
            request_id, body = client.call("blob", {"size": MIB, "progress": True}, f"t0-{client.next_id}")
            status, hdrs = await client.conn.request("POST", "/mcp", client.headers(), body)
            response, _, _ = await client.read_answer(request_id, None, hdrs)
            if status != 200 or response is None:
                raise LoadError(f"blob {request_id}: HTTP {status}")
            peak = max(peak, rss_mib(pid))
        await client.close_session()
        client.conn.close()
        await asyncio.sleep(SETTLE_SECONDS)
        return {"idle": idle, "peak": peak - idle, "after": rss_mib(pid) - idle}

    return asyncio.run(run())


def _stuck_legacy(port: int, pid: int, timeout: float) -> dict[str, float]:
    idle = rss_mib(pid)
    stuck = socket.create_connection((LOOPBACK, port), timeout=timeout)
    stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    peak, posted = idle, 0
    try:
        stuck.sendall(f"GET /sse HTTP/1.1\r\nHost: {LOOPBACK}:{port}\r\nAccept: text/event-stream\r\n\r\n".encode())
        head = b""
        while b"data:" not in head or b"\n" not in head.split(b"data:", 1)[1]:
            head += stuck.recv(4096)
        endpoint = head.split(b"data:", 1)[1].split(b"\n", 1)[0].decode().strip()

        async def post_all() -> int:
            conn = await Conn(port, timeout).open()
            nonlocal peak
            init = {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2024-11-05",
                    "capabilities": {},
                    "clientInfo": {"name": "l", "version": "1"},
                },
            }
            messages = [init, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
            messages += [
                {
                    "jsonrpc": "2.0",
                    "id": n,
                    "method": "tools/call",
                    "params": {"name": "blob", "arguments": {"size": MIB}},
                }
                for n in range(1, 201)
            ]
            sent = 0
            for message in messages:
                status, _ = await conn.request("POST", endpoint, {}, json.dumps(message).encode())
                await conn.body()
                peak = max(peak, rss_mib(pid))
                if status >= 400:
                    break  # the server dropped the session
                sent += 1
            conn.close()
            await asyncio.sleep(0.5)
            peak = max(peak, rss_mib(pid))
            return sent

        posted = asyncio.run(post_all())
    finally:
        stuck.close()
    time.sleep(SETTLE_SECONDS)
    return {"idle": idle, "peak": peak - idle, "after": rss_mib(pid) - idle, "posted": posted}


# -- the section ----------------------------------------------------------------------------------


def _curve_text(curve: list[tuple[float, float]], released: float) -> str:
    step = max(1, len(curve) // 12)
    return " ".join(f"{mib:.0f}" for _, mib in curve[::step]) + f" -> {released:.0f} after release"


def run(env: Environment, budget: Budget) -> Section:
    section = Section()
    seconds = LOAD_SECONDS.get(budget.name, 15.0)
    title = (
        f"8. Under load: {CLIENTS} clients x {seconds:.0f} s mixed (Streamable HTTP {VERSION}), "
        "heavy session, stuck legacy client"
    )
    figures: dict[str, dict[str, float]] = {}
    raw: dict[str, Any] = {}
    for peer in load_commands(env, 0):
        log = f"load-{peer}"
        try:
            with listener() as sock:  # the server's inherited copy holds the port once it is started
                argv, side = load_commands(env, sock.fileno())[peer]
                port = sock.getsockname()[1]
                proc = start_server(argv, env.side_env(side), log, budget.server_start_timeout, sock.fileno())
        except (LoadError, OSError) as exc:
            section.notes.append(f"load {peer}: {exc}")
            continue
        try:
            time.sleep(1.0)
            idle = rss_mib(proc.pid)
            mixed = asyncio.run(_mixed_load(port, proc.pid, seconds, budget.call_timeout))
            heavy = _heavy_session(port, proc.pid, budget.call_timeout)
            legacy = _stuck_legacy(port, proc.pid, budget.call_timeout)
        except (TimeoutError, LoadError, OSError) as exc:
            section.notes.append(f"load {peer}: {type(exc).__name__}: {exc}")
            continue
        finally:
            stop(proc)
        tally: Tally = mixed["tally"]
        calls = sorted(tally.call_latency)
        progress = sorted(tally.progress_latency)
        figures[peer] = {
            "ops": sum(tally.ops.values()) / mixed["busy"],
            "p50": percentile(calls, 50) * 1e3,
            "p99": percentile(calls, 99) * 1e3,
            "progress_p99": percentile(progress, 99) * 1e3,
            "lost": tally.lost,
            "crossed": tally.crossed,
            "duplicated": tally.duplicated,
            "http_errors": tally.http_errors,
            "idle": idle,
            "peak": max(mib for _, mib in mixed["curve"]),
            "end": mixed["end"],
            "released": mixed["released"],
            "heavy_peak": heavy["peak"],
            "heavy_after": heavy["after"],
            "legacy_peak": legacy["peak"],
            "legacy_after": legacy["after"],
        }
        raw[peer] = {
            "rss_curve_mib": mixed["curve"],
            "ops": tally.ops,
            "outcomes": {
                "lost": tally.lost,
                "crossed": tally.crossed,
                "duplicated": tally.duplicated,
                "http_errors": tally.http_errors,
                "cancelled_but_answered": tally.cancelled_answered,
                "disconnected_resumed": tally.resumed,
                "disconnected_unresumable": tally.unresumable,
                "disconnected_gone_410": tally.gone,
            },
            "examples": tally.examples,
            "heavy_session": heavy,
            "stuck_legacy": legacy,
        }
        section.notes.append(
            f"load {peer}: {sum(tally.ops.values())} operations {tally.ops}; lost {tally.lost}, crossed "
            f"{tally.crossed}, duplicated {tally.duplicated}, HTTP errors {tally.http_errors}; disconnected "
            f"mid-request: {tally.resumed} resumed with Last-Event-ID, {tally.unresumable} not resumable "
            f"(no event ids), {tally.gone} answered 410; cancelled yet answered: {tally.cancelled_answered}; "
            f"RSS curve (MiB): {_curve_text(mixed['curve'], mixed['released'])}; stuck legacy client: "
            f"{legacy['posted']:.0f} messages accepted before the server stopped taking them"
        )
        for example in tally.examples:
            section.notes.append(f"load {peer}: {example}")
        print(f"  load {peer} done", file=sys.stderr, flush=True)
    section.raw = raw

    def vals(key: str, unit: str) -> dict[str, Any]:
        return {
            p: stat_or_none([figures[p][key]], unit) if p in figures else None for p in ("ours", "official", "floor")
        }

    zero = absolute_at_most(0, "(none)")
    section.rows += [
        Row(title, "operations per second", "op/s", vals("ops", "op/s"), better="higher", target=Target("(info)")),
        Row(title, "echo call latency p50", "ms", vals("p50", "ms"), better="info", target=Target("(info)")),
        Row(title, "echo call latency p99", "ms", vals("p99", "ms"), target=Target("(info)")),
        Row(
            title,
            "progress call latency p99 (3 x 5 ms steps)",
            "ms",
            vals("progress_p99", "ms"),
            target=Target("(info)"),
        ),
        Row(title, "lost responses", "count", vals("lost", "count"), target=zero),
        Row(title, "crossed responses", "count", vals("crossed", "count"), target=zero),
        Row(title, "duplicated responses", "count", vals("duplicated", "count"), target=zero),
        Row(title, "HTTP errors", "count", vals("http_errors", "count"), target=zero),
        Row(title, "RSS idle", "MiB", vals("idle", "MiB"), better="info", target=Target("(info)")),
        Row(title, "RSS peak during the load", "MiB", vals("peak", "MiB"), target=Target("(info)")),
        Row(title, "RSS at the end of the load", "MiB", vals("end", "MiB"), target=Target("(info)")),
        Row(title, "RSS 3 s after every session was deleted", "MiB", vals("released", "MiB"), target=Target("(info)")),
        Row(
            title,
            "heavy session (150 x 1 MiB): RSS peak above idle",
            "MiB",
            vals("heavy_peak", "MiB"),
            target=Target("(info)"),
        ),
        Row(
            title,
            "heavy session: RSS above idle after DELETE",
            "MiB",
            vals("heavy_after", "MiB"),
            target=absolute_at_most(40, "MiB"),
        ),
        Row(
            title,
            "stuck legacy client (200 x 1 MiB posted): RSS peak above idle",
            "MiB",
            vals("legacy_peak", "MiB"),
            target=absolute_at_most(60, "MiB"),
        ),
        Row(
            title,
            "stuck legacy client: RSS above idle after it left",
            "MiB",
            vals("legacy_after", "MiB"),
            target=absolute_at_most(40, "MiB"),
        ),
    ]
    return section
