"""Serving: one `ServerRuntime` per connection binds a server object to a session.

Two lifecycles share one request path. Handshake versions (2024-11-05 .. 2025-11-25) negotiate
once with `initialize`; the stateless version (2026-07-28) carries the protocol version, client
capabilities and client identity in every request's `_meta`. Either way a request is validated
once with the negotiated version's exact models, gated by the advertised capabilities, converted to
the version the server was written against, and its result converted back. Methods, types and
gates come from the generated tables.
"""

from __future__ import annotations

import contextvars
import logging
import weakref
from dataclasses import dataclass, field
from typing import Any

import anyio
import orjson
from pydantic import BaseModel, ValidationError

from . import versions
from .errors import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, McpError
from .jsonrpc import Notification, Request, invalid_field, validation_error
from .request_state import RequestStateSealer
from .session import Session
from .spec import MethodSpec
from .stubs import ServerStub

log = logging.getLogger("mcp_bindings.runtime.server")

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
EMPTY_RESULT = b"{}"
MAX_INPUT_ROUNDS = 8  # bound on InputRequiredResult rounds bridged for handshake-era clients
META = "io.modelcontextprotocol/"
PROTOCOL_VERSION_KEY = META + "protocolVersion"
CLIENT_CAPABILITIES_KEY = META + "clientCapabilities"
CLIENT_INFO_KEY = META + "clientInfo"
LOG_LEVEL_KEY = META + "logLevel"
SERVER_INFO_KEY = META + "serverInfo"
SUBSCRIPTION_ID_KEY = META + "subscriptionId"
UNSUPPORTED_PROTOCOL_VERSION = -32022
MISSING_CLIENT_CAPABILITY = -32021

# The id of the request whose handler is running, so transports can route what it sends (HTTP).
current_request: contextvars.ContextVar[Any] = contextvars.ContextVar("mcp_current_request", default=None)

# subscriptions/listen filter key -> the notification it opts in to, and the server capability it needs.
LISTEN_FILTERS = {
    "toolsListChanged": ("notifications/tools/list_changed", ("tools", "listChanged")),
    "promptsListChanged": ("notifications/prompts/list_changed", ("prompts", "listChanged")),
    "resourcesListChanged": ("notifications/resources/list_changed", ("resources", "listChanged")),
    "resourceSubscriptions": ("notifications/resources/updated", ("resources", "subscribe")),
}
RESOURCE_UPDATED = "notifications/resources/updated"
# Handshake-era subscription RPCs (method -> subscribe?). A server written against a stateless-era
# stub has no handler for them (that era folds them into subscriptions/listen), so the runtime keeps
# the subscribed URIs of such a session itself and filters resource updates by them.
SUBSCRIPTION_RPCS = {"resources/subscribe": True, "resources/unsubscribe": False}


@dataclass
class PeerView:
    """What one request is served under: its version and what the client declared."""

    version: str
    protocol: Any
    client_capabilities: dict[str, Any]
    client_info: dict[str, Any]
    log_level: str | None
    stateless: bool
    advertised: dict[str, Any] = field(default_factory=dict)
    # method -> how it is served under this view (ServerRuntime._route); `advertised` is fixed once
    # the view is set up, so what depends on it is decided once per view.
    routes: dict[str, _Route] = field(default_factory=dict, repr=False, compare=False)


class _Route:
    """One method as the runtime serves it at one version (built once per version and method).

    `direct`: the request's version is the stub's, its params have a model, and the runtime does
    not serve the method itself (builtins, runtime-kept subscriptions). Such a request, once the
    method's gate has been checked against the view's advertised capabilities (once per view), is
    validated with the params model's validator and handed to the handler as is, and a result of
    exactly the method's result type is written by that type's serializer. Everything else takes
    the general path (`ServerRuntime._serve_general`), which decides each request in full."""

    __slots__ = ("spec", "direct", "validate", "handler", "result_type", "input_required")

    def __init__(self, spec: MethodSpec, direct: bool) -> None:
        self.spec = spec
        self.direct = direct
        self.validate: Any = versions.validator(spec.params) if direct else None
        self.handler = spec.handler
        # A result of this exact type needs no further decisions (not a dict, not an InputRequiredResult).
        result = spec.result
        self.result_type = result if direct and isinstance(result, type) and result.__name__ != "InputRequiredResult" else None
        self.input_required = spec.input_required


