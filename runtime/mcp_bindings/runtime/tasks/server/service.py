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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import anyio
from pydantic import ValidationError

from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.protocol.spec import MethodSpec
from mcp_bindings.runtime.rpc import logs
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, McpError
from mcp_bindings.runtime.server.host import host_for
from mcp_bindings.runtime.tasks.core.handshake import RELATED_TASK, TASK_STATUS
from mcp_bindings.runtime.tasks.core.runner import TaskRunner
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
class TaskService(TaskRunner):
    """The tasks of one server object (`TaskRunner`: where they are kept, the work running for them,
    the TTLs it grants, tasks/get|result|list|cancel), and what only a server keeps of them."""

    # tool name -> `execution.taskSupport` as the server last listed it (absent: "forbidden")
    tool_support: dict[str, str] = field(default_factory=dict[str, str])
    # task id -> key -> the outstanding questions of its work (tasks extension, this process's)
    inputs: dict[str, dict[str, PendingInput]] = field(default_factory=dict[str, dict[str, PendingInput]])

    async def create(self, session: Session, peer: PeerSession | None, method: str, requested_ttl: Any) -> TaskState:
        """A new task for the requester of `session` (`requester_of`), counted against `quota_of`."""
        return await self.store.create(
            requester_of(session, peer),
            method,
            ttl_ms=self.ttl_for(requested_ttl),
            poll_interval_ms=self.poll_interval_ms,
            quota=quota_of(session, peer),
        )

    def start(self, state: TaskState, work: Awaitable[Any], context: TaskContext) -> None:
        _spawn(functools.partial(self._run, state, work, context, self.scope_for(state)))

    async def _run(
        self, state: TaskState, work: Awaitable[Any], context: TaskContext, scope: anyio.CancelScope
    ) -> None:
        token = _CURRENT_TASK.set(state.task_id)
        try:
            await self.finish(state, _outcome(context, work), scope, context.announce)
        finally:
            _CURRENT_TASK.reset(token)


async def _outcome(context: TaskContext, work: Awaitable[Any]) -> dict[str, Any]:
    return outcome_of(context.spec, await work, context.tool_errors_fail)


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
