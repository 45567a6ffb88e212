"""Ours' server for the scaling curves (``benchmarks/curves``), written on the 2025-11-25 stub (it serves
2026-07-28 clients too). Its twins, with the same tools and resource: ``peers/official_curves_server.py``
(the official SDK's low-level ``Server``) and ``peers/fastmcp_curves_server.py`` (FastMCP).

    .venv/bin/python benchmarks/curves/ours_server.py [--fd FD] [--tools N] [--headers] [--resource-bytes S]

* tools ``echo {text}``, ``sleep {ms}`` (awaits, then answers ``ok``: a call that stays in flight) and
  ``tool_0`` .. ``tool_<N-1>`` (each echoes its ``text``). With ``--headers`` every even-numbered one
  declares ``region`` as an ``x-mcp-header`` parameter (``Mcp-Param-Region`` at 2026-07-28); odd ones
  do not, so one server shows the per-request header mapping as the difference of two calls.
* resource ``blob://payload``: ``S`` bytes of text (built once at start, as a file read into memory).
* stdio by default; ``--fd FD`` serves Streamable HTTP on the socket inherited as FD (bound on
  127.0.0.1 by the harness: ``procs.listener``) with the session and concurrency bounds raised above
  what the curves open (10,000 sessions, 1,000 calls in flight).
"""

from __future__ import annotations

import argparse
import asyncio
import socket
from typing import Any

from mcp_bindings.runtime.protocol.context import RequestContext
from mcp_bindings.v2025_11_25 import models as m
from mcp_bindings.v2025_11_25.server import Server

PAYLOAD_URI = "blob://payload"
HIGH = 100_000  # every per-process and per-client bound the curves could reach


def _tool(name: str, header: bool) -> m.Tool:
    region: dict[str, Any] = {"type": "string"}
    if header:
        region["x-mcp-header"] = "Region"
    properties = {"text": {"type": "string"}, "region": region}
    return m.Tool(
        name=name,
        description=f"{name}: echo the text",
        input_schema=m.ToolInputSchema(type="object", properties=properties),
    )


def build(tools: int, headers: bool, resource_bytes: int) -> Server:
    listed = m.ListToolsResult(
        tools=[
            m.Tool(name="echo", input_schema=m.ToolInputSchema(type="object", properties={"text": {"type": "string"}})),
            m.Tool(name="sleep", input_schema=m.ToolInputSchema(type="object", properties={"ms": {"type": "number"}})),
            *(_tool(f"tool_{i}", headers and i % 2 == 0) for i in range(tools)),
        ]
    )
    payload = "x" * resource_bytes
    resources = m.ListResourcesResult(resources=[m.Resource(name="payload", uri=PAYLOAD_URI, mime_type="text/plain")])

    class CurvesServer(Server):
        name = "curves"
        version = "1.0.0"

        async def list_tools(self, params: Any, ctx: RequestContext) -> m.ListToolsResult:
            return listed

        async def call_tool(self, params: m.CallToolRequestParams, ctx: RequestContext) -> m.CallToolResult:
            arguments = params.arguments or {}
            if params.name == "sleep":
                await asyncio.sleep(float(arguments.get("ms", 10)) / 1000)
                return m.CallToolResult(content=[m.TextContent(text="ok")])
            return m.CallToolResult(content=[m.TextContent(text=str(arguments.get("text", "")))])

        async def list_resources(self, params: Any, ctx: RequestContext) -> m.ListResourcesResult:
            return resources

        async def read_resource(self, params: m.ReadResourceRequestParams, ctx: RequestContext) -> m.ReadResourceResult:
            return m.ReadResourceResult(
                contents=[m.TextResourceContents(uri=params.uri, mime_type="text/plain", text=payload)]
            )

    return CurvesServer()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--fd", type=int, help="serve Streamable HTTP on this inherited socket (bound on 127.0.0.1 by the harness)"
    )
    parser.add_argument("--tools", type=int, default=0)
    parser.add_argument("--headers", action="store_true")
    parser.add_argument("--resource-bytes", type=int, default=1024)
    args = parser.parse_args()
    server = build(args.tools, args.headers, args.resource_bytes)
    if args.fd is None:
        from mcp_bindings.runtime.stdio import serve_stdio

        serve_stdio(server)
        return
    from mcp_bindings.runtime.http_server import serve_http

    serve_http(
        server,
        host="127.0.0.1",
        sock=socket.socket(fileno=args.fd),
        max_sessions=HIGH,
        max_sessions_per_client=HIGH,
        max_requests_in_flight_per_client=HIGH,
        max_connections=HIGH,
        max_body_bytes=64 * 1024 * 1024,
        json_only=True,
    )


if __name__ == "__main__":
    main()