@dataclass(eq=False)
class _Listener:
    session: Session
    subscription_id: Any
    methods: dict[str, Any]  # notification method -> filter value (True, or the subscribed URIs)

    def wants(self, method: str, params: Any) -> bool:
        wanted = self.methods.get(method)
        if wanted is None:
            return False
        if isinstance(wanted, list):
            uri = params.get("uri") if isinstance(params, dict) else None
            return uri in wanted
        return True


def _registry(server: ServerStub) -> tuple[weakref.WeakSet[ServerRuntime], set[_Listener]]:
    state = vars(server)
    if "_mcp_runtimes" not in state:
        state["_mcp_runtimes"] = weakref.WeakSet()
        state["_mcp_listeners"] = set()
    return state["_mcp_runtimes"], state["_mcp_listeners"]


def list_generation(server: ServerStub) -> int:
    """How many list_changed notifications the server has broadcast (for caches of its lists)."""
    return int(vars(server).get("_mcp_list_generation", 0))


async def broadcast(server: ServerStub, method: str, params: Any = None) -> int:
    """Send a server notification to every connected client allowed to get it; returns how many."""
    runtimes, listeners = _registry(server)
    data = versions.dump(params) if params is not None else None
    if method.endswith("/list_changed"):
        state = vars(server)
        state["_mcp_list_generation"] = state.get("_mcp_list_generation", 0) + 1
    sent = 0
    for runtime in list(runtimes):
        if runtime.view is not None and runtime.may_send(method) and runtime.wants(method, data):
            # Not part of the request that triggered it: no request route (HTTP: the GET stream).
            token = current_request.set(None)
            try:
                await runtime.notify(method, data)
                sent += 1
            except (McpError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass
            finally:
                current_request.reset(token)
    for listener in list(listeners):
        if listener.wants(method, data):
            tagged = dict(data or {})
            tagged["_meta"] = {**(tagged.get("_meta") or {}), SUBSCRIPTION_ID_KEY: listener.subscription_id}
            token = current_request.set(listener.subscription_id)
            try:
                await listener.session.notify(method, tagged)
                sent += 1
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                listeners.discard(listener)
            finally:
                current_request.reset(token)
    return sent


class ServerRuntime:
    """The dispatcher of one server connection (stdio process, HTTP session, in-memory pair)."""

    def __init__(
        self,
        server: ServerStub,
        *,
        supported_versions: list[str] | None = None,
        request_state: RequestStateSealer | None = None,
    ) -> None:
        self.server = server
        self.stub = server.protocol  # the generated `methods` module the server was written against
        self.stub_version: str = self.stub.PROTOCOL_VERSION
        supported = supported_versions or versions.all_versions()
        self.handshake_supported = [v for v in supported if v in versions.handshake_versions()]
        self.stateless_supported = [v for v in supported if v not in versions.handshake_versions()]
        self.sealer = request_state or _default_sealer(server)
        self.view: PeerView | None = None  # set by initialize (handshake lifecycle)
        self.initialized = False
        self.batches_allowed = False
        self.session: Session | None = None
        # URIs a handshake-era client subscribed to, when the runtime serves resources/subscribe itself.
        self.resource_subscriptions: set[str] = set()
        self._routes: dict[Any, dict[str, _Route]] = {}  # protocol module -> method -> route
        _registry(server)[0].add(self)

    # -- requests ----------------------------------------------------------------------------

    async def on_request(self, request: Request, session: Session) -> bytes:
        self.session = session
        current_request.set(request.id)
        view = self.view
        if view is None:
            if request.method == "initialize" and self.handshake_supported and not stateless_meta(request):
                return self._initialize(request)
            if request.method == "ping" and self.handshake_supported and not stateless_meta(request):
                return EMPTY_RESULT
            view = self._stateless_view(request)
        # The direct route (see `_Route`) inline: one coroutine less per request than a helper.
        route = view.routes.get(request.method) or self._route(request.method, view)
        params = request.params
        if not route.direct or type(params) is not dict or (route.input_required and "requestState" in params):
            return await self._serve_general(route.spec, request, view, session)
        try:
            typed = route.validate(params, by_name=False, context=versions.WIRE_CONTEXT)
        except ValidationError as exc:
            raise validation_error(exc) from None
        context = ServerRequestContext(self, session, request, view)
        result = await getattr(self.server, route.handler)(typed, context)
        if type(result) is route.result_type and not view.stateless:
            return result.__pydantic_serializer__.to_json(result, by_alias=True, exclude_none=True)  # type: ignore[no-any-return]
        return await self._settle(route.spec, route.spec, request, result, context, view, 0)

    def _route(self, method: str, view: PeerView) -> _Route:
        """How `method` is served under `view`: built once per version and method, gate-checked once
        per view, then cached on the view. Unknown or unoffered methods are not cached (they raise)."""
        table = self._routes.get(view.protocol)
        if table is None:
            table = self._routes[view.protocol] = {}
        route = table.get(method)
        if route is None:
            spec: MethodSpec | None = view.protocol.CLIENT_REQUESTS.get(method)
            if spec is None:
                raise McpError(METHOD_NOT_FOUND, f"Method not found: {method}")
            direct = (
                not spec.builtin
                and view.protocol is self.stub
                and spec.params is not None
                and not (spec.method in SUBSCRIPTION_RPCS and self._serves_subscriptions())
            )
            if direct:
                versions.prepare(spec.params)
                versions.prepare(spec.result)
            route = table[method] = _Route(spec, direct)
        if route.direct:
            self._check_offered(route.spec, view)  # the general path checks on every request instead
        view.routes[method] = route
        return route

    async def _serve_general(self, spec: MethodSpec, request: Request, view: PeerView, session: Session) -> bytes:
        if spec.builtin:
            return await self._builtin(spec, request, view, session)
        self._check_offered(spec, view)
        if spec.method in SUBSCRIPTION_RPCS and self._serves_subscriptions():
            return self._subscription_rpc(spec, request)
        params = self._validate_params(spec, request.params)
        stub_spec, stub_params, round_number = self._params_to_stub(spec, request.params, params, view)
        context = ServerRequestContext(self, session, request, view)
        result = await getattr(self.server, stub_spec.handler)(stub_params, context)
        return await self._settle(spec, stub_spec, request, result, context, view, round_number)

    async def _settle(
        self, spec: MethodSpec, stub_spec: MethodSpec, request: Request, result: Any, context: ServerRequestContext,
        view: PeerView, round_number: int,
    ) -> bytes:
        """A handler's result -> the result JSON (input rounds bridged for handshake-era clients)."""
        rounds = 0
        while _is_input_required(result) and not view.stateless:
            # A stateless-era handler asked for input; a handshake-era client answers real requests.
            rounds += 1
            if rounds > MAX_INPUT_ROUNDS:
                raise McpError(INTERNAL_ERROR, f"{spec.method}: more than {MAX_INPUT_ROUNDS} rounds of input requests")
            result = await self._bridge_input_round(spec, stub_spec, request, result, context, view)
        return self._result_bytes(spec, result, view, round_number)

    def _check_offered(self, spec: MethodSpec, view: PeerView) -> None:
        if spec.gate is not None and spec.gate.side == "server" and not spec.gate.present_in(view.advertised):
            raise McpError(METHOD_NOT_FOUND, f"Method not found: {spec.method} (the server does not offer {spec.gate})")

    def _validate_params(self, spec: MethodSpec, params: Any) -> Any:
        if params is None:
            if spec.params_required:
                raise invalid_field("params", f"{spec.method} requires params", "missing")
            return None
        if spec.params is None:
            return params
        try:
            return versions.validate(spec.params, params)
        except ValidationError as exc:
            raise validation_error(exc) from None

    def _params_to_stub(self, spec: MethodSpec, raw: Any, params: Any, view: PeerView) -> tuple[MethodSpec, Any, int]:
        """The params as the server's stub version types them, with a sealed requestState opened."""
        round_number = 0
        sealed = raw.get("requestState") if isinstance(raw, dict) else None
        if isinstance(sealed, str) and spec.input_required:
            state, round_number = self.sealer.open(spec.method, sealed)
            raw = {**raw, "requestState": state}
            params = self._validate_params(spec, raw) if params is not None else params
        if view.protocol is self.stub:
            return spec, params, round_number
        stub_spec = self.stub.CLIENT_REQUESTS.get(spec.method)
        if stub_spec is None or stub_spec.builtin or not self.server.implements(stub_spec):
            raise McpError(METHOD_NOT_FOUND, f"Method not found: {spec.method}")
        data = dict(raw or {})
        if self.stub.STATELESS:
            # A server written for the stateless era reads protocol metadata from every request;
            # for a handshake-era client that metadata is the session's.
            data["_meta"] = {**self._session_meta(view), **(data.get("_meta") or {})}
        if stub_spec.params is None:
            return stub_spec, data, round_number
        converted = versions.convert(
            data, stub_spec.params, what=f"{spec.method} params", source=view.version, destination=self.stub_version
        )
        return stub_spec, converted, round_number

    @staticmethod
    def _session_meta(view: PeerView) -> dict[str, Any]:
        return {
            PROTOCOL_VERSION_KEY: view.version,
            CLIENT_CAPABILITIES_KEY: view.client_capabilities,
            CLIENT_INFO_KEY: view.client_info,
        }

    def _result_bytes(self, spec: MethodSpec, result: Any, view: PeerView, round_number: int) -> bytes:
        if isinstance(result, dict):
            result = self._validate_result(spec, result)
        if _is_input_required(result):
            if not spec.input_required:
                raise McpError(INTERNAL_ERROR, f"Internal error: {spec.method} cannot ask for input")
            result = self._checked_input_required(spec, result, view, round_number)
        elif view.protocol is self.stub and not isinstance(result, spec.result):
            log.error("%s handler returned %s, expected %s", spec.method, type(result).__name__, spec.result.__name__)
            raise McpError(INTERNAL_ERROR, f"Internal error: the {spec.method} handler returned the wrong type")
        if view.stateless:
            result = self._stamped(result, spec)
        if view.protocol is self.stub:
            return versions.to_json(result)
        target = _input_required_type(view) if _is_input_required(result) else spec.result
        converted = versions.convert(
            versions.dump(result), target, what=f"the {spec.method} result", source=self.stub_version, destination=view.version
        )
        return orjson.dumps(versions.project(converted, result))

    def _validate_result(self, spec: MethodSpec, data: dict[str, Any]) -> Any:
        target = spec.result if data.get("resultType") != "input_required" else _input_required_type_of(self.stub)
        try:
            return versions.validate(target, data)
        except ValidationError as exc:
            log.error("%s handler returned an invalid result: %s", spec.method, exc)
            raise McpError(INTERNAL_ERROR, f"Internal error: invalid result from the {spec.method} handler") from None

    def _checked_input_required(self, spec: MethodSpec, result: Any, view: PeerView, round_number: int) -> Any:
        """Refuse input requests the client cannot answer (-32021) and seal the handler's state."""
        missing: dict[str, Any] = {}
        for ask in (getattr(result, "input_requests", None) or {}).values():
            data = versions.dump(ask)
            ask_spec = getattr(view.protocol, "INPUT_REQUESTS", {}).get(data.get("method"))
            if ask_spec is None:
                continue
            for capability in ask_spec.needed_capabilities(data.get("params")):
                if not capability.present_in(view.client_capabilities):
                    node = missing
                    for key in capability.path[:-1]:
                        node = node.setdefault(key, {})
                    node.setdefault(capability.path[-1], {})
        if missing:
            raise McpError(
                MISSING_CLIENT_CAPABILITY,
                f"{spec.method} needs client capabilities the request did not declare: {', '.join(missing)}",
                {"requiredCapabilities": missing},
            )
        state = getattr(result, "request_state", None)
        if state is not None and view.stateless:
            result = result.model_copy(update={"request_state": self.sealer.seal(spec.method, state, round_number + 1)})
        return result

    def _stamped(self, result: Any, spec: MethodSpec) -> Any:
        """Stateless-era results carry the server's identity and its caching policy."""
        updates: dict[str, Any] = {}
        fields = type(result).model_fields if isinstance(result, BaseModel) else {}
        if "meta" in fields:
            meta = dict(versions.dump(result.meta) if result.meta is not None else {})
            meta.setdefault(SERVER_INFO_KEY, {"name": self.server.name, "version": self.server.version})
            updates["meta"] = meta
        if "ttl_ms" in fields and "ttl_ms" not in result.model_fields_set:
            updates["ttl_ms"] = self.server.cache_ttl_ms
        if "cache_scope" in fields and "cache_scope" not in result.model_fields_set:
            updates["cache_scope"] = self.server.cache_scope
        if not updates:
            return result
        key = (type(self.server), type(result))
        if key in _STAMPS_CHECKED:  # values already checked for this server and type: validate just `_meta`
            if "meta" in updates:
                updates["meta"] = versions.validate(fields["meta"].annotation, updates["meta"])
            return result.model_copy(update=updates)
        # First time for this server and result type: validate, which checks the server's
        # cache settings (`cache_ttl_ms`, `cache_scope`) against the schema once.
        data = {**versions.dump(result), **{fields[k].alias or k: v for k, v in updates.items()}}
        stamped = versions.validate(type(result), data)
        _STAMPS_CHECKED.add(key)
        return stamped

    async def _bridge_input_round(
        self, spec: MethodSpec, stub_spec: MethodSpec, request: Request, result: Any, context: ServerRequestContext,
        view: PeerView,
    ) -> Any:
        responses: dict[str, Any] = {}
        for key, ask in (getattr(result, "input_requests", None) or {}).items():
            ask_data = versions.dump(ask)
            responses[key] = await context.request(ask_data["method"], ask_data.get("params"), raw=True)
        raw_params = dict(request.params or {})
        raw_params["inputResponses"] = responses
        raw_params.pop("requestState", None)
        state = getattr(result, "request_state", None)
        if state is not None:
            raw_params["requestState"] = state
        data = dict(raw_params)
        if self.stub.STATELESS:
            data["_meta"] = {**self._session_meta(view), **(data.get("_meta") or {})}
        params = versions.convert(data, stub_spec.params, what=f"{spec.method} params", source=view.version, destination=self.stub_version)
        return await getattr(self.server, stub_spec.handler)(params, context)

    # -- handshake-era subscriptions served by the runtime -----------------------------------

    def _serves_subscriptions(self) -> bool:
        """The server's stub has no resources/subscribe handler (a stateless-era stub)."""
        return "resources/subscribe" not in self.stub.CLIENT_REQUESTS

    def _subscription_rpc(self, spec: MethodSpec, request: Request) -> bytes:
        params = versions.dump(self._validate_params(spec, request.params))
        uri = params.get("uri") if isinstance(params, dict) else None
        if not isinstance(uri, str):
            raise McpError(INVALID_PARAMS, f"Invalid params: {spec.method} needs params.uri")
        if SUBSCRIPTION_RPCS[spec.method]:
            self.resource_subscriptions.add(uri)
        else:
            self.resource_subscriptions.discard(uri)
        return EMPTY_RESULT

    def wants(self, method: str, params: Any) -> bool:
        """Whether this connection's client asked for `method` (only resource updates are opt-in)."""
        if method != RESOURCE_UPDATED or not self._serves_subscriptions():
            return True
        uri = params.get("uri") if isinstance(params, dict) else None
        return uri in self.resource_subscriptions

    # -- lifecycle ---------------------------------------------------------------------------

    def _initialize(self, request: Request) -> bytes:
        if self.view is not None:
            raise McpError(INVALID_REQUEST, "Invalid Request: the session is already initialized")
        params = request.params or {}
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise invalid_field("params.protocolVersion", "must be a string", "string_type")
        version = requested if requested in self.handshake_supported else self.handshake_supported[-1]
        protocol = versions.methods_of(version)
        try:
            versions.validate(protocol.CLIENT_REQUESTS["initialize"].params, params)
        except ValidationError as exc:
            raise validation_error(exc) from None
        view = PeerView(
            version=version,
            protocol=protocol,
            client_capabilities=params.get("capabilities") or {},
            client_info=params.get("clientInfo") or {},
            log_level=None,
            stateless=False,
        )
        view.advertised = self.capabilities_for(protocol)
        self.view = view
        self.batches_allowed = bool(protocol.BATCHES)
        self._prepare(protocol)
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": view.advertised,
            "serverInfo": {"name": self.server.name, "version": self.server.version},
        }
        if self.server.instructions:
            result["instructions"] = self.server.instructions
        return orjson.dumps(result)

    def _stateless_view(self, request: Request) -> PeerView:
        meta = stateless_meta(request)
        if meta is None:
            if self.stateless_supported and not self.handshake_supported:
                raise McpError(INVALID_PARAMS, f"Invalid params: params._meta[{PROTOCOL_VERSION_KEY!r}] is required")
            if not self.stateless_supported:
                raise McpError(INVALID_REQUEST, f"Invalid Request: {request.method} before initialize")
            raise McpError(
                INVALID_PARAMS,
                f"Invalid params: {request.method} needs params._meta[{PROTOCOL_VERSION_KEY!r}] (stateless) "
                "or an initialize handshake first",
            )
        version = meta.get(PROTOCOL_VERSION_KEY)
        if not isinstance(version, str):
            raise McpError(INVALID_PARAMS, f"Invalid params: params._meta[{PROTOCOL_VERSION_KEY!r}] is required")
        if version not in self.stateless_supported:
            raise McpError(
                UNSUPPORTED_PROTOCOL_VERSION,
                f"Unsupported protocol version {version!r}",
                {"supported": self.stateless_supported, "requested": version},
            )
        capabilities = meta.get(CLIENT_CAPABILITIES_KEY)
        if not isinstance(capabilities, dict):
            raise McpError(INVALID_PARAMS, f"Invalid params: params._meta[{CLIENT_CAPABILITIES_KEY!r}] must be an object")
        protocol = versions.methods_of(version)
        level = meta.get(LOG_LEVEL_KEY)
        view = PeerView(
            version=version,
            protocol=protocol,
            client_capabilities=capabilities,
            client_info=meta.get(CLIENT_INFO_KEY) if isinstance(meta.get(CLIENT_INFO_KEY), dict) else {},
            log_level=level if level in LOG_LEVELS else None,
            stateless=True,
        )
        view.advertised = self.capabilities_for(protocol)
        self._prepare(protocol)
        return view

    def _prepare(self, protocol: Any) -> None:
        """Build, once per process and version, the validators and serializers of the methods this
        server implements. Models are built on first use (import stays cheap and a process never
        pays for methods it does not serve); doing these at negotiation keeps the build off the
        first call of each method and out of the steady state's memory profile."""
        key = (type(self.server), protocol.PROTOCOL_VERSION)
        if key in _PREPARED:
            return
        _PREPARED.add(key)
        for spec in protocol.CLIENT_REQUESTS.values():
            stub_spec = self.stub.CLIENT_REQUESTS.get(spec.method)
            if spec.builtin or stub_spec is None or stub_spec.builtin or not self.server.implements(stub_spec):
                continue
            for target in {spec.params, spec.result, stub_spec.params, stub_spec.result}:
                versions.prepare(target)

    def capabilities_for(self, protocol: Any) -> dict[str, Any]:
        """The server's capabilities limited to what a version defines and the server implements."""
        known = set(protocol.SERVER_CAPABILITY_PATHS)
        out: dict[str, Any] = {}
        for key, value in self.server.capabilities.items():
            if key not in known:
                continue
            if isinstance(value, dict):
                out[key] = {k: v for k, v in value.items() if f"{key}.{k}" in known or key in ("experimental", "extensions")}
            else:
                out[key] = value
        return out

    async def _builtin(self, spec: MethodSpec, request: Request, view: PeerView, session: Session) -> bytes:
        method = spec.method
        if method == "ping":
            return EMPTY_RESULT
        if method == "initialize":
            raise McpError(INVALID_REQUEST, "Invalid Request: the session is already initialized")
        if method == "logging/setLevel":
            self._check_offered(spec, view)
            level = (request.params or {}).get("level")
            if level not in LOG_LEVELS:
                raise invalid_field("params.level", f"must be one of {', '.join(LOG_LEVELS)}", "enum")
            view.log_level = level
            return EMPTY_RESULT
        if method == "server/discover":
            self._validate_params(spec, request.params)
            return self._discover(spec, view)
        if method == "subscriptions/listen":
            return await self._listen(spec, request, view, session)
        raise McpError(METHOD_NOT_FOUND, f"Method not found: {method}")

    def _discover(self, spec: MethodSpec, view: PeerView) -> bytes:
        data: dict[str, Any] = {
            "supportedVersions": self.stateless_supported + list(reversed(self.handshake_supported)),
            "capabilities": view.advertised,
            "serverInfo": {"name": self.server.name, "version": self.server.version},
            "resultType": "complete",
            "ttlMs": self.server.cache_ttl_ms,
            "cacheScope": self.server.cache_scope,
            "_meta": {SERVER_INFO_KEY: {"name": self.server.name, "version": self.server.version}},
        }
        if self.server.instructions:
            data["instructions"] = self.server.instructions
        try:
            return versions.to_json(versions.validate(spec.result, data))
        except ValidationError:
            data.pop("serverInfo")  # only in versions whose DiscoverResult has it
            return versions.to_json(versions.validate(spec.result, data))

    async def _listen(self, spec: MethodSpec, request: Request, view: PeerView, session: Session) -> bytes:
        params = self._validate_params(spec, request.params)
        wanted = versions.dump(params).get("notifications") or {}
        agreed: dict[str, Any] = {}
        methods: dict[str, Any] = {}
        for key, value in wanted.items():
            if key not in LISTEN_FILTERS or value in (False, None, []):
                continue
            method, (capability, sub) = LISTEN_FILTERS[key]
            if isinstance(view.advertised.get(capability), dict) and view.advertised[capability].get(sub):
                agreed[key] = value
                methods[method] = list(value) if isinstance(value, list) else True
        listener = _Listener(session, request.id, methods)
        listeners = _registry(self.server)[1]
        listeners.add(listener)
        try:
            await session.notify(
                "notifications/subscriptions/acknowledged",
                {"notifications": agreed, "_meta": {SUBSCRIPTION_ID_KEY: request.id}},
            )
            await anyio.sleep_forever()
        finally:
            listeners.discard(listener)
        return EMPTY_RESULT  # pragma: no cover - a listen stream ends by cancellation

    # -- notifications -----------------------------------------------------------------------

    async def on_notification(self, notification: Notification, session: Session) -> None:
        view = self.view
        if view is None:
            return
        if notification.method == "notifications/initialized":
            self.initialized = True
            return
        spec: MethodSpec | None = view.protocol.CLIENT_NOTIFICATIONS.get(notification.method)
        if spec is None or spec.builtin:
            log.debug("ignoring notification %s", notification.method)
            return
        params = self._validate_params(spec, notification.params)
        stub_spec = self.stub.CLIENT_NOTIFICATIONS.get(spec.method)
        if stub_spec is None or not self.server.implements(stub_spec):
            return
        if view.protocol is not self.stub and stub_spec.params is not None and notification.params is not None:
            params = versions.convert(
                notification.params, stub_spec.params, what=spec.method, source=view.version, destination=self.stub_version
            )
        await getattr(self.server, stub_spec.handler)(params, ServerNotificationContext(self, view))

    # -- sending -----------------------------------------------------------------------------

    def may_send(self, method: str) -> bool:
        view = self.view
        if view is None:
            return False
        spec = view.protocol.SERVER_NOTIFICATIONS.get(method)
        if spec is None:
            return False
        if method == "notifications/resources/updated":
            return spec.gate is None or spec.gate.present_in(view.advertised)
        return spec.gate is None or spec.gate.side != "server" or spec.gate.present_in(view.advertised)

    async def notify(self, method: str, params: Any = None) -> None:
        """Send a server notification of the negotiated version, if its capability is advertised."""
        view = self.view
        if view is None or self.session is None:
            raise McpError(INVALID_REQUEST, f"cannot send {method} outside a handshake session")
        spec = view.protocol.SERVER_NOTIFICATIONS.get(method)
        if spec is None:
            raise McpError(METHOD_NOT_FOUND, f"{method} is not a server notification of MCP {view.version}")
        if spec.gate is not None and spec.gate.side == "server" and not spec.gate.present_in(view.advertised):
            raise McpError(METHOD_NOT_FOUND, f"{method} needs the {spec.gate}, which this server does not advertise")
        await self.session.notify(method, versions.dump(params) if params is not None else None)

    async def request(self, view: PeerView, method: str, params: Any = None, *, timeout: float | None = None) -> Any:
        """Ask the client (sampling, elicitation, roots); returns the negotiated version's result model."""
        if view.stateless or self.session is None:
            raise McpError(
                INTERNAL_ERROR,
                f"{method}: a stateless ({view.version}) request cannot send requests to the client; "
                "return an InputRequiredResult instead",
            )
        spec = view.protocol.SERVER_REQUESTS.get(method)
        if spec is None:
            raise McpError(METHOD_NOT_FOUND, f"{method} is not a server request of MCP {view.version}")
        data = versions.dump(params) if params is not None else None
        for capability in spec.needed_capabilities(data):
            if capability.side == "client" and not capability.present_in(view.client_capabilities):
                raise McpError(METHOD_NOT_FOUND, f"{method} needs the {capability}, which the client did not declare")
        raw = await self.session.request(method, data, timeout=timeout)
        try:
            return versions.validate(spec.result, raw)
        except ValidationError as exc:
            raise McpError(INTERNAL_ERROR, f"the client's {method} result is invalid: {exc.errors()[0]['msg']}") from None


