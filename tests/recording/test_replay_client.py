"""The client side of a recording replayed to a live server (`replay_client`,
`mcp-bindgen replay-client`): the same server passes, a server whose tool answers differently is
named with the tool and the field; and two recordings compared (`mcp-bindgen diff-sessions`)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from mcp_bindgen.cli import main
from mcp_bindings.runtime.recording.replay_client import replay_client
from mcp_bindings.runtime.recording.session_diff import diff_sessions
from mcp_bindings.runtime.recording.session_file import read_recording
from tests.support.recording import CHANGED_SERVER, SERVER, record_in_memory


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    path = tmp_path / "s.mcpsession"
    anyio.run(record_in_memory, path, "2025-11-25")
    return path


@pytest.mark.anyio
async def test_the_same_server_passes(recorded: Path) -> None:
    with anyio.fail_after(30):
        report = await replay_client(read_recording(recorded), SERVER)
    assert report.ok, report.text()
    assert report.checked == 6  # initialize, tools/list and four calls (the sampling request answered from the file)
    assert report.text() == f"{recorded}: all 6 recorded answers match"


@pytest.mark.anyio
async def test_a_changed_tool_result_is_named(recorded: Path) -> None:
    with anyio.fail_after(30):
        report = await replay_client(read_recording(recorded), CHANGED_SERVER)
    assert not report.ok
    [mismatch] = report.mismatches
    assert mismatch.request == "tools/call greet" and mismatch.where.startswith("s.mcpsession:")
    paths = {d.path: (d.recorded, d.actual) for d in mismatch.differences}
    assert paths["result.content[0].text"] == ("Hello, Ada!", "Howdy, Ada!")
    assert 'tools/call greet: result.content[0].text: recorded "Hello, Ada!", got "Howdy, Ada!"' in report.text()


def test_cli_replay_client_exit_status(recorded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay-client", str(recorded), "--from", *SERVER]) == 0
    assert "all 6 recorded answers match" in capsys.readouterr().out
    assert main(["replay-client", str(recorded), "--format", "json", "--from", *CHANGED_SERVER]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [m["request"] for m in report["mismatches"]] == ["tools/call greet"]
    ignored = ["--ignore-result", "result.content", "--ignore-result", "result.structuredContent"]
    assert main(["replay-client", str(recorded), *ignored, "--from", *CHANGED_SERVER]) == 0


@pytest.mark.anyio
async def test_diff_sessions_classifies(recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    changed = tmp_path / "changed.mcpsession"
    await record_in_memory(changed, "2025-11-25", CHANGED_SERVER)
    diff = diff_sessions(read_recording(recorded), read_recording(changed))
    assert diff.paired == 6 and not diff.breaking
    assert {(c.request, c.severity) for c in diff.changes} == {("tools/call greet", "changed")}
    # A tool gone from tools/list and an error where there was a result are breaking.
    broken = tmp_path / "broken.mcpsession"
    lines = []
    for line in changed.read_text().splitlines():
        value = json.loads(line)
        message = value.get("message") or {}
        tools = (message.get("result") or {}).get("tools")
        if tools:
            message["result"]["tools"] = [t for t in tools if t["name"] != "count"]
            greet = next(t for t in tools if t["name"] == "greet")
            greet["inputSchema"]["properties"]["name"]["maxLength"] = 3  # accepts less: breaking, says the lock
        if (message.get("result") or {}).get("structuredContent") == {"result": 5}:
            del message["result"]
            message["error"] = {"code": -32603, "message": "adder is down"}
        lines.append(json.dumps(value))
    broken.write_text("\n".join(lines) + "\n")
    diff = diff_sessions(read_recording(recorded), read_recording(broken))
    breaking = {(c.request, c.what.split(":")[0]) for c in diff.breaking}
    assert ("tools/list", "tools.count") in breaking
    assert ("tools/call add", "an error where there was a result") in breaking
    # A new keyword in a schema is only a field added to the session diff; the lock's own
    # classification (contract.compat, as `mcp-bindgen lock --check`) knows it narrows the input.
    added = [c for c in diff.changes if c.what.startswith("tools.greet.inputSchema.properties.name.maxLength")]
    assert [c.severity for c in added] == ["harmless"]
    capsys.readouterr()
    assert main(["diff-sessions", "--format", "json", str(recorded), str(broken)]) == 1
    surface = {(c["where"], c["kind"]) for c in json.loads(capsys.readouterr().out)["surface"]}
    assert any(where.endswith("tool `count`") and kind == "breaking" for where, kind in surface)
    assert any("tool `greet` inputSchema" in where and kind == "breaking" for where, kind in surface)
    assert main(["diff-sessions", str(recorded), str(recorded)]) == 0
