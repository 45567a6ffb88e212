"""What a client closing its connection mid-request means, per wire era (runtime/http/app.py).

2026-07-28 (stateless): closing the response stream is the cancellation signal, so the handler is
cancelled. Handshake sessions (2025-03-26 .. 2025-11-25): disconnection SHOULD NOT be taken as
cancellation (the client sends `notifications/cancelled` for that), so the handler runs to the end.
The request goes over a raw socket that the test closes once the handler has started.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest

from mcp_bindings.runtime.http.app import create_app
from mcp_bindings.runtime.protocol import registry
from tests.support.http import META, serve_in_thread

STATELESS = "2026-07-28"
HANDSHAKE = "2025-11-25"
HANDLER_SECONDS = 3.0  # the slow tool's duration; the test's waits are bounded well within it
WAIT = 10.0


class Flags:
    def __init__(self) -> None:
        self.started = threading.Event()
        self.cancelled = threading.Event()
        self.finished = threading.Event()

    def reset(self) -> None:
        for event in (self.started, self.cancelled, self.finished):
            event.clear()


def _slow_server(flags: Flags) -> Any:
    m = registry.load_version(STATELESS)
    from mcp_bindings.v2026_07_28.server import Server

    class SlowServer(Server):
        name = "slow"
        version = "0"

        async def list_tools(self, params: Any, ctx: Any) -> Any:
            return m.ListToolsResult(tools=[m.Tool(name="slow", input_schema=m.ToolInputSchema(type="object"))])

        async def call_tool(self, params: Any, ctx: Any) -> Any:
            flags.started.set()
            try:
                await anyio.sleep(HANDLER_SECONDS)
            except anyio.get_cancelled_exc_class():
                flags.cancelled.set()
                raise
            flags.finished.set()
            return m.CallToolResult(content=[m.TextContent(text="done")])

    return SlowServer()


@pytest.fixture(scope="module")
def slow() -> Iterator[tuple[str, Flags]]:
    flags = Flags()
    with serve_in_thread(create_app(_slow_server(flags))) as base:
        yield base, flags


def _post_then_hang_up(base: str, body: dict[str, Any], headers: dict[str, str], flags: Flags) -> None:
    """POST over a raw socket, wait until the handler runs, then close the connection unanswered."""
    host, port = base.removeprefix("http://").split(":")
    payload = json.dumps(body).encode()
    head = "".join(
        f"{k}: {v}\r\n"
        for k, v in {
            "Host": f"{host}:{port}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Content-Length": str(len(payload)),
            **headers,
        }.items()
    )
    with socket.create_connection((host, int(port)), timeout=WAIT) as sock:
        sock.sendall(f"POST /mcp HTTP/1.1\r\n{head}\r\n".encode() + payload)
        assert flags.started.wait(WAIT), "the handler never started"
    # closed here, long before the handler's HANDLER_SECONDS are up


def test_stateless_disconnect_cancels_the_request(slow: tuple[str, Flags]) -> None:
    base, flags = slow
    flags.reset()
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "slow", "arguments": {}, "_meta": META},
    }
    _post_then_hang_up(
        base, call, {"MCP-Protocol-Version": STATELESS, "Mcp-Method": "tools/call", "Mcp-Name": "slow"}, flags
    )
    assert flags.cancelled.wait(HANDLER_SECONDS - 0.5), "closing the stream must cancel a stateless request"
    assert not flags.finished.is_set()


def test_handshake_disconnect_lets_the_request_finish(slow: tuple[str, Flags]) -> None:
    base, flags = slow
    flags.reset()
    with httpx.Client(base_url=base, timeout=WAIT) as client:
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": HANDSHAKE,
                "capabilities": {},
                "clientInfo": {"name": "pytest", "version": "0"},
            },
        }
        reply = client.post("/mcp", json=init, headers={"Accept": "application/json, text/event-stream"})
        assert reply.status_code == 200, reply.text
        session = {"Mcp-Session-Id": reply.headers["mcp-session-id"], "MCP-Protocol-Version": HANDSHAKE}
        note = client.post(
            "/mcp",
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            headers={"Accept": "application/json, text/event-stream", **session},
        )
        assert note.status_code == 202
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "slow", "arguments": {}}}
    _post_then_hang_up(base, call, session, flags)
    assert flags.finished.wait(HANDLER_SECONDS + WAIT), "a handshake-era request must outlive a disconnect"
    assert not flags.cancelled.is_set()
