"""What a server's handlers get besides their params (the implementations of `context.RequestContext`,
`context.SessionContext` and `context.NotificationContext`). Everything a request handler sends
carries the request's id as its `related` id, so a transport with several channels sends it where
the client expects it.

Who gets a notification: list changes and resource updates go to every client allowed to get them
(resource updates only to clients subscribed to that resource); anything else a handler sends goes
to the client of that request alone, and only if its version and declared capabilities allow it."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.protocol.spec import ProtocolTables
from mcp_bindings.runtime.rpc import logs
from mcp_bindings.runtime.rpc.calls import PROGRESS_TOKEN
from mcp_bindings.runtime.rpc.errors import NotExpressible
from mcp_bindings.runtime.rpc.jsonrpc import Request, RequestId, json_object
from mcp_bindings.runtime.rpc.session import Session
from mcp_bindings.runtime.server.bridge import outgoing_notification, outgoing_request
from mcp_bindings.runtime.server.notifications import broadcast, broadcasts, may_send
from mcp_bindings.runtime.server.peer import LOG_LEVELS, PeerView
from mcp_bindings.v2026_07_28 import names as v2026

if TYPE_CHECKING:
    from mcp_bindings.runtime.server.host import ServerHost
    from mcp_bindings.runtime.server.stubs import ServerStub

log = logs.logger("server")

PROGRESS = v2026.NOTIFICATIONS_PROGRESS
LOG_MESSAGE = v2026.NOTIFICATIONS_MESSAGE


@dataclass(slots=True, eq=False, repr=False)
class ServerNotificationContext:
    """The context of one notification handler (see `context.NotificationContext`): the client's
    version and capabilities, from its view. The request context and the peer session build on it."""

    _view: PeerView

    @property
    def protocol_version(self) -> str:
        return self._view.version

    @property
    def peer_capabilities(self) -> dict[str, Any]:
        return self._view.client_capabilities


@dataclass(slots=True, eq=False, repr=False)
class PeerSession(ServerNotificationContext):
    """The client a handler serves (see `context.SessionContext`): one per connection in the
    handshake era, one per request in the stateless era (which has no sessions)."""

    _session: Session
    _stub: ProtocolTables  # the version the server's handlers speak
    _related: RequestId | None = None  # stateless: the request whose response stream is the only channel
    id: str = field(init=False, default_factory=lambda: os.urandom(8).hex())  # secrets.token_hex(8), without its import
    # the handlers' own per-client state; the runtime never reads it
    state: dict[str, Any] = field(init=False, default_factory=dict[str, Any])
    client_capabilities = ServerNotificationContext.peer_capabilities

    @property
    def client_info(self) -> dict[str, Any]:
        return self._view.client_info

    def allows(self, method: str) -> bool:
        """Whether this client may get `method`: its version has the notification or request, the
        server advertises what it needs, and the client declared what it needs (e.g. `elicitation.url`).
        A stateless-era client gets no requests (its handler returns an InputRequiredResult)."""
        request = self._view.protocol.server_requests.get(method)
        if request is not None:
            needed = request.needed_capabilities(None)
            return not self._view.stateless and all(c.present_in(self._view.client_capabilities) for c in needed)
        if not may_send(self._view, method):
            return False
        gate = self._view.protocol.server_notifications[method].gate
        return gate is None or gate.side != "client" or gate.present_in(self._view.client_capabilities)

    async def notify(self, method: str, params: Any = None) -> bool:
        """Send a notification to this client only; False (nothing sent) where it may not get it."""
        return await self.deliver(method, params, self._related)

    async def deliver(self, method: str, params: Any, related: RequestId | None) -> bool:
        if not self.allows(method):
            log.debug(
                "%s not sent: MCP %s or this client's capabilities do not allow it", method, self.protocol_version
            )
            return False
        data = outgoing_notification(self._stub, method, params, self._view)
        await self._session.notify(method, data, related=related)
        return True


@dataclass(slots=True, eq=False, repr=False)
class ServerRequestContext(ServerNotificationContext):
    """The context of one request handler (see `context.RequestContext`)."""

    _server: ServerStub
    _host: ServerHost
    _session: Session
    _request: Request
    _peer: PeerSession | None = None  # the connection's (handshake era); made on first use for a stateless request
    _last_progress: float | None = field(init=False, default=None)

    @property
    def session(self) -> PeerSession:
        """The client this request comes from: identity, version, capabilities, per-client state."""
        if self._peer is None:
            self._peer = PeerSession(self._view, self._session, self._server.protocol, self._request.id)
        return self._peer

    @property
    def _progress_token(self) -> Any:
        """The request's `_meta.progressToken`, read when a handler reports progress."""
        return json_object(json_object(self._request.params).get("_meta")).get(PROGRESS_TOKEN)

    @property
    def request_id(self) -> str | int:
        return self._request.id

    @property
    def principal(self) -> str | None:
        """Who the transport authenticated (HTTP bearer auth: `AccessToken.principal`); None: nobody."""
        return self._session.principal

    @property
    def peer_address(self) -> str | None:
        """The client's IP where the transport has one (HTTP; None on stdio and in memory)."""
        return self._session.peer_address

    @property
    def server(self) -> ServerStub:
        return self._server

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        token = self._progress_token
        if token is None:
            return
        if self._last_progress is not None and progress <= self._last_progress:
            raise ValueError(f"progress must increase: {progress} after {self._last_progress}")
        self._last_progress = progress
        params: dict[str, Any] = {PROGRESS_TOKEN: token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None and versions.defines(
            self._view.protocol.server_notifications[PROGRESS].params, "message"
        ):
            params["message"] = message  # not before 2025-03-26
        await self._send(PROGRESS, params)

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
        await self._send(LOG_MESSAGE, params)

    async def _send(self, method: str, params: dict[str, Any]) -> None:
        """A progress or log notification of this request, on its response stream (a task's context
        adds the task's `_meta` and sends it where the task's result is awaited)."""
        await self._session.notify(method, params, related=self._request.id)

    async def close_sse_stream(self) -> None:
        """End the HTTP response stream this request is answered on, now, without ending the request
        (SSE polling, SEP-1699): what the handler sends afterwards, its result included, waits for the
        client to reconnect with `Last-Event-ID`. A no-op where the transport cannot resume streams
        (stdio, stateless requests, JSON responses)."""
        transport = self._session.transport
        if transport.features.closes_streams:
            await transport.close_stream(self._request.id)

    async def notify(self, method: str, params: Any = None) -> None:
        """List changes and resource updates: to every client allowed to get them (resource updates
        to the clients subscribed to that resource). Anything else: to this request's client only."""
        if method in broadcasts():
            await broadcast(self._host, method, params)
        else:
            await self.session.deliver(method, params, self._request.id)

    async def request(self, method: str, params: Any = None, *, timeout: float | None = None, raw: bool = False) -> Any:
        """Ask the client (sampling, elicitation, roots) in the stub's version's terms: the params
        cross into the client's version (the generated crossing tables), the answer crosses back as the
        stub's result model (`raw`: its wire JSON). What the client's version or declared
        capabilities cannot take raises `NotExpressible` before anything is sent."""
        view = self._view
        if view.stateless:  # NotExpressible: an McpError (-32603) a handler can catch with the other refusals
            raise NotExpressible(
                f"{method}: a stateless ({view.version}) request cannot send requests to the client; "
                "return an InputRequiredResult instead",
                version=view.version,
            )
        asked = outgoing_request(self._server.protocol, method, params, view)
        answer = await self._session.request(method, asked.data, timeout=timeout, related=self._request.id)
        result = asked.answer(answer)
        return versions.dump(result) if raw else result


def parts(ctx: Any) -> tuple[Session, PeerSession | None, PeerView]:
    """The session, connection and view a server request context serves (a task's context too), for
    the runtime's modules that send on a handler's behalf (`server.extensions`, `tasks.server`)."""
    return ctx._session, ctx._peer, ctx._view  # noqa: SLF001 - the runtime's own context type
