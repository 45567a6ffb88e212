"""A server on the official Python SDK for the era tests (issue 30, tests/interop/test_client_eras.py):
on mcp 2.3.0 (`MCPServer`, the interop tests' SDK venv) it speaks 2026-07-28 too; on mcp 1.30.0 (its
`FastMCP`, `contract_peers.handshake_sdk()`) only the `initialize` handshake. stdio by default,
Streamable HTTP on 127.0.0.1 with `--http PORT`, or on the listening socket the test bound and handed
down with `--fd N` (its access log on stdout, as `run` writes it).

`weather` logs at three levels (what `set_logging_level` lets through is what arrives); `touch`
announces an update of a resource to `subscriptions/listen` streams (2026-07-28).
"""

from __future__ import annotations

import sys
from typing import Any

try:
    from mcp.server.mcpserver import Context, MCPServer

    app: Any = MCPServer("eras-weather")
    MODERN = True
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import Context, FastMCP  # type: ignore[no-redef]

    PORT = int(sys.argv[sys.argv.index("--http") + 1]) if "--http" in sys.argv else 8000
    app = FastMCP("eras-weather", host="127.0.0.1", port=PORT)
    MODERN = False


@app.tool(description="The weather of a city (logs as it goes).")
async def weather(city: str, ctx: Context) -> str:  # type: ignore[type-arg]
    await ctx.debug(f"cache miss for {city}")
    await ctx.info(f"looking up {city}")
    await ctx.warning(f"{city} is windy")
    return f"{city}: 21.5"


@app.tool(description="Announce an update of a resource to listen streams.")
async def touch(uri: str, ctx: Context) -> str:  # type: ignore[type-arg]
    if MODERN:
        await ctx.notify_resource_updated(uri)
    return uri


@app.resource("eras://config", description="A resource to listen for.")
def config() -> str:
    return "debug=false"


if __name__ == "__main__":
    if "--fd" in sys.argv:
        from inherited_socket import serve_on_fd  # beside this script

        serve_on_fd(app.streamable_http_app(), int(sys.argv[sys.argv.index("--fd") + 1]), log_level="info")
    elif "--http" not in sys.argv:
        app.run("stdio")
    elif MODERN:
        app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[sys.argv.index("--http") + 1]))
    else:
        app.run("streamable-http")
