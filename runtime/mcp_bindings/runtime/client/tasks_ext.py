"""Tasks on the typed client at 2026-07-28: the requestor side of the `io.modelcontextprotocol/tasks`
extension.

A client opts in by declaring the extension on its handlers, as it declares any extension:

    handlers = ClientHandlers()
    handlers.use_extension("io.modelcontextprotocol/tasks")  # tasks_wire.EXTENSION

Every request then carries the extension in its client capabilities, and the server may answer a
`tools/call` with a task (`resultType: "task"`, the server decides). The typed `call_tool(...)` then
returns a `ToolTask` instead of the `CallToolResult`; `await finished(answer)` gives the result
either way. Without the opt-in nothing changes (a server that answers with a task anyway is an error).
The core `Client.call_tool` is typed for clients that did not opt in (`-> CallToolResult`); an
opted-in client calls the extension's generated `Calls(client.session).call_tool(...)`
(`mcp_bindings.ext.io_modelcontextprotocol_tasks.client`), typed `CallToolResult | ToolTask[CallToolResult]`.

`ToolTask`: `get()` (`tasks/get`, the typed `GetTaskResult`), `update(responses=None)` (`tasks/update`;
without `responses` the outstanding `inputRequests` are answered by the client's own input handlers,
the ones multi-round-trip requests use), `cancel()` (`tasks/cancel`) and `result()`, which polls at
the server's `pollIntervalMs` (answering input requests on the way) until the task is terminal and
returns the `CallToolResult` or raises the task's JSON-RPC error (`TaskCancelledError` for a
cancelled task), bounded by the task's TTL; `result(follow=True)` also wakes on the server's
`notifications/tasks` over a `subscriptions/listen` stream for this task.
"""

from __future__ import annotations

import math
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

import anyio
from pydantic import ValidationError

from mcp_bindings.ext.io_modelcontextprotocol_tasks import models as ext
from mcp_bindings.ext.io_modelcontextprotocol_tasks import names
from mcp_bindings.ext.io_modelcontextprotocol_tasks.methods import EXTENSION as TASKS
from mcp_bindings.runtime.client.handling import answer_input_requests
from mcp_bindings.runtime.client.seam import Finished, OutgoingCall, Send
from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.protocol.custom_methods import peer_declares
from mcp_bindings.runtime.protocol.spec import MethodSpec
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, McpError
from mcp_bindings.runtime.rpc.jsonrpc import first_problem, json_object
from mcp_bindings.runtime.tasks.core import wire as tasks_wire
from mcp_bindings.runtime.tasks.core.store import TERMINAL
from mcp_bindings.v2026_07_28 import names as v2026

if TYPE_CHECKING:
    from mcp_bindings.runtime.client.listen import ListenStream
    from mcp_bindings.runtime.client.runtime import ClientRuntime

__all__ = [
    "TASK",
    "TaskCancelledError",
    "TaskExpiredError",
    "ToolTask",
    "ToolTasks",
    "finished",
    "opted_in",
    "task_answer",
]

R = TypeVar("R")

TASK = "task"  # the resultType of a CreateTaskResult
DEFAULT_POLL_MS = 1000  # when the server gives no pollIntervalMs
MIN_POLL_S = 0.01  # never busy-loop, whatever the server says
TTL_GRACE_S = 1.0  # clock skew between the server's createdAt and our receipt of the task


class TaskCancelledError(McpError):
    """`result()` of a task that was cancelled (by `cancel()`, or by the server)."""

    def __init__(self, task_id: str, message: str | None) -> None:
        super().__init__(INTERNAL_ERROR, f"task {task_id} was cancelled" + (f": {message}" if message else ""))
        self.task_id = task_id


class TaskExpiredError(McpError):
    """`result()` of a task still not terminal when its TTL ran out (the server may discard it)."""

    def __init__(self, task_id: str, ttl_ms: int) -> None:
        super().__init__(INTERNAL_ERROR, f"task {task_id} did not finish within its TTL ({ttl_ms} ms)")
        self.task_id = task_id


