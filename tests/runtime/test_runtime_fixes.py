"""Regression tests for the smaller defects of the delivery issue (#15, item 9), each driven the way a
user or a peer meets it: a raw peer over an in-memory pair, the ASGI app, or a real process."""

from __future__ import annotations

import importlib
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import orjson
import pytest

from mcp_bindings.runtime.client.runtime import LegacyServerError, connect
from mcp_bindings.runtime.http.app import create_app
from mcp_bindings.runtime.memory import connect_in_memory
from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.rpc.errors import McpError
from mcp_bindings.runtime.rpc.transport import MemoryTransport, memory_pair
from mcp_bindings.runtime.stdio.connect import connect_stdio
from tests.support import REPO_ROOT
from tests.support.pipeline import PINNED_VERSIONS

pytestmark = pytest.mark.anyio
ECHO = str(REPO_ROOT / "examples" / "echo_server.py")


def _module(version: str, name: str) -> Any:
    return importlib.import_module(f"mcp_bindings.{registry.info(version).package}.{name}")


async def _receive(end: MemoryTransport) -> Any:
    return orjson.loads(await end.receive())


# -- the client never cancels initialize -----------------------------------------------------------


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
async def test_initialize_timeout_sends_no_cancellation(version: str) -> None:
    client_end, server_end = memory_pair()
    seen: list[Any] = []

    async def silent_server() -> None:
        try:
            while True:
                seen.append(await _receive(server_end))
        except anyio.EndOfStream:
            return  # the client closed the connection

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(silent_server)
            with pytest.raises((McpError, TimeoutError)):  # the request's timeout or the handshake's
                async with connect(client_end, _module(version, "client").Client, request_timeout=0.3):
                    pass
            await anyio.sleep(0.2)  # a cancellation, if any, would have arrived by now
            group.cancel_scope.cancel()
    assert [m.get("method") for m in seen] == ["initialize"]


# -- batches at 2025-03-26 ---------------------------------------------------------------------------


