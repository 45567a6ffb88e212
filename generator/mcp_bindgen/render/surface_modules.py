"""Render `methods.py`, `server.py` and `client.py` of one version from the protocol surface.

All decisions (annotations, signatures, default bodies) are made here in Python; the templates
only loop over what this module hands them.
"""

from __future__ import annotations

import json
from typing import Any

from .. import crossing, policy
from ..errors import BindgenError
from ..ir import ArrayOf, Const, Enum, MapOf, ObjectDef, Ref, Scalar, SchemaIR, TypeExpr, UnionOf
from ..naming import is_release, snake_case
from ..surface import Gate, MethodSurface, ParamGate, ProtocolSurface, builtin_methods
from . import fill
from .templates import render

TABLES = (
    ("CLIENT_REQUESTS", "client_to_server", "request"),
    ("CLIENT_NOTIFICATIONS", "client_to_server", "notification"),
    ("SERVER_REQUESTS", "server_to_client", "request"),
    ("SERVER_NOTIFICATIONS", "server_to_client", "notification"),
)


def annotation(ir: SchemaIR, expr: TypeExpr, models: str = "m") -> str:
    """A Python annotation for a type expression, naming generated types as `<models>.<Name>`."""
    if isinstance(expr, Ref):
        return f"{models}.{ir.py_name(expr.name)}"
    if isinstance(expr, Scalar):
        return {"string": "str", "integer": "int", "number": "int | float", "boolean": "bool", "null": "None"}.get(
            expr.kind, "Any"
        )
    if isinstance(expr, Const):
        return f"Literal[{json.dumps(expr.value)}]"
    if isinstance(expr, Enum):
        return "Literal[" + ", ".join(json.dumps(v) for v in expr.values) + "]"
    if isinstance(expr, ArrayOf):
        return f"list[{annotation(ir, expr.items, models)}]"
    if isinstance(expr, MapOf):
        return f"dict[str, {annotation(ir, expr.values, models)}]"
    if isinstance(expr, UnionOf):
        return " | ".join(dict.fromkeys(annotation(ir, m, models) for m in expr.members))
    raise TypeError(expr)


def _gate(gate: Gate | None) -> str:
    return "None" if gate is None else f'Capability("{gate.side}", {tuple(gate.path)!r})'


def _param_gate(pg: ParamGate) -> str:
    return (
        f'ParamCapability(param="{pg.param}", capability={_gate(pg.gate)}, '
        f"equals={json.dumps(pg.equals) if pg.equals is not None else 'None'}, present={pg.present})"
    )


def _deferred(py_name: str, models: str = "m") -> str:
    """A model the tables name without creating it (`Deferred`: looked up on first use)."""
    return f'Deferred({models}, "{py_name}")'


def _spec_view(ir: SchemaIR, spec: MethodSurface) -> dict[str, Any]:
    return {
        "method": spec.method,
        "kind": spec.kind,
        "direction": spec.direction,
        "handler": spec.handler,
        "message": _deferred(ir.py_name(spec.message_type)),
        "params": _deferred(ir.py_name(spec.params_type)) if spec.params_type else "None",
        "params_required": spec.params_required,
        "result": _deferred(ir.py_name(spec.result_type)) if spec.result_type else "None",
        "input_required": spec.input_required,
        "gate": _gate(spec.gate),
        "param_gates": [_param_gate(pg) for pg in spec.param_gates],
        "optional_handler": spec.optional_handler,
        "builtin": spec.method in builtin_methods(),
        "runtime_served": spec.method in policy.runtime_served(),
    }


def reshape_record(entry: Any, places: Any, listed: bool = True) -> str:
    """A policy/reshapes.json entry as the `spec.Reshape` record the runtime reads: its moves compiled
    (`fill.gathered`, `fill.spread`), with where its definition sits in the definitions of the version
    `places` are of (`crossing.places`)."""
    sources = tuple(dict.fromkeys(s["from"] for s in entry.get("spread", ())))
    listing = "" if listed else ", listed=False"
    return (
        f"Reshape({entry['type']!r}, {entry['field']!r}, {sources!r}, {fill.gathered(entry)}, {fill.spread(entry)}, "
        f"places=MappingProxyType({places!r}){listing})"
    )


