"""What generated modules import of the client side: the bases of a version's `Client` and
`ClientHandlers`, the task handles of its task-augmented calls, the runtime an extension's `Calls`
wraps."""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

from . import exports

if TYPE_CHECKING:
    from ..client.runtime import ClientRuntime
    from ..client.stub import ClientHandlerStub, ClientStub, ProgressCallback
    from ..client.task_handle import TaskHandle
    from ..client.tasks_ext import ToolTask

__all__ = ["ClientHandlerStub", "ClientRuntime", "ClientStub", "ProgressCallback", "TaskHandle", "ToolTask"]


def _stub() -> ModuleType:
    from ..client import stub

    return stub


def _runtime() -> ModuleType:
    from ..client import runtime

    return runtime


def _task_handle() -> ModuleType:
    from ..client import task_handle

    return task_handle


def _tasks_ext() -> ModuleType:
    from ..client import tasks_ext

    return tasks_ext


__getattr__ = exports(
    globals(),
    {
        "ClientHandlerStub": _stub,
        "ClientStub": _stub,
        "ProgressCallback": _stub,
        "ClientRuntime": _runtime,
        "TaskHandle": _task_handle,
        "ToolTask": _tasks_ext,
    },
)
