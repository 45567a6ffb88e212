"""Serving: one `ServerRuntime` per connection binds a server object to a session.

Every request takes one path: the view it is served under (`peer`: negotiated by `initialize`, or
read from a stateless request's `_meta`), the plan of its method under that view (built once per
version and method, gate-checked once per view), params validated once with the client's version's
models, crossed into the stub's version where they differ (`bridge`), the handler, and the result
crossed back. Methods the runtime serves itself (lifecycle, logging level, discovery, listen
streams) are a table here; everything else about methods comes from the generated tables.
"""

from __future__ import annotations

from collections.abc import Collection, Set
from functools import partial
from typing import Any

from pydantic import ValidationError

from mcp_bindings.runtime.protocol import crossing, versions
from mcp_bindings.runtime.protocol.request_state import RequestStateSealer
from mcp_bindings.runtime.protocol.spec import MethodSpec, ProtocolTables
from mcp_bindings.runtime.rpc import logs
from mcp_bindings.runtime.rpc.errors import INVALID_REQUEST, METHOD_NOT_FOUND, McpError
from mcp_bindings.runtime.rpc.jsonrpc import Notification, Request, invalid_field, json_object, validation_error
from mcp_bindings.runtime.rpc.session import Session
from mcp_bindings.runtime.server import extensions, notifications, tool_schemas
from mcp_bindings.runtime.server.bridge import HandlerCall, VersionBridge
from mcp_bindings.runtime.server.calls import ServerCall
from mcp_bindings.runtime.server.context import PeerSession, ServerNotificationContext, ServerRequestContext
from mcp_bindings.runtime.server.host import ServerHost, host_for
from mcp_bindings.runtime.server.peer import LOG_LEVELS, Lifecycle, MetaModels, PeerView, stateless_meta
from mcp_bindings.runtime.server.plugins import discovered, install
from mcp_bindings.runtime.server.results_out import ResultWriter
from mcp_bindings.runtime.server.seam import Builtin, NoticePlan, Plan, ServerFeature
from mcp_bindings.runtime.server.stubs import ServerStub
from mcp_bindings.v2025_11_25 import names as v2025
from mcp_bindings.v2026_07_28 import names as v2026

__all__ = ["LOG_LEVELS", "Builtin", "Plan", "ServerRuntime"]

log = logs.logger("server")

EMPTY_RESULT = b"{}"
INITIALIZED = v2025.NOTIFICATIONS_INITIALIZED


