"""The session engine: one JSON-RPC peer over one transport, for either role.

It correlates responses by id (ids are never reused), runs incoming requests concurrently (one
task each), cancels them on `notifications/cancelled` (no response is sent then), routes progress
to the caller that asked for it, and turns bad input into the right error without ever ending the
session. What a method means is the dispatcher's business (`ServerRuntime`, `ClientRuntime`).
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol, cast

import anyio
import orjson
from anyio.abc import TaskGroup

from . import jsonrpc, logs
from .calls import CANCELLED, Calls, ProgressCallback, is_id
from .errors import INTERNAL_ERROR, INVALID_REQUEST, McpError
from .jsonrpc import InvalidMessage, Notification, Request, RequestId, Response
from .transport import OversizedMessage, Transport

log = logs.logger("")


PROGRESS = "notifications/progress"


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
        self.default_timeout = default_timeout
        self.calls = Calls(transport, default_timeout)
        self._in_flight: dict[RequestId, anyio.CancelScope] = {}
        self._cancelled_by_peer: set[RequestId] = set()
        self._task_group: TaskGroup | None = None
        self._active = 0  # requests being handled or answered
        self._idle: anyio.Event | None = None  # set when _active drops to 0 while draining

    # -- the receive loop ---------------------------------------------------------------------

    async def run(self) -> None:
        """Read and dispatch until the transport ends; then cancel handlers and fail waiters."""
        try:
            async with anyio.create_task_group() as task_group:
                self._task_group = task_group
                await self._receive_loop()
                # The peer stopped sending: let requests already received finish (bounded), then stop.
                if self._active:
                    self._idle = anyio.Event()
                    with anyio.move_on_after(self.drain_timeout):
                        await self._idle.wait()
                task_group.cancel_scope.cancel()
        finally:
            self.calls.close()

    async def _receive_loop(self) -> None:
        while True:
            try:
                frame = await self.transport.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                return
            except OversizedMessage as exc:
                log.warning("%s", exc)
                await self._send_quietly(jsonrpc.encode_error(None, INVALID_REQUEST, f"Invalid Request: {exc}"))
                continue
            await self._dispatch_frame(frame)

    async def _dispatch_frame(self, frame: bytes) -> None:
        try:
            data = jsonrpc.decode(frame)
        except InvalidMessage as exc:
            await self._send_quietly(jsonrpc.encode_error(None, exc.code, exc.message))
            return
        if isinstance(data, list):
            await self._dispatch_batch(cast("list[Any]", data))
            return
        try:
            message = jsonrpc.classify(data)
        except InvalidMessage as exc:
            if exc.reply:
                await self._send_quietly(jsonrpc.encode_error(exc.id, exc.code, exc.message, exc.data))
            else:
                log.warning("dropping an invalid response: %s", exc.message)
            return
        self._route(message)

    def _route(self, message: jsonrpc.Message) -> None:
        assert self._task_group is not None
        if isinstance(message, Request):
            if message.id in self._in_flight:
                self._task_group.start_soon(
                    self._send_quietly,
                    jsonrpc.encode_error(
                        message.id, INVALID_REQUEST, f"Invalid Request: id {message.id!r} is already in use"
                    ),
                )
                return
            scope = anyio.CancelScope()
            self._in_flight[message.id] = scope
            self._task_group.start_soon(self._serve_request, message, scope)
        elif isinstance(message, Response):
            self.calls.resolve(message)
        elif message.method == CANCELLED:
            self._peer_cancelled(message.params)
        elif message.method == PROGRESS:
            # Look the callback up now, in wire order: the response may follow at once, and its
            # waiter drops the callback as soon as it runs.
            progress = self.calls.progress_for(message.params)
            if progress is not None:
                self._task_group.start_soon(self._report_progress, *progress)
        else:
            self._task_group.start_soon(self._serve_notification, message)

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
        return await self._answer(request)

    async def accept(self, message: Notification | Response) -> None:
        """Take a response or notification that arrived outside the receive loop."""
        if isinstance(message, Response):
            self.calls.resolve(message)
        elif message.method == CANCELLED:
            self._peer_cancelled(message.params)
        elif message.method == PROGRESS:
            progress = self.calls.progress_for(message.params)
            if progress is not None:
                await self._report_progress(*progress)
        else:
            await self._serve_notification(message)

    def cancel_all(self) -> None:
        for scope in list(self._in_flight.values()):
            scope.cancel()
        self.calls.close()

    # -- incoming requests and notifications --------------------------------------------------

    async def _serve_request(self, request: Request, scope: anyio.CancelScope) -> None:
        self._active += 1
        try:
            answer = await self._answer(request, scope)
            if answer is not None:
                await self._send_quietly(answer.frame, request.id)
        finally:
            self._done()

    async def _answer(self, request: Request, scope: anyio.CancelScope | None = None) -> Answer | None:
        scope = scope or anyio.CancelScope()
        self._in_flight[request.id] = scope
        answer: Answer | None = None
        try:
            with scope:
                try:
                    result = await self.dispatcher.on_request(request, self)
                    answer = Answer(jsonrpc.encode_result(request.id, result), None)
                except McpError as exc:
                    answer = Answer(jsonrpc.encode_error(request.id, exc.code, exc.message, exc.data), exc.code)
                except Exception:  # a handler bug: log it here, never leak a traceback to the peer
                    log.exception("handler for %s (id %r) failed", request.method, request.id)
                    answer = Answer(jsonrpc.encode_error(request.id, INTERNAL_ERROR, "Internal error"), INTERNAL_ERROR)
        finally:
            self._in_flight.pop(request.id, None)
        if request.id in self._cancelled_by_peer:
            self._cancelled_by_peer.discard(request.id)
            return None  # the peer cancelled it: no response at all
        return answer

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

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        related: RequestId | None = None,
        cancellable: bool = True,
    ) -> Any:
        """Send a request and wait for its result (a decoded JSON value); errors raise McpError."""
        return await self.calls.request(
            method, params, timeout=timeout, on_progress=on_progress, related=related, cancellable=cancellable
        )

    async def notify(self, method: str, params: Any = None, related: RequestId | None = None) -> None:
        """Send a notification; `related`: the peer's request it belongs to (see `transport`)."""
        await self.transport.send(jsonrpc.encode_notification(method, params), related)

    async def _send_quietly(self, frame: bytes, related: RequestId | None = None) -> None:
        try:
            await self.transport.send(frame, related)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            log.debug("could not send (%s): %s", exc, orjson.loads(frame) if len(frame) < 200 else frame[:200])
