"""The CLI against servers nobody here wrote, and our `mcp-bindgen run` against a client nobody here
wrote, over stdio and Streamable HTTP, at both eras' versions:

* the official SDK's high-level `MCPServer` (FastMCP-style; tests/peers/sdk_contract_server.py, stdio);
* the official SDK's low-level server over Streamable HTTP (tests/peers/http_sdk_server.py);
* npm `@modelcontextprotocol/server-everything` over stdio and Streamable HTTP (tests/peers/contract_peers.py);
* the official SDK's client driving `mcp-bindgen run ... --transport http` (tests/peers/http_sdk_client.py).

* FastMCP 4.2.3 from PyPI over stdio (tests/peers/fastmcp_eras_server.py, `contract_peers.fastmcp()`)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.peers import contract_peers
from tests.peers.harness import PEERS
from tests.support import REPO_ROOT, bound_socket
from tests.support.cli import bindgen, served

pytestmark = pytest.mark.interop
ERAS = ["2025-11-25", "2026-07-28"]


def _json(done: subprocess.CompletedProcess[str]) -> dict:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _wait_http(url: str, process: subprocess.Popen[bytes], deadline: float = 60) -> None:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        assert process.poll() is None, f"the server exited with {process.returncode}"
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise AssertionError(f"{url} did not come up")


@pytest.fixture(scope="module")
def shop(sdk_python: str) -> str:
    """The SDK's MCPServer over stdio, as one quoted SERVER word."""
    return f"{sdk_python} {PEERS / 'sdk_contract_server.py'}"


@pytest.mark.parametrize("version", ["auto", *ERAS])
def test_sdk_mcpserver_over_stdio(shop: str, version: str) -> None:
    protocol = ("--protocol", version)
    tools = _json(bindgen("list", "tools", shop, *protocol, "--format", "json"))["tools"]
    assert {t["name"] for t in tools} == {"add", "place-order.v2", "paint", "explode"}
    added = _json(bindgen("call", shop, "add", "a=40", *protocol, "--format", "json"))
    assert added["structuredContent"] == {"result": 42}  # a=40 typed as an integer; b's default 2
    order = bindgen(
        "call",
        shop,
        "place-order.v2",
        "colour=blue",
        'items=["pen", "ink"]',
        'customer={"name": "Ada", "address": {"street": "1 Way", "city": "London"}}',
        "quantity=2",
        *protocol,
        "--format",
        "json",
    )
    placed = _json(order)["structuredContent"]
    assert (placed["total"], placed["colour"], placed["customer"]["name"]) == (10.0, "blue", "Ada")
    failed = bindgen("call", shop, "explode", "reason=bang", *protocol)
    assert failed.returncode == 1 and failed.stdout == "Error executing tool explode\n"
    prompt = bindgen("get-prompt", shop, "greet", "name=Ada", *protocol)
    assert prompt.returncode == 0, prompt.stderr
    assert prompt.stdout.splitlines()[-1] == "user: Hello Ada (plain)"
    assert bindgen("read", shop, "shop://orders/9", *protocol).stdout.strip() == '{"order": "9"}'
    missing = bindgen("call", shop, "nope", *protocol)
    assert missing.returncode == 3


def test_sdk_mcpserver_inspect(shop: str) -> None:
    report = _json(bindgen("inspect", shop, "--format", "json"))
    assert report["serverInfo"]["name"] == "contract-shop"
    assert report["instructions"] == "A small shop for the contract tests."
    assert {"2025-11-25", "2026-07-28"} <= set(report["versions"])
    assert [t["uriTemplate"] for t in report["resourceTemplates"]] == ["shop://orders/{order_id}"]


