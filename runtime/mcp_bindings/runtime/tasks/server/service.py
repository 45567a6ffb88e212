"""Tasks (MCP 2025-11-25, core): a task-augmented request is answered at once with a
`CreateTaskResult` while its work goes on; the requestor polls it with `tasks/get`, blocks on
`tasks/result`, lists and cancels its tasks; the receiver may send `notifications/tasks/status`.

The server side: the `TaskService` of a server object. A server takes part by declaring the
capability, e.g.
`declared_capabilities = {"tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}`;
the runtime then serves `tasks/get|result|list|cancel` itself (`methods`) from the server's
`TaskService` (unless the server overrides their handlers), whose store is an `InMemoryTaskStore`
unless `configure` says otherwise. A handler of a method advertised under `tasks.requests` runs its
work as a task with `await run_as_task(ctx, work)` (or the `as_task` decorator, `tasks.api`;
`running` for this era): for a task-augmented request that creates the task, starts the work in the
background and returns the `CreateTaskResult`; for any other request it just runs the work. What
the runtime enforces around such a handler is `hooks.augment`; the work's context is
`context.TaskContext`.

Task work outlives its request, and its connection: it runs detached from both (on the event loop,
not in the request's task group, `_spawn`), bounded by the task's TTL and cancelled by `tasks/cancel`.
Tasks are scoped to the requester (`requester_of`): the authenticated principal where there is one
(so a client can reconnect and fetch its results), else the connection (a Streamable HTTP session
on any worker, `Session.connection`). Another requester's task is
"not found", like an unknown id. A new task counts against the store's per-requester bound under
`quota_of`: the requester, else (a stateless request without auth) the client's address. Errors
(2025-11-25 spec): unknown, foreign or expired task ids, invalid cursors and cancelling a terminal
task are -32602.

The client side, a typed call with `task=` and its `TaskHandle`, is the client's
(`client.task_handle`).

Tasks of the stateless era (2026-07-28) are the `io.modelcontextprotocol/tasks` extension: the same
service and store, server-directed creation, served by `extension` (`run_as_task` and the plug-in
hand stateless-era requests to it). Task-augmented requests from a server's handler to its client
(sampling, elicitation): `outgoing.request_as_task`.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import importlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import anyio
from pydantic import ValidationError

from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.protocol.spec import MethodSpec
from mcp_bindings.runtime.rpc import logs
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, INVALID_PARAMS, McpError
from mcp_bindings.runtime.rpc.jsonrpc import RequestId
from mcp_bindings.runtime.server.host import host_for
from mcp_bindings.runtime.tasks.core.handshake import RELATED_TASK, TASK_STATUS
from mcp_bindings.runtime.tasks.core.store import InMemoryTaskStore, TaskState, TaskStore

if TYPE_CHECKING:
    from mcp_bindings.runtime.rpc.session import Session
    from mcp_bindings.runtime.server.context import PeerSession
    from mcp_bindings.runtime.server.stubs import ServerStub
    from mcp_bindings.runtime.tasks.server.context import TaskContext

__all__ = [
    "RELATED_TASK",
    "PendingInput",
    "TaskService",
    "announce",
    "configure",
    "current_task_id",
    "outcome_of",
    "quota_of",
    "requester_of",
    "service_for",
]

log = logs.logger("tasks")

# -- the service of one server ---------------------------------------------------------------------


@dataclass(eq=False)
class PendingInput:
    """A question a task's work put to the client (tasks extension: one entry of `inputRequests`)."""

    request: dict[str, Any]  # {"method": ..., "params": ...}
    answered: anyio.Event = field(default_factory=anyio.Event)
    response: Any = None


