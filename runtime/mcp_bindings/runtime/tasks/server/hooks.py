"""What runs around a handshake-era handler where tasks apply (`augment`, hooked into the method's
plan by `plugin`): a `CreateTaskResult` only for a task-augmented request; a task-augmented request
whose handler answered at once still gets a `CreateTaskResult` (its task is already complete); and
for `tools/call` the tool-level negotiation: a tool listed without `execution.taskSupport` (or with
"forbidden") refuses task-augmented calls, and one listed as "required" refuses other calls, both
with -32601 before the handler runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.protocol.spec import MethodSpec, ProtocolTables
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, METHOD_NOT_FOUND, McpError
from mcp_bindings.runtime.rpc.jsonrpc import json_object
from mcp_bindings.runtime.server.peer import PeerView
from mcp_bindings.runtime.tasks.core.handshake import create_task_result, task_capability
from mcp_bindings.runtime.tasks.server.context import parts
from mcp_bindings.runtime.tasks.server.service import TaskService, outcome_of, service_for
from mcp_bindings.v2026_07_28 import names as v2026

if TYPE_CHECKING:
    from mcp_bindings.runtime.server.calls import ServerCall
    from mcp_bindings.runtime.server.seam import ServerAround, ServerNext
    from mcp_bindings.runtime.server.stubs import ServerStub

__all__ = ["augment"]

TOOLS_CALL = v2026.TOOLS_CALL
TOOLS_LIST = v2026.TOOLS_LIST


def _augmentable(protocol: ProtocolTables, method: str) -> bool:
    path = ".".join(task_capability(method).path)
    return path in protocol.server_capability_paths and create_task_result(protocol) is not None


def augment(server: ServerStub, view: PeerView, spec: MethodSpec) -> tuple[ServerAround | None, type[Any] | None]:
    """What a handshake-era method's plan runs around its handler where tasks apply (`plugin`), and
    the `CreateTaskResult` type its handler may answer with (None: it may not). None elsewhere."""
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


@dataclass(slots=True, eq=False)
class _TaskHook:
    """Around the handler of a method advertised under `tasks.requests`."""

    service: TaskService
    spec: MethodSpec
    model: Any

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
    session, peer, _ = parts(context)
    state = await service.create(session, peer, spec.method, json_object(json_object(raw).get("task")).get("ttl"))
    done = await service.store.update(state.task_id, **outcome_of(spec, result))
    return versions.validate(model, {"task": (done or state).wire()})