@pytest.fixture(scope="module")
def sdk_http(sdk_python: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("sdk-http") / "server.log"
    with open(log, "wb") as out, bound_socket() as sock:  # bound here, listened on by the server
        sock.listen()
        process = subprocess.Popen(
            [sdk_python, str(PEERS / "http_sdk_server.py"), "--fd", str(sock.fileno())],
            stdout=out,
            stderr=out,
            pass_fds=(sock.fileno(),),
        )
        try:
            url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
            _wait_http(url, process)
            yield url
        finally:
            process.terminate()
            process.wait(10)


@pytest.mark.parametrize("version", ["auto", *ERAS])
def test_sdk_server_over_streamable_http(sdk_http: str, version: str) -> None:
    protocol = ("--protocol", version)
    assert bindgen("call", sdk_http, "echo", "text=héllo", *protocol).stdout == "héllo\n"
    added = bindgen("call", sdk_http, "add", "a=1", "b=2.5", *protocol)  # numbers typed from the schema
    assert added.returncode == 0, added.stderr
    assert added.stdout.strip() == "3.5"
    tools = _json(bindgen("list", "tools", sdk_http, *protocol, "--format", "json"))["tools"]
    assert [t["name"] for t in tools] == ["echo", "add"]


def test_sdk_server_versions_over_http(sdk_http: str) -> None:
    report = _json(bindgen("inspect", sdk_http, "--format", "json"))
    assert {"2025-11-25", "2026-07-28"} <= set(report["versions"])


@pytest.fixture(scope="module")
def everything() -> list[str]:
    try:
        return contract_peers.everything_server()
    except contract_peers.Unavailable as exc:
        pytest.skip(f"@modelcontextprotocol/server-everything could not be installed: {exc}")


def _everything_checks(server: list[str] | str, version: str) -> None:
    """SERVER after `--` (a command) or in its place (a URL)."""

    def run(*words: str) -> subprocess.CompletedProcess[str]:
        command, rest = (words[:2], words[2:]) if words[0] == "list" else (words[:1], words[1:])
        if isinstance(server, list):
            return bindgen(*command, *rest, "--protocol", version, "--", *server)
        return bindgen(*command, server, *rest, "--protocol", version)

    tools = _json(run("list", "tools", "--format", "json"))["tools"]
    assert {"echo", "get-sum"} <= {t["name"] for t in tools}
    echoed = run("call", "echo", "message=hi there")
    assert echoed.returncode == 0, echoed.stderr
    assert echoed.stdout.strip() == "Echo: hi there"
    summed = run("call", "get-sum", "a=2", "b=3")
    assert summed.returncode == 0, summed.stderr
    assert summed.stdout == "The sum of 2 and 3 is 5.\n"  # a=2 b=3 sent as numbers, as its schema says


@pytest.mark.parametrize("version", ["auto", "2025-11-25"])
def test_server_everything_over_stdio(everything: list[str], version: str) -> None:
    _everything_checks(everything, version)


def test_server_everything_inspect_names_its_handshake_versions(everything: list[str]) -> None:
    """A handshake-only server: auto falls back to `initialize`, and 2026-07-28 is not among the
    versions it speaks; pinned to it, the CLI says so in one line (exit 4)."""
    report = _json(bindgen("inspect", "--format", "json", "--", *everything))
    assert report["protocolVersion"] == "2025-11-25"
    assert report["versions"] == ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
    pinned = bindgen("list", "tools", "--protocol", "2026-07-28", "--", *everything)
    assert pinned.returncode == 4
    assert "does not speak MCP 2026-07-28" in pinned.stderr and "Traceback" not in pinned.stderr


def test_server_everything_over_streamable_http(everything: list[str], tmp_path: Path) -> None:
    with open(tmp_path / "everything.log", "wb") as out, bound_socket() as sock:  # its listener, handed down
        sock.listen()
        process = subprocess.Popen(
            [everything[0], "--require", str(PEERS / "listen_on_fd.cjs"), everything[1], "streamableHttp"],
            env={**os.environ, "LISTEN_FD": str(sock.fileno())},
            stdout=out,
            stderr=out,
            pass_fds=(sock.fileno(),),
        )
        try:
            url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
            _wait_http(url, process)
            _everything_checks(url, "auto")
            _everything_checks(url, "2025-11-25")
        finally:
            process.terminate()
            process.wait(10)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_the_sdk_client_drives_mcp_bindgen_run_over_http(sdk_python: str, mode: str) -> None:
    with served(["run", f"{REPO_ROOT / 'examples' / 'app_echo.py'}:make_app"]) as (url, _process):
        done = subprocess.run(
            [sdk_python, str(PEERS / "http_sdk_client.py"), "--mode", mode, "--url", url],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["tools"] == ["echo"]
    assert report["echo"] == "héllo ✓ \U0001f600"
    assert report["concurrent"] == {str(i): f"c{i}" for i in range(5)}


@pytest.mark.parametrize("version", ["auto", "2025-11-25"])
def test_a_fastmcp_server_over_stdio(version: str) -> None:
    """FastMCP 4.2.3 (PyPI), as people run it: list, call (a typed argument), read, inspect."""
    try:
        python = contract_peers.fastmcp() / "bin" / "python"
    except contract_peers.Unavailable as exc:
        pytest.skip(f"FastMCP could not be installed: {exc}")
    server = f"{python} {PEERS / 'fastmcp_eras_server.py'}"
    protocol = ("--protocol", version)
    tools = _json(bindgen("list", "tools", server, *protocol, "--format", "json"))["tools"]
    assert [t["name"] for t in tools] == ["weather"]
    called = bindgen("call", server, "weather", "city=Oslo", *protocol)
    assert called.returncode == 0 and called.stdout.strip() == "Oslo: 21.5", called.stderr
    read = bindgen("read", server, "eras://config", *protocol)
    assert read.returncode == 0 and read.stdout.strip() == "debug=false", read.stderr
    assert bindgen("inspect", server, *protocol).returncode == 0
