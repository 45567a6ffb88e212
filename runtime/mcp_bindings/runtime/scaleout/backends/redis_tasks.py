"""`RedisTaskStore`: the `tasks.core.store.TaskStore` protocol in Redis, so any worker serves any task.

Keys (under the backend's prefix): `task:<id>` the task as JSON, expiring a grace period after its
TTL (so it is reported expired, not unknown, for a while); `tasks:<requester>` a sorted set of the
requester's task ids by creation sequence (`task-seq`), which pages `tasks/list` and bounds a
requester's tasks; `tasks-quota:<quota>` the same for a task counted against another quota key than
its requester (`TaskStore.create`: an anonymous client's address), which then bounds it instead.
Updates are optimistic transactions (WATCH/MULTI), so a terminal task never changes whichever
worker writes last; a cancellation is also published on the bus
(`TASK_CANCELLED`), so the worker running the task's work stops it. `wait` polls (every 50 ms,
backing off to 1 s). A Redis error is `BackendUnavailable` (-32603 naming Redis).

A worker that died: `task-owner:<id>` names the worker running a task's work (written when the
backend holds its lease, `RedisBackend.leasing`). Reading an unfinished task (get, list, wait) whose
owner's lease has lapsed records it `failed` with a -32603 error saying its worker stopped, once, as
an ordinary update: `tasks/result` then answers that error and the task is terminal everywhere.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import anyio
import orjson

from mcp_bindings.runtime.scaleout.backends.base import TASK_CANCELLED
from mcp_bindings.runtime.tasks.core.store import TaskLimitError, TaskState, TaskStore

if TYPE_CHECKING:
    from mcp_bindings.runtime.scaleout.backends.redis import RedisBackend

EXPIRED_GRACE_MS = 60_000  # an expired task stays readable (as expired) this long
WAIT_START_S = 0.05
WAIT_MAX_S = 1.0
LOST_CODE = -32603
LOST_MESSAGE = (
    "Internal error: the worker running this task stopped before it finished (its lease lapsed); "
    "its work is lost: retry the request"
)


def _encode(state: TaskState) -> bytes:
    return orjson.dumps(asdict(state))


def _decode(raw: Any) -> TaskState | None:
    if raw is None:
        return None
    try:
        return TaskState(**orjson.loads(raw))
    except (orjson.JSONDecodeError, TypeError):
        return None


def _lost(state: TaskState) -> dict[str, Any]:
    return {"code": LOST_CODE, "message": LOST_MESSAGE, "data": {"taskId": state.task_id}}


class RedisTaskStore(TaskStore):
    """The `TaskStore` in Redis (see the module docstring): this backend's storage only."""

    def __init__(self, backend: RedisBackend, *, max_tasks_per_requester: int = 100, page_size: int = 50) -> None:
        super().__init__(max_tasks_per_requester=max_tasks_per_requester, page_size=page_size)
        self.backend = backend

    def _index(self, requester: str | None) -> str:
        return f"{self.backend.prefix}tasks:{'' if requester is None else '=' + requester}"

    def _quota_index(self, state: TaskState) -> str | None:
        """The index bounding `state` where it is not its requester's (`quota`)."""
        return None if state.quota is None else f"{self.backend.prefix}tasks-quota:={state.quota}"

    @staticmethod
    def _px(state: TaskState) -> int | None:
        if state.ttl_ms is None:
            return None
        return max(1, int((state.created_at - time.time()) * 1000) + state.ttl_ms + EXPIRED_GRACE_MS)

    async def _add(self, state: TaskState) -> None:
        r = self.backend.client
        index = self._index(state.requester)
        bounded = self._quota_index(state) or index
        with self.backend.guard():
            if await r.zcard(bounded) >= self.max_tasks_per_requester and not await self._make_room(bounded):  # pyright: ignore[reportUnknownMemberType]
                raise TaskLimitError.per_requester(self.max_tasks_per_requester)
            sequence = await r.incr(f"{self.backend.prefix}task-seq")  # pyright: ignore[reportUnknownMemberType]
            async with r.pipeline(transaction=True) as pipe:  # pyright: ignore[reportUnknownMemberType]
                pipe.set(self.backend.key("task", state.task_id), _encode(state), px=self._px(state), nx=True)  # pyright: ignore[reportUnknownMemberType]
                pipe.zadd(index, {state.task_id: sequence})  # pyright: ignore[reportUnknownMemberType]
                if bounded != index:
                    pipe.zadd(bounded, {state.task_id: sequence})  # pyright: ignore[reportUnknownMemberType]
                if self.backend.leasing:  # its work runs here: lost if this worker dies
                    pipe.set(self.backend.key("task-owner", state.task_id), self.backend.worker_id, px=self._px(state))  # pyright: ignore[reportUnknownMemberType]
                await pipe.execute()  # pyright: ignore[reportUnknownMemberType]

    async def _make_room(self, index: str) -> bool:
        """Drop vanished ids from `index`, then the oldest terminal task; whether room was made."""
        r = self.backend.client
        members: Any = await r.zrange(index, 0, -1)  # pyright: ignore[reportUnknownMemberType]
        ids: list[str] = [m.decode() for m in members]
        raws: list[Any] = await r.mget([self.backend.key("task", i) for i in ids]) if ids else []  # pyright: ignore[reportUnknownMemberType]
        gone = [i for i, raw in zip(ids, raws, strict=True) if raw is None]
        if gone:
            await r.zrem(index, *gone)  # pyright: ignore[reportUnknownMemberType]
            return True
        for task_id, raw in zip(ids, raws, strict=True):
            state = _decode(raw)
            if state is not None and state.terminal:
                await self.delete(task_id)
                return True
        return False

    async def owner(self, task_id: str) -> str | None:
        """The worker running the task's work (None: unknown, or its record expired)."""
        with self.backend.guard():
            owner: Any = await self.backend.client.get(self.backend.key("task-owner", task_id))  # pyright: ignore[reportUnknownMemberType]
        return owner.decode() if isinstance(owner, bytes) else None

    async def _read(self, task_id: str) -> TaskState | None:
        with self.backend.guard():
            state = _decode(await self.backend.client.get(self.backend.key("task", task_id)))  # pyright: ignore[reportUnknownMemberType]
        return None if state is None else await self._unless_orphaned(state)

    async def _unless_orphaned(self, state: TaskState) -> TaskState:
        """`state`, or, when it is unfinished and the worker running it lost its lease, the task
        recorded failed (see the module docstring)."""
        if state.terminal:
            return state
        owner = await self.owner(state.task_id)
        if owner is None or await self.backend.alive(owner):
            return state
        failed = await self.update(
            state.task_id, status="failed", status_message="its worker stopped", error=_lost(state)
        )
        return failed if failed is not None else state

    async def _page(self, requester: str | None, after: int, limit: int) -> tuple[list[TaskState], int | None]:
        r = self.backend.client
        index = self._index(requester)
        page: list[tuple[TaskState, int]] = []  # with each task's sequence number
        last = after
        with self.backend.guard():
            while len(page) <= limit:
                rows: list[Any] = await r.zrangebyscore(
                    index, f"({last}", "+inf", start=0, num=limit + 1, withscores=True
                )  # pyright: ignore[reportUnknownMemberType]
                if not rows:
                    break
                raws: list[Any] = await r.mget([self.backend.key("task", i.decode()) for i, _ in rows])  # pyright: ignore[reportUnknownMemberType]
                gone: list[bytes] = []
                for (task_id, score), raw in zip(rows, raws, strict=True):
                    state = _decode(raw)
                    if state is None:
                        gone.append(task_id)
                    elif len(page) <= limit:
                        last = int(score)
                        page.append((await self._unless_orphaned(state), last))
                if gone:
                    await r.zrem(index, *gone)  # pyright: ignore[reportUnknownMemberType]
                if len(rows) <= limit:
                    break
        return [state for state, _ in page[:limit]], page[limit - 1][1] if len(page) > limit else None

    async def _change(self, task_id: str, step: Callable[[TaskState], TaskState]) -> TaskState | None:
        """An optimistic transaction (WATCH/MULTI): read again when another worker wrote first."""
        from redis.exceptions import WatchError

        key = self.backend.key("task", task_id)
        with self.backend.guard():
            async with self.backend.client.pipeline(transaction=True) as pipe:  # pyright: ignore[reportUnknownMemberType]
                while True:
                    try:
                        await pipe.watch(key)  # pyright: ignore[reportUnknownMemberType]
                        state = _decode(await pipe.get(key))  # pyright: ignore[reportUnknownMemberType]
                        if state is None or state.terminal:
                            await pipe.reset()  # pyright: ignore[reportUnknownMemberType]
                            return state
                        state = step(state)
                        pipe.multi()  # pyright: ignore[reportUnknownMemberType]
                        pipe.set(key, _encode(state), px=self._px(state))  # pyright: ignore[reportUnknownMemberType]
                        await pipe.execute()  # pyright: ignore[reportUnknownMemberType]
                        break
                    except WatchError:
                        continue  # another worker wrote first: read again
            if state.status == "cancelled":  # the worker running its work stops it
                await self.backend.publish(TASK_CANCELLED, task_id)
        return state

    async def wait(self, task_id: str) -> TaskState | None:
        delay = WAIT_START_S
        while True:
            state = await self._read(task_id)
            if state is None or state.terminal:
                return state
            await anyio.sleep(delay)
            delay = min(delay * 2, WAIT_MAX_S)

    async def delete(self, task_id: str) -> None:
        key, client = self.backend.key("task", task_id), self.backend.client
        with self.backend.guard():
            state = _decode(await client.get(key))  # pyright: ignore[reportUnknownMemberType]
            await client.delete(key, self.backend.key("task-owner", task_id))  # pyright: ignore[reportUnknownMemberType]
            if state is not None:
                await client.zrem(self._index(state.requester), task_id)  # pyright: ignore[reportUnknownMemberType]
                quota_index = self._quota_index(state)
                if quota_index is not None:
                    await client.zrem(quota_index, task_id)  # pyright: ignore[reportUnknownMemberType]
