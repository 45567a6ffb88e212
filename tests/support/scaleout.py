"""Scale-out (docs/deployment.md): one server on several uvicorn (or gunicorn) workers behind one port,
sharing state through a private Redis on 127.0.0.1 (`Deployment`), and the wire helpers of the
scale-out tests. Every response carries the pid of the worker that answered (`x-worker`); a fresh
HTTP connection is how a test reaches another worker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from anyio.streams.memory import MemoryObjectReceiveStream

from tests.support import REPO_ROOT, bound_socket

STATELESS = "2026-07-28"
WORKERS = 4
SECRET = "scale-out-test-secret-0123456789abcdef0123456789"
META = {
    "io.modelcontextprotocol/protocolVersion": STATELESS,
    "io.modelcontextprotocol/clientInfo": {"name": "pytest", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}
ACCEPT = "application/json, text/event-stream"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
TRIES = 40  # fresh connections tried to reach another worker


class Deployment:
    """`uvicorn --workers N --factory tests.peers.scaleout_app:build` (or another `app` module's
    `build`) on 127.0.0.1 with the Redis backend, on a socket bound here and inherited (`--fd`)."""

    def __init__(
        self, redis_url: str, workers: int, log: Path, server: str = "uvicorn", app: str = "tests.peers.scaleout_app"
    ) -> None:
        if server == "gunicorn":
            command = [sys.executable, "-m", "gunicorn", f"{app}:build()"]
            command += ["--worker-class", "uvicorn.workers.UvicornWorker", "--workers", str(workers)]
            command += ["--bind", "fd://{fd}", "--graceful-timeout", "10", "--log-level", "warning"]
        else:
            command = [sys.executable, "-m", "uvicorn", "--factory", f"{app}:build"]
            command += ["--workers", str(workers), "--fd", "{fd}"]
            command += ["--log-level", "warning", "--timeout-graceful-shutdown", "10"]
        self.start(command, redis_url, log)

    def start(self, command: list[str], redis_url: str, log: Path, extra_env: dict[str, str] | None = None) -> None:
        """Run `command` (its `{fd}`: the listening socket's descriptor, bound here once and inherited)."""
        env = {
            **os.environ,
            "MCP_REDIS_URL": redis_url,
            "MCP_REQUEST_STATE_SECRET": SECRET,
            "PYTHONPATH": str(REPO_ROOT),
            **(extra_env or {}),
        }
        self.log = log
        with bound_socket() as sock, log.open("wb") as out:
            sock.listen()
            self.port = int(sock.getsockname()[1])
            self.base = f"http://127.0.0.1:{self.port}"
            argv = [part.replace("{fd}", str(sock.fileno())) for part in command]
            self.process = subprocess.Popen(
                argv, cwd=REPO_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, pass_fds=(sock.fileno(),)
            )

    def wait_ready(self, workers: int, timeout: float = 90) -> None:
        """Until `workers` distinct workers have answered /readyz with 200."""
        seen: set[str] = set()
        deadline = time.monotonic() + timeout
        while len(seen) < workers:
            if self.process.poll() is not None:
                pytest.fail(f"uvicorn exited ({self.process.returncode}): {self.log.read_text()[-2000:]}")
            if time.monotonic() > deadline:
                pytest.fail(f"{len(seen)} of {workers} workers ready after {timeout} s: {self.log.read_text()[-2000:]}")
            try:
                response = httpx.get(self.base + "/readyz", timeout=2)
                if response.status_code == 200:
                    seen.add(response.headers["x-worker"])
            except httpx.HTTPError:
                pass
            time.sleep(0.1)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


def rpc(request_id: Any, method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def call(name: str, arguments: dict[str, Any] | None = None, request_id: Any = 1, **extra: Any) -> dict[str, Any]:
    return rpc(request_id, "tools/call", {"name": name, "arguments": arguments or {}, "_meta": META, **extra})


def headers(method: str, name: str | None = None) -> dict[str, str]:
    out = {"Accept": ACCEPT, "MCP-Protocol-Version": STATELESS, "Mcp-Method": method}
    if name is not None:
        out["Mcp-Name"] = name
    return out


async def sse_messages(response: httpx.Response) -> AsyncIterator[Any]:
    import json

    data: list[str] = []
    async for line in response.aiter_lines():
        if not line:
            if data and "".join(data).strip():
                yield json.loads("\n".join(data))
            data = []
        elif line.startswith("data:"):
            data.append(line[5:].strip())


@asynccontextmanager
async def listening(
    base: str, notifications: dict[str, Any], sub_id: str
) -> AsyncIterator[tuple[str, MemoryObjectReceiveStream[Any]]]:
    """An open `subscriptions/listen` stream: (the worker holding it, its messages after the ack),
    read by a task of its own (cancelling a read of the SSE generator itself would close it)."""
    async with httpx.AsyncClient(timeout=httpx.Timeout(10, read=None)) as client:
        body = rpc(sub_id, "subscriptions/listen", {"notifications": notifications, "_meta": META})
        async with client.stream("POST", base + "/mcp", json=body, headers=headers("subscriptions/listen")) as stream:
            assert stream.status_code == 200
            send, receive = anyio.create_memory_object_stream[Any](100)

            async def pump() -> None:
                async with send:
                    async for message in sse_messages(stream):
                        await send.send(message)

            async with anyio.create_task_group() as group:
                group.start_soon(pump)
                with anyio.fail_after(10):
                    ack = await receive.receive()
                assert ack["method"] == "notifications/subscriptions/acknowledged", ack
                yield stream.headers.get("x-worker", ""), receive
                group.cancel_scope.cancel()


async def next_within(messages: MemoryObjectReceiveStream[Any], seconds: float) -> Any:
    with anyio.move_on_after(seconds):
        return await messages.receive()
    return None


class TaskSession:
    """A 2025-11-25 session on /tasks over one kept-alive connection (so on one worker)."""

    def __init__(self, base: str, user: str) -> None:
        self.client = httpx.AsyncClient(
            base_url=base, timeout=10, limits=httpx.Limits(max_connections=1, max_keepalive_connections=1)
        )
        self.auth = {"Authorization": f"Bearer {user}-token", "Accept": ACCEPT}
        self.session_id = ""
        self.worker = ""
        self.ids = iter(range(1, 1_000_000))

    async def open(self) -> TaskSession:
        init = rpc(
            0,
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "pytest", "version": "0"},
            },
        )
        response = await self.client.post("/tasks", json=init, headers=self.auth)
        assert response.status_code == 200, response.text
        self.session_id = response.headers["mcp-session-id"]
        self.worker = response.headers["x-worker"]
        await self.client.post(
            "/tasks", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=self.head()
        )
        return self

    def head(self) -> dict[str, str]:
        return {**self.auth, "Mcp-Session-Id": self.session_id, "MCP-Protocol-Version": "2025-11-25"}

    async def request(self, method: str, params: dict[str, Any]) -> httpx.Response:
        response = await self.client.post("/tasks", json=rpc(next(self.ids), method, params), headers=self.head())
        assert response.headers["x-worker"] == self.worker
        return response

    async def result(self, method: str, params: dict[str, Any]) -> Any:
        response = await self.request(method, params)
        assert response.status_code == 200, response.text
        body = response.json()
        assert "result" in body, body
        return body["result"]

    async def aclose(self) -> None:
        await self.client.aclose()
