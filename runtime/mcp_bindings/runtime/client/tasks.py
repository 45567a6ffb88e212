"""The client as a task receiver (MCP 2025-11-25): a server may task-augment what it asks the
client (`sampling/createMessage`, `elicitation/create` with params `task`) when the client declared
`tasks.requests.<method>`. The client then answers at once with a `CreateTaskResult`, runs its
handler in the background (bounded by the task's TTL), and serves `tasks/get`, `tasks/result`
(blocking until the task is terminal), `tasks/list` and `tasks/cancel` from its own store, and
sends `notifications/tasks/status` when a task ends.

A client takes part by declaring the capability on its handlers, e.g.
`declared_capabilities = {"tasks": {"list": {}, "cancel": {}, "requests": {"sampling":
{"createMessage": {}}}}}`; the handler itself is the ordinary one. The client has one requestor
(its server), so every task belongs to it; its store is the one a server uses by default
(`tasks.core.store.InMemoryTaskStore`: bounded, expiring, unguessable ids), with a server's
default TTLs (`DEFAULT_TTL_MS` when the request asks for none, at most `MAX_TTL_MS`).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

import anyio
import orjson

from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.protocol.spec import Capability
from mcp_bindings.runtime.rpc import jsonrpc, logs
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, INVALID_PARAMS, McpError
from mcp_bindings.runtime.rpc.jsonrpc import Request, json_object
from mcp_bindings.runtime.tasks.core.handshake import RELATED_TASK, TASK_STATUS, receiver_capability
from mcp_bindings.runtime.tasks.core.store import TASK_METHODS, InMemoryTaskStore, InvalidCursor, TaskState
from mcp_bindings.v2025_11_25 import names as core

if TYPE_CHECKING:
    from mcp_bindings.runtime.client.runtime import ClientRuntime

log = logs.logger("client")

Work = Callable[[], Awaitable[bytes]]

DEFAULT_TTL_MS = 300_000  # a task's TTL when the server's request asks for none
MAX_TTL_MS = 3_600_000  # the longest TTL granted
POLL_INTERVAL_MS = 1_000  # suggested to the server
PAGE_SIZE = 50  # tasks per tasks/list page


class ClientTasks:
    """The tasks one client connection runs for its server."""

    def __init__(self) -> None:
        self.store = InMemoryTaskStore()
        self.running: dict[str, anyio.CancelScope] = {}  # task id -> the cancel scope of its work

    def augmented(self, runtime: ClientRuntime, request: Request) -> bool:
        """Whether the server task-augmented a request this client declared it takes as a task."""
        task = json_object(request.params).get("task")
        return isinstance(task, dict) and receiver_capability(request.method).present_in(runtime.capabilities)

    def serves(self, runtime: ClientRuntime, method: str) -> bool:
        """`tasks/*` from the server, answered from this store (when the client declared `tasks`)."""
        return method in TASK_METHODS and Capability("client", ("tasks",)).present_in(runtime.capabilities)

    async def create(self, runtime: ClientRuntime, request: Request, work: Work) -> bytes:
        """Answer a task-augmented request: a new task, its work started in the background."""
        ttl = _granted_ttl(json_object(json_object(request.params).get("task")).get("ttl"))
        state = await self.store.create(None, request.method, ttl_ms=ttl, poll_interval_ms=POLL_INTERVAL_MS)
        scope = anyio.CancelScope()
        if state.expires_at is not None:
            scope.deadline = anyio.current_time() + max(0.0, state.expires_at - time.time())
        self.running[state.task_id] = scope
        if runtime.task_group is None:
            await self.store.delete(state.task_id)
            raise McpError(INTERNAL_ERROR, f"{request.method}: this client runs tasks only in a connect() session")
        runtime.task_group.start_soon(self._run, runtime, state, work, scope)
        return jsonrpc.dumps({"task": state.wire()})

    async def _run(self, runtime: ClientRuntime, state: TaskState, work: Work, scope: anyio.CancelScope) -> None:
        outcome: dict[str, Any] | None = None
        try:
            with scope:
                try:
                    outcome = {"status": "completed", "result": orjson.loads(await work())}
                except McpError as exc:
                    outcome = {"status": "failed", "error": exc.to_error(), "status_message": exc.message}
                except Exception:
                    log.exception("task %s (%s) failed", state.task_id, state.method)
                    error = {"code": INTERNAL_ERROR, "message": "Internal error"}
                    outcome = {"status": "failed", "error": error, "status_message": "Internal error"}
        finally:
            self.running.pop(state.task_id, None)
        if outcome is None:  # cancelled by tasks/cancel (already recorded) or by its TTL
            return
        with anyio.CancelScope(shield=True):
            updated = await self.store.update(state.task_id, **outcome)
            if updated is not None and updated.terminal:
                await _announce(runtime, updated)

    async def answer(self, runtime: ClientRuntime, request: Request) -> bytes:
        """`tasks/get|result|list|cancel` from the server, typed by the negotiated version."""
        assert runtime.protocol is not None
        spec = runtime.protocol.server_requests[request.method]
        versions.validate_params(spec, request.params)  # -32602 naming the field (taskId, cursor)
        params = json_object(request.params)
        if request.method == core.TASKS_LIST:
            cursor = params.get("cursor")
            try:
                page, next_cursor = await self.store.list(None, cursor if isinstance(cursor, str) else None, PAGE_SIZE)
            except InvalidCursor:
                raise jsonrpc.invalid_field(
                    "params.cursor", "not a cursor this client issued", "invalid_cursor"
                ) from None
            data: dict[str, Any] = {"tasks": [s.wire() for s in page if not s.expired()]}
            if next_cursor is not None:
                data["nextCursor"] = next_cursor
            return _checked(spec.result, data, request.method)
        state = await self._task(params.get("taskId"))
        if request.method == core.TASKS_GET:
            return _checked(spec.result, state.wire(), request.method)
        if request.method == core.TASKS_CANCEL:
            cancelled = await self._cancel(state)
            await _announce(runtime, cancelled)
            return _checked(spec.result, cancelled.wire(), request.method)
        return await self._result(state)

    async def _task(self, task_id: Any) -> TaskState:
        """The task `task_id` names, or -32602 (unknown or expired: an expired one is dropped)."""
        state = await self.store.get(None, task_id) if isinstance(task_id, str) else None
        if state is not None and state.expired():
            await self.store.delete(state.task_id)
            self._stop(state.task_id)
            raise McpError(INVALID_PARAMS, "Failed to retrieve task: Task has expired")
        if state is None:
            raise McpError(INVALID_PARAMS, "Failed to retrieve task: Task not found")
        return state

    async def _cancel(self, state: TaskState) -> TaskState:
        """`tasks/cancel`: the task recorded as cancelled before its work is stopped; -32602 if it
        had already ended (or ends meanwhile)."""
        ended = f"Cannot cancel task: already in terminal status '{state.status}'"
        if not state.terminal:
            message = "The task was cancelled by request."
            updated = await self.store.update(state.task_id, status="cancelled", status_message=message)
            self._stop(state.task_id)
            if updated is None:
                raise McpError(INVALID_PARAMS, "Failed to retrieve task: Task not found")
            if updated.status == "cancelled":
                return updated
            ended = f"Cannot cancel task: already in terminal status '{updated.status}'"
        raise McpError(INVALID_PARAMS, ended)

    def _stop(self, task_id: str) -> None:
        scope = self.running.pop(task_id, None)
        if scope is not None:
            scope.cancel()

    async def _result(self, state: TaskState) -> bytes:
        """Blocks until the task is terminal (bounded by its TTL); then exactly what the request
        would have answered: its result (with the related-task `_meta`) or its JSON-RPC error."""
        store = self.store
        if not state.terminal:
            expires = state.expires_at
            with anyio.move_on_after(None if expires is None else max(0.0, expires - time.time())):
                waited = await store.wait(state.task_id)
                state = waited if waited is not None else state
            if not state.terminal:
                await store.delete(state.task_id)
                raise McpError(INVALID_PARAMS, "Failed to retrieve task: Task has expired")
        if state.error is not None:
            error = state.error
            raise McpError(int(error.get("code", INTERNAL_ERROR)), str(error.get("message", "")), error.get("data"))
        if not isinstance(state.result, dict):
            raise McpError(
                INVALID_PARAMS, f"Failed to retrieve task result: the task was {state.status} without a result"
            )
        data = dict(cast("dict[str, Any]", state.result))
        data["_meta"] = {**json_object(data.get("_meta")), RELATED_TASK: {"taskId": state.task_id}}
        return jsonrpc.dumps(data)


def _granted_ttl(requested: Any) -> int:
    """The TTL (ms) of a task whose request asked for `requested` (the default when it asked for none)."""
    if isinstance(requested, int) and not isinstance(requested, bool) and requested >= 0:
        return min(requested, MAX_TTL_MS)
    return DEFAULT_TTL_MS


def _checked(model: Any, data: Any, method: str) -> bytes:
    return versions.to_json(versions.checked(model, data, f"the {method} result"))


async def _announce(runtime: ClientRuntime, state: TaskState) -> None:
    """`notifications/tasks/status` to the server, where the version has it (best effort)."""
    session = runtime.session
    if session is None or runtime.protocol is None or TASK_STATUS not in runtime.protocol.client_notifications:
        return
    try:
        await session.notify(TASK_STATUS, state.wire())
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        pass
