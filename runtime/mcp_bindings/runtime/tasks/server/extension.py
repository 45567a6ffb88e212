"""Tasks at 2026-07-28: the `io.modelcontextprotocol/tasks` extension, server side.

A server takes part by declaring the extension, exactly as the extension specifies:
`declared_capabilities = {..., "extensions": {"io.modelcontextprotocol/tasks": {}}}`; the runtime
then serves `tasks/get`, `tasks/update` and `tasks/cancel` itself from the server's `TaskService`
(`tasks.service_for` / `tasks.configure`: the same store, TTLs and limits as core tasks).

Task creation is server-directed: a `tools/call` handler answers with `await run_as_task(ctx, work)`
(`tasks.run_as_task`, `tasks.as_task`), which makes the work a task where the request's client
capabilities (its `_meta`, per request) declare the extension, and otherwise runs it at once, or,
with `required=True`, refuses with -32021 naming the extension (`requiredCapabilities`). A task's
work asks the client through its context (`await ctx.request(names.ELICITATION_CREATE, params)`, a version's name): the
task is `input_required` with the ask under a fresh key in `inputRequests` (tasks/get) until a
`tasks/update` answers that key; several asks may be outstanding at once and are answered one by one.

What the requestor sees (`tasks.core.wire` has the shapes): a flat `CreateTaskResult` (`resultType:
"task"`); tasks/get inlines the result (a tool result with `isError: true` is still `completed`;
`failed` is for a JSON-RPC error, inlined as `error`); tasks/update and tasks/cancel answer an empty
acknowledgement (cancelling a finished task too); an unknown, foreign or expired task id is -32602;
a request from a client that did not declare the extension is -32021. Progress and log
notifications are not sent for tasks (the extension does not support them); status changes go as
`notifications/tasks` to the `subscriptions/listen` streams that asked for the task (`taskIds`).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, cast

import anyio
from pydantic import ValidationError

from mcp_bindings.ext.io_modelcontextprotocol_tasks import names
from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.protocol.custom_methods import (
    EXTENSIONS,
    Bound,
    CustomMethod,
    peer_declares,
    request,
)
from mcp_bindings.runtime.protocol.spec import MethodSpec
from mcp_bindings.runtime.rpc import logs
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, INVALID_PARAMS, McpError
from mcp_bindings.runtime.rpc.jsonrpc import first_problem, json_object
from mcp_bindings.runtime.server import notifications
from mcp_bindings.runtime.server.bus import Forwarder, WorkerGone, operation
from mcp_bindings.runtime.server.extensions import serve_bound
from mcp_bindings.runtime.server.host import host_for
from mcp_bindings.runtime.server.seam import Plan
from mcp_bindings.runtime.tasks.core import wire as tasks_wire
from mcp_bindings.runtime.tasks.core.store import TaskState
from mcp_bindings.runtime.tasks.server.context import TaskContext, parts
from mcp_bindings.runtime.tasks.server.running import begin, discard
from mcp_bindings.runtime.tasks.server.service import PendingInput, TaskService, requester_of, service_for

if TYPE_CHECKING:
    from mcp_bindings.runtime.rpc.session import Session
    from mcp_bindings.runtime.server.peer import PeerView
    from mcp_bindings.runtime.server.stubs import ServerStub

__all__ = ["ExtensionTaskContext", "declared", "plan", "run_as_task"]

log = logs.logger("tasks")

MISSING_CAPABILITY = -32021  # MISSING_REQUIRED_CLIENT_CAPABILITY where the version does not name it


def declared(server: ServerStub) -> bool:
    """Whether the server declares (or registered) the tasks extension."""
    if tasks_wire.EXTENSION in json_object(json_object(server.capabilities).get(EXTENSIONS)):
        return True
    methods = host_for(server).methods
    return methods is not None and tasks_wire.EXTENSION in methods.extensions


def missing_capability(view: PeerView, what: str) -> McpError:
    code = view.protocol.error_codes.missing_required_client_capability or MISSING_CAPABILITY
    return McpError(
        code,
        f"Missing required client capability: {what} needs the {tasks_wire.EXTENSION} extension "
        "declared in the request's client capabilities",
        tasks_wire.missing_capability_data(),
    )


def _view(ctx: Any) -> PeerView:
    return parts(ctx)[2]


def _gate(ctx: Any, method: str) -> None:
    view = _view(ctx)
    if not peer_declares(view.client_capabilities, tasks_wire.EXTENSION):
        raise missing_capability(view, method)


async def _lookup(ctx: Any, task_id: str) -> tuple[TaskService, Any]:
    session, peer, _ = parts(ctx)
    service = service_for(ctx.server)
    return service, await service.lookup(requester_of(session, peer), task_id)


# -- tasks/get, tasks/update, tasks/cancel ---------------------------------------------------------


async def _announce(server: ServerStub, service: TaskService, state: TaskState) -> None:
    """`notifications/tasks` (the task as tasks/get shows it) to the `subscriptions/listen` streams that
    asked for this task (`host.ServerHost`; with a bus, other workers' streams too)."""
    pending = service.inputs.get(state.task_id, {})
    data = tasks_wire.detailed(state, {key: ask.request for key, ask in pending.items()})
    try:
        await notifications.broadcast(host_for(server), tasks_wire.TASK_STATUS, data)
    except Exception as exc:  # noqa: BLE001 - a status notification is best effort; the task goes on
        log.debug("task status of %s not sent: %s", state.task_id, exc)


async def listen_filter(view: PeerView, session: Session, wanted: Mapping[str, Any]) -> list[str] | None:
    """The task ids a `subscriptions/listen` request (`notifications.taskIds`) gets status notifications
    for: those of its requester's tasks that exist (None: not asked, or the extension not offered);
    -32021 for a client that did not declare the extension."""
    asked = wanted.get("taskIds")
    server = getattr(session.dispatcher, "server", None)
    if asked is None or server is None or not view.stateless or not declared(server):
        return None
    if not peer_declares(view.client_capabilities, tasks_wire.EXTENSION):
        raise missing_capability(view, "subscriptions/listen for taskIds")
    service = service_for(server)
    requester = requester_of(session, None)
    agreed: list[str] = []
    for task_id in cast("list[Any]", asked) if isinstance(asked, list) else []:
        if isinstance(task_id, str) and await service.store.get(requester, task_id) is not None:
            agreed.append(task_id)
    return agreed


async def _get(params: tasks_wire.GetTaskParams, ctx: Any) -> dict[str, Any]:
    _gate(ctx, names.TASKS_GET)
    service, state = await _lookup(ctx, params.task_id)
    pending = service.inputs.get(state.task_id)
    if pending is None and state.status == "input_required":  # several workers: asked where its work runs
        try:
            asks = await _at_owner(ctx.server, service, ASKS, {"t": state.task_id})
        except McpError as exc:
            log.debug("input asks of task %s not read from its worker: %s", state.task_id, exc.message)
            asks = None
        return tasks_wire.detailed(state, cast("dict[str, Any]", asks) if isinstance(asks, dict) else {})
    return tasks_wire.detailed(state, {key: ask.request for key, ask in (pending or {}).items()})


async def _update(params: tasks_wire.UpdateTaskParams, ctx: Any) -> dict[str, Any]:
    """Deliver answers to outstanding asks (others are ignored, as the extension says); the task is
    `working` again once none is outstanding. Several workers: the asks wait where the task's work
    runs, so the answers are forwarded there; if that worker is gone, -32603 until its lease lapses
    (the task is then `failed`, and the update acknowledged like any to a finished task)."""
    _gate(ctx, names.TASKS_UPDATE)
    service, state = await _lookup(ctx, params.task_id)
    if state.task_id not in service.inputs and not state.terminal:
        try:
            if await _at_owner(ctx.server, service, UPDATE, {"t": state.task_id, "r": params.input_responses}):
                return {}
        except WorkerGone:
            if (await _lookup(ctx, params.task_id))[1].terminal:
                return {}
            raise McpError(
                INTERNAL_ERROR,
                f"Internal error: the worker running task {state.task_id} stopped, so its input asks cannot be"
                " answered; the task is reported failed once that worker's lease lapses: create it again",
            ) from None
    await _answer_asks(ctx.server, service, state.task_id, params.input_responses)
    return {}


async def _answer_asks(server: ServerStub, service: TaskService, task_id: str, responses: Mapping[str, Any]) -> None:
    pending = service.inputs.get(task_id, {})
    answered = False
    for key, response in responses.items():
        ask = pending.pop(key, None)
        if ask is None:
            continue
        ask.response = response
        ask.answered.set()
        answered = True
    if answered and not pending:
        service.inputs.pop(task_id, None)
        updated = await service.store.update(task_id, status="working")
        if updated is not None and not updated.terminal:
            await _announce(server, service, updated)


# -- several workers: the asks live where the task's work runs (`bus.Forwarder`) ----------------------

UPDATE = "tasks-extension/update"  # args {"t": task id, "r": inputResponses}; True when delivered
ASKS = "tasks-extension/asks"  # args {"t": task id}; the open asks ({key: {"method", "params"}})


async def _at_owner(server: ServerStub, service: TaskService, op: str, args: dict[str, Any]) -> Any:
    """`op` done by the worker running the task's work; None when that is this worker or there are
    no other workers. `WorkerGone` when that worker is gone."""
    forwarder = host_for(server).find(Forwarder)
    owner_of = getattr(service.store, "owner", None)
    if forwarder is None or owner_of is None:
        return None
    owner = await owner_of(args["t"])
    if not isinstance(owner, str) or owner == forwarder.worker_id:
        return None
    return await forwarder.call(owner, op, args)


@operation(UPDATE)
async def _update_here(server: ServerStub, args: Any) -> bool:
    task_id, responses = json_object(args).get("t"), json_object(args).get("r")
    service = service_for(server)
    if not isinstance(task_id, str) or task_id not in service.inputs or not isinstance(responses, dict):
        return False
    await _answer_asks(server, service, task_id, cast("dict[str, Any]", responses))
    return True


@operation(ASKS)
async def _asks_here(server: ServerStub, args: Any) -> dict[str, Any]:
    task_id = json_object(args).get("t")
    pending = service_for(server).inputs.get(task_id, {}) if isinstance(task_id, str) else {}
    return {key: ask.request for key, ask in pending.items()}


async def _cancel(params: tasks_wire.CancelTaskParams, ctx: Any) -> dict[str, Any]:
    """Acknowledged whether the task was live (now `cancelled`, its work stopped) or already finished."""
    _gate(ctx, names.TASKS_CANCEL)
    service, state = await _lookup(ctx, params.task_id)
    if not state.terminal:
        try:
            await _announce(ctx.server, service, await service.cancel(state))
        except McpError:  # finished meanwhile: the acknowledgement is the same
            pass
    service.inputs.pop(state.task_id, None)
    return {}


_HANDLERS: dict[str, tuple[CustomMethod[Any, Any], Callable[[Any, Any], Awaitable[Any]]]] = {
    method: (request(method, params, None, extension=names.IDENTIFIER), handler)
    for method, params, handler in (
        (names.TASKS_GET, tasks_wire.GetTaskParams, _get),
        (names.TASKS_UPDATE, tasks_wire.UpdateTaskParams, _update),
        (names.TASKS_CANCEL, tasks_wire.CancelTaskParams, _cancel),
    )
}


def plan(server: ServerStub, method: str) -> Plan | None:
    """How the runtime serves an extension method of a server that declared the extension (None:
    not one of them, or not declared)."""
    entry = _HANDLERS.get(method)
    if entry is None or not declared(server):
        return None
    method_spec, handler = entry
    return Plan(method_spec.spec, method_spec.spec, False, functools.partial(serve_bound, Bound(method_spec, handler)))


# -- running work as a task ------------------------------------------------------------------------


def result_model(server: ServerStub, view: PeerView, spec: MethodSpec) -> type[Any] | None:
    """The CreateTaskResult a handler of `spec` may answer with under `view` (None: it may not)."""
    if view.stateless and spec.method in tasks_wire.SUPPORTED_METHODS and declared(server):
        return tasks_wire.CreateTaskResult
    return None


async def run_as_task(
    ctx: Any, work: Awaitable[Any] | Callable[[Any], Awaitable[Any]], *, required: bool = False
) -> Any:
    """`tasks.run_as_task` for a stateless-era request: a task where the server declared the extension,
    the method supports tasks and the request's client capabilities declare the extension; else the
    work now, or -32021 where it must be a task (`required`)."""
    view = _view(ctx)
    method = ctx._request.method  # noqa: SLF001 - the runtime's own context type
    if method not in tasks_wire.SUPPORTED_METHODS or not declared(ctx.server):
        return await (work(ctx) if callable(work) else work)
    if not peer_declares(view.client_capabilities, tasks_wire.EXTENSION):
        if required:
            discard(work)
            raise missing_capability(view, method)
        return await (work(ctx) if callable(work) else work)
    state = await begin(ctx, view.protocol.client_requests[method], work, ExtensionTaskContext, None)
    return tasks_wire.created(state)


class ExtensionTaskContext(TaskContext):
    """The context of a task's work under the extension: asking the client goes through the task's
    `inputRequests` (answered by tasks/update); progress and log notifications are not sent."""

    __slots__ = ("_keys",)
    tool_errors_fail: ClassVar[bool] = False  # a tool result with isError is a `completed` task

    def __init__(self, inner: Any, task_id: str, service: TaskService, spec: MethodSpec) -> None:
        super().__init__(inner, task_id, service, spec)
        self._keys = itertools.count(1)

    async def notify(self, method: str, params: Any = None) -> None:
        log.debug("%s not sent for task %s: a task's request has been answered", method, self.task_id)

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        log.debug("progress of task %s not sent (the tasks extension does not support it)", self.task_id)

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        log.debug("log message of task %s not sent (the tasks extension does not support it)", self.task_id)

    async def request(self, method: str, params: Any = None, *, timeout: float | None = None, raw: bool = False) -> Any:
        """Ask the client (elicitation, sampling, roots): the ask waits in the task's `inputRequests`
        under a fresh key, the task `input_required`, until tasks/update answers it. Returns the
        answer typed by the ask's result model (`raw`: as sent)."""
        view = _view(self)
        ask_spec = view.protocol.input_requests.get(method)
        if ask_spec is None:
            raise ValueError(f"{method} cannot be asked of a client (MCP {view.version} input requests)")
        data = dict(versions.dump(params) or {}) if params is not None else {}
        key = f"{method.replace('/', '-')}-{next(self._keys)}"
        ask = PendingInput({"method": method, "params": data})
        asks = self.service.inputs.setdefault(self.task_id, {})
        asks[key] = ask
        try:
            await self.set_status("input_required")
            with anyio.fail_after(timeout):
                await ask.answered.wait()
        finally:
            if asks.pop(key, None) is not None and not asks:  # not answered (timeout, cancelled)
                self.service.inputs.pop(self.task_id, None)
                with anyio.CancelScope(shield=True):
                    await self.set_status("working")
        if raw or ask_spec.result is None:
            return ask.response
        try:
            return versions.validate(ask_spec.result, ask.response)
        except ValidationError as exc:
            raise McpError(INVALID_PARAMS, f"Invalid params: inputResponses[{key!r}].{first_problem(exc)}") from None

    async def announce(self, state: TaskState) -> None:
        """`notifications/tasks` to the `subscriptions/listen` streams that asked for this task."""
        await _announce(self.server, self.service, state)
