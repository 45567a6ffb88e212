"""Every snippet of docs/testing-with-recordings.md runs as written (from a copy of the repository's
examples in a temporary folder, with the project's environment first on PATH): the record and
replay programs, the shell commands, the HTTP recording proxy, the JSON examples (read with the
format's own checks), and the pytest snippets as a test project of their own.

Each test claims its block by a line only that block has; `test_every_snippet_has_a_test` fails when
a block is added that no test claims."""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from mcp_bindings.runtime.recording.redaction import load_redaction
from mcp_bindings.runtime.recording.session_file import read_recording
from tests.support import REPO_ROOT, announced_url, said_url

DOC = (REPO_ROOT / "docs" / "testing-with-recordings.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```(\w+)\n(.*?)```", DOC, re.S)

CLAIMS = {
    "mcp-bindgen record -o weather.mcpsession -- .venv/bin/python": "test_shell_commands",
    '"record", "-o", "weather.mcpsession"': "test_record_then_replay_programs",
    "--listen 127.0.0.1:8800": "test_http_recording_command",
    '"patterns": ["sk-': "test_redaction_rules_example",
    '"mcpsession": 1, "created"': "test_format_example",
    'connect_stdio(["mcp-bindgen", "replay", "weather.mcpsession"]': "test_record_then_replay_programs",
    "no recorded tools/call matches": "test_record_then_replay_programs",
    "mcp-bindgen replay weather.mcpsession --order strict": "test_shell_commands",
    "mcp-bindgen replay-client weather.mcpsession": "test_shell_commands",
    "mcp-bindgen diff-sessions": "test_shell_commands",
    "pytest_plugins = [": "test_pytest_snippets",
    "def test_weather_client(": "test_pytest_snippets",
    "mcp-bindgen mock mcp-lock.json --seed 7": "test_mock_commands",
    "--http 127.0.0.1:8800": "test_http_replay_command",
    "from mcp_bindings.v2026_07_28.client import Client": "test_replay_across_eras",
    "asked the client elicitation/create": "test_what_cannot_cross",
    "--new-episodes http://127.0.0.1:8000/mcp": "test_new_episodes_http_command",
    "mcp-bindgen mock mcp-lock.json --http 127.0.0.1:8801": "test_mock_http_command",
}


def block(marker: str) -> str:
    found = [text for _, text in BLOCKS if marker in text]
    assert len(found) == 1, f"{len(found)} blocks of docs/testing-with-recordings.md hold {marker!r}"
    return found[0]


def env() -> dict[str, str]:
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    shutil.copytree(REPO_ROOT / "examples", tmp_path / "examples")
    # The page's commands run from a checkout set up by the README: `.venv/bin/python` is there.
    (tmp_path / ".venv").symlink_to(Path(sys.executable).parent.parent)
    return tmp_path


def run(argv: list[str], cwd: Path, timeout: float = 60, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env(), capture_output=True, text=True, timeout=timeout, **kwargs)  # type: ignore[call-overload]


def python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-c", code], cwd)


def test_every_snippet_has_a_test() -> None:
    claimed = [marker for marker in CLAIMS if any(marker in text for _, text in BLOCKS)]
    assert claimed == list(CLAIMS), "a claimed snippet is gone from the page"
    unclaimed = [text.splitlines()[0] for _, text in BLOCKS if not any(marker in text for marker in CLAIMS)]
    assert not unclaimed, f"snippets without a test: {unclaimed}"


def record(workdir: Path) -> None:
    done = python(block('"record", "-o", "weather.mcpsession"'), workdir)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "{'city': 'Oslo', 'celsius': 21.5}"


