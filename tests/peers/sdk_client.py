"""A client built on the official MCP Python SDK (mcp==2.3.0, `ClientSession` over `stdio_client`,
or over `streamable_http_client` with `--url`) that drives one of our servers through a fixed
scenario and prints what it observed as one JSON object on stdout. Runs in the SDK's venv, never in
the project's.

    <sdk-python> tests/peers/sdk_client.py --version 2024-11-05 -- <our-python> tests/peers/stdio_server.py
    <sdk-python> tests/peers/sdk_client.py --version 2024-11-05 --url http://127.0.0.1:PORT/mcp

The handshake is pinned to `--version` the same way on both transports: a hand-made `initialize`
offering that version, then `session.adopt(result)`, whose handshake stamp puts the negotiated
version in the MCP-Protocol-Version header of every later HTTP request.

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
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from sdk_handshake import LATEST, sdk_initialize  # beside this script

warnings.simplefilter("ignore")  # deprecation warnings of the handshake-era features we exercise


def dump(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    return value


def text_of(result: types.CallToolResult) -> str:
    return result.content[0].text  # type: ignore[union-attr]


def connect(command: list[str], url: str | None) -> Any:
    """The SDK transport: Streamable HTTP to `url` if given, else stdio to a spawned `command`."""
    if url is not None:
        return streamable_http_client(url)
    return stdio_client(StdioServerParameters(command=command[0], args=command[1:]))


async def run(version: str, command: list[str], url: str | None = None) -> dict[str, Any]:
    report: dict[str, Any] = {}
    levels: list[str] = []
    notifications: list[str] = []
    asked: dict[str, Any] = {}

    async def sampling(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        asked["sampling"] = dump(params)
        prompt = params.messages[0].content.text  # type: ignore[union-attr]
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text=f"sdk sampled: {prompt}"), model="sdk-model"
        )

    async def elicitation(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked["elicitation"] = dump(params)
        return types.ElicitResult(action="accept", content={"name": "Grace"})

    async def roots(context: Any) -> types.ListRootsResult:
        asked["roots"] = True
        return types.ListRootsResult(roots=[types.Root(uri="file:///sdk/root", name="sdk-root")])

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        levels.append(params.level)

    async def on_message(message: Any) -> None:
        if isinstance(message, Exception):
            notifications.append(f"exception: {message!r}")
        else:
            notifications.append(message.method)

    async def step(name: str, coro: Any) -> Any:
        try:
            with anyio.fail_after(15):
                value = await coro
            report[name] = value
            return value
        except MCPError as exc:
            report[name] = {"mcp_error": {"code": exc.error.code, "message": exc.error.message, "data": exc.error.data}}
        except Exception as exc:  # noqa: BLE001 - reported to the test
            report[name] = {"error": repr(exc), "traceback": traceback.format_exc()}
        return None

    async with connect(command, url) as (read_stream, write_stream):
        async with ClientSession(
            read_stream,
            write_stream,
            sampling_callback=sampling,
            elicitation_callback=elicitation,
            list_roots_callback=roots,
            logging_callback=on_log,
            message_handler=on_message,
            client_info=types.Implementation(name="sdk-interop-client", version="2.3.0"),
        ) as session:

            async def initialize() -> Any:
                return dump(await sdk_initialize(session, version, "sdk-interop-client"))

            if await step("initialize", initialize()) is None:
                return report

            async def call(name: str, arguments: dict[str, Any] | None = None, **kwargs: Any) -> str:
                return text_of(await session.call_tool(name, arguments or {}, **kwargs))

            await step("tools", _names(session))
            await step("echo", call("echo", {"text": "héllo ✓ \U0001f600"}))

            async def pages() -> list[Any]:
                uris: list[str] = []
                cursors: list[Any] = []
                cursor = None
                while True:
                    page = await session.list_resources(params=types.PaginatedRequestParams(cursor=cursor))
                    uris += [str(r.uri) for r in page.resources]
                    cursor = page.next_cursor
                    cursors.append(cursor)
                    if cursor is None:
                        return [uris, cursors]

            await step("resource_pages", pages())
            await step(
                "bad_cursor", _dumped(session.list_resources(params=types.PaginatedRequestParams(cursor="nope")))
            )
            await step("read", _dumped(session.read_resource("test://r/3")))
            await step("prompts", _dumped(session.list_prompts()))
            await step("prompt", _dumped(session.get_prompt("p1", {"topic": "sdk"})))
            if version != "2024-11-05":
                await step(
                    "complete",
                    _dumped(
                        session.complete(
                            types.PromptReference(type="ref/prompt", name="p1"), {"name": "topic", "value": "b"}
                        )
                    ),
                )

            async def logging() -> list[str]:
                await session.set_logging_level("error")
                await call("log_all")
                with anyio.fail_after(5):
                    while len(levels) < 4:
                        await anyio.sleep(0.01)
                await anyio.sleep(0.2)
                return list(levels)

            await step("log_levels", logging())

            async def progress() -> Any:
                seen: list[Any] = []

                async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                    seen.append([progress, total, message])

                text = await call("progress", {"steps": 4}, progress_callback=on_progress)
                with anyio.fail_after(5):
                    while len(seen) < 4:
                        await anyio.sleep(0.01)
                return [text, seen]

            await step("progress", progress())
            await step("sampling", call("ask_sampling", {"prompt": "from our server"}))
            await step("roots", call("ask_roots"))
            if version >= "2025-06-18":
                await step("elicitation", call("ask_elicitation"))
            report["asked"] = asked
            await step("ping", _dumped(session.send_ping()))
            await step("ping_client", call("ping_client"))

            async def subscriptions() -> Any:
                await session.subscribe_resource("test://r/2")
                first = await call("touch", {"uri": "test://r/2"})
                await session.unsubscribe_resource("test://r/2")
                second = await call("touch", {"uri": "test://r/2"})
                await anyio.sleep(0.2)
                return [first, second, notifications.count("notifications/resources/updated")]

            await step("subscriptions", subscriptions())

            async def list_changes() -> Any:
                await call("change_lists")
                await anyio.sleep(0.3)
                return sorted(n for n in notifications if n.endswith("list_changed"))

            await step("list_changed", list_changes())
            await step("boom", call("boom"))

            async def timeout() -> Any:
                try:
                    await call("sleep", {"seconds": 5, "tag": "sdk-timeout"}, read_timeout_seconds=0.5)
                    return "no timeout"
                except MCPError as exc:
                    outcome = {"code": exc.error.code, "message": exc.error.message}
                with anyio.fail_after(5):
                    while True:
                        events = json.loads(await call("state"))["events"]
                        if "cancelled:sdk-timeout" in events or "finished:sdk-timeout" in events:
                            return [outcome, events]
                        await anyio.sleep(0.05)

            await step("timeout", timeout())

            async def roots_changed() -> Any:
                await session.send_roots_list_changed()
                with anyio.fail_after(5):
                    while True:
                        count = json.loads(await call("state"))["roots_changed"]
                        if count:
                            return count
                        await anyio.sleep(0.05)

            await step("roots_changed", roots_changed())

            async def concurrent() -> Any:
                got: dict[str, str] = {}

                async def one(i: int) -> None:
                    got[str(i)] = await call("sleep", {"seconds": 0.05 * (10 - i), "tag": f"cc{i}"})

                async with anyio.create_task_group() as group:
                    for i in range(10):
                        group.start_soon(one, i)
                return got

            await step("concurrent", concurrent())
            report["notifications"] = notifications
    return report


async def _names(session: ClientSession) -> list[str]:
    return [tool.name for tool in (await session.list_tools()).tools]


async def _dumped(coro: Any) -> Any:
    return dump(await coro)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--version", default=LATEST)
    parser.add_argument("--url", help="a Streamable HTTP endpoint to connect to instead of spawning a command")
    parser.add_argument("command", nargs="*")
    args = parser.parse_args()
    if (args.url is None) == (not args.command):
        parser.error("give exactly one of: a server command, --url")
    report = anyio.run(run, args.version, args.command, args.url)
    sys.stdout.write(json.dumps(report) + "\n")


if __name__ == "__main__":
    main()
