"""Tasks (MCP 2025-11-25, core): a task-augmented request is answered at once with a
`CreateTaskResult` while its work goes on; the requestor polls it with `tasks/get`, blocks on
`tasks/result`, lists and cancels its tasks; the receiver may send `notifications/tasks/status`.

The server side. A server takes part by declaring the capability, e.g.
`declared_capabilities = {"tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}`;
the runtime then serves `tasks/get|result|list|cancel` itself (`tasks.methods`) from the server's
`TaskService` (unless the server overrides their handlers), whose store is an `InMemoryTaskStore`
unless `configure` says otherwise. A handler of a method advertised under `tasks.requests` runs its work as a task with
`await run_as_task(ctx, work)` (or the `as_task` decorator): for a task-augmented request that creates
the task, starts the work in the background and returns the `CreateTaskResult`; for any other request
it just runs the work. What the runtime enforces around such a handler (`augment`, hooked into the
method's plan): a `CreateTaskResult` only for a task-augmented request; a task-augmented request
whose handler answered at once still gets a `CreateTaskResult` (its task is already complete); and
for `tools/call` the tool-level negotiation: a tool listed without `execution.taskSupport` (or with
"forbidden") refuses task-augmented calls, and one listed as "required" refuses other calls, both
with -32601 before the handler runs.

Task work outlives its request, and its connection: it runs detached from both (on the event loop,
not in the request's task group), bounded by the task's TTL and cancelled by `tasks/cancel`.
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
service and store, server-directed creation, served by `tasks_extension` (`run_as_task` and
`augment` hand stateless-era requests to it). Task-augmented requests from a server's handler to
its client (sampling, elicitation): `tasks_outgoing.request_as_task`.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import importlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast

import anyio
from pydantic import ValidationError

from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.protocol.spec import MethodSpec, ProtocolTables
from mcp_bindings.runtime.protocol.tasks_core import RELATED_TASK, TASK_STATUS, create_task_result, task_capability
from mcp_bindings.runtime.rpc import logs
from mcp_bindings.runtime.rpc.calls import PROGRESS_TOKEN
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, McpError
from mcp_bindings.runtime.rpc.jsonrpc import RequestId, json_object
from mcp_bindings.runtime.server.bridge import outgoing_request
from mcp_bindings.runtime.server.host import host_for
from mcp_bindings.runtime.server.peer import LOG_LEVELS, PeerView
from mcp_bindings.runtime.tasks.store import InMemoryTaskStore, TaskState, TaskStore
from mcp_bindings.v2026_07_28 import names as v2026

if TYPE_CHECKING:
    from mcp_bindings.runtime.rpc.session import Session
    from mcp_bindings.runtime.server.calls import ServerCall
    from mcp_bindings.runtime.server.context import PeerSession, ServerRequestContext
    from mcp_bindings.runtime.server.seam import ServerAround, ServerNext
    from mcp_bindings.runtime.server.stubs import ServerStub

__all__ = [
    "RELATED_TASK",
    "TaskContext",
    "TaskService",
    "configure",
    "current_task_id",
    "quota_of",
    "requester_of",
    "run_in_handshake_era",
    "service_for",
    "stateless_request",
]

log = logs.logger("tasks")

T = TypeVar("T")

PROGRESS = v2026.NOTIFICATIONS_PROGRESS
LOG_MESSAGE = v2026.NOTIFICATIONS_MESSAGE
TOOLS_CALL = v2026.TOOLS_CALL
TOOLS_LIST = v2026.TOOLS_LIST


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
                    outcome = _outcome(context.spec, await work, context.tool_errors_fail)
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
    host = host_for(server)
    if host.tasks is None:
        host.tasks = TaskService()
    service: TaskService = host.tasks
    return service


def _keep(server: ServerStub, service: TaskService) -> None:
    host_for(server).tasks = service


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


# -- which version has tasks, and for which methods ------------------------------------------------


def _augmentable(protocol: ProtocolTables, method: str) -> bool:
    path = ".".join(task_capability(method).path)
    return path in protocol.server_capability_paths and create_task_result(protocol) is not None


def augment(server: ServerStub, view: PeerView, spec: MethodSpec) -> tuple[ServerAround | None, type[Any] | None]:
    """What a handshake-era method's plan runs around its handler where tasks apply (`tasks.plugin`),
    and the `CreateTaskResult` type its handler may answer with (None: it may not). None elsewhere."""
    protocol = view.protocol
    if protocol is not server.protocol or create_task_result(protocol) is None:
        return None, None
    if spec.method == TOOLS_LIST and task_capability(TOOLS_CALL).present_in(view.advertised):
        return _ToolListHook(service_for(server)), None
    if not _augmentable(protocol, spec.method) or not task_capability(spec.method).present_in(view.advertised):
        return None, None
    model = create_task_result(protocol)
    return _TaskHook(service_for(server), spec, model), model


class _ToolListHook:
    """Remembers each listed tool's `execution.taskSupport` (tool-level task negotiation)."""

    __slots__ = ("service",)

    def __init__(self, service: TaskService) -> None:
        self.service = service

    async def __call__(self, call: ServerCall, next: ServerNext) -> object:
        result = await next(call)
        data = versions.dump(result)
        tools = data.get("tools") if isinstance(data, dict) else None
        for tool in tools if isinstance(tools, list) else ():
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                execution = json_object(tool.get("execution"))
                support = execution.get("taskSupport")
                self.service.tool_support[tool["name"]] = support if isinstance(support, str) else "forbidden"
        return result