def test_record_then_replay_programs(workdir: Path) -> None:
    record(workdir)
    recording = read_recording(workdir / "weather.mcpsession")
    assert recording.versions == ["2025-11-25"]
    (workdir / "examples" / "app_server.py").unlink()  # replayed: the server is not needed
    done = python(block('connect_stdio(["mcp-bindgen", "replay", "weather.mcpsession"]'), workdir)
    assert done.returncode == 0, done.stderr
    first, error = done.stdout.strip().splitlines()
    assert first == "{'city': 'Oslo', 'celsius': 21.5}"
    assert block("no recorded tools/call matches").strip() in error


def test_shell_commands(workdir: Path) -> None:
    record(workdir)
    recorder = block("mcp-bindgen record -o weather.mcpsession -- .venv/bin/python").strip()
    replay = block("mcp-bindgen replay weather.mcpsession --order strict").strip()
    replay_client = block("mcp-bindgen replay-client weather.mcpsession").strip()
    diff = block("mcp-bindgen diff-sessions").strip()
    # The recording command is a server command: a host (our client) spawns it.
    program = block('"record", "-o", "weather.mcpsession"').replace(
        '["mcp-bindgen", "record", "-o", "weather.mcpsession", "--", *SERVER]', repr(shlex.split(recorder))
    )
    program = program.replace("weather.mcpsession", "weather-again.mcpsession")
    assert python(program, workdir).returncode == 0
    again = read_recording(workdir / "weather-again.mcpsession")
    assert again.header["server"]["command"] == [".venv/bin/python", "examples/app_server.py"]
    # The replay command serves a client the same way.
    replayed = block('connect_stdio(["mcp-bindgen", "replay", "weather.mcpsession"]').replace(
        '["mcp-bindgen", "replay", "weather.mcpsession"]', repr(shlex.split(replay))
    )
    done = python(replayed, workdir)
    assert done.returncode == 0 and done.stdout.startswith("{'city': 'Oslo', 'celsius': 21.5}"), done.stderr
    checked = run(shlex.split(replay_client), workdir)
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.strip() == "weather.mcpsession: all 2 recorded answers match"
    assert "`weather.mcpsession: all 2 recorded answers match`" in DOC
    compared = run(shlex.split(diff), workdir)
    assert compared.returncode == 0, compared.stdout + compared.stderr
    assert "paired requests have the same answers" in compared.stdout


def test_http_recording_command(workdir: Path) -> None:
    line = block("--listen 127.0.0.1:8800").strip()
    log = workdir / "server.log"
    with log.open("wb") as stderr:  # port 0 for both: each binds its own and says where
        server = subprocess.Popen(
            [sys.executable, "examples/echo_server.py", "--transport", "http", "--port", "0"],
            cwd=workdir,
            env=env(),
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    served = announced_url(log, server)
    command = shlex.split(line.replace("http://127.0.0.1:8000/mcp", served).replace("8800", "0"))
    proxy = subprocess.Popen(
        command, cwd=workdir, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        proxy_url = said_url(proxy.stderr, "connect the host to")
        headers = {"Accept": "application/json, text/event-stream", "Authorization": "Bearer abcdefgh12345678"}
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "doc", "version": "0"},
            },
        }
        answer = httpx.post(proxy_url, json=body, headers=headers, timeout=10)
        assert answer.status_code == 200 and "2025-11-25" in answer.text
    finally:
        proxy.send_signal(signal.SIGINT)
        _, err = proxy.communicate(timeout=10)
        server.terminate()
        server.wait(timeout=10)
    assert proxy.returncode == 0, err
    assert proxy_url.startswith("http://127.0.0.1:") and proxy_url.endswith("/mcp")
    recording = read_recording(workdir / "weather.mcpsession")
    assert [e.dir for e in recording.entries] == ["client", "server"]
    assert recording.entries[0].http and recording.entries[0].http["headers"]["authorization"] == "[REDACTED]"
    assert recording.entries[1].http and recording.entries[1].http["status"] == 200
    assert recording.versions == ["2025-11-25"]
    assert "abcdefgh12345678" not in (workdir / "weather.mcpsession").read_text()


