"""tasks/get, tasks/result, tasks/list and tasks/cancel, served by the runtime (2025-11-25, core) for
a server whose stub does not handle them: `plugin` asks `served_by_runtime(method)` when it
plans a method. Each looks the task up for its requester (`service.requester_of`: another
requester's task is "not found", like an unknown id) in the server's `TaskService`; `tasks/result`
blocks until the task is terminal (bounded by its TTL) and answers exactly what the underlying
request would have.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from mcp_bindings.runtime.rpc import jsonrpc
from mcp_bindings.runtime.server.peer import PeerView
from mcp_bindings.runtime.server.seam import Builtin
from mcp_bindings.runtime.tasks.core.store import TASK_METHODS
from mcp_bindings.runtime.tasks.server.service import announce, requester_of, service_for

if TYPE_CHECKING:
    from mcp_bindings.runtime.rpc.session import Session
    from mcp_bindings.runtime.server.runtime import ServerRuntime

__all__ = ["served_by_runtime"]


def served_by_runtime(method: str) -> Builtin | None:
    """What serves a tasks/* method for a server whose stub does not handle it (`ServerRuntime.plan`)."""
    return _serve if method in TASK_METHODS else None


async def _serve(runtime: ServerRuntime, request: jsonrpc.Request, view: PeerView, session: Session) -> bytes:
    spec = view.protocol.client_requests[request.method]
    requester = requester_of(session, runtime.peer)
    notify = functools.partial(announce, runtime.peer)
    return await service_for(runtime.server).answer(spec, request, requester, notify, "server")
