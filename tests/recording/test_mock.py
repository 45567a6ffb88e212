"""`mcp-bindgen mock`: the lock of examples/app_server.py served on stdio and Streamable HTTP, to the
typed client `mcp-bindgen client` generates from the same lock, this project's 2026-07-28 client and
the official SDK client at 2025-11-25 and 2026-07-28 (which checks structured results against the
output schema): every call type-valid, the same seed the same answers, another seed others."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest

from mcp_bindgen.cli import main
from tests.peers.harness import PEERS
from tests.support import REPO_ROOT, url_in

APP = [sys.executable, str(REPO_ROOT / "examples" / "app_server.py")]


@pytest.fixture(scope="module")
def lock(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("mock") / "mcp-lock.json"
    assert main(["lock", "-o", str(path), "--from", *APP]) == 0
    return path


def typed_client(lock: Path) -> ModuleType:
    path = lock.parent / "demo_client.py"
    if not path.exists():
        assert main(["client", "-o", str(path), "--from-file", str(lock), "--protocol", "2025-11-25"]) == 0
    spec = importlib.util.spec_from_file_location("mock_demo_client", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def mock(lock: Path, seed: int) -> list[str]:
    return [sys.executable, "-m", "mcp_bindgen.cli", "mock", str(lock), "--seed", str(seed)]


async def calls(module: ModuleType, command: list[str]) -> list[Any]:
    async with module.connect(command) as server:
        first = await server.weather(city="Oslo")
        second = await server.weather(city="Oslo")
        deleted = await server.delete(path="notes.txt")
        prompt = await server.prompt_review(code="x = 1", language="python")
        return [first, second, deleted, prompt]


def test_the_generated_typed_client_gets_valid_results(lock: Path) -> None:
    module = typed_client(lock)
    first, second, deleted, prompt = anyio.run(calls, module, mock(lock, 1))
    assert type(first).__name__ == "WeatherOutput" and isinstance(first.city, str) and isinstance(first.celsius, float)
    assert first != second  # each call draws anew, from the seed
    assert deleted.content[0].type == "text" and deleted.content[0].text
    assert prompt.messages[0].content.text.startswith("(mock) prompt review")
    again = anyio.run(calls, module, mock(lock, 1))
    assert [first, second] == again[:2]  # the same seed, the same answers
    other = anyio.run(calls, module, mock(lock, 2))
    assert other[0] != first


def test_bad_lock_is_one_sentence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mock", str(tmp_path / "missing.json")]) == 1
    err = capsys.readouterr().err
    assert "lock file" in err and "not found: write one with `mcp-bindgen lock" in err


@pytest.mark.interop
def test_the_official_sdk_client_gets_valid_results(lock: Path, sdk_python: str) -> None:
    argv = [sdk_python, str(PEERS / "sdk_everything_client.py"), "--scenario", "app", "--", *mock(lock, 7)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    failed = {k: v for k, v in report.items() if isinstance(v, dict) and ("error" in v or "mcp_error" in v)}
    assert not failed, failed
    weather = report["weather"]
    assert weather.get("isError") is not True
    assert set(weather["structuredContent"]) == {"city", "celsius"}
    assert [t["name"] for t in report["tools"]["tools"]] == ["delete", "weather"]  # as the lock sorts them


@contextlib.contextmanager
def mock_over_http(lock: Path, seed: int) -> Iterator[str]:
    """`mcp-bindgen mock LOCK --http 127.0.0.1:PORT` in a process of its own; its URL once it listens."""
    process = subprocess.Popen(
        [*mock(lock, seed), "--http", "127.0.0.1:0"], stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()  # "serving MCP (Streamable HTTP) at URL", with the port it bound
        url = url_in(line)
        assert "serving MCP" in line and url is not None, line + process.stderr.read()
        yield url
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_a_2026_07_28_client_gets_the_locked_surface(lock: Path) -> None:
    """The stateless era over stdio: this project's 2026-07-28 client, no handshake; the lock's
    2026-07-28 surface, results type-valid (the client checks them against the output schema)."""
    from mcp_bindings.runtime.protocol.versions import dump
    from mcp_bindings.runtime.stdio import connect_stdio
    from mcp_bindings.v2026_07_28.client import Client

    async def run() -> list[Any]:
        async with connect_stdio(mock(lock, 3), Client) as client:
            assert client.session.version == "2026-07-28"
            tools = [t.name for t in (await client.list_tools()).tools]
            weather = dump(await client.call_tool(name="weather", arguments={"city": "Oslo"}))
            prompt = dump(await client.get_prompt(name="review", arguments={"code": "x = 1", "language": "python"}))
            return [tools, weather, prompt]

    tools, weather, prompt = anyio.run(run)
    assert tools == ["delete", "weather"]
    assert set(weather["structuredContent"]) == {"city", "celsius"} and weather["resultType"] == "complete"
    assert weather["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": "demo", "version": "0.0.0+mock"}
    assert prompt["messages"][0]["content"]["text"].startswith("(mock) prompt review")


@pytest.mark.interop
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_official_sdk_client_at_2026_07_28(lock: Path, sdk_python: str, transport: str) -> None:
    """The SDK's stateless 2026-07-28 client (`Client(mode="2026-07-28")`) against the mock, over
    stdio and Streamable HTTP: every call answers, type-valid for the SDK."""
    argv = [sdk_python, str(PEERS / "sdk_everything_client.py"), "--scenario", "app", "--mode", "2026-07-28"]
    with contextlib.ExitStack() as stack:
        if transport == "stdio":
            argv += ["--", *mock(lock, 7)]
        else:
            argv += ["--url", stack.enter_context(mock_over_http(lock, 7))]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    failed = {k: v for k, v in report.items() if isinstance(v, dict) and ("error" in v or "mcp_error" in v)}
    assert not failed, failed
    assert [t["name"] for t in report["tools"]["tools"]] == ["delete", "weather"]
    weather = report["weather"]
    assert weather.get("isError") is not True and set(weather["structuredContent"]) == {"city", "celsius"}
    assert report["prompt"]["messages"][0]["content"]["text"].startswith("(mock) prompt review")
    assert [t["name"] for t in report["templates"]["resourceTemplates"]] == ["profile"]
