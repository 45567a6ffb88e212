"""A replay's live Streamable HTTP server (`http_fallback.HttpLiveFallback`) against a scripted server
on 127.0.0.1: the client's handshake is given to it first and its session and version are sent from
then on; the server's messages on a request's SSE stream reach the client in order, the answer on
the request's stream; a server that answers with an HTTP error, ends the stream without the answer,
or is not there gives the client a JSON-RPC error naming the request and the URL."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from mcp_bindings.runtime.recording.http_fallback import HttpLiveFallback
from mcp_bindings.runtime.recording.http_proxy import request_body
from mcp_bindings.runtime.recording.live_fallback import HANDSHAKE_ID
from mcp_bindings.runtime.rpc.jsonrpc import RequestId
from mcp_bindings.runtime.rpc.transport import TransportBase
from tests.peers.auth_harness import bind_local, serve

pytestmark = pytest.mark.anyio

INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _call(request_id: int, name: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": name, "arguments": {}}}


class _Scripted:
    """The live server: JSON for the handshake, SSE streams (or an HTTP error) for `tools/call`."""

    def __init__(self) -> None:
        self.seen: list[tuple[dict[str, Any], dict[str, str]]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        message = json.loads(await request_body(receive)) if scope["method"] == "POST" else {}
        self.seen.append((message, headers))
        if message.get("method") == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}
            answer = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
            await _respond(send, 200, "application/json", answer, [(b"mcp-session-id", b"live-1")])
        elif message.get("method") != "tools/call":
            await _respond(send, 202, "", b"")
        elif message["params"]["name"] == "broken":
            await _respond(send, 500, "text/plain", b"boom")
        else:
            note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}}
            body = b"id: 1\ndata: \n\n" + b"event: message\ndata: " + json.dumps(note).encode() + b"\n\n"
            if message["params"]["name"] == "ok":
                answer = {"jsonrpc": "2.0", "id": message["id"], "result": {"content": []}}
                body += b"data: " + json.dumps(answer).encode() + b"\n\n"
            await _respond(send, 200, "text/event-stream", body)


async def _respond(
    send: Any, status: int, kind: str, body: bytes, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    headers = [(b"content-type", kind.encode())] if kind else []
    await send({"type": "http.response.start", "status": status, "headers": headers + (extra or [])})
    await send({"type": "http.response.body", "body": body})


class _Stream(TransportBase):
    """The replay's stream of one client request: what the fallback sends it, with the related id."""

    def __init__(self) -> None:
        self.sent: list[tuple[dict[str, Any], RequestId | None]] = []
        self.done = anyio.Event()

    async def send(self, frame: bytes, related: RequestId | None = None) -> None:
        self.sent.append((json.loads(frame), related))
        if related is not None:
            self.done.set()

    async def receive(self) -> bytes:  # pragma: no cover - never read
        raise anyio.EndOfStream

    async def aclose(self) -> None:
        return None


async def _forward(fallback: HttpLiveFallback, message: dict[str, Any]) -> list[tuple[dict[str, Any], Any]]:
    stream = _Stream()
    async with anyio.create_task_group() as group:
        await fallback.forward(message, stream, group)
        with anyio.fail_after(20):
            await stream.done.wait()
    return stream.sent


async def test_the_handshake_goes_first_and_its_session_and_version_follow() -> None:
    server = _Scripted()
    sock, base = bind_local()
    async with serve(server, sock):
        fallback = HttpLiveFallback(base + "/mcp", {"authorization": "Bearer t"})
        fallback.remember(INITIALIZE)
        fallback.remember(INITIALIZED)
        try:
            sent = await _forward(fallback, _call(7, "ok"))
        finally:
            await fallback.aclose()
    assert [(m.get("method"), related) for m, related in sent] == [("notifications/message", None), (None, 7)]
    assert sent[1][0]["result"] == {"content": []}
    methods = [(m.get("method"), m.get("id")) for m, _ in server.seen]
    assert methods == [
        ("initialize", HANDSHAKE_ID),
        ("notifications/initialized", None),
        ("tools/call", 7),
        (None, None),
    ]
    call_headers = server.seen[2][1]
    assert call_headers["mcp-session-id"] == "live-1" and call_headers["mcp-protocol-version"] == "2025-11-25"
    assert call_headers["authorization"] == "Bearer t"
    assert server.seen[3][1]["mcp-session-id"] == "live-1"  # the DELETE that ends the session


@pytest.mark.parametrize(
    ("name", "failure"),
    [("broken", "did not answer it: HTTP 500"), ("cut", "ended its answer without a result")],
)
async def test_a_request_the_live_server_does_not_answer_gets_an_error(name: str, failure: str) -> None:
    server = _Scripted()
    sock, base = bind_local()
    async with serve(server, sock):
        fallback = HttpLiveFallback(base + "/mcp")
        try:
            sent = await _forward(fallback, _call(3, name))
        finally:
            await fallback.aclose()
    error, related = sent[-1]
    assert related == 3 and error["id"] == 3 and error["error"]["code"] == -32603
    assert error["error"]["message"] == f"tools/call {name}: the live server at {base}/mcp {failure}"


async def test_a_live_server_that_is_not_there_gives_an_error() -> None:
    sock, base = bind_local()
    sock.close()  # nothing listens on the port
    fallback = HttpLiveFallback(base + "/mcp")
    try:
        sent = await _forward(fallback, _call(4, "ok"))
    finally:
        await fallback.aclose()
    ((error, related),) = sent
    assert related == 4 and error["error"]["code"] == -32603
    assert error["error"]["message"].startswith(f"tools/call ok: the live server at {base}/mcp did not answer it: ")
