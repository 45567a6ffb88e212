"""Client transports over HTTP (httpx): Streamable HTTP for both wire eras, and legacy HTTP+SSE.

Each POST's answer (JSON or an SSE stream) is fed into the session's inbound queue, so the session
engine sees one ordered stream of messages whatever the transport. A response stream that breaks
before its response arrived is resumed, after the server's `retry:` delay, with a GET carrying
`Last-Event-ID` when the server numbered its events. A request whose exchange fails (no connection,
HTTP 502 / 503 / 504, the connection closing before the answer) raises `DeliveryFailed` saying how
far it got; `client_retry` decides whether to send it again (under a new id: the 2026-07-28 rule),
and a repeated attempt goes out on a new connection.
A request's POST lives as long as its caller: cancelling the caller (or its timeout) closes the
response stream, which is how a stateless (2026-07-28) request is cancelled over HTTP.
"""

from __future__ import annotations

import math
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar, Unpack
from urllib.parse import urljoin, urlsplit

import anyio
import orjson
from anyio.abc import TaskGroup

from mcp_bindings.runtime.rpc.extras import missing

try:
    import httpx
except ModuleNotFoundError as exc:  # the `http` extra
    raise missing(exc, "the HTTP client (mcp_bindings.runtime.client.http)", "http") from None

from mcp_bindings.runtime.client.legacy import HTTP_STATUS
from mcp_bindings.runtime.client.options import ClientArgs, ClientOptions
from mcp_bindings.runtime.client.retry import wants_new_connection
from mcp_bindings.runtime.client.runtime import connect
from mcp_bindings.runtime.client.stub import ClientStub
from mcp_bindings.runtime.rpc import jsonrpc, logs
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, DeliveryFailed
from mcp_bindings.runtime.rpc.jsonrpc import RequestId
from mcp_bindings.runtime.rpc.transport import Features, HeaderHook, QueueTransport
from mcp_bindings.v2025_11_25 import names as v2025

log = logs.logger("http_client")

C = TypeVar("C", bound=ClientStub)
SESSION_HEADER = "Mcp-Session-Id"
MAX_RESUME_ATTEMPTS = 3
DEFAULT_RETRY_MS = 1000  # reconnection delay when the server sent no `retry:` field
# An idle kept-alive connection is dropped after this, before servers drop theirs (uvicorn and
# Node close idle ones after 5 s): a request sent on one the server is closing fails as "cut", which
# for a request not safe to repeat is an error (`client_retry`), so the client keeps clear of it.
KEEPALIVE_EXPIRY_S = 3.0
GATEWAY_FAILURES = (502, 503, 504)  # a proxy or a server that could not take the request (`DeliveryFailed`)
# Failures to connect: the request was never sent. Other transport errors happen once it may have been.
NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
CUT = (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError, httpx.ReadTimeout, httpx.WriteTimeout)


@dataclass(slots=True)
class _SseEvent:
    event: str = "message"
    data: list[str] = field(default_factory=list[str])
    id: str | None = None
    retry: int | None = None


async def sse_events(response: httpx.Response) -> AsyncIterator[_SseEvent]:
    """The events of an SSE response as they arrive (also read by a replay's live HTTP server)."""
    event = _SseEvent()
    async for line in response.aiter_lines():
        if line == "":
            if event.data or event.id is not None or event.retry is not None:
                yield event
            event = _SseEvent()
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "event":
            event.event = value
        elif name == "data":
            event.data.append(value)
        elif name == "id":
            event.id = value
        elif name == "retry" and value.isdigit():
            event.retry = int(value)
    if event.data:
        yield event


@dataclass(slots=True)
class _StreamState:
    """What resuming one SSE stream needs: the last event id and the server's `retry` delay."""

    last_event_id: str | None = None
    retry_ms: int = DEFAULT_RETRY_MS  # the server's `retry:` once it sent one


