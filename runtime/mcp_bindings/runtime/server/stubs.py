"""The base of every generated `Server` stub (capabilities derived from its overridden handlers)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from mcp_bindings.runtime.protocol.custom_methods import Methods
from mcp_bindings.runtime.protocol.spec import MethodSpec, Side
from mcp_bindings.runtime.protocol.stub_base import CapabilityDeriving, overridden, stub_class
from mcp_bindings.runtime.server.host import host_for

__all__ = ["ServerStub"]


class ServerStub(CapabilityDeriving):
    """Base of every generated `Server`. Subclass the generated class, not this one."""

    _side: ClassVar[Side] = "server"
    # Identity sent in `initialize` / `server/discover` results.
    name: ClassVar[str] = "mcp-bindgen-server"
    version: ClassVar[str] = "0.0.0"
    # Optional identity, sent to clients whose version defines it (title 2025-06-18 on, the rest 2025-11-25 on).
    title: ClassVar[str | None] = None
    description: ClassVar[str | None] = None
    website_url: ClassVar[str | None] = None
    icons: ClassVar[Sequence[Mapping[str, Any]] | None] = None  # e.g. [{"src": "https://...", "mimeType": "image/png"}]
    instructions: ClassVar[str | None] = None
    # Caching hints stamped on cacheable results (2026-07-28) unless a handler sets its own.
    cache_ttl_ms: ClassVar[int] = 0
    cache_scope: ClassVar[str] = "private"
    # The key that seals `requestState` (2026-07-28 input rounds); None: a random key per process,
    # so state issued by one process is refused by another (set it when several workers serve).
    request_state_secret: ClassVar[bytes | None] = None
    # How long a sealed `requestState` is accepted after it is issued, in seconds (docs/security.md).
    request_state_ttl_s: ClassVar[float] = 600.0
    # Check tools/call arguments against the listed tool's inputSchema, and results against its
    # outputSchema (`tool_schemas`); False: the handlers do it themselves.
    validate_tools: ClassVar[bool] = True
    # Re-validate every result against its model as it is written (`versions.checked_json`): a
    # result built with `model_construct`, changed after validation or holding NaN is refused with
    # -32603 instead of reaching the client. False: only written, for a class whose handlers'
    # results are validated as they are built (the authoring layer's); MCP_BINDINGS_CHECK_RESULTS=1
    # turns the check back on (tests, debugging).
    check_results: ClassVar[bool] = True

    def __init__(self) -> None:
        self.capabilities = self.derive_capabilities()

    async def broadcast(self, method: str, params: Any = None) -> int:
        """Send a server notification (e.g. `notifications/tools/list_changed`) to every connected
        client allowed to receive it; returns how many got it."""
        from mcp_bindings.runtime.server.notifications import broadcast  # the delivery, above the stubs

        return await broadcast(host_for(self), method, params)

    def implements(self, spec: MethodSpec) -> bool:
        return overridden(self, spec.handler, stub_class(type(self))) or spec.optional_handler

    def _custom_methods(self) -> Methods:
        return host_for(self).methods_for(self)