class _TaskHook:
    """Around the handler of a method advertised under `tasks.requests`."""

    __slots__ = ("model", "service", "spec")

    def __init__(self, service: TaskService, spec: MethodSpec, model: Any) -> None:
        self.service = service
        self.spec = spec
        self.model = model

    async def __call__(self, call: ServerCall, next: ServerNext) -> object:
        raw = call.raw
        augmented = isinstance(raw, dict) and raw.get("task") is not None
        if self.spec.method == TOOLS_CALL:
            self._check_tool(raw, augmented)
        result: Any = await next(call)
        if isinstance(result, dict) and "task" in result and "content" not in result:
            result = versions.checked(self.model, result, f"the {self.spec.method} CreateTaskResult")
        if type(result) is self.model:
            if not augmented:
                raise McpError(
                    INTERNAL_ERROR,
                    f"Internal error: the {self.spec.method} handler created a task for a request without `task`",
                )
            return result
        if not augmented:
            return result
        # The handler answered at once: what the requestor gets is a task, already finished.
        return await _finished(call.context, self.service, self.spec, self.model, raw, result)

    def _check_tool(self, raw: Any, augmented: bool) -> None:
        name = raw.get("name") if isinstance(raw, dict) else None
        support = self.service.tool_support.get(name) if isinstance(name, str) else None
        if support is None:
            return  # never listed: not checked (as tool_schemas does with schemas)
        if augmented and support not in ("optional", "required"):
            raise McpError(
                METHOD_NOT_FOUND,
                f"Method not found: tool {name!r} cannot be called as a task (execution.taskSupport: {support})",
            )
        if not augmented and support == "required":
            raise McpError(
                METHOD_NOT_FOUND,
                f"Method not found: tool {name!r} must be called as a task (execution.taskSupport: required)",
            )


async def _finished(context: Any, service: TaskService, spec: MethodSpec, model: Any, raw: Any, result: Any) -> Any:
    session, peer, _ = _parts(context)
    requester = requester_of(session, peer)
    ttl = service.ttl_for(json_object(json_object(raw).get("task")).get("ttl"))
    state = await service.store.create(
        requester, spec.method, ttl_ms=ttl, poll_interval_ms=service.poll_interval_ms, quota=quota_of(session, peer)
    )
    done = await service.store.update(state.task_id, **_outcome(spec, result))
    return versions.validate(model, {"task": (done or state).wire()})


def _outcome(spec: MethodSpec, result: Any, tool_errors_fail: bool = True) -> dict[str, Any]:
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


# -- running work as a task ------------------------------------------------------------------------


# The task whose work runs in the current context (set by `TaskService._run`).
_CURRENT_TASK: contextvars.ContextVar[str | None] = contextvars.ContextVar("mcp_current_task", default=None)


def current_task_id() -> str | None:
    """The id of the task whose work is running in the current context (None outside task work)."""
    return _CURRENT_TASK.get()


