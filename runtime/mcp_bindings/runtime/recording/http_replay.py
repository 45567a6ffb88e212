"""Replaying a recorded server over Streamable HTTP: each POST is one message for the replay
(`replay_server.ServerReplay.incoming`); a request's answer comes back on that POST as an SSE stream
(the notifications and server-to-client requests of its exchange, then the answer), a notification
or an answer gets 202. The handshake's answer carries an `Mcp-Session-Id`; GET (no standalone
stream) is 405, DELETE ends the session. A request of the other era than the recording's (and what
follows in the session it opens) goes to the runtime's own Streamable HTTP app serving the recording
as a server stub (`crossed_replay`): the version crossing is the runtime's."""

from __future__ import annotations

import json
import math
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

from mcp_bindings.runtime.http.serving import running
from mcp_bindings.runtime.recording.crossed_replay import needs_crossing, recorded_server
from mcp_bindings.runtime.recording.http_proxy import request_body
from mcp_bindings.runtime.recording.live_fallback import episodes_done, episodes_writer
from mcp_bindings.runtime.recording.recorder import Recorder
from mcp_bindings.runtime.recording.replay_server import ServerReplay
from mcp_bindings.runtime.rpc.jsonrpc import RequestId
from mcp_bindings.runtime.rpc.transport import TransportBase
from mcp_bindings.runtime.stdio.serve import until_stopped


class _PostStream(TransportBase):
    """What the replay sends while it answers one POST: frames queued for its SSE stream, which ends
    with the answer to the POST's request."""

    def __init__(self, request_id: Any, request_headers: dict[str, str] | None = None) -> None:
        self.request_id = request_id
        self.request_headers = request_headers or {}  # the client's (a live server behind the replay reads them)
        self.send_frames, self.frames = anyio.create_memory_object_stream[bytes](math.inf)

    async def send(self, frame: bytes, related: RequestId | None = None) -> None:
        try:
            await self.send_frames.send(frame)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            return  # after the answer (or to a POST that needs none): nobody reads it
        if related is not None and related == self.request_id:
            self.send_frames.close()

    async def receive(self) -> bytes:  # pragma: no cover - the replay never reads from a POST stream
        raise anyio.EndOfStream

    async def aclose(self) -> None:
        self.send_frames.close()


def _replayed(body: bytes) -> Any:
    """An ASGI `receive` giving `body` (already read) once more."""
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            await anyio.sleep_forever()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


async def _plain(send: Any, status: int, text: bytes = b"", headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers or []})
    await send({"type": "http.response.body", "body": text})


@dataclass(eq=False)
class HttpReplay:
    """The ASGI app of a replay: one `ServerReplay`, its tasks in `group`."""

    replay: ServerReplay
    group: anyio.abc.TaskGroup
    crossed: Any = None  # the runtime's app serving the recording to the other era (started), or None
    recorder: Recorder | None = None  # `new_episodes`: what the client sent and what it got, replayed or live
    session: str = field(init=False, default_factory=lambda: uuid.uuid4().hex)

    def _crossed_session(self, scope: dict[str, Any]) -> bool:
        if self.crossed is None:
            return False
        session = dict(scope.get("headers") or []).get(b"mcp-session-id", b"").decode("latin-1")
        return bool(session) and session in self.crossed.sessions

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if self._crossed_session(scope):
            await self.crossed(scope, receive, send)
            return
        if scope["method"] == "DELETE":
            await _plain(send, 200)
            return
        if scope["method"] != "POST":
            await _plain(send, 405, b"this replay serves POST only", [(b"allow", b"POST, DELETE")])
            return
        body = await request_body(receive)
        try:
            message = json.loads(body)
        except ValueError:
            message = None
        if not isinstance(message, dict):
            await _plain(send, 400, b"a POST carries one JSON-RPC message (an object)")
            return
        if self.crossed is not None and needs_crossing(self.replay.recording, message):
            await self.crossed(scope, _replayed(body), send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers") or []}
        if self.recorder is not None:
            self.recorder.frame("client", message, session=self.session, http={"method": "POST", "headers": headers})
        if "method" not in message or "id" not in message:  # a notification, or an answer to the replay
            await self.replay.incoming(_PostStream(None, headers), self.group, body)
            await _plain(send, 202)
            return
        stream = _PostStream(message["id"], headers)
        await self.replay.incoming(stream, self.group, body)
        out = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
        out.append((b"mcp-session-id", self.session.encode()))
        await send({"type": "http.response.start", "status": 200, "headers": out})
        answered = {"status": 200, "headers": {"content-type": "text/event-stream"}}
        async with stream.frames:
            async for frame in stream.frames:
                if self.recorder is not None:
                    self.recorder.frame("server", frame, session=self.session, http=answered)
                event = b"event: message\ndata: " + frame + b"\n\n"
                await send({"type": "http.response.body", "body": event, "more_body": True})
        await send({"type": "http.response.body", "body": b""})


async def _crossed_app(replay: ServerReplay, path: str, stack: AsyncExitStack) -> Any:
    """The runtime's Streamable HTTP app serving the recording as a stub (started in `stack`), or
    None when the recording states no version this runtime has."""
    from mcp_bindings.runtime.http.app import create_app

    try:
        server = recorded_server(replay)
    except ValueError:
        return None
    app = create_app(server, path=path)
    await stack.enter_async_context(app.lifespan())
    return app


@asynccontextmanager
async def replay_http(
    replay: ServerReplay,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    path: str = "/mcp",
    record_to: Path | None = None,
    server: dict[str, Any] | None = None,
) -> AsyncIterator[str]:
    """Serve `replay` over Streamable HTTP until the block ends; yields its URL. With `record_to`,
    the whole conversation (replayed, and answered by `replay.fallback`) is written there as a new
    session file when the block ends (`new_episodes`; `server` describes the live server)."""
    async with AsyncExitStack() as stack:  # the crossed app's tasks outlive the replay's
        crossed = await _crossed_app(replay, path, stack)
        if record_to is not None:
            writer = episodes_writer(replay.recording, record_to, "http", server or {})
            stack.callback(episodes_done, writer, record_to)
            recorder = Recorder(writer, "http")
        else:
            recorder = None
        if replay.fallback is not None:
            stack.push_async_callback(replay.fallback.aclose)
        async with anyio.create_task_group() as group:
            try:
                async with running(HttpReplay(replay, group, crossed, recorder), host, port) as (address, bound):
                    yield f"http://{address}:{bound}{path}"
            finally:
                group.cancel_scope.cancel()


async def serve_replay_http(replay: ServerReplay, *, host: str = "127.0.0.1", port: int = 0, **options: Any) -> None:
    """`mcp-bindgen replay FILE --http HOST:PORT`: serve until SIGINT/SIGTERM, saying where
    (`options`: `replay_http`'s `record_to` and `server`)."""
    async with replay_http(replay, host=host, port=port, **options) as url:
        print(f"replaying {replay.recording.path} at {url} (Ctrl-C stops)", file=sys.stderr)
        await until_stopped()
