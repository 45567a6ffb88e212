"""The Streamable HTTP transport, server side: POST, GET and DELETE on one endpoint, both wire eras.

Handshake versions: `initialize` opens a session (`Mcp-Session-Id`, cryptographically random),
later POSTs carry it, GET opens the server-to-client stream (or resumes a POST stream with
`Last-Event-ID`), DELETE ends the session. 2026-07-28: every POST stands alone, described by its
`_meta` and headers (`http_stateless`), with a session engine of its own so that two clients'
equal JSON-RPC ids never meet.

Behind bearer auth (`auth.resource_server`) a session belongs to the principal that opened it
(`principal_of`): a request of any other principal for it is answered 404, as for an unknown id.
A session that expires is ended like a deleted one: its requests are cancelled, its GET stream is
closed and it gets no more broadcasts.
"""

from __future__ import annotations

import asyncio
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

from . import jsonrpc, logs
from .backends import SessionRecords
from .errors import INTERNAL_ERROR, INVALID_REQUEST, McpError
from .headers import accepts
from .http_resume import (
    CLOSE_STREAM,
    DROP,
    EventLog,
    FrameSink,
    Handoff,
    ReplayLimits,
    ReplayStore,
    ResponseWriter,
    error_response,
    no_cache,
    primes_streams,
    sse_event,
)
from .http_stateless import (
    VERSION_HEADER,
    Refusal,
    ToolHeaders,
    check_headers,
    deliver_notifications,
    stateless_status,
)
from .jsonrpc import InvalidMessage, Request
from .notifications import ServerHost
from .peer import stateless_meta
from .server import ServerRuntime
from .session import Answer, Session
from .stubs import ServerStub
from .transport import Features, TransportBase

log = logs.logger("http")

SESSION_HEADER = "mcp-session-id"
SSE = "text/event-stream"
LISTEN = "subscriptions/listen"  # a builtin (server.BUILTINS): its stream stays open until the client leaves
MAX_EVENT_ID_DIGITS = 19  # Last-Event-ID: our event ids are decimal counters


def principal_of(scope: Scope) -> str | None:
    """Who the request's bearer token speaks for (`AccessToken.principal`: issuer, subject, client
    id), which the auth middleware (`auth.resource_server`) puts in `scope["auth"]`; None without
    auth. Sessions are bound to it when they open, and refuse every other principal."""
    principal = getattr(scope.get("auth"), "principal", None)
    return principal if isinstance(principal, str) else None


class HttpTransport(TransportBase):
    """The `send` side of a session whose messages arrive as HTTP requests: a message related to a
    request goes to that request's response stream, anything else to the session's GET stream."""

    features = Features(closes_streams=True)

    def __init__(self, standalone_limit: int = 8 * 1024 * 1024) -> None:
        self.by_request: dict[Any, FrameSink] = {}
        self.standalone: MemoryObjectSendStream[bytes] | None = None
        # Bytes waiting for the GET stream's client; past the limit it is not reading: the stream
        # is closed (it may reconnect) rather than buffering without end.
        self.standalone_bytes = 0
        self.standalone_limit = standalone_limit

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
        stream: FrameSink | MemoryObjectSendStream[bytes] | None = (
            self.by_request.get(related) if related is not None else None
        )
        if stream is None:
            stream = self.standalone
            if stream is None:
                log.debug("no open stream for a server message; dropped")
                return
            if self.standalone_bytes and self.standalone_bytes + len(frame) > self.standalone_limit:
                log.warning("GET stream closed: its client left %d bytes unread", self.standalone_bytes)
                stream.close()
                self.standalone = None
                return
            self.standalone_bytes += len(frame)
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
    principal: str | None = None  # who opened it (`principal_of`); no one else may use it


