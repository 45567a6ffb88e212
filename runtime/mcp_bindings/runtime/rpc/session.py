"""The session engine: one JSON-RPC peer over one transport, for either role.

It correlates responses by id (ids are never reused), runs incoming requests concurrently,
cancels them on `notifications/cancelled` (no response is sent then), routes progress to the
caller that asked for it (progress for a token no call registered goes to the dispatcher like any
notification: the handlers' `on_progress`), and turns bad input into the right error without ever ending the
session. What a method means is the dispatcher's business (`ServerRuntime`, `ClientRuntime`).

Requests are served by the task that read them (no task per request): most handlers finish
without waiting for anything, and a task, a stream and a wake-up per request would cost several
times the handler's work. The moment a request's handler (or the sending of its answer) has to
wait, a new reader task takes over the reading and the request carries on in the task it started
in (see `eager.run_inline`), so requests still run concurrently and a handler may await the peer. Each
reader task runs in a cancel scope of its own, which is the scope of the request it serves: a
request that never waits enters none of its own (see `_read`).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, NamedTuple, Protocol, cast

import anyio
import orjson
from anyio.abc import TaskGroup

from mcp_bindings.runtime.rpc import jsonrpc, logs
from mcp_bindings.runtime.rpc.calls import CANCELLED, Calls, ProgressCallback, is_id
from mcp_bindings.runtime.rpc.eager import run_inline
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, INVALID_REQUEST, McpError
from mcp_bindings.runtime.rpc.jsonrpc import InvalidMessage, Notification, Request, RequestId, Response
from mcp_bindings.runtime.rpc.transport import OversizedMessage, Transport
from mcp_bindings.v2026_07_28 import names as v2026

log = logs.logger("")


PROGRESS = v2026.NOTIFICATIONS_PROGRESS


class Dispatcher(Protocol):
    @property
    def batches_allowed(self) -> bool: ...

    async def on_request(self, request: Request, session: Session) -> bytes:
        """The serialised result JSON, or raise McpError."""
        ...

    async def on_notification(self, notification: Notification, session: Session) -> None: ...


class Answer(NamedTuple):
    """The response to one request, and its error code (None for a result)."""

    frame: bytes
    error_code: int | None


class Session:
    def __init__(
        self,
        transport: Transport,
        dispatcher: Dispatcher,
        *,
        default_timeout: float | None = None,
        drain_timeout: float = 5.0,
    ) -> None:
        self.transport = transport
        self.drain_timeout = drain_timeout
        self.dispatcher = dispatcher
        self.principal: str | None = None  # who the transport authenticated (HTTP bearer auth), if anyone
        # A name of the connection that is the same on every worker serving it (HTTP handshake
        # sessions: derived from the Mcp-Session-Id); None: this session object is the connection.
        self.connection: str | None = None
        # The client's address as the transport reports it (HTTP: the client IP, `http.fairness.
        # ClientAddress`, of a stateless-era request or of a session's latest request; None on
        # stdio and in memory), keying per-client bounds where there is no principal.
        self.peer_address: str | None = None
        self.default_timeout = default_timeout
        self.calls = Calls(transport, default_timeout)
        self.request = self.calls.request  # send a request and wait for its result (`Calls.request`)
        self._in_flight: dict[RequestId, anyio.CancelScope] = {}
        self._cancelled_by_peer: set[RequestId] = set()
        self._task_group: TaskGroup | None = None
        self._active = 0  # requests being handled or answered
        self._idle: anyio.Event | None = None  # set when _active drops to 0 while draining
        self._ended: anyio.Event | None = None  # set when the peer stops sending (`run`)
        self._scope_type: type[anyio.CancelScope] | None = None  # the backend's (`_answer`)
        self._deferred: list[Callable[[], None]] = []  # work for after the current answer (`defer`)

    # -- the receive loop ---------------------------------------------------------------------

    async def run(self) -> None:
        """Read and dispatch until the transport ends; then cancel handlers and fail waiters."""
        try:
            async with anyio.create_task_group() as task_group:
                self._task_group = task_group
                self._ended = anyio.Event()
                task_group.start_soon(self._read)
                await self._ended.wait()
                # The peer stopped sending: let requests already received finish (bounded), then stop.
                if self._active:
                    self._idle = anyio.Event()
                    with anyio.move_on_after(self.drain_timeout):
                        await self._idle.wait()
                task_group.cancel_scope.cancel()
        finally:
            self.calls.close()

    async def _read(self) -> None:
        """The reader: one task at a time reads frames, until the transport ends or a request it
        serves has to wait (then a new reader has taken over and this task finishes that request).

        The task's cancel scope is the cancel scope of that request: a request that never waits
        (the usual) costs none of its own, and one that waits has the task to itself."""
        with self._new_scope() as scope:
            while True:
                try:
                    frame = await self.transport.receive()
                except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    assert self._ended is not None
                    self._ended.set()
                    return
                except OversizedMessage as exc:
                    log.warning("%s", exc)
                    frame = jsonrpc.encode_error(None, INVALID_REQUEST, f"Invalid Request: {exc}")
                    if await run_inline(self._send_quietly(frame), self._hand_over):
                        return
                    continue
                request = await self._dispatch_frame(frame)
                del frame  # decoded: not held while the request is served (a large one would be, twice)
                if request is not None and await run_inline(self._serve_read(request, scope), self._hand_over):
                    return

    def _hand_over(self) -> None:
        """What the reader serves has to wait: a new task reads on."""
        assert self._task_group is not None
        self._task_group.start_soon(self._read)

    async def _dispatch_frame(self, frame: bytes) -> Request | None:
        """Decode and route one frame; a request is returned for the reader to serve."""
        try:
            data = jsonrpc.decode(frame)
        except InvalidMessage as exc:
            await self._send_quietly(jsonrpc.encode_error(None, exc.code, exc.message))
            return None
        if isinstance(data, list):
            await self._dispatch_batch(cast("list[Any]", data))
            return None
        try:
            message = jsonrpc.classify(data)
        except InvalidMessage as exc:
            if exc.reply:
                await self._send_quietly(jsonrpc.encode_error(exc.id, exc.code, exc.message, exc.data))
            else:
                log.warning("dropping an invalid response: %s", exc.message)
            return None
        if isinstance(message, Request):
            if message.id in self._in_flight:
                error = f"Invalid Request: id {message.id!r} is already in use"
                await self._send_quietly(jsonrpc.encode_error(message.id, INVALID_REQUEST, error))
                return None
            return message
        self._route(message)
        return None

    def _handling(
        self, message: Notification | Response
    ) -> tuple[Callable[..., Coroutine[Any, Any, None]], tuple[Any, ...]]:
        """What to run for a response or notification, with its arguments (`_nothing`: done now: a
        response, a cancellation). Progress goes to the caller that asked for it, looked up now, in
        wire order (the response may follow at once, and its waiter drops the callback as soon as it
        runs); a token no call registered (the caller's own `_meta`) to the handlers' `on_progress`."""
        if isinstance(message, Response):
            self.calls.resolve(message)
            return _nothing, ()
        if message.method == CANCELLED:
            self._peer_cancelled(message.params)
            return _nothing, ()
        progress = self.calls.progress_for(message.params) if message.method == PROGRESS else None
        if progress is not None:
            return self._report_progress, progress
        return self._serve_notification, (message,)

    def _route(self, message: Notification | Response) -> None:
        run, args = self._handling(message)
        if run is not _nothing:
            assert self._task_group is not None
            self._task_group.start_soon(run, *args)

    async def _dispatch_batch(self, items: list[Any]) -> None:
        if not self.dispatcher.batches_allowed:
            await self._send_quietly(
                jsonrpc.encode_error(
                    None,
                    INVALID_REQUEST,
                    "Invalid Request: JSON-RPC batches are not part of the negotiated protocol version",
                )
            )
            return
        if not items:
            await self._send_quietly(jsonrpc.encode_error(None, INVALID_REQUEST, "Invalid Request: empty batch"))
            return
        assert self._task_group is not None
        self._task_group.start_soon(self._serve_batch, items)

    async def _serve_batch(self, items: list[Any]) -> None:
        self._active += 1
        try:
            await self._serve_batch_items(items)
        finally:
            self._done()

    def _done(self) -> None:
        self._active -= 1
        if not self._active and self._idle is not None:
            self._idle.set()

    async def _serve_batch_items(self, items: list[Any]) -> None:
        responses: list[bytes] = []
        for item in items:
            try:
                message = jsonrpc.classify(item)
            except InvalidMessage as exc:
                if exc.reply:
                    responses.append(jsonrpc.encode_error(exc.id, exc.code, exc.message, exc.data))
                else:
                    log.warning("dropping an invalid response: %s", exc.message)
                continue
            if isinstance(message, Request):
                answer = await self.answer(message)  # refuses an id that is already in flight
                if answer is not None:
                    responses.append(answer.frame)
            else:
                self._route(message)
        if responses:
            await self._send_quietly(b"[" + b",".join(responses) + b"]")

    # -- entry points for transports that deliver messages themselves (HTTP) -------------------

    async def answer(self, request: Request) -> Answer | None:
        """Run one request to completion here; None when the peer cancelled it."""
        if request.id in self._in_flight:
            message = f"Invalid Request: id {request.id!r} is already in use"
            return Answer(jsonrpc.encode_error(request.id, INVALID_REQUEST, message), INVALID_REQUEST)
        try:
            return await self._answer(request)
        finally:
            if self._deferred:  # the transport writes the answer: nothing to wait for here
                self._run_deferred()

    async def accept(self, message: Notification | Response) -> None:
        """Take a response or notification that arrived outside the receive loop."""
        run, args = self._handling(message)
        await run(*args)

    @property
    def busy(self) -> bool:
        """Whether a request is being served or one sent is waiting for its response."""
        return bool(self._active or self._in_flight) or self.calls.waiting

    def cancel_all(self) -> None:
        for scope in list(self._in_flight.values()):
            scope.cancel()
        self.calls.close()

    # -- incoming requests and notifications --------------------------------------------------

    async def _serve_read(self, request: Request, scope: anyio.CancelScope) -> None:
        """Serve a request the reader read, under the reader's scope (see `_read`): cancelling the
        request cancels that scope, which then holds nothing else."""
        self._active += 1
        request_id = request.id
        self._in_flight[request_id] = scope
        try:
            try:  # `_outcome`, without its coroutine: this runs once per request
                body, code = await self.dispatcher.on_request(request, self), None
            except Exception as exc:
                body, code = self._failure(request, exc)
            finally:
                self._in_flight.pop(request_id, None)
            if not (self._cancelled_by_peer and request_id in self._cancelled_by_peer):  # else: no response
                try:
                    if code is None:  # a result: the transport writes the envelope around it
                        await self.transport.send_result(request_id, body)
                    else:
                        await self.transport.send(body, request_id)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
                    self._unsent(exc, body)
            if self._deferred:
                self._run_deferred()
        finally:
            if self._cancelled_by_peer:
                self._cancelled_by_peer.discard(request_id)
            self._done()

    def defer(self, work: Callable[[], None]) -> None:
        """Run `work` (synchronous, e.g. building validators) once the answer being made has been
        sent: work the peer will need soon, kept off the time to this answer."""
        self._deferred.append(work)

    def _run_deferred(self) -> None:
        while self._deferred:
            work = self._deferred.pop(0)
            try:
                work()
            except Exception:  # only ever preparation: what it would have built is built on first use
                log.exception("deferred work failed")

    def _new_scope(self) -> anyio.CancelScope:
        # The running backend's scope class, called directly: `anyio.CancelScope()` looks the backend
        # up on every call, which costs as much again as the scope itself.
        scope_type = self._scope_type
        if scope_type is None:
            scope_type = self._scope_type = type(anyio.CancelScope())
        return scope_type()

    async def _answer(self, request: Request) -> Answer | None:
        """A request delivered by `answer` (HTTP, batches), in a cancel scope of its own."""
        scope = self._in_flight[request.id] = self._new_scope()
        answer: Answer | None = None
        try:
            with scope:
                body, code = await self._outcome(request)
                answer = Answer(jsonrpc.encode_result(request.id, body) if code is None else body, code)
        finally:
            self._in_flight.pop(request.id, None)
        if self._cancelled_by_peer and request.id in self._cancelled_by_peer:
            self._cancelled_by_peer.discard(request.id)
            return None  # the peer cancelled it: no response at all
        return answer

    async def _outcome(self, request: Request) -> tuple[bytes, int | None]:
        """The dispatcher's answer to a request: the result JSON and None, or an error response's
        frame and its code (its errors turned into error responses, `_failure`)."""
        try:
            return await self.dispatcher.on_request(request, self), None
        except Exception as exc:
            return self._failure(request, exc)

    @staticmethod
    def _failure(request: Request, exc: Exception) -> tuple[bytes, int]:
        """The error response to `request` whose handling raised `exc` (called in its `except`), and
        its code: an `McpError` as it says, anything else (a handler bug) logged here and answered
        -32603, never with a traceback to the peer."""
        if isinstance(exc, McpError):
            return jsonrpc.encode_error(request.id, exc.code, exc.message, exc.data), exc.code
        log.exception("handler for %s (id %r) failed", request.method, request.id)
        return jsonrpc.encode_error(request.id, INTERNAL_ERROR, "Internal error"), INTERNAL_ERROR

    async def _serve_notification(self, notification: Notification) -> None:
        try:
            await self.dispatcher.on_notification(notification, self)
        except McpError as exc:
            log.warning("notification %s rejected: %s", notification.method, exc.message)
        except Exception:
            log.exception("notification handler for %s failed", notification.method)

    def _peer_cancelled(self, params: Any) -> None:
        request_id = jsonrpc.json_object(params).get("requestId")
        scope = self._in_flight.get(request_id) if is_id(request_id) else None
        if scope is None:
            return  # late or unknown: ignored, as the spec says
        self._cancelled_by_peer.add(request_id)  # type: ignore[arg-type]
        scope.cancel()

    async def _report_progress(self, callback: ProgressCallback, progress: float, total: Any, message: Any) -> None:
        try:
            await callback(progress, total, message)
        except Exception:
            log.exception("progress callback failed")

    # -- outgoing -----------------------------------------------------------------------------

    async def notify(self, method: str, params: Any = None, related: RequestId | None = None) -> None:
        """Send a notification; `related`: the peer's request it belongs to (see `transport`)."""
        await self.transport.send(jsonrpc.encode_notification(method, params), related)

    async def _send_quietly(self, frame: bytes, related: RequestId | None = None) -> None:
        try:
            await self.transport.send(frame, related)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            self._unsent(exc, frame)

    @staticmethod
    def _unsent(exc: BaseException, frame: bytes) -> None:
        log.debug("could not send (%s): %s", exc, orjson.loads(frame) if len(frame) < 200 else frame[:200])


async def _nothing() -> None:
    return None
