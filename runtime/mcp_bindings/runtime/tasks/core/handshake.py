"""The core tasks of MCP 2025-11-25 (the handshake era) as both sides read them: which version has
tasks (its `CreateTaskResult` model), the server capability that lets a requestor task-augment a
method and the client capability that lets a server task-augment one. The server's service is
`tasks.server`; the client's task handles are `client.task_handle`, its receiver `client.tasks`."""

from __future__ import annotations

import functools
import importlib
from types import ModuleType

from pydantic import BaseModel

from mcp_bindings.runtime.protocol.spec import Capability, ProtocolTables
from mcp_bindings.v2025_11_25 import names as core

__all__ = ["RELATED_TASK", "TASK_STATUS", "create_task_result", "receiver_capability", "task_capability"]

# The `_meta` key that ties a message to its task (2025-11-25: "Associating Task-Related Messages").
RELATED_TASK = "io.modelcontextprotocol/related-task"
TASK_STATUS = core.NOTIFICATIONS_TASKS_STATUS  # a receiver's word that a task's status changed


@functools.cache
def _models(protocol: ProtocolTables) -> ModuleType | None:
    """The models module of a version with tasks (its tasks/get result's module); None without tasks."""
    get = protocol.client_requests.get(core.TASKS_GET)
    if get is None or not isinstance(get.result, type):
        return None
    return importlib.import_module(get.result.__module__)


def create_task_result(protocol: ProtocolTables) -> type[BaseModel] | None:
    """The version's `CreateTaskResult` model (None: the version has no tasks)."""
    models = _models(protocol)
    model = getattr(models, "CreateTaskResult", None) if models is not None else None
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def task_capability(method: str) -> Capability:
    """The server capability that lets a requestor task-augment `method`: `tasks.requests.tools.call`."""
    return Capability("server", ("tasks", "requests", *method.split("/")))


def receiver_capability(method: str) -> Capability:
    """The client capability that lets a server task-augment `method`: `tasks.requests.sampling.createMessage`."""
    return Capability("client", ("tasks", "requests", *method.split("/")))
