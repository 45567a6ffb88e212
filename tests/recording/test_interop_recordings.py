"""Sessions of servers nobody here wrote (npm `server-everything`, PyPI `mcp-server-time`), driven by
the official Python SDK client (tests/peers/sdk_everything_client.py) and the TypeScript SDK client
(tests/peers/ts_everything_client.mjs) through
`mcp-bindgen record`, then replayed to the same client by `mcp-bindgen replay`: every step answers
the same, none fails. The recorded client side replayed to the live server matches too."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_bindgen.cli import main
from mcp_bindings.runtime.protocol import registry
from tests.peers import contract_peers
from tests.peers.harness import PEERS
from tests.support import REPO_ROOT, url_in
from tests.support.sdk import TS_SDK, node_with_ts_sdk

pytestmark = [pytest.mark.slow, pytest.mark.interop]
BINDGEN = [sys.executable, "-m", "mcp_bindgen.cli"]


def sdk_report(sdk_python: str, server: list[str], scenario: str) -> dict[str, Any]:
    """The SDK client's report; `server` is the command after `--`, or options before one (or a URL)."""
    if "--" not in server and "--url" not in server:
        server = ["--", *server]
    argv = [sdk_python, str(PEERS / "sdk_everything_client.py"), "--scenario", scenario, *server]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    report: dict[str, Any] = json.loads(done.stdout)
    failed = {k: v for k, v in report.items() if isinstance(v, dict) and "error" in v}
    assert not failed, failed
    return report


@pytest.fixture(scope="module")
def peers() -> dict[str, list[str]]:
    try:
        return {
            "everything": contract_peers.everything_server(),
            "time": [str(contract_peers.python_peers() / "bin" / "mcp-server-time")],
        }
    except contract_peers.Unavailable as exc:
        pytest.skip(f"a pinned peer server could not be installed: {exc}")


@pytest.mark.parametrize("scenario", ["everything", "time"])
def test_sdk_client_replays_a_recorded_third_party_server(
    sdk_python: str, peers: dict[str, list[str]], scenario: str, tmp_path: Path
) -> None:
    session = tmp_path / f"{scenario}.mcpsession"
    live = sdk_report(sdk_python, [*BINDGEN, "record", "-o", str(session), "--", *peers[scenario]], scenario)
    replayed = sdk_report(sdk_python, [*BINDGEN, "replay", str(session)], scenario)
    assert replayed == live
    if scenario == "everything":
        assert live["sum"]["content"][0]["text"] == "The sum of 2 and 40 is 42."
        assert live["progress"] == [[1.0, 3.0], [2.0, 3.0], [3.0, 3.0]]  # progress replayed with the new token
    else:
        assert live["bad_zone"]["isError"] is True
    # The client side, replayed to the live server, finds the same answers (the time of day aside).
    ignore = (
        ["--ignore-result", "result.content", "--ignore-result", "result.structuredContent"]
        if scenario == "time"
        else []
    )
    assert main(["replay-client", str(session), *ignore, "--from", *peers[scenario]]) == 0


def test_typescript_sdk_client_replays_a_recorded_server(peers: dict[str, list[str]], tmp_path: Path) -> None:
    node = node_with_ts_sdk()

    def ts_report(server: list[str]) -> dict[str, Any]:
        argv = [node, str(PEERS / "ts_everything_client.mjs"), str(TS_SDK), *server]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
        assert done.returncode == 0, done.stderr[-2000:]
        report: dict[str, Any] = json.loads(done.stdout)
        failed = {k: v for k, v in report.items() if isinstance(v, dict) and "error" in v}
        assert not failed, failed
        return report

    session = tmp_path / "ts.mcpsession"
    live = ts_report([*BINDGEN, "record", "-o", str(session), "--", *peers["everything"]])
    assert live["sum"]["content"][0]["text"] == "The sum of 20 and 22 is 42."
    assert live["progress"][:1] == [[1, 2]]  # (the SDK may drop the last one, which comes with the result)
    # The SDK handles notifications a turn later than answers: progress read together with the answer
    # is dropped, live as replayed (the last step's comes a moment before the answer). With the recorded
    # timing the first step's arrives, as live, well before it.
    replayed = ts_report([*BINDGEN, "replay", str(session), "--timing", "preserved"])
    assert replayed.pop("progress")[:1] == live.pop("progress")[:1] == [[1, 2]]
    assert replayed == live


MODERN = "2026-07-28"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"


