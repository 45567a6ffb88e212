"""`mcp-bindgen dev TARGET`: `mcp-bindgen run TARGET` as a child process, started again whenever a
Python source file in the target's folder changes.

Over HTTP the listening socket is this process's and is handed to every child, so the URL stays the
same and no request is refused between two children; while the file does not import (the child
exited), this process answers each request at once with a JSON-RPC error naming why.

Over stdio this process stands between the client and the child, line by line: it keeps the
client's `initialize` request and `initialized` notification and replays them to a new child
(dropping the child's answer), answers the requests the old child left unanswered with an error
saying to send them again, and tells the client that tools, prompts and resources may have changed
(`notifications/*/list_changed`)."""

from __future__ import annotations

import argparse
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mcp_bindings.v2025_11_25 import names as v2025

from .serving import listening_socket, url_of
from .target import Target

POLL_SECONDS = 0.3
MAX_WATCHED = 5000  # files of one folder tree; a bigger tree is watched in part
SKIPPED = {".git", ".venv", "venv", "__pycache__", "node_modules", ".cache", ".mypy_cache", ".pytest_cache"}
INSPECTOR = "npx @modelcontextprotocol/inspector"
REPLAY_ID = "mcp-bindgen-dev-replay"


def _sources(root: Path) -> Iterator[Path]:
    count = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIPPED and not d.startswith(".")]
        for name in files:
            if name.endswith(".py"):
                count += 1
                if count > MAX_WATCHED:
                    return
                yield Path(folder) / name


def snapshot(root: Path) -> dict[Path, int]:
    stamps: dict[Path, int] = {}
    for path in _sources(root):
        try:
            stamps[path] = path.stat().st_mtime_ns
        except OSError:
            continue
    return stamps


def _log(text: str) -> None:
    print(f"mcp-bindgen dev: {text}", file=sys.stderr, flush=True)


def _child_argv(args: argparse.Namespace, extra: list[str]) -> list[str]:
    return [sys.executable, "-m", "mcp_bindgen.cli", "run", args.target, *extra]


def _stop(process: subprocess.Popen[bytes] | None) -> None:
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(5)


def _interrupt(_signal: int, _frame: Any) -> None:
    raise KeyboardInterrupt


def cmd_dev(args: argparse.Namespace) -> int:
    signal.signal(signal.SIGTERM, _interrupt)  # stopped like Ctrl-C: the child is stopped too
    target = Target.parse(args.target)
    root = target.watched
    if args.transport == "http":
        return _dev_http(args, root)
    return StdioSupervisor(_child_argv(args, []), root).run()


def _dev_http(args: argparse.Namespace, root: Path) -> int:
    sock = listening_socket(args.host, args.port)
    url = url_of(args.host, int(sock.getsockname()[1]), args.path)
    http = ["--transport", "http", "--host", args.host, "--path", args.path, "--fd", str(sock.fileno())]
    argv = _child_argv(args, [*http, "--forwarded-allow-ips", args.forwarded_allow_ips])
    print(f"serving on {url} (restarted when a file under {root} changes)", flush=True)
    _log(f"open the MCP Inspector with: {INSPECTOR} --transport http --server-url {url}")
    stamps = snapshot(root)
    child = HttpChild(argv, sock)
    try:
        while True:
            if child.failed is None:
                time.sleep(POLL_SECONDS)
            else:  # the file does not import: answer every request at once with why, until it changes
                answer_failure(sock, child.failed, POLL_SECONDS)
            now = snapshot(root)
            if now != stamps:
                stamps = now
                _log("a source file changed: restarting")
                child.stop()
                child = HttpChild(argv, sock)
    except KeyboardInterrupt:
        return 0
    finally:
        child.stop()
        sock.close()


