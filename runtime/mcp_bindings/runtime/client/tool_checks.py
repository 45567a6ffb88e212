"""What a client checks of tool results (the spec: clients SHOULD validate structured results against
the tool's outputSchema): a `tools/call` result's `structuredContent` against the outputSchema of the
tool as the client's catalog (`client.tool_catalog`) lists it. A tool not listed (or listed before
the list changed) is not checked. `ToolOutputError` (an `McpError`, -32603) names the tool and the
violations. `runtime.tool_checks.enabled = False` turns the checks off."""

from __future__ import annotations

from typing import Any

from mcp_bindings.runtime.client.seam import OutgoingCall, Send
from mcp_bindings.runtime.client.tool_catalog import ClientToolCatalog
from mcp_bindings.runtime.protocol.tool_catalog import TOOLS_CALL, ToolOutputError, report_unusable

__all__ = ["ClientToolChecks", "ToolOutputError"]


class ClientToolChecks:
    """The output checks of one client connection, over its tool catalog."""

    __slots__ = ("catalog", "enabled")

    def __init__(self, catalog: ClientToolCatalog) -> None:
        self.catalog = catalog
        self.enabled = True

    methods = (TOOLS_CALL,)  # an around (`client.seam`) of these only

    async def __call__(self, call: OutgoingCall, next: Send) -> object:
        """The hook that checks `tools/call` results."""
        raw = await next(call)
        self.check_result(call.params, raw)
        return raw

    def check_result(self, params: Any, raw: Any) -> None:
        """A tools/call result (decoded JSON) against its tool's outputSchema; raises `ToolOutputError`."""
        if not self.enabled or not isinstance(raw, dict):
            return
        name = params.get("name") if isinstance(params, dict) else None
        listed = self.catalog.tools.get(name) if isinstance(name, str) else None
        if listed is None:
            return
        tool = listed.definition
        tool.resolve()
        output = tool.output_schema
        if output is None or raw.get("isError") is True or "content" not in raw:
            return
        structured = raw.get("structuredContent")
        violations = output.violations(structured) if structured is not None else []
        if structured is None or violations:
            raise ToolOutputError(tool.name, violations)
        if output.problem is not None:
            report_unusable(tool.name, "outputSchema", output)

    def forget(self) -> None:
        """Forget the listed tools, as on `notifications/tools/list_changed` (the catalog's one invalidation)."""
        self.catalog.forget()
