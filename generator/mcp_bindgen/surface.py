"""The protocol surface of one version, derived from the IR and the policy files.

Roles come from the schema's role unions (`ClientRequest`, `ServerRequest`, `ClientNotification`,
`ServerNotification`), never from scanning every `method` constant; a one-member role is a bare
`$ref` or even an inline copy of its member, and 2026-07-28 has no `ServerRequest` at all (its
server-to-client asks are `InputRequest`s inside an `InputRequiredResult`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

from . import policy
from .errors import BindgenError
from .ir import AliasDef, Const, ObjectDef, Ref, SchemaIR, UnionOf
from .naming import snake_case
from .policy import Direction, Gate, GateRule, ParamGate, PolicyErrorCode

Kind = Literal["request", "notification"]

ROLE_UNIONS: dict[tuple[Direction, Kind], str] = {
    ("client_to_server", "request"): "ClientRequest",
    ("server_to_client", "request"): "ServerRequest",
    ("client_to_server", "notification"): "ClientNotification",
    ("server_to_client", "notification"): "ServerNotification",
}
CAPABILITY_OBJECTS = {"server": "ServerCapabilities", "client": "ClientCapabilities"}
# An input round (2026-07-28 on): the result that asks carries its asks in INPUT_REQUESTS; a request
# that may be asked carries the answers in INPUT_RESPONSES (the names the schema marks them by).
INPUT_REQUESTS, INPUT_RESPONSES = "inputRequests", "inputResponses"


@dataclass(frozen=True)
class MethodSurface:
    method: str
    kind: Kind
    direction: Direction
    message_type: str
    params_type: str | None  # name of the params model, None when params is untyped or absent
    params_required: bool
    result_type: str | None  # requests only
    input_required: bool  # 2026-07-28: may be answered with InputRequiredResult
    gate: Gate | None
    gate_reason: str
    param_gates: tuple[ParamGate, ...]
    handler: str
    optional_handler: bool
    governed: bool = True  # False: no rule of policy/capabilities.json names it (ungated for now)


@dataclass(frozen=True)
class InputRequestSurface:
    method: str
    message_type: str
    params_type: str | None
    result_type: str
    handler: str
    gate: Gate | None
    param_gates: tuple[ParamGate, ...]
    governed: bool = True


@dataclass(frozen=True)
class ProtocolSurface:
    version: str
    methods: tuple[MethodSurface, ...]
    input_requests: tuple[InputRequestSurface, ...]
    error_codes: tuple[tuple[str, int], ...]
    stateless: bool  # no initialize handshake (2026-07-28 on)
    batches: bool  # JSON-RPC batches (2025-03-26 only)
    capability_paths: dict[str, tuple[str, ...]]  # side -> every dotted path in its capabilities object
    input_required_result: str | None  # the result type that asks the client for input (2026-07-28 on)
    meta_keys: tuple[tuple[str, str], ...]  # reserved `_meta` keys the schema defines: (name, full key)
    gaps: tuple[PolicyGap, ...] = ()
    # request method -> the params field mirrored into `Mcp-Name` (policy/routing.json, where it attaches)
    routing: tuple[tuple[str, str], ...] = ()
    # listen filter key -> the server notification it opts in to (policy/listen_filters.json, likewise)
    listen_filters: tuple[tuple[str, str], ...] = ()  # what the policy files do not cover in this schema (for review)
    # definitions whose content another version holds in other fields (policy/reshapes.json, where it attaches)
    reshapes: tuple[policy.ReshapeRule, ...] = ()

    def table(self, direction: Direction, kind: Kind) -> list[MethodSurface]:
        return [m for m in self.methods if m.direction == direction and m.kind == kind]


# -- policy ----------------------------------------------------------------------------------


def gate_rules(path: Path | None = None) -> tuple[GateRule, ...]:
    """The rules of `policy/capabilities.json` (or of the file at `path`), in file order."""
    return policy.capability_rules(path)


def rule_for(method: str, direction: str) -> GateRule | None:
    """The first rule naming this method (and direction); None when the policy has none yet."""
    return next((rule for rule in gate_rules() if rule.matches(method, direction)), None)


@dataclass(frozen=True)
class PolicyGap:
    """Something in a schema that the policy files do not cover: generated with a safe default and
    listed for review (`mcp-bindgen generate` prints these)."""

    subject: str  # "tools/search (client_to_server)", "server:widgets"
    what: str  # what was done and what is missing


@dataclass(frozen=True)
class _Gating:
    gate: Gate | None
    param_gates: tuple[ParamGate, ...]
    optional_handler: bool
    reason: str
    governed: bool = True


def _gating(method: str, direction: str, paths: dict[str, tuple[str, ...]], gaps: list[PolicyGap]) -> _Gating:
    """The gate of a method in one schema, from the first rule that names it."""
    rule = rule_for(method, direction)
    if rule is None:
        derived = conventional_gate(method, direction, paths)
        what = (
            f"no rule in policy/capabilities.json: gated on {derived} by the naming convention; add a rule if "
            "another capability gates it"
            if derived is not None
            else "no rule in policy/capabilities.json: generated ungated; add a rule naming the capability that "
            'gates it (or `"gate": null` with a reason)'
        )
        gaps.append(PolicyGap(f"{method} ({direction.replace('_', ' ')})", what))
        if derived is not None:
            return _Gating(derived, (), False, policy.capability_convention())
        return _Gating(None, (), False, "", governed=False)

    def defined(gate: Gate) -> bool:
        return ".".join(gate.path) in paths.get(gate.side, ())

    gate = rule.gate
    if gate is not None and not defined(gate):
        if not rule.ungated_without_capability:
            gaps.append(
                PolicyGap(
                    f"{method} ({direction.replace('_', ' ')})",
                    f"its rule gates it on {gate}, which this schema does not define: generated ungated",
                )
            )
        gate = None
    param_gates = tuple(pg for pg in rule.param_gates if defined(pg.gate))
    return _Gating(gate, param_gates, rule.optional_handler, rule.reason)


def conventional_gate(method: str, direction: str, paths: dict[str, tuple[str, ...]]) -> Gate | None:
    """The gate MCP's naming gives a method (policy/capabilities.json `convention`): a request
    `<capability>/...` on that capability of the side serving it, `notifications/<capability>/list_changed`
    on `<capability>.listChanged` of the side sending it; None where the schema defines no such capability."""
    parts = method.split("/")
    if parts[0] == "notifications":
        side: Literal["server", "client"] = "server" if direction == "server_to_client" else "client"
        path = (parts[1], "listChanged") if len(parts) == 3 and parts[2] == "list_changed" else None
    else:
        side = "server" if direction == "client_to_server" else "client"
        path = (parts[0],) if len(parts) > 1 else None
    if path is None or ".".join(path) not in paths.get(side, ()):
        return None
    return Gate(side, path)


@cache
def builtin_methods() -> frozenset[str]:
    """Methods the runtime implements itself (policy/runtime_methods.json): no stub handler."""
    return frozenset(policy.runtime_methods())


def empty_result_methods() -> dict[str, str]:
    """Request method -> why its result is the empty result (policy/results.json)."""
    return dict(policy.empty_results())


@cache
def handler_renames() -> dict[str, str]:
    """Message type -> handler name (policy/handler_names.json)."""
    return {name: rename.py_name for name, rename in policy.handler_names().items()}


def policy_error_codes() -> tuple[PolicyErrorCode, ...]:
    """The codes of policy/error_codes.json, in file order."""
    return policy.error_codes()


JSONRPC_CODES = frozenset(range(-32700, -32599))  # the JSON-RPC 2.0 reserved range the standard codes sit in


def schema_defines_jsonrpc_codes(ir: SchemaIR) -> bool:
    """Whether the schema defines its JSON-RPC error codes as constants (2026-07-28 on): then it lists
    every code it uses, and policy/error_codes.json has nothing to add."""
    return any(code in JSONRPC_CODES for code in _schema_error_codes(ir).values())


# -- derivation ------------------------------------------------------------------------------


def handler_name(message_type: str, kind: Kind) -> str:
    renamed = handler_renames().get(message_type)
    if renamed:
        return renamed
    stem = re.sub(r"(Request|Notification)$", "", message_type)
    return snake_case(stem) if kind == "request" else f"on_{snake_case(stem)}"


def _method_of(ir: SchemaIR, name: str) -> str:
    definition = ir.definitions[name]
    field = definition.field("method") if isinstance(definition, ObjectDef) else None
    if field is None or not isinstance(field.type, Const) or not isinstance(field.type.value, str):
        raise BindgenError(f"{ir.version}: {name} has no constant `method`")
    return field.type.value


def role_members(ir: SchemaIR, role: str) -> list[str] | None:
    """Member type names of a role union; None when the version has no such role."""
    if role not in ir.definitions:
        return None
    definition = ir.definitions[role]
    if isinstance(definition, AliasDef):
        if isinstance(definition.type, UnionOf):
            members = definition.type.members
        else:
            members = (definition.type,)  # a one-member union rendered as a bare $ref
        names = []
        for member in members:
            if not isinstance(member, Ref):
                raise BindgenError(f"{ir.version}: {role} has a member that is not a reference")
            names.append(member.name)
        return names
    # A one-member union rendered as an inline copy: find the definition it copies, by its method.
    method = _method_of(ir, role)
    copies = [
        name
        for name, d in ir.definitions.items()
        if name != role
        and name in ir.upstream_names
        and name not in ROLE_UNIONS.values()
        and isinstance(d, ObjectDef)
        and isinstance(getattr(d.field("method"), "type", None), Const)
        and _method_of(ir, name) == method
        and d.fields == definition.fields
    ]
    if len(copies) != 1:
        raise BindgenError(f"{ir.version}: {role} is an inline copy of {copies or 'nothing'}; expected exactly one")
    return copies


def _params(ir: SchemaIR, message_type: str) -> tuple[str | None, bool]:
    message = ir.object(message_type)
    field = message.field("params")
    if field is None:
        return None, False
    return (field.type.name if isinstance(field.type, Ref) else None), field.required


def _empty_result(ir: SchemaIR) -> str:
    # EmptyResult is an alias of Result: name the model itself, so it can be built and checked.
    name = "EmptyResult" if "EmptyResult" in ir.definitions else "Result"
    target = ir.definitions[name]
    if isinstance(target, AliasDef) and isinstance(target.type, Ref):
        name = target.type.name
    return name


def _result_type(ir: SchemaIR, message_type: str, method: str, gaps: list[PolicyGap] | None = None) -> str:
    stem = re.sub(r"Request$", "", message_type)
    if f"{stem}Result" in ir.definitions:
        return f"{stem}Result"
    if method in empty_result_methods():
        return _empty_result(ir)
    if gaps is None or not ({"EmptyResult", "Result"} & set(ir.definitions)):
        raise BindgenError(f"{ir.version}: no result type for {method} ({message_type}); add it to policy/results.json")
    gaps.append(
        PolicyGap(
            method, f"no {stem}Result in the schema and no entry in policy/results.json: typed as the empty result"
        )
    )
    return _empty_result(ir)


def _capability_paths(ir: SchemaIR, name: str) -> tuple[str, ...]:
    paths: list[str] = []

    def walk(obj_name: str, prefix: str) -> None:
        for field in ir.object(obj_name).fields:
            path = prefix + field.wire_name
            paths.append(path)
            target = field.type
            if isinstance(target, Ref) and isinstance(ir.definitions[target.name], ObjectDef):
                walk(target.name, path + ".")

    if name in ir.definitions:
        walk(name, "")
    return tuple(paths)


def _schema_error_codes(ir: SchemaIR) -> dict[str, int]:
    codes: dict[str, int] = {}
    for name in ir.upstream_names:
        definition = ir.definitions[name]
        if not isinstance(definition, ObjectDef):
            continue
        code = _const_code(ir, definition)
        if code is not None:
            codes[snake_case(re.sub(r"Error$", "", name)).upper()] = code
    return codes


def policy_codes_for(ir: SchemaIR, methods: set[str]) -> list[PolicyErrorCode]:
    """The entries of policy/error_codes.json that attach to this schema: it does not define its
    JSON-RPC codes itself, the entry's method (if any) is one of its methods, and the code is not
    already one of its constants."""
    if schema_defines_jsonrpc_codes(ir):
        return []
    defined = set(_schema_error_codes(ir).values())
    return [e for e in policy_error_codes() if (e.method is None or e.method in methods) and e.code not in defined]


def _error_codes(ir: SchemaIR, methods: set[str]) -> tuple[tuple[str, int], ...]:
    codes = _schema_error_codes(ir)
    for entry in policy_codes_for(ir, methods):
        codes[entry.name] = entry.code
    return tuple(sorted(codes.items(), key=lambda item: item[1]))


def _const_code(ir: SchemaIR, definition: ObjectDef) -> int | None:
    field = definition.field("code")
    if field is None:
        error = definition.field("error")
        if error is not None and isinstance(error.type, Ref) and isinstance(ir.definitions[error.type.name], ObjectDef):
            field = ir.object(error.type.name).field("code")
    if field is not None and isinstance(field.type, Const) and isinstance(field.type.value, int):
        return field.type.value
    return None


def _input_required_result(ir: SchemaIR) -> str | None:
    """The result an input-required request may be answered with: the schema's object that carries
    `inputRequests` (2026-07-28: InputRequiredResult); None in versions without multi-round requests."""
    found = [
        name
        for name in ir.upstream_names
        if isinstance(ir.definitions[name], ObjectDef) and ir.object(name).field(INPUT_REQUESTS) is not None
    ]
    if len(found) > 1:
        raise BindgenError(f"{ir.version}: several results carry inputRequests ({', '.join(found)}); expected one")
    return found[0] if found else None


def _reserved_meta_key(key: str) -> str | None:
    """The name part of a `_meta` key whose prefix MCP reserves (second label `modelcontextprotocol`
    or `mcp`, as the schema's MetaObject describes), e.g. `io.modelcontextprotocol/clientInfo`."""
    prefix, slash, name = key.rpartition("/")
    labels = prefix.split(".")
    return name if slash and len(labels) >= 2 and labels[1] in ("modelcontextprotocol", "mcp") and name else None


def _meta_keys(ir: SchemaIR) -> tuple[tuple[str, str], ...]:
    keys: dict[str, str] = {}
    for definition in ir.definitions.values():
        if not isinstance(definition, ObjectDef):
            continue
        for field in definition.fields:
            name = _reserved_meta_key(field.wire_name)
            if name is None:
                continue
            if keys.setdefault(name, field.wire_name) != field.wire_name:
                raise BindgenError(
                    f"{ir.version}: `_meta` keys {keys[name]!r} and {field.wire_name!r} share the name {name!r}"
                )
    return tuple(sorted(keys.items()))


def derive_surface(ir: SchemaIR) -> ProtocolSurface:
    gaps: list[PolicyGap] = []
    paths = {side: _capability_paths(ir, name) for side, name in CAPABILITY_OBJECTS.items()}
    methods: list[MethodSurface] = []
    for (direction, kind), role in ROLE_UNIONS.items():
        for message_type in role_members(ir, role) or []:
            method = _method_of(ir, message_type)
            gating = _gating(method, direction, paths, gaps)
            params_type, params_required = _params(ir, message_type)
            input_required = bool(
                kind == "request"
                and params_type is not None
                and isinstance(ir.definitions[params_type], ObjectDef)
                and ir.object(params_type).field(INPUT_RESPONSES) is not None
            )
            methods.append(
                MethodSurface(
                    method=method,
                    kind=kind,
                    direction=direction,
                    message_type=message_type,
                    params_type=params_type,
                    params_required=params_required,
                    result_type=_result_type(ir, message_type, method, gaps) if kind == "request" else None,
                    input_required=input_required,
                    gate=gating.gate,
                    gate_reason=gating.reason,
                    param_gates=gating.param_gates,
                    handler=handler_name(message_type, kind),
                    optional_handler=gating.optional_handler,
                    governed=gating.governed,
                )
            )
    input_requests = []
    for message_type in role_members(ir, "InputRequest") or []:
        method = _method_of(ir, message_type)
        gating = _gating(method, "server_to_client", paths, gaps)
        params_type, _ = _params(ir, message_type)
        input_requests.append(
            InputRequestSurface(
                method,
                message_type,
                params_type,
                _result_type(ir, message_type, method, gaps),
                handler_name(message_type, "request"),
                gating.gate,
                gating.param_gates,
                gating.governed,
            )
        )
    methods.sort(key=lambda m: (m.direction, m.kind, m.method))
    input_requests.sort(key=lambda m: m.method)
    client_methods = {m.method for m in methods if m.direction == "client_to_server"}
    all_methods = {m.method for m in methods} | {i.method for i in input_requests}
    listen = _listen_filters(ir, methods, gaps)
    return ProtocolSurface(
        version=ir.version,
        methods=tuple(methods),
        input_requests=tuple(input_requests),
        error_codes=_error_codes(ir, all_methods),
        stateless="initialize" not in client_methods,
        batches="JSONRPCBatchRequest" in ir.definitions,
        capability_paths=paths,
        input_required_result=_input_required_result(ir),
        meta_keys=_meta_keys(ir),
        gaps=tuple(sorted(set(gaps), key=lambda g: (g.subject, g.what))),
        routing=_routing(ir, methods),
        listen_filters=listen,
        reshapes=tuple(r for r in policy.reshapes() if _has_field(ir, r.type, r.field)),
    )


def _has_field(ir: SchemaIR, name: str, wire: str) -> bool:
    definition = object_def(ir, name)
    return definition is not None and definition.field(wire) is not None


def object_def(ir: SchemaIR, name: str | None) -> ObjectDef | None:
    """The object definition `name` names, if it is one (None for an alias, a missing or no name)."""
    definition = ir.definitions.get(name) if name is not None else None
    return definition if isinstance(definition, ObjectDef) else None


def _routing(ir: SchemaIR, methods: list[MethodSurface]) -> tuple[tuple[str, str], ...]:
    """The policy's routing entries that attach to this schema: a client request with that params field."""
    requests = {m.method: m for m in methods if m.direction == "client_to_server" and m.kind == "request"}
    out: list[tuple[str, str]] = []
    for method, param in sorted(policy.routing().items()):
        params = object_def(ir, requests[method].params_type) if method in requests else None
        if params is not None and params.field(param) is not None:
            out.append((method, param))
    return tuple(out)


def _listen_filters(ir: SchemaIR, methods: list[MethodSurface], gaps: list[PolicyGap]) -> tuple[tuple[str, str], ...]:
    """What each field of the listen request's filter object opts in to: the server notification its
    description links (`{@link ToolListChangedNotification ...}`, the schema's own cross-reference),
    or the policy's entry for a field whose description links none."""
    rules = policy.listen_filters()
    listen = next((m for m in methods if m.method == rules.method and m.direction == "client_to_server"), None)
    params = object_def(ir, listen.params_type) if listen is not None else None
    container = params.field(rules.container) if params is not None else None
    holder = object_def(ir, container.type.name) if container is not None and isinstance(container.type, Ref) else None
    if holder is None:
        return ()
    sent = {m.message_type: m.method for m in methods if m.direction == "server_to_client" and m.kind == "notification"}
    out: dict[str, str] = {}
    for field in holder.fields:
        linked = {
            sent[name] for token in _LINK.findall(field.description or "") for name in sent if _links(token, name)
        }
        if len(linked) == 1:
            out[field.wire_name] = linked.pop()
        elif field.wire_name in rules.filters and rules.filters[field.wire_name] in sent.values():
            out[field.wire_name] = rules.filters[field.wire_name]
        elif field.wire_name != "_meta":
            gaps.append(
                PolicyGap(
                    f"listen filter {field.wire_name}",
                    "its description links no notification the server sends (or several): it opts in to nothing; "
                    "add an entry to policy/listen_filters.json",
                )
            )
    return tuple(sorted(out.items()))


# TypeDoc's cross-reference as the schema's descriptions keep it: the target and its text run together
# (`{@link ToolListChangedNotificationnotifications/tools/list_changed}`).
_LINK = re.compile(r"\{@link\s+([^\s}]+)")


def _links(token: str, name: str) -> bool:
    """Whether a `{@link ...}` token names the definition `name` (the name, then nothing or lower-case text)."""
    return token == name or (token.startswith(name) and not token[len(name)].isupper())


def lifecycle_era(surface: ProtocolSurface) -> str | None:
    """ "handshake" when the schema defines `initialize`, "stateless" when it defines `server/discover`
    instead (every request carries its own `_meta`), None when it defines neither."""
    client = {m.method for m in surface.methods if m.direction == "client_to_server" and m.kind == "request"}
    if "initialize" in client:
        return "handshake"
    if "server/discover" in client:
        return "stateless"
    return None
