"""Custom and extension methods: methods no protocol version's tables list, declared once with their
params and result models and the extension they belong to, served and called like core methods.

Declare a method once, for both sides:

    ECHO = extensions.request("acme/echo", EchoParams, EchoResult, extension="com.acme/echo")
    PINGED = extensions.notification("notifications/acme/pinged", PingedParams, extension="com.acme/echo",
                                     sender="server")

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
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, cast

from pydantic import ValidationError

from . import jsonrpc, logs, registry, versions
from .errors import INTERNAL_ERROR, METHOD_NOT_FOUND, CapabilityError, McpError, NotExpressible
from .jsonrpc import Notification, Request, json_object, validation_error
from .spec import Kind, MethodSpec, ProtocolTables, Side

if TYPE_CHECKING:
    from .client import ClientRuntime
    from .notifications import ServerHost
    from .peer import PeerView
    from .server import Plan, ServerRuntime
    from .session import Session

__all__ = [
    "CustomMethod",
    "Extension",
    "Methods",
    "broadcast",
    "methods_of",
    "notification",
    "notify",
    "peer_declares",
    "request",
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
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"  # served by the runtime (`tasks_extension`)


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


def _spec(method: str, kind: Kind, sender: Sender, params: Any, result: Any, handler: str = "") -> MethodSpec:
    return MethodSpec(
        method=method,
        kind=kind,
        direction="client_to_server" if sender == "client" else "server_to_client",
        handler=handler or method.replace("/", "_").replace("-", "_").replace(".", "_"),
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

    async def serve(self, runtime: ServerRuntime, request: Request, view: PeerView, session: Session) -> bytes:
        """Answer a client's request (a `server.Builtin`): params typed, the handler run in the usual
        context, the result checked and, in the stateless era, stamped."""
        from .server_context import ServerRequestContext

        spec = self.method.spec
        params = _typed_params(spec, request.params)
        context = ServerRequestContext(runtime.server, runtime.host, session, request, view, runtime.peer)
        data = _result_data(spec, await self.handler(params, context))
        if view.stateless:
            data.setdefault("resultType", "complete")
            key = view.protocol.meta.server_info
            if key is not None:  # the identity the runtime keeps per version (built once)
                data["_meta"] = {**json_object(data.get("_meta")), key: runtime.lifecycle.identity(view.protocol)}
        return jsonrpc.dumps(data)


class Methods:
    """The custom and extension methods one object serves (a server, or a client's handlers), and the
    extensions it declares (identifier -> settings). Kept by the runtime: `methods_of(obj)`."""

    def __init__(self, side: Side, protocol: ProtocolTables) -> None:
        self.side: Side = side
        self.protocol = protocol  # the object's stub version: its own methods are not custom
        self.handlers: dict[str, Bound] = {}
        self.extensions: dict[str, dict[str, Any]] = {}

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


def _placed(
    protocol: ProtocolTables, side: Side, capabilities: Mapping[str, Any], ids: Mapping[str, Any]
) -> dict[str, Any]:
    out = dict(capabilities)
    key = EXTENSIONS if EXTENSIONS in protocol.capability_paths(side) else EXPERIMENTAL
    if key == EXPERIMENTAL:
        out.pop(EXTENSIONS, None)
    if ids:
        out[key] = {**json_object(out.get(key)), **{k: dict(v) for k, v in ids.items()}}
    return out


def server_capabilities(server: Any, protocol: ProtocolTables, capabilities: dict[str, Any]) -> dict[str, Any]:
    """What a server advertises to a client of `protocol` (`peer.Lifecycle.capabilities_for`): its
    declared and registered extensions under `extensions` (2026-07-28) or `experimental` (before)."""
    methods = _METHODS.get(id(server))
    declared = json_object(server.capabilities).get(EXTENSIONS)
    if methods is None and not declared:
        return capabilities
    ids = {**json_object(declared), **(methods.extensions if methods is not None else {})}
    if not protocol.info.stateless:  # the tasks extension is of the stateless era; before it, tasks are core
        ids.pop(TASKS_EXTENSION, None)
    return _placed(protocol, "server", capabilities, ids)


def client_capabilities(runtime: ClientRuntime) -> dict[str, Any]:
    """What a client declares (`ClientRuntime.capabilities`): its handlers' capabilities, with the
    extensions placed where the version (negotiated, else requested) wants them."""
    handlers = runtime.handlers
    declared: dict[str, Any] = handlers.capabilities if handlers is not None else {}
    methods = registered(handlers)
    if methods is None and EXTENSIONS not in declared:
        return declared
    protocol = runtime.protocol
    if protocol is None:
        if runtime.requested == "auto":
            return declared
        protocol = registry.protocol(runtime.requested, own=runtime.stub)
    ids = {**json_object(declared.get(EXTENSIONS)), **(methods.extensions if methods is not None else {})}
    return _placed(protocol, "client", declared, ids)


def peer_declares(capabilities: Mapping[str, Any] | None, identifier: str) -> bool:
    """Whether a peer's capabilities declare extension `identifier` (under either key)."""
    caps = json_object(capabilities)
    return identifier in json_object(caps.get(EXTENSIONS)) or identifier in json_object(caps.get(EXPERIMENTAL))


# -- values ----------------------------------------------------------------------------------------


def _typed_params(spec: MethodSpec, raw: Any) -> Any:
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


def _result_data(spec: MethodSpec, result: Any) -> dict[str, Any]:
    """A handler's result as wire JSON, checked against the result model (-32603 otherwise)."""
    model = spec.result
    if isinstance(result, dict) and model is not None:
        result = versions.checked(model, result, f"the {spec.method} result")
    elif model is not None and not _is_value_of(model, result):
        log.error("%s handler returned %s, expected %s", spec.method, type(result).__name__, model.__name__)
        raise McpError(INTERNAL_ERROR, f"Internal error: the {spec.method} handler returned the wrong type")
    if result is None:
        return {}
    data = versions.dump(result)
    if not isinstance(data, dict):
        raise McpError(INTERNAL_ERROR, f"Internal error: the {spec.method} result is not a JSON object")
    return cast("dict[str, Any]", data)


def _is_value_of(target: Any, value: Any) -> bool:
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


def _wire_params(method: CustomMethod[Any, Any], params: Any) -> dict[str, Any] | None:
    """What this side sends as params: a model instance dumped, a mapping validated first (-32602)."""
    if params is None and (method.params is None or not method.spec.params_required):
        return None
    if method.params is not None and not (params is not None and _is_value_of(method.params, params)):
        try:
            params = versions.validate(method.params, dict(params or {}))
        except ValidationError as exc:
            raise validation_error(exc) from None
    data = versions.dump(params)
    return cast("dict[str, Any]", data) if isinstance(data, dict) else None


def _typed_result(method: CustomMethod[P, R], raw: Any) -> R:
    if method.result is None:
        return cast("R", raw)
    data = raw
    if isinstance(data, dict):  # the stateless era's stamps are the runtime's, not the model's
        drop = [key for key in ("resultType", "_meta") if not versions.defines(method.result, key)]
        data = {key: value for key, value in cast("dict[str, Any]", data).items() if key not in drop}
    try:
        return cast("R", versions.validate(method.result, data))
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "(root)"
        raise McpError(
            INTERNAL_ERROR, f"invalid {method.method} result from the peer: {where}: {first['msg']}"
        ) from None


# -- the server side -------------------------------------------------------------------------------


def plan(server: Any, method: str) -> Plan:
    """How the server serves a method its version does not define (`ServerRuntime.plan`): a
    registered request, the tasks extension's methods for a server that declared it, else -32601."""
    methods = _METHODS.get(id(server))
    bound = methods.handlers.get(method) if methods is not None else None
    if bound is None or bound.method.kind != "request":
        from . import tasks_extension

        served = tasks_extension.plan(server, method)
        if served is not None:
            return served
        raise McpError(METHOD_NOT_FOUND, f"Method not found: {method}")
    from .server import Plan

    return Plan(bound.method.spec, bound.method.spec, False, bound.serve)


async def notified(runtime: ServerRuntime, notification: Notification, view: PeerView | None) -> None:
    """A notification the version does not define: to its registered handler, else dropped."""
    methods = _METHODS.get(id(runtime.server))
    bound = methods.handlers.get(notification.method) if methods is not None else None
    if bound is None or bound.method.kind != "notification":
        log.debug("ignoring notification %s", notification.method)
        return
    if view is None:  # a stateless-era client: its view comes with the notification's `_meta`
        from .peer import stateless_meta

        probe = Request("", notification.method, notification.params, {})
        if stateless_meta(probe) is None or not runtime.lifecycle.stateless_supported:
            log.debug("ignoring notification %s before initialize", notification.method)
            return
        view = runtime.lifecycle.stateless_view(probe)
    from .server_context import ServerNotificationContext

    await bound.handler(_typed_params(bound.method.spec, notification.params), ServerNotificationContext(view))


def _context_parts(ctx: Any) -> tuple[Session, PeerView, Any]:
    """(session, view, request id) of a server handler's context (also a task's context)."""
    inner = getattr(ctx, "inner", ctx)
    return inner._session, inner._view, inner.request_id  # noqa: SLF001 - the runtime's own context type


async def notify(ctx: Any, method: CustomMethod[Any, Any], params: Any = None) -> bool:
    """From a server handler: send a custom notification to this request's client. False (nothing
    sent) where the client did not declare the method's extension."""
    session, view, request_id = _context_parts(ctx)
    if not peer_declares(view.client_capabilities, method.extension):
        log.debug("%s not sent: the client did not declare extension %s", method.method, method.extension)
        return False
    await session.notify(method.method, _wire_params(method, params), related=request_id)
    return True


async def request_client(
    ctx: Any, method: CustomMethod[Any, R], params: Any = None, *, timeout: float | None = None
) -> R:
    """From a server handler: send a custom request to this request's client and return its typed
    result. `NotExpressible` (nothing sent) where the client did not declare the extension, or
    speaks the stateless era (which has no server-to-client requests)."""
    session, view, request_id = _context_parts(ctx)
    if view.stateless:
        raise NotExpressible(
            f"cannot send {method.method}: MCP {view.version} has no server-to-client requests", version=view.version
        )
    if not peer_declares(view.client_capabilities, method.extension):
        raise NotExpressible(
            f"cannot send {method.method}: the client did not declare extension {method.extension}",
            version=view.version,
        )
    raw = await session.request(method.method, _wire_params(method, params), timeout=timeout, related=request_id)
    return _typed_result(method, raw)


async def broadcast(server: Any, method: CustomMethod[Any, Any], params: Any = None) -> int:
    """Send a custom notification to every connected handshake-era client that declared its
    extension; returns how many of this worker's clients got it. Several workers (a shared backend):
    the other workers send it to theirs too; if the bus is unavailable, this worker's clients still
    get it and `BackendUnavailable` is raised after."""
    from .backends import EXTENSION_BROADCAST
    from .notifications import host_for

    host = host_for(server)
    message = {"method": method.method, "extension": method.extension, "params": _wire_params(method, params)}
    sent = await deliver_broadcast(host, message)
    if host.bus is not None:
        await host.bus.publish(EXTENSION_BROADCAST, message)
    return sent


async def deliver_broadcast(host: ServerHost, message: Any) -> int:
    """Send a custom broadcast (`{"method", "extension", "params"}`, as `broadcast` publishes it) to
    this worker's handshake-era clients that declared the extension; how many got it."""
    body = json_object(message)
    name, extension, data = body.get("method"), body.get("extension"), body.get("params")
    if not isinstance(name, str) or not isinstance(extension, str) or not (data is None or isinstance(data, dict)):
        log.warning("ignored a malformed custom broadcast from another worker")
        return 0
    sent = 0
    for runtime in list(host.connections):
        view, session = runtime.view, runtime.session
        if view is None or session is None or not peer_declares(view.client_capabilities, extension):
            continue
        try:
            await session.notify(name, data)
            sent += 1
        except Exception as exc:  # noqa: BLE001 - one client gone must not stop the others
            log.debug("%s not sent to a client: %s", name, exc)
    return sent


# -- the client side -------------------------------------------------------------------------------


def _client_checks(runtime: ClientRuntime, method: CustomMethod[Any, Any], kind: Kind) -> None:
    if method.kind != kind or method.sender != "client":
        raise TypeError(f"{method.method} is a {method.kind} the {method.sender} sends")
    if runtime.protocol is None or runtime.session is None:
        raise McpError(METHOD_NOT_FOUND, f"{method.method}: not connected")
    if runtime.capabilities_known and not peer_declares(runtime.peer_capabilities, method.extension):
        raise CapabilityError(method.method, f"server extension `{method.extension}`")


async def call(runtime: ClientRuntime, method: CustomMethod[Any, R], params: Any = None) -> R:
    """The typed client's call of a custom request (`ClientRuntime.call_extension`)."""
    from .client import _on_progress  # the typed client's progress callback of this task
    from .client_stateless import stateless_request

    _client_checks(runtime, method, "request")
    data = _wire_params(method, params)
    assert runtime.session is not None
    if runtime.stateless:
        raw = await stateless_request(runtime, method.spec, data, _on_progress.get())
    else:
        raw = await runtime.session.request(
            method.method, data, timeout=runtime.request_timeout, on_progress=_on_progress.get()
        )
    return _typed_result(method, raw)


async def notify_server(runtime: ClientRuntime, method: CustomMethod[Any, Any], params: Any = None) -> None:
    """The typed client's custom notification (`ClientRuntime.notify_extension`)."""
    _client_checks(runtime, method, "notification")
    data = _wire_params(method, params)
    if runtime.stateless:
        data = {**(data or {}), "_meta": {**runtime.request_meta(), **json_object((data or {}).get("_meta"))}}
    assert runtime.session is not None
    await runtime.session.notify(method.method, data)


async def answer(runtime: ClientRuntime, request: Request) -> bytes:
    """A server's request the version does not define: to the handlers' registered method, else -32601."""
    from .client_handling import ClientContext

    bound = _client_bound(runtime, request.method, "request")
    if bound is None:
        raise McpError(METHOD_NOT_FOUND, f"Method not found: {request.method}")
    result = await bound.handler(_typed_params(bound.method.spec, request.params), ClientContext(runtime, request.id))
    return jsonrpc.dumps(_result_data(bound.method.spec, result))


async def client_notified(runtime: ClientRuntime, notification: Notification) -> None:
    """A server's notification the version does not define: to the handlers' registered method."""
    from .client_handling import ClientContext

    bound = _client_bound(runtime, notification.method, "notification")
    if bound is None:
        log.debug("ignoring notification %s", notification.method)
        return
    await bound.handler(_typed_params(bound.method.spec, notification.params), ClientContext(runtime, None))


def _client_bound(runtime: ClientRuntime, method: str, kind: Kind) -> Bound | None:
    methods = registered(runtime.handlers)
    bound = methods.handlers.get(method) if methods is not None else None
    return bound if bound is not None and bound.method.kind == kind else None