def _input_asks(surface: ProtocolSurface) -> list[MethodSurface]:
    """The input requests (asks inside an InputRequiredResult) as server-to-client request surfaces."""
    return [
        MethodSurface(
            method=i.method,
            kind="request",
            direction="server_to_client",
            message_type=i.message_type,
            params_type=i.params_type,
            params_required=True,
            result_type=i.result_type,
            input_required=False,
            gate=i.gate,
            gate_reason="",
            param_gates=i.param_gates,
            handler=i.handler,
            optional_handler=False,
        )
        for i in surface.input_requests
    ]


def _parsers(ir: SchemaIR, surface: ProtocolSurface) -> list[dict[str, str]]:
    """The message unions (`ClientMessage`, `ServerMessage`) of the directions with two messages or more."""
    parsers: list[dict[str, str]] = []
    for direction, label, doc in (
        ("client_to_server", "ClientMessage", "Parse a request or notification a client sent"),
        ("server_to_client", "ServerMessage", "Parse a request or notification a server sent"),
    ):
        members = [ir.py_name(m.message_type) for m in surface.methods if m.direction == direction]
        if len(members) >= 2:
            parsers.append(
                {
                    "name": label,
                    "union": " | ".join(f"m.{name}" for name in members),
                    "function": f"{label[:6].lower()}_message_adapter",
                    "doc": doc,
                }
            )
    return parsers


def render_messages(ir: SchemaIR, surface: ProtocolSurface, header: str) -> str | None:
    """`_messages.py`: the message unions `methods` creates on first use (None: the version has none)."""
    parsers = _parsers(ir, surface)
    if not parsers:
        return None
    return render(
        "messages.py.j2",
        header=header,
        version=surface.version,
        parsers=parsers,
        parser_names=", ".join(p["name"] for p in parsers),
    )


def render_methods(ir: SchemaIR, surface: ProtocolSurface, header: str) -> str:
    tables = [
        {"name": name, "specs": [_spec_view(ir, s) for s in surface.table(direction, kind)]}  # type: ignore[arg-type]
        for name, direction, kind in TABLES
    ]
    input_specs = [_spec_view(ir, ask) for ask in _input_asks(surface)]
    tables.append({"name": "INPUT_REQUESTS", "specs": input_specs})
    parsers = _parsers(ir, surface)
    parser_names = ", ".join(p["name"] for p in parsers)
    spec_imports = ["Capability", "Deferred", "ErrorCodes", "MethodSpec", "ProtocolTables", "Reshape"]
    if any(spec["param_gates"] for table in tables for spec in table["specs"]):
        spec_imports.append("ParamCapability")
    spec_imports.sort()
    return render(
        "methods.py.j2",
        header=header,
        spec_imports=", ".join(spec_imports),
        version=surface.version,
        error_codes=[{"name": n, "value": v} for n, v in surface.error_codes],
        server_capability_paths=surface.capability_paths["server"],
        client_capability_paths=surface.capability_paths["client"],
        tables=tables,
        parsers=parsers,
        parser_names=parser_names,
        reshapes=[
            {"type": r.type, "record": reshape_record(r.entry, crossing.places(ir, r.type))} for r in surface.reshapes
        ],
        input_required_result=_deferred(ir.py_name(surface.input_required_result))
        if surface.input_required_result
        else "None",
    )


def render_about(
    surface: ProtocolSurface, package: str, sha256: str, header: str, wire_version: str, schema_dialect: str
) -> str:
    return render(
        "about.py.j2",
        schema_dialect=schema_dialect,
        header=header,
        name=surface.version,
        version=wire_version,
        released=is_release(surface.version, wire_version),
        package=package,
        stateless=surface.stateless,
        batches=surface.batches,
        sha256=sha256,
        meta_keys=[{"name": name, "key": key} for name, key in surface.meta_keys],
    )


