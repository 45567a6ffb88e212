"""A server's RSS under large answers (issue 44, item 1): ours over stdio next to the official SDK's, and
ours over Streamable HTTP at both eras.

    .venv/bin/python -m benchmarks.stdio_memory            # 240 calls of 1 MiB, then 40 of 5 MiB
    .venv/bin/python -m benchmarks.stdio_memory --quick    # 120 of 1 MiB, 20 of 5 MiB
    .venv/bin/python -m benchmarks.stdio_memory --only ours,http-2026-07-28
    .venv/bin/python -m benchmarks.stdio_memory --sizes    # ours over stdio, answers of 64 KiB to 12 MiB

The probe of the issue: an `echo` server called with arguments of 1 MiB (or 5 MiB), 8 requests in
flight, the client reading all the time (stdio: 64 KiB reads of a real pipe). At each checkpoint the
client stops sending, reads the answers still in flight, waits `SETTLE_SECONDS` (memory is given back
a little after a load) and reads the server's VmRSS from /proc; in brackets, VmRSS as the last answer
was read. Ours is `examples/echo_server.py`; the official SDK's is `peers/official_stdio_server.py` in
`.cache/official-sdk-venv` (`tests/support/sdk.py` builds it). A fresh server for each series.
Figures, not asserts: tests/stdio/test_stdio_memory.py and tests/http/test_memory_bounds.py hold the
bounds, through the same probes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Self

import httpx

from benchmarks.procs import listener, memory_kib, wait_for_port

ROOT = Path(__file__).resolve().parent.parent
ECHO_SERVER = ROOT / "examples" / "echo_server.py"
OFFICIAL_SERVER = ROOT / "benchmarks" / "peers" / "official_stdio_server.py"
OFFICIAL_PYTHON = ROOT / ".cache" / "official-sdk-venv" / "bin" / "python"
MIB = 1024 * 1024
IN_FLIGHT = 8
READ_BYTES = 1 << 16
SETTLE_SECONDS = 1.0
SETTLE_AT_MOST = 5.0  # seconds `settled_rss` waits for RSS to come down to a target
CALL_TIMEOUT = 120.0  # seconds for one checkpoint's calls: a hang guard, not a timing
HANDSHAKE = "2025-11-25"
STATELESS = "2026-07-28"
STATELESS_META = {
    "io.modelcontextprotocol/protocolVersion": STATELESS,
    "io.modelcontextprotocol/clientInfo": {"name": "probe", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def rss_mb(pid: int) -> float:
    """The process's resident size (VmRSS) in MiB."""
    return memory_kib(pid)["VmRSS"] / 1024


def settled_rss(pid: int, target: float | None = None) -> float:
    """RSS once a load has settled: after SETTLE_SECONDS, and with a `target`, once it is at or under
    it or SETTLE_AT_MOST later (memory is given back a little after a load)."""
    time.sleep(SETTLE_SECONDS)
    deadline = time.monotonic() + SETTLE_AT_MOST
    while True:
        now = rss_mb(pid)
        if target is None or now <= target or time.monotonic() > deadline:
            return now
        time.sleep(0.1)


def _message(request_id: int | str | None, method: str, params: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if request_id is not None:
        message["id"] = request_id
    return message


def _echo(text: str, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "echo", "arguments": {"text": text}}
    if meta is not None:
        params["_meta"] = meta
    return params


def _initialize() -> dict[str, Any]:
    return {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}}


def _answered(head: bytes) -> None:
    """`head`, the start of an answer, is a result (an error answer fails the probe)."""
    if b'"error"' in head or b'"result"' not in head:
        raise RuntimeError(f"the server did not answer with a result: {head[:300]!r}")


