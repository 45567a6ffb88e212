"""tasks/get, tasks/result, tasks/list and tasks/cancel, served by the runtime (2025-11-25, core) for
a server whose stub does not handle them: `plugin` asks `served_by_runtime(method)` when it
plans a method. Each looks the task up for its requester (`service.requester_of`: another
requester's task is "not found", like an unknown id) in the server's `TaskService`; `tasks/result`
blocks until the task is terminal (bounded by its TTL) and answers exactly what the underlying
request would have.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, cast

import anyio

from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.protocol.spec import MethodSpec
from mcp_bindings.runtime.rpc import jsonrpc
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, INVALID_PARAMS, McpError
from mcp_bindings.runtime.rpc.jsonrpc import json_object
from mcp_bindings.runtime.server.peer import PeerView
from mcp_bindings.runtime.server.seam import Builtin
from mcp_bindings.runtime.tasks.core.handshake import RELATED_TASK
from mcp_bindings.runtime.tasks.core.store import TASK_METHODS, InvalidCursor, TaskState
from mcp_bindings.runtime.tasks.server.service import announce, requester_of, service_for
from mcp_bindings.v2025_11_25 import names as core

if TYPE_CHECKING:
    from mcp_bindings.runtime.rpc.session import Session
    from mcp_bindings.runtime.server.runtime import ServerRuntime

__all__ = ["served_by_runtime"]


def served_by_runtime(method: str) -> Builtin | None:
    """What serves a tasks/* method for a server whose stub does not handle it (`ServerRuntime.plan`)."""
    return _BUILTINS.get(method) if method in TASK_METHODS else None


def _answer(spec: MethodSpec, data: Any) -> bytes:
    return versions.to_json(versions.checked(spec.result, data, f"the {spec.method} result"))


async def _task_of(runtime: ServerRuntime, request: jsonrpc.Request, view: PeerView, session: Session) -> TaskState:
    spec = view.protocol.client_requests[request.method]
    versions.validate_params(spec, request.params)  # -32602 naming the field (taskId)
    requester = requester_of(session, runtime.peer)
    return await service_for(runtime.server).lookup(requester, json_object(request.params).get("taskId"))


async def _get(runtime: ServerRuntime, request: jsonrpc.Request, view: PeerView, session: Session) -> bytes:
    state = await _task_of(runtime, request, view, session)
    return _answer(view.protocol.client_requests[request.method], state.wire())


async def _result(runtime: ServerRuntime, request: jsonrpc.Request, view: PeerView, session: Session) -> bytes:
    """Blocks until the task is terminal (bounded by its TTL), then answers exactly what the underlying
    request would have: its result (with the related-task `_meta`) or its JSON-RPC error."""
    state = await _task_of(runtime, request, view, session)
    service = service_for(runtime.server)
    if not state.terminal:
        streams = service.result_streams.setdefault(state.task_id, [])
        streams.append(request.id)
        try:
            expires = state.expires_at
            with anyio.move_on_after(None if expires is None else max(0.0, expires - time.time())):
                waited = await service.store.wait(state.task_id)
                state = waited if waited is not None else state
        finally:
            streams.remove(request.id)
            if not streams:
                service.result_streams.pop(state.task_id, None)
        if not state.terminal:
            await service.store.delete(state.task_id)
            raise McpError(INVALID_PARAMS, "Failed to retrieve task: Task has expired")
    if state.error is not None:
        error = state.error
        raise McpError(int(error.get("code", INTERNAL_ERROR)), str(error.get("message", "")), error.get("data"))
    if not isinstance(state.result, dict):
        raise McpError(INVALID_PARAMS, f"Failed to retrieve task result: the task was {state.status} without a result")
    data = dict(cast("dict[str, Any]", state.result))
    data["_meta"] = {**json_object(data.get("_meta")), RELATED_TASK: {"taskId": state.task_id}}
    return jsonrpc.dumps(data)


async def _list(runtime: ServerRuntime, request: jsonrpc.Request, view: PeerView, session: Session) -> bytes:
    spec = view.protocol.client_requests[request.method]
    versions.validate_params(spec, request.params)
    cursor = json_object(request.params).get("cursor")
    service = service_for(runtime.server)
    try:
        page, next_cursor = await service.store.list(
            requester_of(session, runtime.peer), cursor if isinstance(cursor, str) else None, service.page_size
        )
    except InvalidCursor:
        raise jsonrpc.invalid_field("params.cursor", "not a cursor this server issued", "invalid_cursor") from None
    data: dict[str, Any] = {"tasks": [state.wire() for state in page if not state.expired()]}
    if next_cursor is not None:
        data["nextCursor"] = next_cursor
    return _answer(spec, data)


async def _cancel(runtime: ServerRuntime, request: jsonrpc.Request, view: PeerView, session: Session) -> bytes:
    state = await _task_of(runtime, request, view, session)
    cancelled = await service_for(runtime.server).cancel(state)
    await announce(runtime.peer, cancelled)
    return _answer(view.protocol.client_requests[request.method], cancelled.wire())


_BUILTINS: dict[str, Builtin] = {
    core.TASKS_GET: _get,
    core.TASKS_RESULT: _result,
    core.TASKS_LIST: _list,
    core.TASKS_CANCEL: _cancel,
}
