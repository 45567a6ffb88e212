"""Render the `names` module of a version or an extension: every method and notification name as a
constant, the `Literal` types of each role, and the schema-free tables the runtime reads by name
(routing, listen filters; an extension's task results). It imports nothing, so the runtime and users
can name a method without loading a model.

Decisions are made here (which names, which constant, which table); the template only loops.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from ..errors import BindgenError
from ..extension import ExtensionMethod
from ..ir import ArrayOf, ObjectDef, Scalar, SchemaIR
from ..naming import method_constant
from ..policy import Direction, extension_policy, extension_routing
from ..surface import INPUT_REQUESTS, INPUT_RESPONSES, Kind, ProtocolSurface, object_def
from .templates import render

Group = tuple[str, str, Sequence[str]]  # (Literal type name, what it is, method names)
Table = tuple[str, str, Sequence[tuple[str, str]]]  # (constant, what it is, (key, value) pairs)


def _constants(groups: Iterable[Group], subject: str) -> list[dict[str, str]]:
    seen: dict[str, str] = {}
    for _, _, methods in groups:
        for method in methods:
            name = method_constant(method)
            if seen.setdefault(name, method) != method:
                raise BindgenError(f"{subject}: methods {seen[name]!r} and {method!r} share the constant {name}")
    return [{"name": name, "method": method} for name, method in sorted(seen.items())]


def render_names(
    header: str,
    subject: str,
    groups: Sequence[Group],
    tables: Sequence[Table],
    values: Sequence[tuple[str, str, str]] = (),
    sets: Sequence[Group] = (),
) -> str:
    """`subject`: "MCP 2026-07-28" or "the MCP extension `...`"; `values`: (constant, what, value);
    `sets`: (constant, what, members), frozensets of names."""
    return render(
        "names.py.j2",
        header=header,
        subject=subject,
        values=[{"name": n, "doc": d, "value": v} for n, d, v in values],
        constants=_constants(groups, subject),
        groups=[
            {"name": name, "doc": doc, "literal": ", ".join(json.dumps(m) for m in sorted(set(methods)))}
            for name, doc, methods in groups
            if methods
        ],
        sets=[
            {"name": name, "doc": doc, "members": "".join(f"{json.dumps(m)}, " for m in sorted(members))}
            for name, doc, members in sets
        ],
        tables=[
            {"name": name, "doc": doc, "items": [{"key": k, "value": v} for k, v in items]}
            for name, doc, items in tables
        ],
    )


def _lists(ir: SchemaIR, surface: ProtocolSurface) -> list[tuple[str, str, ObjectDef | None]]:
    """Paginated list requests (their result has `nextCursor`) -> the result's one list field, and
    the object its items are."""
    out: list[tuple[str, str, ObjectDef | None]] = []
    for method in surface.methods:
        result = ir.definitions.get(method.result_type or "")
        if not isinstance(result, ObjectDef) or result.field("nextCursor") is None:
            continue
        arrays = [(f.wire_name, t) for f in result.fields if isinstance(t := ir.resolve(f.type), ArrayOf)]
        if len(arrays) == 1:
            item = ir.resolve(arrays[0][1].items)
            out.append((method.method, arrays[0][0], item if isinstance(item, ObjectDef) else None))
    return out


def _listed(ir: SchemaIR, surface: ProtocolSurface) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Paginated list requests -> the routed request (`ROUTING`, of the same namespace) whose targets
    their items are, and -> the item field naming a target: the routing param where the item has
    it, else the item's field extending its name (`uriTemplate`: a template of such targets)."""
    routing = dict(surface.routing)
    listed: list[tuple[str, str]] = []
    keys: list[tuple[str, str]] = []
    for method, _, item in _lists(ir, surface):
        routed = [r for r in routing if r.split("/")[0] == method.split("/")[0]]
        if len(routed) != 1 or item is None:
            continue
        param = routing[routed[0]]
        key = next((f.wire_name for f in item.fields if f.wire_name == param), None)
        key = key or next((f.wire_name for f in item.fields if f.wire_name.startswith(param)), None)
        if key is not None:
            listed.append((method, routed[0]))
            keys.append((method, key))
    return listed, keys


def _uri_targets(ir: SchemaIR, surface: ProtocolSurface) -> list[str]:
    """The routed requests whose routing param is a URI (`format: uri` in the schema)."""
    params = {m.method: object_def(ir, m.params_type) for m in surface.methods}
    out: list[str] = []
    for method, param in surface.routing:
        definition = params.get(method)
        wire = definition.field(param) if definition is not None else None
        if wire is not None and isinstance(kind := ir.resolve(wire.type), Scalar) and kind.format == "uri":
            out.append(method)
    return out


