"""Custom and extension methods: methods no protocol version's tables list, declared once with their
params and result models and the extension they belong to, served and called like core methods.

Declare a method once, for both sides:

    ECHO = extensions.request("acme/echo", EchoParams, EchoResult, extension="com.acme/echo")
    PINGED = extensions.notification("acme/pinged", PingedParams, extension="com.acme/echo", sender="server")

then serve it (a server object, or a client's handlers object for what the server sends):

    server.register_method(ECHO, echo)            # or @server.register_method(ECHO) on `echo`
    handlers.register_method(PINGED, on_pinged)

and call it from the typed client (`client.session` is the `ClientRuntime`):

    result = await client.session.call_extension(ECHO, EchoParams(text="hi"))   # an EchoResult
    await client.session.notify_extension(SOME_NOTIFICATION, params)

A server handler reaches its client with `await extensions.notify(ctx, PINGED, params)` (and
`request_client(ctx, ASK, params)`; outside any request, `broadcast(server, PINGED, params)`).

What registering does, nothing of it written into the user's object (the runtime keeps it, by object,
in `methods_of`): the extension is declared in that side's capabilities, under `extensions` where the
version has it (2026-07-28) and under `experimental` before, with its settings (`use_extension`,
default `{}`); requests are dispatched with the params validated by their model (-32602 naming each
bad field), the handler given the usual context (progress, logs, cancellation: the same session
engine as core methods), its result checked against the result model (-32603 otherwise) and, in the
stateless era, stamped like core results (`resultType`, the server's identity). A notification goes
to its handler; an unregistered one is dropped as before, and an unregistered request still gets
-32601. A method the version's own tables define is always the core one.

Sending needs the peer's agreement: the typed client calls an extension method only if the server
advertised the extension (else `CapabilityError`, nothing sent); a server sends an extension's
notifications and requests only to clients that declared it.

An extension package (e.g. bindings generated from an extension's schema) plugs in with an
`Extension`: its identifier, settings and methods (`Extension.from_tables` takes generated method
tables of `MethodSpec`s); `use_extension(EXT, handlers=obj)` declares it and binds the methods `obj`
has handlers for (by each spec's handler name).
"""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar, cast

from pydantic import ValidationError

from mcp_bindings.ext.io_modelcontextprotocol_tasks.names import IDENTIFIER as TASKS_EXTENSION  # served by `tasks`
from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.protocol.spec import Kind, MethodSpec, ProtocolTables, Side
from mcp_bindings.runtime.rpc import logs
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, McpError
from mcp_bindings.runtime.rpc.jsonrpc import first_problem, json_object, validation_error

__all__ = [
    "EXPERIMENTAL",
    "EXTENSIONS",
    "TASKS_EXTENSION",
    "Bound",
    "CustomMethod",
    "Extension",
    "Handler",
    "Methods",
    "Sender",
    "methods_of",
    "notification",
    "peer_declares",
    "placed",
    "registered",
    "request",
    "result_data",
    "typed_params",
    "typed_result",
    "wire_params",
]

log = logs.logger("extensions")

P = TypeVar("P")
R = TypeVar("R")
Sender = Literal["client", "server"]
Handler = Callable[[Any, Any], Awaitable[Any]]

# Where each era puts the extensions a side declares: 2026-07-28 has `extensions`, older versions
# only `experimental`.
EXTENSIONS = "extensions"
EXPERIMENTAL = "experimental"


@dataclass(frozen=True, slots=True, eq=False)
class CustomMethod(Generic[P, R]):
    """A method outside the protocol's tables: its name, models, extension, and who sends it."""

    method: str
    kind: Kind
    params: type[P] | None
    result: type[R] | None
    extension: str  # the extension identifier, `{vendor-prefix}/{name}` (e.g. "com.acme/echo")
    sender: Sender
    spec: MethodSpec = field(repr=False)

    def __post_init__(self) -> None:
        if not self.method or self.method.startswith("rpc."):
            raise ValueError(f"{self.method!r} cannot be a method name (JSON-RPC reserves rpc.*)")
        prefix, _, name = self.extension.partition("/")
        if not prefix or not name:
            raise ValueError(f"extension identifier {self.extension!r} must be '{{vendor-prefix}}/{{name}}'")


def _spec(method: str, kind: Kind, sender: Sender, params: Any, result: Any) -> MethodSpec:
    return MethodSpec(
        method=method,
        kind=kind,
        direction="client_to_server" if sender == "client" else "server_to_client",
        handler=method.replace("/", "_").replace("-", "_").replace(".", "_"),
        message=dict,
        params=params,
        params_required=params is not None and _has_required_fields(params),
        result=result,
        input_required=False,
        gate=None,
        param_gates=(),
        optional_handler=False,
        builtin=False,
    )


def _has_required_fields(model: Any) -> bool:
    fields = getattr(model, "model_fields", None)
    return isinstance(fields, dict) and any(f.is_required() for f in cast("dict[str, Any]", fields).values())


