"""Hostile and stuck HTTP clients, on real sockets on 127.0.0.1 (issue #22, the HTTP items): each case
gets its specified status (and JSON-RPC code), and the server answers a normal request afterwards.

Covered: sessions bound to the bearer principal that opened them (POST, GET, DELETE of another
principal: 404); a body that stops arriving (408 within `body_timeout_seconds`); a request head that
stops arriving or grows without end (closed within `header_timeout_seconds` / past
`max_header_bytes`, under both uvicorn parsers); connections beyond `max_connections` (503);
`Last-Event-ID` that is no event id (400); an expired session's GET stream (closed, no broadcasts);
`Host` / `Origin` with userinfo (403); Content-Type matched as a media type (415) and Accept
honoured (406); the bound on open `subscriptions/listen` streams (503, -32603), and per client
(429, -32050: one client cannot take them all; the app's bound leaves connections for requests).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any, ClassVar

import anyio
import httpx
import pytest

from mcp_bindings.runtime.auth import JWTVerifier, require_bearer
from mcp_bindings.runtime.http.app import StreamableHTTPApp, create_app
from mcp_bindings.runtime.server.host import host_for
from mcp_bindings.v2025_11_25 import models as hm
from mcp_bindings.v2025_11_25.server import Server as HandshakeServer
from tests.support import port_of
from tests.support.auth import ISSUER, JWKS, RESOURCE, token
from tests.support.http import (
    ACCEPT,
    HANDSHAKE,
    load_example,
    open_session,
    read_until_closed,
    rpc,
    serve_guarded,
    serve_in_thread,
    sse_messages,
    stateless,
    stateless_headers,
)

pytestmark = pytest.mark.anyio

DEADLINE = 20  # seconds per test
PARSERS = ["h11", "httptools"]


def everything_app(**options: Any) -> StreamableHTTPApp:
    return create_app(load_example("everything_server").EverythingServer(), **options)


async def assert_answers(url: str) -> None:
    """The server still answers a normal request: initialize + ping on a new session. Each request on
    a connection of its own: a kept-alive one idle past the tests' 0.5 s head deadline (a loaded
    machine) is closed by design, which is not what this checks."""
    async with httpx.AsyncClient(timeout=10, limits=httpx.Limits(max_keepalive_connections=0)) as client:
        session = await open_session(client, url)
        reply = await client.post(url, json=rpc("after", "ping"), headers=session)
        assert reply.status_code == 200 and reply.json() == {"jsonrpc": "2.0", "id": "after", "result": {}}


def head(port: int, *, length: int | None = None, extra: str = "") -> bytes:
    lines = [
        "POST /mcp HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
    ]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n" + extra + "\r\n").encode()


# -- 1. sessions belong to the principal that opened them -----------------------------------------


@contextlib.contextmanager
def protected_everything(**options: Any) -> Iterator[str]:
    inner: Any = everything_app(**options)  # an ASGI app (starlette's types, not the middleware's)
    app = require_bearer(
        inner,
        JWTVerifier(issuer=ISSUER, jwks=JWKS, leeway=0),
        resource=RESOURCE,
        authorization_servers=[ISSUER],
        scopes_supported=["mcp:read"],
        required_scopes=["mcp:read"],
    )
    with serve_in_thread(app) as base:
        yield base + "/mcp"


async def open_as(client: httpx.AsyncClient, url: str, auth: dict[str, str]) -> dict[str, str]:
    """`open_session` with a bearer token on both of its requests; the session's headers, token included."""
    init = rpc(
        1,
        "initialize",
        {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "pytest", "version": "0"}},
    )
    reply = await client.post(url, json=init, headers={**ACCEPT, **auth})
    assert reply.status_code == 200, reply.text
    session = {**ACCEPT, **auth, "Mcp-Session-Id": reply.headers["mcp-session-id"], "MCP-Protocol-Version": HANDSHAKE}
    note = await client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
    assert note.status_code == 202
    return session


