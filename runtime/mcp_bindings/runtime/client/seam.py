"""The client's call seam: what wraps a typed request on its way out and its answer on the way back.

A hook runs around the sending of a method's requests, in the runtime's one around shape
(`rpc.around`, the same as the server's features and middleware): `async def hook(call, next)`,
where `call` is an `OutgoingCall` and `next(call)` sends it through the rest of the chain.
`ClientRuntime.call` checks and prepares the params (capabilities, the stateless `_meta`), then runs
the method's chain: the hooks, outermost first, around the terminal send (the session's request,
with the stateless era's input rounds and the retries of `client.retry`). A hook may act before the
send (refuse, change the params), instead of it (answer itself), or after it (look at or replace
the answer):

    class Timing:
        def __init__(self) -> None:
            self.seconds: dict[str, float] = {}

        async def __call__(self, call: OutgoingCall, next: Send) -> object:
            started = time.perf_counter()
            try:
                return await next(call)
            finally:
                self.seconds[call.method] = time.perf_counter() - started

    async with connect(transport, Client, hooks=[Timing()]) as client: ...

The chain is built once per method (per negotiated version), when the method is first called, so a
call pays only for the hooks of its method: a hook with a `methods` attribute (method names) runs
for those only. A hook that decides per method from the method's spec is a `CallHook`: its
`wrap(spec, send)` returns what sends `spec.method`'s requests, `send` itself when it has nothing to
do for them (most of the runtime's own hooks below; the output checks and the tool catalog are
arounds of the one method each needs).

The user's hooks (`ClientOptions.hooks`, `ClientRuntime.add_hook`) are outermost and see the typed
result (or a `Finished` handle); the runtime's own hooks, inside them, are in
`ClientRuntime.builtin_hooks` (outermost first):

* `task_handle.TaskHandles`: a request with params `task` (2025-11-25) becomes a `TaskHandle`;
* `typed`: the decoded result validated against the negotiated version's model and crossed to the
  stub's (passes `Finished` answers through);
* `tasks_ext.ToolTasks`: a stateless `tools/call` answered with a task becomes a `ToolTask`;
* `headers.HeaderMirroring`: refuses a tool whose `x-mcp-header` annotations are invalid; drops such
  tools from `tools/list` results (the stateless HTTP wire);
* `tool_checks.ClientToolChecks`: a `tools/call` result's `structuredContent` against the tool's
  outputSchema;
* `tool_catalog.ClientToolCatalog`: fills the catalog from `tools/list` results;
* `legacy.LegacyCheck`: a pinned stateless HTTP session whose server turns out legacy raises one
  `LegacyServerError` (and sends nothing more).

Inside `typed`, what a hook gets back from `send` is the decoded JSON result; outside it, the typed
one. Errors travel as exceptions (`McpError` and its kinds).
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from mcp_bindings.runtime.protocol.spec import MethodSpec
from mcp_bindings.runtime.rpc.around import Around, Next, chain, link, names, wants
from mcp_bindings.runtime.rpc.calls import ProgressCallback

if TYPE_CHECKING:
    from mcp_bindings.runtime.client.runtime import ClientRuntime

__all__ = [
    "CallHook",
    "ClientAround",
    "Finished",
    "Hook",
    "OutgoingCall",
    "Send",
    "compose",
    "compose_notification",
    "current_progress",
]

# The progress callback for requests sent by the current task (see `ClientRuntime.progress`).
_on_progress: contextvars.ContextVar[ProgressCallback | None] = contextvars.ContextVar("mcp_on_progress", default=None)


def current_progress() -> ProgressCallback | None:
    """The progress callback of the typed client's requests from this task (`ClientRuntime.progress`)."""
    return _on_progress.get()


@dataclass(slots=True)
class OutgoingCall:
    """One typed request on its way out. Treat it as read-only: a hook that changes it passes on
    `dataclasses.replace(call, params=...)` (not frozen: one is made per call, and a frozen
    dataclass costs four times as much to make)."""

    runtime: ClientRuntime
    stub_spec: MethodSpec  # the method as the typed client's stub declares it
    spec: MethodSpec  # the method in the negotiated version (what is sent)
    params: Any  # the params as sent: decoded JSON (a dict, or None); stateless: `_meta` included
    timeout: float | None  # seconds, per message (None: no limit)
    progress: ProgressCallback | None = None  # where the server's notifications/progress go

    @property
    def method(self) -> str:
        return self.spec.method


# Sends one call and returns its answer (decoded JSON inside the `typed` hook, the typed result outside).
Send = Next[OutgoingCall, object]
# What runs around a call: `async def hook(call, next)` (`rpc.around`).
ClientAround = Around[OutgoingCall, object]


@runtime_checkable
class CallHook(Protocol):
    """Wraps the requests of each method the client sends, chosen per method (see the module's docstring)."""

    def wrap(self, spec: MethodSpec, send: Send) -> Send:
        """`send` wrapped for requests of `spec.method` (in the negotiated version); `send` itself
        when this hook has nothing to do for them. Called once per method and version."""
        ...


class Finished:
    """Base of an answer a hook gives instead of the method's result (a task handle): the `typed`
    hook passes it through as it is; `await answer.result()` is the method's typed result."""

    __slots__ = ()

    async def result(self) -> object:
        raise NotImplementedError


# A hook: an around of every call (of its `methods`), or a `CallHook` choosing per method.
Hook = ClientAround | CallHook


def compose(hooks: Iterable[Hook], spec: MethodSpec, send: Send) -> Send:
    """The chain of `hooks` (outermost first) around `send`, for `spec`'s requests."""
    for hook in reversed(list(hooks)):
        if isinstance(hook, CallHook):
            send = hook.wrap(spec, send)
        elif wants(hook, spec.method):
            send = link(hook, send)
    return send


def compose_notification(hooks: Iterable[Hook], spec: MethodSpec, send: Send) -> Send:
    """The chain of a notification the client sends: the arounds among `hooks` that name it in their
    `methods` (outermost first) around `send`; a `CallHook` wraps requests only."""
    return chain([h for h in hooks if not isinstance(h, CallHook) and names(h, spec.method)], send)
