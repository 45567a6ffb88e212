"""A client built on the official MCP Python SDK (mcp==2.3.0) that drives one of our HTTP servers
(examples/echo_server.py) and prints what it saw as one JSON object on stdout. Runs in the SDK's
venv, never in the project's.

    <sdk-python> tests/peers/http_sdk_client.py --mode legacy --url http://127.0.0.1:PORT/mcp
    <sdk-python> tests/peers/http_sdk_client.py --mode 2026-07-28 --url http://127.0.0.1:PORT/mcp
    <sdk-python> tests/peers/http_sdk_client.py --mode sse --url http://127.0.0.1:PORT/sse

`legacy`: `Client(url, mode="legacy")` (Streamable HTTP, initialize handshake at the SDK's latest,
2025-11-25). `2026-07-28`: `Client(url, mode="2026-07-28")` (stateless, no handshake).
`auto`: `Client(url)` (server/discover probe). `sse`: `sse_client` + `ClientSession` with a
hand-made 2024-11-05 initialize (the legacy HTTP+SSE transport). Each step records its outcome
under its name; a failing step records {"error": ...}.
"""

from __future__ import annotations

import argparse
import json
import traceback
import warnings
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.session import ClientSession
from mcp.client.sse import sse_client

warnings.simplefilter("ignore")

INFO = types.Implementation(name="sdk-http-client", version="2.3.0")


def dump(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    return value


async def run(mode: str, url: str) -> dict[str, Any]:
    report: dict[str, Any] = {}

    async def step(name: str, coro: Any) -> Any:
        try:
            with anyio.fail_after(15):
                value = await coro
            report[name] = value
            return value
        except Exception as exc:  # noqa: BLE001 - reported to the test
            report[name] = {"error": repr(exc), "traceback": traceback.format_exc()}
            return None

    async def scenario(session: Any) -> None:
        async def names() -> list[str]:
            return [tool.name for tool in (await session.list_tools()).tools]

        async def echo(text: str) -> str:
            result = await session.call_tool("echo", {"text": text})
            return result.content[0].text

        await step("tools", names())
        await step("echo", echo("héllo ✓ \U0001f600"))

        async def many() -> dict[str, str]:
            out: dict[str, str] = {}

            async def one(i: int) -> None:
                out[str(i)] = await echo(f"c{i}")

            async with anyio.create_task_group() as tg:
                for i in range(5):
                    tg.start_soon(one, i)
            return out

        await step("concurrent", many())

    if mode == "sse":
        async with (
            sse_client(url) as (read_stream, write_stream),
            ClientSession(read_stream, write_stream, client_info=INFO) as session,
        ):

            async def initialize() -> Any:
                result = await session.send_request(
                    types.InitializeRequest(
                        params=types.InitializeRequestParams(
                            protocol_version="2024-11-05",
                            capabilities=session._build_capabilities("2024-11-05"),
                            client_info=INFO,
                        )
                    ),
                    types.InitializeResult,
                )
                session.adopt(result)
                await session.send_notification(types.InitializedNotification())
                return dump(result)

            if await step("initialize", initialize()) is not None:
                await scenario(session)
        return report

    async with Client(url, mode=mode, client_info=INFO) as client:  # type: ignore[arg-type]
        report["protocol_version"] = client.protocol_version
        await scenario(client)
    return report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", required=True, choices=["legacy", "auto", "2026-07-28", "sse"])
    parser.add_argument("--url", required=True)
    args = parser.parse_args()
    try:
        report = anyio.run(run, args.mode, args.url)
    except BaseException as exc:  # noqa: BLE001 - the test reads the report
        report = {"fatal": repr(exc), "traceback": traceback.format_exc()}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