# -- stubs ------------------------------------------------------------------------------------


def _doc(spec: MethodSurface) -> str:
    gate = f"needs {spec.gate.side} capability `{'.'.join(spec.gate.path)}`" if spec.gate else "ungated"
    return f"`{spec.method}` ({gate})."


def _default_body(ir: SchemaIR, spec: MethodSurface) -> str:
    """The body of a stub handler: optional handlers answer an empty result, the rest are abstract."""
    if not spec.optional_handler:
        return f'raise NotImplementedError("{spec.method}")'
    assert spec.result_type
    result = ir.object(spec.result_type)
    args = []
    for f in result.fields:
        if not f.required:
            continue
        target = ir.resolve(f.type)
        if isinstance(target, ArrayOf):
            args.append(f"{f.py_name}=[]")
        elif f.wire_name == "resultType":
            args.append(f'{f.py_name}="complete"')
        elif isinstance(target, Enum):  # e.g. cacheScope: the first (most conservative) value, "private"
            args.append(f"{f.py_name}={json.dumps(sorted(map(str, target.values))[0])}")
        elif isinstance(target, Scalar) and target.kind == "integer":  # e.g. ttlMs: no caching
            args.append(f"{f.py_name}=0")
        else:
            raise BindgenError(
                f"{ir.version}: no empty value for {spec.result_type}.{f.wire_name} of optional {spec.method}"
            )
    return f"return m.{ir.py_name(spec.result_type)}({', '.join(args)})"


def _params_annotation(ir: SchemaIR, spec: MethodSurface) -> str:
    if spec.params_type is None:
        return "dict[str, Any] | None"
    base = f"m.{ir.py_name(spec.params_type)}"
    return base if spec.params_required else f"{base} | None"


def _result_annotation(ir: SchemaIR, spec: MethodSurface) -> str:
    assert spec.result_type
    result = f"m.{ir.py_name(spec.result_type)}"
    return f"{result} | m.InputRequiredResult" if spec.input_required else result


def _handler_views(ir: SchemaIR, specs: list[MethodSurface]) -> list[dict[str, str]]:
    views = []
    for spec in specs:
        if spec.method in builtin_methods():
            continue
        views.append(
            {
                "name": spec.handler,
                "params": _params_annotation(ir, spec),
                "result": _result_annotation(ir, spec) if spec.kind == "request" else "None",
                "doc": _doc(spec),
                "body": _default_body(ir, spec) if spec.kind == "request" else "return None",
                "context": "RequestContext" if spec.kind == "request" else "NotificationContext",
            }
        )
    return views


# Params keys the runtime fills in itself; callers may still pass them through `meta`.
_RUNTIME_FILLED = ("_meta",)
# Params keys of the multi-round-trip requests (2026-07-28) the client runtime alone sets: it
# answers an InputRequiredResult from the client's handlers and re-sends (`client_stateless`).
_RUNTIME_OWNED = ("inputResponses", "requestState")
# The one `_meta` type of every typed client method (runtime/protocol/meta.py), not a class per method.
_META_TYPE = "Meta"


# The params key of a task-augmented request (2025-11-25): with it the typed call answers the
# runtime's `TaskHandle` of the request's result (`runtime/client/task_handle.py`), without it the result itself.
_TASK_PARAM = "task"
TASK_HANDLE = "TaskHandle"


