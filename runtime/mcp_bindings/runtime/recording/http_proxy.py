"""Recording a Streamable HTTP server: a reverse proxy (an ASGI app on uvicorn, 127.0.0.1 by
default) that forwards every request to the server's origin, same path and query, streams the answer
back unchanged, and writes each JSON-RPC message of the request bodies, JSON answers and SSE events to
the session file with the HTTP method, status and headers (redacted: `Authorization`, cookies, ...).

Connect the host to the proxy's URL (printed to stderr by `mcp-bindgen record`) instead of the server's."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import urlsplit

import httpx

from mcp_bindings.runtime.http.serving import running
from mcp_bindings.runtime.recording.recorder import Recorder
from mcp_bindings.runtime.recording.redaction import DEFAULT, Redaction
from mcp_bindings.runtime.recording.session_file import Direction, SessionWriter, new_header
from mcp_bindings.runtime.stdio.serve import until_stopped

HOP_BY_HOP = frozenset(
    {"host", "connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "content-length"}
)


def _messages(body: bytes) -> list[dict[str, Any]]:
    try:
        value = json.loads(body)
    except ValueError:
        return []
    items = cast("list[Any]", value) if isinstance(value, list) else [value]
    return [cast("dict[str, Any]", item) for item in items if isinstance(item, dict)]


def _related(method: str, body: bytes) -> dict[str, Any]:
    """Which request the messages of a response stream belong to, as the stream says (`http.related`
    of their entries): the one request a POST carried, or none (null) on the GET stream, the
    session's; nothing where the stream does not say (a POST of several requests)."""
    if method == "GET":
        return {"related": None}
    ids = [m["id"] for m in _messages(body) if "method" in m and isinstance(m.get("id"), (str, int))]
    return {"related": ids[0]} if len(ids) == 1 else {}


async def request_body(receive: Any) -> bytes:
    """The whole body of an ASGI HTTP request."""
    body = b""
    while True:
        event = await receive()
        body += event.get("body", b"")
        if not event.get("more_body"):
            return body


@dataclass
class SseEvents:
    """Cuts an SSE byte stream into the data of its events, as the bytes arrive."""

    buffer: bytes = b""

    def feed(self, chunk: bytes) -> list[bytes]:
        self.buffer += chunk.replace(b"\r\n", b"\n")
        events: list[bytes] = []
        while b"\n\n" in self.buffer:
            block, self.buffer = self.buffer.split(b"\n\n", 1)
            data = [line[5:].lstrip(b" ") for line in block.split(b"\n") if line.startswith(b"data:")]
            if data:
                events.append(b"\n".join(data))
        return events


class RecordingProxy:
    """The ASGI app: forwards to `upstream`'s origin, records the MCP messages both ways."""

    def __init__(self, upstream: str, recorder: Recorder) -> None:
        parts = urlsplit(upstream)
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.recorder = recorder
        self.http = httpx.AsyncClient(timeout=httpx.Timeout(30.0, read=None))

    def _record(
        self, direction: Direction, messages: list[dict[str, Any]], session: str | None, http: dict[str, Any]
    ) -> None:
        for message in messages:
            self.recorder.frame(direction, message, session=session, http=http)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":  # uvicorn runs it with lifespan="off": only HTTP requests come
            return
        body = await request_body(receive)
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        session = headers.get("mcp-session-id")
        self._record("client", _messages(body), session, {"method": scope["method"], "headers": headers})
        url = self.origin + scope["path"] + (("?" + scope["query_string"].decode()) if scope["query_string"] else "")
        forwarded = {k: v for k, v in headers.items() if k not in HOP_BY_HOP}
        request = self.http.build_request(scope["method"], url, headers=forwarded, content=body)
        try:
            response = await self.http.send(request, stream=True)
        except httpx.HTTPError as exc:
            text = f"the recording proxy cannot reach {self.origin}: {exc}".encode()
            await send({"type": "http.response.start", "status": 502, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": text})
            return
        try:
            await self._relay(response, send, session, _related(scope["method"], body))
        finally:
            await response.aclose()

    async def _relay(self, response: httpx.Response, send: Any, session: str | None, related: dict[str, Any]) -> None:
        out_headers = [
            (k.encode("latin-1"), v.encode("latin-1")) for k, v in response.headers.items() if k not in HOP_BY_HOP
        ]
        session = response.headers.get("mcp-session-id", session)
        http = {"status": response.status_code, "headers": dict(response.headers.items()), **related}
        await send({"type": "http.response.start", "status": response.status_code, "headers": out_headers})
        kind = response.headers.get("content-type", "")
        sse = SseEvents() if kind.startswith("text/event-stream") else None
        whole = b""
        async for chunk in response.aiter_raw():
            if sse is not None:
                for data in sse.feed(chunk):
                    self._record("server", _messages(data), session, http)
            else:
                whole += chunk
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        if sse is None and kind.startswith("application/json"):
            self._record("server", _messages(whole), session, http)
        await send({"type": "http.response.body", "body": b""})


@asynccontextmanager
async def recording_proxy(
    upstream: str,
    output: str | os.PathLike[str],
    *,
    redaction: Redaction = DEFAULT,
    host: str = "127.0.0.1",
    port: int = 0,
) -> AsyncIterator[str]:
    """Run the recording proxy until the block ends; yields the URL to connect to (the upstream's
    path on the proxy's address)."""
    writer = SessionWriter(output, new_header("http", {"url": redaction.text(upstream)}, redaction.describe()))
    proxy = RecordingProxy(upstream, Recorder(writer, "http", redaction))
    parts = urlsplit(upstream)
    try:
        async with running(proxy, host, port) as (address, bound):
            yield f"http://{address}:{bound}{parts.path}" + (f"?{parts.query}" if parts.query else "")
    finally:
        await proxy.http.aclose()
        writer.close()


async def record_http(upstream: str, output: str | os.PathLike[str], **options: Any) -> None:
    """`mcp-bindgen record -- URL`: run the proxy until SIGINT/SIGTERM, saying where it listens
    (`options`: `recording_proxy`'s `redaction`, `host` and `port`)."""
    async with recording_proxy(upstream, output, **options) as url:
        print(f"recording {upstream} to {output}: connect the host to {url} (Ctrl-C stops)", file=sys.stderr)
        await until_stopped()