async def test_session_refuses_another_principal() -> None:
    alice = {"Authorization": f"Bearer {token(sub='alice', client_id='app')}"}
    others = {
        "bob": {"Authorization": f"Bearer {token(sub='bob', client_id='app')}"},
        "alice via another client": {"Authorization": f"Bearer {token(sub='alice', client_id='other-app')}"},
    }
    with protected_everything() as url, anyio.fail_after(DEADLINE):
        async with httpx.AsyncClient(timeout=httpx.Timeout(10, read=None)) as client:
            as_alice = await open_as(client, url, alice)
            session = {k: v for k, v in as_alice.items() if k != "Authorization"}
            for who, auth in others.items():
                as_other = {**session, **auth}
                listed = await client.post(url, json=rpc(2, "tools/list"), headers=as_other)
                assert listed.status_code == 404, who
                assert listed.json()["error"]["code"] == -32600 and "result" not in listed.json()
                stream = await client.get(url, headers={**as_other, "Accept": "text/event-stream"})
                assert stream.status_code == 404, who
                assert (await client.delete(url, headers=as_other)).status_code == 404, who
            # The session is intact for its owner: requests, its GET stream, then DELETE.
            listed = await client.post(url, json=rpc(3, "tools/list"), headers=as_alice)
            assert listed.status_code == 200 and listed.json()["result"]["tools"]
            async with client.stream("GET", url, headers={**as_alice, "Accept": "text/event-stream"}) as stream:
                assert stream.status_code == 200
            assert (await client.delete(url, headers=as_alice)).status_code == 200
            assert (await client.post(url, json=rpc(4, "ping"), headers=as_alice)).status_code == 404
            # Bob's own session works, and alice cannot use it either.
            bobs = await open_as(client, url, others["bob"])
            assert (await client.post(url, json=rpc(5, "ping"), headers=bobs)).status_code == 200
            assert (await client.post(url, json=rpc(6, "ping"), headers={**bobs, **alice})).status_code == 404


# -- 6. slow peers ----------------------------------------------------------------------------------


@pytest.mark.parametrize("http", PARSERS)
async def test_body_that_stops_arriving_is_cut(http: str) -> None:
    """Content-Length: 1000, 11 bytes, silence: 408 within `body_timeout_seconds`, connection closed."""
    with serve_guarded(everything_app(body_timeout_seconds=0.5), http) as base, anyio.fail_after(DEADLINE):
        stream = await anyio.connect_tcp("127.0.0.1", port_of(base))
        async with stream:
            await stream.send(head(port_of(base), length=1000) + b'{"jsonrpc":')
            answer, took = await read_until_closed(stream, 5)
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        assert b'"code":-32600' in answer and b"Request Timeout" in answer
        assert 0.4 < took < 3, took
        await assert_answers(base + "/mcp")


async def test_body_that_stops_arriving_is_cut_behind_a_scope_policy_too() -> None:
    """A scope policy that reads the body (callable `required_scopes`) reads it under its own timeout."""
    inner: Any = everything_app()
    app = require_bearer(
        inner,
        JWTVerifier(issuer=ISSUER, jwks=JWKS, leeway=0),
        resource=RESOURCE,
        authorization_servers=[ISSUER],
        required_scopes=lambda request: ["mcp:read"],
        body_timeout_seconds=0.5,
    )
    with serve_in_thread(app) as base, anyio.fail_after(DEADLINE):
        stream = await anyio.connect_tcp("127.0.0.1", port_of(base))
        async with stream:
            await stream.send(head(port_of(base), length=1000) + b'{"jsonrpc":')
            answer, took = await read_until_closed(stream, 5)
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        assert 0.4 < took < 3, took


@pytest.mark.parametrize("http", PARSERS)
async def test_head_that_stops_arriving_is_cut(http: str) -> None:
    """Half a request line, a connection that sends nothing, and a keep-alive connection whose second
    request stops mid-header: each closed within `header_timeout_seconds`."""
    app = everything_app(header_timeout_seconds=0.5, keep_alive_seconds=30)
    with serve_guarded(app, http) as base, anyio.fail_after(DEADLINE):
        port = port_of(base)
        half = await anyio.connect_tcp("127.0.0.1", port)
        silent = await anyio.connect_tcp("127.0.0.1", port)
        again = await anyio.connect_tcp("127.0.0.1", port)
        async with half, silent, again:
            await half.send(b"POST /mcp HTTP/1.1\r\nHost: 127")
            ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
            await again.send(head(port, length=len(ping)) + ping)  # a whole request: answered
            first = await again.receive()
            assert first.startswith(b"HTTP/1.1 "), first[:100]
            await again.send(b"POST /mcp HTTP/1.1\r\nHost: 1")  # ... then half of the next one
            for stream in (half, silent, again):
                _, took = await read_until_closed(stream, 5)
                assert took < 3, took
        await assert_answers(base + "/mcp")


