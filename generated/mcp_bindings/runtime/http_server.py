"""Streamable HTTP (and the legacy HTTP+SSE transport) for a server object, as an ASGI app.

One endpoint (`/mcp` by default) serves both wire eras. Handshake versions: `initialize` opens a
session (`Mcp-Session-Id`, cryptographically random), later POSTs carry it, GET opens the
server-to-client stream, DELETE ends the session. 2026-07-28: every POST stands alone, described by
its `_meta` and the `MCP-Protocol-Version` / `Mcp-Method` / `Mcp-Name` headers, which must agree.

A request's response is plain JSON unless the handler sends something first (progress, a log, a
server-to-client request): then the response becomes an SSE stream that carries those messages and
ends with the response. Errors found before that get a plain JSON body and, in the stateless era,
the HTTP status the spec assigns.

Security is on by default: Host and Origin must name this machine (DNS-rebinding protection),
bodies are size-limited, sessions are bounded in number and expire when idle.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import itertools
import logging
import math
import re
import secrets
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol
from urllib.parse import parse_qs, urlsplit

import anyio
import orjson
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from starlette.responses import Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from . import headers as header_codec
from . import jsonrpc
from .errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    McpError,
)
from .jsonrpc import InvalidMessage, Request
from .server import (
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    PROTOCOL_VERSION_KEY,
    ServerRuntime,
    current_request,
    list_generation,
    stateless_meta,
)
from .session import Session
from .stubs import ServerStub

log = logging.getLogger("mcp_bindings.runtime.http")

SESSION_HEADER = "mcp-session-id"
VERSION_HEADER = "mcp-protocol-version"
METHOD_HEADER = "mcp-method"
NAME_HEADER = "mcp-name"
HEADER_MISMATCH = -32020
LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")
# Stateless era: the HTTP status that goes with a JSON-RPC error code (spec, transports page).
STATELESS_STATUS = {METHOD_NOT_FOUND: 404, INVALID_PARAMS: 400, INVALID_REQUEST: 400, PARSE_ERROR: 400,
                    HEADER_MISMATCH: 400, -32021: 400, -32022: 400, INTERNAL_ERROR: 500}
# Which params key `Mcp-Name` mirrors, per method.
NAME_PARAM = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
PARAM_HEADER = "mcp-param-"  # + the x-mcp-header name of a tool's parameter (SEP-2243)
BASE64_OPEN, BASE64_CLOSE = "=?base64?", "?="
_BASE64_BODY = re.compile(r"^[A-Za-z0-9+/]*={0,2}$")
MAX_TOOL_PAGES = 100  # bound on tools/list pages read to learn the x-mcp-header annotations


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


class _Routes:
    """Where a server-sent frame goes: the stream of the POST whose request is running, else GET."""

    def __init__(self) -> None:
        self.by_request: dict[Any, _FrameSink] = {}
        self.standalone: MemoryObjectSendStream[bytes] | None = None


class HttpTransport:
    """The `send` side of a session whose messages arrive as HTTP requests."""

    def __init__(self) -> None:
        self.routes = _Routes()

    async def close_stream(self, request_id: Any) -> None:
        """End the SSE stream of the POST carrying `request_id` before its response (the request
        goes on; the client resumes with GET + Last-Event-ID). Ignored where streams are not resumable."""
        stream = self.routes.by_request.get(request_id)
        if stream is not None:
            try:
                await stream.send(CLOSE_STREAM)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass

    async def send(self, frame: bytes) -> None:
        request_id = current_request.get()
        stream = self.routes.by_request.get(request_id) if request_id is not None else None
        stream = stream or self.routes.standalone
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
        if self.routes.standalone is not None:
            self.routes.standalone.close()


CLOSE_STREAM = b""  # in a response's frame queue: end the HTTP stream now (never a real frame)


@dataclass(eq=False)
class _StreamRecord:
    finished: bool = False
    live: MemoryObjectSendStream[tuple[int, bytes]] | None = None  # a resuming GET, if attached


class _EventLog:
    """The numbered SSE events of one session's POST streams, kept (bounded) for resumption."""

    def __init__(self, limit: int) -> None:
        self._ids = itertools.count(1)
        self._stream_ids = itertools.count(1)
        self._events: deque[tuple[int, str, bytes | None]] = deque(maxlen=limit)
        self._streams: OrderedDict[str, _StreamRecord] = OrderedDict()
        self._limit = limit

    def open_stream(self) -> str:
        key = f"s{next(self._stream_ids)}"
        self._streams[key] = _StreamRecord()
        while len(self._streams) > self._limit:
            self._streams.popitem(last=False)
        return key

    def add(self, stream: str, frame: bytes | None) -> int:
        """Record an event (None: the priming event) and forward it to a resuming GET."""
        event_id = next(self._ids)
        self._events.append((event_id, stream, frame))
        record = self._streams.get(stream)
        if record is not None and record.live is not None and frame is not None:
            try:
                record.live.send_nowait((event_id, frame))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.WouldBlock):
                record.live = None
        return event_id

    def finish(self, stream: str) -> None:
        record = self._streams.get(stream)
        if record is not None:
            record.finished = True
            if record.live is not None:
                record.live.close()
                record.live = None

    def resume(self, last_event_id: str) -> tuple[str, list[tuple[int, bytes]], _StreamRecord] | None:
        """The stream `last_event_id` belongs to, its later events, and its record; None if unknown."""
        if not last_event_id.isdigit():
            return None
        wanted = int(last_event_id)
        stream = next((key for event_id, key, _ in self._events if event_id == wanted), None)
        record = self._streams.get(stream) if stream is not None else None
        if stream is None or record is None:
            return None
        later = [(event_id, frame) for event_id, key, frame in self._events if key == stream and event_id > wanted and frame is not None]
        return stream, later, record


