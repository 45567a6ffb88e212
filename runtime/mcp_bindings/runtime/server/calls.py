"""The server's call objects, what runs around a message (`rpc.around`) gets: a `ServerCall` for a
request a handler serves, a `NoticeCall` for a notification a handler takes. Both carry the method,
the params typed in the server's version (`ServerCall[CallToolRequestParams]` says so to the type
checker) and as the client sent them, the context and the handler at the end of the chain."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, cast
from urllib.parse import urlsplit, urlunsplit

from typing_extensions import TypeVar

from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.protocol.context import NotificationContext, RequestContext, SessionContext
from mcp_bindings.runtime.protocol.principal import Principal, principal_of

if TYPE_CHECKING:
    from mcp_bindings.runtime.protocol.spec import MethodSpec

__all__ = ["NoticeCall", "Raw", "ServerCall", "recorded_uri"]

P = TypeVar("P", default=Any)  # the params' type in the server's version (`ServerCall[CallToolRequestParams]`)
L = TypeVar("L", default=Any)  # the app's lifespan value (`App(lifespan=...)`)

# The raw params: the client's JSON object as received (None: no params).
Raw = dict[str, object] | None


def recorded_uri(uri: str) -> str:
    """A resource URI as logs and telemetry record it: without its query, fragment and userinfo,
    where a client puts tokens (`file:///x?token=...`, `https://user:secret@host/x`)."""
    try:
        parts = urlsplit(uri)
    except ValueError:  # not a URI urllib can split (e.g. an unclosed IPv6 bracket): up to its query
        return uri.split("#", 1)[0].split("?", 1)[0].rpartition("@")[2]
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


class _LifespanSource:
    """`lifespan_source`, what `ServerCall.lifespan` reads: set where there is one (the app's
    middleware), else left unset: a request pays for what it uses."""

    __slots__ = ("lifespan_source",)
    lifespan_source: Callable[[], object] | None


@dataclass(slots=True, eq=False)
class ServerCall(_LifespanSource, Generic[P, L]):
    """One request a handler serves, as what runs around it sees it. `params` may be replaced (the
    rest of the chain and the handler get the new value): typed in the server's version, like what
    its handler gets. `ServerCall[Params, State]`: `call.lifespan` is typed `State`. `spec` is the
    method in the client's version (`spec.result`: its result type); `handler` the stub's handler."""

    method: str
    params: P
    raw: Raw  # the params as the client sent them (its version's JSON), or None
    context: RequestContext
    handler: Callable[[P, RequestContext], Awaitable[object]]
    spec: MethodSpec | None = None

    @property
    def lifespan(self) -> L:
        """What the app's lifespan yielded (`App(lifespan=...)`), as `ctx.lifespan` reads it in a
        handler; None for an app without one and for a stub-based server (`use_middleware`)."""
        source: Callable[[], object] | None = getattr(self, "lifespan_source", None)
        return cast("L", source() if source is not None else None)

    @property
    def request_id(self) -> str | int:
        return self.context.request_id

    @property
    def client_capabilities(self) -> dict[str, Any]:
        """What the client declared (its `initialize` capabilities, or this request's at 2026-07-28)."""
        return self.context.peer_capabilities

    @property
    def protocol_version(self) -> str:
        """The client's version of the protocol for this request."""
        return self.context.protocol_version

    @property
    def session(self) -> SessionContext:
        """The client: its id (one per connection; one per request at 2026-07-28), `state`, info."""
        return self.context.session

    @property
    def principal(self) -> Principal | None:
        """Who the transport authenticated (HTTP bearer auth), typed (`protocol.principal`); None: nobody."""
        return principal_of(getattr(self.context, "principal", None))

    @property
    def target(self) -> str | None:
        """What the request names: a tool's or prompt's name, a resource's URI (None otherwise)."""
        params = self.params
        name = getattr(params, "name", None)
        if isinstance(name, str):
            return name
        uri = getattr(params, "uri", None)
        return uri if isinstance(uri, str) else None

    @property
    def recorded_target(self) -> str | None:
        """`target` as logs record it: a resource URI without its query, fragment and userinfo."""
        target = self.target
        if target is None or isinstance(getattr(self.params, "name", None), str):
            return target
        return recorded_uri(target)

    @property
    def peer_address(self) -> str | None:
        """The client's IP where the transport has one (HTTP: the socket's peer, or the client a
        proxy named in `forwarded_allow_ips` forwards; None on stdio and in memory)."""
        address = getattr(self.context, "peer_address", None)
        return address if isinstance(address, str) else None

    @property
    def client_key(self) -> str:
        """Who is asking, for per-client state (`RateLimit`'s buckets, `Cache`'s entries), the same
        in both eras: the principal, else the client's IP (HTTP), else the connection (a handshake
        session on stdio or in memory), else "anonymous" (a stateless request on stdio or in memory,
        whose one peer is the process at the other end)."""
        principal = self.principal
        if principal is not None:
            return f"principal:{principal.key}"
        address = self.peer_address
        if address is not None:
            return f"address:{address}"
        if registry.info(self.context.protocol_version).stateless:
            return "anonymous"
        return f"session:{self.context.session.id}"


@dataclass(slots=True, eq=False)
class NoticeCall(Generic[P]):
    """One notification a handler takes, as what runs around it sees it (`params` may be replaced)."""

    method: str
    params: P
    raw: Raw
    context: NotificationContext
    handler: Callable[[P, NotificationContext], Awaitable[object]]

    @property
    def protocol_version(self) -> str:
        return self.context.protocol_version
