"""One meaning of SERVER (issue 45, item 4): every command that talks to a server takes a server
file, an installed command, a URL or a command after `--` the same way (`lock`/`lint`/`client`/
`replay-client --from server.py` once tried to execute the file), what none of those resolves is
the same one sentence everywhere, and `install` writes absolute paths. A server file with a syntax
error is reported once, naming the file and line, never the internal `mcp-bindgen run` line (item 5)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support.cli import SCRIPT, bindgen
from tests.support.cli import env as cli_env
from tests.support.recording import SERVER, record_in_memory

NOTES = """
from mcp_bindings.runtime.app import App

app = App("notes")


@app.tool
def add_note(text: str) -> str:
    \"\"\"Store a note.\"\"\"
    return f"stored {text}"
"""


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    path = tmp_path / "notes_server.py"
    path.write_text(NOTES, encoding="utf-8")
    return path


def test_the_contract_commands_take_a_server_file(notes: Path, tmp_path: Path) -> None:
    lint = bindgen("lint", "--from", notes.name, cwd=tmp_path)
    assert lint.returncode == 0, lint.stderr
    assert "1 tool(s)" in lint.stdout
    client = bindgen("client", "-o", "notes_client.py", "--from", notes.name, cwd=tmp_path)
    assert client.returncode == 0, client.stderr
    assert "add_note" in (tmp_path / "notes_client.py").read_text(encoding="utf-8")
    lock = bindgen("lock", "-o", "mcp-lock.json", "--protocol", "2025-11-25", "--from", notes.name, cwd=tmp_path)
    assert lock.returncode == 0, lock.stderr
    tools = json.loads((tmp_path / "mcp-lock.json").read_text(encoding="utf-8"))["versions"]["2025-11-25"]["tools"]
    assert [tool["name"] for tool in tools] == ["add_note"]


def test_replay_client_drives_a_server_file(tmp_path: Path) -> None:
    session = tmp_path / "s.mcpsession"
    anyio.run(record_in_memory, session, "2025-11-25")
    server_file = Path(SERVER[-1])  # the recorded server, named by its file alone
    done = bindgen("replay-client", session, "--from", server_file.name, cwd=server_file.parent)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert "all 6 recorded answers match" in done.stdout


@pytest.mark.parametrize(
    "command",
    [
        ["list", "tools", "{x}"],
        ["call", "{x}", "add_note"],
        ["lock", "--from", "{x}"],
        ["lint", "--from", "{x}"],
        ["install", "cursor", "{x}"],
    ],
)
def test_what_resolves_to_no_server_is_one_sentence_everywhere(tmp_path: Path, command: list[str]) -> None:
    environ = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": ""}
    done = bindgen(*[w.replace("{x}", "no-such-server-xyz") for w in command], cwd=tmp_path, environ=environ)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr == (
        "mcp-bindgen: error: 'no-such-server-xyz' names no server: SERVER is a server file (server.py[:app]), "
        "pkg.module:app, an installed command, an http(s) URL, or a command after --\n"
    )
    assert not (tmp_path / ".cursor").exists()


def _installed(tmp_path: Path, *words: str) -> dict[str, Any]:
    done = bindgen("install", "cursor", "--name", "s", *words, cwd=tmp_path, environ={"HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    return json.loads((tmp_path / ".cursor" / "mcp.json").read_text(encoding="utf-8"))["mcpServers"]["s"]


def test_install_takes_a_one_word_command_after_dashes_and_an_installed_command(tmp_path: Path) -> None:
    relative = os.path.relpath(SCRIPT, tmp_path)  # .venv/bin/weather-server, as the issue ran it
    assert _installed(tmp_path, "--", relative) == {"command": str(SCRIPT), "args": []}
    assert _installed(tmp_path, "mcp-bindgen") == {"command": str(SCRIPT), "args": []}  # `run` accepts one too


def test_install_writes_absolute_paths(notes: Path, tmp_path: Path) -> None:
    entry = _installed(tmp_path, "--", "python3", notes.name)
    assert entry == {"command": shutil.which("python3", path=cli_env()["PATH"]), "args": [str(notes)]}
    file_entry = _installed(tmp_path, notes.name)
    assert file_entry == {"command": str(SCRIPT), "args": ["run", str(notes)]}
    # the entry starts the server from another folder, as a host does
    words = [file_entry["command"], *file_entry["args"]]
    call = bindgen("call", "add_note", "text=x", "--", *words, cwd=Path("/"))
    assert call.returncode == 0 and "stored x" in call.stdout, call.stderr


def test_a_server_file_with_a_syntax_error_is_reported_once(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("from mcp_bindings.runtime.app import App\napp = App('b')\ndef f(:\n    pass\n", encoding="utf-8")
    for command in (["list", "tools", str(broken)], ["inspect", str(broken)], ["lock", "--from", str(broken)]):
        done = bindgen(*command, cwd=tmp_path)
        assert done.returncode == 2
        assert done.stderr == (
            f"mcp-bindgen: error: {broken}, line 3: SyntaxError: invalid syntax: fix the file and run again\n"
        )


def test_a_server_file_importing_what_is_not_installed_is_reported_once(tmp_path: Path) -> None:
    server = tmp_path / "needs.py"
    server.write_text("from mcp_bindings.runtime.app import App\nimport not_installed_xyz\napp = App('n')\n")
    for command in (["list", "tools", str(server)], ["call", str(server), "t"], ["lint", "--from", str(server)]):
        done = bindgen(*command, cwd=tmp_path)
        assert done.returncode == 2
        assert done.stderr == (
            f"mcp-bindgen: error: {server}, line 2: imports 'not_installed_xyz', which is not installed: "
            "pip install not_installed_xyz (or what provides it)\n"
        )


def test_a_server_file_failing_at_import_is_named_as_given(tmp_path: Path) -> None:
    """What only running the file finds (an exception at import) names the file as given, never the
    internal `mcp-bindgen run` command line."""
    server = tmp_path / "boom.py"
    server.write_text("from mcp_bindings.runtime.app import App\nraise RuntimeError('boom')\n", encoding="utf-8")
    done = bindgen("list", "tools", server.name, cwd=tmp_path)
    assert done.returncode == 4
    last = done.stderr.splitlines()[-1]
    assert last.startswith("mcp-bindgen: error: could not talk to `boom.py`: the MCP server `boom.py` exited"), last
    assert "RuntimeError: boom" in last and "'run'" not in last
