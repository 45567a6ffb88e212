"""Handshake sessions that any worker serves (several workers, docs/deployment.md).

With a shared backend, a handshake session is a record (`SessionRecord`) rather than one worker's
memory: what `initialize` negotiated (its params: version, client capabilities and info), the
logging level, the resource subscriptions, whether the client sent `initialized`, and the principal
that opened it. Any worker rebuilds the session from it on first sight (`rebuild`: the same
initialize, answered again and thrown away), keeps that copy, refreshes it from the record on every
request of the session (one Redis round trip, which also renews the record's lifetime), and writes
the record back when serving a request changed it (`snapshot` before and after). The record is
written before the answer that changed it leaves the worker, so the session's next request, on any
worker, sees the change.

Requests the server sends the client (elicitation, sampling, roots) are numbered by each worker
with ids that name it (`WorkerIds`: `"<worker id>-<n>"`), so the client's response, whichever worker
it reaches, is forwarded to the worker waiting for it (`addressee`). What a worker sends a session
outside any request (a core task's status, a log message, a request) goes to the session's GET
stream, which another worker may hold: it is sent on over the bus (`addressed`, `STREAM_MESSAGE`).
A client's `notifications/cancelled` goes to every worker (`SESSION_CANCEL`): the request it
cancels may run on any of them.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import orjson

from mcp_bindings.runtime.rpc.jsonrpc import Request, RequestId, Response
from mcp_bindings.runtime.rpc.session import Session
from mcp_bindings.runtime.server.runtime import ServerRuntime
from mcp_bindings.v2025_11_25 import names as core

__all__ = [
    "RESPONSE",
    "SESSION_CANCEL",
    "SESSION_CHANGED",
    "SESSION_ENDED",
    "SESSION_NOTIFICATIONS",
    "STREAM_MESSAGE",
    "Snapshot",
    "WorkerIds",
    "addressed",
    "addressee",
    "apply",
    "rebuild",
    "record_of",
    "response_message",
    "snapshot",
]

# Bus messages between workers (no MCP method has these names); params are JSON objects.
RESPONSE = "mcp-bindings/response"  # to one worker: {"s": session id, "r": a client's JSON-RPC response}
SESSION_CHANGED = "mcp-bindings/session-changed"  # to all: {"s": session id}: re-read its record
SESSION_ENDED = "mcp-bindings/session-ended"  # to all: {"s": session id}: deleted, end your copy
STREAM_MESSAGE = "mcp-bindings/stream-message"  # to all: {"s": session id, "f": frame}: for its GET stream
SESSION_CANCEL = "mcp-bindings/session-cancel"  # to all: {"s": session id, "p": notifications/cancelled params}

# What a worker without the session's GET stream sends on to the one holding it: requests (their
# responses come back by id, `addressee`) and these notifications, addressed to one session. Never
# the broadcasts (list changes, resource updates, custom broadcasts): every worker delivers those
# to its own streams already (`host.ServerHost`), so forwarding them would send them twice.
SESSION_NOTIFICATIONS = frozenset(
    {
        core.NOTIFICATIONS_TASKS_STATUS,
        core.NOTIFICATIONS_MESSAGE,
        core.NOTIFICATIONS_PROGRESS,
        core.NOTIFICATIONS_CANCELLED,
    }
)

RECORD_FORMAT = 1

Snapshot = tuple[str | None, frozenset[str], bool]  # logging level, subscriptions, initialized


def snapshot(runtime: ServerRuntime) -> Snapshot | None:
    """What of a session a request may change (None: not initialized yet)."""
    view = runtime.view
    if view is None:
        return None
    return view.log_level, frozenset(runtime.subscriptions), runtime.initialized


def record_of(init_params: Any, principal: str | None, state: Snapshot) -> dict[str, Any]:
    """A session's record (JSON): the initialize params it was opened with, and its `snapshot`."""
    level, subscriptions, initialized = state
    return {
        "format": RECORD_FORMAT,
        "principal": principal,
        "init": init_params,
        "level": level,
        "subscriptions": sorted(subscriptions),
        "initialized": initialized,
    }


async def rebuild(runtime: ServerRuntime, session: Session, record: dict[str, Any]) -> bool:
    """Make `runtime` (new, of this worker) serve the recorded session: the same `initialize`, its
    answer discarded, then the recorded state. False: the record cannot be served here (another
    format, or its initialize fails, e.g. a version this worker does not serve)."""
    if record.get("format") != RECORD_FORMAT or not isinstance(record.get("init"), dict):
        return False
    initialize = Request(id=0, method=core.INITIALIZE, params=record["init"], raw={})
    try:
        await runtime.on_request(initialize, session)
    except Exception:  # noqa: BLE001 - any failure means: not servable here (the caller answers 404)
        return False
    apply(runtime, record)
    return runtime.view is not None


def apply(runtime: ServerRuntime, record: dict[str, Any]) -> None:
    """Bring a worker's copy of a session up to its record (cheap when nothing changed)."""
    view = runtime.view
    if view is None:
        return
    level = record.get("level")
    view.log_level = level if isinstance(level, str) else None
    listed: Any = record.get("subscriptions")
    subscriptions = {uri for uri in listed if isinstance(uri, str)} if isinstance(listed, list) else set[str]()
    if subscriptions != runtime.subscriptions:
        runtime.subscriptions = subscriptions
    if record.get("initialized") is True:
        runtime.initialized = True


class WorkerIds(Iterator[RequestId]):
    """Ids of the requests one worker sends in a session: `"<worker id>-<n>"`."""

    def __init__(self, worker_id: str) -> None:
        self.prefix = f"{worker_id}-"
        self._numbers = itertools.count(1)

    def __next__(self) -> str:
        return f"{self.prefix}{next(self._numbers)}"


def addressee(response_id: Any, worker_id: str) -> str | None:
    """The other worker a client's response is for (its request id names it), or None: this one's."""
    if not isinstance(response_id, str):
        return None
    worker, dash, number = response_id.partition("-")
    if not worker or not dash or not (number.isascii() and number.isdigit()) or worker == worker_id:
        return None
    return worker


def addressed(frame: bytes) -> bool:
    """Whether a message for a session's GET stream is for that session alone (a request, or one of
    `SESSION_NOTIFICATIONS`), so another worker holding the stream may send it."""
    try:
        message = orjson.loads(frame)
    except orjson.JSONDecodeError:
        return False
    method = message.get("method") if isinstance(message, dict) else None
    if not isinstance(method, str):
        return False
    return "id" in message or method in SESSION_NOTIFICATIONS


def response_message(response: Response) -> dict[str, Any]:
    """A response as JSON-RPC (to forward it)."""
    if response.error is not None:
        return {"jsonrpc": "2.0", "id": response.id, "error": response.error}
    return {"jsonrpc": "2.0", "id": response.id, "result": response.result}
