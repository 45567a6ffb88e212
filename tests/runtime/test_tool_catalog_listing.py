"""The tool catalog keeps what tools/list gave (`protocol.tool_catalog.ToolListing`, issue #36): each
listing is written to JSON once and its definitions are made only when a catalog does not hold that
very listing already, so a server answering the same 5,000 tools again does no per-tool work. What
must still hold: a listing changed in any way (a tool changed in place, added, removed) replaces
what the catalog holds, and a list change (`notifications/tools/list_changed`) empties it, even when
the next listing is the same JSON as the one before."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from mcp_bindings.runtime.protocol.tool_catalog import TOOLS_LIST_CHANGED
from mcp_bindings.runtime.rpc import jsonrpc
from mcp_bindings.runtime.rpc.session import Session
from mcp_bindings.runtime.server.host import host_for
from mcp_bindings.runtime.server.runtime import ServerRuntime
from mcp_bindings.v2025_11_25 import models as m
from mcp_bindings.v2025_11_25.server import Server

pytestmark = pytest.mark.anyio

INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}


def tool(name: str, kind: str = "string") -> m.Tool:
    return m.Tool(name=name, input_schema=m.ToolInputSchema(type="object", properties={"x": {"type": kind}}))


class Lister(Server):
    name = "lister"
    version = "1"

    def __init__(self) -> None:
        super().__init__()
        self.result = m.ListToolsResult(tools=[tool("a"), tool("b")])

    async def list_tools(self, params: Any, ctx: Any) -> Any:
        return self.result

    async def call_tool(self, params: m.CallToolRequestParams, ctx: Any) -> Any:
        return m.CallToolResult(content=[m.TextContent(text="called")])


class Connection:
    def __init__(self, server: Lister) -> None:
        self.runtime = ServerRuntime(server)
        self.session = Session(None, self.runtime)  # type: ignore[arg-type]  # no transport
        self.number = 0

    async def request(self, method: str, params: Any = None) -> Any:
        self.number += 1
        answer = await self.runtime.on_request(jsonrpc.Request(self.number, method, params, {}), self.session)
        return orjson.loads(answer)

    async def refused(self, name: str, arguments: dict[str, Any]) -> bool:
        result = await self.request("tools/call", {"name": name, "arguments": arguments})
        return result.get("isError") is True and "Input validation error" in result["content"][0]["text"]


async def connected(server: Lister) -> Connection:
    connection = Connection(server)
    await connection.request("initialize", INIT)
    return connection


def schema_of(server: Lister, name: str) -> Any:
    definition = host_for(server).tool_catalog.tools[name]
    return orjson.loads(definition.input_source or b"null")


async def test_the_same_listing_again_keeps_the_definitions() -> None:
    server = Lister()
    connection = await connected(server)
    await connection.request("tools/list")
    catalog = host_for(server).tool_catalog
    kept = dict(catalog.tools)
    assert await connection.refused("a", {"x": 1})  # resolved (compiled) on first use
    await connection.request("tools/list")
    assert catalog.tools == kept and all(catalog.tools[n] is kept[n] for n in kept)
    assert catalog.tools["a"].accepts is not None  # what was compiled is kept


async def test_a_tool_changed_in_place_is_seen_by_the_next_listing() -> None:
    server = Lister()
    connection = await connected(server)
    await connection.request("tools/list")
    assert await connection.refused("a", {"x": 1})
    server.result.tools[0].input_schema.properties = {"x": {"type": "integer"}}  # in place: no hook sees it
    await connection.request("tools/list")
    assert schema_of(server, "a")["properties"] == {"x": {"type": "integer"}}
    assert not await connection.refused("a", {"x": 1})
    assert await connection.refused("a", {"x": "one"})


async def test_a_tool_added_after_a_listing_is_checked_once_listed() -> None:
    server = Lister()
    connection = await connected(server)
    await connection.request("tools/list")
    assert "c" not in host_for(server).tool_catalog.tools
    server.result.tools.append(tool("c", "boolean"))
    await connection.request("tools/list")
    assert schema_of(server, "c")["properties"] == {"x": {"type": "boolean"}}
    assert await connection.refused("c", {"x": "yes"})


async def test_a_list_change_empties_the_catalog_and_the_same_listing_fills_it_again() -> None:
    server = Lister()
    first = await connected(server)
    await first.request("tools/list")
    host = host_for(server)
    host.list_changed(TOOLS_LIST_CHANGED)
    assert host.tool_catalog.tools == {} and host.tool_catalog.listing is None
    second = await connected(server)  # a connection that never listed reads the server's catalog
    assert not await second.refused("a", {"x": 1})  # nothing listed since the change: not checked
    await first.request("tools/list")  # the very same JSON as before the change
    assert set(host.tool_catalog.tools) == {"a", "b"}
    assert await second.refused("a", {"x": 1})


async def test_each_connection_and_the_server_take_a_listing_once() -> None:
    server = Lister()
    one, two = await connected(server), await connected(server)
    await one.request("tools/list")
    shared = host_for(server).tool_catalog.tools["b"]
    await two.request("tools/list")
    assert host_for(server).tool_catalog.tools["b"] is shared  # the same listing: kept
    assert await two.refused("b", {"x": 2}) and await one.refused("b", {"x": 2})
