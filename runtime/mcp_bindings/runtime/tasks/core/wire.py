"""The wire shapes of the tasks extension (`io.modelcontextprotocol/tasks`, MCP 2026-07-28): the
one place the runtime knows them, on top of the extension's generated models
(`mcp_bindings.ext.io_modelcontextprotocol_tasks`, from the pinned ext-tasks schema).

A `Task` is flat on the wire: `taskId`, `status`, `statusMessage`, `createdAt`, `lastUpdatedAt`,
`ttlMs` (integer milliseconds, null: unlimited) and `pollIntervalMs`. A `CreateTaskResult` is
`Result & Task` with `resultType: "task"` (no nested `task`, no `requestState`, no `result`); the
`tasks/get` answer (`DetailedTask`) inlines `inputRequests` (input_required), `result` (completed)
or `error` (failed). `tasks/update` and `tasks/cancel` answer an empty acknowledgement.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field

from mcp_bindings.ext.io_modelcontextprotocol_tasks import models as ext
from mcp_bindings.ext.io_modelcontextprotocol_tasks import names
from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.tasks.core.store import TaskState

__all__ = [
    "EXTENSION",
    "SUPPORTED_METHODS",
    "TASK_STATUS",
    "CancelTaskParams",
    "CreateTaskResult",
    "GetTaskParams",
    "UpdateTaskParams",
    "created",
    "detailed",
    "missing_capability_data",
]


# The extension's generated names: its identifier, the requests whose result may be a task (its
# "Supported Methods", policy/extension_methods.json), and the status notification.
EXTENSION = names.IDENTIFIER
SUPPORTED_METHODS = names.TASK_RESULTS
TASK_STATUS = names.NOTIFICATIONS_TASKS  # a task's status, to the subscriptions/listen streams that asked

# The extension's generated models (mcp_bindings.ext.io_modelcontextprotocol_tasks), where they fit as is.
GetTaskParams = ext.GetTaskRequestParams
CancelTaskParams = ext.CancelTaskRequestParams
# `Result & Task`, `resultType: "task"`; the generated model writes `ttlMs` even when null (unlimited).
CreateTaskResult = ext.CreateTaskResult


class UpdateTaskParams(ext.UpdateTaskRequestParams):
    """The params of tasks/update, each answer kept as sent: an answer to a key that is not
    outstanding is ignored (the extension says so), not refused, and an outstanding ask types its
    own answer (`ExtensionTaskContext.request`)."""

    input_responses: Annotated[dict[str, Any], Field(alias="inputResponses")]  # pyright: ignore[reportIncompatibleVariableOverride]


def task(state: TaskState) -> dict[str, Any]:
    """The flat `Task` of a stored task."""
    return state.wire("ttlMs", "pollIntervalMs")


def created(state: TaskState) -> CreateTaskResult:
    return CreateTaskResult.model_validate({"resultType": "task", **task(state)})


def detailed(state: TaskState, input_requests: Mapping[str, Any]) -> dict[str, Any]:
    """The `DetailedTask` of tasks/get (and of a status notification) for the task's status, checked
    against the extension's `GetTaskResult` on the way out (-32603 naming the field otherwise)."""
    data = task(state)
    if state.status == "input_required":
        data["inputRequests"] = dict(input_requests)
    elif state.status == "completed" and isinstance(state.result, dict):
        data["result"] = state.result
    elif state.status == "failed" and state.error is not None:
        data["error"] = dict(state.error)
    versions.checked(ext.GetTaskResult, {"resultType": "complete", **data}, "the tasks/get result")
    return data


def missing_capability_data() -> dict[str, Any]:
    """The `data` of the -32021 error for a client that did not declare the extension."""
    return {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}
