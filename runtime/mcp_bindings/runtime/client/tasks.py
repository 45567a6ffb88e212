"""The client as a task receiver (MCP 2025-11-25): a server may task-augment what it asks the
client (`sampling/createMessage`, `elicitation/create` with params `task`) when the client declared
`tasks.requests.<method>`. The client then answers at once with a `CreateTaskResult`, runs its
handler in the background (bounded by the task's TTL), and serves `tasks/get`, `tasks/result`
(blocking until the task is terminal), `tasks/list` and `tasks/cancel` from its own store, and
sends `notifications/tasks/status` when a task ends.

A client takes part by declaring the capability on its handlers, e.g.
`declared_capabilities = {"tasks": {"list": {}, "cancel": {}, "requests": {"sampling":
{"createMessage": {}}}}}`; the handler itself is the ordinary one. The client has one requestor
(its server), so every task belongs to it; its store is the one a server uses by default
(`tasks.core.store.InMemoryTaskStore`: bounded, expiring, unguessable ids), with a server's
default TTLs (5 minutes when the request asks for none, at most an hour).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import orjson

from mcp_bindings.runtime.protocol.spec import Capability
from mcp_bindings.runtime.rpc import jsonrpc
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, McpError
from mcp_bindings.runtime.rpc.jsonrpc import Request, json_object
from mcp_bindings.runtime.tasks.core.handshake import TASK_STATUS, receiver_capability
from mcp_bindings.runtime.tasks.core.runner import TaskRunner
from mcp_bindings.runtime.tasks.core.store import TASK_METHODS, TaskState

if TYPE_CHECKING:
    from mcp_bindings.runtime.client.runtime import ClientRuntime

Work = Callable[[], Awaitable[bytes]]


@dataclass(eq=False)
class ClientTasks(TaskRunner):
    """The tasks one client connection runs for its server (`TaskRunner` with a server's defaults)."""

    def augmented(self, runtime: ClientRuntime, request: Request) -> bool:
        """Whether the server task-augmented a request this client declared it takes as a task."""
        task = json_object(request.params).get("task")
        return isinstance(task, dict) and receiver_capability(request.method).present_in(runtime.capabilities)

    def serves(self, runtime: ClientRuntime, method: str) -> bool:
        """`tasks/*` from the server, answered from this store (when the client declared `tasks`)."""
        return method in TASK_METHODS and Capability("client", ("tasks",)).present_in(runtime.capabilities)

    async def create(self, runtime: ClientRuntime, request: Request, work: Work) -> bytes:
        """Answer a task-augmented request: a new task, its work started in the background."""
        ttl = self.ttl_for(json_object(json_object(request.params).get("task")).get("ttl"))
        state = await self.store.create(None, request.method, ttl_ms=ttl, poll_interval_ms=self.poll_interval_ms)
        if runtime.task_group is None:
            await self.store.delete(state.task_id)
            raise McpError(INTERNAL_ERROR, f"{request.method}: this client runs tasks only in a connect() session")
        outcome = _completed(work)
        runtime.task_group.start_soon(self.finish, state, outcome, self.scope_for(state), _announcer(runtime))
        return jsonrpc.dumps({"task": state.wire()})

    async def answer_request(self, runtime: ClientRuntime, request: Request) -> bytes:
        """`tasks/get|result|list|cancel` from the server, typed by the negotiated version."""
        assert runtime.protocol is not None
        spec = runtime.protocol.server_requests[request.method]
        return await self.answer(spec, request, None, _announcer(runtime), "client")


async def _completed(work: Work) -> dict[str, Any]:
    return {"status": "completed", "result": orjson.loads(await work())}


def _announcer(runtime: ClientRuntime) -> Callable[[TaskState], Awaitable[None]]:
    async def announce(state: TaskState) -> None:
        """`notifications/tasks/status` to the server, where the version has it (best effort)."""
        session = runtime.session
        if session is None or runtime.protocol is None or TASK_STATUS not in runtime.protocol.client_notifications:
            return
        try:
            await session.notify(TASK_STATUS, state.wire())
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass

    return announce