@pytest.mark.parametrize("http", PARSERS)
async def test_head_over_max_header_bytes_is_cut(http: str) -> None:
    with serve_guarded(everything_app(max_header_bytes=8192), http) as base, anyio.fail_after(DEADLINE):
        stream = await anyio.connect_tcp("127.0.0.1", port_of(base))
        async with stream:
            await stream.send(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            with contextlib.suppress(anyio.BrokenResourceError, ConnectionError):
                for _ in range(64):  # 64 KiB of headers, never finished
                    await stream.send(b"X-Filler: " + b"a" * 1000 + b"\r\n")
            answer, _ = await read_until_closed(stream, 5)
        assert answer == b"" or answer.startswith(b"HTTP/1.1 400"), answer[:200]
        await assert_answers(base + "/mcp")


@pytest.mark.parametrize("http", PARSERS)
async def test_connections_beyond_the_bound_are_refused(http: str) -> None:
    """`max_connections` connections are served; a request on one more is answered 503; once the
    others leave, a normal client gets through."""
    app = everything_app(max_connections=3, header_timeout_seconds=30)
    with serve_guarded(app, http) as base, anyio.fail_after(DEADLINE):
        url = base + "/mcp"
        port = port_of(base)
        held = [await anyio.connect_tcp("127.0.0.1", port) for _ in range(3)]
        for stream in held:
            await stream.send(b"POST /mcp HTTP/1.1\r\nHost: 127")  # slow heads, holding their slots
        await anyio.sleep(0.2)
        async with httpx.AsyncClient(timeout=10) as client:
            refused = await client.post(url, json=rpc(1, "ping"), headers=ACCEPT)
            assert refused.status_code == 503
        for stream in held:
            await stream.aclose()
        for _ in range(50):  # the server notices the closed connections
            async with httpx.AsyncClient(timeout=10) as client:
                reply = await client.post(url, json=rpc(1, "ping"), headers=ACCEPT)
            if reply.status_code != 503:
                break
            await anyio.sleep(0.1)
        await assert_answers(url)


# -- 7. smaller ones --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def everything() -> Iterator[str]:
    with serve_in_thread(everything_app()) as base:
        yield base + "/mcp"


async def test_last_event_id_that_is_no_event_id_is_400(everything: str) -> None:
    with anyio.fail_after(DEADLINE):
        async with httpx.AsyncClient(timeout=10) as client:
            session = await open_session(client, everything)
            arabic_indic_one = "\u0661".encode()  # a digit to str.isdigit, not to an event id
            for value in (b"9" * 5000, arabic_indic_one, b"\xb2", b"12a", b"-1", b"1e3"):
                headers: dict[str, Any] = {**session, "Accept": "text/event-stream", "Last-Event-ID": value}
                reply = await client.get(everything, headers=headers)
                assert reply.status_code == 400, value[:20]
                assert reply.json()["error"]["code"] == -32600
            assert (await client.post(everything, json=rpc(2, "ping"), headers=session)).status_code == 200
        await assert_answers(everything)


async def test_expired_session_get_stream_is_closed() -> None:
    """The GET stream of a session lives while the session does: kept open while the client is
    active, closed when the session expires, and never fed broadcasts afterwards."""
    app = everything_app(session_idle_seconds=1.0)
    server_host = host_for(app.server)
    with serve_in_thread(app) as base, anyio.fail_after(DEADLINE):
        url = base + "/mcp"
        async with httpx.AsyncClient(timeout=httpx.Timeout(10, read=None)) as client:
            listener = await open_session(client, url)
            runtime = app.sessions[listener["Mcp-Session-Id"]].runtime
            frames: list[Any] = []
            async with client.stream("GET", url, headers={**listener, "Accept": "text/event-stream"}) as stream:
                assert stream.status_code == 200
                started = time.monotonic()

                async def keep_active() -> None:  # a ping every 0.3 s for 1.6 s keeps the session
                    for n in range(6):
                        await client.post(url, json=rpc(f"k{n}", "ping"), headers=listener)
                        await anyio.sleep(0.3)

                async def read() -> None:
                    async for message in sse_messages(stream):
                        frames.append(message)

                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(keep_active)
                    with anyio.fail_after(6):
                        await read()  # returns when the server ends the stream
                lived = time.monotonic() - started
            assert 1.6 < lived < 4.5, lived
            assert frames == []
            assert listener["Mcp-Session-Id"] not in app.sessions
            assert runtime not in set(server_host.connections)  # no more broadcasts reach it
            expired = await client.post(url, json=rpc(9, "ping"), headers=listener)
            assert expired.status_code == 404
            # A broadcast from another session reaches nobody through the expired one.
            actor = await open_session(client, url)
            call = rpc(10, "tools/call", {"name": "test_trigger_tool_change", "arguments": {}})
            assert (await client.post(url, json=call, headers=actor)).status_code == 200
        await assert_answers(url)


async def test_host_and_origin_are_parsed_as_authorities(everything: str) -> None:
    port = port_of(everything)
    init = rpc(
        1,
        "initialize",
        {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "pytest", "version": "0"}},
    )
    with anyio.fail_after(DEADLINE):
        async with httpx.AsyncClient(timeout=10) as client:
            for host in (
                f"127.0.0.1:{port}@evil.example",
                "127.0.0.1@evil.example",
                f"localhost:{port}/evil.example",
                f"[::1]:{port}@evil.example",
                f"127.0.0.1:{port}:1",
                "127.0.0.1:99999",
                "[::1",
                "",
            ):
                refused = await client.post(everything, json=init, headers={**ACCEPT, "Host": host})
                assert refused.status_code == 403, host
                assert refused.json()["error"]["code"] == -32600
            for origin in (
                "http://127.0.0.1:80@evil.example",
                f"http://localhost:{port}@evil.example",
                "http://user@localhost",
                "http://localhost/path",
                "null",
                "file://localhost",
            ):
                refused = await client.post(everything, json=init, headers={**ACCEPT, "Origin": origin})
                assert refused.status_code == 403, origin
            for host, origin in ((f"LOCALHOST:{port}", f"http://LocalHost:{port}"), (f"127.0.0.1:{port}", None)):
                headers = {**ACCEPT, "Host": host, **({"Origin": origin} if origin else {})}
                assert (await client.post(everything, json=init, headers=headers)).status_code == 200
        await assert_answers(everything)


