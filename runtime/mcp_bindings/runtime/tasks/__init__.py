"""Tasks, a server plug-in: the task service, its store, the tasks extension, and server-to-client task requests."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_bindings.runtime.client.task_handle import TaskHandle as TaskHandle
    from mcp_bindings.runtime.tasks.api import as_task as as_task
    from mcp_bindings.runtime.tasks.api import run_as_task as run_as_task
    from mcp_bindings.runtime.tasks.server.context import TaskContext as TaskContext
    from mcp_bindings.runtime.tasks.server.service import RELATED_TASK as RELATED_TASK
    from mcp_bindings.runtime.tasks.server.service import TaskService as TaskService
    from mcp_bindings.runtime.tasks.server.service import configure as configure
    from mcp_bindings.runtime.tasks.server.service import current_task_id as current_task_id
    from mcp_bindings.runtime.tasks.server.service import quota_of as quota_of
    from mcp_bindings.runtime.tasks.server.service import requester_of as requester_of
    from mcp_bindings.runtime.tasks.server.service import service_for as service_for

__all__ = [
    "RELATED_TASK",
    "TaskContext",
    "TaskHandle",
    "TaskService",
    "as_task",
    "configure",
    "current_task_id",
    "quota_of",
    "requester_of",
    "run_as_task",
    "service_for",
]


def __getattr__(name: str) -> Any:
    # Loaded on first use, so that importing one module of this package (`tasks.<module>`) does
    # not load `tasks.server` and everything it imports.
    if name == "TaskHandle":  # the client's (kept importable here, where it used to live)
        return importlib.import_module("mcp_bindings.runtime.client.task_handle").TaskHandle
    if name in ("run_as_task", "as_task"):  # the era is told apart there
        return getattr(importlib.import_module("mcp_bindings.runtime.tasks.api"), name)
    if name == "TaskContext":
        return importlib.import_module("mcp_bindings.runtime.tasks.server.context").TaskContext
    if name in __all__:
        return getattr(importlib.import_module("mcp_bindings.runtime.tasks.server.service"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