def opted_in(runtime: ClientRuntime) -> bool:
    """Whether this client declares the tasks extension (on its handlers)."""
    return runtime.stateless and peer_declares(runtime.capabilities, tasks_wire.EXTENSION)


def task_answer(runtime: ClientRuntime, stub_spec: MethodSpec, spec: MethodSpec, raw: Any) -> ToolTask[Any] | None:
    """The handle for a `CreateTaskResult` answer (None: `raw` is no task). A task sent to a client
    that did not opt in, or for a method the extension does not cover, is -32603 naming why."""
    if not (isinstance(raw, dict) and cast("dict[str, Any]", raw).get("resultType") == TASK):
        return None
    why = None
    if spec.method not in tasks_wire.SUPPORTED_METHODS:
        why = "the extension covers only " + ", ".join(sorted(tasks_wire.SUPPORTED_METHODS))
    elif not opted_in(runtime):
        why = "this client did not declare the extension"
    if why is not None:
        raise McpError(INTERNAL_ERROR, f"the server answered {spec.method} with a task ({tasks_wire.EXTENSION}): {why}")
    try:
        created = versions.validate(ext.CreateTaskResult, raw)
    except ValidationError as exc:
        why = first_problem(exc)
        raise McpError(INTERNAL_ERROR, f"invalid {spec.method} task from the server: {why}") from None
    return ToolTask(runtime, stub_spec, created)


async def finished(answer: Any) -> Any:
    """The result of a typed call whether the server answered at once or with a task (a `ToolTask`,
    or at 2025-11-25 a `task_handle.TaskHandle`): `result = await finished(await client.call_tool(...))`."""
    return await answer.result() if isinstance(answer, Finished) else answer


class ToolTasks:
    """The hook (`client.seam`) that makes a stateless-era request answered with a task a `ToolTask`
    (inside the `typed` hook: it reads the decoded answer)."""

    def __init__(self, runtime: ClientRuntime) -> None:
        self._runtime = runtime

    def wrap(self, spec: MethodSpec, send: Send) -> Send:
        if not self._runtime.stateless:  # the chain is built per negotiated version
            return send

        async def answered(call: OutgoingCall) -> Any:
            raw = await send(call)
            handle = task_answer(call.runtime, call.stub_spec, call.spec, raw)
            return raw if handle is None else handle

        return answered


