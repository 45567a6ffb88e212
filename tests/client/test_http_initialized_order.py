"""The Streamable HTTP client's `notifications/initialized` reaches the server before the first
request that follows it (correctness issue 44, item 5): it was POSTed in the background, so a
proxy's first `tools/list` could overtake it, and tools a server adds once initialized (as
server-everything does) were missed (12 of its 16 listed). The peer is a minimal Streamable HTTP
server (JSON responses) on 127.0.0.1 that takes its time over the initialized notification."""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import anyio
import pytest

from mcp_bindings.runtime.client.http import connect_http
from mcp_bindings.v2025_11_25.client import Client
from tests.support.stdlib_http import serve_handler

pytestmark = pytest.mark.anyio

TOOL = {"name": "early", "inputSchema": {"type": "object"}}
LATE = {"name": "late", "inputSchema": {"type": "object"}}


@contextmanager
def slow_to_initialize() -> Iterator[str]:
    initialized = threading.Event()

    class Server(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            return None

        def _answer(self, status: int, body: dict[str, object] | None = None) -> None:
            data = json.dumps(body).encode() if body is not None else b""
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Mcp-Session-Id", "s-1")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            method = message.get("method")
            if method == "notifications/initialized":
                time.sleep(0.5)  # a server that does some work before it adds its tools
                initialized.set()
                return self._answer(202)
            if method == "initialize":
                result = {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "slow", "version": "1"},
                }
            elif method == "tools/list":
                result = {"tools": [TOOL, LATE] if initialized.is_set() else [TOOL]}
            else:
                return (
                    self._answer(202)
                    if "id" not in message
                    else self._answer(200, {"jsonrpc": "2.0", "id": message["id"], "result": {}})
                )
            self._answer(200, {"jsonrpc": "2.0", "id": message["id"], "result": result})

        def do_DELETE(self) -> None:
            self._answer(200)

        def do_GET(self) -> None:
            self.send_response(405)
            self.send_header("Content-Length", "0")
            self.end_headers()

    with serve_handler(Server) as url:
        yield url + "/mcp"


async def test_the_first_request_after_the_handshake_sees_an_initialized_server() -> None:
    with slow_to_initialize() as url, anyio.fail_after(20):
        async with connect_http(url, Client, protocol_version="2025-11-25") as client:
            tools = [t.name for t in (await client.list_tools()).tools]
    assert tools == ["early", "late"]
