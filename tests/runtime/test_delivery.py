"""Every notification reaches exactly the client it is for: two clients of one server object, on each
transport that serves several clients (in memory, Streamable HTTP, legacy HTTP+SSE). Only A
subscribes or is elicited; B receives nothing of A's; each sees its own per-client state."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from mcp_bindings.runtime.client.http import connect_http, connect_sse
from mcp_bindings.runtime.http.app import create_app
from mcp_bindings.runtime.memory import connect_in_memory
from mcp_bindings.v2025_11_25 import models as m
from mcp_bindings.v2025_11_25.client import ClientHandlers
from mcp_bindings.v2025_11_25.server import Server
from tests.support.http import serve_in_thread

pytestmark = pytest.mark.anyio
URI = "test://a"


class Resources(Server):
    """Serves one resource, lets clients subscribe to it, and has tools that notify and count."""

    name, version = "delivery", "1.0.0"
    declared_capabilities = {"resources": {"subscribe": True}}

    async def list_resources(self, params: Any, ctx: Any) -> m.ListResourcesResult:
        return m.ListResourcesResult(resources=[m.Resource(uri=URI, name="a")])

    async def read_resource(self, params: Any, ctx: Any) -> m.ReadResourceResult:
        return m.ReadResourceResult(contents=[m.TextResourceContents(uri=params.uri, text="a")])

    async def subscribe_resource(self, params: Any, ctx: Any) -> Any:
        return m.Result()

    async def unsubscribe_resource(self, params: Any, ctx: Any) -> Any:
        return m.Result()

    async def list_tools(self, params: Any, ctx: Any) -> m.ListToolsResult:
        schema = m.ToolInputSchema(type="object")
        return m.ListToolsResult(tools=[m.Tool(name=n, input_schema=schema) for n in ("touch", "count", "finish")])

    async def call_tool(self, params: Any, ctx: Any) -> m.CallToolResult:
        if params.name == "touch":  # the resource changed: its subscribers hear of it
            await ctx.notify("notifications/resources/updated", {"uri": URI})
            text = "touched"
        elif params.name == "count":  # per-client state
            ctx.session.state["n"] = ctx.session.state.get("n", 0) + 1
            text = str(ctx.session.state["n"])
        else:  # a URL elicitation of this client completed: only this client, if it can take it
            await ctx.notify("notifications/elicitation/complete", {"elicitationId": f"e-{ctx.session.id}"})
            text = "sent" if ctx.session.allows("notifications/elicitation/complete") else "not allowed"
        return m.CallToolResult(content=[m.TextContent(text=text)])


class Recorder(ClientHandlers):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, Any]] = []

    async def elicit(self, params: Any, ctx: Any) -> m.ElicitResult:
        return m.ElicitResult(action="decline")

    async def on_resource_updated(self, params: Any, ctx: Any) -> None:
        self.seen.append(("updated", params.uri))

    async def on_elicitation_complete(self, params: Any, ctx: Any) -> None:
        self.seen.append(("elicitation", params.elicitation_id))


class UrlRecorder(Recorder):
    """Also declares URL-mode elicitation (so it may get notifications/elicitation/complete)."""

    declared_capabilities = {"elicitation": {"url": {}}}


def _client(version: str) -> Any:
    package = "v2025_11_25" if version == "2025-11-25" else "v2024_11_05"
    return importlib.import_module(f"mcp_bindings.{package}.client").Client


@contextlib.asynccontextmanager
async def two_clients(transport: str, server: Resources) -> AsyncIterator[tuple[Any, Any, Recorder, Recorder]]:
    version = "2024-11-05" if transport == "sse" else "2025-11-25"
    a: Recorder = UrlRecorder() if version != "2024-11-05" else Recorder()  # 2024-11-05: no elicitation
    b = Recorder()
    async with contextlib.AsyncExitStack() as stack:
        if transport == "memory":
            clients = [
                await stack.enter_async_context(connect_in_memory(server, _client(version), handlers=h)) for h in (a, b)
            ]
        else:
            base = stack.enter_context(serve_in_thread(create_app(server)))
            connect: Any = connect_http if transport == "http" else connect_sse
            url = f"{base}/mcp" if transport == "http" else f"{base}/sse"
            clients = [
                await stack.enter_async_context(connect(url, _client(version), handlers=h, protocol_version=version))
                for h in (a, b)
            ]
        yield clients[0], clients[1], a, b


async def _text(client: Any, tool: str) -> str:
    result = await client.call_tool(name=tool, arguments={})
    return str(result.content[0].text)


async def _settle() -> None:
    await anyio.sleep(0.3)  # notifications travel on their own stream; give them time to arrive


@pytest.mark.parametrize("transport", ["memory", "http", "sse"])
async def test_resource_updates_reach_only_subscribers(transport: str) -> None:
    server = Resources()
    with anyio.fail_after(30):
        async with two_clients(transport, server) as (client_a, client_b, a, b):
            await client_a.subscribe_resource(uri=URI)
            assert await _text(client_b, "touch") == "touched"  # B changes it, A hears of it
            await _settle()
            assert a.seen == [("updated", URI)]
            assert b.seen == []
            await client_a.unsubscribe_resource(uri=URI)
            await _text(client_b, "touch")
            await _settle()
            assert a.seen == [("updated", URI)]  # nothing more after unsubscribing


@pytest.mark.parametrize("transport", ["memory", "http", "sse"])
async def test_each_client_has_its_own_state(transport: str) -> None:
    with anyio.fail_after(30):
        async with two_clients(transport, Resources()) as (client_a, client_b, _, _):
            assert [await _text(client_b, "count") for _ in range(3)] == ["1", "2", "3"]
            assert await _text(client_a, "count") == "1"


@pytest.mark.parametrize("transport", ["memory", "http"])
async def test_elicitation_complete_goes_to_its_client_only_and_only_if_declared(transport: str) -> None:
    with anyio.fail_after(30):
        async with two_clients(transport, Resources()) as (client_a, client_b, a, b):
            assert await _text(client_a, "finish") == "sent"
            assert await _text(client_b, "finish") == "not allowed"  # B did not declare elicitation.url
            await _settle()
            assert [kind for kind, _ in a.seen] == ["elicitation"]
            assert b.seen == []


# -- a session our server expired is re-established by our client -----------------------------------


async def test_client_opens_a_new_session_after_the_server_expired_its_own() -> None:
    app = create_app(Resources(), session_idle_seconds=0.5)
    with anyio.fail_after(30), serve_in_thread(app) as base:
        async with connect_http(f"{base}/mcp", _client("2025-11-25"), handlers=Recorder()) as client:
            assert await _text(client, "count") == "1"
            first = next(iter(app.sessions))
            await anyio.sleep(1.6)  # idle past the limit; the next request's sweep expires the session
            assert await _text(client, "count") == "1"  # answered, in a new session with fresh state
            assert first not in app.sessions and len(app.sessions) == 1
            await client.subscribe_resource(uri=URI)  # the new session works for everything
            assert await _text(client, "touch") == "touched"
