"""Streamable HTTP both ways: a session recorded through the HTTP recording proxy in front of a real
server (tests/peers/recording_server.py on uvicorn), then served by the HTTP replay to the same
client: every answer the same (progress and sampling included, the sampling request on the POST's
SSE stream and its answer on a POST of its own); and `mcp-bindgen replay --http` as a command."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx
import pytest

from mcp_bindings.runtime.recording.http_proxy import recording_proxy
from mcp_bindings.runtime.recording.http_replay import replay_http
from mcp_bindings.runtime.recording.replay_server import ServerReplay
from mcp_bindings.runtime.recording.session_file import read_recording
from tests.peers.auth_harness import bind_local, serve
from tests.support import REPO_ROOT, announced_url, url_in
from tests.support.recording import drive_http, recording_app

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
async def test_recorded_over_http_replays_over_http(tmp_path: Path, version: str) -> None:
    path = tmp_path / "http.mcpsession"
    sock, base = bind_local()
    async with serve(recording_app().asgi(), sock):
        async with recording_proxy(base + "/mcp", path) as url:
            live = await drive_http(url, version)
    assert live["progress"] == [[1, 3], [2, 3], [3, 3]]
    recording = read_recording(path)
    assert recording.header["transport"] == "http" and recording.versions == [version]
    async with replay_http(ServerReplay(recording)) as url:
        replayed = await drive_http(url, version)
    assert replayed == live


def test_replay_http_command(tmp_path: Path) -> None:
    import anyio

    path = tmp_path / "http.mcpsession"

    async def record() -> None:
        sock, base = bind_local()
        async with serve(recording_app().asgi(), sock), recording_proxy(base + "/mcp", path) as url:
            await drive_http(url, "2025-11-25")

    anyio.run(record)
    command = [sys.executable, "-m", "mcp_bindgen.cli", "replay", str(path), "--http", "127.0.0.1:0"]
    process = subprocess.Popen(command, cwd=REPO_ROOT, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        line = process.stderr.readline()  # "replaying FILE at URL (Ctrl-C stops)", once it listens
        url = url_in(line)
        assert url is not None and url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), line
        assert httpx.get(url, timeout=10).status_code == 405
        replayed = anyio.run(drive_http, url, "2025-11-25")
        assert replayed["greet"]["content"][0]["text"] == "Hello, Ada!"
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=10)
    assert process.returncode == 0


def test_replay_client_over_http(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The recorded client side driven into a server over Streamable HTTP: the same server passes,
    the changed one is named (tool and field)."""
    import anyio

    from mcp_bindgen.cli import main

    path = tmp_path / "http.mcpsession"

    async def record() -> None:
        sock, base = bind_local()
        async with serve(recording_app().asgi(), sock), recording_proxy(base + "/mcp", path) as url:
            await drive_http(url, "2025-11-25")

    anyio.run(record)
    for variant, expected in (([], 0), (["--changed"], 1)):
        server = [sys.executable, str(REPO_ROOT / "tests" / "peers" / "recording_server.py"), *variant]
        log = tmp_path / f"server{len(variant)}.log"
        with log.open("wb") as stderr:  # port 0: it binds and says where
            process = subprocess.Popen([*server, "--http", "0"], stdout=subprocess.DEVNULL, stderr=stderr)
        try:
            url = announced_url(log, process)
            capsys.readouterr()
            assert main(["replay-client", str(path), "--from", url]) == expected
            out = capsys.readouterr().out
        finally:
            process.terminate()
            process.wait(timeout=10)
        if expected:
            assert 'tools/call greet: result.content[0].text: recorded "Hello, Ada!", got "Howdy, Ada!"' in out
        else:
            assert out.strip().endswith("all 6 recorded answers match")


async def test_the_fixture_value_records_then_replays_over_http(tmp_path: Path) -> None:
    """`McpRecording.http(url)`: the recording proxy on the first run, a replay over HTTP afterwards
    (the server gone), `none` without a file fails the test."""
    from mcp_bindings.runtime.recording.pytest_plugin import McpRecording

    path = tmp_path / "recordings" / "t.mcpsession"
    first = McpRecording(path=path, mode="once")
    assert first.recording
    sock, base = bind_local()
    async with serve(recording_app().asgi(), sock):
        async with first.http(base + "/mcp") as url:
            live = await drive_http(url, "2025-11-25")
    second = McpRecording(path=path, mode="once")
    assert not second.recording
    async with second.http(base + "/mcp") as url:  # nothing listens at `base` any more
        assert await drive_http(url, "2025-11-25") == live
    with pytest.raises(pytest.fail.Exception, match="no recording at"):
        async with McpRecording(path=tmp_path / "none.mcpsession", mode="none").http(base + "/mcp"):
            pass


