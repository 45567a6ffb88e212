"""The client's task handles (MCP 2025-11-25 tasks, the requestor side): a typed call with `task=`
(`call_tool(name=..., task={"ttl": 60000})`) is sent only if the server advertised
`tasks.requests.<method>` (else `CapabilityError`, nothing sent) and returns a `TaskHandle`: `get()`
(or `status()`), `wait()`, `result()` (the request's typed result), `cancel()` (the 2026-07-28
`tasks_ext.ToolTask` reads the same; `tasks_ext.finished` takes either). `TaskHandles` is the hook
(`client.seam`) that sends such calls."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

import anyio
from pydantic import ValidationError

from mcp_bindings.runtime.client import eras
from mcp_bindings.runtime.client.seam import Finished, OutgoingCall, Send
from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.protocol.spec import MethodSpec, ProtocolTables
from mcp_bindings.runtime.rpc import jsonrpc
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, INVALID_PARAMS, CapabilityError, McpError
from mcp_bindings.runtime.tasks.core.handshake import create_task_result, task_capability
from mcp_bindings.runtime.tasks.core.store import TERMINAL
from mcp_bindings.v2025_11_25 import names as core

if TYPE_CHECKING:
    from mcp_bindings.runtime.client.runtime import ClientRuntime

__all__ = ["TaskHandle", "TaskHandles", "call_as_task"]

R = TypeVar("R")  # the typed result of the request a `TaskHandle` runs


class TaskHandles:
    """The hook of task-augmented requests: a call whose params carry `task` (on a method whose
    params may, in the stub's version or the negotiated one) is sent by `call_as_task` (which
    refuses it where the server has no tasks) and answered with its `TaskHandle`."""

    def __init__(self, stub: ProtocolTables) -> None:
        self._stub = stub

    def wrap(self, spec: MethodSpec, send: Send) -> Send:
        if not (_may_carry_task(spec) or _may_carry_task(self._stub.client_requests.get(spec.method))):
            return send

        async def augmented(call: OutgoingCall) -> Any:
            params = call.params
            if isinstance(params, dict) and cast("dict[str, Any]", params).get("task") is not None:
                return await call_as_task(call)
            return await send(call)

        return augmented


def _may_carry_task(spec: MethodSpec | None) -> bool:
    return spec is not None and versions.defines(spec.params, eras.TASK)


async def call_as_task(call: OutgoingCall) -> TaskHandle[Any]:
    """Send a task-augmented request (params `task`) from the typed client: only to a server that
    advertised `tasks.requests.<method>` (else `CapabilityError`, nothing sent). The handle it
    returns polls, waits for, fetches and cancels the task."""
    runtime, stub_spec, spec = call.runtime, call.stub_spec, call.spec
    assert runtime.protocol is not None and runtime.session is not None
    capability = task_capability(spec.method)
    model = create_task_result(runtime.protocol)
    if model is None or not (runtime.capabilities_known and capability.present_in(runtime.peer_capabilities)):
        raise CapabilityError(spec.method, f"{capability} (task-augmented {spec.method})")
    raw = await runtime.session.request(spec.method, call.params, timeout=call.timeout, on_progress=call.progress)
    if isinstance(raw, dict) and isinstance(raw.get("task"), dict):
        try:
            created = versions.validate(model, raw)
        except ValidationError as exc:
            raise jsonrpc.validation_error(exc, "result") from None
        return TaskHandle(runtime, stub_spec, spec, cast("Any", created).task)
    # The server processed it as an ordinary request: the handle holds the result already.
    return TaskHandle(runtime, stub_spec, spec, None, _typed_result(runtime, stub_spec, spec, raw))


def _typed_result(runtime: ClientRuntime, stub_spec: MethodSpec, spec: MethodSpec, raw: Any) -> Any:
    """The request's result, validated in the session's version, as the stub's type (`eras.result`:
    a 2026-07-28 stub's `CallToolResult` from a 2025-11-25 task)."""
    try:
        value = versions.validate(spec.result, raw)
    except ValidationError as exc:
        why = jsonrpc.first_problem(exc)
        raise McpError(INTERNAL_ERROR, f"invalid {spec.method} task result from the server: {why}") from None
    return eras.result(runtime, stub_spec, spec, value)


@dataclass(eq=False, repr=False)
class TaskHandle(Finished, Generic[R]):
    """A task the server runs for one of this client's requests (from a typed call with `task=`).

    `task` is the `Task` last seen (None when the server answered at once: `result()` returns that).
    `status()` asks `tasks/get`; `wait()` polls it, at the server's `pollInterval`, until the task is
    terminal; `result()` asks `tasks/result`, which blocks until then, and returns the request's own
    typed result (or raises its JSON-RPC error); `cancel()` asks `tasks/cancel`."""

    _runtime: ClientRuntime
    _stub_spec: MethodSpec
    _spec: MethodSpec  # in the negotiated version
    task: Any
    _result: Any = None

    def __repr__(self) -> str:
        status = getattr(self.task, "status", "done")
        return f"<TaskHandle {self._spec.method} {self.task_id or '-'} {status}>"

    @property
    def task_id(self) -> str | None:
        return None if self.task is None else cast("str", self.task.task_id)

    async def _call(self, method: str) -> Any:
        if self.task_id is None:
            raise McpError(INVALID_PARAMS, f"{self._spec.method}: the server answered at once; there is no task")
        # The session's tasks/* (a stub of a version without core tasks, 2026-07-28, gets that version's
        # types: its own have none).
        runtime = self._runtime
        return await runtime.call_method(method, {"taskId": self.task_id}, eras.negotiated(runtime, method).result)

    async def status(self) -> Any:
        """`tasks/get`: the task now (the version's `GetTaskResult`)."""
        self.task = await self._call(core.TASKS_GET)
        return self.task

    async def get(self) -> Any:
        """`tasks/get` (as `status()`; the name the 2026-07-28 `client_tasks_ext.ToolTask` uses)."""
        return await self.status()

    async def wait(self, *, poll_interval: float | None = None, timeout: float | None = None) -> Any:
        """Poll `tasks/get` until the task is terminal; returns its last state."""
        if self.task is None:
            return None
        with anyio.fail_after(timeout):
            state = await self.status()
            while state.status not in TERMINAL:
                interval = poll_interval
                if interval is None:
                    interval = (state.poll_interval or 1000) / 1000
                await anyio.sleep(interval)
                state = await self.status()
            return state

    async def result(self) -> R:
        """`tasks/result`: blocks until the task is terminal, then the request's typed result."""
        if self.task is None:
            return cast("R", self._result)
        payload = await self._call(core.TASKS_RESULT)
        return cast("R", _typed_result(self._runtime, self._stub_spec, self._spec, versions.dump(payload)))

    async def cancel(self) -> Any:
        """`tasks/cancel`: the task, cancelled (-32602 if it had already finished)."""
        self.task = await self._call(core.TASKS_CANCEL)
        return self.task