_STAMPS_CHECKED: set[tuple[type[ServerStub], type[BaseModel]]] = set()  # see ServerRuntime._stamped
_PREPARED: set[tuple[type[ServerStub], str]] = set()  # (server class, version) pairs already prepared


def _default_sealer(server: ServerStub) -> RequestStateSealer:
    state = vars(server)
    if "_mcp_sealer" not in state:
        state["_mcp_sealer"] = RequestStateSealer(getattr(server, "request_state_secret", None))
    return state["_mcp_sealer"]


def stateless_meta(request: Request) -> dict[str, Any] | None:
    """The request's `_meta` if it carries a stateless-era protocol version, else None."""
    params = request.params
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta:
        return meta
    return None


def _is_input_required(result: Any) -> bool:
    return isinstance(result, BaseModel) and type(result).__name__ == "InputRequiredResult"


def _input_required_type(view: PeerView) -> Any:
    return _input_required_type_of(view.protocol)


def _input_required_type_of(protocol: Any) -> Any:
    models = protocol.m if hasattr(protocol, "m") else None
    if models is None or not hasattr(models, "InputRequiredResult"):
        raise McpError(INTERNAL_ERROR, f"MCP {protocol.PROTOCOL_VERSION} has no InputRequiredResult")
    return models.InputRequiredResult


