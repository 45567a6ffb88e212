"""What the authoring layer raises: at registration (`AppDefinitionError`), and what handlers raise
to answer a request in a way the layer translates (`ToolError`, defined with the runtime's errors so
that middleware of any server can raise it too, and `ResourceNotFound`)."""

from __future__ import annotations

from typing import Any

from mcp_bindings.runtime.protocol.versions import first_error as first_error  # one home: protocol.versions
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, INVALID_PARAMS, McpError, NotExpressible, ToolError

__all__ = ["AppDefinitionError", "MissingClientCapability", "ResourceNotFound", "ToolError"]


class AppDefinitionError(TypeError):
    """A tool, resource, prompt or completion that cannot be registered as written: raised by the
    decorator, naming the function and what is wrong with it."""


class ResourceNotFound(McpError):
    """Raise in a resource function for a URI that names nothing: the client gets its version's
    resource-not-found error (-32002 up to 2025-11-25, -32602 with the URI in `data` from
    2026-07-28 on), whatever version the app is written against."""

    def __init__(self, uri: str, message: str | None = None) -> None:
        super().__init__(INVALID_PARAMS, message or f"Resource not found: {uri}", {"uri": uri})
        self.uri = uri


class MissingClientCapability(NotExpressible):
    """`ctx.elicit` / `ctx.sample` / `ctx.list_roots` for a client that did not declare the
    capability it needs (or whose version has no such request): nothing was asked. On the wire,
    where it reaches the client, it is the version's missing-capability error (-32021 from
    2026-07-28 on) with `data.requiredCapabilities`, else an internal error."""

    def __init__(self, message: str, *, version: str, code: int | None, required: dict[str, Any]) -> None:
        super().__init__(message, version=version)
        self.code = code if code is not None else INTERNAL_ERROR
        self.data = {"requiredCapabilities": required} if required else None
        self.required = required
