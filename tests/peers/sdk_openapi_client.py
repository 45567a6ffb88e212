"""The official MCP Python SDK (mcp==2.3.0) client driving an `App.openapi` server over stdio
(tests/openapi/openapi_server.py) at 2025-11-25 and 2026-07-28: lists its tools, makes the calls
given as JSON (`[[tool, arguments], ...]`), prints {version: {"tools": [...], "calls": [...]}} as one
JSON object. Runs in the SDK's venv, never in the project's.

    <sdk-python> tests/peers/sdk_openapi_client.py CALLS_JSON -- <our-python> tests/openapi/openapi_server.py URL
"""

from __future__ import annotations

import json
import sys
import warnings
from typing import Any

import anyio
import mcp_types as types
from mcp.client.client import Client
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

warnings.simplefilter("ignore")

MODERN = "2026-07-28"
INFO = types.Implementation(name="sdk-openapi", version="2.3.0")


def dump(value: Any) -> Any:
    return value.model_dump(mode="json", by_alias=True, exclude_none=True)


async def scenario(session: Any, calls: list[list[Any]]) -> dict[str, Any]:
    tools = await session.list_tools()
    results = [dump(await session.call_tool(name, arguments)) for name, arguments in calls]
    return {"tools": sorted(t.name for t in tools.tools), "calls": results}


async def run(version: str, calls: list[list[Any]], command: list[str]) -> dict[str, Any]:
    server = StdioServerParameters(command=command[0], args=command[1:])
    if version == MODERN:
        async with Client(server, mode=MODERN, client_info=INFO, cache=None) as client:
            return await scenario(client, calls)
    async with stdio_client(server) as (read_stream, write_stream):
        async with ClientSession(read_stream, write_stream, client_info=INFO) as session:
            await session.initialize()
            return await scenario(session, calls)


def main() -> None:
    calls = json.loads(sys.argv[1])
    command = sys.argv[3:] if sys.argv[2] == "--" else sys.argv[2:]
    reports = {version: anyio.run(run, version, calls, command) for version in ("2025-11-25", MODERN)}
    sys.stdout.write(json.dumps(reports) + "\n")


if __name__ == "__main__":
    main()