class ServerRuntime:
    """The dispatcher of one server connection (stdio process, HTTP session, in-memory pair)."""

    def __init__(
        self,
        server: ServerStub,
        *,
        supported_versions: list[str] | None = None,
        request_state: RequestStateSealer | None = None,
        host: ServerHost | None = None,
    ) -> None:
        self.server = server
        self.stub: ProtocolTables = server.protocol  # the tables of the version the server was written against
        self.host = host or host_for(server)
        self.lifecycle = Lifecycle(server, supported_versions)
        self.results = ResultWriter(server, self.lifecycle.identity, self.host.results)
        self.bridge = VersionBridge(server, request_state or self.host.sealer, self.results)
        self.metas = MetaModels()  # stateless requests' `_meta`, validated once while it repeats
        self.view: PeerView | None = None  # set by initialize (handshake lifecycle)
        self.initialized = False
        self.preparing = False  # validators left to build after answers (`_prepare_more`)
        self.session: Session | None = None
        self.peer: PeerSession | None = None  # the client of this connection (handshake era)
        # resources/subscribe is served by the runtime itself where the server's stub has no such
        # handlers (a stateless-era stub); what the client subscribed to is kept by the host.
        self.serves_subscriptions = v2025.RESOURCES_SUBSCRIBE not in self.stub.client_requests
        self._plans: dict[ProtocolTables, dict[str, Plan]] = {}
        self._notice_plans: dict[tuple[ProtocolTables, str], NoticePlan] = {}
        self.features = _features(server, self.host)
        # What a feature keeps per connection (e.g. the tool schema checks' catalog), by feature.
        self.feature_state: dict[ServerFeature, Any] = {}
        self.host.connections.add(self)

    @property
    def batches_allowed(self) -> bool:
        return self.view is not None and self.view.protocol.info.batches

    # -- requests ----------------------------------------------------------------------------

    async def on_request(self, request: Request, session: Session) -> bytes:
        self.session = session
        view = self.view
        if view is None:  # a stateless request: mostly the `_meta` of the one before (`repeated`)
            view = self.lifecycle.repeated(request.params, session.principal)
            if view is None:
                meta = stateless_meta(request)
                if meta is None and self.lifecycle.serves_handshake:
                    if request.method == v2025.INITIALIZE:
                        return self._initialize(request, session)
                    if request.method == v2025.PING:
                        return EMPTY_RESULT
                view = self._request_view(request, meta, session)
        elif self.preparing:
            self._prepare_more(view.protocol, session)
        plan = view.plans.get(request.method) or self.plan(request.method, view)
        if plan.builtin is not None:
            return await plan.builtin(self, request, view, session)
        params = request.params
        typed = self._typed_params(plan, params, view)
        stub_spec, round_number = plan.stub_spec, 0
        if plan.converts or (plan.input_required and params is not None and "requestState" in params):
            stub_spec, typed, round_number = self.bridge.params_to_stub(plan.spec, params, typed, view)
        context = ServerRequestContext(view, self.server, self.host, session, request, self.peer)
        handler = getattr(self.server, stub_spec.handler)
        outer = plan.outer  # what features put around the handler (`seam`); no extra frame without
        result: Any
        if plan.converts:
            result = await self._translated(plan, handler, typed, context, params, view)
        elif outer is None:
            result = await handler(typed, context)
        else:
            result = await outer(ServerCall(plan.spec.method, typed, params, context, handler, plan.spec), plan.inner)
        if type(result) is plan.fast_result:  # the stub's own result type, for a client of the stub's version
            if view.stateless:
                return self.results.stamped_json(request.method, result, view)
            return self.results.result_json(result, f"the {request.method} result")
        if type(result) in plan.as_is:  # e.g. a CreateTaskResult (`tasks.server.plugin`)
            return self.results.result_json(result, f"the {request.method} result")
        # An input round's re-run of the handler goes through what wraps it too.
        call = None if plan.outer is None else _wrapped_call(plan, handler, context)
        answer = await self.bridge.settle(plan.spec, stub_spec, request, result, context, view, round_number, call)
        if plan.after is not None:  # such plans have no fast_result: run once answered
            plan.after(self, params)
        return answer

    def _typed_params(self, plan: Plan, params: Any, view: PeerView) -> Any:
        """The request's params validated once, by the plan's cached validator (-32602 naming each
        field); a stateless request's `_meta` by what `metas` kept of an equal one."""
        if params is None or plan.validate is None:
            return versions.validate_params(plan.spec, params)
        try:
            if view.stateless:
                return self.metas.typed(plan.validate, params, view.meta)
            return plan.validate(params, by_name=False, context=versions.WIRE_CONTEXT)
        except ValidationError as exc:
            raise validation_error(exc) from None

    def _request_view(self, request: Request, meta: Any, session: Session) -> PeerView:
        """The view of a request outside a handshake session (the stateless era's `_meta`)."""
        # The principal: sealed requestState is bound to it (request_state).
        view = self.lifecycle.view_of(request, meta, session.principal)
        if not self.lifecycle.prepared(view.protocol):
            session.defer(partial(self.lifecycle.prepare, view.protocol))
        return view

    def _prepare_more(self, protocol: ProtocolTables, session: Session) -> None:
        """Once this answer is out, build the validators of one more method the server implements
        (`Lifecycle.prepare`), until every one is built."""
        if self.lifecycle.prepared(protocol):
            self.preparing = False
        else:
            session.defer(partial(self.lifecycle.prepare, protocol))

    async def _translated(
        self, plan: Plan, handler: Any, typed: Any, context: ServerRequestContext, params: Any, view: PeerView
    ) -> Any:
        """Run the handler of a converting plan: an error is translated to the client's version."""
        outer = plan.outer
        try:
            if outer is None:
                return await handler(typed, context)
            return await outer(ServerCall(plan.spec.method, typed, params, context, handler, plan.spec), plan.inner)
        except McpError as exc:
            raise crossing.translate_error(exc, plan.spec.method, self.stub, view.protocol) from None

    def plan(self, method: str, view: PeerView) -> Plan:
        """How `method` is served under `view`: built once per version and method, gate-checked
        once per view, then cached on the view. Unknown or unoffered methods raise -32601 (uncached).
        Features (`seam`) serve what no handler does and wrap what one does."""
        plans = self._plans.setdefault(view.protocol, {})
        plan = plans.get(method)
        if plan is None:
            spec = view.protocol.client_requests.get(method)
            if spec is None:  # not the version's: a feature's (a custom or extension method), else -32601
                # Kept with the view's advertised capabilities only, which a (re-)registration renews.
                plan = view.plans[method] = self._served(method, None, view)
                return plan
            plan = plans[method] = self._build(method, spec, view)
        gate = plan.spec.gate
        if gate is not None and gate.side == "server" and not gate.present_in(view.advertised):
            raise McpError(METHOD_NOT_FOUND, f"Method not found: {method} (the server does not offer {gate})")
        view.plans[method] = plan
        return plan

    def _build(self, method: str, spec: MethodSpec, view: PeerView) -> Plan:
        converts = view.protocol is not self.stub
        if spec.builtin:  # lifecycle, logging level, discovery, listen: the runtime's own
            builtin = BUILTINS.get(method)
            if builtin is None:
                raise McpError(METHOD_NOT_FOUND, f"Method not found: {method}")
            return Plan(spec, spec, converts, builtin)
        for feature in self.features:
            served = feature.serve(self, method, spec, view)
            if served is not None:
                return served
        stub_spec = self.stub.client_requests.get(method)
        if stub_spec is None or stub_spec.builtin or not self.server.implements(stub_spec):
            # Not a handler this server has (nor one with a default): the method is not offered.
            raise McpError(METHOD_NOT_FOUND, f"Method not found: {method}")
        plan = Plan(spec, spec, converts, None)
        for feature in self.features:
            feature.wrap(self, plan, view)
        if not converts:
            versions.prepare(spec.params)
            versions.prepare(spec.result)
        return plan

    def _served(self, method: str, spec: MethodSpec | None, view: PeerView) -> Plan:
        for feature in self.features:
            served = feature.serve(self, method, spec, view)
            if served is not None:
                return served
        raise McpError(METHOD_NOT_FOUND, f"Method not found: {method}")

    def _initialize(self, request: Request, session: Session) -> bytes:
        view, result = self.lifecycle.initialize(request)
        self.view = view
        self.peer = PeerSession(view, session, self.stub)
        # The validators of the methods served: built after this answer and the next ones, one method
        # each time (time to the first response, and to the first `tools/list`).
        self.preparing = True
        self._prepare_more(view.protocol, session)
        return result

    @property
    def subscriptions(self) -> Set[str]:
        """The URIs this connection's client subscribed to (`resources/subscribe`), as its host keeps them."""
        return self.host.subscriptions.of(self)

    @subscriptions.setter
    def subscriptions(self, uris: Collection[str]) -> None:  # a shared session's record (scale-out)
        self.host.subscriptions.replace(self, uris)

    def record_subscription(self, subscribe: bool, params: Any) -> None:
        uri = json_object(params).get("uri")
        if isinstance(uri, str):
            if subscribe:
                self.host.subscriptions.add(self, uri)
            else:
                self.host.subscriptions.remove(self, uri)

    # -- notifications -----------------------------------------------------------------------

    async def on_notification(self, notification: Notification, session: Session) -> None:
        view = self.view
        if view is None or notification.method not in view.protocol.client_notifications:
            # not the version's: a feature's (a custom or extension notification), else dropped
            for feature in self.features:
                if await feature.notified(self, notification, view):
                    return
            log.debug("ignoring notification %s", notification.method)
            return
        if notification.method == INITIALIZED:
            self.initialized = True
            return
        spec = view.protocol.client_notifications.get(notification.method)
        if spec is None or spec.builtin:
            log.debug("ignoring notification %s", notification.method)
            return
        params = versions.validate_params(spec, notification.params)
        stub_spec = self.stub.client_notifications.get(spec.method)
        if stub_spec is None or not self.server.implements(stub_spec):
            return
        if view.protocol is not self.stub and stub_spec.params is not None and notification.params is not None:
            params = crossing.cross(
                notification.params,
                stub_spec.params,
                what=spec.method,
                source=view.version,
                destination=self.stub.version,
            )
        handler = getattr(self.server, stub_spec.handler)
        await self.notice_plan(spec, view).run(handler, params, notification.params, ServerNotificationContext(view))

    def notice_plan(self, spec: MethodSpec, view: PeerView) -> NoticePlan:
        """What runs around the handler of notification `spec` at `view`'s version: built once."""
        key = (view.protocol, spec.method)
        plan = self._notice_plans.get(key)
        if plan is None:
            plan = self._notice_plans[key] = NoticePlan(spec)
            for feature in self.features:
                feature.wrap_notification(self, plan, view)
        return plan


