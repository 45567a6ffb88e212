"""Answering a POST and resuming its stream: the response writer and the event log.

A request's answer is plain JSON unless its handler sends something first (progress, a log, a
server-to-client request): then it becomes an SSE stream that carries those messages and ends with
the response. In resumable handshake sessions every SSE event is numbered and kept (bounded) in the
session's `EventLog`, so a client whose stream broke resumes it with GET + `Last-Event-ID`.
"""

from __future__ import annotations

import itertools
import logging
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
from anyio.streams.memory import MemoryObjectSendStream
from starlette.responses import Response
from starlette.types import Send

from . import jsonrpc
from .session import Answer

log = logging.getLogger("mcp_bindings.runtime.http")

JSON_HEAD = [(b"content-type", b"application/json")]


def raw_headers(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    return [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]


def error_response(request_id: Any, code: int, message: str, status: int, data: Any = None) -> Response:
    """A JSON-RPC error as a plain JSON HTTP response (for what is refused before it runs)."""
    body = jsonrpc.encode_error(request_id, code, message, data)
    return Response(body, status_code=status, media_type="application/json")


def no_cache() -> dict[str, str]:
    return {"Cache-Control": "no-cache, no-transform", "X-Accel-Buffering": "no"}


CLOSE_STREAM = b""  # in a response's frame queue: end the HTTP stream now (never a real frame)


@dataclass(eq=False)
class StreamRecord:
    finished: bool = False
    live: MemoryObjectSendStream[tuple[int, bytes]] | None = None  # a resuming GET, if attached


class EventLog:
    """The numbered SSE events of one session's POST streams, kept (bounded) for resumption."""

    def __init__(self, limit: int) -> None:
        self._ids = itertools.count(1)
        self._stream_ids = itertools.count(1)
        self._events: deque[tuple[int, str, bytes | None]] = deque(maxlen=limit)
        self._streams: OrderedDict[str, StreamRecord] = OrderedDict()
        self._limit = limit

    def open_stream(self) -> str:
        key = f"s{next(self._stream_ids)}"
        self._streams[key] = StreamRecord()
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

    def resume(self, last_event_id: str) -> tuple[str, list[tuple[int, bytes]], StreamRecord] | None:
        """The stream `last_event_id` belongs to, its later events, and its record; None if unknown."""
        if not last_event_id.isdigit():
            return None
        wanted = int(last_event_id)
        stream = next((key for event_id, key, _ in self._events if event_id == wanted), None)
        record = self._streams.get(stream) if stream is not None else None
        if stream is None or record is None:
            return None
        later = [
            (event_id, frame)
            for event_id, key, frame in self._events
            if key == stream and event_id > wanted and frame is not None
        ]
        return stream, later, record


def sse_event(frame: bytes, event_id: int | None = None) -> bytes:
    head = b"id: %d\n" % event_id if event_id is not None else b""
    return head + b"event: message\ndata: " + frame + b"\n\n"


class FrameSink(Protocol):
    async def send(self, frame: bytes) -> None: ...


class DropFrames:
    """Where a batch's server messages go: a batch is answered with one JSON array, so messages sent
    before the responses cannot reach the client."""

    async def send(self, frame: bytes) -> None:
        log.debug("a server message during a batch cannot be delivered (JSON answer); dropped")


DROP = DropFrames()


class ResponseWriter:
    """The answer to one POST: a JSON body, unless a handler sends something before its response
    (progress, a log, a server-to-client request) — then an SSE stream that carries those messages
    and ends with the response.

    With an event log (resumable handshake sessions) the SSE stream opens with a priming event (id,
    `retry:`, empty data), numbers every event, and may be ended early by the handler
    (`close_stream`): the request goes on, and its later events wait in the log for a GET with
    `Last-Event-ID`.
    """

    def __init__(
        self,
        send: Send,
        *,
        sse_ok: bool,
        status: Callable[[int | None], int],
        headers: Callable[[], dict[str, str]],
        events: EventLog | None,
        retry_ms: int,
    ) -> None:
        self._send = send
        self._sse_ok = sse_ok
        self._status = status
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

    async def finish(self, answers: list[Answer], *, batch: bool = False) -> None:
        """Send the response(s): the last SSE event(s), or the whole JSON answer."""
        self._finished = True
        frames = [answer.frame for answer in answers]
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
            status, body = self._status(answers[0].error_code), frames[0]
        extra = self._headers()
        if body:
            head = JSON_HEAD + raw_headers(extra) if extra else JSON_HEAD
        else:
            head = raw_headers(extra)
        await self._send({"type": "http.response.start", "status": status, "headers": head})
        await self._send({"type": "http.response.body", "body": body, "more_body": False})

    def abandon(self) -> None:
        """The request ended without a response (cancelled): close its stream in the event log."""
        if self._events is not None and self._stream is not None:
            self._events.finish(self._stream)

    async def _open_stream(self) -> None:
        self.streaming = True
        await self._send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": raw_headers({"content-type": "text/event-stream", **no_cache(), **self._headers()}),
            }
        )
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
        event_id = (
            self._events.add(self._stream, frame) if self._events is not None and self._stream is not None else None
        )
        if self._http_open:
            await self._send({"type": "http.response.body", "body": sse_event(frame, event_id), "more_body": True})
