"""The context of a task's work (MCP 2025-11-25, and the tasks extension's `ExtensionTaskContext`
on top of it): the request's context, except that what the work sends carries the task's `_meta`
and goes out on a waiting `tasks/result` stream, and that asking the client moves the task to
`input_required` for as long as the answer takes. `parts` (`server.context`'s) reads what a server
request context serves (session, connection, view), for this package's modules."""

from __future__ import annotations

from dataclasses import fields
from typing import Any, ClassVar

import anyio

from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.protocol.spec import MethodSpec
from mcp_bindings.runtime.rpc.jsonrpc import RequestId, json_object
from mcp_bindings.runtime.server.bridge import outgoing_request
from mcp_bindings.runtime.server.context import ServerRequestContext, parts
from mcp_bindings.runtime.tasks.core.handshake import RELATED_TASK
from mcp_bindings.runtime.tasks.core.store import TaskState
from mcp_bindings.runtime.tasks.server.service import TaskService, announce, requester_of

__all__ = ["TaskContext", "parts"]


class TaskContext(ServerRequestContext):
    """The context of a task's work (a `context.RequestContext`): the request's, except that what it
    sends carries the task's `_meta` (`io.modelcontextprotocol/related-task`), goes out on a waiting
    `tasks/result` stream where there is one, and that asking the client moves the task to
    `input_required` for as long as the answer takes."""

    __slots__ = ("service", "spec", "task_id")
    tool_errors_fail: ClassVar[bool] = True  # a tool result with isError fails the task (2025-11-25)

    def __init__(self, inner: ServerRequestContext, task_id: str, service: TaskService, spec: MethodSpec) -> None:
        # the same type's fields, by name (the dataclass's order is its own)
        super().__init__(**{each.name: getattr(inner, each.name) for each in fields(ServerRequestContext) if each.init})
        self.task_id = task_id
        self.service = service
        self.spec = spec

    async def close_sse_stream(self) -> None:
        """A no-op: the request's response stream was closed when the task was created."""

    # -- what carries the task's _meta ---------------------------------------------------------

    @property
    def meta(self) -> dict[str, Any]:
        return {RELATED_TASK: {"taskId": self.task_id}}

    def _related(self) -> RequestId:
        streams = self.service.result_streams.get(self.task_id)
        return streams[-1] if streams else self._request.id

    async def _send(self, method: str, params: dict[str, Any]) -> None:
        await self._session.notify(method, {**params, "_meta": self.meta}, related=self._related())

    async def request(self, method: str, params: Any = None, *, timeout: float | None = None, raw: bool = False) -> Any:
        """Ask the client (elicitation, sampling) for the task: the task is `input_required` until the
        answer arrives (the spec's flow: the requestor sees it in tasks/get and calls tasks/result,
        whose stream carries the request)."""
        data = dict(versions.dump(params) or {}) if params is not None else {}
        data["_meta"] = {**json_object(data.get("_meta")), **self.meta}
        asked = outgoing_request(self.server.protocol, method, data, self._view)
        await self.set_status("input_required")
        try:
            answer = await self._session.request(method, asked.data, timeout=timeout, related=self._related())
        finally:
            with anyio.CancelScope(shield=True):
                await self.set_status("working")
        result = asked.answer(answer)
        return versions.dump(result) if raw else result

    async def set_status(self, status: str | None = None, message: str | None = None) -> None:
        """Change the task's status (`working` / `input_required`) or status message, and tell the client."""
        state = await self.service.store.get(requester_of(self._session, self._peer), self.task_id)
        if state is None or state.terminal:
            return
        updated = await self.service.store.update(self.task_id, status=status, status_message=message)
        if updated is not None and not updated.terminal and (updated.status != state.status or message is not None):
            await self.announce(updated)

    async def announce(self, state: TaskState) -> None:
        """`notifications/tasks/status` to the requestor's connection (where it is still there)."""
        await announce(self.session, state)
