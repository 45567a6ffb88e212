"""The client side: a typed session with any MCP server (`runtime` holds `ClientRuntime`; `http` the
Streamable HTTP client transport; the rest are its parts).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_bindings.runtime.client.runtime import PING as PING
    from mcp_bindings.runtime.client.runtime import SET_LEVEL as SET_LEVEL
    from mcp_bindings.runtime.client.runtime import C as C
    from mcp_bindings.runtime.client.runtime import ClientRuntime as ClientRuntime
    from mcp_bindings.runtime.client.runtime import LegacyServerError as LegacyServerError
    from mcp_bindings.runtime.client.runtime import ProtocolVersionError as ProtocolVersionError
    from mcp_bindings.runtime.client.runtime import R as R
    from mcp_bindings.runtime.client.runtime import connect as connect
    from mcp_bindings.runtime.client.runtime import log as log

__all__ = [
    "PING",
    "SET_LEVEL",
    "C",
    "ClientRuntime",
    "LegacyServerError",
    "ProtocolVersionError",
    "R",
    "connect",
    "log",
]


def __getattr__(name: str) -> Any:
    # Loaded on first use, so that importing one module of this package (`client.<module>`) does
    # not load `client.runtime` and everything it imports.
    if name in __all__:
        return getattr(importlib.import_module("mcp_bindings.runtime.client.runtime"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