def request(
    method: str, params: type[P] | None, result: type[R] | None, *, extension: str, sender: Sender = "client"
) -> CustomMethod[P, R]:
    """Declare a custom request: `request("acme/echo", EchoParams, EchoResult, extension="com.acme/echo")`.
    `sender`: who sends it ("client": a server serves it; "server": a client's handlers do)."""
    return CustomMethod(
        method, "request", params, result, extension, sender, _spec(method, "request", sender, params, result)
    )


def notification(
    method: str, params: type[P] | None, *, extension: str, sender: Sender = "client"
) -> CustomMethod[P, None]:
    """Declare a custom notification (`sender`: who sends it)."""
    return CustomMethod(
        method, "notification", params, None, extension, sender, _spec(method, "notification", sender, params, None)
    )


@dataclass(frozen=True, slots=True, eq=False)
class Extension:
    """An extension: its identifier, its default settings and its methods (both directions)."""

    identifier: str
    methods: Mapping[str, CustomMethod[Any, Any]] = field(default_factory=dict[str, "CustomMethod[Any, Any]"])
    settings: Mapping[str, Any] = field(default_factory=dict[str, Any])

    @classmethod
    def from_tables(
        cls, identifier: str, *tables: Mapping[str, MethodSpec], settings: Mapping[str, Any] | None = None
    ) -> Extension:
        """An extension from generated method tables (its client_requests, server_notifications, ...)."""
        methods: dict[str, CustomMethod[Any, Any]] = {}
        for table in tables:
            for spec in table.values():
                sender: Sender = "client" if spec.direction == "client_to_server" else "server"
                methods[spec.method] = CustomMethod(
                    spec.method, spec.kind, spec.params, spec.result, identifier, sender, spec
                )
        return cls(identifier, methods, dict(settings or {}))

    def __getitem__(self, method: str) -> CustomMethod[Any, Any]:
        return self.methods[method]


@dataclass(slots=True, eq=False)
class Bound:
    """A registered method and its handler."""

    method: CustomMethod[Any, Any]
    handler: Handler


@dataclass(eq=False)
class Methods:
    """The custom and extension methods one object serves (a server, or a client's handlers), and the
    extensions it declares (identifier -> settings). Kept by the runtime: `methods_of(obj)`."""

    side: Side
    protocol: ProtocolTables  # the object's stub version: its own methods are not custom
    handlers: dict[str, Bound] = field(default_factory=dict[str, Bound])
    extensions: dict[str, dict[str, Any]] = field(default_factory=dict[str, dict[str, Any]])

    @property
    def _handles(self) -> Sender:
        return "client" if self.side == "server" else "server"  # a server handles what a client sends

    def register(self, method: CustomMethod[Any, Any], handler: Handler | None = None) -> Any:
        """Serve `method` with `handler(params, ctx)`; without `handler`, a decorator."""
        if handler is None:

            def decorate(function: Handler) -> Handler:
                self.register(method, function)
                return function

            return decorate
        if not isinstance(method, CustomMethod):
            raise TypeError(f"register_method takes a CustomMethod (extensions.request / notification), not {method!r}")
        if method.sender != self._handles:
            raise ValueError(f"{method.method} is sent by the {method.sender}: a {self.side} does not serve it")
        if any(method.method in table for table in self.protocol.handled_by(self.side)):
            raise ValueError(f"{method.method} is a method of MCP {self.protocol.version}: it cannot be registered")
        self.handlers[method.method] = Bound(method, handler)
        self.extensions.setdefault(method.extension, {})
        return handler

    def use(
        self,
        extension: Extension | str,
        settings: Mapping[str, Any] | None = None,
        handlers: Mapping[str, Handler] | object | None = None,
    ) -> None:
        """Declare an extension (with its settings) and serve the methods of it that `handlers` has:
        a mapping of method -> handler, or an object whose attributes are named by the specs' handler names."""
        identifier = extension if isinstance(extension, str) else extension.identifier
        default = {} if isinstance(extension, str) else extension.settings
        self.extensions[identifier] = _settings(settings if settings is not None else default, identifier)
        if isinstance(extension, str) or handlers is None:
            return
        for method in extension.methods.values():
            if method.sender != self._handles:
                continue
            if isinstance(handlers, Mapping):
                handler = cast("Mapping[str, Handler]", handlers).get(method.method)
            else:
                handler = getattr(handlers, method.spec.handler, None)
            if handler is not None:
                self.register(method, handler)


def _settings(settings: Mapping[str, Any], identifier: str) -> dict[str, Any]:
    if not isinstance(settings, Mapping):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise TypeError(f"the settings of extension {identifier!r} must be a JSON object")
    return dict(settings)


_METHODS: dict[int, Methods] = {}


