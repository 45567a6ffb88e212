"""The proxy's clients' resource subscriptions, held at the remote (`App.proxy`).

The app's server host records what its clients subscribe to, whatever their era (`resources/subscribe`
on a handshake session, `resourceSubscriptions` of a `subscriptions/listen` stream) and tells its
watchers how many hold each URI (`server.subscriptions`). The proxy watches it: a URI is subscribed
at the remote when its first holder comes and let go when its last one goes (an unsubscribe, a
session that ends, a listen stream that closes), once per URI however many clients hold it. A
handshake-era remote gets `resources/subscribe` / `resources/unsubscribe`; a stateless one (2026-07-28)
a `subscriptions/listen` stream per URI, held open while the URI is. The remote's
`notifications/resources/updated` reach every client subscribed to the URI (`App.resource_updated`,
from the proxy's client handlers).

The watcher runs inside the client's request, so it only notes what is wanted; one task brings the
remote to it, a change at a time, in the order they came. A remote that refuses a subscription is
logged (the client's own request has been answered already)."""

from __future__ import annotations

import logging
from typing import Any, cast

import anyio
from anyio.abc import TaskGroup, TaskStatus

from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, ConnectionClosed, McpError
from mcp_bindings.runtime.rpc.jsonrpc import json_object

__all__ = ["GONE", "RemoteSubscriptions", "ended", "subscribes"]

log = logging.getLogger("mcp_bindings.runtime.app")

# What a remote that went away raises.
GONE = (ConnectionClosed, anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream, OSError)
_REFUSED = object()  # a URI the remote refused: nothing to let go of


def subscribes(capabilities: Any) -> bool:
    """Whether a server's capabilities offer resource subscriptions."""
    return json_object(json_object(capabilities).get("resources")).get("subscribe") is True


class RemoteSubscriptions:
    """What the remote holds for the proxy's clients: a URI while any client of the app holds it."""

    def __init__(self, client: Any, name: str) -> None:
        self.client = client  # the proxy's typed client of the remote
        self.name = name
        self.wanted: set[str] = set()
        self.held: dict[str, Any] = {}  # uri -> None (handshake), a listen stream's scope, or _REFUSED
        self._change = anyio.Event()

    def watch(self, uri: str, holders: int) -> None:
        """The app's host's watcher (`Subscriptions.watch`): note what is wanted now."""
        if (holders > 0) == (uri in self.wanted):
            return
        if holders > 0:
            self.wanted.add(uri)
        else:
            self.wanted.discard(uri)
        self._change.set()

    async def run(self) -> None:
        """Until cancelled (the proxy stops): bring what the remote holds to what is wanted."""
        async with anyio.create_task_group() as streams:  # the stateless remote's listen streams
            while True:
                await self._change.wait()
                self._change = anyio.Event()
                for uri in sorted(self.held.keys() - self.wanted):
                    await self._let_go(uri)
                for uri in sorted(self.wanted - self.held.keys()):
                    await self._hold(uri, streams)

    async def _hold(self, uri: str, streams: TaskGroup) -> None:
        try:
            if self.client.session.stateless:
                self.held[uri] = await streams.start(self._listen, uri)
            else:
                await self.client.subscribe_resource(uri=uri)
                self.held[uri] = None
        except (McpError, *GONE, BaseExceptionGroup) as exc:
            refused = ended(exc)
            if refused is None:
                raise
            log.warning("App.proxy: %s refused the subscription to %s: %s", self.name, uri, refused)
            self.held[uri] = _REFUSED

    async def _let_go(self, uri: str) -> None:
        held = self.held.pop(uri)
        if held is _REFUSED:
            return
        if isinstance(held, anyio.CancelScope):
            held.cancel()
            return
        try:
            await self.client.unsubscribe_resource(uri=uri)
        except (McpError, *GONE) as exc:
            log.warning("App.proxy: unsubscribing from %s at %s failed: %s", uri, self.name, exc)

    async def _listen(self, uri: str, *, task_status: TaskStatus[anyio.CancelScope]) -> None:
        """A stateless remote: one listen stream for `uri`, open until cancelled. Its notifications
        reach the proxy's client handlers as any other; the stream is only drained here."""
        started = False
        with anyio.CancelScope() as scope:
            try:
                async with self.client.session.listen({"resourceSubscriptions": [uri]}) as stream:
                    if uri not in (stream.agreed.get("resourceSubscriptions") or ()):
                        raise McpError(INTERNAL_ERROR, "the subscription was not acknowledged")
                    task_status.started(scope)
                    started = True
                    async for _notification in stream:
                        pass
            except (McpError, *GONE, BaseExceptionGroup) as exc:
                why = ended(exc)
                if not started or why is None:
                    raise
                log.warning("App.proxy: the subscription to %s at %s ended: %s", uri, self.name, why)


def ended(exc: BaseException) -> BaseException | None:
    """Why a remote's stream or request failed (a group of such, from a task group: its first), or
    None where it is something else (a bug, a cancellation), which propagates."""
    if isinstance(exc, BaseExceptionGroup):
        group = cast("BaseExceptionGroup[BaseException]", exc)
        failed, rest = group.split((McpError, *GONE))
        return None if rest is not None or failed is None else failed.exceptions[0]
    return exc if isinstance(exc, (McpError, *GONE)) else None
