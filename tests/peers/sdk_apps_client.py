"""The official MCP Python SDK (mcp==2.3.0) client as an MCP Apps host against
examples/app_ui_server.py over stdio: with `--ui` it declares `io.modelcontextprotocol/ui`
(`ClientSession(extensions=...)`), lists the tools and their `_meta.ui`, reads the UI resource and
calls the app-only tool; without it, the same steps as a client that did not declare the extension.
Prints one JSON object on stdout. Runs in the SDK's venv, never in the project's.

    <sdk-python> tests/peers/sdk_apps_client.py --version 2025-11-25 [--ui] -- <our-python> examples/app_ui_server.py
"""

from __future__ import annotations

import argparse
import json
import traceback
import warnings
from typing import Any

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from sdk_handshake import sdk_initialize  # beside this script

warnings.simplefilter("ignore")

UI = "io.modelcontextprotocol/ui"


def dump(value: Any) -> Any:
    return value.model_dump(mode="json", by_alias=True, exclude_none=True) if hasattr(value, "model_dump") else value


async def main(version: str, ui: bool, command: list[str]) -> dict[str, Any]:
    report: dict[str, Any] = {}

    async def step(name: str, work: Any) -> Any:
        try:
            report[name] = dump(await work)
        except MCPError as exc:
            report[name] = {"mcp_error": {"code": exc.error.code, "message": exc.error.message}}
        except Exception as exc:  # noqa: BLE001 - reported to the test
            report[name] = {"error": repr(exc), "traceback": traceback.format_exc()}
        return report[name]

    extensions = {UI: {"mimeTypes": ["text/html;profile=mcp-app"]}} if ui else None
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(params) as (read_stream, write_stream):
        async with ClientSession(
            read_stream,
            write_stream,
            client_info=types.Implementation(name="sdk-apps-host", version="2.3.0"),
            extensions=extensions,
        ) as session:
            await step("initialize", sdk_initialize(session, version, "sdk-apps-host"))
            await step("tools", session.list_tools())
            await step("view", session.read_resource("ui://counter/view"))
            await step("increment", session.call_tool("increment", {"value": 41}))
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--version", required=True)
    parser.add_argument("--ui", action="store_true")
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()
    print(json.dumps(anyio.run(main, args.version, args.ui, args.command)))
