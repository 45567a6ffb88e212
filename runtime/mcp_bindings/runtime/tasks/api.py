"""What a server's handlers call to run work as a task, in either era: `run_as_task` and the
`as_task` decorator. A handshake-era request (2025-11-25) goes to the task service
(`tasks.server.running.run_in_handshake_era`), a stateless-era one (2026-07-28) to the tasks extension
(`extension.run_as_task`, loaded by the first such request: a handshake-era server never loads the
extension's models); this module is where the era is told apart."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

from mcp_bindings.runtime.tasks.server import running

__all__ = ["as_task", "run_as_task"]

T = TypeVar("T")
H = TypeVar("H", bound=Callable[..., Awaitable[Any]])


async def run_as_task(ctx: Any, work: Awaitable[T] | Callable[[Any], Awaitable[T]], *, required: bool = False) -> Any:
    """Run `work` as this request's task where the request is task-augmented and the method's task
    support is advertised: create the task, start the work in the background, and return the
    `CreateTaskResult` for the handler to answer with. Otherwise run the work now and return what it
    returns. `work` is an awaitable, or a callable given the context the work should use: a
    `TaskContext` for a task (whose requests and notifications carry the task's `_meta`), else `ctx`:

        async def call_tool(self, params, ctx):
            return await run_as_task(ctx, lambda task_ctx: self.build(params, task_ctx))

    A stateless-era request (2026-07-28) goes to the tasks extension (`extension.run_as_task`):
    there the server decides, and `required=True` refuses with -32021 a client that did not declare
    the extension instead of running the work at once. In the handshake era `required=True` refuses
    a request that is not task-augmented with -32601 (as a tool whose taskSupport is "required").
    """
    if running.stateless_request(ctx):
        from mcp_bindings.runtime.tasks.server import extension  # the 2026-07-28 models: where they are met

        return await extension.run_as_task(ctx, work, required=required)
    return await running.run_in_handshake_era(ctx, work, required=required)


def as_task(handler: H) -> H:
    """A request handler that runs as a task when its request is task-augmented (`run_as_task`):

    class MyServer(Server):
        declared_capabilities = {"tasks": {"requests": {"tools": {"call": {}}}}}

        @as_task
        async def call_tool(self, params, ctx): ...  # ctx: a TaskContext when it runs as a task
    """

    @functools.wraps(handler)
    async def handle(self: Any, params: Any, ctx: Any) -> Any:
        return await run_as_task(ctx, lambda context: handler(self, params, context))

    return cast("H", handle)  # its signature; for a task, it answers the CreateTaskResult
