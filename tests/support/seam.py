"""A 2025-11-25 echo server for the dispatch seam's tests: one tool `echo`, and a handler of
`notifications/roots/list_changed` that notes each one in `server.heard`."""

from __future__ import annotations

import importlib
from typing import Any

from mcp_bindings.runtime.server.stubs import ServerStub

VERSION = "2025-11-25"


def echo_server() -> Any:
    m = importlib.import_module("mcp_bindings.v2025_11_25")
    base: Any = importlib.import_module("mcp_bindings.v2025_11_25.server").Server

    class Echo(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__()
            self.heard: list[str] = []

        async def list_tools(self, params: Any, ctx: Any) -> Any:
            schema = m.ToolInputSchema(type="object", properties={"text": {"type": "string"}}, required=["text"])
            return m.ListToolsResult(tools=[m.Tool(name="echo", input_schema=schema)])

        async def call_tool(self, params: Any, ctx: Any) -> Any:
            text = str((params.arguments or {}).get("text", ""))
            return m.CallToolResult(content=[m.TextContent(type="text", text=text)])

        async def on_roots_list_changed(self, params: Any, ctx: Any) -> None:
            self.heard.append("roots")

    server: ServerStub = Echo()
    return server


def client_class() -> Any:
    return importlib.import_module("mcp_bindings.v2025_11_25.client").Client