@dataclass(eq=False)
class _HttpSession:
    id: str
    runtime: ServerRuntime
    session: Session
    transport: HttpTransport
    events: _EventLog | None = None
    last_seen: float = field(default_factory=time.monotonic)


def _sse(frame: bytes, event_id: int | None = None) -> bytes:
    head = b"id: %d\n" % event_id if event_id is not None else b""
    return head + b"event: message\ndata: " + frame + b"\n\n"


class StreamableHTTPApp:
    """ASGI app serving one server object to any number of clients."""

    def __init__(self, server: ServerStub, options: HttpOptions | None = None) -> None:
        self.server = server
        self.options = options or HttpOptions()
        self.sessions: dict[str, _HttpSession] = {}
        stateless_transport = HttpTransport()
        self._stateless_runtime = ServerRuntime(server)
        self._stateless = Session(stateless_transport, self._stateless_runtime)
        self._stateless_transport = stateless_transport
        self._legacy: dict[str, tuple[Session, MemoryObjectSendStream[bytes]]] = {}
        # protocol version -> (list generation, tool name -> x-mcp-header params), for Mcp-Param-* checks
        self._tool_headers: dict[str, tuple[int, dict[str, dict[str, str] | None]]] = {}
        self._probe_ids = itertools.count(1)
        self._endpoint = self.options.path.rstrip("/") or "/"
        self._next_expiry_sweep = 0.0

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
                for http_session in list(self.sessions.values()):
                    http_session.session.cancel_all()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _handle(self, request: HttpExchange) -> Any:
        refusal = self._check_origin(request)
        if refusal is not None:
            return refusal
        path = request.scope["path"].rstrip("/") or "/"
        method = request.scope["method"]
        if path == self._endpoint:
            if method == "POST":
                return await self._post(request)
            if method == "GET":
                return self._get(request)
            if method == "DELETE":
                return self._delete(request)
            return Response(status_code=405, headers={"Allow": "GET, POST, DELETE"})
        if self.options.legacy_sse and path == "/sse" and method == "GET":
            return self._legacy_stream(request)
        if self.options.legacy_sse and path == "/messages" and method == "POST":
            return await self._legacy_post(request)
        return Response(status_code=404)

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
            return _error_response(None, INVALID_REQUEST, f"Forbidden: Host {host!r} is not allowed", 403)
        origin = request.headers.get("origin")
        if origin is not None:
            if self.options.allowed_origins is not None:
                ok = origin in self.options.allowed_origins or "*" in self.options.allowed_origins
            else:
                parts = urlsplit(origin)
                ok = parts.scheme in ("http", "https") and self._host_allowed(parts.netloc)
            if not ok:
                return _error_response(None, INVALID_REQUEST, f"Forbidden: Origin {origin!r} is not allowed", 403)
        return None

    async def _body(self, request: HttpExchange) -> bytes | Response:
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.options.max_body_bytes:
            return _error_response(None, INVALID_REQUEST, f"Request body exceeds {self.options.max_body_bytes} bytes", 413)
        receive = request.receive
        message = await receive()
        body: bytes = message.get("body", b"")
        if not message.get("more_body", False) and message["type"] == "http.request":
            if len(body) > self.options.max_body_bytes:
                return _error_response(None, INVALID_REQUEST, f"Request body exceeds {self.options.max_body_bytes} bytes", 413)
            return body  # the usual case: one chunk
        chunks = bytearray(body)
        while message["type"] == "http.request" and message.get("more_body", False):
            message = await receive()
            chunks += message.get("body", b"")
            if len(chunks) > self.options.max_body_bytes:
                return _error_response(None, INVALID_REQUEST, f"Request body exceeds {self.options.max_body_bytes} bytes", 413)
        if message["type"] == "http.disconnect":
            return Response(status_code=400)  # the client left mid-body; nobody reads this
        return bytes(chunks)

    # -- POST --------------------------------------------------------------------------------

    async def _post(self, request: HttpExchange) -> Any:
        content_type = request.headers.get("content-type", "")
        if "application/json" not in content_type.lower():
            return _error_response(None, INVALID_REQUEST, "Unsupported Media Type: POST a JSON-RPC message as application/json", 415)
        body = await self._body(request)
        if isinstance(body, Response):
            return body
        try:
            data = jsonrpc.decode(body)
        except InvalidMessage as exc:
            return _error_response(None, exc.code, exc.message, 400)
        items = data if isinstance(data, list) else [data]
        if not items:
            return _error_response(None, INVALID_REQUEST, "Invalid Request: empty batch", 400)
        messages: list[jsonrpc.Message] = []
        for item in items:
            try:
                messages.append(jsonrpc.classify(item))
            except InvalidMessage as exc:
                if not exc.reply:  # a malformed response is dropped, never answered
                    log.warning("dropping a malformed response: %s", exc.message)
                    continue
                return _error_response(exc.id, exc.code, exc.message, 400, exc.data)
        self._expire_idle()
        requests = [m for m in messages if isinstance(m, Request)]
        session_id = request.headers.get(SESSION_HEADER)
        # An initialize that carries stateless `_meta` is a stateless-era request (answered -32601/404).
        if any(r.method == "initialize" and stateless_meta(r) is None for r in requests) and not session_id:
            return await self._initialize(request, requests, data)
        if session_id:
            http_session = self.sessions.get(session_id)
            if http_session is None:
                return _error_response(None, INVALID_REQUEST, "Not Found: unknown or expired Mcp-Session-Id", 404)
            http_session.last_seen = time.monotonic()
            mismatch = self._check_session_version(request, http_session)
            if mismatch is not None:
                return mismatch
            if isinstance(data, list) and not http_session.runtime.batches_allowed:
                return _error_response(None, INVALID_REQUEST, "Invalid Request: batches are not part of the negotiated version", 400)
            return await self._dispatch(
                request, http_session.session, messages, stateless=False, batch=isinstance(data, list), events=http_session.events
            )
        if isinstance(data, list):
            return _error_response(None, INVALID_REQUEST, "Invalid Request: batches need a session", 400)
        stateless_request = requests[0] if requests else None
        if stateless_request is None:
            # A notification or response without a session: nothing to attach it to.
            return Response(status_code=202)
        problem = self._check_stateless_headers(request, stateless_request)
        if problem is None and stateless_request.method == "tools/call":
            problem = await self._check_param_headers(request, stateless_request)
        if problem is not None:
            return problem
        # Each stateless POST stands alone: its own session and routes, so two clients' requests
        # that happen to share a JSON-RPC id never meet.
        session = Session(HttpTransport(), self._stateless_runtime)
        return await self._dispatch(request, session, messages, stateless=True, batch=False)

    def _check_session_version(self, request: HttpExchange, http_session: _HttpSession) -> Response | None:
        header = request.headers.get(VERSION_HEADER)
        view = http_session.runtime.view
        if header is not None and view is not None and header != view.version:
            return _error_response(
                None, INVALID_REQUEST,
                f"Bad Request: MCP-Protocol-Version {header!r} does not match the session's {view.version!r}", 400,
            )
        return None

    def _check_stateless_headers(self, request: HttpExchange, rpc: Request) -> Response | None:
        params = rpc.params if isinstance(rpc.params, dict) else {}
        given_meta = params.get("_meta")
        meta: dict[str, Any] = given_meta if isinstance(given_meta, dict) else {}
        header_version = request.headers.get(VERSION_HEADER)
        meta_version = meta.get(PROTOCOL_VERSION_KEY)
        if header_version is not None and meta_version is not None and header_version != meta_version:
            return _error_response(
                rpc.id, HEADER_MISMATCH,
                f"Header mismatch: MCP-Protocol-Version {header_version!r} but _meta protocolVersion {meta_version!r}", 400,
            )
        method_header = request.headers.get(METHOD_HEADER)
        if method_header is not None and method_header.strip() != rpc.method:
            return _error_response(rpc.id, HEADER_MISMATCH, f"Header mismatch: Mcp-Method {method_header!r} but the body says {rpc.method!r}", 400)
        if meta_version is not None and method_header is None:
            return _error_response(rpc.id, HEADER_MISMATCH, "Header mismatch: the Mcp-Method header is required", 400)
        key = NAME_PARAM.get(rpc.method)
        if key is not None and meta_version is not None:
            name_header = request.headers.get(NAME_HEADER)
            value = params.get(key)
            if name_header is None or decode_header_value(name_header) != value:
                return _error_response(
                    rpc.id, HEADER_MISMATCH, f"Header mismatch: Mcp-Name must equal params.{key} ({value!r})", 400
                )
        return None

    async def _check_param_headers(self, request: HttpExchange, rpc: Request) -> Response | None:
        """SEP-2243: every `x-mcp-header` parameter of the called tool must be mirrored, exactly, in
        its `Mcp-Param-<Name>` header (plain, or `=?base64?...?=`); absent or null ones must not be."""
        params = rpc.params if isinstance(rpc.params, dict) else {}
        meta = stateless_meta(rpc)
        if meta is None or not isinstance(params.get("name"), str):
            return None  # not a stateless-era request, or malformed: the runtime answers it
        mapping = (await self._tool_header_params(meta)).get(params["name"])
        if not mapping:
            return None
        given = params.get("arguments")
        arguments: dict[str, Any] = given if isinstance(given, dict) else {}
        for param, header_name in mapping.items():
            raw = request.headers.get(PARAM_HEADER + header_name.lower())
            value = arguments.get(param)
            header = f"Mcp-Param-{header_name}"
            if value is None:
                if raw is not None:
                    return _error_response(rpc.id, HEADER_MISMATCH, f"Header mismatch: {header} is set but arguments.{param} is absent", 400)
                continue
            if raw is None:
                return _error_response(rpc.id, HEADER_MISMATCH, f"Header mismatch: {header} is required (arguments.{param} is set)", 400)
            decoded = decode_header_value(raw)
            if decoded is None:
                return _error_response(rpc.id, HEADER_MISMATCH, f"Header mismatch: {header} is not valid =?base64?...?= encoding", 400)
            if not _header_matches(decoded, value):
                return _error_response(rpc.id, HEADER_MISMATCH, f"Header mismatch: {header} does not equal arguments.{param}", 400)
        return None

    async def _tool_header_params(self, meta: dict[str, Any]) -> dict[str, dict[str, str] | None]:
        """Tool name -> its `x-mcp-header` parameters (parameter -> header name), from the tools as
        the server lists them to this protocol version (read through the runtime, all pages; cached
        until the server broadcasts a list change)."""
        version = str(meta.get(PROTOCOL_VERSION_KEY))
        generation = list_generation(self.server)
        cached = self._tool_headers.get(version)
        if cached is not None and cached[0] == generation:
            return cached[1]
        probe_meta = {k: meta[k] for k in (PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY) if k in meta}
        mappings: dict[str, dict[str, str] | None] = {}
        cursor: Any = None
        token = current_request.set(None)
        try:
            for _ in range(MAX_TOOL_PAGES):
                params: dict[str, Any] = {"_meta": probe_meta}
                if cursor is not None:
                    params["cursor"] = cursor
                probe = Request(id=f"mcp-param-probe-{next(self._probe_ids)}", method="tools/list", params=params, raw={})
                try:
                    page = orjson.loads(await self._stateless_runtime.on_request(probe, self._stateless))
                except McpError:
                    return {}  # no tools/list (or a client the server refuses): nothing to check against
                for tool in page.get("tools") or []:
                    if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                        schema = tool.get("inputSchema")
                        mappings[tool["name"]] = header_codec.header_params(schema) if schema is not None else None
                cursor = page.get("nextCursor")
                if not cursor:
                    break
        finally:
            current_request.reset(token)
        self._tool_headers[version] = (generation, mappings)
        return mappings

    async def _initialize(self, request: HttpExchange, requests: list[Request], data: Any) -> Any:
        if len(self.sessions) >= self.options.max_sessions:
            return _error_response(None, INTERNAL_ERROR, "Service Unavailable: too many sessions", 503)
        transport = HttpTransport()
        runtime = ServerRuntime(self.server)
        session = Session(transport, runtime)
        events = _EventLog(self.options.max_replay_events) if self.options.resumable else None
        http_session = _HttpSession(secrets.token_urlsafe(24), runtime, session, transport, events)

        def session_header() -> dict[str, str]:
            # Evaluated when the response starts, i.e. after initialize has been answered.
            if runtime.view is None:
                return {}
            self.sessions[http_session.id] = http_session
            return {SESSION_HEADER: http_session.id}

        return await self._dispatch(
            request, session, list(requests), stateless=False, batch=isinstance(data, list), headers=session_header,
            events=events,
        )

    async def _dispatch(
        self, request: HttpExchange, session: Session, messages: list[jsonrpc.Message], *, stateless: bool, batch: bool,
        headers: Callable[[], dict[str, str]] = dict, events: _EventLog | None = None,
    ) -> Any:
        for message in messages:
            if not isinstance(message, Request):
                await session.accept(message)
        requests = [m for m in messages if isinstance(m, Request)]
        if not requests:
            return Response(status_code=202)
        accept = request.headers.get("accept", "*/*").lower()
        sse_ok = not self.options.json_only and ("text/event-stream" in accept or "*/*" in accept)
        return _RequestsResponse(
            session, requests, sse_ok=sse_ok, stateless=stateless, batch=batch, headers=headers, events=events,
            retry_ms=self.options.sse_retry_ms,
        )

    # -- GET and DELETE ----------------------------------------------------------------------

    def _get(self, request: HttpExchange) -> Response:
        if "text/event-stream" not in request.headers.get("accept", "").lower():
            return Response(status_code=406, content="GET needs Accept: text/event-stream")
        session_id = request.headers.get(SESSION_HEADER)
        http_session = self.sessions.get(session_id or "")
        if http_session is None:
            return Response(status_code=405 if not session_id else 404, headers={"Allow": "POST, DELETE"})
        last_event_id = request.headers.get("last-event-id")
        if last_event_id is not None and http_session.events is not None:
            found = http_session.events.resume(last_event_id.strip())
            if found is not None:
                return self._resume(*found)
        if http_session.transport.routes.standalone is not None:
            return Response(status_code=409, content="a GET stream is already open for this session")
        send_stream, receive_stream = anyio.create_memory_object_stream[bytes](math.inf)
        http_session.transport.routes.standalone = send_stream

        async def events() -> AsyncIterator[bytes]:
            try:
                yield b": stream open\n\n"
                async for frame in receive_stream:
                    yield _sse(frame)
            finally:
                if http_session.transport.routes.standalone is send_stream:
                    http_session.transport.routes.standalone = None

        return StreamingResponse(events(), media_type="text/event-stream", headers=_no_cache())

    def _resume(self, stream: str, later: list[tuple[int, bytes]], record: _StreamRecord) -> Response:
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
                    yield _sse(frame, event_id)
            finally:
                if record.live is send_stream:
                    record.live = None

        return StreamingResponse(events(), media_type="text/event-stream", headers=_no_cache())

    def _delete(self, request: HttpExchange) -> Response:
        session_id = request.headers.get(SESSION_HEADER)
        http_session = self.sessions.pop(session_id or "", None)
        if http_session is None:
            return Response(status_code=404 if session_id else 400)
        http_session.session.cancel_all()
        if http_session.transport.routes.standalone is not None:
            http_session.transport.routes.standalone.close()
        return Response(status_code=200)

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

    # -- legacy HTTP+SSE (2024-11-05) --------------------------------------------------------

    def _legacy_stream(self, request: HttpExchange) -> Response:
        if len(self._legacy) >= self.options.max_sessions:
            return Response(status_code=503)
        session_id = secrets.token_hex(16)
        inbound_send, inbound_receive = anyio.create_memory_object_stream[bytes](math.inf)
        outbound_send, outbound_receive = anyio.create_memory_object_stream[bytes](math.inf)
        transport = _QueueTransport(inbound_receive, outbound_send)
        session = Session(transport, ServerRuntime(self.server))
        self._legacy[session_id] = (session, inbound_send)
        endpoint = f"/messages?session_id={session_id}"

        async def events() -> AsyncIterator[bytes]:
            try:
                async with anyio.create_task_group() as task_group:
                    task_group.start_soon(session.run)
                    yield b"event: endpoint\ndata: " + endpoint.encode() + b"\n\n"
                    async for frame in outbound_receive:
                        yield _sse(frame)
            finally:
                self._legacy.pop(session_id, None)
                inbound_send.close()

        return StreamingResponse(events(), media_type="text/event-stream", headers=_no_cache())

    async def _legacy_post(self, request: HttpExchange) -> Response:
        entry = self._legacy.get(request.query_param("session_id"))
        if entry is None:
            return Response(status_code=404, content="unknown session_id")
        body = await self._body(request)
        if isinstance(body, Response):
            return body
        await entry[1].send(body.strip())
        return Response(status_code=202, content="Accepted")


