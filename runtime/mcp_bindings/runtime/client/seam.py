"""The client's call seam: what wraps a typed request on its way out and its answer on the way back.

A `CallHook` wraps the sending of one method's requests. `ClientRuntime.call` checks and prepares
the params (capabilities, the stateless `_meta`), then runs the method's chain: the hooks, outermost
first, around the terminal send (the session's request, with the stateless era's input rounds and
the retries of `client.retry`). A hook may act before the send (refuse, change the params), instead
of it (answer itself), or after it (look at or replace the answer):

    class Timing:
        def __init__(self) -> None:
            self.seconds: dict[str, float] = {}

        def wrap(self, spec: MethodSpec, send: Send) -> Send:
            async def timed(call: OutgoingCall) -> Any:
                started = time.perf_counter()
                try:
                    return await send(call)
                finally:
                    self.seconds[call.method] = time.perf_counter() - started

            return timed

    async with connect(transport, Client, hooks=[Timing()]) as client: ...

`wrap` runs once per method (per negotiated version), when the method is first called; the chain it
builds is kept, so a call pays only for the hooks that wrap its method: a hook that has nothing to
do for `spec` returns `send` itself. The user's hooks (`ClientOptions.hooks`, `ClientRuntime.add_hook`)
are outermost and see the typed result (or a `Finished` handle); the runtime's own hooks, inside
them, are in `ClientRuntime.builtin_hooks` (outermost first):

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
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from mcp_bindings.runtime.protocol.spec import MethodSpec
from mcp_bindings.runtime.rpc.calls import ProgressCallback

if TYPE_CHECKING:
    from mcp_bindings.runtime.client.runtime import ClientRuntime

__all__ = ["CallHook", "Finished", "OutgoingCall", "Send", "compose", "current_progress"]

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
Send = Callable[[OutgoingCall], Awaitable[Any]]


class CallHook(Protocol):
    """Wraps the requests of each method the client sends (see the module's docstring)."""

    def wrap(self, spec: MethodSpec, send: Send) -> Send:
        """`send` wrapped for requests of `spec.method` (in the negotiated version); `send` itself
        when this hook has nothing to do for them. Called once per method and version."""
        ...


class Finished:
    """Base of an answer a hook gives instead of the method's result (a task handle): the `typed`
    hook passes it through as it is; `await answer.result()` is the method's typed result."""

    __slots__ = ()

    async def result(self) -> Any:
        raise NotImplementedError


def compose(hooks: Iterable[CallHook], spec: MethodSpec, send: Send) -> Send:
    """The chain of `hooks` (outermost first) around `send`, for `spec`'s requests."""
    for hook in reversed(list(hooks)):
        send = hook.wrap(spec, send)
    return send
