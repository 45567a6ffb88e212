"""The one trivial server both official peers serve: a single ``echo`` tool.

Built on the official SDK's low-level ``Server`` API (mcp==2.3.0): handlers are
passed to the constructor as ``on_list_tools`` / ``on_call_tool`` and receive
``(ctx, params)`` with ``params`` already validated into the SDK's models.
"""

from __future__ import annotations

import mcp_types as types
from mcp.server import Server
from mcp.shared.exceptions import MCPError

ECHO_TOOL = types.Tool(
    name="echo",
    description="Return the text argument unchanged.",
    input_schema={
        "type": "object",
        "properties": {"text": {"type": "string", "description": "Text to echo back."}},
        "required": ["text"],
    },
)


async def _list_tools(ctx, params):  # noqa: ANN001 - SDK handler signature
    return types.ListToolsResult(tools=[ECHO_TOOL])


async def _call_tool(ctx, params: types.CallToolRequestParams):  # noqa: ANN001
    if params.name != "echo":
        raise MCPError(code=types.INVALID_PARAMS, message=f"unknown tool {params.name!r}")
    text = (params.arguments or {}).get("text", "")
    return types.CallToolResult(content=[types.TextContent(type="text", text=str(text))])


def build_server() -> Server:
    """A low-level server with the SDK's defaults (OTel middleware included, as shipped)."""
    return Server("bench-official", version="2.3.0-bench", on_list_tools=_list_tools, on_call_tool=_call_tool)