async def _greet_only(url: str, version: str) -> str:
    from mcp_bindings.runtime.client.http import connect_http
    from tests.peers.harness import client_module

    async with connect_http(url, client_module(version).Client) as client:
        result = await client.call_tool(name="greet", arguments={"name": "Ada"})
        return result.content[0].text  # pyright: ignore[reportAttributeAccessIssue]


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_new_episodes_over_http(tmp_path: Path, version: str) -> None:
    """`new_episodes` with the recorded server on Streamable HTTP: a file that has only `greet` replays
    it and sends the rest (tools/list, add, progress of count, the sampling of ask: a server-to-client
    request at 2025-11-25, an input round at 2026-07-28) to the live server behind the replay; the
    client sees what the live server alone would show, and the file written back answers it all
    with the server gone."""
    from mcp_bindings.runtime.recording.pytest_plugin import McpRecording

    path = tmp_path / "recordings" / "t.mcpsession"
    sock, base = bind_local()
    async with serve(recording_app().asgi(), sock):
        alone = await drive_http(base + "/mcp", version)
        async with McpRecording(path=path, mode="once").http(base + "/mcp") as url:
            assert await _greet_only(url, version) == "Hello, Ada!"
        assert not any(
            "Howdy" in json.dumps(e.message) or "add" in json.dumps(e.message) for e in read_recording(path).entries
        )
        episodes = McpRecording(path=path, mode="new_episodes")
        assert not episodes.recording
        async with episodes.http(base + "/mcp") as url:
            grown = await drive_http(url, version)
    assert grown == alone
    assert grown["progress"] == [[1, 3], [2, 3], [3, 3]]
    assert grown["ask"]["content"][0]["text"] == "the model said: sampled: why?"
    recording = read_recording(path)
    assert recording.header["transport"] == "http" and recording.header["server"] == {"url": base + "/mcp"}
    assert recording.versions == [version]
    async with McpRecording(path=path, mode="none").http(base + "/mcp") as url:  # nothing listens any more
        assert await drive_http(url, version) == alone


async def test_replay_http_command_with_new_episodes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`mcp-bindgen replay FILE --http HOST:PORT --new-episodes URL`: the command line of the same; a
    live server given as a command is refused with what to give instead."""
    from mcp_bindgen.cli import main

    path = tmp_path / "cli.mcpsession"
    sock, base = bind_local()
    async with serve(recording_app().asgi(), sock):
        async with recording_proxy(base + "/mcp", path) as url:
            assert await _greet_only(url, "2025-11-25") == "Hello, Ada!"
        argv = [sys.executable, "-m", "mcp_bindgen.cli", "replay", str(path), "--http", "127.0.0.1:0"]
        process = subprocess.Popen(
            [*argv, "--new-episodes", base + "/mcp"], cwd=REPO_ROOT, stderr=subprocess.PIPE, text=True
        )
        try:
            assert process.stderr is not None
            line = await anyio.to_thread.run_sync(process.stderr.readline)
            url = url_in(line)
            assert "replaying" in line and url is not None, line
            grown = await drive_http(url, "2025-11-25")
        finally:
            process.send_signal(signal.SIGINT)
            await anyio.to_thread.run_sync(lambda: process.wait(timeout=20))
    assert process.returncode == 0
    assert grown["ask"]["content"][0]["text"] == "the model said: sampled: why?"
    assert any("counted to 3" in json.dumps(e.message) for e in read_recording(path).entries)
    capsys.readouterr()
    assert main(["replay", str(path), "--http", "127.0.0.1:0", "--new-episodes", sys.executable, "server.py"]) == 1
    assert "--new-episodes with --http takes the live server's URL" in capsys.readouterr().err


async def test_stdio_replay_with_a_live_http_server(tmp_path: Path) -> None:
    """`mcp-bindgen replay FILE --new-episodes URL` on stdio: what the file (recorded over stdio) has
    not is asked of the live server on Streamable HTTP, and the file is written back with it."""
    from mcp_bindings.runtime.stdio import connect_stdio
    from mcp_bindings.v2025_11_25.client import Client
    from tests.support.recording import record_in_memory

    path = tmp_path / "stdio.mcpsession"
    await record_in_memory(path, "2025-11-25")
    sock, base = bind_local()
    async with serve(recording_app().asgi(), sock):
        command = [sys.executable, "-m", "mcp_bindgen.cli", "replay", str(path), "--new-episodes", base + "/mcp"]
        async with connect_stdio(command, Client) as client:
            answers = [
                (await client.call_tool(name="greet", arguments={"name": name})).content[0].text  # pyright: ignore[reportAttributeAccessIssue]
                for name in ("Ada", "Bob")
            ]
    assert answers == ["Hello, Ada!", "Hello, Bob!"]
    recording = read_recording(path)
    assert recording.header["server"] == {"url": base + "/mcp"}
    assert any("Hello, Bob!" in json.dumps(e.message) for e in recording.entries)


async def test_the_proxy_records_which_request_a_server_message_belongs_to(tmp_path: Path) -> None:
    """Issue 44, item 6: a server message on a POST's response stream belongs to that POST's request
    (`http.related` of its entry, which the exchanges follow), not to whatever was sent last."""
    from mcp_bindings.runtime.recording.exchanges import exchanges_of

    path = tmp_path / "http.mcpsession"
    sock, base = bind_local()
    async with serve(recording_app().asgi(), sock):
        async with recording_proxy(base + "/mcp", path) as url:
            await drive_http(url, "2025-11-25")
    recording = read_recording(path)
    requests = {e.id: e for e in recording.entries if e.dir == "client" and e.is_request}
    sent = [e for e in recording.entries if e.dir == "server" and e.method is not None]
    owners = {(e.method, _name(requests[(e.http or {})["related"]].message)) for e in sent}
    assert owners == {("notifications/progress", "count"), ("sampling/createMessage", "ask")}
    _, exchanges = exchanges_of(recording)
    (ask,) = [ex for ex in exchanges if (ex.message.get("params") or {}).get("name") == "ask"]
    assert [e.method for e in ask.episode] == ["sampling/createMessage"] and ask.after == []


def _name(message: dict[str, Any] | None) -> Any:
    params = (message or {}).get("params")
    return params.get("name") if isinstance(params, dict) else None