class _QueueTransport:
    def __init__(self, inbound: MemoryObjectReceiveStream[bytes], outbound: MemoryObjectSendStream[bytes]) -> None:
        self._inbound = inbound
        self._outbound = outbound

    async def receive(self) -> bytes:
        try:
            return await self._inbound.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise anyio.EndOfStream from None

    async def send(self, frame: bytes) -> None:
        await self._outbound.send(frame)

    async def aclose(self) -> None:
        self._outbound.close()


class _FrameSink(Protocol):
    async def send(self, frame: bytes) -> None: ...


class _DropFrames:
    """Where a batch's server messages go: a batch is answered with one JSON array, so messages sent
    before the responses cannot reach the client."""

    async def send(self, frame: bytes) -> None:
        log.debug("a server message during a batch cannot be delivered (JSON answer); dropped")


_DROP = _DropFrames()


class _ResponseWriter:
    """The answer to one POST: a JSON body, unless a handler sends something before its response
    (progress, a log, a server-to-client request) — then an SSE stream that carries those messages
    and ends with the response.

    With an event log (resumable handshake sessions) the SSE stream opens with a priming event (id,
    `retry:`, empty data), numbers every event, and may be ended early by the handler
    (`close_stream`): the request goes on, and its later events wait in the log for a GET with
    `Last-Event-ID`.
    """

    def __init__(
        self, send: Send, *, sse_ok: bool, stateless: bool, headers: Callable[[], dict[str, str]],
        events: _EventLog | None, retry_ms: int,
    ) -> None:
        self._send = send
        self._sse_ok = sse_ok
        self._stateless = stateless
        self._headers = headers
        self._events = events
        self._retry_ms = retry_ms
        self._stream: str | None = None  # this POST's stream in the event log
        self._lock: anyio.Lock | None = None  # created on the first server message (rare path)
        self.streaming = False  # the SSE head has been sent
        self._http_open = True
        self._finished = False  # the response is on its way: later server messages have nowhere to go

    async def send(self, frame: bytes) -> None:
        """A server message for the client while the request runs (or CLOSE_STREAM)."""
        if self._finished:
            log.debug("a server message after the response was dropped")
            return
        if not self._sse_ok:
            log.debug("the client takes JSON only; a server message before the response was dropped")
            return
        if self._lock is None:
            self._lock = anyio.Lock()  # handlers may send from several tasks at once
        async with self._lock:
            if not self.streaming:
                await self._open_stream()
            await self._emit(frame)

    async def finish(self, frames: list[bytes], *, batch: bool = False) -> None:
        """Send the response(s): the last SSE event(s), or the whole JSON answer."""
        self._finished = True
        if self.streaming:
            assert self._lock is not None
            async with self._lock:
                for frame in frames:
                    await self._emit(frame)
                if self._events is not None and self._stream is not None:
                    self._events.finish(self._stream)
                if self._http_open:
                    self._http_open = False
                    await self._send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        if not frames:
            status, body = 202, b""
        elif batch:
            status, body = 200, b"[" + b",".join(frames) + b"]"
        else:
            status, body = _status_of(frames[0], self._stateless), frames[0]
        extra = self._headers()
        if body:
            head = _JSON_HEAD + _raw_headers(extra) if extra else _JSON_HEAD
        else:
            head = _raw_headers(extra)
        await self._send({"type": "http.response.start", "status": status, "headers": head})
        await self._send({"type": "http.response.body", "body": body, "more_body": False})

    def abandon(self) -> None:
        """The request ended without a response (cancelled): close its stream in the event log."""
        if self._events is not None and self._stream is not None:
            self._events.finish(self._stream)

    async def _open_stream(self) -> None:
        self.streaming = True
        await self._send({"type": "http.response.start", "status": 200, "headers": _raw_headers(
            {"content-type": "text/event-stream", **_no_cache(), **self._headers()})})
        if self._events is not None:
            self._stream = self._events.open_stream()
            priming = b"id: %d\nretry: %d\ndata: \n\n" % (self._events.add(self._stream, None), self._retry_ms)
            await self._send({"type": "http.response.body", "body": priming, "more_body": True})

    async def _emit(self, frame: bytes) -> None:
        if frame == CLOSE_STREAM:
            if self._http_open and self._stream is not None:
                self._http_open = False
                await self._send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        event_id = self._events.add(self._stream, frame) if self._events is not None and self._stream is not None else None
        if self._http_open:
            await self._send({"type": "http.response.body", "body": _sse(frame, event_id), "more_body": True})


