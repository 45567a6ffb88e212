"""The tasks one side runs for its peer, as both sides run them: a server for its clients
(`tasks.server.service.TaskService`) and a client for its server (`client.tasks.ClientTasks`).

A `TaskRunner` holds where the tasks are kept (its `TaskStore`), the work running for them (each in a
cancel scope bounded by the task's TTL), the TTLs it grants, and answers the requestor's
`tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` (MCP 2025-11-25) alike on either side:
an unknown, foreign or expired task id, an invalid cursor and cancelling a terminal task are -32602;
`tasks/result` blocks until the task is terminal (bounded by its TTL) and answers exactly what the
underlying request would have. Where the work runs (a detached task, the connection's task group)
and what it reports are the side's own.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, cast

import anyio

from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.protocol.spec import MethodSpec
from mcp_bindings.runtime.rpc import jsonrpc, logs
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, INVALID_PARAMS, McpError
from mcp_bindings.runtime.rpc.jsonrpc import RequestId, json_object
from mcp_bindings.runtime.tasks.core.handshake import RELATED_TASK
from mcp_bindings.runtime.tasks.core.store import InMemoryTaskStore, InvalidCursor, TaskState, TaskStore
from mcp_bindings.v2025_11_25 import names as core

__all__ = ["Announce", "TaskRunner"]

log = logs.logger("tasks")

Announce = Callable[[TaskState], Awaitable[None]]  # `notifications/tasks/status` of a task, best effort
NOT_FOUND = "Failed to retrieve task: Task not found"


@dataclass(eq=False)
class TaskRunner:
    """The tasks of one side: where they are kept and the work running for them.

    TTLs are in milliseconds: a request's `task.ttl` is honoured up to `max_ttl_ms` (None: no bound),
    `default_ttl_ms` applies when it asks for none; `poll_interval_ms` is suggested to requestors."""

    store: TaskStore = field(default_factory=InMemoryTaskStore)
    default_ttl_ms: int | None = 300_000
    max_ttl_ms: int | None = 3_600_000
    poll_interval_ms: int | None = 1_000
    page_size: int = 50
    # task id -> the cancel scope of its running work (this process's)
    running: dict[str, anyio.CancelScope] = field(default_factory=dict[str, anyio.CancelScope])
    # task id -> ids of the open tasks/result requests waiting for it: their response streams carry
    # what the task's work asks the requestor (the spec's input_required flow)
    result_streams: dict[str, list[RequestId]] = field(default_factory=dict[str, list[RequestId]])

    def ttl_for(self, requested: Any) -> int | None:
        if isinstance(requested, int) and not isinstance(requested, bool) and requested >= 0:
            return requested if self.max_ttl_ms is None else min(requested, self.max_ttl_ms)
        return self.default_ttl_ms

    def scope_for(self, state: TaskState) -> anyio.CancelScope:
        """The cancel scope a new task's work runs in: its deadline the task's expiry, cancelled by
        `tasks/cancel` (`stop`)."""
        scope = self.running[state.task_id] = anyio.CancelScope()
        expires = state.expires_at
        if expires is not None:
            scope.deadline = anyio.current_time() + max(0.0, expires - time.time())
        return scope

    async def finish(
        self, state: TaskState, outcome_of: Awaitable[dict[str, Any]], scope: anyio.CancelScope, announce: Announce
    ) -> None:
        """Run a task's work (`outcome_of`: its terminal state's fields) in `scope` and record how it
        ended; announced where that outcome is what the store kept (not a cancellation meanwhile)."""
        outcome: dict[str, Any] | None = None
        try:
            with scope:
                try:
                    outcome = await outcome_of
                except McpError as exc:
                    outcome = {"status": "failed", "error": exc.to_error(), "status_message": exc.message}
                except Exception:
                    log.exception("task %s (%s) failed", state.task_id, state.method)
                    error = {"code": INTERNAL_ERROR, "message": "Internal error"}
                    outcome = {"status": "failed", "error": error, "status_message": "Internal error"}
        finally:
            self.running.pop(state.task_id, None)
        if outcome is None:  # cancelled by tasks/cancel (already recorded) or by the TTL (expired)
            return
        with anyio.CancelScope(shield=True):
            updated = await self.store.update(state.task_id, **outcome)
            if updated is not None and updated.status == outcome["status"] and updated.terminal:
                await announce(updated)

    def stop(self, task_id: str) -> None:
        scope = self.running.pop(task_id, None)
        if scope is not None:
            scope.cancel()

    async def lookup(self, requester: str | None, task_id: Any) -> TaskState:
        """The requester's task, or -32602: unknown, another requester's (indistinguishable) or expired."""
        state = await self.store.get(requester, task_id) if isinstance(task_id, str) else None
        if state is None:
            raise McpError(INVALID_PARAMS, NOT_FOUND)
        if state.expired():
            await self.store.delete(state.task_id)
            self.stop(state.task_id)
            raise McpError(INVALID_PARAMS, "Failed to retrieve task: Task has expired")
        return state

    async def cancel(self, state: TaskState) -> TaskState:
        """Move a live task to `cancelled` (before answering, as the spec says), then stop its work."""
        if state.terminal:
            raise McpError(INVALID_PARAMS, f"Cannot cancel task: already in terminal status '{state.status}'")
        updated = await self.store.update(
            state.task_id, status="cancelled", status_message="The task was cancelled by request."
        )
        self.stop(state.task_id)
        if updated is None:
            raise McpError(INVALID_PARAMS, NOT_FOUND)
        if updated.status != "cancelled":  # it finished meanwhile
            raise McpError(INVALID_PARAMS, f"Cannot cancel task: already in terminal status '{updated.status}'")
        return updated

    async def answer(
        self, spec: MethodSpec, request: jsonrpc.Request, requester: str | None, announce: Announce, issuer: str
    ) -> bytes:
        """`tasks/get|result|list|cancel` from the requestor, typed by `spec` (the negotiated
        version's); `issuer` ("server", "client") names this side in an invalid cursor's error."""
        versions.validate_params(spec, request.params)  # -32602 naming the field (taskId, cursor)
        params = json_object(request.params)
        if spec.method == core.TASKS_LIST:
            cursor = params.get("cursor")
            try:
                page, next_cursor = await self.store.list(
                    requester, cursor if isinstance(cursor, str) else None, self.page_size
                )
            except InvalidCursor:
                raise jsonrpc.invalid_field(
                    "params.cursor", f"not a cursor this {issuer} issued", "invalid_cursor"
                ) from None
            data: dict[str, Any] = {"tasks": [state.wire() for state in page if not state.expired()]}
            if next_cursor is not None:
                data["nextCursor"] = next_cursor
            return _checked(spec, data)
        state = await self.lookup(requester, params.get("taskId"))
        if spec.method == core.TASKS_RESULT:
            return await self._result(state, request.id)
        if spec.method == core.TASKS_CANCEL:
            state = await self.cancel(state)
            await announce(state)
        return _checked(spec, state.wire())

    async def _result(self, state: TaskState, request_id: RequestId) -> bytes:
        """Blocks until the task is terminal (bounded by its TTL), then answers exactly what the underlying
        request would have: its result (with the related-task `_meta`) or its JSON-RPC error."""
        if not state.terminal:
            streams = self.result_streams.setdefault(state.task_id, [])
            streams.append(request_id)
            try:
                expires = state.expires_at
                with anyio.move_on_after(None if expires is None else max(0.0, expires - time.time())):
                    waited = await self.store.wait(state.task_id)
                    state = waited if waited is not None else state
            finally:
                streams.remove(request_id)
                if not streams:
                    self.result_streams.pop(state.task_id, None)
            if not state.terminal:
                await self.store.delete(state.task_id)
                raise McpError(INVALID_PARAMS, "Failed to retrieve task: Task has expired")
        if state.error is not None:
            raise McpError.from_error(state.error)
        if not isinstance(state.result, dict):
            raise McpError(
                INVALID_PARAMS, f"Failed to retrieve task result: the task was {state.status} without a result"
            )
        data = dict(cast("dict[str, Any]", state.result))
        data["_meta"] = {**json_object(data.get("_meta")), RELATED_TASK: {"taskId": state.task_id}}
        return jsonrpc.dumps(data)


def _checked(spec: MethodSpec, data: Any) -> bytes:
    return versions.to_json(versions.checked(spec.result, data, f"the {spec.method} result"))
