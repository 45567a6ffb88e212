"""A server on this project's runtime for the fast contract tests (`tests/contract/test_contract.py`): its
tools are listed one per page (so every page must be read), and `CONTRACT_MODE` makes it bad input:

  (unset)      tools `get-user.v2` {id: integer, verbose?: boolean} with an output schema, and `ping`
  bad_schema   a tool whose inputSchema is not valid JSON Schema (`type: 5`)
  no_tools     the `tools` capability with an empty list
  collide      tools `a-b` and `a_b` (one identifier)

Spawned with `sys.executable tests/peers/contract_server.py` (stdio) or `... --http PORT`.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from mcp_bindings.runtime.protocol.context import RequestContext
from mcp_bindings.runtime.protocol.pagination import paginate
from mcp_bindings.v2025_11_25 import models as m
from mcp_bindings.v2025_11_25.server import Server

MODE = os.environ.get("CONTRACT_MODE", "")
USER = {
    "type": "object",
    "properties": {"id": {"type": "integer", "description": "The user id."}, "verbose": {"type": "boolean"}},
    "required": ["id"],
}
USER_OUT = {
    "type": "object",
    "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
    "required": ["id", "name"],
}
EMPTY = {"type": "object"}


def _tools() -> list[m.Tool]:
    def tool(name: str, schema: dict[str, Any], output: dict[str, Any] | None = None) -> m.Tool:
        return m.Tool.model_validate(
            {"name": name, "description": f"The {name} tool.", "inputSchema": schema}
            | ({"outputSchema": output} if output else {})
        )

    if MODE == "bad_schema":
        return [tool("broken", {"type": "object", "properties": {"x": {"type": 5}}})]
    if MODE == "no_tools":
        return []
    if MODE == "collide":
        return [tool("a-b", EMPTY), tool("a_b", EMPTY)]
    return [tool("get-user.v2", USER, USER_OUT), tool("ping", EMPTY)]


class ContractServer(Server):
    name, version = "contract-test", "1.0.0"
    validate_tools = False  # the bad schemas must reach the client

    async def list_tools(self, params: m.PaginatedRequestParams | None, ctx: RequestContext) -> m.ListToolsResult:
        page, cursor = paginate(_tools(), params.cursor if params else None, 1, scope="tools")
        return m.ListToolsResult(tools=page, next_cursor=cursor)

    async def call_tool(self, params: m.CallToolRequestParams, ctx: RequestContext) -> m.CallToolResult:
        args = params.arguments or {}
        if params.name == "get-user.v2":
            if args.get("id") == 0:
                return m.CallToolResult(content=[m.TextContent(type="text", text="no user 0")], is_error=True)
            user = {"id": args["id"], "name": "Ada" + ("!" if args.get("verbose") else "")}
            return m.CallToolResult(content=[m.TextContent(type="text", text="ok")], structured_content=user)
        return m.CallToolResult(content=[m.TextContent(type="text", text="pong")])


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        from mcp_bindings.runtime.http.serving import serve_http

        serve_http(ContractServer(), port=int(sys.argv[2]), http="h11", loop="asyncio")
    else:
        from mcp_bindings.runtime.stdio.serve import serve_stdio

        serve_stdio(ContractServer())
