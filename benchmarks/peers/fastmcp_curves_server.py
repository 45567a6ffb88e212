"""FastMCP (fastmcp==4.2.3, on mcp 2.3.0) twin of ``benchmarks/curves/ours_server.py`` for the scaling
curves: the same tools (``echo``, ``sleep``, ``tool_0`` .. ``tool_<N-1>``) and resource
(``blob://payload``, S bytes of text), written the way FastMCP is used (decorated async functions),
over stdio or Streamable HTTP on 127.0.0.1 (JSON responses, as the other peers).

Run: ``<fastmcp-venv>/bin/python benchmarks/peers/fastmcp_curves_server.py [--fd FD] [--tools N]
[--resource-bytes S]``.
"""

from __future__ import annotations

import argparse
import asyncio

from fastmcp import FastMCP

PAYLOAD_URI = "blob://payload"


def build(tools: int, resource_bytes: int) -> FastMCP:
    mcp = FastMCP("bench-fastmcp-curves", version="4.2.3-bench")

    @mcp.tool
    async def echo(text: str) -> str:
        return text

    @mcp.tool
    async def sleep(ms: float = 10) -> str:
        await asyncio.sleep(ms / 1000)
        return "ok"

    async def numbered(text: str = "", region: str = "") -> str:
        return text

    for i in range(tools):
        mcp.tool(numbered, name=f"tool_{i}", description=f"tool_{i}: echo the text")

    payload = "x" * resource_bytes

    @mcp.resource(PAYLOAD_URI, name="payload", mime_type="text/plain")
    async def blob() -> str:
        return payload

    return mcp


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--fd", type=int, help="serve Streamable HTTP on this inherited socket (bound on 127.0.0.1 by the harness)"
    )
    parser.add_argument("--tools", type=int, default=0)
    parser.add_argument("--headers", action="store_true", help="accepted and ignored (no x-mcp-header support)")
    parser.add_argument("--resource-bytes", type=int, default=1024)
    args = parser.parse_args()
    mcp = build(args.tools, args.resource_bytes)
    if args.fd is None:
        mcp.run(show_banner=False)
    else:
        mcp.run(
            transport="http",
            show_banner=False,
            host="127.0.0.1",
            port=0,  # unused: uvicorn serves on the inherited socket (fd)
            log_level="warning",
            json_response=True,
            uvicorn_config={"access_log": False, "fd": args.fd},
        )


if __name__ == "__main__":
    main()