class StreamableHttpTransport(QueueTransport):
    """Streamable HTTP client transport (handshake sessions and stateless 2026-07-28 requests)."""

    features = Features(message_headers=True, server_stream=True)

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        client: httpx.AsyncClient | None = None,
        timeout: float = 60.0,
        auth: httpx.Auth | None = None,
    ) -> None:
        self.url = url
        self.headers = dict(headers or {})
        # `auth` (e.g. an OAuth flow) sees every request and its 401/403 answers.
        limits = httpx.Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=KEEPALIVE_EXPIRY_S)
        self._client = client or httpx.AsyncClient(timeout=httpx.Timeout(timeout, read=None), auth=auth, limits=limits)
        self._owns_client = client is None
        self._timeout, self._auth = timeout, auth
        # Repeated requests (`client_retry`) go through a client that keeps no connection alive, so
        # each is sent on a new one (only with our own client: a caller's client is used as given).
        self._fresh_client: httpx.AsyncClient | None = None
        self._inbound_send, self._inbound = anyio.create_memory_object_stream[bytes](math.inf)
        self._task_group: TaskGroup | None = None
        self.session_id: str | None = None
        self.protocol_version: str | None = None  # sent as MCP-Protocol-Version once known
        self.header_hook: HeaderHook | None = None  # per-message headers (Mcp-Method, Mcp-Name, Mcp-Param-*)
        self._get_stream_open = False
        # The session's initialize and initialized messages, replayed to open a new session when the
        # server answers 404 (it expired or forgot ours): the spec's MUST for clients.
        self._handshake: list[bytes] = []
        self._renew_lock = anyio.Lock()
        self._closing = False

    async def __aenter__(self) -> StreamableHttpTransport:
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()
        assert self._task_group is not None
        self._task_group.cancel_scope.cancel()
        await self._task_group.__aexit__(None, None, None)
        if self._owns_client:
            await self._client.aclose()
        if self._fresh_client is not None:
            await self._fresh_client.aclose()

    def _client_for(self, request_id: Any) -> httpx.AsyncClient:
        """The client to POST with: a repeated request goes on a new connection (`client_retry`)."""
        if request_id is None or not self._owns_client or not wants_new_connection():
            return self._client
        if self._fresh_client is None:
            limits = httpx.Limits(max_keepalive_connections=0)
            timeout = httpx.Timeout(self._timeout, read=None)
            self._fresh_client = httpx.AsyncClient(timeout=timeout, auth=self._auth, limits=limits)
        return self._fresh_client

    def use_version(self, version: str | None, header_hook: HeaderHook | None) -> None:
        """The negotiated version (sent as MCP-Protocol-Version) and the per-message headers."""
        self.protocol_version = version
        self.header_hook = header_hook

    async def send(self, frame: bytes, related: RequestId | None = None) -> None:
        """POST a message. A request's POST runs in the caller's task, so the caller's cancellation
        or timeout closes its response stream (the cancellation signal of the stateless era); so
        does the message that ends the handshake (it must reach the server before any request
        that follows: a server may add tools when it arrives). Other notifications and responses
        are POSTed in the background."""
        assert self._task_group is not None, "use the transport as an async context manager"
        message = orjson.loads(frame)
        request = isinstance(message, dict) and "method" in message and "id" in message
        if request or len(self._handshake) == 1:  # initialize POSTed, the handshake not ended yet
            await self._post(frame, message)
        else:
            self._task_group.start_soon(self._post, frame, message)

    def _request_headers(self, message: Any) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **self.headers,
        }
        if self.session_id:
            headers[SESSION_HEADER] = self.session_id
        if self.protocol_version:
            headers["MCP-Protocol-Version"] = self.protocol_version
        if self.header_hook is not None and isinstance(message, dict):
            headers.update(self.header_hook(message))
        return headers

    def _get_headers(self, stream: _StreamState) -> dict[str, str]:
        """Headers of a GET that opens or resumes an SSE stream (Last-Event-ID once it has one)."""
        headers = self._request_headers(None)
        headers["Accept"] = "text/event-stream"
        headers.pop("Content-Type", None)
        if stream.last_event_id is not None:
            headers["Last-Event-ID"] = stream.last_event_id
        return headers

    async def _post(self, frame: bytes, message: Any, *, renewed: bool = False) -> None:
        request_id = message.get("id") if isinstance(message, dict) and "method" in message else None
        method = message.get("method") if isinstance(message, dict) else None
        if method == v2025.INITIALIZE and not self.session_id:
            self._handshake = [frame]
        elif method == v2025.NOTIFICATIONS_INITIALIZED and len(self._handshake) == 1:
            self._handshake.append(frame)
        sent_session = self.session_id
        try:
            async with self._client_for(request_id).stream(
                "POST", self.url, content=frame, headers=self._request_headers(message)
            ) as response:
                if response.status_code == 404 and sent_session and not renewed and len(self._handshake) == 2:
                    await response.aread()
                    if await self._renew_session(sent_session):
                        await self._post(frame, message, renewed=True)
                        return
                session_id = response.headers.get(SESSION_HEADER)
                if session_id and response.status_code < 400:  # an error assigns none (mcp 1.x's 400 has one)
                    self.session_id = session_id
                await self._consume(response, request_id, message)
        except (*NOT_SENT, *CUT) as exc:
            if request_id is None:
                log.warning("could not POST a message: %s", exc)
                return
            if isinstance(exc, NOT_SENT):
                reason = f"HTTP request failed: could not connect to {self.url}: {_what(exc)}"
                raise DeliveryFailed(INTERNAL_ERROR, reason, stage="connect") from None
            raise DeliveryFailed(INTERNAL_ERROR, f"HTTP request failed: {_what(exc)}", stage="cut") from None
        except (httpx.HTTPError, UnicodeError, ValueError) as exc:
            # UnicodeError / ValueError: a header value httpx cannot send. Fail this request only;
            # an exception escaping here would end the whole connection.
            if request_id is not None:
                await self._fail(request_id, f"HTTP request failed: {exc}")
            else:
                log.warning("could not POST a message: %s", exc)

    async def _consume(self, response: httpx.Response, request_id: Any, message: Any) -> None:
        content_type = response.headers.get("content-type", "")
        if response.status_code == 202 or (not content_type and response.status_code < 300):
            return
        if request_id is not None and response.status_code in GATEWAY_FAILURES:
            raise await _gateway_failure(response, request_id)
        if "text/event-stream" in content_type:
            stream = _StreamState()
            answered = await self._pump_sse(response, request_id, stream)
            if request_id is not None and not answered:
                await self._resume(request_id, stream)
            return
        body = await response.aread()
        frame = _jsonrpc_answer(body, request_id, response.status_code) if "application/json" in content_type else None
        if frame is not None:
            await self._deliver(frame)
        elif request_id is not None:
            await self._fail(request_id, not_mcp(response, body), {HTTP_STATUS: response.status_code})
        elif response.status_code >= 400:
            log.warning("POST of a %s answered HTTP %s", _kind(message), response.status_code)

    async def _pump_sse(self, response: httpx.Response, request_id: Any, stream: _StreamState | None = None) -> bool:
        """Feed SSE messages in; True once the response to `request_id` arrived (reading stops
        there: the server is done with that stream, and a resumed GET stream may never close).
        The last event id and `retry` delay seen go to `stream`, for resuming."""
        stream = stream or _StreamState()
        try:
            async for event in sse_events(response):
                if event.id is not None:
                    stream.last_event_id = event.id
                if event.retry is not None:
                    stream.retry_ms = event.retry
                data = "\n".join(event.data).encode()
                if event.event != "message" or not data.strip():
                    continue  # e.g. a priming event: an id (and retry), empty data
                await self._deliver(data)
                if request_id is not None and _answers(data, request_id):
                    return True
        except httpx.HTTPError as exc:
            log.debug("response stream broke: %s", exc)
        return False

    async def _resume(self, request_id: Any, stream: _StreamState) -> None:
        """The stream closed before the response: wait the server's `retry` delay, then resume it
        with a GET carrying `Last-Event-ID` (possible only if the server numbered its events)."""
        for _ in range(MAX_RESUME_ATTEMPTS):
            if stream.last_event_id is None:
                break
            await anyio.sleep(stream.retry_ms / 1000)
            headers = self._get_headers(stream)
            try:
                async with self._client.stream("GET", self.url, headers=headers) as response:
                    if response.status_code >= 400:
                        break
                    if await self._pump_sse(response, request_id, stream):
                        return
            except httpx.HTTPError:
                continue
        reason = "the response stream closed before the response arrived"
        raise DeliveryFailed(INTERNAL_ERROR, reason, {"retryable": True}, stage="cut")

    async def _fail(self, request_id: Any, reason: str, data: Any = None) -> None:
        await self._deliver(jsonrpc.encode_error(request_id, INTERNAL_ERROR, reason, data))

    async def _deliver(self, frame: bytes) -> None:
        """Hand a message to the session; after `aclose` (streams still draining) it is dropped."""
        try:
            await self._inbound_send.send(frame)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            log.debug("dropping a message that arrived after close: %.200r", frame)

    async def open_server_stream(self) -> None:
        """The optional server-to-client stream of a handshake session (405 means none)."""
        if self._get_stream_open or self._task_group is None:
            return
        self._get_stream_open = True
        self._task_group.start_soon(self._get_loop)

    async def _renew_session(self, expired: str) -> bool:
        """The server no longer knows session `expired`: open a new one by replaying the handshake
        (initialize, then initialized), and reopen the GET stream. True when there is a new session."""
        async with self._renew_lock:
            if self.session_id != expired:
                return self.session_id is not None  # another request renewed it meanwhile
            self.session_id = None
            initialize, initialized = self._handshake
            try:
                response = await self._client.post(self.url, content=initialize, headers=self._request_headers(None))
            except httpx.HTTPError as exc:
                log.warning("could not open a new session after a 404: %s", exc)
                return False
            session_id = response.headers.get(SESSION_HEADER)
            if response.status_code >= 400 or not session_id:
                log.warning("could not open a new session after a 404: HTTP %s", response.status_code)
                return False
            self.session_id = session_id
            try:
                await self._client.post(self.url, content=initialized, headers=self._request_headers(None))
            except httpx.HTTPError as exc:
                log.debug("notifications/initialized of the new session failed: %s", exc)
            log.info("the server expired the MCP session; continuing in a new one")
        if self._get_stream_open and self._task_group is not None:
            self._task_group.start_soon(self._get_loop)
        return True

    async def _get_loop(self) -> None:
        """Listen on the session's GET stream; reopen it (with Last-Event-ID) when it drops, while the
        session lasts. A 4xx ends it: none offered (405), or the session is gone (404: the next POST
        opens a new session, and the stream with it)."""
        stream = _StreamState()
        session = self.session_id
        for attempt in range(MAX_RESUME_ATTEMPTS + 1):
            headers = self._get_headers(stream)
            try:
                async with self._client.stream("GET", self.url, headers=headers) as response:
                    if response.status_code >= 400:
                        return
                    await self._pump_sse(response, None, stream)
            except httpx.HTTPError as exc:
                log.debug("the GET stream dropped: %s", exc)
            if self._closing or self.session_id != session or attempt == MAX_RESUME_ATTEMPTS:
                return
            await anyio.sleep(stream.retry_ms / 1000)

    async def aclose(self) -> None:
        self._closing = True
        if self.session_id:
            try:
                with anyio.move_on_after(2):
                    await self._client.delete(self.url, headers=self._request_headers(None))
            except httpx.HTTPError:
                pass
            self.session_id = None
        self._inbound_send.close()