async def run_in_handshake_era(
    ctx: Any, work: Awaitable[T] | Callable[[Any], Awaitable[T]], *, required: bool = False
) -> Any:
    """`tasks.run_as_task` (`tasks.api`) for a handshake-era request: a task where the request is
    task-augmented and the method's task support is advertised, else the work now; `required=True`
    refuses a request that is not task-augmented with -32601 (as a tool whose taskSupport is
    "required")."""
    augmented = _augmentation(ctx)
    if augmented is None:
        if required:  # 2025-11-25: a request that must be a task but is not task-augmented is -32601
            discard(work)
            method = getattr(getattr(ctx, "_request", None), "method", "the request")
            raise McpError(METHOD_NOT_FOUND, f"Method not found: {method} must be a task-augmented request here")
        return await (work(ctx) if callable(work) else work)
    spec, model, requested_ttl = augmented
    session, peer, _ = _parts(ctx)
    service = service_for(ctx.server)
    state = await service.store.create(
        requester_of(session, peer),
        spec.method,
        ttl_ms=service.ttl_for(requested_ttl),
        poll_interval_ms=service.poll_interval_ms,
        quota=quota_of(session, peer),
    )
    task_context = TaskContext(ctx, state.task_id, service, spec)
    service.start(state, output_checked(ctx, spec, work(task_context) if callable(work) else work), task_context)
    return versions.validate(model, {"task": state.wire()})


def discard(work: object) -> None:
    """Close a coroutine that will not run (a refused request's work), so none is left un-awaited."""
    close = getattr(work, "close", None) if asyncio.iscoroutine(work) else None
    if close is not None:
        close()


def output_checked(ctx: Any, spec: MethodSpec, work: Awaitable[T]) -> Awaitable[T]:
    """A tools/call task's work whose eventual result is checked against the tool's outputSchema (as
    last listed by the server: `tool_schemas`), as an immediate result is; a violation fails the task
    with the same -32603 an immediate call gets. Unchanged where nothing is to be checked."""
    if spec.method != TOOLS_CALL or not ctx.server.validate_tools:
        return work
    from mcp_bindings.runtime.server.tool_schemas import ServerToolChecks

    name = json_object(ctx._request.params).get("name")  # noqa: SLF001 - the runtime's own context type
    checks = ServerToolChecks(ctx.server)
    tool = checks.shared.tools.get(name) if isinstance(name, str) else None
    if tool is None:
        return work

    async def checked() -> T:
        result = await work
        tool.resolve()
        if tool.output_schema is not None:
            checks._check_result(tool.name, tool.output_schema, result)  # noqa: SLF001 - same check as a call's
        return result

    return checked()


def stateless_request(ctx: Any) -> bool:
    """Whether a handler's context serves a stateless-era (2026-07-28) request (not a task's work)."""
    if isinstance(ctx, TaskContext):
        return False  # already inside a task's work
    try:
        return bool(_parts(ctx)[2].stateless)
    except AttributeError:
        return False


def _parts(ctx: Any) -> tuple[Session, PeerSession | None, PeerView]:
    """The session, connection and view a server request context serves (its own attributes)."""
    inner = ctx.inner if isinstance(ctx, TaskContext) else ctx
    return inner._session, inner._peer, inner._view  # noqa: SLF001 - the runtime's own context type


def _augmentation(ctx: Any) -> tuple[MethodSpec, Any, Any] | None:
    """(spec, CreateTaskResult type, requested ttl) where `ctx` serves a task-augmented request whose
    method's task support the server advertises to this client; None otherwise."""
    if isinstance(ctx, TaskContext):
        return None  # already inside a task's work
    try:
        _, _, view = _parts(ctx)
        request = ctx._request  # noqa: SLF001 - the runtime's own context type
    except AttributeError:
        return None
    task = json_object(request.params).get("task")
    if not isinstance(task, dict) or view.protocol is not ctx.server.protocol:
        return None
    model = create_task_result(view.protocol)
    spec = view.protocol.client_requests.get(request.method)
    if model is None or spec is None or not task_capability(spec.method).present_in(view.advertised):
        return None
    return spec, model, cast("dict[str, Any]", task).get("ttl")