def test_redaction_rules_example(tmp_path: Path) -> None:
    rules = tmp_path / "rules.json"
    rules.write_text(block('"patterns": ["sk-'))
    redaction = load_redaction(rules)
    message = {"ssn": "123", "note": "key sk-" + "a" * 24, "access_token": "t"}
    assert redaction.json(message) == {"ssn": "[REDACTED]", "note": "key [REDACTED]", "access_token": "[REDACTED]"}
    assert redaction.header_map({"X-Tenant-Key": "k"}) == {"x-tenant-key": "[REDACTED]"}


def test_format_example(tmp_path: Path) -> None:
    path = tmp_path / "example.mcpsession"
    path.write_text(block('"mcpsession": 1, "created"'))
    recording = read_recording(path)
    assert [(e.dir, e.method) for e in recording.entries] == [("client", "ping"), ("server", None)]
    assert json.loads(block('"mcpsession": 1, "created"').splitlines()[0])["mcpsession"] == 1


@pytest.mark.slow
def test_pytest_snippets(workdir: Path) -> None:
    (workdir / "conftest.py").write_text(block("pytest_plugins = ["))
    (workdir / "test_weather.py").write_text(block("def test_weather_client("))
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest"]
    first = run(argv, workdir, timeout=120)
    assert first.returncode == 0, first.stdout + first.stderr
    session = workdir / "recordings" / "test_weather" / "test_weather_client.mcpsession"
    assert session.exists()
    second = run([*argv, "--mcp-record-mode=none"], workdir, timeout=120)
    assert second.returncode == 0, second.stdout + second.stderr


def test_mock_commands(workdir: Path) -> None:
    lock_line, mock_line = block("mcp-bindgen mock mcp-lock.json --seed 7").strip().splitlines()
    done = run(shlex.split(lock_line), workdir)
    assert done.returncode == 0, done.stderr
    program = block('connect_stdio(["mcp-bindgen", "replay", "weather.mcpsession"]').replace(
        '["mcp-bindgen", "replay", "weather.mcpsession"]', repr(shlex.split(mock_line))
    )
    served = python(program, workdir)
    assert served.returncode == 0, served.stderr
    weather = ast.literal_eval(served.stdout.splitlines()[0])
    assert set(weather) == {"city", "celsius"} and isinstance(weather["celsius"], float)
    assert python(program, workdir).stdout.splitlines()[0] == served.stdout.splitlines()[0]  # the same seed


def test_http_replay_command(workdir: Path) -> None:
    record(workdir)
    command = shlex.split(block("--http 127.0.0.1:8800").strip().replace("8800", "0"))
    process = subprocess.Popen(
        command, cwd=workdir, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    program = block('connect_stdio(["mcp-bindgen", "replay", "weather.mcpsession"]')
    program = program.replace(
        "from mcp_bindings.runtime.stdio import connect_stdio",
        "from mcp_bindings.runtime.http_client import connect_http",
    )
    try:
        url = said_url(process.stderr, " at ")
        program = program.replace(
            'connect_stdio(["mcp-bindgen", "replay", "weather.mcpsession"], Client)', f'connect_http("{url}", Client)'
        )
        done = python(program, workdir)
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=10)
    assert done.returncode == 0, done.stderr
    first, error = done.stdout.strip().splitlines()
    assert first == "{'city': 'Oslo', 'celsius': 21.5}" and "no recorded tools/call matches" in error


def test_replay_across_eras(workdir: Path) -> None:
    record(workdir)
    (workdir / "examples" / "app_server.py").unlink()  # replayed: the server is not needed
    done = python(block("from mcp_bindings.v2026_07_28.client import Client"), workdir)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines() == ["2026-07-28", "{'city': 'Oslo', 'celsius': 21.5}"]


