"""The Streamable HTTP transport, server side: POST, GET and DELETE on one endpoint, both wire eras.

Handshake versions: `initialize` opens a session (`Mcp-Session-Id`, cryptographically random),
later POSTs carry it, GET opens the server-to-client stream (or resumes a POST stream with
`Last-Event-ID`), DELETE ends the session. 2026-07-28: every POST stands alone, described by its
`_meta` and headers (`http_stateless`), with a session engine of its own so that two clients'
equal JSON-RPC ids never meet.
"""

from __future__ import annotations

import asyncio
import logging
import math
import secrets
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectSendStream
from starlette.responses import Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from . import jsonrpc
from .errors import INTERNAL_ERROR, INVALID_REQUEST
from .http_resume import (
    CLOSE_STREAM,
    DROP,
    EventLog,
    FrameSink,
    ResponseWriter,
    StreamRecord,
    error_response,
    no_cache,
    sse_event,
)
from .http_stateless import VERSION_HEADER, Refusal, ToolHeaders, check_headers, stateless_status
from .jsonrpc import InvalidMessage, Request
from .notifications import ServerHost
from .peer import stateless_meta
from .server import ServerRuntime
from .session import Answer, Session
from .stubs import ServerStub
from .transport import Features, TransportBase

log = logging.getLogger("mcp_bindings.runtime.http")

SESSION_HEADER = "mcp-session-id"


class HttpTransport(TransportBase):
    """The `send` side of a session whose messages arrive as HTTP requests: a message related to a
    request goes to that request's response stream, anything else to the session's GET stream."""

    features = Features(closes_streams=True)

    def __init__(self) -> None:
        self.by_request: dict[Any, FrameSink] = {}
        self.standalone: MemoryObjectSendStream[bytes] | None = None

    async def close_stream(self, related: Any) -> None:
        """End the SSE stream of the POST carrying request `related` before its response (the request
        goes on; the client resumes with GET + Last-Event-ID). Ignored where streams are not resumable."""
        stream = self.by_request.get(related)
        if stream is not None:
            try:
                await stream.send(CLOSE_STREAM)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass

    async def send(self, frame: bytes, related: Any = None) -> None:
        stream = self.by_request.get(related) if related is not None else None
        stream = stream or self.standalone
        if stream is None:
            log.debug("no open stream for a server message; dropped")
            return
        try:
            await stream.send(frame)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            log.debug("stream closed; server message dropped")

    async def receive(self) -> bytes:  # pragma: no cover - HTTP delivers messages itself
        raise anyio.EndOfStream

    async def aclose(self) -> None:
        if self.standalone is not None:
            self.standalone.close()


@dataclass(eq=False)
class HttpSession:
    id: str
    runtime: ServerRuntime
    session: Session
    transport: HttpTransport
    events: EventLog | None = None
    last_seen: float = field(default_factory=time.monotonic)


@dataclass
class StreamableOptions:
    max_sessions: int
    session_idle_seconds: float
    json_only: bool  # never upgrade a response to SSE
    resumable: bool  # number SSE events, prime each POST stream, replay on Last-Event-ID
    sse_retry_ms: int
    max_replay_events: int  # per session