class _Probe:
    """A server in a subprocess (`proc`), called `run(calls, size)` at a time."""

    proc: subprocess.Popen[bytes]
    calls = 0

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Start the server, open a session, warm it with small calls."""
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def run(self, calls: int, size: int) -> None:
        """`calls` echo calls of `size` bytes of text, IN_FLIGHT at a time, all answered on return."""
        raise NotImplementedError

    @property
    def rss(self) -> float:
        return rss_mb(self.proc.pid)

    def settled_rss(self, target: float | None = None) -> float:
        return settled_rss(self.proc.pid, target)

    def _end(self) -> None:
        proc = self.proc
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


class StdioEchoProbe(_Probe):
    """A stdio `echo` server driven by raw frames over its pipes."""

    def __init__(self, argv: Sequence[str], env: dict[str, str] | None = None) -> None:
        self.argv = list(argv)
        self.env = env
        self._pending = bytearray()

    def start(self) -> None:
        self.proc = subprocess.Popen(
            self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT, env=self.env
        )
        self._write(_message("init", "initialize", _initialize()))
        self._read_answers(1)
        self._write({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.run(20, 16)  # warm: every code path of a call has run once before the start figure

    def stop(self) -> None:
        self._end()

    def _write(self, message: dict[str, Any]) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        stdin.write(json.dumps(message).encode() + b"\n")
        stdin.flush()

    def _read_answers(self, count: int, released: threading.Semaphore | None = None) -> None:
        """Read `count` answers in 64 KiB reads, releasing a slot of `released` per answer."""
        stdout = self.proc.stdout
        assert stdout is not None
        fd = stdout.fileno()
        pending = self._pending
        deadline = time.monotonic() + CALL_TIMEOUT
        while count:
            newline = pending.find(b"\n")
            if newline < 0:
                if time.monotonic() > deadline:
                    raise TimeoutError("the server stopped answering")
                chunk = os.read(fd, READ_BYTES)
                if not chunk:
                    raise EOFError(f"the server closed its stdout (exit code {self.proc.poll()})")
                pending += chunk
                continue
            _answered(bytes(pending[:200]))
            del pending[: newline + 1]
            count -= 1
            if released is not None:
                released.release()

    def run(self, calls: int, size: int) -> None:
        text = "x" * size
        first = self.calls
        self.calls += calls
        slots = threading.Semaphore(IN_FLIGHT)
        failure: list[BaseException] = []

        def send() -> None:
            try:
                for request_id in range(first, first + calls):
                    if not slots.acquire(timeout=CALL_TIMEOUT):
                        raise TimeoutError("no answer freed a slot")
                    self._write(_message(request_id, "tools/call", _echo(text)))
            except BaseException as exc:  # reported by the reading thread
                failure.append(exc)

        sender = threading.Thread(target=send, daemon=True)
        sender.start()
        self._read_answers(calls, slots)
        sender.join(CALL_TIMEOUT)
        if failure:
            raise failure[0]


class HttpEchoProbe(_Probe):
    """`examples/echo_server.py --transport http`, called over Streamable HTTP at `version`: one
    handshake session (2025-11-25), or stateless requests (2026-07-28); IN_FLIGHT clients at once."""

    def __init__(self, version: str, env: dict[str, str] | None = None) -> None:
        self.version = version
        self.env = env
        self.headers = {**ACCEPT, "MCP-Protocol-Version": version}
        self.client = httpx.Client(timeout=CALL_TIMEOUT, limits=httpx.Limits(max_connections=IN_FLIGHT))

    def start(self) -> None:
        with listener() as sock:  # the server's inherited copy holds the port once it is started
            self.port = sock.getsockname()[1]
            self.url = f"http://127.0.0.1:{self.port}/mcp"
            argv = [sys.executable, str(ECHO_SERVER), "--transport", "http", "--fd", str(sock.fileno())]
            self.proc = subprocess.Popen(
                argv,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=ROOT,
                env=self.env,
                pass_fds=(sock.fileno(),),
            )
        try:
            wait_for_port(self.proc, self.port, 30)
            if self.version == HANDSHAKE:
                reply = self.client.post(self.url, json=_message(0, "initialize", _initialize()), headers=ACCEPT)
                _answered(reply.content)
                self.headers["Mcp-Session-Id"] = reply.headers["mcp-session-id"]
                note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
                self.client.post(self.url, json=note, headers=self.headers).raise_for_status()
            else:
                self.headers |= {"Mcp-Method": "tools/call", "Mcp-Name": "echo"}
            self.run(20, 16)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        self.client.close()
        self.proc.terminate()
        self._end()

    def run(self, calls: int, size: int) -> None:
        text = "x" * size
        meta = STATELESS_META if self.version == STATELESS else None
        first = self.calls
        self.calls += calls

        def call(request_id: int) -> None:
            message = _message(request_id, "tools/call", _echo(text, meta))
            reply = self.client.post(self.url, content=json.dumps(message).encode(), headers=self.headers)
            reply.raise_for_status()
            _answered(reply.content[:300])

        with ThreadPoolExecutor(IN_FLIGHT) as pool:
            for _ in pool.map(call, range(first, first + calls)):
                pass


def ours_argv() -> list[str]:
    return [sys.executable, str(ECHO_SERVER), "--stub", HANDSHAKE]


def official_argv() -> list[str] | None:
    return [str(OFFICIAL_PYTHON), str(OFFICIAL_SERVER)] if OFFICIAL_PYTHON.exists() else None


def series(open_probe: Callable[[], _Probe], checkpoints: Sequence[int], size: int) -> list[str]:
    """RSS at the start and after each checkpoint's total of calls, on one server: settled, and in
    brackets as the checkpoint's last answer was read."""
    with open_probe() as probe:
        figures = [f"{probe.settled_rss():.1f}"]
        done = 0
        for checkpoint in checkpoints:
            probe.run(checkpoint - done, size)
            done = checkpoint
            live = probe.rss
            figures.append(f"{probe.settled_rss():.1f} ({live:.1f})")
    return figures


