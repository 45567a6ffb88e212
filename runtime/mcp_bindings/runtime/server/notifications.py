"""What a server sends outside a request's answer: broadcasts, `subscriptions/listen` streams, and
the resource subscriptions of handshake-era clients.

All connections of one server object share a `ServerHost` (`server.host`), which the runtime keeps in a registry of
its own (nothing is written into the user's server object). A broadcast goes to every handshake
connection whose negotiated version has the notification and whose advertised capabilities allow
it, and to every stateless `subscriptions/listen` stream that opted in.

Several workers: a host given a `bus` (`bus.NotificationBus`, set by the scale-out plug-in) also
publishes each broadcast there, and the app delivers what other workers published with `deliver`,
so a list change, resource update, task status of the tasks extension (`notifications/tasks`) or
custom broadcast (`extensions.broadcast`) raised on one worker reaches the streams held by every
worker, still addressed per connection and per listen stream as above.
"""

from __future__ import annotations

from collections.abc import Set
from functools import cache
from typing import TYPE_CHECKING, Any

import anyio

from mcp_bindings.runtime.protocol import registry, versions
from mcp_bindings.runtime.protocol.custom_methods import peer_declares
from mcp_bindings.runtime.protocol.spec import MethodSpec, ProtocolTables
from mcp_bindings.runtime.rpc import logs
from mcp_bindings.runtime.rpc.errors import McpError, NotExpressible
from mcp_bindings.runtime.rpc.jsonrpc import Request, invalid_field, json_object
from mcp_bindings.runtime.rpc.session import Session
from mcp_bindings.runtime.server.bridge import outgoing_notification
from mcp_bindings.runtime.server.bus import EXTENSION_BROADCAST
from mcp_bindings.runtime.server.host import Listener, ServerHost
from mcp_bindings.runtime.server.seam import Plan, ServerFeature
from mcp_bindings.runtime.server.subscriptions import RESOURCE_UPDATED
from mcp_bindings.v2025_11_25 import names as v2025
from mcp_bindings.v2026_07_28 import names as v2026

if TYPE_CHECKING:
    from mcp_bindings.runtime.server.peer import PeerView
    from mcp_bindings.runtime.server.runtime import ServerRuntime

log = logs.logger("notifications")

# Handshake-era subscription requests (method -> subscribe?). The runtime records the URIs each
# connection subscribed to on the host (`ServerHost.subscriptions`, as it does a listen stream's
# `resourceSubscriptions`) and sends resource updates only there. A server written against a
# stateless-era stub has no handlers for them (that era folds them into subscriptions/listen): the
# runtime then answers them itself.
SUBSCRIPTION_REQUESTS = {v2025.RESOURCES_SUBSCRIBE: True, v2025.RESOURCES_UNSUBSCRIBE: False}
_UNSENDABLE = object()  # a broadcast's params that a version cannot express


@cache
def broadcasts() -> frozenset[str]:
    """The notifications a server sends to every client allowed them rather than to one request's
    client: those a `subscriptions/listen` filter opts in to (list changes, resource updates), in any
    version the runtime knows (each version's generated `PROTOCOL.listen_filters`)."""
    return frozenset(
        method
        for version in registry.stateless_versions()
        for method in registry.protocol(version).listen_filters.values()
    )


def may_send(view: PeerView, method: str) -> bool:
    """Whether a server notification exists in the view's version and its capability is advertised."""
    spec = view.protocol.server_notifications.get(method)
    gate = spec.gate if spec is not None else None
    return spec is not None and (gate is None or gate.side != "server" or gate.present_in(view.advertised))


def wants(subscriptions: Set[str], method: str, params: Any) -> bool:
    """Whether a connection asked for `method`: resource updates are opt-in, per URI (the runtime
    records every subscription, whether it or the server's handlers serve the requests)."""
    return method != RESOURCE_UPDATED or (isinstance(params, dict) and params.get("uri") in subscriptions)


async def broadcast(host: ServerHost, method: str, params: Any = None) -> int:
    """Send a server notification to every client allowed to get it; returns how many of this
    worker's clients got it. With a bus, other workers deliver it to theirs; if the bus is
    unavailable, this worker's clients still get it and `BackendUnavailable` is raised after."""
    data = versions.dump(params) if params is not None else None
    sent = await _deliver(host, method, params, data)
    if host.bus is not None:
        await host.bus.publish(method, data)
    return sent


