"""The bases of the generated client stubs: `ClientHandlers` (what a client serves: sampling, roots,
elicitation, ...; capabilities derived from its overridden handlers) and `Client` (typed calls,
forwarded to the connected session)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from mcp_bindings.runtime.protocol.spec import MethodSpec, ProtocolTables, Side
from mcp_bindings.runtime.protocol.stub_base import CapabilityDeriving, overridden, stub_class
from mcp_bindings.runtime.rpc.calls import ProgressCallback

__all__ = ["ClientHandlerStub", "ClientStub", "ProgressCallback"]


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

    # Progressive discovery (docs/discovery.md; the functions are `client.discovery`'s): a method a
    # version's schema defines under the same name (a future `groups/list`) takes the place of one.
    async def search_tools(
        self, query: str, *, mode: Literal["bm25", "regex"] = "bm25", limit: int | None = None, prefix: str = ""
    ) -> list[Any]:
        """The tools a server behind `ToolSearch` finds for `query`, best first, as this version's
        `Tool` models (input schemas and all); a refused search raises `SearchError`."""
        from mcp_bindings.runtime.client.discovery import search_tools

        return await search_tools(self, query, mode=mode, limit=limit, prefix=prefix)

    async def list_groups(self) -> list[Any]:
        """The server's groups (`groups/list`, every page), as the groups extension's `Group` models."""
        from mcp_bindings.runtime.client.discovery import list_groups

        return await list_groups(self)

    async def tools_in_group(self, group: str, *, nested: bool = True) -> list[Any]:
        """The tools listed as members of `group` (and of the groups inside it, with `nested`); the
        client must have declared the groups extension (`client.discovery.declare_groups`)."""
        from mcp_bindings.runtime.client.discovery import tools_in_group

        return await tools_in_group(self, group, nested=nested)
