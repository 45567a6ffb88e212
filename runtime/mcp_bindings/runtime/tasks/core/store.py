"""Where tasks are kept: the `TaskStore` interface, the `TaskState` it holds, and the in-memory default.
Both sides keep tasks (a server for its clients, `tasks.server`; a client for its server,
`client.tasks`), so the store is in `tasks.core`, which both import.

A task (MCP 2025-11-25 `tasks`) is the durable record of a task-augmented request: its status, its
timestamps, its TTL, and once it is terminal the outcome of the underlying request (the result's
JSON, or the JSON-RPC error object it failed with). A store knows nothing of sessions, handlers or
protocol versions: the task service (`tasks.server.service`, `client.tasks`) runs the work and
writes what happens into it.

Every read names the requester a task is scoped to (`tasks.requester_of`: the authenticated
principal, else the connection). A store answers None for another requester's task exactly as for
an unknown id, so a caller cannot tell the two apart; task ids are unguessable (`secrets`, 192
bits) whether or not there is a principal.

The per-requester bound counts against a task's `quota` key (`tasks.quota_of`): the requester where
there is one, else the client's address. A task without a requester (a stateless-era request without
auth) is anyone's who has its id, but one client's tasks must not fill every anonymous client's bound.

Implementations: `InMemoryTaskStore` (one process: bounded, expiring by TTL). A shared store (Redis,
a database: what several workers need) is another `TaskStore` subclass, its storage its own, its
`wait` a subscription or a poll; nothing else in the runtime keeps task state.
"""

from __future__ import annotations

import heapq
import itertools
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import anyio

from mcp_bindings.runtime.protocol import pagination
from mcp_bindings.runtime.rpc.errors import LIMIT_REACHED, McpError
from mcp_bindings.v2025_11_25 import names as core

__all__ = [
    "STATUSES",
    "TASK_METHODS",
    "TERMINAL",
    "InMemoryTaskStore",
    "InvalidCursor",
    "TaskLimitError",
    "TaskState",
    "TaskStore",
    "decode_cursor",
    "encode_cursor",
    "iso8601",
]

# What a requestor sends about its tasks (2025-11-25). A server that declares the `tasks` capability
# without handlers of its own has the runtime serve them from its store (`tasks.server.methods`, `server.stubs`).
TASK_METHODS = frozenset({core.TASKS_GET, core.TASKS_RESULT, core.TASKS_LIST, core.TASKS_CANCEL})
STATUSES = ("working", "input_required", "completed", "failed", "cancelled")
TERMINAL = frozenset({"completed", "failed", "cancelled"})


class TaskLimitError(McpError):
    """The store is full for this requester (or altogether): no task was created. A bound the client
    reached, not a server fault: `LIMIT_REACHED` (HTTP 429), the message naming the bound."""

    def __init__(self, message: str, bound: str, limit: int) -> None:
        super().__init__(LIMIT_REACHED, message, {"bound": bound, "limit": limit})

    @classmethod
    def per_requester(cls, limit: int) -> TaskLimitError:
        """The refusal of a requester (or quota key) at its bound, as every store words it."""
        return cls(
            f"Refused: too many tasks (at most {limit} live tasks per requester, "
            "max_tasks_per_requester); retrieve or cancel some first",
            "max_tasks_per_requester",
            limit,
        )


class InvalidCursor(ValueError):
    """A `tasks/list` cursor this store did not issue."""


@dataclass(frozen=True, slots=True)
class TaskState:
    """One task as a store keeps it. Times are seconds since the epoch; `result` and `error` are
    decoded JSON (what a shared store serialises as is)."""

    task_id: str
    requester: str | None
    method: str  # the task-augmented request's method (`names.TOOLS_CALL`, ...)
    status: str
    created_at: float
    last_updated_at: float
    ttl_ms: int | None  # None: unlimited
    poll_interval_ms: int | None = None
    status_message: str | None = None
    result: Any = None  # terminal: the underlying request's result
    error: Mapping[str, Any] | None = None  # terminal: the JSON-RPC error object it failed with instead
    quota: str | None = None  # what the per-requester bound counted it against, where not the requester

    @property
    def quota_key(self) -> str | None:
        """The key of the per-requester bound this task counts against."""
        return self.requester if self.quota is None else self.quota

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def expires_at(self) -> float | None:
        return None if self.ttl_ms is None else self.created_at + self.ttl_ms / 1000

    def expired(self, now: float | None = None) -> bool:
        expires = self.expires_at
        return expires is not None and (time.time() if now is None else now) >= expires

    def updated(
        self,
        status: str | None = None,
        status_message: str | None = None,
        result: Any = None,
        error: Mapping[str, Any] | None = None,
    ) -> TaskState:
        """This task with what `TaskStore.update` was given (None: unchanged), updated now; every
        store writes its updates through this."""
        error = dict(error) if error is not None else None
        given = {"status": status, "status_message": status_message, "result": result, "error": error}
        changes = {key: value for key, value in given.items() if value is not None}
        return replace(self, last_updated_at=time.time(), **changes)

    def wire(self, ttl: str = "ttl", poll_interval: str = "pollInterval") -> dict[str, Any]:
        """The task as the 2025-11-25 `Task` type writes it (what tasks/get, tasks/list, tasks/cancel,
        CreateTaskResult and notifications/tasks/status carry); the tasks extension's flat `Task`
        names its TTL and poll interval `ttlMs` and `pollIntervalMs` (`wire.task`)."""
        data: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": iso8601(self.created_at),
            "lastUpdatedAt": iso8601(self.last_updated_at),
            ttl: self.ttl_ms,
        }
        if self.poll_interval_ms is not None:
            data[poll_interval] = self.poll_interval_ms
        if self.status_message is not None:
            data["statusMessage"] = self.status_message
        return data


