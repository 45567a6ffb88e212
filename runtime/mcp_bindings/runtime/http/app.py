"""Streamable HTTP (and the legacy HTTP+SSE transport) for a server object, as an ASGI app.

This module is the app: routing, Host/Origin checks (DNS-rebinding protection), body limits, and
the lifespan. What an MCP request over HTTP means lives in `http_streamable` (sessions, POST / GET /
DELETE, both wire eras), `http_stateless` (the header checks of a stateless request),
`http_resume` (answering a POST as JSON or SSE, the event log for resumption) and `http_legacy`
(the 2024-11-05 HTTP+SSE transport). Security is on by default: Host and Origin must name this
machine, bodies are size-limited and must arrive in time, sessions are bounded in number, expire
when idle and belong to the principal that opened them. `http.serving` (`serve_http`,
`uvicorn_config`) adds what only the HTTP server can do: a bound on connections, a deadline and a
size bound for a request's head. Every limit, its default and its option: docs/security.md.

Several workers (docs/deployment.md): the app's `backend` (`http.backend.Backend`; by default the
scale-out plug-in's Redis backend when `MCP_REDIS_URL` is set, else none) carries broadcasts, session
records (so any worker serves any handshake session), messages to one worker (forwarded responses
and calls) and tasks between workers; the lifespan attaches it (`backend.attach`, the plug-in's
`scaleout.attach`: a clear startup error when it cannot connect) and refuses to start a worker of
several without a configured `requestState` secret. `/healthz` answers 200
while the process serves; `/readyz` 200 when it can take traffic (its backend reachable, not
shutting down), else 503 naming why. On SIGTERM / SIGINT the app drains first: readiness turns
503 and its open streams (GET, `subscriptions/listen`) are closed so clients reconnect elsewhere,
while in-flight requests finish (the HTTP server waits for them before the lifespan ends).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import signal
import sys
import threading
from collections.abc import AsyncGenerator, Awaitable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qs

import anyio
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from mcp_bindings.runtime.http.backend import Backend, backend_from_env
from mcp_bindings.runtime.http.fairness import ClientAddress
from mcp_bindings.runtime.http.legacy import LegacySse
from mcp_bindings.runtime.http.resume import error_response
from mcp_bindings.runtime.http.sessions import HttpOptions
from mcp_bindings.runtime.http.streamable import SSE, StreamableHttp, principal_of
from mcp_bindings.runtime.protocol.headers import accepts, authority_host, media_type, origin_host
from mcp_bindings.runtime.protocol.request_state import SecretError, secret_bytes
from mcp_bindings.runtime.rpc import logs
from mcp_bindings.runtime.rpc.errors import INVALID_REQUEST
from mcp_bindings.runtime.server.bus import BackendUnavailable
from mcp_bindings.runtime.server.host import host_for
from mcp_bindings.runtime.server.stubs import ServerStub

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

log = logs.logger("http")

JSON = "application/json"
T = TypeVar("T")


def _listen_bound(o: HttpOptions) -> int:
    """The app's bound on open listen streams: `max_listen_streams`, but at most half of
    `max_connections`, so that streams held open (by any number of clients) leave connections for
    other clients' requests."""
    ceiling = max(1, o.max_connections // 2)
    if o.max_listen_streams > ceiling:
        log.warning(
            "max_listen_streams=%d lowered to %d: at most half of max_connections=%d, so that listen streams "
            "leave connections for other requests",
            o.max_listen_streams,
            ceiling,
            o.max_connections,
        )
        return ceiling
    return o.max_listen_streams


# Header names decoded once: a client sends the same few on every request. Bounded, so that a
# client sending ever new names costs a decode each, never memory.
_HEADER_NAMES: dict[bytes, str] = {}
_MAX_HEADER_NAMES = 256


class HttpExchange:
    """One HTTP request as the app reads it: scope, receive, and the headers decoded once.

    (Header names are lower-case in ASGI; for a repeated header the first value counts, but for
    `Accept`, a list, whose lines are joined.)"""

    __slots__ = ("headers", "receive", "scope")

    def __init__(self, scope: Scope, receive: Receive) -> None:
        self.scope = scope
        self.receive = receive
        headers: dict[str, str] = {}
        names = _HEADER_NAMES
        for name, value in scope["headers"]:
            key = names.get(name)
            if key is None:
                key = name.decode("latin-1")
                if len(names) < _MAX_HEADER_NAMES:
                    names[name] = key
            if key not in headers:
                headers[key] = value.decode("latin-1")
            elif key == "accept":
                headers[key] += ", " + value.decode("latin-1")
        self.headers = headers

    def query_param(self, name: str) -> str:
        values = parse_qs(self.scope.get("query_string", b"").decode("latin-1")).get(name)
        return values[0] if values else ""


class StreamableHTTPApp:
    """ASGI app serving one server object to any number of clients."""

    def __init__(self, server: ServerStub, options: HttpOptions | None = None) -> None:
        self.server = server
        self.options = options or HttpOptions()
        host = host_for(server)
        o = self.options
        # Before any connection takes the host's sealer (`ServerRuntime`): the secrets it seals with.
        host.configure_secrets(
            secret_bytes(o.request_state_secret, "request_state_secret"),
            secret_bytes(o.previous_request_state_secret, "previous_request_state_secret"),
        )
        self.streamable = StreamableHttp(server, host, replace(o, max_listen_streams=_listen_bound(o)))
        self.legacy = LegacySse(
            server,
            host,
            o.max_sessions,
            queue_bytes=o.legacy_queue_bytes,
            max_sessions_per_client=o.max_sessions_per_client,
        )
        self.host = host
        self.client_address = ClientAddress(o.forwarded_allow_ips)  # the IP per-client bounds count by
        self.backend: Backend = o.backend if o.backend is not None else backend_from_env()
        self.draining = False
        self._started = False
        self._chained: list[tuple[int, Any, Any]] = []  # (signal, our handler, the one it chains to)
        self.endpoint = o.path.rstrip("/") or "/"  # the MCP endpoint's path below where the app is mounted
        self._body_deadlines = Deadlines(o.body_timeout_seconds)
        # Allowed host names as `authority_host` gives them (lower-case, IPv6 in brackets).
        self._allowed_hosts = {_bracketed(name.lower()) for name in o.allowed_hosts}
        self._hosts_seen: dict[str, bool] = {}  # Host value -> allowed (bounded)

    @property
    def sessions(self) -> dict[str, Any]:
        """The open handshake sessions by id."""
        return self.streamable.sessions

    # -- ASGI --------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        request = HttpExchange(scope, receive)
        response = await self._handle(request)
        await response(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        """The ASGI lifespan protocol: `lifespan()` entered at startup, left at shutdown, each step
        answered (`startup.failed` / `shutdown.failed` with the reason)."""
        async with AsyncExitStack() as stack:
            message = await receive()
            if message["type"] != "lifespan.startup":  # pragma: no cover - the protocol starts with it
                return
            try:
                await stack.enter_async_context(self.lifespan())
            except (BackendUnavailable, SecretError) as exc:
                text = exc.message if isinstance(exc, BackendUnavailable) else str(exc)
                log.error("cannot start: %s", text)
                await send({"type": "lifespan.startup.failed", "message": text})
                return
            except Exception as exc:
                log.exception("cannot start")
                await send({"type": "lifespan.startup.failed", "message": f"{type(exc).__name__}: {exc}"})
                return
            await send({"type": "lifespan.startup.complete"})
            await receive()  # lifespan.shutdown
            try:
                await stack.aclose()
            except Exception as exc:
                log.exception("shutdown failed")
                await send({"type": "lifespan.shutdown.failed", "message": f"{type(exc).__name__}: {exc}"})
                return
        await send({"type": "lifespan.shutdown.complete"})

    @asynccontextmanager
    async def lifespan(self, parent: object = None) -> AsyncGenerator[None]:
        """What the app does at startup and shutdown, as an async context manager: pass it as the
        `lifespan=` of the Starlette / FastAPI application this app is mounted in (they do not run a
        mounted app's lifespan): `Starlette(routes=[Mount("/api", app=mcp)], lifespan=mcp.lifespan)`."""
        try:
            async with anyio.create_task_group() as group:
                await self.start(group)
                try:
                    async with AsyncExitStack() as stack:
                        if self.options.lifespan is not None:
                            await stack.enter_async_context(self.options.lifespan())
                        try:
                            yield
                        finally:
                            self.drain()
                            self.streamable.close_all()
                finally:
                    group.cancel_scope.cancel()
        except BaseExceptionGroup as group_error:  # what failed, as it was raised (the task group wraps it)
            if len(group_error.exceptions) == 1:
                raise group_error.exceptions[0] from None
            raise
        finally:
            # Out of the cancelled task group: what stops here may await.
            await self.stop()

    # -- several workers -----------------------------------------------------------------------

    async def start(self, group: TaskGroup) -> None:
        """Check the sealing secrets and attach the backend (the lifespan's startup: connected, its
        bus run in `group`). `SecretError` / `BackendUnavailable` say why a worker cannot start."""
        sealer = self.host.sealer
        if self.host.secret_problem is not None:  # MCP_REQUEST_STATE_SECRET set but unusable
            raise SecretError(self.host.secret_problem)
        if self.backend.shared or _in_worker_process():
            sealer.check_shareable()
        await self.backend.attach(self, group)
        self._started = True
        self._chain_signals()

    async def stop(self) -> None:
        self._unchain_signals()
        if self._started:
            self._started = False
            await self.backend.detach(self)

    def drain(self) -> None:
        """Stop taking traffic: readiness turns 503, open GET and listen streams are closed (their
        clients reconnect, to another worker); requests in flight go on to their answer."""
        if self.draining:
            return
        self.draining = True
        log.info("draining: closing open streams, finishing requests in flight")
        self.streamable.close_streams()

    def _chain_signals(self) -> None:
        """Drain on SIGTERM / SIGINT before the HTTP server's own handler runs (main thread only:
        uvicorn and gunicorn's uvicorn worker install theirs there before the lifespan starts)."""
        if threading.current_thread() is not threading.main_thread():
            return
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            previous = signal.getsignal(signum)
            if not callable(previous):
                continue

            def handler(number: int, frame: Any, previous: Any = previous) -> None:
                loop.call_soon_threadsafe(self.drain)
                previous(number, frame)

            signal.signal(signum, handler)
            self._chained.append((signum, handler, previous))

    def _unchain_signals(self) -> None:
        while self._chained:
            signum, handler, previous = self._chained.pop()
            if threading.current_thread() is threading.main_thread() and signal.getsignal(signum) is handler:
                signal.signal(signum, previous)

    async def _probe(self, path: str) -> Response | None:
        if path == self.options.health_path:
            return Response(status_code=200, content="ok\n", media_type="text/plain")
        if path == self.options.ready_path:
            reason = "draining (shutting down)" if self.draining else await self.backend.ready()
            if reason is None:
                return Response(status_code=200, content="ready\n", media_type="text/plain")
            return Response(status_code=503, content=f"not ready: {reason}\n", media_type="text/plain")
        return None

    async def _handle(self, request: HttpExchange) -> Any:
        path = route_path(request.scope).rstrip("/") or "/"
        method = request.scope["method"]
        if method == "GET" and path in (self.options.health_path, self.options.ready_path):
            # Before the Host check: probes (a load balancer's, Kubernetes') name the machine by address.
            probe = await self._probe(path)
            if probe is not None:
                return probe
        refusal = self._check_origin(request)
        if refusal is not None:
            return refusal
        if path == self.endpoint:
            return await self._endpoint_request(request, method)
        if self.options.legacy_sse and path == "/sse" and method == "GET":
            return self.legacy.stream(principal_of(request.scope), self.client_address(request.scope))
        if self.options.legacy_sse and path == "/messages" and method == "POST":
            session_id = request.query_param("session_id")
            if not self.legacy.admits(session_id, principal_of(request.scope)):
                return Response(status_code=404, content="unknown session_id")
            body = await self._body(request)
            if isinstance(body, Response):
                return body
            return await self.legacy.post(session_id, body, principal_of(request.scope))
        return Response(status_code=404)

    async def _endpoint_request(self, request: HttpExchange, method: str) -> Any:
        if method == "POST":
            accept = request.headers.get("accept")
            if not accepts(accept, JSON) and not accepts(accept, SSE):
                message = "Not Acceptable: the client must accept application/json or text/event-stream"
                return error_response(None, INVALID_REQUEST, message, 406)
            if media_type(request.headers.get("content-type", "")) != JSON:
                return error_response(
                    None, INVALID_REQUEST, "Unsupported Media Type: POST a JSON-RPC message as application/json", 415
                )
            body = await self._body(request)
            if isinstance(body, Response):
                return body
            return await self.streamable.post(
                request.headers, body, principal_of(request.scope), self.client_address(request.scope)
            )
        if method == "GET":
            return await self.streamable.get(request.headers, principal_of(request.scope))
        if method == "DELETE":
            return await self.streamable.delete(request.headers, principal_of(request.scope))
        return Response(status_code=405, headers={"Allow": "GET, POST, DELETE"})

    # -- security ----------------------------------------------------------------------------

    def _host_allowed(self, name: str | None) -> bool:
        """Whether a parsed host name (`authority_host`; None: malformed) is allowed."""
        if "*" in self._allowed_hosts:
            return True
        return name is not None and name in self._allowed_hosts

    def _check_origin(self, request: HttpExchange) -> Response | None:
        # Host and Origin are parsed as authorities (`127.0.0.1:80@evil.example` is userinfo
        # followed by the host evil.example: malformed in Host, and refused in Origin).
        host = request.headers.get("host", "")
        allowed = self._hosts_seen.get(host)  # the verdict on a Host value, kept for the next request
        if allowed is None:
            allowed = self._host_allowed(authority_host(host))
            if len(self._hosts_seen) < _MAX_HEADER_NAMES:
                self._hosts_seen[host] = allowed
        if not allowed:
            return error_response(None, INVALID_REQUEST, f"Forbidden: Host {host!r} is not allowed", 403)
        origin = request.headers.get("origin")
        if origin is not None:
            if self.options.allowed_origins is not None:
                ok = origin in self.options.allowed_origins or "*" in self.options.allowed_origins
            else:
                name = origin_host(origin)
                ok = name is not None and self._host_allowed(name)
            if not ok:
                return error_response(None, INVALID_REQUEST, f"Forbidden: Origin {origin!r} is not allowed", 403)
        return None

    def refuse_foreign(self, scope: Scope, receive: Receive) -> Response | None:
        """This app's Host / Origin check, for a request to a route served beside it (the OAuth
        proxy's endpoints): the 403 refusing it, or None when it names this machine."""
        return self._check_origin(HttpExchange(scope, receive))

    async def _body(self, request: HttpExchange) -> bytes | Response:
        """The request body, or the response refusing it: 413 past `max_body_bytes`, 408 when it has
        not arrived within `body_timeout_seconds` (a client that declares a length and goes silent)."""
        declared = request.headers.get("content-length", "").strip()
        limit = self.options.max_body_bytes
        if declared.isascii() and declared.isdigit() and (len(declared) > 19 or int(declared) > limit):
            return error_response(None, INVALID_REQUEST, f"Request body exceeds {limit} bytes", 413)
        try:
            return await self._body_deadlines.run(self._read_body(request.receive))
        except TimeoutError:
            seconds = self.options.body_timeout_seconds
            log.info("request body not received within %s s: 408", seconds)
            refusal = error_response(
                None, INVALID_REQUEST, f"Request Timeout: the body did not arrive within {seconds:g} s", 408
            )
            refusal.headers["Connection"] = "close"  # the rest of the body may still come: end the connection
            return refusal

    async def _read_body(self, receive: Receive) -> bytes | Response:
        message = await receive()
        body: bytes = message.get("body", b"")
        if not message.get("more_body", False) and message["type"] == "http.request":
            if len(body) > self.options.max_body_bytes:
                return error_response(
                    None, INVALID_REQUEST, f"Request body exceeds {self.options.max_body_bytes} bytes", 413
                )
            return body  # the usual case: one chunk
        chunks = bytearray(body)
        while message["type"] == "http.request" and message.get("more_body", False):
            message = await receive()
            chunks += message.get("body", b"")
            if len(chunks) > self.options.max_body_bytes:
                return error_response(
                    None, INVALID_REQUEST, f"Request body exceeds {self.options.max_body_bytes} bytes", 413
                )
        if message["type"] == "http.disconnect":
            return Response(status_code=400)  # the client left mid-body; nobody reads this
        return bytes(chunks)


class Deadlines:
    """Run awaitables (a request body's reads) under one time limit, `TimeoutError` past it.

    On asyncio one timer serves them all: a sweep every `period` cancels the tasks whose deadline
    has passed (so a deadline is met within `period`), at the cost of a dict entry per read. A
    timer (or cancel scope) per request costs more than parsing a small request does. On other
    loops (trio) each read gets an `anyio.fail_after`."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.period = min(1.0, seconds / 4)
        self._running: dict[asyncio.Task[Any], float] = {}  # task -> its deadline (loop time)
        self._expired: set[asyncio.Task[Any]] = set()
        self._sweep_timer: asyncio.TimerHandle | None = None

    async def run(self, awaitable: Awaitable[T]) -> T:
        try:
            task = asyncio.current_task()
        except RuntimeError:  # not asyncio
            task = None
        if task is None:
            with anyio.fail_after(self.seconds):
                return await awaitable
        loop = task.get_loop()
        self._running[task] = loop.time() + self.seconds
        if self._sweep_timer is None:
            self._sweep_timer = loop.call_later(self.period, self._sweep, loop)
        try:
            return await awaitable
        except asyncio.CancelledError:
            # The sweep runs only while this task waits, and only inside this await: a cancellation
            # it caused surfaces here. (If something else cancelled too, it cancels again.)
            if task in self._expired and task.uncancel() == 0:
                raise TimeoutError from None
            raise
        finally:
            self._running.pop(task, None)
            self._expired.discard(task)
            if not self._running:  # an emptied dict keeps its table (allocated at the load's peak)
                self._running.clear()
                self._expired.clear()

    def _sweep(self, loop: asyncio.AbstractEventLoop) -> None:
        self._sweep_timer = None
        now = loop.time()
        for task, deadline in list(self._running.items()):
            if deadline <= now and task not in self._expired:
                self._expired.add(task)
                task.cancel("deadline passed")
        if self._running:
            self._sweep_timer = loop.call_later(self.period, self._sweep, loop)


def route_path(scope: Scope) -> str:
    """The request's path below where the app is mounted: `path` less the `root_path` prefix (set by
    Starlette's `Mount`, FastAPI's `mount`, uvicorn's `--root-path`), as ASGI has `path` include it."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if root and path.startswith(root) and (len(path) == len(root) or path[len(root)] == "/"):
        return path[len(root) :]
    return path


def _in_worker_process() -> bool:
    """Whether this process is one worker of several: a child of uvicorn's `--workers` supervisor
    (multiprocessing spawn) or of gunicorn's arbiter."""
    return multiprocessing.parent_process() is not None or "gunicorn.arbiter" in sys.modules


def _bracketed(name: str) -> str:
    """An allowed host name as `authority_host` writes it: IPv6 literals in brackets."""
    return f"[{name}]" if ":" in name and not name.startswith("[") else name


def create_app(server: ServerStub, **options: Any) -> StreamableHTTPApp:
    """The ASGI app; mount it in any ASGI application (Starlette, FastAPI, ...)."""
    return StreamableHTTPApp(server, HttpOptions(**options))
