"""Where the handshake sessions of the Streamable HTTP transport live: the `SessionDirectory`.

`StreamableHttp` finds, opens, serves and ends sessions only through a directory. `LocalSessions` is
the one of a single process: a dict by id, idle expiry, and the `max_sessions` bound (one more is
refused). A directory whose sessions several workers serve also has `SharedStreams` (what crosses
workers: responses to another worker's requests, records written as a response leaves, the one GET
stream claimed across workers), which `StreamableHttp` uses only where the directory has it. The
scale-out plug-in's `SharedSessions` (`scaleout.shared_sessions`, installed when a shared backend is
attached) is such a directory: it holds a `LocalSessions` for the copies this worker serves, with
their records in the backend.

A session expires like a deleted one ends: its requests are cancelled, its GET stream is closed and
it gets no more broadcasts.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import anyio
from anyio.streams.memory import MemoryObjectSendStream
from starlette.responses import Response

from mcp_bindings.runtime.http.resume import CLOSE_STREAM, EventLog, FrameSink, ReplayLimits, ReplayStore
from mcp_bindings.runtime.rpc import jsonrpc, logs
from mcp_bindings.runtime.rpc.session import Session
from mcp_bindings.runtime.rpc.transport import Features, TransportBase
from mcp_bindings.runtime.server.host import ServerHost
from mcp_bindings.runtime.server.runtime import ServerRuntime
from mcp_bindings.runtime.server.stubs import ServerStub

if TYPE_CHECKING:
    from mcp_bindings.runtime.http.backend import Backend

__all__ = [
    "HttpOptions",
    "HttpSession",
    "HttpTransport",
    "LocalSessions",
    "SessionDirectory",
    "SharedStreams",
    "StreamableOptions",
]

log = logs.logger("http")

Elsewhere = Callable[[bytes], Awaitable[None]]


async def _dropped(frame: bytes) -> None:
    log.debug("no open stream for a server message; dropped")


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
        # Where a message for the GET stream goes when this transport holds none (several workers:
        # to the worker holding it; one process: nowhere).
        self.elsewhere: Elsewhere = _dropped

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
                await self.elsewhere(frame)
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
    init_params: Any = None  # the initialize params it was opened with
    written: Any = None  # several workers: its state as last recorded (`SharedSessions`)
    on_end: Callable[[], None] | None = None  # called once when it ends (gives back its client's share)


LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")


@dataclass
class HttpOptions:
    """The Streamable HTTP app's options (`create_app(server, **options)`); `StreamableHttp` and the
    session directories read them too. Every limit, its default and its option: docs/security.md."""

    path: str = "/mcp"
    allowed_hosts: tuple[str, ...] = LOCAL_HOSTS  # host names (any port); "*" allows all
    allowed_origins: tuple[str, ...] | None = None  # None: origins on an allowed host
    max_body_bytes: int = 4 * 1024 * 1024
    max_sessions: int = 1000
    session_idle_seconds: float = 30 * 60
    legacy_sse: bool = True  # also serve the 2024-11-05 HTTP+SSE transport at /sse and /messages
    json_only: bool = False  # never upgrade a response to SSE
    # Handshake sessions: number SSE events, open each POST stream with a priming event carrying
    # `retry:` (sessions of 2025-11-25 on: policy/transports.json), and replay a stream to a
    # GET with `Last-Event-ID` (resumption and polling, SEP-1699).
    resumable: bool = True
    sse_retry_ms: int = 1000
    # The replay log (docs/security.md): the oldest events go first when a bound is reached;
    # resuming past them is answered 410. Released with the session.
    max_replay_events: int = 1000  # per session
    max_replay_bytes: int = 16 * 1024 * 1024  # per session
    max_replay_bytes_total: int = 128 * 1024 * 1024  # all sessions together
    replay_ttl_seconds: float = 300.0  # an event older than this is dropped
    # Legacy /sse: what waits for a client that reads slower than the server writes; beyond it the
    # connection is dropped and closed (logged once).
    legacy_queue_bytes: int = 8 * 1024 * 1024  # per connection
    # Slow and hostile peers (docs/security.md). Defaults no local client comes near.
    body_timeout_seconds: float = 60.0  # a POST body must arrive within this: else 408, connection closed
    # Open subscriptions/listen streams at once; one more is answered 503. At most half of
    # `max_connections` (lowered to it, with a warning): the other connections stay for requests.
    max_listen_streams: int = 500
    # Per client (its principal, else its IP; `http.fairness`), so that one client leaves the rest
    # for the others; one more is answered 429, -32050 (LIMIT_REACHED) naming the bound.
    max_listen_streams_per_client: int = 100
    max_sessions_per_client: int = 100  # handshake sessions open (of `max_sessions`)
    max_requests_in_flight_per_client: int = 200  # POSTs being answered, listen streams included
    # The proxies (IPs, networks, "*") whose X-Forwarded-For names the client for the per-client
    # bounds; none by default: the client is the socket's peer, the header ignored (`ClientAddress`).
    forwarded_allow_ips: tuple[str, ...] | str = ()
    get_stream_queue_bytes: int = 8 * 1024 * 1024  # unread on a session's GET stream: past it the stream is closed
    # Only where the app runs on uvicorn through serve_http / uvicorn_config (the HTTP server owns
    # connections; mounted elsewhere, configure that server):
    max_connections: int = 1000  # connections served at once; a request on one more is answered 503
    # Connections open at once from one address (the socket's peer IP), counted when a connection
    # opens, before anything is parsed: one more is answered 503 and closed.
    max_connections_per_address: int = 250
    header_timeout_seconds: float = 30.0  # a request's line and headers must arrive within this: else closed
    max_header_bytes: int = 64 * 1024  # a request's line and headers larger than this: 400 / closed
    keep_alive_seconds: float = 5.0  # an idle keep-alive connection is closed after this
    # Several workers (docs/deployment.md). None: `backend_from_env()` (Redis if MCP_REDIS_URL is set).
    backend: Backend | None = None
    request_state_secret: bytes | str | None = None  # else the server's, else MCP_REQUEST_STATE_SECRET
    previous_request_state_secret: bytes | str | None = None  # rotation: still opens states for their TTL
    health_path: str = "/healthz"  # liveness: 200 while the process serves
    ready_path: str = "/readyz"  # readiness: 200, or 503 naming why not (backend down, draining)
    # What else starts and stops with the app (the authoring layer's `App(lifespan=...)`): entered
    # at startup once the backend is attached, left at shutdown once the streams are closed.
    lifespan: Callable[[], AbstractAsyncContextManager[Any]] | None = None

    @property
    def replay(self) -> ReplayLimits:
        """The bounds of the SSE replay log (events, bytes, age)."""
        return ReplayLimits(
            self.max_replay_events, self.max_replay_bytes, self.max_replay_bytes_total, self.replay_ttl_seconds
        )


# The name the session directories' users knew the options `StreamableHttp` reads by (the app's own).
StreamableOptions = HttpOptions


class SessionDirectory(Protocol):
    """The handshake sessions of one server object, as `StreamableHttp` uses them."""

    @property
    def sessions(self) -> dict[str, HttpSession]:
        """The sessions this process holds, by id."""
        ...

    async def find(self, session_id: str, principal: str | None) -> HttpSession | Response | None:
        """The session of that id, if it belongs to `principal`; a response refusing the request
        when the directory cannot say (e.g. its shared state is unreachable)."""
        ...

    def room(self) -> bool:
        """Whether one more session fits (`max_sessions`)."""
        ...

    def open(self, session_id: str, principal: str | None, init_params: Any) -> HttpSession:
        """A new session, not yet listed (`add` lists it once its initialize is answered)."""
        ...

    def add(self, http_session: HttpSession) -> None: ...

    async def resume(
        self, found: HttpSession | None, session_id: str, principal: str | None, last_event_id: str
    ) -> Response | None:
        """The answer to a GET with `Last-Event-ID` (an event id); None: not a resumption (a new
        GET stream, or 404 when there is no session)."""
        ...

    async def close(self, session_id: str | None, principal: str | None) -> Response:
        """DELETE: end the session (200), or 404 / 400."""
        ...

    def end(self, http_session: HttpSession, *, shutdown: bool = False) -> None: ...

    def expire_idle(self) -> None: ...

    def drain(self) -> None:
        """Close every GET stream (the app drains before shutdown); requests in flight go on."""
        ...

    def close_all(self) -> None: ...


@runtime_checkable
class SharedStreams(Protocol):
    """What a `SessionDirectory` whose sessions several workers serve adds (`StreamableHttp` checks
    for it once, when the directory is set): without it, every message of a POST is this process's,
    a response leaves as it is, and a session's one GET stream is the one its transport holds."""

    async def route_responses(
        self, session_id: str, messages: list[jsonrpc.Message]
    ) -> list[jsonrpc.Message] | Response:
        """The messages of a POST this process serves (others go to other workers)."""
        ...

    def sending(self, http_session: HttpSession, response: Any) -> Any:
        """The ASGI response answering a request of `http_session` (wrapped to record its changes)."""
        ...

    async def claim_stream(self, session_id: str) -> str | None:
        """Claim (or renew the claim of) the session's one GET stream: None, or who holds it."""
        ...

    async def release_stream(self, session_id: str) -> None: ...

    async def still_used(self, session_id: str) -> bool:
        """Whether a session idle here is still in use (through other workers)."""
        ...


