"""What the recording tests (tests/recording/) share: the server they record
(tests/peers/recording_server.py), a scenario our typed client drives through it, and a session
recorded or replayed in memory (the recording proxy and the replay on a memory transport; the
server a real stdio process)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio

from mcp_bindings.runtime.client.runtime import connect
from mcp_bindings.runtime.protocol.versions import dump
from mcp_bindings.runtime.recording.replay_server import ServerReplay
from mcp_bindings.runtime.recording.session_file import Recording
from mcp_bindings.runtime.recording.stdio_proxy import record_stdio
from mcp_bindings.runtime.rpc.transport import memory_pair
from tests.peers.harness import PEERS, Recorder, client_module, make_handlers

SERVER = [sys.executable, str(PEERS / "recording_server.py")]
CHANGED_SERVER = [*SERVER, "--changed"]
LIMIT = 30  # seconds


async def scenario(client: Any) -> dict[str, Any]:
    """The calls the tests record and replay: what each answered, as JSON."""
    seen: list[Any] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append([progress, total])

    out: dict[str, Any] = {"tools": sorted(t.name for t in (await client.list_tools()).tools)}
    out["add"] = dump(await client.call_tool(name="add", arguments={"a": 2, "b": 3}))
    out["greet"] = dump(await client.call_tool(name="greet", arguments={"name": "Ada"}))
    with client.session.progress(on_progress):
        out["count"] = dump(await client.call_tool(name="count", arguments={"steps": 3}))
    out["progress"] = seen
    out["ask"] = dump(await client.call_tool(name="ask", arguments={"question": "why?"}))
    return out


async def record_in_memory(path: Path, version: str, command: list[str] = SERVER) -> dict[str, Any]:
    """Record `scenario` at `version` through the stdio recording proxy; what the client saw."""
    client_end, proxy_end = memory_pair()
    result: dict[str, Any] = {}
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: record_stdio(command, path, client=proxy_end))
            async with connect(
                client_end, client_module(version).Client, handlers=make_handlers(version, Recorder())
            ) as client:
                result = await scenario(client)
    return result


async def replay_in_memory(recording: Recording, version: str, **options: Any) -> dict[str, Any]:
    """Run `scenario` at `version` against a replay of `recording`; what the client saw."""
    client_end, server_end = memory_pair()
    replay = ServerReplay(recording, **options)
    result: dict[str, Any] = {}
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as group:
            group.start_soon(replay.serve, server_end)
            async with connect(
                client_end, client_module(version).Client, handlers=make_handlers(version, Recorder())
            ) as client:
                result = await scenario(client)
            group.cancel_scope.cancel()
    return result


def recording_app() -> Any:
    """The recorded server's `App` (tests/peers/recording_server.py), to serve in-process over HTTP."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("recording_server_app", PEERS / "recording_server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.app


async def drive_http(url: str, version: str) -> dict[str, Any]:
    """`scenario` at `version` over Streamable HTTP."""
    from mcp_bindings.runtime.client.http import connect_http

    with anyio.fail_after(LIMIT):
        async with connect_http(
            url, client_module(version).Client, handlers=make_handlers(version, Recorder())
        ) as client:
            return await scenario(client)