def _wrapped_call(plan: Plan, handler: Any, context: ServerRequestContext) -> HandlerCall:
    async def call(params: Any, raw: Any) -> Any:
        return await plan.enter(handler, params, raw, context)

    return call


def _features(server: ServerStub, host: ServerHost) -> list[ServerFeature]:
    """The features of a server host: the runtime's own, then those of the extensions discovered
    through the entry point group (`plugins.discovered`), then the registered ones (`ServerHost.use`,
    `plugins.extend`); made once per host."""
    if host.features is None:
        core: list[ServerFeature] = [
            extensions.CustomMethods(),
            notifications.RuntimeSubscriptions(),
            tool_schemas.ToolChecks(),
        ]
        for make in discovered():
            extension = make()
            install(server, host, extension)
            core += extension.features()
        host.features = [*core, *host.added]
    return host.features


# -- what the runtime serves itself (policy/runtime_methods.json lists these methods) -------------


async def _ping(runtime: ServerRuntime, request: Request, view: PeerView, session: Session) -> bytes:
    return EMPTY_RESULT


async def _initialize_again(runtime: ServerRuntime, request: Request, view: PeerView, session: Session) -> bytes:
    raise McpError(INVALID_REQUEST, "Invalid Request: the session is already initialized")


async def _set_level(runtime: ServerRuntime, request: Request, view: PeerView, session: Session) -> bytes:
    level = json_object(request.params).get("level")
    if level not in LOG_LEVELS:
        raise invalid_field("params.level", f"must be one of {', '.join(LOG_LEVELS)}", "enum")
    view.log_level = level
    return EMPTY_RESULT


async def _discover(runtime: ServerRuntime, request: Request, view: PeerView, session: Session) -> bytes:
    versions.validate_params(view.protocol.client_requests[request.method], request.params)
    return runtime.lifecycle.discover(view)


async def _listen(runtime: ServerRuntime, request: Request, view: PeerView, session: Session) -> bytes:
    params = versions.validate_params(view.protocol.client_requests[request.method], request.params)
    await notifications.listen(runtime.host, params, request.id, view, session)
    return EMPTY_RESULT  # pragma: no cover - a listen stream ends by cancellation


BUILTINS: dict[str, Builtin] = {
    v2025.PING: _ping,
    v2025.INITIALIZE: _initialize_again,
    v2025.LOGGING_SET_LEVEL: _set_level,
    v2026.SERVER_DISCOVER: _discover,
    v2026.SUBSCRIPTIONS_LISTEN: _listen,
}