def call_view(
    ir: SchemaIR,
    spec: MethodSurface,
    table: str,
    skip: tuple[str, ...] = (),
    models: str = "m",
    progress: bool = False,
    era: tuple[policy.EraParam, ...] = (),
) -> dict[str, Any]:
    """A typed call (a client's, or a server's to its client): keyword arguments mirroring the
    params, typed from the IR; `skip` leaves out params keys the caller cannot use; `models` is the
    module alias naming the generated types. A request with a `task` param gets two `overloads`
    (without `task`: the result; with it: a `TaskHandle` of the result). `progress`: a request takes
    `progress=` (a callback of the server's progress notifications for this call). `era`: params of
    the other era's request (policy/era_methods.json) taken too where this version lacks them, typed
    as JSON (the 2026-07-28 `call_tool(task=...)` for a 2025-11-25 session)."""
    params: ObjectDef | None = None
    if spec.params_type and isinstance(ir.definitions[spec.params_type], ObjectDef):
        params = ir.object(spec.params_type)
    required: list[str] = []
    optional: list[str] = []
    entries: list[str] = []
    task_ann: str | None = None
    if params is not None:
        for f in params.fields:
            if f.wire_name in _RUNTIME_OWNED or f.wire_name in skip:
                continue
            ann = _META_TYPE if f.wire_name in _RUNTIME_FILLED else annotation(ir, f.type, models)
            if f.wire_name == _TASK_PARAM and spec.kind == "request":
                task_ann = ann
            elif f.required and f.wire_name not in _RUNTIME_FILLED:
                required.append(f"{f.py_name}: {ann}")
            else:
                optional.append(f"{f.py_name}: {ann} | None = None")
            entries.append(f'"{f.wire_name}": {f.py_name}')
        own = {f.wire_name for f in params.fields}
        era = tuple(p for p in era if p.wire not in own)
        for p in era:
            ann = _JSON_TYPES[p.type]
            if p.wire == _TASK_PARAM and spec.kind == "request":
                task_ann = ann
            else:
                optional.append(f"{snake_case(p.wire)}: {ann} | None = None")
            entries.append(f'"{p.wire}": {snake_case(p.wire)}')
        params_expr = "{" + ", ".join(entries) + "}"
    elif spec.params_type:  # a union of params shapes (e.g. elicitation form | url)
        ann = f"{models}.{ir.py_name(spec.params_type)}"
        required.append(f"params: {ann}" if spec.params_required else f"params: {ann} | None = None")
        params_expr = "params"
    else:
        optional.append("params: dict[str, Any] | None = None")
        params_expr = "params"
    keywords = params is not None  # a params object: keyword arguments only
    tail = ["timeout: float | None = None"] if spec.kind == "request" else []
    with_progress = progress and spec.kind == "request"
    if with_progress:
        tail.append("progress: ProgressCallback | None = None")
    result = f"{models}.{ir.py_name(spec.result_type)}" if spec.result_type else "None"
    overloads: list[dict[str, str]] = []
    if task_ann is not None:
        handle = f"{TASK_HANDLE}[{result}]"
        overloads = [
            {
                "signature": _signature(required, optional, [f"{_TASK_PARAM}: None = None", *tail], keywords),
                "result": result,
            },
            {
                "signature": _signature(required, optional, [f"{_TASK_PARAM}: {task_ann}", *tail], keywords),
                "result": handle,
            },
        ]
        tail = [f"{_TASK_PARAM}: {task_ann} | None = None", *tail]
        result = f"{result} | {handle}"
    return {
        "name": spec.handler if spec.kind == "request" else "notify_" + spec.handler.removeprefix("on_"),
        "signature": _signature(required, optional, tail, keywords),
        "result": result,
        "overloads": overloads,
        "doc": _doc(spec) + "".join(_era_param_doc(p, spec) for p in era),
        "table": table,
        "method": spec.method,
        "params": params_expr,
        "call": "_request" if spec.kind == "request" else "_notify",
        "timeout": (", timeout=timeout" if spec.kind == "request" else "")
        + (", progress=progress" if with_progress else ""),
    }


def _era_param_doc(param: policy.EraParam, spec: MethodSurface) -> str:
    return (
        f" `{snake_case(param.wire)}=`: where the session speaks a version whose `{spec.method}` has "
        f"`{param.wire}` (not this one), else `NotExpressible` naming the session's version."
    )