class HttpChild:
    """One `mcp-bindgen run` child serving the inherited socket; its stderr is passed on, its last
    line kept: when the child exits (the file does not import), `failed` is that line."""

    def __init__(self, argv: list[str], sock: socket.socket) -> None:
        self.process = subprocess.Popen(
            argv, pass_fds=(sock.fileno(),), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        self.last = ""
        self.done = threading.Event()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stderr is not None
        for line in iter(self.process.stderr.readline, b""):
            sys.stderr.buffer.write(line)
            sys.stderr.flush()
            self.last = line.decode("utf-8", "replace").strip() or self.last
        self.done.set()

    @property
    def failed(self) -> str | None:
        if self.process.poll() is None or not self.done.wait(1):
            return None
        return (
            self.last.removeprefix("mcp-bindgen: error: ") or f"the server exited with code {self.process.returncode}"
        )

    def stop(self) -> None:
        _stop(self.process)


def answer_failure(sock: socket.socket, reason: str, wait: float) -> None:
    """Answer the requests arriving within `wait` seconds with a JSON-RPC error naming `reason`
    (HTTP 500), as no server is there to answer them."""
    end = time.monotonic() + wait
    while (left := end - time.monotonic()) > 0:
        ready, _, _ = select.select([sock], [], [], left)
        if not ready:
            return
        try:
            connection, _address = sock.accept()
        except (BlockingIOError, InterruptedError):
            continue
        with connection:
            connection.settimeout(2)
            try:
                request_id = _request_id(connection)
                error = {"code": -32603, "message": f"the server is not running (mcp-bindgen dev): {reason}"}
                body = json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode()
                head = "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n"
                head += f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
                connection.sendall(head.encode() + body)
            except OSError:
                continue


def _request_id(connection: socket.socket) -> Any:
    """The id of the JSON-RPC request a client sent on `connection` (None when there is none)."""
    data = b""
    while b"\r\n\r\n" not in data and len(data) < 65536:
        chunk = connection.recv(4096)
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lengths = [line.split(b":", 1)[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")]
    length = min(int(lengths[0].strip() or 0), 1 << 20) if lengths and lengths[0].strip().isdigit() else 0
    while len(body) < length:
        chunk = connection.recv(length - len(body))
        if not chunk:
            break
        body += chunk
    message = _parse(body)
    return message.get("id") if isinstance(message, dict) else None


class StdioSupervisor:
    """Between a stdio client (this process's stdin/stdout) and the server child; see the module."""

    def __init__(self, argv: list[str], root: Path) -> None:
        self.argv, self.root = argv, root
        self.lock = threading.Lock()
        self.out_lock = threading.Lock()
        self.child: subprocess.Popen[bytes] | None = None
        self.handshake: list[bytes] = []  # the client's initialize request and initialized notification
        self.pending: dict[str, bytes] = {}  # id (as JSON) -> a request the child has not answered yet
        self.closed = threading.Event()

    def run(self) -> int:
        _log(f"serving {' '.join(self.argv[4:])} on stdio, restarted when a file under {self.root} changes")
        _log(f"open the MCP Inspector with: {INSPECTOR} {' '.join(sys.argv[:1])} dev {' '.join(self.argv[4:])}")
        stamps = snapshot(self.root)
        self._start(replay=False)
        threading.Thread(target=self._pump_client, daemon=True).start()
        try:
            while not self.closed.wait(POLL_SECONDS):
                now = snapshot(self.root)
                if now != stamps:
                    stamps = now
                    _log("a source file changed: restarting")
                    self._restart()
        except KeyboardInterrupt:
            pass
        finally:
            with self.lock:
                _stop(self.child)
        return 0

    def _start(self, *, replay: bool) -> None:
        child = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.child = child
        if replay and self.handshake:
            assert child.stdin is not None
            request = json.loads(self.handshake[0])
            request["id"] = REPLAY_ID
            child.stdin.write(json.dumps(request).encode() + b"\n")
            for line in self.handshake[1:]:
                child.stdin.write(line)
            child.stdin.flush()
        threading.Thread(target=self._pump_child, args=(child,), daemon=True).start()

    def _restart(self) -> None:
        with self.lock:
            _stop(self.child)
            lost = list(self.pending.items())
            self.pending.clear()
            self._start(replay=True)
        for key, _line in lost:
            error = {"code": -32603, "message": "the server was restarted (mcp-bindgen dev): send the request again"}
            self._to_client({"jsonrpc": "2.0", "id": json.loads(key), "error": error})
        if self.handshake:
            for kind in ("tools", "prompts", "resources"):
                self._to_client({"jsonrpc": "2.0", "method": f"notifications/{kind}/list_changed"})

    def _to_client(self, message: dict[str, Any] | bytes) -> None:
        data = message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n"
        with self.out_lock:
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()

    def _pump_client(self) -> None:
        """Client -> child: every line forwarded; the handshake kept; requests remembered until answered."""
        for line in iter(sys.stdin.buffer.readline, b""):
            message = _parse(line)
            with self.lock:
                if isinstance(message, dict):
                    method = message.get("method")
                    if method in (v2025.INITIALIZE, v2025.NOTIFICATIONS_INITIALIZED):
                        self.handshake = [*self.handshake[: 1 if method != v2025.INITIALIZE else 0], line]
                    elif method is not None and "id" in message:
                        self.pending[json.dumps(message["id"])] = line
                child = self.child
                if child is not None and child.stdin is not None:
                    try:
                        child.stdin.write(line)
                        child.stdin.flush()
                    except (BrokenPipeError, ValueError):
                        pass  # the child is being replaced; the request is answered with an error
        self.closed.set()

    def _pump_child(self, child: subprocess.Popen[bytes]) -> None:
        """Child -> client: every line but the answer to the replayed handshake."""
        assert child.stdout is not None
        for line in iter(child.stdout.readline, b""):
            message = _parse(line)
            if isinstance(message, dict) and "method" not in message and "id" in message:
                if message["id"] == REPLAY_ID:
                    continue
                with self.lock:
                    self.pending.pop(json.dumps(message["id"]), None)
            self._to_client(line)


def _parse(line: bytes) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return None
