"""Custom and extension methods, the server's side: serving a registered method (`plan`,
`notified`), reaching this request's client (`notify`, `request_client`) and every client
(`broadcast`), and the extensions a server advertises. Declaring methods is both sides'
(`protocol.custom_methods`); its names are re-exported here, the module users import as
`extensions` (`extensions.request(...)`, `extensions.notify(ctx, ...)`)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, TypeVar

from mcp_bindings.runtime.protocol.custom_methods import (
    EXPERIMENTAL,
    EXTENSIONS,
    Bound,
    CustomMethod,
    Extension,
    Methods,
    notification,
    peer_declares,
    request,
    result_data,
    typed_params,
    typed_result,
    wire_params,
)
from mcp_bindings.runtime.protocol.custom_methods import methods_of as _methods_of
from mcp_bindings.runtime.protocol.spec import MethodSpec, Side
from mcp_bindings.runtime.protocol.stub_base import CapabilityDeriving
from mcp_bindings.runtime.rpc import jsonrpc, logs
from mcp_bindings.runtime.rpc.errors import NotExpressible
from mcp_bindings.runtime.rpc.jsonrpc import Notification, Request, json_object
from mcp_bindings.runtime.server.bus import EXTENSION_BROADCAST
from mcp_bindings.runtime.server.context import ServerNotificationContext, ServerRequestContext, parts
from mcp_bindings.runtime.server.host import host_for, server_capabilities, server_methods
from mcp_bindings.runtime.server.notifications import deliver_broadcast
from mcp_bindings.runtime.server.peer import stateless_meta
from mcp_bindings.runtime.server.seam import Plan, ServerFeature

if TYPE_CHECKING:
    from mcp_bindings.runtime.rpc.session import Session
    from mcp_bindings.runtime.server.peer import PeerView
    from mcp_bindings.runtime.server.runtime import ServerRuntime

__all__ = [  # with what users import from here of `protocol.custom_methods` and `server.host`
    "EXPERIMENTAL",
    "EXTENSIONS",
    "CustomMethod",
    "CustomMethods",
    "Extension",
    "Methods",
    "broadcast",
    "methods_of",
    "notification",
    "notify",
    "peer_declares",
    "request",
    "server_capabilities",
    "server_methods",
]

log = logs.logger("extensions")

R = TypeVar("R")


def methods_of(obj: Any, side: Side | None = None) -> Methods:
    """The methods and extensions of a server (kept by its host) or of a client's handlers object
    (kept by the runtime): made on first use, never written into the object."""
    if isinstance(obj, CapabilityDeriving):
        return obj._custom_methods()  # pyright: ignore[reportPrivateUsage]
    return _methods_of(obj, side)


async def serve_bound(
    bound: Bound, runtime: ServerRuntime, request: Request, view: PeerView, session: Session
) -> bytes:
    """Answer a client's request to a registered method (a `server.Builtin`): params typed, the
    handler run in the usual context, the result checked and, in the stateless era, stamped."""
    spec = bound.method.spec
    params = typed_params(spec, request.params)
    context = ServerRequestContext(view, runtime.server, runtime.host, session, request, runtime.peer)
    data = result_data(spec, await bound.handler(params, context))
    if view.stateless:
        data.setdefault("resultType", "complete")
        key = view.protocol.meta.server_info
        if key is not None:  # the identity the runtime keeps per version (built once)
            data["_meta"] = {**json_object(data.get("_meta")), key: runtime.lifecycle.identity(view.protocol)}
    return jsonrpc.dumps(data)


# -- the server side -------------------------------------------------------------------------------


class CustomMethods(ServerFeature):
    """Custom and extension methods on the dispatch seam: a request the client's version does not
    define is served by the method registered for it (`register_method`)."""

    def serve(self, runtime: ServerRuntime, method: str, spec: MethodSpec | None, view: PeerView) -> Plan | None:
        if spec is not None:
            return None
        methods = runtime.host.methods
        bound = methods.handlers.get(method) if methods is not None else None
        if bound is None or bound.method.kind != "request":
            return None
        return Plan(bound.method.spec, bound.method.spec, False, functools.partial(serve_bound, bound))

    async def notified(self, runtime: ServerRuntime, notification: Notification, view: PeerView | None) -> bool:
        """A notification the version does not define, to its registered handler (through what
        features put around it: `ServerFeature.wrap_notification`); False: none is registered."""
        methods = runtime.host.methods
        bound = methods.handlers.get(notification.method) if methods is not None else None
        if bound is None or bound.method.kind != "notification":
            return False
        if view is None:  # a stateless-era client: its view comes with the notification's `_meta`
            probe = Request("", notification.method, notification.params, {})
            if stateless_meta(probe) is None or not runtime.lifecycle.stateless_supported:
                log.debug("ignoring notification %s before initialize", notification.method)
                return True
            view = runtime.lifecycle.stateless_view(probe)
        spec = bound.method.spec
        params = typed_params(spec, notification.params)
        context = ServerNotificationContext(view)
        await runtime.notice_plan(spec, view).run(bound.handler, params, notification.params, context)
        return True


async def notify(ctx: Any, method: CustomMethod[Any, Any], params: Any = None) -> bool:
    """From a server handler: send a custom notification to this request's client. False (nothing
    sent) where the client did not declare the method's extension."""
    session, _, view = parts(ctx)
    if not peer_declares(view.client_capabilities, method.extension):
        log.debug("%s not sent: the client did not declare extension %s", method.method, method.extension)
        return False
    await session.notify(method.method, wire_params(method, params), related=ctx.request_id)
    return True


async def request_client(
    ctx: Any, method: CustomMethod[Any, R], params: Any = None, *, timeout: float | None = None
) -> R:
    """From a server handler: send a custom request to this request's client and return its typed
    result. `NotExpressible` (nothing sent) where the client did not declare the extension, or
    speaks the stateless era (which has no server-to-client requests)."""
    session, _, view = parts(ctx)
    if view.stateless:
        raise NotExpressible(
            f"cannot send {method.method}: MCP {view.version} has no server-to-client requests", version=view.version
        )
    if not peer_declares(view.client_capabilities, method.extension):
        raise NotExpressible(
            f"cannot send {method.method}: the client did not declare extension {method.extension}",
            version=view.version,
        )
    raw = await session.request(method.method, wire_params(method, params), timeout=timeout, related=ctx.request_id)
    return typed_result(method, raw)


async def broadcast(server: Any, method: CustomMethod[Any, Any], params: Any = None) -> int:
    """Send a custom notification to every connected handshake-era client that declared its
    extension; returns how many of this worker's clients got it. Several workers (a shared backend):
    the other workers send it to theirs too; if the bus is unavailable, this worker's clients still
    get it and `BackendUnavailable` is raised after."""
    host = host_for(server)
    message = {"method": method.method, "extension": method.extension, "params": wire_params(method, params)}
    sent = await deliver_broadcast(host, message)
    if host.bus is not None:
        await host.bus.publish(EXTENSION_BROADCAST, message)
    return sent