@contextlib.contextmanager
def replay_over_http(session: Path) -> Iterator[str]:
    """`mcp-bindgen replay SESSION --http 127.0.0.1:PORT` in a process of its own; its URL."""
    argv = [*BINDGEN, "replay", str(session), "--http", "127.0.0.1:0"]
    process = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT)
    try:
        assert process.stderr is not None
        line = process.stderr.readline()  # "replaying ... at URL (Ctrl-C stops)", once it listens
        url = url_in(line)
        assert "replaying" in line and url is not None, line + process.stderr.read()
        yield url
    finally:
        process.terminate()
        process.wait(timeout=20)


def crossed(answer: dict[str, Any]) -> dict[str, Any]:
    """A 2025-11-25 answer as a 2026-07-28 client gets it from a live server: a tool's `execution`
    (task support, which 2026-07-28 moved to the tasks extension) is left out, as the generated
    crossing table of the pair says."""
    gone = registry.crossing("2025-11-25", "2026-07-28").dropped["ListToolsResult"][("tools", "*")]
    if "tools" not in answer:
        return answer
    return {**answer, "tools": [{k: v for k, v in tool.items() if k not in gone} for tool in answer["tools"]]}


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_2025_11_25_recording_replays_to_a_2026_07_28_sdk_client(
    sdk_python: str, peers: dict[str, list[str]], transport: str, tmp_path: Path
) -> None:
    """Recorded at 2025-11-25 (the SDK's handshake), replayed to the SDK's stateless 2026-07-28 client:
    the runtime serves the recording as a 2025-11-25 server, so every answer crosses as a live one
    would (stamped with the recorded server's identity, progress on the new request's token)."""
    session = tmp_path / "everything.mcpsession"
    recorded = [*BINDGEN, "record", "-o", str(session), "--", *peers["everything"]]
    live = sdk_report(sdk_python, ["--no-roots", "--", *recorded], "everything")
    assert live["initialize"]["protocolVersion"] == "2025-11-25"
    if transport == "stdio":
        modern = sdk_report(
            sdk_python, ["--no-roots", "--mode", MODERN, "--", *BINDGEN, "replay", str(session)], "everything"
        )
    else:
        with replay_over_http(session) as url:
            modern = sdk_report(sdk_python, ["--no-roots", "--mode", MODERN, "--url", url], "everything")
    for step in (
        "tools",
        "echo",
        "sum",
        "structured",
        "image",
        "long",
        "resources",
        "templates",
        "read",
        "prompts",
        "prompt",
    ):
        answer = dict(modern[step])
        assert answer.pop("_meta")[SERVER_INFO]["name"] == "mcp-servers/everything", step
        assert answer == crossed(live[step]), step
    assert modern["progress"] == live["progress"] == [[1.0, 3.0], [2.0, 3.0], [3.0, 3.0]]
    assert modern["read"]["contents"][0]["uri"] == "demo://resource/static/document/architecture.md"
    assert modern["prompt"]["messages"][0]["content"]["text"] == "What's weather in Paris, TX?"