@dataclass(eq=False)
class LocalSessions:
    """The sessions of one process: a dict by id, idle expiry and the `max_sessions` bound."""

    server: ServerStub
    host: ServerHost
    options: HttpOptions
    replay: ReplayStore
    sessions: dict[str, HttpSession] = field(init=False, default_factory=dict[str, HttpSession])
    _next_expiry_sweep: float = field(init=False, default=0.0)

    def get(self, session_id: str | None, principal: str | None) -> HttpSession | None:
        """The open session of that id, if it belongs to `principal` (else it is as good as unknown)."""
        http_session = self.sessions.get(session_id or "")
        if http_session is None or http_session.principal != principal:
            return None
        return http_session

    async def find(self, session_id: str, principal: str | None) -> HttpSession | Response | None:
        return self.get(session_id, principal)

    def room(self) -> bool:
        return len(self.sessions) < self.options.max_sessions

    def open(self, session_id: str, principal: str | None, init_params: Any) -> HttpSession:
        """The transport, runtime and session engine of handshake session `session_id` bound to
        `principal` (what the tasks it creates belong to without one is named after its id, so they
        follow it to any worker)."""
        transport = HttpTransport(self.options.get_stream_queue_bytes)
        runtime = ServerRuntime(self.server, host=self.host)
        session = Session(transport, runtime)
        session.principal = principal
        session.connection = hashlib.sha256(session_id.encode()).hexdigest()[:32]
        events = self.replay.new_log() if self.options.resumable else None
        return HttpSession(
            session_id, runtime, session, transport, events, principal=principal, init_params=init_params
        )

    def add(self, http_session: HttpSession) -> None:
        self.sessions[http_session.id] = http_session

    async def resume(
        self, found: HttpSession | None, session_id: str, principal: str | None, last_event_id: str
    ) -> Response | None:
        if found is None or found.events is None:
            return None
        return found.events.replay(last_event_id)  # None: not an id of this session

    async def close(self, session_id: str | None, principal: str | None) -> Response:
        http_session = self.get(session_id, principal)
        if http_session is None:
            return Response(status_code=404 if session_id else 400)
        self.end(http_session)
        return Response(status_code=200)

    def end(self, http_session: HttpSession, *, shutdown: bool = False) -> None:
        """End a session (DELETE, expiry, shutdown): forget it, cancel its requests, close its GET
        stream, take it off the server's broadcast list and release its replay log."""
        if self.sessions.get(http_session.id) is http_session:
            del self.sessions[http_session.id]
            if not self.sessions:  # the last one: nothing sized or timed by the sessions stays behind
                self.sessions.clear()
                self._next_expiry_sweep = 0.0
        on_end, http_session.on_end = http_session.on_end, None
        if on_end is not None:
            on_end()
        http_session.session.cancel_all()
        transport = http_session.transport
        if transport.standalone is not None:
            transport.standalone.close()
            transport.standalone = None
        self.host.disconnect(http_session.runtime)
        if http_session.events is not None:
            http_session.events.close()

    def expire_idle(self) -> None:
        for http_session in self.idle():
            self.end(http_session)

    def idle(self) -> list[HttpSession]:
        """The sessions idle past `session_idle_seconds` ([] between sweeps: one a second at most,
        as it walks every session)."""
        now = time.monotonic()
        if now < self._next_expiry_sweep:
            return []
        self._next_expiry_sweep = now + min(1.0, self.options.session_idle_seconds / 10)
        cutoff = now - self.options.session_idle_seconds
        return [s for s in self.sessions.values() if s.last_seen < cutoff]

    def drain(self) -> None:
        for http_session in list(self.sessions.values()):
            if http_session.transport.standalone is not None:
                http_session.transport.standalone.close()
                http_session.transport.standalone = None

    def close_all(self) -> None:
        for http_session in list(self.sessions.values()):
            self.end(http_session, shutdown=True)