CROSSING_PROGRAM = """
import sys

import anyio

from mcp_bindings.runtime.stdio import connect_stdio
from mcp_bindings.v2025_11_25.client import Client, ClientHandlers
from mcp_bindings.v2026_07_28.client import Client as ModernClient


class Declines(ClientHandlers):
    async def elicit(self, params, ctx):
        return {"action": "decline"}


async def main() -> None:
    record = ["mcp-bindgen", "record", "-o", "delete.mcpsession", "--", sys.executable, "examples/app_server.py"]
    async with connect_stdio(record, Client, handlers=Declines()) as client:
        print((await client.call_tool(name="delete", arguments={"path": "notes.txt"})).content[0].text)
    async with connect_stdio(["mcp-bindgen", "replay", "delete.mcpsession"], ModernClient) as modern:
        try:
            await modern.call_tool(name="delete", arguments={"path": "notes.txt"})
        except Exception as error:
            print(error)


anyio.run(main)
"""


def test_what_cannot_cross(workdir: Path) -> None:
    done = python(CROSSING_PROGRAM, workdir)
    assert done.returncode == 0, done.stderr
    kept, error = done.stdout.strip().splitlines()
    assert kept == "kept"
    assert error == block("asked the client elicitation/create").strip() + " (code -32603)"


def test_new_episodes_http_command(workdir: Path) -> None:
    record(workdir)
    line = block("--new-episodes http://127.0.0.1:8000/mcp").strip()
    live = subprocess.Popen(  # port 0 for both: each binds its own and says where
        ["mcp-bindgen", "run", "examples/app_server.py", "--transport", "http", "--port", "0"],
        cwd=workdir,
        env=env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    live_url = said_url(live.stdout, "serving on ")
    command = shlex.split(line.replace("http://127.0.0.1:8000/mcp", live_url).replace("8802", "0"))
    replay = subprocess.Popen(
        command, cwd=workdir, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    program = block('connect_stdio(["mcp-bindgen", "replay", "weather.mcpsession"]')
    program = program.replace(
        "from mcp_bindings.runtime.stdio import connect_stdio",
        "from mcp_bindings.runtime.http_client import connect_http",
    )
    try:
        url = said_url(replay.stderr, " at ")
        program = program.replace(
            'connect_stdio(["mcp-bindgen", "replay", "weather.mcpsession"], Client)', f'connect_http("{url}", Client)'
        )
        done = python(program, workdir)
    finally:
        replay.send_signal(signal.SIGINT)
        _, err = replay.communicate(timeout=20)
        live.terminate()
        live.wait(timeout=10)
    assert done.returncode == 0, done.stderr
    # Oslo from the file; Lima, never recorded, from the live server: no error this time.
    assert done.stdout.strip().splitlines() == ["{'city': 'Oslo', 'celsius': 21.5}"]
    assert replay.returncode == 0, err
    grown = (workdir / "weather.mcpsession").read_text()
    assert '"Lima"' in grown and read_recording(workdir / "weather.mcpsession").header["transport"] == "http"


def test_mock_http_command(workdir: Path) -> None:
    lock_line = block("mcp-bindgen mock mcp-lock.json --seed 7").strip().splitlines()[0]
    assert run(shlex.split(lock_line), workdir).returncode == 0
    command = shlex.split(block("mcp-bindgen mock mcp-lock.json --http 127.0.0.1:8801").strip().replace("8801", "0"))
    process = subprocess.Popen(
        command, cwd=workdir, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    program = block("from mcp_bindings.v2026_07_28.client import Client")
    program = program.replace(
        "from mcp_bindings.runtime.stdio import connect_stdio",
        "from mcp_bindings.runtime.http_client import connect_http",
    )
    try:
        url = said_url(process.stderr, " at ")
        program = program.replace("connect_stdio(REPLAY, Client)", f'connect_http("{url}", Client)')
        done = python(program, workdir)
    finally:
        process.terminate()
        process.communicate(timeout=20)
    assert done.returncode == 0, done.stderr
    version, weather = done.stdout.strip().splitlines()
    assert version == "2026-07-28"
    assert set(ast.literal_eval(weather)) == {"city", "celsius"}
