"""What the runtime knows of the tasks extension (`io.modelcontextprotocol/tasks`, MCP 2026-07-28)
without its models: its identifier, its methods, their routing header and the status notification.
Cheap to import: a server or client that never meets the extension does not load its models (the
wire shapes are `tasks_wire`)."""

from __future__ import annotations

__all__ = ["EXTENSION", "METHODS", "NAME_PARAM", "SUPPORTED_METHODS", "TASK_STATUS"]

EXTENSION = "io.modelcontextprotocol/tasks"
# What a requestor sends about its tasks (the extension's methods; tasks/result and tasks/list are gone).
METHODS = ("tasks/get", "tasks/update", "tasks/cancel")
# The requests whose result may be a task (the extension's "Supported Methods").
SUPPORTED_METHODS = frozenset({"tools/call"})
# Streamable HTTP routing headers: `Mcp-Name` carries params.taskId on these methods.
NAME_PARAM: dict[str, str] = dict.fromkeys(METHODS, "taskId")
TASK_STATUS = "notifications/tasks"  # a task's status, to the subscriptions/listen streams that asked
