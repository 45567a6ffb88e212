"""A minimal stdio MCP server on the newest stub: one `echo` tool. Run: python examples/echo_server.py"""

from __future__ import annotations

from mcp_bindings.runtime.context import RequestContext
from mcp_bindings.runtime.stdio import serve_stdio
from mcp_bindings.v2026_07_28 import models as m
from mcp_bindings.v2026_07_28.server import Server


class EchoServer(Server):
    name = "echo"
    version = "1.0.0"

    async def list_tools(self, params: m.PaginatedRequestParams, ctx: RequestContext) -> m.ListToolsResult:
        schema = m.ToolInputSchema(type="object", properties={"text": {"type": "string"}}, required=["text"])
        return m.ListToolsResult(tools=[m.Tool(name="echo", description="Echo the text back", input_schema=schema)])

    async def call_tool(
        self, params: m.CallToolRequestParams, ctx: RequestContext
    ) -> m.CallToolResult | m.InputRequiredResult:
        text = str((params.arguments or {}).get("text", ""))
        return m.CallToolResult(content=[m.TextContent(type="text", text=text)])


if __name__ == "__main__":
    serve_stdio(EchoServer())
