"""Per-client shares of the HTTP server's shared bounds (issue 28: sessions and requests in flight; the
listen streams are in test_http_hardening.py), on real sockets: client X (127.0.0.2) reaches its
share and is refused 429, -32050 naming the bound; client Y (127.0.0.1) is still served; X's share
comes back when it lets go. And connections (issue 43): one address holds at most
its `max_connections_per_address` of them, half-sent heads included, and a refusal ends its connection."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Mapping
from typing import Any, ClassVar

import anyio
import anyio.abc
import httpx
import orjson
import pytest

from mcp_bindings.runtime.http.app import create_app
from mcp_bindings.runtime.http.fairness import PerClient, client_key
from mcp_bindings.v2025_11_25 import models as hm
from mcp_bindings.v2025_11_25.server import Server as HandshakeServer
from tests.support import port_of
from tests.support.http import open_session, read_until_closed, rpc, serve_guarded, serve_in_thread

pytestmark = pytest.mark.anyio

DEADLINE = 20
X = "127.0.0.2"


class Gate(HandshakeServer):
    """One tool, `wait`, that returns once the test opens the gate (bounded: 10 s)."""

    name, version = "gate", "1"
    declared_capabilities: ClassVar[Mapping[str, Any]] = {"tools": {}}

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.waiting = 0

    async def list_tools(self, params: Any, ctx: Any) -> Any:
        return hm.ListToolsResult(tools=[hm.Tool(name="wait", input_schema=hm.ToolInputSchema(type="object"))])

    async def call_tool(self, params: Any, ctx: Any) -> Any:
        self.waiting += 1
        try:
            with anyio.move_on_after(10):
                while not self.gate.is_set():
                    await anyio.sleep(0.01)
        finally:
            self.waiting -= 1
        return hm.CallToolResult(content=[hm.TextContent(type="text", text="opened")])


def _clients() -> tuple[httpx.AsyncClient, httpx.AsyncClient]:
    x = httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(local_address=X), timeout=10)
    return x, httpx.AsyncClient(timeout=10)


def _refused(reply: httpx.Response, bound: str, limit: int) -> None:
    assert reply.status_code == 429, reply.text
    error = reply.json()["error"]
    assert error["code"] == -32050 and bound in error["message"]
    assert error["data"] == {"bound": bound, "limit": limit}


async def test_one_client_cannot_take_every_session() -> None:
    app = create_app(Gate(), max_sessions=10, max_sessions_per_client=2)
    init = rpc(
        1,
        "initialize",
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "0"}},
    )
    with serve_in_thread(app) as base, anyio.fail_after(DEADLINE):
        url = base + "/mcp"
        x, y = _clients()
        async with x, y:
            first = await open_session(x, url)
            await open_session(x, url)
            refused = await x.post(url, json=init, headers={"Accept": "application/json, text/event-stream"})
            _refused(refused, "max_sessions_per_client", 2)
            assert refused.json()["id"] == 1
            mine = await open_session(y, url)  # another client still gets sessions, and answers
            assert (await y.post(url, json=rpc(2, "ping"), headers=mine)).json()["result"] == {}
            # X ends one session: its share comes back.
            assert (await x.delete(url, headers=first)).status_code == 200
            await open_session(x, url)


async def test_one_client_cannot_take_every_request_slot() -> None:
    server = Gate()
    app = create_app(server, max_requests_in_flight_per_client=2)
    with serve_in_thread(app) as base, anyio.fail_after(DEADLINE):
        url = base + "/mcp"
        x, y = _clients()
        async with x, y:
            session = await open_session(x, url)
            answers: list[httpx.Response] = []

            async def waiting_call(request_id: str) -> None:
                call = rpc(request_id, "tools/call", {"name": "wait", "arguments": {}})
                answers.append(await x.post(url, json=call, headers=session))

            async with anyio.create_task_group() as tg:
                for n in range(2):
                    tg.start_soon(waiting_call, f"call-{n}")
                while server.waiting < 2:
                    await anyio.sleep(0.01)
                _refused(
                    await x.post(url, json=rpc(4, "ping"), headers=session), "max_requests_in_flight_per_client", 2
                )
                theirs = await open_session(y, url)  # Y is served while X waits
                assert (await y.post(url, json=rpc(5, "ping"), headers=theirs)).json()["result"] == {}
                server.gate.set()
            assert [a.status_code for a in answers] == [200, 200]
            # X's calls were answered: its slots are free again.
            assert (await x.post(url, json=rpc(6, "ping"), headers=session)).json()["result"] == {}


async def test_one_client_cannot_take_every_legacy_sse_session() -> None:
    app = create_app(Gate(), max_sessions_per_client=2)
    with serve_in_thread(app) as base, anyio.fail_after(DEADLINE):
        x, y = _clients()
        async with x, y:
            async with x.stream("GET", base + "/sse") as one, x.stream("GET", base + "/sse") as two:
                assert one.status_code == two.status_code == 200
                refused = await x.get(base + "/sse")
                _refused(refused, "max_sessions_per_client", 2)
                async with y.stream("GET", base + "/sse") as theirs:
                    assert theirs.status_code == 200
            for _ in range(100):  # X's streams closed: its share comes back once the server sees it
                if not app.legacy.shares.held(X):
                    break
                await anyio.sleep(0.05)
            async with x.stream("GET", base + "/sse") as again:
                assert again.status_code == 200


def test_shares_are_counted_per_principal_else_per_address() -> None:
    assert client_key("alice", "10.0.0.1") == "principal:alice"
    assert client_key(None, "10.0.0.1") == "10.0.0.1"
    share = PerClient("max_things_per_client", 1, "things", "drop one first")
    share.take("a")
    assert share.refusal(1, "a") is not None and share.refusal(1, "b") is None
    share.give_back("a")
    assert share.refusal(1, "a") is None and share.held("a") == 0


# -- connections: per address before a request is parsed (issue 43, item 5) ------------------------


async def test_one_address_holding_half_sent_heads_leaves_connections_to_others() -> None:
    """X (127.0.0.2) opens more connections than `max_connections`, each sending half a request
    head; Y (127.0.0.1) still calls. X holds at most `max_connections_per_address` of them: each one
    more is answered 503 (`connection: close`) and closed at once, before its head is parsed."""
    app = create_app(Gate(), max_connections=12, max_connections_per_address=4, header_timeout_seconds=30)
    with serve_guarded(app) as base, anyio.fail_after(DEADLINE):
        port = port_of(base)
        held: list[anyio.abc.SocketStream] = []
        try:
            for _ in range(15):
                stream = await anyio.connect_tcp("127.0.0.1", port, local_host=X)
                held.append(stream)
                with contextlib.suppress(anyio.BrokenResourceError, ConnectionError):
                    await stream.send(b"POST /mcp HTTP/1.1\r\nHost: 127")  # half a head, never finished
            answer, _ = await read_until_closed(held[-1], 5)  # one over X's bound: refused, closed
            assert answer.startswith(b"HTTP/1.1 503 "), answer[:200]
            assert b"connection: close" in answer.lower() and b"max_connections_per_address" in answer
            async with httpx.AsyncClient(timeout=10) as y:
                session = await open_session(y, base + "/mcp")
                reply = await y.post(base + "/mcp", json=rpc(2, "ping"), headers=session)
                assert reply.status_code == 200 and reply.json()["result"] == {}
        finally:
            for stream in held:
                await stream.aclose()


async def test_a_refusal_for_want_of_room_ends_its_connection() -> None:
    """A client refused 429 (its share of sessions) does not keep the connection for the keep-alive
    time: the refusal says `Connection: close` and the server closes it."""
    app = create_app(Gate(), max_sessions_per_client=1, keep_alive_seconds=30)
    init = rpc(
        1,
        "initialize",
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "0"}},
    )
    body = orjson.dumps(init)
    request = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    with serve_guarded(app) as base, anyio.fail_after(DEADLINE):
        async with httpx.AsyncClient(timeout=10) as x:
            await open_session(x, base + "/mcp")
        stream = await anyio.connect_tcp("127.0.0.1", port_of(base))
        async with stream:
            await stream.send(request)
            answer, _ = await read_until_closed(stream, 5)  # before: open for the keep-alive time (30 s)
        assert answer.startswith(b"HTTP/1.1 429 "), answer[:200]
        assert b"connection: close" in answer.lower()
