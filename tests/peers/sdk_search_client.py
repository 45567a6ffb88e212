"""The official MCP Python SDK (mcp==2.3.0) client against a server behind `ToolSearch`
(tests/discovery/test_search_http.py serves it over Streamable HTTP on 127.0.0.1): it lists the
tools, searches the catalog with `search_tools`, and calls the tool found, first directly by name
and then through `call_tool`. Prints what it observed as one JSON object on stdout. Runs in the
SDK's venv, never in the project's.

    <sdk-python> tests/peers/sdk_search_client.py --version 2025-11-25 --url http://127.0.0.1:PORT/mcp --query "..."
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from typing import Any

import anyio
import mcp_types as types
from mcp.client.client import Client
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from sdk_handshake import sdk_initialize  # beside this file (run as a script)

warnings.simplefilter("ignore")

MODERN = "2026-07-28"
INFO = types.Implementation(name="sdk-search", version="2.3.0")


def dump(value: Any) -> Any:
    return value.model_dump(mode="json", by_alias=True, exclude_none=True)


async def scenario(session: Any, query: str, arguments: dict[str, Any]) -> dict[str, Any]:
    report: dict[str, Any] = {}
    report["tools"] = dump(await session.list_tools())
    search = await session.call_tool("search_tools", {"query": query, "limit": 3})
    report["search"] = dump(search)
    found = json.loads(search.content[0].text)["tools"]
    name = found[0]["name"] if found else ""
    report["by_name"] = dump(await session.call_tool("call_tool", {"name": name, "arguments": arguments}))
    return report


async def run(version: str, url: str, query: str, arguments: dict[str, Any]) -> dict[str, Any]:
    if version == MODERN:
        async with Client(url, mode=MODERN, client_info=INFO, cache=None) as client:
            return await scenario(client, query, arguments)
    async with streamable_http_client(url) as (read_stream, write_stream):
        async with ClientSession(read_stream, write_stream, client_info=INFO) as session:
            await sdk_initialize(session, version, INFO.name)
            return await scenario(session, query, arguments)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--version", action="append", required=True, help="repeatable: one scenario each")
    parser.add_argument("--url", required=True)
    parser.add_argument("--query", required=True)
    parser.add_argument("--arguments", default="{}", help="JSON: the found tool's arguments")
    args = parser.parse_args()
    arguments = json.loads(args.arguments)
    reports = {version: anyio.run(run, version, args.url, args.query, arguments) for version in args.version}
    sys.stdout.write(json.dumps(reports) + "\n")


if __name__ == "__main__":
    main()