class StreamableHttp:
    """The sessions of one server object and the POST / GET / DELETE that act on them."""

    def __init__(self, server: ServerStub, host: ServerHost, options: StreamableOptions) -> None:
        self.server = server
        self.host = host
        self.options = options
        self.sessions: dict[str, HttpSession] = {}
        self._stateless_runtime = ServerRuntime(server, host=host)
        self._tool_headers = ToolHeaders(self._stateless_runtime)
        self._next_expiry_sweep = 0.0

    # -- POST --------------------------------------------------------------------------------

    async def post(self, headers: dict[str, str], body: bytes) -> Any:
        try:
            data = jsonrpc.decode(body)
        except InvalidMessage as exc:
            return error_response(None, exc.code, exc.message, 400)
        items = data if isinstance(data, list) else [data]
        if not items:
            return error_response(None, INVALID_REQUEST, "Invalid Request: empty batch", 400)
        messages: list[jsonrpc.Message] = []
        for item in items:
            try:
                messages.append(jsonrpc.classify(item))
            except InvalidMessage as exc:
                if not exc.reply:  # a malformed response is dropped, never answered
                    log.warning("dropping a malformed response: %s", exc.message)
                    continue
                return error_response(exc.id, exc.code, exc.message, 400, exc.data)
        self._expire_idle()
        batch = isinstance(data, list)
        requests = [m for m in messages if isinstance(m, Request)]
        session_id = headers.get(SESSION_HEADER)
        # An initialize that carries stateless `_meta` is a stateless-era request (answered -32601/404).
        handshakes = [r for r in requests if r.method == "initialize" and stateless_meta(r) is None]
        if handshakes and batch:  # 2025-03-26: "the initialize request MUST NOT be part of a batch"
            message = "Invalid Request: initialize must not be part of a JSON-RPC batch"
            return error_response(handshakes[0].id, INVALID_REQUEST, message, 400)
        if handshakes and not session_id:
            return await self._initialize(headers, messages, batch)
        if session_id:
            return await self._post_in_session(headers, session_id, messages, batch)
        return await self._post_stateless(headers, messages, batch)

    async def _post_in_session(
        self, headers: dict[str, str], session_id: str, messages: list[jsonrpc.Message], batch: bool
    ) -> Any:
        http_session = self.sessions.get(session_id)
        if http_session is None:
            return error_response(None, INVALID_REQUEST, "Not Found: unknown or expired Mcp-Session-Id", 404)
        http_session.last_seen = time.monotonic()
        header = headers.get(VERSION_HEADER)
        view = http_session.runtime.view
        if header is not None and view is not None and header != view.version:
            message = f"Bad Request: MCP-Protocol-Version {header!r} does not match the session's {view.version!r}"
            return error_response(None, INVALID_REQUEST, message, 400)
        if batch and not http_session.runtime.batches_allowed:
            return error_response(
                None, INVALID_REQUEST, "Invalid Request: batches are not part of the negotiated version", 400
            )
        return await self._dispatch(
            headers, http_session.session, messages, stateless=False, batch=batch, events=http_session.events
        )

    async def _post_stateless(self, headers: dict[str, str], messages: list[jsonrpc.Message], batch: bool) -> Any:
        if batch:
            return error_response(None, INVALID_REQUEST, "Invalid Request: batches need a session", 400)
        rpc = next((m for m in messages if isinstance(m, Request)), None)
        if rpc is None:
            return Response(status_code=202)  # a notification or response without a session: nothing to attach it to
        try:
            check_headers(headers, rpc)
            if rpc.method == "tools/call":
                await self._tool_headers.check(headers, rpc)
        except Refusal as refusal:
            return error_response(rpc.id, refusal.code, refusal.message, refusal.status)
        session = Session(HttpTransport(), self._stateless_runtime)
        return await self._dispatch(headers, session, messages, stateless=True, batch=False)

    async def _initialize(self, headers: dict[str, str], messages: list[jsonrpc.Message], batch: bool) -> Any:
        if len(self.sessions) >= self.options.max_sessions:
            return error_response(None, INTERNAL_ERROR, "Service Unavailable: too many sessions", 503)
        transport = HttpTransport()
        runtime = ServerRuntime(self.server, host=self.host)
        session = Session(transport, runtime)
        events = EventLog(self.options.max_replay_events) if self.options.resumable else None
        http_session = HttpSession(secrets.token_urlsafe(24), runtime, session, transport, events)

        def session_header() -> dict[str, str]:
            # Evaluated when the response starts, i.e. after initialize has been answered.
            if runtime.view is None:
                return {}
            self.sessions[http_session.id] = http_session
            return {SESSION_HEADER: http_session.id}

        requests = [m for m in messages if isinstance(m, Request)]
        return await self._dispatch(
            headers, session, requests, stateless=False, batch=batch, extra=session_header, events=events
        )

    async def _dispatch(
        self,
        headers: dict[str, str],
        session: Session,
        messages: Sequence[jsonrpc.Message],
        *,
        stateless: bool,
        batch: bool,
        extra: Callable[[], dict[str, str]] = dict,
        events: EventLog | None = None,
    ) -> Any:
        for message in messages:
            if not isinstance(message, Request):
                await session.accept(message)
        requests = [m for m in messages if isinstance(m, Request)]
        if not requests:
            return Response(status_code=202)
        accept = headers.get("accept", "*/*").lower()
        sse_ok = not self.options.json_only and ("text/event-stream" in accept or "*/*" in accept)
        return RequestsResponse(
            session,
            requests,
            sse_ok=sse_ok,
            stateless=stateless,
            batch=batch,
            headers=extra,
            events=events,
            retry_ms=self.options.sse_retry_ms,
        )

    # -- GET and DELETE ----------------------------------------------------------------------

    def get(self, headers: dict[str, str]) -> Response:
        if "text/event-stream" not in headers.get("accept", "").lower():
            return Response(status_code=406, content="GET needs Accept: text/event-stream")
        session_id = headers.get(SESSION_HEADER)
        http_session = self.sessions.get(session_id or "")
        if http_session is None:
            return Response(status_code=405 if not session_id else 404, headers={"Allow": "POST, DELETE"})
        last_event_id = headers.get("last-event-id")
        if last_event_id is not None and http_session.events is not None:
            found = http_session.events.resume(last_event_id.strip())
            if found is not None:
                return _resume(*found)
        transport = http_session.transport
        if transport.standalone is not None:
            return Response(status_code=409, content="a GET stream is already open for this session")
        send_stream, receive_stream = anyio.create_memory_object_stream[bytes](math.inf)
        transport.standalone = send_stream

        async def events() -> AsyncIterator[bytes]:
            try:
                yield b": stream open\n\n"
                async for frame in receive_stream:
                    yield sse_event(frame)
            finally:
                if transport.standalone is send_stream:
                    transport.standalone = None

        return StreamingResponse(events(), media_type="text/event-stream", headers=no_cache())

    def delete(self, headers: dict[str, str]) -> Response:
        session_id = headers.get(SESSION_HEADER)
        http_session = self.sessions.pop(session_id or "", None)
        if http_session is None:
            return Response(status_code=404 if session_id else 400)
        http_session.session.cancel_all()
        if http_session.transport.standalone is not None:
            http_session.transport.standalone.close()
        return Response(status_code=200)

    def close_all(self) -> None:
        for http_session in list(self.sessions.values()):
            http_session.session.cancel_all()

    def _expire_idle(self) -> None:
        now = time.monotonic()
        if now < self._next_expiry_sweep:
            return  # one sweep a second at most: it walks every session
        self._next_expiry_sweep = now + min(1.0, self.options.session_idle_seconds / 10)
        cutoff = now - self.options.session_idle_seconds
        for session_id, http_session in list(self.sessions.items()):
            if http_session.last_seen < cutoff:
                del self.sessions[session_id]
                http_session.session.cancel_all()


