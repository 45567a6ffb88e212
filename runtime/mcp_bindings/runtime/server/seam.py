"""The dispatch seam: how a feature changes the way methods are served, without an edit of the
dispatch core (`server.runtime`).

A `ServerFeature` is registered on the server host (`host_for(server).use(feature)`, or as one of
the features of an `Extension`, `server.plugins`; the runtime's own features and those of the
extensions of the entry point group are there by default). When `ServerRuntime` builds
the `Plan` of a method (once per version and method; the hot path only reads it), it asks each
feature in order:

- `serve(runtime, method, spec, view)`: a plan for a method no handler of the server serves (a
  custom method, a method the runtime answers itself), or None;
- `wrap(runtime, plan, view)`: for a method a handler serves, what runs around the handler
  (`plan.wrap`), result types the plan writes as they are (`plan.write_as_is`), and what runs after
  the answer (`plan.then`).

So the four features that used to be branches of the dispatch core are plug-ins: custom methods
(`server.extensions`), runtime-kept resource subscriptions (`server.notifications`), tool schema
checks (`server.tool_schemas`) and tasks (`tasks.server.plugin`, an `Extension` discovered through
the entry point group: the core never imports it); user middleware (`middleware.chain`) and MCP
Apps' visibility (`app.ui`) take the same seam.

What runs around a handler has the one shape of `rpc.around`: `async def __call__(call, next)`,
where `call` is a `ServerCall` (a request; `calls`) or a `NoticeCall` (a notification, put on a
`NoticePlan` by `wrap_notification`), and `next(call)` runs the rest and the handler:

    class Timing(ServerFeature):
        def wrap(self, runtime, plan, view):
            plan.wrap(self.timed)

        async def timed(self, call: ServerCall, next: ServerNext) -> object:
            started = time.perf_counter()
            try:
                return await next(call)
            finally:
                log.info("%s took %.1f ms", call.method, (time.perf_counter() - started) * 1e3)

    host_for(server).use(Timing())

A notification the version does not define goes to the features' `notified` in order (custom
notifications: `server.extensions`); the first that takes it answers True.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.protocol.context import NotificationContext, RequestContext
from mcp_bindings.runtime.protocol.spec import MethodSpec
from mcp_bindings.runtime.rpc.around import Around, Next, link
from mcp_bindings.runtime.rpc.jsonrpc import Notification, Request
from mcp_bindings.runtime.rpc.session import Session
from mcp_bindings.runtime.server.calls import NoticeCall, Raw, ServerCall

if TYPE_CHECKING:
    from mcp_bindings.runtime.server.peer import PeerView
    from mcp_bindings.runtime.server.runtime import ServerRuntime

__all__ = [
    "Builtin",
    "NoticeAround",
    "NoticeNext",
    "NoticePlan",
    "Plan",
    "ServerAround",
    "ServerFeature",
    "ServerNext",
    "handle",
]

P = TypeVar("P")  # a handler's params type

# What runs around a request's handler, and the rest of its chain (`rpc.around`'s shape).
ServerNext = Next[ServerCall, object]
ServerAround = Around[ServerCall, object]
# The same around a notification's handler.
NoticeNext = Next[NoticeCall, object]
NoticeAround = Around[NoticeCall, object]
Builtin = Callable[["ServerRuntime", Request, "PeerView", Session], Awaitable[bytes]]


def handle(call: ServerCall) -> Awaitable[object]:
    """The end of every request's chain: the handler, with the call's params and context."""
    return call.handler(call.params, call.context)


def _notice_handle(call: NoticeCall) -> Awaitable[object]:
    return call.handler(call.params, call.context)


class Plan:
    """How one method is served at one version: decided once, then read on every request.

    `validate` types the params (None: untyped); `converts` says the params and result cross
    between the client's version and the stub's; `fast_result` is the result type that can be
    written as is (a result of exactly the stub's type for a handshake client of the stub's own
    version); `builtin` names what the runtime serves itself instead of a handler. What features
    add (`ServerFeature.wrap`): `outer` and `inner`, what runs around the handler (`wrap`);
    `as_is`, more result types written as they are; `after`, what runs once the answer is settled."""

    __slots__ = (
        "after",
        "as_is",
        "builtin",
        "converts",
        "fast_result",
        "inner",
        "input_required",
        "outer",
        "spec",
        "stub_spec",
        "validate",
    )

    def __init__(self, spec: MethodSpec, stub_spec: MethodSpec, converts: bool, builtin: Builtin | None) -> None:
        self.spec = spec
        self.stub_spec = stub_spec
        self.builtin = builtin
        self.converts = converts
        self.input_required = spec.input_required
        self.validate: Callable[..., object] | None = (
            versions.validator(spec.params) if builtin is None and spec.params is not None else None
        )
        direct_result = builtin is None and not converts
        self.fast_result: type[object] | None = spec.result if direct_result and isinstance(spec.result, type) else None
        # What runs around the handler: the outermost around (None: the handler alone) and what it
        # calls next (the rest of the chain, down to the handler); the runtime calls `outer` itself.
        self.outer: ServerAround | None = None
        self.inner: ServerNext = handle
        self.as_is: tuple[type[object], ...] = ()
        self.after: Callable[[ServerRuntime, Raw], None] | None = None

    def wrap(self, around: ServerAround) -> None:
        """Put `around` around what runs the handler now (outermost so far)."""
        if self.outer is not None:
            self.inner = link(self.outer, self.inner)
        self.outer = around

    def enter(
        self, handler: Callable[[P, RequestContext], Awaitable[object]], params: P, raw: Raw, context: RequestContext
    ) -> Awaitable[object]:
        """Run a request through what is around its handler (a plan with `outer`): `params` typed,
        `raw` as received."""
        outer = self.outer
        assert outer is not None
        return outer(ServerCall(self.spec.method, params, raw, context, handler, self.spec), self.inner)

    def write_as_is(self, result_type: type[object]) -> None:
        """Results of exactly `result_type` are written as they are (no crossing, no settling)."""
        self.as_is = (*self.as_is, result_type)

    def then(self, after: Callable[[ServerRuntime, Raw], None]) -> None:
        """Run `after(runtime, raw params)` once a handler's answer is settled; such a plan's results
        always take the settling path (no fast result)."""
        self.after = after
        self.fast_result = None


@dataclass(slots=True, eq=False)
class NoticePlan:
    """How one notification method is taken at one version (a handler of the server takes it):
    built once, then read on every notification. `chain`: what features put around the handler."""

    spec: MethodSpec
    chain: NoticeNext | None = None

    def wrap(self, around: NoticeAround) -> None:
        """Put `around` around what runs the handler now (outermost so far)."""
        self.chain = link(around, self.chain or _notice_handle)

    def run(
        self,
        handler: Callable[[P, NotificationContext], Awaitable[object]],
        params: P,
        raw: Raw,
        context: NotificationContext,
    ) -> Awaitable[object]:
        """Hand a notification to `handler`, through `chain` where features put one."""
        chain = self.chain
        if chain is None:
            return handler(params, context)
        return chain(NoticeCall(self.spec.method, params, raw, context, handler))


class ServerFeature:
    """A feature on the dispatch seam; override what it needs (both default to doing nothing)."""

    def serve(self, runtime: ServerRuntime, method: str, spec: MethodSpec | None, view: PeerView) -> Plan | None:
        """A plan for `method` where no handler of the server serves it (`spec`: the client's
        version's, None for a method that version does not define); None: not this feature's."""
        return None

    def wrap(self, runtime: ServerRuntime, plan: Plan, view: PeerView) -> None:
        """Adjust the plan of a method a handler serves, once, when it is built."""
        return None

    def wrap_notification(self, runtime: ServerRuntime, plan: NoticePlan, view: PeerView) -> None:
        """Adjust the plan of a notification a handler takes, once, when it is built."""
        return None

    async def notified(self, runtime: ServerRuntime, notification: Notification, view: PeerView | None) -> bool:
        """Take a notification the client's version does not define (`view` None: no handshake
        yet); False: not this feature's (the next one is asked; nobody's is dropped)."""
        return False

    async def listen_filters(
        self, view: PeerView, session: Session, wanted: Mapping[str, object]
    ) -> dict[str, tuple[str, object]]:
        """Filters of a `subscriptions/listen` request this feature agrees to: filter key ->
        (the notification it opts in to, the agreed value, also what a listed value matches)."""
        return {}
