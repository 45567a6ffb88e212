"""The official MCP Python SDK (mcp==2.3.0) client driving examples/app_server.py (the authoring
layer's comparison server) at one or more protocol versions, over stdio or Streamable HTTP; prints
what it observed as one JSON object on stdout ({version: report}, one scenario per `--version`).
Runs in the SDK's venv, never in the project's.

    <sdk-python> tests/peers/sdk_app_client.py --version 2025-06-18 -- <our-python> examples/app_server.py
    <sdk-python> tests/peers/sdk_app_client.py --version 2025-11-25 --version 2026-07-28 --url http://127.0.0.1:PORT/mcp

Handshake versions are pinned as in tests/peers/sdk_client.py (a hand-made `initialize`, then
`session.adopt`); 2026-07-28 uses the SDK's `Client(mode="2026-07-28")`, which answers the
server's `InputRequiredResult`s from the same callbacks. Each step records its outcome (or
{"error"/"mcp_error": ...}) and the scenario goes on.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
import warnings
from typing import Any

import anyio
import mcp_types as types
from mcp.client.client import Client
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from sdk_handshake import sdk_initialize  # beside this file (run as a script)

warnings.simplefilter("ignore")

MODERN = "2026-07-28"
INFO = types.Implementation(name="sdk-app-matrix", version="2.3.0")


def dump(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    return value


async def run(version: str, command: list[str], url: str | None) -> dict[str, Any]:
    report: dict[str, Any] = {"asked": []}
    logs: list[str] = []

    async def elicitation(context: Any, params: Any) -> types.ElicitResult:
        report["asked"].append(dump(params))
        return types.ElicitResult(action="accept", content={"value": True})

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(str(params.data))

    async def step(name: str, coro: Any) -> Any:
        try:
            with anyio.fail_after(20):
                value = await coro
            report[name] = dump(value)
            return value
        except MCPError as exc:
            report[name] = {"mcp_error": {"code": exc.error.code, "message": exc.error.message}}
        except Exception as exc:  # noqa: BLE001 - reported to the test
            report[name] = {"error": repr(exc), "traceback": traceback.format_exc()}
        return None

    async def scenario(session: Any) -> None:
        await step("tools", session.list_tools())
        await step("weather", session.call_tool("weather", {"city": "Oslo"}))
        await step("weather_bad", session.call_tool("weather", {"town": "Oslo"}))
        await step("delete", session.call_tool("delete", {"path": "/tmp/x"}))
        await step("resources", session.list_resources())
        await step("templates", session.list_resource_templates())
        await step("config", session.read_resource("config://app"))
        await step("profile", session.read_resource("users://ada/profile"))
        await step("prompts", session.list_prompts())
        await step("review", session.get_prompt("review", {"code": "x = 1", "language": "python"}))
        if version != "2024-11-05":
            ref = types.PromptReference(type="ref/prompt", name="review")
            await step("complete", session.complete(ref, {"name": "language", "value": "ty"}))

    if version == MODERN:
        server: Any = url if url is not None else StdioServerParameters(command=command[0], args=command[1:])
        async with Client(
            server,
            mode=MODERN,
            elicitation_callback=elicitation,
            logging_callback=on_log,
            log_level="info",
            client_info=INFO,
            cache=None,
        ) as client:
            report["initialize"] = {"protocolVersion": client.session.protocol_version}
            await scenario(client)
    else:
        transport = (
            streamable_http_client(url)
            if url is not None
            else stdio_client(StdioServerParameters(command=command[0], args=command[1:]))
        )
        async with transport as (read_stream, write_stream):
            async with ClientSession(
                read_stream, write_stream, elicitation_callback=elicitation, logging_callback=on_log, client_info=INFO
            ) as session:
                init = await sdk_initialize(session, version, INFO.name)
                report["initialize"] = dump(init)
                await step("set_level", session.set_logging_level("info"))
                await scenario(session)
    report["logs"] = logs
    return report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--version", action="append", required=True, help="repeatable: one scenario each")
    parser.add_argument("--url")
    parser.add_argument("command", nargs="*")
    args = parser.parse_args()
    if (args.url is None) == (not args.command):
        parser.error("give exactly one of: a server command, --url")
    reports = {version: anyio.run(run, version, args.command, args.url) for version in args.version}
    sys.stdout.write(json.dumps(reports) + "\n")


if __name__ == "__main__":
    main()
