"""The bases of the generated client stubs: `ClientHandlers` (what a client serves: sampling, roots,
elicitation, ...; capabilities derived from its overridden handlers) and `Client` (typed calls,
forwarded to the connected session)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ClassVar

from mcp_bindings.runtime.protocol.spec import MethodSpec, ProtocolTables, Side
from mcp_bindings.runtime.protocol.stub_base import CapabilityDeriving, overridden, stub_class
from mcp_bindings.runtime.rpc.calls import ProgressCallback

__all__ = ["ClientHandlerStub", "ClientStub", "ProgressCallback", "every_page"]


class ClientHandlerStub(CapabilityDeriving):
    """Base of every generated `ClientHandlers`."""

    _side: ClassVar[Side] = "client"

    def __init__(self) -> None:
        self.capabilities = self.derive_capabilities()

    def implements(self, spec: MethodSpec) -> bool:
        return overridden(self, spec.handler, stub_class(type(self)))


class ClientStub:
    """Base of every generated `Client`: forwards typed calls to the connected session."""

    protocol: ClassVar[ProtocolTables]

    def __init__(self, session: Any) -> None:
        self.session: Any = session  # the connection's `ClientRuntime`

    @property
    def server_capabilities(self) -> Mapping[str, Any]:
        return self.session.peer_capabilities

    def _protocol_version(self) -> Any:
        """The connection's protocol version (the generated `Client.protocol_version` types it)."""
        version = getattr(self.session, "version", None)
        if version is None:
            raise RuntimeError("the client is not connected: no protocol version has been negotiated yet")
        return version

    async def _request(
        self, spec: MethodSpec, params: Any, timeout: float | None = None, progress: ProgressCallback | None = None
    ) -> Any:
        if progress is None:
            return await self.session.call(spec, params, timeout=timeout)
        with self.session.progress(progress):  # a progress token on this call, its notifications to `progress`
            return await self.session.call(spec, params, timeout=timeout)

    async def _era_request(self, method: str, params: Any, result: Any, timeout: float | None) -> Any:
        """A request of the other era (the stub's version lacks it), sent by name where the session's version has it."""
        return await self.session.call_method(method, params, result, timeout=timeout)

    async def _ping(self, timeout: float | None) -> None:
        await self.session.ping(timeout=timeout)

    async def _set_logging_level(self, level: str, timeout: float | None) -> None:
        await self.session.set_logging_level(level, timeout=timeout)

    def _listen(self, notifications: Any) -> Any:
        return self.session.listen(notifications)

    async def _notify(self, spec: MethodSpec, params: Any) -> None:
        await self.session.notify(spec, params)


async def every_page(page: Callable[[str | None], Awaitable[Any]], field: str, max_pages: int = 10_000) -> list[Any]:
    """The items (each result's `field`) of every page of a paginated list: `await page(cursor)` from
    the first (cursor None) until a result has no `next_cursor`, at most `max_pages` pages (bounded: a
    server that pages for ever is not followed for ever)."""
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(max_pages):
        result = await page(cursor)
        items += getattr(result, field)
        cursor = getattr(result, "next_cursor", None)
        if not cursor:
            break
    return items
