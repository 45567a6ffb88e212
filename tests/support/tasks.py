"""A 2025-11-25 server whose `sleep` tool runs as a task when the call is task-augmented."""

from __future__ import annotations

from typing import Any

import anyio

from mcp_bindings.runtime import tasks
from mcp_bindings.runtime.protocol.context import RequestContext
from mcp_bindings.v2025_11_25 import models as m
from mcp_bindings.v2025_11_25 import server as s


class SleepServer(s.Server):
    """`sleep` runs as a task when the call is task-augmented."""

    declared_capabilities = {"tools": {}, "tasks": {"cancel": {}, "requests": {"tools": {"call": {}}}}}

    async def list_tools(self, params: m.PaginatedRequestParams | None, ctx: RequestContext) -> m.ListToolsResult:
        tool = m.Tool.model_validate(
            {"name": "sleep", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "optional"}}
        )
        return m.ListToolsResult(tools=[tool])

    async def call_tool(self, params: m.CallToolRequestParams, ctx: RequestContext) -> Any:
        seconds = float((params.arguments or {}).get("seconds", 0))

        async def work(task_ctx: Any) -> m.CallToolResult:
            await anyio.sleep(seconds)
            return text(f"slept {seconds:g}")

        return await tasks.run_as_task(ctx, work)


def text(value: str) -> m.CallToolResult:
    return m.CallToolResult(content=[m.TextContent(type="text", text=value)])