class TaskContext:
    """The context of a task's work (a `context.RequestContext`): the request's, except that what it
    sends carries the task's `_meta` (`io.modelcontextprotocol/related-task`), goes out on a waiting
    `tasks/result` stream where there is one, and that asking the client moves the task to
    `input_required` for as long as the answer takes."""

    __slots__ = ("_last_progress", "inner", "service", "spec", "task_id")
    tool_errors_fail: ClassVar[bool] = True  # a tool result with isError fails the task (2025-11-25)

    def __init__(self, inner: ServerRequestContext, task_id: str, service: TaskService, spec: MethodSpec) -> None:
        self.inner = inner
        self.task_id = task_id
        self.service = service
        self.spec = spec
        self._last_progress: float | None = None

    # -- as the request's context --------------------------------------------------------------

    @property
    def request_id(self) -> str | int:
        return self.inner.request_id

    @property
    def session(self) -> PeerSession:
        return self.inner.session

    @property
    def protocol_version(self) -> str:
        return self.inner.protocol_version

    @property
    def peer_capabilities(self) -> dict[str, Any]:
        return self.inner.peer_capabilities

    @property
    def server(self) -> ServerStub:
        return self.inner.server

    def allows_log(self, level: str) -> bool:
        return self.inner.allows_log(level)

    async def close_sse_stream(self) -> None:
        """A no-op: the request's response stream was closed when the task was created."""

    async def notify(self, method: str, params: Any = None) -> None:
        await self.inner.notify(method, params)

    # -- what carries the task's _meta ---------------------------------------------------------

    @property
    def meta(self) -> dict[str, Any]:
        return {RELATED_TASK: {"taskId": self.task_id}}

    def _related(self) -> RequestId:
        streams = self.service.result_streams.get(self.task_id)
        return streams[-1] if streams else self.inner.request_id

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        session, _, view = _parts(self)
        request = self.inner._request  # noqa: SLF001 - the runtime's own context type
        token = json_object(json_object(request.params).get("_meta")).get(PROGRESS_TOKEN)
        if token is None:
            return
        if self._last_progress is not None and progress <= self._last_progress:
            raise ValueError(f"progress must increase: {progress} after {self._last_progress}")
        self._last_progress = progress
        params: dict[str, Any] = {PROGRESS_TOKEN: token, "progress": progress, "_meta": self.meta}
        if total is not None:
            params["total"] = total
        if message is not None and versions.defines(view.protocol.server_notifications[PROGRESS].params, "message"):
            params["message"] = message
        await session.notify(PROGRESS, params, related=self._related())

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}")
        if not self.allows_log(level):
            return
        session, _, _ = _parts(self)
        params: dict[str, Any] = {"level": level, "data": data, "_meta": self.meta}
        if logger is not None:
            params["logger"] = logger
        await session.notify(LOG_MESSAGE, params, related=self._related())

    async def request(self, method: str, params: Any = None, *, timeout: float | None = None, raw: bool = False) -> Any:
        """Ask the client (elicitation, sampling) for the task: the task is `input_required` until the
        answer arrives (the spec's flow: the requestor sees it in tasks/get and calls tasks/result,
        whose stream carries the request)."""
        session, _, view = _parts(self)
        data = dict(versions.dump(params) or {}) if params is not None else {}
        data["_meta"] = {**json_object(data.get("_meta")), **self.meta}
        asked = outgoing_request(self.server.protocol, method, data, view)
        await self.set_status("input_required")
        try:
            answer = await session.request(method, asked.data, timeout=timeout, related=self._related())
        finally:
            with anyio.CancelScope(shield=True):
                await self.set_status("working")
        result = asked.answer(answer)
        return versions.dump(result) if raw else result

    async def set_status(self, status: str | None = None, message: str | None = None) -> None:
        """Change the task's status (`working` / `input_required`) or status message, and tell the client."""
        state = await self.service.store.get(requester_of(*_parts(self)[:2]), self.task_id)
        if state is None or state.terminal:
            return
        updated = await self.service.store.update(self.task_id, status=status, status_message=message)
        if updated is not None and not updated.terminal and (updated.status != state.status or message is not None):
            await self.announce(updated)

    async def announce(self, state: TaskState) -> None:
        """`notifications/tasks/status` to the requestor's connection (where it is still there)."""
        await announce(self.inner.session, state)


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