async def deliver(host: ServerHost, method: str, data: Any) -> int:
    """Deliver a broadcast another worker published (decoded JSON params) to this worker's clients
    (a custom one, `bus.EXTENSION_BROADCAST`, to those that declared its extension)."""
    if method == EXTENSION_BROADCAST:
        return await deliver_broadcast(host, data)
    return await _deliver(host, method, data, data)


async def _deliver(host: ServerHost, method: str, params: Any, data: Any) -> int:
    host.list_changed(method)
    sent = 0
    crossed: dict[ProtocolTables, Any] = {}  # the params in each client version, crossed once
    for runtime in list(host.connections):
        view, session = runtime.view, runtime.session
        if (
            view is None
            or session is None
            or not may_send(view, method)
            or not wants(runtime.subscriptions, method, data)
        ):
            continue
        if view.protocol not in crossed:
            try:
                crossed[view.protocol] = outgoing_notification(runtime.stub, method, params, view)
            except NotExpressible as exc:  # that version's clients cannot get it; the others can
                log.warning("%s not sent to MCP %s clients: %s", method, view.version, exc.message)
                crossed[view.protocol] = _UNSENDABLE
        if crossed[view.protocol] is _UNSENDABLE:
            continue
        try:
            # not part of a request: no related id (HTTP: the GET stream)
            await session.notify(method, crossed[view.protocol])
            sent += 1
        except (McpError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
    for listener in list(host.listeners):
        if not listener.wants(method, data):
            continue
        tagged = dict(data or {})
        if listener.meta_key is not None:
            tagged["_meta"] = {**(tagged.get("_meta") or {}), listener.meta_key: listener.subscription_id}
        try:
            await listener.session.notify(method, tagged, related=listener.subscription_id)
            sent += 1
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            host.close_listener(listener)
    return sent


async def listen(host: ServerHost, params: Any, request_id: Any, view: PeerView, session: Session) -> None:
    """Hold a `subscriptions/listen` stream open: acknowledge what was agreed, then feed it
    the opted-in notifications until the client goes away (the request is cancelled)."""
    wanted = versions.dump(params).get("notifications") or {}
    agreed: dict[str, Any] = {}
    methods: dict[str, Any] = {}
    filters = view.protocol.listen_filters
    for key, value in wanted.items():
        if key not in filters or value in (False, None, []):
            continue
        method = filters[key]
        if may_send(view, method):  # the notification's capability (its generated gate) is advertised
            agreed[key] = value
            methods[method] = list(value) if isinstance(value, list) else True
    for feature in host.features or ():  # filters of plug-ins (the tasks extension's `taskIds`)
        for key, (method, value) in (await feature.listen_filters(view, session, wanted)).items():
            agreed[key] = methods[method] = value
    meta_key = view.protocol.meta.subscription_id
    listener = Listener(session, request_id, methods, meta_key)
    host.open_listener(listener)
    try:
        ack: dict[str, Any] = {"notifications": agreed}
        if meta_key is not None:
            ack["_meta"] = {meta_key: request_id}
        await session.notify(v2026.NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED, ack, related=request_id)
        await anyio.sleep_forever()
    finally:
        host.close_listener(listener)


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


class RuntimeSubscriptions(ServerFeature):
    """Handshake-era resource subscriptions, on the dispatch seam: the URIs a connection subscribed
    to are recorded once a handler's (un)subscribe succeeded, and answered by the runtime itself
    where the server's stub has no such handlers (a stateless-era stub)."""

    def serve(self, runtime: ServerRuntime, method: str, spec: MethodSpec | None, view: PeerView) -> Plan | None:
        if spec is None or method not in SUBSCRIPTION_REQUESTS or not runtime.serves_subscriptions:
            return None
        return Plan(spec, spec, view.protocol is not runtime.stub, _subscription)

    def wrap(self, runtime: ServerRuntime, plan: Plan, view: PeerView) -> None:
        subscribe = SUBSCRIPTION_REQUESTS.get(plan.spec.method)
        if subscribe is not None:
            plan.then(lambda connection, params: connection.record_subscription(subscribe, params))


async def _subscription(runtime: ServerRuntime, request: Request, view: PeerView, session: Session) -> bytes:
    spec = view.protocol.client_requests[request.method]
    params = versions.dump(versions.validate_params(spec, request.params))
    uri = json_object(params).get("uri")
    if not isinstance(uri, str):
        raise invalid_field("params.uri", f"{spec.method} needs params.uri", "missing")
    runtime.record_subscription(SUBSCRIPTION_REQUESTS[spec.method], {"uri": uri})
    return b"{}"