def _signature(required: list[str], optional: list[str], keyword_only: list[str], keywords: bool) -> str:
    """`, *, a: A, b: B | None = None, timeout: ...` (a params object: all keywords), or
    `, params: P, *, timeout: ...` (params as one positional argument)."""
    if keywords:
        parts = required + optional + keyword_only
        return ", *, " + ", ".join(parts) if parts else ""
    positional = required + optional
    return "".join(f", {p}" for p in positional) + (", *, " + ", ".join(keyword_only) if keyword_only else "")


def _listen_view(ir: SchemaIR, spec: MethodSurface) -> dict[str, str]:
    """`Client.listen`: takes the params' `notifications` filter, yields the server's notifications."""
    assert spec.params_type is not None
    notifications = ir.object(spec.params_type).field("notifications")
    assert notifications is not None
    return {
        "filter": annotation(ir, notifications.type) + " | dict[str, Any]",
        "notification": "m.ServerNotification",
        "doc": "",
    }


_JSON_TYPES = {
    "string": "str",
    "integer": "int",
    "number": "int | float",
    "boolean": "bool",
    "object": "dict[str, Any]",
}


def _era_calls(ir: SchemaIR, surface: ProtocolSurface) -> list[dict[str, str]]:
    """The requests of the other lifecycle era (policy/era_methods.json) this version lacks: typed
    methods all the same, which the runtime sends by name on the negotiated version
    (`ClientStub._era_request`), or refuses with `NotExpressible` naming it."""
    own = {s.method for s in surface.table("client_to_server", "request")}
    views = []
    for era in policy.era_methods().requests:
        if era.method in own:
            continue
        keywords = [f"{snake_case(w)}: {_JSON_TYPES[t]}" for w, t, required in era.params if required]
        keywords += [
            f"{snake_case(w)}: {_JSON_TYPES[t]} | None = None" for w, t, required in era.params if not required
        ]
        keywords.append("timeout: float | None = None")
        params = "{" + ", ".join(f'"{w}": {snake_case(w)}' for w, _, _ in era.params) + "}"
        if era.result is None:
            result, target = "None", "None"
        elif era.result in ir.definitions:
            result = target = f"m.{ir.py_name(era.result)}"
        else:
            result, target = "dict[str, Any]", "None"
        if era.method == "ping":
            body = "await self._ping(timeout)"
        else:
            call = f'self._era_request("{era.method}", {params}, {target}, timeout)'
            body = f"await {call}" if era.result is None else f"return await {call}"
        views.append(
            {
                "name": era.name,
                "signature": ", *, " + ", ".join(keywords),
                "result": result,
                "doc": f"`{era.method}`, where the session speaks a version that has it (not MCP {surface.version}): "
                "else `NotExpressible` naming the session's version.",
                "body": body,
            }
        )
    return views


def _era_listen(ir: SchemaIR, surface: ProtocolSurface) -> list[dict[str, str]]:
    """`Client.listen` in a version without `subscriptions/listen`: a filter as JSON, the stub's own
    server notifications (crossed from the session's version)."""
    era = policy.era_methods()
    if any(s.method == era.listen for s in surface.table("client_to_server", "request")):
        return []
    notification = era.listen_notification
    yields = f"m.{ir.py_name(notification)}" if notification in ir.definitions else "Any"
    return [{"filter": "dict[str, Any]", "notification": yields, "doc": f" (not in MCP {surface.version})"}]


def _context_imports(*views: list[dict[str, str]]) -> list[str]:
    """The import of the handler context protocols the stub's handlers use (none for no handlers)."""
    names = sorted({view["context"] for group in views for view in group})
    return [f"from mcp_bindings.runtime.abi.protocol import {', '.join(names)}"] if names else []


# Params keys a server's request to its client cannot use: `task` (task-augmented sampling or
# elicitation, 2025-11-25) answers a CreateTaskResult, which `RequestContext.request` does not follow.
_SERVER_CALL_SKIPS = ("task",)