def _resume(stream: str, later: list[tuple[int, bytes]], record: StreamRecord) -> Response:
    """A GET with Last-Event-ID: replay the rest of that POST stream, then follow it until its
    requests are answered."""
    send_stream, receive_stream = anyio.create_memory_object_stream[tuple[int, bytes]](math.inf)
    for item in later:
        send_stream.send_nowait(item)
    if record.finished:
        send_stream.close()
    else:
        if record.live is not None:
            record.live.close()  # a newer reconnection replaces the older one
        record.live = send_stream

    async def events() -> AsyncIterator[bytes]:
        try:
            async for event_id, frame in receive_stream:
                yield sse_event(frame, event_id)
        finally:
            if record.live is send_stream:
                record.live = None

    return StreamingResponse(events(), media_type="text/event-stream", headers=no_cache())


class RequestsResponse:
    """An ASGI response that runs the POST's request(s) and answers them (see `ResponseWriter`).

    One request runs inline in the ASGI task: no extra task, queue or task group, which is most of
    the cost of a small call. In the stateless era a client that closes the connection cancels its
    request (2026-07-28 transports: closing the response stream is the cancellation signal), so
    there a watcher task runs beside it. In handshake sessions disconnection is not cancellation
    (the client sends `notifications/cancelled`), so nothing watches. A batch (handshake era only)
    runs its requests concurrently and is answered with one JSON array.
    """

    def __init__(
        self,
        session: Session,
        requests: list[Request],
        *,
        sse_ok: bool,
        stateless: bool,
        batch: bool,
        headers: Callable[[], dict[str, str]] = dict,
        events: EventLog | None = None,
        retry_ms: int = 1000,
    ) -> None:
        self.session = session
        transport = session.transport
        assert isinstance(transport, HttpTransport)
        self.transport = transport
        self.requests = requests
        self.sse_ok = sse_ok
        self.stateless = stateless
        self.batch = batch
        self.headers = headers
        self.events = events
        self.retry_ms = retry_ms

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        status: Callable[[int | None], int] = stateless_status if self.stateless else _always_ok
        writer = ResponseWriter(
            send,
            sse_ok=self.sse_ok and not self.batch,
            status=status,
            headers=self.headers,
            events=self.events,
            retry_ms=self.retry_ms,
        )
        if self.batch:
            await writer.finish(await self._answer_batch(), batch=True)
            return
        rpc = self.requests[0]
        routes = self.transport.by_request
        routes[rpc.id] = writer
        try:
            if self.stateless:
                await self._answer_unless_disconnected(rpc, writer, receive)
            else:
                answer = await self.session.answer(rpc)
                await writer.finish([answer] if answer is not None else [])
        finally:
            routes.pop(rpc.id, None)

    async def _answer_unless_disconnected(self, rpc: Request, writer: ResponseWriter, receive: Receive) -> None:
        # Each stateless POST has a session of its own, so cancelling all of it cancels just this request.
        disconnected = False

        async def watch() -> None:
            nonlocal disconnected
            while (await receive())["type"] != "http.disconnect":
                pass
            disconnected = True
            self.session.cancel_all()

        answer: Answer | None = None
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # not asyncio (e.g. trio under hypercorn): a task group
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(watch)
                answer = await self.session.answer(rpc)
                task_group.cancel_scope.cancel()
        else:  # asyncio (uvicorn): a bare task, far cheaper than a task group on every call
            watcher = asyncio.get_running_loop().create_task(watch())
            try:
                answer = await self.session.answer(rpc)
            finally:
                watcher.cancel()
        if disconnected:
            writer.abandon()
        else:
            await writer.finish([answer] if answer is not None else [])

    async def _answer_batch(self) -> list[Answer]:
        routes = self.transport.by_request
        answers: dict[Any, Answer] = {}

        async def run(rpc: Request) -> None:
            try:
                answer = await self.session.answer(rpc)
                if answer is not None:
                    answers[rpc.id] = answer
            finally:
                routes.pop(rpc.id, None)

        async with anyio.create_task_group() as task_group:
            for rpc in self.requests:
                routes[rpc.id] = DROP
                task_group.start_soon(run, rpc)
        return [answers[r.id] for r in self.requests if r.id in answers]


def _always_ok(code: int | None) -> int:
    return 200  # handshake sessions answer errors in the body, with HTTP 200
