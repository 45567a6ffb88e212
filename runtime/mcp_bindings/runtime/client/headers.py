"""The client side of the stateless HTTP wire's header mirroring (SEP-2243): what each listed tool's
input schema says to mirror, and which tools must not be used because their annotations are invalid."""

from __future__ import annotations

from typing import Any

from mcp_bindings.runtime.protocol.headers import invalid_header_tools, request_headers
from mcp_bindings.runtime.rpc import logs

log = logs.logger("client")


class ToolHeaderMirror:
    def __init__(self) -> None:
        self.tool_schemas: dict[str, Any] = {}  # from tools/list, for x-mcp-header mirroring
        # Tools whose x-mcp-header annotations are invalid: dropped from tools/list results and
        # never called while the wire mirrors arguments into headers (stateless HTTP).
        self.rejected_tools: set[str] = set()

    def remember(self, raw: dict[str, Any], mirrors: bool) -> dict[str, Any]:
        """Keep each listed tool's input schema (for Mcp-Param-* headers); on a header-mirroring
        wire, drop the tools whose x-mcp-header annotations are invalid, as the spec requires."""
        tools = raw.get("tools")
        if not isinstance(tools, list):
            return raw
        named = [t for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)]
        for tool in named:
            self.tool_schemas[tool["name"]] = tool.get("inputSchema") or {}
        if not mirrors:
            return raw
        invalid = invalid_header_tools(tools)
        self.rejected_tools = (self.rejected_tools - {t["name"] for t in named}) | invalid
        if not invalid:
            return raw
        log.warning("ignoring tools with invalid x-mcp-header annotations: %s", ", ".join(sorted(invalid)))
        return {**raw, "tools": [t for t in tools if not (isinstance(t, dict) and t.get("name") in invalid)]}

    def refuses(self, data: Any) -> str | None:
        """The name of a rejected tool a `tools/call` params object names, else None."""
        name = data.get("name") if isinstance(data, dict) else None
        return name if isinstance(name, str) and name in self.rejected_tools else None

    def headers(self, message: dict[str, Any]) -> dict[str, str]:
        """Per-message headers of the stateless HTTP wire: Mcp-Method, Mcp-Name, Mcp-Param-*."""
        return request_headers(message, self.tool_schemas)
