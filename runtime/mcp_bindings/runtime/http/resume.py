"""Answering a POST and resuming its stream: the response writer and the event log.

A request's answer is plain JSON unless its handler sends something first (progress, a log, a
server-to-client request): then it becomes an SSE stream that carries those messages and ends with
the response. In resumable handshake sessions every SSE event is numbered and kept in the session's
`EventLog`, so a client whose stream broke resumes it with GET + `Last-Event-ID`. The logs are
bounded (`ReplayLimits`: events and bytes per session, bytes over all sessions, age; the oldest go
first) and released with their session; resuming past what was dropped is answered 410.

Several workers: the logs stay in memory, and a worker that drains hands them over to the shared
backend (`EventLog.snapshot`, written by the scale-out plug-in's `scaleout.handoff`), so a GET with
`Last-Event-ID` that reaches another worker replays the missed events of that stream
(docs/deployment.md).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Protocol

import anyio
from starlette.responses import Response, StreamingResponse
from starlette.types import Send

from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.protocol.policies import policy_file
from mcp_bindings.runtime.rpc import jsonrpc, logs
from mcp_bindings.runtime.rpc.errors import INVALID_REQUEST
from mcp_bindings.runtime.rpc.session import Answer
from mcp_bindings.runtime.rpc.trim import reclaim

log = logs.logger("http")

JSON_HEAD = [(b"content-type", b"application/json")]


def raw_headers(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    return [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]


# The runtime's refusals for want of room (a client's share: 429; the server's bound: 503) end their
# connection: a refused client would otherwise hold it for the keep-alive time, a slot of
# `max_connections` the refusal was meant to leave to others.
CLOSING_STATUSES = frozenset({429, 503})


def error_response(request_id: Any, code: int, message: str, status: int, data: Any = None) -> Response:
    """A JSON-RPC error as a plain JSON HTTP response (for what is refused before it runs); a 429 or
    503 refusal says `Connection: close` (`CLOSING_STATUSES`)."""
    body = jsonrpc.encode_error(request_id, code, message, data)
    headers = {"Connection": "close"} if status in CLOSING_STATUSES else None
    return Response(body, status_code=status, media_type="application/json", headers=headers)


def no_cache() -> dict[str, str]:
    return {"Cache-Control": "no-cache, no-transform", "X-Accel-Buffering": "no"}


CLOSE_STREAM = b""  # in a response's frame queue: end the HTTP stream now (never a real frame)

TRANSPORT_POLICY = policy_file("transports.json")


@cache
def primes_streams(version: str) -> bool:
    """Whether the POST streams of a session of `version` open with a priming event (SEP-1699; the
    first version is in policy/transports.json, later registered versions follow it)."""
    since = json.loads(TRANSPORT_POLICY.read_text(encoding="utf-8"))["sse_priming"]["since"]
    known = list(registry.versions())  # oldest first
    return version in known and since in known and known.index(version) >= known.index(since)


# -- the replay log ------------------------------------------------------------------------------

MIB = 1024 * 1024
EVENT_OVERHEAD = 160  # bytes counted per event beside its frame (the event, its slots in three deques)
ID_DIGITS = 19  # a Last-Event-ID longer than this is not one of ours (event ids are below 2**63)


@dataclass(frozen=True)
class ReplayLimits:
    """Bounds of the SSE replay log (`HttpOptions.max_replay_*`, `replay_ttl_seconds`). Whichever is
    reached first drops the oldest events: per session by count and bytes, over every session of the
    app by bytes, and any event older than `ttl_seconds`."""

    events: int = 1000  # per session
    bytes: int = 16 * MIB  # per session
    total_bytes: int = 128 * MIB  # every session of the app together
    ttl_seconds: float = 300.0


@dataclass(slots=True, eq=False)
class _Event:
    """One numbered SSE event held for replay (`frame` None: a priming event). `log` is None once
    the event has been dropped."""

    id: int
    record: StreamRecord | None
    frame: bytes | None
    size: int  # the frame's length and EVENT_OVERHEAD
    time: float
    log: EventLog | None


@dataclass(slots=True, eq=False)
class StreamRecord:
    """One POST stream of a session: its events still held (oldest first), whether its request has
    ended, and the GET following it, if any."""

    events: deque[_Event] = field(default_factory=deque[_Event])
    finished: bool = False
    dropped_through: int = 0  # the newest of this stream's events that is no longer held
    reader: int = 0  # which GET follows the stream (a newer resumption replaces an older one)
    changed: anyio.Event | None = None  # set when an event is added, dropped, or the stream ends

    def wake(self) -> None:
        if self.changed is not None:
            self.changed.set()
            self.changed = None

    async def changes(self) -> None:
        """Wait until an event is added or dropped, or the stream ends (or a newer GET follows it)."""
        changed = self.changed = self.changed or anyio.Event()
        await changed.wait()


class ReplayStore:
    """The replay logs of one app's sessions: the byte bound over all of them, the age bound (a timer
    on asyncio; on other event loops checked whenever a log is written or read) and giving the memory
    of dropped events back."""

    def __init__(
        self, limits: ReplayLimits | None = None, clock: Callable[[], float] = time.monotonic, first_id: int = 1
    ) -> None:
        self.limits = limits or ReplayLimits()
        self.bytes = 0  # held by every log together, as counted (frames + EVENT_OVERHEAD each)
        self._clock = clock
        self._order: deque[_Event] = deque()  # every log's events, oldest first (dropped ones skipped lazily)
        self._held = 0
        # Event ids, unique over every session of the app (several workers: each numbers from its
        # own `worker_space`, so the workers serving one session number its events apart, and an
        # event id names the worker holding it).
        self._ids = itertools.count(first_id)
        self._logs = False  # whether a log was opened (a flag, not a count: nothing updated per session
        # stays behind in memory the load took)
        self._timer: asyncio.TimerHandle | None = None

    def new_log(self) -> EventLog:
        self._logs = True
        return EventLog(self)

    def number_from(self, first_id: int) -> None:
        """Number events from `first_id` (a worker's space, set as it starts: before any log)."""
        if self._logs:
            raise RuntimeError("event ids are renumbered only before the first session")
        self._ids = itertools.count(first_id)

    def sweep(self, now: float | None = None) -> None:
        """Drop events past the age bound, then the oldest while over the overall byte bound."""
        cutoff = (self._clock() if now is None else now) - self.limits.ttl_seconds
        while self._order:
            head = self._order[0]
            if head.log is None:
                self._order.popleft()
            elif head.time < cutoff or self.bytes > self.limits.total_bytes:
                head.log.drop_oldest()  # the oldest event overall is the oldest of its log
            else:
                break

    def _added(self, event: _Event) -> None:
        self._order.append(event)
        self._held += 1
        self.bytes += event.size
        self.sweep(event.time)
        self._arm()

    def _dropped(self, event: _Event) -> None:
        self._held -= 1
        self.bytes -= event.size
        reclaim(event.size)
        if not self._held:  # every log is empty: no shell of a dropped event outlives them
            self._order.clear()
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        elif len(self._order) > 2 * self._held + 256:  # mostly dropped entries: compact in place (a
            # deque made now, at the load's peak, would pin an arena of the allocator once it is idle)
            held = [e for e in self._order if e.log is not None]
            self._order.clear()
            self._order.extend(held)

    def _arm(self) -> None:
        """A timer for the next event to age out (asyncio only; one at a time)."""
        if self._timer is not None or not self._held:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        head = next((e for e in self._order if e.log is not None), None)
        if head is not None:
            delay = max(0.0, head.time + self.limits.ttl_seconds - self._clock()) + 0.01
            self._timer = loop.call_later(delay, self._expire)

    def _expire(self) -> None:
        self._timer = None
        self.sweep()
        self._arm()


class EventLog:
    """The numbered SSE events of one session's POST streams, held for resumption within the store's
    `ReplayLimits` (the oldest go first) and released with the session (`close`).

    Events are dropped oldest first, so every event id up to `dropped_through` is gone and every
    later one is held: a `Last-Event-ID` either resumes exactly or is answered 410 (`replay`)."""

    def __init__(self, store: ReplayStore | None = None) -> None:
        self.store = store if store is not None else ReplayStore()
        self._ids = self.store._ids  # unique across sessions: another session's id is never taken for one of ours
        self.last_id = 0  # the newest event id issued
        self.dropped_through = 0
        self.bytes = 0
        self.closed = False
        self.events: deque[_Event] = deque()
        self._followed: set[StreamRecord] = set()  # streams a GET follows (woken on close)

    def __len__(self) -> int:
        return len(self.events)

    def open_stream(self) -> StreamRecord:
        return StreamRecord()

    def add(self, record: StreamRecord, frame: bytes | None) -> int:
        """Number an event (None: the priming event) and hold it for replay, within the bounds."""
        event_id = next(self._ids)
        self.last_id = event_id
        if self.closed:
            return event_id
        size = EVENT_OVERHEAD + (len(frame) if frame else 0)
        event = _Event(event_id, record, frame, size, self.store._clock(), self)
        self.events.append(event)
        record.events.append(event)
        self.bytes += event.size
        self.store._added(event)
        limits = self.store.limits
        while len(self.events) > limits.events or self.bytes > limits.bytes:
            self.drop_oldest()  # an event larger than the bound itself is not held either
        record.wake()
        return event_id

    def drop_oldest(self) -> None:
        event = self.events.popleft()
        record = event.record
        assert record is not None and record.events[0] is event
        record.events.popleft()
        record.dropped_through = self.dropped_through = event.id
        self.bytes -= event.size
        event.log = event.record = None
        event.frame = None
        self.store._dropped(event)
        record.wake()

    def finish(self, record: StreamRecord) -> None:
        record.finished = True
        record.wake()

    def close(self) -> None:
        """The session ended: drop every event now and end the GETs following its streams."""
        if self.closed:
            return
        self.closed = True
        while self.events:
            self.drop_oldest()
        for record in list(self._followed):
            record.wake()

    def snapshot(self) -> list[HandedStream]:
        """The streams whose events are still held, for another worker (`handoff`): per stream whether
        its request ended, and its events as (id, frame, wall-clock expiry)."""
        self.store.sweep()
        now, wall, ttl = self.store._clock(), time.time(), self.store.limits.ttl_seconds
        streams: dict[StreamRecord, HandedStream] = {}
        for event in self.events:
            record = event.record
            assert record is not None
            stream = streams.get(record)
            if stream is None:
                stream = streams[record] = HandedStream(record.finished, [])
            frame = event.frame.decode() if event.frame is not None else None
            stream.events.append((event.id, frame, wall + event.time + ttl - now))
        return list(streams.values())

    def replay(self, last_event_id: str) -> Response | None:
        """The answer to a GET with `Last-Event-ID`: the rest of that event's stream, then the stream
        itself until its request is answered. 410 when events after that one are no longer held (the
        log's bounds dropped them): the stream cannot be resumed, and the client learns it at once.
        None when the id is not one this session issued (not a resumption)."""
        point = self.resume_point(last_event_id)
        if point is None:
            return None
        wanted = event_id_of(last_event_id)
        if isinstance(point, int):
            return gone(wanted)
        return StreamingResponse(self._follow(point, wanted), media_type="text/event-stream", headers=no_cache())

    def resume_point(self, last_event_id: str) -> StreamRecord | int | None:
        """The stream whose events after `last_event_id` a resumption sends; 410 when they are no
        longer all held; None when the id is not one this session issued."""
        wanted = event_id_of(last_event_id)
        if not 0 < wanted <= self.last_id:
            return None
        self.store.sweep()
        if wanted <= self.dropped_through or self.closed:
            return 410
        # Held events are all after dropped_through: an id not among them is not of this session.
        return next((e.record for e in self.events if e.id == wanted), None)

    def held_after(self, record: StreamRecord, cursor: int) -> list[tuple[int, bytes | None]]:
        """`record`'s held events after `cursor` (id, frame; None: a priming event)."""
        return [(e.id, e.frame) for e in record.events if e.id > cursor]

    async def _follow(self, record: StreamRecord, cursor: int) -> AsyncIterator[bytes]:
        record.reader += 1
        me = record.reader
        record.wake()  # an older GET following this stream ends
        self._followed.add(record)
        try:
            while record.reader == me and not self.closed:
                if record.dropped_through > cursor:
                    return  # fell behind the log's bounds: the client's next resumption is answered 410
                # Frames are taken now: what the log drops while they are written still goes out.
                pending = [(e.id, e.frame) for e in record.events if e.id > cursor]
                for event_id, frame in pending:
                    cursor = event_id
                    if frame is not None:
                        yield sse_event(frame, event_id)
                if pending:
                    continue
                if record.finished:
                    return
                await record.changes()
        finally:
            if record.reader == me:
                self._followed.discard(record)


# -- what a drained worker hands over (`scaleout.handoff`) -------------------------------------------


@dataclass
class HandedStream:
    """One POST stream handed over by a draining worker: whether its request had ended, and its
    held events (id, frame or None for a priming event, wall-clock time it expires)."""

    finished: bool
    events: list[tuple[int, str | None, float]]


def gone(wanted: int) -> Response:
    """410: the events after `wanted` are no longer held."""
    message = (
        f"Gone: the events after Last-Event-ID {wanted} are no longer held (the replay log is bounded "
        "by events, bytes and age); this stream cannot be resumed"
    )
    return error_response(None, INVALID_REQUEST, message, 410, {"lastEventId": str(wanted)})


def event_id_of(last_event_id: str) -> int:
    """The event id a `Last-Event-ID` names (-1: none of ours). ASCII digits only (str.isdigit admits
    superscripts and other scripts' digits), short enough for int()."""
    text = last_event_id.strip()
    return int(text) if 0 < len(text) <= ID_DIGITS and text.isascii() and text.isdigit() else -1


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


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class ResponseWriter:
    """The answer to one POST: a JSON body, unless a handler sends something before its response
    (progress, a log, a server-to-client request) — then an SSE stream that carries those messages
    and ends with the response.

    With an event log (resumable handshake sessions) every SSE event is numbered. Where the session's
    version has it (`primes_streams`), the stream opens with a priming event (id, `retry:`, empty
    data) and may be ended early by the handler (`close_stream`): the request goes on, and its later
    events wait in the log for a GET with `Last-Event-ID`.
    """

    sse_ok: bool  # the client takes SSE (else server messages before the response are dropped)
    status: Callable[[int | None], int]  # the HTTP status of a JSON answer, by its error code
    headers: Callable[[], dict[str, str]]  # more response headers, asked when the response starts
    events: EventLog | None
    retry_ms: int
    priming: bool = False  # only with `events`
    _send: Send = field(init=False)  # the ASGI send of the response, set when it is sent
    _stream: StreamRecord | None = field(init=False, default=None)  # this POST's stream in the event log
    _lock: anyio.Lock | None = field(init=False, default=None)  # created on the first server message (rare path)
    streaming: bool = field(init=False, default=False)  # the SSE head has been sent
    _http_open: bool = field(init=False, default=True)
    # the response is on its way: later server messages have nowhere to go
    _finished: bool = field(init=False, default=False)

    async def send(self, frame: bytes) -> None:
        """A server message for the client while the request runs (or CLOSE_STREAM)."""
        if self._finished:
            log.debug("a server message after the response was dropped")
            return
        if not self.sse_ok:
            log.debug("the client takes JSON only; a server message before the response was dropped")
            return
        if frame == CLOSE_STREAM and not self.priming:
            return  # without a primed (numbered) stream the client could not resume: keep it open
        if self._lock is None:
            self._lock = anyio.Lock()  # handlers may send from several tasks at once
        async with self._lock:
            if not self.streaming:
                if not self._http_open:
                    return  # abandoned while this message waited: the client is gone
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
                if self.events is not None and self._stream is not None:
                    self.events.finish(self._stream)
                if self._http_open:
                    self._http_open = False
                    await self._send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        if not frames:
            status, body = 202, b""
        elif batch:
            status, body = 200, b"[" + b",".join(frames) + b"]"
        else:
            status, body = self.status(answers[0].error_code), frames[0]
        extra = self.headers()
        # With its length the body goes out as it is, not chunked (one write, less for both peers to frame).
        length = (b"content-length", b"%d" % len(body))
        if body:
            head = [*JSON_HEAD, length, *raw_headers(extra)] if extra else [*JSON_HEAD, length]
        else:
            head = [length, *raw_headers(extra)]
        await self._send({"type": "http.response.start", "status": status, "headers": head})
        await self._send({"type": "http.response.body", "body": body, "more_body": False})

    def abandon(self) -> None:
        """The client is gone or the request ended without a response (cancelled): nothing more is
        written, and its stream in the event log is closed."""
        self._finished = True
        self._http_open = False
        if self.events is not None and self._stream is not None:
            self.events.finish(self._stream)

    async def _open_stream(self) -> None:
        self.streaming = True
        await self._send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": raw_headers({"content-type": "text/event-stream", **no_cache(), **self.headers()}),
            }
        )
        if self.events is not None:
            self._stream = self.events.open_stream()
            if self.priming:
                event_id = self.events.add(self._stream, None)
                priming = b"id: %d\nretry: %d\ndata: \n\n" % (event_id, self.retry_ms)
                await self._send({"type": "http.response.body", "body": priming, "more_body": True})

    async def _emit(self, frame: bytes) -> None:
        if frame == CLOSE_STREAM:
            if self._http_open and self.priming:
                self._http_open = False
                await self._send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        event_id = (
            self.events.add(self._stream, frame) if self.events is not None and self._stream is not None else None
        )
        if self._http_open:
            await self._send({"type": "http.response.body", "body": sse_event(frame, event_id), "more_body": True})
