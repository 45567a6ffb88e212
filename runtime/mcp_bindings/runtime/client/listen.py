"""`subscriptions/listen` on the client (2026-07-28 on): one open request per stream, whose
notifications (tagged with the request's id in `_meta`) reach the caller as an async iterator of
the version's typed notification models.

The id of a listen request is learnt from the server's acknowledgement (it carries it in `_meta`),
so streams are opened one at a time: the next one waits until the previous one is acknowledged.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from pydantic import ValidationError

from mcp_bindings.runtime.client import eras
from mcp_bindings.runtime.protocol import crossing, versions
from mcp_bindings.runtime.protocol.spec import MethodSpec
from mcp_bindings.runtime.rpc import logs
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, McpError, ungrouped
from mcp_bindings.runtime.rpc.jsonrpc import Notification
from mcp_bindings.v2026_07_28 import names as v2026

if TYPE_CHECKING:
    from mcp_bindings.runtime.client.runtime import ClientRuntime

log = logs.logger("client")

LISTEN = v2026.SUBSCRIPTIONS_LISTEN
ACKNOWLEDGED = v2026.NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED
BUFFER = 256  # notifications a stream holds for a caller that is not reading; more are dropped (logged)
ACK_TIMEOUT = 30.0  # seconds to wait for the acknowledgement when the client has no request_timeout


class ListenStream:
    """What `Client.listen` yields: `async for notification in stream`. `agreed` is the filter the
    server acknowledged (the notification types it will send, a subset of those asked for)."""

    def __init__(self, receive: MemoryObjectReceiveStream[Any]) -> None:
        self._receive = receive
        self.agreed: dict[str, Any] = {}
        self.error: McpError | None = None  # why the server ended the stream, if it did
        self.extra: dict[str, MethodSpec] = {}  # extension notifications it delivers (`Listening.open`)

    def __aiter__(self) -> ListenStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self._receive.receive()
        except anyio.EndOfStream:
            if self.error is not None:
                raise self.error from None
            raise StopAsyncIteration from None


class Listening:
    """The open listen streams of one client connection, by subscription (request) id."""

    def __init__(self) -> None:
        # Each stream's sender, and the extension notifications it takes (`ListenStream.extra`).
        self._streams: dict[Any, tuple[MemoryObjectSendStream[Any], Mapping[str, MethodSpec]]] = {}
        self._pending: tuple[MemoryObjectSendStream[Any], ListenStream, anyio.Event] | None = None
        self._opening = anyio.Lock()

    def route(self, runtime: ClientRuntime, notification: Notification) -> bool:
        """Feed a notification to the stream it is tagged for; True when it was only the
        stream's acknowledgement (nothing for the handlers)."""
        if not self._streams and self._pending is None:
            return False
        params = notification.params if isinstance(notification.params, dict) else {}
        meta = params.get("_meta")
        key = runtime.protocol.meta.subscription_id if runtime.protocol is not None else None
        sub_id = meta.get(key) if key is not None and isinstance(meta, dict) else None
        if notification.method == ACKNOWLEDGED:
            if self._pending is not None and sub_id not in self._streams:
                send, stream, acknowledged = self._pending
                self._streams[sub_id] = (send, stream.extra)
                agreed = params.get("notifications")
                stream.agreed = agreed if isinstance(agreed, dict) else {}
                self._pending = None
                acknowledged.set()
            return True
        if sub_id not in self._streams:
            return False
        send, extra = self._streams[sub_id]
        typed = _typed(runtime, notification, extra)
        if typed is not None:
            try:
                send.send_nowait(typed)
            except anyio.WouldBlock:
                log.warning("listen stream %r: the caller is not reading; dropped %s", sub_id, notification.method)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                self._streams.pop(sub_id, None)
        return False

    @asynccontextmanager
    async def open(
        self, runtime: ClientRuntime, notifications: Any, extra: Mapping[str, MethodSpec] | None = None
    ) -> AsyncIterator[ListenStream]:
        """Send `subscriptions/listen`, wait for its acknowledgement, yield the stream; end the
        request (the server drops the subscription) when the block ends. `extra`: notifications
        an extension adds (by method, with their specs) that the stream delivers too, typed."""
        spec = eras.negotiated(runtime, LISTEN)  # the session's version decides, whichever stub (`client.eras`)
        data = runtime.prepare(eras.stub_spec(runtime, spec), spec, {"notifications": versions.dump(notifications)})
        send, receive = anyio.create_memory_object_stream[Any](BUFFER)
        stream = ListenStream(receive)
        stream.extra = dict(extra or {})
        session = runtime.session
        assert session is not None

        async def hold(acknowledged: anyio.Event) -> None:
            try:
                await session.request(spec.method, data, timeout=math.inf, cancellable=not runtime.mirrors_headers)
                stream.error = McpError(INTERNAL_ERROR, f"the server ended the {LISTEN} stream with a result")
            except McpError as exc:
                stream.error = exc
            finally:
                acknowledged.set()  # a request that failed before its acknowledgement ends the wait
                send.close()

        with ungrouped():  # a refusal (or the caller's own error) comes out as itself, not in a group
            async with anyio.create_task_group() as task_group:
                async with self._opening:
                    acknowledged = anyio.Event()
                    self._pending = (send, stream, acknowledged)
                    task_group.start_soon(hold, acknowledged)
                    try:
                        with anyio.fail_after(runtime.request_timeout or ACK_TIMEOUT):
                            await acknowledged.wait()
                    except TimeoutError:
                        task_group.cancel_scope.cancel()
                        raise McpError(INTERNAL_ERROR, f"{LISTEN}: the server did not acknowledge the stream") from None
                    finally:
                        self._pending = None
                if stream.error is not None and not self._owns(send):
                    task_group.cancel_scope.cancel()
                    raise stream.error
                try:
                    yield stream
                finally:
                    task_group.cancel_scope.cancel()
                    self._streams = {k: v for k, v in self._streams.items() if v[0] is not send}
                    receive.close()

    def _owns(self, send: MemoryObjectSendStream[Any]) -> bool:
        return any(v[0] is send for v in self._streams.values())


def _typed(runtime: ClientRuntime, notification: Notification, extra: Mapping[str, MethodSpec]) -> Any:
    """The notification as the stub version's (or the stream's extension's) message model, crossed
    from the session's version where they differ, or None (logged) when it is not one."""
    spec = runtime.stub.server_notifications.get(notification.method) or extra.get(notification.method)
    if spec is None:
        log.warning(
            "listen stream: ignoring %s, which MCP %s does not define", notification.method, runtime.stub_version
        )
        return None
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": notification.method}
    if notification.params is not None:
        message["params"] = notification.params
    try:
        if runtime.protocol is runtime.stub or notification.method in extra:
            return versions.validate(spec.message, message)
        return crossing.cross(
            message,
            spec.message,
            what=f"the {notification.method} notification",
            source=runtime.version or "?",
            destination=runtime.stub_version,
        )
    except ValidationError as exc:
        log.warning("listen stream: ignoring an invalid %s: %s", notification.method, exc.errors()[0]["msg"])
    except McpError as exc:
        log.warning("listen stream: ignoring %s: %s", notification.method, exc.message)
    return None
