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


def with_late_server_request(source: Path, target: Path, tool: str) -> None:
    """`source` (recorded at 2025-11-25) with a server request `roots/list` the server sent right
    after it answered `tool`, and the client's answer to it: the order a server that asks for the
    roots on its own, a moment after answering, leaves in a recording (there by timing; here by hand)."""
    lines = source.read_text(encoding="utf-8").splitlines()
    entries = [json.loads(line) for line in lines[1:]]
    call = next(e for e in entries if ((e["message"] or {}).get("params") or {}).get("name") == tool)
    answer = next(e for e in entries if e["dir"] == "server" and e["message"].get("id") == call["message"]["id"])
    at = entries.index(answer) + 1
    base = {"transport": answer["transport"], "session": answer["session"], "version": answer["version"]}
    asked = {**base, "t": answer["t"], "dir": "server", "message": {"jsonrpc": "2.0", "id": 0, "method": "roots/list"}}
    roots = {"roots": [{"uri": "file:///tmp/project", "name": "project"}]}
    answered = {**base, "t": answer["t"], "dir": "client", "message": {"jsonrpc": "2.0", "id": 0, "result": roots}}
    entries[at:at] = [asked, answered]
    for seq, entry in enumerate(entries, 1):
        entry["seq"] = seq
    target.write_text("\n".join([lines[0], *(json.dumps(e) for e in entries)]) + "\n", encoding="utf-8")


async def test_a_server_request_after_a_call_was_answered_is_the_sessions(tmp_path: Path) -> None:
    recorded = tmp_path / "handshake.mcpsession"
    await record_in_memory(recorded, HANDSHAKE)
    path = tmp_path / "late.mcpsession"
    with_late_server_request(recorded, path, "greet")
    recording = read_recording(path)

    replay = ServerReplay(recording)
    (greet,) = [ex for ex in replay.exchanges if (ex.message.get("params") or {}).get("name") == "greet"]
    assert [e.method for e in greet.episode] == [] and [e.method for e in greet.after] == ["roots/list"]

    # A 2026-07-28 client replaying the call is answered: the request is not the call's.
    notes: list[str] = []
    greeted: Any = None
    client_end, server_end = memory_pair()
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as group:
            replay = ServerReplay(recording, log=_Lines(notes))
            group.start_soon(replay.serve, server_end)
            async with connect(client_end, client_module(MODERN).Client) as modern:
                greeted = await modern.call_tool(name="greet", arguments={"name": "Ada"})
            group.cancel_scope.cancel()
    assert [block.text for block in greeted.content] == ["Hello, Ada!"]
    assert any("roots/list" in note and "belongs to the session" in note for note in notes), notes

    # A client of the recorded era is still asked for its roots, once the call is answered.
    seen = Recorder()
    greeted = None
    client_end, server_end = memory_pair()
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as group:
            group.start_soon(ServerReplay(recording).serve, server_end)
            handlers = make_handlers(HANDSHAKE, seen)
            async with connect(client_end, client_module(HANDSHAKE).Client, handlers=handlers) as client:
                greeted = await client.call_tool(name="greet", arguments={"name": "Ada"})
                await seen.wait_for(lambda r: bool(r.of("roots")))
            group.cancel_scope.cancel()
    assert [block.text for block in greeted.content] == ["Hello, Ada!"] and seen.of("roots") == [None]


class _Lines:
    """A log (`ServerReplay(log=...)`) keeping what the replay says."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines

    def write(self, text: str) -> int:
        if text.strip():
            self.lines.append(text.strip())
        return len(text)

    def flush(self) -> None:
        return None


def test_a_server_message_goes_where_its_response_stream_says() -> None:
    """Over HTTP the entry says which request's stream carried a server message (`http.related`):
    it is filed under that request even when another was opened after it, and a message of the GET
    stream (null) is the session's even while a request is open."""
    from mcp_bindings.runtime.recording.exchanges import exchanges_of
    from mcp_bindings.runtime.recording.session_file import Entry

    def entry(seq: int, direction: Any, message: dict[str, Any], **http: Any) -> Entry:
        return Entry(seq, seq / 10, direction, "http", {"jsonrpc": "2.0", **message}, http=http or None)

    call = {"method": "tools/call", "params": {"name": "slow"}}
    recording = Recording(
        {},
        [
            entry(1, "client", {"id": 1, **call}),
            entry(2, "client", {"id": 2, **call}),
            entry(3, "server", {"method": "notifications/progress", "params": {"progress": 1}}, related=1),
            entry(4, "server", {"id": 0, "method": "roots/list"}, related=None),  # the GET stream
            entry(5, "server", {"id": 2, "result": {"content": []}}, related=2),
            entry(6, "server", {"id": 1, "result": {"content": []}}, related=1),
        ],
    )
    _, (first, second) = exchanges_of(recording)
    assert [e.seq for e in first.episode] == [3] and second.episode == []
    assert [e.seq for e in second.after] == [4]  # the session's, after what the client said last