def _jsonrpc_answer(body: bytes, request_id: Any, status: int = 200) -> bytes | None:
    """A JSON body as a frame for the session; None if it is not JSON-RPC (e.g. an HTTP error
    document), which the caller turns into an error for the request rather than let it wait.
    An error carrying `id: null` or an id that is not the request's (a server rejecting the request
    before reading its id; the official SDK 1.x says `"server-error"`) answers the request it was
    posted with, so it gets that id, and, with an HTTP error status, that status in its `data`
    (`httpStatus`: what `client.legacy` reads)."""
    try:
        message = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    if isinstance(message, list):
        return body  # a batch
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    error = message.get("error")
    if request_id is not None and isinstance(error, dict) and message.get("id") != request_id:
        message["id"] = request_id
        data = error.get("data")
        if status >= 400 and (data is None or isinstance(data, dict)):
            error["data"] = {**(data or {}), HTTP_STATUS: status}
        return orjson.dumps(message)
    return body


async def _gateway_failure(response: httpx.Response, request_id: Any) -> DeliveryFailed:
    """HTTP 502 / 503 / 504 to a request: 503, the server (or a proxy) did not take it; 502 / 504, a
    gateway lost its answer (it may have run). The server's JSON-RPC error, if it sent one, is kept."""
    body = await response.aread()
    stage = "refused" if response.status_code == 503 else "cut"
    retry_after = retry_after_seconds(response.headers.get("retry-after"))
    error: Any = None
    if "application/json" in response.headers.get("content-type", ""):
        try:
            error = orjson.loads(body).get("error")
        except (orjson.JSONDecodeError, AttributeError):
            error = None
    if isinstance(error, dict) and isinstance(error.get("code"), int) and isinstance(error.get("message"), str):
        code, message, data = error["code"], error["message"], error.get("data")
        return DeliveryFailed(code, message, data, stage=stage, retry_after=retry_after)
    text = _body_text(response, body)
    message = f"HTTP {response.status_code}: {text}" if text else f"HTTP {response.status_code}"
    return DeliveryFailed(INTERNAL_ERROR, message, stage=stage, retry_after=retry_after)


