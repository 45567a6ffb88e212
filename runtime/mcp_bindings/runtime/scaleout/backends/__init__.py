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
  reaching another worker replays what its client missed (`scaleout.handoff`);
* the task store (`tasks.core.store.TaskStore`): tasks created through one worker are read, awaited and
  cancelled through any other; with a lease per worker (`MCP_WORKER_LEASE_SECONDS`), the tasks of a
  worker that died are reported `failed` once its lease has lapsed.

`RedisBackend` (`backends.redis`, the `redis` extra) implements it; as an HTTP app's
`http.backend.Backend`, it attaches itself to the app (`scaleout.attach`). `backend_from_env` picks
Redis when `MCP_REDIS_URL` is set (the HTTP app calls it only then; without it the app has no backend,
`http.backend.SINGLE_PROCESS`, and never imports this plug-in). What stays in each
worker: a session's open streams and requests in flight, and their live resumption logs (in memory,
`http.resume.ReplayStore`: no round trip per event) until the worker drains; see docs/deployment.md.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from mcp_bindings.runtime.http.backend import SINGLE_PROCESS, Backend
from mcp_bindings.runtime.scaleout.backends.base import (
    LEASE_ENV,
    REDIS_URL_ENV,
    TASK_CANCELLED,
    Deliver,
    ReplayHandoff,
    SessionRecords,
    StateBackend,
    WorkerMail,
)
from mcp_bindings.runtime.server.bus import EXTENSION_BROADCAST, BackendUnavailable, NotificationBus

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


def backend_from_env(environ: Mapping[str, str] | None = None) -> Backend:
    """`RedisBackend(MCP_REDIS_URL)` when that variable is set (its worker lease from
    `MCP_WORKER_LEASE_SECONDS`), else `http.backend.SINGLE_PROCESS` (one process: nothing shared).
    A lease that is not a number of seconds of at least 1 is `ValueError` naming the variable."""
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
    return SINGLE_PROCESS
