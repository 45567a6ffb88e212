"""Wiring a shared backend into an HTTP app: what `backend.attach(app, group)` does (the app calls it
in its lifespan's startup, `detach` at shutdown; `http.backend.Backend` is the app's side).

With a shared backend (Redis): the server's broadcasts go on the backend's bus (`ServerHost.bus`);
the app's handshake sessions become `SharedSessions` (any worker serves any session); its event ids
name this worker (`handoff.worker_space`), so another worker relays a stream it runs (`relay`);
calls between workers get a `Forwarder`; the server's tasks move to the backend's task store (unless
the server configured a store of its own); and the bus is run, delivering what other workers send.
A backend that is not shared is only started.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import anyio

from mcp_bindings.runtime.scaleout import relay
from mcp_bindings.runtime.scaleout.backends.base import TASK_CANCELLED, StateBackend
from mcp_bindings.runtime.scaleout.forwarding import Forwarder
from mcp_bindings.runtime.scaleout.handoff import worker_space
from mcp_bindings.runtime.scaleout.shared_sessions import SharedSessions
from mcp_bindings.runtime.server import bus, notifications
from mcp_bindings.runtime.tasks.core.store import InMemoryTaskStore
from mcp_bindings.runtime.tasks.server import service as tasks

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from mcp_bindings.runtime.http.app import StreamableHTTPApp

__all__ = ["Attachable", "attach", "detach"]


async def attach(app: StreamableHTTPApp, backend: StateBackend, group: TaskGroup) -> None:
    """Connect `backend` (`BackendUnavailable` when it cannot) and, if it is shared, make `app`'s
    server and sessions use it (see the module docstring)."""
    await backend.start()
    if not backend.shared:
        return
    host, streamable = app.host, app.streamable
    if streamable.sessions:
        raise RuntimeError("a backend is attached before the app serves its first session")
    sessions = SharedSessions(app.server, host, streamable.options, streamable.replay, backend)
    streamable.directory = sessions
    host.keep(relay.ReplayLogs, relay.ReplayLogs(sessions.log_of))
    space = worker_space(backend.worker_id)
    if space is not None:  # event ids name this worker, so another one can relay its streams
        streamable.replay.number_from(space)
    forwarder = Forwarder(app.server, backend, backend.worker_id)
    host.keep(bus.Forwarder, forwarder)
    host.bus = backend
    service = tasks.service_for(app.server)
    if isinstance(service.store, InMemoryTaskStore) and not len(service.store):
        service.store = backend.task_store()  # unless the server configured a store of its own

    async def from_bus(method: str, data: Any) -> None:
        """What another worker published or sent this one: news of a session (`shared_sessions`), a
        call from another worker (`forwarding`), a task cancelled through it whose work runs here,
        or a broadcast for this worker's clients."""
        if await sessions.from_bus(method, data) or await forwarder.received(method, data):
            return
        if method == TASK_CANCELLED:
            scope = service.running.pop(data, None) if isinstance(data, str) else None
            if scope is not None:
                scope.cancel()
            return
        await notifications.deliver(host, method, data)

    group.start_soon(backend.run_bus, from_bus)


async def detach(app: StreamableHTTPApp, backend: StateBackend) -> None:
    """Undo `attach`: the bus and the forwarder are taken off the server, the replay logs still being
    handed over reach the backend, and it is closed."""
    if app.host.bus is backend:
        app.host.bus = None
        app.host.keep(bus.Forwarder, None)
    sessions = app.streamable.directory
    if isinstance(sessions, SharedSessions):
        await sessions.handoff.flush()
    with anyio.CancelScope(shield=True):
        await backend.aclose()


class Attachable:
    """What makes a `StateBackend` implementation an HTTP app's `Backend` (`http.backend`)."""

    async def attach(self, app: Any, group: TaskGroup) -> None:
        await attach(app, cast("StateBackend", self), group)

    async def detach(self, app: Any) -> None:
        await detach(app, cast("StateBackend", self))