def _body_text(response: httpx.Response, body: bytes) -> str:
    """A short account of a body that is no MCP message: its first line (at most 200 characters);
    an HTML page is named, not dumped."""
    if "html" in response.headers.get("content-type", "") or body.lstrip()[:1] == b"<":
        return "an HTML page"
    lines = body[:200].decode("utf-8", "replace").strip().splitlines()
    return lines[0] if lines else ""


def not_mcp(response: httpx.Response, body: bytes) -> str:
    """The error of a request answered by something that is no MCP message, in one line: the request,
    the status and what came back (e.g. `POST http://host/ answered HTTP 501 Not Implemented with an
    HTML page, not an MCP response: is this URL the server's MCP endpoint?`)."""
    request = response.request
    text = _body_text(response, body)
    got = f" with {text}" if text == "an HTML page" else (f": {text!r}" if text else "")
    status = f"HTTP {response.status_code} {response.reason_phrase}".strip()
    where = f"{request.method} {request.url}"
    return f"{where} answered {status}{got}, not an MCP response: is this URL the server's MCP endpoint?"


def retry_after_seconds(value: str | None) -> float | None:
    """A `Retry-After` header in seconds (delay-seconds or an HTTP date); None when absent or invalid."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _what(exc: Exception) -> str:
    """An httpx error's text (some carry none: then its kind)."""
    return str(exc) or type(exc).__name__


