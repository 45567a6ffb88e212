"""Replaying a recording to a client of the other era (`recording.crossed_replay`), issue 44:

- item 4: a 2026-07-28 recording states the server's identity and capabilities only in its
  `server/discover` result (the server info under `_meta`, as the spec puts it): replayed to a
  2025-11-25 client, the runtime's `initialize` answer offers those capabilities and that identity,
  and the calls are answered (they were all -32601, the `initialize` answer empty);
- item 6: a server request the recorded server sent after a call was answered belongs to the
  session, not to that call: a 2026-07-28 client replaying the call is answered (it was refused,
  the call said to have asked the client something mid-request)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_bindings.runtime.client.runtime import connect
from mcp_bindings.runtime.recording.replay_server import ServerReplay
from mcp_bindings.runtime.recording.session_file import Recording, read_recording
from mcp_bindings.runtime.rpc.transport import memory_pair
from tests.peers.harness import Recorder, client_module, make_handlers
from tests.support.recording import LIMIT, record_in_memory, replay_in_memory

pytestmark = pytest.mark.anyio
MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"


def spec_shaped(source: Path, target: Path) -> dict[str, Any]:
    """`source` with its `server/discover` result as the spec shapes it (and as servers other than
    this project's send it): the server info only under `_meta`. Returns that result."""
    lines = source.read_text(encoding="utf-8").splitlines()
    entries = [json.loads(line) for line in lines[1:]]
    asked = {e["message"]["id"] for e in entries if (e.get("message") or {}).get("method") == "server/discover"}
    result: dict[str, Any] = {}
    for entry in entries:
        message = entry.get("message") or {}
        if entry["dir"] == "server" and message.get("id") in asked and "result" in message:
            result = message["result"]
            result.pop("serverInfo", None)
    target.write_text("\n".join([lines[0], *(json.dumps(e) for e in entries)]) + "\n", encoding="utf-8")
    return result


async def handshake_client_of(recording: Recording) -> tuple[str | None, dict[str, Any], dict[str, Any]]:
    """A 2025-11-25 client's handshake with a replay of `recording`: the version, the server info
    and the capabilities it was offered."""
    client_end, server_end = memory_pair()
    seen: tuple[str | None, dict[str, Any], dict[str, Any]] = (None, {}, {})
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as group:
            group.start_soon(ServerReplay(recording).serve, server_end)
            handlers = make_handlers(HANDSHAKE, Recorder())
            async with connect(client_end, client_module(HANDSHAKE).Client, handlers=handlers) as client:
                runtime = client.session
                seen = (runtime.version, dict(runtime.server_info), dict(runtime.peer_capabilities))
            group.cancel_scope.cancel()
    return seen


async def test_a_2026_07_28_recording_serves_a_2025_11_25_client_from_its_discover_result(tmp_path: Path) -> None:
    recorded = tmp_path / "modern.mcpsession"
    live = await record_in_memory(recorded, MODERN)  # the recording server, a real stdio process
    path = tmp_path / "spec.mcpsession"
    discover = spec_shaped(recorded, path)
    assert "serverInfo" not in discover and discover["_meta"][SERVER_INFO] == {"name": "recorded", "version": "1.0"}
    recording = read_recording(path)

    version, info, capabilities = await handshake_client_of(recording)
    assert version == HANDSHAKE
    assert info == {"name": "recorded", "version": "1.0"}  # from the discover result's `_meta`
    assert capabilities == {"logging": {}, "tools": {"listChanged": True}}

    crossed = await replay_in_memory(recording, HANDSHAKE)
    assert crossed["tools"] == live["tools"] == ["add", "ask", "count", "greet"]
    for step in ("add", "greet", "count"):
        assert crossed[step] == {k: v for k, v in live[step].items() if k != "resultType"}, step
    assert crossed["progress"] == live["progress"] == [[1, 3], [2, 3], [3, 3]]
    assert crossed["ask"]["content"] == live["ask"]["content"]  # its input round, bridged into sampling