async def test_client_answers_a_batch_from_a_2025_03_26_server() -> None:
    version = "2025-03-26"
    client_module = _module(version, "client")
    m = _module(version, "models")

    class Roots(client_module.ClientHandlers):  # type: ignore[misc, name-defined]
        async def list_roots(self, params: Any, ctx: Any) -> Any:
            return m.ListRootsResult(roots=[m.Root(uri="file:///work")])

    client_end, server_end = memory_pair()
    answers: list[Any] = []
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:

            async def server() -> None:
                init = await _receive(server_end)
                result = {"protocolVersion": version, "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}
                await server_end.send(orjson.dumps({"jsonrpc": "2.0", "id": init["id"], "result": result}))
                assert (await _receive(server_end))["method"] == "notifications/initialized"
                batch = [
                    {"jsonrpc": "2.0", "id": "a", "method": "ping"},
                    {"jsonrpc": "2.0", "id": "b", "method": "roots/list"},
                ]
                await server_end.send(orjson.dumps(batch))
                answers.extend(await _receive(server_end))

            group.start_soon(server)
            async with connect(client_end, client_module.Client, handlers=Roots()):
                while len(answers) < 2:
                    await anyio.sleep(0.01)
            group.cancel_scope.cancel()
    by_id = {a["id"]: a for a in answers}
    assert by_id["a"]["result"] == {}
    assert by_id["b"]["result"] == {"roots": [{"uri": "file:///work"}]}


# -- the HTTP server refuses initialize inside a batch ----------------------------------------------


async def test_initialize_in_a_batch_is_refused() -> None:
    server = _module("2025-03-26", "server").Server()
    app = create_app(server)
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}},
    }
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as http:
        response = await http.post("/mcp", json=[initialize], headers={"accept": "application/json, text/event-stream"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32600 and "batch" in error["message"]
    assert "mcp-session-id" not in response.headers


# -- a method the server does not implement is "not found", not an internal error -------------------


@pytest.mark.parametrize("version", ["2024-11-05", "2025-11-25"])
async def test_unimplemented_handler_is_method_not_found(version: str, caplog: pytest.LogCaptureFixture) -> None:
    m = _module(version, "models")

    class ToolsOnly(_module(version, "server").Server):  # type: ignore[misc]
        async def list_tools(self, params: Any, ctx: Any) -> Any:
            return m.ListToolsResult(tools=[])

        async def call_tool(self, params: Any, ctx: Any) -> Any:
            return m.CallToolResult(content=[])

    with anyio.fail_after(10), caplog.at_level(logging.ERROR):
        async with connect_in_memory(ToolsOnly(), _module(version, "client").Client) as client:
            session = client.session.session
            with pytest.raises(McpError) as info:
                await session.request(
                    "completion/complete",
                    {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": "v"}},
                )
    assert info.value.code == -32601
    assert "completion/complete" in info.value.message
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]  # no traceback logged


# -- serverInfo carries what each version defines ---------------------------------------------------


@pytest.mark.parametrize("version", PINNED_VERSIONS)
async def test_server_info_carries_title_icons_website_description(version: str) -> None:
    class Described(_module("2026-07-28", "server").Server):  # type: ignore[misc]
        name, version = "described", "2.0.0"  # class attributes (the stub's identity), not the test's `version`
        title = "Described server"
        description = "Says who it is"
        website_url = "https://example.com"
        icons = ({"src": "https://example.com/icon.png", "mimeType": "image/png"},)

        async def ping_like(self) -> None:  # no handlers: identity only
            return None

    protocol = "auto" if version == "2026-07-28" else version
    with anyio.fail_after(10):
        async with connect_in_memory(Described(), _module(version, "client").Client, protocol_version=protocol) as c:
            info = c.session.server_info
    expected: dict[str, Any] = {"name": "described", "version": "2.0.0"}
    if version >= "2025-06-18":
        expected["title"] = "Described server"
    if version >= "2025-11-25":
        expected |= {
            "description": "Says who it is",
            "websiteUrl": "https://example.com",
            "icons": [{"src": "https://example.com/icon.png", "mimeType": "image/png"}],
        }
    assert info == expected


# -- errors come out as themselves ------------------------------------------------------------------


async def test_connect_in_memory_does_not_wrap_errors() -> None:
    server = _module("2025-11-25", "server").Server()
    with pytest.raises(KeyError, match="mine"):
        async with connect_in_memory(server, _module("2025-11-25", "client").Client):
            raise KeyError("mine")


async def test_a_server_that_exits_at_once_is_reported_with_its_code_and_stderr() -> None:
    command = [sys.executable, "-c", "import sys; print('missing API key', file=sys.stderr); sys.exit(3)"]
    with anyio.fail_after(20), pytest.raises(ConnectionError) as info:
        async with connect_stdio(command, _module("2025-11-25", "client").Client):
            pass
    message = str(info.value)
    assert "exited with code 3" in message and "missing API key" in message


async def test_a_server_that_cannot_start_is_a_clear_error() -> None:
    with pytest.raises(ConnectionError, match="cannot start the MCP server"):
        async with connect_stdio(["/nonexistent/mcp-server"], _module("2025-11-25", "client").Client):
            pass


# -- serve_stdio on files -----------------------------------------------------------------------------


def test_serve_stdio_reads_and_writes_regular_files(tmp_path: Path) -> None:
    requests = tmp_path / "requests.jsonl"
    answers = tmp_path / "answers.jsonl"
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "f", "version": "1"}}
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}},
    ]
    requests.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        done = subprocess.run([sys.executable, ECHO], stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, timeout=30)
    assert done.returncode == 0, done.stderr.decode()
    replies = [orjson.loads(line) for line in answers.read_bytes().splitlines()]
    assert [r["id"] for r in replies] == [1, 2]
    assert replies[1]["result"]["content"] == [{"type": "text", "text": "hi"}]


# -- "auto" reaches a legacy server that ignores server/discover --------------------------------------