def _kind(message: Any) -> str:
    if isinstance(message, dict) and isinstance(message.get("method"), str):
        return message["method"]
    return "response" if isinstance(message, dict) else "message"


def _answers(data: bytes, request_id: Any) -> bool:
    try:
        message = orjson.loads(data)
    except orjson.JSONDecodeError:
        return False
    return isinstance(message, dict) and "method" not in message and message.get("id") == request_id


def _origin(url: str) -> tuple[str, str, int | None] | None:
    parts = urlsplit(url)
    try:
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme.lower())
    except ValueError:
        return None
    return parts.scheme.lower(), (parts.hostname or "").lower(), port


def _same_origin_endpoint(url: str, endpoint: str) -> str:
    """The URL a legacy SSE server's `endpoint` event names, resolved against the stream's URL; one on
    another origin (scheme, host, port) is refused: every message, and the connection's credentials,
    would go there."""
    joined = urljoin(url, endpoint)
    if _origin(joined) is None or _origin(joined) != _origin(url):
        raise ConnectionError(
            f"its `endpoint` event names {joined!r}, on another origin than {url!r}: refused "
            "(messages and credentials are sent only to the server's own origin)"
        )
    return joined


class LegacySseTransport(QueueTransport):
    """Client side of the 2024-11-05 HTTP+SSE transport: GET an event stream, POST to its endpoint."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        client: httpx.AsyncClient | None = None,
        auth: httpx.Auth | None = None,
    ) -> None:
        self.url = url
        self.headers = dict(headers or {})
        self._client = client or httpx.AsyncClient(timeout=httpx.Timeout(60.0, read=None), auth=auth)
        self._owns_client = client is None
        self._inbound_send, self._inbound = anyio.create_memory_object_stream[bytes](math.inf)
        self._endpoint: str | None = None
        self._ready = anyio.Event()
        self._failure: Exception | None = None  # why the event stream could not be opened
        self._task_group: TaskGroup | None = None

    async def __aenter__(self) -> LegacySseTransport:
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        try:
            self._task_group.start_soon(self._listen)
            with anyio.fail_after(30):
                await self._ready.wait()
            if self._failure is not None:
                raise ConnectionError(f"could not open {self.url}: {self._failure}") from self._failure
            if self._endpoint is None:
                raise ConnectionError(f"{self.url} sent no `endpoint` event")
        except BaseException:
            # Leave the task group before raising: a task group left open would break the
            # caller's cancel scopes (e.g. an `anyio.fail_after` around `connect_sse`).
            await self.__aexit__(None, None, None)
            raise
        return self

    async def __aexit__(self, *exc: Any) -> None:
        assert self._task_group is not None
        self._task_group.cancel_scope.cancel()
        await self._task_group.__aexit__(None, None, None)
        if self._owns_client:
            await self._client.aclose()

    async def _listen(self) -> None:
        try:
            async with self._client.stream(
                "GET", self.url, headers={"Accept": "text/event-stream", **self.headers}
            ) as response:
                if response.status_code >= 400:
                    raise ConnectionError(f"GET {self.url}: HTTP {response.status_code}")
                async for event in sse_events(response):
                    data = "\n".join(event.data)
                    if event.event == "endpoint":
                        self._endpoint = _same_origin_endpoint(self.url, data.strip())
                        self._ready.set()
                    elif event.event == "message" and data:
                        await self._inbound_send.send(data.encode())
        except (httpx.HTTPError, ConnectionError) as exc:
            log.debug("legacy SSE stream ended: %s", exc)
            self._failure = exc
        finally:
            self._ready.set()
            self._inbound_send.close()

    async def send(self, frame: bytes, related: RequestId | None = None) -> None:
        assert self._endpoint is not None
        response = await self._client.post(
            self._endpoint, content=frame, headers={"Content-Type": "application/json", **self.headers}
        )
        if response.status_code >= 400:
            raise anyio.BrokenResourceError(f"POST {self._endpoint}: HTTP {response.status_code}")

    async def aclose(self) -> None:
        return None


@asynccontextmanager
async def connect_http(
    url: str,
    client: type[C],
    *,
    headers: Mapping[str, str] | None = None,
    auth: httpx.Auth | None = None,
    options: ClientOptions | None = None,
    **args: Unpack[ClientArgs],
) -> AsyncIterator[C]:
    """Connect over Streamable HTTP (`headers` and `auth` go on every HTTP request). `options` (or
    the same as keyword arguments) are `client.connect`'s: see `ClientOptions`; with
    `protocol_version="auto"` the client probes with `server/discover` and falls back to `initialize`."""
    async with StreamableHttpTransport(url, headers=headers, auth=auth) as transport:
        async with connect(transport, client, options=ClientOptions.of(options, args)) as typed:
            yield typed


@asynccontextmanager
async def connect_sse(
    url: str,
    client: type[C],
    *,
    headers: Mapping[str, str] | None = None,
    auth: httpx.Auth | None = None,
    options: ClientOptions | None = None,
    **args: Unpack[ClientArgs],
) -> AsyncIterator[C]:
    """Connect to a legacy (2024-11-05) HTTP+SSE server at its SSE URL (e.g. http://host/sse); the
    options are `connect_http`'s (`protocol_version` defaults to 2024-11-05)."""
    settings = ClientOptions.of(options, args)
    settings = replace(settings, protocol_version=settings.protocol_version or "2024-11-05")
    async with LegacySseTransport(url, headers=headers, auth=auth) as transport:
        async with connect(transport, client, options=settings) as typed:
            yield typed
