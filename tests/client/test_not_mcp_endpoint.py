"""A URL that is no MCP endpoint gets one clear line (issue 34): the request, the status and what came
back (an HTML page named, not dumped), and the question to ask; it used to be `HTTP 501: <!DOCTYPE
HTML>...` with no URL. The peer is the standard library's HTTP server on 127.0.0.1 (POST: 501)."""

from __future__ import annotations

import http.server
from collections.abc import Iterator
from contextlib import contextmanager

import anyio
import pytest

from mcp_bindings.runtime.client.http import connect_http
from mcp_bindings.runtime.rpc.errors import McpError
from mcp_bindings.v2025_11_25.client import Client
from tests.support.stdlib_http import serve_handler

pytestmark = pytest.mark.anyio


@contextmanager
def static_site() -> Iterator[str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            return None

    with serve_handler(Quiet) as url:
        yield url + "/"


@pytest.mark.parametrize("version", ["2025-11-25", "auto"])
async def test_a_web_page_is_not_an_mcp_endpoint(version: str) -> None:
    with static_site() as url, anyio.fail_after(20):
        with pytest.raises(McpError) as caught:
            async with connect_http(url, Client, protocol_version=version, request_timeout=10):
                pass
    message = str(caught.value)
    assert f"POST {url} answered HTTP 501" in message
    assert "with an HTML page, not an MCP response: is this URL the server's MCP endpoint?" in message
    assert "<!DOCTYPE" not in message and "<html" not in message.lower()