@dataclass
class StreamableOptions:
    max_sessions: int
    session_idle_seconds: float
    json_only: bool  # never upgrade a response to SSE
    resumable: bool  # number SSE events, prime each POST stream (where the version has it), replay on Last-Event-ID
    sse_retry_ms: int
    replay: ReplayLimits  # bounds of the SSE replay log (events, bytes, age)
    max_listen_streams: int = 1000  # open subscriptions/listen streams at once; one more is answered 503
    get_stream_queue_bytes: int = 8 * 1024 * 1024  # unread on a session's GET stream; past it the stream is closed


class StreamableHttp:
    """The sessions of one server object and the POST / GET / DELETE that act on them."""

    def __init__(self, server: ServerStub, host: ServerHost, options: StreamableOptions) -> None:
        self.server = server
        self.host = host
        self.options = options
        self.sessions: dict[str, HttpSession] = {}
        self._stateless_runtime = ServerRuntime(server, host=host)
        self.replay = ReplayStore(options.replay)  # every session's replay log, bounded together
        self._tool_headers = ToolHeaders(self._stateless_runtime)
        self._next_expiry_sweep = 0.0
        self._listen_streams = 0
        # Several workers: where the sessions of every worker are recorded (set by the app's lifespan).
        self.records: SessionRecords | None = None
        self._pending_records: set[asyncio.Task[None]] = set()
        self._recorded: dict[str, float] = {}  # session id -> when its record was last written
        self.handoff: Handoff | None = None  # several workers: replay logs handed over on drain
        self.draining = False

    # -- POST --------------------------------------------------------------------------------

    async def post(self, headers: dict[str, str], body: bytes, principal: str | None = None) -> Any:
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
            return await self._initialize(headers, messages, batch, principal)
        if session_id:
            return await self._post_in_session(headers, session_id, messages, batch, principal)
        return await self._post_stateless(headers, messages, batch, principal)

    def _session(self, session_id: str | None, principal: str | None) -> HttpSession | None:
        """The open session of that id, if it belongs to `principal` (else it is as good as unknown)."""
        http_session = self.sessions.get(session_id or "")
        if http_session is None or http_session.principal != principal:
            return None
        return http_session

    async def _post_in_session(
        self,
        headers: dict[str, str],
        session_id: str,
        messages: list[jsonrpc.Message],
        batch: bool,
        principal: str | None = None,
    ) -> Any:
        http_session = self._session(session_id, principal)
        if http_session is None:
            return error_response(None, INVALID_REQUEST, await self._not_found(session_id), 404)
        http_session.last_seen = time.monotonic()
        if self.records is not None and http_session.last_seen - self._recorded.get(session_id, 0.0) > 60:
            self._record(session_id)  # renewed while used: it expires with the session's idle timeout
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
            headers,
            http_session.session,
            messages,
            stateless=False,
            batch=batch,
            events=http_session.events,
            priming=view is not None and primes_streams(view.version),
        )

    async def _post_stateless(
        self, headers: dict[str, str], messages: list[jsonrpc.Message], batch: bool, principal: str | None = None
    ) -> Any:
        if batch:
            return error_response(None, INVALID_REQUEST, "Invalid Request: batches need a session", 400)
        rpc = next((m for m in messages if isinstance(m, Request)), None)
        if rpc is None:  # notifications (a response without a session has nothing to attach to)
            try:
                await deliver_notifications(self._stateless_runtime, headers, messages, principal)
            except Refusal as refusal:
                return error_response(None, refusal.code, refusal.message, refusal.status)
            return Response(status_code=202)
        try:
            check_headers(headers, rpc)
            if rpc.method == "tools/call":
                await self._tool_headers.check(headers, rpc)
        except Refusal as refusal:
            return error_response(rpc.id, refusal.code, refusal.message, refusal.status)
        session = Session(HttpTransport(), self._stateless_runtime)
        session.principal = principal
        if rpc.method != LISTEN:
            return await self._dispatch(headers, session, messages, stateless=True, batch=False)
        if self._listen_streams >= self.options.max_listen_streams:
            message = f"Service Unavailable: {self.options.max_listen_streams} subscriptions/listen streams are open"
            return error_response(rpc.id, INTERNAL_ERROR, message, 503)
        self._listen_streams += 1
        try:
            response = await self._dispatch(headers, session, messages, stateless=True, batch=False)
        except BaseException:
            self._listen_streams -= 1
            raise
        return _Finally(response, self._listen_ended)

    def _listen_ended(self) -> None:
        self._listen_streams -= 1

    async def _initialize(
        self, headers: dict[str, str], messages: list[jsonrpc.Message], batch: bool, principal: str | None = None
    ) -> Any:
        if len(self.sessions) >= self.options.max_sessions:
            return error_response(None, INTERNAL_ERROR, "Service Unavailable: too many sessions", 503)
        transport = HttpTransport(self.options.get_stream_queue_bytes)
        runtime = ServerRuntime(self.server, host=self.host)
        session = Session(transport, runtime)
        session.principal = principal
        events = self.replay.new_log() if self.options.resumable else None
        http_session = HttpSession(secrets.token_urlsafe(24), runtime, session, transport, events, principal=principal)

        def session_header() -> dict[str, str]:
            # Evaluated when the response starts, i.e. after initialize has been answered.
            if runtime.view is None:
                return {}
            self.sessions[http_session.id] = http_session
            self._record(http_session.id)
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
        priming: bool = False,
    ) -> Any:
        for message in messages:
            if not isinstance(message, Request):
                await session.accept(message)
        requests = [m for m in messages if isinstance(m, Request)]
        if not requests:
            return Response(status_code=202)
        sse_ok = not self.options.json_only and accepts(headers.get("accept"), SSE)
        return RequestsResponse(
            session,
            requests,
            sse_ok=sse_ok,
            stateless=stateless,
            batch=batch,
            headers=extra,
            events=events,
            retry_ms=self.options.sse_retry_ms,
            priming=priming,
        )

    # -- GET and DELETE ----------------------------------------------------------------------

    def get(self, headers: dict[str, str], principal: str | None = None) -> Response:
        accept = headers.get("accept", "")
        if not accept.strip() or not accepts(accept, SSE):
            return Response(status_code=406, content="GET needs Accept: text/event-stream")
        self._expire_idle()
        session_id = headers.get(SESSION_HEADER)
        http_session = self._session(session_id, principal)
        if http_session is None:
            return Response(status_code=405 if not session_id else 404, headers={"Allow": "POST, DELETE"})
        last_event_id = headers.get("last-event-id")
        if last_event_id is not None:
            wanted = last_event_id.strip()
            # ASCII digits only (str.isdigit admits superscripts and other scripts' digits), short enough for int().
            if not (wanted.isascii() and wanted.isdigit() and len(wanted) <= MAX_EVENT_ID_DIGITS):
                return error_response(None, INVALID_REQUEST, "Bad Request: Last-Event-ID is not an event id", 400)
            if http_session.events is not None:
                replay = http_session.events.replay(wanted)  # None: not an id of this session
                if replay is not None:
                    return replay
        transport = http_session.transport
        if transport.standalone is not None:
            return Response(status_code=409, content="a GET stream is already open for this session")
        http_session.last_seen = time.monotonic()
        send_stream, receive_stream = anyio.create_memory_object_stream[bytes](math.inf)  # bounded in bytes
        transport.standalone = send_stream
        transport.standalone_bytes = 0
        idle = self.options.session_idle_seconds

        async def events() -> AsyncIterator[bytes]:
            try:
                yield b": stream open\n\n"
                while True:
                    # The stream lives as long as its session: it ends when the session expires.
                    remaining = http_session.last_seen + idle - time.monotonic()
                    if remaining <= 0:
                        self._end(http_session)
                        return
                    frame = None
                    with anyio.move_on_after(remaining):
                        frame = await receive_stream.receive()
                    if frame is not None:
                        if transport.standalone is send_stream:
                            transport.standalone_bytes -= len(frame)
                        yield sse_event(frame)
            except anyio.EndOfStream:
                pass  # the session ended (DELETE, expiry, shutdown)
            finally:
                if transport.standalone is send_stream:
                    transport.standalone = None

        return StreamingResponse(events(), media_type=SSE, headers=no_cache())

    def delete(self, headers: dict[str, str], principal: str | None = None) -> Response:
        session_id = headers.get(SESSION_HEADER)
        http_session = self._session(session_id, principal)
        if http_session is None:
            return Response(status_code=404 if session_id else 400)
        self._end(http_session)
        return Response(status_code=200)

    def close_all(self) -> None:
        for http_session in list(self.sessions.values()):
            self._end(http_session, shutdown=True)

    def _end(self, http_session: HttpSession, *, shutdown: bool = False) -> None:
        """End a session (DELETE, expiry, shutdown): forget it, cancel its requests, close its GET
        stream, and take it off the server's broadcast list."""
        if self.sessions.get(http_session.id) is http_session:
            del self.sessions[http_session.id]
        http_session.session.cancel_all()
        transport = http_session.transport
        if transport.standalone is not None:
            transport.standalone.close()
            transport.standalone = None
        self.host.connections.discard(http_session.runtime)
        if http_session.events is not None:
            if self.handoff is not None and self.draining and shutdown:  # the final state of its streams
                self.handoff.hand_over(http_session.id, http_session.principal, http_session.events, final=True)
            http_session.events.close()  # its replay log is released now
        self._record(http_session.id, drop=True)

    # -- several workers (backends.SessionRecords) ---------------------------------------------

    def _record(self, session_id: str, *, drop: bool = False) -> None:
        """Record (or forget) a session this worker holds, in the background: not on the answer's path."""
        records = self.records
        if records is None:
            return
        if drop:
            self._recorded.pop(session_id, None)
        else:
            self._recorded[session_id] = time.monotonic()

        async def write() -> None:
            try:
                if drop:
                    await records.drop(session_id)
                else:
                    await records.put(session_id, self.options.session_idle_seconds)
            except McpError as exc:
                log.warning("session record not written: %s", exc.message)

        try:
            task = asyncio.get_running_loop().create_task(write())
        except RuntimeError:  # no asyncio loop (trio): session records are an asyncio deployment's
            return
        self._pending_records.add(task)
        task.add_done_callback(self._pending_records.discard)

    async def flush(self, timeout_s: float = 5.0) -> None:
        """At shutdown: wait (at most `timeout_s`, even when cancelled) for the session records and
        replay-log handovers still being written."""
        with anyio.CancelScope(shield=True), anyio.move_on_after(timeout_s):
            while self._pending_records:
                await asyncio.wait(set(self._pending_records))
            if self.handoff is not None:
                await self.handoff.flush(timeout_s)

    async def _not_found(self, session_id: str | None) -> str:
        """Why a session id is refused: unknown here, and (several workers) held by another worker."""
        if await self._held_elsewhere(session_id):
            return (
                "Not Found: this Mcp-Session-Id is held by another worker of this server; route a"
                " session's requests to one worker (sticky sessions), or initialize a new session"
            )
        return "Not Found: unknown or expired Mcp-Session-Id"

    async def _held_elsewhere(self, session_id: str | None) -> bool:
        if self.records is None or not session_id:
            return False
        try:
            return await self.records.holder(session_id) is not None
        except McpError:
            return False

    async def get_or_refuse(self, headers: dict[str, str], principal: str | None = None) -> Response:
        """`get`, except that a session held by another worker is refused 404 saying so: a GET
        resuming a stream (`Last-Event-ID`) is answered only by the worker holding its session,
        whose replay log it is."""
        response = self.get(headers, principal)
        session_id = headers.get(SESSION_HEADER)
        last_event_id = headers.get("last-event-id")
        if response.status_code == 404 and session_id and last_event_id is not None and self.handoff is not None:
            resumed = await self.handoff.resume(session_id, principal, last_event_id)  # its worker drained
            if resumed is not None:
                return resumed
        if response.status_code == 404 and session_id and await self._held_elsewhere(session_id):
            message = await self._not_found(session_id)
            if "last-event-id" in headers:
                message += "; a stream is resumed (Last-Event-ID) only on the worker holding its session"
            return error_response(None, INVALID_REQUEST, message, 404)
        return response

    def close_streams(self) -> None:
        """Close every open GET stream and `subscriptions/listen` stream (draining before shutdown);
        requests in flight go on. Several workers: the sessions' replay logs are handed over."""
        self.draining = True
        for http_session in list(self.sessions.values()):
            if self.handoff is not None and http_session.events is not None:
                self.handoff.hand_over(http_session.id, http_session.principal, http_session.events, final=False)
            if http_session.transport.standalone is not None:
                http_session.transport.standalone.close()
                http_session.transport.standalone = None
        for listener in list(self.host.listeners):
            listener.session.cancel_all()

    def _expire_idle(self) -> None:
        now = time.monotonic()
        if now < self._next_expiry_sweep:
            return  # one sweep a second at most: it walks every session
        self._next_expiry_sweep = now + min(1.0, self.options.session_idle_seconds / 10)
        cutoff = now - self.options.session_idle_seconds
        for http_session in list(self.sessions.values()):
            if http_session.last_seen < cutoff:
                self._end(http_session)


