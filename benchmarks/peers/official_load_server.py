"""Official MCP Python SDK (mcp==2.3.0) twin of ``benchmarks/load_server.py`` for the load section.

Run: ``<official-venv>/bin/python benchmarks/peers/official_load_server.py --fd FD`` (the socket it
inherits, bound on 127.0.0.1 by the harness: ``procs.listener``).
``Server.streamable_http_app()`` (path ``/mcp``, the SDK's default SSE answers, its default session
limits, no event store: the SDK keeps nothing for replay unless one is configured) plus the SDK's
legacy HTTP+SSE transport at ``/sse`` and ``/messages/``, under uvicorn on 127.0.0.1 only. Tools
``echo``, ``blob`` and ``steps``, as ours. Prints ``READY <pid>`` once listening.
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from typing import Any

import anyio
import mcp_types as types
import uvicorn
from mcp.server import Server
from mcp.server.sse import SseServerTransport
from mcp.shared.exceptions import MCPError
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route

OBJECT: dict[str, Any] = {"type": "object"}


async def _list_tools(ctx, params):  # noqa: ANN001, ANN202 - SDK handler signature
    return types.ListToolsResult(
        tools=[types.Tool(name=name, input_schema=OBJECT) for name in ("echo", "blob", "steps")]
    )


async def _call_tool(ctx, params: types.CallToolRequestParams):  # noqa: ANN001, ANN202
    arguments = params.arguments or {}
    if params.name == "blob":
        if arguments.get("progress"):
            await ctx.session.report_progress(1, 1)
        text = "x" * int(arguments.get("size", 1024))
    elif params.name == "steps":
        steps = int(arguments.get("steps", 3))
        for step in range(1, steps + 1):
            await anyio.sleep(int(arguments.get("delay_ms", 10)) / 1000)
            await ctx.session.report_progress(step, steps)
        text = str(arguments.get("tag", ""))
    elif params.name == "echo":
        text = str(arguments.get("text", ""))
    else:
        raise MCPError(code=types.INVALID_PARAMS, message=f"unknown tool {params.name!r}")
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fd", type=int, required=True, help="the inherited socket to serve on")
    args = parser.parse_args()
    server = Server("bench-official-load", version="2.3.0-bench", on_list_tools=_list_tools, on_call_tool=_call_tool)
    legacy = SseServerTransport("/messages/")

    async def handle_sse(request: Request) -> Response:
        async with legacy.connect_sse(request.scope, request.receive, request._send) as (read, write):
            await server.run(read, write, server.create_initialization_options())
        return Response()

    routes: list[Any] = [
        Route("/sse", endpoint=handle_sse, methods=["GET"]),
        Mount("/messages/", app=legacy.handle_post_message),
    ]
    app = server.streamable_http_app(host="127.0.0.1", custom_starlette_routes=routes)
    config = uvicorn.Config(app, fd=args.fd, log_level="warning", access_log=False, lifespan="on")
    http = uvicorn.Server(config)

    def announce() -> None:
        while not http.started:
            time.sleep(0.02)
        print(f"READY {os.getpid()}", flush=True)

    threading.Thread(target=announce, daemon=True).start()
    http.run()


if __name__ == "__main__":
    main()
