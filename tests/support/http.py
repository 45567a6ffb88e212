"""Streamable HTTP on real sockets: an ASGI app on uvicorn in a background thread of the test process
(`serve_in_thread`; `serve_guarded` as `serve_http` runs it, with its connection bounds), the
examples loaded as modules, and the raw wire helpers (JSON-RPC messages, the 2026-07-28 stateless
`_meta` and headers, a handshake session, the messages of an SSE stream, a connection read until
the server closes it)."""

from __future__ import annotations

import contextlib
import importlib.util
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from types import ModuleType
from typing import Any

import anyio
import anyio.abc
import httpx
import orjson
import pytest

from tests.support import REPO_ROOT, bound_socket

STATELESS = "2026-07-28"
HANDSHAKE = "2025-11-25"
META = {
    "io.modelcontextprotocol/protocolVersion": STATELESS,
    "io.modelcontextprotocol/clientInfo": {"name": "pytest", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {"sampling": {}, "elicitation": {}, "roots": {}},
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


def load_example(name: str) -> ModuleType:
    """examples/<name>.py as a module (the examples directory is not a package)."""
    module_name = f"_http_transport_example_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, REPO_ROOT / "examples" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


@contextlib.contextmanager
def serve_in_thread(app: Any) -> Iterator[str]:
    """Run an ASGI app on uvicorn (127.0.0.1, a free port) in a daemon thread; yields the base URL."""
    import uvicorn

    with serve_config(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")) as url:
        yield url


@contextlib.contextmanager
def serve_config(config: Any) -> Iterator[str]:
    """Run uvicorn with `config` (a `uvicorn.Config` on 127.0.0.1, port 0) in a daemon thread, on a
    socket bound here once (uvicorn listens on it); yields the base URL once it listens, and stops it
    (forced after 10 s) when the block ends."""
    import uvicorn

    sock = bound_socket(config.host)
    config.port = port = int(sock.getsockname()[1])
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 15
        while not server.started:
            if not thread.is_alive():
                pytest.fail("uvicorn exited before it started listening")
            if time.monotonic() > deadline:
                pytest.fail("uvicorn did not start within 15 s")
            time.sleep(0.02)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        if thread.is_alive():  # pragma: no cover - open streams that never end
            server.force_exit = True
            thread.join(5)
        sock.close()


@contextlib.contextmanager
def serve_guarded(app: Any, http: str = "h11") -> Iterator[str]:
    """Run the app as `serve_http` does (`uvicorn_config`: connection bound, head deadline) in a
    daemon thread; yields the base URL."""
    from mcp_bindings.runtime.http.serving import uvicorn_config

    config = uvicorn_config(app, "127.0.0.1", 0, http=http, loop="asyncio")  # pyright: ignore[reportArgumentType]
    with serve_config(config) as url:
        yield url


async def read_until_closed(stream: anyio.abc.SocketStream, limit: float) -> tuple[bytes, float]:
    """Everything the server sends until it closes the connection, and how long that took."""
    started = time.monotonic()
    received = bytearray()
    with anyio.fail_after(limit):
        while True:
            try:
                received += await stream.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError, ConnectionError):
                break
    return bytes(received), time.monotonic() - started


def stateless(params: dict[str, Any] | None = None, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    return {**(params or {}), "_meta": {**META, **(meta or {})}}


def stateless_headers(method: str, name: str | None = None, version: str = STATELESS) -> dict[str, str]:
    headers = {**ACCEPT, "MCP-Protocol-Version": version, "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


def rpc(request_id: Any, method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


async def sse_messages(response: httpx.Response) -> AsyncIterator[Any]:
    """The JSON-RPC messages of an SSE stream (comments and priming events skipped)."""
    data: list[str] = []
    async for line in response.aiter_lines():
        if not line:
            if data and "".join(data).strip():
                yield orjson.loads("\n".join(data))
            data = []
        elif line.startswith("data:"):
            value = line[5:]
            data.append(value.removeprefix(" "))


async def open_session(client: httpx.AsyncClient, url: str, version: str = HANDSHAKE, **headers: str) -> dict[str, str]:
    """initialize + notifications/initialized; the headers later requests of the session carry."""
    init = rpc(
        1,
        "initialize",
        {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "pytest", "version": "0"}},
    )
    reply = await client.post(url, json=init, headers={**ACCEPT, **headers})
    assert reply.status_code == 200, reply.text
    assert reply.json()["result"]["protocolVersion"] == version
    session = {**ACCEPT, "Mcp-Session-Id": reply.headers["mcp-session-id"], "MCP-Protocol-Version": version}
    note = await client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
    assert note.status_code == 202
    return session
