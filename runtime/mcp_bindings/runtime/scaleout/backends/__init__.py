"""Where the state of one server lives when it runs on several workers: the `StateBackend` interface.

A backend is the state the workers of one deployment share:

* the notification bus (`NotificationBus`): every broadcast (list changes, resource updates) is
  published there and delivered by each worker to the streams it holds (`ServerHost.deliver`);
* session records (`SessionRecords`): each handshake session's negotiated state (version, client
  capabilities and info, logging level, resource subscriptions), so that any worker serves any
  session's requests (`http_sessions`), and a session deleted on one worker is gone on all;
* worker mail (`WorkerMail`): messages to one worker: a client's response to a request that worker
  is waiting on, the answers to the input asks of a tasks-extension task running there (`forwarding`);
* handed-over replay logs (`ReplayHandoff`, shared backends only): a worker that drains (SIGTERM)
  hands the held SSE events of its handshake sessions over, so that a GET with `Last-Event-ID`
  reaching another worker replays what its client missed (`http_resume.replay_handed_over`);
* the task store (`task_store.TaskStore`): tasks created through one worker are read, awaited and
  cancelled through any other; with a lease per worker (`MCP_WORKER_LEASE_SECONDS`), the tasks of a
  worker that died are reported `failed` once its lease has lapsed.

`InMemoryBackend` (the default: one process, nothing new to run) and `RedisBackend`
(`backends.redis`, the `redis` extra) implement it. `backend_from_env` picks Redis when
`MCP_REDIS_URL` is set. What stays in each worker: a session's open streams and requests in flight,
and their live resumption logs (in memory, `http_resume.ReplayStore`: no round trip per event)
until the worker drains; see docs/deployment.md.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, McpError

if TYPE_CHECKING:
    from mcp_bindings.runtime.tasks.store import TaskStore

__all__ = [
    "EXTENSION_BROADCAST",
    "LEASE_ENV",
    "REDIS_URL_ENV",
    "TASK_CANCELLED",
    "BackendUnavailable",
    "Deliver",
    "NotificationBus",
    "ReplayHandoff",
    "SessionRecords",
    "StateBackend",
    "WorkerMail",
    "backend_from_env",
]

REDIS_URL_ENV = "MCP_REDIS_URL"
# A bus message between workers, not a notification (no MCP method has this name): a task was
# cancelled, so the worker running its work stops it (params: the task id).
TASK_CANCELLED = "mcp-bindings/task-cancelled"
# Likewise: a custom (extension) notification broadcast (`extensions.broadcast`); params: the method,
# its extension and its wire params, so every worker sends it to its clients that declared it.
EXTENSION_BROADCAST = "mcp-bindings/extension-broadcast"
# How long a worker's lease lasts without renewal (seconds; renewed every third of it): after that,
# the tasks it was running are reported failed by the other workers.
LEASE_ENV = "MCP_WORKER_LEASE_SECONDS"
Deliver = Callable[[str, Any], Awaitable[Any]]  # (method, decoded JSON params) -> delivered locally


class BackendUnavailable(McpError):
    """The shared state cannot be reached: what needed it fails with -32603 naming the backend."""

    def __init__(self, message: str) -> None:
        super().__init__(INTERNAL_ERROR, f"Internal error: {message}")


class NotificationBus(Protocol):
    async def publish(self, method: str, data: Any) -> None:
        """Send a broadcast to the other workers (`BackendUnavailable` when it cannot)."""
        ...


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


class StateBackend(NotificationBus, SessionRecords, ReplayHandoff, WorkerMail, Protocol):
    """The state a deployment's workers share (see the module docstring)."""

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


def backend_from_env(environ: Mapping[str, str] | None = None) -> StateBackend:
    """`RedisBackend(MCP_REDIS_URL)` when that variable is set (its worker lease from
    `MCP_WORKER_LEASE_SECONDS`), else an `InMemoryBackend`. A lease that is not a number of seconds
    of at least 1 is `ValueError` naming the variable."""
    env = os.environ if environ is None else environ
    url = env.get(REDIS_URL_ENV, "").strip()
    if url:
        from mcp_bindings.runtime.scaleout.backends.redis import LEASE_S, RedisBackend

        lease = env.get(LEASE_ENV, "").strip()
        try:
            lease_s = float(lease) if lease else LEASE_S
        except ValueError:
            lease_s = 0.0
        if not lease_s >= 1.0:  # also NaN
            raise ValueError(f"{LEASE_ENV} must be a number of seconds, at least 1 (got {lease!r})")
        return RedisBackend(url, lease_s=lease_s)
    from mcp_bindings.runtime.scaleout.backends.memory import InMemoryBackend

    return InMemoryBackend()
