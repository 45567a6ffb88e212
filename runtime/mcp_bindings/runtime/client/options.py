"""The options of a client connection, one set for every `connect_*` (`client.connect`,
`client.http.connect_http` / `connect_sse`, `stdio.connect_stdio`, `memory.connect_in_memory`):
a `ClientOptions`, or the same names as keyword arguments (`ClientArgs`), which build one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypedDict

from mcp_bindings.runtime.client.retry import RetryMode, check_mode

if TYPE_CHECKING:
    from mcp_bindings.runtime.client.seam import Hook
    from mcp_bindings.runtime.client.stub import ClientHandlerStub

__all__ = ["ClientArgs", "ClientOptions", "SessionArgs"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientOptions:
    """How a client connects and calls.

    `handlers`: what answers the server's requests and notifications (and declares the client's
    capabilities). `protocol_version`: None picks the client stub's version; "auto" probes with
    `server/discover` for at most `probe_timeout` seconds and falls back to `initialize`.
    `request_timeout`: seconds per request (None: no limit; also bounds the handshake, else 60 s).
    `lenient=True` accepts results and server requests that only a newer version's models accept
    and hands them over as that version's types (see `lenient.py`); the default refuses them.
    `retry`: when a request whose connection failed before its answer is sent again (`client.retry`):
    "safe" (if it never reached the server, or it is safe to repeat per policy/retry.json),
    "always" (also what may have run), "never". `hooks`: the user's call hooks (`client.seam`),
    outermost first."""

    handlers: ClientHandlerStub | None = None
    protocol_version: str | None = None
    client_info: dict[str, Any] | None = None
    request_timeout: float | None = None
    probe_timeout: float = 10.0
    lenient: bool = False
    retry: RetryMode = "safe"
    hooks: Sequence[Hook] = ()

    def __post_init__(self) -> None:
        check_mode(self.retry)

    @classmethod
    def of(cls, options: ClientOptions | None, args: ClientArgs) -> ClientOptions:
        """`options` (default: the defaults) with the keyword arguments `args` on top."""
        base = options if options is not None else cls()
        return replace(base, **args) if args else base


class SessionArgs(TypedDict, total=False):
    """`ClientArgs` but `protocol_version`: what a caller naming the version otherwise (`App.test_client`,
    whose first argument it is) takes as keyword arguments."""

    handlers: ClientHandlerStub | None
    client_info: dict[str, Any] | None
    request_timeout: float | None
    probe_timeout: float
    lenient: bool
    retry: RetryMode
    hooks: Sequence[Hook]


class ClientArgs(SessionArgs, total=False):
    """`ClientOptions` as keyword arguments of the `connect_*` functions (same names, same meaning)."""

    protocol_version: str | None
