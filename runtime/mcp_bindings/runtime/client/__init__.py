"""The client side: a typed session with any MCP server (`runtime` holds `ClientRuntime`; `http` the
Streamable HTTP client transport; `options` the connection options; `seam` the call hooks; the rest
are its parts).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_bindings.runtime.client.eras import SET_LEVEL as SET_LEVEL
    from mcp_bindings.runtime.client.legacy import LegacyServerError as LegacyServerError
    from mcp_bindings.runtime.client.options import ClientArgs as ClientArgs
    from mcp_bindings.runtime.client.options import ClientOptions as ClientOptions
    from mcp_bindings.runtime.client.runtime import PING as PING
    from mcp_bindings.runtime.client.runtime import C as C
    from mcp_bindings.runtime.client.runtime import ClientRuntime as ClientRuntime
    from mcp_bindings.runtime.client.runtime import ProbeFailedError as ProbeFailedError
    from mcp_bindings.runtime.client.runtime import ProtocolVersionError as ProtocolVersionError
    from mcp_bindings.runtime.client.runtime import R as R
    from mcp_bindings.runtime.client.runtime import connect as connect
    from mcp_bindings.runtime.client.runtime import log as log
    from mcp_bindings.runtime.client.seam import CallHook as CallHook
    from mcp_bindings.runtime.client.seam import ClientAround as ClientAround
    from mcp_bindings.runtime.client.seam import Finished as Finished
    from mcp_bindings.runtime.client.seam import Hook as Hook
    from mcp_bindings.runtime.client.seam import OutgoingCall as OutgoingCall
    from mcp_bindings.runtime.client.seam import Send as Send

__all__ = [
    "PING",
    "SET_LEVEL",
    "C",
    "CallHook",
    "ClientArgs",
    "ClientAround",
    "ClientOptions",
    "ClientRuntime",
    "Finished",
    "Hook",
    "LegacyServerError",
    "OutgoingCall",
    "ProbeFailedError",
    "ProtocolVersionError",
    "R",
    "Send",
    "connect",
    "log",
]


_HOME = {
    "CallHook": "seam",
    "ClientAround": "seam",
    "Hook": "seam",
    "Finished": "seam",
    "OutgoingCall": "seam",
    "Send": "seam",
    "ClientArgs": "options",
    "ClientOptions": "options",
    "SET_LEVEL": "eras",
    "LegacyServerError": "legacy",
}


def __getattr__(name: str) -> Any:
    # Loaded on first use, so that importing one module of this package (`client.<module>`) does
    # not load `client.runtime` and everything it imports.
    if name in __all__:
        return getattr(importlib.import_module(f"mcp_bindings.runtime.client.{_HOME.get(name, 'runtime')}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