_CALLS_DOC = (
    "Each method needs what the client declared (see its doc): one it did not declare raises\n"
    "    `NotExpressible` naming the capability before anything is sent (check with `allows(method)`)."
)
_CALLS_DOC_STATELESS = (
    "This version is stateless: a server sends its client no requests. A handler asks for input\n"
    "    by returning an `InputRequiredResult` (its `inputRequests`), or through the app layer's `Context`."
)


def _client_calls(ir: SchemaIR, surface: ProtocolSurface) -> list[dict[str, Any]]:
    """`ClientCalls`: one typed method per request the version's server sends its client (none in
    the stateless era, whose asks ride an InputRequiredResult); `ping` answers None."""
    views = []
    for spec in surface.table("server_to_client", "request"):
        view = call_view(ir, spec, "SERVER_REQUESTS", skip=_SERVER_CALL_SKIPS)
        if spec.method == "ping":
            view = {
                **view,
                "signature": ", *, timeout: float | None = None",
                "params": "None",
                "result": "None",
                "call": "_ping",
            }
        views.append(view)
    return views


def render_server(ir: SchemaIR, surface: ProtocolSurface, header: str) -> str:
    requests = _handler_views(ir, surface.table("client_to_server", "request"))
    notifications = _handler_views(ir, surface.table("client_to_server", "notification"))
    calls = _client_calls(ir, surface)
    typing_names = ["ClassVar"]
    if any("Any" in view["params"] for view in requests + notifications) or any(
        "Any" in call["signature"] for call in calls
    ):
        typing_names.insert(0, "Any")
    if any("Literal[" in call["signature"] for call in calls):
        typing_names.append("Literal")
    return render(
        "server.py.j2",
        header=header,
        version=surface.version,
        calls_doc=_CALLS_DOC_STATELESS if surface.stateless else _CALLS_DOC,
        typing_imports=", ".join(typing_names),
        context_imports=_context_imports(requests, notifications, [{"context": "RequestContext"}]),
        meta_imports=["from mcp_bindings.runtime.abi.protocol import Meta"]
        if any("Meta" in c["signature"] for c in calls)
        else [],
        requests=requests,
        notifications=notifications,
        calls=calls,
    )


def render_client(ir: SchemaIR, surface: ProtocolSurface, header: str, known_versions: list[str]) -> str:
    """The version's `client.py`; `known_versions`: the wire versions its `ProtocolVersion` names
    (every version the runtime speaks, for the negotiated version typed on the client)."""
    server_asks = surface.table("server_to_client", "request")
    input_asks = _input_asks(surface)
    era = policy.era_methods()
    calls = [
        call_view(ir, s, "CLIENT_REQUESTS", progress=True, era=era.params_of(s.method))
        for s in surface.table("client_to_server", "request")
        if s.method not in builtin_methods()
    ] + [
        call_view(ir, s, "CLIENT_NOTIFICATIONS")
        for s in surface.table("client_to_server", "notification")
        if s.method not in builtin_methods()
    ]
    requests = _handler_views(ir, server_asks + input_asks)
    notifications = _handler_views(ir, surface.table("server_to_client", "notification"))
    # subscriptions/listen (2026-07-28 on): an async iterator of the version's server notifications.
    listen = [
        _listen_view(ir, s) for s in surface.table("client_to_server", "request") if s.method == "subscriptions/listen"
    ] or _era_listen(ir, surface)
    typing_names = ["Any", "ClassVar", "Literal"]
    tasks = any(call["overloads"] for call in calls)
    if tasks:
        typing_names.append("overload")
    return render(
        "client.py.j2",
        header=header,
        version=surface.version,
        known_versions=", ".join(f'"{v}"' for v in known_versions),
        typing_imports=", ".join(typing_names),
        context_imports=_context_imports(requests, notifications),
        task_imports=[f"from mcp_bindings.runtime.abi.client import {TASK_HANDLE}"] if tasks else [],
        calls=calls,
        listen=listen,
        era_calls=_era_calls(ir, surface),
        ping=[{} for s in surface.table("client_to_server", "request") if s.method == "ping"],
        requests=requests,
        notifications=notifications,
    )
