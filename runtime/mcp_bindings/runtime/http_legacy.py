"""The legacy HTTP+SSE transport of 2024-11-05, server side: GET `/sse` opens a session's event
stream and names its POST endpoint (`/messages?session_id=...`); POSTs there are answered on it."""

from __future__ import annotations

import math
import secrets
from collections.abc import AsyncIterator

import anyio
from anyio.streams.memory import MemoryObjectSendStream
from starlette.responses import Response, StreamingResponse

from .http_resume import no_cache, sse_event
from .notifications import ServerHost
from .server import ServerRuntime
from .session import Session
from .stubs import ServerStub
from .transport import MemoryTransport


class LegacySse:
    def __init__(self, server: ServerStub, host: ServerHost, max_sessions: int) -> None:
        self.server = server
        self.host = host
        self.max_sessions = max_sessions
        self.sessions: dict[str, tuple[Session, MemoryObjectSendStream[bytes]]] = {}

    def stream(self) -> Response:
        if len(self.sessions) >= self.max_sessions:
            return Response(status_code=503)
        session_id = secrets.token_hex(16)
        inbound_send, inbound_receive = anyio.create_memory_object_stream[bytes](math.inf)
        outbound_send, outbound_receive = anyio.create_memory_object_stream[bytes](math.inf)
        transport = MemoryTransport(outbound_send, inbound_receive)  # POSTed frames in, SSE events out
        session = Session(transport, ServerRuntime(self.server, host=self.host))
        self.sessions[session_id] = (session, inbound_send)
        endpoint = f"/messages?session_id={session_id}"

        async def events() -> AsyncIterator[bytes]:
            try:
                async with anyio.create_task_group() as task_group:
                    task_group.start_soon(session.run)
                    yield b"event: endpoint\ndata: " + endpoint.encode() + b"\n\n"
                    async for frame in outbound_receive:
                        yield sse_event(frame)
            finally:
                self.sessions.pop(session_id, None)
                inbound_send.close()

        return StreamingResponse(events(), media_type="text/event-stream", headers=no_cache())

    async def post(self, session_id: str, body: bytes) -> Response:
        entry = self.sessions.get(session_id)
        if entry is None:
            return Response(status_code=404, content="unknown session_id")
        await entry[1].send(body.strip())
        return Response(status_code=202, content="Accepted")
