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

Several workers (a shared backend, `records`): a session is served by whichever worker a request
reaches (`http_sessions`: rebuilt from its record on first sight, refreshed from it on every
request, written back when a request changed it); a client's response to a request another worker
sent is forwarded to that worker; DELETE on any worker ends the session on all of them.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import random
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from starlette.responses import Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from mcp_bindings.runtime.http.resume import (
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
    worker_of,
)
from mcp_bindings.runtime.http.stateless import (
    VERSION_HEADER,
    Refusal,
    ToolHeaders,
    check_headers,
    deliver_notifications,
    stateless_status,
)
from mcp_bindings.runtime.protocol.headers import accepts
from mcp_bindings.runtime.rpc import jsonrpc, logs
from mcp_bindings.runtime.rpc.calls import CANCELLED
from mcp_bindings.runtime.rpc.eager import when_suspended
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, INVALID_REQUEST, McpError
from mcp_bindings.runtime.rpc.jsonrpc import InvalidMessage, Request
from mcp_bindings.runtime.rpc.session import Answer, Session
from mcp_bindings.runtime.rpc.transport import Features, TransportBase
from mcp_bindings.runtime.scaleout import relay as http_relay
from mcp_bindings.runtime.scaleout import sessions as http_sessions
from mcp_bindings.runtime.scaleout.backends import StateBackend
from mcp_bindings.runtime.scaleout.sessions import (
    RESPONSE,
    SESSION_CANCEL,
    SESSION_CHANGED,
    SESSION_ENDED,
    STREAM_MESSAGE,
    Snapshot,
    WorkerIds,
    addressee,
    snapshot,
)
from mcp_bindings.runtime.server.notifications import ServerHost
from mcp_bindings.runtime.server.peer import stateless_meta
from mcp_bindings.runtime.server.runtime import ServerRuntime
from mcp_bindings.runtime.server.stubs import ServerStub

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
        # Several workers: where a message for the GET stream goes when this worker holds none.
        self.elsewhere: Callable[[bytes], Awaitable[None]] | None = None

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
                if self.elsewhere is not None and http_sessions.addressed(frame):
                    await self.elsewhere(frame)  # several workers: to the GET stream another one holds
                    return
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
    # Several workers: the initialize params it was opened with, and its state as last recorded.
    init_params: Any = None
    written: Snapshot | None = None


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
        # Every session's replay log, bounded together; its event ids start at a random point, so that
        # where several workers serve one session their events' ids do not meet.
        self.replay = ReplayStore(options.replay, first_id=random.getrandbits(31) << 32 | 1)
        self._tool_headers = ToolHeaders(self._stateless_runtime)
        self._next_expiry_sweep = 0.0
        self._listen_streams = 0
        # Several workers: where the sessions of every worker are recorded (set by the app's lifespan).
        self.records: StateBackend | None = None
        self.handoff: Handoff | None = None  # several workers: replay logs handed over on drain
        http_relay.register(host, self._log_of)  # several workers: streams resumed through another
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
        if self.records is not None:
            fresh = await self._fresh(session_id, principal, http_session)
            if isinstance(fresh, Response):
                return fresh
            http_session = fresh
        if http_session is None:
            return error_response(None, INVALID_REQUEST, NOT_FOUND, 404)
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
        if self.records is not None:
            kept = await self._forward_responses(session_id, messages)
            if isinstance(kept, Response):
                return kept
            messages = kept
        response = await self._dispatch(
            headers,
            http_session.session,
            messages,
            stateless=False,
            batch=batch,
            events=http_session.events,
            priming=view is not None and primes_streams(view.version),
        )
        return response if self.records is None else _BeforeSend(response, self._write_back(http_session))

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
        meta = stateless_meta(rpc)
        try:
            check_headers(headers, rpc, meta)
            if rpc.method == "tools/call":
                await self._tool_headers.check(headers, rpc, meta)
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

    def _new_session(self, session_id: str, principal: str | None) -> tuple[HttpTransport, ServerRuntime, Session]:
        """The transport, runtime and session engine of handshake session `session_id` bound to
        `principal` (what the tasks it creates belong to without one is named after its id, so they
        follow it to any worker)."""
        transport = HttpTransport(self.options.get_stream_queue_bytes)
        runtime = ServerRuntime(self.server, host=self.host)
        session = Session(transport, runtime)
        session.principal = principal
        session.connection = hashlib.sha256(session_id.encode()).hexdigest()[:32]
        return transport, runtime, session

    async def _initialize(
        self, headers: dict[str, str], messages: list[jsonrpc.Message], batch: bool, principal: str | None = None
    ) -> Any:
        if not self._room():
            return error_response(None, INTERNAL_ERROR, "Service Unavailable: too many sessions", 503)
        session_id = secrets.token_urlsafe(24)
        transport, runtime, session = self._new_session(session_id, principal)
        events = self.replay.new_log() if self.options.resumable else None
        requests = [m for m in messages if isinstance(m, Request)]
        http_session = HttpSession(
            session_id,
            runtime,
            session,
            transport,
            events,
            principal=principal,
            init_params=requests[0].params if requests else None,
        )
        if self.records is not None:
            session.calls.ids = WorkerIds(self.records.worker_id)
            transport.elsewhere = self._elsewhere(http_session.id)

        def session_header() -> dict[str, str]:
            # Evaluated when the response starts, i.e. after initialize has been answered.
            if runtime.view is None:
                return {}
            self.sessions[http_session.id] = http_session
            return {SESSION_HEADER: http_session.id}

        response = await self._dispatch(
            headers, session, requests, stateless=False, batch=batch, extra=session_header, events=events
        )
        # Several workers: the session's record is written before its id reaches the client.
        return response if self.records is None else _BeforeSend(response, self._write_back(http_session))

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
            replayed = self._replayed(http_session, last_event_id.strip())
            if replayed is not None:
                return replayed
        transport = http_session.transport
        if transport.standalone is not None:
            return Response(status_code=409, content="a GET stream is already open for this session")
        http_session.last_seen = time.monotonic()
        send_stream, receive_stream = anyio.create_memory_object_stream[bytes](math.inf)  # bounded in bytes
        transport.standalone = send_stream
        transport.standalone_bytes = 0
        events = self._standalone_events(http_session, send_stream, receive_stream)
        return StreamingResponse(events, media_type=SSE, headers=no_cache())

    @staticmethod
    def _replayed(http_session: HttpSession, wanted: str) -> Response | None:
        """A GET resuming a stream (`Last-Event-ID`): 400 for what is not an event id, the replay
        where this session's log has the event, else None (a new GET stream)."""
        if not _event_id(wanted):
            return error_response(None, INVALID_REQUEST, "Bad Request: Last-Event-ID is not an event id", 400)
        if http_session.events is not None:
            return http_session.events.replay(wanted)  # None: not an id of this session
        return None

    async def _standalone_events(
        self,
        http_session: HttpSession,
        send_stream: MemoryObjectSendStream[bytes],
        receive_stream: MemoryObjectReceiveStream[bytes],
    ) -> AsyncIterator[bytes]:
        """The session's GET stream: what the server sends outside any request, as SSE events, as
        long as the session lives (it ends when the session expires, is deleted or shuts down)."""
        transport = http_session.transport
        idle = self.options.session_idle_seconds
        # Several workers: the claim of the session's one GET stream (`get_or_refuse`) is renewed
        # while the stream is open; if another worker holds it by then, this stream ends.
        renew_at = None if self.records is None else time.monotonic() + idle / 2
        try:
            yield b": stream open\n\n"
            while True:
                now = time.monotonic()
                remaining = http_session.last_seen + idle - now
                if remaining <= 0:
                    if await self._still_recorded(http_session.id):  # used through other workers
                        http_session.last_seen = time.monotonic()
                        continue
                    self._end(http_session)
                    return
                if renew_at is not None and now >= renew_at:
                    if await self._claim_stream(http_session.id) is not None:
                        return
                    renew_at = now + idle / 2
                frame = None
                with anyio.move_on_after(remaining if renew_at is None else min(remaining, renew_at - now)):
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
            if renew_at is not None:
                await self._release_stream(http_session.id)

    def delete(self, headers: dict[str, str], principal: str | None = None) -> Response:
        session_id = headers.get(SESSION_HEADER)
        http_session = self._session(session_id, principal)
        if http_session is None:
            return Response(status_code=404 if session_id else 400)
        self._end(http_session)
        return Response(status_code=200)

    async def delete_everywhere(self, headers: dict[str, str], principal: str | None = None) -> Response:
        """`delete`; several workers: the session's record is dropped and every worker ends its copy."""
        records, session_id = self.records, headers.get(SESSION_HEADER)
        if records is None or not session_id:
            return self.delete(headers, principal)
        try:
            record = await records.record(session_id)
        except McpError as exc:
            return error_response(None, INTERNAL_ERROR, f"{exc.message} (the session was not deleted)", 503)
        local = self._session(session_id, principal)
        if record is None or record.get("principal") != principal:
            if local is not None:
                self._end(local)  # expired in the shared state: gone
            return Response(status_code=404)
        if local is not None:
            self._end(local)
        try:
            await records.drop(session_id)
            await records.publish(SESSION_ENDED, {"s": session_id})
        except McpError as exc:
            return error_response(None, INTERNAL_ERROR, f"{exc.message} (the session was not deleted)", 503)
        return Response(status_code=200)

    def close_all(self) -> None:
        for http_session in list(self.sessions.values()):
            self._end(http_session, shutdown=True)

    def _room(self) -> bool:
        """Whether one more session fits in `max_sessions`. Several workers: each session's state is
        in its record, so at the limit the least recently used session that is idle here (no
        request served or waiting, no stream open) is forgotten by this worker, not ended: any
        worker, this one too, serves it again from its record on its next request."""
        if len(self.sessions) < self.options.max_sessions:
            return True
        if self.records is None:
            return False
        idle = [
            s
            for s in self.sessions.values()
            if s.transport.standalone is None and not s.transport.by_request and not s.session.busy
        ]
        if not idle:
            return False
        oldest = min(idle, key=lambda s: s.last_seen)
        log.debug("session %s... forgotten here to make room (its record stays)", oldest.id[:8])
        self._end(oldest)
        return True

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

    # -- several workers (backends.SessionRecords, http_sessions) --------------------------------

    async def _fresh(
        self, session_id: str, principal: str | None, local: HttpSession | None
    ) -> HttpSession | Response | None:
        """This worker's copy of a session, brought up to its record (and the record's lifetime
        renewed): adopted on first sight, ended when the record is gone (deleted, or expired).
        None: no such session for `principal`. Redis unreachable: the copy this worker has serves
        (a 503 naming Redis where it has none)."""
        records = self.records
        assert records is not None
        try:
            record = await records.record(session_id, self.options.session_idle_seconds)
        except McpError as exc:
            if local is not None:
                return local
            return error_response(None, INTERNAL_ERROR, exc.message, 503)
        if record is None:
            if local is not None:
                self._end(local)
            return None
        if record.get("principal") != principal:
            return None
        if local is None:
            return await self._adopt(session_id, record, principal)
        http_sessions.apply(local.runtime, record)
        local.written = snapshot(local.runtime)
        return local

    async def _adopt(
        self, session_id: str, record: dict[str, Any], principal: str | None
    ) -> HttpSession | Response | None:
        """A copy of a session another worker opened, rebuilt from its record."""
        records = self.records
        assert records is not None
        if not self._room():
            return error_response(None, INTERNAL_ERROR, "Service Unavailable: too many sessions", 503)
        transport, runtime, session = self._new_session(session_id, principal)
        session.calls.ids = WorkerIds(records.worker_id)
        transport.elsewhere = self._elsewhere(session_id)
        if not await http_sessions.rebuild(runtime, session, record):
            self.host.connections.discard(runtime)
            log.warning("session %s... not adopted: its record cannot be served by this worker", session_id[:8])
            return None
        existing = self.sessions.get(session_id)
        if existing is not None:  # adopted meanwhile by another request of this session
            self.host.connections.discard(runtime)
            return existing
        events = self.replay.new_log() if self.options.resumable else None
        http_session = HttpSession(
            session_id, runtime, session, transport, events, principal=principal, init_params=record["init"]
        )
        http_session.written = snapshot(runtime)
        self.sessions[session_id] = http_session
        return http_session

    def _write_back(self, http_session: HttpSession) -> Callable[[], Awaitable[None]]:
        """Before each message of a response leaves: if serving the request changed the session
        (logging level, subscriptions, initialized, or it was just opened), write its record, and
        tell the other workers holding a copy (their GET streams filter by it)."""
        records = self.records
        assert records is not None

        async def write_back() -> None:
            state = snapshot(http_session.runtime)
            if state is None or state == http_session.written or self.sessions.get(http_session.id) is not http_session:
                return
            opened = http_session.written is None
            http_session.written = state
            record = http_sessions.record_of(http_session.init_params, http_session.principal, state)
            try:
                await records.put(http_session.id, self.options.session_idle_seconds, record)
                if not opened:
                    await records.publish(SESSION_CHANGED, {"s": http_session.id})
            except McpError as exc:
                log.warning("session record not written (other workers serve it as before): %s", exc.message)

        return write_back

    def _elsewhere(self, session_id: str) -> Callable[[bytes], Awaitable[None]]:
        """Send a message for the session's GET stream to the workers (the one holding it sends it)."""
        records = self.records
        assert records is not None

        async def elsewhere(frame: bytes) -> None:
            try:
                await records.publish(STREAM_MESSAGE, {"s": session_id, "f": frame.decode()})
            except McpError as exc:
                log.warning("a message for the GET stream of another worker was dropped: %s", exc.message)

        return elsewhere

    async def _forward_responses(
        self, session_id: str, messages: list[jsonrpc.Message]
    ) -> list[jsonrpc.Message] | Response:
        """Send the client's responses to requests another worker sent (their ids name it) to that
        worker; the rest is this worker's. A response whose worker is gone is refused (400) when the
        POST carries nothing else. A cancellation goes to every worker too (the request it cancels
        may run on any of them; where it does not, it is ignored, as the spec says)."""
        records = self.records
        assert records is not None
        kept: list[jsonrpc.Message] = []
        gone: list[Any] = []
        for message in messages:
            if isinstance(message, jsonrpc.Notification) and message.method == CANCELLED:
                try:
                    await records.publish(SESSION_CANCEL, {"s": session_id, "p": message.params})
                except McpError as exc:
                    log.warning("a cancellation was not sent to the other workers: %s", exc.message)
            worker = addressee(message.id, records.worker_id) if isinstance(message, jsonrpc.Response) else None
            if worker is None:
                kept.append(message)
                continue
            assert isinstance(message, jsonrpc.Response)
            data = {"s": session_id, "r": http_sessions.response_message(message)}
            try:
                if not await records.send_to(worker, RESPONSE, data):
                    gone.append(message.id)
            except McpError as exc:
                return error_response(
                    None, INTERNAL_ERROR, f"{exc.message} (response {message.id!r} not delivered)", 503
                )
        if gone:
            text = ", ".join(repr(i) for i in gone)
            log.warning("responses %s dropped: the worker that sent their requests is gone", text)
            if not kept:
                message = (
                    f"Invalid Request: no request of this session is waiting for response {text}: the server"
                    " worker that sent it has stopped (the request it was part of is abandoned)"
                )
                return error_response(None, INVALID_REQUEST, message, 400)
        return kept

    async def from_bus(self, method: str, data: Any) -> bool:
        """Handle what another worker sent about a session (True), or leave it (False)."""
        if method not in (RESPONSE, SESSION_CHANGED, SESSION_ENDED, STREAM_MESSAGE, SESSION_CANCEL):
            return False
        session_id = data.get("s") if isinstance(data, dict) else None
        local = self.sessions.get(session_id) if isinstance(session_id, str) else None
        if local is None or not isinstance(session_id, str):
            if method == RESPONSE:
                log.warning("a forwarded response for session %s... has no session here; dropped", str(session_id)[:8])
            return True
        if method == SESSION_CANCEL:
            params = data.get("p")  # pyright: ignore[reportUnknownMemberType, reportOptionalMemberAccess, reportUnknownVariableType]
            await local.session.accept(jsonrpc.Notification(CANCELLED, params, {}))
        elif method == STREAM_MESSAGE:
            frame = data.get("f")  # pyright: ignore[reportUnknownMemberType, reportOptionalMemberAccess, reportUnknownVariableType]
            if local.transport.standalone is not None and isinstance(frame, str):
                await local.transport.send(frame.encode())
        elif method == SESSION_ENDED:
            self._end(local)
        elif method == SESSION_CHANGED and self.records is not None:
            try:
                record = await self.records.record(session_id)
            except McpError:
                return True  # the session's next request here re-reads it
            if record is None:
                self._end(local)
            else:
                http_sessions.apply(local.runtime, record)
                local.written = snapshot(local.runtime)
        elif method == RESPONSE:
            try:
                message = jsonrpc.classify(data.get("r"))  # pyright: ignore[reportUnknownMemberType, reportOptionalMemberAccess]
            except InvalidMessage:
                return True
            if isinstance(message, jsonrpc.Response):
                await local.session.accept(message)
        return True

    async def _still_recorded(self, session_id: str) -> bool:
        """Whether a session's record lives (its requests go to other workers); True when Redis cannot say."""
        if self.records is None:
            return False
        try:
            return await self.records.record(session_id) is not None
        except McpError:
            return True

    def _log_of(self, session_id: str) -> tuple[str | None, EventLog] | None:
        """A session this worker holds: its principal and replay log (`http_relay`)."""
        local = self.sessions.get(session_id)
        if local is None or local.events is None:
            return None
        return local.principal, local.events

    async def _claim_stream(self, session_id: str) -> str | None:
        """Claim the session's GET stream (`backends.SessionRecords.claim_stream`): the worker
        holding it, or None. Redis unreachable: None (the bus is down too, so nothing is sent twice)."""
        assert self.records is not None
        try:
            return await self.records.claim_stream(session_id, self.options.session_idle_seconds)
        except McpError as exc:
            log.warning("GET stream of session %s... not claimed: %s", session_id[:8], exc.message)
            return None

    async def _release_stream(self, session_id: str) -> None:
        assert self.records is not None
        with anyio.CancelScope(shield=True), anyio.move_on_after(2.0):
            try:
                await self.records.release_stream(session_id)
            except McpError as exc:  # it lapses with the session's idle timeout
                log.warning("GET stream of session %s... not released: %s", session_id[:8], exc.message)

    async def flush(self, timeout_s: float = 5.0) -> None:
        """At shutdown: wait (at most `timeout_s`, even when cancelled) for the replay-log handovers
        still being written."""
        with anyio.CancelScope(shield=True), anyio.move_on_after(timeout_s):
            if self.handoff is not None:
                await self.handoff.flush(timeout_s)

    async def get_or_refuse(self, headers: dict[str, str], principal: str | None = None) -> Response:
        """`get`; several workers: the session is adopted from its record, a new GET stream is
        claimed for this worker (409 while another worker holds the session's stream: one message
        must not reach the client on two streams), and a GET resuming a stream (`Last-Event-ID`) is
        answered from this worker's log, else relayed from the worker running it (`http_relay`),
        else from the handover of a drained worker, else 404."""
        session_id = headers.get(SESSION_HEADER)
        if self.records is None or not session_id or not accepts(headers.get("accept", ""), SSE):
            return self.get(headers, principal)
        fresh = await self._fresh(session_id, principal, self._session(session_id, principal))
        if isinstance(fresh, Response):
            return fresh
        last_event_id = headers.get("last-event-id")
        if last_event_id is None or not _event_id(last_event_id):
            if fresh is None:
                return Response(status_code=404)
            if last_event_id is None and fresh.transport.standalone is None:
                holder = await self._claim_stream(session_id)
                if holder is not None:
                    return Response(
                        status_code=409, content=f"a GET stream is already open for this session (on worker {holder})"
                    )
            return self.get(headers, principal)
        if fresh is not None and fresh.events is not None:
            replay = fresh.events.replay(last_event_id.strip())
            if replay is not None:
                return replay
        holder = worker_of(last_event_id)
        if holder is not None and holder != self.records.worker_id:  # a stream another worker runs
            relayed = await http_relay.relay(self.host, holder, session_id, principal, last_event_id)
            if relayed is not None:
                return relayed
        if self.handoff is not None:
            resumed = await self.handoff.resume(session_id, principal, last_event_id)  # its worker drained
            if resumed is not None:
                return resumed
        message = (
            "Not Found: Last-Event-ID names no event of this session: none held by the worker that ran it"
            " (event ids name it), nor handed over by a worker that drained"
        )
        return error_response(None, INVALID_REQUEST, message, 404)

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
        shared = self.records is not None
        for http_session in list(self.sessions.values()):
            if http_session.last_seen < cutoff:
                if shared and http_session.transport.standalone is not None:
                    continue  # its GET stream checks the shared record (`get`)
                self._end(http_session)  # several workers: this copy only (the record expires by itself)


NOT_FOUND = "Not Found: unknown or expired Mcp-Session-Id"


def _event_id(value: str) -> bool:
    """A Last-Event-ID this app could have sent: ASCII digits only (str.isdigit admits superscripts
    and other scripts' digits), short enough for int()."""
    wanted = value.strip()
    return wanted.isascii() and wanted.isdigit() and len(wanted) <= MAX_EVENT_ID_DIGITS


class _BeforeSend:
    """An ASGI response that awaits `hook` before each message it sends."""

    def __init__(self, response: Any, hook: Callable[[], Awaitable[None]]) -> None:
        self.response = response
        self.hook = hook

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def sending(message: Any) -> None:
            await self.hook()
            await send(message)

        await self.response(scope, receive, sending)


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
        else:  # asyncio (uvicorn): a bare task, far cheaper than a task group on every call, and
            # started only if the request waits (the client cannot be seen to leave before that)
            watchers: list[asyncio.Task[None]] = []
            try:
                answer = await when_suspended(
                    self.session.answer(rpc), lambda: watchers.append(asyncio.get_running_loop().create_task(watch()))
                )
            finally:
                if watchers:
                    watchers[0].cancel()
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
