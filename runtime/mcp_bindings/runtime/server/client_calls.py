"""The base of every generated `ClientCalls`: the typed requests a server's handler sends its client.

A generated `ClientCalls(ctx)` has one method per server-to-client request of its version (from the
version's `SERVER_REQUESTS` table), each forwarding to `ctx.request`: the params are validated in
the stub's version, crossed into the client's, and gated on what this client declared (a
`NotExpressible` naming the capability before anything is sent); the answer comes back as the
stub's typed result model. It holds nothing but the context it was made with.
"""

# pyright: strict
from __future__ import annotations

from typing import Any, ClassVar, cast

from mcp_bindings.runtime.protocol.context import RequestContext
from mcp_bindings.runtime.protocol.spec import MethodSpec, ProtocolTables
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, McpError
from mcp_bindings.runtime.server.context import ServerRequestContext


class ClientCallsStub:
    """Base of every generated `ClientCalls`."""

    __slots__ = ("_ctx",)

    protocol: ClassVar[ProtocolTables]

    def __init__(self, ctx: RequestContext) -> None:
        if isinstance(ctx, ServerRequestContext) and ctx.server.protocol is not self.protocol:
            raise TypeError(
                f"{type(self).__qualname__} of MCP {self.protocol.version} cannot serve a handler of an MCP "
                f"{ctx.server.protocol.version} server: use that version's `ClientCalls` (or `self.client(ctx)`)"
            )
        self._ctx = ctx

    @property
    def context(self) -> RequestContext:
        """The request context these calls go through."""
        return self._ctx

    def allows(self, method: str) -> bool:
        """Whether this client may get the request `method` now (its version, its declared
        capabilities, a connection that carries requests)."""
        return self._ctx.session.allows(method)

    async def _request(self, spec: MethodSpec, params: Any, timeout: float | None = None) -> Any:
        if spec.method not in self.protocol.server_requests:  # pragma: no cover - generated from the table
            raise McpError(
                INTERNAL_ERROR, f"{spec.method} is not a request a server sends in MCP {self.protocol.version}"
            )
        if isinstance(params, dict):  # the keyword arguments left unset are not sent
            params = {key: value for key, value in cast("dict[str, Any]", params).items() if value is not None}
            if not params and not spec.params_required:
                params = None
        if isinstance(self._ctx, ServerRequestContext):
            return await self._ctx.request(spec.method, params, timeout=timeout)
        if timeout is not None:
            raise TypeError(f"{spec.method}: timeout= needs the runtime's request context, not {type(self._ctx)!r}")
        return await self._ctx.request(spec.method, params)

    async def _ping(self, spec: MethodSpec, params: None, timeout: float | None = None) -> None:
        await self._request(spec, params, timeout)
