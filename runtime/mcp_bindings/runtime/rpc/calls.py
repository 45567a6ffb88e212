"""Outgoing requests of a session: ids (never reused), waiting for the response that carries the
same id, the caller's timeout and cancellation (one path: both cancel the caller's own sending and
waiting, then send `notifications/cancelled`), and the progress callbacks of requests that asked
for progress."""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeGuard

import anyio
import orjson

from mcp_bindings.runtime.rpc import jsonrpc, logs
from mcp_bindings.runtime.rpc.errors import ConnectionClosed, McpError
from mcp_bindings.runtime.rpc.jsonrpc import RequestId, Response, as_object
from mcp_bindings.runtime.rpc.transport import Transport
from mcp_bindings.v2026_07_28 import names as v2026

log = logs.logger("")

CANCELLED = v2026.NOTIFICATIONS_CANCELLED
PROGRESS_TOKEN = "progressToken"  # the `_meta` key of a request's progress token (every version)
REQUEST_TIMEOUT = -32001  # what a caller sees when its own timeout expires (nothing is received)

ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None]]


class _Waiter:
    __slots__ = ("event", "response")

    def __init__(self) -> None:
        self.event = anyio.Event()
        self.response: Response | None = None


class Calls:
    def __init__(self, transport: Transport, default_timeout: float | None) -> None:
        self.transport = transport
        self.default_timeout = default_timeout
        self.closed = False
        # The ids of outgoing requests; a transport may number them otherwise (several workers
        # serving one HTTP session: ids that name their worker, `http_sessions`).
        self.ids: Iterator[RequestId] = itertools.count(1)
        self._pending: dict[RequestId, _Waiter] = {}
        self._progress: dict[str | int, ProgressCallback] = {}

    @property
    def waiting(self) -> bool:
        """Whether a request sent is still waiting for its response."""
        return bool(self._pending)

    def close(self) -> None:
        """No more requests; every caller still waiting gets ConnectionClosed."""
        self.closed = True
        for waiter in self._pending.values():
            waiter.event.set()

    def resolve(self, response: Response) -> None:
        waiter = self._pending.get(response.id)
        if waiter is None:
            log.warning("dropping a response with unknown id %r", response.id)
            return
        waiter.response = response
        waiter.event.set()

    def progress_for(self, params: Any) -> tuple[ProgressCallback, float, Any, Any] | None:
        """The callback a `notifications/progress` is for, with its values; None to ignore it."""
        values = as_object(params)
        if values is None:
            return None
        token = values.get(PROGRESS_TOKEN)
        callback = self._progress.get(token) if is_id(token) else None  # an unhashable token must not crash
        progress = values.get("progress")
        if callback is None or not isinstance(progress, (int, float)) or isinstance(progress, bool):
            return None
        return callback, progress, values.get("total"), values.get("message")

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
        """Send a request and wait for its result (a decoded JSON value); errors raise McpError.
        The timeout covers sending too: a transport may tie the request's exchange to the caller
        (an HTTP POST and its response stream), which the timeout then ends like a cancellation.
        When the caller's timeout expires or the caller is cancelled, the peer is told with
        `notifications/cancelled`, unless the request is not `cancellable`: initialize (which must
        not be cancelled), or a request whose transport signals cancellation itself by closing the
        exchange (a stateless request over HTTP)."""
        if self.closed:
            raise ConnectionClosed(f"cannot send {method}: the session is closed")
        request_id = next(self.ids)
        if on_progress is not None:
            params = dict(params or {})
            params["_meta"] = {**(params.get("_meta") or {}), PROGRESS_TOKEN: request_id}
            self._progress[request_id] = on_progress
        waiter = _Waiter()
        self._pending[request_id] = waiter
        limit = timeout if timeout is not None else self.default_timeout
        try:
            with anyio.fail_after(limit):
                await self.transport.send(jsonrpc.encode_request(request_id, method, params), related)
                await waiter.event.wait()
        except TimeoutError:
            if cancellable:
                await self._send_cancel(request_id, f"timed out after {limit} s")
            raise McpError(REQUEST_TIMEOUT, f"{method} timed out after {limit} s") from None
        except anyio.get_cancelled_exc_class():
            if cancellable:
                with anyio.CancelScope(shield=True):
                    await self._send_cancel(request_id, "cancelled by the caller")
            raise
        finally:
            self._pending.pop(request_id, None)
            self._progress.pop(request_id, None)
        response = waiter.response
        if response is None:
            raise ConnectionClosed(f"the connection closed before {method} was answered")
        if response.error is not None:
            raise McpError.from_error(response.error)
        return response.result

    async def _send_cancel(self, request_id: RequestId, reason: str) -> None:
        frame = jsonrpc.encode_notification(CANCELLED, {"requestId": request_id, "reason": reason})
        try:
            await self.transport.send(frame)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            log.debug("could not send a cancellation (%s): %s", exc, orjson.loads(frame))


def is_id(value: Any) -> TypeGuard[RequestId]:
    """A request id or progress token (str or int; not bool, which would equal 0 or 1)."""
    return isinstance(value, (str, int)) and not isinstance(value, bool)