class _RequestsResponse:
    """An ASGI response that runs the POST's request(s) and answers them (see `_ResponseWriter`).

    One request runs inline in the ASGI task: no extra task, queue or task group, which is most of
    the cost of a small call. In the stateless era a client that closes the connection cancels its
    request (2026-07-28 transports: closing the response stream is the cancellation signal), so
    there a watcher task runs beside it. In handshake sessions disconnection is not cancellation
    (the client sends `notifications/cancelled`), so nothing watches. A batch (handshake era only)
    runs its requests concurrently and is answered with one JSON array.
    """

    def __init__(
        self, session: Session, requests: list[Request], *, sse_ok: bool, stateless: bool, batch: bool,
        headers: Callable[[], dict[str, str]] = dict, events: _EventLog | None = None, retry_ms: int = 1000,
    ) -> None:
        self.session = session
        self.requests = requests
        self.sse_ok = sse_ok
        self.stateless = stateless
        self.batch = batch
        self.headers = headers
        self.events = events
        self.retry_ms = retry_ms

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        writer = _ResponseWriter(
            send, sse_ok=self.sse_ok and not self.batch, stateless=self.stateless, headers=self.headers,
            events=self.events, retry_ms=self.retry_ms,
        )
        if self.batch:
            await writer.finish(await self._answer_batch(), batch=True)
            return
        rpc = self.requests[0]
        routes = self.session.transport.routes  # type: ignore[attr-defined]
        routes.by_request[rpc.id] = writer
        token = current_request.set(rpc.id)
        try:
            if self.stateless:
                await self._answer_unless_disconnected(rpc, writer, receive)
            else:
                frame = await self.session.answer(rpc)
                await writer.finish([frame] if frame is not None else [])
        finally:
            current_request.reset(token)
            routes.by_request.pop(rpc.id, None)

    async def _answer_unless_disconnected(self, rpc: Request, writer: _ResponseWriter, receive: Receive) -> None:
        # Each stateless POST has a session of its own, so cancelling all of it cancels just this request.
        disconnected = False

        async def watch() -> None:
            nonlocal disconnected
            while (await receive())["type"] != "http.disconnect":
                pass
            disconnected = True
            self.session.cancel_all()

        frame: bytes | None = None
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # not asyncio (e.g. trio under hypercorn): a task group
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(watch)
                frame = await self.session.answer(rpc)
                task_group.cancel_scope.cancel()
        else:  # asyncio (uvicorn): a bare task, far cheaper than a task group on every call
            watcher = asyncio.get_running_loop().create_task(watch())
            try:
                frame = await self.session.answer(rpc)
            finally:
                watcher.cancel()
        if disconnected:
            writer.abandon()
        else:
            await writer.finish([frame] if frame is not None else [])

    async def _answer_batch(self) -> list[bytes]:
        routes = self.session.transport.routes  # type: ignore[attr-defined]
        responses: dict[Any, bytes] = {}

        async def run(rpc: Request) -> None:
            token = current_request.set(rpc.id)
            try:
                frame = await self.session.answer(rpc)
                if frame is not None:
                    responses[rpc.id] = frame
            finally:
                current_request.reset(token)
                routes.by_request.pop(rpc.id, None)

        async with anyio.create_task_group() as task_group:
            for rpc in self.requests:
                routes.by_request[rpc.id] = _DROP
                task_group.start_soon(run, rpc)
        return [responses[r.id] for r in self.requests if r.id in responses]


