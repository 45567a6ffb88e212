"""Task-augmented requests from a server's handler to its client (MCP 2025-11-25): the server is
the requestor, the client the receiver (`client_tasks` is our client's side).

    handle = await request_as_task(ctx, core.SAMPLING_CREATE_MESSAGE, params, ttl_ms=60_000)
    result = await handle.result()  # the CreateMessageResult, as `ctx.request` would return it

Sent only to a client that declared `tasks.requests.<method>` (e.g. `tasks.requests.sampling.
createMessage`); otherwise `NotExpressible`, nothing sent. A client may answer at once instead of
creating a task: the handle then holds that result. `get()` asks `tasks/get`, `result()` asks
`tasks/result` (which blocks until the task is terminal) and returns the plain result typed in the
stub's version (or raises the task's JSON-RPC error), `cancel()` asks `tasks/cancel`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from pydantic import ValidationError

from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, INVALID_PARAMS, McpError
from mcp_bindings.runtime.server.bridge import NotExpressible, OutgoingRequest, outgoing_request
from mcp_bindings.runtime.tasks.core.handshake import create_task_result, receiver_capability
from mcp_bindings.runtime.tasks.server.context import parts
from mcp_bindings.v2025_11_25 import names as core

__all__ = ["ClientTask", "request_as_task"]


async def request_as_task(
    ctx: Any, method: str, params: Any = None, *, ttl_ms: int | None = None, timeout: float | None = None
) -> ClientTask:
    """Ask the client (from a request handler's `ctx`) with a task-augmented request; returns the
    handle of the task the client created (or of the result it answered at once with)."""
    session, _, view = parts(ctx)
    model = create_task_result(view.protocol)
    capability = receiver_capability(method)
    if view.stateless or model is None:
        raise NotExpressible(
            f"cannot send a task-augmented {method}: MCP {view.version} has no client-side tasks", version=view.version
        )
    if not capability.present_in(view.client_capabilities):
        raise NotExpressible(
            f"cannot send a task-augmented {method}: the client did not declare the {capability}",
            version=view.version,
        )
    data = dict(cast("dict[str, Any]", versions.dump(params) or {}))
    data["task"] = {} if ttl_ms is None else {"ttl": ttl_ms}
    asked = outgoing_request(ctx.server.protocol, method, data, view)
    raw = await session.request(method, asked.data, timeout=timeout, related=ctx.request_id)
    if isinstance(raw, dict) and isinstance(cast("dict[str, Any]", raw).get("task"), dict):
        try:
            created = versions.validate(model, raw)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            raise McpError(INTERNAL_ERROR, f"the client's task for {method} is invalid: {first['msg']}") from None
        return ClientTask(ctx, asked, cast("Any", created).task)
    return ClientTask(ctx, asked, None, asked.answer(raw))


@dataclass(eq=False, repr=False)
class ClientTask:
    """A task the client runs for one of this server's requests. `task` is its `Task` as last seen
    (None when the client answered at once: `result()` returns that answer)."""

    _ctx: Any  # the handler's context
    _asked: OutgoingRequest
    task: Any
    _result: Any = None

    def __repr__(self) -> str:
        return f"<ClientTask {self._asked.method} {self.task_id or '-'} {getattr(self.task, 'status', 'done')}>"

    @property
    def task_id(self) -> str | None:
        return None if self.task is None else cast("str", self.task.task_id)

    async def _ask(self, method: str, timeout: float | None = None) -> Any:
        if self.task_id is None:
            raise McpError(INVALID_PARAMS, f"{self._asked.method}: the client answered at once; there is no task")
        session, _, view = parts(self._ctx)
        asked = outgoing_request(self._ctx.server.protocol, method, {"taskId": self.task_id}, view)
        return asked, await session.request(method, asked.data, timeout=timeout, related=self._ctx.request_id)

    async def get(self) -> Any:
        """`tasks/get`: the task now (the version's `GetTaskResult`)."""
        asked, raw = await self._ask(core.TASKS_GET)
        self.task = asked.answer(raw)
        return self.task

    async def result(self, *, timeout: float | None = None) -> Any:
        """`tasks/result` (blocks until the task is terminal): the request's plain result, typed as
        `ctx.request` returns it, or the task's JSON-RPC error raised."""
        if self.task_id is None:
            return self._result
        _, raw = await self._ask(core.TASKS_RESULT, timeout)
        return self._asked.answer(raw)

    async def cancel(self) -> Any:
        """`tasks/cancel`: the task, cancelled (-32602 if it had already finished)."""
        asked, raw = await self._ask(core.TASKS_CANCEL)
        self.task = asked.answer(raw)
        return self.task
