"""Cancellation over Streamable HTTP in both wire eras, SSE priming by version, and connect_sse errors.

2026-07-28 (stateless): closing the POST's response stream is the only cancellation signal, so a
cancelled or timed-out caller must close it (runtime/client/http.py: a request's POST runs in its
caller's task), and the server must cancel the handler and write nothing more (http_streamable.py).
Handshake sessions: `notifications/cancelled` cancels, for a user's cancel and a timeout alike.
Priming events (id, `retry:`, empty data) open POST streams only in sessions of 2025-11-25 on.

The servers run on uvicorn (127.0.0.1) in a thread; what the handler saw is reported through
thread-safe events, what went over HTTP through an ASGI wrapper (`Wire`).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import orjson
import pytest
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcp_bindings.runtime.client.http import connect_http, connect_sse
from mcp_bindings.runtime.http.app import create_app
from mcp_bindings.runtime.http.resume import TRANSPORT_POLICY, primes_streams
from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.rpc.calls import REQUEST_TIMEOUT
from mcp_bindings.runtime.rpc.errors import McpError
from tests.peers.harness import client_module
from tests.support import refused_port
from tests.support.http import open_session, rpc, serve_in_thread

pytestmark = pytest.mark.anyio

STATELESS = "2026-07-28"
HANDSHAKE = "2025-11-25"
STEPS, STEP = 120, 0.05  # the slow tool reports progress every STEP seconds for STEPS * STEP = 6 s
PROMPT = 2.0  # seconds within which a cancellation must reach the handler (well under 6 s)
DEADLINE = 20.0  # seconds per test
CANCELLED = "notifications/cancelled"


class Flags:
    """What the slow tool's handler saw (set in the server's thread)."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.cancelled = threading.Event()
        self.finished = threading.Event()

    def reset(self) -> None:
        for event in (self.started, self.cancelled, self.finished):
            event.clear()


class Wire:
    """ASGI wrapper recording the JSON-RPC methods POSTed, client disconnects, and response body
    writes the app makes after the client of that request disconnected."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.methods: list[str] = []
        self.disconnects = 0
        self.writes_after_disconnect = 0

    def reset(self) -> None:
        self.methods.clear()
        self.disconnects = self.writes_after_disconnect = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        gone = False

        async def watched_receive() -> Message:
            nonlocal gone
            message = await receive()
            if message["type"] == "http.request" and message.get("body"):
                try:
                    body = orjson.loads(message["body"])
                except orjson.JSONDecodeError:
                    body = None
                if isinstance(body, dict) and isinstance(body.get("method"), str):
                    self.methods.append(body["method"])
            elif message["type"] == "http.disconnect":
                gone = True
                self.disconnects += 1
            return message

        async def watched_send(message: Message) -> None:
            if gone and message["type"] == "http.response.body":
                self.writes_after_disconnect += 1
            await send(message)

        await self.app(scope, watched_receive, watched_send)


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
                for step in range(STEPS):
                    await ctx.report_progress(step, STEPS)
                    await anyio.sleep(STEP)
            except anyio.get_cancelled_exc_class():
                flags.cancelled.set()
                raise
            flags.finished.set()
            return m.CallToolResult(content=[m.TextContent(text="done")])

    return SlowServer()


@pytest.fixture(scope="module")
def slow() -> Iterator[tuple[str, Flags, Wire]]:
    flags = Flags()
    wire = Wire(create_app(_slow_server(flags)))
    with serve_in_thread(wire) as base:
        yield base + "/mcp", flags, wire


async def _wait(event: threading.Event, seconds: float) -> bool:
    return await anyio.to_thread.run_sync(event.wait, seconds)


async def _cancel_after_first_progress(client: Any) -> float:
    """Call the slow tool, cancel the call once its first progress arrived; the cancel's time."""
    progressed = anyio.Event()
    cancelled_at = 0.0

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        progressed.set()

    async with anyio.create_task_group() as group:

        async def call() -> None:
            with client.session.progress(on_progress):
                await client.call_tool(name="slow", arguments={})
            pytest.fail("the call was answered although it was cancelled")

        group.start_soon(call)
        await progressed.wait()
        cancelled_at = time.monotonic()
        group.cancel_scope.cancel()
    return cancelled_at


async def _assert_handler_cancelled_promptly(flags: Flags, since: float) -> None:
    assert await _wait(flags.cancelled, PROMPT), "the handler was not cancelled"
    assert time.monotonic() - since < PROMPT
    assert not flags.finished.is_set()


# -- 1. 2026-07-28: the caller's cancel or timeout closes the stream, which cancels the handler ------


async def test_stateless_cancel_closes_the_stream_and_stops_the_handler(slow: tuple[str, Flags, Wire]) -> None:
    url, flags, wire = slow
    flags.reset()
    wire.reset()
    with anyio.fail_after(DEADLINE):
        async with connect_http(url, client_module(STATELESS).Client, protocol_version=STATELESS) as client:
            cancelled_at = await _cancel_after_first_progress(client)
            await _assert_handler_cancelled_promptly(flags, cancelled_at)
            await anyio.sleep(3 * STEP)  # progress the handler would have sent by now goes nowhere
    assert wire.disconnects == 1, "the client must close the POST's response stream"
    assert wire.writes_after_disconnect == 0, "nothing is written after the client left"
    assert CANCELLED not in wire.methods, "over HTTP closing the stream is the signal; no notification"