_JSON_HEAD = [(b"content-type", b"application/json")]


def _raw_headers(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    return [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]


def _status_of(frame: bytes, stateless: bool) -> int:
    if not stateless or b'"error":' not in frame:
        return 200
    message = orjson.loads(frame)
    error = message.get("error") if isinstance(message, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return STATELESS_STATUS.get(code, 200) if isinstance(code, int) else 200


def decode_header_value(raw: str) -> str | None:
    """An `Mcp-Name` / `Mcp-Param-*` value: `=?base64?<base64 of UTF-8>?=` decoded (None when the
    Base64 is malformed), anything else literally (SEP-2243)."""
    value = raw.strip()
    if len(value) < len(BASE64_OPEN) + len(BASE64_CLOSE) or not (value.startswith(BASE64_OPEN) and value.endswith(BASE64_CLOSE)):
        return value
    body = value[len(BASE64_OPEN) : -len(BASE64_CLOSE)]
    if len(body) % 4 or not _BASE64_BODY.match(body):
        return None
    try:
        return base64.b64decode(body, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def _header_matches(decoded: str, value: Any) -> bool:
    if isinstance(value, bool):
        return decoded == ("true" if value else "false")
    if isinstance(value, (int, float)):
        try:
            return float(decoded) == float(value)
        except ValueError:
            return False
    if isinstance(value, str):
        return decoded == value
    return True  # objects and arrays are never mirrored (such annotations are invalid)


def _error_response(request_id: Any, code: int, message: str, status: int, data: Any = None) -> Response:
    return Response(
        jsonrpc.encode_error(request_id, code, message, data), status_code=status, media_type="application/json"
    )


def _no_cache() -> dict[str, str]:
    return {"Cache-Control": "no-cache, no-transform", "X-Accel-Buffering": "no"}


def create_app(server: ServerStub, **options: Any) -> StreamableHTTPApp:
    """The ASGI app; mount it in any ASGI application (Starlette, FastAPI, ...)."""
    return StreamableHTTPApp(server, HttpOptions(**options))


def serve_http(
    server: ServerStub, host: str = "127.0.0.1", port: int = 3001, path: str = "/mcp", *, log_level: str = "warning",
    http: Literal["auto", "h11", "httptools"] = "auto", loop: Literal["auto", "asyncio", "uvloop"] = "auto",
    **options: Any,
) -> None:
    """`serve_http(MyServer(), port=3001)`: run the server on uvicorn until interrupted.

    `http` and `loop` choose uvicorn's HTTP parser and event loop; "auto" takes httptools and uvloop
    (both in the `http` extra) where installed, "h11" / "asyncio" the pure-Python ones."""
    import uvicorn

    if host not in LOCAL_HOSTS and "allowed_hosts" not in options:
        log.warning("binding %s: DNS-rebinding protection still only admits Host headers of %s", host, ", ".join(LOCAL_HOSTS))
    app = create_app(server, path=path, **options)
    uvicorn.run(app, host=host, port=port, log_level=log_level, lifespan="on", http=http, loop=loop)
