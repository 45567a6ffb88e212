"""Resuming a POST stream on another worker than the one running it (several workers).

A handshake session's replay log lives on the worker that ran the stream (`http.resume`). Event ids
name that worker (`handoff.worker_space`), so a GET with `Last-Event-ID` reaching another worker
is relayed: that worker calls the one holding the stream (`forwarding`, operation `REPLAY`) for the
events after the client's cursor, sends them on, and calls again for the next ones (each call waits
up to `WAIT_S` for some) until the stream's request is answered. If the holding worker stops, the
relayed stream ends and the client resumes again (from a handover if that worker drained).

The holding side: the host's `ReplayLogs` names how a worker finds a session's log and owner (kept by
`scaleout.attach`: `SharedSessions.log_of`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import anyio
from starlette.responses import Response, StreamingResponse

from mcp_bindings.runtime.http.resume import EventLog, event_id_of, gone, no_cache, sse_event
from mcp_bindings.runtime.rpc.errors import McpError
from mcp_bindings.runtime.server.bus import Forwarder, operation
from mcp_bindings.runtime.server.host import host_for

if TYPE_CHECKING:
    from mcp_bindings.runtime.server.host import ServerHost
    from mcp_bindings.runtime.server.stubs import ServerStub

__all__ = ["REPLAY", "WAIT_S", "ReplayLogs", "relay"]

# {"s": session, "p": principal, "c": cursor, "w": wait} -> {"e": [[id, frame]], "f": ended} | {"status": 404 | 410}
REPLAY = "http/replay"
WAIT_S = 3.0  # how long one call waits for new events (below the forwarder's reply timeout)

# session id -> (its principal, its replay log), kept by the server host (the worker's HTTP app)
Logs = Callable[[str], "tuple[str | None, EventLog] | None"]


@dataclass(frozen=True, slots=True)
class ReplayLogs:
    """What the host of a worker keeps (`ServerHost.keep`, by `scaleout.attach`): how it finds the
    replay log of a session it holds."""

    find: Logs


@operation(REPLAY)
async def _held_here(server: ServerStub, args: Any) -> dict[str, Any]:
    """The events after the cursor of a stream this worker holds (waiting up to `w` seconds for
    some), and whether its request has been answered; a status when it cannot be resumed."""
    call: dict[str, Any] = cast("dict[str, Any]", args) if isinstance(args, dict) else {}
    kept = host_for(server).find(ReplayLogs)
    logs: Logs | None = kept.find if kept is not None else None
    session_id, cursor, wait = call.get("s"), call.get("c"), call.get("w")
    found = logs(session_id) if logs is not None and isinstance(session_id, str) else None
    if found is None or found[0] != call.get("p") or not isinstance(cursor, int):
        return {"status": 404}
    log = found[1]
    point = log.resume_point(str(cursor))
    if point is None:
        return {"status": 404}
    if isinstance(point, int):
        return {"status": point}
    ended = point.finished  # read first: once it is set, every event of the stream is held
    events = log.held_after(point, cursor)
    if not events and not ended and isinstance(wait, (int, float)) and wait > 0:
        with anyio.move_on_after(min(float(wait), WAIT_S)):
            await point.changes()
        if point.dropped_through > cursor or log.closed:
            return {"status": 410}
        ended = point.finished
        events = log.held_after(point, cursor)
    return {"e": [[event_id, frame.decode() if frame is not None else None] for event_id, frame in events], "f": ended}


async def relay(
    host: ServerHost, worker: str, session_id: str, principal: str | None, last_event_id: str
) -> Response | None:
    """The answer to a resumption of a stream `worker` holds: its events as that worker gives them,
    until its request is answered; 410 when they are no longer held. None: nothing to relay (no
    forwarder, that worker does not hold it or is gone)."""
    forwarder = host.find(Forwarder)
    cursor = event_id_of(last_event_id)
    if forwarder is None or cursor <= 0:
        return None
    args = {"s": session_id, "p": principal, "c": cursor, "w": 0}
    try:
        first: Any = await forwarder.call(worker, REPLAY, args)
    except McpError:
        return None
    status = first.get("status") if isinstance(first, dict) else 404
    if status == 410:
        return gone(cursor)
    if status is not None:
        return None

    async def events() -> AsyncIterator[bytes]:
        batch: Any = first
        at = cursor
        while True:
            for item in batch.get("e", []):
                event_id, frame = item
                at = int(event_id)
                if isinstance(frame, str):
                    yield sse_event(frame.encode(), at)
            if batch.get("f") is True:
                return
            try:
                batch = await forwarder.call(worker, REPLAY, {**args, "c": at, "w": WAIT_S})
            except McpError:
                return  # that worker stopped: the client resumes again (from its handover, if it drained)
            if not isinstance(batch, dict) or "status" in batch:
                return

    return StreamingResponse(events(), media_type="text/event-stream", headers=no_cache())
