"""What the runtime knows of the tasks extension (`io.modelcontextprotocol/tasks`, MCP 2026-07-28)
without its models: its identifier, its methods, their routing header and the status notification,
all read from the extension's generated `names` module. Cheap to import: a server or client that
never meets the extension does not load its models (the wire shapes are `tasks_wire`)."""

from __future__ import annotations

from typing import get_args

from mcp_bindings.ext.io_modelcontextprotocol_tasks import names

__all__ = ["EXTENSION", "METHODS", "NAME_PARAM", "SUPPORTED_METHODS", "TASK_STATUS"]

EXTENSION = names.IDENTIFIER
# What a requestor sends about its tasks (the extension's requests).
METHODS: tuple[str, ...] = get_args(names.ClientRequestMethod)
# The requests whose result may be a task (the extension's "Supported Methods", policy/extension_methods.json).
SUPPORTED_METHODS = names.TASK_RESULTS
# Streamable HTTP routing headers: `Mcp-Name` carries params.taskId on these methods (policy/routing.json).
NAME_PARAM = names.ROUTING
TASK_STATUS = names.NOTIFICATIONS_TASKS  # a task's status, to the subscriptions/listen streams that asked
