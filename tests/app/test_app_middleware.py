"""Middleware on the dispatch seam (issue 32, item 2): `@app.middleware` / `App(middleware=[...])` and
`use_middleware(server, ...)` on a stub-based server see each request (method, typed and raw params,
session, principal, protocol version), can short-circuit, transform params and results, and run in
order; the ready-made `Timing`, `RateLimit` (per client) and `Cache` (read-only results: resources,
tools listed with readOnlyHint, the 2026-07-28 ttlMs / cacheScope hints) do what they say; an app
without middleware puts nothing on the seam. At 2025-11-25 and 2026-07-28, in memory; over
Streamable HTTP with the official SDK client in tests/interop/test_app_features_sdk.py."""

from __future__ import annotations

import importlib
import importlib.util
import logging
from typing import Any

import anyio
import httpx
import pytest

from mcp_bindings.runtime.app import App, AppDefinitionError
from mcp_bindings.runtime.app.access import AccessGuard
from mcp_bindings.runtime.memory import connect_in_memory
from mcp_bindings.runtime.middleware import Cache, Call, MiddlewareFeature, Next, RateLimit, Timing, use_middleware
from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.rpc.errors import McpError
from mcp_bindings.runtime.server.host import host_for
from tests.support import REPO_ROOT
from tests.support.content import text_of
from tests.support.http import open_session, rpc, serve_in_thread, stateless, stateless_headers

pytestmark = pytest.mark.anyio

VERSIONS = ["2025-11-25", "2026-07-28"]


