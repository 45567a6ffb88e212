"""SEP-2243 header mirrors read the server host's one tool catalog (issue 29, item 6): what the
server's tools/list showed any client, or what the authoring layer declared. No synthetic tools/list
runs through the server; a tools list change invalidates the catalog in one place."""

from __future__ import annotations

from typing import Annotated, Any

import httpx
import pytest
from pydantic import Field

from mcp_bindings.runtime.app import App
from mcp_bindings.runtime.http.app import create_app
from mcp_bindings.runtime.server.host import host_for
from mcp_bindings.v2026_07_28 import models as m
from mcp_bindings.v2026_07_28.server import RequestContext, Server
from tests.support.http import stateless, stateless_headers

pytestmark = pytest.mark.anyio

REGION = {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}
PLAIN = {"type": "object", "properties": {"region": {"type": "string"}}}


class Regions(Server):
    """A stub-based server whose one tool's x-mcp-header annotation can be dropped at run time."""

    name = "regions"
    version = "1"
    declared_capabilities = {"tools": {"listChanged": True}}

    def __init__(self) -> None:
        super().__init__()
        self.schema: dict[str, Any] = REGION
        self.listings = 0

    async def list_tools(self, params: m.PaginatedRequestParams, ctx: RequestContext) -> m.ListToolsResult:
        self.listings += 1
        return m.ListToolsResult(tools=[m.Tool(name="where", input_schema=m.ToolInputSchema(**self.schema))])

    async def call_tool(self, params: m.CallToolRequestParams, ctx: RequestContext) -> m.CallToolResult:
        region = (params.arguments or {}).get("region")
        return m.CallToolResult(content=[m.TextContent(type="text", text=f"region={region}")])


def _call(region: str) -> dict[str, Any]:
    params = stateless({"name": "where", "arguments": {"region": region}})
    return {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}


async def _post(http: httpx.AsyncClient, body: dict[str, Any], header: str | None) -> httpx.Response:
    name = body["params"].get("name")
    headers = stateless_headers(body["method"], name)
    if header is not None:
        headers["Mcp-Param-Region"] = header
    return await http.post("/mcp", json=body, headers=headers)


def _client(app: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1")


async def test_a_stub_server_checks_headers_against_what_it_listed_and_never_lists_on_its_own() -> None:
    server = Regions()
    async with _client(create_app(server)) as http:
        # Before any client listed: the server has not told anyone the header; not checked, not probed.
        assert (await _post(http, _call("eu"), None)).status_code == 200
        assert server.listings == 0
        listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": stateless()}
        assert (await _post(http, listing, None)).status_code == 200
        assert server.listings == 1 and host_for(server).tool_catalog.tools["where"].headers == {"region": "Region"}
        refused = await _post(http, _call("eu"), None)
        assert refused.status_code == 400
        assert refused.json()["error"]["code"] == -32020
        assert "Mcp-Param-Region is required" in refused.json()["error"]["message"]
        assert (await _post(http, _call("eu"), "us")).status_code == 400
        assert (await _post(http, _call("eu"), "eu")).status_code == 200
        assert server.listings == 1  # the calls read the catalog: no tools/list of the runtime's own

        # The tool changes and the server says so: the catalog forgets what was listed.
        server.schema = PLAIN
        await server.broadcast("notifications/tools/list_changed")
        assert host_for(server).tool_catalog.tools == {}
        assert (await _post(http, _call("eu"), None)).status_code == 200
        assert (await _post(http, listing, None)).status_code == 200
        assert host_for(server).tool_catalog.tools["where"].headers == {}
        assert (await _post(http, _call("eu"), None)).status_code == 200


async def test_an_app_declares_its_tools_so_headers_are_checked_before_any_listing() -> None:
    app = App("regions", protocol="2026-07-28")

    @app.tool()
    def where(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]) -> str:
        return f"region={region}"

    async with _client(app.asgi()) as http:
        refused = await _post(http, _call("eu"), None)
        assert refused.status_code == 400 and refused.json()["error"]["code"] == -32020
        answer = await _post(http, _call("eu"), "=?base64?ZXU=?=")
        assert answer.status_code == 200, answer.text
        assert answer.json()["result"]["content"][0]["text"] == "region=eu"

        # A removed tool leaves the declared catalog with the list change (re-declared, not forgotten).
        app.remove_tool("where")
        assert "where" not in host_for(app.server).tool_catalog.tools
