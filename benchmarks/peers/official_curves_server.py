"""Official MCP Python SDK (mcp==2.3.0) twin of ``benchmarks/curves/ours_server.py`` for the scaling
curves: the low-level ``Server`` with the same tools (``echo``, ``sleep``, ``tool_0`` .. ``tool_<N-1>``)
and resource (``blob://payload``, S bytes of text), stdio or Streamable HTTP on 127.0.0.1
(``json_response=True``, as the round trips run it).

Run: ``<official-venv>/bin/python benchmarks/peers/official_curves_server.py [--fd FD] [--tools N]
[--resource-bytes S]``.
"""

from __future__ import annotations

import argparse
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server

PAYLOAD_URI = "blob://payload"


def build(tools: int, resource_bytes: int) -> Server:
    def schema(**properties: Any) -> dict[str, Any]:
        return {"type": "object", "properties": properties}

    listed = types.ListToolsResult(
        tools=[
            types.Tool(name="echo", input_schema=schema(text={"type": "string"})),
            types.Tool(name="sleep", input_schema=schema(ms={"type": "number"})),
            *(
                types.Tool(
                    name=f"tool_{i}",
                    description=f"tool_{i}: echo the text",
                    input_schema=schema(text={"type": "string"}, region={"type": "string"}),
                )
                for i in range(tools)
            ),
        ]
    )
    payload = "x" * resource_bytes
    resources = types.ListResourcesResult(
        resources=[types.Resource(name="payload", uri=PAYLOAD_URI, mime_type="text/plain")]
    )

    async def list_tools(ctx, params):  # noqa: ANN001, ANN202 - SDK handler signature
        return listed

    async def call_tool(ctx, params: types.CallToolRequestParams):  # noqa: ANN001, ANN202
        arguments = params.arguments or {}
        if params.name == "sleep":
            await anyio.sleep(float(arguments.get("ms", 10)) / 1000)
            return types.CallToolResult(content=[types.TextContent(type="text", text="ok")])
        return types.CallToolResult(content=[types.TextContent(type="text", text=str(arguments.get("text", "")))])

    async def list_resources(ctx, params):  # noqa: ANN001, ANN202
        return resources

    async def read_resource(ctx, params: types.ReadResourceRequestParams):  # noqa: ANN001, ANN202
        contents = types.TextResourceContents(uri=params.uri, mime_type="text/plain", text=payload)
        return types.ReadResourceResult(contents=[contents])

    return Server(
        "bench-official-curves",
        version="2.3.0-bench",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--fd", type=int, help="serve Streamable HTTP on this inherited socket (bound on 127.0.0.1 by the harness)"
    )
    parser.add_argument("--tools", type=int, default=0)
    parser.add_argument("--headers", action="store_true", help="accepted and ignored (no x-mcp-header support)")
    parser.add_argument("--resource-bytes", type=int, default=1024)
    args = parser.parse_args()
    server = build(args.tools, args.resource_bytes)
    if args.fd is None:
        from mcp.server.stdio import stdio_server

        async def run() -> None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())

        anyio.run(run)
        return
    import uvicorn

    app = server.streamable_http_app(json_response=True, host="127.0.0.1")
    uvicorn.run(app, fd=args.fd, log_level="warning", access_log=False, lifespan="on")


if __name__ == "__main__":
    main()
