"""A client on the official MCP Python SDK (mcp==2.3.0) that drives npm `server-everything` (or a
replay of it) through a fixed scenario over stdio or Streamable HTTP and prints what it observed as
one JSON object on stdout. Runs in the SDK's venv, never in the project's.

    <sdk-python> tests/peers/sdk_everything_client.py -- <server command...>
    <sdk-python> tests/peers/sdk_everything_client.py --url http://127.0.0.1:PORT/mcp
    <sdk-python> tests/peers/sdk_everything_client.py --scenario time -- <mcp-server-time command...>

Each step's outcome is recorded under its name; a step that raises records {"error": ...} and the
scenario goes on, so the test can say exactly which step failed.
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

warnings.simplefilter("ignore")


def dump(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    return value


async def run(
    command: list[str], url: str | None, scenario: str = "everything", mode: str = "legacy", roots: bool = True
) -> dict[str, Any]:
    report: dict[str, Any] = {}
    progress: list[Any] = []

    async def sampling(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="sdk sampled"), model="sdk-model"
        )

    async def roots_answer(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri="file:///sdk/root", name="sdk-root")])

    async def step(name: str, coro: Any) -> Any:
        try:
            with anyio.fail_after(20):
                value = dump(await coro)
            report[name] = value
            return value
        except MCPError as exc:
            report[name] = {"mcp_error": {"code": exc.error.code, "message": exc.error.message}}
        except Exception as exc:  # noqa: BLE001 - reported to the test
            report[name] = {"error": repr(exc), "traceback": traceback.format_exc()}
        return None

    info = types.Implementation(name="sdk-everything-client", version="2.3.0")
    roots_callback = roots_answer if roots else None
    if mode != "legacy":  # the stateless era: no handshake, the version pinned (`Client(mode=...)`)
        server: Any = url if url is not None else StdioServerParameters(command=command[0], args=command[1:])
        async with Client(
            server,
            mode=mode,
            sampling_callback=sampling,
            list_roots_callback=roots_callback,
            client_info=info,
            cache=None,
        ) as client:
            await steps(client, scenario, step, progress, report, mode)
        return report
    transport = (
        streamable_http_client(url)
        if url is not None
        else stdio_client(StdioServerParameters(command=command[0], args=command[1:]))
    )
    async with transport as streams:
        read_stream, write_stream = streams[0], streams[1]
        async with ClientSession(
            read_stream, write_stream, sampling_callback=sampling, list_roots_callback=roots_callback, client_info=info
        ) as session:
            if await step("initialize", session.initialize()) is None:
                return report
            report["initialize"] = {k: v for k, v in report["initialize"].items() if k != "instructions"}
            await steps(session, scenario, step, progress, report, mode)
    return report


async def steps(session: Any, scenario: str, step: Any, progress: list[Any], report: dict[str, Any], mode: str) -> None:
    """The scenario's calls on a session (legacy) or a `Client` (stateless era): each step's outcome
    under its name."""
    await step("tools", session.list_tools())
    if scenario == "app":  # examples/app_server.py, or a mock of its lock
        await step("weather", session.call_tool("weather", {"city": "Oslo"}))
        await step("prompts", session.list_prompts())
        await step("prompt", session.get_prompt("review", {"code": "x = 1", "language": "python"}))
        await step("templates", session.list_resource_templates())
        return
    if scenario == "recorded":  # tests/peers/recording_server.py: `ask` samples (2026-07-28: an input round)
        await step("add", session.call_tool("add", {"a": 2, "b": 3}))
        await step("ask", session.call_tool("ask", {"question": "why?"}))
        await step("greet", session.call_tool("greet", {"name": "Ada"}))
        return
    if scenario == "time":
        await step("now", session.call_tool("get_current_time", {"timezone": "UTC"}))
        convert = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
        await step("convert", session.call_tool("convert_time", convert))
        await step("bad_zone", session.call_tool("get_current_time", {"timezone": "Mars/Olympus"}))
        return
    await step("echo", session.call_tool("echo", {"message": "hello recording"}))
    await step("sum", session.call_tool("get-sum", {"a": 2, "b": 40}))
    await step("structured", session.call_tool("get-structured-content", {"location": "Chicago"}))
    await step("image", session.call_tool("get-tiny-image", {}))

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append([value, total])

    await step(
        "long",
        session.call_tool("trigger-long-running-operation", {"duration": 1, "steps": 3}, progress_callback=on_progress),
    )
    report["progress"] = progress
    await step("resources", session.list_resources())
    await step("templates", session.list_resource_templates())
    await step("read", session.read_resource("demo://resource/static/document/architecture.md"))
    await step("prompts", session.list_prompts())
    await step("prompt", session.get_prompt("args-prompt", {"city": "Paris", "state": "TX"}))
    if mode == "legacy":  # removed in 2026-07-28
        await step("ping", session.send_ping())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url")
    parser.add_argument("--mode", default="legacy", help="legacy (the handshake), or a stateless version: 2026-07-28")
    parser.add_argument("--no-roots", action="store_true", help="declare no roots (the server asks for none)")
    parser.add_argument("--scenario", choices=("everything", "time", "app", "recorded"), default="everything")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    print(json.dumps(anyio.run(run, command, args.url, args.scenario, args.mode, not args.no_roots)))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
