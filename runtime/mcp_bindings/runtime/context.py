"""What a handler gets besides its params: a way to report progress, log, notify and ask the peer."""

from __future__ import annotations

from typing import Any, Protocol


class RequestContext(Protocol):
    """Handed to every request handler. Everything it sends is gated by the negotiated capabilities."""

    @property
    def request_id(self) -> str | int: ...

    @property
    def protocol_version(self) -> str: ...

    @property
    def peer_capabilities(self) -> dict[str, Any]: ...

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
        """Send a notification of this version's tables (gated by its capability)."""
        ...

    async def request(self, method: str, params: Any = None) -> Any:
        """Ask the peer (e.g. `sampling/createMessage`); returns the typed result."""
        ...


class NotificationContext(Protocol):
    """Handed to notification handlers."""

    @property
    def protocol_version(self) -> str: ...

    @property
    def peer_capabilities(self) -> dict[str, Any]: ...
