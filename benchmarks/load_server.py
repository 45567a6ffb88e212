"""Ours' server for the memory tests and the mixed-load benchmark: Streamable HTTP (and legacy `/sse`)
on 127.0.0.1, written on the 2025-11-25 stub.

    .venv/bin/python benchmarks/load_server.py PORT [--max-replay-bytes N] [--legacy-queue-bytes N] ...
    .venv/bin/python benchmarks/load_server.py --fd FD ...   # on a socket it inherits, bound by the harness

Tools (the official twin, `peers/official_load_server.py`, has the same ones):
* `echo {text}`: the text back.
* `blob {size, progress?}`: `size` bytes of text; with a progress token it reports progress first,
  so the answer is an SSE stream whose events the session's replay log keeps.
* `steps {steps, delay_ms, tag}`: `steps` progress notifications `delay_ms` apart, then `tag`
  back (long enough to be cancelled or disconnected mid-request).

Prints `READY <pid> <port>` on stdout once listening (PORT 0: the port the system picked).
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from typing import Any

import anyio

from mcp_bindings.runtime.http.app import create_app
from mcp_bindings.runtime.protocol.context import RequestContext
from mcp_bindings.v2025_11_25 import models as m
from mcp_bindings.v2025_11_25.server import Server

OBJECT = m.ToolInputSchema(type="object")


class LoadServer(Server):
    name = "load"
    version = "1.0.0"

    async def list_tools(self, params: Any, ctx: RequestContext) -> m.ListToolsResult:
        return m.ListToolsResult(
            tools=[m.Tool(name=name, input_schema=OBJECT) for name in ("echo", "blob", "steps")],
        )

    async def call_tool(self, params: m.CallToolRequestParams, ctx: RequestContext) -> m.CallToolResult:
        arguments = params.arguments or {}
        if params.name == "blob":
            if arguments.get("progress"):
                await ctx.report_progress(1, 1)
            text = "x" * int(arguments.get("size", 1024))
        elif params.name == "steps":
            steps = int(arguments.get("steps", 3))
            for step in range(1, steps + 1):
                await anyio.sleep(int(arguments.get("delay_ms", 10)) / 1000)
                await ctx.report_progress(step, steps)
            text = str(arguments.get("tag", ""))
        else:
            text = str(arguments.get("text", ""))
        return m.CallToolResult(content=[m.TextContent(text=text)])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int, nargs="?", default=0, help="the port to bind (0: the system picks)")
    parser.add_argument("--fd", type=int, help="serve on this inherited socket instead of binding PORT")
    parser.add_argument("--max-replay-bytes", type=int)
    parser.add_argument("--max-replay-bytes-total", type=int)
    parser.add_argument("--replay-ttl-seconds", type=float)
    parser.add_argument("--legacy-queue-bytes", type=int)
    args = parser.parse_args()
    options = {key: value for key, value in vars(args).items() if key not in ("port", "fd") and value is not None}
    import uvicorn

    app = create_app(LoadServer(), **options)
    config = uvicorn.Config(app, host="127.0.0.1", port=args.port, fd=args.fd, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)

    def announce() -> None:
        while not server.started:
            time.sleep(0.02)
        port = server.servers[0].sockets[0].getsockname()[1]
        print(f"READY {os.getpid()} {port}", flush=True)

    threading.Thread(target=announce, daemon=True).start()
    server.run()


if __name__ == "__main__":
    main()
