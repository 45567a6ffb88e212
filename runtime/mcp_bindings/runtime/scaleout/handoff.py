"""Resuming a stream after its worker drained (several workers, docs/deployment.md).

A handshake session's replay logs stay in the memory of the worker that ran its POST streams
(`http.resume.EventLog`). A worker that drains hands them over to the shared backend (`Handoff`:
the held events of each session, per stream, as `EventLog.snapshot` gives them), so that a GET with
`Last-Event-ID` reaching another worker replays the missed events of that stream
(`replay_handed_over`). Event ids name the worker that numbered them (`worker_space`, `worker_of`),
so while that worker runs a resumption is relayed from it instead (`relay`).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import anyio
import orjson
from starlette.responses import Response

from mcp_bindings.runtime.http.resume import (
    EventLog,
    HandedStream,
    error_response,
    event_id_of,
    gone,
    no_cache,
    sse_event,
)
from mcp_bindings.runtime.rpc import logs
from mcp_bindings.runtime.rpc.errors import INVALID_REQUEST, McpError
from mcp_bindings.runtime.scaleout.backends.base import ReplayHandoff

__all__ = ["Handoff", "decode_handover", "encode_handover", "replay_handed_over", "worker_of", "worker_space"]

log = logs.logger("http")


def replay_handed_over(streams: list[HandedStream], last_event_id: str, *, final: bool) -> Response:
    """A GET with `Last-Event-ID` for a session that a drained worker handed over: the events of
    that event's stream after it, once each and in order, then the end of the stream (the request
    itself ran on the drained worker; a stream it had not finished is resumed again for what came
    later, until the `final` handover). 404 when the id is not one of this session's held events;
    410 when later events expired, or when the final handover shows the request was cut off unanswered."""
    text = last_event_id.strip()
    wanted = event_id_of(text)
    stream = next((s for s in streams if any(event_id == wanted for event_id, _, _ in s.events)), None)
    if stream is None:
        message = (
            f"Not Found: Last-Event-ID {text!r} is not an event of this session's streams held after its worker"
            " drained; initialize a new session"
        )
        return error_response(None, INVALID_REQUEST, message, 404, {"lastEventId": text})
    later = [(event_id, frame, expires) for event_id, frame, expires in stream.events if event_id > wanted]
    if final and not later and not stream.finished:
        message = (
            f"Gone: the request of Last-Event-ID {wanted}'s stream was cut off when its worker stopped, before it"
            " was answered; send the request again"
        )
        return error_response(None, INVALID_REQUEST, message, 410, {"lastEventId": text})
    if any(expires < time.time() for _, _, expires in later):
        return gone(wanted)
    body = b"".join(sse_event(frame.encode(), event_id) for event_id, frame, _ in later if frame is not None)
    return Response(body, media_type="text/event-stream", headers=no_cache())


def worker_space(worker_id: str) -> int | None:
    """The first event id of the worker `worker_id` (event ids name their worker): for ids of 8 hex
    digits below 2**31, as the Redis backend makes them; None for any other."""
    if len(worker_id) != 8 or not all(c in "0123456789abcdef" for c in worker_id) or int(worker_id, 16) >= 1 << 31:
        return None
    return int(worker_id, 16) << 32 | 1


def worker_of(last_event_id: str) -> str | None:
    """The worker that numbered event `last_event_id` (`worker_space`), or None when it is not an id."""
    wanted = event_id_of(last_event_id)
    return f"{wanted >> 32:08x}" if wanted > 0 else None


def encode_handover(streams: list[HandedStream], principal: str | None, *, final: bool) -> bytes:
    """A session's handed-over streams as stored in the backend (`final`: its worker has stopped)."""
    return orjson.dumps({"p": principal, "f": final, "s": [[s.finished, s.events] for s in streams]})


def decode_handover(raw: bytes) -> tuple[str | None, bool, list[HandedStream]] | None:
    """(principal, final, streams) from `encode_handover`; None when `raw` is not one."""
    try:
        data: Any = orjson.loads(raw)
        streams = [
            HandedStream(bool(finished), [(int(i), f if isinstance(f, str) else None, float(t)) for i, f, t in events])
            for finished, events in data["s"]
        ]
        principal = data["p"]
        return (principal if isinstance(principal, str) else None), bool(data["f"]), streams
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None


class Handoff:
    """A worker's side of handing replay logs over (shared backends; `StreamableHttp.handoff`): when
    it drains, the held events of its handshake sessions go to the backend (again, `final`, when each
    session ends at shutdown), and a GET with `Last-Event-ID` for a session it does not hold is
    answered from what other workers handed over. Writes run in the background, one at a time and in
    order (a session's later snapshot from this worker replaces its earlier one; other workers'
    snapshots of it stay beside it); `flush` waits for them at shutdown."""

    def __init__(self, backend: ReplayHandoff, ttl_s: float) -> None:
        self.backend = backend
        self.ttl_s = ttl_s
        self._lock: asyncio.Lock | None = None
        self._pending: set[asyncio.Task[None]] = set()
        self._written: set[str] = set()  # sessions handed over already (their final state is written too)

    def hand_over(self, session_id: str, principal: str | None, events: EventLog, *, final: bool) -> None:
        streams = events.snapshot()  # taken now, before the log is released
        if not streams and session_id not in self._written:
            return  # nothing to resume
        self._written.add(session_id)
        snapshot = encode_handover(streams, principal, final=final)
        ttl_s = min(self.ttl_s, max([1.0, *(t - time.time() for s in streams for _, _, t in s.events)]))

        async def write() -> None:
            if self._lock is None:
                self._lock = asyncio.Lock()
            async with self._lock:
                try:
                    await self.backend.hand_over(session_id, snapshot, ttl_s)
                except McpError as exc:
                    log.warning("replay log of a session not handed over: %s", exc.message)

        try:
            task = asyncio.get_running_loop().create_task(write())
        except RuntimeError:  # no asyncio loop (trio): shared backends are an asyncio deployment's
            return
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def flush(self, timeout_s: float = 5.0) -> None:
        """Wait (at most `timeout_s`, even when cancelled) for the handovers under way."""
        with anyio.CancelScope(shield=True), anyio.move_on_after(timeout_s):
            while self._pending:
                await asyncio.wait(set(self._pending))

    async def resume(self, session_id: str, principal: str | None, last_event_id: str) -> Response | None:
        """The answer to a resumption of a session handed over by another worker, or None (none was,
        the backend cannot say, or the session was someone else's)."""
        try:
            raws = await self.backend.handed_over(session_id)
        except McpError:
            return None
        handed = [d for d in map(decode_handover, raws) if d is not None and d[0] == principal]
        if not handed:
            return None
        # One snapshot per worker that drained; event ids are unique across workers, so the one
        # holding the id is the worker that ran its stream.
        wanted = event_id_of(last_event_id)
        for _, final, streams in handed:
            if any(event_id == wanted for stream in streams for event_id, _, _ in stream.events):
                return replay_handed_over(streams, last_event_id, final=final)
        return replay_handed_over([], last_event_id, final=False)  # 404: not an event any of them held