def _echo_server() -> Any:
    """A stub-based server: examples/echo_server.py's, written on the 2025-11-25 stub."""
    spec = importlib.util.spec_from_file_location("_echo_for_middleware", REPO_ROOT / "examples" / "echo_server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.make_server("2025-11-25")


def _client(version: str) -> Any:
    return importlib.import_module(f"{registry.load_version(version).__name__}.client").Client


@pytest.mark.parametrize("version", VERSIONS)
async def test_middleware_sees_transforms_and_short_circuits(version: str) -> None:
    seen: list[tuple[str, str | None, str, Any]] = []
    app = App("mw")

    @app.middleware
    async def record(call: Call, call_next: Next) -> Any:
        seen.append((call.method, call.target, call.protocol_version, call.raw))
        assert call.session.id and call.principal is None
        return await call_next(call)

    @app.middleware
    async def guard(call: Call, call_next: Next) -> Any:
        if call.target == "delete":  # short-circuit: the handler is not called
            return app.server.protocol.client_requests["tools/call"].result(
                content=[{"type": "text", "text": "refused by policy"}], is_error=True
            )
        if call.target == "shout":  # transform the params, then the result
            call.params = call.params.model_copy(update={"arguments": {"text": call.params.arguments["text"].upper()}})
            result = await call_next(call)
            bang = type(result.content[0])(type="text", text="!")
            return result.model_copy(update={"content": [*result.content, bang]})
        return await call_next(call)

    deleted: list[str] = []

    @app.tool
    def delete(path: str) -> str:
        deleted.append(path)
        return "deleted"

    @app.tool
    def shout(text: str) -> str:
        return text

    async with app.test_client(version) as client:
        refused = await client.call_tool(name="delete", arguments={"path": "/etc"})
        shouted = await client.call_tool(name="shout", arguments={"text": "hi"})
    assert refused.is_error and refused.content[0].text == "refused by policy" and deleted == []
    assert [block.text for block in shouted.content] == ["HI", "!"]
    assert ("tools/call", "delete", version, {"name": "delete", "arguments": {"path": "/etc"}}) in [
        (m, t, v, {k: r[k] for k in ("name", "arguments")}) for m, t, v, r in seen if m == "tools/call"
    ]
    assert [s[1] for s in seen if s[0] == "tools/call"] == ["delete", "shout"]


def test_middleware_after_the_app_serves_is_refused() -> None:
    app = App("late")

    @app.tool
    def ping() -> str:
        return "pong"

    assert app.server is not None
    with pytest.raises(AppDefinitionError, match="register middleware before it starts"):
        app.middleware(Timing())


def test_an_app_without_middleware_puts_nothing_on_the_seam() -> None:
    app = App("plain")

    @app.tool
    def ping() -> str:
        return "pong"

    assert not any(isinstance(f, MiddlewareFeature) for f in host_for(app.server).added)
    timed = App("timed", middleware=[Timing()])
    timed.tool(ping)
    # (Every app has its access guard, `app.access`: it passes requests on where no entry has a rule.)
    assert [type(f) for f in host_for(timed.server).added] == [AccessGuard, MiddlewareFeature]


@pytest.mark.parametrize("version", VERSIONS)
async def test_on_a_stub_based_server(version: str) -> None:
    server = _echo_server()
    timing = Timing()
    use_middleware(server, timing, RateLimit(rate=0.001, burst=2))
    async with connect_in_memory(server, _client(version), protocol_version=version) as client:
        assert (await client.call_tool(name="echo", arguments={"text": "a"})).content[0].text == "a"
        assert (await client.call_tool(name="echo", arguments={"text": "b"})).content[0].text == "b"
        with pytest.raises(McpError) as limited:
            await client.call_tool(name="echo", arguments={"text": "c"})
        await client.list_tools()  # not counted by the rate limit (tools/call only)
    assert limited.value.code == -32050
    assert limited.value.message.startswith("Rate limit reached: at most 0.001 tools/call requests per second")
    assert timing.times["tools/call"].calls == 3 and timing.times["tools/call"].errors == 1
    assert timing.times["tools/list"].calls == 1


@pytest.mark.parametrize("version", VERSIONS)
async def test_timing_logs_each_request(version: str, caplog: pytest.LogCaptureFixture) -> None:
    app = App("timed", middleware=[Timing()])

    @app.tool
    def ping() -> str:
        return "pong"

    caplog.set_level(logging.INFO, logger="mcp_bindings.runtime.middleware")
    async with app.test_client(version) as client:
        await client.call_tool(name="ping")
    (line,) = [r.getMessage() for r in caplog.records if r.name == "mcp_bindings.runtime.middleware"]
    assert line.startswith("tools/call ping: ") and line.endswith(f", ok (session {line.split('session ')[1]}")
    assert f", {version})" in line


async def test_rate_limit_is_per_client() -> None:
    app = App("limited", middleware=[RateLimit(rate=0.001, burst=1)])

    @app.tool
    def ping() -> str:
        return "pong"

    async with app.test_client("2025-11-25") as one, app.test_client("2025-11-25") as two:
        await one.call_tool(name="ping")
        await two.call_tool(name="ping")  # another session: its own bucket
        with pytest.raises(McpError, match="Rate limit reached"):
            await one.call_tool(name="ping")


@pytest.mark.parametrize("version", VERSIONS)
async def test_cache_keeps_read_only_results(version: str) -> None:
    cache = Cache(ttl=60)
    app = App("cached", middleware=[cache])
    runs: list[str] = []

    @app.tool(annotations={"readOnlyHint": True})
    def lookup(key: str) -> str:
        runs.append(f"lookup {key}")
        return key.upper()

    @app.tool
    def write(key: str) -> str:
        runs.append(f"write {key}")
        return "ok"

    @app.resource("config://app")
    def config() -> str:
        runs.append("config")
        return "debug=false"

    async with app.test_client(version) as client:
        await client.list_tools()  # the cache learns which tools are read-only
        for _ in range(2):
            assert (await client.call_tool(name="lookup", arguments={"key": "a"})).content[0].text == "A"
            await client.call_tool(name="write", arguments={"key": "a"})
            assert (await client.read_resource(uri="config://app")).contents[0].text == "debug=false"
        await client.call_tool(name="lookup", arguments={"key": "b"})
    assert runs == ["lookup a", "write a", "config", "write a", "lookup b"]
    assert (cache.hits, cache.misses) == (2, 3)


async def test_cache_follows_the_2026_hints() -> None:
    async def hints(call: Call, call_next: Next) -> Any:  # what a server says of its results at 2026-07-28
        result = await call_next(call)
        if call.target == "config://app":
            return result.model_copy(update={"ttl_ms": 60_000, "cache_scope": "public"})
        return result

    cache = Cache(ttl=0)  # nothing kept unless the result says how long
    app = App("hinted", protocol="2026-07-28", middleware=[cache, hints])
    reads: list[str] = []

    @app.resource("config://app")
    def config() -> str:
        reads.append("config")
        return "debug=false"

    @app.resource("config://volatile")
    def volatile() -> str:
        reads.append("volatile")
        return "now"

    async with app.test_client("2026-07-28") as one, app.test_client("2025-11-25") as two:
        for client in (one, two, one):
            assert text_of((await client.read_resource(uri="config://app")).contents[0]) == "debug=false"
            await client.read_resource(uri="config://volatile")
    assert reads == ["config", "volatile", "volatile", "volatile"]  # public for 60 s: kept for every client


@pytest.mark.parametrize("version", VERSIONS)
async def test_middleware_denies_with_tool_error_and_reads_the_lifespan(
    version: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 44, item 3: `raise ToolError(...)` in middleware denies a call in one line. A `tools/call`
    is answered with the tool execution error (`isError`, the message as its text), not -32603
    "Internal error" with a traceback; another method gets a JSON-RPC error naming it. The
    middleware reads the app's lifespan value (`call.lifespan`) and typed params (`Call[Params, State]`)."""
    from collections.abc import AsyncGenerator
    from contextlib import asynccontextmanager

    from mcp_bindings.runtime.app import ToolError
    from mcp_bindings.v2026_07_28.models import CallToolRequestParams

    @asynccontextmanager
    async def lifespan(app: App) -> AsyncGenerator[set[str]]:
        yield {"delete", "secret://key"}  # what the policy refuses

    app = App("deny", lifespan=lifespan)
    seen: list[tuple[str | int, bool]] = []

    @app.middleware
    async def policy(call: Call[CallToolRequestParams, set[str]], call_next: Next) -> Any:
        seen.append((call.request_id, isinstance(call.client_capabilities, dict)))
        if call.target in call.lifespan:
            raise ToolError(f"{call.target} is not allowed here")
        return await call_next(call)

    ran: list[str] = []

    @app.tool
    def delete(path: str) -> str:
        ran.append(f"delete {path}")
        return "gone"

    @app.tool
    def keep(path: str) -> str:
        return f"kept {path}"

    @app.resource("secret://key")
    def key() -> str:
        return "s3cr3t"

    caplog.set_level(logging.DEBUG)
    async with app.test_client(version) as client:
        denied = await client.call_tool(name="delete", arguments={"path": "/etc"})
        kept = await client.call_tool(name="keep", arguments={"path": "/tmp"})
        with pytest.raises(McpError) as refused:
            await client.read_resource(uri="secret://key")
    assert denied.is_error is True and text_of(denied.content[0]) == "delete is not allowed here" and ran == []
    assert kept.is_error is not True and text_of(kept.content[0]) == "kept /tmp"
    assert refused.value.code == -32602
    assert refused.value.message == "resources/read refused: secret://key is not allowed here"
    assert refused.value.data == {"method": "resources/read"}
    assert len(seen) == 3 and all(request_id is not None and caps for request_id, caps in seen)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]  # no traceback


@pytest.mark.parametrize("version", VERSIONS)
async def test_a_stub_based_servers_middleware_denies_with_tool_error(version: str) -> None:
    """`use_middleware` on a stub-based server: the same one-line denial; `call.lifespan` is None
    (such a server has no app lifespan)."""
    from mcp_bindings.runtime.errors import ToolError

    server = _echo_server()
    lifespans: list[Any] = []

    async def deny(call: Call, call_next: Next) -> Any:
        lifespans.append(call.lifespan)
        raise ToolError("echo is closed")

    deny.methods = {"tools/call"}  # type: ignore[attr-defined]
    use_middleware(server, Timing(), deny)
    async with connect_in_memory(server, _client(version), protocol_version=version) as client:
        result = await client.call_tool(name="echo", arguments={"text": "a"})
    assert result.is_error is True and result.content[0].text == "echo is closed" and lifespans == [None]


async def test_anonymous_clients_are_keyed_by_address_in_both_eras() -> None:
    """Issue 43, item 9, over Streamable HTTP: two anonymous 2026-07-28 clients, X (127.0.0.2) and Y
    (127.0.0.1), each get a bucket and cache entries of their own (before: one "anonymous" bucket
    and cache scope for every stateless client: Y's first call was refused, and Y was served X's
    cached result), and X's handshake session shares X's bucket (before: a fresh one per session)."""
    app = App("keyed", middleware=[RateLimit(rate=0.001, burst=1), Cache(ttl=60)])
    reads: list[str] = []

    @app.tool
    def ping() -> str:
        return "pong"

    @app.resource("config://mine")
    def mine() -> str:
        reads.append("mine")
        return f"read {len(reads)}"

    call = rpc(1, "tools/call", stateless({"name": "ping", "arguments": {}}))
    read = rpc(2, "resources/read", stateless({"uri": "config://mine"}))
    calling, reading = stateless_headers("tools/call", "ping"), stateless_headers("resources/read", "config://mine")
    with serve_in_thread(app.asgi()) as base, anyio.fail_after(20):
        url = base + "/mcp"
        x_transport = httpx.AsyncHTTPTransport(local_address="127.0.0.2")
        async with httpx.AsyncClient(transport=x_transport, timeout=10) as x, httpx.AsyncClient(timeout=10) as y:
            assert (await x.post(url, json=call, headers=calling)).json()["result"]["content"][0]["text"] == "pong"
            refused = await x.post(url, json=call, headers=calling)
            assert refused.status_code == 429 and "Rate limit reached" in refused.json()["error"]["message"]
            assert (await y.post(url, json=call, headers=calling)).json()["result"]["content"][0]["text"] == "pong"
            session = {**await open_session(x, url), "Accept": "application/json"}
            again = await x.post(url, json=rpc(3, "tools/call", {"name": "ping", "arguments": {}}), headers=session)
            assert again.json()["error"]["code"] == -32050  # X's handshake session: X's bucket
            texts = [
                (await client.post(url, json=read, headers=reading)).json()["result"]["contents"][0]["text"]
                for client in (x, x, y)
            ]
    assert texts == ["read 1", "read 1", "read 2"]  # X's entry served to X only
