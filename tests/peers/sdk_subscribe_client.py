"""Two clients built on the official MCP Python SDK (mcp==2.3.0) subscribing to one resource of a
server over Streamable HTTP, at one protocol version: `resources/subscribe` (handshake versions,
pinned by hand as in sdk_steps_client.py) or a `subscriptions/listen` stream (2026-07-28,
`Client.listen(resource_subscriptions=...)`). Made for the proxy in front of
tests/peers/subscriptions_server.py, whose `state` and `touch` tools it calls. Runs in the SDK's venv.

    <sdk-python> tests/peers/sdk_subscribe_client.py --version 2025-11-25 --url URL --uri sub://a
    <sdk-python> tests/peers/sdk_subscribe_client.py --version 2026-07-28 --url URL --uri U --toggle TOOL

Steps: A and B subscribe; once the remote holds the URI (`state`), A calls `touch`; both wait for
the update; A unsubscribes (closes its stream), B disconnects without unsubscribing; then a third
client waits until the remote let go. Prints one JSON object: {"updates": {"a": [...], "b": [...]},
"held": the remote's state while both held it, "state": its state at the end, "touched": touch's
answer}, or {"fatal", "traceback"}. With `--toggle TOOL` (a server of its own, e.g. server-everything's
`toggle-subscriber-updates`): both subscribe, A calls TOOL (which starts the server's updates), both
wait for an update, A calls TOOL again (stopping them); {"updates", "toggled": TOOL's first answer}.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
import warnings
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp.client.client import Client
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from sdk_handshake import sdk_initialize  # beside this file (run as a script)

warnings.simplefilter("ignore")

MODERN = "2026-07-28"
INFO = types.Implementation(name="sdk-subscribe", version="2.3.0")


@asynccontextmanager
async def handshake(url: str, version: str, on_updated: Callable[[str], None]) -> AsyncIterator[Any]:
    async def messages(message: Any) -> None:
        notification = getattr(message, "root", message)
        if isinstance(notification, types.ResourceUpdatedNotification):
            on_updated(str(notification.params.uri))

    async with (
        streamable_http_client(url) as (read_stream, write_stream),
        ClientSession(read_stream, write_stream, client_info=INFO, message_handler=messages) as session,
    ):
        await sdk_initialize(session, version, INFO.name)
        yield session


@asynccontextmanager
async def connected(url: str, version: str, on_updated: Callable[[str], None]) -> AsyncIterator[Any]:
    if version == MODERN:
        async with Client(streamable_http_client(url), mode=MODERN, client_info=INFO, cache=None) as client:
            yield client
    else:
        async with handshake(url, version, on_updated) as session:
            yield session


@asynccontextmanager
async def subscribed(
    client: Any, version: str, uri: str, on_updated: Callable[[str], None], *, let_go: bool
) -> AsyncIterator[None]:
    if version != MODERN:
        await client.subscribe_resource(uri)
        yield
        if let_go:
            await client.unsubscribe_resource(uri)
        return
    async with client.listen(resource_subscriptions=[uri]) as subscription, anyio.create_task_group() as group:

        async def drain() -> None:
            async for event in subscription:
                if hasattr(event, "uri"):
                    on_updated(str(event.uri))

        group.start_soon(drain)
        yield
        group.cancel_scope.cancel()


async def remote_state(client: Any, until: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    with anyio.fail_after(15):
        while True:
            result = await client.call_tool("state", {})
            state: dict[str, Any] = json.loads(result.content[0].text)
            if until(state):
                return state
            await anyio.sleep(0.05)


async def wait_for(updates: dict[str, list[str]]) -> None:
    with anyio.fail_after(15):
        while not updates["a"] or not updates["b"]:
            await anyio.sleep(0.02)


async def toggled(version: str, url: str, uri: str, tool: str) -> dict[str, Any]:
    updates: dict[str, list[str]] = {"a": [], "b": []}
    report: dict[str, Any] = {"updates": updates}
    with anyio.fail_after(60):
        async with connected(url, version, updates["a"].append) as a, connected(url, version, updates["b"].append) as b:
            async with (
                subscribed(a, version, uri, updates["a"].append, let_go=True),
                subscribed(b, version, uri, updates["b"].append, let_go=True),
            ):
                report["toggled"] = (await a.call_tool(tool, {})).content[0].text
                try:
                    await wait_for(updates)
                finally:
                    await a.call_tool(tool, {})
    return report


async def run(version: str, url: str, uri: str) -> dict[str, Any]:
    updates: dict[str, list[str]] = {"a": [], "b": []}
    report: dict[str, Any] = {"updates": updates}
    with anyio.fail_after(60):
        async with connected(url, version, updates["a"].append) as a:
            async with AsyncExitStack() as b_connection:
                b = await b_connection.enter_async_context(connected(url, version, updates["b"].append))
                await b_connection.enter_async_context(subscribed(b, version, uri, updates["b"].append, let_go=False))
                async with subscribed(a, version, uri, updates["a"].append, let_go=True):
                    report["held"] = await remote_state(a, lambda state: f"{uri} 1" in state["holders"])
                    touched = await a.call_tool("touch", {"uri": uri})
                    report["touched"] = json.loads(touched.content[0].text)
                    await wait_for(updates)
            report["state"] = await remote_state(a, lambda state: state["holders"][-1] == f"{uri} 0")
    return report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--version", required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--uri", required=True)
    parser.add_argument("--toggle", help="a tool of the server that starts (and stops) its updates")
    args = parser.parse_args()
    try:
        if args.toggle:
            report = anyio.run(toggled, args.version, args.url, args.uri, args.toggle)
        else:
            report = anyio.run(run, args.version, args.url, args.uri)
    except BaseException as exc:  # noqa: BLE001 - the test reads the report
        report = {"fatal": repr(exc), "traceback": traceback.format_exc()}
    sys.stdout.write(json.dumps(report) + "\n")


if __name__ == "__main__":
    main()