async def test_content_type_is_a_media_type_and_accept_is_honoured(everything: str) -> None:
    with anyio.fail_after(DEADLINE):
        async with httpx.AsyncClient(timeout=10) as client:
            session = await open_session(client, everything)
            body = b'{"jsonrpc":"2.0","id":2,"method":"ping"}'
            for content_type in (
                "application/json-patch+json",
                "application/jsonx",
                "text/plain; note=application/json",
                "application/x-www-form-urlencoded",
            ):
                refused = await client.post(everything, content=body, headers={**session, "Content-Type": content_type})
                assert refused.status_code == 415, content_type
                assert refused.json()["error"]["code"] == -32600
            for accept in ("text/html", "application/json;q=0, text/event-stream;q=0", "image/*", "*/*;q=0"):
                refused = await client.post(
                    everything, content=body, headers={**session, "Content-Type": "application/json", "Accept": accept}
                )
                assert refused.status_code == 406, accept
                assert refused.json()["error"]["code"] == -32600
            for content_type, accept in (
                ("Application/JSON; charset=utf-8", "application/json"),
                ("application/json", "text/event-stream"),
                ("application/json", "application/*"),
                ("application/json", "*/*"),
            ):
                headers = {**session, "Content-Type": content_type, "Accept": accept}
                ok = await client.post(everything, content=body, headers=headers)
                assert ok.status_code == 200, (content_type, accept)
            bare = {k: v for k, v in session.items() if k != "Accept"}  # no Accept: anything goes
            assert (await client.post(everything, json=rpc(3, "ping"), headers=bare)).status_code == 200
            lines = [*bare.items(), ("Content-Type", "application/json"), ("Accept", "text/html")]
            split = await client.post(everything, content=body, headers=[*lines, ("Accept", "application/json")])
            assert split.status_code == 200  # Accept over two lines is one list
        await assert_answers(everything)


