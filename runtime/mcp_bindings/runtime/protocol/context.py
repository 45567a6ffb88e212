"""What a handler gets besides its params: a way to report progress, log, notify and ask the peer."""

from __future__ import annotations

from typing import Any, Protocol


class SessionContext(Protocol):
    """The client a handler serves: one per connection in the handshake era (2024-11-05 ..
    2025-11-25), one per request in the stateless era (2026-07-28 has no sessions)."""

    @property
    def id(self) -> str:
        """A random identifier of this client's connection (not the HTTP Mcp-Session-Id)."""
        ...

    @property
    def state(self) -> dict[str, Any]:
        """The handlers' own per-client state (kept by the runtime, never read by it)."""
        ...

    @property
    def protocol_version(self) -> str: ...

    @property
    def client_capabilities(self) -> dict[str, Any]: ...

    @property
    def client_info(self) -> dict[str, Any]: ...

    def allows(self, method: str) -> bool:
        """Whether this client may get the server notification or request `method` (its version
        and declared capabilities; for a request, whether `request` can send it at all)."""
        ...

    async def notify(self, method: str, params: Any = None) -> bool:
        """Send a notification to this client only (e.g. `notifications/elicitation/complete`);
        False, with nothing sent, where its version or capabilities do not allow it."""
        ...


class NotificationContext(Protocol):
    """Handed to notification handlers."""

    @property
    def protocol_version(self) -> str: ...

    @property
    def peer_capabilities(self) -> dict[str, Any]: ...


class RequestContext(NotificationContext, Protocol):
    """Handed to every request handler. Everything it sends is gated by the negotiated capabilities."""

    @property
    def request_id(self) -> str | int: ...

    @property
    def session(self) -> SessionContext:
        """The client this request comes from."""
        ...

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Send `notifications/progress` if the request carried a progress token (else a no-op)."""
        ...

    def allows_log(self, level: str) -> bool:
        """Whether `log(level, ...)` would reach the client (capability and requested level)."""
        ...

    async def close_sse_stream(self) -> None:
        """HTTP: end this request's SSE stream now; the client resumes it with Last-Event-ID (no-op elsewhere)."""
        ...

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send `notifications/message` if the session's log level lets `level` through."""
        ...

    async def notify(self, method: str, params: Any = None) -> None:
        """List changes and resource updates go to every client allowed to get them (updates only to
        clients subscribed to the resource); any other notification to this request's client only."""
        ...

    async def request(self, method: str, params: Any = None) -> Any:
        """Ask the peer (e.g. `sampling/createMessage`) in the handler's own version's terms; returns
        that version's typed result. A server's request crosses into the client's version
        (the generated crossing tables); what that version or the client's declared capabilities
        cannot take raises `errors.NotExpressible` before anything is sent (check with
        `session.allows(method)`)."""
        ...
