"""Serves one of docs/comparison's notes servers over Streamable HTTP at http://127.0.0.1:PORT/mcp,
in the venv of its library (ours, FastMCP's, the official SDK's), with uvicorn (each library's ASGI
app runs its lifespan):

    <python> tests/peers/comparison_launcher.py docs/comparison/notes_fastmcp.py PORT
    <python> tests/peers/comparison_launcher.py docs/comparison/notes_fastmcp.py fd:N   # inherited socket N

The server module is loaded from its file as written; its object is found by name (`app`: ours,
`mcp`: FastMCP or `MCPServer`) and its ASGI app taken the way its library documents.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

import uvicorn


def asgi_of(server: Any) -> Any:
    if hasattr(server, "asgi"):  # ours: App.asgi()
        return server.asgi()
    if hasattr(server, "http_app"):  # FastMCP
        return server.http_app()
    return server.streamable_http_app()  # the official MCPServer


def main() -> None:
    path, where = sys.argv[1], sys.argv[2]  # PORT, or fd:N (a listening socket inherited from the test)
    spec = importlib.util.spec_from_file_location("notes_server", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (pydantic generics look their module up)
    spec.loader.exec_module(module)
    server = getattr(module, "app", None) or module.mcp
    if where.startswith("fd:"):
        from inherited_socket import serve_on_fd  # beside this script

        serve_on_fd(asgi_of(server), int(where[3:]))
    else:
        uvicorn.run(asgi_of(server), host="127.0.0.1", port=int(where), log_level="warning")


if __name__ == "__main__":
    main()