def test_what_cannot_cross_to_2026_07_28_is_a_clear_error_to_the_sdk_client(sdk_python: str, tmp_path: Path) -> None:
    """Our recording server's `ask` asks the client's model mid-request (sampling/createMessage, a
    handshake-era server-to-client request). Recorded at 2025-11-25, it cannot be played to the
    SDK's 2026-07-28 client: a JSON-RPC error names the call, the method and both versions; the other
    tools of the same recording answer."""
    import anyio

    from tests.support.recording import record_in_memory

    session = tmp_path / "ask.mcpsession"
    anyio.run(record_in_memory, session, "2025-11-25")
    argv = [sdk_python, str(PEERS / "sdk_steps_client.py"), "--version", MODERN]
    argv += [
        "--call",
        'greet={"name": "Ada"}',
        "--call",
        'ask={"question": "why?"}',
        "--",
        *BINDGEN,
        "replay",
        str(session),
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["tools"] == ["add", "greet", "count", "ask"]
    greet, ask = report["calls"]
    assert greet["result"]["content"] == [{"type": "text", "text": "Hello, Ada!"}]
    assert ask["mcp_error"]["code"] == -32603
    message = ask["mcp_error"]["message"]
    assert message.startswith("tools/call ask (ask.mcpsession:")
    assert "the recording (MCP 2025-11-25) asked the client sampling/createMessage" in message
    assert "a client of MCP 2026-07-28 cannot be asked" in message


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_sdk_2026_07_28_input_rounds_replay(sdk_python: str, transport: str, tmp_path: Path) -> None:
    """The SDK's 2026-07-28 client calls our recording server's `ask` (an input round: the result asks
    for sampling, the SDK retries with its answer and the sealed state) through `mcp-bindgen record`;
    replayed, the SDK's own retry matches the recorded round and gets the recorded final answer."""
    session = tmp_path / "rounds.mcpsession"
    server = [sys.executable, str(PEERS / "recording_server.py")]
    live = sdk_report(
        sdk_python, ["--mode", MODERN, "--", *BINDGEN, "record", "-o", str(session), "--", *server], "recorded"
    )
    assert live["ask"]["content"] == [{"type": "text", "text": "the model said: sdk sampled"}]
    lines = [json.loads(line) for line in session.read_text().splitlines()[1:]]
    asked = [e["message"] for e in lines if (e["message"].get("result") or {}).get("resultType") == "input_required"]
    assert len(asked) == 1  # the round is in the file
    if transport == "stdio":
        replayed = sdk_report(
            sdk_python, ["--mode", MODERN, "--", *BINDGEN, "replay", "--order", "strict", str(session)], "recorded"
        )
    else:
        with replay_over_http(session) as url:
            replayed = sdk_report(sdk_python, ["--mode", MODERN, "--url", url], "recorded")
    assert replayed == live


def _steps_report(sdk_python: str, version: str, server: list[str]) -> dict[str, Any]:
    """The SDK client of tests/peers/sdk_steps_client.py calling `weather` at `version`."""
    argv = [sdk_python, str(PEERS / "sdk_steps_client.py"), "--version", version]
    argv += ["--call", 'weather={"city": "Oslo"}', "--", *server]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.mark.parametrize("recorded_by", ["ours", "sdk"])
def test_a_2026_07_28_recording_of_the_sdk_server_replays_to_2025_11_25_clients(
    sdk_python: str, recorded_by: str, tmp_path: Path
) -> None:
    """Issue 44, item 4: the official SDK's server (tests/peers/sdk_eras_server.py) recorded at
    2026-07-28, by our client (which asks `server/discover` first: the SDK answers it with the server
    info under `_meta` only) or by the SDK's client (which asks no discover), then replayed to the
    SDK's 2025-11-25 client and to ours: the handshake offers the recorded server's tools and the
    calls answer as recorded (they were all -32601 "Method not found: tools/list")."""
    import anyio

    from mcp_bindings.runtime.stdio.connect import connect_stdio
    from mcp_bindings.v2025_11_25.client import Client as HandshakeClient
    from mcp_bindings.v2026_07_28.client import Client as ModernClient

    session = tmp_path / "sdk.mcpsession"
    server = [sdk_python, str(PEERS / "sdk_eras_server.py")]
    record = [*BINDGEN, "record", "-o", str(session), "--", *server]
    replay = [*BINDGEN, "replay", str(session)]

    async def ours(command: list[str], client: Any, version: str) -> tuple[list[str], Any]:
        async with connect_stdio(command, client, protocol_version=version, cwd=str(REPO_ROOT)) as connected:
            tools = [tool.name for tool in (await connected.list_tools()).tools]
            return tools, (await connected.call_tool(name="weather", arguments={"city": "Oslo"})).content[0].text

    if recorded_by == "ours":
        assert anyio.run(ours, record, ModernClient, MODERN) == (["weather", "touch"], "Oslo: 21.5")
        lines = [json.loads(line)["message"] for line in session.read_text().splitlines()[1:]]
        discovered = next(m["result"] for m in lines if m.get("id") == lines[0]["id"] and "result" in m)
        assert lines[0]["method"] == "server/discover" and "serverInfo" not in discovered
        assert discovered["_meta"][SERVER_INFO]["name"] == "eras-weather"
    else:
        live = _steps_report(sdk_python, MODERN, record)
        assert live["calls"][0]["result"]["content"] == [{"type": "text", "text": "Oslo: 21.5"}]
    replayed = _steps_report(sdk_python, "2025-11-25", replay)
    assert replayed["negotiated"] == "2025-11-25" and replayed["tools"] == ["weather", "touch"]
    assert replayed["calls"][0]["result"]["content"] == [{"type": "text", "text": "Oslo: 21.5"}]
    assert anyio.run(ours, replay, HandshakeClient, "2025-11-25") == (["weather", "touch"], "Oslo: 21.5")
