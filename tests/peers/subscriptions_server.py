"""A stdio server with subscribable resources, for the proxy's subscription tests (issue 32): written
against the 2025-11-25 stub and served by `serve_stdio` at every version, so a client reaches it at
2024-11-05 (`resources/subscribe`) or 2026-07-28 (`subscriptions/listen` with `resourceSubscriptions`).

Spawned with `sys.executable tests/peers/subscriptions_server.py`; `MCP_TEST_NO_SUBSCRIBE=1`: the
server does not offer subscriptions (its `resources` capability has no `subscribe`).

Resources `sub://a` and `sub://b`. Tools:
  touch {uri}  -> sends notifications/resources/updated for the uri to whoever subscribed to it;
                  returns how many clients got it
  state {}     -> JSON: "requests", the resources/subscribe and /unsubscribe requests its handlers
                  served ("subscribe sub://a", ...); "holders", each change of how many of its
                  clients' subscriptions (requests or listen streams) hold a URI ("sub://a 1", ...)
"""

from __future__ import annotations

import os
from typing import Any

import orjson

from mcp_bindings.runtime.protocol.context import RequestContext
from mcp_bindings.runtime.rpc.errors import INVALID_PARAMS, McpError
from mcp_bindings.runtime.server.host import host_for
from mcp_bindings.runtime.server.notifications import RESOURCE_UPDATED
from mcp_bindings.runtime.stdio.serve import serve_stdio
from mcp_bindings.v2025_11_25 import models as m
from mcp_bindings.v2025_11_25.server import Server

URIS = ["sub://a", "sub://b"]
SUBSCRIBE = os.environ.get("MCP_TEST_NO_SUBSCRIBE") != "1"


def _text(value: Any) -> m.CallToolResult:
    return m.CallToolResult(content=[m.TextContent(type="text", text=orjson.dumps(value).decode())])


class PlainServer(Server):
    """Its resources without subscriptions."""

    name = "subscriptions-test-server"
    version = "1.0.0"
    declared_capabilities = {"tools": {}, "resources": {"listChanged": True}}

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[str] = []
        self.holders: list[str] = []
        host_for(self).subscriptions.watch(lambda uri, holders: self.holders.append(f"{uri} {holders}"))

    async def list_tools(self, params: m.PaginatedRequestParams | None, ctx: RequestContext) -> m.ListToolsResult:
        schema = m.ToolInputSchema(type="object")
        return m.ListToolsResult(tools=[m.Tool(name=name, input_schema=schema) for name in ("touch", "state")])

    async def call_tool(self, params: m.CallToolRequestParams, ctx: RequestContext) -> m.CallToolResult:
        if params.name == "touch":
            return _text(await self.broadcast(RESOURCE_UPDATED, {"uri": str((params.arguments or {}).get("uri"))}))
        if params.name == "state":
            return _text({"requests": self.requests, "holders": self.holders})
        raise McpError(INVALID_PARAMS, f"Unknown tool: {params.name}")

    async def list_resources(
        self, params: m.PaginatedRequestParams | None, ctx: RequestContext
    ) -> m.ListResourcesResult:
        return m.ListResourcesResult(resources=[m.Resource(uri=uri, name=uri[6:]) for uri in URIS])

    async def read_resource(self, params: m.ReadResourceRequestParams, ctx: RequestContext) -> m.ReadResourceResult:
        return m.ReadResourceResult(contents=[m.TextResourceContents(uri=params.uri, text=f"content of {params.uri}")])


class SubscriptionsServer(PlainServer):
    declared_capabilities = {"tools": {}, "resources": {"subscribe": True, "listChanged": True}}

    async def subscribe_resource(self, params: m.SubscribeRequestParams, ctx: RequestContext) -> m.EmptyResult:
        self.requests.append(f"subscribe {params.uri}")
        return {}  # type: ignore[return-value]  # m.EmptyResult is an alias (not callable)

    async def unsubscribe_resource(self, params: m.UnsubscribeRequestParams, ctx: RequestContext) -> m.EmptyResult:
        self.requests.append(f"unsubscribe {params.uri}")
        return {}  # type: ignore[return-value]


if __name__ == "__main__":
    serve_stdio(SubscriptionsServer() if SUBSCRIBE else PlainServer())