@dataclass(eq=False)
class TaskService:
    """The tasks of one server object: where they are kept and the work running for them.

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
    # what the task's work asks the client (the spec's input_required flow)
    result_streams: dict[str, list[RequestId]] = field(default_factory=dict[str, list[RequestId]])
    # tool name -> `execution.taskSupport` as the server last listed it (absent: "forbidden")
    tool_support: dict[str, str] = field(default_factory=dict[str, str])
    # task id -> key -> the outstanding questions of its work (tasks extension, this process's)
    inputs: dict[str, dict[str, PendingInput]] = field(default_factory=dict[str, dict[str, PendingInput]])

    def ttl_for(self, requested: Any) -> int | None:
        if isinstance(requested, int) and not isinstance(requested, bool) and requested >= 0:
            return requested if self.max_ttl_ms is None else min(requested, self.max_ttl_ms)
        return self.default_ttl_ms

    async def lookup(self, requester: str | None, task_id: Any) -> TaskState:
        """The requester's task, or -32602: unknown, another requester's (indistinguishable) or expired."""
        state = await self.store.get(requester, task_id) if isinstance(task_id, str) else None
        if state is None:
            raise McpError(INVALID_PARAMS, "Failed to retrieve task: Task not found")
        if state.expired():
            await self.store.delete(state.task_id)
            self._stop(state.task_id)
            raise McpError(INVALID_PARAMS, "Failed to retrieve task: Task has expired")
        return state

    def start(self, state: TaskState, work: Awaitable[Any], context: TaskContext) -> None:
        scope = anyio.CancelScope()
        expires = state.expires_at
        if expires is not None:
            scope.deadline = anyio.current_time() + max(0.0, expires - time.time())
        self.running[state.task_id] = scope
        _spawn(functools.partial(self._run, state, work, context, scope))

    async def _run(
        self, state: TaskState, work: Awaitable[Any], context: TaskContext, scope: anyio.CancelScope
    ) -> None:
        outcome: dict[str, Any] | None = None
        token = _CURRENT_TASK.set(state.task_id)
        try:
            with scope:
                try:
                    outcome = outcome_of(context.spec, await work, context.tool_errors_fail)
                except McpError as exc:
                    outcome = {"status": "failed", "error": exc.to_error(), "status_message": exc.message}
                except Exception:
                    log.exception("task %s (%s) failed", state.task_id, state.method)
                    error = {"code": INTERNAL_ERROR, "message": "Internal error"}
                    outcome = {"status": "failed", "error": error, "status_message": "Internal error"}
        finally:
            _CURRENT_TASK.reset(token)
            self.running.pop(state.task_id, None)
        if outcome is None:  # cancelled by tasks/cancel (already recorded) or by the TTL (expired)
            return
        with anyio.CancelScope(shield=True):
            updated = await self.store.update(state.task_id, **outcome)
            if updated is not None and updated.status == outcome["status"] and updated.terminal:
                await context.announce(updated)

    def _stop(self, task_id: str) -> None:
        scope = self.running.pop(task_id, None)
        if scope is not None:
            scope.cancel()

    async def cancel(self, state: TaskState) -> TaskState:
        """Move a live task to `cancelled` (before answering, as the spec says), then stop its work."""
        if state.terminal:
            raise McpError(INVALID_PARAMS, f"Cannot cancel task: already in terminal status '{state.status}'")
        updated = await self.store.update(
            state.task_id, status="cancelled", status_message="The task was cancelled by request."
        )
        self._stop(state.task_id)
        if updated is None:
            raise McpError(INVALID_PARAMS, "Failed to retrieve task: Task not found")
        if updated.status != "cancelled":  # it finished meanwhile
            raise McpError(INVALID_PARAMS, f"Cannot cancel task: already in terminal status '{updated.status}'")
        return updated


def configure(server: ServerStub, store: TaskStore | None = None, **options: Any) -> TaskService:
    """Set the task store and limits of a server object (before it serves): `configure(server,
    RedisTaskStore(...), default_ttl_ms=60_000, max_ttl_ms=600_000, poll_interval_ms=2_000)`."""
    service = TaskService(store if store is not None else InMemoryTaskStore(), **options)
    _keep(server, service)
    return service


def service_for(server: ServerStub) -> TaskService:
    """The task service of a server object: made with the defaults on first use, kept by its host
    (nothing is written into the server object) and dropped with it."""
    return host_for(server).state_of(TaskService)


def _keep(server: ServerStub, service: TaskService) -> None:
    host_for(server).keep(TaskService, service)


def requester_of(session: Session, peer: PeerSession | None) -> str | None:
    """Whom a task belongs to: the principal the transport authenticated, else the connection (an
    HTTP session's on whichever worker serves it)."""
    if session.principal is not None:
        return f"principal:{session.principal}"
    if session.connection is not None:
        return f"connection:{session.connection}"
    if peer is not None:
        return f"connection:{peer.id}"
    return None


def quota_of(session: Session, peer: PeerSession | None) -> str | None:
    """What a new task counts against (the store's per-requester bound): the requester where there is
    one, else the client's address as the transport reports it (`Session.peer_address`: a stateless
    request without auth, whose task belongs to no one, so that one client cannot fill the bound of
    every anonymous client). By IP, not IP and port: more connections are not more room."""
    requester = requester_of(session, peer)
    if requester is not None or session.peer_address is None:
        return requester
    return f"address:{session.peer_address}"


def outcome_of(spec: MethodSpec, result: Any, tool_errors_fail: bool = True) -> dict[str, Any]:
    """A finished work's result -> the task's terminal state (2025-11-25: a tool result with
    `isError: true` fails the task, `tasks/result` still returns it; the tasks extension keeps
    `failed` for JSON-RPC errors: such a task is `completed`)."""
    try:
        typed = versions.validate(spec.result, result) if isinstance(result, dict) else result
    except ValidationError as exc:
        log.error("%s task work returned an invalid result: %s", spec.method, exc)
        typed = None
    if typed is None or (isinstance(spec.result, type) and not isinstance(typed, spec.result)):
        message = f"Internal error: the {spec.method} task returned the wrong type"
        return {"status": "failed", "error": {"code": INTERNAL_ERROR, "message": message}, "status_message": message}
    data = versions.dump(typed)
    if tool_errors_fail and isinstance(data, dict) and data.get("isError") is True:
        return {"status": "failed", "result": data, "status_message": "The tool reported an error"}
    return {"status": "completed", "result": data}


# The task whose work runs in the current context (set by `TaskService._run`).
_CURRENT_TASK: contextvars.ContextVar[str | None] = contextvars.ContextVar("mcp_current_task", default=None)


def current_task_id() -> str | None:
    """The id of the task whose work is running in the current context (None outside task work)."""
    return _CURRENT_TASK.get()


async def announce(peer: PeerSession | None, state: TaskState) -> None:
    if peer is None:
        return
    try:
        await peer.deliver(TASK_STATUS, state.wire(), None)
    except (McpError, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
        log.debug("task status of %s not sent: %s", state.task_id, exc)


def _spawn(run: Callable[[], Awaitable[None]]) -> None:
    """Run `run()` detached from the caller's task group: on asyncio, a loop task (kept referenced
    until done); on trio, a system task. Task work outlives the request and connection that started it."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # trio (anyio's other backend)
        importlib.import_module("trio.lowlevel").spawn_system_task(run)
        return
    task = loop.create_task(cast("Any", run()))
    _BACKGROUND.add(task)
    task.add_done_callback(_BACKGROUND.discard)


_BACKGROUND: set[asyncio.Task[None]] = set()
