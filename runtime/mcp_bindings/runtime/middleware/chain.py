"""Middleware on the dispatch seam: what runs around every request a handler serves, registered on
a server's host (`use_middleware(server, ...)`; the authoring layer's `@app.middleware` /
`App(middleware=[...])`), for stub-based servers and apps alike.

A middleware has the runtime's one around shape (`rpc.around`, the same as the runtime's own
features and the client's hooks): `async def mw(call: Call, call_next: Next) -> result`, where
`Call` is `server.calls.ServerCall` and `Next` the rest of the chain. It sees the method, the
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

Middleware sees requests a handler serves (tools, resources, prompts, completion...), after the
runtime has checked the params and before the tool schema checks and the tasks plug-in; the
runtime's own answers (initialize, ping, logging/setLevel) do not pass through it. Notifications
reach a middleware that names them in its `methods` only (its `call` is then a `NoticeCall`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn, Protocol, cast

from typing_extensions import TypeVar

from mcp_bindings.runtime.protocol import reshape, versions
from mcp_bindings.runtime.rpc.around import names, wants
from mcp_bindings.runtime.rpc.errors import INVALID_PARAMS, McpError, ToolError
from mcp_bindings.runtime.server.calls import ServerCall, recorded_uri
from mcp_bindings.runtime.server.host import host_for
from mcp_bindings.runtime.server.seam import NoticeAround, NoticePlan, Plan, ServerFeature, ServerNext
from mcp_bindings.v2026_07_28 import names as v2026

if TYPE_CHECKING:
    from mcp_bindings.runtime.server.peer import PeerView
    from mcp_bindings.runtime.server.runtime import ServerRuntime
    from mcp_bindings.runtime.server.stubs import ServerStub

__all__ = ["Call", "Middleware", "MiddlewareFeature", "Next", "recorded_uri", "use_middleware"]


log = logging.getLogger("mcp_bindings.runtime.middleware")

# The middleware API is the dispatch seam's around shape under the names it has always had.
Call = ServerCall
# The rest of the chain. What it answers is the handler's result, which differs by method:
# `Next[CallToolResult]` says which for the checker; a bare `Next`, whatever the method answers.
R = TypeVar("R", default=Any)
Next = Callable[[ServerCall], Awaitable[R]]


class Middleware(Protocol):
    """`async def middleware(call, call_next) -> result` (optionally with a `methods` attribute):
    an around of the dispatch seam (`ServerAround`), under the names of the middleware API."""

    def __call__(self, call: Call, call_next: Next, /) -> Awaitable[object]: ...


Deny = Callable[[ToolError], object]


def _denial(plan: Plan) -> Deny:
    """What a `ToolError` raised by middleware becomes: for `tools/call` the tool execution error of
    the server's version (what a tool raising it answers); for any other method a JSON-RPC error."""
    method = plan.spec.method
    if method == v2026.TOOLS_CALL:
        result_type = plan.stub_spec.result

        def tool_error(exc: ToolError) -> object:
            log.info("%s denied by middleware: %s", method, exc)
            denied = {"content": [{"type": "text", "text": str(exc)}], "isError": True}
            return versions.validate(result_type, reshape.shape(denied, result_type))  # the version's result shape

        return tool_error

    def refused(exc: ToolError) -> NoReturn:
        log.info("%s denied by middleware: %s", method, exc)
        raise McpError(INVALID_PARAMS, f"{method} refused: {exc}", {"method": method}) from None

    return refused


@dataclass(frozen=True, slots=True)
class _Step:
    """One middleware on a plan: a `ToolError` it (or one inside it) raises is its denial."""

    middleware: Middleware
    deny: Deny
    lifespan: Callable[[], object] | None

    async def __call__(self, call: ServerCall, next: ServerNext) -> object:
        if self.lifespan is not None:
            call.lifespan_source = self.lifespan
        try:
            return await self.middleware(call, next)
        except ToolError as exc:  # the middleware (or one inside it) denied the request
            return self.deny(exc)


class MiddlewareFeature(ServerFeature):
    """The middleware of one server, on its dispatch seam. `chain` is read when a method's plan is
    built (a callable: the list as it is then)."""

    def __init__(
        self,
        chain: Sequence[Middleware] | Callable[[], Sequence[Middleware]],
        lifespan: Callable[[], object] | None = None,
    ) -> None:
        self._chain = chain
        self._lifespan = lifespan  # what `call.lifespan` reads (the app's lifespan value), or None

    def middleware(self) -> Sequence[Middleware]:
        return self._chain() if callable(self._chain) else self._chain

    def wrap(self, runtime: ServerRuntime, plan: Plan, view: PeerView) -> None:
        method = plan.spec.method
        wanted = [m for m in self.middleware() if wants(m, method)]
        if not wanted:
            return
        deny = _denial(plan)
        for middleware in reversed(wanted):  # each `wrap` is outermost so far: the first ends outermost
            plan.wrap(_Step(middleware, deny, self._lifespan))

    def wrap_notification(self, runtime: ServerRuntime, plan: NoticePlan, view: PeerView) -> None:
        method = plan.spec.method
        for middleware in reversed(self.middleware()):  # only where it names the notification
            if names(middleware, method):
                plan.wrap(cast("NoticeAround", middleware))


def use_middleware(server: ServerStub, *middleware: Middleware) -> MiddlewareFeature:
    """Run `middleware` (outermost first) around the requests `server`'s handlers serve. Call it
    before the server serves: plans already built keep what they had."""
    feature = MiddlewareFeature(list(middleware))
    host_for(server).use(feature)
    return feature
