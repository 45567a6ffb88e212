"""An extension schema read as bindings that plug into a core version.

An extension's schema (e.g. `io.modelcontextprotocol/tasks`) defines its own messages and splices
in, verbatim, the core definitions they use. Its bindings hold only its own definitions; a spliced
one is imported from the core version package. What counts as spliced is decided by content: a
definition whose IR equals the core version's definition of the same name and that refers only to
spliced definitions itself. The methods come from the message definitions (a JSON-RPC request or
notification with a constant `method`); who sends each is in `policy/extension_methods.json`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from .errors import BindgenError
from .ir import Const, ObjectDef, Ref, SchemaIR, references
from .policy import Direction, extension_policy
from .surface import handler_name

EXT_PACKAGE = "ext"


def extension_package(identifier: str) -> str:
    """`io.modelcontextprotocol/tasks` -> `io_modelcontextprotocol_tasks` (a Python name, stable)."""
    name = re.sub(r"[^0-9a-zA-Z]+", "_", identifier).strip("_").lower()
    if not name:
        raise BindgenError(f"extension identifier {identifier!r} has no usable characters")
    return name if not name[0].isdigit() else f"x_{name}"


@dataclass(frozen=True)
class ExtensionMethod:
    method: str
    kind: Literal["request", "notification"]
    direction: Direction | Literal["?"]  # "?": no policy entry says (only with `lenient`, for `diff`)
    message_type: str
    params_type: str | None
    params_required: bool
    result_type: str | None
    handler: str
    # A message of the extension's own channel (MCP Apps: the host<->app postMessage bridge, where the
    # app plays the client and the host the server), not of the MCP connection.
    bridge: bool = False


def spliced(ext: SchemaIR, core: SchemaIR) -> set[str]:
    """The extension's definitions that are the core version's, written out again."""
    same = {name for name, d in ext.definitions.items() if core.definitions.get(name) == d}
    changed = True
    while changed:  # a definition referring to one that differs is the extension's own
        changed = False
        for name in sorted(same):
            if not references(ext.definitions[name]) <= same:
                same.discard(name)
                changed = True
    return same


def policy_methods(identifier: str) -> dict[str, Direction]:
    """Method -> who sends it, for the extension's methods (`policy/extension_methods.json`)."""
    return dict(extension_policy(identifier).directions)


def _message_kind(name: str, definition: ObjectDef, bridge: bool) -> Literal["request", "notification"]:
    """A JSON-RPC message has an `id` when it is a request; a bridge message's schema leaves the
    envelope out, so its name says (`...Request`, answered by `...Result`)."""
    if not bridge:
        return "request" if definition.field("id") else "notification"
    return "request" if name.endswith("Request") else "notification"


def extension_methods(identifier: str, ir: SchemaIR, own: set[str], *, lenient: bool = False) -> list[ExtensionMethod]:
    """The requests and notifications among the extension's own definitions, by method name.
    `lenient` (`mcp-bindgen diff` of a schema not generated yet): a method the policy does not
    know is kept, its direction "?", instead of refused."""
    policy = extension_policy(identifier)
    directions = dict(policy.directions)
    out = []
    for name in sorted(own):
        definition = ir.definitions[name]
        if not isinstance(definition, ObjectDef) or definition.hoisted:
            continue
        method, jsonrpc = definition.field("method"), definition.field("jsonrpc")
        if method is None or not isinstance(method.type, Const) or not isinstance(method.type.value, str):
            continue
        bridge = method.type.value in policy.bridge
        if jsonrpc is None and not policy.bridge:
            continue
        kind = _message_kind(name, definition, bridge)
        if method.type.value not in directions and not lenient:
            raise BindgenError(
                f"extension {identifier}: who sends {method.type.value} ({name}) is not known; add it to "
                "generator/mcp_bindgen/policy/extension_methods.json with the direction its specification gives"
            )
        params = definition.field("params")
        params_type = params.type.name if params is not None and isinstance(params.type, Ref) else None
        result_type = None
        if kind == "request":
            result_type = name.removesuffix("Request") + "Result"
            if bridge and result_type not in ir.definitions:
                result_type = None  # answered with an empty result (the schema defines none)
            elif result_type not in ir.definitions:
                raise BindgenError(f"extension {identifier}: {name} ({method.type.value}) has no {result_type}")
        out.append(
            ExtensionMethod(
                method=method.type.value,
                kind=kind,
                direction=directions.get(method.type.value, "?"),
                message_type=name,
                params_type=params_type,
                params_required=params is not None and params.required,
                result_type=result_type,
                handler=handler_name(name, kind),
                bridge=bridge,
            )
        )
    return sorted(out, key=lambda m: m.method)