async def test_auto_falls_back_when_the_probe_goes_unanswered() -> None:
    client_end, server_end = memory_pair()
    seen: list[str] = []

    async def legacy_server() -> None:  # answers initialize, says nothing to server/discover
        try:
            while True:
                message = await _receive(server_end)
                seen.append(message.get("method", "response"))
                if message.get("method") == "initialize":
                    result = {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "serverInfo": {"name": "old", "version": "1"},
                    }
                    await server_end.send(orjson.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}))
        except anyio.EndOfStream:
            return

    client_cls = _module("2026-07-28", "client").Client
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(legacy_server)
            started = anyio.current_time()
            async with connect(client_end, client_cls, protocol_version="auto", probe_timeout=0.3) as client:
                assert client.session.version == "2025-11-25" and not client.session.stateless
                assert client.session.server_info == {"name": "old", "version": "1"}
            assert anyio.current_time() - started < 5
            group.cancel_scope.cancel()
    assert seen[0] == "server/discover" and "initialize" in seen


# -- pinned to 2026-07-28 without HTTP: a legacy server is named at connect, not per call ------------


async def _pinned_against(legacy_answers_discover: bool) -> tuple[LegacyServerError, float, list[str]]:
    client_end, server_end = memory_pair()
    seen: list[str] = []

    async def legacy_server() -> None:  # a handshake-only server: silent, or an error for server/discover
        try:
            while True:
                message = await _receive(server_end)
                seen.append(message.get("method", "response"))
                if legacy_answers_discover and "id" in message:
                    error = {"code": -32600, "message": "Bad Request: Server not initialized"}
                    await server_end.send(orjson.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}))
        except anyio.EndOfStream:
            return

    client_cls = _module("2026-07-28", "client").Client
    started = anyio.current_time()
    errors: list[LegacyServerError] = []
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(legacy_server)
            with pytest.raises(LegacyServerError) as caught:
                async with connect(client_end, client_cls, protocol_version="2026-07-28", probe_timeout=0.3):
                    pass
            errors.append(caught.value)
            group.cancel_scope.cancel()
    return errors[0], anyio.current_time() - started, seen


async def test_pinned_stateless_client_probes_and_names_a_silent_legacy_server() -> None:
    error, elapsed, seen = await _pinned_against(legacy_answers_discover=False)
    assert elapsed < 5 and seen[0] == "server/discover"
    assert "does not speak MCP 2026-07-28 (server/discover unanswered after 0.3 s)" in error.message
    assert "protocol_version='auto'" in error.message


async def test_pinned_stateless_client_names_a_legacy_server_that_refuses_discover() -> None:
    error, _, seen = await _pinned_against(legacy_answers_discover=True)
    assert seen == ["server/discover"]
    assert "server/discover failed: Bad Request: Server not initialized" in error.message


async def test_pinned_stateless_client_over_stdio_reaches_a_stateless_server() -> None:
    client_cls = _module("2026-07-28", "client").Client
    with anyio.fail_after(20):
        async with connect_stdio([sys.executable, ECHO], client_cls, protocol_version="2026-07-28") as client:
            assert client.session.stateless and client.session.server_info.get("name")


# -- connect_stdio names the client as asked; ctx.session shows it to the server --------------------

WHO_AM_I = """
import json
from mcp_bindings.runtime.stdio.serve import serve_stdio
from mcp_bindings.v2025_11_25 import models as m
from mcp_bindings.v2025_11_25.server import Server


class WhoAmI(Server):
    async def list_tools(self, params, ctx):
        return m.ListToolsResult(tools=[m.Tool(name="who", input_schema=m.ToolInputSchema(type="object"))])

    async def call_tool(self, params, ctx):
        return m.CallToolResult(content=[m.TextContent(text=json.dumps(ctx.session.client_info))])


serve_stdio(WhoAmI())
"""


async def test_connect_stdio_sends_the_given_client_info(tmp_path: Path) -> None:
    script = tmp_path / "who.py"
    script.write_text(WHO_AM_I, encoding="utf-8")
    info = {"name": "my-agent", "version": "3.1.0"}
    with anyio.fail_after(20):
        async with connect_stdio(
            [sys.executable, str(script)], _module("2025-11-25", "client").Client, client_info=info
        ) as c:
            result = await c.call_tool(name="who", arguments={})
    assert orjson.loads(result.content[0].text) == info