class ServerRequestContext:
    """The context of one request handler (see `context.RequestContext`)."""

    __slots__ = ("_runtime", "_session", "_request", "_view", "_last_progress")

    def __init__(self, runtime: ServerRuntime, session: Session, request: Request, view: PeerView) -> None:
        self._runtime = runtime
        self._session = session
        self._request = request
        self._view = view
        self._last_progress: float | None = None

    @property
    def _progress_token(self) -> Any:
        """The request's `_meta.progressToken`, read when a handler reports progress."""
        params = self._request.params
        meta = params.get("_meta") if isinstance(params, dict) else None
        return meta.get("progressToken") if isinstance(meta, dict) else None

    @property
    def request_id(self) -> str | int:
        return self._request.id

    @property
    def protocol_version(self) -> str:
        return self._view.version

    @property
    def peer_capabilities(self) -> dict[str, Any]:
        return self._view.client_capabilities

    @property
    def server(self) -> ServerStub:
        return self._runtime.server

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        token = self._progress_token
        if token is None:
            return
        if self._last_progress is not None and progress <= self._last_progress:
            raise ValueError(f"progress must increase: {progress} after {self._last_progress}")
        self._last_progress = progress
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self._session.notify("notifications/progress", params)

    def allows_log(self, level: str) -> bool:
        view = self._view
        if "logging" not in view.advertised:
            return False
        if view.log_level is None:
            return not view.stateless  # stateless: only when the request asked for a level
        return LOG_LEVELS.index(level) >= LOG_LEVELS.index(view.log_level)

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}")
        if not self.allows_log(level):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self._session.notify("notifications/message", params)

    async def close_sse_stream(self) -> None:
        """End the HTTP response stream this request is answered on, now, without ending the request
        (SSE polling, SEP-1699): what the handler sends afterwards, its result included, waits for the
        client to reconnect with `Last-Event-ID`. A no-op where the transport cannot resume streams
        (stdio, stateless requests, JSON responses)."""
        close = getattr(self._session.transport, "close_stream", None)
        if close is not None:
            await close(self._request.id)

    async def notify(self, method: str, params: Any = None) -> None:
        """A notification to every connected client allowed to get it (list changes, resource updates)."""
        await broadcast(self._runtime.server, method, params)

    async def request(self, method: str, params: Any = None, *, timeout: float | None = None, raw: bool = False) -> Any:
        result = await self._runtime.request(self._view, method, params, timeout=timeout)
        return versions.dump(result) if raw else result


class ServerNotificationContext:
    __slots__ = ("_runtime", "_view")

    def __init__(self, runtime: ServerRuntime, view: PeerView) -> None:
        self._runtime = runtime
        self._view = view

    @property
    def protocol_version(self) -> str:
        return self._view.version

    @property
    def peer_capabilities(self) -> dict[str, Any]:
        return self._view.client_capabilities
