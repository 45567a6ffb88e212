"""A Streamable HTTP server built on the official MCP Python SDK (mcp==2.3.0, low-level `Server` and
its `streamable_http_app()`, served by uvicorn on 127.0.0.1), for the HTTP interop tests: our
`connect_http` client drives it at 2025-11-25 (handshake) and 2026-07-28 (stateless). Runs in the
SDK's venv, never in the project's.

    <sdk-python> tests/peers/http_sdk_server.py --port 8123      # http://127.0.0.1:8123/mcp
    <sdk-python> tests/peers/http_sdk_server.py --fd N           # on the inherited listening socket N

Tools: echo {text} -> text, add {a, b} -> text of a + b.
"""

from __future__ import annotations

import argparse
import warnings

import mcp_types as types
import uvicorn
from mcp.server import Server
from mcp.shared.exceptions import MCPError

warnings.simplefilter("ignore")

TOOLS = [
    types.Tool(
        name="echo",
        description="Echo the text back",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    ),
    types.Tool(
        name="add",
        description="Add two numbers",
        input_schema={"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}},
    ),
]


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx, params: types.CallToolRequestParams):
    args = params.arguments or {}
    if params.name == "echo":
        value = str(args.get("text", ""))
    elif params.name == "add":
        value = str(args.get("a", 0) + args.get("b", 0))
    else:
        raise MCPError(code=types.INVALID_PARAMS, message=f"unknown tool {params.name!r}")
    return types.CallToolResult(content=[types.TextContent(type="text", text=value)])


def main() -> None:
    parser = argparse.ArgumentParser()
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--port", type=int)
    where.add_argument("--fd", type=int, help="a listening socket inherited from the test")
    args = parser.parse_args()
    server = Server("sdk-http-server", version="2.3.0-test", on_list_tools=list_tools, on_call_tool=call_tool)
    app = server.streamable_http_app(host="127.0.0.1")
    if args.fd is not None:
        from inherited_socket import serve_on_fd  # beside this script

        serve_on_fd(app, args.fd)
    else:
        uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
