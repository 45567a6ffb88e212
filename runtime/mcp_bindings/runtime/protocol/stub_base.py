"""The capability-deriving base of the generated stubs, both sides: a stub's capabilities come from
its overridden handlers plus what it declares.

A stub class carries `protocol`, its version's generated `ProtocolTables`; everything here reads
the method tables, never a method name.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar, cast

from mcp_bindings.runtime.protocol.custom_methods import Methods, methods_of
from mcp_bindings.runtime.protocol.spec import Capability, MethodSpec, ProtocolTables, Side
from mcp_bindings.runtime.rpc.errors import StubDefinitionError

__all__ = ["CapabilityDeriving", "check_handlers", "overridden", "stub_class"]


def _handler_specs(protocol: ProtocolTables, side: Side) -> Iterator[MethodSpec]:
    for table in protocol.handled_by(side):
        for spec in table.values():
            if not spec.builtin:
                yield spec


def stub_class(cls: type) -> type:
    """The generated class in the MRO (the one that defines `protocol` in its own body)."""
    for klass in cls.__mro__:
        if "protocol" in vars(klass):
            return klass
    raise StubDefinitionError(f"{cls.__name__} does not derive from a generated stub")


def overridden(obj: object, name: str, stub: type) -> bool:
    return getattr(type(obj), name, None) is not getattr(stub, name, None)


def _paths(capabilities: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for key, value in capabilities.items():
        if value is None or value is False:
            continue
        yield (*prefix, key)
        if isinstance(value, Mapping):
            yield from _paths(cast("Mapping[str, Any]", value), (*prefix, key))


def check_handlers(cls: type, protocol: ProtocolTables, side: Side) -> None:
    """Every handler `cls` defines must be called as the runtime calls it: `async def name(self,
    params, ctx)`; else `StubDefinitionError` when the class is defined, not a -32603 per call."""
    for spec in _handler_specs(protocol, side):
        handler = vars(cls).get(spec.handler)
        if handler is None:
            continue
        expected = f"async def {spec.handler}(self, params, ctx)"
        where = f"{cls.__name__}.{spec.handler} (the handler of {spec.method})"
        if not callable(handler):
            raise StubDefinitionError(f"{where} is {type(handler).__name__!r}, not a method; define {expected}")
        if not (inspect.iscoroutinefunction(handler) or inspect.isasyncgenfunction(handler)):
            raise StubDefinitionError(f"{where} is not async; define {expected}")
        try:
            inspect.signature(handler).bind(None, None, None)
        except TypeError:
            taken = ", ".join(inspect.signature(handler).parameters)
            raise StubDefinitionError(
                f"{where} takes ({taken}); the runtime calls it with (params, ctx): define {expected}"
            ) from None
        except ValueError:
            continue  # no signature to read (a builtin): nothing to check


class CapabilityDeriving:
    """Derive `side`'s capabilities from overridden handlers plus declared sub-capabilities."""

    protocol: ClassVar[ProtocolTables]
    _side: ClassVar[Side]
    # Sub-capabilities only the author can vouch for, e.g. {"tools": {"listChanged": True}}.
    declared_capabilities: ClassVar[Mapping[str, Any]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "protocol" not in vars(cls) and hasattr(cls, "protocol") and hasattr(cls, "_side"):
            check_handlers(cls, cls.protocol, cls._side)  # a user's class (the generated one defines `protocol`)

    def derive_capabilities(self) -> dict[str, Any]:
        stub = stub_class(type(self))
        capabilities: dict[str, Any] = copy.deepcopy(dict(self.declared_capabilities))
        by_capability: dict[tuple[str, ...], list[MethodSpec]] = {}
        for spec in _handler_specs(self.protocol, self._side):
            if spec.gate is None or spec.gate.side != self._side or spec.kind != "request":
                continue
            by_capability.setdefault(spec.gate.path, []).append(spec)
        for path, specs in sorted(by_capability.items()):
            implemented = [s for s in specs if overridden(self, s.handler, stub)]
            declared = Capability(self._side, path).present_in(capabilities)
            if not implemented and not declared:
                continue
            # (tasks/* the runtime serves from its task store, `runtime_served`: `tasks`; a client's: `client_tasks`)
            optional = [s for s in specs if s.optional_handler or s.runtime_served]
            missing = [s.handler for s in specs if s not in optional and s not in implemented]
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
        `handler(params, ctx)`; without `handler`, a decorator. Kept by the runtime (`protocol.custom_methods`)."""
        return self._custom_methods().register(method, handler)

    def use_extension(self, extension: Any, settings: Mapping[str, Any] | None = None, handlers: Any = None) -> None:
        """Declare an extension (an identifier or an `extensions.Extension`) in this side's
        capabilities, with its settings, and serve the extension's methods `handlers` has."""
        self._custom_methods().use(extension, settings, handlers)

    def _custom_methods(self) -> Methods:
        """Where this object's custom methods are kept: by the runtime, never in the object (a
        server's: its host; a client's handlers: `custom_methods.methods_of`)."""
        return methods_of(self, self._side)

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
