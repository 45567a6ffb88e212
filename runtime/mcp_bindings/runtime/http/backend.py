"""The HTTP app's one seam to the scale-out plug-in: the `Backend` it is given.

A backend brings its own wiring: `attach(app, group)` connects it and makes the app's server and
sessions use it (the plug-in's `scaleout.attach`: the notification bus, shared sessions, worker
forwarding, the task store); `detach(app)` undoes that at shutdown. The app only calls these, so
nothing in the transport imports the plug-in. `SINGLE_PROCESS` (nothing shared, nothing to attach)
is what the app has unless a backend is given, or `MCP_REDIS_URL` names one (`backend_from_env`).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

__all__ = ["SCALEOUT_ENV", "SINGLE_PROCESS", "Backend", "backend_from_env"]

SCALEOUT_ENV = "MCP_REDIS_URL"  # set: the app's backend is the scale-out plug-in's (docs/deployment.md)
SCALEOUT_BACKENDS = "mcp_bindings.runtime.scaleout.backends"


class Backend(Protocol):
    """State shared with the other workers of a deployment, as the HTTP app uses it
    (`scaleout.backends.StateBackend` implementations are ones)."""

    @property
    def shared(self) -> bool:
        """Whether other processes see this state (False: one process, nothing to configure)."""
        ...

    async def ready(self) -> str | None:
        """None when the backend is reachable, else why not (the readiness endpoint's answer)."""
        ...

    async def attach(self, app: Any, group: TaskGroup) -> None:
        """Connect (`server.bus.BackendUnavailable` when it cannot) and make `app` (a
        `StreamableHTTPApp`) serve through this backend, running what it needs in `group`."""
        ...

    async def detach(self, app: Any) -> None:
        """Undo `attach` and disconnect (the app's shutdown)."""
        ...


class _SingleProcess:
    """No backend: this process alone (nothing shared, nothing to attach)."""

    shared = False

    async def ready(self) -> str | None:
        return None

    async def attach(self, app: Any, group: TaskGroup) -> None:
        return None

    async def detach(self, app: Any) -> None:
        return None


SINGLE_PROCESS: Backend = _SingleProcess()


def backend_from_env(environ: Mapping[str, str] | None = None) -> Backend:
    """The backend the environment names: with `MCP_REDIS_URL` set, the scale-out plug-in's
    (`scaleout.backends.backend_from_env`: Redis, its lease from `MCP_WORKER_LEASE_SECONDS`), else
    `SINGLE_PROCESS`.

    The plug-in is imported by name here, at run time and only when the variable is set: the
    environment chooses it as an installed plug-in is chosen by its entry point, so the static
    imports keep pointing from the plug-in to the transport, and a single-process server never loads
    it (tests/test_architecture.py)."""
    env = os.environ if environ is None else environ
    if not env.get(SCALEOUT_ENV, "").strip():
        return SINGLE_PROCESS
    backend: Backend = importlib.import_module(SCALEOUT_BACKENDS).backend_from_env(env)
    return backend
