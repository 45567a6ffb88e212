"""`mcp-bindgen replay`, `diff-sessions` and `mock` given hostile files (security issue 43, item 11):
a delay too long to keep (`"t": 1e9`) or not a number at all (`1e400`), an object or array request
id, a line nested 100,000 deep, a malformed lock. Each is one sentence naming the file and line (or
field) before anything is served: before, a replay with `--timing preserved` left `tools/call`
unanswered with no message, the ids and the nesting were a bare `TypeError` / `RecursionError`, and
the mock started and answered -32603 to every call."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_bindgen.cli import main
from tests.support.cli import bindgen

HEADER = {"mcpsession": 1, "created": "2026-01-01T00:00:00+00:00", "transport": "stdio", "server": {"command": ["s"]}}
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}},
}
READY = {
    "jsonrpc": "2.0",
    "id": 0,
    "result": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "s", "version": "1"},
    },
}
CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}}
ANSWER = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "3"}]}}


def _line(seq: int, t: float, direction: str, message: dict[str, Any]) -> str:
    entry = {"seq": seq, "t": t, "dir": direction, "transport": "stdio", "version": "2025-11-25", "message": message}
    return json.dumps(entry)


def session(tmp_path: Path, name: str, *, answer_t: str = "0.04", call_id: str = "1", answer: str = '"3"') -> Path:
    """A recorded initialize and tools/call, the call's answer (line 5) edited as written."""
    lines = [
        json.dumps(HEADER),
        _line(1, 0.0, "client", INIT),
        _line(2, 0.01, "server", READY),
        _line(3, 0.02, "client", {"jsonrpc": "2.0", "method": "notifications/initialized"}),
        _line(4, 0.03, "client", CALL).replace('"id": 1', f'"id": {call_id}'),
        _line(5, 0.04, "server", ANSWER)
        .replace('"t": 0.04', f'"t": {answer_t}')
        .replace('"id": 1', f'"id": {call_id}')
        .replace('"3"', answer),
    ]
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


DEEP = "[" * 100_000 + "]" * 100_000
HOSTILE = [
    (
        {"answer_t": "1e9"},
        r"s\.mcpsession:6: recorded 1e\+09 s after the request it answers, longer than --timing "
        r"preserved waits \(300 s\); replay it with --timing fast",
    ),
    ({"answer_t": "1e400"}, r"s\.mcpsession:6: invalid entry: t: inf is not a finite number of seconds"),
    (
        {"call_id": '{"a": 1}'},
        r"s\.mcpsession:5: invalid entry: message\.id: \{'a': 1\} is not of type 'string', "
        r"'number', 'null'",
    ),
    ({"call_id": "[1]"}, r"s\.mcpsession:5: invalid entry: message\.id: \[1\] is not of type"),
    ({"answer": DEEP}, r"s\.mcpsession:6: nested deeper than 200 levels"),
    ({"answer": "[" * 300 + "]" * 300}, r"s\.mcpsession:6: nested deeper than 200 levels"),
]
IDS = ["t-1e9", "t-1e400", "object-id", "array-id", "nested-100000", "nested-300"]


@pytest.mark.parametrize(("edit", "says"), HOSTILE, ids=IDS)
def test_replay_refuses_a_hostile_session_in_one_sentence(tmp_path: Path, edit: dict[str, str], says: str) -> None:
    done = bindgen("replay", str(session(tmp_path, "s.mcpsession", **edit)), "--timing", "preserved")
    assert done.returncode == 1, done
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("mcp-bindgen: error: ")
    assert re.search(says, line), line


@pytest.mark.parametrize(("edit", "says"), HOSTILE[1:], ids=IDS[1:])
def test_diff_sessions_refuses_a_hostile_session_in_one_sentence(
    tmp_path: Path, edit: dict[str, str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    good = session(tmp_path, "good.mcpsession")
    hostile = session(tmp_path, "s.mcpsession", **edit)
    assert main(["diff-sessions", str(good), str(hostile)]) == 1
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("mcp-bindgen: error: ") and "Traceback" not in line
    assert re.search(says, line), line


def test_a_delay_within_the_bound_is_kept_and_fast_timing_ignores_any(tmp_path: Path) -> None:
    assert (
        main(
            [
                "diff-sessions",
                str(session(tmp_path, "a.mcpsession")),
                str(session(tmp_path, "b.mcpsession", answer_t="1e9")),
            ]
        )
        == 0
    )
    assert bindgen("replay", str(session(tmp_path, "s.mcpsession", answer_t="1e9")), "--timing", "fast").returncode == 0


async def _call(command: list[str]) -> Any:
    from mcp_bindings.runtime.stdio import connect_stdio
    from mcp_bindings.v2025_11_25.client import Client

    try:
        with anyio.fail_after(30):
            async with connect_stdio(command, Client) as client:
                return await client.call_tool(name="add", arguments={"a": 1, "b": 2})
    except Exception as exc:  # noqa: BLE001 - what the client saw is the observation
        return exc


def test_a_client_of_a_replay_with_a_delay_too_long_is_told_why(tmp_path: Path) -> None:
    """As the probe ran it: before, this call was never answered and nothing was said."""
    path = session(tmp_path, "s.mcpsession", answer_t="1e9")
    seen = anyio.run(_call, [sys.executable, "-m", "mcp_bindgen.cli", "replay", str(path), "--timing", "preserved"])
    assert isinstance(seen, ConnectionError), seen
    assert "s.mcpsession:6: recorded 1e+09 s after the request it answers" in str(seen)


def lock(tmp_path: Path, **changes: Any) -> Path:
    surface: dict[str, Any] = {
        "serverInfo": {"name": "handwritten"},
        "capabilities": {"tools": {}},
        "tools": [{"name": "add", "inputSchema": {"type": "object"}}],
    }
    surface.update(changes)
    path = tmp_path / "mcp-lock.json"
    path.write_text(json.dumps({"lockFormat": 1, "versions": {"2025-11-25": surface}}))
    return path


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        (
            {"tools": 5},
            "versions.2025-11-25.tools: Input should be a valid list (what the mock answers tools/list with)",
        ),
        ({"tools": ["add"]}, "versions.2025-11-25.tools[0]: Input should be a valid dictionary or instance of Tool"),
        (
            {"tools": [{"name": 1, "inputSchema": {}}]},
            "versions.2025-11-25.tools[0].name: Input should be a valid string",
        ),
        ({"tools": [{"name": "add", "inputSchema": "x"}]}, "versions.2025-11-25.tools[0].inputSchema: Input should be"),
        ({"prompts": [{"title": "no name"}]}, "versions.2025-11-25.prompts[0].name: Field required"),
        ({"capabilities": ["tools"]}, "versions.2025-11-25.capabilities is not an object"),
    ],
    ids=[
        "tools-not-a-list",
        "tool-not-an-object",
        "name-not-a-string",
        "schema-not-an-object",
        "prompt-no-name",
        "caps",
    ],
)
def test_a_malformed_lock_is_refused_at_start(tmp_path: Path, changes: dict[str, Any], says: str) -> None:
    done = bindgen("mock", str(lock(tmp_path, **changes)))
    assert done.returncode == 1, done
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"mcp-bindgen: error: {tmp_path / 'mcp-lock.json'}: ") and says in line, line
    assert line.endswith("write it again with `mcp-bindgen lock`"), line


def test_a_well_formed_lock_is_served(tmp_path: Path) -> None:
    seen = anyio.run(_call, [sys.executable, "-m", "mcp_bindgen.cli", "mock", str(lock(tmp_path))])
    assert not isinstance(seen, Exception), seen
    assert seen.content[0].text
