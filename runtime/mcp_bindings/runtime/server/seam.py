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
checks (`server.tool_schemas`) and tasks (`tasks.server.plugin`, an `Extension` discovered through the
entry point group: the core never imports it). User middleware will take the same seam.

    class Timing(ServerFeature):
        def wrap(self, runtime, plan, view):
            def around(inner):
                async def timed(handler, params, context, raw):
                    started = time.perf_counter()
                    try:
                        return await (inner or direct)(handler, params, context, raw)
                    finally:
                        log.info("%s took %.1f ms", plan.spec.method, (time.perf_counter() - started) * 1e3)
                return timed
            plan.wrap(around)

    host_for(server).use(Timing())
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.protocol.spec import MethodSpec
from mcp_bindings.runtime.rpc.jsonrpc import Request
from mcp_bindings.runtime.rpc.session import Session

if TYPE_CHECKING:
    from mcp_bindings.runtime.server.peer import PeerView
    from mcp_bindings.runtime.server.runtime import ServerRuntime

__all__ = ["Around", "Builtin", "Handler", "Plan", "ServerFeature", "around", "direct"]

Handler = Callable[[Any, Any], Awaitable[Any]]  # a stub handler: (typed params, context) -> result
# What runs around a handler: (handler, typed params, context, raw params) -> result.
Around = Callable[[Handler, Any, Any, Any], Awaitable[Any]]
Builtin = Callable[["ServerRuntime", Request, "PeerView", Session], Awaitable[bytes]]


async def direct(handler: Handler, params: Any, context: Any, raw: Any) -> Any:
    """The innermost `Around`: the handler itself."""
    return await handler(params, context)


def around(outer: Around, inner: Around | None) -> Around:
    """`outer` around `inner`: the handler `outer` calls runs `inner` (with the same raw params)."""
    if inner is None:
        return outer

    def chained(handler: Handler, params: Any, context: Any, raw: Any) -> Awaitable[Any]:
        return outer(lambda typed, ctx: inner(handler, typed, ctx, raw), params, context, raw)

    return chained


class Plan:
    """How one method is served at one version: decided once, then read on every request.

    `validate` types the params (None: untyped); `converts` says the params and result cross
    between the client's version and the stub's; `fast_result` is the result type that can be
    written as is (a result of exactly the stub's type for a handshake client of the stub's own
    version); `builtin` names what the runtime serves itself instead of a handler. What features
    add (`ServerFeature.wrap`): `around`, the chain around the handler; `as_is`, more result types
    written as they are; `after`, what runs once the answer is settled."""

    __slots__ = (
        "after",
        "around",
        "as_is",
        "builtin",
        "converts",
        "fast_result",
        "input_required",
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
        self.validate: Any = versions.validator(spec.params) if builtin is None and spec.params is not None else None
        direct_result = builtin is None and not converts
        self.fast_result: Any = spec.result if direct_result and isinstance(spec.result, type) else None
        self.around: Around | None = None
        self.as_is: tuple[type[Any], ...] = ()
        self.after: Callable[[ServerRuntime, Any], None] | None = None

    def wrap(self, outer: Callable[[Around | None], Around]) -> None:
        """Put `outer(inner)` around what runs the handler now (`inner` None: the handler alone)."""
        self.around = outer(self.around)

    def write_as_is(self, result_type: type[Any]) -> None:
        """Results of exactly `result_type` are written as they are (no crossing, no settling)."""
        self.as_is = (*self.as_is, result_type)

    def then(self, after: Callable[[ServerRuntime, Any], None]) -> None:
        """Run `after(runtime, raw params)` once a handler's answer is settled; such a plan's results
        always take the settling path (no fast result)."""
        self.after = after
        self.fast_result = None


class ServerFeature:
    """A feature on the dispatch seam; override what it needs (both default to doing nothing)."""

    def serve(self, runtime: ServerRuntime, method: str, spec: MethodSpec | None, view: PeerView) -> Plan | None:
        """A plan for `method` where no handler of the server serves it (`spec`: the client's
        version's, None for a method that version does not define); None: not this feature's."""
        return None

    def wrap(self, runtime: ServerRuntime, plan: Plan, view: PeerView) -> None:
        """Adjust the plan of a method a handler serves, once, when it is built."""
        return None

    async def listen_filters(
        self, view: PeerView, session: Session, wanted: Mapping[str, Any]
    ) -> dict[str, tuple[str, Any]]:
        """Filters of a `subscriptions/listen` request this feature agrees to: filter key ->
        (the notification it opts in to, the agreed value, also what a listed value matches)."""
        return {}
