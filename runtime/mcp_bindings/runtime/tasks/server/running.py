"""Running a handler's work as a task in the handshake era (2025-11-25): `run_in_handshake_era`
(what `tasks.run_as_task` does with such a request), and the helpers the tasks extension shares
(`discard`, `output_checked`). Task work outlives its request, and its connection: it runs
detached from both (`TaskService.start`), bounded by the task's TTL and cancelled by
`tasks/cancel`."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.protocol.spec import MethodSpec
from mcp_bindings.runtime.rpc.errors import METHOD_NOT_FOUND, McpError
from mcp_bindings.runtime.rpc.jsonrpc import json_object
from mcp_bindings.runtime.tasks.core.handshake import create_task_result, task_capability
from mcp_bindings.runtime.tasks.core.store import TaskState
from mcp_bindings.runtime.tasks.server.context import TaskContext, parts
from mcp_bindings.runtime.tasks.server.service import service_for
from mcp_bindings.v2026_07_28 import names as v2026

__all__ = ["begin", "discard", "output_checked", "run_in_handshake_era", "stateless_request"]

T = TypeVar("T")

TOOLS_CALL = v2026.TOOLS_CALL


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
    state = await begin(ctx, spec, work, TaskContext, requested_ttl)
    return versions.validate(model, {"task": state.wire()})


async def begin(
    ctx: Any,
    spec: MethodSpec,
    work: Awaitable[Any] | Callable[[Any], Awaitable[Any]],
    kind: type[TaskContext],
    ttl: Any,
) -> TaskState:
    """Create the task of the request `ctx` serves (its requested `ttl`) and start its work, given a
    context of `kind` (`work` called with it): the task as created."""
    session, peer, _ = parts(ctx)
    service = service_for(ctx.server)
    state = await service.create(session, peer, spec.method, ttl)
    task_context = kind(ctx, state.task_id, service, spec)
    service.start(state, output_checked(ctx, spec, work(task_context) if callable(work) else work), task_context)
    return state


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
        return bool(parts(ctx)[2].stateless)
    except AttributeError:
        return False


def _augmentation(ctx: Any) -> tuple[MethodSpec, Any, Any] | None:
    """(spec, CreateTaskResult type, requested ttl) where `ctx` serves a task-augmented request whose
    method's task support the server advertises to this client; None otherwise."""
    if isinstance(ctx, TaskContext):
        return None  # already inside a task's work
    try:
        _, _, view = parts(ctx)
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