def listen(n: int) -> dict[str, Any]:
    return rpc(f"sub-{n}", "subscriptions/listen", stateless({"notifications": {"toolsListChanged": True}}))


@contextlib.asynccontextmanager
async def open_listen(client: httpx.AsyncClient, url: str, n: int) -> AsyncIterator[httpx.Response]:
    """A `subscriptions/listen` stream held open (acknowledged) for the block."""
    async with client.stream("POST", url, json=listen(n), headers=stateless_headers("subscriptions/listen")) as stream:
        assert stream.status_code == 200
        messages = sse_messages(stream)  # kept: closing the generator would close the stream
        with anyio.fail_after(5):
            ack = await anext(messages)
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        yield stream


async def test_listen_streams_are_bounded() -> None:
    app = everything_app(max_listen_streams=2)
    with serve_in_thread(app) as base, anyio.fail_after(DEADLINE):
        url = base + "/mcp"
        headers = stateless_headers("subscriptions/listen")
        async with httpx.AsyncClient(timeout=httpx.Timeout(10, read=None)) as client:
            async with open_listen(client, url, 1), open_listen(client, url, 2):
                refused = await client.post(url, json=listen(3), headers=headers)
                assert refused.status_code == 503
                assert refused.json()["id"] == "sub-3" and refused.json()["error"]["code"] == -32603
                discover = await client.post(
                    url, json=rpc(4, "server/discover", stateless()), headers=stateless_headers("server/discover")
                )
                assert discover.status_code == 200  # other stateless requests are not affected
            # The two streams closed: their slots are free again (once the server has seen them go).
            for _ in range(50):
                if app.streamable._listen_streams == 0:  # pyright: ignore[reportPrivateUsage]
                    break
                await anyio.sleep(0.1)
            async with open_listen(client, url, 5), open_listen(client, url, 6):
                pass
        await assert_answers(url)


async def test_one_client_cannot_take_every_listen_stream() -> None:
    """Per-client fairness (hardening item 5): client X (127.0.0.2) opens its
    `max_listen_streams_per_client` streams, and one more is refused 429, -32050 naming the bound;
    client Y (127.0.0.1) still opens a listen stream and gets answers. The app's own bound is at
    most half of `max_connections`, so held streams leave connections for requests."""
    app = everything_app(max_connections=8, max_listen_streams=100, max_listen_streams_per_client=2)
    assert app.streamable.options.max_listen_streams == 4  # lowered to max_connections // 2
    with serve_guarded(app) as base, anyio.fail_after(DEADLINE):
        url = base + "/mcp"
        timeout = httpx.Timeout(10, read=None)
        x_transport = httpx.AsyncHTTPTransport(local_address="127.0.0.2")
        async with (
            httpx.AsyncClient(transport=x_transport, timeout=timeout) as x,
            httpx.AsyncClient(timeout=timeout) as y,
        ):
            async with open_listen(x, url, 1), open_listen(x, url, 2):
                refused = await x.post(url, json=listen(3), headers=stateless_headers("subscriptions/listen"))
                assert refused.status_code == 429
                error = refused.json()["error"]
                assert refused.json()["id"] == "sub-3" and error["code"] == -32050
                assert "max_listen_streams_per_client" in error["message"]
                assert error["data"] == {"bound": "max_listen_streams_per_client", "limit": 2}
                async with open_listen(y, url, 4):
                    discover = await y.post(
                        url, json=rpc(5, "server/discover", stateless()), headers=stateless_headers("server/discover")
                    )
                    assert discover.status_code == 200 and "result" in discover.json()
                    await assert_answers(url)
            for _ in range(50):  # X's streams closed: its slots are free again
                if not app.streamable._listens.held("127.0.0.2"):  # pyright: ignore[reportPrivateUsage]
                    break
                await anyio.sleep(0.1)
            async with open_listen(x, url, 6), open_listen(x, url, 7):
                pass


