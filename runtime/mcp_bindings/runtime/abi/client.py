"""What generated modules import of the client side: the bases of a version's `Client` and
`ClientHandlers`, the task handles of its task-augmented calls, the runtime an extension's `Calls`
wraps."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import exports

if TYPE_CHECKING:
    from ..client.runtime import ClientRuntime as ClientRuntime
    from ..client.stub import ClientHandlerStub as ClientHandlerStub
    from ..client.stub import ClientStub as ClientStub
    from ..client.stub import ProgressCallback as ProgressCallback
    from ..client.task_handle import TaskHandle as TaskHandle
    from ..client.tasks_ext import ToolTask as ToolTask


__getattr__ = exports(
    globals(),
    {
        "..client.stub": ("ClientHandlerStub", "ClientStub", "ProgressCallback"),
        "..client.runtime": ("ClientRuntime",),
        "..client.task_handle": ("TaskHandle",),
        "..client.tasks_ext": ("ToolTask",),
    },
)