def methods_of(obj: Any, side: Side | None = None) -> Methods:
    """The methods and extensions of a server or client handlers object: made on first use, kept by
    the runtime (nothing is written into the object) and dropped with it."""
    methods = _METHODS.get(id(obj))
    if methods is None:
        side = side or cast("Side", obj._side)  # noqa: SLF001 - the stub bases' own marker
        methods = _METHODS[id(obj)] = Methods(side, obj.protocol)
        weakref.finalize(obj, _METHODS.pop, id(obj), None)
    return methods


def registered(obj: Any) -> Methods | None:
    return _METHODS.get(id(obj)) if obj is not None else None


# -- capabilities ----------------------------------------------------------------------------------


def placed(
    protocol: ProtocolTables, side: Side, capabilities: Mapping[str, Any], ids: Mapping[str, Any]
) -> dict[str, Any]:
    """Extension ids under `extensions` where the version defines it; before 2026-07-28 under
    `experimental` and, as SEP-1724 peers read them at every version (the TypeScript SDK v2, the
    MCP Apps and Skills clients), under `extensions` as well."""
    out = dict(capabilities)
    key = EXTENSIONS if EXTENSIONS in protocol.capability_paths(side) else EXPERIMENTAL
    if key == EXPERIMENTAL:
        out.pop(EXTENSIONS, None)
    if ids:
        out[key] = {**json_object(out.get(key)), **{k: dict(v) for k, v in ids.items()}}
        if key == EXPERIMENTAL:
            out[EXTENSIONS] = {k: dict(v) for k, v in ids.items()}
    return out


def peer_declares(capabilities: Mapping[str, Any] | None, identifier: str) -> bool:
    """Whether a peer's capabilities declare extension `identifier` (under either key)."""
    caps = json_object(capabilities)
    return identifier in json_object(caps.get(EXTENSIONS)) or identifier in json_object(caps.get(EXPERIMENTAL))


# -- values ----------------------------------------------------------------------------------------


def typed_params(spec: MethodSpec, raw: Any) -> Any:
    """A custom method's params, typed by its model (-32602 naming each bad field). `_meta` (progress
    token, stateless-era protocol metadata) is not the model's business unless it defines it."""
    if spec.params is None:
        return raw
    data: Any = {} if raw is None else raw
    if isinstance(data, dict) and "_meta" in data and not versions.defines(spec.params, "_meta"):
        data = {key: value for key, value in cast("dict[str, Any]", data).items() if key != "_meta"}
    try:
        return versions.validate(spec.params, data)
    except ValidationError as exc:
        raise validation_error(exc) from None


def result_data(spec: MethodSpec, result: Any) -> dict[str, Any]:
    """A handler's result as wire JSON, checked against the result model (-32603 otherwise)."""
    model = spec.result
    if isinstance(result, dict) and model is not None:
        result = versions.checked(model, result, f"the {spec.method} result")
    elif model is not None and not is_value_of(model, result):
        log.error("%s handler returned %s, expected %s", spec.method, type(result).__name__, model.__name__)
        raise McpError(INTERNAL_ERROR, f"Internal error: the {spec.method} handler returned the wrong type")
    if result is None:
        return {}
    data = versions.dump(result)
    if not isinstance(data, dict):
        raise McpError(INTERNAL_ERROR, f"Internal error: the {spec.method} result is not a JSON object")
    return cast("dict[str, Any]", data)


def is_value_of(target: Any, value: Any) -> bool:
    """`value` is already of the type `target`: an instance of a model class, or of a member of a
    type alias such as the tasks extension's `GetTaskResult` union (asked of the alias's cached
    validator, which takes model instances as they are and refuses anything else)."""
    if isinstance(target, type):
        return isinstance(value, target)
    if isinstance(value, Mapping):
        return False  # a mapping is validated into the type, never taken as one
    try:
        versions.validate(target, value)
    except ValidationError:
        return False
    return True


def wire_params(method: CustomMethod[Any, Any], params: Any) -> dict[str, Any] | None:
    """What this side sends as params: a model instance dumped, a mapping validated first (-32602)."""
    if params is None and (method.params is None or not method.spec.params_required):
        return None
    if method.params is not None and not (params is not None and is_value_of(method.params, params)):
        try:
            params = versions.validate(method.params, dict(params or {}))
        except ValidationError as exc:
            raise validation_error(exc) from None
    data = versions.dump(params)
    return cast("dict[str, Any]", data) if isinstance(data, dict) else None


def typed_result(method: CustomMethod[P, R], raw: Any) -> R:
    if method.result is None:
        return cast("R", raw)
    data = raw
    if isinstance(data, dict):  # the stateless era's stamps are the runtime's, not the model's
        drop = [key for key in ("resultType", "_meta") if not versions.defines(method.result, key)]
        data = {key: value for key, value in cast("dict[str, Any]", data).items() if key not in drop}
    try:
        return cast("R", versions.validate(method.result, data))
    except ValidationError as exc:
        raise McpError(INTERNAL_ERROR, f"invalid {method.method} result from the peer: {first_problem(exc)}") from None