def test_the_listen_bound_leaves_connections_for_requests() -> None:
    """By default the app's listen bound is below the connection bound (half of it)."""
    app = everything_app()
    assert app.options.max_listen_streams < app.options.max_connections
    assert app.streamable.options.max_listen_streams == 500
    assert app.streamable.options.max_listen_streams_per_client == 100


class Flood(HandshakeServer):
    """A tool that broadcasts `count` list changes of `size` bytes each (to every GET stream)."""

    name, version = "flood", "1"
    declared_capabilities: ClassVar[Mapping[str, Any]] = {"tools": {"listChanged": True}}

    async def list_tools(self, params: Any, ctx: Any) -> Any:
        return hm.ListToolsResult(tools=[hm.Tool(name="flood", input_schema=hm.ToolInputSchema(type="object"))])

    async def call_tool(self, params: Any, ctx: Any) -> Any:
        arguments = params.arguments or {}
        for _ in range(int(arguments["count"])):
            await self.broadcast("notifications/tools/list_changed", {"_meta": {"pad": "x" * arguments["size"]}})
        return hm.CallToolResult(content=[hm.TextContent(text=str(arguments["count"]))])


async def test_get_stream_client_that_stops_reading_is_dropped() -> None:
    """A GET stream whose client stops reading holds at most `get_stream_queue_bytes` (plus what the
    sockets buffer): past it the stream is closed, and the session goes on."""
    app = create_app(Flood(), get_stream_queue_bytes=256 * 1024)
    with serve_in_thread(app) as base, anyio.fail_after(DEADLINE):
        url = base + "/mcp"
        async with httpx.AsyncClient(timeout=httpx.Timeout(10, read=None)) as client:
            session = await open_session(client, url)
            transport = app.sessions[session["Mcp-Session-Id"]].transport
            async with client.stream("GET", url, headers={**session, "Accept": "text/event-stream"}) as stream:
                assert stream.status_code == 200  # ... and never read
                flood = rpc(2, "tools/call", {"name": "flood", "arguments": {"count": 400, "size": 100_000}})
                reply = await client.post(url, json=flood, headers=session)
                assert reply.status_code == 200
                assert reply.json()["result"]["content"][0]["text"] == "400"  # the server kept going
                assert transport.standalone is None  # the stream was dropped part-way (40 MB were sent)
                assert transport.standalone_bytes <= 256 * 1024  # what it held when it was dropped
            # The session is intact: a new GET stream opens, requests are answered.
            async with client.stream("GET", url, headers={**session, "Accept": "text/event-stream"}) as again:
                assert again.status_code == 200
            assert (await client.post(url, json=rpc(3, "ping"), headers=session)).status_code == 200


async def test_a_duplicate_id_in_flight_leaves_the_first_request_its_progress(everything: str) -> None:
    """A second POST reusing the id of a request still in flight is refused (-32600) and does not take
    over the first request's stream: the first still gets all its progress and its result."""
    with anyio.fail_after(DEADLINE):
        async with httpx.AsyncClient(timeout=10) as client:
            headers = await open_session(client, everything)
            params = {"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "p"}}
            first = rpc(7, "tools/call", params)
            async with client.stream("POST", everything, json=first, headers=headers) as stream:
                messages = sse_messages(stream)
                frames = [await anext(messages)]  # the first progress: the request is in flight
                duplicate = await client.post(everything, json=first, headers=headers)
                assert duplicate.json()["error"]["code"] == -32600
                assert "already in use" in duplicate.json()["error"]["message"]
                frames += [message async for message in messages]
            progress = [f["params"]["progress"] for f in frames if f.get("method") == "notifications/progress"]
            assert progress == [0, 50, 100]
            assert frames[-1]["id"] == 7 and "result" in frames[-1]
            after = await client.post(everything, json=rpc(8, "tools/list"), headers=headers)
            assert after.json()["id"] == 8
