"""Record a real stdio server through the recording proxy and replay it to the same client
(tests/support/recording.py): every answer the same, progress carried with the new token, sampling
asked of the client again; an unmatched request named with its nearest recorded one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcp_bindings.runtime.recording.session_file import read_recording
from tests.support.recording import record_in_memory, replay_in_memory

pytestmark = pytest.mark.anyio

VERSIONS = ["2025-06-18", "2025-11-25"]


@pytest.mark.parametrize("version", VERSIONS)
async def test_replay_answers_as_recorded(tmp_path: Path, version: str) -> None:
    path = tmp_path / "s.mcpsession"
    live = await record_in_memory(path, version)
    assert live["add"]["structuredContent"] == {"result": 5} and live["progress"] == [[1, 3], [2, 3], [3, 3]]
    assert live["ask"]["content"][0]["text"] == "the model said: sampled: why?"
    recording = read_recording(path)
    assert recording.versions == [version]
    directions = {(e.dir, e.method) for e in recording.entries}
    assert ("server", "sampling/createMessage") in directions and ("server", "notifications/progress") in directions
    replayed = await replay_in_memory(recording, version)
    assert replayed == live
    replayed_strict = await replay_in_memory(recording, version, order="strict")
    assert replayed_strict == live


async def test_unmatched_request_names_the_nearest_recorded_one(tmp_path: Path) -> None:
    import anyio

    from mcp_bindings.runtime.recording.replay_server import ServerReplay
    from mcp_bindings.runtime.rpc.transport import memory_pair

    path = tmp_path / "s.mcpsession"
    await record_in_memory(path, "2025-11-25")
    recording = read_recording(path)
    client_end, server_end = memory_pair()
    replay = ServerReplay(recording)
    answers: list[Any] = []
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(replay.serve, server_end)
            for request in (
                {
                    "jsonrpc": "2.0",
                    "id": 7,
                    "method": "tools/call",
                    "params": {"name": "greet", "arguments": {"name": "Bob"}},
                },
                {"jsonrpc": "2.0", "id": 8, "method": "resources/list", "params": {}},
            ):
                await client_end.send(json.dumps(request).encode())
                answers.append(json.loads(await client_end.receive()))
            group.cancel_scope.cancel()
    first, second = answers
    assert first["id"] == 7 and first["error"]["code"] == -32602
    message = first["error"]["message"]
    assert "no recorded tools/call matches: the nearest is tools/call greet (s.mcpsession:" in message
    assert 'params.arguments.name: recorded "Ada", got "Bob"' in message
    assert first["error"]["data"]["differences"] == [
        {"path": "params.arguments.name", "kind": "changed", "recorded": "Ada", "actual": "Bob"}
    ]
    assert second["error"]["code"] == -32601
    assert second["error"]["message"].startswith("resources/list was never recorded (the recording has initialize, ")


async def test_strict_order_refuses_a_request_out_of_turn(tmp_path: Path) -> None:
    from mcp_bindings.runtime.recording.replay_server import ServerReplay, Unmatched

    path = tmp_path / "s.mcpsession"
    await record_in_memory(path, "2025-11-25")
    replay = ServerReplay(read_recording(path), order="strict")
    initialize = next(e for e in replay.exchanges if e.message.get("method") == "initialize")
    assert replay.claim(initialize.message) is initialize
    out_of_turn = replay.claim({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "add"}})
    assert isinstance(out_of_turn, Unmatched)
    assert out_of_turn.message.startswith("tools/call add is out of the recorded order: tools/list (s.mcpsession:")
    # In any order, the same request is found (and a request asked again is answered again).
    relaxed = ServerReplay(read_recording(path))
    add = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 2, "b": 3}}}
    first, again = relaxed.claim(add), relaxed.claim(add)
    assert not isinstance(first, Unmatched) and first is again and first.played == 2


async def test_versions_cross_where_negotiation_allows_and_say_so_where_not(tmp_path: Path) -> None:
    """A 2025-06-18 recording answers a 2025-11-25 client's handshake with its own version, which the
    client accepts as from any server. A 2026-07-28 (stateless) client is served the recording through
    the runtime's version crossing: answers cross into 2026-07-28; an exchange in which the recorded
    server asked the client something mid-request (sampling) cannot cross, and the error says so,
    naming the method and both versions. A stateless request inside a handshake connection is refused."""
    import anyio

    from mcp_bindings.runtime.client.runtime import connect
    from mcp_bindings.runtime.errors import McpError
    from mcp_bindings.runtime.protocol.versions import dump
    from mcp_bindings.runtime.recording.replay_server import ServerReplay
    from mcp_bindings.runtime.rpc.transport import memory_pair
    from mcp_bindings.v2026_07_28.client import Client as ModernClient
    from tests.peers.harness import Recorder, client_module, make_handlers

    path = tmp_path / "s.mcpsession"
    await record_in_memory(path, "2025-06-18")
    recording = read_recording(path)
    client_end, server_end = memory_pair()
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(ServerReplay(recording).serve, server_end)
            handlers = make_handlers("2025-11-25", Recorder())
            async with connect(client_end, client_module("2025-11-25").Client, handlers=handlers) as client:
                assert client.session.version == "2025-06-18"
                result = await client.call_tool(name="greet", arguments={"name": "Ada"})
                assert result.content[0].text == "Hello, Ada!"
            group.cancel_scope.cancel()
    replay = ServerReplay(recording)
    client_end, server_end = memory_pair()
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(replay.serve, server_end)
            async with connect(client_end, ModernClient) as modern:
                assert modern.session.version == "2026-07-28"
                listed = {t["name"]: t for t in dump(await modern.list_tools())["tools"]}
                assert sorted(listed) == ["add", "ask", "count", "greet"]
                assert listed["add"]["outputSchema"] == {  # crossed whole (2026-07-28 leaves its keywords open)
                    "type": "object",
                    "properties": {"result": {"type": "integer"}},
                    "required": ["result"],
                }
                greeted = await modern.call_tool(name="greet", arguments={"name": "Ada"})
                assert dump(greeted)["content"] == [{"type": "text", "text": "Hello, Ada!"}]  # a 2026-07-28 result
                stamped = dump(greeted)["_meta"]["io.modelcontextprotocol/serverInfo"]
                assert stamped == {"name": "recorded", "version": "1.0"}  # the recorded identity
                with pytest.raises(McpError) as refused:
                    await modern.call_tool(name="ask", arguments={"question": "why?"})
                assert refused.value.code == -32603
                assert str(refused.value.message).startswith("tools/call ask (s.mcpsession:")
                assert str(refused.value.message).endswith(
                    "the recording (MCP 2025-06-18) asked the client sampling/createMessage during this request, "
                    "which a client of MCP 2026-07-28 cannot be asked (a handshake-era server-to-client request "
                    "does not cross to the stateless era): record the session with a 2026-07-28 client"
                )
            group.cancel_scope.cancel()
    stateless = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/list",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
    }
    refused_claim = replay.claim(stateless)
    assert not isinstance(refused_claim, type(replay.exchanges[0]))
    assert refused_claim.message == (
        "tools/list is at protocol 2026-07-28, the recording at 2025-06-18: a recording replays at the "
        "protocol era it was made in (record the session with a 2026-07-28 client)"
    )