async def test_stateless_timeout_takes_the_cancel_path(slow: tuple[str, Flags, Wire]) -> None:
    url, flags, wire = slow
    flags.reset()
    wire.reset()
    with anyio.fail_after(DEADLINE):
        async with connect_http(
            url, client_module(STATELESS).Client, protocol_version=STATELESS, request_timeout=0.5
        ) as client:
            with pytest.raises(McpError) as caught:
                await client.call_tool(name="slow", arguments={})
            assert caught.value.code == REQUEST_TIMEOUT
            await _assert_handler_cancelled_promptly(flags, time.monotonic() - 0.1)
    assert wire.disconnects == 1
    assert wire.writes_after_disconnect == 0
    assert CANCELLED not in wire.methods


# -- 2. handshake sessions: notifications/cancelled, for a cancel and a timeout alike -----------------


async def test_handshake_cancel_sends_notifications_cancelled(slow: tuple[str, Flags, Wire]) -> None:
    url, flags, wire = slow
    flags.reset()
    wire.reset()
    with anyio.fail_after(DEADLINE):
        async with connect_http(url, client_module(HANDSHAKE).Client, protocol_version=HANDSHAKE) as client:
            cancelled_at = await _cancel_after_first_progress(client)
            await _assert_handler_cancelled_promptly(flags, cancelled_at)
            assert CANCELLED in wire.methods
            # The session goes on.
            assert (await client.list_tools()).tools[0].name == "slow"


async def test_handshake_timeout_sends_notifications_cancelled(slow: tuple[str, Flags, Wire]) -> None:
    url, flags, wire = slow
    flags.reset()
    wire.reset()
    with anyio.fail_after(DEADLINE):
        async with connect_http(
            url, client_module(HANDSHAKE).Client, protocol_version=HANDSHAKE, request_timeout=0.5
        ) as client:
            with pytest.raises(McpError) as caught:
                await client.call_tool(name="slow", arguments={})
            assert caught.value.code == REQUEST_TIMEOUT
            await _assert_handler_cancelled_promptly(flags, time.monotonic() - 0.1)
            assert CANCELLED in wire.methods


# -- 3. priming events only in sessions of 2025-11-25 on ---------------------------------------------


def _first_event(text: str) -> list[str]:
    """The lines of the first SSE event (comments skipped)."""
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith(":"):
            continue
        if not line:
            if lines:
                return lines
            continue
        lines.append(line)
    return lines


def test_the_priming_rule_still_divides_the_pinned_versions() -> None:
    """policy/transports.json names the first version with priming; stale once no pinned version
    is older (the rule would then be moot) or the version is no longer registered."""
    rule = json.loads(TRANSPORT_POLICY.read_text(encoding="utf-8"))["sse_priming"]
    assert rule["since"] in registry.versions() and len(rule["reason"]) > 20
    pinned = [v for v in registry.versions() if not registry.info(v).stateless]
    assert {primes_streams(v) for v in pinned} == {True, False}
    assert primes_streams(pinned[-1]), "a later version inherits the rule"


@pytest.mark.parametrize(("version", "primed"), [("2025-03-26", False), ("2025-06-18", False), ("2025-11-25", True)])
async def test_priming_event_only_from_2025_11_25(slow: tuple[str, Flags, Wire], version: str, primed: bool) -> None:
    """A POST stream (made SSE by the tool's progress) opens with a priming event only where the
    session's version has it; for older versions every event carries a JSON-RPC message."""
    url, flags, _ = slow
    flags.reset()
    call = rpc(2, "tools/call", {"name": "slow", "arguments": {}, "_meta": {"progressToken": "p"}})
    with anyio.fail_after(DEADLINE):
        async with httpx.AsyncClient(timeout=DEADLINE) as http:
            session = await open_session(http, url, version)
            async with http.stream("POST", url, json=call, headers=session) as response:
                assert response.headers["content-type"].startswith("text/event-stream")
                text = ""
                async for chunk in response.aiter_text():
                    text += chunk
                    if "\n\n" in text.lstrip(":\n"):
                        break  # the first event is complete; hanging up lets the handler run on
    first = _first_event(text)
    assert any(line.startswith("id:") for line in first), first  # resumable sessions number events
    if primed:
        assert any(line.startswith("retry:") for line in first), first
        assert [line for line in first if line.startswith("data:")] == ["data: "], first
    else:
        assert not any(line.startswith("retry:") for line in first), first
        data = "".join(line.removeprefix("data:").strip() for line in first if line.startswith("data:"))
        assert orjson.loads(data)["method"] == "notifications/progress", first


# -- 4. connect_sse fails with the connection's error ------------------------------------------------


async def test_connect_sse_failure_inside_fail_after_raises_the_connection_error() -> None:
    with refused_port() as port, pytest.raises(ConnectionError, match="could not open") as caught:
        with anyio.fail_after(DEADLINE):
            async with connect_sse(f"http://127.0.0.1:{port}/sse", client_module("2024-11-05").Client):
                pass
    assert isinstance(caught.value.__cause__, httpx.ConnectError)
