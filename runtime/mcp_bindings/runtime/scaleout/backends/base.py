"""The `StateBackend` interface and its parts (see the package docstring), apart from the factory
(`backend_from_env`) that picks an implementation, so the implementations import it without a cycle."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from mcp_bindings.runtime.http.backend import SCALEOUT_ENV, Backend
from mcp_bindings.runtime.server.bus import NotificationBus

if TYPE_CHECKING:
    from mcp_bindings.runtime.tasks.core.store import TaskStore

REDIS_URL_ENV = SCALEOUT_ENV  # "MCP_REDIS_URL": the HTTP app finds this plug-in by it
# A bus message between workers, not a notification (no MCP method has this name): a task was
# cancelled, so the worker running its work stops it (params: the task id).
TASK_CANCELLED = "mcp-bindings/task-cancelled"
# How long a worker's lease lasts without renewal (seconds; renewed every third of it): after that,
# the tasks it was running are reported failed by the other workers.
LEASE_ENV = "MCP_WORKER_LEASE_SECONDS"
Deliver = Callable[[str, Any], Awaitable[Any]]  # (method, decoded JSON params) -> delivered locally


class SessionRecords(Protocol):
    async def put(self, session_id: str, ttl_s: float, record: Mapping[str, Any] | None = None) -> None:
        """Record handshake session `session_id` (for `ttl_s`, renewed while it is used): what any
        worker needs to serve it (`http_sessions.SessionRecord`), and the worker writing it."""
        ...

    async def record(self, session_id: str, ttl_s: float | None = None) -> dict[str, Any] | None:
        """The record of `session_id` (None: no worker knows it), its lifetime renewed to `ttl_s`."""
        ...

    async def holder(self, session_id: str) -> str | None:
        """The worker that last wrote `session_id`'s record, or None when there is none."""
        ...

    async def drop(self, session_id: str) -> None: ...

    async def claim_stream(self, session_id: str, ttl_s: float) -> str | None:
        """Claim `session_id`'s one GET stream for this worker for `ttl_s` (claiming it again renews
        it): None when this worker holds it now, else the worker that does. A claim of a worker that
        stopped listening (killed) is taken over at once, not when it lapses."""
        ...

    async def release_stream(self, session_id: str) -> None:
        """Give back this worker's claim of `session_id`'s GET stream (another worker's is kept)."""
        ...


class WorkerMail(Protocol):
    """Messages addressed to one worker (shared backends only): a client's response to a request
    another worker is waiting on, a tasks-extension update for the worker running the task."""

    async def send_to(self, worker_id: str, method: str, data: Any) -> bool:
        """Send to `worker_id`; False when no such worker listens (it stopped or never was)."""
        ...

    async def listens(self, worker_id: str) -> bool:
        """Whether `worker_id` still listens to its mail. A message sent the instant a worker dies
        may be counted as received and lost with it: a caller waiting for an answer asks this."""
        ...


class ReplayHandoff(Protocol):
    """Replay logs handed over by draining workers, per handshake session (shared backends only)."""

    async def hand_over(self, session_id: str, snapshot: bytes, ttl_s: float) -> None:
        """Keep `snapshot` (this worker's held events of the session, as the HTTP app encodes them)
        for `ttl_s`, replacing this worker's earlier one; other workers' snapshots of the session are
        kept beside it (`BackendUnavailable` when it cannot)."""
        ...

    async def handed_over(self, session_id: str) -> list[bytes]:
        """The snapshots handed over for `session_id`, one per worker that drained (none: [])."""
        ...


class StateBackend(Backend, NotificationBus, SessionRecords, ReplayHandoff, WorkerMail, Protocol):
    """The state a deployment's workers share (see the package docstring); as an HTTP app's `Backend`,
    it attaches itself to the app (implementations inherit `attach.Attachable`)."""

    @property
    def shared(self) -> bool:
        """Whether other processes see this state (False: one process, nothing to configure)."""
        ...

    @property
    def worker_id(self) -> str:
        """This worker's name in the shared state."""
        ...

    async def start(self) -> None:
        """Connect; `BackendUnavailable` with a clear message when the backend cannot be reached."""
        ...

    async def aclose(self) -> None: ...

    async def ready(self) -> str | None:
        """None when the backend is reachable, else why not (the readiness endpoint's answer)."""
        ...

    async def run_bus(self, deliver: Deliver) -> None:
        """Deliver what other workers publish, and what is sent to this worker (`send_to`), until
        cancelled (reconnecting with backoff)."""
        ...

    def task_store(self) -> TaskStore:
        """A task store in this backend."""
        ...