def iso8601(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class TaskStore(ABC):
    """What keeps tasks: the record handling every store shares (a new task's unguessable id and
    fields, the statuses a task moves through, a terminal task never changing, reads scoped to the
    requester, `tasks/list` cursors), over a storage of its own (`_add`, `_read`, `_page`,
    `_change`, `wait`, `delete`). Every method is a coroutine, so a store may live in another process."""

    def __init__(self, *, max_tasks_per_requester: int = 100, page_size: int = 50) -> None:
        if max_tasks_per_requester < 1 or page_size < 1:
            raise ValueError("task store limits must be positive")
        self.max_tasks_per_requester = max_tasks_per_requester
        self.page_size = page_size

    async def create(
        self,
        requester: str | None,
        method: str,
        *,
        ttl_ms: int | None,
        poll_interval_ms: int | None,
        quota: str | None = None,
    ) -> TaskState:
        """A new task in `working` status, with a fresh unguessable id, scoped to `requester`, counted
        against `quota`'s per-requester bound (None: the requester's). Raises `TaskLimitError` when it
        cannot keep another one."""
        now = time.time()
        quota = None if quota == requester else quota
        import secrets  # not on the start-up path (docs/performance.md)

        task_id = secrets.token_urlsafe(24)  # 192 random bits
        state = TaskState(task_id, requester, method, "working", now, now, ttl_ms, poll_interval_ms, quota=quota)
        await self._add(state)
        return state

    async def get(self, requester: str | None, task_id: str) -> TaskState | None:
        """The task, if it exists and belongs to `requester`; else None. An expired task may still be
        returned until it is purged (the caller answers "expired" then)."""
        state = await self._read(task_id)
        return state if state is not None and state.requester == requester else None

    async def list(self, requester: str | None, cursor: str | None, limit: int) -> tuple[list[TaskState], str | None]:
        """`requester`'s tasks, oldest first, at most `limit` of them after `cursor`, and the cursor of
        the next page (None: no more). Raises `InvalidCursor` for a cursor it did not issue."""
        after = decode_cursor(cursor) if cursor is not None else 0
        page, last = await self._page(requester, after, max(1, min(limit, self.page_size)))
        return page, None if last is None else encode_cursor(last)

    async def update(
        self,
        task_id: str,
        *,
        status: str | None = None,
        status_message: str | None = None,
        result: Any = None,
        error: Mapping[str, Any] | None = None,
    ) -> TaskState | None:
        """Move a task on (the service's own writes: no requester). A terminal task never changes:
        it is returned as it is. None when the task is gone."""
        if status is not None and status not in STATUSES:
            raise ValueError(f"unknown task status {status!r}")
        return await self._change(task_id, lambda state: state.updated(status, status_message, result, error))

    @abstractmethod
    async def wait(self, task_id: str) -> TaskState | None:
        """Return once the task is terminal (its state), or gone (None)."""

    @abstractmethod
    async def delete(self, task_id: str) -> None:
        """Forget a task (expired, or the server's choice); waiters get None."""

    # -- the storage -------------------------------------------------------------------------

    @abstractmethod
    async def _add(self, state: TaskState) -> None:
        """Keep a new task, within the per-requester bound of its `quota_key` (`TaskLimitError`)."""

    @abstractmethod
    async def _read(self, task_id: str) -> TaskState | None:
        """The task as kept now, whoever's (None: gone)."""

    @abstractmethod
    async def _page(self, requester: str | None, after: int, limit: int) -> tuple[list[TaskState], int | None]:
        """`requester`'s tasks created after sequence number `after`, oldest first, at most `limit`;
        and the sequence number of the last one where more follow (None: no more)."""

    @abstractmethod
    async def _change(self, task_id: str, step: Callable[[TaskState], TaskState]) -> TaskState | None:
        """Write `step(state)` over a live task and return it; a terminal task is returned as it is,
        None when the task is gone."""


class InMemoryTaskStore(TaskStore):
    """The default store: one process's memory, bounded and expiring.

    At most `max_tasks` tasks in all and `max_tasks_per_requester` per requester (per quota key,
    `TaskStore.create`): when full, expired
    tasks are purged first, then the oldest terminal ones; a store full of live tasks refuses to
    create another (`TaskLimitError`). Expired tasks are purged as the store is used (creating and
    listing), and are reported expired, not found, until then."""

    def __init__(self, *, max_tasks: int = 10_000, max_tasks_per_requester: int = 100, page_size: int = 50) -> None:
        super().__init__(max_tasks_per_requester=max_tasks_per_requester, page_size=page_size)
        if max_tasks < 1:
            raise ValueError("task store limits must be positive")
        self.max_tasks = max_tasks
        self._tasks: dict[str, TaskState] = {}
        self._order: dict[str, int] = {}  # task id -> sequence number (creation order)
        self._by_requester: dict[str | None, dict[str, None]] = {}  # insertion-ordered ids per requester
        self._by_quota: dict[str | None, dict[str, None]] = {}  # the same per quota key (the bound's)
        self._expiries: list[tuple[float, str]] = []  # heap of (expires_at, task id)
        self._events: dict[str, anyio.Event] = {}  # waiters of tasks not yet terminal
        self._sequence = itertools.count(1)

    def __len__(self) -> int:
        return len(self._tasks)

    async def _add(self, state: TaskState) -> None:
        self._purge(state.created_at)
        own = self._by_quota.get(state.quota_key, {})
        if len(own) >= self.max_tasks_per_requester and not self._evict_terminal(own):
            raise TaskLimitError.per_requester(self.max_tasks_per_requester)
        if len(self._tasks) >= self.max_tasks and not self._evict_terminal(self._order):
            raise TaskLimitError(
                f"Refused: too many tasks (the server keeps at most {self.max_tasks} live tasks, max_tasks); "
                "try again later",
                "max_tasks",
                self.max_tasks,
            )
        task_id = state.task_id
        self._tasks[task_id] = state
        self._order[task_id] = next(self._sequence)
        self._by_requester.setdefault(state.requester, {})[task_id] = None
        self._by_quota.setdefault(state.quota_key, {})[task_id] = None
        if state.expires_at is not None:
            heapq.heappush(self._expiries, (state.expires_at, task_id))

    async def _read(self, task_id: str) -> TaskState | None:
        return self._tasks.get(task_id)

    async def _page(self, requester: str | None, after: int, limit: int) -> tuple[list[TaskState], int | None]:
        self._purge(time.time())
        page: list[TaskState] = []
        for task_id in self._by_requester.get(requester, {}):
            if self._order[task_id] <= after:
                continue
            if len(page) == limit:
                return page, self._order[page[-1].task_id]
            page.append(self._tasks[task_id])
        return page, None

    async def _change(self, task_id: str, step: Callable[[TaskState], TaskState]) -> TaskState | None:
        state = self._tasks.get(task_id)
        if state is None or state.terminal:
            return state
        state = self._tasks[task_id] = step(state)
        if state.terminal:
            self._wake(task_id)
        return state

    async def wait(self, task_id: str) -> TaskState | None:
        state = self._tasks.get(task_id)
        if state is None or state.terminal:
            return state
        event = self._events.get(task_id)
        if event is None:
            event = self._events[task_id] = anyio.Event()
        await event.wait()
        return self._tasks.get(task_id)

    async def delete(self, task_id: str) -> None:
        self._forget(task_id)

    # -- bounds ------------------------------------------------------------------------------

    def _purge(self, now: float) -> None:
        while self._expiries and self._expiries[0][0] <= now:
            _, task_id = heapq.heappop(self._expiries)
            self._forget(task_id)

    def _evict_terminal(self, ids: Mapping[str, Any]) -> bool:
        """Forget the oldest terminal task among `ids`; False if none is terminal."""
        for task_id in ids:
            if self._tasks[task_id].terminal:
                self._forget(task_id)
                return True
        return False

    def _forget(self, task_id: str) -> None:
        state = self._tasks.pop(task_id, None)
        if state is None:
            return
        self._order.pop(task_id, None)
        _unindex(self._by_requester, state.requester, task_id)
        _unindex(self._by_quota, state.quota_key, task_id)
        self._wake(task_id)

    def _wake(self, task_id: str) -> None:
        event = self._events.pop(task_id, None)
        if event is not None:
            event.set()


def _unindex(index: dict[str | None, dict[str, None]], key: str | None, task_id: str) -> None:
    own = index.get(key)
    if own is not None:
        own.pop(task_id, None)
        if not own:
            del index[key]


def encode_cursor(sequence: int) -> str:
    """An opaque `tasks/list` cursor for the task with this sequence number (shared by the stores):
    a list cursor as `protocol.pagination` writes them, scoped to tasks."""
    return pagination.encode_cursor(sequence, "tasks")


def decode_cursor(cursor: str) -> int:
    try:
        return pagination.decode_cursor(cursor, "tasks")
    except McpError:
        raise InvalidCursor(cursor) from None