def peers() -> dict[str, Callable[[], _Probe] | None]:
    official = official_argv()
    return {
        "ours": lambda: StdioEchoProbe(ours_argv()),
        "official": (lambda: StdioEchoProbe(official)) if official is not None else None,
        f"http-{HANDSHAKE}": lambda: HttpEchoProbe(HANDSHAKE),
        f"http-{STATELESS}": lambda: HttpEchoProbe(STATELESS),
    }


SIZES = (64 * 1024, 256 * 1024, MIB, 4 * MIB, 12 * MIB)  # answer sizes of `--sizes` (the frame limit is 16 MiB)


def per_size(argv: Sequence[str]) -> None:
    """What a stdio server keeps per answer size: a fresh server per size, about 200 MiB of echo calls
    of that size (at least 20), RSS settled after, and the peak over the start (VmHWM)."""
    print("answer | calls | start | after | peak over start")
    print("--- | --- | --- | --- | ---")
    for size in SIZES:
        calls = max(20, min(240, 200 * MIB // size))
        with StdioEchoProbe(argv) as probe:
            start = probe.settled_rss()
            probe.run(calls, size)
            after = probe.settled_rss()
            peak = memory_kib(probe.proc.pid)["VmHWM"] / 1024 - start
        print(f"{size // 1024} KiB | {calls} | {start:.1f} | {after:.1f} | +{peak:.1f}", flush=True)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="120 calls of 1 MiB and 20 of 5 MiB")
    parser.add_argument("--only", help="comma-separated servers: " + ", ".join(peers()))
    parser.add_argument("--sizes", action="store_true", help="ours over stdio at answer sizes of 64 KiB to 12 MiB")
    args = parser.parse_args(argv)
    if args.sizes:
        per_size(ours_argv())
        return
    small = [40, 120] if args.quick else [40, 120, 240]
    large = [20] if args.quick else [40]
    chosen = args.only.split(",") if args.only else list(peers())
    header = ["server", "start"] + [f"{n} x 1 MiB" for n in small] + ["start", f"{large[0]} x 5 MiB"]
    print(" | ".join(header))
    print(" | ".join("---" for _ in header))
    for name, open_probe in peers().items():
        if name not in chosen:
            continue
        if open_probe is None:
            print(f"{name} | (no {OFFICIAL_PYTHON}: build it with tests/support/sdk.py create_sdk_venv)")
            continue
        figures = series(open_probe, small, MIB)
        # A 5 MiB argument is over the HTTP server's default body limit (4 MiB, answered 413).
        figures += (
            ["-", "- (over the 4 MiB body limit)"] if name.startswith("http") else series(open_probe, large, 5 * MIB)
        )
        print(" | ".join([name, *figures]), flush=True)


if __name__ == "__main__":
    main()