def _input_round(ir: SchemaIR, surface: ProtocolSurface) -> list[tuple[str, str, str]]:
    """The fields of an input round, where the version has one: the asks of the result asking for
    input, the answers of the request asked, and the state both carry (the one field the result and
    every such request's params share, `_meta` aside)."""
    result = object_def(ir, surface.input_required_result)
    params = [object_def(ir, m.params_type) for m in surface.methods if m.input_required]
    if result is None or not params:
        return []
    shared = {f.wire_name for f in result.fields} - {"_meta"}
    for definition in params:
        shared &= {f.wire_name for f in definition.fields} if definition is not None else set()
    if len(shared) != 1:
        raise BindgenError(f"MCP {surface.version}: expected one state field of an input round, found {sorted(shared)}")
    (state,) = shared
    return [
        ("INPUT_REQUESTS", "the asks of a result asking for input", INPUT_REQUESTS),
        ("INPUT_RESPONSES", "the answers a request sent again carries", INPUT_RESPONSES),
        ("REQUEST_STATE", "a round's state, from the result to the request", state),
    ]


def version_names(ir: SchemaIR, surface: ProtocolSurface, header: str) -> str:
    """The `names` module of a protocol version."""
    table = {(direction, kind): [m.method for m in surface.table(direction, kind)] for _, direction, kind in ROLES}
    asks = [i.method for i in surface.input_requests]
    groups: list[Group] = [(name, doc, table[(direction, kind)]) for (name, direction, kind), doc in ROLE_DOCS]
    groups.append(
        ("InputRequestMethod", "asks a server embeds in an InputRequiredResult (never sent as requests)", asks)
    )
    requests = table[("client_to_server", "request")] + table[("server_to_client", "request")] + asks
    notifications = table[("client_to_server", "notification")] + table[("server_to_client", "notification")]
    groups.append(("Method", "every request method, either direction", requests))
    groups.append(("NotificationMethod", "every notification, either direction", notifications))
    listed, keys = _listed(ir, surface)
    tables: list[Table] = [
        (
            "ROUTING",
            "stateless HTTP routing (policy/routing.json): request -> the params field `Mcp-Name` mirrors",
            surface.routing,
        ),
        (
            "LISTEN_FILTERS",
            "subscriptions/listen (policy/listen_filters.json): filter key -> the notification it opts in to",
            surface.listen_filters,
        ),
        (
            "LISTS",
            "paginated list requests -> the result's list field (read from the schema)",
            [(method, field) for method, field, _ in _lists(ir, surface)],
        ),
        ("LISTED", "paginated list requests -> the routed request whose targets their items are", listed),
        ("LIST_KEYS", "paginated list requests -> the field of an item naming its target (or their template)", keys),
    ]
    uris = ("URI_TARGETS", "routed requests whose target is a URI (its param's format)", _uri_targets(ir, surface))
    return render_names(header, f"MCP {surface.version}", groups, tables, _input_round(ir, surface), [uris])


def extension_names(identifier: str, ir: SchemaIR, methods: Sequence[ExtensionMethod], header: str) -> str:
    """The `names` module of an extension."""
    params = {m.method: _fields(ir, m.params_type) for m in methods}
    wire = [m for m in methods if not m.bridge]
    groups: list[Group] = [
        (name, doc, [m.method for m in wire if (m.direction, m.kind) == (direction, kind)])
        for (name, direction, kind), doc in ROLE_DOCS
    ]
    bridge = [m for m in methods if m.bridge]
    groups.append(
        (
            "AppMethod",
            "what the app sends on the extension's own channel",
            [m.method for m in bridge if m.direction == "client_to_server"],
        )
    )
    groups.append(
        (
            "HostMethod",
            "what the host sends on the extension's own channel",
            [m.method for m in bridge if m.direction == "server_to_client"],
        )
    )
    routing = [
        (method, param)
        for method, param in sorted(extension_routing().get(identifier, {}).items())
        if param in params.get(method, set())
    ]
    tables: list[Table] = [
        (
            "ROUTING",
            "stateless HTTP routing (policy/routing.json): request -> the params field `Mcp-Name` mirrors",
            routing,
        )
    ]
    sets: list[Group] = [
        (
            "TASK_RESULTS",
            "core requests a server may answer with a task (policy/extension_methods.json)",
            extension_policy(identifier).task_results,
        ),
    ]
    values = [("IDENTIFIER", "the extension's identifier", identifier)]
    return render_names(header, f"the MCP extension `{identifier}`", groups, tables, values, sets)


def _fields(ir: SchemaIR, name: str | None) -> set[str]:
    definition = object_def(ir, name)
    return {f.wire_name for f in definition.fields} if definition is not None else set()


ROLES: tuple[tuple[str, Direction, Kind], ...] = (
    ("ClientRequestMethod", "client_to_server", "request"),
    ("ClientNotificationMethod", "client_to_server", "notification"),
    ("ServerRequestMethod", "server_to_client", "request"),
    ("ServerNotificationMethod", "server_to_client", "notification"),
)
ROLE_DOCS = tuple(
    zip(
        ROLES,
        (
            "what a client sends (a server handles them)",
            "notifications a client sends",
            "what a server sends (a client handles them)",
            "notifications a server sends",
        ),
        strict=True,
    )
)
