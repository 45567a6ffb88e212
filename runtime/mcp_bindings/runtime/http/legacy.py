"""The legacy HTTP+SSE transport of 2024-11-05, server side: GET `/sse` opens a session's event
stream and names its POST endpoint (`/messages?session_id=...`); POSTs there are answered on it.

What waits for a client is bounded: the server's messages queue for the event stream up to
`queue_bytes` (`HttpOptions.legacy_queue_bytes`); a client that reads slower than that is dropped
(logged once) and its connection closed, its session ended and its memory given back. POSTed
messages wait in a short queue, so a client posting faster than the session reads is held back.
Behind bearer auth a session belongs to the principal that opened it (`principal_of`): a POST of any
other principal is answered 404, as for an unknown session.
"""

from __future__ import annotations

import secrets
from collections import deque
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectSendStream
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from mcp_bindings.runtime.http.fairness import PerClient, client_key
from mcp_bindings.runtime.http.resume import no_cache, raw_headers, sse_event
from mcp_bindings.runtime.rpc import logs
from mcp_bindings.runtime.rpc.jsonrpc import RequestId
from mcp_bindings.runtime.rpc.session import Session
from mcp_bindings.runtime.rpc.transport import QueueTransport
from mcp_bindings.runtime.rpc.trim import reclaim
from mcp_bindings.runtime.server.host import ServerHost
from mcp_bindings.runtime.server.runtime import ServerRuntime
from mcp_bindings.runtime.server.stubs import ServerStub

log = logs.logger("http")

INBOUND_FRAMES = 32  # POSTed messages waiting for the session; a POST beyond waits for room
SSE_OVERHEAD = 32  # bytes counted per queued message beside its frame ("event: message\ndata: ...")
CLOSE_GRACE_SECONDS = 0.2  # to end a dropped stream cleanly when the client is not stuck


