"""The pytest plugin (`mcp_bindings.runtime.recording.pytest_plugin`), run as a user runs it: a
test project of its own in a temporary folder, pytest in a subprocess. First run records, later runs
replay (the server is not even started), `none` fails without a file, `new_episodes` answers a new
request live and writes it to the file, `all` records again; a server test replays the recorded
client side and names a changed answer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_bindings.runtime.recording.session_file import read_recording
from tests.support.recording import CHANGED_SERVER, SERVER

pytestmark = pytest.mark.slow  # pytest in subprocesses, a few seconds each

CONFTEST = 'pytest_plugins = ["mcp_bindings.runtime.recording.pytest_plugin"]\n'
TEST_MODULE = """
import json
import os

import anyio

from mcp_bindings.runtime.recording.pytest_plugin import McpRecording
from mcp_bindings.runtime.stdio import connect_stdio
from mcp_bindings.v2025_11_25.client import Client

SERVER = json.loads(os.environ["SERVER"])


async def greet(command: list[str], names: list[str]) -> list[str]:
    async with connect_stdio(command, Client) as client:
        return [
            (await client.call_tool(name="greet", arguments={"name": name})).content[0].text for name in names
        ]


def test_host(mcp_recording: McpRecording) -> None:
    names = json.loads(os.environ.get("NAMES", '["Ada"]'))
    answers = anyio.run(greet, mcp_recording.server(SERVER), names)
    assert answers == [f"Hello, {name}!" for name in names]
    print("RECORDING" if mcp_recording.recording else "REPLAYING")


def test_server(mcp_recording: McpRecording) -> None:
    mcp_recording.path = mcp_recording.path.with_name("test_host.mcpsession")
    mcp_recording.check_server(SERVER)
"""


def run(
    project: Path, *args: str, server: list[str] = SERVER, names: str = '["Ada"]'
) -> subprocess.CompletedProcess[str]:
    import json
    import os

    env = {**os.environ, "SERVER": json.dumps(server), "NAMES": names}
    argv = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-s",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
        "-p",
        "no:hypothesispytest",
        *args,
    ]
    return subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_mcp.py").write_text(TEST_MODULE)
    return tmp_path


def test_records_then_replays(project: Path) -> None:
    session = project / "recordings" / "test_mcp" / "test_host.mcpsession"
    first = run(project, "-k", "test_host")
    assert first.returncode == 0, first.stdout + first.stderr
    assert "RECORDING" in first.stdout and session.exists()
    # Replayed: the server command is not even run (it does not exist).
    second = run(project, "-k", "test_host", server=["/nonexistent/server"])
    assert second.returncode == 0, second.stdout + second.stderr
    assert "REPLAYING" in second.stdout
    # A server test replays the recorded client side to the server.
    assert run(project, "-k", "test_server").returncode == 0
    changed = run(project, "-k", "test_server", server=CHANGED_SERVER)
    assert changed.returncode == 1
    assert 'tools/call greet: result.content[0].text: recorded "Hello, Ada!", got "Howdy, Ada!"' in changed.stdout


def test_modes(project: Path) -> None:
    session = project / "recordings" / "test_mcp" / "test_host.mcpsession"
    missing = run(project, "-k", "test_host", "--mcp-record-mode=none")
    assert missing.returncode == 1 and "no recording at" in missing.stdout and "test_host.mcpsession" in missing.stdout
    assert run(project, "-k", "test_host").returncode == 0
    before = read_recording(session)
    # new_episodes: "Bob" was never recorded; the live server answers it and the file gains it.
    grown = run(project, "-k", "test_host", "--mcp-record-mode=new_episodes", names='["Ada", "Bob"]')
    assert grown.returncode == 0, grown.stdout + grown.stderr
    after = read_recording(session)
    texts = [json.dumps(e.message) for e in after.entries]
    assert any("Hello, Bob!" in t for t in texts) and any("Hello, Ada!" in t for t in texts)
    assert not any("Hello, Bob!" in json.dumps(e.message) for e in before.entries)
    # Replayed again, both names are answered from the file alone.
    assert (
        run(
            project, "-k", "test_host", "--mcp-record-mode=none", server=["/nonexistent"], names='["Ada", "Bob"]'
        ).returncode
        == 0
    )
    # all: recorded again, whatever is there.
    again = run(project, "-k", "test_host", "--mcp-record-mode=all")
    assert again.returncode == 0 and "RECORDING" in again.stdout
