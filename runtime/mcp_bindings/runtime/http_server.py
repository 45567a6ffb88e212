"""Streamable HTTP (and the legacy HTTP+SSE transport) for a server object, as an ASGI app.

This module is the app: routing, Host/Origin checks (DNS-rebinding protection), body limits, and
the lifespan. What an MCP request over HTTP means lives in `http_streamable` (sessions, POST / GET /
DELETE, both wire eras), `http_stateless` (the header checks of a stateless request),
`http_resume` (answering a POST as JSON or SSE, the event log for resumption) and `http_legacy`
(the 2024-11-05 HTTP+SSE transport). Security is on by default: Host and Origin must name this
machine, bodies are size-limited, sessions are bounded in number and expire when idle.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from .errors import INVALID_REQUEST
from .headers import decode_header_value
from .http_legacy import LegacySse
from .http_resume import error_response
from .http_streamable import StreamableHttp, StreamableOptions
from .notifications import host_for
from .stubs import ServerStub

__all__ = ["HttpExchange", "HttpOptions", "StreamableHTTPApp", "create_app", "decode_header_value", "serve_http"]

log = logging.getLogger("mcp_bindings.runtime.http")

LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")


@dataclass
class HttpOptions:
    path: str = "/mcp"
    allowed_hosts: tuple[str, ...] = LOCAL_HOSTS  # host names (any port); "*" allows all
    allowed_origins: tuple[str, ...] | None = None  # None: origins on an allowed host
    max_body_bytes: int = 4 * 1024 * 1024
    max_sessions: int = 1000
    session_idle_seconds: float = 30 * 60
    legacy_sse: bool = True  # also serve the 2024-11-05 HTTP+SSE transport at /sse and /messages
    json_only: bool = False  # never upgrade a response to SSE
    # Handshake sessions: number SSE events, open each POST stream with a priming event carrying
    # `retry:`, and replay a stream to a GET with `Last-Event-ID` (resumption and polling, SEP-1699).
    resumable: bool = True
    sse_retry_ms: int = 1000
    max_replay_events: int = 1000  # per session


class HttpExchange:
    """One HTTP request as the app reads it: scope, receive, and the headers decoded once.

    (Header names are lower-case in ASGI; for a repeated header the first value counts.)"""

    __slots__ = ("headers", "receive", "scope")

    def __init__(self, scope: Scope, receive: Receive) -> None:
        self.scope = scope
        self.receive = receive
        headers: dict[str, str] = {}
        for name, value in scope["headers"]:
            key = name.decode("latin-1")
            if key not in headers:
                headers[key] = value.decode("latin-1")
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
        self.streamable = StreamableHttp(
            server,
            host,
            StreamableOptions(
                o.max_sessions, o.session_idle_seconds, o.json_only, o.resumable, o.sse_retry_ms, o.max_replay_events
            ),
        )
        self.legacy = LegacySse(server, host, o.max_sessions)
        self._endpoint = o.path.rstrip("/") or "/"

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
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self.streamable.close_all()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _handle(self, request: HttpExchange) -> Any:
        refusal = self._check_origin(request)
        if refusal is not None:
            return refusal
        path = request.scope["path"].rstrip("/") or "/"
        method = request.scope["method"]
        if path == self._endpoint:
            return await self._endpoint_request(request, method)
        if self.options.legacy_sse and path == "/sse" and method == "GET":
            return self.legacy.stream()
        if self.options.legacy_sse and path == "/messages" and method == "POST":
            session_id = request.query_param("session_id")
            if session_id not in self.legacy.sessions:
                return Response(status_code=404, content="unknown session_id")
            body = await self._body(request)
            return body if isinstance(body, Response) else await self.legacy.post(session_id, body)
        return Response(status_code=404)

    async def _endpoint_request(self, request: HttpExchange, method: str) -> Any:
        if method == "POST":
            content_type = request.headers.get("content-type", "")
            if "application/json" not in content_type.lower():
                return error_response(
                    None, INVALID_REQUEST, "Unsupported Media Type: POST a JSON-RPC message as application/json", 415
                )
            body = await self._body(request)
            return body if isinstance(body, Response) else await self.streamable.post(request.headers, body)
        if method == "GET":
            return self.streamable.get(request.headers)
        if method == "DELETE":
            return self.streamable.delete(request.headers)
        return Response(status_code=405, headers={"Allow": "GET, POST, DELETE"})

    # -- security ----------------------------------------------------------------------------

    def _host_allowed(self, host: str) -> bool:
        allowed = self.options.allowed_hosts
        if "*" in allowed:
            return True
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        if host.startswith("[") and "]" in host:
            name = host[: host.index("]") + 1]
        return name.lower() in allowed

    def _check_origin(self, request: HttpExchange) -> Response | None:
        host = request.headers.get("host", "")
        if not self._host_allowed(host):
            return error_response(None, INVALID_REQUEST, f"Forbidden: Host {host!r} is not allowed", 403)
        origin = request.headers.get("origin")
        if origin is not None:
            if self.options.allowed_origins is not None:
                ok = origin in self.options.allowed_origins or "*" in self.options.allowed_origins
            else:
                parts = urlsplit(origin)
                ok = parts.scheme in ("http", "https") and self._host_allowed(parts.netloc)
            if not ok:
                return error_response(None, INVALID_REQUEST, f"Forbidden: Origin {origin!r} is not allowed", 403)
        return None

    async def _body(self, request: HttpExchange) -> bytes | Response:
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.options.max_body_bytes:
            return error_response(
                None, INVALID_REQUEST, f"Request body exceeds {self.options.max_body_bytes} bytes", 413
            )
        receive = request.receive
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


def create_app(server: ServerStub, **options: Any) -> StreamableHTTPApp:
    """The ASGI app; mount it in any ASGI application (Starlette, FastAPI, ...)."""
    return StreamableHTTPApp(server, HttpOptions(**options))


def serve_http(
    server: ServerStub,
    host: str = "127.0.0.1",
    port: int = 3001,
    path: str = "/mcp",
    *,
    log_level: str = "warning",
    http: Literal["auto", "h11", "httptools"] = "auto",
    loop: Literal["auto", "asyncio", "uvloop"] = "auto",
    **options: Any,
) -> None:
    """`serve_http(MyServer(), port=3001)`: run the server on uvicorn until interrupted.

    `http` and `loop` choose uvicorn's HTTP parser and event loop; "auto" takes httptools and uvloop
    (both in the `http` extra) where installed, "h11" / "asyncio" the pure-Python ones."""
    import uvicorn

    if host not in LOCAL_HOSTS and "allowed_hosts" not in options:
        log.warning(
            "binding %s: DNS-rebinding protection still only admits Host headers of %s", host, ", ".join(LOCAL_HOSTS)
        )
    app = create_app(server, path=path, **options)
    uvicorn.run(app, host=host, port=port, log_level=log_level, lifespan="on", http=http, loop=loop)
