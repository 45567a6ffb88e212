"""The Streamable HTTP transport, server side: POST, GET and DELETE on one endpoint, both wire eras.

Handshake versions: `initialize` opens a session (`Mcp-Session-Id`, cryptographically random),
later POSTs carry it, GET opens the server-to-client stream (or resumes a POST stream with
`Last-Event-ID`), DELETE ends the session. 2026-07-28: every POST stands alone, described by its
`_meta` and headers (`http_stateless`), with a session engine of its own so that two clients'
equal JSON-RPC ids never meet.

Behind bearer auth (`auth.resource_server`) a session belongs to the principal that opened it
(`principal_of`): a request of any other principal for it is answered 404, as for an unknown id.

The sessions live in a `SessionDirectory` (`http.sessions`): `LocalSessions` in one process (idle
expiry, `max_sessions`); several workers (a shared backend attached, `scaleout.attach`): the
plug-in's `SharedSessions`, through which any worker serves any session.
"""

from __future__ import annotations

import asyncio
import functools
import math
import random
import secrets
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from starlette.responses import Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from mcp_bindings.runtime.http.fairness import PerClient, client_key
from mcp_bindings.runtime.http.resume import (
    DROP,
    EventLog,
    ReplayStore,
    ResponseWriter,
    error_response,
    event_id_of,
    no_cache,
    primes_streams,
    sse_event,
)
from mcp_bindings.runtime.http.sessions import (
    HttpOptions,
    HttpSession,
    HttpTransport,
    LocalSessions,
    SessionDirectory,
    SharedStreams,
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
from mcp_bindings.runtime.rpc.eager import when_suspended
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, INVALID_REQUEST
from mcp_bindings.runtime.rpc.jsonrpc import InvalidMessage, Request
from mcp_bindings.runtime.rpc.session import Answer, Session
from mcp_bindings.runtime.server.host import ServerHost
from mcp_bindings.runtime.server.peer import stateless_meta
from mcp_bindings.runtime.server.runtime import ServerRuntime
from mcp_bindings.runtime.server.stubs import ServerStub
from mcp_bindings.v2025_11_25 import names as v2025
from mcp_bindings.v2026_07_28 import names as v2026

__all__ = [
    "SESSION_HEADER",
    "SSE",
    "HttpSession",
    "HttpTransport",
    "RequestsResponse",
    "StreamableHttp",
    "principal_of",
]

log = logs.logger("http")

SESSION_HEADER = "mcp-session-id"
SSE = "text/event-stream"
LISTEN = v2026.SUBSCRIPTIONS_LISTEN  # a builtin (server.BUILTINS): its stream stays open until the client leaves


def principal_of(scope: Scope) -> str | None:
    """Who the request's bearer token speaks for (`AccessToken.principal`: issuer, subject, client
    id), which the auth middleware (`auth.resource_server`) puts in `scope["auth"]`; None without
    auth. Sessions are bound to it when they open, and refuse every other principal."""
    principal = getattr(scope.get("auth"), "principal", None)
    return principal if isinstance(principal, str) else None


class StreamableHttp:
    """The sessions of one server object (through its `SessionDirectory`) and the POST / GET /
    DELETE that act on them."""

    def __init__(self, server: ServerStub, host: ServerHost, options: HttpOptions) -> None:
        self.server = server
        self.host = host
        self.options = options
        self._stateless_runtime = ServerRuntime(server, host=host)
        # Every session's replay log, bounded together; its event ids start at a random point, so that
        # where several workers serve one session their events' ids do not meet.
        self.replay = ReplayStore(options.replay, first_id=random.getrandbits(31) << 32 | 1)
        self.directory = LocalSessions(server, host, options, self.replay)
        self._tool_headers = ToolHeaders(host)
        self._listen_streams = 0
        # Each client's share of the shared bounds (`http.fairness`): its principal, else its IP.
        self._listens = PerClient(
            "max_listen_streams_per_client",
            options.max_listen_streams_per_client,
            "subscriptions/listen streams open",
            "close one first",
        )
        self._sessions_per_client = PerClient(
            "max_sessions_per_client", options.max_sessions_per_client, "sessions open", "end one with DELETE first"
        )
        self._in_flight = PerClient(
            "max_requests_in_flight_per_client",
            options.max_requests_in_flight_per_client,
            "requests being answered",
            "wait for an answer first",
        )

    @property
    def directory(self) -> SessionDirectory:
        """Where the sessions live (`LocalSessions`; the scale-out plug-in sets a shared one)."""
        return self._directory

    @directory.setter
    def directory(self, directory: SessionDirectory) -> None:
        self._directory = directory
        # What crosses workers, where the directory has it (asked once, not per request).
        self._shared: SharedStreams | None = directory if isinstance(directory, SharedStreams) else None

    @property
    def sessions(self) -> dict[str, HttpSession]:
        """The open handshake sessions (of this process) by id."""
        return self.directory.sessions

    # -- POST --------------------------------------------------------------------------------

    async def post(
        self, headers: dict[str, str], body: bytes, principal: str | None = None, address: str | None = None
    ) -> Any:
        """Answer a POST, counted against its client's share of requests being answered."""
        client = client_key(principal, address)
        refusal = self._in_flight.refusal(None, client)  # before the body is read as JSON-RPC: id null
        if refusal is not None:
            return refusal
        self._in_flight.take(client)
        try:
            response = await self._post(headers, body, principal, address, client)
        except BaseException:
            self._in_flight.give_back(client)
            raise
        return _Finally(response, functools.partial(self._in_flight.give_back, client))

    async def _post(
        self, headers: dict[str, str], body: bytes, principal: str | None, address: str | None, client: str | None
    ) -> Any:
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
        self.directory.expire_idle()
        batch = isinstance(data, list)
        requests = [m for m in messages if isinstance(m, Request)]
        session_id = headers.get(SESSION_HEADER)
        # An initialize that carries stateless `_meta` is a stateless-era request (answered -32601/404).
        handshakes = [r for r in requests if r.method == v2025.INITIALIZE and stateless_meta(r) is None]
        if handshakes and batch:  # 2025-03-26: "the initialize request MUST NOT be part of a batch"
            message = "Invalid Request: initialize must not be part of a JSON-RPC batch"
            return error_response(handshakes[0].id, INVALID_REQUEST, message, 400)
        if handshakes and not session_id:
            return await self._initialize(headers, messages, batch, principal, client, address)
        if session_id:
            return await self._post_in_session(headers, messages, batch, principal, address)
        if batch:
            return error_response(None, INVALID_REQUEST, "Invalid Request: batches need a session", 400)
        return await self._post_stateless(headers, messages, principal, address, client)

    async def _post_in_session(
        self,
        headers: dict[str, str],
        messages: list[jsonrpc.Message],
        batch: bool,
        principal: str | None,
        address: str | None,
    ) -> Any:
        session_id = headers[SESSION_HEADER]
        http_session = await self.directory.find(session_id, principal)
        if isinstance(http_session, Response):
            return http_session
        if http_session is None:
            return error_response(None, INVALID_REQUEST, NOT_FOUND, 404)
        http_session.last_seen = time.monotonic()
        http_session.session.peer_address = address  # the client's, as of its latest request
        http_session.session.principal = principal  # the same key (`find`); its token's scopes and claims as of now
        header = headers.get(VERSION_HEADER)
        view = http_session.runtime.view
        if header is not None and view is not None and header != view.version:
            message = f"Bad Request: MCP-Protocol-Version {header!r} does not match the session's {view.version!r}"
            return error_response(None, INVALID_REQUEST, message, 400)
        if batch and not http_session.runtime.batches_allowed:
            return error_response(
                None, INVALID_REQUEST, "Invalid Request: batches are not part of the negotiated version", 400
            )
        shared = self._shared
        kept = messages if shared is None else await shared.route_responses(session_id, messages)
        if isinstance(kept, Response):
            return kept
        priming = view is not None and primes_streams(view.version)
        return await self._in_session(headers, http_session, kept, batch, priming=priming)

    async def _post_stateless(
        self,
        headers: dict[str, str],
        messages: list[jsonrpc.Message],
        principal: str | None = None,
        address: str | None = None,
        client: str | None = None,
    ) -> Any:
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
            if rpc.method == v2026.TOOLS_CALL:
                self._tool_headers.check(headers, rpc, meta)
        except Refusal as refusal:
            return error_response(rpc.id, refusal.code, refusal.message, refusal.status)
        session = Session(HttpTransport(), self._stateless_runtime)
        session.principal = principal
        session.peer_address = address
        if rpc.method != LISTEN:
            return await self._dispatch(headers, session, messages, stateless=True, batch=False)
        refusal = self._listen_refusal(rpc.id, client)
        if refusal is not None:
            return refusal
        self._listen_streams += 1
        self._listens.take(client)
        try:
            response = await self._dispatch(headers, session, messages, stateless=True, batch=False)
        except BaseException:
            self._listen_ended(client)
            raise
        return _Finally(response, functools.partial(self._listen_ended, client))

    def _listen_refusal(self, request_id: Any, client: str | None) -> Response | None:
        """A `subscriptions/listen` over a bound: the client's own (429, `LIMIT_REACHED`), else the
        app's (503); None when it may open."""
        refusal = self._listens.refusal(request_id, client)
        if refusal is not None:
            return refusal
        if self._listen_streams >= self.options.max_listen_streams:
            message = f"Service Unavailable: {self.options.max_listen_streams} subscriptions/listen streams are open"
            return error_response(request_id, INTERNAL_ERROR, message, 503)
        return None

    def _listen_ended(self, client: str | None) -> None:
        self._listen_streams -= 1
        self._listens.give_back(client)

    async def _initialize(
        self,
        headers: dict[str, str],
        messages: list[jsonrpc.Message],
        batch: bool,
        principal: str | None = None,
        client: str | None = None,
        address: str | None = None,
    ) -> Any:
        directory = self.directory
        requests = [m for m in messages if isinstance(m, Request)]
        shares = self._sessions_per_client
        refusal = shares.refusal(requests[0].id if requests else None, client)
        if refusal is not None:
            return refusal
        if not directory.room():
            return error_response(None, INTERNAL_ERROR, "Service Unavailable: too many sessions", 503)
        http_session = directory.open(secrets.token_urlsafe(24), principal, requests[0].params if requests else None)
        http_session.session.peer_address = address

        def session_header() -> dict[str, str]:
            # Evaluated when the response starts, i.e. after initialize has been answered.
            if http_session.runtime.view is None:
                return {}
            shares.take(client)
            http_session.on_end = functools.partial(shares.give_back, client)
            directory.add(http_session)
            return {SESSION_HEADER: http_session.id}

        return await self._in_session(headers, http_session, requests, batch, extra=session_header)

    async def _in_session(
        self,
        headers: dict[str, str],
        http_session: HttpSession,
        messages: Sequence[jsonrpc.Message],
        batch: bool,
        **options: Any,
    ) -> Any:
        """`_dispatch` in a handshake session (several workers: its response records what it changed)."""
        session, events = http_session.session, http_session.events
        response = await self._dispatch(
            headers, session, messages, stateless=False, batch=batch, events=events, **options
        )
        return response if self._shared is None else self._shared.sending(http_session, response)

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
        return RequestsResponse(
            session=session,
            requests=requests,
            stateless=stateless,
            batch=batch,
            sse_ok=not batch and not self.options.json_only and accepts(headers.get("accept"), SSE),
            status=stateless_status if stateless else _always_ok,
            headers=extra,
            events=events,
            retry_ms=self.options.sse_retry_ms,
            priming=priming and events is not None,
        )

    # -- GET and DELETE ----------------------------------------------------------------------

    async def get(self, headers: dict[str, str], principal: str | None = None) -> Response:
        """The session's GET stream, or the resumption of a stream (`Last-Event-ID`): from the log of
        the session's events, else where the directory finds them (several workers)."""
        accept = headers.get("accept", "")
        if not accept.strip() or not accepts(accept, SSE):
            return Response(status_code=406, content="GET needs Accept: text/event-stream")
        self.directory.expire_idle()
        session_id = headers.get(SESSION_HEADER)
        if not session_id:
            return Response(status_code=405, headers={"Allow": "POST, DELETE"})
        http_session = await self.directory.find(session_id, principal)
        if isinstance(http_session, Response):
            return http_session
        last_event_id = headers.get("last-event-id")
        resuming = last_event_id is not None and event_id_of(last_event_id) >= 0
        if last_event_id is not None and resuming:
            resumed = await self.directory.resume(http_session, session_id, principal, last_event_id.strip())
            if resumed is not None:
                return resumed
        if http_session is None:
            return Response(status_code=404, headers={"Allow": "POST, DELETE"})
        if last_event_id is not None and not resuming:
            return error_response(None, INVALID_REQUEST, "Bad Request: Last-Event-ID is not an event id", 400)
        transport = http_session.transport
        if transport.standalone is not None:
            return Response(status_code=409, content="a GET stream is already open for this session")
        if last_event_id is None and self._shared is not None:  # one GET stream across all the workers
            holder = await self._shared.claim_stream(session_id)
            if holder is not None:
                return Response(
                    status_code=409, content=f"a GET stream is already open for this session (on worker {holder})"
                )
        http_session.last_seen = time.monotonic()
        send_stream, receive_stream = anyio.create_memory_object_stream[bytes](math.inf)  # bounded in bytes
        transport.standalone = send_stream
        transport.standalone_bytes = 0
        events = self._standalone_events(http_session, send_stream, receive_stream)
        return StreamingResponse(events, media_type=SSE, headers=no_cache())

    async def _standalone_events(
        self,
        http_session: HttpSession,
        send_stream: MemoryObjectSendStream[bytes],
        receive_stream: MemoryObjectReceiveStream[bytes],
    ) -> AsyncIterator[bytes]:
        """The session's GET stream: what the server sends outside any request, as SSE events, as
        long as the session lives (it ends when the session expires, is deleted or shuts down). Its
        claim (several workers: `SharedStreams.claim_stream`) is renewed while it is open; if another
        worker holds it by then, this stream ends."""
        transport, directory, shared = http_session.transport, self.directory, self._shared
        idle = self.options.session_idle_seconds
        renew_at = time.monotonic() + idle / 2
        try:
            yield b": stream open\n\n"
            while True:
                now = time.monotonic()
                remaining = http_session.last_seen + idle - now
                if remaining <= 0:
                    if shared is not None and await shared.still_used(http_session.id):  # through other workers
                        http_session.last_seen = time.monotonic()
                        continue
                    directory.end(http_session)
                    return
                if now >= renew_at:
                    if shared is not None and await shared.claim_stream(http_session.id) is not None:
                        return
                    renew_at = now + idle / 2
                frame = None
                with anyio.move_on_after(min(remaining, renew_at - now)):
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
            if shared is not None:
                await shared.release_stream(http_session.id)

    async def delete(self, headers: dict[str, str], principal: str | None = None) -> Response:
        """End the session (several workers: on every worker)."""
        return await self.directory.close(headers.get(SESSION_HEADER), principal)

    def close_all(self) -> None:
        self.directory.close_all()

    def close_streams(self) -> None:
        """Close every open GET stream and `subscriptions/listen` stream (draining before shutdown);
        requests in flight go on."""
        self.directory.drain()
        for listener in list(self.host.listeners):
            listener.session.cancel_all()


NOT_FOUND = "Not Found: unknown or expired Mcp-Session-Id"


@dataclass(slots=True)
class _Finally:
    """An ASGI response that calls `done` once it has been sent (or has failed)."""

    response: Any
    done: Callable[[], None]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.response(scope, receive, send)
        finally:
            self.done()


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class RequestsResponse(ResponseWriter):
    """An ASGI response that runs the POST's request(s) and answers them, as their `ResponseWriter`.

    One request runs inline in the ASGI task: no extra task, queue or task group, which is most of
    the cost of a small call. In the stateless era a client that closes the connection cancels its
    request (2026-07-28 transports: closing the response stream is the cancellation signal), so
    there a watcher task runs beside it. In handshake sessions disconnection is not cancellation
    (the client sends `notifications/cancelled`), so nothing watches. A batch (handshake era only)
    runs its requests concurrently and is answered with one JSON array.
    """

    session: Session
    requests: list[Request]
    stateless: bool
    batch: bool

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self._send = send
        transport = self.session.transport
        assert isinstance(transport, HttpTransport)
        routes = transport.by_request
        if self.batch:
            await self.finish(await self._answer_batch(routes), batch=True)
            return
        rpc = self.requests[0]
        # A duplicate of an id still in flight is refused by the session; the stream of the request
        # that owns the id keeps its route (its progress and answer still go there).
        owns_route = rpc.id not in routes
        if owns_route:
            routes[rpc.id] = self
        try:
            if self.stateless:
                await self._answer_unless_disconnected(rpc, receive)
            else:
                answer = await self.session.answer(rpc)
                await self.finish([answer] if answer is not None else [])
        finally:
            if owns_route:
                routes.pop(rpc.id, None)

    async def _answer_unless_disconnected(self, rpc: Request, receive: Receive) -> None:
        # Each stateless POST has a session of its own, so cancelling all of it cancels just this request.
        disconnected = False

        async def watch() -> None:
            nonlocal disconnected
            while (await receive())["type"] != "http.disconnect":
                pass
            disconnected = True
            self.abandon()  # nothing more is written, even what the handler sends while it unwinds
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
            await self.finish([answer] if answer is not None else [])

    async def _answer_batch(self, routes: dict[Any, Any]) -> list[Answer]:
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
