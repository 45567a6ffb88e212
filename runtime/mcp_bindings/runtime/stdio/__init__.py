"""stdio: `serve_stdio` serves one client on this process's stdin/stdout (`serve`); `connect_stdio`
spawns a server and talks to it over its pipes (`connect`, which alone loads the client side)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp_bindings.runtime.stdio.serve import serve_stdio as serve_stdio
from mcp_bindings.runtime.stdio.serve import serve_stdio_async as serve_stdio_async

if TYPE_CHECKING:
    from mcp_bindings.runtime.stdio.connect import connect_stdio as connect_stdio

__all__ = ["connect_stdio", "serve_stdio", "serve_stdio_async"]


def __getattr__(name: str) -> Any:
    # `connect_stdio` on first use: a stdio *server* never loads the client side.
    if name == "connect_stdio":
        from mcp_bindings.runtime.stdio.connect import connect_stdio

        return connect_stdio
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
