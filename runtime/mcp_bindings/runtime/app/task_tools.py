"""Tools that run as tasks (`@app.tool(task=True)`) on the app's server: an extension every `App`
holds (`App(extensions=...)` adds the user's after it), declaring what its stub's version defines
for them once the app has a task-capable tool: the `tasks` capability with tool calls
(2025-11-25), or the tasks extension (2026-07-28 on). Clients of the other era get the work done at
once (or -32601 / -32021 for a required task). The runtime's task service serves the rest
(`tasks.server.plugin`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcp_bindings.ext.io_modelcontextprotocol_tasks.names import IDENTIFIER as TASKS_EXTENSION
from mcp_bindings.runtime.protocol.custom_methods import EXTENSIONS
from mcp_bindings.runtime.server.plugins import Extension

if TYPE_CHECKING:
    from mcp_bindings.runtime.app.entries import ToolEntry
    from mcp_bindings.runtime.protocol.spec import ProtocolTables

__all__ = ["TaskTools"]


class TaskTools(Extension):
    """The capabilities of an app's task-capable tools (see the module)."""

    def __init__(self, tools: Mapping[str, ToolEntry]) -> None:
        self.tools = tools

    def capabilities(self, protocol: ProtocolTables) -> Mapping[str, Any]:
        if not any(entry.task for entry in self.tools.values()):
            return {}
        known = protocol.server_capability_paths
        if "tasks.requests.tools.call" in known:
            return {"tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}
        if protocol.info.stateless and EXTENSIONS in known:
            return {EXTENSIONS: {TASKS_EXTENSION: {}}}
        return {}