class _Outbox:
    """The server's messages waiting to be written to one client's event stream, bounded in bytes.
    One message larger than the bound still goes through an empty queue."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.bytes = 0
        self.closed = False
        self._frames: deque[bytes] = deque()
        self._ready = anyio.Event()

    def put(self, frame: bytes) -> bool:
        """Queue a message; False when it does not fit (the client is not keeping up)."""
        size = len(frame) + SSE_OVERHEAD
        if self._frames and self.bytes + size > self.limit:
            return False
        self._frames.append(frame)
        self.bytes += size
        self._ready.set()
        return True

    async def get(self) -> bytes | None:
        """The next message; None once the outbox is closed."""
        while not self._frames:
            if self.closed:
                return None
            self._ready = anyio.Event()
            await self._ready.wait()
        frame = self._frames.popleft()
        self.bytes -= len(frame) + SSE_OVERHEAD
        return frame

    def close(self) -> int:
        """Drop what waits; returns its size."""
        freed = self.bytes
        self.closed = True
        self._frames.clear()
        self.bytes = 0
        self._ready.set()
        return freed


class LegacyConnection(QueueTransport):
    """One `/sse` client: its session's transport (POSTed frames in, the event stream out)."""

    def __init__(self, legacy: LegacySse, session_id: str, principal: str | None, client: str | None) -> None:
        self.legacy = legacy
        self.id = session_id
        self.principal = principal
        self.client = client  # whose share of sessions it holds (`http.fairness.client_key`)
        self.outbox = _Outbox(legacy.queue_bytes)
        self.inbound, self._inbound = anyio.create_memory_object_stream[bytes](legacy.inbound_frames)
        self.runtime = ServerRuntime(legacy.server, host=legacy.host)
        self.session = Session(self, self.runtime)
        self.dropped = False  # closed because the client did not keep up
        self.closed = False
        self._scope: anyio.CancelScope | None = None  # the response's, cancelled to close the connection

    # -- Transport (what it receives: `QueueTransport.receive`) -------------------------------

    async def send(self, frame: bytes, related: RequestId | None = None) -> None:
        if self.closed:
            raise anyio.ClosedResourceError
        if not self.outbox.put(frame):
            self.drop()
            raise anyio.BrokenResourceError

    async def aclose(self) -> None:
        self.close()

    # -- the connection ---------------------------------------------------------------------

    def drop(self) -> None:
        """The client does not read what it is sent: end its connection and session (logged once)."""
        if self.closed:
            return
        self.dropped = True
        log.warning(
            "legacy SSE session %s: the client is not reading (%d bytes waiting, limit %d); "
            "dropping its queued messages and closing the connection",
            self.id[:8],
            self.outbox.bytes,
            self.outbox.limit,
        )
        self.close()

    def close(self) -> None:
        """Forget the session, end its requests and stream, give its queued memory back."""
        if self.closed:
            return
        self.closed = True
        if self.legacy.sessions.get(self.id) is self:
            del self.legacy.sessions[self.id]
        self.legacy.shares.give_back(self.client)
        self.inbound.close()
        self.session.cancel_all()
        self.legacy.host.disconnect(self.runtime)
        reclaim(self.outbox.close())
        if self._scope is not None:
            self._scope.cancel()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The ASGI response: the `endpoint` event, then every message the session sends."""
        # Below where the app is mounted (`root_path`: Starlette's Mount, uvicorn's --root-path).
        prefix = str(scope.get("root_path", "")).rstrip("/").encode("latin-1")
        endpoint = b"event: endpoint\ndata: " + prefix + b"/messages?session_id=" + self.id.encode() + b"\n\n"
        headers = raw_headers({"content-type": "text/event-stream", **no_cache()})
        started = complete = False
        try:
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            started = True
            await send({"type": "http.response.body", "body": endpoint, "more_body": True})
            async with anyio.create_task_group() as task_group:
                self._scope = task_group.cancel_scope
                if self.closed:
                    task_group.cancel_scope.cancel()
                task_group.start_soon(self.session.run)
                task_group.start_soon(self._watch, receive)
                while (frame := await self.outbox.get()) is not None:
                    await send({"type": "http.response.body", "body": sse_event(frame), "more_body": True})
                task_group.cancel_scope.cancel()
        finally:
            self.close()
            # End the stream cleanly unless the client is stuck (the send would wait for it forever):
            # returning with the response open makes the HTTP server close the connection.
            if started:
                with anyio.move_on_after(CLOSE_GRACE_SECONDS, shield=True):
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                    complete = True
        if started and not complete:
            log.debug("legacy SSE session %s: connection closed with its response open", self.id[:8])

    async def _watch(self, receive: Receive) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        self.close()  # the client left


@dataclass(eq=False)
class LegacySse:
    """The legacy `/sse` sessions of one server object."""

    server: ServerStub
    host: ServerHost
    max_sessions: int
    _: KW_ONLY
    queue_bytes: int = 8 * 1024 * 1024
    inbound_frames: int = INBOUND_FRAMES
    max_sessions_per_client: int = 100
    sessions: dict[str, LegacyConnection] = field(init=False, default_factory=dict[str, "LegacyConnection"])
    shares: PerClient = field(init=False)  # each client's share of the sessions (`http.fairness`): one more is 429

    def __post_init__(self) -> None:
        self.shares = PerClient(
            "max_sessions_per_client", self.max_sessions_per_client, "legacy /sse sessions open", "close one first"
        )

    def stream(self, principal: str | None = None, address: str | None = None) -> Any:
        """GET /sse: a new session, bound to the request's principal (None without auth), counted
        against its client's share (its principal, else `address`)."""
        client = client_key(principal, address)
        refusal = self.shares.refusal(None, client)
        if refusal is not None:
            return refusal
        if len(self.sessions) >= self.max_sessions:
            return Response(status_code=503, headers={"Connection": "close"})
        connection = LegacyConnection(self, secrets.token_hex(16), principal, client)
        connection.session.peer_address = address
        self.sessions[connection.id] = connection
        self.shares.take(client)
        return connection

    def admits(self, session_id: str, principal: str | None = None) -> bool:
        """Whether `session_id` is open and belongs to `principal`."""
        connection = self.sessions.get(session_id)
        return connection is not None and connection.principal == principal

    async def post(self, session_id: str, body: bytes, principal: str | None = None) -> Response:
        connection = self.sessions.get(session_id)
        if connection is None or connection.principal != principal:
            return Response(status_code=404, content="unknown session_id")
        connection.session.principal = principal  # the same key; its token's scopes and claims as of now
        inbound: MemoryObjectSendStream[bytes] = connection.inbound
        try:
            await inbound.send(body.strip())
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            return Response(status_code=404, content="unknown session_id")
        return Response(status_code=202, content="Accepted")