class _Finally:
    """An ASGI response that calls `done` once it has been sent (or has failed)."""

    def __init__(self, response: Any, done: Callable[[], None]) -> None:
        self.response = response
        self.done = done

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.response(scope, receive, send)
        finally:
            self.done()


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
        priming: bool = False,
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
        self.priming = priming

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        status: Callable[[int | None], int] = stateless_status if self.stateless else _always_ok
        writer = ResponseWriter(
            send,
            sse_ok=self.sse_ok and not self.batch,
            status=status,
            headers=self.headers,
            events=self.events,
            retry_ms=self.retry_ms,
            priming=self.priming,
        )
        if self.batch:
            await writer.finish(await self._answer_batch(), batch=True)
            return
        rpc = self.requests[0]
        routes = self.transport.by_request
        # A duplicate of an id still in flight is refused by the session; the stream of the request
        # that owns the id keeps its route (its progress and answer still go there).
        owns_route = rpc.id not in routes
        if owns_route:
            routes[rpc.id] = writer
        try:
            if self.stateless:
                await self._answer_unless_disconnected(rpc, writer, receive)
            else:
                answer = await self.session.answer(rpc)
                await writer.finish([answer] if answer is not None else [])
        finally:
            if owns_route:
                routes.pop(rpc.id, None)

    async def _answer_unless_disconnected(self, rpc: Request, writer: ResponseWriter, receive: Receive) -> None:
        # Each stateless POST has a session of its own, so cancelling all of it cancels just this request.
        disconnected = False

        async def watch() -> None:
            nonlocal disconnected
            while (await receive())["type"] != "http.disconnect":
                pass
            disconnected = True
            writer.abandon()  # nothing more is written, even what the handler sends while it unwinds
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
        if not disconnected:
            await writer.finish([answer] if answer is not None else [])

    async def _answer_batch(self) -> list[Answer]:
        routes = self.transport.by_request
        answers: dict[Any, Answer] = {}

        async def run(rpc: Request, owns_route: bool) -> None:
            try:
                answer = await self.session.answer(rpc)
                if answer is not None:
                    answers[rpc.id] = answer
            finally:
                if owns_route:
                    routes.pop(rpc.id, None)

        async with anyio.create_task_group() as task_group:
            for rpc in self.requests:
                owns_route = rpc.id not in routes  # as for a single request: never take over an id in flight
                if owns_route:
                    routes[rpc.id] = DROP
                task_group.start_soon(run, rpc, owns_route)
        return [answers[r.id] for r in self.requests if r.id in answers]


def _always_ok(code: int | None) -> int:
    return 200  # handshake sessions answer errors in the body, with HTTP 200