class ToolTask(Finished, Generic[R]):
    """A task the server runs for one of this client's requests (the extension's requestor side).

    `task` is what was last seen of it (the `CreateTaskResult`, then each `GetTaskResult`)."""

    def __init__(self, runtime: ClientRuntime, stub_spec: MethodSpec, created: ext.CreateTaskResult) -> None:
        self._runtime = runtime
        self._stub_spec = stub_spec
        self.task: Any = created
        self.task_id: str = created.task_id
        ttl = created.ttl_ms
        self._ttl_ms = ttl
        self._deadline = math.inf if ttl is None else anyio.current_time() + ttl / 1000 + TTL_GRACE_S
        self._answered: set[str] = set()  # input request keys this handle has answered

    def __repr__(self) -> str:
        return f"<ToolTask {self._stub_spec.method} {self.task_id} {self.status}>"

    @property
    def status(self) -> str:
        """The status last seen (`get()` refreshes it)."""
        return cast("str", self.task.status)

    @property
    def poll_interval(self) -> float:
        """Seconds between polls: the server's `pollIntervalMs` last seen."""
        ms = getattr(self.task, "poll_interval_ms", None)
        return max(MIN_POLL_S, (ms if isinstance(ms, int) else DEFAULT_POLL_MS) / 1000)

    async def get(self) -> ext.GetTaskResult:
        """`tasks/get`: the task now, with its result, error or outstanding input requests inlined."""
        self.task = await self._runtime.call_extension(TASKS[names.TASKS_GET], {"taskId": self.task_id})
        ttl = getattr(self.task, "ttl_ms", None)
        if isinstance(ttl, int) and ttl != self._ttl_ms:  # the server may change it
            self._deadline += (ttl - (self._ttl_ms or 0)) / 1000
            self._ttl_ms = ttl
        return cast("ext.GetTaskResult", self.task)

    async def update(self, responses: dict[str, Any] | None = None) -> None:
        """`tasks/update`: answers to the task's `inputRequests` (by key). Without `responses`, the
        outstanding requests (from a fresh `get()` unless the last one showed them) not answered
        yet are answered by the client's input handlers (`ClientHandlers.elicit`, `create_message`,
        `list_roots`), as in a multi-round-trip request; a handler's error is raised, nothing sent."""
        if responses is None:
            if self.status != "input_required":
                await self.get()
            asks = cast("dict[str, Any]", versions.dump(getattr(self.task, "input_requests", None) or {}))
            requests = {key: ask for key, ask in asks.items() if key not in self._answered}
            if not requests:
                return
            responses = await answer_input_requests(self._runtime, requests)
        params = {"taskId": self.task_id, "inputResponses": dict(responses)}
        await self._runtime.call_extension(TASKS[names.TASKS_UPDATE], params)
        self._answered.update(responses)

    async def cancel(self) -> None:
        """`tasks/cancel`: acknowledged whether the task was running or had already finished."""
        await self._runtime.call_extension(TASKS[names.TASKS_CANCEL], {"taskId": self.task_id})

    async def result(self, *, follow: bool = False, timeout: float | None = None) -> R:
        """Poll until the task is terminal, answering input requests through the handlers; then the
        request's typed result, or its error raised (`McpError` with the task's code and message,
        `TaskCancelledError`). Bounded by the task's TTL (`TaskExpiredError`) and `timeout`
        (seconds, `TimeoutError`). `follow=True` also wakes on `notifications/tasks` for this
        task over `subscriptions/listen` (polls stay the backstop)."""
        with anyio.fail_after(timeout):
            async with AsyncExitStack() as stack:
                stream = await self._follow(stack) if follow else None
                while True:
                    state = await self.get()
                    if state.status in TERMINAL:
                        return self._outcome(state)
                    if state.status == "input_required" and self._unanswered(state):
                        await self.update()
                        continue
                    if anyio.current_time() >= self._deadline:
                        raise TaskExpiredError(self.task_id, self._ttl_ms or 0)
                    wait = min(self.poll_interval, max(MIN_POLL_S, self._deadline - anyio.current_time()))
                    with anyio.move_on_after(wait):
                        if stream is None:
                            await anyio.sleep(wait)
                        elif await anext(stream, None) is None:  # the server ended the stream: poll only
                            stream = None
                            await anyio.sleep(wait)

    def _unanswered(self, state: Any) -> bool:
        asks = getattr(state, "input_requests", None)
        return isinstance(asks, dict) and any(key not in self._answered for key in cast("dict[str, Any]", asks))

    async def _follow(self, stack: AsyncExitStack) -> ListenStream | None:
        """A listen stream for this task's status notifications, or None when the server has none."""
        if self._runtime.stub.client_requests.get(v2026.SUBSCRIPTIONS_LISTEN) is None:
            return None
        extra = {tasks_wire.TASK_STATUS: TASKS[tasks_wire.TASK_STATUS].spec}
        stream = await stack.enter_async_context(self._runtime.listen({"taskIds": [self.task_id]}, extra=extra))
        agreed = stream.agreed.get("taskIds")
        return stream if isinstance(agreed, list) and self.task_id in agreed else None

    def _outcome(self, state: Any) -> R:
        if state.status == "completed":
            data = dict(cast("dict[str, Any]", state.result))
            data.setdefault("resultType", "complete")
            model = self._stub_spec.result
            try:
                return cast("R", versions.validate(model, data) if model is not None else data)
            except ValidationError as exc:
                why = first_problem(exc)
                raise McpError(
                    INTERNAL_ERROR, f"invalid {self._stub_spec.method} result of task {self.task_id}: {why}"
                ) from None
        if state.status == "failed":
            raise McpError.from_error(json_object(versions.dump(state.error)))
        raise TaskCancelledError(self.task_id, state.status_message)
