"""Middleware on the dispatch seam: functions around every request a handler serves, registered on
a server's host (`use_middleware(server, ...)`; the authoring layer's `@app.middleware` /
`App(middleware=[...])`), for stub-based servers and apps alike.

A middleware is `async def mw(call: Call, call_next: Next) -> result`: it sees the method, the
params (typed in the server's version, and as the client sent them; `Call[Params]` types them for
the checker), the session, the principal, the client's capabilities, the protocol version and the
app's lifespan value (`Call[Params, State]`); it may answer itself (short-circuit: return a result
of the server's version, or raise `McpError`), deny the request (`raise ToolError("why")`: a
`tools/call` is answered with a tool execution error, `isError: true`, whose text is the message;
another method with a JSON-RPC error -32602 naming it), change `call.params` before `await
call_next(call)`, or look at or replace what that returns. One that has a `methods` attribute (a
collection of method names) runs for those methods only. The chain of a method is built once, with
its plan (per protocol version and method): a method no middleware wants, and a server without
middleware, run as before.

Middleware sees requests a handler serves (tools, resources, prompts, completion, custom
methods...), after the runtime has checked the params and before the tool schema checks and the
tasks plug-in; the runtime's own answers (initialize, ping, logging/setLevel) do not pass through it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any, Generic, NoReturn, Protocol, cast
from urllib.parse import urlsplit, urlunsplit

from typing_extensions import TypeVar

from mcp_bindings.runtime.protocol import registry, reshape, versions
from mcp_bindings.runtime.rpc.errors import INVALID_PARAMS, McpError, ToolError
from mcp_bindings.runtime.server.host import host_for
from mcp_bindings.runtime.server.seam import Around, Handler, Plan, ServerFeature, direct
from mcp_bindings.v2026_07_28 import names as v2026

if TYPE_CHECKING:
    from mcp_bindings.runtime.protocol.context import RequestContext, SessionContext
    from mcp_bindings.runtime.server.peer import PeerView
    from mcp_bindings.runtime.server.runtime import ServerRuntime
    from mcp_bindings.runtime.server.stubs import ServerStub

__all__ = ["Call", "Middleware", "MiddlewareFeature", "Next", "recorded_uri", "use_middleware"]


def recorded_uri(uri: str) -> str:
    """A resource URI as logs and telemetry record it: without its query, fragment and userinfo,
    where a client puts tokens (`file:///x?token=...`, `https://user:secret@host/x`)."""
    try:
        parts = urlsplit(uri)
    except ValueError:  # not a URI urllib can split (e.g. an unclosed IPv6 bracket): up to its query
        return uri.split("#", 1)[0].split("?", 1)[0].rpartition("@")[2]
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


log = logging.getLogger("mcp_bindings.runtime.middleware")

P = TypeVar("P", default=Any)  # the params' type in the server's version (`Call[CallToolRequestParams]`)
L = TypeVar("L", default=Any)  # the app's lifespan value (`App(lifespan=...)`)


class Call(Generic[P, L]):
    """One request as middleware sees it. `params` may be replaced (the rest of the chain and the
    handler get the new value): typed in the server's version, like what its handler gets
    (`Call[v2025_11_25.models.CallToolRequestParams]` says so to the type checker, for a middleware
    that runs for `tools/call` only). `Call[Params, State]`: `call.lifespan` is typed `State`."""

    __slots__ = ("_handler", "_lifespan", "context", "method", "params", "raw")

    def __init__(
        self,
        method: str,
        params: P,
        raw: Any,
        context: RequestContext,
        handler: Handler,
        lifespan: Callable[[], Any] | None = None,
    ) -> None:
        self.method = method
        self.params = params
        self.raw = raw  # the params as the client sent them (its version's JSON), or None
        self.context = context
        self._handler = handler
        self._lifespan = lifespan

    @property
    def lifespan(self) -> L:
        """What the app's lifespan yielded (`App(lifespan=...)`), as `ctx.lifespan` reads it in a
        handler; None for an app without one and for a stub-based server (`use_middleware`)."""
        return cast("L", self._lifespan() if self._lifespan is not None else None)

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
    def principal(self) -> str | None:
        """Who the transport authenticated (HTTP bearer auth); None: nobody."""
        principal = getattr(self.context, "principal", None)
        return principal if isinstance(principal, str) else None

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
            return f"principal:{principal}"
        address = self.peer_address
        if address is not None:
            return f"address:{address}"
        if registry.info(self.context.protocol_version).stateless:
            return "anonymous"
        return f"session:{self.context.session.id}"


Next = Callable[[Call], Awaitable[Any]]


class Middleware(Protocol):
    """`async def middleware(call, call_next) -> result` (optionally with a `methods` attribute)."""

    def __call__(self, call: Call, call_next: Next, /) -> Awaitable[Any]: ...


def _wants(middleware: Middleware, method: str) -> bool:
    methods: Collection[str] | None = getattr(middleware, "methods", None)
    return methods is None or method in methods


Deny = Callable[[ToolError], Any]


def _denial(plan: Plan) -> Deny:
    """What a `ToolError` raised by middleware becomes: for `tools/call` the tool execution error of
    the server's version (what a tool raising it answers); for any other method a JSON-RPC error."""
    method = plan.spec.method
    if method == v2026.TOOLS_CALL:
        result_type = plan.stub_spec.result

        def tool_error(exc: ToolError) -> Any:
            log.info("%s denied by middleware: %s", method, exc)
            denied = {"content": [{"type": "text", "text": str(exc)}], "isError": True}
            return versions.validate(result_type, reshape.shape(denied, result_type))  # the version's result shape

        return tool_error

    def refused(exc: ToolError) -> NoReturn:
        log.info("%s denied by middleware: %s", method, exc)
        raise McpError(INVALID_PARAMS, f"{method} refused: {exc}", {"method": method}) from None

    return refused


