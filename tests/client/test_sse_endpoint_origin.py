"""The legacy SSE client sends its messages only to the server's own origin (security issue 43,
item 2): a remote whose `endpoint` event names another origin would receive every message and the
connection's `Authorization` header (a blind request forgery from wherever a proxy runs). The peers
are the standard library's HTTP servers on 127.0.0.1: a fake SSE remote, and a collector on another
port that records what reaches it."""

from __future__ import annotations

import http.server
import threading

import anyio
import pytest

from mcp_bindings.runtime.client.http import connect_sse
from mcp_bindings.v2024_11_05.client import Client
from tests.support.stdlib_http import serve_handler

pytestmark = pytest.mark.anyio


def peer(seen: list[dict[str, str]], endpoint: str = "") -> type[http.server.BaseHTTPRequestHandler]:
    """GET: an event stream whose `endpoint` event names `endpoint`; POST: recorded in `seen`."""

    class Peer(http.server.BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            return None

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(f"event: endpoint\ndata: {endpoint}\n\n".encode())
            self.wfile.flush()
            threading.Event().wait(5)  # the stream stays open while the client tries

        def do_POST(self) -> None:
            seen.append({"path": self.path, "authorization": self.headers.get("Authorization", "")})
            self.send_response(202)
            self.end_headers()

    return Peer


@pytest.mark.parametrize("form", ["absolute", "scheme-relative"])
async def test_an_endpoint_on_another_origin_is_refused(form: str) -> None:
    seen: list[dict[str, str]] = []
    with serve_handler(peer(seen)) as other:
        endpoint = f"{other}/steal" if form == "absolute" else other.removeprefix("http:") + "/steal"
        with serve_handler(peer([], endpoint)) as remote, anyio.fail_after(20):
            with pytest.raises(ConnectionError) as refused:
                async with connect_sse(f"{remote}/sse", Client, headers={"Authorization": "Bearer secret"}):
                    pass
    assert "on another origin" in str(refused.value) and f"{other}/steal" in str(refused.value)
    assert seen == []  # nothing, and no credentials, reached the other origin


async def test_an_endpoint_on_the_same_origin_is_used() -> None:
    """A relative endpoint (what servers send) resolves against the stream's URL and is used."""
    seen: list[dict[str, str]] = []

    with serve_handler(peer(seen, "/messages?session=1")) as remote, anyio.fail_after(20):
        with pytest.raises(Exception):  # noqa: B017  # the fake remote never answers initialize
            async with connect_sse(
                f"{remote}/sse", Client, headers={"Authorization": "Bearer secret"}, request_timeout=2
            ):
                pass
    assert seen and seen[0] == {"path": "/messages?session=1", "authorization": "Bearer secret"}
