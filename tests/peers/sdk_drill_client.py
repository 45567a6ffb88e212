"""The official MCP Python SDK (mcp==2.3.0) as a client of a spec-change drill server (issue 46): it
lists the tools, calls `echo`, and asks for a completion where the server advertises completions;
prints what it saw as one JSON object (each step's wire JSON, or its error). Runs in the SDK's venv.

    <sdk-python> tests/peers/sdk_drill_client.py --url http://127.0.0.1:PORT/mcp
    <sdk-python> tests/peers/sdk_drill_client.py --env PYTHONPATH=... -- <our-python> drill_scenario.py serve e stub
"""

from __future__ import annotations

import argparse
import json
import traceback
from typing import Any

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError


def dump(value: Any) -> Any:
    return value.model_dump(mode="json", by_alias=True, exclude_none=True)


async def run(url: str | None, command: list[str], env: dict[str, str]) -> dict[str, Any]:
    report: dict[str, Any] = {}

    async def step(name: str, action: Any) -> Any:
        try:
            with anyio.fail_after(20):
                report[name] = await action()
        except MCPError as exc:
            report[name] = {"mcp_error": {"code": exc.error.code, "message": exc.error.message}}
        except Exception as exc:  # noqa: BLE001 - reported to the test
            report[name] = {"error": repr(exc), "traceback": traceback.format_exc()[-1500:]}
        return report[name]

    if url is not None:
        transport = streamable_http_client(url)
    else:
        transport = stdio_client(StdioServerParameters(command=command[0], args=command[1:], env=env))
    async with transport as streams:
        read_stream, write_stream = streams[0], streams[1]
        async with ClientSession(read_stream, write_stream) as session:

            async def initialize() -> Any:
                return dump(await session.initialize())

            init = await step("initialize", initialize)
            if "error" in init or "mcp_error" in init:
                return report

            async def tools() -> Any:
                return dump(await session.list_tools())

            async def call() -> Any:
                return dump(await session.call_tool("echo", {"x": "sdk"}))

            async def complete() -> Any:
                ref = types.PromptReference(type="ref/prompt", name="colour")
                return dump(await session.complete(ref, {"name": "c", "value": "r"}))

            await step("tools", tools)
            await step("call", call)
            if "completions" in (init.get("capabilities") or {}):
                await step("complete", complete)
    return report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url")
    parser.add_argument("--env", action="append", default=[])
    parser.add_argument("command", nargs="*")
    args = parser.parse_args()
    env = dict(item.split("=", 1) for item in args.env)
    print(json.dumps(anyio.run(run, args.url, args.command, env)))


if __name__ == "__main__":
    main()
