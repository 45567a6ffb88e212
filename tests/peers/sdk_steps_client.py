"""A client built on the official MCP Python SDK (mcp==2.3.0) that lists the tools of one of our
servers and calls the ones it is told to, at one protocol version, over Streamable HTTP (`--url`) or
stdio (a command after `--`); prints what it saw as one JSON object on stdout. Runs in the SDK's
venv, never in the project's.

    <sdk-python> tests/peers/sdk_steps_client.py --version 2025-11-25 --url URL --call 'greet={"name": "ada"}'
    <sdk-python> tests/peers/sdk_steps_client.py --version 2026-07-28 --call 'count={}' -- <python> server.py
    <sdk-python> tests/peers/sdk_steps_client.py --version 2025-11-25 --url URL --read config://app --prompt 'ask={}'
    <sdk-python> tests/peers/sdk_steps_client.py --version 2025-11-25 --url URL --bearer TOKEN --call ...

Handshake versions are pinned by hand (an `initialize` offering the version, then `session.adopt`);
2026-07-28 uses `Client(mode="2026-07-28")`. The report: {"version", "tools": [names], "calls":
[{"name", "result"} | {"name", "mcp_error"} | {"name", "error"}], "progress": [[progress, total]], and with
`--read` / `--prompt`: "reads" and "prompts", entries of the same shape (the URI or prompt as "name")}.
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
INFO = types.Implementation(name="sdk-steps", version="2.3.0")


def dump(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    return value


def http_transport(url: str, bearer: str | None) -> Any:
    """The SDK's Streamable HTTP transport, sending `Authorization: Bearer <bearer>` when given."""
    if bearer is None:
        return streamable_http_client(url)
    import httpx2

    client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {bearer}"}, timeout=30)
    return streamable_http_client(url, http_client=client)


async def run(
    version: str,
    calls: list[tuple[str, dict[str, Any]]],
    url: str | None,
    command: list[str],
    reads: list[str],
    prompts: list[tuple[str, dict[str, Any]]],
    bearer: str | None,
) -> Any:
    report: dict[str, Any] = {"version": version, "calls": [], "progress": [], "reads": [], "prompts": []}

    async def progress(value: float, total: float | None, message: str | None) -> None:
        report["progress"].append([value, total])

    async def step(kind: str, name: str, call: Any) -> None:
        entry: dict[str, Any] = {"name": name}
        try:
            with anyio.fail_after(20):
                entry["result"] = dump(await call)
        except MCPError as exc:
            entry["mcp_error"] = {"code": exc.error.code, "message": exc.error.message}
        except Exception as exc:  # noqa: BLE001 - reported to the test
            entry["error"] = repr(exc)
            entry["traceback"] = traceback.format_exc()
        report[kind].append(entry)

    async def scenario(session: Any) -> None:
        report["tools"] = [tool.name for tool in (await session.list_tools()).tools]
        for name, arguments in calls:
            await step("calls", name, session.call_tool(name, arguments, progress_callback=progress))
        for uri in reads:
            await step("reads", uri, session.read_resource(uri))
        for name, arguments in prompts:
            await step("prompts", name, session.get_prompt(name, arguments))

    if version == MODERN:
        server: Any = (
            http_transport(url, bearer)
            if url is not None
            else StdioServerParameters(command=command[0], args=command[1:])
        )
        async with Client(server, mode=MODERN, client_info=INFO, cache=None) as client:
            await scenario(client)
        return report
    transport = (
        http_transport(url, bearer)
        if url is not None
        else stdio_client(StdioServerParameters(command=command[0], args=command[1:]))
    )
    async with (
        transport as (read_stream, write_stream),
        ClientSession(read_stream, write_stream, client_info=INFO) as session,
    ):
        init = await sdk_initialize(session, version, INFO.name)
        report["negotiated"] = init.protocol_version
        await scenario(session)
    return report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--version", required=True)
    parser.add_argument("--url")
    parser.add_argument("--bearer", help="an access token sent as Authorization: Bearer (HTTP only)")
    parser.add_argument("--call", action="append", default=[], help="NAME=JSON arguments; repeatable")
    parser.add_argument("--read", action="append", default=[], help="a resource URI to read; repeatable")
    parser.add_argument("--prompt", action="append", default=[], help="NAME=JSON arguments; repeatable")
    parser.add_argument("command", nargs="*")
    args = parser.parse_args()
    if (args.url is None) == (not args.command):
        parser.error("give exactly one of: a server command, --url")
    calls = [(spec.split("=", 1)[0], json.loads(spec.split("=", 1)[1])) for spec in args.call]
    prompts = [(spec.split("=", 1)[0], json.loads(spec.split("=", 1)[1])) for spec in args.prompt]
    try:
        report = anyio.run(run, args.version, calls, args.url, args.command, args.read, prompts, args.bearer)
    except BaseException as exc:  # noqa: BLE001 - the test reads the report
        report = {"fatal": repr(exc), "traceback": traceback.format_exc()}
    sys.stdout.write(json.dumps(report) + "\n")


if __name__ == "__main__":
    main()