def _link(middleware: Middleware, call_next: Next, deny: Deny) -> Next:
    async def step(call: Call) -> Any:
        try:
            return await middleware(call, call_next)
        except ToolError as exc:  # the middleware (or one inside it) denied the request
            return deny(exc)

    return step


class MiddlewareFeature(ServerFeature):
    """The middleware of one server, on its dispatch seam. `chain` is read when a method's plan is
    built (a callable: the list as it is then)."""

    def __init__(
        self,
        chain: Sequence[Middleware] | Callable[[], Sequence[Middleware]],
        lifespan: Callable[[], Any] | None = None,
    ) -> None:
        self._chain = chain
        self._lifespan = lifespan  # what `call.lifespan` reads (the app's lifespan value), or None

    def middleware(self) -> Sequence[Middleware]:
        return self._chain() if callable(self._chain) else self._chain

    def wrap(self, runtime: ServerRuntime, plan: Plan, view: PeerView) -> None:
        method = plan.spec.method
        wanted = [m for m in self.middleware() if _wants(m, method)]
        if not wanted:
            return
        deny = _denial(plan)
        lifespan = self._lifespan

        def outer(inner: Around | None) -> Around:
            run = inner or direct

            async def end(call: Call) -> Any:
                return await run(call._handler, call.params, call.context, call.raw)  # pyright: ignore[reportPrivateUsage]

            entry: Next = end
            for middleware in reversed(wanted):
                entry = _link(middleware, entry, deny)

            def around(handler: Handler, params: Any, context: Any, raw: Any) -> Awaitable[Any]:
                return entry(Call(method, params, raw, context, handler, lifespan))

            return around

        plan.wrap(outer)


def use_middleware(server: ServerStub, *middleware: Middleware) -> MiddlewareFeature:
    """Run `middleware` (outermost first) around the requests `server`'s handlers serve. Call it
    before the server serves: plans already built keep what they had."""
    feature = MiddlewareFeature(list(middleware))
    host_for(server).use(feature)
    return feature
