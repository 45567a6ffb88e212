"""A client pinned to 2026-07-28 over Streamable HTTP meets a legacy server (issue 30): the first
failure is recognised (HTTP 4xx without an answer to the request, then one `server/discover` that
fails too) and every call raises the same `LegacyServerError`, sending nothing more. A stateless
server's own errors stay what they are.

The legacy server here is a few lines of ASGI answering as the official SDK 1.x does (400, an error
with id "server-error" and, oddly, a session id header); the real one (mcp 1.30.0) is in
tests/interop/test_client_eras.py."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from mcp_bindings.runtime.app import App
from mcp_bindings.runtime.client.http import connect_http
from mcp_bindings.runtime.client.legacy import LegacyServerError
from mcp_bindings.runtime.http.app import create_app
from mcp_bindings.runtime.rpc.errors import McpError
from mcp_bindings.v2026_07_28.client import Client
from tests.support.http import serve_in_thread

pytestmark = pytest.mark.anyio
LIMIT = 20
STATELESS = "2026-07-28"


class LegacyHttp:
    """ASGI: every POST without a session is a 400 "Missing session ID" (counted)."""

    def __init__(self) -> None:
        self.posts = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        more = True
        while more:
            more = (await receive()).get("more_body", False)
        self.posts += scope["method"] == "POST"
        body = {
            "jsonrpc": "2.0",
            "id": "server-error",
            "error": {"code": -32600, "message": "Bad Request: Missing session ID"},
        }
        headers = [(b"content-type", b"application/json"), (b"mcp-session-id", b"0123abcd")]
        await send({"type": "http.response.start", "status": 400, "headers": headers})
        await send({"type": "http.response.body", "body": json.dumps(body).encode()})


async def test_a_legacy_server_is_recognised_once() -> None:
    legacy = LegacyHttp()
    with serve_in_thread(legacy) as url, anyio.fail_after(LIMIT):
        async with connect_http(url + "/mcp", Client, protocol_version=STATELESS) as client:
            with pytest.raises(LegacyServerError) as first:
                await client.list_tools()
            posts = legacy.posts
            with pytest.raises(LegacyServerError) as second:
                await client.call_tool(name="add", arguments={"a": 1, "b": 2})
    assert second.value is first.value and posts == legacy.posts == 2  # the request and one server/discover
    message = first.value.message
    assert "does not speak MCP 2026-07-28" in message and "Missing session ID" in message
    assert "server/discover failed" in message and "protocol_version='auto'" in message


app = App("stateless", version="1.0")


@app.tool
def add(a: int, b: int) -> int:
    return a + b


@app.resource("config://app")
def config() -> str:
    return "debug=false"


async def test_a_stateless_servers_own_errors_are_not_taken_for_legacy() -> None:
    with serve_in_thread(create_app(app.server)) as url, anyio.fail_after(LIMIT):
        async with connect_http(url + "/mcp", Client, protocol_version=STATELESS) as client:
            with pytest.raises(McpError) as raised:
                await client.read_resource(uri="nothing://here")
            result = await client.call_tool(name="add", arguments={"a": 1, "b": 2})
    assert not isinstance(raised.value, LegacyServerError)
    assert raised.value.code == -32602 and "nothing://here" in raised.value.message  # the server's answer
    assert result.structured_content == {"result": 3}
