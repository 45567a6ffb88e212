"""Errors the runtime raises and turns into JSON-RPC error responses."""

from __future__ import annotations

from collections.abc import Generator, Mapping
from contextlib import contextmanager
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# A bound the client reached (too many tasks, streams, ...): implementation-defined, in JSON-RPC's
# range for server errors (-32000..-32099) and clear of the codes MCP defines. HTTP: 429.
LIMIT_REACHED = -32050


class McpError(Exception):
    """An error with a JSON-RPC code: raised by a handler, it becomes the error response; received
    from the peer, it is what the awaiting caller gets."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} (code {code})")
        self.code = code
        self.message = message
        self.data = data

    @classmethod
    def from_error(cls, error: Mapping[str, Any]) -> McpError:
        """The error a JSON-RPC error object (a response's, a failed task's) stands for."""
        return cls(int(error.get("code", INTERNAL_ERROR)), str(error.get("message", "")), error.get("data"))

    def to_error(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class CapabilityError(McpError):
    """The peer did not advertise the capability a method needs; nothing was sent."""

    def __init__(self, method: str, capability: str) -> None:
        super().__init__(METHOD_NOT_FOUND, f"{method} needs the {capability}, which the peer did not advertise")
        self.method = method
        self.capability = capability


class NotExpressible(McpError):
    """A value the peer's protocol version cannot carry (policy/crossing.json says what can be
    degraded; this is what cannot): nothing was sent. Raised to the handler that tried, and an
    internal error on the wire if the handler lets it through."""

    def __init__(self, message: str, *, version: str) -> None:
        super().__init__(INTERNAL_ERROR, message)
        self.version = version


class ToolError(Exception):
    """Raise in a tool to answer with a tool execution error (`isError: true`) whose text is the
    message: what the model sees and can act on. Any other exception from a tool is answered the
    same way with its type and message (and logged with its traceback); an `McpError` becomes a
    JSON-RPC error instead. Raised by middleware (`mcp_bindings.runtime.middleware`) it denies the
    request: a `tools/call` is answered with that tool execution error, any other method with a
    JSON-RPC error (-32602, the message naming the method)."""


class StubDefinitionError(TypeError):
    """A server or client class whose overridden handlers and declared capabilities disagree."""


class ConnectionClosed(Exception):
    """The transport ended while a request was waiting for its response."""


def sole_exception(group: BaseExceptionGroup[BaseException]) -> Exception | None:
    """The one ordinary exception a (possibly nested) group holds; None when it holds several.
    Task groups are the runtime's implementation detail: what failed comes out as itself."""
    leaves: list[BaseException] = []
    pending: list[BaseException] = [group]
    while pending:
        item = pending.pop()
        if isinstance(item, BaseExceptionGroup):
            group_of: BaseExceptionGroup[BaseException] = item  # pyright: ignore[reportUnknownVariableType]
            pending.extend(group_of.exceptions)
        else:
            leaves.append(item)
    return leaves[0] if len(leaves) == 1 and isinstance(leaves[0], Exception) else None


@contextmanager
def ungrouped() -> Generator[None]:
    """`with ungrouped(): async with anyio.create_task_group() ...`: the one ordinary exception the
    task group's exception group holds comes out as itself (a failed handshake, a refusal, an error
    in the caller's block); a group of several stays a group."""
    try:
        yield
    except BaseExceptionGroup as group:
        sole = sole_exception(group)
        if sole is None:
            raise
        raise sole from None


class DeliveryFailed(McpError):
    """A request's exchange with the server failed before its answer arrived (raised by the HTTP
    client transport; never the server's own answer). `stage` says what the server may have done:
    "connect" (no connection: the request was never sent), "refused" (HTTP 503: the server or a
    proxy did not take it) or "cut" (sent, then the connection closed or a gateway answered 502 /
    504 before the answer: it may or may not have run). `retry_after`: the server's `Retry-After`
    in seconds, if it sent one."""

    def __init__(
        self, code: int, message: str, data: Any = None, *, stage: str, retry_after: float | None = None
    ) -> None:
        super().__init__(code, message, data)
        self.stage = stage
        self.retry_after = retry_after

    @property
    def may_have_run(self) -> bool:
        return self.stage == "cut"


class OutcomeUnknown(McpError):
    """A request reached the server, its connection failed before the answer, and repeating it is
    not known to be safe (policy/retry.json): it may or may not have run, and it was not repeated."""

    def __init__(self, method: str, what: str, cause: str, why: str) -> None:
        super().__init__(
            INTERNAL_ERROR,
            f"{what} may or may not have run: {cause}; it was not repeated because {why}. Check the "
            "server's state before calling again, or connect with retry='always' to repeat such requests",
        )
        self.method = method
        self.what = what
