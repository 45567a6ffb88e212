"""Descriptors the generated method tables are made of; the runtime reads nothing else about methods.

Kept free of I/O and of anyio so that importing a version's tables stays cheap.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

Side = Literal["server", "client"]
Direction = Literal["client_to_server", "server_to_client"]
Kind = Literal["request", "notification"]


@dataclass(frozen=True, slots=True)
class Capability:
    """A dotted path into one side's capabilities object, e.g. server `resources.subscribe`."""

    side: Side
    path: tuple[str, ...]

    def present_in(self, capabilities: Mapping[str, Any] | None) -> bool:
        node: Any = capabilities
        for key in self.path:
            if not isinstance(node, Mapping) or node.get(key) in (None, False):
                return False
            node = node[key]
        return True

    def __str__(self) -> str:
        return f"{self.side} capability `{'.'.join(self.path)}`"


@dataclass(frozen=True, slots=True)
class ParamCapability:
    """A further capability a request needs when one of its params is used (e.g. sampling with tools)."""

    param: str
    capability: Capability
    equals: Any = None
    present: bool = False

    def applies(self, params: Mapping[str, Any] | None) -> bool:
        if not params or self.param not in params:
            return False
        return self.present or params[self.param] == self.equals


@dataclass(frozen=True, slots=True)
class MethodSpec:
    method: str
    kind: Kind
    direction: Direction
    handler: str  # snake_case name of the handler / client method
    message: type[Any]  # the whole message model (e.g. CallToolRequest)
    params: Any  # params model or type alias; None when untyped
    params_required: bool
    result: Any  # result model (requests), None for notifications
    input_required: bool  # may be answered with InputRequiredResult (2026-07-28)
    gate: Capability | None
    param_gates: tuple[ParamCapability, ...]
    optional_handler: bool  # a server may leave it unimplemented; it then answers an empty result
    builtin: bool  # implemented by the runtime itself (lifecycle, ping, ...): no stub handler

    def needed_capabilities(self, params: Mapping[str, Any] | None) -> list[Capability]:
        needed = [self.gate] if self.gate else []
        needed += [pg.capability for pg in self.param_gates if pg.applies(params)]
        return needed
