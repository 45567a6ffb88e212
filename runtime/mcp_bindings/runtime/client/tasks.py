"""The client as a task receiver (MCP 2025-11-25): a server may task-augment what it asks the
client (`sampling/createMessage`, `elicitation/create` with params `task`) when the client declared
`tasks.requests.<method>`. The client then answers at once with a `CreateTaskResult`, runs its
handler in the background (bounded by the task's TTL), and serves `tasks/get`, `tasks/result`
(blocking until the task is terminal), `tasks/list` and `tasks/cancel` from its own store, and
sends `notifications/tasks/status` when a task ends.

A client takes part by declaring the capability on its handlers, e.g.
`declared_capabilities = {"tasks": {"list": {}, "cancel": {}, "requests": {"sampling":
{"createMessage": {}}}}}`; the handler itself is the ordinary one. The client has one requestor
(its server), so every task belongs to it; the store is the same `TaskService` a server uses
(bounded, expiring, unguessable ids).
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
from mcp_bindings.runtime.tasks.service import RELATED_TASK, TASK_STATUS, TaskService
from mcp_bindings.runtime.tasks.store import TASK_METHODS, InvalidCursor, TaskState

if TYPE_CHECKING:
    from mcp_bindings.runtime.client.runtime import ClientRuntime

log = logs.logger("client")

Work = Callable[[], Awaitable[bytes]]


def receiver_capability(method: str) -> Capability:
    """The client capability that lets a server task-augment `method`: `tasks.requests.sampling.createMessage`."""
    return Capability("client", ("tasks", "requests", *method.split("/")))


class ClientTasks:
    """The tasks one client connection runs for its server."""

    def __init__(self) -> None:
        self.service = TaskService()

    def augmented(self, runtime: ClientRuntime, request: Request) -> bool:
        """Whether the server task-augmented a request this client declared it takes as a task."""
        task = json_object(request.params).get("task")
        return isinstance(task, dict) and receiver_capability(request.method).present_in(runtime.capabilities)

    def serves(self, runtime: ClientRuntime, method: str) -> bool:
        """`tasks/*` from the server, answered from this store (when the client declared `tasks`)."""
        return method in TASK_METHODS and Capability("client", ("tasks",)).present_in(runtime.capabilities)

    async def create(self, runtime: ClientRuntime, request: Request, work: Work) -> bytes:
        """Answer a task-augmented request: a new task, its work started in the background."""
        task = json_object(json_object(request.params).get("task"))
        service = self.service
        state = await service.store.create(
            None, request.method, ttl_ms=service.ttl_for(task.get("ttl")), poll_interval_ms=service.poll_interval_ms
        )
        scope = anyio.CancelScope()
        if state.expires_at is not None:
            scope.deadline = anyio.current_time() + max(0.0, state.expires_at - time.time())
        service.running[state.task_id] = scope
        if runtime.task_group is None:
            await service.store.delete(state.task_id)
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
            self.service.running.pop(state.task_id, None)
        if outcome is None:  # cancelled by tasks/cancel (already recorded) or by its TTL
            return
        with anyio.CancelScope(shield=True):
            updated = await self.service.store.update(state.task_id, **outcome)
            if updated is not None and updated.terminal:
                await _announce(runtime, updated)

    async def answer(self, runtime: ClientRuntime, request: Request) -> bytes:
        """`tasks/get|result|list|cancel` from the server, typed by the negotiated version."""
        assert runtime.protocol is not None
        spec = runtime.protocol.server_requests[request.method]
        versions.validate_params(spec, request.params)  # -32602 naming the field (taskId, cursor)
        params = json_object(request.params)
        service = self.service
        if request.method == "tasks/list":
            cursor = params.get("cursor")
            try:
                page, next_cursor = await service.store.list(
                    None, cursor if isinstance(cursor, str) else None, service.page_size
                )
            except InvalidCursor:
                raise jsonrpc.invalid_field(
                    "params.cursor", "not a cursor this client issued", "invalid_cursor"
                ) from None
            data: dict[str, Any] = {"tasks": [s.wire() for s in page if not s.expired()]}
            if next_cursor is not None:
                data["nextCursor"] = next_cursor
            return _checked(spec.result, data, request.method)
        state = await service.lookup(None, params.get("taskId"))
        if request.method == "tasks/get":
            return _checked(spec.result, state.wire(), request.method)
        if request.method == "tasks/cancel":
            cancelled = await service.cancel(state)
            await _announce(runtime, cancelled)
            return _checked(spec.result, cancelled.wire(), request.method)
        return await self._result(state)

    async def _result(self, state: TaskState) -> bytes:
        """Blocks until the task is terminal (bounded by its TTL); then exactly what the request
        would have answered: its result (with the related-task `_meta`) or its JSON-RPC error."""
        store = self.service.store
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
