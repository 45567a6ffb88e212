"""Bases of the generated stubs: capability derivation from overridden handlers, generically.

A stub class carries `protocol`, its version's generated `ProtocolTables`; everything here reads
the method tables, never a method name.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar, cast

from .errors import StubDefinitionError
from .spec import Capability, MethodSpec, ProtocolTables, Side


def _handler_specs(protocol: ProtocolTables, side: Side) -> Iterator[MethodSpec]:
    for table in protocol.handled_by(side):
        for spec in table.values():
            if not spec.builtin:
                yield spec


def _stub_class(cls: type) -> type:
    """The generated class in the MRO (the one that defines `protocol` in its own body)."""
    for klass in cls.__mro__:
        if "protocol" in vars(klass):
            return klass
    raise StubDefinitionError(f"{cls.__name__} does not derive from a generated stub")


def _overridden(obj: object, name: str, stub: type) -> bool:
    return getattr(type(obj), name, None) is not getattr(stub, name, None)


# Handlers of tasks/* that a server may leave to the runtime (`tasks.served_by_runtime`).
_RUNTIME_SERVED = frozenset({"get_task", "get_task_result", "list_tasks", "cancel_task"})


def _paths(capabilities: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for key, value in capabilities.items():
        if value is None or value is False:
            continue
        yield (*prefix, key)
        if isinstance(value, Mapping):
            yield from _paths(cast("Mapping[str, Any]", value), (*prefix, key))


class _CapabilityDeriving:
    """Derive `side`'s capabilities from overridden handlers plus declared sub-capabilities."""

    protocol: ClassVar[ProtocolTables]
    _side: ClassVar[Side]
    # Sub-capabilities only the author can vouch for, e.g. {"tools": {"listChanged": True}}.
    declared_capabilities: ClassVar[Mapping[str, Any]] = {}

    def derive_capabilities(self) -> dict[str, Any]:
        stub = _stub_class(type(self))
        capabilities: dict[str, Any] = copy.deepcopy(dict(self.declared_capabilities))
        by_capability: dict[tuple[str, ...], list[MethodSpec]] = {}
        for spec in _handler_specs(self.protocol, self._side):
            if spec.gate is None or spec.gate.side != self._side or spec.kind != "request":
                continue
            by_capability.setdefault(spec.gate.path, []).append(spec)
        for path, specs in sorted(by_capability.items()):
            implemented = [s for s in specs if _overridden(self, s.handler, stub)]
            declared = Capability(self._side, path).present_in(capabilities)
            if not implemented and not declared:
                continue
            missing = [s.handler for s in specs if not s.optional_handler and s not in implemented]
            # tasks/* the runtime serves from its task store (`tasks`; a client's: `client_tasks`)
            missing = [h for h in missing if h not in _RUNTIME_SERVED]
            if missing:
                what = (
                    f"declares `{'.'.join(path)}`"
                    if declared
                    else f"overrides {', '.join(s.handler for s in implemented)}"
                )
                raise StubDefinitionError(
                    f"{type(self).__name__} {what} but does not implement {', '.join(missing)} "
                    f"({' / '.join(s.method for s in specs if s.handler in missing)})"
                )
            if not declared:
                if len(path) > 1:
                    raise StubDefinitionError(
                        f"{type(self).__name__} overrides {', '.join(s.handler for s in implemented)} but does not "
                        f"declare {self._side} capability `{'.'.join(path)}` in declared_capabilities"
                    )
                capabilities.setdefault(next(iter(path)), {})  # sub-capabilities were refused above unless declared
        self._check_declared(capabilities)
        return capabilities

    def register_method(self, method: Any, handler: Any = None) -> Any:
        """Serve a custom or extension method (`extensions.request` / `notification`) with
        `handler(params, ctx)`; without `handler`, a decorator. Kept by the runtime (`extensions`)."""
        from .extensions import methods_of

        return methods_of(self, self._side).register(method, handler)

    def use_extension(self, extension: Any, settings: Mapping[str, Any] | None = None, handlers: Any = None) -> None:
        """Declare an extension (an identifier or an `extensions.Extension`) in this side's
        capabilities, with its settings, and serve the extension's methods `handlers` has."""
        from .extensions import methods_of

        methods_of(self, self._side).use(extension, settings, handlers)

    def _check_declared(self, capabilities: Mapping[str, Any]) -> None:
        known = self.protocol.capability_paths(self._side)
        for path in _paths(capabilities):
            dotted = ".".join(path)
            if path[0] in ("experimental", "extensions"):
                continue
            if dotted not in known:
                raise StubDefinitionError(
                    f"{type(self).__name__} declares {self._side} capability `{dotted}`, which MCP "
                    f"{self.protocol.version} does not define"
                )


class ServerStub(_CapabilityDeriving):
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

    def __init__(self) -> None:
        self.capabilities = self.derive_capabilities()

    async def broadcast(self, method: str, params: Any = None) -> int:
        """Send a server notification (e.g. `notifications/tools/list_changed`) to every connected
        client allowed to receive it; returns how many got it."""
        from .notifications import host_for

        return await host_for(self).broadcast(method, params)

    def implements(self, spec: MethodSpec) -> bool:
        return _overridden(self, spec.handler, _stub_class(type(self))) or spec.optional_handler


class ClientHandlerStub(_CapabilityDeriving):
    """Base of every generated `ClientHandlers`."""

    _side: ClassVar[Side] = "client"

    def __init__(self) -> None:
        self.capabilities = self.derive_capabilities()

    def implements(self, spec: MethodSpec) -> bool:
        return _overridden(self, spec.handler, _stub_class(type(self)))


class ClientStub:
    """Base of every generated `Client`: forwards typed calls to the connected session."""

    protocol: ClassVar[ProtocolTables]

    def __init__(self, session: Any) -> None:
        self._session = session

    @property
    def session(self) -> Any:
        return self._session

    @property
    def server_capabilities(self) -> Mapping[str, Any]:
        return self._session.peer_capabilities

    async def _request(self, spec: MethodSpec, params: Any, timeout: float | None = None) -> Any:
        return await self._session.call(spec, params, timeout=timeout)

    async def _ping(self, timeout: float | None) -> None:
        await self._session.ping(timeout=timeout)

    async def _set_logging_level(self, level: str, timeout: float | None) -> None:
        await self._session.set_logging_level(level, timeout=timeout)

    def _listen(self, notifications: Any) -> Any:
        return self._session.listen(notifications)

    async def _notify(self, spec: MethodSpec, params: Any) -> None:
        await self._session.notify(spec, params)
