"""`mcp-bindgen dev TARGET`: edit a tool in the file and see the new result, over Streamable HTTP
(the same URL across restarts) and over stdio (the same client connection across restarts)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from tests.support.cli import SCRIPT, bindgen, env, served

SERVER = (
    "from mcp_bindings.runtime.app import App\n"
    "app = App('dev-demo', version='1')\n\n\n"
    "@app.tool\n"
    "def greet(name: str) -> str:\n"
    "    return f'hello {name}'\n"
)


def _edit(path: Path, old: str, new: str) -> None:
    path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")


def test_dev_over_http_serves_the_edited_tool(tmp_path: Path) -> None:
    server = tmp_path / "server.py"
    server.write_text(SERVER, encoding="utf-8")
    with served(["dev", server], cwd=tmp_path) as (url, process):
        assert bindgen("call", url, "greet", "name=ada").stdout == "hello ada\n"
        _edit(server, "hello", "goodbye")
        seen = []
        for _ in range(100):  # bounded: 100 tries, 0.2 s apart
            done = bindgen("call", url, "greet", "name=ada")
            seen.append(done.stdout)
            if done.stdout == "goodbye ada\n":
                break
            time.sleep(0.2)
        assert seen[-1] == "goodbye ada\n", seen
    assert process.stderr is not None
    log = process.stderr.read()
    assert "npx @modelcontextprotocol/inspector --transport http --server-url " + url in log
    assert "a source file changed: restarting" in log


def _poll(url: str, until: Callable[[subprocess.CompletedProcess[str]], bool]) -> subprocess.CompletedProcess[str]:
    """`call greet` again, 0.2 s apart (at most 100 times), until `until` holds of what it did."""
    done = bindgen("call", url, "greet", "name=ada", "--timeout", "20")
    for _ in range(100):
        if until(done):
            break
        time.sleep(0.2)
        done = bindgen("call", url, "greet", "name=ada", "--timeout", "20")
    return done


def test_dev_over_http_answers_at_once_while_the_file_is_broken(tmp_path: Path) -> None:
    server = tmp_path / "server.py"
    server.write_text(SERVER, encoding="utf-8")
    with served(["dev", server], cwd=tmp_path) as (url, _process):
        assert bindgen("call", url, "greet", "name=ada").stdout == "hello ada\n"
        _edit(server, "def greet(name: str)", "def greet(name: str")  # a syntax error on line 6
        done = _poll(url, lambda done: done.returncode != 0)  # the old child stopped
        assert done.returncode == 6, done.stderr
        assert f"the server is not running (mcp-bindgen dev): importing {server} failed: SyntaxError" in done.stderr
        assert "line 6" in done.stderr
        _edit(server, "def greet(name: str", "def greet(name: str)")
        done = _poll(url, lambda done: done.returncode == 0)
        assert done.stdout == "hello ada\n", done.stderr


def _text(result: Any) -> str:
    return str(result.content[0].text)


def test_dev_over_stdio_keeps_the_client_connected(tmp_path: Path) -> None:
    from mcp_bindings.runtime.stdio.connect import connect_stdio
    from mcp_bindings.v2025_11_25.client import Client
    from tests.peers.harness import Recorder, make_handlers

    server = tmp_path / "server.py"
    server.write_text(SERVER, encoding="utf-8")
    changed: list[str] = []
    recorder = Recorder()

    async def main() -> list[str]:
        texts = []
        with open(tmp_path / "dev.stderr", "wb") as stderr:
            async with connect_stdio(
                [str(SCRIPT), "dev", str(server)],
                Client,
                cwd=str(tmp_path),
                env=env(),
                stderr=stderr,
                handlers=make_handlers("2025-11-25", recorder),
            ) as client:
                texts.append(_text(await client.call_tool(name="greet", arguments={"name": "ada"})))
                _edit(server, "hello", "goodbye")
                for _ in range(100):  # bounded
                    await anyio.sleep(0.2)
                    try:
                        result = await client.call_tool(name="greet", arguments={"name": "ada"})
                    except Exception as exc:  # a request in flight during the restart is answered with an error
                        changed.append(str(exc))
                        continue
                    if _text(result) != texts[-1]:
                        texts.append(_text(result))
                        break
                # the client is told that the tools may have changed
                await recorder.wait_for(lambda r: bool(r.of("tools_changed")), timeout=10)
        return texts

    texts = anyio.run(main)
    assert texts == ["hello ada", "goodbye ada"]
    assert all("the server was restarted" in text for text in changed)
    log = (tmp_path / "dev.stderr").read_text()
    assert f"npx @modelcontextprotocol/inspector {SCRIPT} dev {server}" in log


def test_dev_of_a_missing_file_is_one_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcp_bindgen.cli", "dev", "missing.py"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and done.stderr.startswith("mcp-bindgen: error: no such file: missing.py")
