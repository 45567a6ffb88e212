"""Handshake sessions served by any worker: the `SessionDirectory` of several workers.

`SharedSessions` holds the process's `LocalSessions` (the copies this worker serves) and adds the
backend's records
(`backends.SessionRecords`, `scaleout.sessions`): a session is served by whichever worker a request
reaches (rebuilt from its record on first sight, refreshed from it on every request, written back
when a request changed it); a client's response to a request another worker sent is forwarded to
that worker; a message for a GET stream another worker holds is sent there; the session's one GET
stream is claimed across workers; a resumption is relayed from the worker holding the stream, or
answered from the handover of one that drained; DELETE on any worker ends the session on all.
It is a `SessionDirectory` with `SharedStreams`. Installed by `scaleout.attach` when the app's
backend is shared.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from mcp_bindings.runtime.http.resume import EventLog, ReplayStore, error_response
from mcp_bindings.runtime.http.sessions import HttpSession, LocalSessions, StreamableOptions
from mcp_bindings.runtime.rpc import jsonrpc, logs
from mcp_bindings.runtime.rpc.calls import CANCELLED
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, INVALID_REQUEST, McpError
from mcp_bindings.runtime.rpc.jsonrpc import InvalidMessage
from mcp_bindings.runtime.scaleout import relay, sessions
from mcp_bindings.runtime.scaleout.backends.base import StateBackend
from mcp_bindings.runtime.scaleout.handoff import Handoff, worker_of
from mcp_bindings.runtime.scaleout.sessions import (
    RESPONSE,
    SESSION_CANCEL,
    SESSION_CHANGED,
    SESSION_ENDED,
    STREAM_MESSAGE,
    WorkerIds,
    addressee,
    snapshot,
)
from mcp_bindings.runtime.server.host import ServerHost
from mcp_bindings.runtime.server.stubs import ServerStub

__all__ = ["SharedSessions"]

log = logs.logger("http")

BUS_METHODS = frozenset({RESPONSE, SESSION_CHANGED, SESSION_ENDED, STREAM_MESSAGE, SESSION_CANCEL})
NOT_RESUMED = (
    "Not Found: Last-Event-ID names no event of this session: none held by the worker that ran it"
    " (event ids name it), nor handed over by a worker that drained"
)


class SharedSessions:
    """The sessions of every worker, recorded in the backend (see the module docstring)."""

    def __init__(
        self,
        server: ServerStub,
        host: ServerHost,
        options: StreamableOptions,
        replay: ReplayStore,
        records: StateBackend,
    ) -> None:
        self.local = LocalSessions(server, host, options, replay)  # this worker's copies
        self.host = host
        self.options = options
        self.records = records
        self.handoff = Handoff(records, options.replay.ttl_seconds)  # replay logs handed over on drain
        self.draining = False

    @property
    def sessions(self) -> dict[str, HttpSession]:
        return self.local.sessions

    def get(self, session_id: str | None, principal: str | None) -> HttpSession | None:
        return self.local.get(session_id, principal)

    def add(self, http_session: HttpSession) -> None:
        self.local.add(http_session)

    # -- finding and opening -----------------------------------------------------------------

    async def find(self, session_id: str, principal: str | None) -> HttpSession | Response | None:
        """This worker's copy of a session, brought up to its record (and the record's lifetime
        renewed): adopted on first sight, ended when the record is gone (deleted, or expired).
        None: no such session for `principal`. Redis unreachable: the copy this worker has serves
        (a 503 naming Redis where it has none)."""
        local = self.get(session_id, principal)
        try:
            record = await self.records.record(session_id, self.options.session_idle_seconds)
        except McpError as exc:
            if local is not None:
                return local
            return error_response(None, INTERNAL_ERROR, exc.message, 503)
        if record is None:
            if local is not None:
                self.end(local)
            return None
        if record.get("principal") != principal:
            return None
        if local is None:
            return await self._adopt(session_id, record, principal)
        sessions.apply(local.runtime, record)
        local.written = snapshot(local.runtime)
        return local

    async def _adopt(
        self, session_id: str, record: dict[str, Any], principal: str | None
    ) -> HttpSession | Response | None:
        """A copy of a session another worker opened, rebuilt from its record."""
        if not self.room():
            return error_response(None, INTERNAL_ERROR, "Service Unavailable: too many sessions", 503)
        http_session = self.open(session_id, principal, record["init"])
        if not await sessions.rebuild(http_session.runtime, http_session.session, record):
            self._discard(http_session)
            log.warning("session %s... not adopted: its record cannot be served by this worker", session_id[:8])
            return None
        existing = self.sessions.get(session_id)
        if existing is not None:  # adopted meanwhile by another request of this session
            self._discard(http_session)
            return existing
        http_session.written = snapshot(http_session.runtime)
        self.local.add(http_session)
        return http_session

    def _discard(self, http_session: HttpSession) -> None:
        """Forget a copy that was never listed."""
        self.host.disconnect(http_session.runtime)
        if http_session.events is not None:
            http_session.events.close()

    def open(self, session_id: str, principal: str | None, init_params: Any) -> HttpSession:
        """A session whose requests to the client are numbered with ids naming this worker, and whose
        messages for a GET stream another worker holds go there."""
        http_session = self.local.open(session_id, principal, init_params)
        http_session.session.calls.ids = WorkerIds(self.records.worker_id)
        http_session.transport.elsewhere = self._elsewhere(session_id)
        return http_session

    def room(self) -> bool:
        """Whether one more session fits in `max_sessions`. Each session's state is in its record, so
        at the limit the least recently used session that is idle here (no request served or
        waiting, no stream open) is forgotten by this worker, not ended: any worker, this one too,
        serves it again from its record on its next request."""
        if self.local.room():
            return True
        idle = [
            s
            for s in self.sessions.values()
            if s.transport.standalone is None and not s.transport.by_request and not s.session.busy
        ]
        if not idle:
            return False
        oldest = min(idle, key=lambda s: s.last_seen)
        log.debug("session %s... forgotten here to make room (its record stays)", oldest.id[:8])
        self.end(oldest)
        return True

    # -- serving -----------------------------------------------------------------------------

    def sending(self, http_session: HttpSession, response: Any) -> Any:
        """The session's record is written before each message of the response leaves (so before its
        id reaches the client, for an initialize)."""
        return _BeforeSend(response, self._write_back(http_session))

    def _write_back(self, http_session: HttpSession) -> Callable[[], Awaitable[None]]:
        """Before each message of a response leaves: if serving the request changed the session
        (logging level, subscriptions, initialized, or it was just opened), write its record, and
        tell the other workers holding a copy (their GET streams filter by it)."""
        records = self.records

        async def write_back() -> None:
            state = snapshot(http_session.runtime)
            if state is None or state == http_session.written or self.sessions.get(http_session.id) is not http_session:
                return
            opened = http_session.written is None
            http_session.written = state
            record = sessions.record_of(http_session.init_params, http_session.principal, state)
            try:
                await records.put(http_session.id, self.options.session_idle_seconds, record)
                if not opened:
                    await records.publish(SESSION_CHANGED, {"s": http_session.id})
            except McpError as exc:
                log.warning("session record not written (other workers serve it as before): %s", exc.message)

        return write_back

    def _elsewhere(self, session_id: str) -> Callable[[bytes], Awaitable[None]]:
        """Send a message for the session's GET stream to the workers (the one holding it sends it):
        requests and the notifications addressed to this session alone (`sessions.addressed`)."""
        records = self.records

        async def elsewhere(frame: bytes) -> None:
            if not sessions.addressed(frame):
                log.debug("no open stream for a server message; dropped")
                return
            try:
                await records.publish(STREAM_MESSAGE, {"s": session_id, "f": frame.decode()})
            except McpError as exc:
                log.warning("a message for the GET stream of another worker was dropped: %s", exc.message)

        return elsewhere

    async def route_responses(
        self, session_id: str, messages: list[jsonrpc.Message]
    ) -> list[jsonrpc.Message] | Response:
        """Send the client's responses to requests another worker sent (their ids name it) to that
        worker; the rest is this worker's. A response whose worker is gone is refused (400) when the
        POST carries nothing else. A cancellation goes to every worker too (the request it cancels
        may run on any of them; where it does not, it is ignored, as the spec says)."""
        records = self.records
        kept: list[jsonrpc.Message] = []
        gone: list[Any] = []
        for message in messages:
            if isinstance(message, jsonrpc.Notification) and message.method == CANCELLED:
                try:
                    await records.publish(SESSION_CANCEL, {"s": session_id, "p": message.params})
                except McpError as exc:
                    log.warning("a cancellation was not sent to the other workers: %s", exc.message)
            worker = addressee(message.id, records.worker_id) if isinstance(message, jsonrpc.Response) else None
            if worker is None:
                kept.append(message)
                continue
            assert isinstance(message, jsonrpc.Response)
            data = {"s": session_id, "r": sessions.response_message(message)}
            try:
                if not await records.send_to(worker, RESPONSE, data):
                    gone.append(message.id)
            except McpError as exc:
                return error_response(
                    None, INTERNAL_ERROR, f"{exc.message} (response {message.id!r} not delivered)", 503
                )
        if gone:
            text = ", ".join(repr(i) for i in gone)
            log.warning("responses %s dropped: the worker that sent their requests is gone", text)
            if not kept:
                message = (
                    f"Invalid Request: no request of this session is waiting for response {text}: the server"
                    " worker that sent it has stopped (the request it was part of is abandoned)"
                )
                return error_response(None, INVALID_REQUEST, message, 400)
        return kept

    # -- GET streams -------------------------------------------------------------------------

    async def resume(
        self, found: HttpSession | None, session_id: str, principal: str | None, last_event_id: str
    ) -> Response | None:
        """A GET resuming a stream: answered from this worker's log, else relayed from the worker
        running it (`relay`), else from the handover of a drained worker, else 404."""
        replay = await self.local.resume(found, session_id, principal, last_event_id)
        if replay is not None:
            return replay
        holder = worker_of(last_event_id)
        if holder is not None and holder != self.records.worker_id:  # a stream another worker runs
            relayed = await relay.relay(self.host, holder, session_id, principal, last_event_id)
            if relayed is not None:
                return relayed
        resumed = await self.handoff.resume(session_id, principal, last_event_id)  # its worker drained
        if resumed is not None:
            return resumed
        return error_response(None, INVALID_REQUEST, NOT_RESUMED, 404)

    async def claim_stream(self, session_id: str) -> str | None:
        """Claim the session's GET stream (`backends.SessionRecords.claim_stream`): the worker
        holding it, or None. Redis unreachable: None (the bus is down too, so nothing is sent twice)."""
        try:
            return await self.records.claim_stream(session_id, self.options.session_idle_seconds)
        except McpError as exc:
            log.warning("GET stream of session %s... not claimed: %s", session_id[:8], exc.message)
            return None

    async def release_stream(self, session_id: str) -> None:
        with anyio.CancelScope(shield=True), anyio.move_on_after(2.0):
            try:
                await self.records.release_stream(session_id)
            except McpError as exc:  # it lapses with the session's idle timeout
                log.warning("GET stream of session %s... not released: %s", session_id[:8], exc.message)

    async def still_used(self, session_id: str) -> bool:
        """Whether a session's record lives (its requests go to other workers); True when Redis cannot say."""
        try:
            return await self.records.record(session_id) is not None
        except McpError:
            return True

    def expire_idle(self) -> None:
        """End this worker's idle copies (the record expires by itself); one with a GET stream open
        checks the shared record from its stream (`still_used`)."""
        for http_session in self.local.idle():
            if http_session.transport.standalone is None:
                self.end(http_session)

    def log_of(self, session_id: str) -> tuple[str | None, EventLog] | None:
        """A session this worker holds: its principal and replay log (`relay`)."""
        local = self.sessions.get(session_id)
        if local is None or local.events is None:
            return None
        return local.principal, local.events

    # -- ending ------------------------------------------------------------------------------

    async def close(self, session_id: str | None, principal: str | None) -> Response:
        """DELETE: the session's record is dropped and every worker ends its copy."""
        if not session_id:
            return await self.local.close(session_id, principal)
        records = self.records
        try:
            record = await records.record(session_id)
        except McpError as exc:
            return error_response(None, INTERNAL_ERROR, f"{exc.message} (the session was not deleted)", 503)
        local = self.get(session_id, principal)
        if local is not None:
            self.end(local)  # expired in the shared state: gone; else deleted
        if record is None or record.get("principal") != principal:
            return Response(status_code=404)
        try:
            await records.drop(session_id)
            await records.publish(SESSION_ENDED, {"s": session_id})
        except McpError as exc:
            return error_response(None, INTERNAL_ERROR, f"{exc.message} (the session was not deleted)", 503)
        return Response(status_code=200)

    def end(self, http_session: HttpSession, *, shutdown: bool = False) -> None:
        """`LocalSessions.end`; at shutdown after draining, the final state of its streams is handed over."""
        if http_session.events is not None and self.draining and shutdown:
            self.handoff.hand_over(http_session.id, http_session.principal, http_session.events, final=True)
        self.local.end(http_session, shutdown=shutdown)

    def drain(self) -> None:
        """`LocalSessions.drain`, the sessions' replay logs handed over first."""
        self.draining = True
        for http_session in list(self.sessions.values()):
            if http_session.events is not None:
                self.handoff.hand_over(http_session.id, http_session.principal, http_session.events, final=False)
        self.local.drain()

    def close_all(self) -> None:
        """Every copy ended as at shutdown (`end`: handed over when draining)."""
        for http_session in list(self.sessions.values()):
            self.end(http_session, shutdown=True)

    # -- what other workers say --------------------------------------------------------------

    async def from_bus(self, method: str, data: Any) -> bool:
        """Handle what another worker sent about a session (True), or leave it (False)."""
        if method not in BUS_METHODS:
            return False
        session_id = data.get("s") if isinstance(data, dict) else None
        local = self.sessions.get(session_id) if isinstance(session_id, str) else None
        if local is None or not isinstance(session_id, str):
            if method == RESPONSE:
                log.warning("a forwarded response for session %s... has no session here; dropped", str(session_id)[:8])
            return True
        message: dict[str, Any] = data  # pyright: ignore[reportAssignmentType]
        if method == SESSION_CANCEL:
            await local.session.accept(jsonrpc.Notification(CANCELLED, message.get("p"), {}))
        elif method == STREAM_MESSAGE:
            frame = message.get("f")
            if local.transport.standalone is not None and isinstance(frame, str):
                await local.transport.send(frame.encode())
        elif method == SESSION_ENDED:
            self.end(local)
        elif method == SESSION_CHANGED:
            await self._reread(local)
        else:
            await self._forwarded_response(local, message.get("r"))
        return True

    async def _reread(self, local: HttpSession) -> None:
        try:
            record = await self.records.record(local.id)
        except McpError:
            return  # the session's next request here re-reads it
        if record is None:
            self.end(local)
        else:
            sessions.apply(local.runtime, record)
            local.written = snapshot(local.runtime)

    @staticmethod
    async def _forwarded_response(local: HttpSession, raw: Any) -> None:
        try:
            message = jsonrpc.classify(raw)
        except InvalidMessage:
            return
        if isinstance(message, jsonrpc.Response):
            await local.session.accept(message)


class _BeforeSend:
    """An ASGI response that awaits `hook` before each message it sends."""

    def __init__(self, response: Any, hook: Callable[[], Awaitable[None]]) -> None:
        self.response = response
        self.hook = hook

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def sending(message: Any) -> None:
            await self.hook()
            await send(message)

        await self.response(scope, receive, sending)
