"""A minimal MCP server with one `echo` tool, over stdio or Streamable HTTP.

    python examples/echo_server.py                                   # stdio, newest stub
    python examples/echo_server.py --transport http --port 3001      # http://127.0.0.1:3001/mcp
    python examples/echo_server.py --transport http --fd 3           # on an inherited, bound socket
    python examples/echo_server.py --stub 2025-11-25                 # written against another version

Whatever stub it is written against, it serves clients of every protocol version.
"""

from __future__ import annotations

import argparse
from typing import Any

from mcp_bindings.runtime import registry
from mcp_bindings.runtime.context import RequestContext


def make_server(stub_version: str) -> Any:
    package = registry.load_version(stub_version)
    from importlib import import_module

    m = package
    Server = import_module(f"{package.__name__}.server").Server

    class EchoServer(Server):  # type: ignore[misc, valid-type]
        name = "echo"
        version = "1.0.0"

        async def list_tools(self, params: Any, ctx: RequestContext) -> Any:
            schema = m.ToolInputSchema(type="object", properties={"text": {"type": "string"}}, required=["text"])
            return m.ListToolsResult(tools=[m.Tool(name="echo", description="Echo the text back", input_schema=schema)])

        async def call_tool(self, params: Any, ctx: RequestContext) -> Any:
            text = str((params.arguments or {}).get("text", ""))
            return m.CallToolResult(content=[m.TextContent(type="text", text=text)])

    return EchoServer()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--port", type=int, default=3001)
    parser.add_argument(
        "--fd",
        type=int,
        help="serve on this inherited socket (bound by the parent, which passes it on) instead of binding --port",
    )
    parser.add_argument(
        "--http-stack",
        choices=["auto", "h11"],
        default="auto",
        help="uvicorn's parser and loop: auto (httptools + uvloop when installed) or h11 + asyncio",
    )
    # Not `choices=registry.versions()`: listing every version reads the installed packages' entry
    # points, which a server that names its version need not pay for at start-up.
    parser.add_argument("--stub", help="the protocol version the server is written against (default: the newest)")
    args = parser.parse_args()
    try:
        server = make_server(args.stub or list(registry.versions())[-1])
    except LookupError as exc:  # an unknown --stub: the error names the known versions
        parser.error(str(exc))
    if args.transport == "stdio":
        from mcp_bindings.runtime.stdio import serve_stdio

        serve_stdio(server)
    else:
        import socket

        from mcp_bindings.runtime.http_server import serve_http

        pure = args.http_stack == "h11"
        sock = None if args.fd is None else socket.socket(fileno=args.fd)
        serve_http(
            server,
            host="127.0.0.1",
            port=args.port,
            http="h11" if pure else "auto",
            loop="asyncio" if pure else "auto",
            sock=sock,
        )


if __name__ == "__main__":
    main()
