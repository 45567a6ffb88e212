"""A live Streamable HTTP server behind a replay (`new_episodes`): a message the recording cannot
answer is POSTed to the server's URL and what comes back (a JSON answer, or an SSE stream of the
server's notifications and requests, then the answer) goes to the client on the stream of the
request it answers. A handshake-era client's `initialize` and `notifications/initialized` are given
to the server first (the replay answered them from the recording), and the session it opens is
used from then on; a stateless-era request stands alone and keeps the client's `Mcp-*` headers.
The client's answers to the server's requests are POSTed back the same way."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, cast

import anyio
import anyio.abc
import httpx

from mcp_bindings.runtime.client.http import sse_events
from mcp_bindings.runtime.recording.compare import first_message, what_is
from mcp_bindings.runtime.recording.live_fallback import HANDSHAKE_ID, HandshakeKept
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR
from mcp_bindings.runtime.rpc.jsonrpc import encode_error
from mcp_bindings.runtime.rpc.transport import Transport
from mcp_bindings.v2025_11_25 import names as v2025

PASSED_HEADERS = ("mcp-protocol-version", "mcp-method", "mcp-name")  # and every `mcp-param-*`


def is_url(server: Sequence[str]) -> bool:
    """Whether a live server is a URL (one word, http or https) rather than a command."""
    return len(server) == 1 and server[0].startswith(("http://", "https://"))


def _passed(headers: Mapping[str, str]) -> dict[str, str]:
    """The client's headers a live server needs to read a stateless-era request as it was sent."""
    return {k: v for k, v in headers.items() if k.lower() in PASSED_HEADERS or k.lower().startswith("mcp-param-")}


class HttpLiveFallback(HandshakeKept):
    def __init__(self, url: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__()
        self.url = url
        self.headers = dict(headers or {})  # e.g. Authorization, for every request to the live server
        self._session: str | None = None
        self._version: str | None = None
        self._started = False
        self.handshake_id: Any = None  # the id of the initialize the live server answered first
        self._lock = anyio.Lock()
        self._http = httpx.AsyncClient(timeout=httpx.Timeout(30.0, read=None))

    def _request_headers(self, client: Mapping[str, str]) -> dict[str, str]:
        headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
        headers.update(_passed(client))
        headers.update(self.headers)
        if self._session is not None:
            headers["mcp-session-id"] = self._session
        if self._version is not None:
            headers["mcp-protocol-version"] = self._version
        return headers

    async def _start(self, first: dict[str, Any]) -> None:
        """Give the live server the client's handshake, once (nothing for a stateless-era client, nor
        when the first message it gets is the client's `initialize` itself)."""
        async with self._lock:
            if self._started or self.handshake is None:
                return
            self._started = True
            self.live_handshake = first.get("method") == v2025.INITIALIZE
            self.handshake_id = first.get("id") if self.live_handshake else HANDSHAKE_ID
            if self.live_handshake:
                return
            request, headers = {**self.handshake, "id": HANDSHAKE_ID}, self._request_headers({})
            async with self._http.stream("POST", self.url, json=request, headers=headers) as response:
                self._session = response.headers.get("mcp-session-id")
                async for frame in _frames(response):
                    self._negotiated(first_message(frame))
            if self.initialized is not None:
                await self._http.post(self.url, json=self.initialized, headers=self._request_headers({}))

    async def forward(self, message: dict[str, Any], client: Transport, group: anyio.abc.TaskGroup) -> None:
        """POST `message` to the live server in `group`; what it answers goes to `client` (the
        replay's stream of the client's request; its `request_headers`, if it has them, are the
        client's own)."""
        await self._start(message)
        if self.live_handshake and message.get("method") == v2025.INITIALIZE:  # its session is the one to use
            await self._exchange(message, self._request_headers({}), client)
            return
        headers = self._request_headers(cast("Mapping[str, str]", getattr(client, "request_headers", {})))
        group.start_soon(self._exchange, message, headers, client)

    async def _exchange(self, message: dict[str, Any], headers: dict[str, str], client: Transport) -> None:
        request_id = message.get("id") if "method" in message else None
        answered = False
        failure = "ended its answer without a result"
        try:
            async with self._http.stream("POST", self.url, json=message, headers=headers) as response:
                if message.get("method") == v2025.INITIALIZE:
                    self._session = response.headers.get("mcp-session-id")
                if response.status_code >= 400 and "json" not in response.headers.get("content-type", ""):
                    failure = f"did not answer it: HTTP {response.status_code}"
                else:
                    async for frame in _frames(response):
                        answered = await self._relay(frame, request_id, client) or answered
        except httpx.HTTPError as exc:
            failure = f"did not answer it: {exc}"
        if request_id is not None and not answered:
            text = f"{what_is(message)}: the live server at {self.url} {failure}"
            await client.send(encode_error(request_id, INTERNAL_ERROR, text), request_id)

    async def _relay(self, frame: bytes, request_id: Any, client: Transport) -> bool:
        """Send one message of the live server to the client; whether it answered `request_id`."""
        try:
            message = json.loads(frame)
        except ValueError:
            return False
        self._negotiated(first_message(frame))
        answers = isinstance(message, dict) and "method" not in message and message.get("id") == request_id
        await client.send(frame, request_id if answers and request_id is not None else None)
        return answers and request_id is not None

    def _negotiated(self, message: dict[str, Any]) -> None:
        """Keep the version the live server's answer to the handshake (ours or the client's) states."""
        result = message.get("result")
        if message.get("id") == self.handshake_id and isinstance(result, dict):
            version = cast("dict[str, Any]", result).get("protocolVersion")
            self._version = version if isinstance(version, str) else self._version

    async def aclose(self) -> None:
        if self._http.is_closed:  # closed already (the replay ends it, and so may its owner)
            return
        if self._session is not None:
            with anyio.move_on_after(5):
                try:
                    await self._http.delete(self.url, headers=self._request_headers({}))
                except httpx.HTTPError:
                    pass
        await self._http.aclose()


async def _frames(response: httpx.Response) -> AsyncIterator[bytes]:
    """The messages of a live server's answer as they arrive: its SSE events' data, or its JSON body."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        async for event in sse_events(response):
            yield "\n".join(event.data).encode()
    elif (body := await response.aread()).strip():
        yield body
